/* test_sweep_run.c - the sweep runner's library face (src/sweep/run.h),
 * called as a C program calls it, without the command line: a sweep of a
 * few points on two threads into a store in a scratch directory, each
 * point's rows equal to capsim_result_values of capsim_eval of the same
 * scenario (units and digests included), constraints counted, progress
 * reported, a stopped run resumed to every point once, and the resume of a
 * sweep the store does not hold refused. */
#include <setjmp.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "catalog.h"
#include "eval.h"
#include "results.h"
#include "run.h"
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
	return testutil_tmpdir_make(dir, sizeof dir, "test-sweep-run");
}

static int teardown(void **state)
{
	(void)state;
	capsim_catalog_free(cat);
	return testutil_tmpdir_remove(dir);
}

/* six points over one GPU, one of them (utilisation 0.9 at micro-batch 2)
 * dropped by the constraint: five to run */
static capsim_sweep *small_sweep(const char *name, capsim_scenario *base)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s.xml", dir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "<sweep name=\"%s\">\n"
		   "  <base scenario=\"%s/scenarios/gpt2-124m-1xh200.xml\"/>\n"
		   "  <set path=\"reliability.runs\" value=\"0\"/>\n"
		   "  <axis path=\"cost.utilization\" values=\"0.3, 0.6, 0.9\"/>\n"
		   "  <axis path=\"workload.micro-batch\" values=\"1, 2\"/>\n"
		   "  <constraint test=\"workload.micro-batch == 1 or cost.utilization &lt; 0.8\"/>\n"
		   "</sweep>\n", name, CAPSIM_SOURCE_DIR);
	fclose(f);
	capsim_diags d = { 0 };
	capsim_sweep *sw = capsim_sweep_load(path, cat, NULL, 0, base, &d);
	if (!sw)
		capsim_diags_print(&d, stderr);
	assert_non_null(sw);
	capsim_diags_free(&d);
	return sw;
}

typedef struct {
	int calls, finals;
	size_t last_done, last_total;
} seen;

static void on_progress(void *ctx, size_t done, size_t failed, size_t total, int final)
{
	seen *s = ctx;
	assert_int_equal(failed, 0);
	assert_true(done >= s->last_done && done <= total);
	s->calls++;
	s->finals += final;
	s->last_done = done;
	s->last_total = total;
}

/* point i of sweep 1 in the store at db against capsim_eval of its scenario */
static void check_point(capsim_store *st, const capsim_sweep *sw, const capsim_scenario *base,
			uint64_t i)
{
	capsim_diags d = { 0 };
	capsim_point_record rec;
	assert_int_equal(capsim_results_read_point(st, 1, (int64_t)i, &rec, &d), 0);
	assert_int_equal(rec.failed, 0);
	assert_string_equal(rec.capsim_version, "test-sweep-run");
	capsim_set sets[CAPSIM_SWEEP_MAX_AXES];
	capsim_sweep_point(sw, i, sets);
	capsim_scenario *s = malloc(sizeof *s);
	*s = *base;
	assert_int_equal(capsim_scenario_set_many(s, cat, sets, sw->n_axes, &d), 0);
	char sha[65];
	capsim_sweep_scenario_digest(s, sha);
	assert_string_equal(rec.scenario_sha256, sha);
	capsim_result r;
	assert_int_equal(capsim_eval(s, NULL, &r, &d), 0);
	capsim_result_value *v = calloc(capsim_result_n_keys, sizeof *v);
	size_t n = capsim_result_values(&r, v, capsim_result_n_keys);
	assert_true(n > 20);
	assert_int_equal(rec.n_results, n);
	for (size_t k = 0; k < n; k++) {
		const capsim_point_value *p = NULL;
		for (size_t j = 0; j < rec.n_results; j++)
			if (strcmp(rec.results[j].key, v[k].key) == 0)
				p = &rec.results[j];
		assert_non_null(p);
		assert_string_equal(p->unit, v[k].unit);
		if (v[k].text)
			assert_string_equal(p->text, v[k].text);
		else if (isfinite(v[k].num))
			assert_memory_equal(&p->num, &v[k].num, sizeof(double));
		else
			assert_true(p->is_text);
	}
	free(v);
	capsim_result_free(&r);
	free(s);
	capsim_point_record_free(&rec);
	capsim_diags_free(&d);
}

