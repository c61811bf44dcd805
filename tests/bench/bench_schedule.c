/* bench_schedule.c - time to simulate one step's pipeline schedule (schedule.h)
 * on the event engine, p = 16 stages, m = 128 .. 4096 micro-batches, v = 1
 * (1F1B) and v = 2 .. 4 (interleaved 1F1B).
 *
 * Each case runs R times (default 5) on fresh input; the median wall time is
 * reported with the tasks, events and events per second. The stages are
 * uniform but for a 1.5x slower last stage, with a p2p delay, so that the
 * schedule has bubbles to resolve. Single-threaded.
 *
 * Usage: bench_schedule [-r REPEATS] [-p STAGES] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

#include "schedule.h"

#define MAX_REPS 64
#define MAXP 64
#define MAXV 4

static double seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv);

int main(int argc, char **argv)
{
	int reps = 5, p = 16;
	for (int a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "-r") && a + 1 < argc)
			reps = atoi(argv[++a]);
		else if (!strcmp(argv[a], "-p") && a + 1 < argc)
			p = atoi(argv[++a]);
		else {
			fprintf(stderr, "usage: bench_schedule [-r REPEATS] [-p STAGES]\n");
			return 2;
		}
	}
	if (reps < 1 || reps > MAX_REPS || p < 1 || p > MAXP) {
		fprintf(stderr, "bench_schedule: 1 <= repeats <= %d, 1 <= stages <= %d\n",
			MAX_REPS, MAXP);
		return 2;
	}
	struct utsname u;
	if (uname(&u) == 0)
		printf("# %s %s %s, %d repeats, median\n", u.sysname, u.release, u.machine, reps);
	printf("| p | m | v | schedule | tasks | events | median ms | min ms | max ms | "
	       "Mevents/s | makespan ms (simulated) |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
	static capsim_time_ns f[MAXP * MAXV], b[MAXP * MAXV];
	for (int v = 1; v <= MAXV; v++) {
		for (int m = 128; m <= 4096; m *= 2) {
			for (int x = 0; x < p * v; x++) {
				f[x] = 2385000 / v; /* 2.385 ms a micro-batch forward */
				b[x] = 5171000 / v;
				if (x / v == p - 1) {
					f[x] = f[x] * 3 / 2;
					b[x] = b[x] * 3 / 2;
				}
			}
			capsim_pipeline_spec s = {
				.stages = p, .microbatches = m, .chunks = v,
				.schedule = v == 1 ? CAPSIM_SCHED_1F1B : CAPSIM_SCHED_1F1B_INTERLEAVED,
				.fwd_ns = f, .bwd_ns = b, .p2p_ns = 31000
			};
			double t[MAX_REPS];
			capsim_pipeline_result r = { 0 };
			for (int k = 0; k < reps; k++) {
				capsim_pipeline_result_free(&r);
				double t0 = seconds();
				int rc = capsim_pipeline_simulate(&s, &r);
				t[k] = seconds() - t0;
				if (rc != CAPSIM_PIPELINE_OK) {
					fprintf(stderr, "bench_schedule: %s\n", r.errmsg);
					return 1;
				}
			}
			qsort(t, (size_t)reps, sizeof t[0], cmp_double);
			double med = t[reps / 2];
			printf("| %d | %d | %d | %s | %zu | %llu | %.2f | %.2f | %.2f | %.1f | %.1f |\n",
			       p, m, v, v == 1 ? "1F1B" : "interleaved",
			       (size_t)p * r.tasks_per_stage, (unsigned long long)r.events,
			       1e3 * med, 1e3 * t[0], 1e3 * t[reps - 1],
			       (double)r.events / med / 1e6, (double)r.makespan_ns / 1e6);
			capsim_pipeline_result_free(&r);
		}
	}
	return 0;
}
