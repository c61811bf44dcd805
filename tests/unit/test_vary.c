/* test_vary.c - runtime variability (src/train/vary.h): the expected largest
 * of n standard normal draws and its spread against closed forms and against
 * Blom's approximation, and the step that waits for the expected slowest of
 * its ranks (workload.variability): off, it is the step as before; on, it
 * adds exactly the kernels x the spread x E[max] of the job's ranks, grows
 * with them, takes the step-to-step spread in quadrature, the node groups'
 * widest spread, and shows in the result's keys only when on. */
#include "catalog.h"
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval.h"
#include "fabric.h"
#include "scenario.h"
#include "step.h"
#include "vary.h"

TESTUTIL_CATALOG_FIXTURE

/* ---- order statistics --------------------------------------------------------- */

/* E[max] and SD[max] of 2 to 5 draws in closed form (David and Nagaraja,
 * Order Statistics, 3rd ed., 2003: E[X(2:2)] = 1/sqrt(pi), E[X(3:3)] =
 * 3/(2 sqrt(pi)), E[X(4:4)] = (3/sqrt(pi)) (1/2 + asin(1/3)/pi), E[X(5:5)] =
 * (5/(4 sqrt(pi))) (1 + 6 asin(1/3)/pi); Var[X(2:2)] = 1 - 1/pi, Var[X(3:3)] =
 * 1 - 9/(4 pi) + sqrt(3)/(2 pi)), and the one draw's 0 and 1. */
static void test_closed_forms(void **state)
{
	(void)state;
	double m, sd;
	const double rpi = sqrt(M_PI), a = asin(1.0 / 3.0);
	capsim_maxnorm_exact(1, &m, &sd);
	assert_true(fabs(m) < 1e-9);
	assert_rel(sd, 1.0, 1e-7);
	capsim_maxnorm_exact(2, &m, &sd);
	assert_rel(m, 1.0 / rpi, 1e-7);
	assert_rel(sd * sd, 1.0 - 1.0 / M_PI, 1e-7);
	capsim_maxnorm_exact(3, &m, &sd);
	assert_rel(m, 1.5 / rpi, 1e-7);
	assert_rel(sd * sd, 1.0 - 9.0 / (4.0 * M_PI) + sqrt(3.0) / (2.0 * M_PI), 1e-7);
	capsim_maxnorm_exact(4, &m, &sd);
	assert_rel(m, 3.0 / rpi * (0.5 + a / M_PI), 1e-7);
	capsim_maxnorm_exact(5, &m, &sd);
	assert_rel(m, 1.25 / rpi * (1.0 + 6.0 * a / M_PI), 1e-7);
	/* what the step uses is the same below the switch */
	double m2, sd2;
	capsim_maxnorm(2, &m2, &sd2);
	assert_rel(m2, 1.0 / rpi, 1e-7);
	assert_rel(sd2 * sd2, 1.0 - 1.0 / M_PI, 1e-7);
}

/* Blom's approximation against the integral: 4.5% high at 2 draws, within
 * 0.5% from 16 to 2^20; the maximum's mean grows and its spread narrows
 * with n; across the switch from the integral to Blom's the mean moves by
 * less than Blom's error, and the spread of the windowed integral equals
 * the whole one. */
static void test_blom_against_exact(void **state)
{
	(void)state;
	double prev_m = -1.0, prev_sd = 2.0;
	printf("| n | exact E[max] | Blom | error | SD[max] |\n|---:|---:|---:|---:|---:|\n");
	for (long n = 2; n <= 1L << 20; n *= 2) {
		double m, sd, b = capsim_maxnorm_blom(n);
		capsim_maxnorm_exact(n, &m, &sd);
		printf("| %ld | %.6f | %.6f | %+.3f%% | %.6f |\n", n, m, b, 100 * (b / m - 1), sd);
		if (n >= 16)
			assert_rel(b, m, 0.005);
		assert_true(m > prev_m);
		assert_true(sd < prev_sd);
		prev_m = m;
		prev_sd = sd;
		if (n > CAPSIM_MAXNORM_EXACT_N) {
			double um, usd;
			capsim_maxnorm(n, &um, &usd);
			assert_rel(um, b, 1e-12);
			assert_rel(usd, sd, 1e-6);
		}
	}
	assert_rel(capsim_maxnorm_blom(2) * sqrt(M_PI), 1.0448, 0.001);
	double below, above, sd;
	capsim_maxnorm(CAPSIM_MAXNORM_EXACT_N, &below, &sd);
	capsim_maxnorm(CAPSIM_MAXNORM_EXACT_N + 1, &above, &sd);
	assert_true(fabs(above / below - 1.0) < 0.005);
	assert_true(capsim_maxnorm_blom(1) == 0.0);
}

