/* test_sweep.c - sweep files and `capsim sweep`: the expansion,
 * ranges and constraints against hand-worked lists; bad files with their
 * messages; the store's points against capsim_eval of the same scenario;
 * threads, a SIGKILL half-way then --resume, and two MPI ranks, each
 * against the single-threaded sweep, value for value. */
#include <setjmp.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "catalog.h"
#include "eval.h"
#include "results.h"
#include "scenario.h"
#include "store.h"
#include "sweep.h"
#include "testutil.h"

static capsim_catalog *cat;
static char dir[256];

static int setup(void **state)
{
	(void)state;
	capsim_init();
	cat = testutil_shipped_catalog();
	if (!cat)
		return -1;
	return testutil_tmpdir_make(dir, sizeof dir, "test-sweep");
}

static int teardown(void **state)
{
	(void)state;
	capsim_catalog_free(cat);
	return testutil_tmpdir_remove(dir);
}

static capsim_sweep *load(const char *path, capsim_scenario *base, capsim_diags *d)
{
	return capsim_sweep_load(path, cat, NULL, 0, base, d);
}

static capsim_sweep *load_ok(const char *path, capsim_scenario *base)
{
	capsim_diags d = { 0 };
	capsim_sweep *sw = load(path, base, &d);
	if (!sw)
		capsim_diags_print(&d, stderr);
	assert_non_null(sw);
	capsim_diags_free(&d);
	return sw;
}

/* point i's values joined: "a=1 b=2" */
static void point_text(const capsim_sweep *sw, uint64_t i, char *buf, size_t n)
{
	capsim_set s[CAPSIM_SWEEP_MAX_AXES];
	capsim_sweep_point(sw, i, s);
	buf[0] = '\0';
	for (size_t a = 0; a < sw->n_axes; a++) {
		size_t l = strlen(buf);
		snprintf(buf + l, n - l, "%s%s=%s", a ? " " : "", s[a].path, s[a].value);
	}
}

/* ---- the expansion ------------------------------------------------------------- */

static void test_expand(void **state)
{
	(void)state;
	capsim_scenario *base = calloc(1, sizeof *base);
	capsim_sweep *sw = load_ok(CAPSIM_SOURCE_DIR "/tests/data/sweep/expand.xml", base);
	/* micro-batch (2) outermost, then the zipped seq-len and capacity (3) */
	assert_int_equal(sw->size, 6);
	assert_int_equal(sw->n_dims, 2);
	assert_int_equal(sw->n_sets, 1);
	static const char *const want[] = {
		"workload.micro-batch=1 workload.seq-len=256 cluster.gpu.memory.capacity=60 GiB",
		"workload.micro-batch=1 workload.seq-len=512 cluster.gpu.memory.capacity=70 GiB",
		"workload.micro-batch=1 workload.seq-len=1024 cluster.gpu.memory.capacity=80 GiB",
		"workload.micro-batch=2 workload.seq-len=256 cluster.gpu.memory.capacity=60 GiB",
		"workload.micro-batch=2 workload.seq-len=512 cluster.gpu.memory.capacity=70 GiB",
		"workload.micro-batch=2 workload.seq-len=1024 cluster.gpu.memory.capacity=80 GiB",
	};
	for (uint64_t i = 0; i < 6; i++) {
		char got[512];
		point_text(sw, i, got, sizeof got);
		assert_string_equal(got, want[i]);
	}
	/* the values as the fields read them: 70 GiB in bytes */
	assert_rel(sw->axes[2].parsed[1].num, 70.0 * 1073741824.0, 0);
	/* the <set> edit reached the base scenario */
	assert_int_equal(base->reliability_runs, 0);
	capsim_sweep_free(sw);
	free(base);
}

