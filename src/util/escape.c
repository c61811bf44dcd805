/* escape.c - text written into another language as data; see escape.h. */
#include "escape.h"

#include <string.h>

/* the code point of a valid UTF-8 sequence at s (n bytes left) and its
 * length; 0 when s does not start one (overlong, surrogate, past U+10FFFF,
 * cut short) */
static size_t utf8_decode(const unsigned char *s, size_t n, unsigned long *cp)
{
	unsigned char c = s[0];
	size_t len;
	unsigned long v, min;
	if (c < 0x80) {
		*cp = c;
		return 1;
	} else if (c >= 0xc2 && c <= 0xdf) {
		len = 2, v = c & 0x1f, min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3, v = c & 0x0f, min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4, v = c & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = (v << 6) | (s[i] & 0x3f);
	}
	if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return len;
}

/* a code point a reader would not see, or that reorders what is seen */
static int invisible(unsigned long cp)
{
	return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) || /* C0, DEL, C1 */
	       cp == 0x061c || cp == 0x200e || cp == 0x200f ||          /* ALM, LRM, RLM */
	       (cp >= 0x202a && cp <= 0x202e) ||                          /* LRE..RLO */
	       (cp >= 0x2066 && cp <= 0x2069) ||                          /* LRI..PDI */
	       cp == 0x2028 || cp == 0x2029;                              /* line, paragraph */
}

size_t capsim_escape_unit(const char *s, size_t n, int *plain)
{
	unsigned long cp;
	size_t len = utf8_decode((const unsigned char *)s, n, &cp);
	if (len == 0) {
		*plain = 0;
		return 1;
	}
	*plain = !invisible(cp);
	return len;
}

void capsim_escape_visible(FILE *f, const char *s, size_t len)
{
	unsigned long cp;
	if (len > 1 && utf8_decode((const unsigned char *)s, len, &cp) == len)
		fprintf(f, "\\u{%04lX}", cp);
	else
		fprintf(f, "\\x%02x", (unsigned char)s[0]);
}

/* s to f unit by unit: a plain unit through put (one byte at a time, with
 * the next byte of s for context), an invisible one made visible */
typedef void (*put_fn)(FILE *f, char c, char next, void *state);

static void each_unit(FILE *f, const char *s, put_fn put, void *state)
{
	size_t n = strlen(s);
	for (size_t i = 0; i < n;) {
		int plain;
		size_t len = capsim_escape_unit(s + i, n - i, &plain);
		if (plain) {
			for (size_t k = 0; k < len; k++)
				put(f, s[i + k], s[i + k + 1], state);
		} else {
			capsim_escape_visible(f, s + i, len);
		}
		i += len;
	}
}

/* ---- XML and HTML ----------------------------------------------------------------- */

static void put_xml(FILE *f, char c, char next, void *state)
{
	(void)next, (void)state;
	switch (c) {
	case '&': fputs("&amp;", f); break;
	case '<': fputs("&lt;", f); break;
	case '>': fputs("&gt;", f); break;
	case '"': fputs("&quot;", f); break;
	case '\'': fputs("&#39;", f); break;
	default: fputc(c, f);
	}
}

void capsim_xml_escape(FILE *f, const char *s)
{
	each_unit(f, s, put_xml, NULL);
}

/* state: whether the last byte written was a hyphen */
static void put_comment(FILE *f, char c, char next, void *state)
{
	int *last_hyphen = state;
	if (c == '-' && (*last_hyphen || next == '\0')) {
		fputs("\\x2d", f);
		*last_hyphen = 0;
		return;
	}
	fputc(c, f);
	*last_hyphen = c == '-';
}

void capsim_xml_comment_escape(FILE *f, const char *s)
{
	int last_hyphen = 0;
	each_unit(f, s, put_comment, &last_hyphen);
}

/* ---- Markdown ---------------------------------------------------------------------- */

/* state: bytes written so far, and whether they were all digits (a line
 * that starts "12. " or "12)" alone is an ordered list) */
typedef struct {
	size_t at;
	int digits;
	char prev;
} md_state;

static int alnum(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static void put_md(FILE *f, char c, char next, void *state)
{
	(void)next;
	md_state *m = state;
	int first = m->at++ == 0;
	int after_digits = m->digits && !first;
	m->digits = (first || m->digits) && c >= '0' && c <= '9';
	char prev = m->prev;
	m->prev = c;
	/* GFM: an underscore inside a word (snake_case) is never emphasis */
	if (c == '_' && alnum(prev) && alnum(next)) {
		fputc(c, f);
		return;
	}
	switch (c) {
	case '&': fputs("&amp;", f); return;
	case '<': fputs("&lt;", f); return;
	case '>': fputs("&gt;", f); return;
	}
	if ((c && strchr("\\`*_[]|~", c)) || (first && strchr("#+-=", c)) ||
	    (after_digits && (c == '.' || c == ')') && (next == ' ' || next == '\0')))
		fputc('\\', f);
	fputc(c, f);
}

void capsim_md_escape(FILE *f, const char *s)
{
	md_state m = { 0, 0, 0 };
	each_unit(f, s, put_md, &m);
}

/* ---- gnuplot ------------------------------------------------------------------------ */

static void put_gp_string(FILE *f, char c, char next, void *state)
{
	(void)next, (void)state;
	if (c == '\'')
		fputc('\'', f);
	fputc(c, f);
}

void capsim_gnuplot_string(FILE *f, const char *s)
{
	fputc('\'', f);
	each_unit(f, s, put_gp_string, NULL);
	fputc('\'', f);
}

static void put_gp_datum(FILE *f, char c, char next, void *state)
{
	(void)next, (void)state;
	if (c == '"' || c == '\\' || c == '#')
		fprintf(f, "\\x%02x", (unsigned char)c);
	else
		fputc(c, f);
}

void capsim_gnuplot_datum(FILE *f, const char *s)
{
	fputc('"', f);
	each_unit(f, s, put_gp_datum, NULL);
	fputc('"', f);
}

/* ---- CSV ------------------------------------------------------------------------------ */

static void put_csv(FILE *f, char c, char next, void *state)
{
	(void)next, (void)state;
	if (c == '"')
		fputc('"', f);
	fputc(c, f);
}

void capsim_csv_text(FILE *f, const char *s)
{
	fputc('"', f);
	if (*s && strchr("=+-@", *s))
		fputc('\'', f);
	each_unit(f, s, put_csv, NULL);
	fputc('"', f);
}

/* ---- a terminal ---------------------------------------------------------------------- */

static void put_plain(FILE *f, char c, char next, void *state)
{
	(void)next, (void)state;
	fputc(c, f);
}

void capsim_term_text(FILE *f, const char *s)
{
	each_unit(f, s, put_plain, NULL);
}

/* ---- the shell ------------------------------------------------------------------------ */

void capsim_sh_word(FILE *f, const char *s)
{
	static const char safe[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				   "0123456789_@%+=:,./-";
	if (*s && strspn(s, safe) == strlen(s)) {
		fputs(s, f);
		return;
	}
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputs("'\\''", f);
		else
			fputc(*s, f);
	}
	fputc('\'', f);
}
