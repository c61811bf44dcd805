/* testutil.h - helpers for capsim's cmocka tests.
 *
 * cmocka 1.1.5's float assertion casts to float and compares with an absolute
 * epsilon; capsim's values span 1e-9 s to 1e18 FLOP/s, so tests compare doubles
 * relatively and print both values and the place on failure. */
#ifndef CAPSIM_TESTUTIL_H
#define CAPSIM_TESTUTIL_H

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

/* |got - want| <= rel * |want| (or <= rel when want is 0) */
#define assert_rel(got, want, rel)                                             \
	do {                                                                   \
		double g_ = (got), w_ = (want), r_ = (rel);                    \
		double tol_ = w_ != 0.0 ? r_ * fabs(w_) : r_;                  \
		if (!(fabs(g_ - w_) <= tol_))                                  \
			fail_msg("%s = %.17g, expected %.17g (relative "       \
				 "tolerance %g)",                              \
				 #got, g_, w_, r_);                            \
	} while (0)

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "csv.h"

/* ---- reference tables (the CSV files of tests/data/reference) ------------- */

#define TESTUTIL_CSV_COLS 32
#define TESTUTIL_CSV_ROWS 64

/* A CSV file read whole: its header's names and each row's fields ('#'
 * lines and blank lines skipped). */
typedef struct testutil_table {
	int n_cols;
	size_t n_rows;
	char *lines[TESTUTIL_CSV_ROWS + 1];    /* the header, then the rows */
	char *cell[TESTUTIL_CSV_ROWS + 1][TESTUTIL_CSV_COLS];
	int n_cells[TESTUTIL_CSV_ROWS + 1];
} testutil_table;

/* Read path into *t; fails the test when it cannot be read, has no header
 * or holds more rows or columns than the table takes. */
static inline void testutil_csv_load(const char *path, testutil_table *t)
{
	char line[4096];
	size_t n = 0;
	FILE *f = fopen(path, "r");
	memset(t, 0, sizeof *t);
	if (!f)
		fail_msg("%s: cannot open", path);
	while (fgets(line, sizeof line, f)) {
		if (line[0] == '#' || line[0] == '\n' || line[0] == '\r')
			continue;
		if (n > TESTUTIL_CSV_ROWS)
			fail_msg("%s: more than %d rows", path, TESTUTIL_CSV_ROWS);
		t->lines[n] = strdup(line);
		t->n_cells[n] = csv_split(t->lines[n], t->cell[n], TESTUTIL_CSV_COLS);
		n++;
	}
	fclose(f);
	if (n == 0)
		fail_msg("%s: no header", path);
	t->n_cols = t->n_cells[0];
	t->n_rows = n - 1;
}

/* Row i's field in column `name` (0-based rows after the header); fails the
 * test when there is no such column or the row lacks it. */
static inline const char *testutil_csv_get(const testutil_table *t, size_t i,
					   const char *name)
{
	for (int c = 0; c < t->n_cols; c++) {
		if (strcmp(t->cell[0][c], name) != 0)
			continue;
		if (i >= t->n_rows || c >= t->n_cells[i + 1])
			fail_msg("row %zu has no field '%s'", i + 1, name);
		return t->cell[i + 1][c];
	}
	fail_msg("no column '%s'", name);
	return "";
}

/* The same field as a number; fails the test unless all of it is one. */
static inline double testutil_csv_num(const testutil_table *t, size_t i,
				      const char *name)
{
	const char *v = testutil_csv_get(t, i, name);
	char *end;
	double x = strtod(v, &end);
	if (end == v || *end)
		fail_msg("row %zu, %s: expected a number, found '%s'", i + 1, name, v);
	return x;
}

static inline void testutil_csv_free(testutil_table *t)
{
	for (size_t i = 0; i <= t->n_rows; i++)
		free(t->lines[i]);
	memset(t, 0, sizeof *t);
}

#ifdef CAPSIM_CATALOG_H
/* The shipped catalog, or NULL after printing why it does not load. */
static inline capsim_catalog *testutil_shipped_catalog(void)
{
	capsim_diags d = { 0 };
	capsim_catalog *c = capsim_catalog_create();
	int rc = capsim_catalog_load_root(c, CAPSIM_SOURCE_DIR, NULL, &d);
	capsim_diags_print(&d, stderr);
	capsim_diags_free(&d);
	if (rc != 0) {
		capsim_catalog_free(c);
		return NULL;
	}
	return c;
}

#ifdef CAPSIM_SCENARIO_H
/* A scenario of `nodes` x node type on QM9700 with the given model, sequence
 * length and global batch (bf16, 1T tokens), loaded against cat with sets;
 * fails the test when it does not load. The caller frees it. */
static inline capsim_scenario *testutil_scenario(const capsim_catalog *c,
						 const char *node, int nodes,
						 const char *model, int seq, int batch,
						 const capsim_set *sets, size_t n)
{
	char text[2048];
	snprintf(text, sizeof text,
		 "<scenario name=\"t\"><cluster nodes=\"%d\"><node ref=\"%s\"/>"
		 "<fabric topology=\"fat-tree\" transport=\"infiniband\"><switch ref=\"qm9700\"/>"
		 "</fabric></cluster><workload seq-len=\"%d\" global-batch=\"%d\" tokens=\"1T\" "
		 "dtype=\"bf16\"><model ref=\"%s\"/></workload></scenario>",
		 nodes, node, seq, batch, model);
	capsim_scenario *s = malloc(sizeof *s);
	capsim_diags d = { 0 };
	int rc = capsim_scenario_load_memory(text, strlen(text), "t.xml", c, sets, n, s, &d);
	capsim_diags_print(&d, stderr);
	capsim_diags_free(&d);
	if (rc)
		fail_msg("scenario does not load");
	return s;
}
#endif

/* A file-level `cat` loaded once for a group, and its setup and teardown. */
#define TESTUTIL_CATALOG_FIXTURE                                               \
	static capsim_catalog *cat;                                            \
	static int setup(void **state)                                         \
	{                                                                      \
		(void)state;                                                   \
		cat = testutil_shipped_catalog();                              \
		return cat ? 0 : -1;                                           \
	}                                                                      \
	static int teardown(void **state)                                      \
	{                                                                      \
		(void)state;                                                   \
		capsim_catalog_free(cat);                                      \
		return 0;                                                      \
	}
#endif

/* A text that grows as lines are put in it (hostile inputs built in
 * memory); s is NUL-terminated, n its length. Free s. */
typedef struct testutil_text {
	char *s;
	size_t n, cap;
} testutil_text;

static inline void testutil_put(testutil_text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static inline void testutil_put(testutil_text *t, const char *fmt, ...)
{
	char part[512];
	va_list ap;
	va_start(ap, fmt);
	int w = vsnprintf(part, sizeof part, fmt, ap);
	va_end(ap);
	assert_true(w > 0 && (size_t)w < sizeof part);
	if (t->n + (size_t)w + 1 > t->cap) {
		t->cap = 2 * (t->n + (size_t)w + 1);
		t->s = realloc(t->s, t->cap);
		assert_non_null(t->s);
	}
	memcpy(t->s + t->n, part, (size_t)w + 1);
	t->n += (size_t)w;
}

/* cmocka_run_group_tests, or with CAPSIM_TEST_FILTER=PATTERN[,PATTERN]...
 * only the tests whose names match one of the patterns (cmocka's * and ?
 * wildcards): CAPSIM_TEST_FILTER='*kill*' ./test_sweep. */
#define testutil_run_group(tests, setup, teardown)                              \
	testutil_run_filtered(#tests, tests, sizeof(tests) / sizeof((tests)[0]),  \
			      setup, teardown)
#define testutil_run_group_name(name, tests, setup, teardown)                   \
	testutil_run_filtered(name, tests, sizeof(tests) / sizeof((tests)[0]),    \
			      setup, teardown)

static inline int testutil_run_filtered(const char *name, const struct CMUnitTest *tests,
					size_t n, CMFixtureFunction setup,
					CMFixtureFunction teardown)
{
	const char *filter = getenv("CAPSIM_TEST_FILTER");
	if (!filter || !*filter)
		return _cmocka_run_group_tests(name, tests, n, setup, teardown);
	char patterns[256];
	snprintf(patterns, sizeof patterns, "%s", filter);
	int failed = 0;
	for (char *save = NULL, *p = strtok_r(patterns, ",", &save); p;
	     p = strtok_r(NULL, ",", &save)) {
		cmocka_set_test_filter(p);
		failed += _cmocka_run_group_tests(name, tests, n, setup, teardown);
	}
	return failed;
}

/* Run the shell command fmt makes (system(3)): its exit status, or -1 when
 * it did not exit (a signal). */
static inline int testutil_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline int testutil_sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	int st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A scratch directory /tmp/capsim-NAME-XXXXXX made into dir (size bytes);
 * 0, or -1 when the name does not fit or mkdtemp fails. */
static inline int testutil_tmpdir_make(char *dir, size_t size, const char *name)
{
	int n = snprintf(dir, size, "/tmp/capsim-%s-XXXXXX", name);
	return n > 0 && (size_t)n < size && mkdtemp(dir) ? 0 : -1;
}

/* dir removed with its contents; 0 or -1 */
static inline int testutil_tmpdir_remove(const char *dir)
{
	return testutil_sh("rm -rf '%s'", dir) == 0 ? 0 : -1;
}

/* A scratch directory for one test file: `dir`, made by setup as
 * /tmp/capsim-NAME-XXXXXX and removed with its contents by teardown (the
 * cmocka group's setup and teardown). */
#define CAPSIM_TEST_TMPDIR(name)                                              \
	static char dir[64];                                                  \
	static int setup(void **state)                                        \
	{                                                                     \
		(void)state;                                                  \
		return testutil_tmpdir_make(dir, sizeof dir, name);           \
	}                                                                     \
	static int teardown(void **state)                                     \
	{                                                                     \
		(void)state;                                                  \
		return testutil_tmpdir_remove(dir);                           \
	}

#endif