static void test_ranges(void **state)
{
	(void)state;
	capsim_scenario *base = calloc(1, sizeof *base);
	capsim_sweep *sw = load_ok(CAPSIM_SOURCE_DIR "/tests/data/sweep/ranges.xml", base);
	/* combine="zip": one dimension of four; factor 2 from 1 to 8, step 0.1
	 * from 0.1 to 0.4 (no 0.30000000000000004), count 4 on a log scale from
	 * 1 to 8 TB/s (2 and 4 between), count 4 linear from 400 to 700 W */
	assert_int_equal(sw->size, 4);
	assert_int_equal(sw->n_dims, 1);
	static const char *const want[] = {
		"cluster.nodes=1 cost.utilization=0.1 cluster.gpu.memory.bandwidth=1 TB/s "
		"cluster.gpu.power.tdp=400 W",
		"cluster.nodes=2 cost.utilization=0.2 cluster.gpu.memory.bandwidth=2 TB/s "
		"cluster.gpu.power.tdp=500 W",
		"cluster.nodes=4 cost.utilization=0.3 cluster.gpu.memory.bandwidth=4 TB/s "
		"cluster.gpu.power.tdp=600 W",
		"cluster.nodes=8 cost.utilization=0.4 cluster.gpu.memory.bandwidth=8 TB/s "
		"cluster.gpu.power.tdp=700 W",
	};
	for (uint64_t i = 0; i < 4; i++) {
		char got[512];
		point_text(sw, i, got, sizeof got);
		assert_string_equal(got, want[i]);
	}
	capsim_sweep_free(sw);
	free(base);
}

static void test_constraints(void **state)
{
	(void)state;
	capsim_scenario *base = calloc(1, sizeof *base);
	capsim_sweep *sw = load_ok(CAPSIM_SOURCE_DIR "/tests/data/sweep/constraints.xml", base);
	assert_int_equal(sw->size, 16);
	/* tp x pp (tp outermost): tp*pp > 8 drops 6 (2x8, 4x4, 4x8, 8x2, 8x4,
	 * 8x8); of the rest, only tp 1 pp 1 fails the second */
	static const int kept[] = { 1, 2, 3, 4, 5, 6, 8, 9, 12 };
	size_t drops[2] = { 0, 0 }, k = 0;
	for (uint64_t i = 0; i < sw->size; i++) {
		int error;
		char err[256];
		long c = capsim_sweep_check(sw, i, &error, err, sizeof err);
		assert_int_equal(error, 0);
		if (c >= 0) {
			drops[c]++;
			continue;
		}
		assert_true(k < sizeof kept / sizeof kept[0]);
		assert_int_equal(i, kept[k++]);
	}
	assert_int_equal(k, 9);
	assert_int_equal(drops[0], 6);
	assert_int_equal(drops[1], 1);
	assert_string_equal(sw->constraints[0].reason, "one node");
	/* no reason given: the test is the reason */
	assert_string_equal(sw->constraints[1].reason,
			    "workload.parallelism.pp > 1 or workload.parallelism.tp >= 2");
	capsim_sweep_free(sw);
	free(base);
}

/* a constraint on a path no axis sets reads the base scenario's value */
static void test_constraint_reads_base(void **state)
{
	(void)state;
	char path[512];
	snprintf(path, sizeof path, "%s/base-value.xml", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "<sweep name=\"b\">\n"
		   "  <base scenario=\"%s/scenarios/gpt2-124m-1xh200.xml\"/>\n"
		   "  <axis path=\"workload.micro-batch\" values=\"1, 2, 4, 8\"/>\n"
		   "  <constraint test=\"workload.micro-batch * workload.seq-len &lt;= 2048\"/>\n"
		   "  <constraint test=\"workload.model.ref == 'gpt2-124m'\"/>\n"
		   "</sweep>\n", CAPSIM_SOURCE_DIR);
	fclose(f);
	capsim_scenario *base = calloc(1, sizeof *base);
	capsim_sweep *sw = load_ok(path, base);
	int kept = 0;
	for (uint64_t i = 0; i < sw->size; i++) {
		int error;
		char err[256];
		long c = capsim_sweep_check(sw, i, &error, err, sizeof err);
		if (c < 0)
			kept++;
		assert_true(c != 1 || strcmp(base->model_ref, "gpt2-124m") != 0);
	}
	/* seq-len 1024 in the base: micro-batches 1 and 2 pass */
	assert_int_equal(base->seq_len, 1024);
	assert_int_equal(kept, strcmp(base->model_ref, "gpt2-124m") == 0 ? 2 : 0);
	capsim_sweep_free(sw);
	free(base);
}

