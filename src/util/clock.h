/* clock.h - the monotonic clock in seconds, for progress lines, rates and
 * elapsed times (never for results: capsim's time is simulated). */
#ifndef CAPSIM_CLOCK_H
#define CAPSIM_CLOCK_H

#include <time.h>

static inline double capsim_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif
