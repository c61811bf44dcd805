/* outfile.c - output files written whole or not at all; see outfile.h. */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int fail(capsim_diags *d, const char *path, int err)
{
	capsim_diags_add_at(d, path, "cannot write: %s", strerror(err));
	return -1;
}

/* an existing non-regular file or symlink: open what it names, in place;
 * a regular file behind a symlink is truncated only when the write succeeds */
static int open_through(capsim_outfile *o, capsim_diags *d)
{
	int fd = open(o->path, O_WRONLY | O_CREAT | O_NOCTTY | O_CLOEXEC, 0666);
	if (fd < 0)
		return fail(d, o->path, errno);
	o->f = fdopen(fd, "w");
	if (!o->f) {
		int e = errno;
		close(fd);
		return fail(d, o->path, e);
	}
	o->direct = 1;
	return 0;
}

/* the permission bits a new file gets: 0666 less the umask */
static mode_t new_file_mode(void)
{
	mode_t mask = umask(022);
	umask(mask);
	return 0666 & ~mask;
}

/* a regular target or a new one: a mkstemp temporary next to it, with the
 * mode the target has (or a new file would get) */
static int open_temporary(capsim_outfile *o, const struct stat *old,
			  capsim_diags *d)
{
	int n = snprintf(o->tmp, sizeof o->tmp, "%s.XXXXXX", o->path);
	if (n < 0 || (size_t)n >= sizeof o->tmp) {
		o->tmp[0] = '\0';
		return fail(d, o->path, ENAMETOOLONG);
	}
	int fd = mkstemp(o->tmp);
	if (fd < 0) {
		o->tmp[0] = '\0';
		return fail(d, o->path, errno);
	}
	mode_t mode = old ? (old->st_mode & 07777) : new_file_mode();
	if (fchmod(fd, mode) != 0 || !(o->f = fdopen(fd, "w"))) {
		int e = errno;
		close(fd);
		unlink(o->tmp);
		o->tmp[0] = '\0';
		return fail(d, o->path, e);
	}
	return 0;
}

int capsim_outfile_open(capsim_outfile *o, const char *path, capsim_diags *d)
{
	memset(o, 0, sizeof *o);
	size_t len = strlen(path);
	if (len == 0 || len >= sizeof o->path)
		return fail(d, path, len ? ENAMETOOLONG : ENOENT);
	memcpy(o->path, path, len + 1);
	if (strcmp(path, "-") == 0) {
		o->f = stdout;
		o->direct = 1;
		return 0;
	}
	struct stat st;
	if (lstat(path, &st) == 0) {
		if (!S_ISREG(st.st_mode))
			return open_through(o, d);
		return open_temporary(o, &st, d);
	}
	if (errno != ENOENT)
		return fail(d, path, errno);
	return open_temporary(o, NULL, d);
}

/* flush f and return 0 or the errno of the first failure (EIO when the
 * stream's error flag was set by an earlier write) */
static int flush_error(FILE *f)
{
	if (fflush(f) != 0)
		return errno ? errno : EIO;
	return ferror(f) ? EIO : 0;
}

static int close_temporary(capsim_outfile *o, capsim_diags *d)
{
	errno = 0;
	int e = flush_error(o->f);
	if (!e && fsync(fileno(o->f)) != 0)
		e = errno;
	if (fclose(o->f) != 0 && !e)
		e = errno ? errno : EIO;
	o->f = NULL;
	if (!e && rename(o->tmp, o->path) != 0)
		e = errno;
	if (e)
		unlink(o->tmp);
	o->tmp[0] = '\0';
	return e ? fail(d, o->path, e) : 0;
}

/* a regular file written through a symlink ends where the new text ends */
static int truncate_here(FILE *f)
{
	struct stat st;
	int fd = fileno(f);
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	off_t end = lseek(fd, 0, SEEK_CUR);
	if (end < 0 || ftruncate(fd, end) != 0)
		return errno;
	return 0;
}

int capsim_outfile_close(capsim_outfile *o, capsim_diags *d)
{
	if (!o->f)
		return fail(d, o->path, EBADF);
	if (o->tmp[0])
		return close_temporary(o, d);
	errno = 0;
	int e = flush_error(o->f);
	if (!e && o->f != stdout)
		e = truncate_here(o->f);
	if (o->f != stdout && fclose(o->f) != 0 && !e)
		e = errno ? errno : EIO;
	o->f = NULL;
	return e ? fail(d, o->path, e) : 0;
}

/* A target written through keeps what was already flushed to it; what is
 * still buffered is dropped. */
void capsim_outfile_discard(capsim_outfile *o)
{
	if (o->f && o->f != stdout) {
		__fpurge(o->f);
		fclose(o->f);
	}
	else if (o->f)
		fflush(o->f);
	o->f = NULL;
	if (o->tmp[0])
		unlink(o->tmp);
	o->tmp[0] = '\0';
}
