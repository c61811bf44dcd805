/* compare.c - two predictions compared on their correlated error; see
 * compare.h. */
#include "compare.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* one family: a GPU generation that a table holds, and one stack */
static int one_family(const capsim_err_features *fa, const capsim_err_features *fb)
{
	return fa->gen[0] && strcmp(fa->gen, fb->gen) == 0 && strcmp(fa->stack, fb->stack) == 0;
}

/* on the difference: the wider of the pair bands of a's and b's features */
static int paired(const capsim_err_model *m, capsim_err_quantity q,
		  const capsim_err_features *fa, const capsim_err_features *fb,
		  capsim_err_cmp *out)
{
	capsim_err_diff da, db;
	int ha = capsim_err_diff_band(m, q, fa, &da) == 0;
	int hb = capsim_err_diff_band(m, q, fb, &db) == 0;
	if (!ha && !hb)
		return -1;
	const capsim_err_diff *dd = !hb || (ha && da.q[CAPSIM_ERR_80] >= db.q[CAPSIM_ERR_80]) ?
				    &da : &db;
	out->paired = 1;
	out->centre = 0.0;
	out->half80 = dd->q[CAPSIM_ERR_80];
	out->p_less = capsim_err_prob_less(dd, out->ratio, 1.0);
	snprintf(out->group, sizeof out->group, "%s", dd->group[CAPSIM_ERR_80]);
	return 0;
}

/* each on its own band (factors on the prediction), the two errors
 * independent and normal on the log */
static void independent_of(double a_lo, double a_hi, double b_lo, double b_hi,
			   capsim_err_cmp *out)
{
	double mid_a = 0.5 * (log(a_lo) + log(a_hi));
	double mid_b = 0.5 * (log(b_lo) + log(b_hi));
	double sa = (log(a_hi) - log(a_lo)) / (2.0 * CAPSIM_ERR_Z80);
	double sb = (log(b_hi) - log(b_lo)) / (2.0 * CAPSIM_ERR_Z80);
	double s = sqrt(sa * sa + sb * sb);
	out->paired = 0;
	/* measured ln(a / b) = ln(ratio) + (r_a - r_b), r ~ N(mid, sigma) */
	out->centre = mid_b - mid_a;
	out->half80 = CAPSIM_ERR_Z80 * s;
	double mean = log(out->ratio) + mid_a - mid_b;
	out->p_less = s > 0 ? 0.5 * erfc(mean / (s * sqrt(2.0))) : (mean < 0 ? 1.0 : 0.0);
	if (mean == 0.0)
		out->p_less = 0.5;
}

static int independent(const capsim_err_model *m, capsim_err_quantity q,
		       const capsim_err_features *fa, const capsim_err_features *fb,
		       capsim_err_cmp *out)
{
	capsim_err_band ba, bb;
	if (capsim_err_band_of(m, q, fa, &ba) < 0 || capsim_err_band_of(m, q, fb, &bb) < 0)
		return -1;
	const int l = CAPSIM_ERR_80;
	independent_of(ba.lo[l], ba.hi[l], bb.lo[l], bb.hi[l], out);
	snprintf(out->group, sizeof out->group, "%s", ba.group[l]);
	return 0;
}

int capsim_err_compare_bands(double a, double a_lo, double a_hi, double b, double b_lo,
			     double b_hi, capsim_err_cmp *out)
{
	memset(out, 0, sizeof *out);
	if (!(a > 0) || !(b > 0) || !(a_lo > 0) || !(a_lo <= a && a <= a_hi) || !(b_lo > 0) ||
	    !(b_lo <= b && b <= b_hi) || !isfinite(a_hi) || !isfinite(b_hi))
		return -1;
	out->ratio = a / b;
	independent_of(a_lo / a, a_hi / a, b_lo / b, b_hi / b, out);
	out->has = 1;
	out->tie = fabs(log(out->ratio) - out->centre) <= out->half80;
	return 0;
}

int capsim_err_compare(const capsim_err_model *m, capsim_err_quantity q,
		       const capsim_err_features *fa, double a,
		       const capsim_err_features *fb, double b, capsim_err_cmp *out)
{
	memset(out, 0, sizeof *out);
	if (!(a > 0) || !(b > 0))
		return -1;
	out->ratio = a / b;
	int rc = one_family(fa, fb) ? paired(m, q, fa, fb, out) :
		 independent(m, q, fa, fb, out);
	if (rc < 0) {
		memset(out, 0, sizeof *out);
		return -1;
	}
	out->has = 1;
	out->tie = fabs(log(out->ratio) - out->centre) <= out->half80;
	return 0;
}
