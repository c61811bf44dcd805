/* gemm.c - fitting one dtype's calibrated GEMM efficiency (capsim_gemm_cal)
 * to its measured points; see fit.h and docs/model.md ("Calibrated GEMM
 * efficiency"). */
#include "fit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_statistics_double.h>
#include <gsl/gsl_vector.h>

#include "ops.h"
#include "xalloc.h"

/* what the solver sees: the points as F and I, and the measured range */
typedef struct gdata {
	const capsim_profile_point *pts;
	size_t n;
	int dtype, params;
	double *flop, *ai;
	capsim_gemm_cal range; /* flop_min ... ai_max */
} gdata;

/* largest exponent p or q the solver may reach: beyond it T is a step */
#define MAX_STEEPNESS 50.0
/* how far (decades) f0 and i0 may lie outside the measured range */
#define MARGIN_DECADES 3.0

/* y in (-inf, inf) onto (lo, hi), and back */
static double squash(double y, double lo, double hi)
{
	return lo + (hi - lo) / (1.0 + exp(-y));
}

static double unsquash(double v, double lo, double hi)
{
	return -log((hi - lo) / (v - lo) - 1.0);
}

/* bounds of log10 f0 (which 0) or log10 i0 (which 1) */
static void bounds(const gdata *g, int which, double *lo, double *hi)
{
	double a = which ? g->range.ai_min : g->range.flop_min;
	double b = which ? g->range.ai_max : g->range.flop_max;
	*lo = log10(a) - MARGIN_DECADES;
	*hi = log10(b) + MARGIN_DECADES;
}

/* Parameters are solved as (sat, y_f0, ln p, y_i0, ln q): p and q stay
 * positive (T and U rise with F and I), and log10 f0 and log10 i0 = lo +
 * (hi - lo) / (1 + e^-y) stay within 3 decades of the measured range, where
 * the data still say something about them. */
static void unpack(const gsl_vector *x, const gdata *g, capsim_gemm_cal *c)
{
	double lo, hi;
	*c = g->range;
	c->params = g->params;
	c->sat = gsl_vector_get(x, 0);
	if (g->params >= 3) {
		bounds(g, 0, &lo, &hi);
		c->f0_flop = pow(10.0, squash(gsl_vector_get(x, 1), lo, hi));
		c->p = fmin(exp(gsl_vector_get(x, 2)), MAX_STEEPNESS);
	}
	if (g->params >= 5) {
		bounds(g, 1, &lo, &hi);
		c->i0_flop_per_byte = pow(10.0, squash(gsl_vector_get(x, 3), lo, hi));
		c->q = fmin(exp(gsl_vector_get(x, 4)), MAX_STEEPNESS);
	}
}

/* residual_i = model_i / measured_i - 1: the relative error of the rate,
 * which is what a predicted time carries */
static int resid(const gsl_vector *x, void *params, gsl_vector *f)
{
	const gdata *g = params;
	capsim_gemm_cal c;
	unpack(x, g, &c);
	for (size_t i = 0; i < g->n; i++) {
		double r = capsim_gemm_cal_smooth(&c, g->flop[i], g->ai[i]) / g->pts[i].frac - 1.0;
		/* a parameter run off to infinity: a large, finite residual
		 * makes the trust region step back */
		gsl_vector_set(f, i, isfinite(r) ? r : 1e3);
	}
	return GSL_SUCCESS;
}

/* One solve from x0 (np values); writes the position and returns the sum
 * of squared residuals, or HUGE_VAL when the solver could not start. */
static double solve(gdata *g, const double *x0, double *x)
{
	size_t np = (size_t)g->params;
	gsl_multifit_nlinear_fdf fdf;
	memset(&fdf, 0, sizeof fdf);
	fdf.f = resid;
	fdf.df = NULL; /* forward differences */
	fdf.n = g->n;
	fdf.p = np;
	fdf.params = g;
	gsl_multifit_nlinear_parameters par = gsl_multifit_nlinear_default_parameters();
	gsl_multifit_nlinear_workspace *w =
		gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &par, g->n, np);
	if (!w)
		return HUGE_VAL;
	double start[5];
	memcpy(start, x0, np * sizeof *start);
	gsl_vector_view xv = gsl_vector_view_array(start, np);
	double cost = HUGE_VAL;
	int info = 0;
	if (gsl_multifit_nlinear_init(&xv.vector, &fdf, w) == GSL_SUCCESS) {
		/* GSL_EMAXITER or GSL_ENOPROG still leave the best point reached */
		gsl_multifit_nlinear_driver(300, 1e-10, 1e-10, 0.0, NULL, NULL, &info, w);
		const gsl_vector *pos = gsl_multifit_nlinear_position(w);
		const gsl_vector *r = gsl_multifit_nlinear_residual(w);
		double ss = 0.0;
		for (size_t i = 0; i < g->n; i++)
			ss += gsl_vector_get(r, i) * gsl_vector_get(r, i);
		for (size_t i = 0; i < np; i++)
			x[i] = gsl_vector_get(pos, i);
		if (isfinite(ss) && x[0] > 0.0)
			cost = ss;
	}
	gsl_multifit_nlinear_free(w);
	return cost;
}

