/* launch_cond.h - the tests of a launch script (if and elif conditions,
 * [ ... ] && lines) decided as bash decides them where the values are known,
 * and by the script's own defaults where they are not: a variable the script
 * never sets is taken as empty (unset), a file test as the file being there,
 * a command's status as success. Which of those a decision rested on is
 * counted, for the reader to say. Internal to the launch reader. */
#ifndef CAPSIM_LAUNCH_COND_H
#define CAPSIM_LAUNCH_COND_H

/* what a decision rested on besides the script's own values */
typedef struct capsim_cond_why {
	int unset;     /* a variable the script does not set, taken as empty */
	int defaulted; /* a value from the script's own default, ${V:-d} */
	int files;     /* a file test, taken as the file being there */
	int commands;  /* a command's exit status, taken as success */
	int other;     /* an expression not read (=~, an arithmetic test), taken as false */
} capsim_cond_why;

/* One word of a condition, raw (its quotes and $ as written), expanded as
 * the shell would: the caller's, freed with free; what it rested on added
 * to *why. */
typedef char *(*capsim_cond_expand)(void *ctx, const char *raw, capsim_cond_why *why);

/* The status of the condition raw[0..n) (words as written: [ and [[ tests
 * with !, -n, -z, = == !=, -eq -ne -lt -le -gt -ge, the file tests, -a -o
 * && ||, and commands between && || and !): 1 true, 0 false. Never fails:
 * what cannot be known is decided as the header says, and counted in
 * *why. */
int capsim_cond_eval(char *const *raw, int n, capsim_cond_expand ex, void *ctx,
		     capsim_cond_why *why);

#endif
