/* test_expect.c - monitoring baselines (src/verify/expect.h): the rows and
 * thresholds of a scenario against the collective model run directly, the
 * Prometheus rules parsed as YAML (libyaml) and read back to the same
 * thresholds as the JSON, nccl-tests logs (tests/data/nccl-tests/) passing
 * and failing against them at their rows, and bad baseline files refused at
 * their line and field. */
#include "catalog.h"
#include "scenario.h"
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <yaml.h>

#include "collective.h"
#include "expect.h"
#include "nccltests.h"

#define LOGS CAPSIM_SOURCE_DIR "/tests/data/nccl-tests/"
#define NDR CAPSIM_SOURCE_DIR "/scenarios/h100-8node-ndr.xml"

TESTUTIL_CATALOG_FIXTURE

static char dir[64];

static capsim_scenario *load_ndr(void)
{
	capsim_scenario *s = malloc(sizeof *s);
	capsim_diags d = { 0 };
	int rc = capsim_scenario_load(NDR, cat, NULL, 0, s, &d);
	capsim_diags_print(&d, stderr);
	capsim_diags_free(&d);
	assert_int_equal(rc, 0);
	return s;
}

/* all_reduce and all_gather at 16 ranks (two nodes) and 8, 512 MiB to 8 GiB,
 * threshold 0.75, with the workload */
static void build(const capsim_scenario *s, int workload, capsim_expect *e)
{
	static const double sizes[] = { 536870912.0, 1073741824.0, 2147483648.0, 4294967296.0,
					8589934592.0 };
	static const int ranks[] = { 16, 8 };
	capsim_expect_opts o = { .fraction = 0.75, .sizes = sizes, .n_sizes = 5, .ranks = ranks,
				 .n_ranks = 2, .workload = workload };
	o.ops[CAPSIM_COLL_ALLREDUCE] = o.ops[CAPSIM_COLL_ALLGATHER] = 1;
	capsim_diags d = { 0 };
	int rc = capsim_expect_build(s, NULL, &o, e, &d);
	capsim_diags_print(&d, stderr);
	capsim_diags_free(&d);
	assert_int_equal(rc, 0);
}

static void test_rows_follow_the_model(void **state)
{
	(void)state;
	capsim_scenario *s = load_ndr();
	capsim_expect e;
	build(s, 1, &e);
	/* 2 ops x 2 rank counts x 5 sizes, then step, GPU and node power */
	assert_int_equal(e.n, 2 * 2 * 5 + 3);
	assert_int_equal(e.nodes, 8);
	assert_int_equal(e.gpus_per_node, 8);
	const capsim_expect_row *r = &e.rows[0];
	assert_int_equal(r->kind, CAPSIM_EXPECT_BUSBW);
	assert_int_equal(r->op, CAPSIM_COLL_ALLREDUCE);
	assert_int_equal(r->ranks, 16);
	/* the collective model run directly gives the same bus bandwidth */
	capsim_coll_req req = { .op = CAPSIM_COLL_ALLREDUCE, .ranks = 16, .algo = -1, .proto = -1,
				.fold = -1, .seed = (uint64_t)s->seed };
	double bytes = 536870912.0;
	capsim_coll_point p;
	capsim_diags d = { 0 };
	assert_int_equal(capsim_eval_collectives(s, &req, &bytes, 1, &p, &d), 0);
	assert_rel(r->expected, p.r.busbw_bytes_per_s / 1e9, 1e-12);
	assert_rel(r->threshold, 0.75 * r->expected, 1e-12);
	assert_false(r->has_band); /* no error model given */
	/* the workload: step time's threshold above (expected / 0.75), power's below */
	const capsim_expect_row *step = &e.rows[20], *gpu = &e.rows[21], *node = &e.rows[22];
	assert_int_equal(step->kind, CAPSIM_EXPECT_STEP);
	assert_int_equal(gpu->kind, CAPSIM_EXPECT_GPU_POWER);
	assert_int_equal(node->kind, CAPSIM_EXPECT_NODE_POWER);
	assert_rel(step->threshold, step->expected / 0.75, 1e-12);
	assert_rel(gpu->threshold, gpu->expected * 0.75, 1e-12);
	assert_true(step->expected > 0 && gpu->expected > 100);
	assert_true(node->expected > gpu->expected * 8); /* eight GPUs and the host */
	capsim_expect_free(&e);
	free(s);
}

