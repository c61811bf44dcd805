/* test_cli.c - the capsim command as a user runs it: help, version, catalog
 * tables and JSON, validate's exit statuses and summaries. */
#define _GNU_SOURCE /* sched_setaffinity, CPU_COUNT */
#include "testutil.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

typedef struct {
	char *out;
	int status;
} run_result;

/* Run "capsim ARGS" (a shell-quoted string), capturing stdout (and stderr
 * when merge is set). */
static run_result run_cmd(const char *cmd)
{
	FILE *p = popen(cmd, "r");
	run_result r = { NULL, -1 };
	if (!p)
		return r;
	size_t cap = 1 << 16, len = 0, n;
	r.out = malloc(cap);
	while ((n = fread(r.out + len, 1, cap - len - 1, p)) > 0) {
		len += n;
		if (len + 1 >= cap) {
			cap *= 2;
			r.out = realloc(r.out, cap);
		}
	}
	r.out[len] = '\0';
	int st = pclose(p);
	r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	return r;
}

static run_result run(const char *args, int merge)
{
	char cmd[2048];
	snprintf(cmd, sizeof cmd, "'%s' %s%s", CAPSIM_BIN, args,
		 merge ? " 2>&1" : " 2>/dev/null");
	return run_cmd(cmd);
}

/* "capsim ARGS" with standard output sent to `to`, capturing stderr */
static run_result run_stdout_to(const char *args, const char *to)
{
	char cmd[2048];
	snprintf(cmd, sizeof cmd, "'%s' %s 2>&1 >'%s'", CAPSIM_BIN, args, to);
	return run_cmd(cmd);
}

static void put_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	static char buf[1 << 16];
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* a report that does not reach standard output whole is a failure (1) */
static void test_stdout_write_error(void **state)
{
	(void)state;
	run_result r = run_stdout_to("catalog gpus", "/dev/full");
	assert_int_equal(r.status, 1);
	char want[128];
	snprintf(want, sizeof want, "capsim: writing standard output: %s", strerror(ENOSPC));
	assert_non_null(strstr(r.out, want));
	free(r.out);
	r = run_stdout_to("validate --json " CAPSIM_SOURCE_DIR "/models/gpt.xml", "/dev/full");
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.out, want));
	free(r.out);
	/* a device that takes everything is no error */
	r = run_stdout_to("catalog gpus", "/dev/null");
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "");
	free(r.out);
}

/* validate --resolved --out: the file whole, or the old one kept */
static void test_validate_out(void **state)
{
	(void)state;
	char out[64], args[512];
	snprintf(out, sizeof out, "/tmp/capsim-cli-out-%ld.xml", (long)getpid());
	put_file(out, "old\n");
	snprintf(args, sizeof args, "validate --resolved " CAPSIM_SOURCE_DIR
		 "/scenarios/onprem-burst.xml --out '%s'", out);
	run_result r = run(args, 1);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "");
	free(r.out);
	assert_non_null(strstr(read_file(out), "<scenario name=\"onprem-burst\""));
	snprintf(args, sizeof args, "validate '%s'", out);
	r = run(args, 1);
	assert_int_equal(r.status, 0);
	free(r.out);
	/* a scenario that fails leaves the old file */
	put_file(out, "old\n");
	snprintf(args, sizeof args, "validate --resolved " CAPSIM_SOURCE_DIR
		 "/scenarios/onprem-burst.xml --set cluster.nodes=0 --out '%s'", out);
	r = run(args, 1);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.out, "cluster.nodes"));
	free(r.out);
	assert_string_equal(read_file(out), "old\n");
	remove(out);
	/* a full device fails the write, with the reason */
	r = run("validate --resolved " CAPSIM_SOURCE_DIR "/scenarios/onprem-burst.xml "
		"--out /dev/full", 1);
	assert_int_equal(r.status, 1);
	char want[128];
	/* the output named, whether the write fails as the scenario is written
	 * (a resolved scenario past stdio's buffer) or when the file is closed */
	snprintf(want, sizeof want, "/dev/full: error: cannot write%s", "");
	assert_non_null(strstr(r.out, want));
	assert_non_null(strstr(r.out, strerror(ENOSPC)));
	free(r.out);
	r = run("validate " CAPSIM_SOURCE_DIR "/scenarios/onprem-burst.xml --out x.xml", 1);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.out, "--out: error: expected with --resolved or --json"));
	free(r.out);
	r = run("validate --json --resolved " CAPSIM_SOURCE_DIR "/scenarios/onprem-burst.xml", 1);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.out, "found both"));
	free(r.out);
}

