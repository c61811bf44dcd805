/* bench_scale.c - what a step and the large collectives cost as the cluster
 * grows: capsim_eval of a Llama 3.1 405B step (tests/bench/
 * llama405b-16k.xml) from 2,048 to 524,288 GPUs; ZeRO-3 at data parallelism
 * 1,024 on 16,384 GPUs; a 1 GiB all-reduce over 131,072 ranks folded and
 * unfolded; a 1 GiB all-to-all over 16,384 ranks under D-mod-K.
 *
 * Each case runs in a child process, so that its peak resident memory is
 * its own: the catalog and the scenario are loaded once, then the case is
 * evaluated `repeats` times and the median CPU time of one evaluation is
 * printed with the child's peak RSS (which includes the loaded catalog).
 *
 * A case that capsim refuses (a limit) prints "refused", the reason on
 * stderr.
 *
 * Usage: bench_scale [repeats]   (default 5)
 * Results go to docs/performance.md with the machine and the command. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "catalog.h"
#include "collective.h"
#include "eval.h"
#include "scenario.h"

static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

typedef struct {
	const char *name;
	const char *file;      /* under the source tree */
	capsim_set sets[6];
	size_t n_sets;
	int coll;              /* -1: a step; else a capsim_coll */
	int fold;              /* for collectives */
} bench_case;

/* one evaluation of c on s; returns a figure to print beside the time */
static double eval_once(const bench_case *c, const capsim_scenario *s, char *what, size_t len)
{
	capsim_diags d = { 0 };
	if (c->coll < 0) {
		capsim_eval_opts o = { .no_reference = 1 };
		capsim_result r;
		if (capsim_eval(s, &o, &r, &d) < 0) {
			capsim_diags_print(&d, stderr);
			_exit(3);
		}
		snprintf(what, len, "step %.4f s", r.step.step_time_s);
		capsim_result_free(&r);
		return 0;
	}
	capsim_coll_req req = { .op = (capsim_coll)c->coll, .algo = -1, .proto = -1,
				.fold = c->fold, .seed = (uint64_t)s->seed };
	double bytes = 1073741824.0;
	capsim_coll_point p;
	if (capsim_eval_collectives(s, &req, &bytes, 1, &p, &d) < 0) {
		capsim_diags_print(&d, stderr);
		_exit(3);
	}
	snprintf(what, len, "%.4f ms, %llu flows, %zu classes", p.r.time_s * 1e3,
		 (unsigned long long)p.r.flows, p.r.folded ? p.r.flow_classes : 0);
	return 0;
}

