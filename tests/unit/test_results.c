/* test_results.c - the store's faces other than import: the read interface
 * (query.h) gives back what calibrate/'s runs stored, by run, GPU and dtype;
 * a sweep's points (results.h) go in whole or not at all and read back as
 * written; a version-3 database gains the results tables in place. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "measure.h"
#include "query.h"
#include "results.h"

#define FIXTURES CAPSIM_SOURCE_DIR "/tests/data/calibrate/"
#define H200 CAPSIM_SOURCE_DIR "/calibrate/results/h200-2026-12-02-gemm.jsonl"
#define SHA_A "a3f1c2d4e5b60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90"
#define SHA_B "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

CAPSIM_TEST_TMPDIR("results")

/* a fixture only SQL can make (a trigger, an older schema) */
static void sql(const char *db, const char *text)
{
	sqlite3 *h;
	char *err = NULL;
	assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
	if (sqlite3_exec(h, text, NULL, NULL, &err) != SQLITE_OK)
		fail_msg("%s: %s", text, err);
	sqlite3_close(h);
}

static void import(const char *file, const char *db)
{
	capsim_diags d = { 0 };
	capsim_import_stats st;
	if (capsim_measure_import(file, db, &st, &d) < 0) {
		capsim_diags_print(&d, stderr);
		fail_msg("%s not imported", file);
	}
	capsim_diags_free(&d);
}

/* ---- query.h ------------------------------------------------------------------ */

/* The H200 run (5 dtypes x 13 shapes, one copy) and the synthetic 8-rank
 * NCCL run read back by kind, by run and by dtype. */
static void test_read_measurements(void **state)
{
	(void)state;
	char db[128];
	snprintf(db, sizeof db, "%s/m.sqlite", dir);
	import(H200, db);
	import(FIXTURES "nccl-8gpu.jsonl", db);
	import(FIXTURES "gemm-duty.jsonl", db);
	import(CAPSIM_SOURCE_DIR "/calibrate/results/h200-2026-12-02-power.jsonl", db);
	capsim_store *s;
	capsim_diags d = { 0 };
	assert_int_equal(capsim_store_open(db, CAPSIM_STORE_READ, &s, &d), 0);
	assert_int_equal(capsim_store_version(s), CAPSIM_STORE_SCHEMA);

	capsim_store_runs runs;
	assert_int_equal(capsim_store_read_runs(s, NULL, &runs, &d), 0);
	assert_int_equal(runs.n, 4);
	assert_string_equal(runs.v[0].gpu, "NVIDIA H200");
	assert_int_equal(runs.v[1].ranks, 8);
	assert_string_equal(runs.v[1].launcher, "single-process");
	assert_int_equal(runs.v[1].n_env, 2);
	assert_string_equal(runs.v[1].env[0].name, "NCCL_ALGO");
	assert_string_equal(runs.v[1].env[0].value, "Ring");
	capsim_store_runs_free(&runs);
	assert_null(runs.v);

	/* the bf16 GEMMs of run 1: 13 shapes, 4096^3 at 2 x 4096^3 / median */
	int64_t one = 1;
	capsim_store_sel bf16 = { .runs = &one, .n_runs = 1, .dtype = "bf16" };
	capsim_store_gemms g;
	assert_int_equal(capsim_store_read_gemms(s, &bf16, 0, &g, &d), 0);
	assert_int_equal(g.n, 13);
	size_t sq = 0;
	for (size_t i = 0; i < g.n; i++) {
		assert_string_equal(g.v[i].dtype, "bf16");
		assert_int_equal(g.v[i].run_id, 1);
		assert_false(g.v[i].sustained);
		/* calibrate/ writes FLOP to 6 digits */
		assert_rel(g.v[i].flop, 2.0 * (double)g.v[i].m * (double)g.v[i].n * (double)g.v[i].k,
			   1e-5);
		sq += g.v[i].m == 4096 && g.v[i].n == 4096 && g.v[i].k == 4096;
	}
	assert_int_equal(sq, 1);
	capsim_store_gemms_free(&g);
	/* every dtype of that GPU: 5 x 13, and the power run's sustained
	 * phases after them */
	capsim_store_sel h200 = { .gpu = "NVIDIA H200" };
	assert_int_equal(capsim_store_read_gemms(s, &h200, 1, &g, &d), 0);
	assert_true(g.n > 65);
	assert_false(g.v[64].sustained);
	assert_int_equal(g.v[g.n - 1].sustained, 1);
	assert_int_equal(g.v[g.n - 1].run_id, 4);
	capsim_store_gemms_free(&g);
	capsim_store_sel other = { .gpu = "NVIDIA A100" };
	assert_int_equal(capsim_store_read_gemms(s, &other, 1, &g, &d), 0);
	assert_int_equal(g.n, 0);

	/* 7 NCCL rows in group order, busbw = algbw x 1.75 for all_reduce at 8 */
	capsim_store_nccls c;
	assert_int_equal(capsim_store_read_nccl(s, NULL, &c, &d), 0);
	assert_int_equal(c.n, 7);
	for (size_t i = 1; i < c.n; i++)
		assert_true(strcmp(c.v[i - 1].op, c.v[i].op) <= 0);
	for (size_t i = 0; i < c.n; i++)
		if (!strcmp(c.v[i].op, "all_reduce"))
			assert_rel(c.v[i].busbw_gb_per_s, 1.75 * c.v[i].algbw_gb_per_s, 1e-9);
	capsim_store_nccls_free(&c);

	capsim_store_copies cp;
	capsim_store_sel run1 = { .runs = &one, .n_runs = 1 };
	assert_int_equal(capsim_store_read_copies(s, &run1, &cp, &d), 0);
	assert_int_equal(cp.n, 1);
	assert_rel(cp.v[0].bytes_per_s * cp.v[0].median_s, (double)cp.v[0].moved_bytes, 1e-4);
	capsim_store_copies_free(&cp);

	capsim_store_power_loads duty;
	assert_int_equal(capsim_store_read_power_load(s, NULL, 0, &duty, &d), 0);
	assert_true(duty.n >= 1);
	assert_rel(duty.v[0].duty, 0.25, 1e-12);
	assert_false(duty.v[0].sustained);
	capsim_store_power_loads_free(&duty);
	capsim_store_power_idles idle;
	assert_int_equal(capsim_store_read_power_idle(s, NULL, &idle, &d), 0);
	int found = 0;
	for (size_t i = 0; i < idle.n; i++)
		found |= idle.v[i].run_id == 3 && fabs(idle.v[i].power_w - 120.5) < 1e-9 &&
			 idle.v[i].has_throttle && idle.v[i].throttle_reasons == 0;
	assert_true(found);
	capsim_store_power_idles_free(&idle);
	capsim_store_close(s);
	capsim_diags_free(&d);
}

