/* results.c - sweep results in the store; see results.h. */
#include "results.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "storeint.h"
#include "xalloc.h"

static int hex64(const char *s)
{
	return s && strlen(s) == 64 && strspn(s, "0123456789abcdefABCDEF") == 64;
}

/* 0 when s is a non-empty string shorter than len, else -1 after a message */
static int check_name(capsim_store *st, const char *what, const char *s, size_t len,
		      capsim_diags *d)
{
	if (s && s[0] && strlen(s) < len)
		return 0;
	capsim_diags_add(d, st->path, 0, "%s: expected 1 to %zu characters, found %s", what, len - 1,
			 !s || !s[0] ? "none" : "a longer one");
	return -1;
}

static int writable(capsim_store *s, capsim_diags *d)
{
	if (s->writable)
		return 0;
	capsim_diags_add(d, s->path, 0, "results: the store was opened read-only");
	return -1;
}

int capsim_results_create_sweep(capsim_store *s, const capsim_sweep_info *info,
				int64_t *sweep_id, capsim_diags *d)
{
	*sweep_id = 0;
	if (writable(s, d) < 0 || check_name(s, "sweep name", info->name, 1024, d) < 0 ||
	    check_name(s, "capsim version", info->capsim_version, CAPSIM_RESULT_VERSION_LEN, d) < 0)
		return -1;
	if (!hex64(info->base_scenario_sha256)) {
		capsim_diags_add(d, s->path, 0, "base scenario digest: expected 64 hex digits (SHA-256), "
				 "found '%s'", info->base_scenario_sha256 ? info->base_scenario_sha256 : "");
		return -1;
	}
	for (size_t i = 0; i < info->n_inputs; i++) {
		const capsim_sweep_input *in = &info->inputs[i];
		if (check_name(s, "input file", in->file, CAPSIM_RESULT_PATH_LEN * 4, d) < 0)
			return -1;
		if (!hex64(in->sha256)) {
			capsim_diags_add(d, s->path, 0, "input %s: digest: expected 64 hex digits "
					 "(SHA-256), found '%s'", in->file, in->sha256 ? in->sha256 : "");
			return -1;
		}
		for (size_t j = 0; j < i; j++)
			if (strcmp(in->file, info->inputs[j].file) == 0) {
				capsim_diags_add(d, s->path, 0, "input %s given twice", in->file);
				return -1;
			}
	}
	char now[32];
	time_t t = time(NULL);
	struct tm tm;
	strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
	if (capsim_store__exec(s, "SAVEPOINT sweep", d) < 0)
		return -1;
	sqlite3_stmt *st = capsim_store__prepare(s, "INSERT INTO sweeps(name, capsim_version, "
						    "created_at, base_scenario_sha256) VALUES(?,?,?,?)", d);
	int rc = -1;
	if (st) {
		sqlite3_bind_text(st, 1, info->name, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, info->capsim_version, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, now, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 4, info->base_scenario_sha256, -1, SQLITE_STATIC);
		rc = capsim_store__step(s, st, d);
		sqlite3_finalize(st);
	}
	int64_t id = rc == 0 ? sqlite3_last_insert_rowid(s->db) : 0;
	for (size_t i = 0; rc == 0 && i < info->n_inputs; i++) {
		st = capsim_store__prepare(s, "INSERT INTO sweep_inputs(sweep_id, file, sha256) "
					      "VALUES(?,?,?)", d);
		if (!st) {
			rc = -1;
			break;
		}
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_text(st, 2, info->inputs[i].file, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, info->inputs[i].sha256, -1, SQLITE_STATIC);
		rc = capsim_store__step(s, st, d);
		sqlite3_finalize(st);
	}
	if (rc != 0) {
		capsim_diags tmp = { 0 };
		capsim_store__exec(s, "ROLLBACK TO sweep; RELEASE sweep", &tmp);
		capsim_diags_free(&tmp);
		return -1;
	}
	if (capsim_store__exec(s, "RELEASE sweep", d) < 0)
		return -1;
	*sweep_id = id;
	return 0;
}

