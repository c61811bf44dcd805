/* vary.h - runtime variability: GPUs of one model run their kernels at
 * different sustained rates, and a synchronous step waits for the slowest
 * of the ranks that synchronise. The expected maximum of n independent
 * standard normal draws and its standard deviation (order statistics), and
 * what they add to a step.
 *
 * Equations and sources: docs/model.md ("Runtime variability"). */
#ifndef CAPSIM_VARY_H
#define CAPSIM_VARY_H

/* Up to this many draws the maximum's moments are integrated exactly;
 * above it the mean is Blom's approximation. */
#define CAPSIM_MAXNORM_EXACT_N 1024L

/* The mean and standard deviation of the largest of n >= 1 independent
 * N(0, 1) draws, by numerical integration of x n phi(x) Phi(x)^(n-1) over
 * [-9, 9] (Simpson's rule, 2400 steps: the closed forms of n <= 5 to 1e-7);
 * n < 1 is taken as 1. Cost independent of n. */
void capsim_maxnorm_exact(long n, double *mean, double *sd);

/* Blom's approximation of the same mean, Phi^-1((n - 0.375) / (n + 0.25)):
 * within 0.5% of the exact mean from n = 16 up (0 at n = 1). */
double capsim_maxnorm_blom(long n);

/* The mean and standard deviation of the largest of n draws as the step
 * uses them: exact up to CAPSIM_MAXNORM_EXACT_N; above it Blom's mean, and
 * the standard deviation integrated over a window around it (as exact). */
void capsim_maxnorm(long n, double *mean, double *sd);

/* What the expected slowest of n ranks adds to kernels of kernel_s seconds
 * when each rank's kernel time has coefficient of variation cv (first
 * order in cv: a rank of rate 1 + cv z takes kernel_s (1 - cv z)):
 * *add_s = kernel_s cv E[max], *sd_s = kernel_s cv SD[max]. Both 0 when
 * cv or kernel_s is not positive; one rank (n = 1) waits for no one: 0
 * added, a spread of kernel_s cv. */
void capsim_slowest_rank(double kernel_s, double cv, long n, double *add_s, double *sd_s);

#endif