/* capsim_slowest_rank: kernel x cv x the moments; one rank waits for no one */
static void test_slowest_rank(void **state)
{
	(void)state;
	double add, sd, m, s;
	capsim_maxnorm(256, &m, &s);
	capsim_slowest_rank(2.385, 0.023, 256, &add, &sd);
	assert_rel(add, 2.385 * 0.023 * m, 1e-12);
	assert_rel(sd, 2.385 * 0.023 * s, 1e-12);
	capsim_slowest_rank(2.385, 0.023, 1, &add, &sd);
	assert_true(add == 0.0);
	assert_rel(sd, 2.385 * 0.023, 1e-7);
	capsim_slowest_rank(2.385, 0.0, 256, &add, &sd);
	assert_true(add == 0.0 && sd == 0.0);
	capsim_slowest_rank(0.0, 0.023, 256, &add, &sd);
	assert_true(add == 0.0 && sd == 0.0);
}

/* ---- the step ------------------------------------------------------------------ */

static capsim_scenario *load_file(const char *name, const capsim_set *sets, size_t n)
{
	char path[512];
	snprintf(path, sizeof path, "%s/scenarios/%s", CAPSIM_SOURCE_DIR, name);
	capsim_scenario *s = malloc(sizeof *s);
	capsim_diags d = { 0 };
	int rc = capsim_scenario_load(path, cat, sets, n, s, &d);
	capsim_diags_print(&d, stderr);
	capsim_diags_free(&d);
	if (rc)
		fail_msg("%s does not load", name);
	return s;
}

static capsim_step step_of(const char *name, const capsim_set *sets, size_t n)
{
	capsim_scenario *s = load_file(name, sets, n);
	capsim_diags d = { 0 };
	capsim_fabric *f = capsim_fabric_build(s, &d);
	capsim_step r = { 0 };
	if (!f || capsim_step_simulate(s, f, &r, &d) < 0) {
		capsim_diags_print(&d, stderr);
		fail_msg("%s: step fails", name);
	}
	capsim_fabric_destroy(f);
	capsim_diags_free(&d);
	free(s);
	return r;
}

/* On, the step is the step off plus what the expected slowest of the job's
 * 256 ranks adds: (compute + bubble) x 1.5% x E[max of 256]; its spread the
 * same with SD[max of 256]; off and a spread of 0 are the step as before. */
static void test_step_waits_for_slowest(void **state)
{
	(void)state;
	const capsim_set on[] = { { "workload.variability", "on" } };
	const capsim_set zero[] = { { "workload.variability", "on" },
				    { "cluster.gpu.variability.rate-cv", "0" } };
	capsim_step off = step_of("default.xml", NULL, 0);
	capsim_step r = step_of("default.xml", on, 1);
	capsim_step z = step_of("default.xml", zero, 2);
	assert_true(off.variability_s == 0.0 && off.step_time_sd_s == 0.0);
	assert_true(z.step_time_s == off.step_time_s && z.variability_s == 0.0 &&
		    z.step_time_sd_s == 0.0 && z.tokens_per_s == off.tokens_per_s);
	double m, sd, kernel = off.compute_s + off.bubble_s;
	capsim_maxnorm(256, &m, &sd);
	assert_int_equal(r.variability_ranks, 256);
	assert_rel(r.variability_cv, 0.015, 1e-12);
	assert_rel(r.variability_kernel_s, kernel, 1e-12);
	assert_rel(r.variability_s, kernel * 0.015 * m, 1e-12);
	assert_rel(r.step_time_sd_s, kernel * 0.015 * sd, 1e-12);
	assert_rel(r.step_time_s, off.step_time_s + r.variability_s, 1e-12);
	assert_rel(r.time_to_train_s / off.time_to_train_s, r.step_time_s / off.step_time_s,
		   1e-12);
	assert_rel(r.tokens_per_s * r.step_time_s, off.tokens_per_s * off.step_time_s, 1e-12);
	/* the simulation itself is untouched: the breakdown is the one off */
	assert_true(r.compute_s == off.compute_s && r.bubble_s == off.bubble_s);
	capsim_step_free(&off);
	capsim_step_free(&r);
	capsim_step_free(&z);
}

/* More replicas, more ranks to wait for: at 8, 32 and 128 nodes (dp 2, 8
 * and 32 of a tp 8 x pp 4 job) the share of the kernels the slowest adds is
 * cv x E[max of 64, 256, 1024] and grows; the spread narrows as E[max]'s
 * does. The step-to-step spread adds in quadrature: 3% and 4% make 5%. */
