/* test_query.c - reading sweep results back (src/store/sweepq.h) and the
 * command over it (capsim query, src/cli/cmd_query.c): a store of three
 * sweeps with known numbers, then the best points by a metric either way
 * (ties by index), filters on numbers, parameters and texts, a Pareto front
 * against one worked by hand, the sweep by id and by name, failed points
 * left out and listed, unknown keys named with the nearest, and the
 * command's CSV, exit statuses and messages end to end. */
#include "testutil.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <sqlite3.h>

#include "eval.h"
#include "results.h"
#include "store.h"
#include "sweepq.h"

int capsim_cmd_query(int argc, char **argv);

#define SHA "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define ERR5 "out of memory: 90 GiB > 80 GiB"

CAPSIM_TEST_TMPDIR("query")

/* ---- the store ------------------------------------------------------------------ */

/* One point of sweep "beta" as written: NAN or NULL is a key the point
 * lacks. Pareto of (time, cost), both smallest, worked by hand:
 *   8 (40,200)  6 (50,120)  3 = 4 (60,90)  11 (65,85)  2 (70,70)  1 (80,60)
 *   10 (90,50); dominated: 0 (100,50) by 10, 7 (75,95) by 2 and 11,
 *   9 (110,55) by 10. */
typedef struct fixture {
	int index;
	const char *transport, *nodes, *tp;
	double tokens, time, cost, mfu;
	int fits;
	const char *bound;
} fixture;

static const fixture beta[] = {
	/* written out of index order: the table comes back by index */
	{ 3, "infiniband", "16", "4", 2000, 60, 90, 0.50, 1, "client \"bw\", metadata" },
	{ 0, "infiniband", "8", "2", 1000, 100, 50, 0.40, 1, "iops" },
	{ 1, "infiniband", "8", "4", 1500, 80, 60, 0.45, 1, "aggregate bandwidth" },
	{ 2, "roce", "16", "2", 1500, 70, 70, 0.42, 1, "iops" },
	{ 4, "roce", "32", "2", 2000, 60, 90, 0.38, 0, "iops" },
	{ 6, "infiniband", "32", "8", 2500.5, 50.125, 120, 0.47, 1, "iops" },
	{ 7, "roce", "64", "2", 1800, 75, 95, 0.30, 1, NULL },
	{ 8, "infiniband", "64", "4", 3000, 40, 200, 0.52, 1, "iops" },
	{ 9, "roce", "64", "8", 900, 110, 55, 0.25, 1, "iops" },
	{ 10, "infiniband", "8", "8", 1200, 90, 50, 0.41, 1, "iops" },
	{ 11, "roce", "16", "8", NAN, 65, 85, 0.44, 1, "aggregate bandwidth" },
};
#define N_BETA (sizeof beta / sizeof beta[0])

static char db[128];

static int64_t new_sweep(capsim_store *s, const char *name)
{
	capsim_sweep_info info = { .name = name, .capsim_version = "0.1.0-test",
				   .base_scenario_sha256 = SHA };
	int64_t id;
	capsim_diags d = { 0 };
	if (capsim_results_create_sweep(s, &info, &id, &d) < 0) {
		capsim_diags_print(&d, stderr);
		fail_msg("sweep %s not created", name);
	}
	capsim_diags_free(&d);
	return id;
}

static void put_point(capsim_store *s, int64_t sweep, const capsim_result_point *p)
{
	capsim_diags d = { 0 };
	if (capsim_results_write_point(s, sweep, p, NULL, &d) < 0) {
		capsim_diags_print(&d, stderr);
		fail_msg("point %lld not written", (long long)p->index);
	}
	capsim_diags_free(&d);
}

static void write_beta(capsim_store *s, int64_t sweep, const fixture *f)
{
	capsim_result_param params[] = {
		{ "cluster.nodes", f->nodes }, { "workload.parallelism.tp", f->tp },
		{ "cluster.fabric.transport", f->transport },
	};
	capsim_result_value v[8];
	size_t n = 0;
	v[n++] = (capsim_result_value){ .key = "gpus", .num = 8 * atof(f->nodes) };
	v[n++] = (capsim_result_value){ .key = "time_to_train_s", .num = f->time, .unit = "s" };
	v[n++] = (capsim_result_value){ .key = "onprem_cost_to_train_usd", .num = f->cost,
					.unit = "usd" };
	v[n++] = (capsim_result_value){ .key = "mfu", .num = f->mfu, .unit = "1" };
	v[n++] = (capsim_result_value){ .key = "fits_in_memory", .num = f->fits };
	if (!isnan(f->tokens))
		v[n++] = (capsim_result_value){ .key = "tokens_per_s", .num = f->tokens,
						.unit = "1/s" };
	if (f->bound)
		v[n++] = (capsim_result_value){ .key = "data_bound", .text = f->bound };
	if (f->index == 0) /* a key this capsim's table lacks */
		v[n++] = (capsim_result_value){ .key = "custom_score", .num = 7 };
	capsim_result_point p = { .index = f->index, .scenario_sha256 = SHA,
				  .capsim_version = "0.1.0-test", .params = params,
				  .n_params = 3, .results = v, .n_results = n };
	put_point(s, sweep, &p);
}

/* alpha (id 1): 3 points; "7" (id 2): 1 point; beta (id 3, the latest): 12
 * points, 5 of them failed */
