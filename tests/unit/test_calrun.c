/* test_calrun.c - capsim calibrate run, with small shell scripts standing in
 * for calibrate/'s CUDA programs (each writes a fixture of
 * tests/data/calibrate/ to its --out): the order and progress of the steps,
 * the files and the import, --quick and --only, a failing step, a missing
 * program and an output file that exists; and the same runs called through
 * the library (calrun.h) with a callback, as a program without the command
 * line would. */
#include "testutil.h"

#include <glob.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <errno.h>

#include <jansson.h>
#include <sqlite3.h>

#include "calrun.h"

#define FIXTURES CAPSIM_SOURCE_DIR "/tests/data/calibrate/"

CAPSIM_TEST_TMPDIR("calrun")

/* A stand-in for program in bin: logs its arguments to dir/args.log, says
 * it is measuring on stderr, copies fixture to its --out, exits with
 * status. */
static void stand_in(const char *bin, const char *program, const char *fixture, int status)
{
	char path[256];
	snprintf(path, sizeof path, "%s/%s", bin, program);
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	fprintf(fp,
		"#!/bin/sh\n"
		"# stands in for %s in test_calrun.c\n"
		"echo \"%s $*\" >> '%s/args.log'\n"
		"out=\n"
		"while [ $# -gt 0 ]; do\n"
		"\tif [ \"$1\" = --out ]; then out=$2; shift; fi\n"
		"\tshift\n"
		"done\n"
		"echo '%s: measuring' >&2\n"
		"cat '%s%s' > \"$out\"\n"
		"exit %d\n",
		program, program, dir, program, FIXTURES, fixture, status);
	fclose(fp);
	assert_int_equal(chmod(path, 0755), 0);
}

/* a fresh bin directory under dir holding the stand-ins; nccl's exits
 * with nccl_status, and `missing` (a program) is left out */
static void make_bin(const char *bin, int nccl_status, const char *missing)
{
	mkdir(bin, 0755);
	static const char *const names[] = { "capsim-calibrate-gemm", "capsim-calibrate-pcie",
					     "capsim-calibrate-nccl" };
	static const char *const fixtures[] = { "gemm-duty.jsonl", "pcie.jsonl", "nccl-8gpu.jsonl" };
	for (int i = 0; i < 3; i++)
		if (!missing || strcmp(missing, names[i]))
			stand_in(bin, names[i], fixtures[i], i == 2 ? nccl_status : 0);
}

typedef struct result {
	int status;
	char out[8192], err[8192];
} result;

static void slurp(const char *path, char *buf, size_t size)
{
	buf[0] = '\0';
	FILE *fp = fopen(path, "r");
	if (!fp)
		return;
	size_t n = fread(buf, 1, size - 1, fp);
	buf[n] = '\0';
	fclose(fp);
}

/* capsim with args (shell-quoted), its stdout and stderr apart */
static void capsim(const char *args, result *r)
{
	char cmd[2048], out[128], err[128];
	snprintf(out, sizeof out, "%s/stdout", dir);
	snprintf(err, sizeof err, "%s/stderr", dir);
	snprintf(cmd, sizeof cmd, "'%s' %s >'%s' 2>'%s'", CAPSIM_BIN, args, out, err);
	int st = system(cmd);
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	slurp(out, r->out, sizeof r->out);
	slurp(err, r->err, sizeof r->err);
}

