/* toml.c - the TOML that job configs use, read into a flat list of keys
 * (toml.h says what is read and what is refused). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "toml.h"

/* the reader's place in the text */
typedef struct reader {
	const char *s;
	size_t n, i;
	long line;
	const char *file;
	capsim_diags *d;
	char *table; /* the current table's path ("" at the top) */
} reader;

/* a growing text */
typedef struct buf {
	char *p;
	size_t n, cap;
} buf;

static void buf_put(buf *b, const char *s, size_t n)
{
	if (b->n + n + 1 > b->cap) {
		b->cap = (b->n + n + 1) * 2;
		b->p = realloc(b->p, b->cap);
		if (!b->p)
			abort();
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = '\0';
}

static char *xstrdup(const char *s)
{
	char *p = strdup(s);
	if (!p)
		abort();
	return p;
}

static int err(reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int err(reader *r, const char *fmt, ...)
{
	char msg[300];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	capsim_diags_add(r->d, r->file, r->line, "%s", msg);
	return -1;
}

static int peek(const reader *r, size_t k)
{
	return r->i + k < r->n ? (unsigned char)r->s[r->i + k] : -1;
}

/* spaces and tabs */
static void skip_ws(reader *r)
{
	while (peek(r, 0) == ' ' || peek(r, 0) == '\t')
		r->i++;
}

/* a comment's text to the line's end (control characters other than tab
 * are refused, as TOML says) */
static int skip_comment(reader *r)
{
	if (peek(r, 0) != '#')
		return 0;
	for (; r->i < r->n && r->s[r->i] != '\n'; r->i++) {
		unsigned char c = (unsigned char)r->s[r->i];
		if ((c < 0x20 && c != '\t' && !(c == '\r' && peek(r, 1) == '\n')) || c == 0x7f)
			return err(r, "a control character (0x%02x) in a comment", c);
	}
	return 0;
}

/* byte c as a diagnostic shows it: itself where printable, else 0xNN */
static const char *shown(int c, char out[8])
{
	if (c > 0x20 && c < 0x7f)
		snprintf(out, 8, "'%c'", c);
	else
		snprintf(out, 8, "0x%02x", (unsigned)c & 0xffu);
	return out;
}

/* the length of the UTF-8 sequence at s (n bytes left), 0 where it is not
 * one (overlong forms, surrogates and past U+10FFFF included) */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	if (s[0] < 0x80)
		return 1;
	size_t k = s[0] >= 0xc2 && s[0] <= 0xdf ? 2 : s[0] >= 0xe0 && s[0] <= 0xef ? 3 :
		   s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : 0;
	if (!k || k > n)
		return 0;
	for (size_t j = 1; j < k; j++)
		if ((s[j] & 0xc0) != 0x80)
			return 0;
	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] > 0x9f) ||
	    (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] > 0x8f))
		return 0;
	return k;
}

/* the text is UTF-8, as TOML says; -1 after a diagnostic at the first
 * byte that is not */
static int check_utf8(reader *r)
{
	long line = 1;
	for (size_t i = 0; i < r->n;) {
		size_t k = utf8_len((const unsigned char *)r->s + i, r->n - i);
		if (!k) {
			r->line = line;
			return err(r, "byte 0x%02x: the text is not UTF-8, as TOML is",
				   (unsigned char)r->s[i]);
		}
		line += r->s[i] == '\n';
		i += k;
	}
	return 0;
}

/* the end of a line: spaces, a comment, then a newline or the text's end */
static int end_of_line(reader *r, const char *after)
{
	skip_ws(r);
	if (skip_comment(r) < 0)
		return -1;
	if (peek(r, 0) == '\r' && peek(r, 1) == '\n')
		r->i++;
	if (peek(r, 0) == -1)
		return 0;
	char c[8];
	if (peek(r, 0) != '\n')
		return err(r, "expected the line's end after %s, found %s", after,
			   shown(peek(r, 0), c));
	r->i++;
	r->line++;
	return 0;
}

/* ---- strings ---------------------------------------------------------------------- */

/* code point cp as UTF-8 */
static void put_utf8(buf *b, uint32_t cp)
{
	char u[4];
	size_t k;
	if (cp < 0x80) {
		u[0] = (char)cp, k = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xc0 | cp >> 6), u[1] = (char)(0x80 | (cp & 0x3f)), k = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | cp >> 12), u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f)), k = 3;
	} else {
		u[0] = (char)(0xf0 | cp >> 18), u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		u[2] = (char)(0x80 | ((cp >> 6) & 0x3f)), u[3] = (char)(0x80 | (cp & 0x3f)), k = 4;
	}
	buf_put(b, u, k);
}

