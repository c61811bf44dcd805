/* test_loader.c - the data loader against closed forms: the pipeline of
 * workers and prefetch (steady-state stall max(0, read - step), the
 * training process reading between steps, the first batch when all workers
 * start at once), and one step's data under each of a tier's limits
 * (aggregate and per-client bandwidth, IOPS, the shared metadata rate),
 * through to the step time. */
#include "catalog.h"
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "eval.h"
#include "loader.h"
#include "scenario.h"

TESTUTIL_CATALOG_FIXTURE

/* Steady state: a loader that reads a step's data faster than the step
 * hides it whatever the workers; a slower one stalls each step by the
 * difference, as its throughput (one batch per read_s, shared by the
 * batches in flight) sets the pace. */
static void test_pipeline_closed_forms(void **state)
{
	(void)state;
	static const int workers[] = { 1, 2, 4, 8 };
	static const int prefetch[] = { 1, 2, 4 };
	for (size_t w = 0; w < sizeof workers / sizeof workers[0]; w++)
		for (size_t p = 0; p < sizeof prefetch / sizeof prefetch[0]; p++) {
			int W = workers[w], P = prefetch[p], steps = 4 * W * P + 8;
			double first;
			double hid = capsim_loader_pipeline(0.3, 1.0, W, P, steps, &first);
			assert_true(hid < 1e-12);
			/* all W workers start at once and share the rate, so the
			 * first batch arrives after W reads' worth */
			assert_rel(first, 0.3 * W, 1e-12);
			double stall = capsim_loader_pipeline(1.5, 1.0, W, P, steps, &first);
			assert_rel(stall, 0.5, 1e-9);
		}
	/* no workers: the training process reads each batch between steps */
	double first;
	assert_rel(capsim_loader_pipeline(0.3, 1.0, 0, 2, 10, &first), 0.3, 1e-12);
	assert_rel(first, 0.3, 1e-12);
	/* nothing to read */
	assert_true(capsim_loader_pipeline(0.0, 1.0, 2, 2, 10, &first) == 0.0);
}

static capsim_scenario *load_tier(const char *tier, const capsim_set *sets, size_t n)
{
	char text[1024];
	snprintf(text, sizeof text,
		"<scenario name=\"d\"><cluster nodes=\"4\"><node ref=\"dgx-h100\"/>"
		"<fabric topology=\"fat-tree\" transport=\"infiniband\" routing=\"adaptive\">"
		"<switch ref=\"qm9700\"/></fabric><storage dataset=\"2 TB\">%s"
		"</storage></cluster>"
		"<workload seq-len=\"4096\" global-batch=\"64\" tokens=\"1T\" dtype=\"bf16\">"
		"<model ref=\"llama-3.1-8b\"/><parallelism tp=\"8\" pp=\"2\" zero=\"1\" "
		"sequence-parallel=\"on\"/></workload></scenario>", tier);
	capsim_scenario *s = malloc(sizeof *s);
	capsim_diags d = { 0 };
	int rc = capsim_scenario_load_memory(text, strlen(text), "d.xml", cat, sets, n, s, &d);
	capsim_diags_print(&d, stderr);
	capsim_diags_free(&d);
	if (rc != 0)
		fail_msg("scenario does not load");
	return s;
}

static capsim_scenario *load(const capsim_set *sets, size_t n)
{
	return load_tier("<shared ref=\"weka\"/>", sets, n);
}

/* One step's data: 64 x 4096 tokens, int32 (Llama 3.1's vocabulary does not
 * fit uint16), inputs by stage 0 and labels by stage 1: 2 MiB x 2; 4 nodes,
 * 2 a stage, all read. Under each limit of WEKA's 8-node WEKApod (568 GB/s,
 * 18M read IOPS) and a metadata rate given here. */