/* calibrated profiles validate; a broken one is refused at file:line */
static void test_validate_profile(void **state)
{
	(void)state;
	static const char *const prof = CAPSIM_SOURCE_DIR "/hardware/calibrated/h200-sxm-141gb-2026-12-02.xml";
	run_result r = run("validate " CAPSIM_SOURCE_DIR "/hardware/calibrated/*.xml", 1);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "h200-sxm-141gb-2026-12-02.xml: ok"));
	free(r.out);
	/* the shipped profile with one value out of range, and with an unknown GPU */
	char bad[64], cmd[1024];
	snprintf(bad, sizeof bad, "/tmp/capsim-cli-prof-%ld.xml", (long)getpid());
	snprintf(cmd, sizeof cmd, "sed 's/ gemm=\"0.795894052761\"/ gemm=\"1.795894052761\"/' '%s' > '%s'",
		 prof, bad);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof cmd, "validate '%s'", bad);
	r = run(cmd, 1);
	assert_int_equal(r.status, 2);
	char want[256];
	snprintf(want, sizeof want, "%s:22: error: profile 'h200-sxm-141gb-2026-12-02': "
		 "efficiency.gemm: expected at most 1, found '1.795894052761'", bad);
	assert_non_null(strstr(r.out, want));
	free(r.out);
	snprintf(cmd, sizeof cmd, "sed 's/ gpu=\"h200-sxm-141gb\"/ gpu=\"h900\"/' '%s' > '%s'", prof, bad);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof cmd, "validate '%s'", bad);
	r = run(cmd, 1);
	assert_int_equal(r.status, 2);
	snprintf(want, sizeof want, "%s:4: error: profile.gpu: expected a GPU of the catalog", bad);
	assert_non_null(strstr(r.out, want));
	assert_non_null(strstr(r.out, "found 'h900'"));
	free(r.out);
	remove(bad);
	r = run("validate --set cluster.nodes=2 '" CAPSIM_SOURCE_DIR
		"/hardware/calibrated/h200-sxm-141gb-2026-12-02.xml'", 1);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.out, "--set applies to scenarios only"));
	free(r.out);
}

/* validate --json: one object, every file with its kind, ok and errors */
static void test_validate_json(void **state)
{
	(void)state;
	char bad[64], args[1024];
	snprintf(bad, sizeof bad, "/tmp/capsim-cli-root-%ld.xml", (long)getpid());
	put_file(bad, "<?xml version=\"1.0\"?>\n<widgets/>\n");
	snprintf(args, sizeof args, "validate --json " CAPSIM_SOURCE_DIR "/scenarios/default.xml "
		 CAPSIM_SOURCE_DIR "/hardware/calibrated/h200-sxm-141gb-2026-12-02.xml "
		 CAPSIM_SOURCE_DIR "/models/gpt.xml '%s'", bad);
	run_result r = run(args, 0);
	assert_int_equal(r.status, 2);
	json_error_t err;
	json_t *o = json_loads(r.out, 0, &err);
	if (!o)
		fail_msg("validate --json is not one JSON object: %s (line %d)", err.text, err.line);
	assert_int_equal(json_integer_value(json_object_get(o, "schema_version")), 1);
	assert_true(json_is_string(json_object_get(o, "capsim_version")));
	assert_true(json_array_size(json_object_get(o, "inputs")) >= 11); /* the catalog read */
	assert_true(json_is_false(json_object_get(o, "ok")));
	json_t *files = json_object_get(o, "files");
	assert_int_equal(json_array_size(files), 4);
	static const char *const kinds[] = { "scenario", "profile", "models", "unknown" };
	for (size_t i = 0; i < 4; i++) {
		json_t *f = json_array_get(files, i);
		assert_string_equal(json_string_value(json_object_get(f, "kind")), kinds[i]);
		assert_int_equal(strlen(json_string_value(json_object_get(f, "sha256"))), 64);
		int ok = i < 3;
		assert_int_equal(json_is_true(json_object_get(f, "ok")), ok);
		assert_int_equal(json_array_size(json_object_get(f, "errors")), ok ? 0 : 1);
	}
	json_t *e = json_array_get(json_object_get(json_array_get(files, 3), "errors"), 0);
	char where[96];
	snprintf(where, sizeof where, "%s:2", bad);
	assert_string_equal(json_string_value(json_object_get(e, "where")), where);
	assert_non_null(strstr(json_string_value(json_object_get(e, "message")),
			       "root element <widgets> is not one of capsim's files"));
	json_decref(o);
	free(r.out);
	remove(bad);
	/* all good: exit 0 and ok true */
	r = run("validate --json " CAPSIM_SOURCE_DIR "/models/gpt.xml", 0);
	assert_int_equal(r.status, 0);
	o = json_loads(r.out, 0, &err);
	assert_non_null(o);
	assert_true(json_is_true(json_object_get(o, "ok")));
	json_decref(o);
	free(r.out);
}

