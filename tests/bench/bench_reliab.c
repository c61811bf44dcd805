/* bench_reliab.c - what the goodput's Monte Carlo of the whole training run
 * (capsim_reliab_monte_carlo, reliability.runs = 1,000) costs: on the run
 * of the default scenario's job grown to 524,288 H100s (65,536 nodes, a
 * 3-tier fabric of 144-port switches, a global batch of 65,536) and a 2T-token budget, with its
 * given 2 h interval (one segment of about 15 MTTFs, some 4e6 failed
 * attempts a run) and at Young's interval; then at fixed segment lengths
 * of 0.01, 1, 10 and 30 MTTFs (the failed attempts a segment from 0.01 to
 * 1e13), 1,000 segments each.
 *
 * The scenario is evaluated once to take its time to train, job MTTF, save
 * and restart; each case then runs the Monte Carlo `repeats` times and
 * prints the median CPU time of one, with min and max, and the runs' mean
 * wall time beside the exact expectation.
 *
 * Usage: bench_reliab [repeats]   (default 9)
 * Results go to docs/performance.md with the machine and the command. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "catalog.h"
#include "eval.h"
#include "reliab.h"
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

/* one Monte Carlo case, timed `repeats` times */
static void run_case(const char *name, double work, double tau, double delta, double r,
		     double m, int repeats)
{
	double *v = calloc((size_t)repeats, sizeof *v);
	capsim_reliab out;
	for (int k = 0; k < repeats; k++) {
		memset(&out, 0, sizeof out);
		double t0 = cpu_s();
		capsim_reliab_monte_carlo(work, tau, delta, r, m, 1000, 1, &out);
		v[k] = cpu_s() - t0;
	}
	qsort(v, (size_t)repeats, sizeof *v, cmp_double);
	double e = capsim_expected_wall(work, tau, delta, r, m);
	printf("%-46s %9.2e %10.3f %10.3f %10.3f  %.4g +/- %.2g (exact %.4g)\n", name,
	       capsim_expected_failures(work, tau, delta, m), v[repeats / 2] * 1e3, v[0] * 1e3,
	       v[repeats - 1] * 1e3, out.mc_wall_mean_s, out.mc_wall_ci_s, e);
	free(v);
}

/* the default job at 524,288 GPUs and 2T tokens, evaluated into *r; the
 * scenario, which the caller frees, or NULL */
static capsim_scenario *eval_big(capsim_catalog *cat, capsim_result *r)
{
	const capsim_set sets[] = { { "cluster.nodes", "65536" }, { "cluster.fabric.tiers", "3" },
				    { "cluster.fabric.switch.ref", "q3400" }, /* 144 ports: 64 connect 8,192 */
				    { "workload.global-batch", "65536" },
				    { "workload.tokens", "2T" } };
	capsim_scenario *s = calloc(1, sizeof *s);
	capsim_diags d = { 0 };
	int rc = capsim_scenario_load(CAPSIM_SOURCE_DIR "/scenarios/default.xml", cat, sets, 5, s,
				      &d);
	if (rc == 0)
		rc = capsim_eval(s, &(capsim_eval_opts){ .no_reference = 1 }, r, &d);
	capsim_diags_print(&d, stderr);
	capsim_diags_free(&d);
	if (rc < 0) {
		free(s);
		return NULL;
	}
	return s;
}

/* the big run's Monte Carlo as capsim_reliab_estimate calls it (its save
 * cost and restart), at its given interval and at Young's */
static void big_cases(capsim_catalog *cat, int repeats)
{
	capsim_result r;
	capsim_scenario *s = eval_big(cat, &r);
	if (!s) {
		fprintf(stderr, "bench_reliab: the 524,288-GPU run does not run\n");
		exit(1);
	}
	const capsim_reliab *b = &r.reliab;
	double delta = capsim_save_cost(s, b);
	double restart = capsim_restart_cost(s, b, b->interval_s);
	run_case("524,288 GPUs, 2T tokens, interval 2 h", b->work_s, b->interval_s, delta, restart,
		 b->job_mttf_s, repeats);
	double young = capsim_young_interval(delta, b->job_mttf_s);
	if (young < b->write_s)
		young = b->write_s;
	restart = capsim_restart_cost(s, b, young); /* the interval counts in memory mode alone */
	run_case("524,288 GPUs, 2T tokens, Young's interval", b->work_s, young, delta, restart,
		 b->job_mttf_s, repeats);
	printf("(job MTTF %.4g s, work %.4g s, save %.4g s, restart %.4g s, Young %.4g s)\n",
	       b->job_mttf_s, b->work_s, delta, restart, young);
	capsim_result_free(&r);
	free(s);
}

int main(int argc, char **argv)
{
	int repeats = argc > 1 ? atoi(argv[1]) : 9;
	if (repeats < 1)
		repeats = 1;
	capsim_init();
	capsim_catalog *cat = capsim_catalog_create();
	capsim_diags d = { 0 };
	if (capsim_catalog_load_root(cat, CAPSIM_SOURCE_DIR, NULL, &d) < 0) {
		capsim_diags_print(&d, stderr);
		return 1;
	}
	printf("%-46s %9s %10s %10s %10s  %s\n", "case (1,000 runs)", "failures", "median ms",
	       "min ms", "max ms", "mean wall s");
	big_cases(cat, repeats);
	const double m = 3600.0;
	const double x[] = { 0.01, 1, 10, 30 };
	for (size_t i = 0; i < sizeof x / sizeof x[0]; i++) {
		char name[64];
		snprintf(name, sizeof name, "1,000 segments of %g MTTF", x[i]);
		run_case(name, 1000 * x[i] * m, x[i] * m, 0, 600, m, repeats);
	}
	capsim_catalog_free(cat);
	return 0;
}
