/* ops.h - GPU compute: the FLOPs of a training step as MFU and published
 * figures count them, the kernels of one transformer layer on one GPU (FLOP,
 * bytes moved, GEMM shape, after TP and CP), and the time of one kernel:
 *
 *   t = max(flop / (peak(dtype) x efficiency), bytes / (HBM bandwidth x hbm_eff))
 *       + launch overhead
 *
 * with a GEMM efficiency that rises smoothly with the GEMM's FLOP count to the
 * best fraction of peak measured on each GPU, fitted (GSL) to published
 * cuBLASLt sweeps; or, for a GPU that carries a calibrated profile
 * (capsim_gpu.cal, from `capsim fit`), that profile's per-dtype model of FLOP
 * and arithmetic intensity. Equations and sources: docs/model.md ("GPU
 * compute: FLOPs and op time", "Calibrated GEMM efficiency"). FLOP are
 * floating-point operations (a multiply-add is 2), bytes are bytes, times
 * are seconds. This module keeps no state. */
#ifndef CAPSIM_OPS_H
#define CAPSIM_OPS_H

#include <stddef.h>

#include "spec.h"

/* ---- FLOP accounting ---------------------------------------------------- */

/* Model FLOPs of training per token, as capsim's mfu counts them (DESIGN.md,
 * "Definitions"): 6 x the parameters a token touches (every transformer
 * layer, the LM head and the final norm; not the input embedding or learned
 * positions, which are a lookup; for an MoE layer the routed experts counted
 * as top-k when active, else all of them, plus shared experts and router),
 * plus causal attention, 3 s (q_dim + o_dim) per layer, where q_dim is
 * heads x query/key head size and o_dim heads x value head size (derivation
 * in ops.c). No recomputation. seq_len > 0. */
double capsim_flops_per_token(const capsim_model *m, int seq_len, int active);

/* FLOPs of one iteration in Narayanan et al., SC21 (arXiv:2104.04473), Eq. 3:
 *   96 B s l h^2 (1 + s/(6h) + V/(16 l h)),
 * which counts full activation recomputation (4 passes over each layer) and
 * full (non-causal) attention, with GPT's MLP of 4h and untied-size logits.
 * Use it only to turn that paper's TFLOP/s into a step time. batch_seqs is
 * B, the global batch in sequences. */
double capsim_flops_megatron(int layers, int hidden, int seq, int vocab,
			     double batch_seqs);

/* Versions of Megatron-LM's num_floating_point_operations()
 * (megatron/training/training.py). */
typedef enum capsim_mcore_flops {
	/* core_v0.8.0 and the README's H100 table (commit f2e5db402c, 2024-07-15):
	 * full s x s attention, every MLP dense or top-k x ffn */
	CAPSIM_MCORE_FLOPS_2024,
	/* from 8873b55d6a (2025-03-06) on: causal attention halved, dense and
	 * MoE layers counted apart, shared experts */
	CAPSIM_MCORE_FLOPS_2025
} capsim_mcore_flops;

/* FLOPs of one iteration as Megatron-Core counts them, for batch_seqs
 * sequences of seq tokens: 3 (forward, dgrad, wgrad) x 2 (multiply-add) x
 * per token [ h (q + k + v) + q h  (projections, GQA: k = v = groups x
 * kv_channels) + q s (2024) or q s / 2 (2025)  (QK^T and AV)
 * + h ffn (2 GELU, 3 SwiGLU)  + h V (logits) ] per layer where it applies.
 * MLA follows the 2025 code for either version (with its attention factor).
 * No recomputation. vocab is used as given: pass Megatron's padded vocabulary
 * where it matters. */
double capsim_flops_megatron_core(const capsim_model *m, int seq,
				  double batch_seqs, int version);

/* ---- GPU performance model ---------------------------------------------- */

/* Bits of capsim_gpu_perf.assumed: which defaults were not measured on this
 * GPU but carried over from another (see capsim_gpu_perf_default). */
#define CAPSIM_PERF_ASSUMED_GEMM_SAT 0x1u /* bf16 saturation taken from H100 */
#define CAPSIM_PERF_ASSUMED_FP8_SAT 0x2u  /* fp8 saturation scaled, not measured */
#define CAPSIM_PERF_ASSUMED_HBM 0x4u      /* HBM efficiency taken from H100 */
#define CAPSIM_PERF_ASSUMED_ATTN 0x8u     /* attention curve taken from another GPU */
#define CAPSIM_PERF_ASSUMED_LAUNCH 0x10u  /* launch overheads: not measured on this GPU class */

