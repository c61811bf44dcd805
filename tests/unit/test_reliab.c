/* test_reliab.c - failures part by part and the whole training run under
 * them: the default rates against the arithmetic of their source (StepFun's
 * fault trace), the causes summing to the interruptions with no "other"
 * bucket, the exact expected wall time against a Monte Carlo of bounded
 * cost from a tenth of an MTTF of work to ten thousand, the batched draws
 * against a simulation of every attempt, and more nodes failing sooner;
 * in-memory checkpoints: their copy, replication and restore against their
 * closed forms, a large job's goodput above async's, the Monte Carlo against
 * the exact expectation. */
#include "catalog.h"
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_statistics_double.h>

#include "eval.h"
#include "fabric.h"
#include "reliab.h"
#include "scenario.h"

TESTUTIL_CATALOG_FIXTURE

static const double day = 86400.0;

/* A shipped scenario with sets, evaluated (no scaling reference); fails the
 * test when it does not load or run. The caller frees *r and *out. */
static void eval_file(const char *name, const capsim_set *sets, size_t n, capsim_result *r,
		      capsim_scenario **out)
{
	char path[512];
	snprintf(path, sizeof path, CAPSIM_SOURCE_DIR "/scenarios/%s", name);
	capsim_scenario *s = malloc(sizeof *s);
	capsim_diags d = { 0 };
	if (capsim_scenario_load(path, cat, sets, n, s, &d) < 0 ||
	    capsim_eval(s, &(capsim_eval_opts){ .no_reference = 1 }, r, &d) < 0) {
		capsim_diags_print(&d, stderr);
		fail_msg("%s does not run", name);
	}
	capsim_diags_free(&d);
	if (out)
		*out = s;
	else
		free(s);
}

/* The defaults are StepFun's fault trace (InfiniteHBD-Trace,
 * fault_statistics.json: 584 faults of 400 servers over 348 days, 139,200
 * node-days), its classes split into capsim's parts, the faults without a
 * part shared over the named ones in proportion (157 over all 313 named,
 * 98 over the 301 named hardware faults) and 16 machines taken offline
 * that were not faults dropped; a GPU's parts per GPU of 8 */
static void test_default_rates_from_trace(void **state)
{
	(void)state;
	/* the trace's accounting: named, shared and dropped make its 584 */
	const double gpu = 94, hbm = 61, nvlink = 3, nic = 30, link = 44, host = 69, sw = 12;
	const double hw = gpu + hbm + nvlink + nic + link + host;
	assert_true(hw == 301 && hw + sw == 313);
	assert_true(hw + sw + (144 + 1 + 12) + (97 + 1) + (14 + 2) == 584);
	/* 158 GPU-class faults: 60 double-bit and 1 single-bit ECC over the
	 * threshold (HBM), 3 peer-to-peer bandwidth low (NVLink), 94 the chip */
	assert_true(gpu + hbm + nvlink == 158);
	const double all = 1 + 157 / 313.0, hard = all + 98 / 301.0, nd = 139200;
	capsim_scenario *s;
	capsim_result r;
	eval_file("default.xml", NULL, 0, &r, &s);
	assert_rel(s->gpu_mtbf_s / day, nd * 8 / (gpu * hard), 1e-5);
	assert_rel(s->hbm_mtbf_s / day, nd * 8 / (hbm * hard), 1e-5);
	assert_rel(s->nvlink_mtbf_s / day, nd / (nvlink * hard), 1e-5);
	assert_rel(s->nic_mtbf_s / day, nd / (nic * hard), 1e-5);
	assert_rel(s->link_mtbf_s / day, nd / (link * hard), 1e-5);
	assert_rel(s->host_mtbf_s / day, nd / (host * hard), 1e-5);
	assert_rel(s->software_mtbf_s / day, nd / (sw * all), 1e-5);
	assert_true(s->other_mtbf_s == 0);
	/* a node of 8 GPUs: 568 faults in 139,200 node-days */
	assert_rel(r.reliab.node_mtbf_s / day, nd / 568, 1e-5);
	/* the restart: 11 min, the median automatic retry interval (Lablup) */
	assert_rel(s->restart_s, 660, 1e-12);
	capsim_result_free(&r);
	free(s);
}

