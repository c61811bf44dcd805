/* outfile.c - output files written whole or not at all; see outfile.h. */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xalloc.h"

/* The temporaries being written, removed by the allocation-failure hook so
 * that running out of memory mid-write leaves nothing behind (xalloc.h).
 * Lock-free: a slot holds a temporary's name or NULL. */
#define OPEN_TEMPORARIES 16
static _Atomic(const char *) open_tmp[OPEN_TEMPORARIES];

static void remove_open_temporaries(void)
{
	for (int i = 0; i < OPEN_TEMPORARIES; i++) {
		const char *t = atomic_exchange(&open_tmp[i], NULL);
		if (t)
			unlink(t);
	}
}

static void track(const char *tmp)
{
	static atomic_int hooked;
	if (!atomic_exchange(&hooked, 1))
		capsim_xalloc_on_failure(remove_open_temporaries);
	for (int i = 0; i < OPEN_TEMPORARIES; i++) {
		const char *none = NULL;
		if (atomic_compare_exchange_strong(&open_tmp[i], &none, tmp))
			return;
	}
	/* more than 16 at once: this one is not cleaned up on out of memory */
}

static void untrack(const char *tmp)
{
	for (int i = 0; i < OPEN_TEMPORARIES; i++) {
		const char *t = tmp;
		if (atomic_compare_exchange_strong(&open_tmp[i], &t, NULL))
			return;
	}
}

static int fail(capsim_diags *d, const char *path, int err)
{
	capsim_diags_add_at(d, path, "cannot write: %s", strerror(err));
	return -1;
}

/* an existing non-regular file (a device, a FIFO; a directory fails here
 * with EISDIR): open it in place, never creating, replacing or truncating */
static int open_through(capsim_outfile *o, capsim_diags *d)
{
	int fd = open(o->dest, O_WRONLY | O_NOCTTY | O_CLOEXEC);
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
	int n = snprintf(o->tmp, sizeof o->tmp, "%s.XXXXXX", o->dest);
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
	track(o->tmp);
	return 0;
}

/* Follow the symlinks from path to the name they end at (an existing
 * non-link, or a name that does not exist yet) into out: a relative link is
 * taken from the directory of the link. Returns 0 or an errno (ELOOP after
 * 40 links, ENAMETOOLONG). */
static int follow_links(const char *path, char *out, size_t n)
{
	char cur[sizeof ((capsim_outfile *)0)->dest], link[sizeof cur];
	if (capsim_strlcpy(cur, path, sizeof cur) < 0)
		return ENAMETOOLONG;
	for (int hops = 0;; hops++) {
		struct stat st;
		if (lstat(cur, &st) != 0) {
			if (errno != ENOENT)
				return errno;
			break;
		}
		if (!S_ISLNK(st.st_mode))
			break;
		if (hops == 40)
			return ELOOP;
		ssize_t len = readlink(cur, link, sizeof link - 1);
		if (len < 0)
			return errno;
		if ((size_t)len >= sizeof link - 1)
			return ENAMETOOLONG;
		link[len] = '\0';
		if (link[0] == '/') {
			memcpy(cur, link, (size_t)len + 1);
			continue;
		}
		char *slash = strrchr(cur, '/');
		size_t keep = slash ? (size_t)(slash - cur) + 1 : 0;
		if (keep + (size_t)len >= sizeof cur)
			return ENAMETOOLONG;
		memcpy(cur + keep, link, (size_t)len + 1);
	}
	return capsim_strlcpy(out, cur, n) < 0 ? ENAMETOOLONG : 0;
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
	int e = follow_links(path, o->dest, sizeof o->dest);
	if (e)
		return fail(d, path, e);
	struct stat st;
	if (lstat(o->dest, &st) == 0) {
		if (!S_ISREG(st.st_mode))
			return open_through(o, d);
		return open_temporary(o, &st, d);
	}
	if (errno != ENOENT)
		return fail(d, path, errno);
	return open_temporary(o, NULL, d);
}

int capsim_outfile_open_own(capsim_outfile *o, const char *path, capsim_diags *d)
{
	memset(o, 0, sizeof *o);
	size_t len = strlen(path);
	if (len == 0 || len >= sizeof o->path || len >= sizeof o->dest)
		return fail(d, path, len ? ENAMETOOLONG : ENOENT);
	memcpy(o->path, path, len + 1);
	memcpy(o->dest, path, len + 1);
	struct stat st;
	if (lstat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return fail(d, path, EISDIR);
		/* a regular file keeps its mode; anything else was not ours */
		return open_temporary(o, S_ISREG(st.st_mode) ? &st : NULL, d);
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
	if (!e && rename(o->tmp, o->dest) != 0)
		e = errno;
	if (e)
		unlink(o->tmp);
	untrack(o->tmp);
	o->tmp[0] = '\0';
	return e ? fail(d, o->path, e) : 0;
}

int capsim_outfile_close(capsim_outfile *o, capsim_diags *d)
{
	if (!o->f)
		return fail(d, o->path, EBADF);
	if (o->tmp[0])
		return close_temporary(o, d);
	errno = 0;
	int e = flush_error(o->f);
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
	if (o->tmp[0]) {
		unlink(o->tmp);
		untrack(o->tmp);
	}
	o->tmp[0] = '\0';
}