/* the `digits` hex digits of a \uXXXX or \UXXXXXXXX escape, its code point put into b as UTF-8 */
static int unicode_escape(reader *r, int digits, buf *b)
{
	uint32_t cp = 0;
	for (int k = 0; k < digits; k++) {
		int c = peek(r, 0);
		if (c == -1 || !isxdigit(c))
			return err(r, "a \\%c escape needs %d hex digits", digits == 4 ? 'u' : 'U',
				   digits);
		cp = cp * 16 + (uint32_t)(isdigit(c) ? c - '0' : tolower(c) - 'a' + 10);
		r->i++;
	}
	if (cp == 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return err(r, "\\%c escape U+%04X: not a Unicode scalar value capsim reads",
			   digits == 4 ? 'u' : 'U', (unsigned)cp);
	put_utf8(b, cp);
	return 0;
}

/* one escape of a basic string, after its backslash */
static int escape(reader *r, buf *b)
{
	static const char from[] = "btnfr\"\\", to[] = "\b\t\n\f\r\"\\";
	int c = peek(r, 0);
	const char *p = c > 0 ? strchr(from, c) : NULL;
	if (p) {
		r->i++;
		buf_put(b, &to[p - from], 1);
		return 0;
	}
	if (c == 'u' || c == 'U') {
		r->i++;
		return unicode_escape(r, c == 'u' ? 4 : 8, b);
	}
	return err(r, "a string's escape: expected one of \\b \\t \\n \\f \\r \\\" \\\\ \\u \\U, "
		   "found '\\%c'", c > 0 ? c : ' ');
}

/* a basic ("...") or literal ('...') string, at its opening quote, into
 * *out (the caller's) */
static int string(reader *r, char **out)
{
	char q = r->s[r->i];
	if (peek(r, 1) == q && peek(r, 2) == q)
		return err(r, "multi-line strings (%c%c%c) are not read", q, q, q);
	r->i++;
	buf b = { 0 };
	buf_put(&b, "", 0);
	for (;;) {
		int c = peek(r, 0);
		if (c == -1 || c == '\n') {
			free(b.p);
			return err(r, "a string without its closing %c", q);
		}
		if (c == q) {
			r->i++;
			break;
		}
		if ((c < 0x20 && c != '\t') || c == 0x7f) {
			free(b.p);
			return err(r, "a control character (0x%02x) in a string", c);
		}
		if (c == '\\' && q == '"') {
			r->i++;
			if (escape(r, &b) < 0) {
				free(b.p);
				return -1;
			}
			continue;
		}
		buf_put(&b, r->s + r->i, 1);
		r->i++;
		if (b.n > CAPSIM_TOML_MAX_TEXT) {
			free(b.p);
			return err(r, "a string longer than %u bytes", CAPSIM_TOML_MAX_TEXT);
		}
	}
	*out = b.p;
	return 0;
}

/* ---- keys ------------------------------------------------------------------------- */

static int bare_char(int c)
{
	return c != -1 && (isalnum(c) || c == '_' || c == '-');
}

/* a dotted key (a.b."c") up to stop ('=' or ']'), its parts joined by '.'
 * into *out (the caller's) */
static int key_path(reader *r, int stop, char **out)
{
	buf b = { 0 };
	buf_put(&b, "", 0);
	for (;;) {
		skip_ws(r);
		int c = peek(r, 0);
		if (b.n)
			buf_put(&b, ".", 1);
		if (c == '"' || c == '\'') {
			char *part;
			if (string(r, &part) < 0)
				goto fail;
			if (strchr(part, '.') || !*part) {
				err(r, "key \"%s\": a quoted key %s is not read", part,
				    *part ? "holding a '.'" : "that is empty");
				free(part);
				goto fail;
			}
			buf_put(&b, part, strlen(part));
			free(part);
		} else if (bare_char(c)) {
			size_t from = r->i;
			while (bare_char(peek(r, 0)))
				r->i++;
			buf_put(&b, r->s + from, r->i - from);
		} else {
			err(r, "expected a key, found %s", c == -1 ? "the end" : c == '\n' ?
			    "the line's end" : "another character");
			goto fail;
		}
		if (b.n > CAPSIM_TOML_MAX_TEXT) {
			err(r, "a key longer than %u bytes", CAPSIM_TOML_MAX_TEXT);
			goto fail;
		}
		skip_ws(r);
		if (peek(r, 0) == '.') {
			r->i++;
			continue;
		}
		if (peek(r, 0) == stop)
			break;
		err(r, "after key '%s': expected '%c'", b.p, stop);
		goto fail;
	}
	*out = b.p;
	return 0;
fail:
	free(b.p);
	return -1;
}

/* ---- numbers and booleans --------------------------------------------------------- */

/* digits of base (with '_' only between two digits) at t, into out
 * without the '_'; the count of digits, or -1 where an '_' is misplaced */
static int digits(const char *t, size_t n, int base, buf *out)
{
	int k = 0;
	for (size_t j = 0; j < n; j++) {
		int c = (unsigned char)t[j];
		if (c == '_') {
			if (j == 0 || j + 1 == n || !isxdigit((unsigned char)t[j + 1]) || t[j - 1] == '_')
				return -1;
			continue;
		}
		int v = isdigit(c) ? c - '0' : isxdigit(c) ? tolower(c) - 'a' + 10 : 99;
		if (v >= base)
			return -1;
		buf_put(out, t + j, 1);
		k++;
	}
	return k;
}

/* whether tok (n bytes) starts as a date or a time does (1979-05-27, 07:32) */
static int date_like(const char *t, size_t n)
{
	int d4 = n >= 5 && isdigit((unsigned char)t[0]) && isdigit((unsigned char)t[1]) &&
		 isdigit((unsigned char)t[2]) && isdigit((unsigned char)t[3]) && t[4] == '-';
	int t2 = n >= 3 && isdigit((unsigned char)t[0]) && isdigit((unsigned char)t[1]) &&
		 t[2] == ':';
	return d4 || t2;
}

/* an integer in base 16, 8 or 2 (0x 0o 0b, no sign) */
static int based_int(reader *r, const char *t, size_t n, capsim_toml_value *v)
{
	int base = t[1] == 'x' ? 16 : t[1] == 'o' ? 8 : 2;
	buf b = { 0 };
	int k = digits(t + 2, n - 2, base, &b);
	errno = 0;
	unsigned long long u = k > 0 ? strtoull(b.p, NULL, base) : 0;
	free(b.p);
	if (k <= 0)
		return err(r, "'%.*s': not an integer in base %d", (int)n, t, base);
	if (errno || u > (unsigned long long)INT64_MAX)
		return err(r, "'%.*s': past a 64-bit integer", (int)n, t);
	v->kind = CAPSIM_TOML_INT;
	v->i = (long long)u;
	return 0;
}

/* a decimal integer or a float: [+-] int [. digits] [e [+-] digits] */
static int decimal(reader *r, const char *t, size_t n, capsim_toml_value *v)
{
	size_t j = (t[0] == '+' || t[0] == '-') ? 1 : 0, from = j;
	while (j < n && (isdigit((unsigned char)t[j]) || t[j] == '_'))
		j++;
	size_t int_end = j, frac = 0, frac_end = 0, exp = 0;
	if (j < n && t[j] == '.') {
		frac = ++j;
		while (j < n && (isdigit((unsigned char)t[j]) || t[j] == '_'))
			j++;
		frac_end = j;
	}
	if (j < n && (t[j] == 'e' || t[j] == 'E')) {
		exp = ++j;
		if (j < n && (t[j] == '+' || t[j] == '-'))
			exp = ++j;
		while (j < n && (isdigit((unsigned char)t[j]) || t[j] == '_'))
			j++;
	}
	buf b = { 0 };
	buf_put(&b, t, from);
	int ok = j == n && digits(t + from, int_end - from, 10, &b) > 0 &&
		 !(int_end - from > 1 && t[from] == '0');
	if (ok && frac) {
		buf_put(&b, ".", 1);
		ok = digits(t + frac, frac_end - frac, 10, &b) > 0;
	}
	if (ok && exp) {
		buf_put(&b, "e", 1);
		if (t[exp - 1] == '+' || t[exp - 1] == '-')
			buf_put(&b, t + exp - 1, 1);
		ok = digits(t + exp, n - exp, 10, &b) > 0;
	}
	if (!ok) {
		free(b.p);
		return err(r, "'%.*s': expected a value (a string, number, boolean or array)",
			   (int)n, t);
	}
	errno = 0;
	if (frac || exp) {
		v->kind = CAPSIM_TOML_FLOAT;
		v->f = strtod(b.p, NULL);
	} else {
		v->kind = CAPSIM_TOML_INT;
		v->i = strtoll(b.p, NULL, 10);
	}
	free(b.p);
	if (errno == ERANGE && v->kind == CAPSIM_TOML_INT)
		return err(r, "'%.*s': past a 64-bit integer", (int)n, t);
	return 0;
}

/* a bare value: a boolean, a number; dates and times refused */
static int bare_value(reader *r, capsim_toml_value *v)
{
	size_t from = r->i;
	while (r->i < r->n && !strchr(" \t,]#\r\n", r->s[r->i]))
		r->i++;
	const char *t = r->s + from;
	size_t n = r->i - from;
	if (n == 0)
		return err(r, "expected a value, found %s", r->i < r->n ? "none" : "the end");
	if ((n == 4 && !memcmp(t, "true", 4)) || (n == 5 && !memcmp(t, "false", 5))) {
		v->kind = CAPSIM_TOML_BOOL;
		v->b = n == 4;
		return 0;
	}
	size_t s = (t[0] == '+' || t[0] == '-') ? 1 : 0;
	if (n - s == 3 && (!memcmp(t + s, "inf", 3) || !memcmp(t + s, "nan", 3))) {
		v->kind = CAPSIM_TOML_FLOAT;
		v->f = t[s] == 'i' ? (t[0] == '-' ? -INFINITY : INFINITY) : NAN;
		return 0;
	}
	if (date_like(t, n))
		return err(r, "'%.*s': dates and times are not read", (int)n, t);
	if (n > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'o' || t[1] == 'b'))
		return based_int(r, t, n, v);
	return decimal(r, t, n, v);
}