static int make_store(void **state)
{
	if (setup(state) < 0)
		return -1;
	snprintf(db, sizeof db, "%s/results.sqlite", dir);
	capsim_store *s;
	capsim_diags d = { 0 };
	if (capsim_store_open(db, CAPSIM_STORE_WRITE, &s, &d) < 0)
		return -1;
	int64_t alpha = new_sweep(s, "alpha");
	for (int i = 0; i < 3; i++) {
		char nodes[8];
		snprintf(nodes, sizeof nodes, "%d", 4 << i);
		capsim_result_param par = { "cluster.nodes", nodes };
		capsim_result_value v = { .key = "tokens_per_s", .num = 100.0 * (i + 1) };
		capsim_result_point p = { .index = i, .scenario_sha256 = SHA,
					  .capsim_version = "0.1.0-test", .params = &par,
					  .n_params = 1, .results = &v, .n_results = 1 };
		put_point(s, alpha, &p);
	}
	int64_t seven = new_sweep(s, "7");
	capsim_result_value v7 = { .key = "tokens_per_s", .num = 7 };
	capsim_result_point p7 = { .index = 0, .scenario_sha256 = SHA,
				   .capsim_version = "0.1.0-test", .results = &v7, .n_results = 1 };
	put_point(s, seven, &p7);
	int64_t b = new_sweep(s, "beta");
	for (size_t i = 0; i < N_BETA; i++)
		write_beta(s, b, &beta[i]);
	capsim_result_param fp[] = {
		{ "cluster.nodes", "64" }, { "workload.parallelism.tp", "8" },
		{ "cluster.fabric.transport", "infiniband" },
	};
	capsim_result_point failed = { .index = 5, .scenario_sha256 = SHA, .failed = 1,
				       .error = ERR5, .capsim_version = "0.1.0-test",
				       .params = fp, .n_params = 3 };
	put_point(s, b, &failed);
	capsim_store_close(s);
	return alpha == 1 && seven == 2 && b == 3 ? 0 : -1;
}

/* ---- helpers -------------------------------------------------------------------- */

static capsim_store *open_db(void)
{
	capsim_store *s;
	capsim_diags d = { 0 };
	if (capsim_store_open(db, CAPSIM_STORE_READ, &s, &d) < 0) {
		capsim_diags_print(&d, stderr);
		fail_msg("%s does not open", db);
	}
	return s;
}

/* sweep 3's points of `which` matching the filters (texts), with keys */
static void read_beta(capsim_store *s, const char *const *keys, size_t n_keys,
		      const char *const *where, size_t n_where, capsim_sweepq_which which,
		      capsim_sweepq_table *t)
{
	capsim_sweepq_filter f[8];
	capsim_diags d = { 0 };
	assert_true(n_where <= 8);
	for (size_t i = 0; i < n_where; i++)
		assert_int_equal(capsim_sweepq_filter_parse(where[i], &f[i], &d), 0);
	capsim_sweepq_request rq = { .sweep_id = 3, .keys = keys, .n_keys = n_keys,
				     .filters = f, .n_filters = n_where, .which = which };
	if (capsim_sweepq_read(s, &rq, t, &d) < 0) {
		capsim_diags_print(&d, stderr);
		fail_msg("sweep 3 not read");
	}
	for (size_t i = 0; i < n_where; i++)
		capsim_sweepq_filter_free(&f[i]);
	capsim_diags_free(&d);
}

/* the points of t are exactly want[0..n), in order */
static void expect_indices(const capsim_sweepq_table *t, const int *want, size_t n)
{
	char got[256] = "", exp[256] = "";
	for (size_t i = 0; i < t->n_points; i++)
		snprintf(got + strlen(got), sizeof got - strlen(got), "%lld ",
			 (long long)t->points[i].index);
	for (size_t i = 0; i < n; i++)
		snprintf(exp + strlen(exp), sizeof exp - strlen(exp), "%d ", want[i]);
	if (strcmp(got, exp) != 0)
		fail_msg("points [%s], expected [%s]", got, exp);
}

#define EXPECT(t, ...)                                                                   \
	do {                                                                             \
		const int want_[] = { __VA_ARGS__ };                                     \
		expect_indices((t), want_, sizeof want_ / sizeof want_[0]);              \
	} while (0)

/* the points of sweep 3 where filter holds, by index */
static void expect_where(capsim_store *s, const char *filter, const int *want, size_t n)
{
	capsim_sweepq_table t;
	const char *keys[] = { "tokens_per_s" };
	read_beta(s, keys, 1, &filter, 1, CAPSIM_SWEEPQ_OK, &t);
	expect_indices(&t, want, n);
	capsim_sweepq_table_free(&t);
}

#define WHERE(s, filter, ...)                                                            \
	do {                                                                             \
		const int want_[] = { __VA_ARGS__ };                                     \
		expect_where((s), (filter), want_, sizeof want_ / sizeof want_[0]);      \
	} while (0)

/* ---- sweeps ---------------------------------------------------------------------- */

static void test_list(void **state)
{
	(void)state;
	capsim_store *s = open_db();
	capsim_sweepq_sweep *v;
	size_t n;
	capsim_diags d = { 0 };
	assert_int_equal(capsim_sweepq_list(s, &v, &n, &d), 0);
	assert_int_equal(n, 3);
	assert_string_equal(v[0].name, "alpha");
	assert_int_equal(v[0].n_ok, 3);
	assert_int_equal(v[0].n_failed, 0);
	assert_string_equal(v[2].name, "beta");
	assert_int_equal(v[2].id, 3);
	assert_int_equal(v[2].n_ok, 11);
	assert_int_equal(v[2].n_failed, 1);
	assert_string_equal(v[2].capsim_version, "0.1.0-test");
	assert_int_equal(strlen(v[2].created_at), 20); /* 2026-12-04T10:00:00Z */
	capsim_sweepq_list_free(v, n);
	capsim_store_close(s);
}