/* How fast one GPU runs kernels. All fractions are of the datasheet dense
 * peak (capsim_gpu_peak) or bandwidth, at the clocks the source measured
 * (so power-capped throttling is already in them). A dtype whose
 * gemm_cal[dtype].params > 0 takes its GEMM efficiency from that calibrated
 * model instead of gemm_sat x S(F) (so --set efficiency.gemm does not move
 * it); attention keeps attn_frac x S(F). */
typedef struct capsim_gpu_perf {
	/* GEMM efficiency: eff(F) = sat x S(F), S(F) = 1 / (1 + (f0 / F)^p),
	 * F the FLOP of one GEMM clamped to [flop_min, flop_max] */
	double gemm_sat;          /* bf16/fp16/tf32/fp32: best fraction of peak */
	double gemm_sat_fp8;      /* fp8: best fraction of the fp8 peak */
	/* the same two before any measured value replaced them (the GPU's
	 * default row): the uncalibrated prediction that a calibrated shape's
	 * measured range is taken nearest to (capsim_gemm_efficiency_mnk) */
	double gemm_prior_sat, gemm_prior_sat_fp8;
	double gemm_f0_flop;      /* S(f0) = 1/2 */
	double gemm_p;            /* steepness of S */
	double gemm_flop_min, gemm_flop_max; /* measured range; S is held outside */
	double attn_frac;         /* a flat attention fraction of peak given by the GPU
				   * (efficiency.attention); 0: the kernel's curve */
	int attn_kernel;          /* capsim_attn_kernel whose curve rates attention */
	const capsim_attn_curve *attn_curve; /* that kernel's measured or default curve */
	double hbm_eff;           /* streaming copy bandwidth / datasheet bandwidth */
	double launch_s;          /* GPU-side cost per kernel in this execution, in every op's time */
	double launch_eager_s;    /* host: a bare kernel launch */
	double launch_graph_s;    /* GPU: a replayed graph's node */
	double kernel_gap_s;      /* GPU: a kernel launched from a stream (eager, compiled) */
	double dispatch_s;        /* host: eager work per kernel beyond the launch */
	double dispatch_compiled_s; /* host: the same under torch.compile */
	int execution;            /* capsim_execution */
	double host_kernel_s;     /* host time to issue one kernel in this execution */
	double clock_scale;       /* sustained clock at the power limit over that at the TDP (1: none) */
	unsigned assumed;         /* CAPSIM_PERF_ASSUMED_* */
	capsim_gemm_cal gemm_cal[CAPSIM_CAL_DTYPES]; /* the GPU's calibration, by capsim_dtype */
} capsim_gpu_perf;

/* Defaults for a GPU, by its catalog id (h100-*, h200-*, a100-*, b200-*;
 * any other GPU takes H100's fractions, flagged in out->assumed), replaced by
 * what the GPU's profile measured (its <efficiency> element: a calibrated
 * profile, or --set cluster.gpu.efficiency.*), which clears those flags; the
 * calibrated GEMM models of g->cal are copied into out->gemm_cal.
 * execution (capsim_execution) picks the host's cost per kernel:
 * launch + dispatch eager, launch + dispatch_compiled compiled, 0 for graphs.
 * Sources and values: ops.c and docs/model.md. */
void capsim_gpu_perf_default(const capsim_gpu *g, int execution,
			     capsim_gpu_perf *out);

/* The host's per-kernel costs of node n (its cpu.launch, cpu.dispatch,
 * cpu.dispatch-compiled, where given) replace perf's, and host_kernel_s
 * follows perf->execution (the GPU's own costs, and the assumed flags, stay
 * as they were). n may be NULL (nothing changes). */
void capsim_gpu_perf_host(const capsim_node *n, capsim_gpu_perf *perf);

/* A scenario's performance model of GPU g on node n (one of its groups'):
 * capsim_gpu_perf_default at the scenario's execution, the attention
 * kernel it runs (capsim_attention_kernel) and the node's host costs. */
void capsim_gpu_perf_for(const capsim_scenario *s, const capsim_gpu *g, const capsim_node *n,
			 capsim_gpu_perf *out);

/* ---- attention ------------------------------------------------------------ */

