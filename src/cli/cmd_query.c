/* cmd_query.c - `capsim query`: the points of a sweep read back from the
 * results store (src/store/sweepq.h): listed, filtered, ranked by a metric
 * or cut to the Pareto front of two; as a table, CSV or JSON. See
 * docs/user-guide.md ("Reading sweep results: capsim query"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "escape.h"
#include "eval.h"
#include "outfile.h"
#include "results.h"
#include "store.h"
#include "sweepq.h"
#include "table.h"
#include "xalloc.h"

#define QUERY_TOP_DEFAULT 10      /* --best without --top */
#define QUERY_TOP_DEFAULT_S "10"
#define QUERY_TOP_MAX 100000000

enum { O_DB, O_LIST, O_SWEEP, O_WHERE, O_BEST, O_TOP, O_MAX, O_MIN, O_PARETO, O_COLUMNS,
       O_FAILED, O_CSV, O_JSON, O_HELP };
static const capsim_cli_opt query_opts[] = {
	[O_DB] = { "db", 0, "FILE", "the results store (opened read-only)" },
	[O_LIST] = { "list", 0, NULL, "the sweeps in the store: id, name, date, version, points" },
	[O_SWEEP] = { "sweep", 0, "ID|NAME",
		      "the sweep of that id, else of that name (the latest of\n"
		      "that name); default: the latest sweep" },
	[O_WHERE] = { "where", 0, "FILTER",
		      "only points where KEY OP VALUE holds; KEY a result key or\n"
		      "a parameter path, OP one of = != < <= > >=; repeatable (all\n"
		      "must hold). Numbers compare as numbers, else as text" },
	[O_BEST] = { "best", 0, "KEY",
		     "the best points by KEY, best first, ties by index:\n"
		     "throughputs and efficiencies largest, times, money and\n"
		     "energy smallest" },
	[O_TOP] = { "top", 0, "N", "how many --best gives (default " QUERY_TOP_DEFAULT_S ")" },
	[O_MAX] = { "max", 0, NULL, "--best: the largest KEY is best" },
	[O_MIN] = { "min", 0, NULL, "--best: the smallest KEY is best" },
	[O_PARETO] = { "pareto", 0, "K1,K2",
		       "the points no other point beats on both keys, by K1;\n"
		       "K:max or K:min gives a key's direction" },
	[O_COLUMNS] = { "columns", 0, "LIST",
			"the result keys to show (default: step_time_s,\n"
			"tokens_per_s, mfu, time_to_train_s; none with --failed)" },
	[O_FAILED] = { "failed", 0, NULL, "only the failed points, with their errors" },
	[O_CSV] = { "csv", 0, "FILE",
		    "also write CSV to FILE, whole or not at all; - : CSV on\n"
		    "standard output instead of the table" },
	[O_JSON] = { "json", 0, NULL, "one JSON object instead of the table" },
	[O_HELP] = { "help", 0, NULL, "this text" },
};
const capsim_cli_cmd capsim_cli_query_cmd = {
	.name = "query",
	.usage = "usage: capsim query --db FILE [--sweep ID|NAME] [--where 'KEY OP VALUE']...\n"
		 "                    [--best KEY [--top N] [--max|--min] | --pareto KEY1,KEY2]\n"
		 "                    [--columns KEY,...] [--failed] [--csv FILE|-] [--json]\n"
		 "       capsim query --db FILE --list [--csv FILE|-] [--json]\n",
	.about = "Reads the points of a sweep (capsim sweep) back from its results store: each\n"
		 "point's index, its parameters and the result keys asked for.\n",
	.opts = query_opts,
	.n_opts = CAPSIM_CLI_N(query_opts),
	.after = "Exit status: 0 done (also when no point matches); 1 the store could not be\n"
		 "read (locked, corrupt, not an SQLite file) or the CSV not written; 2 bad\n"
		 "usage, an unknown key, a missing file or one without sweeps.\n",
};

/* ---- arguments ---------------------------------------------------------------- */

typedef struct query_args {
	const char *db, *sweep, *best, *pareto, *csv;
	const char **where;               /* [n_where], into argv; the array owned */
	size_t n_where;
	const char **columns;             /* [n_columns] --columns lists, into argv */
	size_t n_columns;
	int list, failed, json;
	int top;                          /* 0: not given */
	int dir;                          /* --max 1, --min -1, neither 0 */
} query_args;