static void run_case(const bench_case *c, int repeats)
{
	int pipe_fd[2];
	if (pipe(pipe_fd) < 0) {
		perror("pipe");
		exit(1);
	}
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(1);
	}
	if (pid == 0) {
		close(pipe_fd[0]);
		capsim_init();
		capsim_catalog *cat = capsim_catalog_create();
		capsim_diags d = { 0 };
		if (capsim_catalog_load_root(cat, CAPSIM_SOURCE_DIR, NULL, &d) < 0) {
			capsim_diags_print(&d, stderr);
			_exit(1);
		}
		char path[1024];
		snprintf(path, sizeof path, "%s/%s", CAPSIM_SOURCE_DIR, c->file);
		capsim_scenario *s = calloc(1, sizeof *s);
		if (!s || capsim_scenario_load(path, cat, c->sets, c->n_sets, s, &d) < 0) {
			capsim_diags_print(&d, stderr);
			_exit(1);
		}
		double *v = calloc((size_t)repeats, sizeof *v);
		char what[160] = "";
		for (int k = 0; k < repeats; k++) {
			double t0 = cpu_s();
			eval_once(c, s, what, sizeof what);
			v[k] = cpu_s() - t0;
		}
		qsort(v, (size_t)repeats, sizeof *v, cmp_double);
		char line[512];
		int n = snprintf(line, sizeof line, "%.4f %.4f %.4f %s", v[repeats / 2], v[0],
				 v[repeats - 1], what);
		if (write(pipe_fd[1], line, (size_t)n) != n)
			_exit(1);
		_exit(0);
	}
	close(pipe_fd[1]);
	char buf[512] = "";
	ssize_t got = 0, r;
	while ((r = read(pipe_fd[0], buf + got, sizeof buf - 1 - (size_t)got)) > 0)
		got += r;
	buf[got > 0 ? got : 0] = '\0';
	close(pipe_fd[0]);
	int status;
	struct rusage ru;
	if (wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status)) {
		fprintf(stderr, "bench_scale: case '%s' crashed\n", c->name);
		exit(1);
	}
	if (WEXITSTATUS(status) == 3) { /* refused: the reason is on stderr */
		printf("%-44s %10s %10s %10s %9.1f  refused\n", c->name, "-", "-", "-",
		       ru.ru_maxrss / 1024.0);
		fflush(stdout);
		return;
	}
	if (WEXITSTATUS(status)) {
		fprintf(stderr, "bench_scale: case '%s' failed\n", c->name);
		exit(1);
	}
	double med, lo, hi;
	char what[256] = "";
	if (sscanf(buf, "%lf %lf %lf %255[^\n]", &med, &lo, &hi, what) < 3) {
		fprintf(stderr, "bench_scale: case '%s' gave no figures\n", c->name);
		exit(1);
	}
	printf("%-44s %10.4f %10.4f %10.4f %9.1f  %s\n", c->name, med, lo, hi,
	       ru.ru_maxrss / 1024.0, what);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	int repeats = argc > 1 ? atoi(argv[1]) : 5;
	if (repeats < 1) {
		fprintf(stderr, "usage: bench_scale [repeats]\n");
		return 2;
	}
	const char *l405 = "tests/bench/llama405b-16k.xml";
	/* past 8,192 nodes of 8 rails, 3 tiers of 64-port QM9700s run out of
	 * ports (k^3/4 in all): the largest cases take switches of the same
	 * speed and 128 ports (as a 51.2 Tb/s switch has at 400 Gb/s), whose 3
	 * tiers hold 128^3/4 = 524,288 ports, in whole leaves and pods */
#define RADIX128 { "cluster.fabric.switch.ports.count", "128" }
	const bench_case cases[] = {
		{ "405B step, 2,048 GPUs", l405,
		  { { "cluster.nodes", "256" }, { "workload.global-batch", "256" } }, 2, -1, -1 },
		{ "405B step, 16,384 GPUs", l405, { { 0 } }, 0, -1, -1 },
		{ "405B step, 131,072 GPUs", l405,
		  { { "cluster.nodes", "16384" }, { "workload.global-batch", "16384" }, RADIX128 }, 3, -1,
		  -1 },
		{ "405B step, 524,288 GPUs (3 tiers)", l405,
		  { { "cluster.nodes", "65536" }, { "workload.global-batch", "65536" }, RADIX128 }, 3, -1,
		  -1 },
		{ "70B ZeRO-3 tp8 pp2 dp1024, 16,384 GPUs", "scenarios/default.xml",
		  { { "cluster.nodes", "2048" }, { "cluster.fabric.tiers", "3" },
		    { "workload.parallelism.tp", "8" }, { "workload.parallelism.pp", "2" },
		    { "workload.parallelism.zero", "3" }, { "workload.global-batch", "2048" } }, 6,
		  -1, -1 },
		{ "all-reduce 1 GiB, 131,072 ranks, folded", l405,
		  { { "cluster.nodes", "16384" }, RADIX128 }, 2, CAPSIM_COLL_ALLREDUCE, -1 },
		{ "all-reduce 1 GiB, 131,072 ranks, unfolded", l405,
		  { { "cluster.nodes", "16384" }, RADIX128 }, 2, CAPSIM_COLL_ALLREDUCE, 0 },
		{ "all-to-all 1 GiB, 16,384 ranks, D-mod-K", l405,
		  { { "cluster.fabric.routing", "deterministic" } }, 1, CAPSIM_COLL_ALLTOALL, -1 },
	};
	printf("%-44s %10s %10s %10s %9s  %s\n", "case", "median s", "min s", "max s",
	       "peak MiB", "result");
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		run_case(&cases[i], repeats);
	return 0;
}