/* The fused attention kernel a scenario runs on GPU g: workload.attention
 * when it names one (flash2, flash3, cudnn), else the framework's:
 * Transformer Engine's fused attention (cuDNN) for megatron on Hopper and
 * later, FlashAttention-2 on Ampere and for deepspeed, PyTorch SDPA's own
 * choice for torch-amp and fsdp2 (sources: ops.c). FlashAttention-3 asked of
 * a GPU that is not Hopper falls back to cuDNN's. */
int capsim_attention_kernel(const capsim_scenario *s, const capsim_gpu *g);

/* Point perf's attention at kernel's curve on GPU g: g's measured curve for
 * that kernel where its profile has one, else capsim's default for the GPU
 * (ops.c, docs/model.md "Attention"), else H100's (flagged assumed). */
void capsim_gpu_perf_attention(const capsim_gpu *g, int kernel, capsim_gpu_perf *perf);

/* Fraction of the dense bf16 peak the curve c reaches on one attention
 * kernel over seq keys per query row at head_dim, causal or not, forward
 * (bwd 0) or backward: piecewise linear in log2(seq) within each measured
 * head dim, held at the ends, and linear between the two head dims that
 * bracket head_dim (the nearest outside them); points of the other mask
 * only where the curve has none of this one. c->n > 0. */
double capsim_attention_frac(const capsim_attn_curve *c, double seq, double head_dim,
			     int causal, int bwd);

/* ---- the host stream ------------------------------------------------------ */

/* Two streams in order: the host issues kernels one after another, each
 * after its host cost; the GPU runs each once it is issued and the one
 * before it has ended. Clocks in seconds from the start of a pass. */
typedef struct capsim_stream {
	double host;  /* when the host has issued the last kernel */
	double gpu;   /* when the GPU ends the last kernel */
	double busy;  /* the GPU's kernel time so far */
} capsim_stream;

/* n >= 0 kernels of equal length, gpu_s in all, each issued host_s after
 * the one before: in closed form, the GPU ends at
 *   max(gpu + gpu_s, host + h + gpu_s, host + n h + g),
 * with h = host_s and g = gpu_s / n (the first kernel waits for its issue,
 * or the last does). n = 0 adds gpu_s to the GPU alone. */
void capsim_stream_push(capsim_stream *st, double n, double host_s, double gpu_s);

/* The shape term S(F) in (0, 1] of the GEMM efficiency, F in FLOP (clamped
 * to the measured range). */
double capsim_gemm_shape(const capsim_gpu_perf *perf, double flop);

/* Fraction of the dtype's (capsim_dtype) dense peak a GEMM of `flop` FLOP
 * reaches: gemm_sat (gemm_sat_fp8 for fp8) x S(flop); for a calibrated
 * dtype, its model at the square GEMM of that FLOP count (m = n = k =
 * (flop/2)^(1/3)). */
double capsim_gemm_efficiency(const capsim_gpu_perf *perf, int dtype,
			      double flop);

/* The same for a GEMM of shape m x n x k (all > 0): the calibrated model at
 * F = 2mnk and its arithmetic intensity where the dtype is calibrated, else
 * capsim_gemm_efficiency at 2mnk. A shape the calibration measured gets
 * capsim_gemm_cal_measured with the uncalibrated prediction (gemm_prior_sat
 * x S(F)) as the prior: never further from any of its measurements than
 * that prediction was. */
double capsim_gemm_efficiency_mnk(const capsim_gpu_perf *perf, int dtype,
				  double m, double n, double k);

/* ---- calibrated GEMM efficiency (capsim_gemm_cal, spec.h) ---------------- */

/* Bytes of one element of A and B (*in) and of C (*out) in a GEMM of dtype,
 * as capsim counts a layer's traffic: 4 for fp32 and tf32, 2 for bf16 and
 * fp16, fp8 operands of 1 byte with a 2-byte (bf16) output. */
void capsim_gemm_elem_bytes(int dtype, double *in, double *out);

/* Arithmetic intensity of an m x n x k GEMM of dtype: 2mnk over the bytes of
 * A (m x k), B (k x n) and C (m x n), FLOP per byte. */
double capsim_gemm_intensity(int dtype, double m, double n, double k);

/* The smooth part of a calibrated model: sat x T(F)/T(flop_max) x
 * U(I)/U(ai_max), F and I clamped to the measured range (spec.h). */
double capsim_gemm_cal_smooth(const capsim_gemm_cal *c, double flop,
			      double ai);

/* The square GEMMs' correction at F: a Steffen interpolation in log10 F of
 * table_ratio (GSL gsl_interp_steffen with 3 or more sizes, linear with 2,
 * the one ratio with 1), held at its end values; 1 with no table. */