static void args_free(query_args *a)
{
	free(a->where);
	free(a->columns);
}

static void push_arg(const char ***v, size_t *n, const char *s)
{
	*v = capsim_xrealloc(*v, (*n + 1) * sizeof **v);
	(*v)[(*n)++] = s;
}

/* a combination of options that cannot go together: its reason, or NULL */
static const char *conflict(const query_args *a)
{
	if (a->list && (a->sweep || a->n_where || a->best || a->pareto || a->n_columns ||
			a->failed || a->top || a->dir))
		return "--list takes only --db, --csv and --json";
	if (a->best && a->pareto)
		return "give --best or --pareto, not both";
	if ((a->top || a->dir) && !a->best)
		return "--top, --max and --min go with --best";
	if (a->failed && (a->best || a->pareto))
		return "--failed lists the failed points; they have no metrics to rank";
	if (a->csv && strcmp(a->csv, "-") == 0 && a->json)
		return "--csv - and --json would both write standard output";
	return NULL;
}

/* 0, CAPSIM_EXIT_OK after --help (*done set), or CAPSIM_EXIT_USAGE */
static int parse_args(int argc, char **argv, query_args *a, int *done)
{
	optind = 1;
	int c, max = 0, min = 0;
	while ((c = capsim_cli_next(&capsim_cli_query_cmd, argc, argv)) != -1) {
		switch (c) {
		case O_DB: a->db = optarg; break;
		case O_SWEEP: a->sweep = optarg; break;
		case O_LIST: a->list = 1; break;
		case O_WHERE: push_arg(&a->where, &a->n_where, optarg); break;
		case O_BEST: a->best = optarg; break;
		case O_MAX: max = 1; break;
		case O_MIN: min = 1; break;
		case O_PARETO: a->pareto = optarg; break;
		case O_COLUMNS: push_arg(&a->columns, &a->n_columns, optarg); break;
		case O_FAILED: a->failed = 1; break;
		case O_CSV: a->csv = optarg; break;
		case O_JSON: a->json = 1; break;
		case O_TOP:
			a->top = capsim_cli_count(optarg, QUERY_TOP_MAX);
			if (a->top < 0) {
				fprintf(stderr, "capsim query: --top: expected a count from 1 to "
					"%d, found '%s'\n", QUERY_TOP_MAX, optarg);
				return CAPSIM_EXIT_USAGE;
			}
			break;
		case O_HELP:
			capsim_cli_help(&capsim_cli_query_cmd, stdout);
			*done = 1;
			return CAPSIM_EXIT_OK;
		default: return CAPSIM_EXIT_USAGE;
		}
	}
	a->dir = max - min;
	const char *why = !a->db ? "--db is required" : optind < argc ? "unexpected argument" :
			  max && min ? "give --max or --min, not both" : conflict(a);
	if (why) {
		fprintf(stderr, "capsim query: %s%s%s\n", why, optind < argc ? " " : "",
			optind < argc ? argv[optind] : "");
		return CAPSIM_EXIT_USAGE;
	}
	return 0;
}

/* ---- the plan: which keys, which way ------------------------------------------ */

/* a list of names, each once; owned */
typedef struct name_list {
	char **v;
	size_t n;
} name_list;

/* add s unless there; its position */
static size_t names_add(name_list *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i], s) == 0)
			return i;
	l->v = capsim_xrealloc(l->v, (l->n + 1) * sizeof *l->v);
	l->v[l->n] = capsim_xstrdup(s);
	return l->n++;
}

static void names_free(name_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof *l);
}

/* one metric to rank by */
typedef struct metric {
	char key[CAPSIM_RESULT_PATH_LEN];
	capsim_sweepq_dir dir;
	size_t col;                       /* its column among the plan's keys */
} metric;

/* What a query reads and how it orders what it read. */
typedef struct query_plan {
	capsim_store *db;
	capsim_sweepq_sweep sweep;
	capsim_sweepq_paths paths;        /* the sweep's parameter paths */
	const char **known;               /* the result table's stored keys (not owned) */
	size_t n_known;
	name_list keys;                   /* the columns read: the metrics first */
	metric m[2];
	size_t n_metrics;
	capsim_sweepq_filter *filters;
	size_t n_filters;
} query_plan;

