/* fit.h - capsim fit: a calibrated hardware profile (src/io/profile.h) from
 * the measurement store (src/store/measure.h).
 *
 * What is fitted, with GSL, and how (docs/model.md, "Calibrated GEMM
 * efficiency" and "Calibrated profiles"):
 * - per dtype, the GEMM efficiency of FLOP and arithmetic intensity
 *   (capsim_gemm_cal, spec.h) with gsl_multifit_nlinear, and its correction
 *   table over the square GEMMs;
 * - the copy bandwidth over the datasheet's;
 * - PCIe host-device latency and bandwidth, t = a + bytes / B;
 * - per NCCL collective, algorithm, protocol and rank count, the same in a
 *   small-message and a large-message regime (never from one rank);
 * - idle and sustained power, the sustained SM clock, and power against
 *   utilisation;
 * - per fused attention kernel (flash2, cudnn), a curve of the median
 *   forward and backward rates per sequence, head dim and mask.
 * The measurements were taken at the clocks they ran at, so throttling under
 * the power cap is inside them once; nothing is derated by power again.
 * Library code: it never prints, except capsim_fit_report to the stream it
 * is given. */
#ifndef CAPSIM_FIT_H
#define CAPSIM_FIT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "catalog.h"
#include "diag.h"
#include "profile.h"

/* ---- the whole fit ---------------------------------------------------------- */

typedef struct capsim_fit_options {
	const char *gpu;            /* catalog id; NULL: inferred from runs.gpu */
	const int64_t *runs;        /* the runs to fit; NULL: every run */
	size_t n_runs;
	const char *name;           /* the profile's name; NULL: GPU id and date */
	const char *capsim;         /* version recorded in the profile, or NULL */
} capsim_fit_options;

/* Fit a profile to the runs of the database at db_path (opened read-only),
 * for a GPU of cat. Every value the runs measured is fitted; what they did
 * not measure is left out (the GPU keeps its datasheet default), and what
 * the fit refused, held or reduced is said in out->notes. Returns 0; -1
 * after adding the reason to d when the database cannot be read, is not a
 * measurement store, holds no such runs, mixes GPU models, or measured
 * nothing that can be fitted. out is then empty. */
int capsim_fit(const char *db_path, const capsim_catalog *cat,
	       const capsim_fit_options *o, capsim_profile *out,
	       capsim_diags *d);

/* Print a residual report of p: per dtype the points, the smooth model's
 * and smooth x table's rms and largest relative error and the range outside
 * which it is clamped; copy bandwidth, PCIe, collectives and power with
 * their residuals; then the notes. verbose adds every GEMM point
 * (measured, smooth, smooth x table). g (the GPU p was fitted for) gives
 * the peaks for the per-point rates. */
void capsim_fit_report(const capsim_profile *p, const capsim_gpu *g,
		       int verbose, FILE *out);

/* ---- before and after -------------------------------------------------------- */

#define CAPSIM_FIT_FAMILIES 8

/* One family of measurements (every GEMM rate, every device copy, every
 * step's host issue time per kernel in one execution), each point predicted
 * from the catalog GPU's defaults ("before") and with the profile applied
 * ("after"); errors are predicted / measured - 1. */
typedef struct capsim_fit_family {
	const char *name;               /* "GEMM rate", "copy bandwidth", ... (static) */
	size_t points;
	double mae_before, mae_after;   /* mean |error| */
	double worst_before, worst_after; /* largest |error| */
	size_t away;                    /* points whose |error| grew by more than 1 point */
} capsim_fit_family;

typedef struct capsim_fit_check {
	size_t n;
	capsim_fit_family fam[CAPSIM_FIT_FAMILIES];
} capsim_fit_check;

