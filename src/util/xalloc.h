/* xalloc.h - the one allocation entry point: allocation failure is fatal
 * (capsim cannot report anything sensible without memory), so callers need not
 * check. A failure prints "capsim: out of memory (N bytes)" on standard error
 * (or "(N x SIZE bytes)" for calloc), runs the hook set by
 * capsim_xalloc_on_failure, and exits with status 1 (CAPSIM_XALLOC_EXIT, the
 * command line's runtime failure): no abort, no core dump, no atexit
 * handlers, no flush of a half-written standard output. */
#ifndef CAPSIM_XALLOC_H
#define CAPSIM_XALLOC_H

#include <stdarg.h>
#include <stddef.h>

/* the exit status after an allocation failure: 1, a runtime failure */
#define CAPSIM_XALLOC_EXIT 1

/* Called once, after the message and before _exit, when an allocation fails:
 * it must not allocate (unlink(2) is fine). The output writer sets one that
 * removes its open temporaries. NULL: none. */
typedef void (*capsim_xalloc_hook)(void);
void capsim_xalloc_on_failure(capsim_xalloc_hook fn);

void *capsim_xmalloc(size_t n);
/* What the functions above do when an allocation fails, for memory that
 * libc allocates on capsim's behalf (open_memstream): the message for n
 * bytes, the hook, exit status 1. Never returns. */
_Noreturn void capsim_xalloc_failed(size_t n);
void *capsim_xcalloc(size_t n, size_t size);
void *capsim_xrealloc(void *p, size_t n);
char *capsim_xstrdup(const char *s);
char *capsim_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *capsim_xvasprintf(const char *fmt, va_list ap)
	__attribute__((format(printf, 1, 0)));

/* Ask the kernel to back the whole 2 MiB pages inside [p, p + n) with
 * transparent huge pages (madvise MADV_HUGEPAGE), for a large array read at
 * random: one TLB entry then covers 2 MiB instead of 4 KiB. Pages already
 * touched keep their size; only those first touched afterwards are huge.
 * A hint: does nothing below 4 MiB, where the kernel lacks it, or when it
 * refuses. */
void capsim_advise_huge(void *p, size_t n);
/* capsim_xrealloc for such an array, growing from old_n bytes to n: from 4 MiB
 * up, the new array is advised before the old contents are copied in, so that
 * all of it can be huge (realloc would move the old pages as they are). */
void *capsim_xrealloc_huge(void *p, size_t old_n, size_t n);

/* Copy src into dst of size n; returns 0, or -1 when src did not fit (dst then
 * holds a truncated, terminated copy). */
int capsim_strlcpy(char *dst, const char *src, size_t n);

#endif