static void plan_free(query_plan *p)
{
	capsim_sweepq_sweep_free(&p->sweep);
	capsim_sweepq_paths_free(&p->paths);
	free(p->known);
	names_free(&p->keys);
	for (size_t i = 0; i < p->n_filters; i++)
		capsim_sweepq_filter_free(&p->filters[i]);
	free(p->filters);
}

/* the keys of the result table that a sweep stores (all but JSON ones, a
 * banded key's ends too) */
static void known_keys(query_plan *p)
{
	p->known = capsim_xcalloc(capsim_result_n_values, sizeof *p->known);
	for (size_t i = 0; i < capsim_result_n_keys; i++) {
		const capsim_result_key *k = &capsim_result_keys[i];
		if (k->kind == CAPSIM_RK_JSON)
			continue;
		p->known[p->n_known++] = k->key;
		for (int e = 0; k->band != CAPSIM_BAND_NONE && e < 2 * CAPSIM_ERR__LEVELS; e++)
			p->known[p->n_known++] = k->ends[e];
	}
}

/* what name is (CAPSIM_SWEEPQ_RESULT or _PARAM), or -1 after why not */
static int name_kind(query_plan *p, const char *name, const char *where, capsim_diags *d)
{
	const capsim_result_key *k = capsim_result_key_find(name);
	if (k && k->kind == CAPSIM_RK_JSON && !capsim_sweepq_is_path(&p->paths, name)) {
		capsim_diags_add_at(d, where, "'%s' is a structured result (JSON only): a sweep "
				    "does not store it", name);
		return -1;
	}
	return capsim_sweepq_resolve(p->db, p->sweep.id, name, p->known, p->n_known, &p->paths,
				     where, d);
}

/* a metric: a result key holding numbers, in direction dir (0: its own) */
static int add_metric(query_plan *p, const char *key, int dir, const char *opt, capsim_diags *d)
{
	char *where = capsim_xasprintf("%s %s", opt, key);
	int kind = name_kind(p, key, where, d), rc = -1;
	const capsim_result_key *k = capsim_result_key_find(key);
	metric *m = &p->m[p->n_metrics];
	if (kind == CAPSIM_SWEEPQ_PARAM)
		capsim_diags_add_at(d, where, "'%s' is a parameter; rank by a result key", key);
	else if (kind == CAPSIM_SWEEPQ_RESULT && k && k->kind == CAPSIM_RK_TEXT)
		capsim_diags_add_at(d, where, "'%s' is a text; rank by a result key that is a "
				    "number", key);
	else if (kind == CAPSIM_SWEEPQ_RESULT && capsim_strlcpy(m->key, key, sizeof m->key) == 0) {
		m->dir = dir > 0 ? CAPSIM_SWEEPQ_MAX : dir < 0 ? CAPSIM_SWEEPQ_MIN :
			 capsim_sweepq_direction(key);
		if (m->dir == CAPSIM_SWEEPQ_NODIR) {
			capsim_diags_add_at(d, where, "'%s' is not better larger or smaller by its "
					    "name; give %s", key, strcmp(opt, "--best") == 0 ?
					    "--max or --min" : "KEY:max or KEY:min");
		} else {
			m->col = names_add(&p->keys, key);
			p->n_metrics++;
			rc = 0;
		}
	}
	free(where);
	return rc;
}

/* --pareto K1,K2 (each K, K:max or K:min) */
static int add_pareto(query_plan *p, const char *arg, capsim_diags *d)
{
	char *copy = capsim_xstrdup(arg), *save = NULL;
	int rc = 0, n = 0;
	for (char *item = strtok_r(copy, ",", &save); item && rc == 0;
	     item = strtok_r(NULL, ",", &save)) {
		int dir = 0;
		char *colon = strrchr(item, ':');
		if (colon && (strcmp(colon, ":max") == 0 || strcmp(colon, ":min") == 0)) {
			dir = colon[2] == 'a' ? 1 : -1;
			*colon = '\0';
		}
		if (++n > 2 || !item[0])
			break;
		rc = add_metric(p, item, dir, "--pareto", d);
	}
	if (rc == 0 && (n != 2 || p->n_metrics != 2)) {
		capsim_diags_add_at(d, "--pareto", "expected two result keys KEY1,KEY2 (each may "
				    "end :max or :min), found '%s'", arg);
		rc = -1;
	}
	free(copy);
	return rc;
}

