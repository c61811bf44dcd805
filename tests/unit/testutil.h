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

#endif
