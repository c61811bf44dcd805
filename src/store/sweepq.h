/* sweepq.h - the results of sweeps read back for capsim query: the sweeps
 * of a store, and one sweep's points as a table of plain C rows (their
 * parameters and the result keys asked for), filtered by KEY OP VALUE,
 * ranked by one metric or cut to the Pareto front of two. Only the keys
 * asked for are read (a few SELECTs over the points of the sweep), so a
 * sweep of 100k points x 150 keys reads a few columns, not 15M rows.
 *
 * Knows nothing of the result table (src/eval): the caller names the keys
 * it knows (capsim_sweepq_resolve). Library code: faults go to d. */
#ifndef CAPSIM_SWEEPQ_H
#define CAPSIM_SWEEPQ_H

#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "results.h"
#include "store.h"

/* ---- sweeps ------------------------------------------------------------------ */

/* One sweep of a store, with the count of its points by status. */
typedef struct capsim_sweepq_sweep {
	int64_t id;
	char *name;                       /* owned */
	char created_at[32];              /* UTC, ISO 8601 */
	char capsim_version[CAPSIM_RESULT_VERSION_LEN];
	int64_t n_ok, n_failed;
} capsim_sweepq_sweep;

/* Every sweep of s by id into *out (*n of them; free with
 * capsim_sweepq_list_free, also after a failure). Returns 0, or -1 with
 * the reason in d: a store without results tables (older than version 4,
 * or not a capsim store), or none of its sweeps ("no sweeps"). */
int capsim_sweepq_list(capsim_store *s, capsim_sweepq_sweep **out, size_t *n, capsim_diags *d);
void capsim_sweepq_list_free(capsim_sweepq_sweep *v, size_t n);

/* The sweep sel names into *out (free with capsim_sweepq_sweep_free):
 * NULL or "" the latest (the highest id); digits the sweep of that id
 * where there is one, else the name; any other text the name (the latest
 * of the sweeps of that name). Returns 0, or -1 with the reason in d (no
 * results tables, no sweeps, no such sweep: "the store has no sweep named
 * 'X'" and the latest ten of those it has, names made visible and cut to
 * 64 bytes; never SQL or SQLite's words). */
int capsim_sweepq_find(capsim_store *s, const char *sel, capsim_sweepq_sweep *out,
		       capsim_diags *d);
void capsim_sweepq_sweep_free(capsim_sweepq_sweep *w);

/* s as a terminal or a message shows it safely, into dst (n > 0 bytes, NUL
 * ended): every unit a reader would not see as it is (control characters,
 * bidirectional overrides, bytes that are not UTF-8) made visible as
 * escape.h writes it ("\x0a", "\u{202E}"), cut where a unit or its escape
 * ends, never inside one. Returns the length of the whole visible form
 * (more than n - 1 where it was cut), as snprintf does. */
size_t capsim_sweepq_visible(char *dst, size_t n, const char *s);

/* The same into a new string (caller frees) of at most max bytes of s's
 * visible form, "..." added where it was cut. */
char *capsim_sweepq_visible_dup(const char *s, size_t max);

/* ---- names ------------------------------------------------------------------- */

/* The parameter paths of a sweep's points (every --set path any of them
 * has), sorted by strcmp. */
typedef struct capsim_sweepq_paths {
	char **v;                         /* owned, each and the array */
	size_t n;
} capsim_sweepq_paths;

/* The paths of sweep sweep_id into *out (free with
 * capsim_sweepq_paths_free, also after a failure). 0, or -1 after d. */
int capsim_sweepq_read_paths(capsim_store *s, int64_t sweep_id, capsim_sweepq_paths *out,
			     capsim_diags *d);
void capsim_sweepq_paths_free(capsim_sweepq_paths *p);

/* 1 when name is one of p's paths, else 0 */
int capsim_sweepq_is_path(const capsim_sweepq_paths *p, const char *name);

/* what a name given to a query is */
typedef enum capsim_sweepq_name {
	CAPSIM_SWEEPQ_RESULT = 1,         /* a result key (point_results.key) */
	CAPSIM_SWEEPQ_PARAM = 2           /* a parameter path (point_params.path) */
} capsim_sweepq_name;

/* What name is in sweep sweep_id: a parameter path of its points (paths),
 * a result key of known[] (the keys the caller knows: the result table), or
 * a key some point of the sweep holds that known[] lacks (written by another
 * capsim). Returns CAPSIM_SWEEPQ_PARAM or _RESULT, or -1 after "unknown key
 * 'NAME'; nearest: A, B, C" (the nearest of known[] and paths by edit
 * distance) at `where` ("--best step_tme_s") in d. */
int capsim_sweepq_resolve(capsim_store *s, int64_t sweep_id, const char *name,
			  const char *const *known, size_t n_known,
			  const capsim_sweepq_paths *paths, const char *where, capsim_diags *d);

/* ---- filters ----------------------------------------------------------------- */

typedef enum capsim_sweepq_op {
	CAPSIM_SWEEPQ_EQ, CAPSIM_SWEEPQ_NE, CAPSIM_SWEEPQ_LT,
	CAPSIM_SWEEPQ_LE, CAPSIM_SWEEPQ_GT, CAPSIM_SWEEPQ_GE
} capsim_sweepq_op;

/* KEY OP VALUE. A point matches when its value of KEY (the parameter of
 * that path where KEY is one of the sweep's paths, else the result key)
 * compares so with VALUE: numerically when both are numbers (a parameter's
 * or a text result's value as a number when both it and VALUE are plain
 * numbers), else as text (strcmp). A point without KEY, or with a number
 * where VALUE is a text, matches no filter. */