/* the keys of every --columns list (parameters are always shown) */
static int add_columns(query_plan *p, const query_args *a, capsim_diags *d)
{
	static const char *const defaults[] = { "step_time_s", "tokens_per_s", "mfu",
						"time_to_train_s" };
	if (!a->n_columns) {
		for (size_t i = 0; !a->failed && i < sizeof defaults / sizeof defaults[0]; i++)
			names_add(&p->keys, defaults[i]);
		return 0;
	}
	int rc = 0;
	for (size_t i = 0; i < a->n_columns; i++) {
		char *copy = capsim_xstrdup(a->columns[i]), *save = NULL;
		for (char *k = strtok_r(copy, ",", &save); k; k = strtok_r(NULL, ",", &save)) {
			char *where = capsim_xasprintf("--columns %s", k);
			int kind = name_kind(p, k, where, d);
			free(where);
			if (kind < 0)
				rc = -1;
			else if (kind == CAPSIM_SWEEPQ_RESULT)
				names_add(&p->keys, k);
		}
		free(copy);
	}
	return rc;
}

/* a filter's VALUE against its key's type: a boolean key takes true and
 * false as 1 and 0; a number key a number */
static int check_value(capsim_sweepq_filter *f, const char *where, capsim_diags *d)
{
	const capsim_result_key *k = capsim_result_key_find(f->key);
	if (!k || k->kind == CAPSIM_RK_TEXT || f->is_num)
		return 0;
	int word = !strcmp(f->value, "true") || !strcmp(f->value, "false");
	if (k->kind == CAPSIM_RK_BOOL && word) {
		f->is_num = 1;
		f->num = f->value[0] == 't';
		return 0;
	}
	capsim_diags_add_at(d, where, "'%s' is a number%s; found '%s'", f->key,
			    k->kind == CAPSIM_RK_BOOL ? " (true, false, 1 or 0)" : "", f->value);
	return -1;
}

static int add_filters(query_plan *p, const query_args *a, capsim_diags *d)
{
	p->filters = capsim_xcalloc(a->n_where, sizeof *p->filters);
	int rc = 0;
	for (size_t i = 0; i < a->n_where; i++) {
		capsim_sweepq_filter *f = &p->filters[p->n_filters];
		if (capsim_sweepq_filter_parse(a->where[i], f, d) < 0) {
			rc = -1;
			continue;
		}
		p->n_filters++;
		char *where = capsim_xasprintf("--where '%s'", a->where[i]);
		int kind = name_kind(p, f->key, where, d);
		if (kind < 0 || (kind == CAPSIM_SWEEPQ_RESULT && check_value(f, where, d) < 0))
			rc = -1;
		free(where);
	}
	return rc;
}

/* Find the sweep and every key the options name. 0, or -1 after d. */
static int plan_build(capsim_store *db, const query_args *a, query_plan *p, capsim_diags *d)
{
	memset(p, 0, sizeof *p);
	p->db = db;
	known_keys(p);
	if (capsim_sweepq_find(db, a->sweep, &p->sweep, d) < 0 ||
	    capsim_sweepq_read_paths(db, p->sweep.id, &p->paths, d) < 0)
		return -1;
	int rc = 0;
	if (a->best && add_metric(p, a->best, a->dir, "--best", d) < 0)
		rc = -1;
	if (a->pareto && add_pareto(p, a->pareto, d) < 0)
		rc = -1;
	if (add_columns(p, a, d) < 0)
		rc = -1;
	if (add_filters(p, a, d) < 0)
		rc = -1;
	return rc;
}

/* ---- the table of points -------------------------------------------------------- */

/* the result table's kind of key; REAL for a key it lacks */
static capsim_rkind kind_of(const char *key)
{
	const capsim_result_key *k = capsim_result_key_find(key);
	return k ? k->kind : CAPSIM_RK_REAL;
}

/* a result key's column: its numbers as the result table has them (6
 * digits in the text table, exact in CSV), a text key's cells left */
