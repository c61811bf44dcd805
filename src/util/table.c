/* table.c - one table definition written as aligned text, CSV and JSON
 * (table.h). */
#include "table.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "escape.h"
#include "xalloc.h"

#define NUM_LEN 64

/* ---- building ------------------------------------------------------------------------ */

void capsim_table_init(capsim_table *t, const capsim_table_col *cols, size_t n_cols)
{
	memset(t, 0, sizeof *t);
	t->cols = capsim_xcalloc(n_cols ? n_cols : 1, sizeof *t->cols);
	if (n_cols)
		memcpy(t->cols, cols, n_cols * sizeof *cols);
	t->n_cols = n_cols;
}

void capsim_table_free(capsim_table *t)
{
	for (size_t i = 0; i < t->n_rows * t->n_cols; i++)
		free(t->cells[i].text);
	free(t->cells);
	free(t->cols);
	memset(t, 0, sizeof *t);
}

size_t capsim_table_add_row(capsim_table *t)
{
	if (t->n_rows == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 8;
		t->cells = capsim_xrealloc(t->cells, t->cap * t->n_cols * sizeof *t->cells +
					   sizeof *t->cells);
	}
	memset(&t->cells[t->n_rows * t->n_cols], 0, t->n_cols * sizeof *t->cells);
	return t->n_rows++;
}

static capsim_table_cell *cell_at(const capsim_table *t, size_t row, size_t col)
{
	return &t->cells[row * t->n_cols + col];
}

void capsim_table_set_num(capsim_table *t, size_t row, size_t col, double v)
{
	capsim_table_cell *c = cell_at(t, row, col);
	free(c->text);
	*c = (capsim_table_cell){ .kind = CAPSIM_TABLE_NUM, .num = v };
}

void capsim_table_set_text(capsim_table *t, size_t row, size_t col, const char *s)
{
	capsim_table_cell *c = cell_at(t, row, col);
	free(c->text);
	*c = (capsim_table_cell){ .kind = s ? CAPSIM_TABLE_STR : CAPSIM_TABLE_ABSENT,
				  .text = s ? capsim_xstrdup(s) : NULL };
}

/* ---- numbers ------------------------------------------------------------------------- */

int capsim_plain_number(const char *s, double *out)
{
	const char *p = s;
	if (*p == '+' || *p == '-')
		p++;
	size_t digits = strspn(p, "0123456789");
	p += digits;
	if (*p == '.') {
		size_t frac = strspn(p + 1, "0123456789");
		digits += frac;
		p += 1 + frac;
	}
	if (!digits)
		return 0;
	if (*p == 'e' || *p == 'E') {
		const char *e = p + 1;
		if (*e == '+' || *e == '-')
			e++;
		size_t exp = strspn(e, "0123456789");
		if (!exp)
			return 0;
		p = e + exp;
	}
	if (*p)
		return 0;
	double v = strtod(s, NULL);
	if (!isfinite(v))
		return 0;
	*out = v;
	return 1;
}

/* v in the fewest digits (15 to 17) that read back as v */
static void exact_number(double v, char *buf, size_t n)
{
	for (int digits = 15; digits <= 17; digits++) {
		snprintf(buf, n, "%.*g", digits, v);
		if (strtod(buf, NULL) == v)
			return;
	}
}

static int whole(double v)
{
	return v == floor(v) && fabs(v) < 9e15;
}

/* a number of column c as the text table shows it */
static void text_number(const capsim_table_col *c, double v, char *buf, size_t n)
{
	if (c->kind == CAPSIM_TABLE_BOOL) {
		snprintf(buf, n, "%s", v != 0 ? "true" : "false");
		return;
	}
	if (c->kind == CAPSIM_TABLE_INT && whole(v)) {
		snprintf(buf, n, "%.0f", v);
		return;
	}
	int pct = (c->flags & CAPSIM_TABLE_PERCENT) != 0;
	double x = pct ? 100 * v : v;
	if (c->flags & CAPSIM_TABLE_FIXED)
		snprintf(buf, n, "%.*f%s", c->precision, x, pct ? "%" : "");
	else
		snprintf(buf, n, "%.*g%s", c->precision, x, pct ? "%" : "");
}

