/* launch_cond.c - a launch script's conditions decided; see launch_cond.h.
 * The grammar is bash's (the test and [[ builtins, && || ! between
 * commands), read over words as written. */
#include "launch_cond.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	char *const *t;
	int n, i;
	int dbl;               /* inside [[ ]] */
	capsim_cond_expand ex;
	void *ctx;
	capsim_cond_why *why;
} parser;

static int is(const parser *p, int i, const char *s)
{
	return i < p->n && strcmp(p->t[i], s) == 0;
}

static char *value(parser *p, int i)
{
	return p->ex(p->ctx, p->t[i], p->why);
}

/* a whole number, as test's -eq reads it: 1 with *x, 0 when it is not one */
static int number(const char *s, long *x)
{
	char *end;
	errno = 0;
	*x = strtol(s, &end, 10);
	return *s && !*end && errno == 0;
}

static const char *const file_tests[] = { "-e", "-f", "-d", "-r", "-w", "-x", "-s", "-L", "-h",
					  "-p", "-S", "-b", "-c", "-O", "-G", "-N", NULL };

static int in(const char *s, const char *const *set)
{
	for (; *set; set++)
		if (strcmp(s, *set) == 0)
			return 1;
	return 0;
}

/* op (-n -z a file test, -v) on the word at i */
static int unary(parser *p, const char *op, int i)
{
	if (in(op, file_tests)) {
		p->why->files++;
		return 1;
	}
	char *v = value(p, i);
	int r = strcmp(op, "-z") == 0 ? !*v : *v != '\0';
	free(v);
	return r;
}

static int compare(parser *p, const char *op, int li, int ri)
{
	char *a = value(p, li), *b = value(p, ri);
	long x, y;
	int r = 0;
	if (strcmp(op, "=") == 0 || strcmp(op, "==") == 0 || strcmp(op, "!=") == 0) {
		/* [[ a == pattern ]]: an unquoted right side is a pattern */
		int pattern = p->dbl && !strpbrk(p->t[ri], "'\"");
		int eq = pattern ? fnmatch(b, a, 0) == 0 : strcmp(a, b) == 0;
		r = op[0] == '!' ? !eq : eq;
	} else if (op[0] == '-' && number(a, &x) && number(b, &y)) {
		r = strcmp(op, "-eq") == 0 ? x == y : strcmp(op, "-ne") == 0 ? x != y :
		    strcmp(op, "-lt") == 0 ? x < y : strcmp(op, "-le") == 0 ? x <= y :
		    strcmp(op, "-gt") == 0 ? x > y : x >= y;
	} else if (strcmp(op, "<") == 0 || strcmp(op, ">") == 0) {
		r = op[0] == '<' ? strcmp(a, b) < 0 : strcmp(a, b) > 0;
	} else {
		p->why->other++; /* =~, or -eq on what is not a number */
	}
	free(a);
	free(b);
	return r;
}

static const char *const binary_ops[] = { "=", "==", "!=", "-eq", "-ne", "-lt", "-le", "-gt",
					  "-ge", "<", ">", "=~", "-nt", "-ot", "-ef", NULL };

static int test_or(parser *p, int end);

/* a primary of a test, ending before end */
static int primary(parser *p, int end)
{
	int i = p->i;
	if (i >= end)
		return 0; /* [ ] is false */
	if (is(p, i, "(")) {
		p->i++;
		int r = test_or(p, end);
		if (is(p, p->i, ")"))
			p->i++;
		return r;
	}
	if (i + 2 < end && in(p->t[i + 1], binary_ops)) {
		p->i = i + 3;
		if (strcmp(p->t[i + 1], "-nt") == 0 || strcmp(p->t[i + 1], "-ot") == 0 ||
		    strcmp(p->t[i + 1], "-ef") == 0) {
			p->why->files++;
			return 1;
		}
		return compare(p, p->t[i + 1], i, i + 2);
	}
	if (i + 1 < end && p->t[i][0] == '-' && p->t[i][1] && !p->t[i][2]) {
		p->i = i + 2;
		return unary(p, p->t[i], i + 1);
	}
	p->i = i + 1;
	char *v = value(p, i);
	int r = *v != '\0';
	free(v);
	return r;
}

static int test_not(parser *p, int end)
{
	if (p->i < end && is(p, p->i, "!")) {
		p->i++;
		return !test_not(p, end);
	}
	return primary(p, end);
}

static int test_and(parser *p, int end)
{
	int r = test_not(p, end);
	while (p->i < end && (is(p, p->i, p->dbl ? "&&" : "-a"))) {
		p->i++;
		int b = test_not(p, end);
		r = r && b;
	}
	return r;
}

static int test_or(parser *p, int end)
{
	int r = test_and(p, end);
	while (p->i < end && (is(p, p->i, p->dbl ? "||" : "-o"))) {
		p->i++;
		int b = test_and(p, end);
		r = r || b;
	}
	return r;
}

/* a test from p->i (at [, [[ or test) to its closing word */
static int test_command(parser *p)
{
	const char *close = is(p, p->i, "[[") ? "]]" : is(p, p->i, "[") ? "]" : NULL;
	int start = ++p->i, end = start;
	if (close) {
		while (end < p->n && strcmp(p->t[end], close) != 0)
			end++;
	} else {
		while (end < p->n && !is(p, end, "&&") && !is(p, end, "||"))
			end++;
	}
	p->dbl = close && close[1];
	int r = test_or(p, end);
	p->dbl = 0;
	p->i = end + (close && end < p->n);
	return r;
}

/* a command of the list: a test, true / false, or another command (its
 * status taken as success) */
static int command(parser *p)
{
	if (is(p, p->i, "!")) {
		p->i++;
		return !command(p);
	}
	if (is(p, p->i, "[") || is(p, p->i, "[[") || is(p, p->i, "test"))
		return test_command(p);
	int r = is(p, p->i, "false") ? 0 : 1;
	if (!is(p, p->i, "true") && !is(p, p->i, "false") && !is(p, p->i, ":"))
		p->why->commands++;
	while (p->i < p->n && !is(p, p->i, "&&") && !is(p, p->i, "||"))
		p->i++;
	return r;
}

int capsim_cond_eval(char *const *raw, int n, capsim_cond_expand ex, void *ctx,
		     capsim_cond_why *why)
{
	parser p = { .t = raw, .n = n, .ex = ex, .ctx = ctx, .why = why };
	int r = command(&p);
	while (p.i < p.n) {
		int and = is(&p, p.i, "&&");
		if (!and && !is(&p, p.i, "||"))
			break;
		p.i++;
		/* bash runs the right side only where it decides; its status is read
		 * either way here, to keep the words in step */
		int b = command(&p);
		r = and ? r && b : r || b;
	}
	return r;
}