/* ---- values ----------------------------------------------------------------------- */

static void value_free(capsim_toml_value *v)
{
	free(v->s);
	for (size_t k = 0; k < v->n_items; k++)
		value_free(&v->items[k]);
	free(v->items);
	memset(v, 0, sizeof *v);
}

/* spaces, comments and newlines inside an array */
static int skip_array_space(reader *r)
{
	for (;;) {
		skip_ws(r);
		if (skip_comment(r) < 0)
			return -1;
		if (peek(r, 0) == '\r' && peek(r, 1) == '\n')
			r->i++;
		if (peek(r, 0) != '\n')
			return 0;
		r->i++;
		r->line++;
	}
}

static int scalar(reader *r, capsim_toml_value *v);

/* an array of scalars, at its '[' */
static int array(reader *r, capsim_toml_value *v)
{
	size_t cap = 0;
	v->kind = CAPSIM_TOML_ARRAY;
	r->i++;
	for (;;) {
		if (skip_array_space(r) < 0)
			return -1;
		if (peek(r, 0) == ']') {
			r->i++;
			return 0;
		}
		if (peek(r, 0) == '[')
			return err(r, "arrays of arrays are not read");
		if (v->n_items == CAPSIM_TOML_MAX_ITEMS)
			return err(r, "an array of more than %d items", CAPSIM_TOML_MAX_ITEMS);
		if (v->n_items == cap) {
			cap = cap ? cap * 2 : 4;
			v->items = realloc(v->items, cap * sizeof *v->items);
			if (!v->items)
				abort();
		}
		capsim_toml_value *it = &v->items[v->n_items];
		memset(it, 0, sizeof *it);
		if (scalar(r, it) < 0)
			return -1;
		v->n_items++;
		if (skip_array_space(r) < 0)
			return -1;
		if (peek(r, 0) == ',') {
			r->i++;
			continue;
		}
		if (peek(r, 0) != ']')
			return err(r, "in an array: expected ',' or ']'");
	}
}

