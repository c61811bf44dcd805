/* toml.h - a reader of the TOML (v1.0.0, toml.io) that job configs use:
 * tables ([a.b]), key = value with dotted and quoted keys, basic strings
 * (with their escapes) and literal strings, integers (decimal with _, hex,
 * octal, binary), floats (with inf and nan), booleans and arrays of those
 * (over several lines, with comments and a trailing comma), and comments.
 * What it does not read (inline tables, dates and times, arrays of tables,
 * multi-line strings, arrays of arrays) is refused at file:line, never
 * misread; so is what TOML itself forbids (a key defined twice, a table
 * defined twice, a value where a table is, a text that is not UTF-8). */
#ifndef CAPSIM_TOML_H
#define CAPSIM_TOML_H

#include <stddef.h>

#include "diag.h"

/* Limits (each passed is refused, naming it): the text, 8 MiB; a key path
 * or a string, 64 KiB; an array's items, 65536; the entries, 65536. */
#define CAPSIM_TOML_MAX_BYTES (8u << 20)
#define CAPSIM_TOML_MAX_TEXT (64u << 10)
#define CAPSIM_TOML_MAX_ITEMS 65536
#define CAPSIM_TOML_MAX_ENTRIES 65536

typedef enum capsim_toml_kind {
	CAPSIM_TOML_STRING,
	CAPSIM_TOML_INT,
	CAPSIM_TOML_FLOAT,
	CAPSIM_TOML_BOOL,
	CAPSIM_TOML_ARRAY,
} capsim_toml_kind;

/* one value: a scalar, or an array of scalars (items, n_items) */
typedef struct capsim_toml_value {
	capsim_toml_kind kind;
	char *s;     /* a string's text, UTF-8, NUL-terminated (a \u0000 is refused) */
	long long i; /* an integer */
	double f;    /* a float */
	int b;       /* a boolean: 0 or 1 */
	struct capsim_toml_value *items;
	size_t n_items;
} capsim_toml_value;

/* one key's value: key is its whole path, its parts joined by '.'
 * ("parallelism.tensor_parallel_degree"), line where it is defined */
typedef struct capsim_toml_entry {
	char *key;
	long line;
	capsim_toml_value v;
	size_t table_len; /* the table it was defined in: key's first table_len bytes */
	int used;         /* set by capsim_toml_get: the caller read it */
} capsim_toml_entry;

/* a document: its entries in the order the text gives them, and the
 * tables its headers define (to refuse one defined twice) */
typedef struct capsim_toml {
	capsim_toml_entry *e;
	size_t n, cap;
	char **tables;
	size_t n_tables, cap_tables;
} capsim_toml;

/* Read text (len bytes, not NUL-terminated) of file into *t (emptied
 * first). Returns 0, or -1 with each reason at file:line in d and *t empty:
 * what TOML forbids ("key 'a.b' defined twice (first at line 3)") and what
 * this reader does not read ("inline tables are not read"). A quoted key
 * holding a '.' is refused (the path would be ambiguous). */
int capsim_toml_parse(const char *text, size_t len, const char *file, capsim_toml *t,
		      capsim_diags *d);

/* The entry of key (its whole dotted path), marked used; NULL where the
 * document does not define it. */
capsim_toml_entry *capsim_toml_get(capsim_toml *t, const char *key);

/* Set key (its whole dotted path) to text, a value a command line gives
 * over the document (torchtitan's --section.key VALUE): where the document
 * defines key, text read as that entry's kind (its line kept; a
 * string as it is, an integer, a float, true or false, an array as
 * comma-separated strings); else added at line, read as an integer, a float, true
 * or false, or else a string. Returns 0, or -1 with the reason at where in
 * d: text not of the entry's kind, the entries' limit passed. */
int capsim_toml_override(capsim_toml *t, const char *key, const char *text, long line,
			 const char *where, capsim_diags *d);

/* Free what *t holds and leave it empty. */
void capsim_toml_free(capsim_toml *t);

#endif
