/* escape.h - text from an input written into another language, as data.
 *
 * A name read from a store, a scenario, a catalog or an import may hold
 * anything: quotes, backticks, newlines, "-->", "]]>", control characters,
 * Unicode bidirectional overrides. Every place capsim writes such text into
 * a language that gives characters a meaning goes through the one function
 * for that language below, so that the text is read back as text, never as
 * markup, a command or a second record.
 *
 * Common to all but capsim_sh_word: bytes that a reader would not see are
 * made visible, never passed through. C0 control characters (tab and line
 * breaks too) and DEL become "\xNN"; C1 controls, the bidirectional
 * controls U+202A-U+202E and U+2066-U+2069, the marks U+200E, U+200F and
 * U+061C and the separators U+2028 and U+2029 become "\u{NNNN}"; a byte
 * that does not start a valid UTF-8 sequence becomes "\xNN". So "a\nb" is
 * written a\x0ab, and a right-to-left override cannot reorder what a
 * reader sees.
 *
 * Each function writes to a FILE; none allocates. */
#ifndef CAPSIM_ESCAPE_H
#define CAPSIM_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

/* XML or HTML element text and double-quoted attribute values: & < > " '
 * as entities, invisible characters made visible (XML 1.0 cannot hold C0
 * controls at all). */
void capsim_xml_escape(FILE *f, const char *s);

/* Text inside an XML comment (<!-- ... -->): "--" never appears (each
 * hyphen after a hyphen becomes "\x2d"), the text never ends in "-", and
 * invisible characters are made visible. So "-->" cannot close the comment,
 * and libxml2 never sees a double hyphen. */
void capsim_xml_comment_escape(FILE *f, const char *s);

/* Markdown inline text (a paragraph, a heading or a table cell): & < > as
 * HTML entities (Markdown viewers render raw HTML), \ ` * _ [ ] | ~ after a
 * backslash, and so a leading # + - = and the . or ) after leading digits
 * when a space or the end follows (a heading, a list), invisible characters (line breaks included) made
 * visible. Other punctuation stays as it is, so prose reads as prose. */
void capsim_md_escape(FILE *f, const char *s);

/* A gnuplot string literal, quotes included: single-quoted (gnuplot does
 * no backslash, backquote or macro substitution there), a ' doubled, and
 * invisible characters (a newline would end the command) made visible. */
void capsim_gnuplot_string(FILE *f, const char *s);

/* A field of a gnuplot data file, quotes included: double-quoted, a " or a
 * \ or a # replaced by its "\xNN" form, invisible characters made visible,
 * so the field is one column of one line. */
void capsim_gnuplot_datum(FILE *f, const char *s);

/* A CSV text field (RFC 4180): always quoted, a " doubled, invisible
 * characters (line breaks too: a record is one line) made visible; a field starting with
 * = + - @ (a spreadsheet's formula) gets a leading ' so that it stays text. */
void capsim_csv_text(FILE *f, const char *s);

/* A POSIX shell word that the shell reads back byte for byte: unquoted where
 * it holds only [A-Za-z0-9_@%+=:,./-] (and is not empty), else single-quoted
 * with each ' written as '\''. Nothing is made visible: the word is exact. */
void capsim_sh_word(FILE *f, const char *s);

/* Text for a terminal (a message, a progress line, a table): as it is,
 * but invisible characters made visible, so that a name cannot move the
 * cursor, retitle the window or reorder the line. */
void capsim_term_text(FILE *f, const char *s);

/* How many bytes at s (of n left) one visible unit takes, and whether it is
 * shown as is: returns the length of the unit and sets *plain to 1 where
 * it is printable UTF-8 to be copied, 0 where capsim_escape_visible would
 * rewrite it. Never returns 0 for n > 0. */
size_t capsim_escape_unit(const char *s, size_t n, int *plain);

/* The rewritten form of the unit at s of length len ("\xNN" or
 * "\u{NNNN}"), to f. */
void capsim_escape_visible(FILE *f, const char *s, size_t len);

#endif