static void test_step_grows_with_ranks(void **state)
{
	(void)state;
	static const char *const nodes[] = { "8", "32", "128" };
	static const char *const batch[] = { "128", "512", "2048" };
	double prev = 0.0, prev_sd = 1.0;
	for (int i = 0; i < 3; i++) {
		const capsim_set sets[] = { { "workload.variability", "on" },
					    { "cluster.nodes", nodes[i] },
					    { "workload.global-batch", batch[i] } };
		capsim_step r = step_of("default.xml", sets, 3);
		double m, sd;
		capsim_maxnorm(8L * atoi(nodes[i]), &m, &sd);
		double share = r.variability_s / r.variability_kernel_s;
		assert_int_equal(r.variability_ranks, 8L * atoi(nodes[i]));
		assert_rel(share, 0.015 * m, 1e-12);
		assert_rel(r.step_time_sd_s / r.variability_kernel_s, 0.015 * sd, 1e-12);
		assert_true(share > prev);
		assert_true(r.step_time_sd_s / r.variability_kernel_s < prev_sd);
		prev = share;
		prev_sd = r.step_time_sd_s / r.variability_kernel_s;
		capsim_step_free(&r);
	}
	const capsim_set both[] = { { "workload.variability", "on" },
				    { "cluster.gpu.variability.rate-cv", "3%" },
				    { "cluster.gpu.variability.step-cv", "4%" } };
	capsim_step r = step_of("default.xml", both, 3);
	assert_rel(r.variability_cv, 0.05, 1e-12);
	capsim_step_free(&r);
}

/* Two node groups: the step waits on the wider spread of the two GPUs,
 * whichever group holds it, over all 256 ranks. */
static void test_groups_widest_spread(void **state)
{
	(void)state;
	const capsim_set h200[] = { { "workload.variability", "on" },
				    { "cluster.group.h200.gpu.variability.rate-cv", "2.5%" } };
	capsim_step r = step_of("mixed-h100-h200.xml", h200, 2);
	assert_rel(r.variability_cv, 0.025, 1e-12);
	assert_int_equal(r.variability_ranks, 256);
	capsim_step_free(&r);
	const capsim_set h100[] = { { "workload.variability", "on" },
				    { "cluster.group.h100.gpu.variability.rate-cv", "0.5%" } };
	r = step_of("mixed-h100-h200.xml", h100, 2);
	assert_rel(r.variability_cv, 0.015, 1e-12);
	capsim_step_free(&r);
}

/* The result's keys: variability_s and step_time_sd_s only when it is on,
 * equal to the step's; off, neither key, and every other key as before. */
static void test_result_keys(void **state)
{
	(void)state;
	capsim_init();
	const capsim_set on[] = { { "workload.variability", "on" } };
	capsim_result a, b;
	capsim_scenario *s = load_file("default.xml", NULL, 0);
	capsim_diags d = { 0 };
	assert_int_equal(capsim_eval(s, NULL, &a, &d), 0);
	free(s);
	s = load_file("default.xml", on, 1);
	assert_int_equal(capsim_eval(s, NULL, &b, &d), 0);
	free(s);
	capsim_diags_free(&d);
	const capsim_result_key *kv = capsim_result_key_find("variability_s");
	const capsim_result_key *ks = capsim_result_key_find("step_time_sd_s");
	assert_non_null(kv);
	assert_non_null(ks);
	assert_false(capsim_result_has(&a, kv));
	assert_false(capsim_result_has(&a, ks));
	assert_true(capsim_result_has(&b, kv));
	assert_true(capsim_result_has(&b, ks));
	assert_rel(capsim_result_get(&b, "variability_s", -1), b.step.variability_s, 1e-12);
	assert_rel(capsim_result_get(&b, "step_time_sd_s", -1), b.step.step_time_sd_s, 1e-12);
	assert_rel(capsim_result_get(&b, "step_time_s", -1) -
			   capsim_result_get(&a, "step_time_s", -1),
		   b.step.variability_s, 1e-9);
	capsim_result_free(&a);
	capsim_result_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_closed_forms),
		cmocka_unit_test(test_blom_against_exact),
		cmocka_unit_test(test_slowest_rank),
		cmocka_unit_test(test_step_waits_for_slowest),
		cmocka_unit_test(test_step_grows_with_ranks),
		cmocka_unit_test(test_groups_widest_spread),
		cmocka_unit_test(test_result_keys),
	};
	return testutil_run_group_name("vary", tests, setup, teardown);
}
