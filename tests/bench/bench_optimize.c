/* bench_optimize.c - layouts searched a second by capsim_optimize for the
 * default job (Llama 3.1 70B) at 4,096 H100s (cluster.nodes=512 on 3 tiers,
 * workload.global-batch=8192): every layout enumerated, screened, bounded or
 * simulated, over the search's wall time.
 *
 * Usage: bench_optimize [repeats] [threads]   (defaults 5 and 2)
 * Prints the median layouts/s over the repeats with min and max, and what
 * the search did. Results go to docs/performance.md. */
#include <stdio.h>
#include <stdlib.h>

#include "catalog.h"
#include "eval.h"
#include "optimize.h"
#include "scenario.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int repeats = argc > 1 ? atoi(argv[1]) : 5, threads = argc > 2 ? atoi(argv[2]) : 2;
	if (repeats < 1 || threads < 1) {
		fprintf(stderr, "usage: bench_optimize [repeats] [threads]\n");
		return 2;
	}
	capsim_init();
	capsim_catalog *cat = capsim_catalog_create();
	capsim_diags d = { 0 };
	static const capsim_set big[] = { { "cluster.nodes", "512" },
					  { "cluster.fabric.tiers", "3" },
					  { "workload.global-batch", "8192" },
					  { "reliability.runs", "0" } };
	capsim_scenario *s = calloc(1, sizeof *s);
	if (capsim_catalog_load_root(cat, CAPSIM_SOURCE_DIR, NULL, &d) < 0 ||
	    capsim_scenario_load(CAPSIM_SOURCE_DIR "/scenarios/default.xml", cat, big, 4, s, &d) < 0) {
		capsim_diags_print(&d, stderr);
		return 1;
	}
	double *v = calloc((size_t)repeats, sizeof *v);
	capsim_opt_result r = { 0 };
	for (int k = 0; k < repeats; k++) {
		capsim_opt_options o = { .metric = CAPSIM_OPT_TOKENS_PER_S, .top = 5,
					 .threads = threads };
		capsim_opt_result_free(&r);
		if (capsim_optimize(s, cat, &o, &r, &d) < 0) {
			capsim_diags_print(&d, stderr);
			return 1;
		}
		v[k] = (double)r.candidates / r.elapsed_s;
	}
	qsort(v, (size_t)repeats, sizeof *v, cmp_double);
	printf("layouts %ld: refused %ld, out of memory %ld, simulated %ld, bounded %ld\n",
	       r.candidates, r.refused, r.no_fit, r.simulated, r.bounded);
	printf("layouts/s (median of %d, %d threads): %.0f  min %.0f  max %.0f\n", repeats, threads,
	       v[repeats / 2], v[0], v[repeats - 1]);
	printf("simulated/s at the median: %.0f\n", (double)r.simulated * v[repeats / 2] /
	       (double)r.candidates);
	capsim_opt_result_free(&r);
	free(v);
	free(s);
	capsim_catalog_free(cat);
	capsim_diags_free(&d);
	return 0;
}