double capsim_gemm_cal_table(const capsim_gemm_cal *c, double flop);

/* 1 when m, n and k are all multiples of 16 bytes' worth of dtype's input
 * elements (8 for bf16 and fp16, 4 for fp32 and tf32, 16 for fp8): what
 * cuBLAS's vectorised kernels need of every leading dimension; a GEMM with
 * GPT-2's vocabulary of 50257 in it is not. */
int capsim_gemm_aligned(int dtype, double m, double n, double k);

/* The correction c(m, n, k): the measured / smooth ratio of that shape where
 * it was measured; for another misaligned GEMM (capsim_gemm_aligned) the
 * measured misaligned ratio, where there is one; for another square GEMM
 * capsim_gemm_cal_table at 2mnk; else 1. */
double capsim_gemm_cal_correction(const capsim_gemm_cal *c, int dtype, double m,
				  double n, double k);

/* A shape that c measured (possibly several times, at rates a few percent
 * apart): of the efficiencies measured there, smooth x [shape_lo,
 * shape_hi], the one nearest prior (prior itself where it lies among them).
 * So no measurement of the shape is further from the result than from
 * prior. Returns -1 where c did not measure m x n x k. */
double capsim_gemm_cal_measured(const capsim_gemm_cal *c, int dtype, double m,
				double n, double k, double prior);

/* Fraction of the dtype's dense peak an m x n x k GEMM of dtype reaches
 * under calibration c (params > 0): smooth x correction at F = 2mnk and its
 * intensity. *clamped (may be NULL) is set to 1 when F or I lay outside the
 * measured range and was held at its end, else 0. */
double capsim_gemm_cal_eff(const capsim_gemm_cal *c, int dtype, double m,
			   double n, double k, int *clamped);

/* Time of one kernel in seconds:
 *   max(flop / (peak(dtype) x eff), bytes / (mem_bw x hbm_eff)) + launch_s,
 * launch_s the GPU-side cost of a kernel (the host's is the host stream's),
 * eff = capsim_gemm_efficiency_mnk when m, n, k > 0 (a GEMM of that shape),
 * else capsim_gemm_efficiency at flop. flop, bytes >= 0. A dtype the GPU
 * lacks (peak 0) falls back to its bf16 peak. */
double capsim_op_time_s(const capsim_gpu *g, const capsim_gpu_perf *perf,
			int dtype, double flop, double bytes, double m,
			double n, double k);

/* ---- the kernels of one transformer layer -------------------------------- */

typedef enum capsim_op_kind {
	CAPSIM_OPK_GEMM,        /* tensor-core matrix multiply */
	CAPSIM_OPK_ATTENTION,   /* fused (flash) causal attention */
	CAPSIM_OPK_ELEMENTWISE  /* norms, rotary, activations, residual adds */
} capsim_op_kind;

typedef enum capsim_layer_op {
	CAPSIM_LOP_NORM_ATTN,   /* norm before attention */
	CAPSIM_LOP_QKV,         /* fused Q, K, V projection (MLA: its projections) */
	CAPSIM_LOP_ROPE,        /* rotary embedding of q and k (rope models) */
	CAPSIM_LOP_ATTN,        /* attention core */
	CAPSIM_LOP_PROJ,        /* output projection */
	CAPSIM_LOP_RESID_ATTN,  /* residual add */
	CAPSIM_LOP_NORM_MLP,    /* norm before the MLP */
	CAPSIM_LOP_ROUTER,      /* MoE router */
	CAPSIM_LOP_FC1,         /* dense MLP (MoE: shared experts) up: h -> f, SwiGLU h -> 2f */
	CAPSIM_LOP_ACT,         /* GELU/ReLU, or SwiGLU's silu(gate) x up */
	CAPSIM_LOP_FC2,         /* down: f -> h */
	CAPSIM_LOP_EXPERT_FC1,  /* routed experts, one GEMM per local expert */
	CAPSIM_LOP_EXPERT_ACT,
	CAPSIM_LOP_EXPERT_FC2,
	CAPSIM_LOP_RESID_MLP,   /* residual add */
	CAPSIM_LOP_FP8_CAST,    /* fp8 recipes: the GEMMs' input (backward: output-gradient) casts */
	CAPSIM_LOP__COUNT
} capsim_layer_op;

