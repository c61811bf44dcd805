/* test_measure.c - the measurement store: calibrate/'s H200 run goes into
 * SQLite whole, once; a faulty file is refused at its line and leaves the
 * database as it was; the nccl, pcie and power-duty kinds of schema 2 go
 * in with their values, and a version-1 database is upgraded in place. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "measure.h"
#include "query.h"

#define H200 CAPSIM_SOURCE_DIR "/calibrate/results/h200-2026-12-02-gemm.jsonl"

CAPSIM_TEST_TMPDIR("measure")

static double query(const char *db, const char *sql)
{
	sqlite3 *h;
	sqlite3_stmt *st;
	double v = -1;
	assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_double(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(h);
	return v;
}

static void write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

/* 5 dtypes x 13 shapes, one copy, five checks; bf16 4096^3 at the rate
 * the file records (2 x 4096^3 / median) */
static void test_import_h200(void **state)
{
	(void)state;
	char db[128];
	snprintf(db, sizeof db, "%s/m.sqlite", dir);
	capsim_diags d = { 0 };
	capsim_import_stats st;
	assert_int_equal(capsim_measure_import(H200, db, &st, &d), 0);
	assert_int_equal(st.run_id, 1);
	assert_int_equal(st.gemm, 65);
	assert_int_equal(st.gemm_failed, 0);
	assert_int_equal(st.copy, 1);
	assert_int_equal(st.checks, 5);
	double rate = query(db, "SELECT flop_per_s FROM gemm WHERE dtype = 'bf16' AND m = 4096 "
				"AND n = 4096 AND k = 4096");
	double med = query(db, "SELECT median_s FROM gemm WHERE dtype = 'bf16' AND m = 4096 "
			       "AND n = 4096 AND k = 4096");
	assert_true(fabs(rate * med - 2.0 * 4096 * 4096 * 4096) < 1e-4 * 2.0 * 4096 * 4096 * 4096);
	assert_true(rate > 1e14 && rate < 989.4e12); /* below the dense bf16 peak */
	assert_true(query(db, "SELECT bytes_per_s FROM copy_bandwidth") > 4e12);
	assert_true(query(db, "PRAGMA user_version") == CAPSIM_STORE_SCHEMA);

	/* the same file again: refused, nothing added */
	assert_int_equal(capsim_measure_import(H200, db, &st, &d), -1);
	assert_true(capsim_diags_contains(&d, "already imported"));
	assert_true(query(db, "SELECT count(*) FROM runs") == 1);
	assert_true(query(db, "SELECT count(*) FROM gemm") == 65);
	capsim_diags_free(&d);
}

/* 20 s of bf16 8192^3 GEMMs on the H200 under its 700 W cap: power sits
 * just under the cap and the SM clock below its 1980 MHz maximum */
static void test_import_power(void **state)
{
	(void)state;
	char db[128];
	snprintf(db, sizeof db, "%s/p.sqlite", dir);
	capsim_diags d = { 0 };
	capsim_import_stats st;
	assert_int_equal(capsim_measure_import(CAPSIM_SOURCE_DIR
					       "/calibrate/results/h200-2026-12-02-power.jsonl",
					       db, &st, &d), 0);
	assert_int_equal(st.power, 2);
	assert_int_equal(st.gemm, 0);
	assert_true(query(db, "SELECT power_limit_w FROM power_idle") == 700.0);
	double w = query(db, "SELECT median_power_w FROM power_sustained");
	double mhz = query(db, "SELECT median_sm_mhz FROM power_sustained");
	assert_true(w > 600.0 && w <= 700.0);
	assert_true(mhz > 1000.0 && mhz < 1980.0);
	assert_true(query(db, "SELECT median_flop_per_s FROM power_sustained") < 989.4e12);
	capsim_diags_free(&d);
}

static const char machine[] =
	"{\"kind\":\"machine\",\"program\":\"capsim-calibrate-gemm\",\"date\":\"2026-12-02T11:00:00Z\","
	"\"gpu\":\"NVIDIA H200\"}\n";

