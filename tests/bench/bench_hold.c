/* bench_hold.c - the classic "hold" benchmark of the event queue, through the
 * engine (core.h) and through the raw queues.
 *
 * For each queue size N: fill the queue with N events at exponential random
 * times, run N holds to reach the steady state, then time H holds, where a hold
 * takes the least event and schedules one new event at its time plus an
 * exponential increment (mean 1 us, drawn beforehand into a table so that the
 * random number generator is not what is measured). Each size is repeated R
 * times on a fresh queue; the median rate is reported, with the minimum and
 * maximum. A hold is one pop plus one push, so holds/s equals events
 * delivered per second. Single-threaded.
 *
 * Three queues: the engine (core.h, on its calendar queue), the raw
 * calendar queue (queue_cal.h) and the raw 4-ary heap (queue.h), which the
 * calendar queue replaced in the engine.
 *
 * -d bimodal draws the increments from a mixture instead (90% exponential
 * with mean 100 ns, 10% with mean 100 us), the skewed case that upsets a
 * calendar queue's width estimate.
 *
 * Usage: bench_hold [-n HOLDS] [-r REPEATS] [-d exp|bimodal] [N ...]
 *        (defaults: 5000000 holds, 5 repeats, exp, N = 1e3 1e4 1e5 1e6)
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "core.h"
#include "queue.h"
#include "queue_cal.h"

#define INC_BITS 16
#define INC_N (1u << INC_BITS)
#define INC_MASK (INC_N - 1)
#define MEAN_INC_NS 1000.0
#define MAX_REPS 64

/* Increments in ns from a fixed seed: exponential with mean 1 us, or the
 * bimodal mixture. */
static uint32_t inc_table[INC_N];
static int bimodal;

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static void fill_increments(void)
{
	uint64_t s = 2385;
	for (uint32_t i = 0; i < INC_N; i++) {
		double u = ((double)(splitmix(&s) >> 11) + 0.5) * 0x1p-53; /* (0,1) */
		double mean = MEAN_INC_NS;
		if (bimodal)
			mean = splitmix(&s) % 10 == 0 ? 100.0 * MEAN_INC_NS : 0.1 * MEAN_INC_NS;
		inc_table[i] = (uint32_t)llround(-mean * log(u));
	}
}

static double seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- through the engine ---- */

typedef struct hold_ctx {
	int kind;
	uint32_t i; /* next increment */
	uint64_t left; /* holds before stopping */
} hold_ctx;

/* Reschedule at t + increment, carrying an 8-byte payload as a model would. */
static void hold(capsim_sim *sim, const capsim_event *ev, void *ctx)
{
	hold_ctx *h = ctx;
	uint64_t n = h->left;
	capsim_sim_schedule(sim, ev->t + inc_table[h->i++ & INC_MASK], 0, h->kind,
			    &n, sizeof n);
	if (--h->left == 0)
		capsim_sim_stop(sim);
}

/* Holds per second of one repetition through capsim_sim; *check gets a value
 * that depends on the whole run. */
static double engine_rate(size_t n, uint64_t holds, uint64_t *check)
{
	capsim_sim *sim = capsim_sim_create();
	hold_ctx h = { 0 };
	h.kind = capsim_sim_add_kind(sim, hold, &h);
	for (size_t i = 0; i < n; i++) {
		uint64_t v = i;
		capsim_sim_schedule(sim, inc_table[h.i++ & INC_MASK], 0, h.kind, &v,
				    sizeof v);
	}
	h.left = n;
	capsim_sim_run(sim, CAPSIM_TIME_NEVER); /* warm up */
	h.left = holds;
	double t0 = seconds();
	uint64_t done = capsim_sim_run(sim, CAPSIM_TIME_NEVER);
	double dt = seconds() - t0;
	if (done != holds || capsim_sim_pending(sim) != n) {
		fprintf(stderr, "bench_hold: engine ran %llu holds, expected %llu\n",
			(unsigned long long)done, (unsigned long long)holds);
		exit(1);
	}
	*check += (uint64_t)capsim_sim_now(sim);
	capsim_sim_destroy(sim);
	return (double)holds / dt;
}

/* ---- through the raw 4-ary heap ---- */

static void raw_holds(capsim_queue *q, uint64_t holds, uint32_t *inc_i,
		      uint64_t *seq)
{
	for (uint64_t k = 0; k < holds; k++) {
		capsim_qent e = capsim_queue_pop(q);
		e.t += inc_table[(*inc_i)++ & INC_MASK];
		e.k2 = (*seq)++;
		capsim_queue_push(q, e);
	}
}

static double raw_rate(size_t n, uint64_t holds, uint64_t *check)
{
	capsim_queue q = { 0 };
	q.pos = malloc(n * sizeof *q.pos);
	if (!q.pos) {
		fprintf(stderr, "bench_hold: out of memory\n");
		exit(1);
	}
	uint32_t inc_i = 0;
	uint64_t seq = 0;
	for (size_t i = 0; i < n; i++)
		capsim_queue_push(&q, (capsim_qent){ .t = inc_table[inc_i++ & INC_MASK],
						     .k2 = seq++, .ev = (uint32_t)i });
	raw_holds(&q, n, &inc_i, &seq); /* warm up */
	double t0 = seconds();
	raw_holds(&q, holds, &inc_i, &seq);
	double dt = seconds() - t0;
	*check += (uint64_t)capsim_queue_peek(&q)->t;
	free(q.a);
	free(q.pos);
	return (double)holds / dt;
}

