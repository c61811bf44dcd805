/* xalloc.c - allocation that never returns NULL. */
#include "xalloc.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

static _Atomic(capsim_xalloc_hook) on_failure;

void capsim_xalloc_on_failure(capsim_xalloc_hook fn)
{
	atomic_store(&on_failure, fn);
}

/* Out of memory: say so on standard error, let the hook remove what must
 * not stay behind (the output writer's temporaries), and exit with status 1
 * (a runtime failure). Nothing here allocates: the message is formatted on
 * the stack and written with write(2). _exit, not exit: atexit handlers and
 * stdio flushes could allocate, and a half-printed report on standard output
 * must not be flushed as if it were whole. */
static _Noreturn void oom(size_t n, size_t size)
{
	char msg[128];
	int len = size ? snprintf(msg, sizeof msg,
				  "capsim: out of memory (%zu x %zu bytes)\n", n, size)
		       : snprintf(msg, sizeof msg, "capsim: out of memory (%zu bytes)\n", n);
	if (len > 0) {
		size_t left = (size_t)len < sizeof msg ? (size_t)len : sizeof msg - 1;
		const char *p = msg;
		while (left) {
			ssize_t w = write(STDERR_FILENO, p, left);
			if (w <= 0)
				break;
			p += w;
			left -= (size_t)w;
		}
	}
	capsim_xalloc_hook fn = atomic_load(&on_failure);
	if (fn)
		fn();
	_exit(CAPSIM_XALLOC_EXIT);
}

void capsim_xalloc_failed(size_t n)
{
	oom(n, 0);
}

void *capsim_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n, 0);
	return p;
}

void *capsim_xcalloc(size_t n, size_t size)
{
	/* calloc checks n x size for overflow itself; the message gives both */
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom(n, size ? size : 1);
	return p;
}

void *capsim_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom(n, 0);
	return q;
}

char *capsim_xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = capsim_xmalloc(n);
	memcpy(p, s, n);
	return p;
}

char *capsim_xvasprintf(const char *fmt, va_list ap)
{
	va_list aq;
	va_copy(aq, ap);
	int n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n < 0)
		n = 0;
	char *p = capsim_xmalloc((size_t)n + 1);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	return p;
}

char *capsim_xasprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *p = capsim_xvasprintf(fmt, ap);
	va_end(ap);
	return p;
}

int capsim_strlcpy(char *dst, const char *src, size_t n)
{
	size_t len = strlen(src);
	if (len < n) {
		memcpy(dst, src, len + 1);
		return 0;
	}
	if (n) {
		memcpy(dst, src, n - 1);
		dst[n - 1] = '\0';
	}
	return -1;
}

void capsim_advise_huge(void *p, size_t n)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
	const uintptr_t huge = (uintptr_t)2 << 20;
	if (!p || n < 2 * huge)
		return;
	uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(huge - 1);
	uintptr_t hi = ((uintptr_t)p + n) & ~(huge - 1);
	if (hi > lo)
		(void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
	(void)p;
	(void)n;
#endif
}

void *capsim_xrealloc_huge(void *p, size_t old_n, size_t n)
{
	const size_t huge = (size_t)2 << 20;
	if (n < 2 * huge || n <= old_n)
		return capsim_xrealloc(p, n);
	void *q = capsim_xmalloc(n);
	capsim_advise_huge(q, n);
	if (p) {
		memcpy(q, p, old_n);
		free(p);
	}
	return q;
}
