/* bench_eval.c - evaluations per second in one process: capsim_scenario_set
 * of one field (alternating, so every point differs from the last) and
 * capsim_eval, on the default scenario (256 H100s) and on the same job at
 * 4,096 GPUs; with the scaling-efficiency reference and the goodput's Monte
 * Carlo (reliability.runs, 1,000 by default), without the reference, and
 * without either.
 *
 * First, the edit alone: capsim_scenario_set of the micro-batch, alternating,
 * per CPU-second (what a sweep point or an explorer key costs before its
 * evaluation), with the scenario's size in bytes (what every copy of it
 * costs).
 *
 * Then a layout two ways, alternating two of the default job's (TP 8 PP 4 and
 * TP 4 PP 8): as the optimiser screens one (capsim_scenario_screen_layout on a
 * scratch copy, then capsim_scenario_check_parallelism) and as a user's edit
 * of the same 12 paths (capsim_scenario_set_many, re-checked), per
 * CPU-second.
 *
 * Usage: bench_eval [repeats] [evals]   (defaults 5 and 200)
 * Prints the median over `repeats` of evals per CPU-second, with min and max.
 * Results go to docs/performance.md with the machine and the command. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "catalog.h"
#include "eval.h"
#include "scenario.h"

static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* evals per CPU-second of n edit + evaluate rounds */
static double rate(capsim_scenario *s, const capsim_catalog *cat, int n, int reference)
{
	static const char *const mb[] = { "1", "2" };
	capsim_diags d = { 0 };
	capsim_eval_opts o = { .no_reference = !reference };
	double t0 = cpu_s();
	for (int i = 0; i < n; i++) {
		if (capsim_scenario_set(s, cat, "workload.micro-batch", mb[i % 2], &d) < 0) {
			capsim_diags_print(&d, stderr);
			exit(1);
		}
		capsim_result r;
		if (capsim_eval(s, &o, &r, &d) < 0) {
			capsim_diags_print(&d, stderr);
			exit(1);
		}
		capsim_result_free(&r);
	}
	return n / (cpu_s() - t0);
}

/* edits per CPU-second of n edits alone (100 x n of them) */
static double edit_rate(capsim_scenario *s, const capsim_catalog *cat, int n)
{
	static const char *const mb[] = { "1", "2" };
	capsim_diags d = { 0 };
	long k = 100L * n;
	double t0 = cpu_s();
	for (long i = 0; i < k; i++)
		if (capsim_scenario_set(s, cat, "workload.micro-batch", mb[i % 2], &d) < 0) {
			capsim_diags_print(&d, stderr);
			exit(1);
		}
	return (double)k / (cpu_s() - t0);
}

/* layouts per CPU-second of 100 x n layouts: screened (edit 0) or edited */
static double layout_rate(const capsim_scenario *base, const capsim_catalog *cat, int n, int edit)
{
	static const char *const paths[12] = {
		"workload.parallelism.tp", "workload.parallelism.pp", "workload.parallelism.cp",
		"workload.parallelism.ep", "workload.parallelism.virtual-stages",
		"workload.parallelism.schedule", "workload.parallelism.zero", "workload.micro-batch",
		"workload.parallelism.recompute", "workload.parallelism.sequence-parallel",
		"workload.parallelism.tp-comm-overlap", "workload.parallelism.ep-overlap",
	};
	static const char *const values[2][12] = {
		{ "8", "4", "1", "1", "5", "1f1b-interleaved", "1", "1", "selective", "on", "off", "off" },
		{ "4", "8", "1", "1", "5", "1f1b-interleaved", "1", "1", "selective", "on", "off", "off" },
	};
	const capsim_scenario_layout lay[2] = {
		{ .tp = 8, .pp = 4, .cp = 1, .ep = 1, .dp = 8, .virtual_stages = 5, .zero = 1,
		  .micro_batch = 1, .recompute = CAPSIM_RECOMPUTE_SELECTIVE },
		{ .tp = 4, .pp = 8, .cp = 1, .ep = 1, .dp = 8, .virtual_stages = 5, .zero = 1,
		  .micro_batch = 1, .recompute = CAPSIM_RECOMPUTE_SELECTIVE },
	};
	capsim_scenario *s = malloc(sizeof *s);
	*s = *base;
	capsim_diags d = { 0 };
	long k = 100L * n;
	double t0 = cpu_s();
	for (long i = 0; i < k; i++) {
		int rc;
		if (edit) {
			capsim_set sets[12];
			for (int j = 0; j < 12; j++)
				sets[j] = (capsim_set){ paths[j], values[i % 2][j] };
			rc = capsim_scenario_set_many(s, cat, sets, 12, &d);
		} else {
			capsim_scenario_screen_layout(s, &lay[i % 2]);
			rc = capsim_scenario_check_parallelism(s, &d);
		}
		if (rc < 0) {
			capsim_diags_print(&d, stderr);
			exit(1);
		}
	}
	double r = (double)k / (cpu_s() - t0);
	free(s);
	return r;
}