static capsim_table_col key_col(const char *key)
{
	capsim_rkind k = kind_of(key);
	capsim_table_col c = { .name = key, .precision = 6,
			       .flags = CAPSIM_TABLE_CSV_NUMBERS_BARE };
	c.kind = k == CAPSIM_RK_BOOL ? CAPSIM_TABLE_BOOL :
		 k == CAPSIM_RK_INT || k == CAPSIM_RK_LONG ? CAPSIM_TABLE_INT :
		 k == CAPSIM_RK_TEXT ? CAPSIM_TABLE_TEXT : CAPSIM_TABLE_REAL;
	c.align = k == CAPSIM_RK_TEXT ? CAPSIM_TABLE_LEFT : CAPSIM_TABLE_RIGHT;
	return c;
}

/* the points' columns: the index ("point" in the text table), the status
 * (CSV only), each parameter (texts, left), each key and, with failed, the
 * error; names borrowed from t */
#define POINT_PARAMS 2 /* the first parameter's column */
static capsim_table_col *point_cols(const capsim_sweepq_table *t, int failed, size_t *n)
{
	size_t np = t->paths.n;
	*n = POINT_PARAMS + np + t->n_keys + (failed ? 1 : 0);
	capsim_table_col *cols = capsim_xcalloc(*n, sizeof *cols);
	cols[0] = (capsim_table_col){ .name = "point_index", .label = "point",
				      .kind = CAPSIM_TABLE_INT,
				      .flags = CAPSIM_TABLE_CSV_BARE_NAME };
	cols[1] = (capsim_table_col){ .name = "status", .kind = CAPSIM_TABLE_TEXT,
				      .flags = CAPSIM_TABLE_NO_TEXT | CAPSIM_TABLE_CSV_BARE_NAME |
					       CAPSIM_TABLE_CSV_BARE };
	for (size_t j = 0; j < np; j++)
		cols[POINT_PARAMS + j] = (capsim_table_col){
			.name = t->paths.v[j], .kind = CAPSIM_TABLE_TEXT,
			.align = CAPSIM_TABLE_LEFT, .flags = CAPSIM_TABLE_CSV_NUMBERS_BARE };
	for (size_t k = 0; k < t->n_keys; k++)
		cols[POINT_PARAMS + np + k] = key_col(t->keys[k]);
	if (failed)
		cols[*n - 1] = (capsim_table_col){ .name = "error", .kind = CAPSIM_TABLE_TEXT,
						   .align = CAPSIM_TABLE_LEFT,
						   .flags = CAPSIM_TABLE_CSV_BARE_NAME };
	return cols;
}

/* The points as one table (table.h), which the text table, the CSV and
 * the JSON are all written from. Names and texts are the store's, kept
 * whole: each writer makes them visible or quotes them, so that a control
 * character, an escape sequence or a bidirectional override in a name
 * cannot rewrite what a terminal shows, nor be a formula or a second
 * record in CSV. */
static void points_table(const capsim_sweepq_table *t, int failed, capsim_table *out)
{
	size_t n, np = t->paths.n;
	capsim_table_col *cols = point_cols(t, failed, &n);
	capsim_table_init(out, cols, n);
	free(cols);
	for (size_t i = 0; i < t->n_points; i++) {
		const capsim_sweepq_point *pt = &t->points[i];
		size_t r = capsim_table_add_row(out);
		capsim_table_set_num(out, r, 0, (double)pt->index);
		capsim_table_set_text(out, r, 1, pt->failed ? "failed" : "ok");
		for (size_t j = 0; j < np; j++)
			capsim_table_set_text(out, r, POINT_PARAMS + j, pt->params[j]);
		for (size_t k = 0; k < t->n_keys; k++) {
			const capsim_sweepq_cell *c = &pt->cells[k];
			if (c->kind == CAPSIM_SWEEPQ_NUM)
				capsim_table_set_num(out, r, POINT_PARAMS + np + k, c->num);
			else if (c->kind == CAPSIM_SWEEPQ_TEXT)
				capsim_table_set_text(out, r, POINT_PARAMS + np + k, c->text);
		}
		if (failed)
			capsim_table_set_text(out, r, n - 1, pt->error);
	}
}

