/* fuzz_loaders.c - libFuzzer target for the input loaders: any bytes, read as a
 * catalog file and as a scenario, must give diagnostics or a result, never a
 * crash, a hang, a leak or undefined behaviour. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "catalog.h"
#include "collective.h"
#include "fabric.h"
#include "memory.h"
#include "scenario.h"

static capsim_catalog *cat;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	capsim_diags d = { 0 };
	cat = capsim_catalog_create();
	if (capsim_catalog_load_root(cat, CAPSIM_SOURCE_DIR, NULL, &d) < 0)
		abort(); /* the shipped catalog must load */
	capsim_diags_free(&d);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	capsim_diags d = { 0 };
	capsim_catalog *c = capsim_catalog_create();
	capsim_catalog_load_memory(c, (const char *)data, size, "fuzz.xml", &d);
	capsim_catalog_check(c, &d);
	capsim_catalog_free(c);
	capsim_diags_free(&d);

	capsim_scenario *s = malloc(sizeof *s);
	if (!s)
		return 0;
	static const capsim_set set = { "cluster.nodes", "3" };
	if (capsim_scenario_load_memory((const char *)data, size, "fuzz.xml", cat,
					&set, size & 1, s, &d) == 0) {
		/* whatever loads must also estimate, build and simulate */
		capsim_memory m;
		capsim_memory_estimate(s, &m);
		if (capsim_scenario_gpus(s) <= 2048) {
			capsim_fabric *f = capsim_fabric_build(s, &d);
			if (f) {
				int n = (int)capsim_scenario_gpus(s);
				capsim_coll_req r = { .op = (capsim_coll)(size % CAPSIM_COLL__COUNT),
						      .bytes = 1048576.0, .ranks = n < 64 ? n : 64,
						      .algo = -1, .proto = -1, .fold = -1 };
				capsim_coll_result out;
				capsim_collective_run(f, s, &r, &out, &d);
				capsim_fabric_destroy(f);
			}
		}
	}
	free(s);
	capsim_diags_free(&d);
	return 0;
}