/* interruptions_by_cause's parts sum to interruptions; none is "other"
 * by default (under 5% is the rule), every other node part has a share */
static void test_causes_sum_to_total(void **state)
{
	(void)state;
	capsim_result r;
	eval_file("default.xml", NULL, 0, &r, NULL);
	json_t *o = json_object();
	capsim_result_json(&r, o);
	json_t *c = json_object_get(o, "interruptions_by_cause");
	assert_non_null(c);
	double sum = 0;
	for (int p = 0; p < CAPSIM_PART__COUNT; p++) {
		json_t *v = json_object_get(c, capsim_fail_part_names[p]);
		assert_non_null(v);
		sum += json_real_value(v);
		if (p != CAPSIM_PART_OTHER)
			assert_true(json_real_value(v) > 0);
	}
	double total = capsim_result_get(&r, "interruptions", -1);
	assert_true(total > 1);
	assert_rel(sum, total, 1e-12);
	double other = json_real_value(json_object_get(c, "other"));
	assert_true(other < 0.05 * total);
	assert_true(json_object_size(c) == CAPSIM_PART__COUNT);
	json_decref(o);
	capsim_result_free(&r);
}

/* the moments of an exponential of mean m truncated to [0, L], against
 * Simpson's rule on its density, across the series' threshold */
static void test_truncated_moments(void **state)
{
	(void)state;
	const double m = 3600, xs[] = { 1e-4, 0.005, 0.0099, 0.0101, 0.3, 2.385, 30, 100 };
	for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++) {
		double L = xs[i] * m, mean, var;
		capsim_truncated_exp_moments(L, m, &mean, &var);
		const int n = 20000; /* even */
		double h = L / n, z = 0, m1 = 0, m2 = 0;
		for (int k = 0; k <= n; k++) {
			double x = k * h, w = (k == 0 || k == n) ? 1 : (k % 2 ? 4 : 2);
			double f = exp(-x / m) / m;
			z += w * f;
			m1 += w * x * f;
			m2 += w * x * x * f;
		}
		double want_mean = m1 / z, want_var = m2 / z - want_mean * want_mean;
		assert_rel(mean, want_mean, 1e-8);
		assert_rel(var, want_var, 1e-6);
	}
}

/* The whole run's Monte Carlo mean against the exact expectation (fixed
 * seeds: deterministic), from 0.1 MTTF of work to 1e4, with short intervals
 * and with an interval and its save longer than the MTTF (2.5 and 11 MTTFs
 * a segment: tens of thousands of failed attempts each; 20 and 30 MTTFs:
 * 5e8 and 1e13, drawn at once): the 95% intervals cover it as often as they
 * should (at least 6 of the 8, which a correct draw misses once in 170)
 * and each within three of its half-widths; its interruptions against the
 * expected failed attempts within 5% where they are many */