static const char *dir_word(capsim_sweepq_dir dir)
{
	return dir == CAPSIM_SWEEPQ_MAX ? "max" : "min";
}

/* what was read, in words, above the table */
static void print_head(const query_plan *p, const query_args *a, const capsim_sweepq_table *t,
		       const capsim_table *pts, size_t n_match, FILE *out)
{
	const capsim_sweepq_sweep *w = &p->sweep;
	fprintf(out, "sweep %lld '", (long long)w->id);
	capsim_term_text(out, w->name);
	fputs("': created ", out);
	capsim_term_text(out, w->created_at);
	fputs(", capsim ", out);
	capsim_term_text(out, w->capsim_version);
	fprintf(out, "; %lld ok, %lld failed\n", (long long)w->n_ok, (long long)w->n_failed);
	/* "24 points matching the filters (of 39)", or "39 points" */
	char of[128];
	const char *what = a->failed ? (n_match == 1 ? "failed point" : "failed points") :
				       n_match == 1 ? "point" : "points";
	if (p->n_filters)
		snprintf(of, sizeof of, "%zu %s matching the filters (of %zu)", n_match, what,
			 t->n_read);
	else
		snprintf(of, sizeof of, "%zu %s", n_match, what);
	if (a->best)
		fprintf(out, "best %zu by %s (%s) of %s\n", t->n_points, p->m[0].key,
			dir_word(p->m[0].dir), of);
	else if (a->pareto)
		fprintf(out, "Pareto front of %s (%s) and %s (%s): %zu of %s\n", p->m[0].key,
			dir_word(p->m[0].dir), p->m[1].key, dir_word(p->m[1].dir), t->n_points,
			of);
	else
		fprintf(out, "%s\n", of);
	if (t->n_points)
		capsim_table_write_text(pts, out);
}

/* ---- the list of sweeps --------------------------------------------------------- */

/* the sweeps' columns: CSV and JSON in the store's order; the text table
 * shows the version last and a name cut to LIST_NAME_MAX columns */
#define LIST_NAME_MAX 64
static const capsim_table_col list_cols[] = {
	{ .name = "id", .kind = CAPSIM_TABLE_INT, .width = 6,
	  .flags = CAPSIM_TABLE_CSV_BARE_NAME },
	{ .name = "name", .kind = CAPSIM_TABLE_TEXT, .align = CAPSIM_TABLE_LEFT,
	  .max_width = LIST_NAME_MAX, .flags = CAPSIM_TABLE_CSV_BARE_NAME },
	{ .name = "created_at", .label = "created", .kind = CAPSIM_TABLE_TEXT,
	  .align = CAPSIM_TABLE_LEFT, .width = 20, .flags = CAPSIM_TABLE_CSV_BARE_NAME },
	{ .name = "capsim_version", .kind = CAPSIM_TABLE_TEXT,
	  .flags = CAPSIM_TABLE_NO_TEXT | CAPSIM_TABLE_CSV_BARE_NAME },
	{ .name = "points_ok", .label = "ok", .kind = CAPSIM_TABLE_INT, .width = 8,
	  .flags = CAPSIM_TABLE_CSV_BARE_NAME },
	{ .name = "points_failed", .label = "failed", .kind = CAPSIM_TABLE_INT, .width = 8,
	  .flags = CAPSIM_TABLE_CSV_BARE_NAME },
	{ .name = "capsim_version", .label = "capsim", .kind = CAPSIM_TABLE_TEXT,
	  .align = CAPSIM_TABLE_LEFT, .flags = CAPSIM_TABLE_NO_CSV | CAPSIM_TABLE_NO_JSON },
};

static void list_table(const capsim_sweepq_sweep *v, size_t n, capsim_table *out)
{
	capsim_table_init(out, list_cols, sizeof list_cols / sizeof list_cols[0]);
	for (size_t i = 0; i < n; i++) {
		size_t r = capsim_table_add_row(out);
		capsim_table_set_num(out, r, 0, (double)v[i].id);
		capsim_table_set_text(out, r, 1, v[i].name);
		capsim_table_set_text(out, r, 2, v[i].created_at);
		capsim_table_set_text(out, r, 3, v[i].capsim_version);
		capsim_table_set_num(out, r, 4, (double)v[i].n_ok);
		capsim_table_set_num(out, r, 5, (double)v[i].n_failed);
		capsim_table_set_text(out, r, 6, v[i].capsim_version);
	}
}

