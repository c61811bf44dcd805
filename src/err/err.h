/* err.h - how far to trust capsim's own predictions: prediction intervals
 * learnt from its validation tables (docs/model.md, "Error bands").
 *
 * The data are the residuals of capsim against every scored public or
 * measured table (hardware/errors/residuals.csv, written by the validation
 * tests themselves): per row its table, quantity, predicted and measured
 * value and the features that drive the error. On the log-ratio
 * r = ln(measured / predicted) the model fits, per quantity and per group of
 * features, split-conformal prediction intervals (Lei, G'Sell, Rinaldo,
 * Tibshirani and Wasserman, "Distribution-Free Predictive Inference for
 * Regression", JASA 2018): two-sided, alpha/2 a tail, the interval's ends the
 * order statistics of rank n + 1 - k and k, k = ceil((n + 1)(1 - alpha/2)).
 * An interval exists only where k <= n: 9 rows for 80%, 39 for 95%. Groups
 * fall back from specific to general (CAPSIM_ERR_F_* dropped from the last:
 * scale, then profile, host-bound, stack, GPU generation) down to the whole
 * quantity, each level of a band from the first group with the rows it
 * needs. Rows on which a constant of capsim was fitted (in-sample) are kept
 * in the file and left out of every fit.
 *
 * Within a group it also fits the quantiles of |r_i - r_j| over pairs of
 * rows of one table, one GPU and one stack: the error of a comparison of two
 * designs of one family, which shares most of its error. The same conformal
 * rank on the pairs' absolute differences (80% and 95% from 9 and 39 pairs)
 * gives the half-width of the comparison's band; the pairs of a table are
 * not independent of one another, so that band is the nearest sound
 * approximation, stated as such in docs/model.md.
 *
 * Every band is a pair of factors on the prediction: the measured value is
 * expected within [lo x predicted, hi x predicted] at the band's level. */
#ifndef CAPSIM_ERR_H
#define CAPSIM_ERR_H

#include <stddef.h>
#include <stdio.h>

#include "diag.h"

/* the quantities capsim's validation scores */
typedef enum capsim_err_quantity {
	CAPSIM_ERR_STEP,        /* step time */
	CAPSIM_ERR_MEMORY,      /* peak memory a GPU */
	CAPSIM_ERR_BUSBW,       /* a collective's bus bandwidth */
	CAPSIM_ERR_POWER,       /* power drawn */
	CAPSIM_ERR_CHECKPOINT,  /* a checkpoint's save, drain or restore time */
	CAPSIM_ERR__QUANTITIES
} capsim_err_quantity;
/* "step", "memory", "busbw", "power", "checkpoint" */
extern const char *const capsim_err_quantity_names[CAPSIM_ERR__QUANTITIES];

/* The features of a group, most general first: a group at level L keeps the
 * first CAPSIM_ERR__FEATURES - L of them and drops the rest. */
enum {
	CAPSIM_ERR_F_GEN,      /* ampere, hopper, blackwell */
	CAPSIM_ERR_F_STACK,    /* megatron, torch-eager, torch-compiled, nccl-tests, ... */
	CAPSIM_ERR_F_HOST,     /* host-bound, gpu-bound */
	CAPSIM_ERR_F_PROFILE,  /* datasheet, calibrated */
	CAPSIM_ERR_F_SCALE,    /* capsim_err_scale_name of the GPU count */
	CAPSIM_ERR__FEATURES
};
extern const char *const capsim_err_feature_names[CAPSIM_ERR__FEATURES];

#define CAPSIM_ERR_TEXT 64

/* What drives a prediction's error. host_bound: capsim's own step has the
 * host stream adding a quarter of the step or more to its kernels. */
typedef struct capsim_err_features {
	char gen[CAPSIM_ERR_TEXT];
	char stack[CAPSIM_ERR_TEXT];
	int host_bound;
	char profile[CAPSIM_ERR_TEXT];
	int gpus;
} capsim_err_features;

/* The scale class of a GPU count: "1", "2-8", "9-512" or "513+". */
const char *capsim_err_scale_name(int gpus);

/* One scored row of the residuals file. */
typedef struct capsim_err_row {
	char table[CAPSIM_ERR_TEXT], row[2 * CAPSIM_ERR_TEXT], family[CAPSIM_ERR_TEXT];
	char gpu[CAPSIM_ERR_TEXT];
	capsim_err_quantity quantity;
	capsim_err_features f;
	int in_sample;
	double predicted, measured;
} capsim_err_row;

typedef struct capsim_err_rows {
	capsim_err_row *v;
	size_t n, cap;
} capsim_err_rows;

/* Read a residuals file (the columns of hardware/errors/residuals.csv, '#'
 * lines skipped) into *out (zeroed first). Returns 0, or -1 after adding to
 * d, for each bad line, "PATH:LINE: FIELD: expected ..., found '...'" (a
 * file that cannot be read: a runtime failure), with nothing kept. */
int capsim_err_rows_load(const char *path, capsim_err_rows *out, capsim_diags *d);
void capsim_err_rows_free(capsim_err_rows *rows);

/* the two levels: 80% and 95% */
enum { CAPSIM_ERR_80, CAPSIM_ERR_95, CAPSIM_ERR__LEVELS };
extern const char *const capsim_err_level_names[CAPSIM_ERR__LEVELS];
/* the fewest rows (or pairs) a band of each level needs: 9 and 39 */
extern const size_t capsim_err_min_n[CAPSIM_ERR__LEVELS];

/* One group's fit. key[f] is the feature's value, "*" where dropped. lo, hi:
 * factors on the prediction (exp of the conformal order statistics of r);
 * has[l] 0 where the group has too few rows for level l. pair_*: the
 * quantiles of |r_i - r_j| (natural log of the ratio) over the group's
 * pairs, q[l] for each level and the median, where there are enough. */