/* the latest by default; digits are an id where there is one, else a name */
static void test_find(void **state)
{
	(void)state;
	capsim_store *s = open_db();
	capsim_sweepq_sweep w;
	capsim_diags d = { 0 };
	static const struct {
		const char *sel;
		int64_t id;
	} cases[] = { { NULL, 3 }, { "", 3 }, { "alpha", 1 }, { "1", 1 }, { "beta", 3 },
		      { "2", 2 }, { "7", 2 }, { "3", 3 } };
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		assert_int_equal(capsim_sweepq_find(s, cases[i].sel, &w, &d), 0);
		assert_int_equal(w.id, cases[i].id);
		capsim_sweepq_sweep_free(&w);
	}
	assert_int_equal(capsim_sweepq_find(s, "gamma", &w, &d), -1);
	assert_true(capsim_diags_contains(&d, "the store has no sweep named 'gamma'; it has 3 "
					      "sweeps: 3 'beta', 2 '7', 1 'alpha'"));
	assert_false(capsim_diags_contains(&d, "SQLite"));
	assert_false(capsim_diags_runtime(&d));
	capsim_diags_free(&d);
	assert_int_equal(capsim_sweepq_find(s, "99", &w, &d), -1);
	assert_true(capsim_diags_contains(&d, "no sweep named '99' (nor one of id 99)"));
	capsim_diags_free(&d);

	/* by name, the table of alpha: its own points and parameter */
	assert_int_equal(capsim_sweepq_find(s, "alpha", &w, &d), 0);
	const char *keys[] = { "tokens_per_s" };
	capsim_sweepq_request rq = { .sweep_id = w.id, .keys = keys, .n_keys = 1 };
	capsim_sweepq_table t;
	assert_int_equal(capsim_sweepq_read(s, &rq, &t, &d), 0);
	EXPECT(&t, 0, 1, 2);
	assert_int_equal(t.paths.n, 1);
	assert_string_equal(t.paths.v[0], "cluster.nodes");
	assert_string_equal(t.points[2].params[0], "16");
	assert_int_equal(t.points[2].cells[0].kind, CAPSIM_SWEEPQ_NUM);
	assert_rel(t.points[2].cells[0].num, 300, 0);
	capsim_sweepq_table_free(&t);
	capsim_sweepq_sweep_free(&w);
	capsim_store_close(s);
}

/* ---- the table ------------------------------------------------------------------- */

static void test_read_table(void **state)
{
	(void)state;
	capsim_store *s = open_db();
	capsim_sweepq_table t;
	const char *keys[] = { "tokens_per_s", "data_bound", "mfu" };
	read_beta(s, keys, 3, NULL, 0, CAPSIM_SWEEPQ_OK, &t);
	EXPECT(&t, 0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11);
	assert_int_equal(t.n_read, 11);
	assert_int_equal(t.paths.n, 3);
	assert_string_equal(t.paths.v[0], "cluster.fabric.transport");
	assert_string_equal(t.paths.v[1], "cluster.nodes");
	assert_string_equal(t.paths.v[2], "workload.parallelism.tp");
	assert_string_equal(t.units[0], "1/s");
	assert_string_equal(t.units[1], "");
	const capsim_sweepq_point *p3 = &t.points[3];
	assert_int_equal(p3->index, 3);
	assert_false(p3->failed);
	assert_null(p3->error);
	assert_string_equal(p3->params[0], "infiniband");
	assert_int_equal(p3->cells[1].kind, CAPSIM_SWEEPQ_TEXT);
	assert_string_equal(p3->cells[1].text, "client \"bw\", metadata");
	assert_rel(p3->cells[2].num, 0.50, 0);
	/* absent is absent: 7 has no data_bound, 11 no tokens_per_s */
	assert_int_equal(t.points[6].cells[1].kind, CAPSIM_SWEEPQ_ABSENT);
	assert_int_equal(t.points[10].cells[0].kind, CAPSIM_SWEEPQ_ABSENT);
	capsim_sweepq_table_free(&t);

	/* the failed points only, with their errors */
	read_beta(s, keys, 0, NULL, 0, CAPSIM_SWEEPQ_FAILED, &t);
	EXPECT(&t, 5);
	assert_true(t.points[0].failed);
	assert_string_equal(t.points[0].error, ERR5);
	assert_string_equal(t.points[0].params[1], "64");
	capsim_sweepq_table_free(&t);
	read_beta(s, keys, 1, NULL, 0, CAPSIM_SWEEPQ_ALL, &t);
	EXPECT(&t, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11);
	assert_int_equal(t.points[5].cells[0].kind, CAPSIM_SWEEPQ_ABSENT);
	capsim_sweepq_table_free(&t);
	capsim_store_close(s);
}

/* ---- best --------------------------------------------------------------------------- */

static void test_best(void **state)
{
	(void)state;
	capsim_store *s = open_db();
	capsim_sweepq_table t;
	const char *keys[] = { "tokens_per_s", "time_to_train_s" };

	/* largest first; 3 = 4 and 1 = 2 by index; 11 has none */
	read_beta(s, keys, 2, NULL, 0, CAPSIM_SWEEPQ_OK, &t);
	assert_int_equal(capsim_sweepq_best(&t, 0, CAPSIM_SWEEPQ_MAX, 7), 7);
	EXPECT(&t, 8, 6, 3, 4, 7, 1, 2);
	capsim_sweepq_table_free(&t);
	read_beta(s, keys, 2, NULL, 0, CAPSIM_SWEEPQ_OK, &t);
	assert_int_equal(capsim_sweepq_best(&t, 0, CAPSIM_SWEEPQ_MAX, 100), 10);
	EXPECT(&t, 8, 6, 3, 4, 7, 1, 2, 10, 0, 9);
	capsim_sweepq_table_free(&t);

	/* smallest first: 11 has a time */
	read_beta(s, keys, 2, NULL, 0, CAPSIM_SWEEPQ_OK, &t);
	assert_int_equal(capsim_sweepq_best(&t, 1, CAPSIM_SWEEPQ_MIN, 5), 5);
	EXPECT(&t, 8, 6, 3, 4, 11);
	assert_rel(t.points[1].cells[1].num, 50.125, 0);
	capsim_sweepq_table_free(&t);

	/* the other way round (--max on a time) */
	read_beta(s, keys, 2, NULL, 0, CAPSIM_SWEEPQ_OK, &t);
	capsim_sweepq_best(&t, 1, CAPSIM_SWEEPQ_MAX, 2);
	EXPECT(&t, 9, 0);
	capsim_sweepq_table_free(&t);

	/* after a filter */
	const char *roce = "cluster.fabric.transport = roce";
	read_beta(s, keys, 2, &roce, 1, CAPSIM_SWEEPQ_OK, &t);
	capsim_sweepq_best(&t, 0, CAPSIM_SWEEPQ_MAX, 3);
	EXPECT(&t, 4, 7, 2);
	capsim_sweepq_table_free(&t);
	capsim_store_close(s);
}