static int cmp_key(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* a result key given twice, named once each, sorted (a point has a hundred
 * keys or so: sorting them costs less than comparing every pair) */
static void twice(capsim_store *s, const capsim_result_point *p, capsim_diags *d)
{
	const char **keys = capsim_xmalloc((p->n_results ? p->n_results : 1) * sizeof *keys);
	size_t n = 0;
	for (size_t i = 0; i < p->n_results; i++)
		if (p->results[i].key)
			keys[n++] = p->results[i].key;
	qsort(keys, n, sizeof *keys, cmp_key);
	for (size_t i = 1; i < n; i++)
		if (!strcmp(keys[i], keys[i - 1]) && (i + 1 == n || strcmp(keys[i], keys[i + 1])))
			capsim_diags_add(d, s->path, 0, "point %lld: result %s given twice",
					 (long long)p->index, keys[i]);
	free(keys);
}

/* everything about p that can be checked before it is written */
static int check_point(capsim_store *s, const capsim_result_point *p, capsim_diags *d)
{
	size_t before = d->n;
	if (p->index < 0)
		capsim_diags_add(d, s->path, 0, "point index: expected >= 0, found %lld",
				 (long long)p->index);
	if (!hex64(p->scenario_sha256))
		capsim_diags_add(d, s->path, 0, "point %lld: scenario digest: expected 64 hex digits "
				 "(SHA-256), found '%s'", (long long)p->index,
				 p->scenario_sha256 ? p->scenario_sha256 : "");
	if (p->failed != (p->error != NULL))
		capsim_diags_add(d, s->path, 0, "point %lld: %s", (long long)p->index, p->failed ?
				 "expected an error message for a failed point, found none" :
				 "expected no error message for a point that is ok, found one");
	check_name(s, "capsim version", p->capsim_version, CAPSIM_RESULT_VERSION_LEN, d);
	for (size_t i = 0; i < p->n_params; i++) {
		check_name(s, "parameter path", p->params[i].path, CAPSIM_RESULT_PATH_LEN, d);
		if (!p->params[i].value)
			capsim_diags_add(d, s->path, 0, "parameter %s: expected a value, found none",
					 p->params[i].path ? p->params[i].path : "");
		for (size_t j = 0; j < i && p->params[i].path; j++)
			if (p->params[j].path && !strcmp(p->params[i].path, p->params[j].path))
				capsim_diags_add(d, s->path, 0, "point %lld: parameter %s given twice",
						 (long long)p->index, p->params[i].path);
	}
	for (size_t i = 0; i < p->n_results; i++) {
		const capsim_result_value *r = &p->results[i];
		check_name(s, "result key", r->key, CAPSIM_RESULT_KEY_LEN, d);
		if (r->unit && strlen(r->unit) >= CAPSIM_RESULT_UNIT_LEN)
			capsim_diags_add(d, s->path, 0, "result %s: unit longer than %d characters",
					 r->key ? r->key : "", CAPSIM_RESULT_UNIT_LEN - 1);
		if (!r->text && !isfinite(r->num))
			capsim_diags_add(d, s->path, 0, "result %s: expected a finite number, found %g",
					 r->key ? r->key : "", r->num);
	}
	twice(s, p, d);
	return d->n == before ? 0 : -1;
}

/* the sweep exists and has no point index yet: 0, or -1 after a message */
static int point_free(capsim_store *s, int64_t sweep_id, int64_t index, capsim_diags *d)
{
	sqlite3_stmt *st = capsim_store__cached(s, "SELECT (SELECT count(*) FROM sweeps WHERE id = ?1),"
						   " (SELECT count(*) FROM points WHERE sweep_id = ?1"
						   " AND point_index = ?2)", d);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, sweep_id);
	sqlite3_bind_int64(st, 2, index);
	int rc = capsim_store__step(s, st, d);
	if (rc == 1 && sqlite3_column_int64(st, 0) == 0) {
		capsim_diags_add(d, s->path, 0, "sweep %lld: not in the database", (long long)sweep_id);
		rc = -1;
	} else if (rc == 1 && sqlite3_column_int64(st, 1) != 0) {
		capsim_diags_add(d, s->path, 0, "sweep %lld: point %lld is written already",
				 (long long)sweep_id, (long long)index);
		rc = -1;
	}
	sqlite3_reset(st);
	return rc == 1 ? 0 : -1;
}

