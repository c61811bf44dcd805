/* table.h - one table definition written as aligned text, CSV and JSON.
 *
 * A table is a list of columns (name, unit, kind, how a number is shown,
 * alignment) and rows of cells. A cell is absent, a number or a text. Each
 * writer walks the same cells, so a command's table, its CSV and its JSON
 * cannot disagree:
 *   - text: columns aligned, widths from the cells (at least the column's
 *     width), every cell made visible for a terminal (escape.h), absent "-";
 *   - CSV (RFC 4180): texts through capsim_csv_text, numbers bare, absent
 *     empty;
 *   - JSON (jansson): each row an object keyed by column name, numbers as
 *     numbers, booleans as booleans, absent as null.
 * The table owns its cells and its copy of the column array; a column's
 * strings are borrowed and must outlive the table. */
#ifndef CAPSIM_TABLE_H
#define CAPSIM_TABLE_H

#include <stddef.h>
#include <stdio.h>

/* what a column's numbers are */
typedef enum capsim_table_kind {
	CAPSIM_TABLE_TEXT,      /* texts; a number in it is shown as a REAL */
	CAPSIM_TABLE_INT,       /* whole numbers ("%.0f"); one that is not whole as a REAL */
	CAPSIM_TABLE_REAL,      /* precision and flags below */
	CAPSIM_TABLE_BOOL       /* true where not 0, false where 0 */
} capsim_table_kind;

typedef enum capsim_table_align {
	CAPSIM_TABLE_RIGHT,
	CAPSIM_TABLE_LEFT
} capsim_table_align;

/* column flags */
enum {
	CAPSIM_TABLE_FIXED = 1 << 0,       /* text: "%.*f" with precision, not "%.*g" */
	CAPSIM_TABLE_PERCENT = 1 << 1,     /* text: 100 x the value and "%"; CSV, JSON as is */
	CAPSIM_TABLE_CSV_BARE_NAME = 1 << 2, /* CSV header: the name as it is (capsim's own
					      * word), not quoted */
	CAPSIM_TABLE_CSV_BARE = 1 << 3,    /* CSV: texts as they are (capsim's own words) */
	CAPSIM_TABLE_CSV_NUMBERS_BARE = 1 << 4, /* CSV: a text that is a plain decimal number
						 * as it is (it cannot be a formula) */
	CAPSIM_TABLE_NO_TEXT = 1 << 5,     /* not in the text table */
	CAPSIM_TABLE_NO_CSV = 1 << 6,      /* not in the CSV */
	CAPSIM_TABLE_NO_JSON = 1 << 7      /* not in the JSON */
};

typedef struct capsim_table_col {
	const char *name;       /* the CSV header and JSON key */
	const char *label;      /* the text table's header; NULL: the name */
	const char *unit;       /* shown after the text header as " (unit)"; NULL: none */
	capsim_table_kind kind;
	capsim_table_align align;
	int precision;          /* REAL in the text: significant digits, or decimals (FIXED) */
	int csv_precision;      /* REAL in CSV: significant digits; 0: the fewest that read
				 * back as the same double */
	int width;              /* the text column's least width */
	int max_width;          /* text: a cell wider than this is cut and "..." added; 0: none */
	int gap;                /* spaces before the column in the text; 0: two */
	unsigned flags;
} capsim_table_col;

typedef enum capsim_table_cell_kind {
	CAPSIM_TABLE_ABSENT,
	CAPSIM_TABLE_NUM,
	CAPSIM_TABLE_STR
} capsim_table_cell_kind;

typedef struct capsim_table_cell {
	capsim_table_cell_kind kind;
	double num;
	char *text;             /* STR: owned */
} capsim_table_cell;

typedef struct capsim_table {
	capsim_table_col *cols; /* [n_cols], owned copy */
	size_t n_cols;
	capsim_table_cell *cells; /* [n_rows * n_cols], row by row */
	size_t n_rows, cap;
} capsim_table;

/* A table of these columns (copied) and no rows. */
void capsim_table_init(capsim_table *t, const capsim_table_col *cols, size_t n_cols);

/* Release the cells and the columns; *t is zeroed. */
void capsim_table_free(capsim_table *t);

/* A new row, every cell absent: its index. */
size_t capsim_table_add_row(capsim_table *t);

/* Cell (row, col) becomes the number v, or a copy of s (NULL: absent). */
void capsim_table_set_num(capsim_table *t, size_t row, size_t col, double v);
void capsim_table_set_text(capsim_table *t, size_t row, size_t col, const char *s);

/* The whole table as aligned text: a header line and a line a row. Texts
 * (and the header) are made visible as capsim_term_text does; a column is
 * as wide as its widest visible cell, at least its width; a cell is padded
 * on its alignment's other side, and a line ends at its last non-empty cell,
 * never in padding. Returns -1 when f reports an error. */
int capsim_table_write_text(const capsim_table *t, FILE *f);

/* One line of the text table as it comes (row -1: the header), each column
 * as wide as its width or its header, whichever is wider; a wider cell
 * overflows. For tables printed a row at a time. */
void capsim_table_write_line(const capsim_table *t, long row, FILE *f);

/* The table as CSV: a header of the names, then a record a row. A text
 * goes through capsim_csv_text unless the column's flags say otherwise; a
 * number bare (INT "%.0f", REAL at csv_precision, BOOL true/false); absent
 * is empty. Returns -1 when f reports an error. */
int capsim_table_write_csv(const capsim_table *t, FILE *f);

/* The table as a JSON array, an object a row keyed by column name, absent
 * cells null. The caller owns it. */
struct json_t;
struct json_t *capsim_table_json(const capsim_table *t);

/* Row's cells of columns [from, to) set into the object o by column name;
 * absent cells are left out where omit_absent, else null. */
void capsim_table_json_cells(const capsim_table *t, size_t row, size_t from, size_t to,
			     int omit_absent, struct json_t *o);

/* A text as a JSON string: exact where it is UTF-8, else its visible form
 * (escape.h), never dropped. The caller owns it. */
struct json_t *capsim_table_json_text(const char *s);

/* 1 when s is a plain decimal number (an optional sign, digits with an
 * optional fraction, an optional exponent; finite), with its value in *out;
 * else 0. "64", "-1.5e3" are; "4 TB/s", "0x10", "inf", " 1" are not. */
int capsim_plain_number(const char *s, double *out);

#endif