static void test_direction(void **state)
{
	(void)state;
	static const struct {
		const char *key;
		capsim_sweepq_dir dir;
	} cases[] = {
		{ "tokens_per_s", CAPSIM_SWEEPQ_MAX }, { "mfu", CAPSIM_SWEEPQ_MAX },
		{ "scaling_efficiency", CAPSIM_SWEEPQ_MAX }, { "goodput", CAPSIM_SWEEPQ_MAX },
		{ "cloud_goodput", CAPSIM_SWEEPQ_MAX }, { "samples_per_s", CAPSIM_SWEEPQ_MAX },
		{ "step_time_s", CAPSIM_SWEEPQ_MIN }, { "time_to_train_s", CAPSIM_SWEEPQ_MIN },
		{ "capex_usd", CAPSIM_SWEEPQ_MIN },
		{ "onprem_cost_to_train_usd", CAPSIM_SWEEPQ_MIN },
		{ "cloud_cost_per_million_tokens_usd", CAPSIM_SWEEPQ_MIN },
		{ "cost_per_s", CAPSIM_SWEEPQ_MIN }, { "energy_to_train_j", CAPSIM_SWEEPQ_MIN },
		{ "gpus", CAPSIM_SWEEPQ_NODIR }, { "fits_in_memory", CAPSIM_SWEEPQ_NODIR },
		{ "power_gpu_w", CAPSIM_SWEEPQ_NODIR },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		if (capsim_sweepq_direction(cases[i].key) != cases[i].dir)
			fail_msg("%s: direction %d, expected %d", cases[i].key,
				 capsim_sweepq_direction(cases[i].key), cases[i].dir);
	/* every key of the table named as the defaults suggest exists */
	assert_non_null(capsim_result_key_find("time_to_train_s"));
	assert_non_null(capsim_result_key_find("onprem_cost_to_train_usd"));
	assert_non_null(capsim_result_key_find("tokens_per_s"));
}

/* ---- Pareto ----------------------------------------------------------------------- */

static void test_pareto(void **state)
{
	(void)state;
	capsim_store *s = open_db();
	capsim_sweepq_table t;
	const char *keys[] = { "time_to_train_s", "onprem_cost_to_train_usd", "tokens_per_s" };
	read_beta(s, keys, 3, NULL, 0, CAPSIM_SWEEPQ_OK, &t);
	assert_int_equal(capsim_sweepq_pareto(&t, 0, CAPSIM_SWEEPQ_MIN, 1, CAPSIM_SWEEPQ_MIN), 8);
	EXPECT(&t, 8, 6, 3, 4, 11, 2, 1, 10);
	capsim_sweepq_table_free(&t);

	/* the other order: sorted by cost; 3 and 4 still tie */
	read_beta(s, keys, 3, NULL, 0, CAPSIM_SWEEPQ_OK, &t);
	capsim_sweepq_pareto(&t, 1, CAPSIM_SWEEPQ_MIN, 0, CAPSIM_SWEEPQ_MIN);
	EXPECT(&t, 10, 1, 2, 11, 3, 4, 6, 8);
	capsim_sweepq_table_free(&t);

	/* throughput up, cost down: 11 has no throughput and drops out.
	 * (tokens, cost): 8 (3000,200) 6 (2500.5,120) 3 = 4 (2000,90) 1 (1500,60)
	 * 10 (1200,50); 2 (1500,70) by 1, 7 (1800,95) by 3, 0 (1000,50) by 10,
	 * 9 (900,55) by 10 */
	read_beta(s, keys, 3, NULL, 0, CAPSIM_SWEEPQ_OK, &t);
	capsim_sweepq_pareto(&t, 2, CAPSIM_SWEEPQ_MAX, 1, CAPSIM_SWEEPQ_MIN);
	EXPECT(&t, 8, 6, 3, 4, 1, 10);
	capsim_sweepq_table_free(&t);
	capsim_store_close(s);
}

/* ---- filters ---------------------------------------------------------------------- */

static void test_filters(void **state)
{
	(void)state;
	capsim_store *s = open_db();
	/* a number key */
	WHERE(s, "tokens_per_s >= 2000", 3, 4, 6, 8);
	WHERE(s, "tokens_per_s<1000", 9);
	WHERE(s, "tokens_per_s != 1500", 0, 3, 4, 6, 7, 8, 9, 10); /* 11: none */
	WHERE(s, "fits_in_memory = 0", 4);
	/* a parameter path: numbers as numbers ("8" < "16"), texts as texts */
	WHERE(s, "cluster.nodes = 16", 2, 3, 11);
	WHERE(s, "cluster.nodes > 16", 4, 6, 7, 8, 9);
	WHERE(s, "cluster.nodes<16", 0, 1, 10);
	WHERE(s, "cluster.fabric.transport=roce", 2, 4, 7, 9, 11);
	WHERE(s, "cluster.fabric.transport > jelly", 2, 4, 7, 9, 11);
	/* a text key; a point without it matches nothing, != included */
	WHERE(s, "data_bound = iops", 0, 2, 4, 6, 8, 9, 10);
	WHERE(s, "data_bound != iops", 1, 3, 11);
	WHERE(s, "data_bound = aggregate bandwidth", 1, 11);
	/* a number key against a text matches nothing */
	expect_where(s, "tokens_per_s = lots", NULL, 0);
	/* a key only some points hold */
	WHERE(s, "custom_score = 7", 0);

	/* several: all of them */
	capsim_sweepq_table t;
	const char *keys[] = { "mfu" };
	const char *both[] = { "cluster.fabric.transport = roce", "tokens_per_s > 1000" };
	read_beta(s, keys, 1, both, 2, CAPSIM_SWEEPQ_OK, &t);
	EXPECT(&t, 2, 4, 7);
	assert_int_equal(t.n_keys, 1); /* the filter's key was read, then dropped */
	assert_int_equal(t.n_read, 11);
	capsim_sweepq_table_free(&t);
	capsim_store_close(s);
}

static void test_filter_parse(void **state)
{
	(void)state;
	capsim_sweepq_filter f;
	capsim_diags d = { 0 };
	assert_int_equal(capsim_sweepq_filter_parse("  step_time_s<=2.5e1 ", &f, &d), 0);
	assert_string_equal(f.key, "step_time_s");
	assert_int_equal(f.op, CAPSIM_SWEEPQ_LE);
	assert_string_equal(f.value, "2.5e1");
	assert_true(f.is_num);
	assert_rel(f.num, 25, 0);
	capsim_sweepq_filter_free(&f);
	assert_int_equal(capsim_sweepq_filter_parse("cluster.gpu.memory.bandwidth != 4 TB/s",
						    &f, &d), 0);
	assert_int_equal(f.op, CAPSIM_SWEEPQ_NE);
	assert_string_equal(f.value, "4 TB/s");
	assert_false(f.is_num);
	capsim_sweepq_filter_free(&f);
	static const char *const bad[] = { "", "= 3", "mfu", "mfu ~ 1", "mfu == 1", "mfu >",
					   "mfu <   " };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_int_equal(capsim_sweepq_filter_parse(bad[i], &f, &d), -1);
		assert_null(f.value);
	}
	assert_true(capsim_diags_contains(&d, "'mfu == 1': expected KEY OP VALUE"));
	capsim_diags_free(&d);

	double x;
	static const char *const num[] = { "64", "-1.5e3", "+.5", "7.", "1E+2" };
	for (size_t i = 0; i < sizeof num / sizeof num[0]; i++)
		assert_true(capsim_sweepq_plain_number(num[i], &x));
	static const char *const not[] = { "4 TB/s", "0x10", "inf", "nan", " 1", "1 ", ".",
					   "1e", "", "1e999", "$200k" };
	for (size_t i = 0; i < sizeof not / sizeof not[0]; i++)
		if (capsim_sweepq_plain_number(not[i], &x))
			fail_msg("'%s' taken for a plain number", not[i]);
}