/* every shipped sweep loads, and its constraints can be tested on every point */
static void test_shipped_sweeps(void **state)
{
	(void)state;
	static const char *const files[] = { "gpus-and-fabric.xml", "cloud-offers.xml",
					     "report-70b.xml", "tp-nodes.xml" };
	for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
		char path[512];
		snprintf(path, sizeof path, "%s/scenarios/sweeps/%s", CAPSIM_SOURCE_DIR, files[f]);
		capsim_scenario *base = calloc(1, sizeof *base);
		capsim_sweep *sw = load_ok(path, base);
		assert_true(sw->size > 1);
		for (uint64_t i = 0; i < sw->size; i++) {
			int error;
			char err[256];
			capsim_sweep_check(sw, i, &error, err, sizeof err);
			assert_int_equal(error, 0);
		}
		capsim_sweep_free(sw);
		free(base);
	}
}

/* ---- bad files -------------------------------------------------------------------- */

static void expect_error(const char *body, const char *needle)
{
	char path[512];
	snprintf(path, sizeof path, "%s/bad.xml", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "<sweep name=\"bad\">\n  <base scenario=\"%s/scenarios/gpt2-124m-1xh200.xml\"/>\n"
		   "%s</sweep>\n", CAPSIM_SOURCE_DIR, body);
	fclose(f);
	capsim_scenario *base = calloc(1, sizeof *base);
	capsim_diags d = { 0 };
	capsim_sweep *sw = load(path, base, &d);
	if (sw || !capsim_diags_contains(&d, needle)) {
		capsim_diags_print(&d, stderr);
		fail_msg("expected an error containing '%s'", needle);
	}
	/* the place: the file and (for what is below the root) a line */
	assert_true(d.n > 0 && strstr(d.v[0].where, "bad.xml") != NULL);
	capsim_diags_free(&d);
	free(base);
}

static void test_bad_files(void **state)
{
	(void)state;
	expect_error("  <axis path=\"workload.micro-bach\" values=\"1\"/>\n",
		     "unknown --set path 'workload.micro-bach' (did you mean workload.micro-batch");
	expect_error("  <axis path=\"workload.micro-batch\" values=\"1, x\"/>\n",
		     "axis workload.micro-batch: value 'x'");
	expect_error("  <axis path=\"cluster.fabric.link-rate\" values=\"1\"/>\n", "unknown --set path");
	expect_error("  <axis path=\"workload.micro-batch\" values=\"1, 2\" from=\"1\" to=\"2\" "
		     "step=\"1\"/>\n", "expected one of values, a range (from, to) and catalog, found 2");
	expect_error("  <axis path=\"workload.micro-batch\" from=\"4\" to=\"1\" step=\"1\"/>\n",
		     "step 1 does not go from 4 to 1");
	expect_error("  <axis path=\"workload.micro-batch\" from=\"1\" to=\"8\"/>\n",
		     "exactly one of step, factor and count");
	expect_error("  <axis path=\"cluster.gpu.memory.capacity\" from=\"60 GiB\" to=\"80 GB\" "
		     "step=\"10 GiB\"/>\n", "to: expected the unit of from ('GiB'), found 'GB'");
	expect_error("  <axis path=\"workload.micro-batch\" values=\"1, 2, 1\"/>\n",
		     "value '1' given twice");
	expect_error("  <axis path=\"workload.micro-batch\" values=\"1\"/>\n"
		     "  <axis path=\"workload.micro-batch\" values=\"2\"/>\n",
		     "the path has an axis already (line 3)");
	expect_error("  <zip>\n    <axis path=\"workload.micro-batch\" values=\"1, 2\"/>\n"
		     "    <axis path=\"workload.seq-len\" values=\"256\"/>\n  </zip>\n",
		     "axis workload.seq-len: 1 values, but the axes zipped with it have 2");
	expect_error("  <axis path=\"cluster.gpu.ref\" catalog=\"gpus-of-mars\"/>\n",
		     "catalog: unknown kind 'gpus-of-mars'");
	expect_error("  <axis path=\"cluster.gpu.ref\" catalog=\"gpu\" match=\"z*\"/>\n",
		     "catalog: no gpu entry matches 'z*'");
	expect_error("  <axis path=\"workload.micro-batch\" values=\"1\"/>\n"
		     "  <constraint test=\"workload.micro-batch &lt;\"/>\n", "constraint 'workload.micro-batch <'");
	expect_error("  <axis path=\"workload.micro-batch\" values=\"1\"/>\n"
		     "  <constraint test=\"workload.micro-bach &lt; 2\"/>\n",
		     "constraint: unknown --set path 'workload.micro-bach'");
	/* the schema: an element it does not know */
	expect_error("  <axes path=\"workload.micro-batch\" values=\"1\"/>\n", "axes");
}