static int insert_point(capsim_store *s, int64_t sweep_id, const capsim_result_point *p,
			int64_t *id, capsim_diags *d)
{
	sqlite3_stmt *st = capsim_store__cached(s, "INSERT INTO points(sweep_id, point_index, "
						   "scenario_sha256, status, error, capsim_version)"
						   " VALUES(?,?,?,?,?,?)", d);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, sweep_id);
	sqlite3_bind_int64(st, 2, p->index);
	sqlite3_bind_text(st, 3, p->scenario_sha256, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, p->failed ? "failed" : "ok", -1, SQLITE_STATIC);
	if (p->error)
		sqlite3_bind_text(st, 5, p->error, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 6, p->capsim_version, -1, SQLITE_STATIC);
	int rc = capsim_store__step(s, st, d);
	/* an INSERT gives no row, and writes exactly one */
	CAPSIM_ASSERT(rc != 1 && (rc < 0 || sqlite3_changes(s->db) == 1));
	sqlite3_reset(st);
	*id = sqlite3_last_insert_rowid(s->db);
	return rc == 0 ? 0 : -1;
}

static int insert_params(capsim_store *s, int64_t id, const capsim_result_point *p,
			 capsim_diags *d)
{
	sqlite3_stmt *st = capsim_store__cached(s, "INSERT INTO point_params VALUES(?,?,?)", d);
	int rc = st ? 0 : -1;
	for (size_t i = 0; rc == 0 && i < p->n_params; i++) {
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_text(st, 2, p->params[i].path, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, p->params[i].value, -1, SQLITE_STATIC);
		rc = capsim_store__step(s, st, d) == 0 ? 0 : -1;
		CAPSIM_ASSERT(rc < 0 || sqlite3_changes(s->db) == 1);
	}
	if (st)
		sqlite3_reset(st);
	return rc;
}

static int insert_results(capsim_store *s, int64_t id, const capsim_result_point *p,
			  capsim_diags *d)
{
	sqlite3_stmt *st = capsim_store__cached(s, "INSERT INTO point_results VALUES(?,?,?,?,?)", d);
	int rc = st ? 0 : -1;
	for (size_t i = 0; rc == 0 && i < p->n_results; i++) {
		const capsim_result_value *r = &p->results[i];
		sqlite3_reset(st);
		sqlite3_clear_bindings(st);
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_text(st, 2, r->key, -1, SQLITE_STATIC);
		if (r->text)
			sqlite3_bind_text(st, 4, r->text, -1, SQLITE_STATIC);
		else
			sqlite3_bind_double(st, 3, r->num);
		sqlite3_bind_text(st, 5, r->unit ? r->unit : "", -1, SQLITE_STATIC);
		rc = capsim_store__step(s, st, d) == 0 ? 0 : -1;
		CAPSIM_ASSERT(rc < 0 || sqlite3_changes(s->db) == 1);
	}
	if (st)
		sqlite3_reset(st);
	return rc;
}

/* a cached statement that gives no row, run once: 0 or -1 */
static int run_cached(capsim_store *s, const char *sql, capsim_diags *d)
{
	sqlite3_stmt *st = capsim_store__cached(s, sql, d);
	int rc = st ? capsim_store__step(s, st, d) : -1;
	if (st)
		sqlite3_reset(st);
	return rc == 0 ? 0 : -1;
}

int capsim_results_write_point(capsim_store *s, int64_t sweep_id,
			       const capsim_result_point *p, int64_t *point_id,
			       capsim_diags *d)
{
	if (point_id)
		*point_id = 0;
	if (writable(s, d) < 0 || check_point(s, p, d) < 0)
		return -1;
	/* the point, its parameters and its results: all or nothing */
	if (run_cached(s, "SAVEPOINT point", d) < 0)
		return -1;
	int64_t id = 0;
	int rc = point_free(s, sweep_id, p->index, d);
	if (rc == 0)
		rc = insert_point(s, sweep_id, p, &id, d);
	if (rc == 0)
		rc = insert_params(s, id, p, d);
	if (rc == 0)
		rc = insert_results(s, id, p, d);
	if (rc == 0)
		rc = run_cached(s, "RELEASE point", d);
	if (rc < 0) {
		sqlite3_exec(s->db, "ROLLBACK TO point; RELEASE point", NULL, NULL, NULL);
		return -1;
	}
	if (point_id)
		*point_id = id;
	return 0;
}

/* ---- reading back ------------------------------------------------------------ */

