/* outfile.h - writing an output file whole or not at all.
 *
 * A regular file (or a name that does not exist yet) is written to a
 * temporary in the same directory, made by mkstemp (O_EXCL, an
 * unpredictable name, so a planted symlink is never followed), flushed to
 * disk and renamed over the target: a reader sees the old file or the new
 * one, never half of one, and a failed write leaves the old one as it was.
 * The new file keeps an existing target's permission bits, else gets
 * 0666 less the umask.
 *
 * "-" is standard output. An existing symlink, device, FIFO or other
 * non-regular file is opened and written through (a symlink's target is
 * written, the link stays a link; /dev/null stays a device): these are
 * never replaced nor unlinked, and such a write is not atomic.
 *
 * Every failure is added to a capsim_diags as "PATH: cannot write: REASON"
 * (strerror's text, e.g. "No space left on device"). */
#ifndef CAPSIM_OUTFILE_H
#define CAPSIM_OUTFILE_H

#include <stdio.h>

#include "diag.h"

typedef struct capsim_outfile {
	FILE *f;                  /* write here */
	char path[1024];          /* the target as given ("-": standard output) */
	char tmp[1024];           /* the temporary being written, "" when written directly */
	int direct;               /* 1: stdout, or an existing non-regular target / symlink written through */
} capsim_outfile;

/* Open path for writing: "-" is standard output; an existing symlink, device, FIFO or other non-regular file is opened and written through (never replaced, never unlinked); otherwise a temporary made with mkstemp in the target's own directory (O_EXCL, unpredictable name; never follows a symlink it did not create) that capsim_outfile_close renames over the target. Returns 0, or -1 after adding "PATH: cannot write: strerror" to d via capsim_diags_add_at(d, path, ...). */
int capsim_outfile_open(capsim_outfile *o, const char *path, capsim_diags *d);

/* Flush, check ferror, fclose (fsync a regular temporary), rename the temporary over the target. On any failure removes the temporary, leaves the target as it was and returns -1 after adding the reason (e.g. "No space left on device") to d. Standard output is flushed and checked but not closed. */
int capsim_outfile_close(capsim_outfile *o, capsim_diags *d);

/* Give up: remove the temporary, keep the target untouched. */
void capsim_outfile_discard(capsim_outfile *o);

#endif
