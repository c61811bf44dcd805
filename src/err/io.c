/* io.c - the error model's files: the residuals CSV read, the model's JSON
 * written and read back, each bad field named with where it is (err.h). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "err.h"
#include "xalloc.h"

#define HEADER "table,row,family,quantity,gpu,gen,stack,host_bound,gpus,profile,in_sample," \
	       "predicted,measured"
enum { C_TABLE, C_ROW, C_FAMILY, C_QUANTITY, C_GPU, C_GEN, C_STACK, C_HOST, C_GPUS,
       C_PROFILE, C_IN_SAMPLE, C_PREDICTED, C_MEASURED, C__COLS };
static const char *const col_names[C__COLS] = {
	"table", "row", "family", "quantity", "gpu", "gen", "stack", "host_bound", "gpus",
	"profile", "in_sample", "predicted", "measured",
};

/* ---- the residuals CSV ------------------------------------------------------ */

/* a name: letters, digits and - . _ / + (no commas, quotes or spaces) */
static int is_name(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || strchr("-._/+", *s)))
			return 0;
	return 1;
}

/* text field c of a line into dst (size CAPSIM_ERR_TEXT or more); 0 or -1
 * after a message */
static int text_field(char *dst, size_t size, char **f, int c, const char *path, long line,
		      capsim_diags *d)
{
	if (!is_name(f[c]) || strlen(f[c]) >= size) {
		capsim_diags_add(d, path, line, "%s: expected a name of letters, digits and "
				 "-._/+ (at most %zu characters), found '%s'", col_names[c],
				 size - 1, f[c]);
		return -1;
	}
	snprintf(dst, size, "%s", f[c]);
	return 0;
}

/* a number field: 0 or -1 after a message; lo < value (or lo <= value with
 * whole) and a whole number where asked */
static int num_field(double *out, char **f, int c, double lo, int whole, const char *path,
		     long line, capsim_diags *d, const char *expected)
{
	char *end;
	errno = 0;
	double v = strtod(f[c], &end);
	int ok = end != f[c] && !*end && !errno && isfinite(v) &&
		 (whole ? v >= lo && v == floor(v) : v > lo);
	if (!ok) {
		capsim_diags_add(d, path, line, "%s: expected %s, found '%s'", col_names[c],
				 expected, f[c]);
		return -1;
	}
	*out = v;
	return 0;
}

/* "FIELD: expected ..., found '...'" for field c; -1 */
static int bound_error(capsim_diags *d, const char *path, long line, int c, const char *want,
		       char **f)
{
	capsim_diags_add(d, path, line, "%s: expected %s, found '%s'", col_names[c], want, f[c]);
	return -1;
}

static int gen_ok(const char *s)
{
	return !strcmp(s, "ampere") || !strcmp(s, "hopper") || !strcmp(s, "blackwell");
}

/* one data line, split into C__COLS fields, into *w; 0 or -1 */
static int parse_row(char **f, const char *path, long line, capsim_err_row *w, capsim_diags *d)
{
	memset(w, 0, sizeof *w);
	int bad = text_field(w->table, sizeof w->table, f, C_TABLE, path, line, d);
	bad |= text_field(w->row, sizeof w->row, f, C_ROW, path, line, d);
	bad |= text_field(w->family, sizeof w->family, f, C_FAMILY, path, line, d);
	bad |= text_field(w->gpu, sizeof w->gpu, f, C_GPU, path, line, d);
	bad |= text_field(w->f.stack, sizeof w->f.stack, f, C_STACK, path, line, d);
	int q = capsim_err_quantity_parse(f[C_QUANTITY]);
	if (q < 0) {
		capsim_diags_add(d, path, line, "quantity: expected step, memory, busbw, power or "
				 "checkpoint, found '%s'", f[C_QUANTITY]);
		bad = -1;
	}
	w->quantity = q < 0 ? CAPSIM_ERR_STEP : (capsim_err_quantity)q;
	if (!gen_ok(f[C_GEN])) {
		capsim_diags_add(d, path, line, "gen: expected ampere, hopper or blackwell, found "
				 "'%s'", f[C_GEN]);
		bad = -1;
	}
	snprintf(w->f.gen, sizeof w->f.gen, "%s", f[C_GEN]);
	if (strcmp(f[C_PROFILE], "datasheet") && strcmp(f[C_PROFILE], "calibrated")) {
		capsim_diags_add(d, path, line, "profile: expected datasheet or calibrated, found "
				 "'%s'", f[C_PROFILE]);
		bad = -1;
	}
	snprintf(w->f.profile, sizeof w->f.profile, "%s", f[C_PROFILE]);
	double host = 0.0, gpus = 0.0, ins = 0.0;
	bad |= num_field(&host, f, C_HOST, 0, 1, path, line, d, "0 or 1");
	bad |= num_field(&ins, f, C_IN_SAMPLE, 0, 1, path, line, d, "0 or 1");
	bad |= num_field(&gpus, f, C_GPUS, 1, 1, path, line, d,
			 "a whole number of GPUs from 1 to 1000000");
	bad |= num_field(&w->predicted, f, C_PREDICTED, 0, 0, path, line, d,
			 "a number above 0");
	bad |= num_field(&w->measured, f, C_MEASURED, 0, 0, path, line, d, "a number above 0");
	if (!bad && host > 1)
		bad = bound_error(d, path, line, C_HOST, "0 or 1", f);
	if (!bad && ins > 1)
		bad = bound_error(d, path, line, C_IN_SAMPLE, "0 or 1", f);
	if (!bad && gpus > 1e6)
		bad = bound_error(d, path, line, C_GPUS, "a whole number of GPUs from 1 to 1000000",
				  f);
	w->f.host_bound = (int)host;
	w->in_sample = (int)ins;
	w->f.gpus = (int)gpus;
	return bad ? -1 : 0;
}

