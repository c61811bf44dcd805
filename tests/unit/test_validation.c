/* test_validation.c - capsim's collective predictions against published
 * nccl-tests bus bandwidths (tests/data/reference/collectives.csv, each row
 * with its source and the tolerance it is held to). Prints the table of
 * docs/validation.md; fails when a row leaves its tolerance. */
#include "catalog.h"
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "collective.h"
#include "fabric.h"
#include "scenario.h"
#include "units.h"

TESTUTIL_CATALOG_FIXTURE

typedef struct {
	char id[64], node[64], op[32], bytes[32], algo[32];
	int nodes, ranks;
	double busbw, tol;
	char source[512];
} row;

/* split the first 9 comma-separated fields; the rest is the source */
static int parse_row(char *line, row *r)
{
	char *f[10];
	int n = 0;
	char *p = line;
	f[n++] = p;
	while (n < 10 && (p = strchr(p, ','))) {
		*p++ = '\0';
		f[n++] = p;
	}
	if (n < 10)
		return -1;
	snprintf(r->id, sizeof r->id, "%.63s", f[0]);
	snprintf(r->node, sizeof r->node, "%.63s", f[1]);
	r->nodes = atoi(f[2]);
	r->ranks = atoi(f[3]);
	snprintf(r->op, sizeof r->op, "%.31s", f[4]);
	snprintf(r->bytes, sizeof r->bytes, "%.31s", f[5]);
	snprintf(r->algo, sizeof r->algo, "%.31s", f[6]);
	r->busbw = atof(f[7]);
	r->tol = atof(f[8]);
	snprintf(r->source, sizeof r->source, "%.511s", f[9]);
	r->source[strcspn(r->source, "\n")] = '\0';
	return 0;
}

static double predict(const row *w, int *algo_out)
{
	char text[2048];
	int per_node = w->ranks / w->nodes;
	int whole = per_node >= 8;
	snprintf(text, sizeof text,
		 "<scenario name=\"v\"><cluster nodes=\"%d\"><node ref=\"%s\"/>"
		 "<fabric topology=\"%s\" transport=\"infiniband\" routing=\"adaptive\">"
		 "<switch ref=\"qm9700\"/></fabric></cluster>"
		 "<workload seq-len=\"4096\" global-batch=\"%d\" tokens=\"1T\" dtype=\"bf16\">"
		 "<model ref=\"llama-2-7b\"/></workload></scenario>",
		 w->nodes, w->node, w->nodes > 1 ? "fat-tree" : "none", w->nodes * 64);
	/* fewer ranks than a node's GPUs on several nodes: nodes of that many
	 * GPUs, one rail (NIC) each */
	char cnt[16];
	snprintf(cnt, sizeof cnt, "%d", per_node);
	capsim_set sets[3] = {
		{ "cluster.node.gpus.count", cnt },
		{ "cluster.node.scale-up.domain-gpus", cnt },
		{ "cluster.fabric.rails", "1" },
	};
	size_t nsets = (w->nodes > 1 && !whole) ? 3 : 0;
	capsim_scenario *s = malloc(sizeof *s);
	capsim_diags d = { 0 };
	if (capsim_scenario_load_memory(text, strlen(text), "v.xml", cat, sets, nsets, s, &d)) {
		capsim_diags_print(&d, stderr);
		fail_msg("%s: scenario does not load", w->id);
	}
	capsim_fabric *f = capsim_fabric_build(s, &d);
	double bytes;
	char err[256];
	if (capsim_units_parse(w->bytes, CAPSIM_DIM_BYTES, NULL, &bytes, err, sizeof err))
		fail_msg("%s: %s", w->id, err);
	capsim_coll_req q = { .op = (capsim_coll)capsim_coll_parse(w->op), .bytes = bytes,
			      .ranks = w->ranks, .proto = -1, .fold = 0,
			      .algo = strcmp(w->algo, "auto") == 0 ? -1 :
								 capsim_collective_algo_parse(w->algo) };
	capsim_coll_result out;
	if (capsim_collective_run(f, s, &q, &out, &d)) {
		capsim_diags_print(&d, stderr);
		fail_msg("%s: collective fails", w->id);
	}
	*algo_out = out.algo;
	capsim_fabric_destroy(f);
	capsim_diags_free(&d);
	free(s);
	return out.busbw_bytes_per_s / 1e9;
}

static void test_published_busbw(void **state)
{
	(void)state;
	FILE *in = fopen(CAPSIM_SOURCE_DIR "/tests/data/reference/collectives.csv", "r");
	assert_non_null(in);
	char line[1024];
	int header = 0, rows = 0, bad = 0;
	double sum_abs = 0;
	printf("| case | ranks | op | size | algorithm (capsim) | published busbw GB/s | "
	       "capsim GB/s | error | held to |\n|---|---:|---|---|---|---:|---:|---:|---:|\n");
	while (fgets(line, sizeof line, in)) {
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (!header++)
			continue;
		row w;
		if (parse_row(line, &w) < 0)
			fail_msg("malformed row: %s", line);
		int algo;
		double got = predict(&w, &algo);
		double e = (got - w.busbw) / w.busbw;
		sum_abs += fabs(e);
		rows++;
		printf("| %s | %d | %s | %s | %s | %.1f | %.1f | %+.1f%% | %.0f%% |\n", w.id,
		       w.ranks, w.op, w.bytes, capsim_collective_algo_name(algo), w.busbw, got,
		       100 * e, 100 * w.tol);
		if (fabs(e) > w.tol) {
			fprintf(stderr, "%s: capsim %.1f GB/s, published %.1f GB/s (%+.1f%%, held to %.0f%%)\n",
				w.id, got, w.busbw, 100 * e, 100 * w.tol);
			bad++;
		}
	}
	fclose(in);
	printf("\nmean absolute error over %d rows: %.1f%%\n", rows, 100 * sum_abs / rows);
	assert_true(rows >= 10);
	assert_int_equal(bad, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_published_busbw),
	};
	return cmocka_run_group_tests_name("validation", tests, setup, teardown);
}