/* PyTorch's rows, and a database without the tables of later versions: a
 * version-1 store reads as its runs and no NCCL rows; a file that is no
 * store says so */
static void test_read_torch_and_old(void **state)
{
	(void)state;
	char db[128], v1[128];
	snprintf(db, sizeof db, "%s/t.sqlite", dir);
	import(CAPSIM_SOURCE_DIR "/calibrate/results/h200-2026-12-02-gpt2-step-c.jsonl", db);
	capsim_store *s;
	capsim_diags d = { 0 };
	assert_int_equal(capsim_store_open(db, CAPSIM_STORE_READ, &s, &d), 0);
	capsim_store_torch_launches l;
	capsim_store_torch_steps t;
	assert_int_equal(capsim_store_read_torch_launch(s, NULL, &l, &d), 0);
	assert_int_equal(capsim_store_read_torch_step(s, NULL, &t, &d), 0);
	assert_true(l.n > 0 && t.n > 0);
	for (size_t i = 0; i < l.n; i++)
		assert_true(l.v[i].total_median_s >= l.v[i].host_median_s * (1 - 1e-9));
	for (size_t i = 0; i < t.n; i++)
		if (t.v[i].ok)
			assert_rel(t.v[i].tokens_per_s,
				   (double)t.v[i].micro_batch * (double)t.v[i].seq / t.v[i].median_s, 1e-3);
		else
			assert_true(t.v[i].error[0] != '\0');
	capsim_store_torch_launches_free(&l);
	capsim_store_torch_steps_free(&t);
	capsim_store_close(s);

	snprintf(v1, sizeof v1, "%s/v1.sqlite", dir);
	sql(v1, "CREATE TABLE runs(id INTEGER PRIMARY KEY, sha256 TEXT NOT NULL UNIQUE,"
		" source TEXT NOT NULL, program TEXT NOT NULL, date TEXT NOT NULL, gpu TEXT NOT NULL,"
		" cc TEXT, sms INTEGER, memory_bytes INTEGER, l2_bytes INTEGER, cuda_driver INTEGER,"
		" cuda_runtime INTEGER, cublaslt INTEGER, imported_at TEXT NOT NULL);"
		"INSERT INTO runs VALUES(7, 'ab', 'old.jsonl', 'capsim-calibrate-gemm', '2026-12-01',"
		" 'NVIDIA H200', '9.0', 132, 0, 0, 13000, 13000, 130100, '2026-12-01T00:00:00Z');"
		"PRAGMA user_version = 1;");
	assert_int_equal(capsim_store_open(v1, CAPSIM_STORE_READ, &s, &d), 0);
	assert_int_equal(capsim_store_version(s), 1);
	capsim_store_runs runs;
	capsim_store_nccls c;
	assert_int_equal(capsim_store_read_runs(s, NULL, &runs, &d), 0);
	assert_int_equal(runs.n, 1);
	assert_int_equal(runs.v[0].id, 7);
	assert_int_equal(runs.v[0].sms, 132);
	assert_int_equal(runs.v[0].ranks, 0);
	capsim_store_runs_free(&runs);
	assert_int_equal(capsim_store_read_nccl(s, NULL, &c, &d), 0);
	assert_int_equal(c.n, 0);
	capsim_store_close(s);
	assert_int_equal(d.n, 0);

	/* an empty database is no measurement store; text is no database */
	snprintf(db, sizeof db, "%s/empty.sqlite", dir);
	sql(db, "PRAGMA user_version = 0");
	assert_int_equal(capsim_store_open(db, CAPSIM_STORE_READ, &s, &d), 0);
	assert_int_equal(capsim_store_read_runs(s, NULL, &runs, &d), -1);
	assert_true(capsim_diags_contains(&d, "not a measurement database (no runs table)"));
	capsim_store_close(s);
	assert_int_equal(capsim_store_open(CAPSIM_SOURCE_DIR "/README.md", CAPSIM_STORE_READ, &s, &d),
			 -1);
	assert_null(s);
	assert_true(capsim_diags_contains(&d, "not a capsim database (not an SQLite file)"));
	capsim_diags_free(&d);
}