static void test_plan_limits(void **state)
{
	(void)state;
	const capsim_set sets[] = {
		{ "cluster.storage.shard-size", "64 KiB" },
		{ "cluster.storage.shared.metadata.rate", "10k ops/s" },
	};
	capsim_scenario *s = load(sets, 2);
	capsim_loader l;
	double tokens = 64.0 * 4096;
	capsim_loader_plan(s, tokens, &l);
	double bytes = tokens * 4 * 2;
	assert_true(l.has_loader && l.shared);
	assert_int_equal(l.clients, 4);
	assert_rel(l.bytes_per_step, bytes, 1e-12);
	assert_rel(l.files_per_step, bytes / 65536, 1e-12);
	/* a 64 KiB file is one 128 KiB request */
	assert_rel(l.reads_per_step, bytes / 65536, 1e-12);
	assert_rel(l.limit_s[CAPSIM_LOAD_AGGREGATE], bytes / 568e9, 1e-9);
	assert_rel(l.limit_s[CAPSIM_LOAD_IOPS], bytes / 65536 / 18e6, 1e-9);
	/* one metadata operation a file: the catalog's rates are mdtest-hard-read
	 * files a second */
	assert_rel(l.limit_s[CAPSIM_LOAD_METADATA], bytes / 65536 / 10e3, 1e-9);
	assert_int_equal(l.bound, CAPSIM_LOAD_METADATA);
	assert_rel(l.read_s, 32.0 / 10e3, 1e-9);
	assert_rel(l.epochs, 1e12 * 4 / 2e12, 1e-12);
	free(s);

	/* memory-mapped (no shard size): no file opened a step, requests of
	 * 128 KiB, bandwidth binds */
	s = load(NULL, 0);
	capsim_loader_plan(s, tokens, &l);
	assert_true(l.files_per_step == 0);
	assert_rel(l.reads_per_step, bytes / 131072, 1e-12);
	assert_int_equal(l.bound, CAPSIM_LOAD_AGGREGATE);
	free(s);

	/* a per-client limit, and uint16 tokens by the scenario */
	const capsim_set client[] = {
		{ "cluster.storage.shared.bandwidth.per-client-read", "1 GB/s" },
		{ "cluster.storage.bytes-per-token", "2 B" },
	};
	s = load(client, 2);
	capsim_loader_plan(s, tokens, &l);
	assert_rel(l.limit_s[CAPSIM_LOAD_CLIENT], tokens * 2 * 2 / 4 / 1e9, 1e-9);
	assert_int_equal(l.bound, CAPSIM_LOAD_CLIENT);
	free(s);

	/* each node's own drives: 8 pipeline stages on 4 nodes, every node reads */
	const capsim_set local[] = {
		{ "workload.parallelism.tp", "4" },
		{ "workload.parallelism.pp", "8" },
	};
	s = load_tier("<local ref=\"local-nvme-raid0\"/>", local, 2);
	capsim_loader_plan(s, tokens, &l);
	assert_false(l.shared);
	assert_int_equal(l.clients, 4);
	assert_rel(l.read_s, bytes / 4 / 55.2e9, 1e-9);
	assert_int_equal(l.bound, CAPSIM_LOAD_CLIENT);
	free(s);
}

/* Through to the step: small files on a slow metadata service stall every
 * step by what reading takes beyond the step; more workers do not help a
 * shared limit. */
static void test_stall_reaches_step(void **state)
{
	(void)state;
	capsim_set sets[] = {
		{ "cluster.storage.shard-size", "64 KiB" },
		{ "cluster.storage.shared.metadata.rate", "10k ops/s" },
		{ "cluster.storage.loader-workers", "2" },
		{ "cluster.storage.metadata-ops-per-file", "1" },
	};
	capsim_scenario *s = load(sets, 2);
	capsim_result hid;
	capsim_diags d = { 0 };
	assert_int_equal(capsim_eval(s, &(capsim_eval_opts){ .no_reference = 1 }, &hid, &d), 0);
	free(s);
	double compute = hid.step.step_time_s - hid.step.data_stall_s;
	sets[1].value = "20 ops/s"; /* 32 files x 2 ops: 3.2 s a step */
	sets[3].value = "2";
	s = load(sets, 4);
	capsim_result slow;
	assert_int_equal(capsim_eval(s, &(capsim_eval_opts){ .no_reference = 1 }, &slow, &d), 0);
	free(s);
	double read = 32.0 * 2 / 20;
	assert_rel(slow.step.data_read_s, read, 1e-9);
	assert_true(read > compute);
	assert_rel(slow.step.data_stall_s, read - compute, 1e-6);
	assert_rel(slow.step.step_time_s, read, 1e-6);
	assert_string_equal(slow.data_bound, "metadata");
	sets[2].value = "8";
	s = load(sets, 4);
	capsim_result more;
	assert_int_equal(capsim_eval(s, &(capsim_eval_opts){ .no_reference = 1 }, &more, &d), 0);
	free(s);
	assert_rel(more.step.step_time_s, slow.step.step_time_s, 1e-9);
	assert_rel(more.step.loader.first_batch_s, 8 * read, 1e-9);
	capsim_result_free(&hid);
	capsim_result_free(&slow);
	capsim_result_free(&more);
	capsim_diags_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pipeline_closed_forms),
		cmocka_unit_test(test_plan_limits),
		cmocka_unit_test(test_stall_reaches_step),
	};
	capsim_init();
	return testutil_run_group(tests, setup, teardown);
}