static void test_ranks_past_the_cluster_refused(void **state)
{
	(void)state;
	capsim_scenario *s = load_ndr();
	static const int ranks[] = { 65 };
	double size = 1024;
	capsim_expect_opts o = { .fraction = 0.8, .sizes = &size, .n_sizes = 1, .ranks = ranks,
				 .n_ranks = 1 };
	o.ops[CAPSIM_COLL_ALLREDUCE] = 1;
	capsim_expect e;
	capsim_diags d = { 0 };
	assert_int_equal(capsim_expect_build(s, NULL, &o, &e, &d), -1);
	assert_int_equal(d.n, 1);
	assert_string_equal(d.v[0].where, "--ranks");
	assert_non_null(strstr(d.v[0].msg, "at most the cluster's 64 GPUs, found 65"));
	capsim_diags_free(&d);
	capsim_expect_free(&e);
	free(s);
}

/* by default one node's GPUs, one NVLink domain's where a rack-scale domain
 * spans nodes, and every GPU: GB200 NVL72 trays of 4 GPUs, 144 GPUs in two
 * domains of 72 give 4, 72 and 144; 8 DGX H100 nodes give 8 and 64 */
static void test_default_rank_counts(void **state)
{
	(void)state;
	static const struct {
		const char *file, *nodes;
		size_t n;
		int ranks[3];
	} cases[] = { { "/scenarios/gb200-nvl72-rack.xml", "36", 3, { 4, 72, 144 } },
		      { "/scenarios/h100-8node-ndr.xml", "8", 2, { 8, 64, 0 } } };
	for (size_t c = 0; c < 2; c++) {
		char path[512];
		snprintf(path, sizeof path, "%s%s", CAPSIM_SOURCE_DIR, cases[c].file);
		capsim_set set = { "cluster.nodes", cases[c].nodes };
		capsim_scenario *s = malloc(sizeof *s);
		capsim_diags d = { 0 };
		assert_int_equal(capsim_scenario_load(path, cat, &set, 1, s, &d), 0);
		double size = 1073741824.0;
		capsim_expect_opts o = { .fraction = 0.8, .sizes = &size, .n_sizes = 1 };
		o.ops[CAPSIM_COLL_ALLREDUCE] = 1;
		capsim_expect e;
		assert_int_equal(capsim_expect_build(s, NULL, &o, &e, &d), 0);
		assert_int_equal(e.n, cases[c].n);
		for (size_t i = 0; i < e.n; i++)
			assert_int_equal(e.rows[i].ranks, cases[c].ranks[i]);
		capsim_expect_free(&e);
		capsim_diags_free(&d);
		free(s);
	}
}

/* the rules as libyaml reads them: every rule of every group has alert,
 * expr, for, labels (severity, capsim_check) and annotations; returns the
 * number of rules */
static size_t check_rules_shape(const char *text)
{
	yaml_parser_t p;
	yaml_document_t doc;
	yaml_parser_initialize(&p);
	yaml_parser_set_input_string(&p, (const unsigned char *)text, strlen(text));
	assert_true(yaml_parser_load(&p, &doc));
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	assert_int_equal(root->type, YAML_MAPPING_NODE);
	yaml_node_pair_t *top = root->data.mapping.pairs.start;
	assert_string_equal((char *)yaml_document_get_node(&doc, top->key)->data.scalar.value,
			    "groups");
	yaml_node_t *groups = yaml_document_get_node(&doc, top->value);
	assert_int_equal(groups->type, YAML_SEQUENCE_NODE);
	size_t rules = 0;
	for (yaml_node_item_t *g = groups->data.sequence.items.start;
	     g < groups->data.sequence.items.top; g++) {
		yaml_node_t *gn = yaml_document_get_node(&doc, *g);
		yaml_node_pair_t *kv = gn->data.mapping.pairs.start;
		yaml_node_t *k0 = yaml_document_get_node(&doc, kv[0].key);
		yaml_node_t *k1 = yaml_document_get_node(&doc, kv[1].key);
		assert_string_equal((char *)k0->data.scalar.value, "name");
		assert_string_equal((char *)k1->data.scalar.value, "rules");
		yaml_node_t *rs = yaml_document_get_node(&doc, kv[1].value);
		for (yaml_node_item_t *r = rs->data.sequence.items.start;
		     r < rs->data.sequence.items.top; r++, rules++) {
			yaml_node_t *rn = yaml_document_get_node(&doc, *r);
			static const char *const keys[] = { "alert", "expr", "for", "labels",
							    "annotations" };
			yaml_node_pair_t *first = rn->data.mapping.pairs.start;
			assert_int_equal(rn->data.mapping.pairs.top - first, 5);
			for (int k = 0; k < 5; k++) {
				yaml_node_t *key = yaml_document_get_node(&doc, first[k].key);
				assert_string_equal((char *)key->data.scalar.value, keys[k]);
			}
		}
	}
	yaml_document_delete(&doc);
	yaml_parser_delete(&p);
	return rules;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static char *rules_text(const capsim_expect *e)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(capsim_expect_write_rules(e, f), 0);
	fclose(f);
	return buf;
}