/* One kernel, launched `count` times with the same shape. flop and bytes are
 * totals over the launches; m, n, k the shape of one GEMM launch (output
 * m x n, inner dimension k; attention: queries, keys, head size). An op with
 * count 0 is absent from the layer. */
typedef struct capsim_op {
	const char *name;  /* static string */
	int kind;          /* capsim_op_kind */
	double count;
	double flop;
	double bytes;      /* HBM bytes read + written */
	double m, n, k;
	/* an elementwise op whose backward is not twice its forward: the
	 * backward's totals (0: twice) */
	double bwd_flop, bwd_bytes;
	/* the share of the copy bandwidth its kernels reach (0: all of it) */
	double bw_eff;
	int backward;      /* 1: a backward kernel (capsim_layer_backward) */
} capsim_op;

/* The kernels of one layer for one micro-batch on one GPU. */
typedef struct capsim_layer_work {
	capsim_op op[CAPSIM_LOP__COUNT];
	double tokens;     /* T = micro_batch x seq_len / cp, this GPU's queries */
	double flop;       /* sum over ops */
	double bytes;
	int backward;      /* 0: forward, 1: backward (capsim_layer_backward) */
} capsim_layer_work;

/* Forward kernels of transformer layer `layer` (0-based; MoE or dense as the
 * model says) for one micro-batch on one GPU, Megatron style: projections and
 * MLP split over TP (column- then row-parallel), heads split over TP; the
 * sequence split over CP for queries while keys and values span the whole
 * sequence (ring attention, load-balanced so each rank sees s/2 keys per
 * query on average); norms and residual adds on T/tp tokens with sequence
 * parallelism, on T without. MoE: tokens spread evenly over experts (each
 * local expert gets T x ep x top_k / experts tokens), experts split over EP
 * and each over TP. Elements are 2 bytes (bf16/fp16), 4 (fp32/tf32); fp8
 * GEMMs read 1-byte operands and write 2-byte outputs, and their operands'
 * casts are an op of their own (CAPSIM_LOP_FP8_CAST: docs/model.md, "FP8
 * casts"). */
void capsim_layer_forward(const capsim_scenario *s, int layer,
			  capsim_layer_work *out);

/* Backward of a forward layer: GEMMs twice the launches and FLOPs (dgrad and
 * wgrad, each the forward's size); fused attention 2.5x the FLOPs (Dao 2023,
 * FlashAttention-2: 5 matmuls against the forward's 2) and 2x the bytes;
 * elementwise ops 2x bytes and FLOPs in one kernel each. */
void capsim_layer_backward(const capsim_layer_work *fwd,
			   capsim_layer_work *bwd);

/* Time of one op (all its launches) in seconds: GEMMs by capsim_op_time_s;
 * attention at attn_frac x S(flop per launch) of peak; elementwise ops at
 * the GPU's fp32 (non-tensor) peak, in practice bound by bytes. */
double capsim_layer_op_time_s(const capsim_gpu *g, const capsim_gpu_perf *perf,
			      int dtype, const capsim_op *op);

/* Sum of capsim_layer_op_time_s over the layer's ops, in seconds. */
double capsim_layer_time_s(const capsim_gpu *g, const capsim_gpu_perf *perf,
			   int dtype, const capsim_layer_work *w);

/* ---- fitting the GEMM efficiency ----------------------------------------- */

/* Least-squares fit (GSL gsl_multifit_nlinear, trust region,
 * Levenberg-Marquardt) of frac_i = sat / (1 + (f0 / flop_i)^p) to n >= 4
 * points, flop_i > 0, frac_i in (0, 1]. Parameters are fitted as (sat,
 * log10 f0, p) from (0.7, 10, 1.5). Fills sat, f0, p and the residuals'
 * root mean square (in fraction of peak) and largest |residual|. Turns GSL's
 * error handler off. Returns 0, or a GSL error code (gsl_errno.h): GSL_EINVAL
 * for bad input, GSL_ENOMEM, or the solver's failure. */
typedef struct capsim_gemm_fit {
	double sat, f0_flop, p;
	double rms, max_abs;
	size_t iterations;
} capsim_gemm_fit;

int capsim_gemm_fit_curve(const double *flop, const double *frac, size_t n,
			  capsim_gemm_fit *out);

/* The constants ops.c records from that fit (tests/bench/fit_gemm.c on
 * tests/data/reference/gemm.csv), for the test that re-runs it. */
extern const capsim_gemm_fit capsim_gemm_fitted;

#endif