/* Predict what the runs of o (NULL runs: every run) at db_path measured,
 * once on g as the catalog has it and once with p applied to a copy of it
 * (capsim_profile_apply), and sum the errors by family into out (families
 * with no points left out). The GEMMs take the op model's rate of their
 * shape, the copies the datasheet bandwidth at the copy efficiency, the
 * steps' host issue time per kernel the host's cost per kernel of their
 * execution, and each attention point the fit keeps (its records' median
 * rate, forward and backward) the kernel's curve at the bf16 peak. Returns 0, or -1 after adding the reason to d (the database
 * cannot be read, or p does not apply to g). */
int capsim_fit_before_after(const char *db_path, const capsim_fit_options *o,
			    const capsim_profile *p, const capsim_gpu *g,
			    capsim_fit_check *out, capsim_diags *d);

/* Print c as a table, family by family: points, mean and largest |error|
 * before and after, and how many points moved away. Nothing without
 * families. */
void capsim_fit_before_after_report(const capsim_fit_check *c, FILE *out);

/* The catalog GPU that NVML's name (runs.gpu, "NVIDIA H200") denotes: the
 * entries whose id or name holds the name's model token (the first word
 * with a digit, "h200"), without a PCIe or SXM form factor that disagrees,
 * nearest in memory to mem_bytes (0: unknown) when several remain. Writes
 * the id to id. Returns 0, or -1 after adding the reason to d. */
int capsim_fit_infer_gpu(const capsim_catalog *cat, const char *nvml_name,
			 double mem_bytes, char *id, size_t len,
			 capsim_diags *d);

/* ---- the pieces, for tests ---------------------------------------------- */

/* Fit dtype's GEMM model to pts (frac over the dtype's dense peak, m, n, k,
 * run) into out (cal, residuals, points copied, runs): 5 parameters with
 * 8 or more points of which 3 or more are not square; else 3 (no intensity
 * term) with 4 or more points at 3 or more FLOP counts; else 1 (sat only).
 * Why it used fewer than 5 is added to p's notes when p is not NULL. Then
 * the table of measured / smooth over the square GEMMs (ratios of one FLOP
 * count averaged geometrically). Returns 0, or -1 when there are no points
 * or the solver fails at every start. */
int capsim_fit_gemm(int dtype, const capsim_profile_point *pts, size_t n,
		    capsim_profile_gemm *out, capsim_profile *p);

/* t = a + bytes / B by weighted least squares (gsl_fit_wlinear, weights
 * 1 / t^2, so that every size counts by its relative error) over n >= 2
 * points of at least 2 sizes. A negative intercept is refitted through the
 * origin (a = 0; gsl_fit_wmul). Fills out (residuals relative, bytes
 * range). Returns 0, or -1 when the times do not grow with size (B would
 * not be positive) or there are too few points. */
int capsim_fit_alpha_beta(const double *bytes, const double *t_s, size_t n,
			  capsim_profile_ab *out);

/* The same in one or two regimes: points are sorted by size and every split
 * that leaves 3 or more points on each side is tried; two regimes are kept
 * when their Bayesian information criterion, n ln(RSS/n) + k ln n with k = 4
 * against 2, beats one line's (RSS the sum of squared relative residuals).
 * Writes 1 or 2 regimes, small messages first; returns their number, or -1
 * as capsim_fit_alpha_beta. bytes and t_s are not modified. */
int capsim_fit_alpha_beta_regimes(const double *bytes, const double *t_s,
				  size_t n, capsim_profile_ab out[2]);

/* Power against utilisation from n points (u in [0, 1], watts): the least
 * squares line P = a + b u (gsl_fit_linear, n >= 2), and, with idle
 * (u = 0) and sustained (u = 1) among them and some point between, the
 * exponent of P = idle + (sustained - idle) u^gamma (gsl_fit_mul on the
 * logarithms of the points between). Residuals in watts over all points.
 * Fills the curve fields of w; returns 0, or -1 with fewer than 2 points. */
int capsim_fit_power_curve(const double *u, const double *watts, size_t n,
			   capsim_profile_power *w);

#endif
