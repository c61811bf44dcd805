/* xalloc.c - allocation that never returns NULL. */
#include "xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void oom(size_t n)
{
	fprintf(stderr, "capsim: out of memory (%zu bytes)\n", n);
	abort();
}

void *capsim_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

void *capsim_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom(n * size);
	return p;
}

void *capsim_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom(n);
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
