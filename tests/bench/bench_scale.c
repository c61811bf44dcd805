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
 * With --scenarios: every shipped scenario (the .xml files of scenarios/) as
 * shipped, then at 1,024, 16,384, 131,072 and 524,288 GPUs, `capsim run` without the scaling
 * reference: nodes to the GPU count (whole NVLink domains), the data-parallel
 * size and the global batch grown with it (each replica keeps its
 * micro-batches), on one fabric for all: a 3-tier fat tree of the
 * scenario's switch (a QM9700 where it has none) with 128 ports
 * (128^3/4 = 524,288 ports, the largest case whole): at its own speed, or
 * where it switches 51.2 Tb/s or more in fewer ports (the SN5600) split to
 * 128 at its bandwidth; the scenario's transport, routing and rails.
 *
 * With --scenarios --runs CAPSIM: the same cases, each a whole `capsim run`
 * process of the binary CAPSIM (its start, the catalog's load, the scaling
 * reference, the reliability Monte Carlo and the intervals included), the
 * median of its CPU seconds (user and system) and its peak resident memory.
 *
 * Usage: bench_scale [--scenarios [--runs CAPSIM]] [repeats] [scenario]
 * (default 5; with --scenarios, a scenario's file name runs that one alone)
 * Results go to docs/performance.md with the machine and the command. */
#include <dirent.h>
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
	capsim_set sets[10];
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

/* Where set, each case of --scenarios is also run as a whole `capsim run`
 * process of this binary (what a user waits for: its start, the catalog's
 * load and validation, the scaling reference, the reliability Monte Carlo
 * and the prediction intervals included) */
static const char *capsim_bin;

/* One whole `capsim run` of c, its output thrown away: its CPU seconds
 * (user and system) into *cpu and its peak resident MiB into *mib; -1
 * where it failed */
static int run_process_once(const bench_case *c, double *cpu, double *mib)
{
	char vals[10][160], bin[1024], file[512], run[] = "run", set[] = "--set";
	char *argv[4 + 2 * 10 + 1];
	int n = 0;
	snprintf(bin, sizeof bin, "%s", capsim_bin);
	snprintf(file, sizeof file, "%s", c->file);
	argv[n++] = bin;
	argv[n++] = run;
	argv[n++] = file;
	for (size_t k = 0; k < c->n_sets; k++) {
		snprintf(vals[k], sizeof vals[k], "%s=%s", c->sets[k].path, c->sets[k].value);
		argv[n++] = set;
		argv[n++] = vals[k];
	}
	argv[n] = NULL;
	fflush(stdout); /* the child's freopen would write what is buffered */
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(1);
	}
	if (pid == 0) {
		if (chdir(CAPSIM_SOURCE_DIR) < 0 || !freopen("/dev/null", "w", stdout) ||
		    !freopen("/dev/null", "w", stderr))
			_exit(127);
		execv(bin, argv);
		_exit(127);
	}
	int status;
	struct rusage ru;
	if (wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
		return -1;
	*cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
	*mib = ru.ru_maxrss / 1024.0;
	return 0;
}

/* c as `repeats` whole `capsim run` processes: the median CPU seconds, the
 * least and most, and the largest peak resident memory */
static void run_process(const bench_case *c, int repeats)
{
	double *v = calloc((size_t)repeats, sizeof *v), peak = 0.0;
	for (int k = 0; k < repeats; k++) {
		double mib;
		if (run_process_once(c, &v[k], &mib) < 0) {
			printf("%-44s %10s %10s %10s %9s  failed (capsim run exits non-zero)\n",
			       c->name, "-", "-", "-", "-");
			free(v);
			return;
		}
		if (mib > peak)
			peak = mib;
	}
	qsort(v, (size_t)repeats, sizeof *v, cmp_double);
	printf("%-44s %10.4f %10.4f %10.4f %9.1f  capsim run\n", c->name, v[repeats / 2], v[0],
	       v[repeats - 1], peak);
	fflush(stdout);
	free(v);
}

static void run_case(const bench_case *c, int repeats)
{
	if (capsim_bin) {
		run_process(c, repeats);
		return;
	}
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
			_exit(3); /* refused: printed as such */
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

/* ---- every shipped scenario as the cluster grows ---- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* the .xml files of scenarios/, sorted, into names (malloc'd); returns how many */
static size_t shipped(char ***names)
{
	char dir[1024];
	snprintf(dir, sizeof dir, "%s/scenarios", CAPSIM_SOURCE_DIR);
	DIR *dp = opendir(dir);
	if (!dp) {
		perror(dir);
		exit(1);
	}
	size_t n = 0, cap = 0;
	*names = NULL;
	for (struct dirent *e; (e = readdir(dp));) {
		size_t len = strlen(e->d_name);
		if (len < 5 || strcmp(e->d_name + len - 4, ".xml"))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 32;
			*names = realloc(*names, cap * sizeof **names);
		}
		(*names)[n] = malloc(len + 1);
		memcpy((*names)[n++], e->d_name, len + 1);
	}
	closedir(dp);
	qsort(*names, n, sizeof **names, cmp_str);
	return n;
}

/* what a scenario is at its own size: GPUs a node, an NVLink domain's
 * nodes, nodes, data-parallel size and global batch (from a step of it) */
typedef struct {
	int gpn, domain_nodes, nodes, dp;
	int switched; /* the scenario names a switch (else the bench's is qm9700) */
	int rails;    /* the rails its fabric gives a node */
	double gb;
	char split[32]; /* the speed of its switch's ports split to 128, or "" */
} base_size;

static int base_of(const char *file, base_size *b)
{
	capsim_init();
	capsim_catalog *cat = capsim_catalog_create();
	capsim_diags d = { 0 };
	char path[1024];
	snprintf(path, sizeof path, "%s/%s", CAPSIM_SOURCE_DIR, file);
	capsim_scenario *s = calloc(1, sizeof *s);
	capsim_result r;
	capsim_eval_opts o = { .no_reference = 1 };
	int rc = -1;
	if (capsim_catalog_load_root(cat, CAPSIM_SOURCE_DIR, NULL, &d) == 0 &&
	    capsim_scenario_load(path, cat, NULL, 0, s, &d) == 0 && capsim_eval(s, &o, &r, &d) == 0) {
		b->gpn = s->node.gpus;
		b->domain_nodes = s->node.domain_gpus > s->node.gpus ?
					  s->node.domain_gpus / s->node.gpus : 1;
		b->switched = s->switch_ref[0] != '\0';
		b->rails = s->rails ? s->rails : s->node.nics;
		/* a switch of 51.2 Tb/s or more in fewer than 128 ports (the
		 * SN5600's 64 x 800 Gb/s) is sold split to 128 at its bandwidth
		 * over 128 (400 Gb/s): that switch, not one of twice its
		 * bandwidth */
		double bw = s->fabric_switch.ports * s->fabric_switch.port_speed_bytes_per_s;
		b->split[0] = '\0';
		if (b->switched && s->fabric_switch.ports < 128 && bw >= 51.2e12 / 8 * (1 - 1e-9))
			snprintf(b->split, sizeof b->split, "%.0f Gb/s", bw / 128 * 8e-9);
		b->nodes = r.nodes;
		b->dp = r.dp;
		b->gb = r.global_batch;
		capsim_result_free(&r);
		rc = 0;
	}
	capsim_diags_print(&d, stderr);
	capsim_diags_free(&d);
	free(s);
	capsim_catalog_free(cat);
	return rc;
}

static void scenarios_at_scale(int repeats, const char *only)
{
	static const long sizes[] = { 1024, 16384, 131072, 524288 };
	char **names;
	size_t n = shipped(&names);
	printf("%-44s %10s %10s %10s %9s  %s\n", "scenario, GPUs", "median s", "min s", "max s",
	       "peak MiB", "result");
	for (size_t i = 0; i < n; i++) {
		char file[512];
		if (only && strcmp(only, names[i]) != 0) {
			free(names[i]);
			continue;
		}
		snprintf(file, sizeof file, "scenarios/%s", names[i]);
		base_size b;
		if (base_of(file, &b) < 0) {
			printf("%-44s  does not run at its own size\n", names[i]);
			free(names[i]);
			continue;
		}
		/* first as shipped: its own size and fabric */
		char own[96];
		snprintf(own, sizeof own, "%s, %ld (as shipped)", names[i], (long)b.nodes * b.gpn);
		const bench_case shipped_case = { own, file, { { 0 } }, 0, -1, -1 };
		run_case(&shipped_case, repeats);
		for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
			long unit = (long)b.gpn * b.domain_nodes;
			long units = sizes[k] / unit > 0 ? sizes[k] / unit : 1;
			long nodes = units * b.domain_nodes;
			long dp = (long)((double)b.dp * nodes / b.nodes);
			char v_nodes[24], v_dp[24], v_gb[32], name[96];
			snprintf(v_nodes, sizeof v_nodes, "%ld", nodes);
			snprintf(v_dp, sizeof v_dp, "%ld", dp);
			snprintf(v_gb, sizeof v_gb, "%.0f", b.gb / b.dp * (double)dp);
			snprintf(name, sizeof name, "%s, %ld", names[i], nodes * b.gpn);
			bench_case c = { name, file,
					 { { "cluster.nodes", v_nodes },
					   { "workload.parallelism.dp", v_dp },
					   { "workload.global-batch", v_gb },
					   { "cluster.fabric.topology", "fat-tree" },
					   { "cluster.fabric.tiers", "3" },
					   { "cluster.fabric.switch.ports.count", "128" },
					   { "cluster.fabric.switch.ref", "qm9700" } },
					 b.switched ? 6 : 7, -1, -1 };
			if (!b.switched) /* the switch first, then its ports */
				c.sets[5] = (capsim_set){ "cluster.fabric.switch.ref", "qm9700" },
				c.sets[6] = (capsim_set){ "cluster.fabric.switch.ports.count", "128" };
			/* a node cut down to fewer GPUs than rails (one GPU of a
			 * DGX) takes a rail a GPU: 131,072 such nodes of 8 rails
			 * would need twice the ports 3 tiers of 128 give */
			if (b.split[0])
				c.sets[c.n_sets++] =
					(capsim_set){ "cluster.fabric.switch.ports.speed", b.split };
			char v_rails[16];
			if (b.rails > b.gpn) {
				snprintf(v_rails, sizeof v_rails, "%d", b.gpn);
				c.sets[c.n_sets++] = (capsim_set){ "cluster.fabric.rails", v_rails };
			}
			run_case(&c, repeats);
		}
		free(names[i]);
	}
	free(names);
}

int main(int argc, char **argv)
{
	int scen = argc > 1 && strcmp(argv[1], "--scenarios") == 0;
	if (scen && argc > 3 && strcmp(argv[2], "--runs") == 0) {
		capsim_bin = argv[3];
		argv += 2;
		argc -= 2;
	}
	int repeats = argc > 1 + scen ? atoi(argv[1 + scen]) : 5;
	if (repeats < 1 || (capsim_bin && access(capsim_bin, X_OK) < 0)) {
		fprintf(stderr, "usage: bench_scale [--scenarios [--runs CAPSIM]] [repeats] "
				"[scenario]\n");
		return 2;
	}
	if (scen) {
		scenarios_at_scale(repeats, argc > 3 ? argv[3] : NULL);
		return 0;
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