/* ---- names ------------------------------------------------------------------------ */

static void test_resolve(void **state)
{
	(void)state;
	capsim_store *s = open_db();
	capsim_diags d = { 0 };
	capsim_sweepq_paths paths;
	assert_int_equal(capsim_sweepq_read_paths(s, 3, &paths, &d), 0);
	const char **known = calloc(capsim_result_n_keys, sizeof *known);
	for (size_t i = 0; i < capsim_result_n_keys; i++)
		known[i] = capsim_result_keys[i].key;
	size_t nk = capsim_result_n_keys;
	assert_int_equal(capsim_sweepq_resolve(s, 3, "tokens_per_s", known, nk, &paths, "x", &d),
			 CAPSIM_SWEEPQ_RESULT);
	assert_int_equal(capsim_sweepq_resolve(s, 3, "cluster.nodes", known, nk, &paths, "x", &d),
			 CAPSIM_SWEEPQ_PARAM);
	/* stored, though this capsim's table lacks it */
	assert_int_equal(capsim_sweepq_resolve(s, 3, "custom_score", known, nk, &paths, "x", &d),
			 CAPSIM_SWEEPQ_RESULT);
	assert_int_equal(d.n, 0);
	assert_int_equal(capsim_sweepq_resolve(s, 3, "tokens_per_sec", known, nk, &paths,
					       "--best tokens_per_sec", &d), -1);
	assert_int_equal(d.n, 1);
	assert_string_equal(d.v[0].where, "--best tokens_per_sec");
	assert_string_equal(d.v[0].msg, "unknown key 'tokens_per_sec': neither a result key nor a "
			    "parameter path of the sweep; nearest: tokens_per_s, nodes_per_rack, "
			    "optimizer_s");
	assert_false(capsim_diags_runtime(&d));
	capsim_diags_free(&d);
	assert_int_equal(capsim_sweepq_resolve(s, 3, "cluster.node", known, nk, &paths, "x", &d),
			 -1);
	assert_true(capsim_diags_contains(&d, "nearest: cluster.nodes"));
	capsim_diags_free(&d);
	/* a key holding the name whole comes first */
	assert_int_equal(capsim_sweepq_resolve(s, 3, "cost_to_train", known, nk, &paths, "x",
					       &d), -1);
	assert_true(capsim_diags_contains(&d, "nearest: onprem_cost_to_train_usd, "));
	capsim_diags_free(&d);
	free(known);
	capsim_sweepq_paths_free(&paths);
	capsim_store_close(s);
}

/* ---- the command ------------------------------------------------------------------- */

/* capsim query with argv (NULL-ended, after "query"), standard output and
 * error into files of dir; its exit status */