/* ---- JSON ---------------------------------------------------------------------- */

static json_t *sweep_json(const capsim_sweepq_sweep *w)
{
	json_t *o = json_object();
	json_object_set_new(o, "id", json_integer((json_int_t)w->id));
	json_object_set_new(o, "name", capsim_table_json_text(w->name));
	json_object_set_new(o, "created_at", capsim_table_json_text(w->created_at));
	json_object_set_new(o, "capsim_version", capsim_table_json_text(w->capsim_version));
	json_object_set_new(o, "points_ok", json_integer((json_int_t)w->n_ok));
	json_object_set_new(o, "points_failed", json_integer((json_int_t)w->n_failed));
	return o;
}

/* point r: its index, status and error, then its parameters and its keys
 * from the table of points, absent ones left out */
static json_t *point_json(const capsim_sweepq_table *t, const capsim_table *pts, size_t r)
{
	const capsim_sweepq_point *pt = &t->points[r];
	size_t np = t->paths.n;
	json_t *o = json_object(), *params = json_object(), *res = json_object();
	json_object_set_new(o, "index", json_integer((json_int_t)pt->index));
	json_object_set_new(o, "status", json_string(pt->failed ? "failed" : "ok"));
	if (pt->error)
		json_object_set_new(o, "error", capsim_table_json_text(pt->error));
	capsim_table_json_cells(pts, r, POINT_PARAMS, POINT_PARAMS + np, 1, params);
	capsim_table_json_cells(pts, r, POINT_PARAMS + np, POINT_PARAMS + np + t->n_keys, 1, res);
	json_object_set_new(o, "params", params);
	json_object_set_new(o, "results", res);
	return o;
}

/* how the points were chosen */
static json_t *query_json(const query_plan *p, const query_args *a, const capsim_sweepq_table *t)
{
	json_t *q = json_object(), *where = json_array(), *metrics = json_array();
	for (size_t i = 0; i < a->n_where; i++)
		json_array_append_new(where, capsim_table_json_text(a->where[i]));
	for (size_t i = 0; i < p->n_metrics; i++)
		json_array_append_new(metrics, json_pack("{s:s, s:s}", "key", p->m[i].key,
							 "direction", dir_word(p->m[i].dir)));
	json_object_set_new(q, "status", json_string(a->failed ? "failed" : "ok"));
	json_object_set_new(q, "where", where);
	json_object_set_new(q, "order", json_string(a->best ? "best" : a->pareto ? "pareto" :
							     "index"));
	json_object_set_new(q, "metrics", metrics);
	json_object_set_new(q, "read", json_integer((json_int_t)t->n_read));
	return q;
}

/* o on standard output. ASCII only: every other character as a \u escape,
 * so that a name from the store reads back exact and yet nothing in it (a
 * bidirectional override, say) can reorder what a terminal shows. */
static void print_json(json_t *o)
{
	json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17) |
		   JSON_ENSURE_ASCII);
	fputc('\n', stdout);
	json_decref(o);
}

static void table_json(const query_plan *p, const query_args *a, const capsim_sweepq_table *t,
		       const capsim_table *pts)
{
	json_t *o = json_object(), *points = json_array();
	json_object_set_new(o, "sweep", sweep_json(&p->sweep));
	json_object_set_new(o, "query", query_json(p, a, t));
	for (size_t i = 0; i < t->n_points; i++)
		json_array_append_new(points, point_json(t, pts, i));
	json_object_set_new(o, "points", points);
	print_json(o);
}

/* ---- the two doings ------------------------------------------------------------ */