/* calibrate import: a run goes in once (exit 0, then 2), usage errors exit 2 */
static void test_calibrate_import(void **state)
{
	(void)state;
	char db[64], args[512];
	snprintf(db, sizeof db, "/tmp/capsim-cli-%ld.sqlite", (long)getpid());
	remove(db);
	snprintf(args, sizeof args, "calibrate import '%s/calibrate/results/h200-2026-12-02-gemm.jsonl' "
		 "--db '%s'", CAPSIM_SOURCE_DIR, db);
	run_result r = run(args, 1);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "65 GEMMs (0 without an algorithm), 1 copy, 5 checks, 0 power"));
	free(r.out);
	r = run(args, 1);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.out, "already imported"));
	free(r.out);
	remove(db);
	r = run("calibrate import x.jsonl", 1);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.out, "--db is required"));
	free(r.out);
	r = run("calibrate frob", 1);
	assert_int_equal(r.status, 2);
	free(r.out);
	/* a log of nccl-tests -b 0: its 0-byte row is not stored, and says so;
	 * the rest of the log is (12 = 6 sizes x out-of-place and in-place) */
	char cmd[1024], log[64];
	snprintf(log, sizeof log, "/tmp/capsim-cli-%ld-b0.log", (long)getpid());
	snprintf(cmd, sizeof cmd, "sed '16i\\           0             0     float     sum      -1"
		 "     0.12    0.00    0.00      0     0.11    0.00    0.00      0' "
		 "'%s/tests/data/nccl-tests/h100-1node-issue290.log' > '%s'", CAPSIM_SOURCE_DIR, log);
	assert_int_equal(system(cmd), 0);
	snprintf(args, sizeof args, "calibrate import --nccl-tests '%s' --db '%s'", log, db);
	r = run(args, 1);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "note: 1 row of 0 bytes not stored"));
	assert_non_null(strstr(r.out, "12 nccl"));
	free(r.out);
	remove(db);
	remove(log);
}

static void test_help_and_version(void **state)
{
	(void)state;
	run_result r = run("--help", 0);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "catalog"));
	assert_non_null(strstr(r.out, "validate"));
	free(r.out);
	r = run("--version", 0);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "capsim 0."));
	assert_non_null(strstr(r.out, "(git "));
	free(r.out);
	r = run("frobnicate", 1);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.out, "'frobnicate' is not a capsim command"));
	free(r.out);
	r = run("", 1);
	assert_int_equal(r.status, 2);
	free(r.out);
	r = run("validate --help", 0);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "--set PATH=VALUE"));
	free(r.out);
}

static void test_catalog_table(void **state)
{
	(void)state;
	run_result r = run("catalog gpus", 0);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "h100-sxm5-80gb"));
	assert_non_null(strstr(r.out, "989.4 TFLOP/s"));
	assert_non_null(strstr(r.out, "3.35 TB/s"));
	assert_null(strstr(r.out, "llama")); /* gpus only */
	free(r.out);
	r = run("catalog refs", 0);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "refs ("));
	free(r.out);
	r = run("catalog widgets", 1);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.out, "unknown kind 'widgets'"));
	free(r.out);
}

static void test_catalog_json(void **state)
{
	(void)state;
	run_result r = run("catalog --json", 0);
	assert_int_equal(r.status, 0);
	json_error_t err;
	json_t *o = json_loads(r.out, 0, &err);
	if (!o)
		fail_msg("catalog --json is not JSON: %s (line %d)", err.text, err.line);
	assert_int_equal(json_integer_value(json_object_get(o, "schema_version")), 1);
	assert_true(json_is_string(json_object_get(o, "capsim_version")));
	/* every file read, with its digest */
	json_t *inputs = json_object_get(o, "inputs");
	assert_true(json_array_size(inputs) >= 11);
	const char *sha = json_string_value(json_object_get(json_array_get(inputs, 0), "sha256"));
	assert_non_null(sha);
	assert_int_equal(strlen(sha), 64);
	json_t *gpus = json_object_get(o, "gpus");
	assert_true(json_array_size(gpus) >= 8);
	int found = 0;
	size_t i;
	json_t *g;
	json_array_foreach(gpus, i, g) {
		if (strcmp(json_string_value(json_object_get(g, "id")), "h100-sxm5-80gb") != 0)
			continue;
		found = 1;
		assert_rel(json_real_value(json_object_get(g, "compute_bf16_flop_per_s")), 989.4e12, 1e-12);
		assert_rel(json_real_value(json_object_get(g, "memory_capacity_bytes")), 80e9, 1e-12);
		assert_rel(json_real_value(json_object_get(g, "power_tdp_w")), 700, 1e-12);
		assert_true(json_is_string(json_object_get(g, "src")));
	}
	assert_true(found);
	assert_true(json_array_size(json_object_get(o, "models")) >= 30);
	assert_true(json_array_size(json_object_get(o, "refs")) > 50);
	json_decref(o);
	free(r.out);
}

static void test_validate_statuses(void **state)
{
	(void)state;
	run_result r = run("validate " CAPSIM_SOURCE_DIR "/scenarios/default.xml", 0);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "default.xml: ok"));
	assert_non_null(strstr(r.out, "32 x dgx-h100 = 256 GPUs"));
	assert_non_null(strstr(r.out, "tp 8, pp 4, cp 1, dp 8"));
	free(r.out);
	r = run("validate " CAPSIM_SOURCE_DIR "/scenarios/default.xml --set cluster.nodes=64", 0);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "64 x dgx-h100 = 512 GPUs"));
	assert_non_null(strstr(r.out, "dp 16"));
	free(r.out);
	r = run("validate /nonexistent/x.xml", 1);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.out, "/nonexistent/x.xml: error: cannot open"));
	free(r.out);
	r = run("validate " CAPSIM_SOURCE_DIR "/scenarios/default.xml --set nodes", 1);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.out, "expected PATH=VALUE"));
	free(r.out);
	r = run("validate", 1);
	assert_int_equal(r.status, 2);
	free(r.out);
	/* --resolved writes a scenario that validates by itself */
	r = run("validate --resolved " CAPSIM_SOURCE_DIR "/scenarios/onprem-burst.xml", 0);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "<scenario name=\"onprem-burst\""));
	assert_non_null(strstr(r.out, "<burst cloud=\"runpod-h100-on-demand\" max-gpus=\"64\"/>"));
	free(r.out);
}