int main(int argc, char **argv)
{
	int repeats = argc > 1 ? atoi(argv[1]) : 5, n = argc > 2 ? atoi(argv[2]) : 200;
	if (repeats < 1 || n < 1) {
		fprintf(stderr, "usage: bench_eval [repeats] [evals]\n");
		return 2;
	}
	capsim_init();
	capsim_catalog *cat = capsim_catalog_create();
	capsim_diags d = { 0 };
	if (capsim_catalog_load_root(cat, CAPSIM_SOURCE_DIR, NULL, &d) < 0) {
		capsim_diags_print(&d, stderr);
		return 1;
	}
	/* the default job, and the same at 4,096 GPUs (weak: 64 sequences a replica) */
	const capsim_set big[] = { { "cluster.nodes", "512" },
				   { "cluster.fabric.tiers", "3" },
				   { "workload.global-batch", "8192" } };
	struct {
		const char *name;
		const capsim_set *sets;
		size_t n;
	} cases[] = { { "default (256 H100)", NULL, 0 }, { "default at 4,096 H100", big, 3 } };
	printf("sizeof (capsim_scenario): %zu bytes\n", sizeof(capsim_scenario));
	printf("%-24s %-10s %12s %12s %12s\n", "scenario", "ref/MC", "evals/s", "min", "max");
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		capsim_scenario *s = calloc(1, sizeof *s);
		if (capsim_scenario_load(CAPSIM_SOURCE_DIR "/scenarios/default.xml", cat,
					 cases[c].sets, cases[c].n, s, &d) < 0) {
			capsim_diags_print(&d, stderr);
			return 1;
		}
		/* with the reference and the Monte Carlo (the default), without the
		 * reference, and without either (what the optimiser evaluates) */
		static const char *const mode[] = { "with", "without", "neither" };
		double *e = calloc((size_t)repeats, sizeof *e);
		for (int k = 0; k < repeats; k++)
			e[k] = edit_rate(s, cat, n);
		qsort(e, (size_t)repeats, sizeof *e, cmp_double);
		printf("%-24s %-10s %12.0f %12.0f %12.0f  (edits/s alone)\n", cases[c].name, "edit",
		       e[repeats / 2], e[0], e[repeats - 1]);
		for (int how = 0; how < 2; how++) {
			for (int k = 0; k < repeats; k++)
				e[k] = layout_rate(s, cat, n, how);
			qsort(e, (size_t)repeats, sizeof *e, cmp_double);
			printf("%-24s %-10s %12.0f %12.0f %12.0f  (layouts/s, %s)\n", cases[c].name,
			       how ? "layout-set" : "layout", e[repeats / 2], e[0], e[repeats - 1],
			       how ? "capsim_scenario_set_many of 12 paths" : "screened");
		}
		free(e);
		for (int m = 0; m < 3; m++) {
			if (m == 2 && capsim_scenario_set(s, cat, "reliability.runs", "0", &d) < 0) {
				capsim_diags_print(&d, stderr);
				return 1;
			}
			double *v = calloc((size_t)repeats, sizeof *v);
			for (int k = 0; k < repeats; k++)
				v[k] = rate(s, cat, n, m == 0);
			qsort(v, (size_t)repeats, sizeof *v, cmp_double);
			printf("%-24s %-10s %12.0f %12.0f %12.0f\n", cases[c].name, mode[m],
			       v[repeats / 2], v[0], v[repeats - 1]);
			free(v);
		}
		free(s);
	}
	capsim_catalog_free(cat);
	capsim_diags_free(&d);
	return 0;
}
