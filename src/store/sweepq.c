/* sweepq.c - the results of sweeps read back for capsim query; see sweepq.h
 * and docs/store.md ("Results tables"). */
#include "sweepq.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "storeint.h"
#include "table.h"
#include "xalloc.h"

/* ---- the results tables ---------------------------------------------------------- */

/* the results tables and the columns of each that a read uses */
static const struct {
	const char *table;
	const char *columns[6];
} need[] = {
	{ "sweeps", { "id", "name", "created_at", "capsim_version" } },
	{ "points", { "id", "sweep_id", "point_index", "status", "error" } },
	{ "point_params", { "point_id", "path", "value" } },
	{ "point_results", { "point_id", "key", "num_value", "text_value", "unit" } },
};

/* 0 when every column a read uses is in the table need[i], else -1 after
 * which is missing (a store written by another program: said in words,
 * never as SQLite's "no such column" of a statement) */
static int columns_present(capsim_store *s, size_t i, capsim_diags *d)
{
	for (const char *const *c = need[i].columns; *c; c++) {
		int has = capsim_store__has_column(s, need[i].table, *c, d);
		if (has < 0)
			return -1;
		if (has == 0) {
			capsim_diags_add(d, s->path, 0, "not a capsim store of sweep results: its "
					 "table '%s' has no column '%s'", need[i].table, *c);
			return -1;
		}
	}
	return 0;
}

/* 0 when s has the results tables, else -1 after why not */
static int results_present(capsim_store *s, capsim_diags *d)
{
	for (size_t i = 0; i < sizeof need / sizeof need[0]; i++) {
		int t = capsim_store__has_table(s, need[i].table, d);
		if (t < 0)
			return -1;
		if (t > 0) {
			if (columns_present(s, i, d) < 0)
				return -1;
			continue;
		}
		if (s->version == 0)
			capsim_diags_add(d, s->path, 0, "not a capsim store of sweep results (no "
					 "schema version, no table '%s')", need[i].table);
		else if (s->version < 4)
			capsim_diags_add(d, s->path, 0, "no sweep results: the store's schema "
					 "version is %d, results came with version 4", s->version);
		else
			capsim_diags_add(d, s->path, 0, "not a capsim store of sweep results: "
					 "schema version %d without the table '%s'", s->version,
					 need[i].table);
		return -1;
	}
	return 0;
}

/* ---- sweeps ---------------------------------------------------------------------- */

/* a sweep's columns, its points counted by status; a WHERE clause follows */
#define SWEEP_SELECT                                                                  \
	"SELECT s.id, s.name, s.created_at, s.capsim_version,"                        \
	" (SELECT count(*) FROM points p WHERE p.sweep_id = s.id AND p.status = 'ok'),"   \
	" (SELECT count(*) FROM points p WHERE p.sweep_id = s.id AND p.status = 'failed')" \
	" FROM sweeps s "

static void sweep_row(sqlite3_stmt *st, capsim_sweepq_sweep *w)
{
	memset(w, 0, sizeof *w);
	w->id = sqlite3_column_int64(st, 0);
	w->name = capsim_xstrdup(capsim_store__text(st, 1));
	capsim_strlcpy(w->created_at, capsim_store__text(st, 2), sizeof w->created_at);
	capsim_strlcpy(w->capsim_version, capsim_store__text(st, 3), sizeof w->capsim_version);
	w->n_ok = sqlite3_column_int64(st, 4);
	w->n_failed = sqlite3_column_int64(st, 5);
}

int capsim_sweepq_list(capsim_store *s, capsim_sweepq_sweep **out, size_t *n, capsim_diags *d)
{
	*out = NULL;
	*n = 0;
	if (results_present(s, d) < 0)
		return -1;
	sqlite3_stmt *st = capsim_store__prepare(s, SWEEP_SELECT "ORDER BY s.id", d);
	if (!st)
		return -1;
	int rc;
	while ((rc = capsim_store__step(s, st, d)) == 1) {
		*out = capsim_xrealloc(*out, (*n + 1) * sizeof **out);
		sweep_row(st, &(*out)[(*n)++]);
	}
	sqlite3_finalize(st);
	if (rc == 0 && *n == 0) {
		capsim_diags_add(d, s->path, 0, "no sweeps in the store");
		rc = -1;
	}
	return rc < 0 ? -1 : 0;
}

