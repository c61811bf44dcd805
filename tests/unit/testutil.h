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
#include <stdlib.h>
#include <string.h>
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

#endif