/* ---- results.h ------------------------------------------------------------------- */

static const capsim_result_param params[] = {
	{ "cluster.nodes", "16" },
	{ "workload.micro-batch", "2" },
};

static const capsim_result_value values[] = {
	{ .key = "step_time", .num = 2.385, .unit = "s" },
	{ .key = "tokens_per_s", .num = 13742.7, .unit = "tokens/s" },
	{ .key = "bottleneck", .text = "tp all-reduce", .unit = "" },
};

static capsim_result_point ok_point(int64_t index)
{
	return (capsim_result_point){
		.index = index, .scenario_sha256 = SHA_B, .capsim_version = "0.1.0 (abc)",
		.params = params, .n_params = 2, .results = values, .n_results = 3,
	};
}

/* a point written with its parameters and results reads back as written; a
 * failed one keeps its error */
static void test_sweep_roundtrip(void **state)
{
	(void)state;
	char db[128];
	snprintf(db, sizeof db, "%s/r.sqlite", dir);
	capsim_store *s;
	capsim_diags d = { 0 };
	assert_int_equal(capsim_store_open(db, CAPSIM_STORE_WRITE, &s, &d), 0);
	assert_int_equal(capsim_store_version(s), CAPSIM_STORE_SCHEMA);
	capsim_sweep_info info = { "nodes-by-batch", "0.1.0 (abc)", SHA_A, NULL, 0 };
	int64_t sweep, pid;
	assert_int_equal(capsim_results_create_sweep(s, &info, &sweep, &d), 0);
	assert_true(sweep > 0);
	capsim_result_point p = ok_point(0);
	assert_int_equal(capsim_results_write_point(s, sweep, &p, &pid, &d), 0);
	assert_true(pid > 0);
	capsim_result_point f = {
		.index = 1, .scenario_sha256 = SHA_A, .failed = 1,
		.error = "scenario.xml:12: error: tp 16 exceeds the node's 8 GPUs",
		.capsim_version = "0.1.0 (abc)", .params = params, .n_params = 1,
	};
	assert_int_equal(capsim_results_write_point(s, sweep, &f, NULL, &d), 0);
	capsim_diags_print(&d, stderr);
	assert_int_equal(d.n, 0);
	capsim_store_close(s);

	/* read back from a fresh, read-only handle */
	assert_int_equal(capsim_store_open(db, CAPSIM_STORE_READ, &s, &d), 0);
	capsim_point_record r;
	assert_int_equal(capsim_results_read_point(s, sweep, 0, &r, &d), 0);
	assert_int_equal(r.id, pid);
	assert_int_equal(r.index, 0);
	assert_false(r.failed);
	assert_null(r.error);
	assert_string_equal(r.scenario_sha256, SHA_B);
	assert_string_equal(r.capsim_version, "0.1.0 (abc)");
	assert_int_equal(r.n_params, 2);
	assert_string_equal(r.params[0].path, "cluster.nodes");
	assert_string_equal(r.params[0].value, "16");
	assert_string_equal(r.params[1].value, "2");
	assert_int_equal(r.n_results, 3); /* by key */
	assert_string_equal(r.results[0].key, "bottleneck");
	assert_true(r.results[0].is_text);
	assert_string_equal(r.results[0].text, "tp all-reduce");
	assert_string_equal(r.results[1].key, "step_time");
	assert_false(r.results[1].is_text);
	assert_true(r.results[1].num == 2.385);
	assert_string_equal(r.results[1].unit, "s");
	assert_true(r.results[2].num == 13742.7);
	assert_string_equal(r.results[2].unit, "tokens/s");
	capsim_point_record_free(&r);
	assert_int_equal(capsim_results_read_point(s, sweep, 1, &r, &d), 0);
	assert_true(r.failed);
	assert_string_equal(r.error, "scenario.xml:12: error: tp 16 exceeds the node's 8 GPUs");
	assert_int_equal(r.n_params, 1);
	assert_int_equal(r.n_results, 0);
	capsim_point_record_free(&r);
	/* reads never write */
	assert_int_equal(capsim_results_create_sweep(s, &info, &sweep, &d), -1);
	assert_true(capsim_diags_contains(&d, "opened read-only"));
	assert_int_equal(capsim_results_read_point(s, sweep, 2, &r, &d), -1);
	assert_true(capsim_diags_contains(&d, "no point 2"));
	capsim_point_record_free(&r);
	capsim_store_close(s);
	capsim_diags_free(&d);
}