static double query(const char *db, const char *sql)
{
	sqlite3 *h;
	sqlite3_stmt *st;
	double v = -1;
	assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_double(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(h);
	return v;
}

/* how many files match a pattern */
static size_t count_files(const char *pattern)
{
	glob_t g;
	size_t n = glob(pattern, 0, NULL, &g) == 0 ? g.gl_pathc : 0;
	globfree(&g);
	return n;
}

/* p's position in s, failing the test when absent */
static size_t at(const char *s, const char *p)
{
	const char *q = strstr(s, p);
	if (!q)
		fail_msg("'%s' not in:\n%s", p, s);
	return (size_t)(q - s);
}

static void clear(const char *what)
{
	char cmd[256];
	snprintf(cmd, sizeof cmd, "rm -rf '%s/%s'", dir, what);
	assert_int_equal(system(cmd), 0);
}

/* all three in order, each with its progress, record count and import */
static void test_run_all(void **state)
{
	(void)state;
	char bin[128], args[1024], pattern[256];
	snprintf(bin, sizeof bin, "%s/bin", dir);
	make_bin(bin, 0, NULL);
	snprintf(args, sizeof args, "calibrate run --bin-dir '%s' --out-dir '%s/out' --db '%s/m.sqlite' "
		 "--name box-1", bin, dir, dir);
	result r;
	capsim(args, &r);
	if (r.status != 0)
		fail_msg("status %d:\n%s", r.status, r.err);
	size_t a = at(r.err, "[1/3] capsim-calibrate-gemm ...\n");
	size_t b = at(r.err, "capsim-calibrate-gemm: measuring");
	size_t c = at(r.err, "[1/3] capsim-calibrate-gemm ... done in ");
	size_t e = at(r.err, "[2/3] capsim-calibrate-pcie ...\n");
	size_t f = at(r.err, "capsim-calibrate-pcie: measuring");
	size_t g = at(r.err, "[3/3] capsim-calibrate-nccl ... done in ");
	assert_true(a < b && b < c && c < e && e < f && f < g);
	/* records: the lines after the machine line */
	assert_non_null(strstr(r.err, " s, 3 records\n")); /* gemm: idle and two duties */
	assert_non_null(strstr(r.err, " s, 4 records\n"));
	assert_non_null(strstr(r.err, " s, 7 records\n"));
	snprintf(pattern, sizeof pattern, "%s/out/box-1-20[0-9][0-9]-[01][0-9]-[0-3][0-9]-*.jsonl",
		 dir);
	assert_int_equal(count_files(pattern), 3);
	snprintf(pattern, sizeof pattern, "%s/out/box-1-*-nccl.jsonl", dir);
	assert_int_equal(count_files(pattern), 1);
	/* each imported, in the order run */
	char db[128];
	snprintf(db, sizeof db, "%s/m.sqlite", dir);
	assert_true(query(db, "SELECT count(*) FROM runs") == 3);
	assert_true(query(db, "SELECT id FROM runs WHERE program = 'capsim-calibrate-nccl'") == 3);
	assert_true(query(db, "SELECT count(*) FROM nccl") == 7);
	assert_true(query(db, "SELECT count(*) FROM pcie") == 4);
	assert_true(query(db, "SELECT count(*) FROM power_duty") == 2);
	assert_non_null(strstr(r.out, "0 power-duty, 7 nccl, 0 pcie, 0 torch-launch, 0 torch-step, 0 torch-host, 0 attention (0 refused by their backend)\n"));
	/* no --quick: each got --out and nothing more */
	char log[4096];
	snprintf(args, sizeof args, "%s/args.log", dir);
	slurp(args, log, sizeof log);
	assert_non_null(strstr(log, "capsim-calibrate-pcie --out "));
	assert_null(strstr(log, "--max-bytes"));

	/* again into the same files: refused before anything runs */
	clear("args.log");
	snprintf(args, sizeof args, "calibrate run --bin-dir '%s' --out-dir '%s/out' --name box-1",
		 bin, dir);
	capsim(args, &r);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "-gemm.jsonl exists; choose another --out-dir or --name"));
	snprintf(args, sizeof args, "%s/args.log", dir);
	assert_int_equal(access(args, F_OK), -1);
	clear("out");
	clear("bin");
}

/* --quick passes small sweeps; --only picks and keeps the order; no --db,
 * no database */