/* ---- the command and its store ------------------------------------------------------- */

/* a sweep of scenarios/BASE, n utilisations from 5% in steps of step by
 * micro-batch 1, 2 */
static void write_sweep_of(const char *path, const char *name, int n, double step,
			   const char *base)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "<sweep name=\"%s\">\n"
		   "  <base scenario=\"%s/scenarios/%s\"/>\n"
		   "  <set path=\"reliability.runs\" value=\"0\"/>\n"
		   "  <axis path=\"cost.utilization\" from=\"0.05\" to=\"%g\" step=\"%g\"/>\n"
		   "  <axis path=\"workload.micro-batch\" values=\"1, 2\"/>\n"
		   "  <constraint test=\"workload.micro-batch == 1 or cost.utilization &lt; 0.5\"/>\n"
		   "</sweep>\n", name, CAPSIM_SOURCE_DIR, base, 0.05 + step * (n - 1), step);
	fclose(f);
}

/* the same over the default scenario (256 H100s: every part of the result) */
static void write_sweep(const char *path, const char *name, int n)
{
	write_sweep_of(path, name, n, 0.001, "default.xml");
}

/* the same over one GPU (GPT-2 124M on an H200), for the sweeps that are
 * killed, interrupted and resumed: 200 utilisations from 5% to 84.6% in steps
 * of 0.4% by micro-batch 1, 2, of which the 87 of micro-batch 2 at 50% or
 * more are dropped: 313 points run. Enough that a kill after the first 100
 * committed lands half-way (over 200 points, a second and more of work, are
 * left even in a release build), few enough that the sanitizers do not make
 * the tests long; each point costs an eighth of the default's. */
#define LONG_SWEEP_RUN 313
#define LONG_SWEEP_GRID 400
static void write_long_sweep(const char *path, const char *name)
{
	write_sweep_of(path, name, 200, 0.004, "gpt2-124m-1xh200.xml");
}

/* every point of sweep 1 in a and b the same: status, error, parameters and
 * every result bit for bit; returns how many points */