static void test_mc_agrees_across_regimes(void **state)
{
	(void)state;
	const double M = 3600;
	const struct { double work, tau, delta, r; } c[] = {
		{ 0.1 * M, 600, 30, 660 },    /* one short segment */
		{ 1 * M, 900, 30, 660 },
		{ 100 * M, 465, 30, 660 },    /* Young's interval */
		{ 1e4 * M, 465, 30, 660 },
		{ 20 * M, 2 * M, 0.5 * M, 660 },
		{ 30 * M, 10 * M, M, 60 },
		{ 60 * M, 30 * M, 0.2 * M, 60 },
		{ 4000 * M, 20 * M, 0.1 * M, 60 }, /* 200 segments of 5e8 attempts */
	};
	const size_t n = sizeof c / sizeof c[0];
	size_t covered = 0;
	for (size_t i = 0; i < n; i++) {
		double e = capsim_expected_wall(c[i].work, c[i].tau, c[i].delta, c[i].r, M);
		double k = capsim_expected_failures(c[i].work, c[i].tau, c[i].delta, M);
		capsim_reliab a;
		memset(&a, 0, sizeof a);
		capsim_reliab_monte_carlo(c[i].work, c[i].tau, c[i].delta, c[i].r, M, 2000, 11, &a);
		assert_int_equal(a.runs, 2000);
		if (!(fabs(a.mc_wall_mean_s - e) <= 3 * a.mc_wall_ci_s))
			fail_msg("case %zu: Monte Carlo mean %.6g s, expected %.6g +/- %.3g", i,
				 a.mc_wall_mean_s, e, 3 * a.mc_wall_ci_s);
		covered += fabs(a.mc_wall_mean_s - e) <= a.mc_wall_ci_s;
		assert_true(a.mc_wall_ci_s > 0);
		if (k > 100)
			assert_rel(a.mc_interruptions, k, 0.05);
		/* the wall is the work, its saves, what failures lost and their restarts */
		assert_true(a.mc_wall_mean_s >= c[i].work);
	}
	if (covered + 2 < n)
		fail_msg("the 95%% intervals cover the expectation in %zu of %zu cases", covered, n);
	/* the expectation itself: one segment of L = 2.5 MTTFs takes
	 * (e^2.5 - 1)(M + r) */
	assert_rel(capsim_expected_wall(2 * M, 2 * M, 0.5 * M, 660, M), expm1(2.5) * (M + 660),
		   1e-12);
	assert_rel(capsim_expected_failures(2 * M, 2 * M, 0.5 * M, M), expm1(2.5), 1e-12);
	/* past what a double holds, no expectation and no draws */
	capsim_reliab b = { .runs = 7 };
	assert_true(isinf(capsim_expected_wall(800 * M, 800 * M, 0, 60, M)));
	capsim_reliab_monte_carlo(800 * M, 800 * M, 0, 60, M, 100, 1, &b);
	assert_int_equal(b.runs, 0);
}

/* The run simulated attempt by attempt (each failure drawn, each segment
 * retried until it survives): the reference the batched draws replace */
static double per_attempt_run(gsl_rng *rng, double work, double tau, double delta, double r,
			      double m, double *fails)
{
	double t = 0, done = 0;
	while (done < work) {
		double seg = work - done < tau ? work - done : tau;
		double L = seg + delta;
		for (;;) {
			double x = gsl_ran_exponential(rng, m);
			if (x >= L) {
				t += L;
				break;
			}
			t += x + r;
			*fails += 1;
		}
		done += seg;
	}
	return t;
}

/* At small work over MTTF the negative binomial batching and the attempt by
 * attempt simulation agree: their means within three 95% half-widths of
 * their difference, their interruptions within 5% */
static void test_batched_matches_per_attempt(void **state)
{
	(void)state;
	const double M = 12 * 3600.0;
	const struct { double work, tau, delta, r; } c[] = {
		{ 0.5 * M, 0.1 * M, 60, 660 },
		{ 3 * M, 0.25 * M, 120, 900 },
		{ 2 * M, 0.7 * M, 600, 660 },
	};
	const int runs = 4000;
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		double *w = malloc(runs * sizeof *w), fails = 0;
		gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
		gsl_rng_set(rng, 2385);
		for (int k = 0; k < runs; k++)
			w[k] = per_attempt_run(rng, c[i].work, c[i].tau, c[i].delta, c[i].r, M,
					       &fails);
		gsl_rng_free(rng);
		double mean = gsl_stats_mean(w, 1, runs);
		double ci = 1.96 * gsl_stats_sd_m(w, 1, runs, mean) / sqrt(runs);
		free(w);
		capsim_reliab a;
		memset(&a, 0, sizeof a);
		capsim_reliab_monte_carlo(c[i].work, c[i].tau, c[i].delta, c[i].r, M, runs, 5, &a);
		double both = 3 * sqrt(ci * ci + a.mc_wall_ci_s * a.mc_wall_ci_s);
		if (!(fabs(a.mc_wall_mean_s - mean) <= both))
			fail_msg("case %zu: batched %.6g s, per attempt %.6g s, +/- %.3g", i,
				 a.mc_wall_mean_s, mean, both);
		assert_rel(a.mc_interruptions, fails / runs, 0.05 + 3 / sqrt(fails + 1));
	}
}

