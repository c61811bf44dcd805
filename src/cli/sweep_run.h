/* sweep_run.h - private to src/cli: one sweep point evaluated into a
 * self-contained record (what a worker thread or an MPI rank hands to the
 * writer), its wire form between ranks, and the MPI transport of
 * `capsim sweep` (sweep_mpi.c; absent without Open MPI). */
#ifndef CAPSIM_SWEEP_RUN_H
#define CAPSIM_SWEEP_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "catalog.h"
#include "sweep.h"

/* one result key of a point: key is an index into capsim_result_keys */
typedef struct sweep_value {
	uint16_t key;
	uint8_t is_text;
	double num;
	char *text;                /* owned, when is_text */
} sweep_value;

/* One point done: its result values, or its error. */
typedef struct sweep_item {
	int64_t index;
	int failed;
	char sha256[65];           /* of the point's resolved scenario; "" when it did not resolve */
	char *error;               /* owned, when failed */
	sweep_value *values;       /* owned */
	size_t n_values;
	struct sweep_item *next;   /* the writer's queue */
} sweep_item;

void sweep_item_free(sweep_item *it);

/* What every evaluation needs, read-only once the sweep starts. */
typedef struct sweep_job {
	const capsim_sweep *sw;
	const capsim_catalog *cat;
	const capsim_scenario *base;
} sweep_job;

/* The SHA-256 of s written out whole (capsim_scenario_write_xml) as 64 hex
 * digits: what the store records of a point's scenario; "" on a failure. */
void sweep_scenario_digest(const capsim_scenario *s, char hex[65]);

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

/* ---- MPI (sweep_mpi.c) ---- */

/* 1 when the environment says this process is one rank of an MPI launch
 * (Open MPI's mpirun, or srun with PMIx): OMPI_COMM_WORLD_SIZE or
 * PMIX_RANK is set. */
int sweep_mpi_launched(void);

/* 1 when this capsim was built with MPI. */
int sweep_mpi_built(void);

/* Initialise MPI (funneled: only the calling thread speaks MPI); writes the
 * rank and the number of ranks. Returns 0, or -1 after printing why. */
int sweep_mpi_init(int *argc, char ***argv, int *rank, int *size);
void sweep_mpi_finalize(void);
void sweep_mpi_abort(int status);

/* Rank 0: whether a worker has asked for work; if so receives its finished
 * items into *results (appended) and writes its rank to *worker. */
int sweep_mpi_poll(sweep_buf *results, int *worker);
/* Rank 0: send worker a chunk of n indices (n 0: no more work, stop). */
void sweep_mpi_send_chunk(int worker, const int64_t *idx, size_t n);

/* A worker rank: send what it finished (b) and ask for more; the chunk's
 * indices come back in *idx (malloc'd; *n 0: stop). */
void sweep_mpi_request(const sweep_buf *b, int64_t **idx, size_t *n);

#endif