/* The best of several starts (the model's two saturating terms make the
 * cost surface multimodal) into out, and its solver vector into xbest; 0
 * when one converged. */
static int fit_params(gdata *g, capsim_gemm_cal *out, double xbest[5])
{
	double flo, fhi, ilo, ihi;
	bounds(g, 0, &flo, &fhi);
	bounds(g, 1, &ilo, &ihi);
	double lfmin = flo + MARGIN_DECADES, lfmax = fhi - MARGIN_DECADES;
	double limin = ilo + MARGIN_DECADES;
	double sat0 = 0.0;
	for (size_t i = 0; i < g->n; i++)
		sat0 = fmax(sat0, g->pts[i].frac);
	const double lf0s[] = { lfmin - 0.5, lfmin + 0.5, 0.5 * (lfmin + lfmax) };
	const double ps[] = { log(1.0), log(2.5) };
	const double li0s[] = { limin - 0.5, limin + 0.3 };
	const double qs[] = { log(1.0), log(3.0) };
	int nli = g->params >= 5 ? 2 : 1, nq = g->params >= 5 ? 2 : 1;
	double best = HUGE_VAL;
	for (int a = 0; a < 3; a++)
		for (int b = 0; b < 2; b++)
			for (int c = 0; c < nli; c++)
				for (int e = 0; e < nq; e++) {
					double x0[5] = { sat0, unsquash(lf0s[a], flo, fhi), ps[b],
							 unsquash(li0s[c], ilo, ihi), qs[e] };
					double x[5];
					double cost = solve(g, x0, x);
					if (cost < best) {
						best = cost;
						memcpy(xbest, x, sizeof x);
					}
				}
	if (!isfinite(best))
		return -1;
	gsl_vector_view xv = gsl_vector_view_array(xbest, (size_t)g->params);
	unpack(&xv.vector, g, out);
	return 0;
}

/* 1 when point i's F and I lie within the range of the other points' */
static int interior(const gdata *g, size_t i)
{
	int below_f = 0, above_f = 0, below_i = 0, above_i = 0;
	for (size_t j = 0; j < g->n; j++) {
		if (j == i)
			continue;
		below_f |= g->flop[j] <= g->flop[i];
		above_f |= g->flop[j] >= g->flop[i];
		below_i |= g->ai[j] <= g->ai[i];
		above_i |= g->ai[j] >= g->ai[i];
	}
	return below_f && above_f && below_i && above_i;
}

/* Leave-one-out over the interior points (those whose F and I lie within
 * the others' range: a shape the others bracket, as an unmeasured shape
 * between measured ones is): each one's relative error under the model
 * refitted without it (one start, from the full fit's x), the measured
 * range kept as it was. rms and largest into *rms, *max_abs; the number of
 * points used is returned. */
static size_t leave_one_out(const gdata *g, const capsim_gemm_cal *full,
			    const double *x, double *rms, double *max_abs)
{
	double ss = 0.0, mx = 0.0;
	size_t used = 0;
	capsim_profile_point *pts = capsim_xcalloc(g->n, sizeof *pts);
	double *flop = capsim_xcalloc(g->n, sizeof *flop), *ai = capsim_xcalloc(g->n, sizeof *ai);
	for (size_t out = 0; out < g->n; out++) {
		if (!interior(g, out))
			continue;
		gdata h = *g;
		size_t m = 0;
		for (size_t i = 0; i < g->n; i++) {
			if (i == out)
				continue;
			pts[m] = g->pts[i];
			flop[m] = g->flop[i];
			ai[m++] = g->ai[i];
		}
		h.pts = pts;
		h.flop = flop;
		h.ai = ai;
		h.n = m;
		capsim_gemm_cal c = *full;
		if (g->params > 1) {
			double xo[5];
			if (isfinite(solve(&h, x, xo))) {
				gsl_vector_view xv = gsl_vector_view_array(xo, (size_t)g->params);
				unpack(&xv.vector, &h, &c);
			}
		} else {
			double a = 0.0, b = 0.0;
			for (size_t i = 0; i < m; i++) {
				a += 1.0 / pts[i].frac;
				b += 1.0 / (pts[i].frac * pts[i].frac);
			}
			c.sat = a / b;
		}
		double r = capsim_gemm_cal_smooth(&c, g->flop[out], g->ai[out]) /
				   g->pts[out].frac - 1.0;
		ss += r * r;
		mx = fmax(mx, fabs(r));
		used++;
	}
	free(pts);
	free(flop);
	free(ai);
	*rms = used ? sqrt(ss / (double)used) : 0.0;
	*max_abs = mx;
	return used;
}