/* More nodes: a shorter job MTTF and a lower goodput, and the wall-time
 * keys agreeing: the analytic one is time_to_train over goodput, the Monte
 * Carlo mean within three 95% half-widths of it */
static void test_more_nodes_fail_sooner(void **state)
{
	(void)state;
	const char *nodes[] = { "16", "32", "64", "128" };
	double last_mttf = INFINITY, last_goodput = 1;
	for (size_t i = 0; i < 4; i++) {
		const capsim_set set[] = { { "cluster.nodes", nodes[i] } };
		capsim_result r;
		eval_file("default.xml", set, 1, &r, NULL);
		assert_true(r.reliab.job_mttf_s < last_mttf);
		assert_true(r.reliab.goodput < last_goodput);
		last_mttf = r.reliab.job_mttf_s;
		last_goodput = r.reliab.goodput;
		assert_rel(r.reliab.wall_to_train_s, r.step.time_to_train_s / r.reliab.goodput,
			   1e-12);
		assert_rel(capsim_result_wall_to_train_s(&r), r.reliab.wall_to_train_s, 0);
		assert_true(fabs(r.reliab.mc_wall_mean_s - r.reliab.wall_to_train_s) <=
			    3 * r.reliab.mc_wall_ci_s);
		capsim_result_free(&r);
	}
}

/* An interval and its save longer than the job's MTTF: the goodput says the
 * job barely progresses; past what a double holds the expected wall time is
 * infinite, its keys absent and the wall time to train infinite */
static void test_barely_progresses(void **state)
{
	(void)state;
	const capsim_set slow[] = { { "cluster.storage.checkpoint-interval", "30 d" } };
	capsim_result r;
	eval_file("default.xml", slow, 1, &r, NULL);
	assert_true(r.reliab.interval_s > r.reliab.job_mttf_s);
	assert_true(r.reliab.barely_progresses);
	assert_true(r.reliab.goodput > 0 && r.reliab.goodput < 0.5);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	capsim_result_text(&r, f);
	fclose(f);
	assert_non_null(strstr(text, "the job barely progresses"));
	free(text);
	capsim_result_free(&r);
	eval_file("default.xml", NULL, 0, &r, NULL);
	assert_false(r.reliab.barely_progresses);
	capsim_result_free(&r);

	const capsim_set never[] = { { "reliability.node-mtbf", "1 h" },
				     { "cluster.storage.checkpoint-interval", "300 d" } };
	eval_file("default.xml", never, 2, &r, NULL);
	assert_true(isinf(r.reliab.wall_to_train_s));
	assert_true(r.reliab.goodput == 0);
	assert_true(capsim_result_get(&r, "wall_to_train_s", -1) == -1);
	assert_true(capsim_result_get(&r, "wall_to_train_mc_mean_s", -1) == -1);
	assert_true(capsim_result_get(&r, "goodput", -1) == 0);
	assert_true(isinf(capsim_result_wall_to_train_s(&r)));
	capsim_result_free(&r);
}

/* The default scenario (32 DGX H100, Llama 3.1 70B, Megatron-LM, a 2 h
 * interval) checkpointing to host memory with 2 replicas and a persistent
 * save every 6 h: each GPU copies its shard over PCIe Gen5 x16, each node
 * sends its shard x 2 over its 8 NDR NICs (8 x 50 GB/s) and reads one back
 * after a failure; the save's delta, the restart and the exact wall time
 * are those closed forms through the same functions */
