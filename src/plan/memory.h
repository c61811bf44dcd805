/* memory.h - memory per GPU of a training job: weights, gradients and
 * optimizer states by precision and sharding (ZeRO-1/2/3), activations per
 * layer after Korthikanti et al. (2022) with a fused (flash) attention kernel
 * and GQA, divided by TP/SP/CP, times the micro-batches a pipeline schedule
 * keeps in flight, plus what lives outside the model (the CUDA context,
 * NCCL's buffers, the caching allocator's slack). Peak bytes, the margin and
 * a verdict of three words are results; nothing here fails on a job that
 * does not fit.
 *
 * Equations and sources: docs/model.md ("Memory"). All sizes in bytes. */
#ifndef CAPSIM_MEMORY_H
#define CAPSIM_MEMORY_H

#include "spec.h"

/* What a framework keeps of the model, per parameter before sharding, and
 * how long (docs/model.md, "Memory per framework"). */
typedef struct capsim_mem_recipe {
	double param_bytes;  /* the trained weights kept between steps (with fp8_params,
			      * those outside the GEMMs) */
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
	double layer_grad_bytes; /* zero 3: bytes a parameter of the layer's unsharded
				  * gradients in the backward (FSDP2: 16-bit and the fp32
				  * copy reduce-scattered; DeepSpeed: its 16-bit bucket) */
	double live_params_max;  /* zero 3: most parameters unsharded at once (0: no cap) */
	double grad_bucket_max;  /* zero 3: most gradients in one reduce bucket (0: no cap) */
	int fp8_te;          /* fp8 through Transformer Engine: FP8 weight copies and
			      * their transposes, GEMM inputs saved in FP8 */
	int fp8_params;      /* the GEMM weights kept in FP8 alone (Transformer Engine's
			      * FP8 primary weights, --fp8-param-gather): no 16-bit copy
			      * of them, and no FP8 cache beside them */
	double fp8_weight_bytes; /* bytes a GEMM parameter of its FP8 copy (cached, or the
				  * weight itself): 1, and 1 for its transpose */
	double context_bytes; /* the CUDA context and library workspaces */
	double band_under, band_over; /* the model's error: the true peak may exceed
				       * the estimate by band_under of it, or fall
				       * short of it by band_over */
} capsim_mem_recipe;

/* The three words a memory estimate ends in. */
typedef enum {
	CAPSIM_MEM_FITS,  /* fits even if the peak is the model's error larger */
	CAPSIM_MEM_CLOSE, /* fits, but the model's error larger would not */
	CAPSIM_MEM_NO     /* the estimated peak is over the capacity */
} capsim_mem_verdict;

extern const char *const capsim_mem_verdict_names[]; /* "fits", "close", "does not fit" */

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
	double gathers_bytes;      /* FSDP2: unsharded 16-bit weights of the layers gathered at
				    * once, and in the backward one layer's unsharded gradients */
	double fp8_bytes;          /* Transformer Engine FP8: each GEMM weight's FP8 copy and its
				    * transpose, cached across the step's micro-batches, or
				    * the FP8 primary weights themselves (precision params fp8) */
	double in_flight;          /* micro-batches whose activations are held (may be fractional: interleaving) */
	double allocated_bytes;    /* the model's bytes at the peak: what the allocator hands out */
	double context_bytes;      /* outside the model: the CUDA context and workspaces, */
	double nccl_bytes;         /* NCCL's buffers of the communicators the GPU is in, */
	double slack_bytes;        /* the caching allocator's reserve beyond allocated_bytes */
	double reserve_bytes;      /* all outside the model: the three, or memory-reserve given */
	double total_bytes;        /* allocated_bytes + reserve_bytes */
} capsim_stage_memory;

typedef struct capsim_memory {
	capsim_stage_memory first, last; /* the stages that differ (embedding, LM head) */
	capsim_stage_memory peak;        /* the larger of the two */
	double activation_per_layer_bytes; /* one micro-batch, one layer, on one GPU */
	double capacity_bytes;           /* the GPU's memory */
	int verdict;                     /* capsim_mem_verdict of the peak against the capacity */
	double margin_bytes;             /* capacity_bytes - peak.total_bytes (< 0: short) */
	double band_under, band_over;    /* the recipe's error band, shares of the peak */
	int fits;                        /* not refused: verdict fits or close */
} capsim_memory;

/* Bytes of activations one transformer layer keeps for backward, for one
 * micro-batch, on one GPU (Korthikanti et al. 2022, generalised to GQA,
 * SwiGLU and any FFN size; fused attention keeps no s^2 terms). */
double capsim_activation_bytes_per_layer(const capsim_scenario *s);

/* Micro-batches per step for one data-parallel replica. */
int capsim_microbatches(const capsim_scenario *s);

/* The verdict of a peak of `peak` bytes on `capacity` bytes with the error
 * of a recipe's estimates on the under side: fits where peak x (1 + under)
 * <= capacity, does not fit where peak > capacity, close between
 * (docs/model.md, "The verdict"). */
int capsim_memory_verdict(double peak, double capacity, double under);

/* Bytes of NCCL buffers one GPU of s holds: for each parallel group of more
 * than one GPU (tensor, context, expert, pipeline, data), nccl-channels x 2
 * ring peers x nccl-buffer. */
double capsim_memory_nccl_bytes(const capsim_scenario *s);

/* Fill *m for a loaded scenario. */
void capsim_memory_estimate(const capsim_scenario *s, capsim_memory *m);

#endif