typedef struct capsim_err_group {
	capsim_err_quantity quantity;
	int level;
	char key[CAPSIM_ERR__FEATURES][CAPSIM_ERR_TEXT];
	size_t n;
	double median_r;
	int has[CAPSIM_ERR__LEVELS];
	double lo[CAPSIM_ERR__LEVELS], hi[CAPSIM_ERR__LEVELS];
	size_t n_pairs;
	int pair_has[CAPSIM_ERR__LEVELS];
	double pair_q[CAPSIM_ERR__LEVELS], pair_median, pair_max;
} capsim_err_group;

/* Leave-one-table-out coverage of one family (or "all"): of its
 * out-of-sample rows, how many a model fitted without their table could
 * band at each level, how many measured values fell inside, and the bands'
 * mean width (hi - lo, a share of the prediction). */
typedef struct capsim_err_cover {
	char family[CAPSIM_ERR_TEXT];
	size_t rows;
	size_t banded[CAPSIM_ERR__LEVELS], inside[CAPSIM_ERR__LEVELS];
	double width[CAPSIM_ERR__LEVELS];
} capsim_err_cover;

/* A fitted model: its groups, what it was fitted on, and its coverage. */
typedef struct capsim_err_model {
	capsim_err_group *g;
	size_t n;
	size_t rows, in_sample;
	capsim_err_cover *cover;   /* families in name order, then "all" */
	size_t n_cover;
} capsim_err_model;

/* Fit every group of every quantity on rows' out-of-sample rows, and the
 * leave-one-table-out coverage (capsim_err_coverage) with it. Deterministic:
 * the same rows in any order give the same model. The caller frees it. */
capsim_err_model *capsim_err_fit(const capsim_err_rows *rows);

/* The groups alone (no coverage), on the rows whose table is not `skip`
 * (NULL: every table). */
capsim_err_model *capsim_err_fit_groups(const capsim_err_rows *rows, const char *skip);

/* Leave-one-table-out: for each table, the groups fitted without its rows,
 * its out-of-sample rows banded; per family and "all". Returns the count of
 * entries in *out (the caller frees *out). */
size_t capsim_err_coverage(const capsim_err_rows *rows, capsim_err_cover **out);

void capsim_err_model_free(capsim_err_model *m);

/* A prediction's band: for each level, whether there is one, its factors
 * and the group it came from ("step / hopper / megatron / any host-bound /
 * any profile / any scale") with that group's n. */
typedef struct capsim_err_band {
	int has[CAPSIM_ERR__LEVELS];
	double lo[CAPSIM_ERR__LEVELS], hi[CAPSIM_ERR__LEVELS];
	char group[CAPSIM_ERR__LEVELS][6 * CAPSIM_ERR_TEXT];
	size_t n[CAPSIM_ERR__LEVELS];
} capsim_err_band;

/* The band of a prediction of quantity q with features f: each level from
 * the first group of the fallback order holding capsim_err_min_n rows.
 * Returns 0, or -1 when no group of q has enough rows for 80% (then *b says
 * so: has[] all 0). */
int capsim_err_band_of(const capsim_err_model *m, capsim_err_quantity q,
		    const capsim_err_features *f, capsim_err_band *b);

/* The band of a comparison of two predictions of quantity q on the same GPU
 * and stack (features f): for each level, the half-width q of the measured
 * ratio A/B around the predicted ratio (within [ratio e^-q, ratio e^q]),
 * and the group it came from with its number of pairs; median, knot95 and
 * max: the 80% group's median, 95% quantile (0: too few pairs) and largest
 * |r_i - r_j|, for capsim_err_prob_less. */
typedef struct capsim_err_diff {
	int has[CAPSIM_ERR__LEVELS];
	double q[CAPSIM_ERR__LEVELS];
	char group[CAPSIM_ERR__LEVELS][6 * CAPSIM_ERR_TEXT];
	size_t n_pairs[CAPSIM_ERR__LEVELS];
	double median, knot95, max;
} capsim_err_diff;

/* Returns 0, or -1 when no group of q has enough pairs for 80%. */
int capsim_err_diff_band(const capsim_err_model *m, capsim_err_quantity q,
			 const capsim_err_features *f, capsim_err_diff *out);

/* The probability that A's measured value is below B's, given their
 * predictions (both > 0) and the comparison's band: the share of pairs
 * whose error difference d = r_A - r_B falls below -ln(pred_a / pred_b),
 * from the distribution of |d| through its median and quantiles (linear in
 * between, symmetric in sign), never nearer 0 or 1 than 1 / (2 (n + 1)).
 * Equal predictions give 0.5. */
double capsim_err_prob_less(const capsim_err_diff *dd, double pred_a, double pred_b);

/* Write m as JSON (the shipped model's format, docs/model.md) to out;
 * 0, or -1 when the write fails. */
int capsim_err_model_write(const capsim_err_model *m, FILE *out);

/* Read a model written by capsim_err_model_write. Returns the model, or NULL
 * after adding "PATH: JSON.PATH: expected ..., found ..." (or the JSON
 * parser's "PATH:LINE: ...") to d; a file that cannot be read is a runtime
 * failure. */
capsim_err_model *capsim_err_model_load(const char *path, capsim_diags *d);

/* The shipped model: ROOT/hardware/errors/model.json, ROOT the catalog's
 * directory (capsim_catalog_default_root). As capsim_err_model_load. */
capsim_err_model *capsim_err_model_load_root(const char *root, capsim_diags *d);

/* The quantity named s, or -1. */
int capsim_err_quantity_parse(const char *s);

#endif