/* a number of column c as CSV holds it */
static void csv_number(const capsim_table_col *c, double v, char *buf, size_t n)
{
	if (c->kind == CAPSIM_TABLE_BOOL)
		snprintf(buf, n, "%s", v != 0 ? "true" : "false");
	else if (c->kind == CAPSIM_TABLE_INT && whole(v))
		snprintf(buf, n, "%.0f", v);
	else if (c->csv_precision > 0)
		snprintf(buf, n, "%.*g", c->csv_precision, v);
	else
		exact_number(v, buf, n);
}

/* ---- text ------------------------------------------------------------------------------ */

/* s made visible (escape.h), cut after max columns with "..." added where
 * max > 0; *cols set to its width in columns (a character of UTF-8 one
 * column, an escape its length). The caller frees it. */
static char *visible(const char *s, int max, size_t *cols)
{
	char *out = NULL;
	size_t len = 0, w = 0, left = strlen(s);
	FILE *f = open_memstream(&out, &len);
	if (!f)
		capsim_xalloc_failed(left + 1);
	while (left) {
		int plain;
		size_t u = capsim_escape_unit(s, left, &plain);
		long at = ftell(f);
		if (plain)
			fwrite(s, 1, u, f);
		else
			capsim_escape_visible(f, s, u);
		size_t uw = plain ? 1 : (size_t)(ftell(f) - at);
		if (max > 0 && w + uw > (size_t)max) {
			fseek(f, at, SEEK_SET);
			fputs("...", f);
			w += 3;
			break;
		}
		w += uw;
		s += u;
		left -= u;
	}
	long end = ftell(f);
	if (fclose(f) != 0 || !out || end < 0)
		capsim_xalloc_failed(len + 1);
	out[end] = '\0';
	*cols = w;
	return out;
}

/* the text of cell (row, col) as shown (row -1: the header), visible; the
 * caller frees it */
static char *shown(const capsim_table *t, long row, size_t col, size_t *cols)
{
	const capsim_table_col *c = &t->cols[col];
	char num[NUM_LEN];
	if (row < 0) {
		const char *label = c->label ? c->label : c->name;
		if (!c->unit)
			return visible(label, 0, cols);
		char *both = capsim_xasprintf("%s (%s)", label, c->unit);
		char *v = visible(both, 0, cols);
		free(both);
		return v;
	}
	const capsim_table_cell *cell = cell_at(t, (size_t)row, col);
	if (cell->kind == CAPSIM_TABLE_STR)
		return visible(cell->text, c->max_width, cols);
	if (cell->kind == CAPSIM_TABLE_NUM)
		text_number(c, cell->num, num, sizeof num);
	else
		snprintf(num, sizeof num, "-");
	return visible(num, 0, cols);
}

static void spaces(FILE *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fputc(' ', f);
}

/* one line of the text table with these column widths */
static void write_line(const capsim_table *t, long row, const size_t *width, FILE *f)
{
	size_t n = t->n_cols;
	char **text = capsim_xcalloc(n ? n : 1, sizeof *text);
	size_t *cols = capsim_xcalloc(n ? n : 1, sizeof *cols);
	size_t last = 0; /* one past the last non-empty cell shown */
	for (size_t c = 0; c < n; c++) {
		if (t->cols[c].flags & CAPSIM_TABLE_NO_TEXT)
			continue;
		text[c] = shown(t, row, c, &cols[c]);
		if (text[c][0])
			last = c + 1;
	}
	int first = 1;
	for (size_t c = 0; c < last; c++) {
		const capsim_table_col *k = &t->cols[c];
		if (!text[c])
			continue;
		if (!first)
			spaces(f, k->gap > 0 ? (size_t)k->gap : 2);
		first = 0;
		size_t pad = width[c] > cols[c] ? width[c] - cols[c] : 0;
		if (k->align == CAPSIM_TABLE_RIGHT)
			spaces(f, pad);
		fputs(text[c], f);
		if (k->align == CAPSIM_TABLE_LEFT && c + 1 < last)
			spaces(f, pad);
	}
	fputc('\n', f);
	for (size_t c = 0; c < n; c++)
		free(text[c]);
	free(text);
	free(cols);
}

/* each column's width: its own, its header's and, over rows [0, rows), its
 * cells' */
static size_t *widths(const capsim_table *t, size_t rows)
{
	size_t *w = capsim_xcalloc(t->n_cols ? t->n_cols : 1, sizeof *w);
	for (size_t c = 0; c < t->n_cols; c++) {
		if (t->cols[c].flags & CAPSIM_TABLE_NO_TEXT)
			continue;
		w[c] = t->cols[c].width > 0 ? (size_t)t->cols[c].width : 0;
		for (long i = -1; i < (long)rows; i++) {
			size_t cols;
			free(shown(t, i, c, &cols));
			if (cols > w[c])
				w[c] = cols;
		}
	}
	return w;
}

