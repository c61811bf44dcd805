/* progress.h - the one progress line of capsim's long commands (sweep,
 * optimize, report, scale), on standard error.
 *
 * On a terminal it is one line rewritten in place ("\r", clear to the end)
 * at most every 0.2 s: "LABEL: DONE/TOTAL UNIT (NOTE), RATE/s, ETA S s",
 * ended by a newline when the last one is done. Where standard error is
 * not a terminal it writes nothing, unless asked to log: then a whole line
 * (the same words, with the elapsed time) at the first call, at each tenth
 * done (or every log_every_s seconds, where that is set) and at the end. The note is written through capsim_term_text, so a
 * name from an input cannot move the cursor. */
#ifndef CAPSIM_PROGRESS_H
#define CAPSIM_PROGRESS_H

#include <stdio.h>

typedef enum {
	CAPSIM_PROGRESS_OFF,      /* nothing, anywhere */
	CAPSIM_PROGRESS_TERMINAL, /* the line on a terminal; nothing elsewhere */
	CAPSIM_PROGRESS_LOG       /* the line on a terminal; whole lines elsewhere */
} capsim_progress_mode;

typedef struct capsim_progress {
	FILE *f;                  /* standard error */
	const char *label;        /* what the line begins with ("capsim sweep") */
	const char *unit;         /* what is counted ("points"), or NULL */
	int tty;                  /* f is a terminal: one line rewritten */
	int log;                  /* not a terminal: whole lines */
	double t0;                /* when the count began (capsim_progress_init) */
	double last;              /* when the terminal line was last written */
	long last_tenth;          /* the tenth of the last whole line; -1 none yet */
	double log_every_s;       /* whole lines this often instead of each tenth; 0: tenths */
	int ended;                /* the last one done was shown */
	int open;                 /* a terminal line waits for its end */
} capsim_progress;

/* Start counting now. label and unit are borrowed (they must outlive p);
 * log_every_s is 0 (set it after, to log by time). */
void capsim_progress_init(capsim_progress *p, const char *label, const char *unit,
			  capsim_progress_mode mode);

/* done of total finished (done == total ends the line); note: words after
 * the count, or NULL. Throttled as above: most calls write nothing.
 * Returns 1 when it wrote, else 0. */
int capsim_progress_show(capsim_progress *p, long done, long total, const char *note);

/* Clear an open terminal line (before other text goes to f); nothing
 * elsewhere. */
void capsim_progress_clear(capsim_progress *p);

/* End an open terminal line with a newline, keeping what it says. */
void capsim_progress_end(capsim_progress *p);

#endif