void capsim_sweepq_list_free(capsim_sweepq_sweep *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i].name);
	free(v);
}

void capsim_sweepq_sweep_free(capsim_sweepq_sweep *w)
{
	if (!w)
		return;
	free(w->name);
	memset(w, 0, sizeof *w);
}

/* The statements that find one sweep: each a constant, its argument bound */
static const char sweep_latest[] = SWEEP_SELECT "WHERE s.id = (SELECT max(id) FROM sweeps)";
static const char sweep_by_id[] = SWEEP_SELECT "WHERE s.id = ?1";
static const char sweep_by_name[] = SWEEP_SELECT "WHERE s.name = ?1 ORDER BY s.id DESC LIMIT 1";

/* one sweep by one of the statements above, with its argument (a name, or
 * an id where name is NULL): 1 found, 0 not, -1 after a message */
static int sweep_where(capsim_store *s, const char *sql, const char *name, int64_t id,
		       capsim_sweepq_sweep *out, capsim_diags *d)
{
	sqlite3_stmt *st = capsim_store__prepare(s, sql, d);
	if (!st)
		return -1;
	if (name)
		sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	else if (sqlite3_bind_parameter_count(st) > 0)
		sqlite3_bind_int64(st, 1, id);
	int rc = capsim_store__step(s, st, d);
	if (rc == 1)
		sweep_row(st, out);
	sqlite3_finalize(st);
	return rc;
}

static int all_digits(const char *s)
{
	return s[0] && strspn(s, "0123456789") == strlen(s) && strlen(s) <= 18;
}

size_t capsim_sweepq_visible(char *dst, size_t n, const char *s)
{
	assert(n > 0);
	char *esc = NULL;
	size_t len = 0, cut = 0, left = strlen(s);
	FILE *f = open_memstream(&esc, &len);
	if (!f) {
		dst[0] = '\0';
		return 0;
	}
	int whole = 1;
	while (left) {
		int plain;
		size_t u = capsim_escape_unit(s, left, &plain);
		if (plain)
			fwrite(s, 1, u, f);
		else
			capsim_escape_visible(f, s, u);
		fflush(f);
		if (whole && len < n)
			cut = len; /* a unit (or its escape) ends here and fits */
		else
			whole = 0;
		s += u;
		left -= u;
	}
	fclose(f);
	if (esc)
		memcpy(dst, esc, cut);
	dst[cut] = '\0';
	free(esc);
	return len;
}

char *capsim_sweepq_visible_dup(const char *s, size_t max)
{
	char *v = capsim_xmalloc(max + 4);
	if (capsim_sweepq_visible(v, max + 1, s) > max)
		strcat(v, "...");
	return v;
}

/* "the store has no sweep named 'SEL' (nor one of id SEL); it has 3
 * sweeps: 3 'beta', 2 '7', 1 'alpha'": the latest NO_SWEEP_LIST of them,
 * each name made visible and cut to NO_SWEEP_NAME bytes */
#define NO_SWEEP_LIST 10
#define NO_SWEEP_NAME 64
static void no_such_sweep(capsim_store *s, const char *sel, capsim_diags *d)
{
	capsim_sweepq_sweep *v;
	size_t n;
	capsim_diags quiet = { 0 };
	char *what = capsim_sweepq_visible_dup(sel, NO_SWEEP_NAME);
	char *nor = all_digits(sel) ? capsim_xasprintf(" (nor one of id %s)", sel) :
				      capsim_xstrdup("");
	if (capsim_sweepq_list(s, &v, &n, &quiet) < 0) {
		capsim_diags_add(d, s->path, 0, "the store has no sweep named '%s'%s; it has no "
				 "sweeps", what, nor);
	} else {
		char *have = capsim_xstrdup("");
		for (size_t i = n, shown = 0; i > 0 && shown < NO_SWEEP_LIST; i--, shown++) {
			char *name = capsim_sweepq_visible_dup(v[i - 1].name, NO_SWEEP_NAME);
			char *more = capsim_xasprintf("%s%s%lld '%s'", have, shown ? ", " : "",
						      (long long)v[i - 1].id, name);
			free(name);
			free(have);
			have = more;
		}
		capsim_diags_add(d, s->path, 0, "the store has no sweep named '%s'%s; it has %zu "
				 "sweep%s: %s%s", what, nor, n, n == 1 ? "" : "s", have,
				 n > NO_SWEEP_LIST ? ", ... (capsim query --list shows them all)" : "");
		free(have);
	}
	capsim_diags_free(&quiet);
	capsim_sweepq_list_free(v, n);
	free(what);
	free(nor);
}