static void test_rules_and_json_read_back(void **state)
{
	(void)state;
	capsim_scenario *s = load_ndr();
	capsim_expect e;
	build(s, 1, &e);
	/* a name with a quote and a colon stays one YAML scalar */
	snprintf(e.scenario, sizeof e.scenario, "o'brien: #1");
	char *yaml = rules_text(&e);
	assert_int_equal(check_rules_shape(yaml), e.n);
	assert_non_null(strstr(yaml, "expr: 'nccl_tests_busbw_gbps{op=\"all_reduce\",ranks=\"16\","
				     "bytes=\"536870912\"} < "));
	assert_non_null(strstr(yaml, "expr: 'avg by (Hostname) (DCGM_FI_DEV_POWER_USAGE) < "));
	assert_non_null(strstr(yaml, "on o''brien: #1;"));
	char rules[128], json[128];
	snprintf(rules, sizeof rules, "%s/rules.yml", dir);
	snprintf(json, sizeof json, "%s/expect.json", dir);
	write_file(rules, yaml);
	json_t *o = capsim_expect_json(&e);
	assert_int_equal(json_dump_file(o, json, JSON_REAL_PRECISION(17)), 0);
	json_decref(o);
	const char *paths[] = { rules, json };
	for (int k = 0; k < 2; k++) {
		capsim_expect b;
		capsim_diags d = { 0 };
		assert_int_equal(capsim_expect_read(paths[k], &b, &d), 0);
		assert_int_equal(b.n, e.n);
		for (size_t i = 0; i < e.n; i++) {
			assert_int_equal(b.rows[i].kind, e.rows[i].kind);
			assert_int_equal(b.rows[i].op, e.rows[i].op);
			assert_int_equal(b.rows[i].ranks, e.rows[i].ranks);
			assert_rel(b.rows[i].bytes + 1, e.rows[i].bytes + 1, 1e-12);
			assert_rel(b.rows[i].threshold, e.rows[i].threshold, 1e-8);
			assert_rel(b.rows[i].expected, e.rows[i].expected, 1e-8);
		}
		capsim_expect_free(&b);
	}
	free(yaml);
	capsim_expect_free(&e);
	free(s);
}

static void check_log(const capsim_expect *e, const char *log, int ranks,
		      capsim_expect_verdict *v, capsim_nccltests_log *lg)
{
	capsim_nccltests_hint hint = { .op = -1, .ranks = ranks };
	capsim_diags d = { 0 };
	assert_int_equal(capsim_nccltests_parse_file(log, &hint, lg, &d), 0);
	assert_int_equal(capsim_expect_check_log(e, lg, v), 0);
}

static void test_logs_against_thresholds(void **state)
{
	(void)state;
	capsim_scenario *s = load_ndr();
	capsim_expect e;
	build(s, 0, &e);
	/* the Nebius log (no rank lines: 16 ranks given), 415-468 GB/s from 512 MiB:
	 * every size has its threshold and reaches it */
	capsim_expect_verdict v;
	capsim_nccltests_log lg;
	check_log(&e, LOGS "h100-2node-nebius-skypilot.log", 16, &v, &lg);
	assert_int_equal(v.n_checked, 5);
	assert_int_equal(v.n_failed, 0);
	assert_true(v.pass);
	capsim_expect_verdict_free(&v);
	capsim_nccltests_free(&lg);
	/* nccl-tests issue 290's two-node log, 144-156 GB/s: the five sizes from
	 * 512 MiB (lines 30-34) fall below, the smaller ones have no threshold */
	check_log(&e, LOGS "h100-2node-issue290.log", 0, &v, &lg);
	assert_int_equal(v.ranks, 16);
	assert_int_equal(v.n_checked, 5);
	assert_int_equal(v.n_failed, 5);
	assert_false(v.pass);
	for (size_t i = 0; i < v.n_checks; i++) {
		const capsim_expect_check *c = &v.checks[i];
		assert_int_equal(c->row != NULL, c->bytes >= 536870912.0);
		if (c->row) {
			assert_false(c->pass);
			assert_true(c->line >= 30 && c->line <= 34);
			assert_true(c->measured < c->row->threshold);
		}
	}
	capsim_expect_verdict_free(&v);
	capsim_nccltests_free(&lg);
	/* the same log at a threshold below its bandwidth passes: the check is
	 * measured >= threshold, row by row */
	for (size_t i = 0; i < e.n; i++)
		e.rows[i].threshold = 140;
	check_log(&e, LOGS "h100-2node-issue290.log", 0, &v, &lg);
	assert_true(v.pass);
	capsim_expect_verdict_free(&v);
	capsim_nccltests_free(&lg);
	capsim_expect_free(&e);
	free(s);
}