typedef struct capsim_sweepq_filter {
	char key[CAPSIM_RESULT_PATH_LEN];
	capsim_sweepq_op op;
	char *value;                      /* the text given; owned */
	int is_num;                       /* value is a plain number: num */
	double num;
} capsim_sweepq_filter;

/* Parse "KEY OP VALUE" (spaces around OP optional; OP one of = != < <= > >=;
 * VALUE the rest, trimmed, not empty) into *out (free with
 * capsim_sweepq_filter_free). 0, or -1 after the reason at text in d. */
int capsim_sweepq_filter_parse(const char *text, capsim_sweepq_filter *out, capsim_diags *d);
void capsim_sweepq_filter_free(capsim_sweepq_filter *f);

/* 1 when s is a plain decimal number (an optional sign, digits with an
 * optional fraction, an optional exponent; finite), with its value in *out;
 * else 0. "64", "-1.5e3" are; "4 TB/s", "0x10", "inf", " 1" are not. */
int capsim_sweepq_plain_number(const char *s, double *out);

/* ---- the table of points ----------------------------------------------------- */

/* which points a read takes, by status */
typedef enum capsim_sweepq_which {
	CAPSIM_SWEEPQ_OK = 0,             /* the points that ran */
	CAPSIM_SWEEPQ_FAILED = 1,         /* the failed points only */
	CAPSIM_SWEEPQ_ALL = 2
} capsim_sweepq_which;

typedef struct capsim_sweepq_request {
	int64_t sweep_id;
	const char *const *keys;          /* result keys: the table's columns, in order */
	size_t n_keys;
	const capsim_sweepq_filter *filters; /* all must match */
	size_t n_filters;
	capsim_sweepq_which which;
} capsim_sweepq_request;

typedef enum capsim_sweepq_kind {
	CAPSIM_SWEEPQ_ABSENT = 0,         /* the point has no such key */
	CAPSIM_SWEEPQ_NUM,
	CAPSIM_SWEEPQ_TEXT
} capsim_sweepq_kind;

/* one point's value of one key */
typedef struct capsim_sweepq_cell {
	capsim_sweepq_kind kind;
	double num;                       /* when NUM */
	char *text;                       /* when TEXT; owned by the table */
} capsim_sweepq_cell;

typedef struct capsim_sweepq_point {
	int64_t index;
	int failed;
	char *error;                      /* when failed; owned */
	char **params;                    /* [table's paths.n]: the value, NULL where the
					   * point has none; owned */
	capsim_sweepq_cell *cells;        /* [table's n_keys]; owned */
} capsim_sweepq_point;

/* Points of one sweep: rows of cells under the keys asked for. */
typedef struct capsim_sweepq_table {
	int64_t sweep_id;
	capsim_sweepq_paths paths;        /* every parameter path of the sweep */
	char **keys;                      /* [n_keys]: copies of the request's keys */
	char **units;                     /* [n_keys]: the unit stored with each, "" none */
	size_t n_keys;
	capsim_sweepq_point *points;      /* by index (best and pareto reorder them) */
	size_t n_points;
	size_t n_read;                    /* the points of that status before the filters */
} capsim_sweepq_table;

/* Read the points of rq->sweep_id of status rq->which that match every
 * filter, by index, with their parameters and the values of rq->keys, in
 * one read transaction, into *out (zeroed first; free with
 * capsim_sweepq_table_free, also after a failure). A filter's result key
 * need not be among rq->keys. Returns 0, or -1 with the reason in d. */
int capsim_sweepq_read(capsim_store *s, const capsim_sweepq_request *rq,
		       capsim_sweepq_table *out, capsim_diags *d);
void capsim_sweepq_table_free(capsim_sweepq_table *t);

/* ---- ranking ----------------------------------------------------------------- */

typedef enum capsim_sweepq_dir {
	CAPSIM_SWEEPQ_MIN = -1,
	CAPSIM_SWEEPQ_NODIR = 0,          /* no default: the caller must say */
	CAPSIM_SWEEPQ_MAX = 1
} capsim_sweepq_dir;

/* Which way key is better, by its name: maximise throughputs and
 * efficiencies (tokens_per_s, mfu, scaling_efficiency, goodput, any key
 * ending _per_s, _efficiency or _goodput that is not cost-like: naming
 * cost, usd or price); minimise times, money and energy (keys ending _s,
 * _usd or _j, starting cost_ or holding _cost_); else NODIR. */
capsim_sweepq_dir capsim_sweepq_direction(const char *key);

/* Keep the best `top` points of t by column col (t->keys[col]) in direction
 * dir (MAX or MIN), best first, ties by index; points without a number
 * there are dropped. Returns how many are kept. */
size_t capsim_sweepq_best(capsim_sweepq_table *t, size_t col, capsim_sweepq_dir dir, size_t top);

/* Keep the points of t on the Pareto front of columns col1 and col2, each
 * in its direction: those no other point is as good as on both and better
 * on one (points equal on both are all kept). Sorted by col1, best first,
 * then by col2, then by index; points without a number in either column
 * are dropped. Returns how many are kept. */
size_t capsim_sweepq_pareto(capsim_sweepq_table *t, size_t col1, capsim_sweepq_dir dir1,
			    size_t col2, capsim_sweepq_dir dir2);

#endif