int capsim_sweepq_find(capsim_store *s, const char *sel, capsim_sweepq_sweep *out,
		       capsim_diags *d)
{
	memset(out, 0, sizeof *out);
	if (results_present(s, d) < 0)
		return -1;
	int rc;
	if (!sel || !sel[0]) {
		rc = sweep_where(s, sweep_latest, NULL, 0, out, d);
		if (rc == 0)
			capsim_diags_add(d, s->path, 0, "no sweeps in the store");
		return rc == 1 ? 0 : -1;
	}
	rc = 0;
	if (all_digits(sel))
		rc = sweep_where(s, sweep_by_id, NULL, strtoll(sel, NULL, 10), out, d);
	if (rc == 0)
		rc = sweep_where(s, sweep_by_name, sel, 0, out, d);
	if (rc == 0)
		no_such_sweep(s, sel, d);
	return rc == 1 ? 0 : -1;
}

/* ---- names ----------------------------------------------------------------------- */

int capsim_sweepq_read_paths(capsim_store *s, int64_t sweep_id, capsim_sweepq_paths *out,
			     capsim_diags *d)
{
	memset(out, 0, sizeof *out);
	/* SQLite's BINARY order is memcmp's: strcmp's, so bsearch can find them */
	sqlite3_stmt *st = capsim_store__prepare(s, "SELECT DISTINCT pp.path FROM points p JOIN "
						    "point_params pp ON pp.point_id = p.id WHERE "
						    "p.sweep_id = ? ORDER BY pp.path", d);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, sweep_id);
	int rc;
	while ((rc = capsim_store__step(s, st, d)) == 1) {
		out->v = capsim_xrealloc(out->v, (out->n + 1) * sizeof *out->v);
		out->v[out->n++] = capsim_xstrdup(capsim_store__text(st, 0));
	}
	sqlite3_finalize(st);
	return rc < 0 ? -1 : 0;
}

void capsim_sweepq_paths_free(capsim_sweepq_paths *p)
{
	for (size_t i = 0; p && i < p->n; i++)
		free(p->v[i]);
	if (p) {
		free(p->v);
		memset(p, 0, sizeof *p);
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* name's position among p's paths, or -1 */
static long path_at(const capsim_sweepq_paths *p, const char *name)
{
	if (!p->n)
		return -1;
	char **hit = bsearch(&name, p->v, p->n, sizeof *p->v, cmp_str);
	return hit ? (long)(hit - p->v) : -1;
}

int capsim_sweepq_is_path(const capsim_sweepq_paths *p, const char *name)
{
	return path_at(p, name) >= 0;
}

/* 1 when some point of the sweep holds key, 0 when none, -1 after a message */
static int key_stored(capsim_store *s, int64_t sweep_id, const char *key, capsim_diags *d)
{
	sqlite3_stmt *st = capsim_store__prepare(s, "SELECT 1 FROM points p JOIN point_results r "
						    "ON r.point_id = p.id AND r.key = ?2 WHERE "
						    "p.sweep_id = ?1 LIMIT 1", d);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, sweep_id);
	sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC);
	int rc = capsim_store__step(s, st, d);
	sqlite3_finalize(st);
	return rc;
}

/* Levenshtein distance between a and b; SIZE_MAX for names longer than a
 * path may be */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la >= CAPSIM_RESULT_PATH_LEN || lb >= CAPSIM_RESULT_PATH_LEN)
		return SIZE_MAX;
	size_t prev[CAPSIM_RESULT_PATH_LEN + 1], cur[CAPSIM_RESULT_PATH_LEN + 1];
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
			size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
			cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
		}
		memcpy(prev, cur, (lb + 1) * sizeof *prev);
	}
	return prev[lb];
}

#define NEAREST 3

/* one candidate name with its distance to the unknown one */
typedef struct near_name {
	const char *name;
	size_t dist;
} near_name;