static void test_run_quick_only(void **state)
{
	(void)state;
	char bin[128], args[1024], path[256];
	snprintf(bin, sizeof bin, "%s/bin", dir);
	make_bin(bin, 0, NULL);
	clear("args.log");
	snprintf(args, sizeof args, "calibrate run --bin-dir '%s' --out-dir '%s/q' --quick "
		 "--only nccl,pcie --name q", bin, dir);
	result r;
	capsim(args, &r);
	if (r.status != 0)
		fail_msg("status %d:\n%s", r.status, r.err);
	assert_true(at(r.err, "[1/2] capsim-calibrate-pcie ... done") <
		    at(r.err, "[2/2] capsim-calibrate-nccl ... done"));
	assert_null(strstr(r.err, "gemm"));
	char log[4096];
	snprintf(path, sizeof path, "%s/args.log", dir);
	slurp(path, log, sizeof log);
	assert_non_null(strstr(log, "-pcie.jsonl --max-bytes 16M --reps 5\n"));
	assert_non_null(strstr(log, "-nccl.jsonl --max-bytes 1M --iters 5 --warmup 2 --samples 3\n"));
	snprintf(path, sizeof path, "%s/q/q-*-gemm.jsonl", dir);
	assert_int_equal(count_files(path), 0);
	snprintf(path, sizeof path, "%s/q/q-*.jsonl", dir);
	assert_int_equal(count_files(path), 2);
	snprintf(path, sizeof path, "%s/q/*.sqlite", dir);
	assert_int_equal(count_files(path), 0);

	snprintf(args, sizeof args, "calibrate run --bin-dir '%s' --only nccl,hbm", bin);
	capsim(args, &r);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--only: expected gemm, pcie or nccl, found 'hbm'"));
	clear("q");
	clear("bin");
}

/* a failing step: exit 1, the earlier steps' files and imports kept, its
 * own file kept but not imported */
static void test_run_failure(void **state)
{
	(void)state;
	char bin[128], args[1024], path[256];
	snprintf(bin, sizeof bin, "%s/bin", dir);
	make_bin(bin, 3, NULL);
	snprintf(args, sizeof args, "calibrate run --bin-dir '%s' --out-dir '%s/f' --db '%s/f.sqlite' "
		 "--name f", bin, dir, dir);
	result r;
	capsim(args, &r);
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.err, "[2/3] capsim-calibrate-pcie ... done in "));
	assert_non_null(strstr(r.err, "capsim calibrate run: capsim-calibrate-nccl failed "
				      "(exit status 3) after "));
	assert_non_null(strstr(r.err, "-nccl.jsonl, not imported\n"));
	assert_null(strstr(r.err, "[3/3] capsim-calibrate-nccl ... done"));
	snprintf(path, sizeof path, "%s/f/f-*.jsonl", dir);
	assert_int_equal(count_files(path), 3);
	snprintf(path, sizeof path, "%s/f.sqlite", dir);
	assert_true(query(path, "SELECT count(*) FROM runs") == 2);
	assert_true(query(path, "SELECT count(*) FROM nccl") == 0);
	assert_true(query(path, "SELECT count(*) FROM pcie") == 4);
	clear("f");
	clear("bin");
}

/* a program that never ends (a collective that hangs): stopped after
 * --timeout, the run fails naming it and the option, nothing of it imported,
 * and the program is gone */
static void test_run_hang(void **state)
{
	(void)state;
	char bin[128], args[1024], path[256], pid[64];
	snprintf(bin, sizeof bin, "%s/bin", dir);
	make_bin(bin, 0, NULL);
	snprintf(path, sizeof path, "%s/capsim-calibrate-nccl", bin);
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	fprintf(fp, "#!/bin/sh\necho $$ > '%s/hang.pid'\nexec sleep 600\n", dir);
	fclose(fp);
	assert_int_equal(chmod(path, 0755), 0);
	snprintf(args, sizeof args, "calibrate run --bin-dir '%s' --out-dir '%s/h' --db '%s/h.sqlite' "
		 "--name h --timeout 1s", bin, dir, dir);
	result r;
	capsim(args, &r);
	assert_int_equal(r.status, 1);
	at(r.err, "capsim-calibrate-nccl did not finish within 1 s and was stopped (--timeout "
		  "raises the limit)");
	snprintf(path, sizeof path, "%s/h.sqlite", dir);
	assert_true(query(path, "SELECT count(*) FROM runs") == 2);
	snprintf(path, sizeof path, "%s/hang.pid", dir);
	slurp(path, pid, sizeof pid);
	assert_true(atoi(pid) > 0);
	assert_int_equal(kill(atoi(pid), 0), -1); /* reaped: no such process */
	/* --timeout is a time in its range */
	snprintf(args, sizeof args, "calibrate run --bin-dir '%s' --timeout 0s", bin);
	capsim(args, &r);
	assert_int_equal(r.status, 2);
	at(r.err, "--timeout");
	clear("h");
	clear("bin");
}