/* Say so in p when f0 or i0 ended at the edge of its range, 3 decades
 * beyond the measurements: the term is then flat over them (low edge) or a
 * power law x^p (high edge), which the data allow; predictions within the
 * measured range are unaffected. */
static void note_bounds(const gdata *g, const capsim_gemm_cal *c, capsim_profile *p)
{
	static const char *const what[2][2] = { { "f0", "FLOP" }, { "i0", "intensity" } };
	for (int which = 0; which < 2 && p; which++) {
		if ((which ? 5 : 3) > g->params)
			continue;
		double lo, hi, v = log10(which ? c->i0_flop_per_byte : c->f0_flop);
		double e = which ? c->q : c->p;
		bounds(g, which, &lo, &hi);
		if (v - lo < 1e-3 * (hi - lo))
			capsim_profile_note(p, "%s: %s ended %g decades below the measured %s: "
					    "that term is flat over the measurements",
					    capsim_dtype_names[g->dtype], what[which][0],
					    MARGIN_DECADES, what[which][1]);
		else if (hi - v < 1e-3 * (hi - lo))
			capsim_profile_note(p, "%s: %s ended %g decades above the measured %s: "
					    "that term is a power law of exponent %.3g over the "
					    "measurements", capsim_dtype_names[g->dtype],
					    what[which][0], MARGIN_DECADES, what[which][1], e);
	}
}

/* sat alone: the s minimising sum (s / f_i - 1)^2 */
static void fit_sat(const gdata *g, capsim_gemm_cal *out)
{
	double a = 0.0, b = 0.0;
	for (size_t i = 0; i < g->n; i++) {
		a += 1.0 / g->pts[i].frac;
		b += 1.0 / (g->pts[i].frac * g->pts[i].frac);
	}
	*out = g->range;
	out->params = 1;
	out->sat = a / b;
}

static int square(const capsim_profile_point *p)
{
	return p->m == p->n && p->n == p->k;
}

/* rms and largest |model / measured - 1| over the points, with or without
 * the table */
static void residuals(const gdata *g, const capsim_gemm_cal *c, int table,
		      double *rms, double *max_abs)
{
	double ss = 0.0, mx = 0.0;
	for (size_t i = 0; i < g->n; i++) {
		const capsim_profile_point *pt = &g->pts[i];
		double model = table ? capsim_gemm_cal_eff(c, g->dtype, pt->m, pt->n, pt->k, NULL) :
				       capsim_gemm_cal_smooth(c, g->flop[i], g->ai[i]);
		double r = model / pt->frac - 1.0;
		ss += r * r;
		mx = fmax(mx, fabs(r));
	}
	/* below 1e-12 it is rounding, not a residual */
	*rms = ss > 1e-24 * (double)g->n ? sqrt(ss / (double)g->n) : 0.0;
	*max_abs = mx > 1e-12 ? mx : 0.0;
}

/* how many parameters the points can carry; why fewer than 5 into p */
static int choose_params(const gdata *g, capsim_profile *p)
{
	size_t off = 0, distinct = 0;
	for (size_t i = 0; i < g->n; i++) {
		off += !square(&g->pts[i]);
		size_t j = 0;
		while (j < i && g->flop[j] != g->flop[i])
			j++;
		distinct += j == i;
	}
	const char *dt = capsim_dtype_names[g->dtype];
	if (g->n >= 8 && off >= 3)
		return 5;
	if (g->n >= 4 && distinct >= 3) {
		if (p)
			capsim_profile_note(p, "%s: %zu points, %zu of them not square: too few to "
					    "separate intensity from FLOP; fitted sat, f0, p only "
					    "(no intensity term)", dt, g->n, off);
		return 3;
	}
	if (p)
		capsim_profile_note(p, "%s: %zu points at %zu FLOP counts: too few for a curve; "
				    "fitted sat only (one fraction for every shape)", dt, g->n,
				    distinct);
	return 1;
}