/* every fault refuses the whole point, with its reason; a failure half-way
 * through (a trigger refusing the third result) leaves no point, no
 * parameter and no result behind */
static void test_point_all_or_nothing(void **state)
{
	(void)state;
	char db[128];
	snprintf(db, sizeof db, "%s/a.sqlite", dir);
	capsim_store *s;
	capsim_diags d = { 0 };
	assert_int_equal(capsim_store_open(db, CAPSIM_STORE_WRITE, &s, &d), 0);
	capsim_sweep_info info = { "faults", "0.1.0", SHA_A, NULL, 0 };
	int64_t sweep;
	assert_int_equal(capsim_results_create_sweep(s, &info, &sweep, &d), 0);
	capsim_sweep_info bad_info = { "faults", "0.1.0", "abc", NULL, 0 };
	int64_t none;
	assert_int_equal(capsim_results_create_sweep(s, &bad_info, &none, &d), -1);
	assert_true(capsim_diags_contains(&d, "expected 64 hex digits (SHA-256), found 'abc'"));
	capsim_diags_free(&d);

	static const struct {
		int what;
		const char *needle;
	} cases[] = {
		{ 0, "point 0: result step_time given twice" },
		{ 1, "result step_time: expected a finite number, found inf" },
		{ 2, "expected no error message for a point that is ok" },
		{ 3, "expected an error message for a failed point" },
		{ 4, "sweep 99: not in the database" },
		{ 5, "point 0: scenario digest: expected 64 hex digits" },
		{ 6, "point 0: parameter cluster.nodes given twice" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		capsim_result_value twice[2] = { values[0], values[0] };
		capsim_result_value inf = { .key = "step_time", .num = INFINITY, .unit = "s" };
		capsim_result_param dup[2] = { params[0], params[0] };
		capsim_result_point p = ok_point(0);
		int64_t target = sweep;
		switch (cases[i].what) {
		case 0: p.results = twice; p.n_results = 2; break;
		case 1: p.results = &inf; p.n_results = 1; break;
		case 2: p.error = "stray"; break;
		case 3: p.failed = 1; break;
		case 4: target = 99; break;
		case 5: p.scenario_sha256 = "xyz"; break;
		default: p.params = dup; p.n_params = 2; break;
		}
		assert_int_equal(capsim_results_write_point(s, target, &p, NULL, &d), -1);
		if (!capsim_diags_contains(&d, cases[i].needle)) {
			capsim_diags_print(&d, stderr);
			fail_msg("case %zu: no '%s'", i, cases[i].needle);
		}
		capsim_diags_free(&d);
	}
	capsim_store_close(s);

	/* the database refuses the third result, after the point row, its
	 * parameters and two results went in */
	sql(db, "CREATE TRIGGER refuse BEFORE INSERT ON point_results WHEN NEW.key = "
		"'bottleneck' BEGIN SELECT RAISE(ABORT, 'refused by the test'); END");
	assert_int_equal(capsim_store_open(db, CAPSIM_STORE_WRITE, &s, &d), 0);
	capsim_result_point p = ok_point(0);
	assert_int_equal(capsim_results_write_point(s, sweep, &p, NULL, &d), -1);
	assert_true(capsim_diags_contains(&d, "refused by the test"));
	capsim_diags_free(&d);
	capsim_point_record r;
	assert_int_equal(capsim_results_read_point(s, sweep, 0, &r, &d), -1);
	assert_true(capsim_diags_contains(&d, "no point 0"));
	capsim_diags_free(&d);
	/* the same point without the refused result goes in, once */
	p.n_results = 2;
	assert_int_equal(capsim_results_write_point(s, sweep, &p, NULL, &d), 0);
	assert_int_equal(capsim_results_write_point(s, sweep, &p, NULL, &d), -1);
	assert_true(capsim_diags_contains(&d, "point 0 is written already"));
	capsim_diags_free(&d);
	assert_int_equal(capsim_results_read_point(s, sweep, 0, &r, &d), 0);
	assert_int_equal(r.n_params, 2);
	assert_int_equal(r.n_results, 2);
	capsim_point_record_free(&r);
	capsim_store_close(s);
}

/* a version-3 database (the measurement tables only) reads without results,
 * and opened for writing gains them in place, keeping its runs */
static void test_upgrade_v3(void **state)
{
	(void)state;
	char db[128];
	snprintf(db, sizeof db, "%s/v3.sqlite", dir);
	import(FIXTURES "pcie.jsonl", db);
	sql(db, "DROP TABLE point_results; DROP TABLE point_params; DROP TABLE points;"
		" DROP TABLE sweeps; DROP TABLE torch_host;"
		" ALTER TABLE torch_step DROP COLUMN issue_median_s;"
		" ALTER TABLE torch_step DROP COLUMN kernels;"
		" ALTER TABLE torch_step DROP COLUMN kernel_s; PRAGMA user_version = 3;");
	capsim_store *s;
	capsim_diags d = { 0 };
	assert_int_equal(capsim_store_open(db, CAPSIM_STORE_READ, &s, &d), 0);
	assert_int_equal(capsim_store_version(s), 3);
	capsim_point_record r;
	assert_int_equal(capsim_results_read_point(s, 1, 0, &r, &d), -1);
	assert_true(capsim_diags_contains(&d, "no sweep results: the store's schema version is 3"));
	capsim_diags_free(&d);
	capsim_store_close(s);

	assert_int_equal(capsim_store_open(db, CAPSIM_STORE_WRITE, &s, &d), 0);
	assert_int_equal(capsim_store_version(s), CAPSIM_STORE_SCHEMA);
	capsim_sweep_info info = { "after-upgrade", "0.1.0", SHA_A, NULL, 0 };
	int64_t sweep;
	assert_int_equal(capsim_results_create_sweep(s, &info, &sweep, &d), 0);
	capsim_result_point p = ok_point(3);
	assert_int_equal(capsim_results_write_point(s, sweep, &p, NULL, &d), 0);
	capsim_store_pcies pc;
	assert_int_equal(capsim_store_read_pcie(s, NULL, &pc, &d), 0);
	assert_int_equal(pc.n, 4);
	capsim_store_pcies_free(&pc);
	capsim_store_close(s);
	assert_int_equal(d.n, 0);
	/* a newer one is refused for writing, and left alone */
	sql(db, "PRAGMA user_version = 7");
	assert_int_equal(capsim_store_open(db, CAPSIM_STORE_WRITE, &s, &d), -1);
	assert_true(capsim_diags_contains(&d, "schema version 7 is newer than this capsim (6); use a newer capsim"));
	capsim_diags_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_measurements),
		cmocka_unit_test(test_read_torch_and_old),
		cmocka_unit_test(test_sweep_roundtrip),
		cmocka_unit_test(test_point_all_or_nothing),
		cmocka_unit_test(test_upgrade_v3),
	};
	return testutil_run_group_name("results", tests, setup, teardown);
}