/* a missing program: exit 2 before anything runs, naming where it looked */
static void test_run_missing(void **state)
{
	(void)state;
	char bin[128], args[1024], path[256];
	snprintf(bin, sizeof bin, "%s/bin", dir);
	make_bin(bin, 0, "capsim-calibrate-pcie");
	clear("args.log");
	snprintf(args, sizeof args, "calibrate run --bin-dir '%s' --out-dir '%s/m'", bin, dir);
	result r;
	capsim(args, &r);
	assert_int_equal(r.status, 2);
	char want[256];
	snprintf(want, sizeof want, "capsim-calibrate-pcie not found; looked in %s (--bin-dir)", bin);
	assert_non_null(strstr(r.err, want));
	snprintf(path, sizeof path, "%s/args.log", dir);
	assert_int_equal(access(path, F_OK), -1);
	snprintf(path, sizeof path, "%s/m", dir);
	assert_int_equal(access(path, F_OK), -1);
	clear("bin");
}

/* capsim calibrate import --json: one object, each file's run and counts or
 * its errors; a repeat is refused in it as on stderr */
static void test_import_json(void **state)
{
	(void)state;
	char args[1024], db[128];
	snprintf(db, sizeof db, "%s/json.sqlite", dir);
	snprintf(args, sizeof args, "calibrate import --json --db '%s' '%snccl-8gpu.jsonl' "
				    "'%spcie.jsonl'", db, FIXTURES, FIXTURES);
	result r;
	capsim(args, &r);
	assert_int_equal(r.status, 0);
	json_error_t err;
	json_t *o = json_loads(r.out, 0, &err);
	if (!o)
		fail_msg("not JSON (%s): %s", err.text, r.out);
	assert_int_equal(json_integer_value(json_object_get(o, "schema_version")), 1);
	assert_true(json_is_string(json_object_get(o, "capsim_version")));
	assert_int_equal(json_integer_value(json_object_get(o, "store_schema_version")), 6);
	assert_string_equal(json_string_value(json_object_get(o, "database")), db);
	assert_string_equal(json_string_value(json_object_get(o, "format")), "jsonl");
	json_t *imp = json_object_get(o, "imports");
	assert_int_equal(json_array_size(imp), 2);
	json_t *a = json_array_get(imp, 0), *b = json_array_get(imp, 1);
	assert_true(json_is_true(json_object_get(a, "imported")));
	assert_int_equal(json_integer_value(json_object_get(a, "run_id")), 1);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(a, "counts"), "nccl")), 7);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(b, "counts"), "pcie")), 4);
	assert_int_equal(json_integer_value(json_object_get(b, "run_id")), 2);
	json_decref(o);
	assert_true(query(db, "SELECT count(*) FROM nccl") == 7);

	/* the same file again: refused, with the reason in the object */
	snprintf(args, sizeof args, "calibrate import --json --db '%s' '%snccl-8gpu.jsonl'", db,
		 FIXTURES);
	capsim(args, &r);
	assert_int_equal(r.status, 2);
	o = json_loads(r.out, 0, &err);
	assert_non_null(o);
	a = json_array_get(json_object_get(o, "imports"), 0);
	assert_true(json_is_false(json_object_get(a, "imported")));
	const char *msg = json_string_value(json_object_get(json_array_get(json_object_get(a, "errors"), 0),
							    "message"));
	assert_non_null(msg);
	assert_non_null(strstr(msg, "already imported into"));
	assert_non_null(strstr(r.err, "already imported into"));
	json_decref(o);

	/* an nccl-tests log: 6 sizes, each out of place and in place */
	snprintf(args, sizeof args, "calibrate import --json --nccl-tests --db '%s' '%s/tests/data/"
				    "nccl-tests/h100-1node-issue290.log'", db, CAPSIM_SOURCE_DIR);
	capsim(args, &r);
	assert_int_equal(r.status, 0);
	o = json_loads(r.out, 0, &err);
	assert_non_null(o);
	assert_string_equal(json_string_value(json_object_get(o, "format")), "nccl-tests");
	a = json_array_get(json_object_get(o, "imports"), 0);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(a, "counts"), "nccl")), 12);
	assert_int_equal(json_integer_value(json_object_get(a, "run_id")), 3);
	json_decref(o);
	assert_true(query(db, "SELECT count(*) FROM runs WHERE program LIKE 'nccl-tests %'"
			      " AND ranks = 8 AND launcher = 'single-process'") == 1);
	assert_true(query(db, "SELECT count(*) FROM nccl WHERE run_id = 3 AND abs(busbw_gb_per_s"
			      " - 1.75 * algbw_gb_per_s) < 1e-9 * busbw_gb_per_s") == 12);
}