/* text refused by capsim_expect_read with want in its one message */
static void refused(const char *text, const char *want)
{
	char path[128];
	snprintf(path, sizeof path, "%s/bad.txt", dir);
	write_file(path, text);
	capsim_expect e;
	capsim_diags d = { 0 };
	assert_int_equal(capsim_expect_read(path, &e, &d), -1);
	assert_true(d.n >= 1);
	char where[256];
	snprintf(where, sizeof where, "%s", d.v[0].where);
	if (!strstr(d.v[0].msg, want) && !strstr(where, want))
		fail_msg("'%s: %s' lacks '%s'", where, d.v[0].msg, want);
	capsim_diags_free(&d);
	capsim_expect_free(&e);
}

static void test_bad_files_refused(void **state)
{
	(void)state;
	refused("{\"threshold\": 0.8}", "rows: expected an array of baselines");
	refused("{\"threshold\": 1.5, \"rows\": []}", "threshold: expected a fraction");
	refused("{\"threshold\": 0.8, \"rows\": [{\"check\": \"busbw\", \"op\": \"allreduce\","
		"\"ranks\": 8, \"bytes\": 1024, \"expected\": 10}]}",
		"rows[0].threshold: expected a number at least 0, found nothing");
	refused("{\"threshold\": 0.8, \"rows\": [{\"check\": \"latency\"}]}",
		"rows[0].check: expected busbw, step_time, gpu_power or node_power, found 'latency'");
	refused("{\"threshold\": 0.8, \"rows\": [{\"check\": \"busbw\", \"op\": \"gather\"}]}",
		"rows[0].op: expected an nccl-tests collective");
	refused("{\"threshold\": 0.8, \"rows\": []}", "expected at least one baseline");
	refused("groups:\n  - name: a\n    rules:\n      - alert: X\n        expr: 'up < 1'\n"
		"        labels:\n          capsim_check: busbw\n          op: all_reduce\n"
		"          ranks: '8'\n          bytes: '1024'\n",
		"expr: expected 'nccl_tests_busbw_gbps ... < THRESHOLD'");
	refused("groups:\n  - name: a\n    rules:\n      - alert: X\n"
		"        expr: 'nccl_tests_busbw_gbps < 3'\n        labels:\n"
		"          capsim_check: busbw\n          op: all_reduce\n          ranks: 'eight'\n"
		"          bytes: '1024'\n", "labels.ranks: expected a whole number");
	refused("groups:\n  - name: a\n    rules:\n      - alert: X\n        expr: 'up < 1'\n",
		"found none");
	refused("groups: [\n", "expected YAML");
	/* the line of the fault: the expr on line 5 */
	char path[128];
	snprintf(path, sizeof path, "%s/bad.yml", dir);
	write_file(path, "groups:\n  - name: a\n    rules:\n      - alert: X\n"
			 "        expr: 'training_step_seconds < 3'\n        labels:\n"
			 "          capsim_check: step_time\n");
	capsim_expect e;
	capsim_diags d = { 0 };
	assert_int_equal(capsim_expect_read(path, &e, &d), -1);
	char want[160];
	snprintf(want, sizeof want, "%s:5", path);
	assert_string_equal(d.v[0].where, want);
	capsim_diags_free(&d);
}

static int setup_all(void **state)
{
	if (testutil_tmpdir_make(dir, sizeof dir, "expect") < 0)
		return -1;
	return setup(state);
}

static int teardown_all(void **state)
{
	testutil_tmpdir_remove(dir);
	return teardown(state);
}

int main(void)
{
	capsim_init();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows_follow_the_model),
		cmocka_unit_test(test_ranks_past_the_cluster_refused),
		cmocka_unit_test(test_default_rank_counts),
		cmocka_unit_test(test_rules_and_json_read_back),
		cmocka_unit_test(test_logs_against_thresholds),
		cmocka_unit_test(test_bad_files_refused),
	};
	return testutil_run_group(tests, setup_all, teardown_all);
}
