/* diag.c - collected input diagnostics. */
#include "diag.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "xalloc.h"

static void push(capsim_diags *d, char *where, char *msg, capsim_diag_kind kind)
{
	if (d->n == d->cap) {
		d->cap = d->cap ? 2 * d->cap : 8;
		d->v = capsim_xrealloc(d->v, d->cap * sizeof *d->v);
	}
	d->v[d->n].where = where;
	d->v[d->n].msg = msg;
	d->v[d->n].kind = kind;
	d->n++;
}

void capsim_diags_add(capsim_diags *d, const char *file, long line,
		      const char *fmt, ...)
{
	va_list ap;
	char *where;
	va_start(ap, fmt);
	char *msg = capsim_xvasprintf(fmt, ap);
	va_end(ap);
	if (file && line > 0)
		where = capsim_xasprintf("%s:%ld", file, line);
	else
		where = capsim_xstrdup(file ? file : "capsim");
	push(d, where, msg, CAPSIM_DIAG_INPUT);
}

void capsim_diags_add_at(capsim_diags *d, const char *where, const char *fmt,
			 ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = capsim_xvasprintf(fmt, ap);
	va_end(ap);
	push(d, capsim_xstrdup(where), msg, CAPSIM_DIAG_INPUT);
}

void capsim_diags_add_runtime(capsim_diags *d, const char *file, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = capsim_xvasprintf(fmt, ap);
	va_end(ap);
	push(d, capsim_xstrdup(file ? file : "capsim"), msg, CAPSIM_DIAG_RUNTIME);
}

int capsim_diags_runtime(const capsim_diags *d)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->v[i].kind == CAPSIM_DIAG_RUNTIME)
			return 1;
	return 0;
}

/* A message quotes its input: what a terminal would act on (an escape
 * sequence, a line break, a bidi override) is shown, not sent. */
void capsim_diags_print(const capsim_diags *d, FILE *out)
{
	for (size_t i = 0; i < d->n; i++) {
		capsim_term_text(out, d->v[i].where);
		fputs(": error: ", out);
		capsim_term_text(out, d->v[i].msg);
		fputc('\n', out);
	}
}

int capsim_diags_contains(const capsim_diags *d, const char *needle)
{
	for (size_t i = 0; i < d->n; i++)
		if (strstr(d->v[i].msg, needle) || strstr(d->v[i].where, needle))
			return 1;
	return 0;
}

void capsim_diags_free(capsim_diags *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->v[i].where);
		free(d->v[i].msg);
	}
	free(d->v);
	d->v = NULL;
	d->n = d->cap = 0;
}
