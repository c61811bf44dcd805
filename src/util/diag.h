/* diag.h - diagnostics about input: every error of a file, collected, each with
 * the file and line it concerns, printed together at the end.
 *
 * Library code never prints; it adds to a capsim_diags that the caller owns. */
#ifndef CAPSIM_DIAG_H
#define CAPSIM_DIAG_H

#include <stddef.h>
#include <stdio.h>

/* What a diagnostic is about: the input (the user's file or option is wrong:
 * exit status 2), or the run (the machine failed it: a database locked,
 * a disk full, a file unreadable, out of memory: exit status 1). */
typedef enum capsim_diag_kind {
	CAPSIM_DIAG_INPUT = 0,
	CAPSIM_DIAG_RUNTIME = 1,
} capsim_diag_kind;

typedef struct capsim_diag {
	char *where; /* "scenarios/x.xml:12" or "--set cluster.nodes=0" */
	char *msg;
	capsim_diag_kind kind;
} capsim_diag;

typedef struct capsim_diags {
	capsim_diag *v;
	size_t n, cap;
} capsim_diags;

/* Add one error. file may be NULL (then where is line-less); line <= 0 leaves
 * the line out. Out of memory aborts (there is no way to report it). */
void capsim_diags_add(capsim_diags *d, const char *file, long line,
		      const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Add one error located by a free-form place ("--set a.b=c"). */
void capsim_diags_add_at(capsim_diags *d, const char *where, const char *fmt,
			 ...) __attribute__((format(printf, 3, 4)));

/* Add one runtime failure (CAPSIM_DIAG_RUNTIME) about file (NULL: none). */
void capsim_diags_add_runtime(capsim_diags *d, const char *file, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* 1 if any diagnostic is a runtime failure: the command exits 1, not 2. */
int capsim_diags_runtime(const capsim_diags *d);

/* Print "WHERE: error: MSG" lines, in the order added. */
void capsim_diags_print(const capsim_diags *d, FILE *out);

/* 1 if any diagnostic's message contains needle (for tests). */
int capsim_diags_contains(const capsim_diags *d, const char *needle);

void capsim_diags_free(capsim_diags *d);

#endif
