/* load.c - the error model's JSON read back, each bad value named by its
 * JSON path with what was expected and what was found (err.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "err.h"
#include "xalloc.h"

/* where a value is read from: the file, the JSON path of its object, and
 * whether anything was bad */
typedef struct reader {
	const char *file;
	char at[64];
	capsim_diags *d;
	int bad;
} reader;

/* "FILE: AT.KEY: expected WANT, found JSON" */
static void complain(reader *r, const char *key, const char *want, const json_t *v)
{
	char *found = v ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(10)) : NULL;
	capsim_diags_add(r->d, r->file, 0, "%s%s%s: expected %s, found %.60s", r->at,
			 *r->at ? "." : "", key, want, found ? found : "nothing");
	free(found);
	r->bad = 1;
}

static double num(reader *r, const json_t *o, const char *key, double lo)
{
	const json_t *v = json_object_get(o, key);
	if (!json_is_number(v) || !(json_number_value(v) >= lo)) {
		char want[64];
		snprintf(want, sizeof want, "a number of at least %g", lo);
		complain(r, key, want, v);
		return 0.0;
	}
	return json_number_value(v);
}

static size_t count(reader *r, const json_t *o, const char *key, json_int_t max)
{
	const json_t *v = json_object_get(o, key);
	if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > max) {
		char want[64];
		snprintf(want, sizeof want, "a whole number from 0 to %lld", (long long)max);
		complain(r, key, want, v);
		return 0;
	}
	return (size_t)json_integer_value(v);
}

static void text(reader *r, const json_t *o, const char *key, char *dst, size_t size)
{
	const json_t *v = json_object_get(o, key);
	if (!json_is_string(v) || !json_string_length(v) || json_string_length(v) >= size) {
		char want[64];
		snprintf(want, sizeof want, "a text of 1 to %zu characters", size - 1);
		complain(r, key, want, v);
		dst[0] = '\0';
		return;
	}
	snprintf(dst, size, "%s", json_string_value(v));
}

/* a band: null (has 0), or [lo, hi] with 0 < lo <= hi, allowed only where
 * the group has the rows its level needs */
static void band(reader *r, const json_t *o, const char *key, size_t n, size_t min_n,
		 int *has, double *lo, double *hi)
{
	const json_t *v = json_object_get(o, key);
	*has = 0;
	if (json_is_null(v) && n < min_n)
		return;
	const json_t *a = json_array_get(v, 0), *b = json_array_get(v, 1);
	if (n < min_n || !json_is_array(v) || json_array_size(v) != 2 || !json_is_number(a) ||
	    !json_is_number(b) || !(json_number_value(a) > 0) ||
	    !(json_number_value(b) >= json_number_value(a))) {
		char want[96];
		snprintf(want, sizeof want, n < min_n ? "null (n %zu is under %zu)" :
			 "[lo, hi] with 0 < lo <= hi (n %zu, at least %zu)", n, min_n);
		complain(r, key, want, v);
		return;
	}
	*has = 1;
	*lo = json_number_value(a);
	*hi = json_number_value(b);
}

/* a paired quantile: null, or a number >= 0 where there are enough pairs */
static void pair_q(reader *r, const json_t *o, const char *key, size_t n, size_t min_n,
		   int *has, double *q)
{
	const json_t *v = json_object_get(o, key);
	*has = 0;
	if (json_is_null(v) && n < min_n)
		return;
	if (n < min_n || !json_is_number(v) || !(json_number_value(v) >= 0)) {
		char want[96];
		snprintf(want, sizeof want, n < min_n ? "null (%zu pairs, under %zu)" :
			 "a number of at least 0 (%zu pairs)", n, min_n);
		complain(r, key, want, v);
		return;
	}
	*has = 1;
	*q = json_number_value(v);
}

/* the group's features: each kept one a value, each dropped one "*" */
static void group_key(reader *r, const json_t *o, capsim_err_group *g)
{
	for (int k = 0; k < CAPSIM_ERR__FEATURES; k++) {
		const char *name = capsim_err_feature_names[k];
		text(r, o, name, g->key[k], sizeof g->key[k]);
		int dropped = k >= CAPSIM_ERR__FEATURES - g->level;
		if (g->key[k][0] && dropped != (strcmp(g->key[k], "*") == 0))
			complain(r, name, dropped ? "\"*\" (dropped at this level)" :
						    "a value, not \"*\" (kept at this level)",
				 json_object_get(o, name));
	}
}