static void test_collective(void **state)
{
	(void)state;
	run_result r = run("collective " CAPSIM_SOURCE_DIR "/scenarios/h100-8node-ndr.xml "
			   "--op all-reduce --bytes 1GiB --json", 0);
	assert_int_equal(r.status, 0);
	json_error_t err;
	json_t *o = json_loads(r.out, 0, &err);
	if (!o)
		fail_msg("not JSON: %s", err.text);
	/* the keys DESIGN.md names, and traceability */
	static const char *const keys[] = { "op", "bytes", "ranks", "algorithm", "protocol",
					    "channels", "time_s", "algbw_gb_per_s",
					    "busbw_gb_per_s", "schema_version", "capsim_version",
					    "inputs", "seed", "hardware_profile" };
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
		if (!json_object_get(o, keys[i]))
			fail_msg("collective --json lacks '%s'", keys[i]);
	assert_int_equal(json_integer_value(json_object_get(o, "ranks")), 64);
	double t = json_real_value(json_object_get(o, "time_s"));
	double alg = json_real_value(json_object_get(o, "algbw_gb_per_s"));
	double bus = json_real_value(json_object_get(o, "busbw_gb_per_s"));
	assert_rel(alg, 1073741824.0 / t / 1e9, 1e-9);
	assert_rel(bus, alg * 2 * 63 / 64, 1e-9); /* nccl-tests' all-reduce factor */
	json_decref(o);
	free(r.out);

	/* the sweep prints nccl-tests' columns, doubling sizes */
	r = run("collective " CAPSIM_SOURCE_DIR "/scenarios/h100-8node-ndr.xml "
		"--op all-gather --sweep 8B:1KiB", 0);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "size         count      type   redop    root"));
	assert_non_null(strstr(r.out, "# Avg bus bandwidth"));
	int lines = 0;
	for (char *p = r.out; (p = strchr(p, '\n')); p++)
		lines++;
	/* header lines, 8 B .. 1 KiB, the bus bandwidth's band */
	assert_int_equal(lines, 4 + 8 + 1);
	assert_non_null(strstr(r.out, "# 80% prediction interval of the bus bandwidth: x"));
	free(r.out);

	/* same command in two processes: the same summary, to the nanosecond */
	char *a[2];
	for (int i = 0; i < 2; i++) {
		r = run("collective " CAPSIM_SOURCE_DIR "/scenarios/h100-64node-roce200.xml "
			"--op all-to-all --bytes 64MiB --ranks 256 --verbose", 0);
		assert_int_equal(r.status, 0);
		char *sum = strstr(r.out, "# run summary");
		assert_non_null(sum);
		a[i] = strdup(sum);
		free(r.out);
	}
	assert_string_equal(a[0], a[1]);
	free(a[0]);
	free(a[1]);

	r = run("collective " CAPSIM_SOURCE_DIR "/scenarios/h100-8node-ndr.xml "
		"--op broadcast --bytes 1MiB --algo tree", 1);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.out, "algorithm tree does not apply to broadcast"));
	free(r.out);
	r = run("collective " CAPSIM_SOURCE_DIR "/scenarios/h100-8node-ndr.xml "
		"--op all-reduce --bytes 1MiB --ranks 65", 1);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.out, "65 ranks, but the cluster has 64 GPUs"));
	free(r.out);
	r = run("collective " CAPSIM_SOURCE_DIR "/scenarios/h100-8node-ndr.xml "
		"--op all-reduce --bytes '1 MQ'", 1);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.out, "unknown unit 'MQ'"));
	free(r.out);
}

/* capsim bom: the parts and the capex that run reports, a part without a
 * price listed as such (capex null), a --set price filling it in */