static void test_memory_closed_forms(void **state)
{
	(void)state;
	const capsim_set set[] = { { "cluster.storage.checkpoint-mode", "memory" },
				   { "cluster.storage.checkpoint-replicas", "2" },
				   { "cluster.storage.persistent-interval", "6 h" } };
	capsim_result a, m;
	capsim_scenario *s;
	eval_file("default.xml", NULL, 0, &a, NULL);
	eval_file("default.xml", set, 3, &m, &s);
	const capsim_reliab *r = &m.reliab;
	const double ckpt = r->checkpoint_bytes, nic = 8 * 400e9 / 8;
	assert_rel(ckpt, 987751890900.0, 1e-9); /* 70.6B parameters x 14 bytes */
	assert_true(r->in_memory && !a.reliab.in_memory);
	assert_rel(r->blocking_s, ckpt / 256 / capsim_pcie_bw(5, 16), 1e-12);
	assert_rel(r->blocking_s, 0.06696985817, 1e-9);
	assert_rel(r->shard_node_bytes, ckpt / 32, 1e-12);
	assert_rel(r->restore_s, ckpt / 32 / nic, 1e-12);
	assert_rel(r->restore_s, 0.07716811648, 1e-9);
	assert_rel(r->replicate_s, 2 * ckpt / 32 / nic, 1e-12);
	assert_rel(r->replicate_s, 0.15433623297, 1e-9);
	/* the storage tier's write and restore as async has them */
	assert_rel(r->write_s, a.reliab.write_s, 1e-12);
	assert_rel(r->storage_restore_s, a.reliab.restore_s, 1e-12);
	/* the persistent save as Megatron's async one costs; its share of a 2 h
	 * interval a third */
	const double sg = s->checkpoint_drain_slowdown, tau = 7200, p = 6 * 3600.0;
	assert_rel(r->interval_s, tau, 0);
	assert_rel(r->persistent_cost_s, r->blocking_s + r->write_s * sg / (1 + sg), 1e-12);
	double delta = r->blocking_s + r->replicate_s * sg / (1 + sg) + r->persistent_cost_s / 3;
	assert_rel(capsim_save_delta(s, r, tau), delta, 1e-12);
	/* a node and both its replicas' nodes lost within the window */
	double w = s->restart_s + r->restore_s + tau + r->replicate_s;
	double sw = r->part_rate_per_s[CAPSIM_PART_SWITCH] * r->job_mttf_s;
	double loss = (1 - sw) * pow(1 - exp(-2 * w / r->node_mtbf_s), 2);
	assert_rel(capsim_replica_loss_chance(s, r, tau), loss, 1e-9);
	assert_true(loss > 0 && loss < 1e-5);
	double restart = s->restart_s + r->restore_s + r->replicate_s +
			 loss * (r->storage_restore_s - r->restore_s + p / 2);
	assert_rel(capsim_restart_cost(s, r, tau), restart, 1e-12);
	assert_rel(r->wall_to_train_s, capsim_expected_wall(r->work_s, tau, delta, restart,
							    r->job_mttf_s), 1e-12);
	assert_rel(r->goodput, r->work_s / r->wall_to_train_s, 1e-12);
	/* the keys the result shows */
	assert_rel(capsim_result_get(&m, "checkpoint_replicate_s", -1), r->replicate_s, 1e-12);
	assert_true(capsim_result_get(&a, "checkpoint_replicate_s", -1) == -1);
	capsim_result_free(&a);
	capsim_result_free(&m);
	free(s);
}

/* ByteRobust's scale: 1,200 DGX H100 (9,600 GPUs) training Llama 3.1 70B
 * from a Weka file system with the interval left to Young. In memory, the
 * interval is shorter (a save costs less), the restore and the lost drain
 * smaller, so the goodput is above the framework's async saves'; without
 * persistent saves a loss of a node with its replica restarts the run, which
 * costs more than a persistent copy every 6 h */
static const capsim_set large[] = {
	{ "cluster.storage.shared.ref", "weka" }, { "cluster.nodes", "1200" },
	{ "cluster.fabric.tiers", "3" }, { "workload.global-batch", "1200" },
	{ "cluster.storage.checkpoint-mode", "memory" },
	{ "cluster.storage.persistent-interval", "6 h" },
};