static size_t same_points(const char *a, const char *b, int64_t size)
{
	capsim_store *sa, *sb;
	capsim_diags d = { 0 };
	assert_int_equal(capsim_store_open(a, CAPSIM_STORE_READ, &sa, &d), 0);
	assert_int_equal(capsim_store_open(b, CAPSIM_STORE_READ, &sb, &d), 0);
	size_t n = 0;
	for (int64_t i = 0; i < size; i++) {
		capsim_point_record ra, rb;
		int ga = capsim_results_read_point(sa, 1, i, &ra, &d);
		int gb = capsim_results_read_point(sb, 1, i, &rb, &d);
		assert_int_equal(ga, gb);
		if (ga == 0) {
			n++;
			assert_int_equal(ra.failed, rb.failed);
			assert_string_equal(ra.scenario_sha256, rb.scenario_sha256);
			assert_int_equal(ra.n_params, rb.n_params);
			for (size_t k = 0; k < ra.n_params; k++) {
				assert_string_equal(ra.params[k].path, rb.params[k].path);
				assert_string_equal(ra.params[k].value, rb.params[k].value);
			}
			assert_int_equal(ra.n_results, rb.n_results);
			for (size_t k = 0; k < ra.n_results; k++) {
				assert_string_equal(ra.results[k].key, rb.results[k].key);
				assert_int_equal(ra.results[k].is_text, rb.results[k].is_text);
				if (ra.results[k].is_text)
					assert_string_equal(ra.results[k].text, rb.results[k].text);
				else
					assert_memory_equal(&ra.results[k].num, &rb.results[k].num,
							    sizeof(double));
			}
		}
		capsim_point_record_free(&ra);
		capsim_point_record_free(&rb);
	}
	capsim_diags_free(&d);
	capsim_store_close(sa);
	capsim_store_close(sb);
	return n;
}

/* the store's points are what capsim_eval says of the same scenario */
static void test_store_matches_eval(void **state)
{
	(void)state;
	char sweep[512], db[512];
	snprintf(sweep, sizeof sweep, "%s/small.xml", dir);
	snprintf(db, sizeof db, "%s/small.sqlite", dir);
	write_sweep(sweep, "small", 3);
	assert_int_equal(testutil_sh("%s sweep %s --db %s --no-progress >/dev/null", CAPSIM_BIN, sweep, db), 0);

	capsim_scenario *base = calloc(1, sizeof *base);
	capsim_sweep *sw = load_ok(sweep, base);
	assert_int_equal(sw->size, 6);
	capsim_store *st;
	capsim_diags d = { 0 };
	capsim_err_model *errors = capsim_err_model_load_root(CAPSIM_SOURCE_DIR, &d);
	assert_non_null(errors);
	assert_int_equal(capsim_store_open(db, CAPSIM_STORE_READ, &st, &d), 0);
	for (int64_t i = 0; i < 6; i++) {
		capsim_point_record rec;
		assert_int_equal(capsim_results_read_point(st, 1, i, &rec, &d), 0);
		assert_int_equal(rec.failed, 0);
		capsim_set sets[CAPSIM_SWEEP_MAX_AXES];
		capsim_sweep_point(sw, (uint64_t)i, sets);
		assert_int_equal(rec.n_params, 2);
		capsim_scenario *s = malloc(sizeof *s);
		*s = *base;
		assert_int_equal(capsim_scenario_set_many(s, cat, sets, sw->n_axes, &d), 0);
		capsim_result r;
		/* the command stores the shipped error model's bands */
		capsim_eval_opts eo = { .errors = errors };
		assert_int_equal(capsim_eval(s, &eo, &r, &d), 0);
		capsim_result_value v[512];
		size_t nv = capsim_result_values(&r, v, sizeof v / sizeof v[0]);
		assert_int_equal(nv, rec.n_results);
		for (size_t k = 0; k < nv; k++) {
			const capsim_point_value *p = NULL;
			for (size_t j = 0; j < rec.n_results; j++)
				if (strcmp(rec.results[j].key, v[k].key) == 0)
					p = &rec.results[j];
			assert_non_null(p);
			if (v[k].text)
				assert_string_equal(p->text, v[k].text);
			else if (isfinite(v[k].num))
				assert_memory_equal(&p->num, &v[k].num, sizeof(double));
			else
				assert_true(p->is_text);
			assert_string_equal(p->unit, v[k].unit);
		}
		capsim_result_free(&r);
		free(s);
		capsim_point_record_free(&rec);
	}
	capsim_store_close(st);
	capsim_diags_free(&d);
	capsim_err_model_free(errors);
	capsim_sweep_free(sw);
	free(base);
}

