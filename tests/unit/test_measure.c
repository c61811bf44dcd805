/* test_measure.c - the measurement store: calibrate/'s H200 run goes into
 * SQLite whole, once; a faulty file is refused at its line and leaves the
 * database as it was. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "measure.h"

#define H200 CAPSIM_SOURCE_DIR "/calibrate/results/h200-2026-12-02-gemm.jsonl"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof dir, "/tmp/capsim-measure-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

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
	assert_true(query(db, "PRAGMA user_version") == CAPSIM_MEASURE_SCHEMA);

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
	"{\"kind\":\"machine\",\"program\":\"capsim-calibrate-gemm\",\"date\":\"2026-12-02\","
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
		  ":3", "median_s: 2 is not the median of samples_s (3)" },
		{ "{\"kind\":\"hbm-copy\",\"bytes\":8,\"moved_bytes\":16,\"median_s\":2,"
		  "\"bytes_per_s\":8,\"samples_s\":[2]}\n"
		  "{\"kind\":\"gemm\",\"dtype\":\"bf16\",\"m\":2,\"n\":2,\"k\":2,\"flop\":99,"
		  "\"median_s\":2,\"flop_per_s\":8,\"samples_s\":[2]}\n",
		  ":3", "flop: 99 is not 2 m n k = 16" },
		{ "{\"kind\":\"hbm-copy\",\"bytes\":8,\"moved_bytes\":16,\"median_s\":2,"
		  "\"bytes_per_s\":8,\"samples_s\":[2]}\n"
		  "{\"kind\":\"gemm\",\"dtype\":\"bf16\",\"m\":-2,\"n\":2,\"k\":2}\n",
		  ":3", "m: expected a positive number, found -2" },
		{ "{\"kind\":\"hbm-copy\",\"bytes\":8,\"moved_bytes\":16,\"median_s\":2,"
		  "\"bytes_per_s\":8,\"samples_s\":[2]}\n"
		  "{\"kind\":\"power-sustained\",\"dtype\":\"bf16\",\"m\":2,\"n\":2,\"k\":2,"
		  "\"readings\":[],\"batch_flop_per_s\":[1]}\n",
		  ":3", "expected two non-empty arrays" },
		{ "{\"kind\":\"hbm-copy\",\"bytes\":8,\"moved_bytes\":16,\"median_s\":2,"
		  "\"bytes_per_s\":8,\"samples_s\":[2]}\n"
		  "{\"kind\":\"nccl\"}\n",
		  ":3", "found 'nccl'" },
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
	write_file(bad, good);
	assert_int_equal(capsim_measure_import(bad, db, &st, &d), 0);
	assert_int_equal(st.copy, 1);
	assert_true(query(db, "SELECT count(*) FROM runs") == 1);
	capsim_diags_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_import_h200),
		cmocka_unit_test(test_import_power),
		cmocka_unit_test(test_faulty_files),
	};
	return cmocka_run_group_tests_name("measure", tests, setup, teardown);
}
