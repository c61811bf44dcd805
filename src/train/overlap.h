/* capsim - tensor-parallel communication hidden behind the GEMMs, as each
 * implementation does it (docs/model.md, "Training step", 2).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef CAPSIM_TRAIN_OVERLAP_H
#define CAPSIM_TRAIN_OVERLAP_H

#include "ops.h"
#include "spec.h"

/* workload.parallelism.tp-overlap-method: how tp-comm-overlap hides a
 * layer's tensor-parallel collectives */
typedef enum {
	CAPSIM_TPOV_FRAMEWORK = 0, /* the framework's own (capsim_tp_overlap_method) */
	CAPSIM_TPOV_USERBUFFERS,   /* Transformer Engine's userbuffers (Megatron-Core) */
	CAPSIM_TPOV_ASYNC_TP,      /* PyTorch's AsyncTP (symmetric memory) */
	CAPSIM_TPOV_FLAT           /* a flat share tp-overlap-efficiency, slowed by comm-slowdown */
} capsim_tp_overlap;

/* The method s's tp-comm-overlap runs, never CAPSIM_TPOV_FRAMEWORK: the one
 * asked, else userbuffers for megatron, async-tp for torch-amp and fsdp2,
 * flat for deepspeed. */
int capsim_tp_overlap_method(const capsim_scenario *s);

/* One layer's tensor-parallel collectives, seconds each: with sequence
 * parallelism one all-gather (ag) and one reduce-scatter (rs) of the
 * layer's T x h activations, two of each a pass; without it one all-reduce
 * (ar), two a pass. */
typedef struct capsim_tp_colls {
	double ag, rs, ar;
} capsim_tp_colls;

/* What overlapping a layer's collectives leaves: exposed seconds, forward
 * and backward, and what it adds to the layer's kernels (the GEMMs split
 * into chunks, the SMs the communication takes, AsyncTP's reduction). */
typedef struct capsim_tp_hidden {
	double exposed_fwd, exposed_bwd;
	double pen_fwd, pen_bwd;
} capsim_tp_hidden;

/* The layer's collectives under the chunked method m (userbuffers or
 * async-tp) behind its forward (w) and backward (wb) GEMMs, each op's time
 * as the op model gives it times cs (compute_scale). Promises exposed >= 0
 * and pen >= 0, exposed at most the collectives' sum; a collective whose
 * GEMM is absent (an MoE layer's MLP) stays exposed, and so do all of them
 * under async-tp without sequence parallelism or in eager execution. */
void capsim_tp_overlap_layer(const capsim_scenario *s, const capsim_gpu_perf *perf, int m,
			     double cs, const capsim_layer_work *w, const capsim_layer_work *wb,
			     const capsim_tp_colls *tc, capsim_tp_hidden *out);

/* Exposed time of a chunked overlap, seconds: n GEMM chunks taking g in all
 * and a collective taking c. ring (an all-gather, ring exchange): the first
 * chunk is local, the n - 1 transfers each run beside a chunk; otherwise (a
 * reduce-scatter, pipelined) each chunk's share goes after its GEMM chunk
 * and the last one's is left exposed. n = 1 is a bulk overlap: max(0, c - g).
 * Promises a result in [0, c]. */
double capsim_tp_chunked_exposed(double g, double c, int n, int ring);

#endif
