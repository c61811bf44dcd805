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

/* What a framework keeps of the model, per parameter before sharding, and
 * how long (docs/model.md, "Memory per framework"). */
typedef struct capsim_mem_recipe {
	double param_bytes;  /* the trained weights kept between steps */
	double frozen_bytes; /* LoRA's frozen base: the training dtype's 16 bits (fp32: 4) */
	double grad_bytes;   /* gradients until the optimizer step */
	double master_bytes; /* a separate fp32 master copy (0: none) */
	double state_bytes;  /* Adam's two moments */
	int grads_persistent; /* 1: a buffer for the whole step (Megatron's main_grad,
			       * DeepSpeed's); 0: made in the backward and freed by
			       * zero_grad, so never beside all the activations */
	double cast_bytes;   /* 16-bit copies of each weight held from its forward to
			      * its backward (autocast over fp32 weights) */
	double logit_bytes;  /* bytes per vocabulary entry per token for the loss */
	int gathered_layers; /* FSDP2 with zero 3: layers unsharded at once (current
			      * and prefetched) */
} capsim_mem_recipe;

/* The scenario's framework with its workload.precision overrides. */
void capsim_memory_recipe(const capsim_scenario *s, capsim_mem_recipe *r);

/* Memory of one pipeline stage's GPU. */
typedef struct capsim_stage_memory {
	int stage;                 /* 0 .. pp-1 */
	int layers;                /* transformer layers on the stage */
	double params;             /* parameters held by one GPU (after TP, EP, PP) */
	double trained_params;     /* of those, the ones trained: all, or LoRA's adapters
				    * (beside params, which are then frozen) */
	double weights_bytes;      /* training-precision copy (ZeRO-3: sharded) */
	double grads_bytes;        /* gradients (ZeRO-2/3: sharded) */
	double optimizer_bytes;    /* fp32 master weights and Adam moments (ZeRO-1+: sharded) */
	double activations_bytes;  /* kept for backward, all in-flight micro-batches */
	double casts_bytes;        /* 16-bit copies of fp32 weights autocast keeps to the backward */
	double gathers_bytes;      /* FSDP2: unsharded 16-bit weights of the layers gathered at once */
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