static void test_bom(void **state)
{
	(void)state;
	run_result r = run("bom " CAPSIM_SOURCE_DIR "/scenarios/h100-8node-ndr.xml --json", 0);
	assert_int_equal(r.status, 0);
	json_t *b = json_loads(r.out, 0, NULL);
	assert_non_null(b);
	free(r.out);
	r = run("run " CAPSIM_SOURCE_DIR "/scenarios/h100-8node-ndr.xml --json", 0);
	assert_int_equal(r.status, 0);
	json_t *o = json_loads(r.out, 0, NULL);
	assert_non_null(o);
	free(r.out);
	double capex = json_real_value(json_object_get(b, "capex_usd"));
	assert_rel(capex, json_real_value(json_object_get(o, "capex_usd")), 1e-12);
	/* 8 DGX H100, 2 leaves (4 rails each) with 32 uplinks each to one spine */
	assert_rel(capex, 8 * 329736.0 + 3 * 50000.0 + 64 * 2560.0, 1e-12);
	assert_int_equal(json_integer_value(json_object_get(o, "switches_spine")), 1);
	assert_int_equal(json_integer_value(json_object_get(o, "cables_leaf_spine")), 64);
	json_t *parts = json_object_get(b, "parts");
	double sum = 0;
	int leaves = 0;
	for (size_t i = 0; i < json_array_size(parts); i++) {
		json_t *p = json_array_get(parts, i);
		json_t *tot = json_object_get(p, "total_usd");
		if (tot)
			sum += json_real_value(tot);
		if (!strcmp(json_string_value(json_object_get(p, "part")), "leaf switch"))
			leaves = (int)json_real_value(json_object_get(p, "count"));
	}
	assert_rel(sum, capex, 1e-12); /* the lines add up to the capex */
	assert_int_equal(leaves, (int)json_integer_value(json_object_get(o, "switches_leaf")));
	json_decref(b);
	json_decref(o);
	/* the DGX A100 has no price in the catalog */
	r = run("bom " CAPSIM_SOURCE_DIR "/scenarios/a100-4node-fattree.xml --json", 0);
	assert_int_equal(r.status, 0);
	b = json_loads(r.out, 0, NULL);
	assert_true(json_is_null(json_object_get(b, "capex_usd")));
	json_decref(b);
	free(r.out);
	r = run("bom " CAPSIM_SOURCE_DIR "/scenarios/a100-4node-fattree.xml "
		"--set 'cluster.node.price.value=$200k' --set 'cluster.fabric.switch.price.value=$20k'",
		0);
	assert_int_equal(r.status, 0);
	/* 4 nodes, 3 switches (2 leaves of 5 and 3 rails, one spine), cabling */
	assert_non_null(strstr(r.out, "capex 941920 USD"));
	free(r.out);
	r = run("bom " CAPSIM_SOURCE_DIR "/scenarios/default.xml --set cluster.nodes=0", 1);
	assert_int_equal(r.status, 2);
	free(r.out);
}

static void test_run(void **state)
{
	(void)state;
	run_result r = run("run --json", 0); /* the default scenario */
	assert_int_equal(r.status, 0);
	json_error_t err;
	json_t *o = json_loads(r.out, 0, &err);
	if (!o)
		fail_msg("not JSON: %s", err.text);
	static const char *const keys[] = {
		"step_time_s", "tokens_per_s", "mfu", "peak_mem_per_gpu_bytes",
		"fits_in_memory", "memory_verdict", "memory_margin_ratio", "compute_s",
		"exposed_comm_s", "exposed_comm_tp_s",
		"exposed_comm_cp_s", "exposed_comm_pp_s", "exposed_comm_dp_s",
		"exposed_comm_ep_s", "bubble_s", "data_stall_s", "time_to_train_s", "schema_version",
		"capsim_version", "inputs", "seed", "hardware_profile" };
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
		if (!json_object_get(o, keys[i]))
			fail_msg("run --json lacks '%s'", keys[i]);
	/* the facility and owning models' keys, in SI: watts, not
	 * kilowatts; a key of a model that does not exist yet must not appear */
	assert_non_null(json_object_get(o, "capex_usd"));
	assert_non_null(json_object_get(o, "power_it_w"));
	assert_null(json_object_get(o, "power_it_kw"));
	assert_null(json_object_get(o, "burst_cost_usd"));
	double step = json_real_value(json_object_get(o, "step_time_s"));
	double tps = json_real_value(json_object_get(o, "tokens_per_s"));
	assert_rel(tps * step, 512.0 * 8192, 1e-9); /* default: 512 x 8192 tokens */
	json_decref(o);
	free(r.out);
	r = run("run " CAPSIM_SOURCE_DIR "/scenarios/default.xml --set workload.parallelism.tp=3", 1);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.out, "tp=3 does not divide 64 attention heads"));
	free(r.out);
	r = run("run " CAPSIM_SOURCE_DIR "/scenarios/default.xml", 0);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "step time"));
	assert_non_null(strstr(r.out, "MFU"));
	free(r.out);
}

/* verify fails a log in which nothing could be checked (its only size is
 * 0 bytes): a check that checked nothing is no pass */
/* A memory verdict says its margin; a close one says what decides it. The
 * 6.7B GPT at micro-batch 4 (trained on the measured H200 at 127.7 GiB,
 * calibrate/results/h200-2026-12-03-memory.jsonl) fits with the torch-amp
 * recipe; at micro-batch 5, which ran out of memory there
 * (h200-2026-12-05-memory-edge.jsonl), it is estimated 1.4% short: does not
 * fit. With Megatron's 18 bytes a parameter micro-batch 2 is close (to spare,
 * within its unmeasured 10%) and not refused, 4 and 6 do not fit. */