static void test_memory_beats_async_large_job(void **state)
{
	(void)state;
	capsim_result a, m, none;
	capsim_scenario *s;
	eval_file("h100-64node-ndr.xml", large, 4, &a, NULL);
	eval_file("h100-64node-ndr.xml", large, 6, &m, &s);
	eval_file("h100-64node-ndr.xml", large, 5, &none, NULL);
	assert_int_equal(capsim_scenario_gpus(s), 9600);
	assert_false(a.reliab.in_memory);
	assert_true(capsim_checkpoint_async(s) == 0 && m.reliab.in_memory);
	assert_true(m.reliab.goodput > a.reliab.goodput);
	assert_true(m.reliab.interval_s < a.reliab.interval_s);
	assert_true(m.reliab.restore_s < a.reliab.restore_s);
	assert_true(m.reliab.wall_to_train_s < a.reliab.wall_to_train_s);
	/* Young's on the save's cost, no shorter than the replication */
	double young = capsim_young_interval(capsim_save_cost(s, &m.reliab), m.reliab.job_mttf_s);
	assert_rel(m.reliab.interval_s, fmax(young, m.reliab.replicate_s), 1e-12);
	assert_true(none.reliab.goodput < m.reliab.goodput);
	printf("9,600 GPUs: goodput async %.4f, memory %.4f (no persistent saves %.4f)\n",
	       a.reliab.goodput, m.reliab.goodput, none.reliab.goodput);
	capsim_result_free(&a);
	capsim_result_free(&m);
	capsim_result_free(&none);
	free(s);
}

/* In memory, the Monte Carlo runs the same delta and restart as the exact
 * expectation: its mean within three 95% half-widths of it */
static void test_memory_mc_within_ci(void **state)
{
	(void)state;
	capsim_result m;
	eval_file("h100-64node-ndr.xml", large, 6, &m, NULL);
	const capsim_reliab *r = &m.reliab;
	assert_true(r->runs == 1000 && r->interruptions > 5);
	assert_true(r->mc_wall_ci_s > 0);
	assert_true(fabs(r->mc_wall_mean_s - r->wall_to_train_s) <= 3 * r->mc_wall_ci_s);
	assert_true(fabs(r->mc_interruptions - r->interruptions) <= 0.05 * r->interruptions);
	capsim_result_free(&m);
}

/* capsim_eval refuses what validate refuses: a node's host memory below its
 * shard and a copy (the default's 30.87 GB x 2 over 50 GB), and nothing is
 * evaluated; at 2 TB it runs */
static void test_memory_refused_by_eval(void **state)
{
	(void)state;
	char path[512];
	snprintf(path, sizeof path, CAPSIM_SOURCE_DIR "/scenarios/default.xml");
	const capsim_set set[] = { { "cluster.storage.checkpoint-mode", "memory" },
				   { "cluster.node.host-memory.capacity", "50 GB" } };
	capsim_scenario *s = malloc(sizeof *s);
	capsim_diags d = { 0 };
	assert_int_equal(capsim_scenario_load(path, cat, set, 2, s, &d), 0);
	capsim_result r;
	assert_int_equal(capsim_eval(s, &(capsim_eval_opts){ .no_reference = 1 }, &r, &d), -1);
	assert_int_equal(d.n, 1);
	assert_non_null(strstr(d.v[0].msg, "= 61.73 GB in host memory; expected "
				       "host-memory.capacity of at least 61.73 GB, found 50 GB"));
	assert_non_null(strstr(d.v[0].where, "default.xml:14"));
	capsim_diags_free(&d);
	assert_int_equal(capsim_eval_check(s, &d), -1);
	capsim_diags_free(&d);
	free(s);
	const capsim_set fits[] = { { "cluster.storage.checkpoint-mode", "memory" } };
	eval_file("default.xml", fits, 1, &r, NULL);
	assert_true(r.reliab.in_memory);
	capsim_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_rates_from_trace),
		cmocka_unit_test(test_causes_sum_to_total),
		cmocka_unit_test(test_truncated_moments),
		cmocka_unit_test(test_mc_agrees_across_regimes),
		cmocka_unit_test(test_batched_matches_per_attempt),
		cmocka_unit_test(test_more_nodes_fail_sooner),
		cmocka_unit_test(test_barely_progresses),
		cmocka_unit_test(test_memory_closed_forms),
		cmocka_unit_test(test_memory_beats_async_large_job),
		cmocka_unit_test(test_memory_mc_within_ci),
		cmocka_unit_test(test_memory_refused_by_eval),
	};
	return testutil_run_group_name("reliab", tests, setup, teardown);
}