/* split a line at commas into f; the count, or -1 where a quote is found */
static int split(char *s, char **f, int max)
{
	int n = 0;
	s[strcspn(s, "\r\n")] = '\0';
	if (strchr(s, '"'))
		return -1;
	for (char *p = s;; p++) {
		if (n < max)
			f[n] = p;
		n++;
		p = strchr(p, ',');
		if (!p)
			return n;
		*p = '\0';
	}
}

static void rows_add(capsim_err_rows *r, const capsim_err_row *w)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 256;
		r->v = capsim_xrealloc(r->v, r->cap * sizeof *r->v);
	}
	r->v[r->n++] = *w;
}

/* a (table, row) seen before line's, or 0 */
static int repeated(const capsim_err_rows *r, const capsim_err_row *w)
{
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->v[i].table, w->table) && !strcmp(r->v[i].row, w->row))
			return 1;
	return 0;
}

/* one line of the file (after comments): the header or a row; 0 or -1 */
static int read_line(char *buf, const char *path, long line, int *header,
		     capsim_err_rows *out, capsim_diags *d)
{
	char *f[C__COLS];
	if (!*header) {
		buf[strcspn(buf, "\r\n")] = '\0';
		*header = 1;
		if (strcmp(buf, HEADER) == 0)
			return 0;
		capsim_diags_add(d, path, line, "header: expected '%s', found '%.200s'", HEADER, buf);
		return -1;
	}
	int n = split(buf, f, C__COLS);
	if (n != C__COLS) {
		capsim_diags_add(d, path, line, n < 0 ? "expected %d fields without quotes, found "
				 "a quote" : "expected %d fields, found %d", C__COLS, n);
		return -1;
	}
	capsim_err_row w;
	if (parse_row(f, path, line, &w, d) < 0)
		return -1;
	if (repeated(out, &w)) {
		capsim_diags_add(d, path, line, "row: expected one line for table %s, row %s, "
				 "found it again", w.table, w.row);
		return -1;
	}
	rows_add(out, &w);
	return 0;
}

int capsim_err_rows_load(const char *path, capsim_err_rows *out, capsim_diags *d)
{
	memset(out, 0, sizeof *out);
	FILE *fp = fopen(path, "r");
	if (!fp) {
		capsim_diags_add_runtime(d, path, "cannot read: %s", strerror(errno));
		return -1;
	}
	char buf[1024];
	long line = 0;
	int header = 0, bad = 0;
	while (fgets(buf, sizeof buf, fp)) {
		line++;
		if (!strchr(buf, '\n') && !feof(fp)) {
			capsim_diags_add(d, path, line, "expected a line of at most %zu characters",
					 sizeof buf - 2);
			bad = 1;
			break;
		}
		if (buf[0] == '#' || buf[strspn(buf, " \t\r\n")] == '\0')
			continue;
		bad |= read_line(buf, path, line, &header, out, d) < 0;
	}
	fclose(fp);
	if (!bad && out->n == 0) {
		capsim_diags_add(d, path, line, "expected a header and at least one row, found %s",
				 header ? "none" : "no header");
		bad = 1;
	}
	if (bad)
		capsim_err_rows_free(out);
	return bad ? -1 : 0;
}

