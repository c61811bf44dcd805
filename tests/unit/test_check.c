/* test_check.c - src/util/check.h: a failed check aborts (SIGABRT) after
 * naming its file, line, function and condition; the unchecked definitions
 * never evaluate CAPSIM_ASSERT's condition and keep ALWAYS/NEVER's branch;
 * the library's checks follow the build's setting, and are on under the
 * sanitizers (CI's test build). */
#include "testutil.h"

#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "hmap.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(SANITIZED)
#define SANITIZED 1
#endif

/* what a child run by die() left: how it ended, and its standard error */
typedef struct {
	int status;
	char err[4096];
} death;

/* Run fn(arg) in a child with standard error into out->err, no core file
 * and SIGABRT's default action; fn returning exits 0. */
static void die(void (*fn)(void *), void *arg, death *out)
{
	int fd[2];
	assert_int_equal(pipe(fd), 0);
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct rlimit none = { 0, 0 };
		setrlimit(RLIMIT_CORE, &none);
		signal(SIGABRT, SIG_DFL);
		close(fd[0]);
		dup2(fd[1], STDERR_FILENO);
		fn(arg);
		_exit(0);
	}
	close(fd[1]);
	size_t n = 0;
	ssize_t r;
	while ((r = read(fd[0], out->err + n, sizeof out->err - 1 - n)) > 0)
		n += (size_t)r;
	out->err[n] = '\0';
	close(fd[0]);
	assert_int_equal(waitpid(pid, &out->status, 0), pid);
}

static void assert_aborted(const death *d)
{
	if (!WIFSIGNALED(d->status) || WTERMSIG(d->status) != SIGABRT)
		fail_msg("expected SIGABRT, got status %#x; stderr: %s", d->status, d->err);
}

static int trip_line;

/* a checked assertion on a local invariant: trips on ranks 9; NULL (8
 * ranks) holds, and only records the assertion's line */
static void trip_assert(void *arg)
{
	int ranks = arg ? *(int *)arg : 8;
	trip_line = __LINE__ + 1;
	CAPSIM_ASSERT_ON(ranks > 0 && ranks <= 8);
}

static void test_failed_check_aborts_with_its_place(void **state)
{
	(void)state;
	int ranks = 9;
	trip_assert(NULL);
	death d;
	die(trip_assert, &ranks, &d);
	assert_aborted(&d);
	char want[256];
	snprintf(want, sizeof want,
		 "capsim: internal check failed: tests/unit/test_check.c:%d: trip_assert: "
		 "ranks > 0 && ranks <= 8\n",
		 trip_line);
	assert_string_equal(d.err, want);
}

/* a check that holds lets the program go on */
static void hold_assert(void *arg)
{
	int ranks = *(int *)arg;
	CAPSIM_ASSERT_ON(ranks > 0 && ranks <= 8);
	if (CAPSIM_NEVER_ON(ranks > 8) || !CAPSIM_ALWAYS_ON(ranks > 0))
		_exit(3);
}

static void test_holding_check_goes_on(void **state)
{
	(void)state;
	int ranks = 8;
	death d;
	die(hold_assert, &ranks, &d);
	assert_true(WIFEXITED(d.status));
	assert_int_equal(WEXITSTATUS(d.status), 0);
	assert_string_equal(d.err, "");
}

static void trip_never(void *arg)
{
	size_t k = *(size_t *)arg;
	if (CAPSIM_NEVER_ON(k > 24))
		k = 24;
	_exit((int)k);
}

static void test_never_aborts_when_true(void **state)
{
	(void)state;
	size_t k = 25;
	death d;
	die(trip_never, &k, &d);
	assert_aborted(&d);
	assert_non_null(strstr(d.err, ": trip_never: !(k > 24)\n"));
}

static int evaluated;

static int count_call(int v)
{
	evaluated++;
	return v;
}

#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wunevaluated-expression"
#endif
static void test_unchecked_never_evaluates(void **state)
{
	(void)state;
	evaluated = 0;
	int n = 0;
	CAPSIM_ASSERT_OFF(++n == 5);
	CAPSIM_ASSERT_OFF(count_call(0));
	assert_int_equal(n, 0);
	assert_int_equal(evaluated, 0);
	/* ALWAYS and NEVER keep the branch: their condition is evaluated, its
	 * value returned, and nothing aborts */
	assert_int_equal(CAPSIM_ALWAYS_OFF(count_call(0)), 0);
	assert_int_equal(CAPSIM_NEVER_OFF(count_call(7)), 1);
	assert_int_equal(evaluated, 2);
}
#if defined(__clang__)
#pragma clang diagnostic pop
#endif

/* a contract of the library itself: hmap values are >= 0 (-1 marks an
 * empty slot) */
static void trip_library(void *arg)
{
	(void)arg;
	capsim_hmap m = { 0 };
	capsim_hmap_set(&m, 42, -1);
	capsim_hmap_free(&m);
}

static void test_library_follows_the_build(void **state)
{
	(void)state;
	assert_int_equal(capsim_checks_enabled(), CAPSIM_CHECKS);
#ifdef SANITIZED
	/* CI's test build runs the checks */
	assert_int_equal(CAPSIM_CHECKS, 1);
#endif
	death d;
	die(trip_library, NULL, &d);
	if (CAPSIM_CHECKS) {
		assert_aborted(&d);
		assert_non_null(strstr(d.err, "capsim: internal check failed: src/util/hmap.c:"));
		assert_non_null(strstr(d.err, ": capsim_hmap_set: v >= 0\n"));
	} else {
		assert_true(WIFEXITED(d.status));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_failed_check_aborts_with_its_place),
		cmocka_unit_test(test_holding_check_goes_on),
		cmocka_unit_test(test_never_aborts_when_true),
		cmocka_unit_test(test_unchecked_never_evaluates),
		cmocka_unit_test(test_library_follows_the_build),
	};
	return testutil_run_group(tests, NULL, NULL);
}
