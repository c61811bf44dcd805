/* memory.h - memory per GPU of a training job: weights, gradients and
 * optimizer states by precision and sharding (ZeRO-1/2/3), activations per
 * layer after Korthikanti et al. (2022) with a fused (flash) attention kernel
 * and GQA, divided by TP/SP/CP, times the micro-batches a pipeline schedule
 * keeps in flight, plus a reserve. Peak bytes and whether they fit are
 * results; nothing here fails on a job that does not fit.
 *
 * Equations and sources: docs/model.md ("Memory"). All sizes in bytes. */
#ifndef CAPSIM_MEMORY_H
#define CAPSIM_MEMORY_H

#include "spec.h"

/* Memory of one pipeline stage's GPU. */
typedef struct capsim_stage_memory {
	int stage;                 /* 0 .. pp-1 */
	int layers;                /* transformer layers on the stage */
	double params;             /* parameters held by one GPU (after TP, EP, PP) */
	double weights_bytes;      /* training-precision copy (ZeRO-3: sharded) */
	double grads_bytes;        /* gradients (ZeRO-2/3: sharded) */
	double optimizer_bytes;    /* fp32 master weights and Adam moments (ZeRO-1+: sharded) */
	double activations_bytes;  /* kept for backward, all in-flight micro-batches */
	double in_flight;          /* micro-batches whose activations are held (may be fractional: interleaving) */
	double reserve_bytes;      /* CUDA context, NCCL buffers, allocator slack */
	double total_bytes;
} capsim_stage_memory;

typedef struct capsim_memory {
	capsim_stage_memory first, last; /* the stages that differ (embedding, LM head) */
	capsim_stage_memory peak;        /* the larger of the two */
	double activation_per_layer_bytes; /* one micro-batch, one layer, on one GPU */
	double capacity_bytes;           /* the GPU's memory */
	int fits;                        /* peak.total_bytes <= capacity_bytes */
} capsim_memory;

/* Bytes of activations one transformer layer keeps for backward, for one
 * micro-batch, on one GPU (Korthikanti et al. 2022, generalised to GQA,
 * SwiGLU and any FFN size; fused attention keeps no s^2 terms). */
double capsim_activation_bytes_per_layer(const capsim_scenario *s);

/* Micro-batches per step for one data-parallel replica. */
int capsim_microbatches(const capsim_scenario *s);

/* Fill *m for a loaded scenario. */
void capsim_memory_estimate(const capsim_scenario *s, capsim_memory *m);

#endif
