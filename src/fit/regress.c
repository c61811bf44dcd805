/* regress.c - the linear fits of a profile: alpha-beta times of PCIe copies
 * and NCCL collectives (one or two regimes), and power against
 * utilisation; see fit.h. */
#include "fit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_fit.h>

#include "xalloc.h"

/* relative residuals of t = a + x b over the points: rms, largest, and the
 * sum of squares */
static double ab_residuals(const double *x, const double *t, size_t n, double a,
			   double b, double *rms, double *max_abs)
{
	double ss = 0.0, mx = 0.0;
	for (size_t i = 0; i < n; i++) {
		double r = (a + b * x[i]) / t[i] - 1.0;
		ss += r * r;
		mx = fmax(mx, fabs(r));
	}
	*rms = sqrt(ss / (double)n);
	*max_abs = mx;
	return ss;
}

/* the fit of one regime; returns its sum of squared relative residuals, or
 * HUGE_VAL when it cannot be fitted */
static double ab_fit(const double *x, const double *t, size_t n,
		     capsim_profile_ab *out)
{
	memset(out, 0, sizeof *out);
	if (n < 2)
		return HUGE_VAL;
	double lo = x[0], hi = x[0];
	for (size_t i = 0; i < n; i++) {
		if (!(x[i] > 0.0) || !(t[i] > 0.0))
			return HUGE_VAL;
		lo = fmin(lo, x[i]);
		hi = fmax(hi, x[i]);
	}
	if (!(hi > lo))
		return HUGE_VAL; /* one size: latency and bandwidth not separable */
	double *w = capsim_xcalloc(n, sizeof *w);
	for (size_t i = 0; i < n; i++)
		w[i] = 1.0 / (t[i] * t[i]);
	double a, b, c00, c01, c11, chisq;
	int rc = gsl_fit_wlinear(x, 1, w, 1, t, 1, n, &a, &b, &c00, &c01, &c11, &chisq);
	if (rc == GSL_SUCCESS && a < 0.0) {
		/* latency cannot be negative: the line through the origin */
		a = 0.0;
		rc = gsl_fit_wmul(x, 1, w, 1, t, 1, n, &b, &c11, &chisq);
	}
	free(w);
	if (rc != GSL_SUCCESS || !(b > 0.0) || !isfinite(b))
		return HUGE_VAL;
	out->latency_s = a;
	out->bw_bytes_per_s = 1.0 / b;
	out->bytes_min = lo;
	out->bytes_max = hi;
	out->points = n;
	return ab_residuals(x, t, n, a, b, &out->rms, &out->max_abs);
}

int capsim_fit_alpha_beta(const double *bytes, const double *t_s, size_t n,
			  capsim_profile_ab *out)
{
	return isfinite(ab_fit(bytes, t_s, n, out)) ? 0 : -1;
}

typedef struct bt {
	double bytes, t;
} bt;

static int cmp_bt(const void *a, const void *b)
{
	double x = ((const bt *)a)->bytes, y = ((const bt *)b)->bytes;
	return x < y ? -1 : x > y;
}

/* n ln(RSS / n) + k ln n, with RSS floored so that exact data compare */
static double bic(double rss, size_t n, int k)
{
	double floor_rss = 1e-24 * (double)n;
	return (double)n * log(fmax(rss, floor_rss) / (double)n) + k * log((double)n);
}

int capsim_fit_alpha_beta_regimes(const double *bytes, const double *t_s,
				  size_t n, capsim_profile_ab out[2])
{
	memset(out, 0, 2 * sizeof *out);
	if (n < 2)
		return -1;
	bt *v = capsim_xcalloc(n, sizeof *v);
	double *x = capsim_xcalloc(n, sizeof *x), *t = capsim_xcalloc(n, sizeof *t);
	for (size_t i = 0; i < n; i++)
		v[i] = (bt){ bytes[i], t_s[i] };
	qsort(v, n, sizeof *v, cmp_bt);
	for (size_t i = 0; i < n; i++) {
		x[i] = v[i].bytes;
		t[i] = v[i].t;
	}
	free(v);
	double one = ab_fit(x, t, n, &out[0]);
	double best = isfinite(one) ? bic(one, n, 2) : HUGE_VAL;
	int regimes = isfinite(one) ? 1 : -1;
	/* a split falls between two sizes, never inside a run of equal sizes */
	for (size_t k = 3; k + 3 <= n; k++) {
		if (x[k] == x[k - 1])
			continue;
		capsim_profile_ab lo, hi;
		double rss = ab_fit(x, t, k, &lo) + ab_fit(x + k, t + k, n - k, &hi);
		if (!isfinite(rss))
			continue;
		double b = bic(rss, n, 4);
		if (b < best) {
			best = b;
			out[0] = lo;
			out[1] = hi;
			regimes = 2;
		}
	}
	if (regimes == 1) {
		/* the single line may have lost to no split: refit it */
		ab_fit(x, t, n, &out[0]);
		memset(&out[1], 0, sizeof out[1]);
	}
	free(x);
	free(t);
	return regimes;
}

int capsim_fit_power_curve(const double *u, const double *watts, size_t n,
			   capsim_profile_power *w)
{
	w->points = 0;
	w->lin_a_w = w->lin_b_w = w->lin_rms_w = w->lin_max_w = 0.0;
	w->gamma = w->gamma_rms_w = w->gamma_max_w = 0.0;
	if (n < 2)
		return -1;
	double a, b, c00, c01, c11, ss;
	if (gsl_fit_linear(u, 1, watts, 1, n, &a, &b, &c00, &c01, &c11, &ss) != GSL_SUCCESS ||
	    !isfinite(a) || !isfinite(b))
		return -1;
	w->points = n;
	w->lin_a_w = a;
	w->lin_b_w = b;
	double s2 = 0.0, mx = 0.0;
	for (size_t i = 0; i < n; i++) {
		double r = a + b * u[i] - watts[i];
		s2 += r * r;
		mx = fmax(mx, fabs(r));
	}
	w->lin_rms_w = sqrt(s2 / (double)n);
	w->lin_max_w = mx;

	/* the power law through idle and sustained: ln y = gamma ln u, y the
	 * share of the idle-to-sustained span, over the points between */
	double span = w->sustained_w - w->idle_w;
	if (!(w->idle_w > 0.0) || !(span > 0.0))
		return 0;
	double *lx = capsim_xcalloc(n, sizeof *lx), *ly = capsim_xcalloc(n, sizeof *ly);
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		double y = (watts[i] - w->idle_w) / span;
		if (u[i] > 0.0 && u[i] < 1.0 && y > 0.0 && y < 1.0) {
			lx[m] = log(u[i]);
			ly[m++] = log(y);
		}
	}
	double g = 0.0;
	if (m >= 1 && gsl_fit_mul(lx, 1, ly, 1, m, &g, &c11, &ss) == GSL_SUCCESS &&
	    g > 0.0 && isfinite(g)) {
		w->gamma = g;
		s2 = mx = 0.0;
		for (size_t i = 0; i < n; i++) {
			double uu = fmin(fmax(u[i], 0.0), 1.0);
			double r = w->idle_w + span * pow(uu, g) - watts[i];
			s2 += r * r;
			mx = fmax(mx, fabs(r));
		}
		w->gamma_rms_w = sqrt(s2 / (double)n);
		w->gamma_max_w = mx;
	}
	free(lx);
	free(ly);
	return 0;
}
