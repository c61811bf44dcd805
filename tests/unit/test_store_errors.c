/* test_store_errors.c - the store's database failures:
 * a locked database is waited for, and four imports at once into one
 * database all succeed; a lock held past the wait, a corrupt file and a
 * text file given as the database are runtime failures (exit status 1)
 * naming the file; a newer schema is refused by readers (exit status 2); a
 * refused import leaves no database it created behind. The read-only and
 * full file systems need a mount namespace: tests/scripts/store_errors.sh. */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "measure.h"
#include "query.h"
#include "store.h"
#include "storeint.h"

#define RESULTS CAPSIM_SOURCE_DIR "/calibrate/results/h200-2026-12-02-"

CAPSIM_TEST_TMPDIR("store-errors")

/* twelve real runs of calibrate/'s programs, three for each of four imports */
static const char *const runs[4][3] = {
	{ RESULTS "gemm.jsonl", RESULTS "gemm-b.jsonl", RESULTS "gemm-c.jsonl" },
	{ RESULTS "gpt2-step-a.jsonl", RESULTS "gpt2-step-b.jsonl", RESULTS "gpt2-step-c.jsonl" },
	{ RESULTS "nccl-1gpu.jsonl", RESULTS "nccl-1gpu-mpi.jsonl", RESULTS "pcie.jsonl" },
	{ RESULTS "power.jsonl", RESULTS "power-b.jsonl", RESULTS "gpt2-step-compile.jsonl" },
};

/* the tables whose rows the imports write */
static const char *const tables[] = {
	"runs", "gemm", "gemm_failed", "gemm_check", "copy_bandwidth", "power_idle",
	"power_sustained", "power_duty", "nccl", "pcie", "torch_launch", "torch_step",
};

static void path_in_dir(char *out, size_t size, const char *name)
{
	snprintf(out, size, "%s/%s", dir, name);
}

static void import_ok(const char *file, const char *db)
{
	capsim_diags d = { 0 };
	capsim_import_stats st;
	if (capsim_measure_import(file, db, &st, &d) < 0) {
		capsim_diags_print(&d, stderr);
		fail_msg("%s not imported", file);
	}
	capsim_diags_free(&d);
}

static int64_t count_rows(const char *db, const char *table)
{
	sqlite3 *h;
	sqlite3_stmt *st;
	char sql[96];
	snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", table);
	assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	int64_t n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(h);
	return n;
}

/* a second connection holding db's write lock (BEGIN EXCLUSIVE) */
static sqlite3 *hold_lock(const char *db)
{
	sqlite3 *h;
	assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
	assert_int_equal(sqlite3_exec(h, "BEGIN EXCLUSIVE", NULL, NULL, NULL), SQLITE_OK);
	return h;
}