/* a string, number or boolean */
static int scalar(reader *r, capsim_toml_value *v)
{
	int c = peek(r, 0);
	if (c == '"' || c == '\'') {
		v->kind = CAPSIM_TOML_STRING;
		return string(r, &v->s);
	}
	if (c == '{')
		return err(r, "inline tables ({ ... }) are not read");
	return bare_value(r, v);
}

/* any value: an array or a scalar */
static int value(reader *r, capsim_toml_value *v)
{
	skip_ws(r);
	if (peek(r, 0) == '[')
		return array(r, v);
	return scalar(r, v);
}

/* ---- the document ----------------------------------------------------------------- */

/* whether path is p or lies under it (p "a.b": "a.b", "a.b.c") */
static int under(const char *path, const char *p)
{
	size_t n = strlen(p);
	return !strncmp(path, p, n) && (path[n] == '\0' || path[n] == '.');
}

/* a key path may be defined: neither it, nor a value above it, nor a
 * table or key below it defined already */
static int may_define(reader *r, const capsim_toml *t, const char *path)
{
	for (size_t k = 0; k < t->n; k++) {
		const char *e = t->e[k].key;
		if (!strcmp(e, path))
			return err(r, "key '%s' defined twice (first at line %ld)", path,
				   t->e[k].line);
		if (under(path, e))
			return err(r, "'%s': '%s' is a value (line %ld), not a table", path, e,
				   t->e[k].line);
		if (under(e, path))
			return err(r, "key '%s' is a table already (line %ld: %s)", path,
				   t->e[k].line, e);
	}
	for (size_t k = 0; k < t->n_tables; k++)
		if (!strcmp(t->tables[k], path))
			return err(r, "key '%s' is a table already ([%s])", path, path);
	return 0;
}

