/* sweep.c - libcapsim's sweeps and their store: a sweep file run into a
 * results store as `capsim sweep` runs it (sweep/run.h), and one sweep's
 * points read back as rows (store/sweepq.h, every key of the result table);
 * see capsim.h. */
#include "capsim.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "api_int.h"
#include "catalog.h"
#include "eval.h"
#include "run.h"
#include "sweep.h"
#include "sweepq.h"
#include "table.h"
#include "xalloc.h"

/* *out: d's diagnostics; the status of d's failure */
static int fail_with(const capsim_diags *d, char **out)
{
	*out = capsim_api_diags_text(d);
	return capsim_api_status(d);
}

/* ---- a sweep into a store -------------------------------------------------------- */

/* what a run did, as JSON text */
static char *run_summary(const capsim_sweep *sw, const capsim_sweep_run_result *res)
{
	uint64_t dropped = 0;
	for (size_t c = 0; c < res->n_constraints; c++)
		dropped += res->drops[c];
	json_t *o = json_object();
	json_object_set_new(o, "sweep", json_string(sw->name));
	json_object_set_new(o, "sweep_id", json_integer((json_int_t)res->sweep_id));
	json_object_set_new(o, "points", json_integer((json_int_t)sw->size));
	json_object_set_new(o, "planned", json_integer((json_int_t)res->planned));
	json_object_set_new(o, "ok", json_integer((json_int_t)res->ok));
	json_object_set_new(o, "failed", json_integer((json_int_t)res->failed));
	json_object_set_new(o, "dropped", json_integer((json_int_t)dropped));
	char *text = capsim_api_json_text(o, 17);
	json_decref(o);
	return text;
}

/* sw (its base scenario base, in cat) run into db: OK with the summary in
 * *out, or the failure's status with d holding why */
static int run_loaded(const capsim_sweep *sw, const capsim_catalog *cat,
		      const capsim_scenario *base, const char *db, int threads,
		      const capsim_err_model *errors, char **out, capsim_diags *d)
{
	capsim_sweep_run_opts ro = { .threads = threads, .ranks = 1,
				     .version = capsim_api_version(), .errors = errors };
	capsim_sweep_run_result res;
	int rc = capsim_sweep_run(sw, cat, base, db, &ro, &res, d);
	if (rc == 0)
		*out = run_summary(sw, &res);
	capsim_sweep_run_result_free(&res);
	return rc == 0 ? CAPSIM_OK : capsim_api_status(d);
}

int capsim_run_sweep(const char *sweep, const char *db, int threads, unsigned flags,
		     char **out)
{
	if (!out)
		return CAPSIM_E_USAGE;
	*out = NULL;
	if (!sweep || !db || threads < 0 || threads > 1024) {
		*out = capsim_xstrdup("capsim: capsim_run_sweep: expected a sweep file, a store "
				      "and 0 to 1024 threads\n");
		return CAPSIM_E_USAGE;
	}
	capsim_api_init();
	capsim_diags d = { 0 };
	capsim_catalog *cat = capsim_catalog_create();
	capsim_scenario *base = capsim_xcalloc(1, sizeof *base);
	capsim_err_model *errors = NULL;
	capsim_sweep *sw = NULL;
	int rc;
	if (capsim_catalog_load_root(cat, capsim_catalog_default_root(), NULL, &d) == 0 &&
	    ((flags & CAPSIM_NO_INTERVALS) || (errors = capsim_api_err_model(&d))))
		sw = capsim_sweep_load(sweep, cat, NULL, 0, base, &d);
	if (sw)
		rc = run_loaded(sw, cat, base, db, threads, errors, out, &d);
	else
		rc = capsim_api_status(&d);
	if (rc != CAPSIM_OK)
		fail_with(&d, out);
	capsim_sweep_free(sw);
	capsim_err_model_free(errors);
	free(base);
	capsim_catalog_free(cat);
	capsim_diags_free(&d);
	return rc;
}

/* ---- a store's points as rows ------------------------------------------------------ */

/* the keys of the result table a sweep stores (all but the structured
 * ones, a banded key's ends too), into v[capsim_result_n_values]; how many */
static size_t stored_keys(const char **v)
{
	size_t n = 0;
	for (size_t i = 0; i < capsim_result_n_keys; i++) {
		const capsim_result_key *k = &capsim_result_keys[i];
		if (k->kind == CAPSIM_RK_JSON)
			continue;
		v[n++] = k->key;
		for (int e = 0; k->band != CAPSIM_BAND_NONE && e < 2 * CAPSIM_ERR__LEVELS; e++)
			v[n++] = k->ends[e];
	}
	return n;
}

/* where's filters parsed into f (n of them), each key one the sweep knows:
 * 0, or -1 after d */
