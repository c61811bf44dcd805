/* run.h - a sweep's points evaluated into a results store, the face that
 * `capsim sweep` and any C program call.
 *
 * capsim_sweep_run evaluates every point of a loaded sweep (capsim_sweep_load)
 * that passes its constraints with capsim_eval, on N threads of this process
 * and, under an MPI launch, on every rank, and writes each point to the
 * SQLite store (results.h) as it comes: its parameters, the digest of its
 * resolved scenario, and its result rows (capsim_result_values) or its
 * error. Points are committed about once a second and at least every batch
 * points, each whole or absent, so that a run stopped at any moment is
 * continued with resume set and ends with every point once.
 *
 * MPI is optional: capsim_sweep_mpi_built() says whether this build has it.
 * Rank 0 calls capsim_sweep_run with ranks set to the number of ranks; every
 * other rank calls capsim_sweep_run_rank. capsim_init() must have been
 * called once before. */
#ifndef CAPSIM_SWEEP_RUN_H
#define CAPSIM_SWEEP_RUN_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog.h"
#include "diag.h"
#include "err.h"
#include "sweep.h"

/* Called by the writer after each turn (done of total points written, so
 * many of them failed), and once more at the end with final set. */
typedef void (*capsim_sweep_progress_fn)(void *ctx, size_t done, size_t failed, size_t total,
					 int final);

typedef struct capsim_sweep_run_opts {
	int threads;                  /* threads evaluating (0: 1): alone, the caller's thread
				       * and threads - 1 more, the caller's evaluating
				       * between its writes; rank 0 of several, threads
				       * beside the caller's, which writes and serves the
				       * ranks; none starting: the caller's alone */
	size_t batch;                 /* most points a transaction (0: 4096) */
	int resume;                   /* continue the newest sweep of the name in the store */
	int ranks;                    /* 1 (0 too), or the ranks of an MPI launch (rank 0 here) */
	const char *version;          /* what the store records as the writer (non-NULL) */
	atomic_int *stop;             /* non-zero: hand out no more points; NULL: never */
	capsim_sweep_progress_fn progress; /* NULL: none */
	void *progress_ctx;
	const capsim_err_model *errors; /* the bands each point's rows carry; NULL: none */
} capsim_sweep_run_opts;

/* What a run did. Arrays are owned: capsim_sweep_run_result_free. */
typedef struct capsim_sweep_run_result {
	int64_t sweep_id;             /* in the store */
	uint64_t dropped;             /* by constraints */
	uint64_t *drops;              /* by constraint (n_constraints) */
	uint64_t *errors;             /* of them, a test that could not be evaluated */
	char **first_error;           /* each constraint's first such message, or NULL */
	size_t n_constraints;
	uint64_t done_before;         /* in the store already (resume) */
	size_t planned;               /* points to run this time */
	size_t ok, failed;            /* points written */
	int stopped;                  /* stop was set before every planned point ran */
	size_t *by_rank;              /* points each rank evaluated (ranks of them) */
	int ranks;
	double elapsed_s;             /* from the first point handed out to the store closed */
} capsim_sweep_run_result;

/* Run sw's points (their scenarios: base edited by each point's sets, in
 * catalog cat) into the store at db, created when missing. Returns 0 when
 * every planned point was written (failed points included), 1 when stop
 * ended it sooner (every point written so far is committed), -1 after adding
 * the reason to d: bad input (a resume of a sweep that is not in the store,
 * or whose inputs changed) or a failure of the store (a runtime diagnostic).
 * *out is filled in all three cases. */
int capsim_sweep_run(const capsim_sweep *sw, const capsim_catalog *cat,
		     const capsim_scenario *base, const char *db, const capsim_sweep_run_opts *o,
		     capsim_sweep_run_result *out, capsim_diags *d);

void capsim_sweep_run_result_free(capsim_sweep_run_result *r);

/* The SHA-256 of s written out whole (capsim_scenario_write_xml) as 64 hex
 * digits: what the store records of a point's scenario; "" on a failure. */
void capsim_sweep_scenario_digest(const capsim_scenario *s, char hex[65]);

/* An MPI rank other than 0: ask rank 0 for points until it has none left,
 * evaluating them and sending their rows back. */
void capsim_sweep_run_rank(const capsim_sweep *sw, const capsim_catalog *cat,
			   const capsim_scenario *base, const capsim_err_model *errors);

/* ---- MPI (built only where Open MPI is found) ---- */

/* 1 when the environment says this process is one rank of an MPI launch
 * (Open MPI's mpirun, or srun with PMIx): OMPI_COMM_WORLD_SIZE or
 * PMIX_RANK is set. */
int capsim_sweep_mpi_launched(void);

/* 1 when this build has MPI. */
int capsim_sweep_mpi_built(void);

/* Initialise MPI (funneled: only the calling thread speaks MPI); writes the
 * rank and the number of ranks. Returns 0, or -1 after printing why. */
int capsim_sweep_mpi_init(int *argc, char ***argv, int *rank, int *size);
void capsim_sweep_mpi_finalize(void);
/* End every rank with status (no return). */
void capsim_sweep_mpi_abort(int status);

#endif
