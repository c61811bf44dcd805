/* child.c - waiting for a program under a time limit; see child.h. */
#include "child.h"

#include <assert.h>
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "clock.h"

/* reap pid if it has ended: 1 (status set), 0 still running, -1 failed */
static int reaped(pid_t pid, int *status)
{
	for (;;) {
		pid_t w = waitpid(pid, status, WNOHANG);
		if (w == pid)
			return 1;
		if (w == 0)
			return 0;
		if (errno != EINTR)
			return -1;
	}
}

static void nap(long *ns)
{
	struct timespec ts = { 0, *ns };
	nanosleep(&ts, NULL);
	if (*ns < 20000000) /* from 1 ms, doubling to 20 ms: quick ends cost little */
		*ns *= 2;
}

capsim_child_end capsim_child_wait(pid_t pid, double timeout_s, double grace_s, int group,
				   int *status)
{
	assert(pid > 0 && timeout_s > 0 && grace_s >= 0);
	pid_t target = group ? -pid : pid;
	double deadline = capsim_now_s() + timeout_s;
	int signalled = 0;
	for (long ns = 1000000;; nap(&ns)) {
		int r = reaped(pid, status);
		if (r < 0)
			return CAPSIM_CHILD_LOST;
		if (r > 0)
			return signalled ? CAPSIM_CHILD_TIMED_OUT : CAPSIM_CHILD_EXITED;
		double now = capsim_now_s();
		if (signalled == 0 && now >= deadline) {
			kill(target, SIGTERM);
			signalled = 1;
			deadline = now + grace_s;
		} else if (signalled == 1 && now >= deadline) {
			kill(target, SIGKILL);
			signalled = 2;
		}
	}
}
