/* cli_json.c - what every JSON object capsim prints starts with: the schema
 * and program versions and the inputs with their digests (head.h, which the
 * library writes its results with too). */
#include "cli.h"
#include "head.h"

json_t *capsim_cli_json_head(const capsim_catalog *cat, const capsim_scenario *s)
{
	return capsim_api_json_head(cat, s, capsim_version_string());
}