static void set_range(gdata *g)
{
	capsim_gemm_cal *r = &g->range;
	memset(r, 0, sizeof *r);
	r->flop_min = r->ai_min = HUGE_VAL;
	for (size_t i = 0; i < g->n; i++) {
		const capsim_profile_point *pt = &g->pts[i];
		g->flop[i] = 2.0 * pt->m * pt->n * pt->k;
		g->ai[i] = capsim_gemm_intensity(g->dtype, pt->m, pt->n, pt->k);
		r->flop_min = fmin(r->flop_min, g->flop[i]);
		r->flop_max = fmax(r->flop_max, g->flop[i]);
		r->ai_min = fmin(r->ai_min, g->ai[i]);
		r->ai_max = fmax(r->ai_max, g->ai[i]);
	}
}


int capsim_fit_gemm(int dtype, const capsim_profile_point *pts, size_t n,
		    capsim_profile_gemm *out, capsim_profile *p)
{
	memset(out, 0, sizeof *out);
	if (n == 0 || n > CAPSIM_PROFILE_MAX_POINTS || dtype < 0 || dtype >= CAPSIM_CAL_DTYPES)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (!(pts[i].frac > 0.0) || !(pts[i].m > 0) || !(pts[i].n > 0) || !(pts[i].k > 0))
			return -1;
	/* the smooth model is fitted to the aligned GEMMs; misaligned ones
	 * (capsim_gemm_aligned: a leading dimension cuBLAS cannot vectorise)
	 * run other kernels and are set against it afterwards */
	capsim_profile_point *fit = capsim_xcalloc(n, sizeof *fit);
	size_t n_fit = 0;
	for (size_t i = 0; i < n; i++)
		if (capsim_gemm_aligned(dtype, pts[i].m, pts[i].n, pts[i].k))
			fit[n_fit++] = pts[i];
	if (n_fit == 0) {
		free(fit);
		if (p)
			capsim_profile_note(p, "%s: every GEMM measured has a misaligned dimension: "
					    "no smooth model", capsim_dtype_names[dtype]);
		return -1;
	}
	gdata g = { .pts = fit, .n = n_fit, .dtype = dtype };
	g.flop = capsim_xcalloc(n, sizeof *g.flop);
	g.ai = capsim_xcalloc(n, sizeof *g.ai);
	set_range(&g);
	g.params = choose_params(&g, p);
	capsim_gemm_cal *c = &out->cal;
	double x[5] = { 0 };
	int rc = -1;
	while (rc < 0 && g.params > 1) {
		rc = fit_params(&g, c, x);
		if (rc < 0) {
			if (p)
				capsim_profile_note(p, "%s: the %d-parameter fit did not converge "
						    "from any start; fewer parameters",
						    capsim_dtype_names[dtype], g.params);
			g.params = g.params == 5 ? 3 : 1;
		}
	}
	if (rc < 0) {
		fit_sat(&g, c);
		rc = 0;
	}
	note_bounds(&g, c, p);
	residuals(&g, c, 0, &out->rms, &out->max_abs);
	if (n_fit > (size_t)g.params)
		leave_one_out(&g, c, x, &out->loo_rms, &out->loo_max_abs);
	out->points = capsim_xcalloc(n, sizeof *out->points);
	memcpy(out->points, pts, n * sizeof *pts);
	out->n_points = n;
	double *mis = capsim_xcalloc(n, sizeof *mis);
	size_t n_mis = 0;
	for (size_t i = 0; i < n; i++) {
		capsim_profile_point *pt = &out->points[i];
		double F = 2.0 * pt->m * pt->n * pt->k;
		double I = capsim_gemm_intensity(dtype, pt->m, pt->n, pt->k);
		pt->ratio = pt->frac / capsim_gemm_cal_smooth(c, F, I);
		if (!capsim_gemm_aligned(dtype, pt->m, pt->n, pt->k))
			mis[n_mis++] = pt->ratio;
	}
	if (n_mis) {
		c->misaligned = gsl_stats_median(mis, 1, n_mis);
		if (p)
			capsim_profile_note(p, "%s: %zu misaligned GEMMs (a dimension no multiple of "
					    "16 bytes' elements) run at %.3g of the smooth model "
					    "(median), which other misaligned shapes take",
					    capsim_dtype_names[dtype], n_mis, c->misaligned);
	}
	free(mis);
	int dropped = capsim_profile_gemm_tables(out);
	if (dropped && p)
		capsim_profile_note(p, "%s: %d shapes or square sizes beyond the table's %d and %d: "
				    "the smooth model alone there", capsim_dtype_names[dtype],
				    dropped, CAPSIM_CAL_SHAPES, CAPSIM_CAL_TABLE);
	residuals(&g, c, 1, &out->table_rms, &out->table_max_abs);
	for (size_t i = 0; i < n; i++)
		capsim_run_ids_add(&out->runs, pts[i].run);
	free(g.flop);
	free(g.ai);
	free(fit);
	return rc;
}