/* a point that fails is recorded with its message and no results */
static void test_failed_point(void **state)
{
	(void)state;
	char sweep[512], db[512];
	snprintf(sweep, sizeof sweep, "%s/fails.xml", dir);
	snprintf(db, sizeof db, "%s/fails.sqlite", dir);
	FILE *f = fopen(sweep, "w");
	assert_non_null(f);
	/* tp 3 does not divide the heads: the edit is refused when the point runs */
	fprintf(f, "<sweep name=\"fails\">\n"
		   "  <base scenario=\"%s/scenarios/gpt2-124m-1xh200.xml\"/>\n"
		   "  <axis path=\"workload.parallelism.tp\" values=\"1, 3\"/>\n"
		   "</sweep>\n", CAPSIM_SOURCE_DIR);
	fclose(f);
	assert_int_equal(testutil_sh("%s sweep %s --db %s --no-progress >/dev/null", CAPSIM_BIN, sweep, db), 0);
	capsim_store *st;
	capsim_diags d = { 0 };
	assert_int_equal(capsim_store_open(db, CAPSIM_STORE_READ, &st, &d), 0);
	capsim_point_record rec;
	assert_int_equal(capsim_results_read_point(st, 1, 0, &rec, &d), 0);
	assert_int_equal(rec.failed, 0);
	assert_true(rec.n_results > 10);
	capsim_point_record_free(&rec);
	assert_int_equal(capsim_results_read_point(st, 1, 1, &rec, &d), 0);
	assert_int_equal(rec.failed, 1);
	assert_non_null(strstr(rec.error, "--set workload.parallelism.tp=3"));
	assert_int_equal(rec.n_results, 0);
	assert_int_equal(rec.n_params, 1);
	capsim_point_record_free(&rec);
	capsim_store_close(st);
	capsim_diags_free(&d);
}

static void test_threads_equal_serial(void **state)
{
	(void)state;
	char sweep[512], one[512], three[512];
	snprintf(sweep, sizeof sweep, "%s/threads.xml", dir);
	snprintf(one, sizeof one, "%s/one.sqlite", dir);
	snprintf(three, sizeof three, "%s/three.sqlite", dir);
	write_sweep(sweep, "threads", 20);
	assert_int_equal(testutil_sh("%s sweep %s --db %s --no-progress >/dev/null", CAPSIM_BIN, sweep, one), 0);
	assert_int_equal(testutil_sh("%s sweep %s --db %s -j 3 --no-progress >/dev/null", CAPSIM_BIN, sweep,
			    three), 0);
	/* 40 points; micro-batch 2 at 50% or more dropped: none here (0.05 .. 0.069) */
	assert_int_equal(same_points(one, three, 40), 40);
}

/* -j 64 for 6 points: most threads find no work and end at once, yet every
 * one is counted as started (no "N of 64 threads started" warning, which
 * the count read back after some had ended once gave, with errno's
 * "(Success)"); every point is written once, as one thread writes it; and
 * the finished store is back in rollback-journal mode with nothing beside
 * it, so that a reader needs no -wal or -shm */
