/* xalloc.h - the one allocation entry point: allocation failure is fatal
 * (capsim cannot report anything sensible without memory), so callers need not
 * check. */
#ifndef CAPSIM_XALLOC_H
#define CAPSIM_XALLOC_H

#include <stdarg.h>
#include <stddef.h>

void *capsim_xmalloc(size_t n);
void *capsim_xcalloc(size_t n, size_t size);
void *capsim_xrealloc(void *p, size_t n);
char *capsim_xstrdup(const char *s);
char *capsim_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *capsim_xvasprintf(const char *fmt, va_list ap)
	__attribute__((format(printf, 1, 0)));

/* Copy src into dst of size n; returns 0, or -1 when src did not fit (dst then
 * holds a truncated, terminated copy). */
int capsim_strlcpy(char *dst, const char *src, size_t n);

#endif
