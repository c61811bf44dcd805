/* results.h - the results of batch sweeps in the store (schema version 4,
 * docs/store.md): a sweep, its points (one scenario each: the base with some
 * --set parameters), each point's parameters and its results, a number with
 * its unit or a text. A point goes in whole or not at all. */
#ifndef CAPSIM_RESULTS_H
#define CAPSIM_RESULTS_H

#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "store.h"

#define CAPSIM_RESULT_KEY_LEN 128  /* keys, snake_case: step_time */
#define CAPSIM_RESULT_UNIT_LEN 32  /* units: s, bytes, w, usd; "" none */
#define CAPSIM_RESULT_PATH_LEN 256 /* --set paths: cluster.nodes */
#define CAPSIM_RESULT_VERSION_LEN 64

/* One input file of a sweep (the base scenario, each catalog file) and the
 * SHA-256 of its bytes, as run --json's "inputs" lists them. */
typedef struct capsim_sweep_input {
	const char *file, *sha256;
} capsim_sweep_input;

/* What a new sweep records; the strings are the caller's. */
typedef struct capsim_sweep_info {
	const char *name;                 /* non-empty */
	const char *capsim_version;       /* capsim_version_string() */
	const char *base_scenario_sha256; /* of the base scenario's bytes: 64 hex digits */
	const capsim_sweep_input *inputs; /* every input file, each once */
	size_t n_inputs;
} capsim_sweep_info;

/* Add a sweep to s (opened with CAPSIM_STORE_WRITE), created now (UTC,
 * ISO 8601), with its input files, in one transaction. Writes its id to
 * *sweep_id; returns 0, or -1 with the reason in d and nothing written (a
 * missing name or version, a digest that is not 64 hex digits, an input
 * file given twice or without a name). */
int capsim_results_create_sweep(capsim_store *s, const capsim_sweep_info *info,
				int64_t *sweep_id, capsim_diags *d);

/* one --set PATH=VALUE of a point */
typedef struct capsim_result_param {
	const char *path, *value;
} capsim_result_param;

/* one result: a finite number num (text NULL), or a text */
typedef struct capsim_result_value {
	const char *key;
	const char *text;
	double num;
	const char *unit;                 /* NULL or "" for none */
} capsim_result_value;

/* One point as written; every pointer is the caller's. A failed point has
 * an error (and usually no results); an ok one has none. */
typedef struct capsim_result_point {
	int64_t index;                    /* >= 0, once per sweep */
	const char *scenario_sha256;      /* of the point's resolved scenario */
	int failed;
	const char *error;
	const char *capsim_version;
	const capsim_result_param *params;
	size_t n_params;
	const capsim_result_value *results;
	size_t n_results;
} capsim_result_point;

/* Write p into sweep sweep_id of s, with its parameters and results, in one
 * transaction: all of it or, on any fault, nothing. Faults: no such sweep,
 * an index already written, a digest that is not 64 hex digits, an ok point
 * with an error or a failed one without, a parameter path or result key
 * that is empty, too long or given twice, a number that is not finite.
 * Writes the point's id to *point_id (may be NULL); returns 0 or -1. */
int capsim_results_write_point(capsim_store *s, int64_t sweep_id,
			       const capsim_result_point *p, int64_t *point_id,
			       capsim_diags *d);

/* ---- reading back ------------------------------------------------------------ */

typedef struct capsim_point_param {
	char path[CAPSIM_RESULT_PATH_LEN];
	char *value;                      /* owned by the record */
} capsim_point_param;

typedef struct capsim_point_value {
	char key[CAPSIM_RESULT_KEY_LEN];
	int is_text;
	double num;                       /* when !is_text */
	char *text;                       /* when is_text; owned by the record */
	char unit[CAPSIM_RESULT_UNIT_LEN];
} capsim_point_value;

typedef struct capsim_point_record {
	int64_t id, sweep_id, index;
	char scenario_sha256[65];
	char capsim_version[CAPSIM_RESULT_VERSION_LEN];
	int failed;
	char *error;                      /* NULL when ok; owned */
	capsim_point_param *params;       /* by path */
	size_t n_params;
	capsim_point_value *results;      /* by key */
	size_t n_results;
} capsim_point_record;

/* Read point index of sweep sweep_id into *out (zeroed first; free with
 * capsim_point_record_free, also after a failure). Returns 0, or -1 with
 * the reason in d: no such point, or a store without results (older than
 * version 4). */
int capsim_results_read_point(capsim_store *s, int64_t sweep_id, int64_t index,
			      capsim_point_record *out, capsim_diags *d);
void capsim_point_record_free(capsim_point_record *r);

typedef struct capsim_sweep_input_record {
	char *file;                       /* owned */
	char sha256[65];
} capsim_sweep_input_record;

/* The input files of sweep sweep_id in the order given, into *out (*n of
 * them; free with capsim_sweep_inputs_free, also after a failure). Returns
 * 0, or -1 with the reason in d. */
int capsim_results_read_inputs(capsim_store *s, int64_t sweep_id, capsim_sweep_input_record **out,
			       size_t *n, capsim_diags *d);
void capsim_sweep_inputs_free(capsim_sweep_input_record *v, size_t n);

/* ---- a sweep's writer ---------------------------------------------------------- */

/* Put s (opened for writing) in write-ahead-log mode, so that readers
 * (capsim query) see the last commit while a sweep writes; the mode stays
 * with the file. Returns 0, or -1 with the reason in d. */
int capsim_results_wal(capsim_store *s, capsim_diags *d);

/* Take s (opened for writing, no transaction open) out of write-ahead-log
 * mode again, when no other connection has it open: the sweep is written,
 * and a store in rollback-journal mode is read with SQLite's locks and
 * nothing created beside it, also on a read-only mount or in a directory
 * the reader cannot write (store.h). Best effort, without waiting: 0 when
 * the store is in rollback-journal mode now, -1 when it stays in WAL mode
 * (a reader has it open), which is no fault. */
int capsim_results_unwal(capsim_store *s);

/* One transaction around many points (capsim_results_write_point then
 * nests a savepoint in it): begin takes the write lock, commit makes every
 * point since durable at once. A point is still whole or absent: a crash
 * loses the points since the last commit, never part of one. */
int capsim_results_begin(capsim_store *s, capsim_diags *d);
int capsim_results_commit(capsim_store *s, capsim_diags *d);

/* The newest sweep named name: 1 with *sweep_id set, 0 when there is none,
 * -1 with the reason in d. */
int capsim_results_find_sweep(capsim_store *s, const char *name, int64_t *sweep_id,
			      capsim_diags *d);

/* The point indices sweep sweep_id holds (ok and failed), ascending, into
 * *out (free it; *n of them). Returns 0, or -1 with the reason in d. */
int capsim_results_indices(capsim_store *s, int64_t sweep_id, int64_t **out, size_t *n,
			   capsim_diags *d);

#endif