static void test_rows_equal_eval(void **state)
{
	(void)state;
	capsim_scenario *base = calloc(1, sizeof *base);
	capsim_sweep *sw = small_sweep("rows", base);
	char db[512];
	snprintf(db, sizeof db, "%s/rows.sqlite", dir);
	seen pr = { 0 };
	capsim_sweep_run_opts o = { .threads = 2, .version = "test-sweep-run",
				    .progress = on_progress, .progress_ctx = &pr };
	capsim_sweep_run_result res;
	capsim_diags d = { 0 };
	assert_int_equal(capsim_sweep_run(sw, cat, base, db, &o, &res, &d), 0);
	assert_int_equal(res.sweep_id, 1);
	assert_int_equal(res.planned, 5);
	assert_int_equal(res.ok, 5);
	assert_int_equal(res.failed, 0);
	assert_int_equal(res.dropped, 1);
	assert_int_equal(res.n_constraints, 1);
	assert_int_equal(res.drops[0], 1);
	assert_int_equal(res.errors[0], 0);
	assert_int_equal(res.stopped, 0);
	assert_int_equal(res.ranks, 1);
	assert_int_equal(res.by_rank[0], 5);
	assert_int_equal(pr.finals, 1);
	assert_int_equal(pr.last_done, 5);
	assert_int_equal(pr.last_total, 5);
	capsim_sweep_run_result_free(&res);

	capsim_store *st;
	assert_int_equal(capsim_store_open(db, CAPSIM_STORE_READ, &st, &d), 0);
	for (uint64_t i = 0; i < sw->size; i++) {
		int error;
		char err[256];
		if (capsim_sweep_check(sw, i, &error, err, sizeof err) >= 0) {
			capsim_point_record rec;
			assert_int_equal(capsim_results_read_point(st, 1, (int64_t)i, &rec, &d), -1);
			capsim_point_record_free(&rec);
			capsim_diags_free(&d);
			continue;
		}
		check_point(st, sw, base, i);
	}
	capsim_store_close(st);
	capsim_diags_free(&d);
	capsim_sweep_free(sw);
	free(base);
}

/* stop set before the first point: nothing runs, the sweep is in the store;
 * a resume runs every point once */
static void test_stop_and_resume(void **state)
{
	(void)state;
	capsim_scenario *base = calloc(1, sizeof *base);
	capsim_sweep *sw = small_sweep("stop", base);
	char db[512];
	snprintf(db, sizeof db, "%s/stop.sqlite", dir);
	atomic_int stop = 1;
	capsim_sweep_run_opts o = { .threads = 1, .version = "test-sweep-run", .stop = &stop };
	capsim_sweep_run_result res;
	capsim_diags d = { 0 };
	assert_int_equal(capsim_sweep_run(sw, cat, base, db, &o, &res, &d), 1);
	assert_int_equal(res.stopped, 1);
	assert_int_equal(res.ok + res.failed, 0);
	assert_int_equal(res.planned, 5);
	capsim_sweep_run_result_free(&res);

	atomic_store(&stop, 0);
	o.resume = 1;
	o.threads = 3;
	assert_int_equal(capsim_sweep_run(sw, cat, base, db, &o, &res, &d), 0);
	assert_int_equal(res.sweep_id, 1);
	assert_int_equal(res.ok, 5);
	assert_int_equal(res.done_before, 0);
	capsim_sweep_run_result_free(&res);
	/* once more: every point is in the store already */
	assert_int_equal(capsim_sweep_run(sw, cat, base, db, &o, &res, &d), 0);
	assert_int_equal(res.planned, 0);
	assert_int_equal(res.done_before, 5);
	assert_int_equal(res.ok, 0);
	capsim_sweep_run_result_free(&res);
	capsim_store *st;
	assert_int_equal(capsim_store_open(db, CAPSIM_STORE_READ, &st, &d), 0);
	check_point(st, sw, base, 3);
	capsim_store_close(st);
	assert_int_equal(d.n, 0);
	capsim_sweep_free(sw);
	free(base);
}

/* a resume of a sweep the store does not hold: bad input, nothing written */
static void test_resume_unknown(void **state)
{
	(void)state;
	capsim_scenario *base = calloc(1, sizeof *base);
	capsim_sweep *sw = small_sweep("other", base);
	char db[512];
	snprintf(db, sizeof db, "%s/empty.sqlite", dir);
	capsim_store *st;
	capsim_diags d = { 0 };
	assert_int_equal(capsim_store_open(db, CAPSIM_STORE_WRITE, &st, &d), 0);
	capsim_store_close(st);
	capsim_sweep_run_opts o = { .version = "test-sweep-run", .resume = 1 };
	capsim_sweep_run_result res;
	assert_int_equal(capsim_sweep_run(sw, cat, base, db, &o, &res, &d), -1);
	assert_true(capsim_diags_contains(&d, "--resume: the store holds no sweep named 'other'"));
	assert_false(capsim_diags_runtime(&d));
	assert_int_equal(res.ok + res.failed, 0);
	capsim_sweep_run_result_free(&res);
	capsim_diags_free(&d);
	capsim_sweep_free(sw);
	free(base);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows_equal_eval),
		cmocka_unit_test(test_stop_and_resume),
		cmocka_unit_test(test_resume_unknown),
	};
	return testutil_run_group(tests, setup, teardown);
}
