/* bench_fabric.c - how simulation time grows with the cluster: a 1 GiB
 * all-reduce from 64 to 16,384 H100s (rail-optimised fat tree, 3 tiers past
 * 256 nodes), folded and unfolded; and the rate of max-min re-solves with
 * 1e4 to 1e5 concurrent flows in one component.
 *
 * Usage: bench_fabric [repeats]   (medians of `repeats` runs, default 5)
 * Results go to docs/performance.md with the machine and the command. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

#include "catalog.h"
#include "collective.h"
#include "fabric.h"
#include "flow.h"
#include "scenario.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static capsim_scenario *load(capsim_catalog *cat, int nodes, int tiers,
			     const char *over)
{
	char text[1024];
	snprintf(text, sizeof text,
		 "<scenario name=\"bench\"><cluster nodes=\"%d\"><node ref=\"dgx-h100\"/>"
		 "<fabric topology=\"%s\" tiers=\"%d\" transport=\"infiniband\" "
		 "routing=\"adaptive\" oversubscription=\"%s\"><switch ref=\"qm9700\"/>"
		 "</fabric></cluster><workload seq-len=\"4096\" global-batch=\"%d\" "
		 "tokens=\"1T\" dtype=\"bf16\"><model ref=\"llama-2-7b\"/></workload>"
		 "</scenario>",
		 nodes, nodes > 1 ? "fat-tree" : "none", tiers, over, nodes * 8);
	capsim_scenario *s = malloc(sizeof *s);
	capsim_diags d = { 0 };
	if (capsim_scenario_load_memory(text, strlen(text), "bench.xml", cat, NULL, 0, s, &d)) {
		capsim_diags_print(&d, stderr);
		exit(1);
	}
	capsim_diags_free(&d);
	return s;
}

static void cpu_model(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	snprintf(buf, len, "unknown CPU");
	if (!f)
		return;
	char line[512];
	while (fgets(line, sizeof line, f))
		if (strncmp(line, "model name", 10) == 0) {
			char *c = strchr(line, ':');
			if (c) {
				snprintf(buf, len, "%s", c + 2);
				buf[strcspn(buf, "\n")] = '\0';
			}
			break;
		}
	fclose(f);
}

int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 5;
	if (reps < 1)
		reps = 1;
	char cpu[256];
	struct utsname u;
	uname(&u);
	cpu_model(cpu, sizeof cpu);
	printf("# machine: %s, %s %s\n", cpu, u.sysname, u.release);

	capsim_catalog *cat = capsim_catalog_create();
	capsim_diags d = { 0 };
	if (capsim_catalog_load_root(cat, CAPSIM_SOURCE_DIR, NULL, &d) < 0) {
		capsim_diags_print(&d, stderr);
		return 1;
	}

	printf("\n## 1 GiB all-reduce (NCCL's choice, Simple) on DGX H100, QM9700 fat tree\n");
	printf("| GPUs | tiers | flows | folded classes | folded (s, median) | unfolded (s, median) | simulated time |\n");
	printf("|---:|---:|---:|---:|---:|---:|---:|\n");
	static const int gpus[] = { 64, 256, 1024, 4096, 16384 };
	for (size_t i = 0; i < sizeof gpus / sizeof gpus[0]; i++) {
		int nodes = gpus[i] / 8;
		/* the fewest tiers that build it: 2 tiers of 64-port switches
		 * connect at most 256 rail-optimised nodes at 1:1 */
		int tiers = nodes > 256 ? 3 : 2;
		capsim_scenario *s = load(cat, nodes, tiers, "1:1");
		double tf[16], tu[16], sim = 0;
		uint64_t flows = 0;
		size_t classes = 0;
		for (int fold = 1; fold >= 0; fold--)
			for (int r = 0; r < reps && r < 16; r++) {
				double t0 = now_s();
				capsim_fabric *f = capsim_fabric_build(s, &d);
				capsim_coll_req q = { .op = CAPSIM_COLL_ALLREDUCE, .bytes = 1073741824.0,
						      .ranks = gpus[i], .algo = -1,
						      .proto = CAPSIM_PROTO_SIMPLE, .fold = fold };
				capsim_coll_result out;
				capsim_collective_run(f, s, &q, &out, &d);
				capsim_fabric_destroy(f);
				double t = now_s() - t0;
				(fold ? tf : tu)[r] = t;
				sim = out.time_s;
				flows = out.flows;
				if (fold)
					classes = out.flow_classes;
			}
		printf("| %d | %d | %llu | %zu | %.4f | %.4f | %.3f ms |\n", gpus[i], tiers,
		       (unsigned long long)flows, classes, median(tf, reps < 16 ? reps : 16),
		       median(tu, reps < 16 ? reps : 16), sim * 1e3);
		fflush(stdout);
		free(s);
	}

	printf("\n## max-min re-solves: one component of N flows (random GPU pairs, 256 DGX H100, 2:1)\n");
	printf("| concurrent flows | re-solves/s (median) | flows visited/s (median) |\n");
	printf("|---:|---:|---:|\n");
	capsim_scenario *s = load(cat, 256, 2, "2:1");
	static const int nflows[] = { 10000, 30000, 100000 };
	for (size_t i = 0; i < sizeof nflows / sizeof nflows[0]; i++) {
		double rate[16], vrate[16];
		for (int r = 0; r < reps && r < 16; r++) {
			capsim_fabric *f = capsim_fabric_build(s, &d);
			capsim_flownet *net = capsim_fabric_net(f);
			uint64_t x = 0x9e3779b97f4a7c15ULL + (uint64_t)r;
			int links[32];
			double lat;
			capsim_flownet_hold(net, 1);
			for (int k = 0; k < nflows[i]; k++) {
				x ^= x << 13; x ^= x >> 7; x ^= x << 17;
				int a = (int)(x % 2048), b = (int)((x >> 20) % 2048);
				size_t n = capsim_fabric_route(f, a, b, x, links, 32, &lat);
				capsim_flownet_start(net, links, n, 1e9, 1, 0);
			}
			capsim_flownet_hold(net, 0);
			/* each stop-and-start re-solves the whole component */
			int ops = 20;
			uint64_t v0 = capsim_flownet_solve_visits(net);
			double t0 = now_s();
			for (int k = 0; k < ops; k++) {
				capsim_flownet_stop(net, k);
				x ^= x << 13; x ^= x >> 7; x ^= x << 17;
				size_t n = capsim_fabric_route(f, (int)(x % 2048), (int)((x >> 20) % 2048), x,
							       links, 32, &lat);
				capsim_flownet_start(net, links, n, 1e9, 1, 0);
			}
			double t = now_s() - t0;
			rate[r] = 2 * ops / t;
			vrate[r] = (double)(capsim_flownet_solve_visits(net) - v0) / t;
			capsim_fabric_destroy(f);
		}
		printf("| %d | %.1f | %.3g |\n", nflows[i], median(rate, reps < 16 ? reps : 16),
		       median(vrate, reps < 16 ? reps : 16));
		fflush(stdout);
	}
	free(s);
	capsim_diags_free(&d);
	capsim_catalog_free(cat);
	return 0;
}