static int read_head(capsim_store *s, int64_t sweep_id, int64_t index, capsim_point_record *out,
		     capsim_diags *d)
{
	sqlite3_stmt *st = capsim_store__prepare(s, "SELECT id, scenario_sha256, status, error, "
						    "capsim_version FROM points WHERE sweep_id = ? AND "
						    "point_index = ?", d);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, sweep_id);
	sqlite3_bind_int64(st, 2, index);
	int rc = capsim_store__step(s, st, d);
	if (rc == 0)
		capsim_diags_add(d, s->path, 0, "sweep %lld: no point %lld", (long long)sweep_id,
				 (long long)index);
	if (rc == 1) {
		out->id = sqlite3_column_int64(st, 0);
		out->sweep_id = sweep_id;
		out->index = index;
		capsim_strlcpy(out->scenario_sha256, capsim_store__text(st, 1),
			       sizeof out->scenario_sha256);
		out->failed = strcmp(capsim_store__text(st, 2), "ok") != 0;
		if (sqlite3_column_type(st, 3) != SQLITE_NULL)
			out->error = capsim_xstrdup(capsim_store__text(st, 3));
		capsim_strlcpy(out->capsim_version, capsim_store__text(st, 4),
			       sizeof out->capsim_version);
	}
	sqlite3_finalize(st);
	return rc == 1 ? 0 : -1;
}

static int read_params(capsim_store *s, capsim_point_record *out, capsim_diags *d)
{
	sqlite3_stmt *st = capsim_store__prepare(s, "SELECT path, value FROM point_params WHERE "
						    "point_id = ? ORDER BY path", d);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, out->id);
	int rc;
	while ((rc = capsim_store__step(s, st, d)) == 1) {
		out->params = capsim_xrealloc(out->params, (out->n_params + 1) * sizeof *out->params);
		capsim_point_param *p = &out->params[out->n_params++];
		capsim_strlcpy(p->path, capsim_store__text(st, 0), sizeof p->path);
		p->value = capsim_xstrdup(capsim_store__text(st, 1));
	}
	sqlite3_finalize(st);
	return rc;
}

static int read_values(capsim_store *s, capsim_point_record *out, capsim_diags *d)
{
	sqlite3_stmt *st = capsim_store__prepare(s, "SELECT key, num_value, text_value, unit FROM "
						    "point_results WHERE point_id = ? ORDER BY key", d);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, out->id);
	int rc;
	while ((rc = capsim_store__step(s, st, d)) == 1) {
		out->results = capsim_xrealloc(out->results,
					       (out->n_results + 1) * sizeof *out->results);
		capsim_point_value *v = &out->results[out->n_results++];
		memset(v, 0, sizeof *v);
		capsim_strlcpy(v->key, capsim_store__text(st, 0), sizeof v->key);
		v->is_text = sqlite3_column_type(st, 2) != SQLITE_NULL;
		if (v->is_text)
			v->text = capsim_xstrdup(capsim_store__text(st, 2));
		else
			v->num = sqlite3_column_double(st, 1);
		capsim_strlcpy(v->unit, capsim_store__text(st, 3), sizeof v->unit);
	}
	sqlite3_finalize(st);
	return rc;
}

int capsim_results_read_point(capsim_store *s, int64_t sweep_id, int64_t index,
			      capsim_point_record *out, capsim_diags *d)
{
	memset(out, 0, sizeof *out);
	int t = capsim_store__has_table(s, "points", d);
	if (t == 0)
		capsim_diags_add(d, s->path, 0, "no sweep results: the store's schema version is %d, "
				 "results came with version 4", s->version);
	if (t <= 0)
		return -1;
	int rc = read_head(s, sweep_id, index, out, d);
	if (rc == 0)
		rc = read_params(s, out, d);
	if (rc == 0)
		rc = read_values(s, out, d);
	return rc;
}

void capsim_point_record_free(capsim_point_record *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_params; i++)
		free(r->params[i].value);
	for (size_t i = 0; i < r->n_results; i++)
		free(r->results[i].text);
	free(r->params);
	free(r->results);
	free(r->error);
	memset(r, 0, sizeof *r);
}

