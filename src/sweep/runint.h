/* runint.h - private to the sweep runner (run.c, point.c, mpi.c): one sweep
 * point evaluated into a self-contained record (what a worker thread or an
 * MPI rank hands to the writer), its wire form between ranks, and the MPI
 * transport (mpi.c; inert without Open MPI). The face is run.h. */
#ifndef CAPSIM_SWEEP_RUNINT_H
#define CAPSIM_SWEEP_RUNINT_H

#include <stddef.h>
#include <stdint.h>

#include "catalog.h"
#include "err.h"
#include "results.h"
#include "run.h"
#include "sweep.h"

/* One point done: its store rows, or its error. */
typedef struct sweep_item {
	int64_t index;
	int failed;
	char sha256[65];           /* of the point's resolved scenario; "" when it did not resolve */
	char *error;               /* owned, when failed */
	/* capsim_result_values' rows: key and unit point into the result
	 * table; text is owned. A number that is not finite (a break-even
	 * that never comes) is kept as its text ("inf"), which the store takes. */
	capsim_result_value *rows; /* owned */
	size_t n_rows;
	struct sweep_item *next;   /* the writer's queue */
} sweep_item;

void sweep_item_free(sweep_item *it);

/* What every evaluation needs, read-only once the sweep starts. */
typedef struct sweep_job {
	const capsim_sweep *sw;
	const capsim_catalog *cat;
	const capsim_scenario *base;
	const capsim_err_model *errors; /* NULL: no bands */
} sweep_job;

/* Evaluate point index of j into a new item (never NULL: a point that
 * cannot be edited or evaluated is a failed item with the reason). */
sweep_item *sweep_eval_point(const sweep_job *j, int64_t index);

/* The wire form: items appended to a growing buffer, read back in order. */
typedef struct sweep_buf {
	unsigned char *p;
	size_t n, cap, at;         /* at: the reader's place */
} sweep_buf;

void sweep_buf_put_item(sweep_buf *b, const sweep_item *it);
/* the next item, or NULL at the end (or on a malformed buffer: *bad set) */
sweep_item *sweep_buf_get_item(sweep_buf *b, int *bad);
void sweep_buf_free(sweep_buf *b);

/* ---- the MPI transport (mpi.c) ---- */

/* Rank 0: whether a worker has asked for work; if so receives its finished
 * items into *results (appended) and writes its rank to *worker. */
int sweep_mpi_poll(sweep_buf *results, int *worker);
/* Rank 0: send worker a chunk of n indices (n 0: no more work, stop). */
void sweep_mpi_send_chunk(int worker, const int64_t *idx, size_t n);

/* A worker rank: send what it finished (b) and ask for more; the chunk's
 * indices come back in *idx (malloc'd; *n 0: stop). */
void sweep_mpi_request(const sweep_buf *b, int64_t **idx, size_t *n);

#endif
