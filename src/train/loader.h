/* loader.h - the data loader: what one training step reads from the
 * dataset's storage tier (bytes, files, read requests), how long one step's
 * data takes to arrive under each of the tier's limits (aggregate and
 * per-client bandwidth, IOPS, the metadata rate that every client shares),
 * and what of it reaches the step through the loader's workers and prefetch
 * (PyTorch's DataLoader), simulated event by event. Equations and sources:
 * docs/model.md ("Data loader"). Seconds and bytes. */
#ifndef CAPSIM_LOADER_H
#define CAPSIM_LOADER_H

#include "spec.h"

typedef enum {
	CAPSIM_LOAD_AGGREGATE, /* the shared system's read bandwidth */
	CAPSIM_LOAD_CLIENT,    /* one node's client rate (shared) or its drives (local) */
	CAPSIM_LOAD_IOPS,      /* read requests a second */
	CAPSIM_LOAD_METADATA,  /* file opens and closes a second, shared by every client */
	CAPSIM_LOAD__COUNT
} capsim_load_bound;

extern const char *const capsim_load_bound_names[CAPSIM_LOAD__COUNT];

typedef struct capsim_loader {
	int has_loader;           /* a tier holds the data (else it is in memory) */
	int shared;               /* 1: the shared tier, 0: each node's local one */
	double bytes_per_token;
	double bytes_per_step;    /* the whole job's */
	double files_per_step;    /* files opened (0: memory-mapped, opened once) */
	double reads_per_step;    /* read requests */
	int clients;              /* nodes that read: those of the first and last stages */
	double limit_s[CAPSIM_LOAD__COUNT]; /* one step's data under each limit (0: none) */
	double read_s;            /* the largest: one step's data on each reading node */
	int bound;                /* capsim_load_bound of read_s */
	int workers, prefetch;
	double stall_s;           /* per step, in the steady state */
	double first_batch_s;     /* before the first step can start */
	double epochs;            /* passes over cluster.storage.dataset (0: no size given) */
} capsim_loader;

/* What step's data costs for scenario s at tokens_per_step. Fills *out
 * (has_loader 0 without a tier to read from). */
void capsim_loader_plan(const capsim_scenario *s, double tokens_per_step, capsim_loader *out);

/* The loader's pipeline against a training loop of steps of compute_s each,
 * simulated event by event for `steps` steps (at least 1): workers (0: the
 * training process reads each batch itself, between steps) each fetch one
 * batch at a time, at most workers x prefetch batches are fetched or waiting
 * unconsumed, and the batches in flight share the node's read rate equally
 * (one alone takes read_s). Returns the stall per step over the last
 * `workers` steps (1 when workers is 0) and sets *first_s to when the first
 * batch arrives. */
double capsim_loader_pipeline(double read_s, double compute_s, int workers, int prefetch,
			      int steps, double *first_s);

#endif