/* what a calrun callback heard: each event with its step, kind and
 * details, in order */
typedef struct heard {
	int n;
	struct {
		capsim_calrun_event ev;
		int kind, step, of, status, err, out_exists, diags;
		capsim_calrun_end end;
		long records;
		int64_t run_id;
		size_t nccl;
	} v[16];
} heard;

static void listen(capsim_calrun_event ev, const capsim_calrun_step *s, void *ctx)
{
	heard *h = ctx;
	assert_true(h->n < 16);
	h->v[h->n].ev = ev;
	h->v[h->n].kind = s->kind;
	h->v[h->n].step = s->step;
	h->v[h->n].of = s->n;
	h->v[h->n].end = s->end;
	h->v[h->n].status = s->status;
	h->v[h->n].err = s->err;
	h->v[h->n].out_exists = s->out_exists;
	h->v[h->n].records = s->records;
	h->v[h->n].run_id = s->stats.run_id;
	h->v[h->n].nccl = s->stats.nccl;
	h->v[h->n].diags = s->diags ? (int)s->diags->n : 0;
	h->n++;
}

/* the library: prepare names the files from the given date and prefix
 * (sanitised), the callback hears each step start, finish with its
 * records, and import with its run; nothing is printed by the library */
static void test_lib_run(void **state)
{
	(void)state;
	char bin[128], out[128], db[128], path[512];
	snprintf(bin, sizeof bin, "%s/bin", dir);
	snprintf(out, sizeof out, "%s/lib", dir);
	snprintf(db, sizeof db, "%s/lib.sqlite", dir);
	make_bin(bin, 0, NULL);
	capsim_calrun_options o = { .bin_dir = bin, .out_dir = out, .db = db, .name = "a b/c",
				    .date = "2031-04-05", .timeout_s = 60,
				    .want = { [CAPSIM_CALRUN_PCIE] = 1, [CAPSIM_CALRUN_NCCL] = 1 } };
	capsim_calrun_plan plan;
	capsim_diags d = { 0 };
	assert_int_equal(capsim_calrun_prepare(&o, &plan, &d), 0);
	assert_int_equal(d.n, 0);
	assert_int_equal(plan.n, 2);
	snprintf(path, sizeof path, "%s/a_b_c-2031-04-05-nccl.jsonl", out);
	assert_string_equal(plan.out[CAPSIM_CALRUN_NCCL], path);
	snprintf(path, sizeof path, "%s/capsim-calibrate-pcie", bin);
	assert_string_equal(plan.path[CAPSIM_CALRUN_PCIE], path);
	heard h = { 0 };
	assert_int_equal(capsim_calrun_run(&o, &plan, listen, &h), 0);
	static const capsim_calrun_event want[] = {
		CAPSIM_CALRUN_STARTING, CAPSIM_CALRUN_DONE, CAPSIM_CALRUN_IMPORTED,
		CAPSIM_CALRUN_STARTING, CAPSIM_CALRUN_DONE, CAPSIM_CALRUN_IMPORTED,
	};
	assert_int_equal(h.n, 6);
	for (int i = 0; i < 6; i++) {
		assert_int_equal(h.v[i].ev, want[i]);
		assert_int_equal(h.v[i].kind, i < 3 ? CAPSIM_CALRUN_PCIE : CAPSIM_CALRUN_NCCL);
		assert_int_equal(h.v[i].step, i < 3 ? 1 : 2);
		assert_int_equal(h.v[i].of, 2);
	}
	assert_int_equal(h.v[1].records, 4);
	assert_int_equal(h.v[4].records, 7);
	assert_int_equal(h.v[4].end, CAPSIM_CALRUN_EXITED);
	assert_int_equal(h.v[2].run_id, 1);
	assert_int_equal(h.v[5].run_id, 2);
	assert_int_equal(h.v[5].nccl, 7);
	assert_true(query(db, "SELECT count(*) FROM nccl") == 7);

	/* the same files again: refused before anything runs, naming the file */
	assert_int_equal(capsim_calrun_prepare(&o, &plan, &d), -1);
	assert_int_equal(d.n, 1);
	assert_false(capsim_diags_runtime(&d));
	assert_true(capsim_diags_contains(&d, "a_b_c-2031-04-05-pcie.jsonl exists"));
	capsim_diags_free(&d);
	/* a program missing: the places looked in */
	o.bin_dir = out;
	assert_int_equal(capsim_calrun_prepare(&o, &plan, &d), -1);
	snprintf(path, sizeof path, "capsim-calibrate-pcie not found; looked in %s (--bin-dir)",
		 out);
	assert_true(capsim_diags_contains(&d, path));
	capsim_diags_free(&d);
	clear("lib");
	clear("bin");
}