/* keep the NEAREST nearest of the names seen so far in best[] (*n of them),
 * the earlier of equal distances first; a name holding `to` whole
 * ("onprem_cost_to_train_usd" for "cost_to_train_usd") is as near as one
 * edit */
static void consider(near_name *best, size_t *n, const char *name, const char *to)
{
	size_t dist = to[0] && strstr(name, to) ? 1 : edit_distance(name, to);
	if (dist == SIZE_MAX)
		return;
	size_t at = *n;
	while (at > 0 && best[at - 1].dist > dist)
		at--;
	if (at >= NEAREST)
		return;
	size_t last = *n < NEAREST ? *n : NEAREST - 1;
	memmove(&best[at + 1], &best[at], (last - at) * sizeof *best);
	best[at] = (near_name){ name, dist };
	if (*n < NEAREST)
		(*n)++;
}

static void unknown_key(const char *name, const char *const *known, size_t n_known,
			const capsim_sweepq_paths *paths, const char *where, capsim_diags *d)
{
	near_name best[NEAREST];
	size_t n = 0;
	for (size_t i = 0; i < n_known; i++)
		consider(best, &n, known[i], name);
	for (size_t i = 0; i < paths->n; i++)
		consider(best, &n, paths->v[i], name);
	char list[3 * (CAPSIM_RESULT_PATH_LEN + 2)] = "";
	size_t len = 0;
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "",
					best[i].name);
	capsim_diags_add_at(d, where, "unknown key '%s': neither a result key nor a parameter "
			    "path of the sweep%s%s", name, n ? "; nearest: " : "", list);
}

int capsim_sweepq_resolve(capsim_store *s, int64_t sweep_id, const char *name,
			  const char *const *known, size_t n_known,
			  const capsim_sweepq_paths *paths, const char *where, capsim_diags *d)
{
	if (capsim_sweepq_is_path(paths, name))
		return CAPSIM_SWEEPQ_PARAM;
	for (size_t i = 0; i < n_known; i++)
		if (strcmp(known[i], name) == 0)
			return CAPSIM_SWEEPQ_RESULT;
	int rc = key_stored(s, sweep_id, name, d);
	if (rc == 1)
		return CAPSIM_SWEEPQ_RESULT;
	if (rc == 0)
		unknown_key(name, known, n_known, paths, where, d);
	return -1;
}

/* ---- filters --------------------------------------------------------------------- */

int capsim_sweepq_plain_number(const char *s, double *out)
{
	return capsim_plain_number(s, out);
}

static const struct {
	const char *text;
	capsim_sweepq_op op;
} ops[] = {
	/* two characters before one, so that "<=" is not "<" and "=..." */
	{ "<=", CAPSIM_SWEEPQ_LE }, { ">=", CAPSIM_SWEEPQ_GE }, { "!=", CAPSIM_SWEEPQ_NE },
	{ "=", CAPSIM_SWEEPQ_EQ }, { "<", CAPSIM_SWEEPQ_LT }, { ">", CAPSIM_SWEEPQ_GT },
};