static void test_many_threads(void **state)
{
	(void)state;
	char sweep[512], one[512], many[512], log[512], side[540];
	snprintf(sweep, sizeof sweep, "%s/many.xml", dir);
	snprintf(one, sizeof one, "%s/many-1.sqlite", dir);
	snprintf(many, sizeof many, "%s/many-64.sqlite", dir);
	snprintf(log, sizeof log, "%s/many.log", dir);
	write_sweep(sweep, "threads", 3);
	assert_int_equal(testutil_sh("%s sweep %s --db %s --no-progress >/dev/null", CAPSIM_BIN,
				     sweep, one), 0);
	for (int round = 0; round < 3; round++) {
		unlink(many);
		assert_int_equal(testutil_sh("%s sweep %s --db %s -j 64 --no-progress >/dev/null "
					     "2>%s", CAPSIM_BIN, sweep, many, log), 0);
		assert_int_equal(testutil_sh("grep -q 'threads started' %s", log), 1);
		assert_int_equal(same_points(one, many, 6), 6);
	}
	unsigned char head[20];
	FILE *f = fopen(many, "rb");
	assert_non_null(f);
	assert_int_equal(fread(head, 1, sizeof head, f), sizeof head);
	fclose(f);
	assert_int_equal(head[18], 1); /* rollback journal, not WAL (2) */
	assert_int_equal(head[19], 1);
	static const char *const beside[] = { "-wal", "-shm", "-journal" };
	for (size_t i = 0; i < sizeof beside / sizeof beside[0]; i++) {
		snprintf(side, sizeof side, "%s%s", many, beside[i]);
		assert_int_equal(access(side, F_OK), -1);
	}
}

static int64_t count_points(const char *db)
{
	capsim_store *st;
	capsim_diags d = { 0 };
	int64_t *idx = NULL;
	size_t n = 0;
	if (capsim_store_open(db, CAPSIM_STORE_READ, &st, &d) == 0) {
		int64_t id;
		if (capsim_results_find_sweep(st, "killed", &id, &d) == 1)
			capsim_results_indices(st, id, &idx, &n, &d);
		capsim_store_close(st);
	}
	free(idx);
	capsim_diags_free(&d);
	return (int64_t)n;
}

/* SIGKILL once some points are committed and others not, then --resume:
 * every point once, each as the uninterrupted sweep has it */
static void test_kill_and_resume(void **state)
{
	(void)state;
	char sweep[512], db[512], ref[512];
	snprintf(sweep, sizeof sweep, "%s/killed.xml", dir);
	snprintf(db, sizeof db, "%s/killed.sqlite", dir);
	snprintf(ref, sizeof ref, "%s/whole.sqlite", dir);
	/* committed every 50 */
	write_long_sweep(sweep, "killed");
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		dup2(null, 2);
		execl(CAPSIM_BIN, CAPSIM_BIN, "sweep", sweep, "--db", db, "--batch", "50", "--no-progress",
		      (char *)NULL);
		_exit(127);
	}
	int64_t seen = 0;
	for (int k = 0; k < 60000 && seen < 100; k++) {
		struct timespec ts = { 0, 5000000 };
		nanosleep(&ts, NULL);
		if (access(db, F_OK) == 0)
			seen = count_points(db);
	}
	kill(pid, SIGKILL);
	int st;
	waitpid(pid, &st, 0);
	assert_true(WIFSIGNALED(st));
	int64_t before = count_points(db);
	assert_true(before > 0);
	assert_true(before < LONG_SWEEP_RUN);
	assert_int_equal(testutil_sh("%s sweep %s --db %s --resume --no-progress >/dev/null", CAPSIM_BIN, sweep,
			    db), 0);
	assert_int_equal(count_points(db), LONG_SWEEP_RUN);
	assert_int_equal(testutil_sh("%s sweep %s --db %s -j 2 --no-progress >/dev/null", CAPSIM_BIN, sweep,
			    ref), 0);
	assert_int_equal(same_points(db, ref, LONG_SWEEP_GRID), LONG_SWEEP_RUN);
	/* resuming a finished sweep runs nothing */
	assert_int_equal(testutil_sh("%s sweep %s --db %s --resume --no-progress --json | grep -q "
			    "'\"resumed_skipped\": %d'", CAPSIM_BIN, sweep, db, LONG_SWEEP_RUN), 0);
	/* a changed sweep file is not resumed */
	FILE *f = fopen(sweep, "a");
	fputs("<!-- changed -->\n", f);
	fclose(f);
	assert_int_equal(testutil_sh("%s sweep %s --db %s --resume --no-progress 2>&1 | grep -q 'changed "
			    "since sweep 1'", CAPSIM_BIN, sweep, db), 0);
}