static void test_memory_margin(void **state)
{
	(void)state;
	const char *gpt = "run " CAPSIM_SOURCE_DIR "/scenarios/gpt2-124m-1xh200.xml "
			  "--set workload.model.ref=megatron-7.5b "
			  "--set workload.model.architecture.layers=32 "
			  "--set workload.model.architecture.vocab=50257 --set workload.seq-len=2048 ";
	char args[1024];
	snprintf(args, sizeof args, "%s --set workload.micro-batch=4 --set workload.global-batch=4 "
		 "--set workload.framework=torch-amp", gpt);
	run_result r = run(args, 1);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "of 150.1 GB (fits): "));
	assert_null(strstr(r.out, "close: "));
	free(r.out);
	snprintf(args, sizeof args, "%s --set workload.micro-batch=5 --set workload.global-batch=5 "
		 "--set workload.framework=torch-amp", gpt);
	r = run(args, 1);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "of 150.1 GB (DOES NOT FIT): "));
	assert_non_null(strstr(r.out, "short"));
	free(r.out);
	snprintf(args, sizeof args, "%s --set workload.micro-batch=2 --set workload.global-batch=2 "
		 "--set workload.framework=megatron", gpt);
	r = run(args, 1);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "of 150.1 GB (close): "));
	/* the margin's band, then what decides the verdict */
	assert_non_null(strstr(r.out, " to spare (80%: "));
	assert_non_null(strstr(r.out, "); close: it fits, but not if the peak is the memory "
				      "model's error larger, decided by the megatron recipe"));
	free(r.out);
	for (int mb = 4; mb <= 6; mb += 2) {
		snprintf(args, sizeof args, "%s --set workload.micro-batch=%d "
			 "--set workload.global-batch=%d --set workload.framework=megatron --json",
			 gpt, mb, mb);
		r = run(args, 0);
		assert_int_equal(r.status, 0);
		json_error_t err;
		json_t *o = json_loads(r.out, 0, &err);
		assert_non_null(o);
		assert_string_equal(json_string_value(json_object_get(o, "memory_verdict")),
				    "does not fit");
		assert_false(json_is_true(json_object_get(o, "fits_in_memory")));
		double margin = json_real_value(json_object_get(o, "memory_margin_bytes"));
		assert_true(margin < 0);
		assert_rel(json_real_value(json_object_get(o, "memory_margin_ratio")),
			   margin / 150109880320.0, 1e-9);
		json_decref(o);
		free(r.out);
	}
	r = run("run " CAPSIM_SOURCE_DIR "/scenarios/default.xml", 1);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "of 85.05 GB (fits): "));
	assert_null(strstr(r.out, "close: "));
	free(r.out);
}

/* A step longer than the schedule's clock (2^61 ns) is the input's fault:
 * exit 2, saying what to change; as is any refusal by capsim_eval. */
static void test_step_too_long(void **state)
{
	(void)state;
	run_result r = run("run " CAPSIM_SOURCE_DIR "/scenarios/gpt2-124m-1xh200.xml "
			   "--set workload.model.ref=llama-2-7b --set workload.seq-len=100000000 "
			   "--set workload.global-batch=1000", 1);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.out, "one step of this job is longer than the simulator's clock "
				      "holds (2^61 ns, about 73 years"));
	free(r.out);
	r = run("scale " CAPSIM_SOURCE_DIR "/scenarios/gpt2-124m-1xh200.xml --gpus 1 "
		"--set workload.model.ref=llama-2-7b --set workload.seq-len=100000000 "
		"--set workload.global-batch=1000", 1);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.out, "2^61 ns"));
	free(r.out);
}

static void test_verify_nothing_checked(void **state)
{
	(void)state;
	char path[64], args[512], line[512];
	snprintf(path, sizeof path, "/tmp/capsim-cli-zero-%ld.log", (long)getpid());
	FILE *in = fopen(CAPSIM_SOURCE_DIR "/tests/data/nccl-tests/h100-1node-issue290.log", "r");
	FILE *out = fopen(path, "w");
	assert_non_null(in);
	assert_non_null(out);
	for (int i = 0; i < 15 && fgets(line, sizeof line, in); i++)
		fputs(line, out);
	fputs("           0             0     float     sum      -1     0.10    0.00    0.00"
	      "      0     0.10    0.00    0.00      0\n# Out of bounds values : 0 OK\n"
	      "# Avg bus bandwidth    : 0\n#\n", out);
	fclose(in);
	fclose(out);
	snprintf(args, sizeof args, "verify " CAPSIM_SOURCE_DIR "/scenarios/h100-8node-ndr.xml "
		 "--nccl-tests %s", path);
	run_result r = run(args, 1);
	assert_int_equal(r.status, 3);
	assert_non_null(strstr(r.out, "nothing was verified"));
	free(r.out);
	remove(path);
}

