/* test_outfile.c - src/util/outfile.h: whole-or-nothing output files,
 * symlinks followed to the file they name, devices written through, write
 * errors reported. */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diag.h"
#include "outfile.h"

CAPSIM_TEST_TMPDIR("outfile")

/* dir/name */
static void in_dir(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* the whole file as a string (static buffer), "" if it cannot be read */
static const char *slurp(const char *path)
{
	static char buf[4096];
	buf[0] = '\0';
	FILE *f = fopen(path, "r");
	if (!f)
		return buf;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* entries of dir (besides . and ..) */
static int dir_entries(void)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "ls -A '%s' | wc -l", dir);
	FILE *p = popen(cmd, "r");
	int n = -1;
	assert_non_null(p);
	assert_int_equal(fscanf(p, "%d", &n), 1);
	pclose(p);
	return n;
}

/* a regular file is replaced by a new inode, whole, with its mode kept; a new
 * file gets 0666 less the umask; no temporary stays behind */
static void test_regular_replaced(void **state)
{
	(void)state;
	char path[128];
	in_dir(path, sizeof path, "out.txt");
	put(path, "old content that is longer than the new\n");
	assert_int_equal(chmod(path, 0640), 0);
	struct stat before, after;
	assert_int_equal(stat(path, &before), 0);
	int entries = dir_entries();

	capsim_outfile o;
	capsim_diags d = { 0 };
	assert_int_equal(capsim_outfile_open(&o, path, &d), 0);
	assert_int_equal(o.direct, 0);
	assert_true(strncmp(o.tmp, path, strlen(path)) == 0 && strlen(o.tmp) > strlen(path));
	fprintf(o.f, "new %d\n", 2385);
	/* nothing of the new text is visible before the close */
	assert_string_equal(slurp(path), "old content that is longer than the new\n");
	assert_int_equal(capsim_outfile_close(&o, &d), 0);
	assert_int_equal(d.n, 0);
	assert_string_equal(slurp(path), "new 2385\n");
	assert_int_equal(stat(path, &after), 0);
	assert_true(S_ISREG(after.st_mode));
	assert_int_equal(after.st_mode & 07777, 0640);
	assert_true(after.st_ino != before.st_ino); /* renamed over, not rewritten */
	assert_int_equal(dir_entries(), entries);

	/* a new file: the umask decides */
	char fresh[128];
	in_dir(fresh, sizeof fresh, "fresh.txt");
	mode_t mask = umask(027);
	assert_int_equal(capsim_outfile_open(&o, fresh, &d), 0);
	fputs("x", o.f);
	assert_int_equal(capsim_outfile_close(&o, &d), 0);
	umask(mask);
	assert_int_equal(stat(fresh, &after), 0);
	assert_int_equal(after.st_mode & 07777, 0640);
	unlink(fresh);
	unlink(path);
	capsim_diags_free(&d);
}

/* a symlink is the user's own: it is followed, and the regular file it names
 * is replaced whole by a temporary beside that file (not beside the link);
 * the link stays a link naming it, and a shorter text leaves no tail */