/* SIGINT: the points in hand are finished and committed, exit 130; resumed,
 * the sweep ends whole */
static void test_interrupt_and_resume(void **state)
{
	(void)state;
	char sweep[512], db[512];
	snprintf(sweep, sizeof sweep, "%s/killed.xml", dir);
	snprintf(db, sizeof db, "%s/interrupted.sqlite", dir);
	write_long_sweep(sweep, "killed");
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		dup2(null, 2);
		execl(CAPSIM_BIN, CAPSIM_BIN, "sweep", sweep, "--db", db, "--batch", "50", "-j", "2",
		      "--no-progress", (char *)NULL);
		_exit(127);
	}
	int64_t seen = 0;
	for (int k = 0; k < 60000 && seen < 100; k++) {
		struct timespec ts = { 0, 5000000 };
		nanosleep(&ts, NULL);
		if (access(db, F_OK) == 0)
			seen = count_points(db);
	}
	kill(pid, SIGINT);
	int st;
	waitpid(pid, &st, 0);
	assert_true(WIFEXITED(st));
	int64_t before = count_points(db);
	if (before < LONG_SWEEP_RUN)
		assert_int_equal(WEXITSTATUS(st), 130);
	assert_int_equal(testutil_sh("%s sweep %s --db %s --resume --no-progress >/dev/null", CAPSIM_BIN, sweep,
			    db), 0);
	assert_int_equal(count_points(db), LONG_SWEEP_RUN);
}

static void test_mpi_equals_serial(void **state)
{
	(void)state;
#ifdef CAPSIM_TEST_MPIEXEC
	char sweep[512], one[512], two[512];
	snprintf(sweep, sizeof sweep, "%s/mpi.xml", dir);
	snprintf(one, sizeof one, "%s/mpi-serial.sqlite", dir);
	snprintf(two, sizeof two, "%s/mpi-ranks.sqlite", dir);
	write_sweep(sweep, "mpi", 30);
	assert_int_equal(testutil_sh("%s sweep %s --db %s --no-progress >/dev/null", CAPSIM_BIN, sweep, one), 0);
	/* as root in CI; the leak checker knows nothing of Open MPI's own */
	assert_int_equal(testutil_sh("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
			    "ASAN_OPTIONS=detect_leaks=0 %s -np 2 --oversubscribe %s sweep %s --db %s "
			    "--no-progress --json > %s/mpi.json", CAPSIM_TEST_MPIEXEC, CAPSIM_BIN, sweep,
			    two, dir), 0);
	assert_int_equal(same_points(one, two, 60), 60);
	/* both ranks evaluated points */
	assert_int_equal(testutil_sh("grep -A3 by_rank %s/mpi.json | tr -d ' \\n' | grep -Eq "
			    "'\"by_rank\":\\[[1-9][0-9]*,[1-9][0-9]*\\]'", dir), 0);
#else
	skip();
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_expand),
		cmocka_unit_test(test_ranges),
		cmocka_unit_test(test_constraints),
		cmocka_unit_test(test_constraint_reads_base),
		cmocka_unit_test(test_shipped_sweeps),
		cmocka_unit_test(test_bad_files),
		cmocka_unit_test(test_store_matches_eval),
		cmocka_unit_test(test_failed_point),
		cmocka_unit_test(test_threads_equal_serial),
		cmocka_unit_test(test_many_threads),
		cmocka_unit_test(test_kill_and_resume),
		cmocka_unit_test(test_interrupt_and_resume),
		cmocka_unit_test(test_mpi_equals_serial),
	};
	return testutil_run_group(tests, setup, teardown);
}