static const char *skip_space(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

static void bad_filter(const char *text, const char *why, capsim_diags *d)
{
	capsim_diags_add_at(d, "--where", "'%s': expected KEY OP VALUE (OP one of = != < <= > >=; "
			    "e.g. 'step_time_s < 2' or 'cluster.nodes=16'), %s", text, why);
}

int capsim_sweepq_filter_parse(const char *text, capsim_sweepq_filter *out, capsim_diags *d)
{
	memset(out, 0, sizeof *out);
	const char *p = skip_space(text);
	size_t klen = strcspn(p, " \t=!<>");
	if (!klen) {
		bad_filter(text, "found no key", d);
		return -1;
	}
	if (klen >= sizeof out->key) {
		bad_filter(text, "found a key longer than a parameter path may be", d);
		return -1;
	}
	memcpy(out->key, p, klen);
	out->key[klen] = '\0';
	p = skip_space(p + klen);
	size_t i = 0, n = sizeof ops / sizeof ops[0];
	while (i < n && strncmp(p, ops[i].text, strlen(ops[i].text)) != 0)
		i++;
	if (i == n || (ops[i].op == CAPSIM_SWEEPQ_EQ && p[1] == '=')) {
		bad_filter(text, i == n ? "found no operator after the key" : "found '=='", d);
		return -1;
	}
	out->op = ops[i].op;
	p = skip_space(p + strlen(ops[i].text));
	size_t vlen = strlen(p);
	while (vlen && (p[vlen - 1] == ' ' || p[vlen - 1] == '\t'))
		vlen--;
	if (!vlen) {
		bad_filter(text, "found no value", d);
		return -1;
	}
	out->value = capsim_xasprintf("%.*s", (int)vlen, p);
	out->is_num = capsim_sweepq_plain_number(out->value, &out->num);
	return 0;
}

void capsim_sweepq_filter_free(capsim_sweepq_filter *f)
{
	if (!f)
		return;
	free(f->value);
	memset(f, 0, sizeof *f);
}

/* what OP says of c, the sign of (value - VALUE) */
static int op_holds(capsim_sweepq_op op, int c)
{
	switch (op) {
	case CAPSIM_SWEEPQ_EQ: return c == 0;
	case CAPSIM_SWEEPQ_NE: return c != 0;
	case CAPSIM_SWEEPQ_LT: return c < 0;
	case CAPSIM_SWEEPQ_LE: return c <= 0;
	case CAPSIM_SWEEPQ_GT: return c > 0;
	case CAPSIM_SWEEPQ_GE: return c >= 0;
	}
	return 0;
}

static int cmp_num(double a, double b)
{
	return (a > b) - (a < b);
}

/* a value as text (a parameter, a text result) against f */
static int text_matches(const char *v, const capsim_sweepq_filter *f)
{
	double x;
	if (f->is_num && capsim_sweepq_plain_number(v, &x))
		return op_holds(f->op, cmp_num(x, f->num));
	int c = strcmp(v, f->value);
	return op_holds(f->op, (c > 0) - (c < 0));
}

static int cell_matches(const capsim_sweepq_cell *c, const capsim_sweepq_filter *f)
{
	if (c->kind == CAPSIM_SWEEPQ_NUM)
		return f->is_num && op_holds(f->op, cmp_num(c->num, f->num));
	if (c->kind == CAPSIM_SWEEPQ_TEXT)
		return text_matches(c->text, f);
	return 0;
}

/* ---- the table of points --------------------------------------------------------- */

static void point_free(capsim_sweepq_point *p, size_t n_paths, size_t n_keys)
{
	for (size_t i = 0; p->params && i < n_paths; i++)
		free(p->params[i]);
	for (size_t i = 0; p->cells && i < n_keys; i++)
		free(p->cells[i].text);
	free(p->params);
	free(p->cells);
	free(p->error);
	memset(p, 0, sizeof *p);
}

void capsim_sweepq_table_free(capsim_sweepq_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n_points; i++)
		point_free(&t->points[i], t->paths.n, t->n_keys);
	for (size_t i = 0; i < t->n_keys; i++) {
		free(t->keys[i]);
		free(t->units[i]);
	}
	free(t->points);
	free(t->keys);
	free(t->units);
	capsim_sweepq_paths_free(&t->paths);
	memset(t, 0, sizeof *t);
}

static int cmp_index(const void *key, const void *elem)
{
	int64_t k = *(const int64_t *)key, i = ((const capsim_sweepq_point *)elem)->index;
	return (k > i) - (k < i);
}

/* the point of index in t (by index, as read), or NULL */
static capsim_sweepq_point *point_of(capsim_sweepq_table *t, int64_t index)
{
	if (!t->n_points)
		return NULL;
	return bsearch(&index, t->points, t->n_points, sizeof *t->points, cmp_index);
}

/* the status a read binds: NULL for every point */
static const char *status_of(capsim_sweepq_which which)
{
	return which == CAPSIM_SWEEPQ_OK ? "ok" : which == CAPSIM_SWEEPQ_FAILED ? "failed" : NULL;
}

/* a statement over the points of the sweep of the status asked for */
static sqlite3_stmt *points_stmt(capsim_store *s, const char *sql,
				 const capsim_sweepq_request *rq, capsim_diags *d)
{
	sqlite3_stmt *st = capsim_store__prepare(s, sql, d);
	if (!st)
		return NULL;
	sqlite3_bind_int64(st, 1, rq->sweep_id);
	const char *status = status_of(rq->which);
	if (status)
		sqlite3_bind_text(st, 2, status, -1, SQLITE_STATIC);
	return st;
}