int capsim_results_read_inputs(capsim_store *s, int64_t sweep_id, capsim_sweep_input_record **out,
			       size_t *n, capsim_diags *d)
{
	*out = NULL;
	*n = 0;
	int t = capsim_store__has_table(s, "sweep_inputs", d);
	if (t == 0)
		capsim_diags_add(d, s->path, 0, "no sweep results: the store's schema version is %d, "
				 "results came with version 4", s->version);
	if (t <= 0)
		return -1;
	sqlite3_stmt *st = capsim_store__prepare(s, "SELECT file, sha256 FROM sweep_inputs WHERE "
						    "sweep_id = ? ORDER BY rowid", d);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, sweep_id);
	int rc;
	while ((rc = capsim_store__step(s, st, d)) == 1) {
		*out = capsim_xrealloc(*out, (*n + 1) * sizeof **out);
		capsim_sweep_input_record *r = &(*out)[(*n)++];
		r->file = capsim_xstrdup(capsim_store__text(st, 0));
		capsim_strlcpy(r->sha256, capsim_store__text(st, 1), sizeof r->sha256);
	}
	sqlite3_finalize(st);
	if (rc < 0) {
		capsim_sweep_inputs_free(*out, *n);
		*out = NULL;
		*n = 0;
		return -1;
	}
	return 0;
}

void capsim_sweep_inputs_free(capsim_sweep_input_record *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i].file);
	free(v);
}

/* ---- a sweep's writer ---------------------------------------------------------- */

int capsim_results_wal(capsim_store *s, capsim_diags *d)
{
	if (writable(s, d) < 0)
		return -1;
	sqlite3_stmt *st = capsim_store__prepare(s, "PRAGMA journal_mode=WAL", d);
	if (!st)
		return -1;
	int rc = capsim_store__step(s, st, d);
	const char *mode = rc == 1 ? capsim_store__text(st, 0) : "";
	if (rc == 1 && strcmp(mode, "wal") != 0) {
		capsim_diags_add_runtime(d, s->path, "cannot use write-ahead logging (the journal "
					 "mode stays '%s')", mode);
		rc = -1;
	}
	sqlite3_finalize(st);
	/* a commit need not wait for the disk twice: WAL with synchronous=NORMAL
	 * loses at most the last commits on power loss, never consistency */
	if (rc == 1 && capsim_store__exec(s, "PRAGMA synchronous=NORMAL", d) < 0)
		rc = -1;
	return rc < 0 ? -1 : 0;
}

int capsim_results_unwal(capsim_store *s)
{
	if (!s->writable)
		return -1;
	/* no waiting: a reader that has the store open keeps it in WAL mode */
	sqlite3_busy_handler(s->db, NULL, NULL);
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(s->db, "PRAGMA journal_mode=DELETE", -1, &st, NULL);
	int done = rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW &&
		   strcmp(capsim_store__text(st, 0), "delete") == 0;
	sqlite3_finalize(st);
	sqlite3_busy_handler(s->db, capsim_store__wait_for_lock, s);
	return done ? 0 : -1;
}

int capsim_results_begin(capsim_store *s, capsim_diags *d)
{
	if (writable(s, d) < 0)
		return -1;
	return capsim_store__exec(s, "BEGIN IMMEDIATE", d);
}

int capsim_results_commit(capsim_store *s, capsim_diags *d)
{
	if (capsim_store__exec(s, "COMMIT", d) == 0)
		return 0;
	sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return -1;
}

int capsim_results_find_sweep(capsim_store *s, const char *name, int64_t *sweep_id,
			      capsim_diags *d)
{
	*sweep_id = 0;
	int t = capsim_store__has_table(s, "sweeps", d);
	if (t <= 0)
		return t;
	sqlite3_stmt *st = capsim_store__prepare(s, "SELECT id FROM sweeps WHERE name = ? "
						    "ORDER BY id DESC LIMIT 1", d);
	if (!st)
		return -1;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	int rc = capsim_store__step(s, st, d);
	if (rc == 1)
		*sweep_id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc;
}

int capsim_results_indices(capsim_store *s, int64_t sweep_id, int64_t **out, size_t *n,
			   capsim_diags *d)
{
	*out = NULL;
	*n = 0;
	sqlite3_stmt *st = capsim_store__prepare(s, "SELECT point_index FROM points WHERE "
						    "sweep_id = ? ORDER BY point_index", d);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, sweep_id);
	size_t cap = 0;
	int rc;
	while ((rc = capsim_store__step(s, st, d)) == 1) {
		if (*n == cap) {
			cap = cap ? 2 * cap : 1024;
			*out = capsim_xrealloc(*out, cap * sizeof **out);
		}
		(*out)[(*n)++] = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	if (rc < 0) {
		free(*out);
		*out = NULL;
		*n = 0;
		return -1;
	}
	return 0;
}