void capsim_err_rows_free(capsim_err_rows *rows)
{
	free(rows->v);
	memset(rows, 0, sizeof *rows);
}

/* ---- the model's JSON: written ----------------------------------------------- */

static const char *const level_keys[CAPSIM_ERR__LEVELS] = { "80", "95" };

static json_t *group_json(const capsim_err_group *g)
{
	json_t *o = json_object();
	json_object_set_new(o, "quantity", json_string(capsim_err_quantity_names[g->quantity]));
	json_object_set_new(o, "level", json_integer(g->level));
	for (int k = 0; k < CAPSIM_ERR__FEATURES; k++)
		json_object_set_new(o, capsim_err_feature_names[k], json_string(g->key[k]));
	json_object_set_new(o, "n", json_integer((json_int_t)g->n));
	json_object_set_new(o, "median_r", json_real(g->median_r));
	for (int l = 0; l < CAPSIM_ERR__LEVELS; l++) {
		char key[16];
		snprintf(key, sizeof key, "band%s", level_keys[l]);
		json_object_set_new(o, key, g->has[l] ? json_pack("[f, f]", g->lo[l], g->hi[l]) :
							json_null());
	}
	json_object_set_new(o, "pairs", json_integer((json_int_t)g->n_pairs));
	json_object_set_new(o, "pair_median", json_real(g->pair_median));
	for (int l = 0; l < CAPSIM_ERR__LEVELS; l++) {
		char key[16];
		snprintf(key, sizeof key, "pair%s", level_keys[l]);
		json_object_set_new(o, key, g->pair_has[l] ? json_real(g->pair_q[l]) : json_null());
	}
	json_object_set_new(o, "pair_max", json_real(g->pair_max));
	return o;
}

static json_t *cover_json(const capsim_err_cover *c)
{
	json_t *o = json_object();
	json_object_set_new(o, "family", json_string(c->family));
	json_object_set_new(o, "rows", json_integer((json_int_t)c->rows));
	for (int l = 0; l < CAPSIM_ERR__LEVELS; l++) {
		char key[24];
		snprintf(key, sizeof key, "banded%s", level_keys[l]);
		json_object_set_new(o, key, json_integer((json_int_t)c->banded[l]));
		snprintf(key, sizeof key, "inside%s", level_keys[l]);
		json_object_set_new(o, key, json_integer((json_int_t)c->inside[l]));
		snprintf(key, sizeof key, "width%s", level_keys[l]);
		json_object_set_new(o, key, json_real(c->width[l]));
	}
	return o;
}

int capsim_err_model_write(const capsim_err_model *m, FILE *out)
{
	json_t *o = json_object(), *groups = json_array(), *cover = json_array();
	json_object_set_new(o, "format", json_string("capsim-error-model"));
	json_object_set_new(o, "version", json_integer(1));
	json_object_set_new(o, "method", json_string(
		"split-conformal intervals on r = ln(measured / predicted), two-sided, "
		"rank ceil((n + 1)(1 - alpha / 2)) (Lei, G'Sell, Rinaldo, Tibshirani and "
		"Wasserman, JASA 2018); bands are factors on the prediction"));
	json_object_set_new(o, "rows", json_integer((json_int_t)m->rows));
	json_object_set_new(o, "in_sample", json_integer((json_int_t)m->in_sample));
	for (size_t i = 0; i < m->n; i++)
		json_array_append_new(groups, group_json(&m->g[i]));
	for (size_t i = 0; i < m->n_cover; i++)
		json_array_append_new(cover, cover_json(&m->cover[i]));
	json_object_set_new(o, "groups", groups);
	json_object_set_new(o, "coverage", cover);
	int rc = json_dumpf(o, out, JSON_INDENT(1) | JSON_PRESERVE_ORDER |
					    JSON_REAL_PRECISION(12));
	json_decref(o);
	if (rc == 0 && fputc('\n', out) == EOF)
		rc = -1;
	return rc == 0 ? 0 : -1;
}