static int read_points(capsim_store *s, const capsim_sweepq_request *rq,
		       capsim_sweepq_table *t, capsim_diags *d)
{
	sqlite3_stmt *st = points_stmt(s, "SELECT point_index, status, error FROM points WHERE "
					  "sweep_id = ?1 AND (?2 IS NULL OR status = ?2) ORDER BY "
					  "point_index", rq, d);
	if (!st)
		return -1;
	size_t cap = 0;
	int rc;
	while ((rc = capsim_store__step(s, st, d)) == 1) {
		if (t->n_points == cap) {
			cap = cap ? 2 * cap : 64;
			t->points = capsim_xrealloc(t->points, cap * sizeof *t->points);
		}
		capsim_sweepq_point *p = &t->points[t->n_points++];
		memset(p, 0, sizeof *p);
		p->index = sqlite3_column_int64(st, 0);
		p->failed = strcmp(capsim_store__text(st, 1), "ok") != 0;
		if (sqlite3_column_type(st, 2) != SQLITE_NULL)
			p->error = capsim_xstrdup(capsim_store__text(st, 2));
		p->params = capsim_xcalloc(t->paths.n, sizeof *p->params);
		p->cells = capsim_xcalloc(t->n_keys, sizeof *p->cells);
	}
	sqlite3_finalize(st);
	t->n_read = t->n_points;
	return rc < 0 ? -1 : 0;
}

static int read_params(capsim_store *s, const capsim_sweepq_request *rq,
		       capsim_sweepq_table *t, capsim_diags *d)
{
	sqlite3_stmt *st = points_stmt(s, "SELECT p.point_index, pp.path, pp.value FROM points p "
					  "JOIN point_params pp ON pp.point_id = p.id WHERE "
					  "p.sweep_id = ?1 AND (?2 IS NULL OR p.status = ?2)",
				       rq, d);
	if (!st)
		return -1;
	int rc;
	while ((rc = capsim_store__step(s, st, d)) == 1) {
		capsim_sweepq_point *p = point_of(t, sqlite3_column_int64(st, 0));
		long at = path_at(&t->paths, capsim_store__text(st, 1));
		if (p && at >= 0 && !p->params[at])
			p->params[at] = capsim_xstrdup(capsim_store__text(st, 2));
	}
	sqlite3_finalize(st);
	return rc < 0 ? -1 : 0;
}

/* column col of t: the values of key t->keys[col] */
static int read_column(capsim_store *s, const capsim_sweepq_request *rq,
		       capsim_sweepq_table *t, size_t col, capsim_diags *d)
{
	sqlite3_stmt *st = points_stmt(s, "SELECT p.point_index, r.num_value, r.text_value, r.unit "
					  "FROM points p JOIN point_results r ON r.point_id = p.id "
					  "AND r.key = ?3 WHERE p.sweep_id = ?1 AND (?2 IS NULL OR "
					  "p.status = ?2)", rq, d);
	if (!st)
		return -1;
	sqlite3_bind_text(st, 3, t->keys[col], -1, SQLITE_STATIC);
	int rc;
	while ((rc = capsim_store__step(s, st, d)) == 1) {
		capsim_sweepq_point *p = point_of(t, sqlite3_column_int64(st, 0));
		if (!p)
			continue;
		capsim_sweepq_cell *c = &p->cells[col];
		if (sqlite3_column_type(st, 2) != SQLITE_NULL) {
			c->kind = CAPSIM_SWEEPQ_TEXT;
			c->text = capsim_xstrdup(capsim_store__text(st, 2));
		} else if (sqlite3_column_type(st, 1) != SQLITE_NULL) {
			c->kind = CAPSIM_SWEEPQ_NUM;
			c->num = sqlite3_column_double(st, 1);
		}
		if (!t->units[col][0] && capsim_store__text(st, 3)[0]) {
			free(t->units[col]);
			t->units[col] = capsim_xstrdup(capsim_store__text(st, 3));
		}
	}
	sqlite3_finalize(st);
	return rc < 0 ? -1 : 0;
}

/* the position of key among t's columns, or -1 */
static long column_of(const capsim_sweepq_table *t, const char *key)
{
	for (size_t i = 0; i < t->n_keys; i++)
		if (strcmp(t->keys[i], key) == 0)
			return (long)i;
	return -1;
}

