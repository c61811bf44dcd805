/* test_checkpoint.c - a checkpoint's save path in parts: the machine's copy
 * of a GPU's shard into pageable host memory, its writers' serialisation and
 * the storage's raw write, and the restore's read overlapping the copy back
 * onto the GPU. Every measured save, drain and restore of capsim's probes
 * (tests/data/reference/checkpoint_records.csv) is predicted against a
 * tolerance of 15% a record, set before the comparison, beside the flat
 * efficiency of old; the rows outside it are listed with their error. The
 * parts' closed forms, the writers' bound and the scenario's fields. */
#include "catalog.h"
#include "testutil.h"
#include "residuals.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reliab.h"
#include "scenario.h"

TESTUTIL_CATALOG_FIXTURE

/* the tolerance a record, set before the records were compared */
#define TOLERANCE 0.15

/* the flat efficiency of old: torch.save's 0.534 GB/s over dd's 1.389 GB/s */
#define FLAT_EFF 0.384

/* Records outside the tolerance, each with its error as the table gives it
 * (docs/validation.md says why): the test fails when one moves by more than
 * a point or comes inside, or when another goes outside. */
static const struct {
	const char *record;
	double error;
} outside[] = {
	{ "h200-restore-bf16", +0.192 },
	{ "h100-save-ext4", -0.195 },
	{ "h100-dcp4-ext4", +0.178 },
	{ "h100-restore-ext4", -0.180 },
	{ "h100-restore-tmpfs", -0.230 },
	{ "h200-drain-thread-0", -0.247 },
	{ "h200-drain-thread-extra-5", -0.239 },
	{ "h200-drain-process-extra-6", -0.184 },
	/* held out: measured after the model was set */
	{ "h100b-dcp2-ext4", +0.363 },
	{ "h100b-dcp8-ext4", +0.508 },
	{ "h100b-restore-tmpfs", -0.236 },
	/* the third run, 4 GiB: every DCP save over 15% slow (DCP copies its
	 * shard off the GPU while its writers write; capsim charges the copy
	 * then the writes); its torch.save and restores all within */
	{ "h100f-dcp1-ext4-bf16", +0.250 },
	{ "h100f-dcp2-ext4-bf16", +0.194 },
	{ "h100f-dcp4-ext4-bf16", +0.294 },
	{ "h100f-dcp8-ext4-bf16", +0.281 },
	{ "h100f-dcp4-ext4-fp32", +0.193 },
	{ "h100f-dcp8-ext4-fp32", +0.308 },
	{ "h100f-dcp1-tmpfs-bf16", +0.329 },
	{ "h100f-dcp2-tmpfs-bf16", +0.675 },
	{ "h100f-dcp4-tmpfs-bf16", +0.622 },
	{ "h100f-dcp8-tmpfs-bf16", +0.804 },
};

/* default.xml as shipped, its checkpoint fields at their defaults; the
 * caller frees it */
static capsim_scenario *load_default(const capsim_set *sets, size_t n)
{
	capsim_scenario *s = malloc(sizeof *s);
	capsim_diags d = { 0 };
	if (capsim_scenario_load(CAPSIM_SOURCE_DIR "/scenarios/default.xml", cat, sets, n, s,
				 &d) < 0) {
		capsim_diags_print(&d, stderr);
		fail_msg("default.xml does not load");
	}
	capsim_diags_free(&d);
	return s;
}

/* what capsim predicts for row i of the records: after, the parts at the
 * defaults with the row's machine copy and storage rates; before, the flat
 * efficiency (the save and the drain at raw write / 0.384, the restore at
 * the raw read) */
static void predict(const testutil_table *t, size_t i, const capsim_ckpt_path *dflt,
		    double *after, double *before)
{
	const char *path = testutil_csv_get(t, i, "path");
	double bytes = testutil_csv_num(t, i, "bytes");
	double store = bytes / testutil_csv_num(t, i, "raw_write_bytes_per_s");
	capsim_ckpt_path p = *dflt;
	p.writers = (int)testutil_csv_num(t, i, "writers");
	if (strcmp(path, "drain") != 0)
		p.host_copy_bytes_per_s = testutil_csv_num(t, i, "host_copy_bytes_per_s");
	if (strcmp(path, "restore") == 0) {
		double read = bytes / testutil_csv_num(t, i, "raw_read_bytes_per_s");
		*after = capsim_ckpt_restore_s(&p, bytes, read);
		*before = read;
		return;
	}
	*after = capsim_ckpt_write_s(&p, bytes, store);
	if (strcmp(path, "save") == 0)
		*after += capsim_ckpt_copy_s(&p, bytes);
	*before = store / FLAT_EFF;
}