/* a [table] header, at its '[' */
static int header(reader *r, capsim_toml *t)
{
	if (peek(r, 1) == '[')
		return err(r, "arrays of tables ([[...]]) are not read");
	r->i++;
	char *path;
	if (key_path(r, ']', &path) < 0)
		return -1;
	r->i++;
	for (size_t k = 0; k < t->n_tables; k++)
		if (!strcmp(t->tables[k], path)) {
			free(path);
			return err(r, "table [%s] defined twice", t->tables[k]);
		}
	for (size_t k = 0; k < t->n; k++) {
		const capsim_toml_entry *e = &t->e[k];
		size_t pl = strlen(path);
		/* its table (the key's first table_len bytes) is path or under it */
		int in = e->table_len >= pl && !strncmp(e->key, path, pl) &&
			 (e->table_len == pl || e->key[pl] == '.');
		/* a value there, or a table a dotted key defined (it is closed) */
		if (under(path, e->key) || (under(e->key, path) && !in)) {
			err(r, "[%s]: '%s' (line %ld) defines it already", path, e->key, e->line);
			free(path);
			return -1;
		}
	}
	if (t->n_tables == t->cap_tables) {
		t->cap_tables = t->cap_tables ? t->cap_tables * 2 : 8;
		t->tables = realloc(t->tables, t->cap_tables * sizeof *t->tables);
		if (!t->tables)
			abort();
	}
	t->tables[t->n_tables++] = path;
	free(r->table);
	r->table = xstrdup(path);
	return end_of_line(r, "a table's header");
}

/* key = value, at the key */
static int key_value(reader *r, capsim_toml *t)
{
	char *k;
	long line = r->line;
	if (key_path(r, '=', &k) < 0)
		return -1;
	r->i++;
	buf path = { 0 };
	buf_put(&path, r->table, strlen(r->table));
	if (path.n)
		buf_put(&path, ".", 1);
	buf_put(&path, k, strlen(k));
	free(k);
	capsim_toml_value v = { 0 };
	if (may_define(r, t, path.p) < 0 || t->n == CAPSIM_TOML_MAX_ENTRIES ||
	    value(r, &v) < 0 || end_of_line(r, "a value") < 0) {
		if (t->n == CAPSIM_TOML_MAX_ENTRIES)
			err(r, "more than %d keys", CAPSIM_TOML_MAX_ENTRIES);
		value_free(&v);
		free(path.p);
		return -1;
	}
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 32;
		t->e = realloc(t->e, t->cap * sizeof *t->e);
		if (!t->e)
			abort();
	}
	t->e[t->n++] = (capsim_toml_entry){ .key = path.p, .line = line, .v = v,
					    .table_len = strlen(r->table) };
	return 0;
}

int capsim_toml_parse(const char *text, size_t len, const char *file, capsim_toml *t,
		      capsim_diags *d)
{
	memset(t, 0, sizeof *t);
	reader r = { .s = text, .n = len, .line = 1, .file = file, .d = d, .table = xstrdup("") };
	int rc = 0;
	if (len > CAPSIM_TOML_MAX_BYTES)
		rc = err(&r, "%zu bytes: larger than the 8 MiB cap on input files", len);
	if (!rc && memchr(text, '\0', len))
		rc = err(&r, "a NUL byte: not a TOML text");
	if (!rc)
		rc = check_utf8(&r);
	r.line = 1;
	while (!rc && r.i < r.n) {
		skip_ws(&r);
		int c = peek(&r, 0);
		if (c == '#' || c == '\n' || c == '\r' || c == -1)
			rc = end_of_line(&r, "spaces");
		else if (c == '[')
			rc = header(&r, t);
		else
			rc = key_value(&r, t);
	}
	free(r.table);
	if (rc < 0)
		capsim_toml_free(t);
	return rc;
}