static int do_list(capsim_store *db, const query_args *a, capsim_diags *d)
{
	capsim_sweepq_sweep *v;
	size_t n;
	if (capsim_sweepq_list(db, &v, &n, d) < 0) {
		capsim_sweepq_list_free(v, n);
		return capsim_diags_runtime(d) ? CAPSIM_EXIT_FAILURE : CAPSIM_EXIT_USAGE;
	}
	int status = CAPSIM_EXIT_OK;
	int to_stdout = a->csv && strcmp(a->csv, "-") == 0;
	/* CSV through an outfile, whole or not at all; opened before printing */
	capsim_outfile csv;
	if (a->csv && capsim_outfile_open(&csv, a->csv, d) < 0) {
		capsim_sweepq_list_free(v, n);
		return CAPSIM_EXIT_FAILURE;
	}
	capsim_table t;
	list_table(v, n, &t);
	if (a->json) {
		json_t *o = json_object();
		json_object_set_new(o, "sweeps", capsim_table_json(&t));
		print_json(o);
	} else if (!to_stdout) {
		capsim_table_write_text(&t, stdout);
	}
	if (a->csv) {
		capsim_table_write_csv(&t, csv.f);
		if (capsim_outfile_close(&csv, d) < 0)
			status = CAPSIM_EXIT_FAILURE;
	}
	capsim_table_free(&t);
	capsim_sweepq_list_free(v, n);
	return status;
}

/* rank or cut t as the options say */
static void select_points(const query_plan *p, const query_args *a, capsim_sweepq_table *t)
{
	if (a->best)
		capsim_sweepq_best(t, p->m[0].col, p->m[0].dir,
				   a->top ? (size_t)a->top : QUERY_TOP_DEFAULT);
	else if (a->pareto)
		capsim_sweepq_pareto(t, p->m[0].col, p->m[0].dir, p->m[1].col, p->m[1].dir);
}

/* the points as the options ask, written out: an exit status */
static int query_points(capsim_store *db, const query_args *a, query_plan *p,
			capsim_sweepq_table *t, capsim_diags *d)
{
	if (plan_build(db, a, p, d) < 0)
		return capsim_diags_runtime(d) ? CAPSIM_EXIT_FAILURE : CAPSIM_EXIT_USAGE;
	capsim_sweepq_request rq = {
		.sweep_id = p->sweep.id,
		.keys = (const char *const *)p->keys.v,
		.n_keys = p->keys.n,
		.filters = p->filters,
		.n_filters = p->n_filters,
		.which = a->failed ? CAPSIM_SWEEPQ_FAILED : CAPSIM_SWEEPQ_OK,
	};
	if (capsim_sweepq_read(db, &rq, t, d) < 0)
		return capsim_diags_runtime(d) ? CAPSIM_EXIT_FAILURE : CAPSIM_EXIT_USAGE;
	size_t n_match = t->n_points;
	select_points(p, a, t);
	/* CSV through an outfile, whole or not at all; opened first, so that a
	 * file that cannot be written stops the command before it prints */
	capsim_outfile o;
	if (a->csv && capsim_outfile_open(&o, a->csv, d) < 0)
		return CAPSIM_EXIT_FAILURE;
	capsim_table pts;
	points_table(t, a->failed, &pts);
	if (a->json)
		table_json(p, a, t, &pts);
	else if (!a->csv || strcmp(a->csv, "-") != 0)
		print_head(p, a, t, &pts, n_match, stdout);
	int status = CAPSIM_EXIT_OK;
	if (a->csv) {
		capsim_table_write_csv(&pts, o.f);
		if (capsim_outfile_close(&o, d) < 0)
			status = CAPSIM_EXIT_FAILURE;
	}
	capsim_table_free(&pts);
	return status;
}

static int do_query(capsim_store *db, const query_args *a, capsim_diags *d)
{
	query_plan p;
	capsim_sweepq_table t = { 0 };
	int status = query_points(db, a, &p, &t, d);
	capsim_sweepq_table_free(&t);
	plan_free(&p);
	return status;
}

int capsim_cmd_query(int argc, char **argv)
{
	query_args a = { 0 };
	int done = 0, status = parse_args(argc, argv, &a, &done);
	if (status || done) {
		args_free(&a);
		return status;
	}
	capsim_diags d = { 0 };
	capsim_store *db = NULL;
	if (capsim_store_open(a.db, CAPSIM_STORE_READ, &db, &d) < 0)
		status = capsim_diags_runtime(&d) ? CAPSIM_EXIT_FAILURE : CAPSIM_EXIT_USAGE;
	else
		status = a.list ? do_list(db, &a, &d) : do_query(db, &a, &d);
	capsim_diags_print(&d, stderr);
	capsim_diags_free(&d);
	capsim_store_close(db);
	args_free(&a);
	return status;
}