/* the listed error of a record outside the tolerance, or NAN */
static double listed_error(const char *record)
{
	for (size_t k = 0; k < sizeof outside / sizeof outside[0]; k++)
		if (strcmp(outside[k].record, record) == 0)
			return outside[k].error;
	return NAN;
}

/* Record row i for the error model (tests/unit/residuals.h): its table is
 * the probe's file the record was copied from, its stack the path taken. */
static void record(const testutil_table *t, size_t i, double after, double meas)
{
	const char *rec = testutil_csv_get(t, i, "record");
	const char *path = testutil_csv_get(t, i, "path");
	char file[256], table[256], gpu[8];
	snprintf(file, sizeof file, "%s", testutil_csv_get(t, i, "source"));
	file[strcspn(file, " ")] = '\0'; /* the file, before what the record is */
	const char *base = strrchr(file, '/');
	snprintf(table, sizeof table, "%s", base ? base + 1 : file);
	table[strcspn(table, ".")] = '\0';
	snprintf(gpu, sizeof gpu, "%.4s", rec);
	testutil_residual_record(&(testutil_residual){
		.table = table, .row = rec, .family = "checkpoint", .quantity = "checkpoint",
		.gpu = gpu, .gen = testutil_gpu_gen(gpu),
		.stack = !strcmp(path, "drain") ? "async-save" :
			 !strcmp(path, "restore") ? "torch-load" :
			 strstr(rec, "dcp") ? "dcp" : "torch-save",
		.profile = "datasheet", .gpus = 1,
		.in_sample = !strcmp(testutil_csv_get(t, i, "role"), "in-sample"),
		.predicted = after, .measured = meas });
}

/* Each record predicted, before and after, as docs/validation.md's table */
static void test_records(void **state)
{
	(void)state;
	capsim_scenario *s = load_default(NULL, 0);
	capsim_ckpt_path dflt;
	capsim_ckpt_path_of(s, &dflt);
	free(s);
	testutil_table t;
	testutil_csv_load(CAPSIM_SOURCE_DIR "/tests/data/reference/checkpoint_records.csv", &t);
	assert_int_equal(t.n_rows, 50);
	size_t listed = 0, within = 0, within_before = 0;
	double abs_before = 0, abs_after = 0;
	print_message("| record | role | measured | before (flat 38.4%%) | after (parts) |\n");
	for (size_t i = 0; i < t.n_rows; i++) {
		const char *rec = testutil_csv_get(&t, i, "record");
		double meas = testutil_csv_num(&t, i, "measured_s"), after, before;
		predict(&t, i, &dflt, &after, &before);
		double ea = after / meas - 1, eb = before / meas - 1;
		record(&t, i, after, meas);
		abs_after += fabs(ea);
		abs_before += fabs(eb);
		within_before += fabs(eb) <= TOLERANCE;
		print_message("| %s | %s | %.2f s | %.2f s, %+.1f%% | %.2f s, %+.1f%% |\n", rec,
			      testutil_csv_get(&t, i, "role"), meas, before, 100 * eb, after,
			      100 * ea);
		double doc = listed_error(rec);
		if (isnan(doc)) {
			if (fabs(ea) > TOLERANCE)
				fail_msg("%s: %+.1f%%, outside %.0f%% and not listed", rec,
					 100 * ea, 100 * TOLERANCE);
			within++;
			continue;
		}
		listed++;
		if (fabs(ea) <= TOLERANCE || fabs(ea - doc) > 0.01)
			fail_msg("%s: %+.1f%%, listed outside at %+.1f%%", rec, 100 * ea,
				 100 * doc);
	}
	print_message("within %.0f%%: %zu of %zu (before %zu); mean absolute error %.1f%% "
		      "(before %.1f%%)\n", 100 * TOLERANCE, within, t.n_rows, within_before,
		      100 * abs_after / t.n_rows, 100 * abs_before / t.n_rows);
	assert_int_equal(listed, sizeof outside / sizeof outside[0]);
	testutil_csv_free(&t);
}

/* The parts' closed forms: the copy, one writer's serialisation then the
 * write, N writers no faster than the storage, the restore the slower of
 * its read and its copy; a flat efficiency given replaces the parts */
