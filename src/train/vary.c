/* vary.c - the expected slowest of the ranks that synchronise (vary.h). */
#include "vary.h"

#include <math.h>

#include <gsl/gsl_cdf.h>

/* log Phi(x), accurate in both tails */
static double log_phi_cdf(double x)
{
	return x < 0 ? log(gsl_cdf_ugaussian_P(x)) : log1p(-gsl_cdf_ugaussian_Q(x));
}

/* The maximum's density n phi(x) Phi(x)^(n-1) integrated by Simpson's rule
 * over [lo, hi] in k (even) steps: its mass, first and second moments. */
static void moments(long n, double lo, double hi, int k, double m[3])
{
	double h = (hi - lo) / k, s0 = 0.0, s1 = 0.0, s2 = 0.0;
	double ln_n = log((double)n), ln_root = 0.5 * log(2.0 * M_PI);
	for (int i = 0; i <= k; i++) {
		double x = lo + i * h;
		double w = (i == 0 || i == k) ? 1.0 : (i % 2 ? 4.0 : 2.0);
		double f = exp(ln_n - 0.5 * x * x - ln_root + (double)(n - 1) * log_phi_cdf(x));
		s0 += w * f;
		s1 += w * f * x;
		s2 += w * f * x * x;
	}
	m[0] = s0 * h / 3.0;
	m[1] = s1 * h / 3.0;
	m[2] = s2 * h / 3.0;
}

/* mean and standard deviation from the moments, normalised by the mass
 * the window holds */
static void mean_sd(const double m[3], double *mean, double *sd)
{
	double mu = m[1] / m[0], v = m[2] / m[0] - mu * mu;
	*mean = mu;
	*sd = sqrt(v > 0 ? v : 0.0);
}

void capsim_maxnorm_exact(long n, double *mean, double *sd)
{
	double m[3];
	moments(n < 1 ? 1 : n, -9.0, 9.0, 2400, m);
	mean_sd(m, mean, sd);
}

double capsim_maxnorm_blom(long n)
{
	if (n <= 1)
		return 0.0;
	const double a = 0.375;
	return gsl_cdf_ugaussian_Pinv(((double)n - a) / ((double)n - 2.0 * a + 1.0));
}

void capsim_maxnorm(long n, double *mean, double *sd)
{
	if (n <= CAPSIM_MAXNORM_EXACT_N) {
		capsim_maxnorm_exact(n, mean, sd);
		return;
	}
	/* past a thousand draws the maximum's standard deviation is under 0.36;
	 * its density is negligible 3 units below its mean and, its upper tail
	 * falling as exp(-x / 0.29) or faster, 4.5 above */
	double blom = capsim_maxnorm_blom(n), m[3], mu;
	moments(n, blom - 3.0, blom + 4.5, 1000, m);
	mean_sd(m, &mu, sd);
	*mean = blom;
}

void capsim_slowest_rank(double kernel_s, double cv, long n, double *add_s, double *sd_s)
{
	*add_s = 0.0;
	*sd_s = 0.0;
	if (!(cv > 0) || !(kernel_s > 0))
		return;
	double mean = 0.0, sd = 1.0;
	if (n > 1)
		capsim_maxnorm(n, &mean, &sd);
	*add_s = kernel_s * cv * mean;
	*sd_s = kernel_s * cv * sd;
}
