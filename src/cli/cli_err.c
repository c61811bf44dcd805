/* cli_err.c - the shipped error model, loaded once by the doors that
 * compare designs (report, optimize, explore); see cli.h. */
#include "cli.h"

#include <stdio.h>

#include "catalog.h"
#include "err.h"

capsim_err_model *capsim_cli_err_model(const char *cmd, capsim_diags *d)
{
	capsim_err_model *m = capsim_err_model_load_root(capsim_catalog_default_root(), d);
	if (!m)
		fprintf(stderr, "capsim %s: the error model cannot be read (--no-intervals runs "
			"without it):\n", cmd);
	return m;
}