static int query(const char *const *args)
{
	char *argv[32] = { "query" };
	int argc = 1;
	while (args[argc - 1]) {
		assert_true(argc < 31);
		argv[argc] = (char *)(uintptr_t)args[argc - 1];
		argc++;
	}
	char out[160], err[160];
	snprintf(out, sizeof out, "%s/stdout", dir);
	snprintf(err, sizeof err, "%s/stderr", dir);
	fflush(stdout);
	fflush(stderr);
	int so = dup(1), se = dup(2);
	int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int fe = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	dup2(fo, 1);
	dup2(fe, 2);
	int status = capsim_cmd_query(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	close(fo);
	close(fe);
	return status;
}

/* the text of dir/name ("" when absent); the caller frees it */
static char *slurp(const char *name)
{
	char path[160];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "rb");
	char *text = calloc(1, 1 << 16);
	if (f) {
		size_t n = fread(text, 1, (1 << 16) - 1, f);
		text[n] = '\0';
		fclose(f);
	}
	return text;
}

static void expect_file(const char *name, const char *want)
{
	char *got = slurp(name);
	if (strcmp(got, want) != 0)
		fail_msg("%s:\n%s\nexpected:\n%s", name, got, want);
	free(got);
}

static void expect_err(const char *needle)
{
	char *got = slurp("stderr");
	if (!strstr(got, needle))
		fail_msg("stderr:\n%s\nexpected it to hold: %s", got, needle);
	free(got);
}

static void test_cmd_csv(void **state)
{
	(void)state;
	char csv[160];
	snprintf(csv, sizeof csv, "%s/best.csv", dir);
	const char *best[] = { "--db", db, "--best", "tokens_per_s", "--top", "3", "--columns",
			       "time_to_train_s,data_bound,cluster.nodes", "--columns",
			       "fits_in_memory,gpus,mfu", "--csv", csv, NULL };
	assert_int_equal(query(best), 0);
	expect_file("best.csv",
		    "point_index,status,\"cluster.fabric.transport\",\"cluster.nodes\","
		    "\"workload.parallelism.tp\",\"tokens_per_s\",\"time_to_train_s\",\"data_bound\","
		    "\"fits_in_memory\",\"gpus\",\"mfu\"\n"
		    "8,ok,\"infiniband\",64,4,3000,40,\"iops\",true,512,0.52\n"
		    "6,ok,\"infiniband\",32,8,2500.5,50.125,\"iops\",true,256,0.47\n"
		    "3,ok,\"infiniband\",16,4,2000,60,\"client \"\"bw\"\", metadata\",true,128,"
		    "0.5\n");
	/* the table went to standard output as well */
	char *text = slurp("stdout");
	assert_non_null(strstr(text, "sweep 3 'beta'"));
	assert_non_null(strstr(text, "best 3 by tokens_per_s (max) of 11 points\n"));
	free(text);

	/* filters, the smallest first, CSV on standard output */
	const char *min[] = { "--db", db, "--sweep", "beta", "--where", "cluster.nodes>=16",
			      "--where", "fits_in_memory = true", "--best", "time_to_train_s",
			      "--columns", "time_to_train_s", "--csv", "-", NULL };
	assert_int_equal(query(min), 0);
	expect_file("stdout",
		    "point_index,status,\"cluster.fabric.transport\",\"cluster.nodes\","
		    "\"workload.parallelism.tp\",\"time_to_train_s\"\n"
		    "8,ok,\"infiniband\",64,4,40\n"
		    "6,ok,\"infiniband\",32,8,50.125\n"
		    "3,ok,\"infiniband\",16,4,60\n"
		    "11,ok,\"roce\",16,8,65\n"
		    "2,ok,\"roce\",16,2,70\n"
		    "7,ok,\"roce\",64,2,75\n"
		    "9,ok,\"roce\",64,8,110\n");

	/* the Pareto front, by the first key */
	const char *pareto[] = { "--db", db, "--pareto",
				 "time_to_train_s,onprem_cost_to_train_usd", "--columns", "gpus",
				 "--where", "cluster.nodes != 64", "--csv", "-", NULL };
	assert_int_equal(query(pareto), 0);
	expect_file("stdout",
		    "point_index,status,\"cluster.fabric.transport\",\"cluster.nodes\","
		    "\"workload.parallelism.tp\",\"time_to_train_s\",\"onprem_cost_to_train_usd\","
		    "\"gpus\"\n"
		    "6,ok,\"infiniband\",32,8,50.125,120,256\n"
		    "3,ok,\"infiniband\",16,4,60,90,128\n"
		    "4,ok,\"roce\",32,2,60,90,256\n"
		    "11,ok,\"roce\",16,8,65,85,128\n"
		    "2,ok,\"roce\",16,2,70,70,128\n"
		    "1,ok,\"infiniband\",8,4,80,60,64\n"
		    "10,ok,\"infiniband\",8,8,90,50,64\n");

	/* the failed points, with their errors */
	snprintf(csv, sizeof csv, "%s/failed.csv", dir);
	const char *failed[] = { "--db", db, "--failed", "--csv", csv, NULL };
	assert_int_equal(query(failed), 0);
	expect_file("failed.csv",
		    "point_index,status,\"cluster.fabric.transport\",\"cluster.nodes\","
		    "\"workload.parallelism.tp\",error\n"
		    "5,failed,\"infiniband\",64,8,\"" ERR5 "\"\n");
	text = slurp("stdout");
	assert_non_null(strstr(text, ERR5));
	free(text);

	/* another sweep by id */
	const char *alpha[] = { "--db", db, "--sweep", "1", "--columns", "tokens_per_s",
				"--csv", "-", NULL };
	assert_int_equal(query(alpha), 0);
	expect_file("stdout", "point_index,status,\"cluster.nodes\",\"tokens_per_s\"\n"
			      "0,ok,4,100\n1,ok,8,200\n2,ok,16,300\n");
}