static void add_column(capsim_sweepq_table *t, const char *key)
{
	t->keys = capsim_xrealloc(t->keys, (t->n_keys + 1) * sizeof *t->keys);
	t->units = capsim_xrealloc(t->units, (t->n_keys + 1) * sizeof *t->units);
	t->keys[t->n_keys] = capsim_xstrdup(key);
	t->units[t->n_keys] = capsim_xstrdup("");
	t->n_keys++;
}

/* The columns: the request's keys, then each filter's result key that is
 * not among them (read to filter by, dropped after) */
static void plan_columns(const capsim_sweepq_request *rq, capsim_sweepq_table *t)
{
	for (size_t i = 0; i < rq->n_keys; i++)
		add_column(t, rq->keys[i]);
	for (size_t i = 0; i < rq->n_filters; i++) {
		const char *k = rq->filters[i].key;
		if (!capsim_sweepq_is_path(&t->paths, k) && column_of(t, k) < 0)
			add_column(t, k);
	}
}

/* every filter of rq holds for p */
static int point_matches(const capsim_sweepq_table *t, const capsim_sweepq_point *p,
			 const capsim_sweepq_request *rq)
{
	for (size_t i = 0; i < rq->n_filters; i++) {
		const capsim_sweepq_filter *f = &rq->filters[i];
		long at = path_at(&t->paths, f->key);
		int ok;
		if (at >= 0)
			ok = p->params[at] && text_matches(p->params[at], f);
		else
			ok = cell_matches(&p->cells[column_of(t, f->key)], f);
		if (!ok)
			return 0;
	}
	return 1;
}

/* drop the points no filter keeps, then the columns read only to filter */
static void apply_filters(const capsim_sweepq_request *rq, capsim_sweepq_table *t)
{
	size_t kept = 0;
	for (size_t i = 0; i < t->n_points; i++) {
		if (point_matches(t, &t->points[i], rq))
			t->points[kept++] = t->points[i];
		else
			point_free(&t->points[i], t->paths.n, t->n_keys);
	}
	t->n_points = kept;
	for (size_t c = rq->n_keys; c < t->n_keys; c++) {
		for (size_t i = 0; i < t->n_points; i++) {
			free(t->points[i].cells[c].text);
			t->points[i].cells[c] = (capsim_sweepq_cell){ 0 };
		}
		free(t->keys[c]);
		free(t->units[c]);
	}
	t->n_keys = rq->n_keys;
}

static int read_all(capsim_store *s, const capsim_sweepq_request *rq, capsim_sweepq_table *t,
		    capsim_diags *d)
{
	if (capsim_sweepq_read_paths(s, rq->sweep_id, &t->paths, d) < 0)
		return -1;
	plan_columns(rq, t);
	if (read_points(s, rq, t, d) < 0 || read_params(s, rq, t, d) < 0)
		return -1;
	for (size_t c = 0; c < t->n_keys; c++)
		if (read_column(s, rq, t, c, d) < 0)
			return -1;
	return 0;
}

int capsim_sweepq_read(capsim_store *s, const capsim_sweepq_request *rq,
		       capsim_sweepq_table *out, capsim_diags *d)
{
	memset(out, 0, sizeof *out);
	out->sweep_id = rq->sweep_id;
	if (results_present(s, d) < 0)
		return -1;
	/* one read transaction: a sweep writing meanwhile is seen whole or not */
	if (capsim_store__exec(s, "BEGIN", d) < 0)
		return -1;
	int rc = read_all(s, rq, out, d);
	if (rc == 0)
		rc = capsim_store__exec(s, "COMMIT", d);
	else
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	if (rc < 0)
		return -1;
	apply_filters(rq, out);
	return 0;
}

/* ---- ranking --------------------------------------------------------------------- */

static int ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), m = strlen(tail);
	return n >= m && strcmp(s + n - m, tail) == 0;
}

static int cost_like(const char *key)
{
	return strstr(key, "cost") || strstr(key, "usd") || strstr(key, "price");
}

