/* child.h - waiting for a program capsim started, under a time limit.
 *
 * capsim runs programs of its own accord in two places (gnuplot for a
 * report's figures, the calibrate programs), and neither may hang it: each
 * is waited for at most a given time, then stopped. */
#ifndef CAPSIM_CHILD_H
#define CAPSIM_CHILD_H

#include <sys/types.h>

/* How a wait ended. */
typedef enum capsim_child_end {
	CAPSIM_CHILD_EXITED,    /* it ended by itself: *status as waitpid gives it */
	CAPSIM_CHILD_TIMED_OUT, /* it ran past the limit: stopped and reaped */
	CAPSIM_CHILD_LOST,      /* waitpid failed (errno says why) */
} capsim_child_end;

/* Wait for child pid at most timeout_s (> 0) seconds. Past it the child is
 * sent SIGTERM, and SIGKILL grace_s seconds later if it is still there; with
 * group set, both go to its process group (-pid), which the child must lead
 * (POSIX_SPAWN_SETPGROUP, setpgid). The child is reaped in every case but
 * LOST. */
capsim_child_end capsim_child_wait(pid_t pid, double timeout_s, double grace_s, int group,
				   int *status);

#endif