static void test_cmd_json_list(void **state)
{
	(void)state;
	const char *json[] = { "--db", db, "--best", "time_to_train_s", "--max", "--top", "1",
			       "--columns", "data_bound,fits_in_memory,gpus", "--json", NULL };
	assert_int_equal(query(json), 0);
	char *text = slurp("stdout");
	json_error_t e;
	json_t *o = json_loads(text, 0, &e);
	free(text);
	assert_non_null(o);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(o, "sweep"), "id")), 3);
	json_t *pts = json_object_get(o, "points");
	assert_int_equal(json_array_size(pts), 1);
	json_t *p = json_array_get(pts, 0);
	assert_int_equal(json_integer_value(json_object_get(p, "index")), 9);
	assert_string_equal(json_string_value(json_object_get(p, "status")), "ok");
	assert_null(json_object_get(p, "error"));
	json_t *params = json_object_get(p, "params"), *res = json_object_get(p, "results");
	assert_string_equal(json_string_value(json_object_get(params, "cluster.nodes")), "64");
	assert_rel(json_real_value(json_object_get(res, "time_to_train_s")), 110, 0);
	assert_true(json_is_integer(json_object_get(res, "gpus")));
	assert_true(json_is_true(json_object_get(res, "fits_in_memory")));
	assert_string_equal(json_string_value(json_object_get(res, "data_bound")), "iops");
	json_decref(o);

	const char *list[] = { "--db", db, "--list", "--csv", "-", NULL };
	assert_int_equal(query(list), 0);
	text = slurp("stdout");
	const char *head = "id,name,created_at,capsim_version,points_ok,points_failed\n"
			   "1,\"alpha\",";
	assert_int_equal(strncmp(text, head, strlen(head)), 0);
	assert_non_null(strstr(text, ",\"0.1.0-test\",11,1\n"));
	free(text);
}