/* collective's numeric options: one strict reading each, with its range */
static void test_collective_numbers(void **state)
{
	(void)state;
	static const struct {
		const char *args, *msg;
	} bad[] = {
		{ "--bytes 1e300B", "whole number of bytes from 1 B to 16 TiB" },
		{ "--bytes 0.001B", "whole number of bytes from 1 B to 16 TiB" },
		{ "--sweep 8B:1e30B", "whole number of bytes from 1 B to 16 TiB" },
		{ "--sweep 1e-300B:8B", "whole number of bytes from 1 B to 16 TiB" },
		{ "--bytes 1GiB --sweep 8B:16B", "give one of them" },
		{ "--ranks 8abc --bytes 1GiB", "--ranks wants a positive count" },
		{ "--ranks 4294967304 --bytes 1GiB", "--ranks wants a positive count" },
		{ "--channels 8x --bytes 1GiB", "--channels wants 1..64" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char args[512];
		snprintf(args, sizeof args, "collective " CAPSIM_SOURCE_DIR "/scenarios/default.xml "
			 "--op all-reduce %s", bad[i].args);
		run_result r = run(args, 1);
		if (r.status != 2 || !strstr(r.out, bad[i].msg))
			fail_msg("'%s': exit %d, output '%s'", bad[i].args, r.status, r.out);
		free(r.out);
	}
}

/* the "threads" of a command's --json (capsim ARGS --json), -1 where none */
static long threads_of(const char *args)
{
	char full[1024];
	snprintf(full, sizeof full, "%s --json --no-progress", args);
	run_result r = run(full, 0);
	json_error_t e;
	json_t *o = r.status == 0 ? json_loads(r.out, 0, &e) : NULL;
	json_t *t = o ? json_object_get(o, "threads") : NULL;
	long n = json_is_integer(t) ? (long)json_integer_value(t) : -1;
	if (n < 0)
		print_error("capsim %s: exit %d, output '%.300s'\n", full, r.status, r.out);
	json_decref(o);
	free(r.out);
	return n;
}

/* Without -j, optimize and sweep run on as many threads as the CPUs they may
 * run on (their affinity, inherited from this process); -j N on N */
static void test_default_threads(void **state)
{
	(void)state;
	cpu_set_t all, one;
	assert_int_equal(sched_getaffinity(0, sizeof all, &all), 0);
	long n = CPU_COUNT(&all);
	int first = 0;
	while (!CPU_ISSET(first, &all))
		first++;
	CPU_ZERO(&one);
	CPU_SET(first, &one);
	char dir[64], db[96];
	assert_int_equal(testutil_tmpdir_make(dir, sizeof dir, "threads"), 0);
	snprintf(db, sizeof db, "%s/sweep.sqlite", dir);
	char opt[512], sweep[512], sweep_j[520];
	snprintf(opt, sizeof opt, "optimize %s/scenarios/a100-4node-fattree.xml --top 1",
		 CAPSIM_SOURCE_DIR);
	snprintf(sweep, sizeof sweep, "sweep %s/scenarios/sweeps/gpus-and-fabric.xml --db '%s'",
		 CAPSIM_SOURCE_DIR, db);
	snprintf(sweep_j, sizeof sweep_j, "%s -j 3", sweep);
	assert_int_equal(threads_of(opt), n);
	assert_int_equal(threads_of(sweep), n);
	assert_int_equal(sched_setaffinity(0, sizeof one, &one), 0);
	long opt1 = threads_of(opt), sweep1 = threads_of(sweep), sweep3 = threads_of(sweep_j);
	assert_int_equal(sched_setaffinity(0, sizeof all, &all), 0);
	assert_int_equal(testutil_tmpdir_remove(dir), 0);
	assert_int_equal(opt1, 1);
	assert_int_equal(sweep1, 1);
	assert_int_equal(sweep3, 3);
}

/* validate reads each file once: a pipe is validated, and its digest is
 * that of the bytes read (not of an empty second read) */
static void test_validate_pipe(void **state)
{
	(void)state;
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "cat '%s/scenarios/default.xml' | '%s' validate --json /dev/stdin",
		 CAPSIM_SOURCE_DIR, CAPSIM_BIN);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	json_error_t err;
	json_t *o = json_loadf(p, 0, &err);
	assert_int_equal(pclose(p), 0);
	assert_non_null(o);
	json_t *f = json_array_get(json_object_get(o, "files"), 0);
	assert_true(json_is_true(json_object_get(f, "ok")));
	assert_string_equal(json_string_value(json_object_get(f, "kind")), "scenario");
	/* the shipped file's own digest */
	snprintf(cmd, sizeof cmd, "sha256sum '%s/scenarios/default.xml'", CAPSIM_SOURCE_DIR);
	p = popen(cmd, "r");
	char hex[65] = "";
	assert_int_equal(fscanf(p, "%64s", hex), 1);
	pclose(p);
	assert_string_equal(json_string_value(json_object_get(f, "sha256")), hex);
	json_decref(o);
}

