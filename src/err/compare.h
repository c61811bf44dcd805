/* compare.h - two predictions of one quantity compared knowing that their
 * errors are correlated (docs/model.md, "Comparisons and ties").
 *
 * Two designs on one GPU generation and one stack share most of their
 * error, so they are compared on the difference: the paired band of err.h
 * (capsim_err_diff_band) and its probability (capsim_err_prob_less). Where
 * the generations or stacks differ the pair is not one family: each
 * prediction keeps its own band, the two errors taken as independent.
 *
 * A tie: the predicted ratio a / b inside the 80% band of the comparison.
 * Paired, that band is [e^-q80, e^q80] around 1; independent, it is the 80%
 * interval of the ratio of two independent log-normal errors whose 80%
 * bands are the two predictions' own. Either way a tie is a probability
 * that a is below b between 0.1 and 0.9 (one chance in ten, or more, that
 * the order measured is the other way). */
#ifndef CAPSIM_ERR_COMPARE_H
#define CAPSIM_ERR_COMPARE_H

#include "err.h"

/* the standard normal's 90% quantile: an 80% two-sided band is +/- this
 * many standard deviations */
#define CAPSIM_ERR_Z80 1.2815515655446004

/* A comparison of prediction a with prediction b of one quantity. */
typedef struct capsim_err_cmp {
	int has;              /* 0: no band reaches the quantity (nothing below holds) */
	int paired;           /* 1: one GPU generation and stack, on the difference */
	double ratio;         /* a / b as predicted */
	double p_less;        /* the probability that a's measured value is below b's */
	double half80;        /* the comparison's 80% band: ratio within e^(+/-half80) of
			       * its centre (paired: q80 of the wider pair band; independent:
			       * z80 sqrt(s_a^2 + s_b^2)) */
	double centre;        /* the band's centre on ln(a / b): paired 0, independent the
			       * difference of the two bands' mid-points (their biases) */
	int tie;              /* the predicted ratio inside that band */
	char group[6 * CAPSIM_ERR_TEXT]; /* the group the band came from (paired: the pair
					  * band's; independent: a's) */
} capsim_err_cmp;

/* Compare a (features fa) with b (features fb), both > 0, predictions of
 * quantity q. Paired where fa and fb name one GPU generation (not "") and
 * one stack: the pair band of fa's and of fb's groups, the wider of the
 * two (their host-bound, profile or scale may differ); else independent,
 * from each one's own 80% band, each log-error taken as normal with its
 * band's mid-point and width (sigma = width of ln band / (2 z80)).
 * Returns 0 with *out filled, or -1 (out->has 0) when the model has no such
 * band. */
int capsim_err_compare(const capsim_err_model *m, capsim_err_quantity q,
		       const capsim_err_features *fa, double a,
		       const capsim_err_features *fb, double b, capsim_err_cmp *out);

/* Compare a with b, both > 0, each with its own 80% band [a_lo, a_hi] and
 * [b_lo, b_hi] (around it, in its unit): independent, as capsim_err_compare
 * does across families, for a quantity whose bands are carried from
 * another's (the TCO's from the power's). out->group is left empty.
 * Returns 0 with *out filled, or -1 (out->has 0) where a band is not one. */
int capsim_err_compare_bands(double a, double a_lo, double a_hi, double b, double b_lo,
			     double b_hi, capsim_err_cmp *out);

#endif
