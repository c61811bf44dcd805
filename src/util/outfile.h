/* outfile.h - writing an output file whole or not at all.
 *
 * A regular file (or a name that does not exist yet) is written to a
 * temporary in the same directory, made by mkstemp (O_EXCL, an
 * unpredictable name, so a planted symlink is never followed), flushed to
 * disk and renamed over the target: a reader sees the old file or the new
 * one, never half of one, and a failed write leaves the old one as it was.
 * The new file keeps an existing target's permission bits, else gets
 * 0666 less the umask (not its owner, nor its other hard links: those keep
 * the old content). Writing needs permission on the target's directory.
 *
 * A symlink given as the target is the user's own and is followed (through
 * any chain of links, each relative one from its own directory, at most 40)
 * to the name it ends at; that name is then treated as if given itself: a
 * regular file there (or none yet) is replaced by a temporary in *its*
 * directory, whole or not at all, and the link stays a link naming it. A
 * write that fails therefore leaves the file behind the link as it was,
 * exactly as for a file named directly.
 *
 * "-" is standard output. An existing device, FIFO or other non-regular
 * file (reached directly or through links) is opened in place and written
 * through, never created, replaced, truncated or unlinked: /dev/null stays
 * a device, and such a write is not atomic. A directory is refused (EISDIR).
 *
 * A temporary still open when an allocation fails is removed before the
 * process exits (xalloc.h).
 *
 * Every failure is added to a capsim_diags as "PATH: cannot write: REASON"
 * (strerror's text, e.g. "No space left on device"). */
#ifndef CAPSIM_OUTFILE_H
#define CAPSIM_OUTFILE_H

#include <stdio.h>

#include "diag.h"

typedef struct capsim_outfile {
	FILE *f;                  /* write here */
	char path[1024];          /* the target as given ("-": standard output); messages name it */
	char dest[4096];          /* what is written: path with its symlinks followed */
	char tmp[4096 + 8];       /* the temporary being written, "" when written directly */
	int direct;               /* 1: stdout, or an existing non-regular file written through */
} capsim_outfile;

/* Open path for writing: "-" is standard output; symlinks are followed to the name they end at (dest); an existing device, FIFO or other non-regular file there is opened and written through (never replaced, never unlinked); otherwise a temporary made with mkstemp in dest's own directory (O_EXCL, unpredictable name; never follows a symlink it did not create) that capsim_outfile_close renames over dest. Returns 0, or -1 after adding "PATH: cannot write: strerror" to d via capsim_diags_add_at(d, path, ...). */
int capsim_outfile_open(capsim_outfile *o, const char *path, capsim_diags *d);

/* Open a file inside a directory capsim writes as its own (a report's
 * files and figures): the name is never followed and never opened. Whatever
 * is at path (a regular file, a symlink planted there, a FIFO, a device
 * node) is replaced by a mkstemp temporary renamed over it by
 * capsim_outfile_close; the symlink's target, the FIFO's reader or the
 * device is never touched. A directory there is refused (EISDIR); "-" is a
 * file named "-". Returns 0, or -1 as capsim_outfile_open. */
int capsim_outfile_open_own(capsim_outfile *o, const char *path, capsim_diags *d);

/* Flush, check ferror, fclose (fsync a regular temporary), rename the temporary over the target. On any failure removes the temporary, leaves the target as it was and returns -1 after adding the reason (e.g. "No space left on device") to d. Standard output is flushed and checked but not closed. */
int capsim_outfile_close(capsim_outfile *o, capsim_diags *d);

/* Give up: remove the temporary, keep the target untouched. */
void capsim_outfile_discard(capsim_outfile *o);

#endif