capsim_toml_entry *capsim_toml_get(capsim_toml *t, const char *key)
{
	for (size_t k = 0; k < t->n; k++)
		if (!strcmp(t->e[k].key, key)) {
			t->e[k].used = 1;
			return &t->e[k];
		}
	return NULL;
}

void capsim_toml_free(capsim_toml *t)
{
	for (size_t k = 0; k < t->n; k++) {
		free(t->e[k].key);
		value_free(&t->e[k].v);
	}
	for (size_t k = 0; k < t->n_tables; k++)
		free(t->tables[k]);
	free(t->e);
	free(t->tables);
	memset(t, 0, sizeof *t);
}

/* ---- a command line's values over the document ----------------------------------- */

/* text read as kind into *v (an array: its comma-separated strings); -1
 * where it is not one */
static int typed(const char *text, capsim_toml_kind kind, capsim_toml_value *v)
{
	char *end;
	memset(v, 0, sizeof *v);
	v->kind = kind;
	errno = 0;
	switch (kind) {
	case CAPSIM_TOML_STRING: v->s = xstrdup(text); return 0;
	case CAPSIM_TOML_INT:
		v->i = strtoll(text, &end, 10);
		return *text && !*end && errno != ERANGE ? 0 : -1;
	case CAPSIM_TOML_FLOAT:
		v->f = strtod(text, &end);
		return *text && !*end && errno != ERANGE ? 0 : -1;
	case CAPSIM_TOML_BOOL:
		v->b = !strcasecmp(text, "true");
		return v->b || !strcasecmp(text, "false") ? 0 : -1;
	case CAPSIM_TOML_ARRAY:
		for (const char *p = text; *text;) {
			const char *comma = strchr(p, ',');
			size_t n = comma ? (size_t)(comma - p) : strlen(p);
			v->items = realloc(v->items, (v->n_items + 1) * sizeof *v->items);
			if (!v->items)
				abort();
			capsim_toml_value *it = &v->items[v->n_items++];
			memset(it, 0, sizeof *it);
			it->kind = CAPSIM_TOML_STRING;
			it->s = malloc(n + 1);
			if (!it->s)
				abort();
			memcpy(it->s, p, n);
			it->s[n] = '\0';
			if (!comma)
				break;
			p = comma + 1;
		}
		return 0;
	}
	return -1;
}

static const char *kind_name(capsim_toml_kind k)
{
	static const char *const name[] = { "a string", "an integer", "a float", "true or false",
					    "a comma-separated list" };
	return name[k];
}

int capsim_toml_override(capsim_toml *t, const char *key, const char *text, long line,
			 const char *where, capsim_diags *d)
{
	capsim_toml_value v;
	capsim_toml_entry *e = NULL;
	for (size_t k = 0; k < t->n && !e; k++)
		if (!strcmp(t->e[k].key, key))
			e = &t->e[k];
	if (e) {
		if (typed(text, e->v.kind, &v) < 0) {
			value_free(&v);
			capsim_diags_add_at(d, where, "--%s %.80s: expected %s, as the config's line "
					    "%ld holds", key, text, kind_name(e->v.kind), e->line);
			return -1;
		}
		value_free(&e->v);
		e->v = v; /* its line stays the config's, where the key is */
		return 0;
	}
	static const capsim_toml_kind guess[] = { CAPSIM_TOML_INT, CAPSIM_TOML_FLOAT,
						  CAPSIM_TOML_BOOL, CAPSIM_TOML_STRING };
	for (size_t g = 0; g < sizeof guess / sizeof guess[0]; g++) {
		if (typed(text, guess[g], &v) == 0)
			break;
		value_free(&v);
	}
	if (t->n == CAPSIM_TOML_MAX_ENTRIES) {
		value_free(&v);
		capsim_diags_add_at(d, where, "more than %d keys", CAPSIM_TOML_MAX_ENTRIES);
		return -1;
	}
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 32;
		t->e = realloc(t->e, t->cap * sizeof *t->e);
		if (!t->e)
			abort();
	}
	const char *dot = strrchr(key, '.');
	t->e[t->n++] = (capsim_toml_entry){ .key = xstrdup(key), .line = line, .v = v,
					    .table_len = dot ? (size_t)(dot - key) : 0 };
	return 0;
}