static void test_symlink_followed(void **state)
{
	(void)state;
	char target[128], link[128], buf[256];
	in_dir(target, sizeof target, "real.txt");
	in_dir(link, sizeof link, "link.txt");
	put(target, "a long old line of the target file\n");
	assert_int_equal(chmod(target, 0604), 0);
	assert_int_equal(symlink(target, link), 0);

	capsim_outfile o;
	capsim_diags d = { 0 };
	assert_int_equal(capsim_outfile_open(&o, link, &d), 0);
	assert_int_equal(o.direct, 0);
	assert_string_equal(o.dest, target);
	assert_true(strncmp(o.tmp, target, strlen(target)) == 0);
	fputs("through\n", o.f);
	assert_string_equal(slurp(target), "a long old line of the target file\n");
	assert_int_equal(capsim_outfile_close(&o, &d), 0);
	assert_int_equal(d.n, 0);
	struct stat st;
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	ssize_t n = readlink(link, buf, sizeof buf - 1);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_string_equal(buf, target);
	assert_string_equal(slurp(target), "through\n");
	assert_int_equal(stat(target, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0604);
	assert_int_equal(dir_entries(), 2);
	unlink(link);
	unlink(target);
	capsim_diags_free(&d);
}

/* a chain of relative links, each read from its own directory, ending at a
 * name that does not exist yet: that name is created, the links stay; a
 * discarded write through a link leaves its file as it was */
static void test_symlink_chain_and_discard(void **state)
{
	(void)state;
	char sub[128], a[128], b[128], target[160], tmp_target[sizeof ((capsim_outfile *)0)->tmp];
	in_dir(sub, sizeof sub, "sub");
	assert_int_equal(mkdir(sub, 0755), 0);
	in_dir(a, sizeof a, "a.txt");
	in_dir(b, sizeof b, "sub/b.txt");
	snprintf(target, sizeof target, "%s/sub/new.txt", dir);
	assert_int_equal(symlink("sub/b.txt", a), 0);
	assert_int_equal(symlink("new.txt", b), 0);

	capsim_outfile o;
	capsim_diags d = { 0 };
	assert_int_equal(capsim_outfile_open(&o, a, &d), 0);
	assert_string_equal(o.dest, target);
	fputs("made\n", o.f);
	assert_int_equal(capsim_outfile_close(&o, &d), 0);
	assert_string_equal(slurp(target), "made\n");
	struct stat st;
	assert_int_equal(lstat(a, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(lstat(b, &st), 0);
	assert_true(S_ISLNK(st.st_mode));

	assert_int_equal(capsim_outfile_open(&o, a, &d), 0);
	snprintf(tmp_target, sizeof tmp_target, "%s", o.tmp);
	fputs("half of a new text", o.f);
	capsim_outfile_discard(&o);
	assert_string_equal(slurp(target), "made\n");
	assert_int_equal(access(tmp_target, F_OK), -1);
	assert_int_equal(d.n, 0);
	unlink(a);
	unlink(b);
	unlink(target);
	rmdir(sub);
	capsim_diags_free(&d);
}

/* a link to itself: ELOOP, named by the path given; a directory: EISDIR */
static void test_loop_and_directory(void **state)
{
	(void)state;
	char loop[128], want[160];
	in_dir(loop, sizeof loop, "loop.txt");
	assert_int_equal(symlink("loop.txt", loop), 0);
	capsim_outfile o;
	capsim_diags d = { 0 };
	assert_int_equal(capsim_outfile_open(&o, loop, &d), -1);
	assert_int_equal(d.n, 1);
	assert_string_equal(d.v[0].where, loop);
	snprintf(want, sizeof want, "cannot write: %s", strerror(ELOOP));
	assert_string_equal(d.v[0].msg, want);
	unlink(loop);
	assert_int_equal(capsim_outfile_open(&o, dir, &d), -1);
	assert_int_equal(d.n, 2);
	snprintf(want, sizeof want, "cannot write: %s", strerror(EISDIR));
	assert_string_equal(d.v[1].msg, want);
	assert_int_equal(dir_entries(), 0);
	capsim_diags_free(&d);
}

/* the old fixed temporary name PATH.tmp, planted as a symlink to a victim,
 * is neither followed nor touched */
static void test_planted_tmp_not_followed(void **state)
{
	(void)state;
	char path[128], planted[128], victim[128];
	in_dir(path, sizeof path, "p.xml");
	in_dir(planted, sizeof planted, "p.xml.tmp");
	in_dir(victim, sizeof victim, "victim");
	put(victim, "precious\n");
	assert_int_equal(symlink(victim, planted), 0);

	capsim_outfile o;
	capsim_diags d = { 0 };
	assert_int_equal(capsim_outfile_open(&o, path, &d), 0);
	assert_string_not_equal(o.tmp, planted);
	fputs("<x/>\n", o.f);
	assert_int_equal(capsim_outfile_close(&o, &d), 0);
	assert_string_equal(slurp(victim), "precious\n");
	assert_string_equal(slurp(path), "<x/>\n");
	struct stat st;
	assert_int_equal(lstat(planted, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	unlink(planted);
	unlink(victim);
	unlink(path);
	capsim_diags_free(&d);
}

/* a file of capsim's own directory: a symlink found at its name is
 * replaced, the victim behind it untouched; a FIFO there is replaced without
 * being opened (no reader: opening would block); a regular file keeps its
 * mode; a directory is refused */
static void test_own_never_followed(void **state)
{
	(void)state;
	char path[128], victim[128], fifo[128], sub[128];
	in_dir(path, sizeof path, "own.md");
	in_dir(victim, sizeof victim, "victim");
	put(victim, "precious\n");
	assert_int_equal(chmod(victim, 0600), 0);
	assert_int_equal(symlink(victim, path), 0);
	capsim_outfile o;
	capsim_diags d = { 0 };
	assert_int_equal(capsim_outfile_open_own(&o, path, &d), 0);
	fputs("# report\n", o.f);
	assert_int_equal(capsim_outfile_close(&o, &d), 0);
	assert_string_equal(slurp(victim), "precious\n");
	assert_string_equal(slurp(path), "# report\n");
	struct stat st;
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	/* again over the regular file: its mode is kept */
	assert_int_equal(chmod(path, 0640), 0);
	assert_int_equal(capsim_outfile_open_own(&o, path, &d), 0);
	fputs("# again\n", o.f);
	assert_int_equal(capsim_outfile_close(&o, &d), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
	/* a FIFO: replaced, never opened */
	in_dir(fifo, sizeof fifo, "own.csv");
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(capsim_outfile_open_own(&o, fifo, &d), 0);
	fputs("a,b\n", o.f);
	assert_int_equal(capsim_outfile_close(&o, &d), 0);
	assert_int_equal(lstat(fifo, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_string_equal(slurp(fifo), "a,b\n");
	/* a directory: refused, nothing made */
	in_dir(sub, sizeof sub, "own-dir");
	assert_int_equal(mkdir(sub, 0755), 0);
	assert_int_equal(capsim_outfile_open_own(&o, sub, &d), -1);
	assert_true(capsim_diags_contains(&d, "Is a directory"));
	assert_int_equal(rmdir(sub), 0);
	unlink(path);
	unlink(fifo);
	unlink(victim);
	capsim_diags_free(&d);
}

/* /dev/null is written through and stays a character device */
static void test_dev_null(void **state)
{
	(void)state;
	capsim_outfile o;
	capsim_diags d = { 0 };
	assert_int_equal(capsim_outfile_open(&o, "/dev/null", &d), 0);
	assert_int_equal(o.direct, 1);
	assert_string_equal(o.tmp, "");
	fputs("discarded by the device\n", o.f);
	assert_int_equal(capsim_outfile_close(&o, &d), 0);
	assert_int_equal(d.n, 0);
	struct stat st;
	assert_int_equal(stat("/dev/null", &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	capsim_diags_free(&d);
}

/* a full device: the close fails and says why */
static void test_dev_full(void **state)
{
	(void)state;
	capsim_outfile o;
	capsim_diags d = { 0 };
	assert_int_equal(capsim_outfile_open(&o, "/dev/full", &d), 0);
	fputs("no room\n", o.f);
	assert_int_equal(capsim_outfile_close(&o, &d), -1);
	assert_int_equal(d.n, 1);
	assert_string_equal(d.v[0].where, "/dev/full");
	char want[128];
	snprintf(want, sizeof want, "cannot write: %s", strerror(ENOSPC));
	assert_string_equal(d.v[0].msg, want);
	assert_null(o.f);
	capsim_diags_free(&d);
}

/* a discarded write leaves the old content and no temporary */
static void test_discard(void **state)
{
	(void)state;
	char path[128], tmp[sizeof ((capsim_outfile *)0)->tmp];
	in_dir(path, sizeof path, "keep.txt");
	put(path, "the old content\n");
	int entries = dir_entries();
	capsim_outfile o;
	capsim_diags d = { 0 };
	assert_int_equal(capsim_outfile_open(&o, path, &d), 0);
	snprintf(tmp, sizeof tmp, "%s", o.tmp);
	fputs("half of a new", o.f);
	fflush(o.f);
	assert_int_equal(access(tmp, F_OK), 0);
	capsim_outfile_discard(&o);
	assert_string_equal(slurp(path), "the old content\n");
	assert_int_equal(access(tmp, F_OK), -1);
	assert_int_equal(dir_entries(), entries);
	unlink(path);
	capsim_diags_free(&d);
}

/* a missing directory: open fails, naming the path and the reason */
static void test_missing_directory(void **state)
{
	(void)state;
	char path[128], want[128];
	in_dir(path, sizeof path, "no-such-dir/out.xml");
	capsim_outfile o;
	capsim_diags d = { 0 };
	assert_int_equal(capsim_outfile_open(&o, path, &d), -1);
	assert_int_equal(d.n, 1);
	assert_string_equal(d.v[0].where, path);
	snprintf(want, sizeof want, "cannot write: %s", strerror(ENOENT));
	assert_string_equal(d.v[0].msg, want);
	assert_null(o.f);
	capsim_diags_free(&d);
}

/* "-" is standard output, flushed but not closed */
static void test_stdout(void **state)
{
	(void)state;
	char path[128];
	in_dir(path, sizeof path, "stdout.txt");
	fflush(stdout);
	int saved = dup(STDOUT_FILENO);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(saved >= 0 && fd >= 0);
	assert_int_equal(dup2(fd, STDOUT_FILENO), STDOUT_FILENO);
	close(fd);

	capsim_outfile o;
	capsim_diags d = { 0 };
	int rc_open = capsim_outfile_open(&o, "-", &d);
	FILE *f = o.f;
	int direct = o.direct;
	if (rc_open == 0)
		fprintf(o.f, "to standard output %.3f\n", 2.385);
	int rc_close = rc_open == 0 ? capsim_outfile_close(&o, &d) : -1;
	int still_open = fputs("", stdout) >= 0 && fflush(stdout) == 0;
	dup2(saved, STDOUT_FILENO);
	close(saved);

	assert_int_equal(rc_open, 0);
	assert_ptr_equal(f, stdout);
	assert_int_equal(direct, 1);
	assert_int_equal(rc_close, 0);
	assert_true(still_open);
	assert_string_equal(slurp(path), "to standard output 2.385\n");
	unlink(path);
	capsim_diags_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_regular_replaced),
		cmocka_unit_test(test_symlink_followed),
		cmocka_unit_test(test_symlink_chain_and_discard),
		cmocka_unit_test(test_loop_and_directory),
		cmocka_unit_test(test_planted_tmp_not_followed),
		cmocka_unit_test(test_own_never_followed),
		cmocka_unit_test(test_dev_null),
		cmocka_unit_test(test_dev_full),
		cmocka_unit_test(test_discard),
		cmocka_unit_test(test_missing_directory),
		cmocka_unit_test(test_stdout),
	};
	return testutil_run_group(tests, setup, teardown);
}