/* the library: a program that cannot be executed (no #! line, not a
 * binary) fails with exit status 127 and exec's errno; a program whose
 * file the store refuses stops the run with the reasons; the earlier
 * steps' files stay */
static void test_lib_failures(void **state)
{
	(void)state;
	char bin[128], out[128], db[128], path[256];
	snprintf(bin, sizeof bin, "%s/bin", dir);
	snprintf(out, sizeof out, "%s/libf", dir);
	snprintf(db, sizeof db, "%s/libf.sqlite", dir);
	make_bin(bin, 0, NULL);
	snprintf(path, sizeof path, "%s/capsim-calibrate-nccl", bin);
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("\x7f\x01 not a program\n", fp);
	fclose(fp);
	capsim_calrun_options o = { .bin_dir = bin, .out_dir = out, .db = db, .name = "f",
				    .timeout_s = 60, .want = { 1, 1, 1 } };
	capsim_calrun_plan plan;
	capsim_diags d = { 0 };
	assert_int_equal(capsim_calrun_prepare(&o, &plan, &d), 0);
	heard h = { 0 };
	assert_int_equal(capsim_calrun_run(&o, &plan, listen, &h), -1);
	assert_int_equal(h.n, 8);
	assert_int_equal(h.v[7].ev, CAPSIM_CALRUN_FAILED);
	assert_int_equal(h.v[7].kind, CAPSIM_CALRUN_NCCL);
	assert_int_equal(h.v[7].end, CAPSIM_CALRUN_EXITED);
	assert_int_equal(h.v[7].status, 127);
	assert_int_equal(h.v[7].err, ENOEXEC);
	assert_int_equal(h.v[7].out_exists, 0);
	assert_true(query(db, "SELECT count(*) FROM runs") == 2);

	/* pcie writes a file the store refuses (gemm's again: same SHA-256) */
	clear("libf");
	clear("libf.sqlite");
	stand_in(bin, "capsim-calibrate-pcie", "gemm-duty.jsonl", 0);
	o.want[CAPSIM_CALRUN_NCCL] = 0;
	assert_int_equal(capsim_calrun_prepare(&o, &plan, &d), 0);
	h.n = 0;
	assert_int_equal(capsim_calrun_run(&o, &plan, listen, &h), -1);
	assert_int_equal(h.n, 6);
	assert_int_equal(h.v[5].ev, CAPSIM_CALRUN_REFUSED);
	assert_int_equal(h.v[5].kind, CAPSIM_CALRUN_PCIE);
	assert_int_equal(h.v[5].diags, 1);
	assert_true(query(db, "SELECT count(*) FROM runs") == 1);
	clear("libf");
	clear("bin");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_all),
		cmocka_unit_test(test_run_quick_only),
		cmocka_unit_test(test_run_failure),
		cmocka_unit_test(test_run_hang),
		cmocka_unit_test(test_run_missing),
		cmocka_unit_test(test_import_json),
		cmocka_unit_test(test_lib_run),
		cmocka_unit_test(test_lib_failures),
	};
	return testutil_run_group_name("calrun", tests, setup, teardown);
}