int capsim_table_write_text(const capsim_table *t, FILE *f)
{
	size_t *w = widths(t, t->n_rows);
	for (long i = -1; i < (long)t->n_rows; i++)
		write_line(t, i, w, f);
	free(w);
	return ferror(f) ? -1 : 0;
}

void capsim_table_write_line(const capsim_table *t, long row, FILE *f)
{
	size_t *w = widths(t, 0);
	write_line(t, row, w, f);
	free(w);
}

/* ---- CSV ------------------------------------------------------------------------------- */

static void csv_cell(const capsim_table *t, size_t row, size_t col, FILE *f)
{
	const capsim_table_col *c = &t->cols[col];
	const capsim_table_cell *cell = cell_at(t, row, col);
	char num[NUM_LEN];
	double x;
	if (cell->kind == CAPSIM_TABLE_NUM) {
		csv_number(c, cell->num, num, sizeof num);
		fputs(num, f);
	} else if (cell->kind != CAPSIM_TABLE_STR) {
		return;
	} else if ((c->flags & CAPSIM_TABLE_CSV_BARE) ||
		   ((c->flags & CAPSIM_TABLE_CSV_NUMBERS_BARE) &&
		    capsim_plain_number(cell->text, &x))) {
		fputs(cell->text, f);
	} else {
		capsim_csv_text(f, cell->text);
	}
}

int capsim_table_write_csv(const capsim_table *t, FILE *f)
{
	int first = 1;
	for (size_t c = 0; c < t->n_cols; c++) {
		const capsim_table_col *k = &t->cols[c];
		if (k->flags & CAPSIM_TABLE_NO_CSV)
			continue;
		if (!first)
			fputc(',', f);
		first = 0;
		if (k->flags & CAPSIM_TABLE_CSV_BARE_NAME)
			fputs(k->name, f);
		else
			capsim_csv_text(f, k->name);
	}
	fputc('\n', f);
	for (size_t i = 0; i < t->n_rows; i++) {
		first = 1;
		for (size_t c = 0; c < t->n_cols; c++) {
			if (t->cols[c].flags & CAPSIM_TABLE_NO_CSV)
				continue;
			if (!first)
				fputc(',', f);
			first = 0;
			csv_cell(t, i, c, f);
		}
		fputc('\n', f);
	}
	return ferror(f) ? -1 : 0;
}

/* ---- JSON ------------------------------------------------------------------------------ */

json_t *capsim_table_json_text(const char *s)
{
	json_t *j = json_string(s);
	if (j)
		return j;
	size_t cols;
	char *v = visible(s, 0, &cols);
	j = json_string(v);
	free(v);
	return j ? j : json_string("");
}

static json_t *json_cell(const capsim_table_col *c, const capsim_table_cell *cell)
{
	if (cell->kind == CAPSIM_TABLE_STR)
		return capsim_table_json_text(cell->text);
	if (cell->kind != CAPSIM_TABLE_NUM)
		return json_null();
	if (c->kind == CAPSIM_TABLE_BOOL)
		return json_boolean(cell->num != 0);
	if (c->kind == CAPSIM_TABLE_INT && whole(cell->num))
		return json_integer((json_int_t)cell->num);
	return json_real(cell->num);
}

void capsim_table_json_cells(const capsim_table *t, size_t row, size_t from, size_t to,
			     int omit_absent, json_t *o)
{
	for (size_t c = from; c < to && c < t->n_cols; c++) {
		const capsim_table_cell *cell = cell_at(t, row, c);
		if ((t->cols[c].flags & CAPSIM_TABLE_NO_JSON) ||
		    (omit_absent && cell->kind == CAPSIM_TABLE_ABSENT))
			continue;
		json_t *key = capsim_table_json_text(t->cols[c].name);
		json_object_set_new(o, json_string_value(key), json_cell(&t->cols[c], cell));
		json_decref(key);
	}
}

json_t *capsim_table_json(const capsim_table *t)
{
	json_t *a = json_array();
	for (size_t i = 0; i < t->n_rows; i++) {
		json_t *o = json_object();
		capsim_table_json_cells(t, i, 0, t->n_cols, 0, o);
		json_array_append_new(a, o);
	}
	return a;
}