static int parse_where(capsim_store *db, int64_t id, const char *const *where, size_t n,
		       const char *const *known, size_t n_known, const capsim_sweepq_paths *paths,
		       capsim_sweepq_filter *f, capsim_diags *d)
{
	for (size_t i = 0; i < n; i++) {
		char *at = capsim_xasprintf("where '%s'", where[i] ? where[i] : "");
		int bad = !where[i] || capsim_sweepq_filter_parse(where[i], &f[i], d) < 0 ||
			  capsim_sweepq_resolve(db, id, f[i].key, known, n_known, paths, at, d) < 0;
		if (!where[i])
			capsim_diags_add_at(d, at, "expected KEY OP VALUE, found nothing");
		free(at);
		if (bad)
			return -1;
	}
	return 0;
}

/* one cell as JSON: a number as the result table's kind has it */
static json_t *cell_json(const capsim_sweepq_cell *c, const char *key)
{
	if (c->kind == CAPSIM_SWEEPQ_TEXT)
		return capsim_table_json_text(c->text);
	const capsim_result_key *k = capsim_result_key_find(key);
	if (k && k->kind == CAPSIM_RK_BOOL)
		return json_boolean(c->num != 0);
	if (k && (k->kind == CAPSIM_RK_INT || k->kind == CAPSIM_RK_LONG))
		return json_integer((json_int_t)c->num);
	return json_real(c->num);
}

/* a parameter's value: a plain number as a number (digits alone as an
 * integer), else its text */
static json_t *param_json(const char *value)
{
	double v;
	if (!capsim_plain_number(value, &v))
		return capsim_table_json_text(value);
	size_t digits = strspn(value + (value[0] == '-'), "0123456789");
	if (value[digits + (value[0] == '-')] == '\0' && digits < 16)
		return json_integer((json_int_t)v);
	return json_real(v);
}

/* point p of t as one flat object */
static json_t *row_json(const capsim_sweepq_table *t, const capsim_sweepq_point *p)
{
	json_t *o = json_object();
	json_object_set_new(o, "index", json_integer((json_int_t)p->index));
	json_object_set_new(o, "status", json_string(p->failed ? "failed" : "ok"));
	if (p->failed)
		json_object_set_new(o, "error", capsim_table_json_text(p->error));
	for (size_t i = 0; i < t->paths.n; i++)
		if (p->params[i])
			json_object_set_new(o, t->paths.v[i], param_json(p->params[i]));
	for (size_t i = 0; i < t->n_keys; i++)
		if (p->cells[i].kind != CAPSIM_SWEEPQ_ABSENT)
			json_object_set_new(o, t->keys[i], cell_json(&p->cells[i], t->keys[i]));
	return o;
}

/* the rows of sweep sel of db into *out: OK, or the status with d */
static int read_rows(capsim_store *db, const char *sel, const char *const *where, size_t n_where,
		     char **out, capsim_diags *d)
{
	capsim_sweepq_sweep sw = { 0 };
	capsim_sweepq_paths paths = { 0 };
	capsim_sweepq_table t = { 0 };
	const char **known = capsim_xcalloc(capsim_result_n_values, sizeof *known);
	size_t n_known = stored_keys(known);
	capsim_sweepq_filter *f = capsim_xcalloc(n_where ? n_where : 1, sizeof *f);
	int rc = -1;
	if (capsim_sweepq_find(db, sel, &sw, d) == 0 &&
	    capsim_sweepq_read_paths(db, sw.id, &paths, d) == 0 &&
	    parse_where(db, sw.id, where, n_where, known, n_known, &paths, f, d) == 0) {
		capsim_sweepq_request rq = { .sweep_id = sw.id, .keys = known, .n_keys = n_known,
					     .filters = f, .n_filters = n_where,
					     .which = CAPSIM_SWEEPQ_ALL };
		rc = capsim_sweepq_read(db, &rq, &t, d);
	}
	if (rc == 0) {
		json_t *rows = json_array();
		for (size_t i = 0; i < t.n_points; i++)
			json_array_append_new(rows, row_json(&t, &t.points[i]));
		*out = capsim_api_json_text(rows, 17);
		json_decref(rows);
	}
	capsim_sweepq_table_free(&t);
	for (size_t i = 0; i < n_where; i++)
		capsim_sweepq_filter_free(&f[i]);
	free(f);
	free(known);
	capsim_sweepq_paths_free(&paths);
	capsim_sweepq_sweep_free(&sw);
	return rc == 0 ? CAPSIM_OK : capsim_api_status(d);
}

int capsim_query(const char *db, const char *sweep, const char *const *where, size_t n_where,
		 char **out)
{
	if (!out)
		return CAPSIM_E_USAGE;
	*out = NULL;
	if (!db || (n_where && !where)) {
		*out = capsim_xstrdup("capsim: capsim_query: expected a store and its filters\n");
		return CAPSIM_E_USAGE;
	}
	capsim_api_init();
	capsim_diags d = { 0 };
	capsim_store *s = NULL;
	int rc = capsim_store_open(db, CAPSIM_STORE_READ, &s, &d) == 0 ?
			 read_rows(s, sweep, where, n_where, out, &d) :
			 capsim_api_status(&d);
	capsim_store_close(s);
	if (rc != CAPSIM_OK)
		fail_with(&d, out);
	capsim_diags_free(&d);
	return rc;
}