static void read_group(reader *r, const json_t *o, capsim_err_group *g)
{
	char q[32];
	text(r, o, "quantity", q, sizeof q);
	int qi = capsim_err_quantity_parse(q);
	if (q[0] && qi < 0)
		complain(r, "quantity", "step, memory, busbw, power or checkpoint",
			 json_object_get(o, "quantity"));
	g->quantity = qi < 0 ? CAPSIM_ERR_STEP : (capsim_err_quantity)qi;
	g->level = (int)count(r, o, "level", CAPSIM_ERR__FEATURES);
	group_key(r, o, g);
	g->n = count(r, o, "n", 1000000);
	const json_t *med = json_object_get(o, "median_r");
	if (!json_is_number(med))
		complain(r, "median_r", "a number", med);
	g->median_r = json_number_value(med);
	g->n_pairs = count(r, o, "pairs", 1000000000);
	g->pair_median = num(r, o, "pair_median", 0);
	g->pair_max = num(r, o, "pair_max", 0);
	static const char *const bands[] = { "band80", "band95" }, *const pairs[] = { "pair80",
										    "pair95" };
	for (int l = 0; l < CAPSIM_ERR__LEVELS; l++) {
		band(r, o, bands[l], g->n, capsim_err_min_n[l], &g->has[l], &g->lo[l], &g->hi[l]);
		pair_q(r, o, pairs[l], g->n_pairs, capsim_err_min_n[l], &g->pair_has[l],
		       &g->pair_q[l]);
	}
}

static void read_cover(reader *r, const json_t *o, capsim_err_cover *c)
{
	static const char *const keys[CAPSIM_ERR__LEVELS][3] = {
		{ "banded80", "inside80", "width80" }, { "banded95", "inside95", "width95" } };
	text(r, o, "family", c->family, sizeof c->family);
	c->rows = count(r, o, "rows", 1000000);
	for (int l = 0; l < CAPSIM_ERR__LEVELS; l++) {
		c->banded[l] = count(r, o, keys[l][0], (json_int_t)c->rows);
		c->inside[l] = count(r, o, keys[l][1], (json_int_t)c->banded[l]);
		c->width[l] = num(r, o, keys[l][2], 0);
	}
}

/* the top object's head and arrays into m */
static void read_model(reader *r, const json_t *top, capsim_err_model *m)
{
	const json_t *fmt = json_object_get(top, "format"), *ver = json_object_get(top, "version");
	if (!json_is_string(fmt) || strcmp(json_string_value(fmt), "capsim-error-model") != 0)
		complain(r, "format", "\"capsim-error-model\"", fmt);
	if (!json_is_integer(ver) || json_integer_value(ver) != 1)
		complain(r, "version", "1", ver);
	m->rows = count(r, top, "rows", 1000000);
	m->in_sample = count(r, top, "in_sample", (json_int_t)m->rows);
	const json_t *groups = json_object_get(top, "groups"), *cover = json_object_get(top,
											   "coverage");
	if (!json_is_array(groups) || !json_array_size(groups))
		complain(r, "groups", "an array of at least one group", groups);
	if (!json_is_array(cover))
		complain(r, "coverage", "an array", cover);
	if (r->bad)
		return;
	m->n = json_array_size(groups);
	m->g = capsim_xcalloc(m->n, sizeof *m->g);
	for (size_t i = 0; i < m->n; i++) {
		snprintf(r->at, sizeof r->at, "groups[%zu]", i);
		read_group(r, json_array_get(groups, i), &m->g[i]);
	}
	m->n_cover = json_array_size(cover);
	m->cover = capsim_xcalloc(m->n_cover + 1, sizeof *m->cover);
	for (size_t i = 0; i < m->n_cover; i++) {
		snprintf(r->at, sizeof r->at, "coverage[%zu]", i);
		read_cover(r, json_array_get(cover, i), &m->cover[i]);
	}
}

capsim_err_model *capsim_err_model_load(const char *path, capsim_diags *d)
{
	FILE *fp = fopen(path, "r");
	if (!fp) {
		capsim_diags_add_runtime(d, path, "cannot read: %s", strerror(errno));
		return NULL;
	}
	json_error_t je;
	json_t *top = json_loadf(fp, JSON_REJECT_DUPLICATES, &je);
	fclose(fp);
	if (!top) {
		capsim_diags_add(d, path, je.line, "expected JSON: %s", je.text);
		return NULL;
	}
	reader r = { .file = path, .d = d };
	capsim_err_model *m = capsim_xcalloc(1, sizeof *m);
	if (!json_is_object(top))
		complain(&r, "(top)", "an object", top);
	else
		read_model(&r, top, m);
	json_decref(top);
	if (r.bad) {
		capsim_err_model_free(m);
		return NULL;
	}
	return m;
}

capsim_err_model *capsim_err_model_load_root(const char *root, capsim_diags *d)
{
	char path[4096];
	int w = snprintf(path, sizeof path, "%s/hardware/errors/model.json", root);
	if (w < 0 || (size_t)w >= sizeof path) {
		capsim_diags_add_runtime(d, root, "the catalog's path is too long");
		return NULL;
	}
	return capsim_err_model_load(path, d);
}