static void test_parts(void **state)
{
	(void)state;
	const double shard = 8e9, store = 4.0; /* a 2 GB/s tier */
	capsim_ckpt_path p = { .host_copy_bytes_per_s = 1.25e9, .serialise_bytes_per_s = 2e9,
			       .writers = 1 };
	assert_rel(capsim_ckpt_copy_s(&p, shard), 6.4, 1e-12);
	assert_rel(capsim_ckpt_write_s(&p, shard, store), 4.0 + 4.0, 1e-12);
	p.writers = 2;
	assert_rel(capsim_ckpt_write_s(&p, shard, store), 4.0, 1e-12);
	p.writers = 4; /* (4 + 4) / 4 = 2 s of threads: the storage's 4 s binds */
	assert_rel(capsim_ckpt_write_s(&p, shard, store), 4.0, 1e-12);
	p.writers = 1;
	double last = INFINITY;
	for (int n = 1; n <= 64; n *= 2) {
		p.writers = n;
		double w = capsim_ckpt_write_s(&p, shard, 1.0);
		assert_true(w <= last && w >= 1.0);
		last = w;
	}
	assert_rel(last, 1.0, 1e-12);
	assert_rel(capsim_ckpt_restore_s(&p, shard, 2.0), 6.4, 1e-12);
	assert_rel(capsim_ckpt_restore_s(&p, shard, 9.0), 9.0, 1e-12);
	p.flat_eff = 0.384;
	assert_true(capsim_ckpt_copy_s(&p, shard) == 0);
	assert_rel(capsim_ckpt_write_s(&p, shard, store), store / 0.384, 1e-12);
}

/* The scenario's fields reach the estimate: more writers shorten a
 * synchronous save, a faster host copy shortens its copy and the restore
 * where the copy binds, the flat efficiency of old still loads and
 * replaces the parts, and an async save's drain is the writers' part */
static void test_scenario_fields(void **state)
{
	(void)state;
	capsim_scenario *s = load_default(NULL, 0);
	assert_rel(s->checkpoint_host_copy, 1.372e9, 1e-12);
	assert_rel(s->checkpoint_serialise, 2.35e9, 1e-12);
	assert_int_equal(s->checkpoint_writers, 1);
	assert_true(s->checkpoint_eff == 0);
	free(s);
	const capsim_set sync1[] = { { "cluster.storage.checkpoint-mode", "sync" } };
	const capsim_set sync4[] = { { "cluster.storage.checkpoint-mode", "sync" },
				     { "cluster.storage.checkpoint-writers", "4" },
				     { "cluster.storage.checkpoint-host-copy", "10 GB/s" } };
	const capsim_set flat[] = { { "cluster.storage.checkpoint-mode", "sync" },
				    { "cluster.storage.checkpoint-efficiency", "38.4%" } };
	capsim_scenario *a = load_default(sync1, 1), *b = load_default(sync4, 3);
	capsim_scenario *f = load_default(flat, 2);
	assert_int_equal(b->checkpoint_writers, 4);
	capsim_step st = { .time_to_train_s = 1e6 };
	capsim_reliab ra, rb, rf;
	capsim_reliab_estimate(a, &st, 8, &ra);
	capsim_reliab_estimate(b, &st, 8, &rb);
	capsim_reliab_estimate(f, &st, 8, &rf);
	assert_true(ra.has_storage && rb.has_storage && rf.has_storage);
	double shard = ra.checkpoint_bytes / capsim_scenario_gpus(a);
	assert_rel(ra.copy_s, shard / 1.372e9, 1e-12);
	assert_rel(rb.copy_s, shard / 10e9, 1e-12);
	assert_true(rb.write_s < ra.write_s);
	assert_rel(ra.blocking_s, ra.copy_s + ra.write_s, 1e-12);
	assert_true(rb.restore_s <= ra.restore_s);
	/* the flat figure charges the whole save at raw write / 0.384: the
	 * parts' save stands to it as (copy + serialise + write) to write / 0.384 */
	assert_true(rf.copy_s == 0);
	assert_rel(rf.blocking_s, rf.write_s, 1e-12);
	double store = rf.write_s * 0.384;
	assert_rel(ra.write_s, shard / 2.35e9 + store, 1e-9);
	free(a);
	free(b);
	free(f);
	/* async (default.xml is Megatron's): training waits for the pinned copy,
	 * and the drain is the writers' part alone, without the pageable copy */
	capsim_scenario *as = load_default(NULL, 0);
	capsim_reliab rs;
	capsim_reliab_estimate(as, &st, 8, &rs);
	assert_true(capsim_checkpoint_async(as));
	assert_rel(capsim_drain_time(as, &rs), rs.write_s, 1e-12);
	assert_rel(rs.write_s, ra.write_s, 1e-12);
	assert_true(rs.blocking_s < rs.copy_s);
	free(as);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_records),
		cmocka_unit_test(test_parts),
		cmocka_unit_test(test_scenario_fields),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