static void test_scale_and_trace(void **state)
{
	(void)state;
	run_result r = run("scale " CAPSIM_SOURCE_DIR "/scenarios/default.xml --gpus 32,64,128 "
			   "--csv /tmp/capsim-test-scale.csv", 0);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "weak scaling: tp 8, pp 4, cp 1 fixed"));
	free(r.out);
	/* each banded key's four ends after it */
	assert_int_equal(testutil_sh("head -1 /tmp/capsim-test-scale.csv | grep -q "
				     "',step_time_s,step_time_s_lo,step_time_s_hi,step_time_s_lo95,"
				     "step_time_s_hi95,'"), 0);
	FILE *f = fopen("/tmp/capsim-test-scale.csv", "r");
	assert_non_null(f);
	char line[16384];
	int rows = 0, col[5] = { -1, -1, -1, -1, -1 };
	const char *want[5] = { "gpus", "dp", "global_batch", "tokens_per_s", "scaling_efficiency" };
	double eff = 0;
	while (fgets(line, sizeof line, f)) {
		double v[5] = { 0 };
		int c = 0;
		line[strcspn(line, "\n")] = '\0';
		/* split at every comma: a key absent from a row is an empty cell */
		for (char *rest = line, *tok; (tok = strsep(&rest, ",")) != NULL; c++)
			for (int k = 0; k < 5; k++) {
				if (rows == 0 && strcmp(tok, want[k]) == 0)
					col[k] = c;
				else if (rows > 0 && col[k] == c)
					v[k] = strtod(tok, NULL);
			}
		if (rows++ == 0) {
			for (int k = 0; k < 5; k++)
				assert_true(col[k] >= 0);
			continue;
		}
		assert_rel(v[0], 32.0 * v[1], 0);    /* tp 8 x pp 4 fixed */
		assert_rel(v[2], 64.0 * v[1], 0);    /* weak: the batch grows with dp */
		eff = v[4];
		assert_true(eff > 0.9 && eff <= 1.0 + 1e-9);
		assert_true(v[3] > 0);
	}
	fclose(f);
	remove("/tmp/capsim-test-scale.csv");
	assert_int_equal(rows, 4);
	/* a list that is not N,N,... of at most 64 counts is refused, not cut */
	static const char *const bad_lists[] = { "64,", "32,,64", "8abc", "0", "4294967328" };
	for (size_t i = 0; i < sizeof bad_lists / sizeof bad_lists[0]; i++) {
		char args[256];
		snprintf(args, sizeof args, "scale " CAPSIM_SOURCE_DIR "/scenarios/default.xml --gpus '%s'",
			 bad_lists[i]);
		r = run(args, 1);
		assert_int_equal(r.status, 2);
		assert_non_null(strstr(r.out, "--gpus wants N,N,..."));
		free(r.out);
	}
	char many[512] = "scale " CAPSIM_SOURCE_DIR "/scenarios/default.xml --gpus 32";
	for (int i = 1; i < 65; i++)
		strcat(many, ",32");
	r = run(many, 1);
	assert_int_equal(r.status, 2);
	free(r.out);
	/* --progress: a start and an end line per size on stderr, none on stdout */
	r = run_stdout_to("scale " CAPSIM_SOURCE_DIR "/scenarios/default.xml --gpus 32,64 --json "
			  "--progress", "/dev/null");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "[1/2] 32 GPUs ...\n[1/2] 32 GPUs ... done in "));
	assert_non_null(strstr(r.out, "[2/2] 64 GPUs ... done in "));
	free(r.out);
	r = run("scale " CAPSIM_SOURCE_DIR "/scenarios/default.xml --gpus 32 --json", 1);
	assert_int_equal(r.status, 0);
	assert_null(strstr(r.out, "GPUs ...")); /* not a terminal, no --progress */
	free(r.out);
	r = run("scale " CAPSIM_SOURCE_DIR "/scenarios/default.xml --gpus 33", 1);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.out, "33 GPUs is not a whole number of 8-GPU nodes"));
	free(r.out);

	/* the trace is Chrome trace-event JSON with every task of the step */
	r = run("run " CAPSIM_SOURCE_DIR "/scenarios/h100-8node-ndr.xml --trace /tmp/capsim-test-trace.json", 0);
	assert_int_equal(r.status, 0);
	free(r.out);
	json_error_t err;
	json_t *t = json_load_file("/tmp/capsim-test-trace.json", 0, &err);
	if (!t)
		fail_msg("trace is not JSON: %s", err.text);
	json_t *ev = json_object_get(t, "traceEvents");
	size_t n_fwd = 0;
	size_t i;
	json_t *e;
	json_array_foreach(ev, i, e) {
		const char *cat = json_string_value(json_object_get(e, "cat"));
		if (cat && strcmp(cat, "forward") == 0)
			n_fwd++;
	}
	assert_int_equal(n_fwd, 8); /* 8 micro-batches, one stage */
	json_decref(t);
	remove("/tmp/capsim-test-trace.json");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_help_and_version),
		cmocka_unit_test(test_calibrate_import),
		cmocka_unit_test(test_catalog_table),
		cmocka_unit_test(test_catalog_json),
		cmocka_unit_test(test_validate_statuses),
		cmocka_unit_test(test_stdout_write_error),
		cmocka_unit_test(test_validate_out),
		cmocka_unit_test(test_validate_profile),
		cmocka_unit_test(test_validate_json),
		cmocka_unit_test(test_collective),
		cmocka_unit_test(test_run),
		cmocka_unit_test(test_bom),
		cmocka_unit_test(test_scale_and_trace),
		cmocka_unit_test(test_memory_margin),
		cmocka_unit_test(test_step_too_long),
		cmocka_unit_test(test_verify_nothing_checked),
		cmocka_unit_test(test_collective_numbers),
		cmocka_unit_test(test_validate_pipe),
		cmocka_unit_test(test_default_threads),
	};
	return testutil_run_group_name("cli", tests, NULL, NULL);
}