static void test_cmd_errors(void **state)
{
	(void)state;
	const char *unknown[] = { "--db", db, "--best", "tokens_per_sec", NULL };
	assert_int_equal(query(unknown), 2);
	expect_err("--best tokens_per_sec: error: unknown key 'tokens_per_sec'");
	expect_err("nearest: tokens_per_s");
	const char *col[] = { "--db", db, "--columns", "mfu,step_tme_s", NULL };
	assert_int_equal(query(col), 2);
	expect_err("--columns step_tme_s: error: unknown key 'step_tme_s'");
	const char *where[] = { "--db", db, "--where", "cluster.nodez > 4", NULL };
	assert_int_equal(query(where), 2);
	expect_err("nearest: cluster.nodes");
	const char *bad[] = { "--db", db, "--where", "mfu ~ 1", NULL };
	assert_int_equal(query(bad), 2);
	expect_err("--where: error: 'mfu ~ 1': expected KEY OP VALUE");
	const char *type[] = { "--db", db, "--where", "mfu > high", NULL };
	assert_int_equal(query(type), 2);
	expect_err("'mfu' is a number; found 'high'");
	const char *nodir[] = { "--db", db, "--best", "gpus", NULL };
	assert_int_equal(query(nodir), 2);
	expect_err("give --max or --min");
	const char *param[] = { "--db", db, "--best", "cluster.nodes", NULL };
	assert_int_equal(query(param), 2);
	expect_err("'cluster.nodes' is a parameter");
	const char *structured[] = { "--db", db, "--columns", "critical_path", NULL };
	assert_int_equal(query(structured), 2);
	expect_err("structured");
	const char *sweep[] = { "--db", db, "--sweep", "gamma", NULL };
	assert_int_equal(query(sweep), 2);
	expect_err("the store has no sweep named 'gamma'; it has 3 sweeps: 3 'beta', 2 '7', "
		   "1 'alpha'\n");
	const char *both[] = { "--db", db, "--best", "mfu", "--pareto", "mfu,gpus", NULL };
	assert_int_equal(query(both), 2);
	expect_err("capsim query: give --best or --pareto, not both");
	const char *top[] = { "--db", db, "--best", "mfu", "--top", "0", NULL };
	assert_int_equal(query(top), 2);
	const char *nodb[] = { "--list", NULL };
	assert_int_equal(query(nodb), 2);
	expect_err("capsim query: --db is required");

	/* files that are not a store of sweeps */
	char path[160];
	snprintf(path, sizeof path, "%s/absent.sqlite", dir);
	const char *absent[] = { "--db", path, "--list", NULL };
	assert_int_equal(query(absent), 2);
	expect_err("cannot open the database");
	snprintf(path, sizeof path, "%s/other.sqlite", dir);
	sqlite3 *h;
	assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
	assert_int_equal(sqlite3_exec(h, "CREATE TABLE t(x)", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
	const char *other[] = { "--db", path, NULL };
	assert_int_equal(query(other), 2);
	expect_err("not a capsim store of sweep results");
	snprintf(path, sizeof path, "%s/v3.sqlite", dir);
	assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
	assert_int_equal(sqlite3_exec(h, "CREATE TABLE runs(id INTEGER PRIMARY KEY); "
				      "PRAGMA user_version = 3", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
	const char *v3[] = { "--db", path, "--best", "mfu", NULL };
	assert_int_equal(query(v3), 2);
	expect_err("no sweep results: the store's schema version is 3");
	snprintf(path, sizeof path, "%s/empty.sqlite", dir);
	capsim_store *s;
	capsim_diags d = { 0 };
	assert_int_equal(capsim_store_open(path, CAPSIM_STORE_WRITE, &s, &d), 0);
	capsim_store_close(s);
	const char *empty[] = { "--db", path, "--list", NULL };
	assert_int_equal(query(empty), 2);
	expect_err("no sweeps in the store");
	/* a text file: the store says the machine's side (not an SQLite file): 1 */
	snprintf(path, sizeof path, "%s/text.sqlite", dir);
	FILE *f = fopen(path, "w");
	fputs("this is not a database, but it is long enough to be looked at by SQLite\n", f);
	fclose(f);
	const char *text[] = { "--db", path, "--list", NULL };
	assert_int_equal(query(text), 1);
	expect_err("not a capsim database");
}

/* capsim_sweepq_visible: what a terminal would not show made visible, cut
 * where a unit or its escape ends */
static void test_visible(void **state)
{
	(void)state;
	char buf[16];
	assert_int_equal(capsim_sweepq_visible(buf, sizeof buf, "a\x1b[2J"), 8);
	assert_string_equal(buf, "a\\x1b[2J");
	assert_int_equal(capsim_sweepq_visible(buf, sizeof buf, "\xe2\x80\xae" "txt"), 11);
	assert_string_equal(buf, "\\u{202E}txt");
	/* cut: never half an escape, never half a UTF-8 character */
	assert_int_equal(capsim_sweepq_visible(buf, 4, "ab\ncd"), 8);
	assert_string_equal(buf, "ab");
	assert_int_equal(capsim_sweepq_visible(buf, 4, "a\xc3\xa9z"), 4);
	assert_string_equal(buf, "a\xc3\xa9");
	assert_int_equal(capsim_sweepq_visible(buf, 3, "a\xc3\xa9z"), 4);
	assert_string_equal(buf, "a");
	char *v = capsim_sweepq_visible_dup("abcdefgh", 4);
	assert_string_equal(v, "abcd...");
	free(v);
}

/* names from a shared store are data: a sweep name that is a spreadsheet
 * formula and holds a line break, an escape sequence and a right-to-left
 * override; a parameter value starting with @ */
static void test_hostile_names(void **state)
{
	(void)state;
	char path[160];
	snprintf(path, sizeof path, "%s/hostile.sqlite", dir);
	capsim_store *s;
	capsim_diags d = { 0 };
	assert_int_equal(capsim_store_open(path, CAPSIM_STORE_WRITE, &s, &d), 0);
	int64_t id = new_sweep(s, "=cmd|' /C calc'!A0\n\x1b[31mred\xe2\x80\xae");
	capsim_result_param par = { "cluster.nodes", "@SUM(1)" };
	capsim_result_value v[] = { { .key = "tokens_per_s", .num = 5 },
				    { .key = "data_bound", .text = "-2+3\x1b]0;t\x07" } };
	capsim_result_point p = { .index = 0, .scenario_sha256 = SHA,
				  .capsim_version = "0.1.0-test", .params = &par, .n_params = 1,
				  .results = v, .n_results = 2 };
	put_point(s, id, &p);
	capsim_store_close(s);

	const char *csv[] = { "--db", path, "--columns", "tokens_per_s,data_bound", "--csv", "-",
			      NULL };
	assert_int_equal(query(csv), 0);
	expect_file("stdout", "point_index,status,\"cluster.nodes\",\"tokens_per_s\","
			      "\"data_bound\"\n"
			      "0,ok,\"'@SUM(1)\",5,\"'-2+3\\x1b]0;t\\x07\"\n");
	const char *list[] = { "--db", path, "--list", "--csv", "-", NULL };
	assert_int_equal(query(list), 0);
	char *text = slurp("stdout");
	assert_non_null(strstr(text, "\n1,\"'=cmd|' /C calc'!A0\\x0a\\x1b[31mred\\u{202E}\","));
	free(text);

	/* the terminal: each shown escaped, in the head, the table and the list */
	const char *table[] = { "--db", path, "--columns", "tokens_per_s,data_bound", NULL };
	assert_int_equal(query(table), 0);
	text = slurp("stdout");
	assert_null(strchr(text, '\x1b'));
	assert_null(strstr(text, "\xe2\x80\xae"));
	assert_non_null(strstr(text, "sweep 1 '=cmd|' /C calc'!A0\\x0a\\x1b[31mred\\u{202E}'"));
	assert_non_null(strstr(text, "@SUM(1)"));
	assert_non_null(strstr(text, "-2+3\\x1b]0;t\\x07"));
	free(text);
	const char *names[] = { "--db", path, "--list", NULL };
	assert_int_equal(query(names), 0);
	text = slurp("stdout");
	assert_null(strchr(text, '\x1b'));
	assert_null(strchr(text, '\x07'));
	assert_non_null(strstr(text, "=cmd|' /C calc'!A0\\x0a\\x1b[31mred\\u{202E}"));
	free(text);
	/* JSON: exact, in ASCII */
	const char *json[] = { "--db", path, "--list", "--json", NULL };
	assert_int_equal(query(json), 0);
	text = slurp("stdout");
	json_t *o = json_loads(text, 0, NULL);
	free(text);
	assert_non_null(o);
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(o,
			    "sweeps"), 0), "name")), "=cmd|' /C calc'!A0\n\x1b[31mred\xe2\x80\xae");
	json_decref(o);
	text = slurp("stdout");
	for (const char *c = text; *c; c++)
		assert_true((unsigned char)*c < 0x80);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_read_table),
		cmocka_unit_test(test_best),
		cmocka_unit_test(test_direction),
		cmocka_unit_test(test_pareto),
		cmocka_unit_test(test_filters),
		cmocka_unit_test(test_filter_parse),
		cmocka_unit_test(test_resolve),
		cmocka_unit_test(test_cmd_csv),
		cmocka_unit_test(test_cmd_json_list),
		cmocka_unit_test(test_cmd_errors),
		cmocka_unit_test(test_visible),
		cmocka_unit_test(test_hostile_names),
	};
	return testutil_run_group(tests, make_store, teardown);
}