/* a fault on line 3 leaves no run behind, even though line 2 was good */
static void test_faulty_files(void **state)
{
	(void)state;
	char db[128], bad[128];
	snprintf(db, sizeof db, "%s/f.sqlite", dir);
	snprintf(bad, sizeof bad, "%s/bad.jsonl", dir);
	static const struct {
		const char *body, *where, *what;
	} cases[] = {
		{ "{\"kind\":\"hbm-copy\",\"bytes\":8,\"moved_bytes\":16,\"median_s\":2,"
		  "\"bytes_per_s\":8,\"samples_s\":[1,2,3]}\n"
		  "{\"kind\":\"gemm\",\"dtype\":\"bf16\",\"m\":2,\"n\":2,\"k\":2,\"flop\":16,"
		  "\"median_s\":2,\"flop_per_s\":8,\"samples_s\":[1,3,4]}\n",
		  ":3", "field 'median_s': expected the median of samples_s (3), found 2" },
		{ "{\"kind\":\"hbm-copy\",\"bytes\":8,\"moved_bytes\":16,\"median_s\":2,"
		  "\"bytes_per_s\":8,\"samples_s\":[2]}\n"
		  "{\"kind\":\"gemm\",\"dtype\":\"bf16\",\"m\":2,\"n\":2,\"k\":2,\"flop\":99,"
		  "\"median_s\":2,\"flop_per_s\":8,\"samples_s\":[2]}\n",
		  ":3", "field 'flop': expected 2 m n k = 16, found 99" },
		{ "{\"kind\":\"hbm-copy\",\"bytes\":8,\"moved_bytes\":16,\"median_s\":2,"
		  "\"bytes_per_s\":8,\"samples_s\":[2]}\n"
		  "{\"kind\":\"gemm\",\"dtype\":\"bf16\",\"m\":-2,\"n\":2,\"k\":2}\n",
		  ":3", "field 'm': expected an integer from 1 to 2147483647, found -2" },
		{ "{\"kind\":\"hbm-copy\",\"bytes\":8,\"moved_bytes\":16,\"median_s\":2,"
		  "\"bytes_per_s\":8,\"samples_s\":[2]}\n"
		  "{\"kind\":\"power-sustained\",\"dtype\":\"bf16\",\"m\":2,\"n\":2,\"k\":2,"
		  "\"readings\":[],\"batch_flop_per_s\":[1]}\n",
		  ":3", "field 'readings': expected a non-empty array, found an empty one" },
		{ "{\"kind\":\"hbm-copy\",\"bytes\":8,\"moved_bytes\":16,\"median_s\":2,"
		  "\"bytes_per_s\":8,\"samples_s\":[2]}\n"
		  "{\"kind\":\"nvlink\"}\n",
		  ":3", "found 'nvlink'" },
		{ "{\"kind\":\"hbm-copy\",\"bytes\":8,\"moved_bytes\":16,\"median_s\":2,"
		  "\"bytes_per_s\":8,\"samples_s\":[2]}\n"
		  "{\"kind\":\"gemm\",\"dtype\":\"bf16\",\"m\":2,\"n\":2,\n",
		  ":3", "expected one JSON object a line" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char text[1024];
		snprintf(text, sizeof text, "%s%s", machine, cases[i].body);
		write_file(bad, text);
		capsim_diags d = { 0 };
		capsim_import_stats st;
		assert_int_equal(capsim_measure_import(bad, db, &st, &d), -1);
		if (!capsim_diags_contains(&d, cases[i].where) ||
		    !capsim_diags_contains(&d, cases[i].what)) {
			capsim_diags_print(&d, stderr);
			fail_msg("case %zu: expected '%s' at %s", i, cases[i].what, cases[i].where);
		}
		assert_int_equal(st.run_id, 0);
		capsim_diags_free(&d);
		assert_true(query(db, "SELECT count(*) FROM sqlite_master WHERE name = 'runs'") == 0);
	}
	/* the first line must say what made the file */
	write_file(bad, "{\"kind\":\"gemm\",\"dtype\":\"bf16\",\"m\":2,\"n\":2,\"k\":2}\n");
	capsim_diags d = { 0 };
	capsim_import_stats st;
	assert_int_equal(capsim_measure_import(bad, db, &st, &d), -1);
	assert_true(capsim_diags_contains(&d, "bad.jsonl:1"));
	assert_true(capsim_diags_contains(&d, "'machine' on the first line"));
	capsim_diags_free(&d);
	/* a good small file goes in */
	char good[1024];
	snprintf(good, sizeof good, "%s%s", machine,
		 "{\"kind\":\"hbm-copy\",\"bytes\":8,\"moved_bytes\":16,\"median_s\":2,"
		 "\"bytes_per_s\":8,\"samples_s\":[1,2,3]}\n");
	/* ... but not with a NUL byte on its second line: refused at that line,
	 * nothing stored (not even its digest, so the clean file still goes in) */
	{
		FILE *f = fopen(bad, "wb");
		assert_non_null(f);
		size_t ml = strlen(machine);
		fwrite(good, 1, ml, f);
		fwrite("{\"kind\"\0:1}\n", 1, 13, f);
		fwrite(good + ml, 1, strlen(good) - ml, f);
		fclose(f);
		assert_int_equal(capsim_measure_import(bad, db, &st, &d), -1);
		assert_true(capsim_diags_contains(&d, "bad.jsonl:2"));
		assert_true(capsim_diags_contains(&d, "contains a NUL byte"));
		capsim_diags_free(&d);
	}
	write_file(bad, good);
	assert_int_equal(capsim_measure_import(bad, db, &st, &d), 0);
	assert_int_equal(st.copy, 1);
	assert_true(query(db, "SELECT count(*) FROM runs") == 1);
	capsim_diags_free(&d);
}

#define FIXTURES CAPSIM_SOURCE_DIR "/tests/data/calibrate/"

/* one text value from a query, into buf ("" when there is no row or NULL) */
static const char *query_text(const char *db, const char *sql, char *buf, size_t size)
{
	sqlite3 *h;
	sqlite3_stmt *st;
	buf[0] = '\0';
	assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		snprintf(buf, size, "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	sqlite3_close(h);
	return buf;
}

/* the synthetic 8-rank NCCL run: 7 records, its machine line's NCCL keys
 * in runs, busbw = algbw x 2(n-1)/n = 1.75 for all_reduce at 8 ranks */
static void test_import_nccl(void **state)
{
	(void)state;
	char db[128], buf[256];
	snprintf(db, sizeof db, "%s/n.sqlite", dir);
	capsim_diags d = { 0 };
	capsim_import_stats st;
	assert_int_equal(capsim_measure_import(FIXTURES "nccl-8gpu.jsonl", db, &st, &d), 0);
	capsim_diags_free(&d);
	assert_int_equal(st.nccl, 7);
	assert_int_equal(st.gemm + st.pcie + st.power_duty + st.power, 0);
	assert_true(query(db, "SELECT count(*) FROM nccl") == 7);
	assert_true(query(db, "SELECT count(*) FROM nccl WHERE in_place = 1") == 2);
	assert_true(query(db, "SELECT nccl FROM runs") == 22803);
	assert_true(query(db, "SELECT ranks FROM runs") == 8);
	assert_true(query(db, "SELECT nodes FROM runs") == 1);
	assert_string_equal(query_text(db, "SELECT launcher FROM runs", buf, sizeof buf),
			    "single-process");
	assert_string_equal(query_text(db, "SELECT env FROM runs", buf, sizeof buf),
			    "{\"NCCL_ALGO\":\"Ring\",\"NCCL_NVLS_ENABLE\":\"0\"}");
	/* 1 MiB in 25 us: 41.94304 GB/s, and 73.40032 on the bus */
	assert_rel(query(db, "SELECT median_s FROM nccl WHERE op = 'all_reduce' AND in_place = 0"),
		   2.5e-5, 1e-12);
	assert_rel(query(db, "SELECT algbw_gb_per_s FROM nccl WHERE op = 'all_reduce' AND "
			     "in_place = 0"), 41.94304, 1e-9);
	assert_rel(query(db, "SELECT busbw_gb_per_s FROM nccl WHERE op = 'all_reduce' AND "
			     "in_place = 0"), 41.94304 * 1.75, 1e-9);
	assert_true(query(db, "SELECT count FROM nccl WHERE op = 'all_gather'") == 32768);
	assert_true(query(db, "SELECT bytes FROM nccl WHERE op = 'all_reduce' AND in_place = 1") ==
		    4194304);
	assert_string_equal(query_text(db, "SELECT redop FROM nccl WHERE op = 'reduce_scatter'", buf,
				       sizeof buf), "sum");
	assert_true(query(db, "SELECT json_array_length(samples_s) FROM nccl WHERE op = "
			      "'sendrecv'") == 3);
	assert_rel(query(db, "SELECT json_extract(samples_s, '$[1]') FROM nccl WHERE op = "
			     "'sendrecv'"), 1.25e-5, 1e-12);
	assert_true(query(db, "PRAGMA user_version") == CAPSIM_STORE_SCHEMA);
}

/* host-device copies: 4 rows, 1 GiB in 20 ms each way's rate */
static void test_import_pcie(void **state)
{
	(void)state;
	char db[128];
	snprintf(db, sizeof db, "%s/c.sqlite", dir);
	capsim_diags d = { 0 };
	capsim_import_stats st;
	assert_int_equal(capsim_measure_import(FIXTURES "pcie.jsonl", db, &st, &d), 0);
	capsim_diags_free(&d);
	assert_int_equal(st.pcie, 4);
	assert_int_equal(st.nccl, 0);
	assert_true(query(db, "SELECT count(*) FROM pcie WHERE direction = 'h2d' AND pinned = 1") ==
		    2);
	assert_rel(query(db, "SELECT bytes_per_s FROM pcie WHERE direction = 'h2d' AND "
			     "bytes = 1073741824"), 1073741824 / 0.02, 1e-8);
	assert_rel(query(db, "SELECT median_s FROM pcie WHERE direction = 'd2h' AND bytes = 4096"),
		   5e-6, 1e-12);
	/* the NCCL columns of a run that has none are NULL */
	assert_true(query(db, "SELECT count(*) FROM runs WHERE nccl IS NULL AND ranks IS NULL AND "
			      "launcher IS NULL AND env IS NULL") == 1);
}

/* calibrate/torch/gpt2_step.py's run on the H200: its launch microbenchmark
 * and nine training-step points go in with their values; a step whose
 * tokens/s is not micro-batch x seq / median, or a launch whose kernels
 * finish before they are issued, is refused at its line */
static void test_import_torch(void **state)
{
	(void)state;
	char db[128];
	snprintf(db, sizeof db, "%s/t.sqlite", dir);
	capsim_diags d = { 0 };
	capsim_import_stats st;
	assert_int_equal(capsim_measure_import(CAPSIM_SOURCE_DIR
					       "/calibrate/results/h200-2026-12-02-gpt2-step-c.jsonl",
					       db, &st, &d), 0);
	capsim_diags_print(&d, stderr);
	capsim_diags_free(&d);
	assert_int_equal(st.torch_launch, 1);
	assert_int_equal(st.torch_step, 9);
	assert_rel(query(db, "SELECT host_median_s FROM torch_launch"), 7.123292000002834e-06, 1e-12);
	assert_rel(query(db, "SELECT median_s FROM torch_step WHERE model = 'gpt2-124m' AND "
			     "micro_batch = 32"), 0.13592, 1e-3);
	assert_true(query(db, "SELECT count(*) FROM torch_step WHERE vocab = 50257") == 9);
	assert_true(query(db, "SELECT count(*) FROM runs WHERE program = 'gpt2_step.py'") == 1);

	char bad[128];
	snprintf(bad, sizeof bad, "%s/torch-bad.jsonl", dir);
	write_file(bad, "{\"kind\":\"machine\",\"program\":\"gpt2_step.py\",\"date\":\"2026-12-02T11:00:00Z\","
			"\"gpu\":\"NVIDIA H200\"}\n"
			"{\"kind\":\"torch-step\",\"model\":\"gpt2-124m\",\"micro_batch\":8,\"seq\":1024,"
			"\"dtype\":\"bf16\",\"mode\":\"eager\",\"samples_s\":[0.04,0.05,0.06],"
			"\"median_s\":0.05,\"tokens_per_s\":100000,\"peak_allocated_bytes\":1,"
			"\"peak_reserved_bytes\":2}\n");
	assert_int_equal(capsim_measure_import(bad, db, &st, &d), -1);
	assert_true(capsim_diags_contains(&d, "torch-bad.jsonl:2"));
	assert_true(capsim_diags_contains(&d, "field 'tokens_per_s': expected micro_batch x seq "
					      "/ median_s = 163840, found 100000"));
	capsim_diags_free(&d);
	write_file(bad, "{\"kind\":\"machine\",\"program\":\"gpt2_step.py\",\"date\":\"2026-12-02T11:00:00Z\","
			"\"gpu\":\"NVIDIA H200\"}\n"
			"{\"kind\":\"torch-launch\",\"op\":\"add\",\"elements\":1024,\"kernels\":10,"
			"\"host_samples_s\":[7e-6],\"host_median_s\":7e-6,\"total_median_s\":5e-6}\n");
	assert_int_equal(capsim_measure_import(bad, db, &st, &d), -1);
	assert_true(capsim_diags_contains(&d, "torch-bad.jsonl:2"));
	assert_true(capsim_diags_contains(&d, "field 'total_median_s': expected at least "
					      "host_median_s 7e-06"));
	capsim_diags_free(&d);
	assert_true(query(db, "SELECT count(*) FROM runs") == 1);
	/* the host's view that gpt2_step.py keeps under "profile" */
	assert_true(query(db, "SELECT kernels FROM torch_step WHERE model = 'gpt2-124m' AND "
			      "micro_batch = 1") == 710);
	assert_rel(query(db, "SELECT issue_median_s FROM torch_step WHERE model = 'gpt2-124m' AND "
			     "micro_batch = 1"), 0.02727, 1e-3);
}

/* calibrate/torch/host_probe.py: its block counts (torch-host) and its
 * steps, whose host view sits at the top level and which carry no
 * tokens_per_s or peak_reserved_bytes; a faulty torch-host record is
 * refused at its line, naming the field */
static void test_import_host(void **state)
{
	(void)state;
	char db[128];
	snprintf(db, sizeof db, "%s/h.sqlite", dir);
	capsim_diags d = { 0 };
	capsim_import_stats st;
	assert_int_equal(capsim_measure_import(CAPSIM_SOURCE_DIR
					       "/calibrate/results/h200-2026-12-04-host.jsonl",
					       db, &st, &d), 0);
	assert_int_equal(st.torch_host, 12);
	assert_int_equal(capsim_measure_import(CAPSIM_SOURCE_DIR
					       "/calibrate/results/h200-2026-12-04-host-steps.jsonl",
					       db, &st, &d), 0);
	capsim_diags_print(&d, stderr);
	capsim_diags_free(&d);
	assert_int_equal(st.torch_step, 31);
	assert_true(query(db, "SELECT kernels_bwd FROM torch_host WHERE arch = 'llama' AND "
			      "mode = 'eager' AND layers = 6") == 518);
	assert_true(query(db, "SELECT kernels FROM torch_host WHERE arch = 'gpt' AND "
			      "mode = 'graphs' AND layers = 2") == 147);
	assert_true(query(db, "SELECT count(*) FROM torch_step WHERE mode = 'graphs' AND "
			      "peak_reserved_bytes IS NULL AND kernels > 0") == 10);
	assert_rel(query(db, "SELECT tokens_per_s FROM torch_step WHERE mode = 'eager' AND "
			     "model = 'gpt2-124m' AND micro_batch = 1"), 1024 / 0.02597, 1e-3);
	char bad[128];
	snprintf(bad, sizeof bad, "%s/host-bad.jsonl", dir);
	write_file(bad, "{\"kind\":\"machine\",\"program\":\"host_probe.py\","
			"\"date\":\"2026-12-04T02:55:30Z\",\"gpu\":\"NVIDIA H200\"}\n"
			"{\"kind\":\"torch-host\",\"arch\":\"gpt\",\"layers\":2,\"seq\":128,"
			"\"micro_batch\":1,\"mode\":\"eager\",\"kernels_fwd\":53,\"kernels_bwd\":0,"
			"\"kernels_opt\":4,\"host_fwd_s\":0.002,\"host_bwd_s\":0.003,"
			"\"host_opt_s\":0.0005}\n");
	assert_int_equal(capsim_measure_import(bad, db, &st, &d), -1);
	assert_true(capsim_diags_contains(&d, "host-bad.jsonl:2"));
	assert_true(capsim_diags_contains(&d, "field 'kernels_bwd'"));
	capsim_diags_free(&d);
	assert_true(query(db, "SELECT count(*) FROM runs") == 2);
}

/* power against utilisation: two duties, their medians and readings */
static void test_import_duty(void **state)
{
	(void)state;
	char db[128];
	snprintf(db, sizeof db, "%s/u.sqlite", dir);
	capsim_diags d = { 0 };
	capsim_import_stats st;
	assert_int_equal(capsim_measure_import(FIXTURES "gemm-duty.jsonl", db, &st, &d), 0);
	capsim_diags_free(&d);
	assert_int_equal(st.power_duty, 2);
	assert_int_equal(st.power, 1);
	assert_true(query(db, "SELECT median_power_w FROM power_duty WHERE duty = 0.5") == 410.0);
	assert_true(query(db, "SELECT median_sm_mhz FROM power_duty WHERE duty = 0.5") == 1830.0);
	assert_true(query(db, "SELECT median_power_w FROM power_duty WHERE duty = 0.25") == 265.25);
	assert_rel(query(db, "SELECT achieved_flop_per_s FROM power_duty WHERE duty = 0.25"), 1.6e14,
		   1e-12);
	assert_true(query(db, "SELECT json_array_length(readings) FROM power_duty WHERE duty = 0.5") ==
		    5);
	assert_true(query(db, "SELECT m * n * k FROM power_duty WHERE duty = 0.5") ==
		    8192.0 * 8192 * 8192);
}

static const char nccl_machine[] =
	"{\"kind\":\"machine\",\"program\":\"capsim-calibrate-nccl\",\"date\":\"2026-12-02T11:00:00Z\","
	"\"gpu\":\"NVIDIA H200\",\"nccl\":22803,\"ranks\":8,\"nodes\":1,"
	"\"launcher\":\"single-process\",\"env\":{\"NCCL_NVLS_ENABLE\":\"0\"}}\n";

/* a good all_reduce record at 8 ranks (1 MiB in 25 us), printf'd with the
 * fields a case replaces: op, ranks, bytes, count, in_place, median,
 * algbw, busbw, wrong */
#define NCCL_REC(op, ranks, bytes, count, inpl, med, alg, bus, wrong)                         \
	"{\"kind\":\"nccl\",\"op\":\"" op "\",\"dtype\":\"float\",\"redop\":\"sum\","        \
	"\"ranks\":" ranks ",\"nodes\":1,\"bytes\":" bytes ",\"count\":" count ","           \
	"\"algo\":\"Ring\",\"proto\":\"default\",\"in_place\":" inpl ","                     \
	"\"samples_s\":[2.25e-5,2.5e-5,3e-5],\"median_s\":" med ",\"algbw_gb_per_s\":" alg   \
	",\"busbw_gb_per_s\":" bus ",\"wrong\":" wrong "}\n"
#define NCCL_GOOD NCCL_REC("all_reduce", "8", "1048576", "262144", "0", "2.5e-5", "41.94304", \
			   "73.40032", "0")
#define PCIE_GOOD                                                                           \
	"{\"kind\":\"pcie\",\"direction\":\"h2d\",\"pinned\":1,\"bytes\":4096,"               \
	"\"samples_s\":[4e-6,5e-6,6e-6],\"median_s\":5e-6,\"bytes_per_s\":819200000}\n"
#define DUTY_REC(duty, pmed, readings)                                                      \
	"{\"kind\":\"power-duty\",\"duty\":" duty ",\"dtype\":\"bf16\",\"m\":8192,\"n\":8192,"  \
	"\"k\":8192,\"readings\":" readings ",\"median_power_w\":" pmed                      \
	",\"median_sm_mhz\":1830,\"achieved_flop_per_s\":3.1e14}\n"
#define READINGS                                                                            \
	"[{\"t_s\":0,\"power_w\":400,\"sm_mhz\":1830},{\"t_s\":0.02,\"power_w\":410,"          \
	"\"sm_mhz\":1830},{\"t_s\":0.04,\"power_w\":420,\"sm_mhz\":1830}]"

/* Every kind of fault in the new kinds, each refused at its line with its
 * message; the database keeps the one good run imported first. */
static void test_faulty_new_kinds(void **state)
{
	(void)state;
	char db[128], bad[128];
	snprintf(db, sizeof db, "%s/g.sqlite", dir);
	snprintf(bad, sizeof bad, "%s/bad2.jsonl", dir);
	capsim_diags d = { 0 };
	capsim_import_stats st;
	assert_int_equal(capsim_measure_import(FIXTURES "pcie.jsonl", db, &st, &d), 0);
	static const struct {
		const char *machine, *line2, *line3, *where, *what;
	} cases[] = {
		{ nccl_machine, NCCL_GOOD,
		  NCCL_REC("all_reduce", "8", "1048576", "262144", "0", "2.5e-5", "41.94304",
			   "41.94304", "0"),
		  ":3", "field 'busbw_gb_per_s': expected algbw x 1.75 (all_reduce at 8 ranks) = 73.4003, found 41.943" },
		{ nccl_machine, NCCL_GOOD,
		  NCCL_REC("all_reduce", "8", "1048576", "262144", "0", "2.5e-5", "40", "70", "0"),
		  ":3", "field 'algbw_gb_per_s': expected bytes / median_s / 1e9 = 41.943, found 40" },
		{ nccl_machine, NCCL_GOOD,
		  NCCL_REC("all_to_all", "8", "1048576", "262144", "0", "2.5e-5", "41.94304",
			   "73.40032", "0"),
		  ":3", "field 'op': expected one of all_reduce, all_gather, reduce_scatter, alltoall, "
			"broadcast, sendrecv, found 'all_to_all'" },
		{ nccl_machine, NCCL_GOOD,
		  NCCL_REC("all_reduce", "4", "1048576", "262144", "0", "2.5e-5", "41.94304",
			   "62.91456", "0"),
		  ":3", "field 'ranks': expected the machine line's 8, found 4" },
		{ nccl_machine, NCCL_GOOD,
		  NCCL_REC("all_reduce", "0", "1048576", "262144", "0", "2.5e-5", "41.94304",
			   "73.40032", "0"),
		  ":3", "field 'ranks': expected an integer from 1 to 16777216, found 0" },
		{ nccl_machine, NCCL_GOOD,
		  NCCL_REC("all_gather", "8", "1048576", "262144", "0", "2.5e-5", "41.94304",
			   "36.70016", "0"),
		  ":3", "field 'count': expected bytes / (8 x 4) for all_gather float = 32768, found 262144" },
		{ nccl_machine, NCCL_GOOD,
		  NCCL_REC("all_reduce", "8", "\"1M\"", "262144", "0", "2.5e-5", "41.94304",
			   "73.40032", "0"),
		  ":3", "field 'bytes': expected an integer, found a string" },
		{ nccl_machine, NCCL_GOOD,
		  NCCL_REC("all_reduce", "8", "1048576", "262144", "0", "3e-5", "34.9525333",
			   "61.1669333", "0"),
		  ":3", "field 'median_s': expected the median of samples_s (2.5e-05), found 3e-05" },
		{ nccl_machine, NCCL_GOOD,
		  NCCL_REC("all_reduce", "8", "1048576", "262144", "0", "2.5e-5", "41.94304",
			   "73.40032", "-1"),
		  ":3", "field 'wrong': expected an integer from 0 to" },
		{ nccl_machine, NCCL_GOOD,
		  NCCL_REC("all_reduce", "8", "1048576", "262144", "2", "2.5e-5", "41.94304",
			   "73.40032", "0"),
		  ":3", "field 'in_place': expected an integer from 0 to 1, found 2" },
		{ nccl_machine, NCCL_GOOD,
		  "{\"kind\":\"nccl\",\"op\":\"broadcast\",\"dtype\":\"float32\"}\n",
		  ":3", "field 'dtype': expected one of int8, uint8, int32, uint32, int64, uint64, half, "
			"float, double, bfloat16, f8e4m3, f8e5m2, found 'float32'" },
		{ "{\"kind\":\"machine\",\"program\":\"capsim-calibrate-nccl\",\"date\":\"2026-12-02T11:00:00Z\","
		  "\"gpu\":\"g\",\"nccl\":22803,\"nodes\":1,\"launcher\":\"mpi\",\"env\":{}}\n",
		  NCCL_GOOD, "", ":1",
		  "field 'ranks': expected in the machine line of capsim-calibrate-nccl, found nothing" },
		{ "{\"kind\":\"machine\",\"program\":\"capsim-calibrate-nccl\",\"date\":\"2026-12-02T11:00:00Z\","
		  "\"gpu\":\"g\",\"nccl\":22803,\"ranks\":8,\"nodes\":1,\"launcher\":\"mpi\","
		  "\"env\":\"NCCL_ALGO=Ring\"}\n",
		  NCCL_GOOD, "", ":1", "field 'env': expected an object of strings, found a string" },
		{ "{\"kind\":\"machine\",\"program\":\"capsim-calibrate-nccl\",\"date\":\"2026-12-02T11:00:00Z\","
		  "\"gpu\":\"g\",\"nccl\":22803,\"ranks\":8,\"nodes\":1,\"launcher\":\"slurm\","
		  "\"env\":{}}\n",
		  NCCL_GOOD, "", ":1", "field 'launcher': expected one of single-process, mpi, found 'slurm'" },
		{ "{\"kind\":\"machine\",\"program\":\"capsim-calibrate-nccl\",\"date\":\"2026-12-02T11:00:00Z\","
		  "\"gpu\":\"g\",\"nccl\":22803,\"ranks\":2,\"nodes\":3,\"launcher\":\"mpi\","
		  "\"env\":{}}\n",
		  NCCL_GOOD, "", ":1", "field 'nodes': expected at most ranks (2), found 3" },
		{ machine, PCIE_GOOD,
		  "{\"kind\":\"pcie\",\"direction\":\"h2h\",\"pinned\":1,\"bytes\":4096}\n",
		  ":3", "field 'direction': expected one of h2d, d2h, found 'h2h'" },
		{ machine, PCIE_GOOD,
		  "{\"kind\":\"pcie\",\"direction\":\"d2h\",\"pinned\":1,\"bytes\":4096,"
		  "\"samples_s\":[5e-6],\"median_s\":5e-6,\"bytes_per_s\":9e8}\n",
		  ":3", "field 'bytes_per_s': expected bytes / median_s = 8.192e+08, found 9e+08" },
		{ machine, PCIE_GOOD,
		  "{\"kind\":\"pcie\",\"direction\":\"d2h\",\"pinned\":1,\"bytes\":0}\n",
		  ":3", "field 'bytes': expected an integer from 1 to" },
		{ machine, DUTY_REC("0.5", "410", READINGS), DUTY_REC("1.5", "410", READINGS),
		  ":3", "field 'duty': expected a number above 0 and at most 1, found 1.5" },
		{ machine, DUTY_REC("0.5", "410", READINGS), DUTY_REC("0.75", "500", READINGS),
		  ":3", "field 'median_power_w': expected the median of the readings (410), found 500" },
		{ machine, DUTY_REC("0.5", "410", READINGS), DUTY_REC("0.75", "410", "[]"),
		  ":3", "field 'readings': expected a non-empty array, found an empty one" },
		{ machine, DUTY_REC("0.5", "410", READINGS),
		  DUTY_REC("0.75", "410", "[{\"t_s\":0,\"sm_mhz\":1830}]"),
		  ":3", "field 'power_w': expected a number, found nothing" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char text[4096];
		snprintf(text, sizeof text, "%s%s%s", cases[i].machine, cases[i].line2,
			 cases[i].line3);
		write_file(bad, text);
		capsim_diags_free(&d);
		assert_int_equal(capsim_measure_import(bad, db, &st, &d), -1);
		char where[160];
		snprintf(where, sizeof where, "bad2.jsonl%s", cases[i].where);
		int found = 0;
		for (size_t j = 0; j < d.n; j++)
			found |= strstr(d.v[j].where, where) && strstr(d.v[j].msg, cases[i].what);
		if (!found) {
			capsim_diags_print(&d, stderr);
			fail_msg("case %zu: expected '%s' at %s", i, cases[i].what, where);
		}
		assert_int_equal(st.run_id, 0);
		assert_true(query(db, "SELECT count(*) FROM runs") == 1);
		assert_true(query(db, "SELECT count(*) FROM nccl") == 0);
		assert_true(query(db, "SELECT count(*) FROM pcie") == 4);
		assert_true(query(db, "SELECT count(*) FROM power_duty") == 0);
	}
	capsim_diags_free(&d);
	/* the good lines of the cases go in */
	char text[4096];
	snprintf(text, sizeof text, "%s%s", nccl_machine, NCCL_GOOD);
	write_file(bad, text);
	assert_int_equal(capsim_measure_import(bad, db, &st, &d), 0);
	assert_int_equal(st.nccl, 1);
	capsim_diags_free(&d);
}

/* the tables of schema version 1, as capsim wrote them before NCCL */
static const char schema_v1[] =
	"CREATE TABLE runs(id INTEGER PRIMARY KEY, sha256 TEXT NOT NULL UNIQUE,"
	" source TEXT NOT NULL, program TEXT NOT NULL, date TEXT NOT NULL, gpu TEXT NOT NULL,"
	" cc TEXT, sms INTEGER, memory_bytes INTEGER, l2_bytes INTEGER, cuda_driver INTEGER,"
	" cuda_runtime INTEGER, cublaslt INTEGER, imported_at TEXT NOT NULL);"
	"CREATE TABLE copy_bandwidth(run_id INTEGER NOT NULL REFERENCES runs(id),"
	" bytes INTEGER NOT NULL, moved_bytes INTEGER NOT NULL, median_s REAL NOT NULL,"
	" bytes_per_s REAL NOT NULL, samples_s TEXT NOT NULL);"
	"INSERT INTO runs VALUES(1, 'ab', 'old.jsonl', 'capsim-calibrate-gemm', '2026-12-01',"
	" 'NVIDIA H200', '9.0', 132, 0, 0, 13000, 13000, 130100, '2026-12-01T00:00:00Z');"
	"INSERT INTO copy_bandwidth VALUES(1, 8, 16, 2, 8, '[2]');"
	"PRAGMA user_version = 1;";

/* A version-1 database: a refused file leaves it at version 1 as it was; a
 * good one upgrades it to 2, keeping the old run; a newer one is refused. */
static void test_upgrade_v1(void **state)
{
	(void)state;
	char db[128], bad[128];
	snprintf(db, sizeof db, "%s/v1.sqlite", dir);
	snprintf(bad, sizeof bad, "%s/bad3.jsonl", dir);
	sqlite3 *h;
	assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
	assert_int_equal(sqlite3_exec(h, schema_v1, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
	char text[4096];
	snprintf(text, sizeof text, "%s%s",
		 nccl_machine, NCCL_REC("all_reduce", "8", "1048576", "262144", "0", "2.5e-5",
					"41.94304", "41.94304", "0"));
	write_file(bad, text);
	capsim_diags d = { 0 };
	capsim_import_stats st;
	assert_int_equal(capsim_measure_import(bad, db, &st, &d), -1);
	capsim_diags_free(&d);
	assert_true(query(db, "PRAGMA user_version") == 1);
	assert_true(query(db, "SELECT count(*) FROM sqlite_master WHERE name = 'nccl'") == 0);
	assert_true(query(db, "SELECT count(*) FROM sqlite_master WHERE name = 'sweeps'") == 0);
	assert_true(query(db, "SELECT count(*) FROM pragma_table_info('runs') WHERE name = "
			      "'ranks'") == 0);

	assert_int_equal(capsim_measure_import(FIXTURES "nccl-8gpu.jsonl", db, &st, &d), 0);
	capsim_diags_free(&d);
	assert_int_equal(st.run_id, 2);
	assert_true(query(db, "PRAGMA user_version") == CAPSIM_STORE_SCHEMA);
	assert_true(query(db, "SELECT count(*) FROM runs") == 2);
	assert_true(query(db, "SELECT count(*) FROM runs WHERE id = 1 AND ranks IS NULL AND "
			      "program = 'capsim-calibrate-gemm'") == 1);
	assert_true(query(db, "SELECT ranks FROM runs WHERE id = 2") == 8);
	assert_true(query(db, "SELECT count(*) FROM copy_bandwidth") == 1);
	assert_true(query(db, "SELECT count(*) FROM nccl WHERE run_id = 2") == 7);
	/* and the results tables of version 4 */
	assert_true(query(db, "SELECT count(*) FROM sqlite_master WHERE name IN ('sweeps', 'points',"
			      " 'point_params', 'point_results')") == 4);
	/* and version 5's host columns, on the torch_step table it got whole */
	assert_true(query(db, "SELECT count(*) FROM pragma_table_info('torch_step') WHERE name IN"
			      " ('issue_median_s', 'kernels', 'kernel_s')") == 3);
	/* a later import needs no upgrade */
	assert_int_equal(capsim_measure_import(FIXTURES "pcie.jsonl", db, &st, &d), 0);
	assert_int_equal(st.run_id, 3);
	capsim_diags_free(&d);

	/* a database from a newer capsim is left alone */
	assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
	assert_int_equal(sqlite3_exec(h, "PRAGMA user_version = 7", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
	assert_int_equal(capsim_measure_import(FIXTURES "gemm-duty.jsonl", db, &st, &d), -1);
	assert_true(capsim_diags_contains(&d, "schema version 7 is newer than this capsim (6); use a newer capsim"));
	capsim_diags_free(&d);
	assert_true(query(db, "SELECT count(*) FROM runs") == 3);
}

/* Records imported without a file in between (capsim_measure_import_nccl):
 * algbw and busbw computed by the store, the source's SHA-256 refusing a
 * repeat, and a faulty record refused at its line with nothing written. */
static void test_import_records(void **state)
{
	(void)state;
	char db[128];
	snprintf(db, sizeof db, "%s/rec.sqlite", dir);
	static const char sha[] = "5e1f00d2c9a84b7e3f6a1d0c2b4e6f8a9c1d3e5f7a9b0c2d4e6f8a0b1c3d5e7f";
	static const double t_small[] = { 2.385e-5 }, t_large[] = { 1.1e-3, 1.2e-3, 1.4e-3 };
	capsim_measure_nccl recs[2] = {
		{ .line = 31, .op = "all_reduce", .dtype = "float", .redop = "sum", .algo = "default",
		  .proto = "default", .ranks = 8, .nodes = 1, .bytes = 1048576, .count = 262144,
		  .median_s = 2.385e-5, .samples_s = t_small, .n_samples = 1 },
		{ .line = 32, .op = "all_reduce", .dtype = "float", .redop = "sum", .algo = "default",
		  .proto = "default", .ranks = 8, .nodes = 1, .bytes = 268435456, .count = 67108864,
		  .in_place = 1, .wrong = 2, .median_s = 1.2e-3, .samples_s = t_large, .n_samples = 3 },
	};
	capsim_measure_machine m = { .program = "nccl-tests all_reduce_perf", .date = "2025-03-03",
				     .gpu = "NVIDIA H100 80GB HBM3", .launcher = "mpi", .ranks = 8,
				     .nodes = 1 };
	capsim_diags d = { 0 };
	capsim_import_stats st;
	assert_int_equal(capsim_measure_import_nccl("x.log", sha, db, &m, recs, 2, &st, &d), 0);
	assert_int_equal(st.run_id, 1);
	assert_int_equal(st.nccl, 2);
	char buf[256];
	assert_string_equal(query_text(db, "SELECT sha256 FROM runs", buf, sizeof buf), sha);
	assert_string_equal(query_text(db, "SELECT source FROM runs", buf, sizeof buf), "x.log");
	assert_string_equal(query_text(db, "SELECT launcher FROM runs", buf, sizeof buf), "mpi");
	assert_true(query(db, "SELECT ranks FROM runs") == 8);
	assert_true(query(db, "SELECT nccl IS NULL FROM runs") == 1);
	/* 1 MiB in 23.85 us: 43.965 GB/s, x 2(8-1)/8 on the bus */
	double alg = 1048576 / 2.385e-5 / 1e9;
	assert_rel(query(db, "SELECT algbw_gb_per_s FROM nccl WHERE bytes = 1048576"), alg, 1e-12);
	assert_rel(query(db, "SELECT busbw_gb_per_s FROM nccl WHERE bytes = 1048576"), 1.75 * alg,
		   1e-12);
	assert_true(query(db, "SELECT wrong FROM nccl WHERE in_place = 1") == 2);
	assert_true(query(db, "SELECT json_array_length(samples_s) FROM nccl WHERE in_place = 1") ==
		    3);

	/* the same source again: refused by its SHA-256 */
	assert_int_equal(capsim_measure_import_nccl("x.log", sha, db, &m, recs, 2, &st, &d), -1);
	assert_true(capsim_diags_contains(&d, "already imported into"));
	capsim_diags_free(&d);

	/* a count that does not match the size, on the second record: that
	 * line named, and neither record nor the run stored */
	static const char sha2[] = "6e1f00d2c9a84b7e3f6a1d0c2b4e6f8a9c1d3e5f7a9b0c2d4e6f8a0b1c3d5e7f";
	capsim_measure_nccl bad[2] = { recs[0], recs[1] };
	bad[1].count = 1000;
	assert_int_equal(capsim_measure_import_nccl("y.log", sha2, db, &m, bad, 2, &st, &d), -1);
	assert_true(d.n == 1 && !strcmp(d.v[0].where, "y.log:32"));
	assert_true(capsim_diags_contains(&d, "field 'count': expected bytes / (1 x 4) for all_reduce"));
	capsim_diags_free(&d);
	assert_int_equal(st.nccl, 0);
	/* a median that is not its samples', and a collective the store does not hold */
	bad[1] = recs[1];
	bad[1].median_s = 1.3e-3;
	assert_int_equal(capsim_measure_import_nccl("y.log", sha2, db, &m, bad, 2, &st, &d), -1);
	assert_true(capsim_diags_contains(&d, "field 'median_s': expected the median of samples_s (0.0012), found 0.0013"));
	capsim_diags_free(&d);
	bad[1] = recs[1];
	bad[1].op = "reduce";
	assert_int_equal(capsim_measure_import_nccl("y.log", sha2, db, &m, bad, 2, &st, &d), -1);
	assert_true(capsim_diags_contains(&d, "field 'op': expected one of all_reduce"));
	capsim_diags_free(&d);
	assert_int_equal(capsim_measure_import_nccl("y.log", "5E1F", db, &m, recs, 2, &st, &d), -1);
	assert_true(capsim_diags_contains(&d, "SHA-256: expected 64 lowercase hex digits, found '5E1F'"));
	capsim_diags_free(&d);
	assert_true(query(db, "SELECT count(*) FROM runs") == 1);
	assert_true(query(db, "SELECT count(*) FROM nccl") == 2);
}

/* ---- validation: every field against its type and bounds --------------------- */

/* a good machine line with fields a case replaces: date, gpu, sms,
 * memory_bytes, and the keys after them (",..." or "") */
#define MACHINE(date, gpu, sms, mem, more)                                                  \
	"{\"kind\":\"machine\",\"program\":\"capsim-calibrate-gemm\",\"date\":\"" date "\","  \
	"\"gpu\":\"" gpu "\",\"cc\":\"9.0\",\"sms\":" sms ",\"memory_bytes\":" mem              \
	",\"l2_bytes\":62914560,\"cuda_driver\":13000,\"cuda_runtime\":13000" more "}\n"
#define MACHINE_GOOD MACHINE("2026-12-02T11:29:31Z", "NVIDIA H200", "132", "150109880320", "")
#define COPY_GOOD                                                                           \
	"{\"kind\":\"hbm-copy\",\"bytes\":8,\"moved_bytes\":16,\"median_s\":2,"               \
	"\"bytes_per_s\":8,\"samples_s\":[1,2,3]}\n"

/* text imported from a file of its own into db: refused, with what in a
 * message at where ("FILE:LINE"), and nothing stored (not even the tables
 * the import would have made) */
static void refused(const char *db, const char *text, const char *where, const char *what)
{
	char path[160];
	snprintf(path, sizeof path, "%s/v.jsonl", dir);
	write_file(path, text);
	capsim_diags d = { 0 };
	capsim_import_stats st;
	assert_int_equal(capsim_measure_import(path, db, &st, &d), -1);
	char at[200];
	snprintf(at, sizeof at, "v.jsonl%s", where);
	int found = 0;
	for (size_t i = 0; i < d.n; i++)
		found |= strstr(d.v[i].where, at) && strstr(d.v[i].msg, what);
	if (!found) {
		capsim_diags_print(&d, stderr);
		fail_msg("expected '%s' at %s", what, at);
	}
	capsim_diags_free(&d);
	assert_int_equal(st.run_id, 0);
	assert_true(query(db, "SELECT count(*) FROM sqlite_master WHERE name = 'runs'") == 0);
}

static void accepted(const char *db, const char *text)
{
	char path[160];
	snprintf(path, sizeof path, "%s/ok.jsonl", dir);
	write_file(path, text);
	capsim_diags d = { 0 };
	capsim_import_stats st;
	int rc = capsim_measure_import(path, db, &st, &d);
	if (rc != 0)
		capsim_diags_print(&d, stderr);
	assert_int_equal(rc, 0);
	capsim_diags_free(&d);
	remove(db);
}

/* The machine line's fields: a real UTC time, integers in bounds, text as
 * long as query.h keeps it and printable, env names well formed, every key
 * once (the last no longer wins). Found by an attack. */
static void test_machine_fields(void **state)
{
	(void)state;
	char db[128];
	snprintf(db, sizeof db, "%s/mf.sqlite", dir);
	static const struct {
		const char *machine, *what;
	} cases[] = {
		{ MACHINE("9999-99-99T99:99:99Z", "NVIDIA H200", "132", "150109880320", ""),
		  "field 'date': expected a UTC time YYYY-MM-DDTHH:MM:SSZ from 1990 to 2100, found "
		  "'9999-99-99T99:99:99Z'" },
		{ MACHINE("2026-12-02'); DROP TABLE runs; --", "NVIDIA H200", "132", "1", ""),
		  "field 'date': expected a UTC time YYYY-MM-DDTHH:MM:SSZ from 1990 to 2100, found "
		  "'2026-12-02'); DROP TABLE runs; --'" },
		{ MACHINE("2026-12-02", "NVIDIA H200", "132", "1", ""), "found '2026-12-02'" },
		{ MACHINE("2025-02-29T00:00:00Z", "NVIDIA H200", "132", "1", ""),
		  "found '2025-02-29T00:00:00Z'" },
		{ MACHINE("2026-04-31T00:00:00Z", "NVIDIA H200", "132", "1", ""),
		  "found '2026-04-31T00:00:00Z'" },
		{ MACHINE("2026-12-02T24:00:00Z", "NVIDIA H200", "132", "1", ""),
		  "found '2026-12-02T24:00:00Z'" },
		{ MACHINE("2026-12-02T23:60:00Z", "NVIDIA H200", "132", "1", ""),
		  "found '2026-12-02T23:60:00Z'" },
		{ MACHINE("2026-12-02T23:59:60Z", "NVIDIA H200", "132", "1", ""),
		  "found '2026-12-02T23:59:60Z'" },
		{ MACHINE("1989-12-31T23:59:59Z", "NVIDIA H200", "132", "1", ""),
		  "found '1989-12-31T23:59:59Z'" },
		{ MACHINE("2101-01-01T00:00:00Z", "NVIDIA H200", "132", "1", ""),
		  "found '2101-01-01T00:00:00Z'" },
		{ MACHINE("2026-12-02T11:29:31+01:00", "NVIDIA H200", "132", "1", ""),
		  "found '2026-12-02T11:29:31+01:00'" },
		{ MACHINE("2026-12-02T11:29:31Z", "NVIDIA H200", "-1", "1", ""),
		  "field 'sms': expected an integer from 1 to 1024, found -1" },
		{ MACHINE("2026-12-02T11:29:31Z", "NVIDIA H200", "1025", "1", ""),
		  "field 'sms': expected an integer from 1 to 1024, found 1025" },
		{ MACHINE("2026-12-02T11:29:31Z", "NVIDIA H200", "\"132\"", "1", ""),
		  "field 'sms': expected an integer, found a string" },
		{ MACHINE("2026-12-02T11:29:31Z", "NVIDIA H200", "132", "-5", ""),
		  "field 'memory_bytes': expected an integer from 1 to 1125899906842624, found -5" },
		{ MACHINE("2026-12-02T11:29:31Z", "NVIDIA H200", "132", "2251799813685248", ""),
		  "field 'memory_bytes': expected an integer from 1 to 1125899906842624, found "
		  "2251799813685248" },
		{ MACHINE("2026-12-02T11:29:31Z", "NVIDIA H200", "132", "1.5e11", ""),
		  "field 'memory_bytes': expected an integer, found a real number" },
		{ MACHINE("2026-12-02T11:29:31Z", "NVIDIA H200", "132", "1", ",\"cublaslt\":0"),
		  "field 'cublaslt': expected an integer from 1 to 99999999, found 0" },
		{ MACHINE("2026-12-02T11:29:31Z", "NVIDIA\\u001b[2JH200", "132", "1", ""),
		  "field 'gpu': expected printable UTF-8 text of 1 to 127 bytes, found a control "
		  "character (U+001B) at byte 7" },
		{ MACHINE("2026-12-02T11:29:31Z", "NVIDIA\\u0085H200", "132", "1", ""),
		  "found a control character (U+0085) at byte 7" },
		{ MACHINE("2026-12-02T11:29:31Z", "", "132", "1", ""),
		  "field 'gpu': expected printable UTF-8 text of 1 to 127 bytes, found empty text" },
		{ MACHINE("2026-12-02T11:29:31Z", "NVIDIA H200", "132", "1", ",\"cc\":\"9.0; --\""),
		  "field 'cc': expected each key once in an object, found it again" },
		{ "{\"kind\":\"machine\",\"program\":\"capsim-calibrate-gemm\",\"date\":"
		  "\"2026-12-02T11:29:31Z\",\"gpu\":\"NVIDIA H200\",\"cc\":\"9.0; --\"}\n",
		  "field 'cc': expected a compute capability MAJOR.MINOR (9.0), found '9.0; --'" },
		{ "{\"kind\":\"gemm\",\"program\":\"capsim-calibrate-gemm\",\"date\":"
		  "\"2026-12-02T11:29:31Z\",\"gpu\":\"NVIDIA H200\",\"kind\":\"machine\"}\n",
		  "field 'kind': expected each key once in an object, found it again at column" },
		{ MACHINE("2026-12-02T11:29:31Z", "NVIDIA H200", "132", "1",
			  ",\"env\":{\"NCCL_ALGO\":\"Ring\",\"NCCL_ALGO\":\"Tree\"}"),
		  "field 'NCCL_ALGO': expected each key once in an object, found it again" },
		{ MACHINE("2026-12-02T11:29:31Z", "NVIDIA H200", "132", "1",
			  ",\"env\":{\"NCCL ALGO\":\"Ring\"}"),
		  "field 'env': expected variable names (a letter or '_', then letters, digits or "
		  "'_', at most 63 bytes), found 'NCCL ALGO'" },
		{ MACHINE("2026-12-02T11:29:31Z", "NVIDIA H200", "132", "1",
			  ",\"env\":{\"1NCCL\":\"Ring\"}"),
		  "field 'env': expected variable names" },
		{ MACHINE("2026-12-02T11:29:31Z", "NVIDIA H200", "132", "1",
			  ",\"env\":{\"NCCL_ALGO\":\"Ring\\nNCCL_PROTO=LL\"}"),
		  "field 'env.NCCL_ALGO': expected printable UTF-8 text of 1 to 255 bytes, found a "
		  "control character (U+000A) at byte 5" },
		{ MACHINE("2026-12-02T11:29:31Z", "NVIDIA H200", "132", "1",
			  ",\"env\":{\"NCCL_ALGO\":7}"),
		  "field 'env.NCCL_ALGO': expected a string, found an integer" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char text[4096];
		snprintf(text, sizeof text, "%s%s", cases[i].machine, COPY_GOOD);
		refused(db, text, ":1", cases[i].what);
	}
	/* a 1 MB GPU name, and one just longer than runs.gpu keeps */
	size_t big = 1 << 20;
	char *name = malloc(big + 1);
	memset(name, 'G', big);
	name[big] = '\0';
	size_t size = big + 4096;
	char *text = malloc(size);
	snprintf(text, size, MACHINE("2026-12-02T11:29:31Z", "%s", "132", "1", "") COPY_GOOD, name);
	refused(db, text, ":1", "field 'gpu': expected printable UTF-8 text of 1 to 127 bytes, "
		"found 1048576 bytes");
	name[128] = '\0';
	snprintf(text, size, MACHINE("2026-12-02T11:29:31Z", "%s", "132", "1", "") COPY_GOOD, name);
	refused(db, text, ":1", "found 128 bytes");
	name[127] = '\0';
	snprintf(text, size, MACHINE("2026-12-02T11:29:31Z", "%s", "132", "1", "") COPY_GOOD, name);
	accepted(db, text);
	free(name);
	free(text);
	/* a leap day and the ends of the years' range go in */
	accepted(db, MACHINE("2024-02-29T23:59:59Z", "NVIDIA H200", "1", "1", "") COPY_GOOD);
	accepted(db, MACHINE("1990-01-01T00:00:00Z", "NVIDIA H200", "1024", "1125899906842624", "")
		     COPY_GOOD);
	accepted(db, MACHINE("2000-02-29T00:00:00Z", "NVIDIA H200", "132", "1",
			     ",\"env\":{\"_X1\":\"a b\",\"NCCL_EMPTY\":\"\"}") COPY_GOOD);
	refused(db, MACHINE("1900-02-29T00:00:00Z", "NVIDIA H200", "132", "1", "") COPY_GOOD, ":1",
		"found '1900-02-29T00:00:00Z'");
}

/* Every record's numbers bounded (seconds 1e-9 to 1000, GEMM m, n, k
 * integers to 2^31 - 1, bytes to 2^50, rates, watts, clocks) and its text
 * printable and short: refused at the record's line, nothing stored. */
static void test_record_bounds(void **state)
{
	(void)state;
	char db[128];
	snprintf(db, sizeof db, "%s/rb.sqlite", dir);
	static const struct {
		const char *line, *what;
	} cases[] = {
		{ "{\"kind\":\"hbm-copy\",\"bytes\":8,\"moved_bytes\":16,\"median_s\":0,"
		  "\"bytes_per_s\":8,\"samples_s\":[1]}",
		  "field 'median_s': expected a number from 1e-09 to 1000, found 0" },
		{ "{\"kind\":\"hbm-copy\",\"bytes\":8,\"moved_bytes\":16,\"median_s\":2000,"
		  "\"bytes_per_s\":0.008,\"samples_s\":[2000]}",
		  "field 'median_s': expected a number from 1e-09 to 1000, found 2000" },
		{ "{\"kind\":\"hbm-copy\",\"bytes\":8,\"moved_bytes\":16,\"median_s\":2,"
		  "\"bytes_per_s\":8,\"samples_s\":[1e-300,2,3]}",
		  "field 'samples_s[0]': expected a number from 1e-09 to 1000, found 1e-300" },
		{ "{\"kind\":\"hbm-copy\",\"bytes\":2251799813685248,\"moved_bytes\":16,"
		  "\"median_s\":2,\"bytes_per_s\":8,\"samples_s\":[2]}",
		  "field 'bytes': expected an integer from 1 to 1125899906842624, found "
		  "2251799813685248" },
		{ "{\"kind\":\"hbm-copy\",\"bytes\":8,\"moved_bytes\":16.5,\"median_s\":2,"
		  "\"bytes_per_s\":8.25,\"samples_s\":[2]}",
		  "field 'moved_bytes': expected an integer, found a real number" },
		{ "{\"kind\":\"gemm\",\"dtype\":\"bf16\",\"m\":2.5,\"n\":2,\"k\":2}",
		  "field 'm': expected an integer, found a real number" },
		{ "{\"kind\":\"gemm\",\"dtype\":\"bf16\",\"m\":2,\"n\":2147483648,\"k\":2}",
		  "field 'n': expected an integer from 1 to 2147483647, found 2147483648" },
		{ "{\"kind\":\"gemm\",\"dtype\":\"bf16\",\"m\":2,\"n\":2,\"k\":2,\"flop\":16,"
		  "\"median_s\":2,\"flop_per_s\":8,\"samples_s\":[2],\"batch\":0}",
		  "field 'batch': expected an integer from 1 to 2147483647, found 0" },
		{ "{\"kind\":\"gemm\",\"dtype\":\"bf16\\u0000\",\"m\":2,\"n\":2,\"k\":2}",
		  "expected one JSON object a line" },
		{ "{\"kind\":\"gemm\",\"dtype\":\"bfloat16-with-a-long-name\",\"m\":2,\"n\":2,\"k\":2}",
		  "field 'dtype': expected printable UTF-8 text of 1 to 15 bytes, found 25 bytes" },
		{ "{\"kind\":\"gemm\",\"dtype\":\"bf16\",\"m\":2,\"n\":2,\"k\":2,\"error\":7}",
		  "field 'error': expected a string, found an integer" },
		{ "{\"kind\":\"pcie\",\"direction\":\"h2d\",\"pinned\":1,\"bytes\":4096,"
		  "\"samples_s\":[5e-6],\"median_s\":5e-6,\"bytes_per_s\":1e300}",
		  "field 'bytes_per_s': expected a number above 0 and at most 1e+15, found 1e+300" },
		{ "{\"kind\":\"power-idle\",\"power_limit_w\":700,\"reading\":{\"power_w\":1e9,"
		  "\"sm_mhz\":345}}",
		  "field 'power_w': expected a number above 0 and at most 10000, found 1e+09" },
		{ "{\"kind\":\"power-idle\",\"power_limit_w\":700,\"reading\":{\"power_w\":80,"
		  "\"sm_mhz\":345,\"temp_c\":1000}}",
		  "field 'temp_c': expected an integer from -100 to 200, found 1000" },
		{ "{\"kind\":\"power-idle\",\"power_limit_w\":700,\"reading\":{\"power_w\":80,"
		  "\"sm_mhz\":345,\"throttle_reasons\":-4}}",
		  "field 'throttle_reasons': expected an integer from 0 to" },
		{ "{\"kind\":\"power-idle\",\"power_limit_w\":700,\"reading\":{\"power_w\":80,"
		  "\"power_w\":90,\"sm_mhz\":345}}",
		  "field 'power_w': expected each key once in an object, found it again" },
		{ "{\"kind\":\"gemm-check\",\"dtype\":\"bf16\",\"rel_err\":-1}",
		  "field 'rel_err': expected a number from 0 to 1e+06, found -1" },
		{ "{\"kind\":\"power-sustained\",\"dtype\":\"bf16\",\"m\":8,\"n\":8,\"k\":8,"
		  "\"readings\":[{\"power_w\":690,\"sm_mhz\":1695}],\"batch_flop_per_s\":[1e30]}",
		  "field 'batch_flop_per_s[0]': expected a number above 0 and at most 1e+18, found "
		  "1e+30" },
		{ "{\"kind\":\"torch-launch\",\"op\":\"add\",\"elements\":1024,\"kernels\":0,"
		  "\"host_samples_s\":[7e-6],\"host_median_s\":7e-6,\"total_median_s\":8e-6}",
		  "field 'kernels': expected an integer from 1 to 2147483647, found 0" },
		{ "{\"kind\":\"torch-step\",\"model\":\"gpt2\\r\",\"micro_batch\":8,\"seq\":1024,"
		  "\"dtype\":\"bf16\",\"mode\":\"eager\",\"error\":\"out of memory\"}",
		  "field 'model': expected printable UTF-8 text of 1 to 63 bytes, found a control "
		  "character (U+000D) at byte 5" },
		{ "{\"kind\":\"torch-step\",\"model\":\"gpt2\",\"micro_batch\":8,\"seq\":1024,"
		  "\"dtype\":\"bf16\",\"mode\":\"eager\",\"samples_s\":[0.05],\"median_s\":0.05,"
		  "\"tokens_per_s\":163840,\"peak_allocated_bytes\":1,"
		  "\"peak_reserved_bytes\":2251799813685248}",
		  "field 'peak_reserved_bytes': expected an integer from 0 to 1125899906842624" },
		{ "{\"kind\":\"gemm\",\"dtype\":\"bf16\"}", /* the first fault: m absent */
		  "field 'm': expected an integer, found nothing" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char text[4096];
		snprintf(text, sizeof text, "%s%s%s\n", MACHINE_GOOD, COPY_GOOD, cases[i].line);
		refused(db, text, ":3", cases[i].what);
	}
	/* nccl records: algo and proto short printable names, seconds in range */
	char text[4096];
	snprintf(text, sizeof text, "%s%s", nccl_machine,
		 NCCL_REC("all_reduce", "8", "1048576", "262144", "0", "2.5e-5", "41.94304",
			  "73.40032", "0"));
	char *algo = strstr(text, "\"Ring\"");
	assert_non_null(algo);
	memcpy(algo, "\"R\\ng\"", 6);
	refused(db, text, ":2", "field 'algo': expected printable UTF-8 text of 1 to 31 bytes, "
		"found a control character (U+000A) at byte 2");
}

/* "-" imports standard input; messages and runs.source call it that */
static void test_import_stdin(void **state)
{
	(void)state;
	char db[128], path[160], buf[256];
	snprintf(db, sizeof db, "%s/stdin.sqlite", dir);
	snprintf(path, sizeof path, "%s/in.jsonl", dir);
	write_file(path, MACHINE("2026-12-02T11:29:31Z", "NVIDIA H200", "0", "1", "") COPY_GOOD);
	assert_non_null(freopen(path, "r", stdin));
	capsim_diags d = { 0 };
	capsim_import_stats st;
	assert_int_equal(capsim_measure_import("-", db, &st, &d), -1);
	assert_true(d.n == 1 && !strcmp(d.v[0].where, "standard input:1"));
	assert_true(capsim_diags_contains(&d, "field 'sms': expected an integer from 1 to 1024, "
					      "found 0"));
	capsim_diags_free(&d);
	write_file(path, MACHINE_GOOD COPY_GOOD);
	assert_non_null(freopen(path, "r", stdin));
	assert_int_equal(capsim_measure_import("-", db, &st, &d), 0);
	assert_int_equal(st.copy, 1);
	assert_string_equal(query_text(db, "SELECT source FROM runs", buf, sizeof buf),
			    "standard input");
	capsim_diags_free(&d);
	/* a record-level import from "-" is named so too */
	static const char sha[] = "7e1f00d2c9a84b7e3f6a1d0c2b4e6f8a9c1d3e5f7a9b0c2d4e6f8a0b1c3d5e7f";
	static const double t[] = { 0 };
	capsim_measure_nccl rec = { .line = 9, .op = "all_reduce", .dtype = "float", .redop = "sum",
				    .algo = "default", .proto = "default", .ranks = 8, .nodes = 1,
				    .bytes = 1048576, .count = 262144, .median_s = 0,
				    .samples_s = t, .n_samples = 1 };
	capsim_measure_machine m = { .program = "nccl-tests all_reduce_perf",
				     .date = "unknown (nccl-tests log)", .gpu = "NVIDIA H100",
				     .launcher = "mpi", .ranks = 8, .nodes = 1 };
	assert_int_equal(capsim_measure_import_nccl("-", sha, db, &m, &rec, 1, &st, &d), -1);
	assert_true(d.n == 1 && !strcmp(d.v[0].where, "standard input:9"));
	assert_true(capsim_diags_contains(&d, "field 'samples_s[0]': expected a number from 1e-09 "
					      "to 1000, found 0"));
	capsim_diags_free(&d);
}

/* A record-level machine (from an nccl-tests log): its date a real day or
 * UTC time or words saying it is unknown, its program and GPU printable
 * text that fits; its records' seconds in range and names printable. */
static void test_record_machine(void **state)
{
	(void)state;
	char db[128];
	snprintf(db, sizeof db, "%s/rm.sqlite", dir);
	static const char sha[] = "8e1f00d2c9a84b7e3f6a1d0c2b4e6f8a9c1d3e5f7a9b0c2d4e6f8a0b1c3d5e7f";
	static const double t[] = { 2.385e-5 };
	const capsim_measure_nccl good = { .line = 31, .op = "all_reduce", .dtype = "float",
					   .redop = "sum", .algo = "default", .proto = "default",
					   .ranks = 8, .nodes = 1, .bytes = 1048576, .count = 262144,
					   .median_s = 2.385e-5, .samples_s = t, .n_samples = 1 };
	const capsim_measure_machine base = { .program = "nccl-tests all_reduce_perf",
					      .date = "2025-03-03", .gpu = "NVIDIA H100 80GB HBM3",
					      .launcher = "mpi", .ranks = 8, .nodes = 1 };
	static const struct {
		const char *date, *gpu, *algo;
		double median_s;
		const char *where, *what;
	} cases[] = {
		{ "9999-99-99", NULL, NULL, 0, "r.log",
		  "field 'date': expected YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ from 1990 to 2100, or "
		  "'unknown ...', found '9999-99-99'" },
		{ "2025-02-29", NULL, NULL, 0, "r.log", "found '2025-02-29'" },
		{ NULL, "NVIDIA\x1b[2J", NULL, 0, "r.log",
		  "field 'gpu': expected printable UTF-8 text of 1 to 127 bytes, found a control "
		  "character (U+001B) at byte 7" },
		{ NULL, "NVIDIA \xff\xfe", NULL, 0, "r.log",
		  "field 'gpu': expected printable UTF-8 text of 1 to 127 bytes, found a byte that "
		  "is not UTF-8 (0xff) at byte 8" },
		{ NULL, NULL, "Ring; DROP TABLE nccl; -- and then some more words", 0, "r.log:31",
		  "field 'algo': expected printable UTF-8 text of 1 to 31 bytes, found 50 bytes" },
		{ NULL, NULL, NULL, 1e300, "r.log:31",
		  "field 'samples_s[0]': expected a number from 1e-09 to 1000, found 1e+300" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		capsim_measure_machine m = base;
		capsim_measure_nccl r = good;
		double sample = cases[i].median_s;
		if (cases[i].date)
			m.date = cases[i].date;
		if (cases[i].gpu)
			m.gpu = cases[i].gpu;
		if (cases[i].algo)
			r.algo = cases[i].algo;
		if (sample > 0) {
			r.samples_s = &sample;
			r.median_s = sample;
		}
		capsim_diags d = { 0 };
		capsim_import_stats st;
		assert_int_equal(capsim_measure_import_nccl("r.log", sha, db, &m, &r, 1, &st, &d), -1);
		if (d.n != 1 || strcmp(d.v[0].where, cases[i].where) ||
		    !strstr(d.v[0].msg, cases[i].what)) {
			capsim_diags_print(&d, stderr);
			fail_msg("case %zu: expected '%s' at %s", i, cases[i].what, cases[i].where);
		}
		capsim_diags_free(&d);
		assert_true(query(db, "SELECT count(*) FROM sqlite_master WHERE name = 'runs'") == 0);
	}
	capsim_diags d = { 0 };
	capsim_import_stats st;
	capsim_measure_machine m = base;
	m.date = "unknown (nccl-tests log)";
	assert_int_equal(capsim_measure_import_nccl("r.log", sha, db, &m, &good, 1, &st, &d), 0);
	capsim_diags_free(&d);
}

/* An older database may hold names longer than query.h's fields: they are
 * cut at a UTF-8 character boundary, never inside a character. */
static void test_read_cuts_utf8(void **state)
{
	(void)state;
	char db[128];
	snprintf(db, sizeof db, "%s/utf8.sqlite", dir);
	remove(db);
	char path[160];
	snprintf(path, sizeof path, "%s/u.jsonl", dir);
	write_file(path, MACHINE_GOOD COPY_GOOD);
	capsim_diags d = { 0 };
	capsim_import_stats st;
	assert_int_equal(capsim_measure_import(path, db, &st, &d), 0);
	/* 126 ASCII bytes, then a 2-byte e-acute: 128 bytes into gpu[128];
	 * then 125 and a 3-byte euro sign into program[128] */
	char sql[1024], gpu[200], program[200];
	memset(gpu, 'A', 126);
	snprintf(gpu + 126, sizeof gpu - 126, "\xc3\xa9");
	memset(program, 'P', 125);
	snprintf(program + 125, sizeof program - 125, "\xe2\x82\xac");
	snprintf(sql, sizeof sql, "UPDATE runs SET gpu = '%s', program = '%s'", gpu, program);
	sqlite3 *h;
	assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
	assert_int_equal(sqlite3_exec(h, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
	capsim_store *s;
	assert_int_equal(capsim_store_open(db, CAPSIM_STORE_READ, &s, &d), 0);
	capsim_store_runs runs;
	assert_int_equal(capsim_store_read_runs(s, NULL, &runs, &d), 0);
	assert_int_equal(runs.n, 1);
	gpu[126] = '\0';
	program[125] = '\0';
	assert_string_equal(runs.v[0].gpu, gpu);
	assert_string_equal(runs.v[0].program, program);
	capsim_store_runs_free(&runs);
	capsim_store_close(s);
	capsim_diags_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_import_h200),
		cmocka_unit_test(test_import_power),
		cmocka_unit_test(test_faulty_files),
		cmocka_unit_test(test_import_nccl),
		cmocka_unit_test(test_import_pcie),
		cmocka_unit_test(test_import_duty),
		cmocka_unit_test(test_import_torch),
		cmocka_unit_test(test_import_host),
		cmocka_unit_test(test_faulty_new_kinds),
		cmocka_unit_test(test_upgrade_v1),
		cmocka_unit_test(test_import_records),
		cmocka_unit_test(test_machine_fields),
		cmocka_unit_test(test_record_bounds),
		cmocka_unit_test(test_import_stdin),
		cmocka_unit_test(test_record_machine),
		cmocka_unit_test(test_read_cuts_utf8),
	};
	return testutil_run_group_name("measure", tests, setup, teardown);
}