static void release_lock(sqlite3 *h)
{
	assert_int_equal(sqlite3_exec(h, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
}

/* capsim calibrate import of files[0..2] into db, as a child process whose
 * output goes to log */
static pid_t spawn_import(const char *const files[3], const char *db, const char *log)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			_exit(126);
		dup2(fd, 1);
		dup2(fd, 2);
		execl(CAPSIM_BIN, CAPSIM_BIN, "calibrate", "import", files[0], files[1], files[2],
		      "--db", db, (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* the exit status of pid; its log printed when it is not 0 */
static int reap(pid_t pid, const char *log)
{
	int st;
	while (waitpid(pid, &st, 0) < 0)
		assert_int_equal(errno, EINTR);
	int rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	if (rc != 0) {
		char cmd[1024];
		snprintf(cmd, sizeof cmd, "cat '%s' >&2", log);
		assert_int_equal(system(cmd), 0);
	}
	return rc;
}

/* what holds db's write lock while the four imports start */
typedef enum lock_holder {
	HOLD_NOTHING,
	HOLD_LOCK,           /* a connection holding an existing db locked */
	HOLD_FAILING_CREATE, /* an import creating db that then fails */
} lock_holder;

/* Four imports of three runs each into db at once, while what holds the
 * lock does so for hold_s seconds first: every one exits 0, and db holds
 * every row a one-at-a-time import stores. */
static void four_at_once(const char *db, lock_holder hold, unsigned hold_s)
{
	char ref[160], log[4][160];
	path_in_dir(ref, sizeof ref, "one-at-a-time.sqlite");
	if (access(ref, F_OK) != 0)
		for (int i = 0; i < 4; i++)
			for (int j = 0; j < 3; j++)
				import_ok(runs[i][j], ref);
	sqlite3 *locker = hold == HOLD_LOCK ? hold_lock(db) : NULL;
	capsim_store *creator = NULL;
	capsim_diags d = { 0 };
	if (hold == HOLD_FAILING_CREATE)
		assert_int_equal(capsim_store__begin_write(db, &creator, &d), 0);
	pid_t pid[4];
	for (int i = 0; i < 4; i++) {
		snprintf(log[i], sizeof log[i], "%s/import-%d.log", dir, i);
		pid[i] = spawn_import(runs[i], db, log[i]);
	}
	sleep(hold_s);
	if (locker)
		release_lock(locker);
	if (creator) {
		assert_int_equal(capsim_store__end_write(creator, -1, &d), -1);
		assert_int_equal(d.n, 0);
	}
	for (int i = 0; i < 4; i++)
		assert_int_equal(reap(pid[i], log[i]), 0);
	for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
		if (count_rows(db, tables[t]) != count_rows(ref, tables[t]))
			fail_msg("%s: %lld rows, one at a time %lld", tables[t],
				 (long long)count_rows(db, tables[t]),
				 (long long)count_rows(ref, tables[t]));
	assert_int_equal(count_rows(db, "runs"), 12);
}

/* four imports racing to create one new database */
static void test_four_imports_new_db(void **state)
{
	(void)state;
	char db[160];
	path_in_dir(db, sizeof db, "race-new.sqlite");
	four_at_once(db, HOLD_NOTHING, 0);
}

/* four imports waiting on a database another process has locked for 6 s,
 * longer than SQLite's old 5 s busy timeout */
static void test_four_imports_wait_for_lock(void **state)
{
	(void)state;
	char db[160];
	path_in_dir(db, sizeof db, "race-locked.sqlite");
	capsim_store *s;
	capsim_diags d = { 0 };
	assert_int_equal(capsim_store_open(db, CAPSIM_STORE_WRITE, &s, &d), 0);
	capsim_store_close(s);
	four_at_once(db, HOLD_LOCK, 6);
}

/* four imports waiting on a new database whose creator then fails and
 * removes it: they find the file gone and make it again, none writing into
 * the removed one */
static void test_four_imports_creator_fails(void **state)
{
	(void)state;
	char db[160];
	path_in_dir(db, sizeof db, "race-removed.sqlite");
	four_at_once(db, HOLD_FAILING_CREATE, 1);
}

/* a lock held past the busy limit: a runtime failure that names the
 * database and the wait, and the database as it was */
static void test_locked_past_the_wait(void **state)
{
	(void)state;
	char db[160];
	path_in_dir(db, sizeof db, "locked.sqlite");
	import_ok(runs[0][0], db);
	sqlite3 *holder = hold_lock(db);
	capsim_store__set_busy_limit_ms(300);
	capsim_diags d = { 0 };
	capsim_import_stats st;
	assert_int_equal(capsim_measure_import(runs[2][2], db, &st, &d), -1);
	capsim_store__set_busy_limit_ms(300000);
	release_lock(holder);
	assert_int_equal(d.n, 1);
	assert_string_equal(d.v[0].where, db);
	assert_string_equal(d.v[0].msg, "database is locked by another process (waited 0.3 s)");
	assert_true(capsim_diags_runtime(&d));
	capsim_diags_free(&d);
	assert_int_equal(count_rows(db, "runs"), 1);
}

/* Overwrite 8 KiB in the middle of db with bytes that are no page. */
static void damage(const char *db)
{
	struct stat sb;
	assert_int_equal(stat(db, &sb), 0);
	assert_true(sb.st_size > 64 * 1024);
	FILE *fp = fopen(db, "r+b");
	assert_non_null(fp);
	assert_int_equal(fseek(fp, (long)(sb.st_size / 2 / 4096) * 4096, SEEK_SET), 0);
	for (int i = 0; i < 8192; i++)
		fputc((i * 131 + 7) & 0xff, fp);
	assert_int_equal(fclose(fp), 0);
}

/* capsim_store_open(path, mode) fails with one message whose text begins
 * with want, about path, of the kind runtime says */
static void open_fails(const char *path, int mode, const char *want, int runtime)
{
	capsim_store *s = (capsim_store *)1;
	capsim_diags d = { 0 };
	assert_int_equal(capsim_store_open(path, mode, &s, &d), -1);
	assert_null(s);
	if (d.n != 1 || strncmp(d.v[0].msg, want, strlen(want)) != 0 ||
	    strcmp(d.v[0].where, path) != 0) {
		capsim_diags_print(&d, stderr);
		fail_msg("%s: expected one '%s: error: %s...'", path, path, want);
	}
	assert_int_equal(capsim_diags_runtime(&d), runtime);
	capsim_diags_free(&d);
}

/* `capsim fit --db db`: its exit status, and its stderr holding want */
static void fit_fails(const char *db, int status, const char *want)
{
	char cmd[1024], log[160], out[160];
	path_in_dir(log, sizeof log, "fit.log");
	path_in_dir(out, sizeof out, "fit.xml");
	snprintf(cmd, sizeof cmd, "'%s' fit --db '%s' --out '%s' >'%s' 2>&1", CAPSIM_BIN, db, out,
		 log);
	int st = system(cmd);
	assert_true(WIFEXITED(st));
	snprintf(cmd, sizeof cmd, "grep -qF -- '%s: error: %s' '%s'", db, want, log);
	if (WEXITSTATUS(st) != status || system(cmd) != 0) {
		snprintf(cmd, sizeof cmd, "cat '%s' >&2", log);
		assert_int_equal(system(cmd), 0);
		fail_msg("fit --db %s: exit status %d, expected %d and '%s'", db, WEXITSTATUS(st),
			 status, want);
	}
}

/* pages overwritten in the middle of a real database: corrupt, exit 1 */
static void test_corrupt_pages(void **state)
{
	(void)state;
	char db[160];
	path_in_dir(db, sizeof db, "corrupt.sqlite");
	import_ok(runs[0][1], db);
	import_ok(runs[0][2], db);
	damage(db);
	open_fails(db, CAPSIM_STORE_READ, "corrupt (SQLite: ", 1);
	open_fails(db, CAPSIM_STORE_WRITE, "corrupt (SQLite: ", 1);
	capsim_diags d = { 0 };
	capsim_import_stats st;
	assert_int_equal(capsim_measure_import(runs[2][2], db, &st, &d), -1);
	assert_true(capsim_diags_contains(&d, "corrupt (SQLite: "));
	assert_true(capsim_diags_runtime(&d));
	capsim_diags_free(&d);
	fit_fails(db, 1, "corrupt (SQLite: ");
}

/* a text file given as the database: not an SQLite file, exit 1 */
static void test_text_file(void **state)
{
	(void)state;
	char db[160];
	path_in_dir(db, sizeof db, "text.sqlite");
	FILE *fp = fopen(db, "w");
	assert_non_null(fp);
	for (int i = 0; i < 100; i++)
		fputs("this is a text file, not a database of measurements\n", fp);
	assert_int_equal(fclose(fp), 0);
	open_fails(db, CAPSIM_STORE_READ, "not a capsim database (not an SQLite file)", 1);
	open_fails(db, CAPSIM_STORE_WRITE, "not a capsim database (not an SQLite file)", 1);
	fit_fails(db, 1, "not a capsim database (not an SQLite file)");
	struct stat sb;
	assert_int_equal(stat(db, &sb), 0);
	assert_int_equal(sb.st_size, 100 * 52);
}

/* a database of a newer schema: every reader refuses it, as bad input
 * (exit 2: the user's file is incompatible with this capsim) */
static void test_newer_schema(void **state)
{
	(void)state;
	char db[160];
	path_in_dir(db, sizeof db, "newer.sqlite");
	import_ok(runs[0][0], db);
	sqlite3 *h;
	assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
	assert_int_equal(sqlite3_exec(h, "PRAGMA user_version = 7", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
	const char *want = "schema version 7 is newer than this capsim (6); use a newer capsim";
	open_fails(db, CAPSIM_STORE_READ, want, 0);
	open_fails(db, CAPSIM_STORE_WRITE, want, 0);
	fit_fails(db, 2, want);
}

/* a refused import (a bad file, from a path or standard input) leaves no
 * database it created behind */
static void test_refused_import_leaves_nothing(void **state)
{
	(void)state;
	char db[160], journal[176], bad[160];
	path_in_dir(db, sizeof db, "refused.sqlite");
	snprintf(journal, sizeof journal, "%s-journal", db);
	path_in_dir(bad, sizeof bad, "bad.jsonl");
	FILE *fp = fopen(bad, "w");
	assert_non_null(fp);
	fputs("{\"kind\": \"machine\", \"program\": \"capsim-calibrate-gemm\"}\n", fp);
	assert_int_equal(fclose(fp), 0);
	capsim_diags d = { 0 };
	capsim_import_stats st;
	assert_int_equal(capsim_measure_import(bad, db, &st, &d), -1);
	assert_false(capsim_diags_runtime(&d));
	capsim_diags_free(&d);
	assert_int_equal(access(db, F_OK), -1);
	assert_int_equal(access(journal, F_OK), -1);
	/* a database that existed stays, as it was */
	import_ok(runs[2][2], db);
	assert_int_equal(capsim_measure_import(bad, db, &st, &d), -1);
	capsim_diags_free(&d);
	assert_int_equal(count_rows(db, "runs"), 1);
	/* the command says so too: exit 2, and no file */
	char cmd[1024], other[160];
	path_in_dir(other, sizeof other, "refused-cli.sqlite");
	snprintf(cmd, sizeof cmd, "'%s' calibrate import '%s' --db '%s' 2>/dev/null", CAPSIM_BIN,
		 bad, other);
	int rc = system(cmd);
	assert_true(WIFEXITED(rc));
	assert_int_equal(WEXITSTATUS(rc), 2);
	assert_int_equal(access(other, F_OK), -1);
	/* and from standard input ("-"), which its messages call so */
	char log[160];
	path_in_dir(log, sizeof log, "stdin.log");
	snprintf(cmd, sizeof cmd, "printf '{\"kind\": \"bad\"}\\n' | '%s' calibrate import - "
		 "--db '%s' 2>'%s'", CAPSIM_BIN, other, log);
	rc = system(cmd);
	assert_true(WIFEXITED(rc));
	assert_int_equal(WEXITSTATUS(rc), 2);
	assert_int_equal(access(other, F_OK), -1);
	snprintf(cmd, sizeof cmd, "grep -q \"^standard input:1: error: field 'kind': \" '%s'", log);
	assert_int_equal(system(cmd), 0);
}

/* the names in dir, sorted, one a line */
static void listing(const char *d, char *out, size_t size)
{
	char cmd[400];
	snprintf(cmd, sizeof cmd, "ls -A '%s'", d);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	size_t n = fread(out, 1, size - 1, p);
	out[n] = '\0';
	pclose(p);
}

/* a store path that is no regular file is refused, for reading and for
 * writing, before SQLite opens it: nothing is created beside it */
static void test_not_a_file(void **state)
{
	(void)state;
	char sub[160], fifo[200], link[200], before[1024], after[1024];
	path_in_dir(sub, sizeof sub, "notfile");
	assert_int_equal(mkdir(sub, 0755), 0);
	snprintf(fifo, sizeof fifo, "%s/fifo", sub);
	assert_int_equal(mkfifo(fifo, 0644), 0);
	snprintf(link, sizeof link, "%s/link", sub);
	assert_int_equal(symlink(".", link), 0);
	listing(sub, before, sizeof before);
	static const char want[] = "expected a regular file for the store (an SQLite database), "
				   "found ";
	for (int mode = CAPSIM_STORE_READ; mode <= CAPSIM_STORE_WRITE; mode++) {
		open_fails(fifo, mode, want, 0);
		open_fails(sub, mode, want, 0);
		open_fails(link, mode, want, 0);
		capsim_store *s;
		capsim_diags d = { 0 };
		assert_int_equal(capsim_store_open("-", mode, &s, &d), -1);
		assert_true(capsim_diags_contains(&d, "a store cannot be standard input or output"));
		assert_false(capsim_diags_runtime(&d));
		capsim_diags_free(&d);
	}
	assert_int_equal(access("-", F_OK), -1);
	listing(sub, after, sizeof after);
	assert_string_equal(before, after);
	assert_string_equal(after, "fifo\nlink\n");
}

/* SQLite's files beside a store, where there, are regular files: a symlink
 * planted as the -journal is refused, and what it points to unchanged */
static void test_planted_journal(void **state)
{
	(void)state;
	char db[160], journal[176], victim[160];
	path_in_dir(db, sizeof db, "planted.sqlite");
	path_in_dir(victim, sizeof victim, "victim");
	snprintf(journal, sizeof journal, "%s-journal", db);
	import_ok(runs[0][0], db);
	FILE *fp = fopen(victim, "w");
	assert_non_null(fp);
	fputs("the victim\n", fp);
	assert_int_equal(fclose(fp), 0);
	assert_int_equal(symlink(victim, journal), 0);
	for (int mode = CAPSIM_STORE_READ; mode <= CAPSIM_STORE_WRITE; mode++) {
		capsim_store *s;
		capsim_diags d = { 0 };
		assert_int_equal(capsim_store_open(db, mode, &s, &d), -1);
		assert_int_equal(d.n, 1);
		assert_string_equal(d.v[0].where, journal);
		assert_string_equal(d.v[0].msg, "expected SQLite's journal file of the store to be a "
				    "regular file, found a symbolic link");
		assert_false(capsim_diags_runtime(&d));
		capsim_diags_free(&d);
	}
	struct stat sb;
	assert_int_equal(stat(victim, &sb), 0);
	assert_int_equal(sb.st_size, 11);
	unlink(journal);
}

/* A reader creates nothing: a store in write-ahead-log mode without its
 * -wal (as SQLite leaves one when its last writer closes) is read with no
 * -wal or -shm made beside it (SQLite alone leaves both), and so is one in
 * rollback-journal mode */
static void test_reader_creates_nothing(void **state)
{
	(void)state;
	char sub[160], db[200], before[1024], after[1024];
	path_in_dir(sub, sizeof sub, "reader");
	assert_int_equal(mkdir(sub, 0755), 0);
	snprintf(db, sizeof db, "%s/m.sqlite", sub);
	import_ok(runs[0][0], db);
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1) {
			sqlite3 *h;
			assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
			assert_int_equal(sqlite3_exec(h, "PRAGMA journal_mode=WAL", NULL, NULL, NULL),
					 SQLITE_OK);
			sqlite3_close(h);
		}
		listing(sub, before, sizeof before);
		assert_string_equal(before, "m.sqlite\n");
		capsim_store *s;
		capsim_diags d = { 0 };
		assert_int_equal(capsim_store_open(db, CAPSIM_STORE_READ, &s, &d), 0);
		capsim_store_runs r;
		assert_int_equal(capsim_store_read_runs(s, NULL, &r, &d), 0);
		assert_int_equal(r.n, 1);
		capsim_store_runs_free(&r);
		capsim_store_close(s);
		capsim_diags_free(&d);
		listing(sub, after, sizeof after);
		assert_string_equal(after, "m.sqlite\n");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_four_imports_new_db),
		cmocka_unit_test(test_four_imports_wait_for_lock),
		cmocka_unit_test(test_four_imports_creator_fails),
		cmocka_unit_test(test_locked_past_the_wait),
		cmocka_unit_test(test_corrupt_pages),
		cmocka_unit_test(test_text_file),
		cmocka_unit_test(test_newer_schema),
		cmocka_unit_test(test_refused_import_leaves_nothing),
		cmocka_unit_test(test_not_a_file),
		cmocka_unit_test(test_planted_journal),
		cmocka_unit_test(test_reader_creates_nothing),
	};
	return testutil_run_group_name("store_errors", tests, setup, teardown);
}