/* ---- through the calendar queue (queue_cal.h) ---- */

static void cal_holds(capsim_calq *q, uint64_t holds, uint32_t *inc_i, uint64_t *seq)
{
	for (uint64_t k = 0; k < holds; k++) {
		capsim_qent e = capsim_calq_pop(q);
		e.t += inc_table[(*inc_i)++ & INC_MASK];
		e.k2 = (*seq)++;
		capsim_calq_push(q, e);
	}
}

static double cal_rate(size_t n, uint64_t holds, uint64_t *check)
{
	capsim_calq q;
	capsim_calq_init(&q);
	uint32_t inc_i = 0;
	uint64_t seq = 0;
	for (size_t i = 0; i < n; i++)
		capsim_calq_push(&q, (capsim_qent){ .t = inc_table[inc_i++ & INC_MASK],
						    .k2 = seq++, .ev = (uint32_t)i });
	cal_holds(&q, n, &inc_i, &seq); /* warm up */
	double t0 = seconds();
	cal_holds(&q, holds, &inc_i, &seq);
	double dt = seconds() - t0;
	*check += (uint64_t)capsim_calq_peek(&q)->t;
	capsim_calq_free(&q);
	return (double)holds / dt;
}

/* ---- reporting ---- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

typedef struct summary {
	double median, min, max;
} summary;

static summary summarize(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	double med = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
	return (summary){ med, v[0], v[n - 1] };
}

static void print_machine(void)
{
	struct utsname u;
	if (uname(&u) == 0)
		printf("machine: %s %s %s\n", u.sysname, u.release, u.machine);
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];
	while (f && fgets(line, sizeof line, f)) {
		if (strncmp(line, "model name", 10) == 0) {
			const char *p = strchr(line, ':');
			printf("cpu: %s", p ? p + 2 : line);
			break;
		}
	}
	if (f)
		fclose(f);
	printf("online cpus: %ld (the benchmark uses one)\n",
	       sysconf(_SC_NPROCESSORS_ONLN));
#ifdef __VERSION__
	printf("compiler: %s%s\n", __VERSION__,
#ifdef __OPTIMIZE__
	       ", optimized"
#else
	       ", NOT optimized"
#endif
	);
#endif
}

static void usage(void)
{
	fprintf(stderr, "usage: bench_hold [-n HOLDS] [-r REPEATS] [-d exp|bimodal] [N ...]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	uint64_t holds = 5000000;
	int reps = 5, c;
	while ((c = getopt(argc, argv, "n:r:d:")) != -1) {
		if (c == 'd' && strcmp(optarg, "bimodal") == 0)
			bimodal = 1;
		else if (c == 'd' && strcmp(optarg, "exp") == 0)
			bimodal = 0;
		else if (c == 'n')
			holds = strtoull(optarg, NULL, 10);
		else if (c == 'r')
			reps = atoi(optarg);
		else
			usage();
	}
	if (holds == 0 || reps < 1 || reps > MAX_REPS)
		usage();
	size_t sizes[32] = { 1000, 10000, 100000, 1000000 };
	int nsizes = 4;
	if (optind < argc) {
		nsizes = 0;
		for (int i = optind; i < argc && nsizes < 32; i++)
			sizes[nsizes++] = (size_t)strtod(argv[i], NULL);
	}
	fill_increments();
	print_machine();
	if (bimodal)
		printf("hold: %llu timed holds per repeat, %d repeats, increments bimodal: "
		       "exponential, 90%% with mean %.0f ns, 10%% with mean %.0f ns\n\n",
		       (unsigned long long)holds, reps, 0.1 * MEAN_INC_NS, 100.0 * MEAN_INC_NS);
	else
		printf("hold: %llu timed holds per repeat, %d repeats, increments exponential "
		       "with mean %.0f ns\n\n",
		       (unsigned long long)holds, reps, MEAN_INC_NS);
	printf("| queue size | engine, median Mev/s (min-max) | raw calendar queue, median "
	       "Mev/s (min-max) | engine / raw | raw 4-ary heap, median Mev/s (min-max) | "
	       "calendar / heap |\n");
	printf("|---:|---:|---:|---:|---:|---:|\n");
	uint64_t check = 0;
	for (int s = 0; s < nsizes; s++) {
		double e[MAX_REPS], r[MAX_REPS], cq[MAX_REPS];
		for (int k = 0; k < reps; k++) {
			e[k] = engine_rate(sizes[s], holds, &check);
			r[k] = raw_rate(sizes[s], holds, &check);
			cq[k] = cal_rate(sizes[s], holds, &check);
		}
		summary se = summarize(e, reps), sr = summarize(r, reps), sc = summarize(cq, reps);
		printf("| %zu | %.1f (%.1f-%.1f) | %.1f (%.1f-%.1f) | %.2f | %.1f (%.1f-%.1f) | "
		       "%.2f |\n", sizes[s], se.median / 1e6, se.min / 1e6, se.max / 1e6,
		       sc.median / 1e6, sc.min / 1e6, sc.max / 1e6, se.median / sc.median,
		       sr.median / 1e6, sr.min / 1e6, sr.max / 1e6, sc.median / sr.median);
		fflush(stdout);
	}
	printf("\n(check %llu)\n", (unsigned long long)check);
	return 0;
}