capsim_sweepq_dir capsim_sweepq_direction(const char *key)
{
	static const char *const up[] = { "tokens_per_s", "mfu", "scaling_efficiency", "goodput" };
	for (size_t i = 0; i < sizeof up / sizeof up[0]; i++)
		if (strcmp(key, up[i]) == 0)
			return CAPSIM_SWEEPQ_MAX;
	if (!cost_like(key) && (ends_with(key, "_per_s") || ends_with(key, "_efficiency") ||
				ends_with(key, "_goodput")))
		return CAPSIM_SWEEPQ_MAX;
	if (ends_with(key, "_s") || ends_with(key, "_usd") || ends_with(key, "_j") ||
	    strncmp(key, "cost_", 5) == 0 || strstr(key, "_cost_"))
		return CAPSIM_SWEEPQ_MIN;
	return CAPSIM_SWEEPQ_NODIR;
}

/* one point as ranked: its values, each signed so that smaller is better */
typedef struct ranked {
	double k1, k2;
	int64_t index;
	size_t pos;                       /* in the table's points */
} ranked;

static int cmp_ranked(const void *a, const void *b)
{
	const ranked *x = a, *y = b;
	if (x->k1 != y->k1)
		return x->k1 < y->k1 ? -1 : 1;
	if (x->k2 != y->k2)
		return x->k2 < y->k2 ? -1 : 1;
	return (x->index > y->index) - (x->index < y->index);
}

/* The points of t with numbers in columns c1 and c2 (c2 may be c1), signed
 * by their directions, sorted; *n of them (caller frees). */
static ranked *rank(const capsim_sweepq_table *t, size_t c1, capsim_sweepq_dir d1, size_t c2,
		    capsim_sweepq_dir d2, size_t *n)
{
	ranked *v = capsim_xcalloc(t->n_points, sizeof *v);
	*n = 0;
	for (size_t i = 0; i < t->n_points; i++) {
		const capsim_sweepq_cell *a = &t->points[i].cells[c1], *b = &t->points[i].cells[c2];
		if (a->kind != CAPSIM_SWEEPQ_NUM || b->kind != CAPSIM_SWEEPQ_NUM)
			continue;
		v[(*n)++] = (ranked){ d1 == CAPSIM_SWEEPQ_MAX ? -a->num : a->num,
				      d2 == CAPSIM_SWEEPQ_MAX ? -b->num : b->num,
				      t->points[i].index, i };
	}
	qsort(v, *n, sizeof *v, cmp_ranked);
	return v;
}

/* Keep the points v[0..n) of t in that order; free the others. */
static void keep(capsim_sweepq_table *t, const ranked *v, size_t n)
{
	capsim_sweepq_point *kept = capsim_xcalloc(n, sizeof *kept);
	char *moved = capsim_xcalloc(t->n_points, 1); /* 1: the point is in kept */
	for (size_t i = 0; i < n; i++) {
		kept[i] = t->points[v[i].pos];
		moved[v[i].pos] = 1;
	}
	for (size_t i = 0; i < t->n_points; i++)
		if (!moved[i])
			point_free(&t->points[i], t->paths.n, t->n_keys);
	free(moved);
	free(t->points);
	t->points = kept;
	t->n_points = n;
}

size_t capsim_sweepq_best(capsim_sweepq_table *t, size_t col, capsim_sweepq_dir dir, size_t top)
{
	size_t n;
	ranked *v = rank(t, col, dir, col, dir, &n);
	keep(t, v, n < top ? n : top);
	free(v);
	return t->n_points;
}

size_t capsim_sweepq_pareto(capsim_sweepq_table *t, size_t col1, capsim_sweepq_dir dir1,
			    size_t col2, capsim_sweepq_dir dir2)
{
	size_t n, kept = 0;
	ranked *v = rank(t, col1, dir1, col2, dir2, &n);
	/* sorted by k1 then k2: a point is on the front when it is the best k2
	 * of its k1 (or equal to it) and that k2 beats every point of a better
	 * k1 (equal to one of those, that point dominates it) */
	double run_best = INFINITY;
	int any = 0;
	for (size_t i = 0; i < n;) {
		size_t end = i;
		while (end < n && v[end].k1 == v[i].k1)
			end++;
		double group_best = v[i].k2;
		if (!any || group_best < run_best) {
			for (size_t j = i; j < end && v[j].k2 == group_best; j++)
				v[kept++] = v[j];
			run_best = group_best;
			any = 1;
		}
		i = end;
	}
	keep(t, v, kept);
	free(v);
	return t->n_points;
}
