/* ops.c - GPU compute: FLOP accounting, the kernels of a layer and op time;
 * see ops.h and docs/model.md ("GPU compute: FLOPs and op time"). */
#include "ops.h"

#include "memory.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_interp.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>

/* Widths of attention per token (all heads, before TP): q_dim and k_dim
 * (query/key projections), v_dim (value projection), o_dim (the attention
 * output, heads x value head size, input of the output projection). GQA:
 * k_dim = v_dim = kv_heads x head_dim. MLA: decompressed per-head keys and
 * values, as memory.c counts them. */
static void attn_dims(const capsim_model *m, double *q, double *k, double *v,
		      double *o)
{
	double hd = capsim_model_head_dim(m);
	double kv = m->kv_heads ? m->kv_heads : m->heads;
	*q = m->heads * hd;
	*o = *q;
	*k = *v = kv * hd;
	if (m->mla_kv_lora_rank) {
		double qk = m->mla_qk_nope_head_dim + m->mla_qk_rope_head_dim;
		*q = *k = m->heads * qk;
		*v = *o = m->heads * (double)m->mla_v_head_dim;
	}
}

/* ---- FLOP accounting ---------------------------------------------------- */

/* Causal attention per token and layer. In the forward pass the query at
 * position i (1..s) scores i keys: QK^T costs 2 q_dim i FLOP (a dot product
 * of q_dim/heads elements per head and key, over all heads), and the
 * weighted sum of values AV costs 2 o_dim i. Averaged over the sequence i is
 * s/2 (the convention; exactly (s+1)/2), so the forward costs
 * 2 (s/2) (q_dim + o_dim) = s (q_dim + o_dim), and training (forward,
 * backward for inputs, backward for weights: 3x, as for the 6N rule) costs
 * 3 s (q_dim + o_dim). With q_dim = o_dim = h this is 6 s h per layer, half
 * of PaLM's non-causal 12 s h (Chowdhery et al. 2022, App. B). */
double capsim_flops_per_token(const capsim_model *m, int seq_len, int active)
{
	double n = 0.0, q, k, v, o;
	attn_dims(m, &q, &k, &v, &o);
	double routed = active ? m->moe_top_k : m->moe_experts, keys = 0.0;
	for (int l = 0; l < m->layers; l++) {
		capsim_layer_params p;
		capsim_model_layer_params(m, l, &p);
		n += p.attention + p.mlp + p.norms + p.shared + p.router +
		     (p.moe ? routed * p.expert : 0.0);
		/* s/2, or a sliding window's mean span (capsim_model_attn_keys) */
		keys += capsim_model_attn_keys(m, l, seq_len);
	}
	/* the LM head multiplies by a vocab x hidden matrix (tied or not); the
	 * input embedding is a lookup and costs no FLOPs */
	n += (double)m->vocab * m->hidden + m->hidden /* final norm */;
	return 6.0 * n + 6.0 * keys * (q + o);
}

double capsim_flops_megatron(int layers, int hidden, int seq, int vocab,
			     double batch_seqs)
{
	double l = layers, h = hidden, s = seq, V = vocab;
	return 96.0 * batch_seqs * s * l * h * h *
	       (1.0 + s / (6.0 * h) + V / (16.0 * l * h));
}

/* Megatron-LM megatron/training/training.py, num_floating_point_operations:
 * core_v0.8.0 (as at f2e5db402c, the README's H100 table) and from
 * 8873b55d6a on. Per token, x3 (forward, dgrad, wgrad) x2 (multiply-add). */
double capsim_flops_megatron_core(const capsim_model *m, int seq,
				  double batch_seqs, int version)
{
	double h = m->hidden, s = seq, heads = m->heads;
	double c = version == CAPSIM_MCORE_FLOPS_2025 ? 0.5 : 1.0; /* causal */
	double attn;
	if (m->mla_kv_lora_rank) {
		double qk = m->mla_qk_nope_head_dim + m->mla_qk_rope_head_dim;
		double vh = m->mla_v_head_dim;
		double qr = m->mla_q_lora_rank;
		double q_term = qr > 0 ? qr * (h + heads * qk + 1.0) : h * heads * qk;
		attn = q_term +
		       m->mla_kv_lora_rank * (h + heads * (m->mla_qk_nope_head_dim + vh) + 1.0) +
		       h * m->mla_qk_rope_head_dim + heads * vh * h +
		       c * s * heads * qk + c * s * heads * vh;
	} else {
		double hd = capsim_model_head_dim(m);
		double q = hd * heads;
		double kv = hd * (m->kv_heads ? m->kv_heads : m->heads);
		/* projections, then QK^T and AV both of q width */
		attn = h * (q + 2.0 * kv) + 2.0 * c * q * s + q * h;
	}
	double gated = m->activation == CAPSIM_ACT_SWIGLU ? 3.0 : 2.0;
	double moe_ffn = (double)m->moe_expert_ffn * m->moe_top_k +
			 (double)m->moe_shared_experts * m->moe_expert_ffn;
	double mlp = 0.0;
	for (int l = 0; l < m->layers; l++) {
		int moe = m->moe_experts != 0;
		if (version == CAPSIM_MCORE_FLOPS_2025)
			moe = moe && l >= m->moe_dense_layers;
		mlp += h * gated * (moe ? moe_ffn : m->ffn);
	}
	double per_token = m->layers * attn + mlp + h * m->vocab;
	return 6.0 * batch_seqs * s * per_token;
}

/* ---- GPU performance model ---------------------------------------------- */

/* The GEMM shape term S(F) = 1 / (1 + (f0/F)^p), fitted by
 * tests/bench/fit_gemm.c (capsim_gemm_fit_curve) to the 12 square FP8
 * cuBLASLt rows of tests/data/reference/gemm.csv (m = n = k = 1024 ... 32768
 * on H100 80GB and H200 141GB, Azure ND H100 v5 / ND H200 v5, CUDA 12.6,
 * github:Azure/AI-benchmarking-guide 'Azure Results/NDv5 Results.md'),
 * fraction = achieved TFLOP/s / 1979. The measured FLOP range is 2 x 1024^3
 * = 2.147e9 to 2 x 32768^3 = 7.037e13; S is held at its ends outside it.
 * Residuals of the fit (fraction of the fp8 peak): see capsim_gemm_fitted's
 * rms and max_abs, and docs/model.md for the table. */
/* Output of `fit_gemm` (14 iterations), fraction of the fp8 peak 1979:
 *   m = n = k   H100 meas  H200 meas  model   residuals (model - meas)
 *    1024        0.1385     0.1469    0.1483  +0.0098 +0.0014
 *    2048        0.5110     0.5121    0.5016  -0.0094 -0.0105
 *    4096        0.6149     0.6312    0.6515  +0.0366 +0.0203
 *    8192        0.6519     0.6572    0.6708  +0.0189 +0.0136
 *   16384        0.6960     0.6904    0.6728  -0.0232 -0.0176
 *   32768        0.6984     0.6819    0.6730  -0.0255 -0.0089
 * rms 0.0186, largest 0.0366 (6% of the 4096^3 value). */
#define GEMM_FIT_SAT 0.672982
#define GEMM_FIT_F0 6.60791e+09
#define GEMM_FIT_P 1.12402
#define GEMM_FIT_RMS 0.0186
#define GEMM_FIT_MAX 0.0366
const capsim_gemm_fit capsim_gemm_fitted = {
	.sat = GEMM_FIT_SAT,
	.f0_flop = GEMM_FIT_F0,
	.p = GEMM_FIT_P,
	.rms = GEMM_FIT_RMS,
	.max_abs = GEMM_FIT_MAX,
	.iterations = 14,
};

#define GEMM_FLOP_MIN (2.0 * 1024.0 * 1024.0 * 1024.0)
#define GEMM_FLOP_MAX (2.0 * 32768.0 * 32768.0 * 32768.0)

/* Per-GPU measured fractions, by catalog id prefix.
 * sat: best bf16 GEMM (torch.matmul, brute-force shape search, "MAMF") over
 *   the datasheet dense bf16 peak, github:stas00/ml-engineering
 *   compute/accelerator/README.md@744d01e (rows in tests/data/reference/
 *   gemm.csv). H200 uses the GH200 row (same GH100 die and 141 GB HBM3e,
 *   but a 900 W part against the H200's 700 W: an assumption; the H100 row's
 *   0.803 is the other candidate). MI300X: the same table's BF16 row.
 *   GB200: its own row (1822 of 2500 TFLOP/s, below B200's 77.6%: the
 *   GB200's GPU is the B200's die run at a higher peak).
 * fp8: the same README's FP8 (float8_e4m3fn) MAMF table over the dense fp8
 *   peak, where it has a row (B200 3432.5/4500, GB200 3615.6/5000); 0: none.
 *   Used relative to that table's H100 row (1402.6/1979), which the fitted
 *   fp8 curve anchors: Blackwell's FP8 GEMMs reach nearly its bf16 fraction
 *   (B200 76.3% against 77.6%), Hopper's a smaller one (70.9% against 80.3%).
 * hbm: BabelStream Copy over datasheet bandwidth, Azure AI-benchmarking-guide
 *   (H100 2.90/3.35 TB/s, H200 4.01/4.8 TB/s: 'Azure Results/NDv5 Results.md';
 *   A100 80GB 1.61/2.039 TB/s: 'Azure_Results/ND_A100_v4_results.md').
 * Attention has its own curves (attention section below). */
/* H100's fp8 GEMMs against its bf16 ones, the same shapes on the same
 * GPU: the efficiency (achieved over the dense peak of each dtype) of fp8
 * over bf16, time-weighted over the 48 GEMMs of four Llama 3.1 layers as
 * Megatron runs them (8B at TP 1, 70B at TP 4 with 4096 and 8192 tokens,
 * 405B at TP 8: QKV, output projection, FC1 and FC2, each fprop, dgrad and
 * wgrad), measured on an H100 SXM with torch.matmul and torch._scaled_mm
 * (cuBLASLt, PyTorch 2.11, CUDA 13.0: calibrate/torch/gemm_shapes.py,
 * calibrate/results/h100-2026-12-05c-gemm-shapes.jsonl). The fp8 GEMMs
 * accumulate as Transformer Engine and torchao run them: fast in the
 * forward GEMM, split (promoted to fp32 at intervals) in dgrad and wgrad
 * (TE's _2X_ACC_FPROP = False, _2X_ACC_DGRAD = _2X_ACC_WGRAD = True,
 * github:NVIDIA/TransformerEngine transformer_engine/pytorch/module/
 * base.py; torchao's Float8LinearConfig, github:pytorch/ao
 * torchao/float8/config.py). Measured: 0.9046 (per model 0.870 to 0.932;
 * 0.8843 with every GEMM split); the MAMF table's H100 rows, best shapes
 * each, give 0.883. The square cuBLASLt curve's asymptote over the MAMF bf16
 * row, 0.673 / 0.803 = 0.838, came from two machines and two benchmarks and
 * made fp8 GEMMs 7% slower against bf16 than the layer's GEMMs run.
 * The H200 keeps the fitted asymptote: the one measurement of its fp8
 * GEMMs against bf16 on the same shapes, capsim-calibrate-gemm's (cuBLASLt's
 * first heuristic, CUDA 12, calibrate/results/h200-2026-12-02-gemm.jsonl),
 * reads a lower ratio, 0.59 to 0.89 (median 0.80) over 13 shapes, which the asymptote
 * matches; whether the H200 under PyTorch's cuBLASLt reaches H100's ratio is
 * not measured. */
#define H100_FP8_OVER_BF16 0.9046

typedef struct perf_row {
	const char *prefix;
	double sat;
	double hbm;  /* 0: take H100's, flagged */
	double fp8;  /* FP8 MAMF over the fp8 peak; 0: none measured */
} perf_row;

static const perf_row perf_rows[] = {
	{ "h100", 794.5 / 989.0, 2.90 / 3.35, 1402.6 / 1979.0 },
	{ "h200", 828.6 / 989.0, 4.01 / 4.8, 1453.4 / 1979.0 },
	{ "a100", 271.2 / 312.0, 1.61 / 2.039, 0.0 },
	{ "b200", 1745.0 / 2250.0, 0.0, 3432.5 / 4500.0 },
	{ "gb200", 1822.0 / 2500.0, 0.0, 3615.6 / 5000.0 },
	/* the same table's v2 BF16 row, ROCm 6.3, PYTORCH_TUNABLEOP_ENABLED=1 */
	{ "mi300x", 668.4 / 1300.0, 0.0, 0.0 },
};

/* A bare kernel launch from PyTorch, 5 us: pytorch/pytorch issue #82793
 * (4 us per op, A100), flagos-ai/Torch-FL PR #27 (8 us per op submitted,
 * A100), meta-pytorch/tritonbench PR #1017 (3.0 us for a bare
 * cuLaunchKernel, GB200); calibrate/torch measured 7.12 us on an H200
 * SXM machine's host (its profile carries that). On the GPU, what a step takes
 * beyond its kernels' summed durations, per kernel, where the host is well
 * ahead (calibrate/results/h200-2026-12-0{2,4}-*step*.jsonl): replayed from
 * a CUDA graph, 0.62 us (median of 10 points, -0.66 to 0.87; ahrefs/ocannl
 * issue #488 found 0.58 us on an RTX 5070 Ti); launched from a stream,
 * 3.9 us (median of 16 eager points whose host issue took under half the
 * step, -0.05 to 6.6 us). The measured H200 only: assumptions elsewhere.
 *
 * The framework's host work per kernel beyond the launch: the median over
 * every eager point of calibrate/results/h200-2026-12-02-gpt2-step-{a,b,c,
 * pad50304}.jsonl and h200-2026-12-04-host-steps.jsonl of the host's issue
 * time over the step's kernels (54 points, GPT-2 124M and 355M, Llama 3 8B
 * and GPT-3 6.7B blocks: 21.5 to 63.9 us, median 43.52 us) less the
 * default bare launch, 5 us, so that the two add up to the measured median:
 * 38.5 us. torch.compile, the five compiled points (25.9 to 40.6 us, median
 * 37.08): 32.1 us. (The measured host's own launch, 7.12 us, and dispatch,
 * 36.4 us, are its profile's.) Measured on one host
 * (the measured H200's, 16 vCPUs of an Intel Xeon), so an assumption for any
 * other; the spread between points is the host's (docs/validation.md). */
#define LAUNCH_EAGER_S 5e-6
#define LAUNCH_GRAPH_S 0.62e-6
#define KERNEL_GAP_S 3.9e-6
#define DISPATCH_S 38.5e-6
#define DISPATCH_COMPILED_S 32.1e-6

/* ---- attention ----------------------------------------------------------- */

/* Default attention curves, by GPU and kernel: published measurements, in
 * FLOP/s as FlashAttention's benchmarks count them (docs/model.md,
 * "Attention", lists each with its source). */
typedef struct attn_default {
	const char *prefix; /* GPU ids it serves */
	int kernel;
	capsim_attn_curve curve;
} attn_default;

#define TF 1e12
/* Each curve's points are in tests/data/reference/attention.csv with the
 * figure or file they come from; unit/test_ops checks every one of them
 * against the lookup.
 * - H100 (flash2, flash3, cudnn 9.1): the FlashAttention-3 paper (Shah et
 *   al. 2024, arXiv:2407.08608), Fig. 5 (forward, head dim 64/128/256,
 *   causal and not) and Fig. 6 (backward without the mask, head dim 64 and
 *   128), batch x seq = 16k tokens, hidden 2048, clocks locked at 1830 MHz.
 *   The paper has no causal backward: it is the unmasked backward times the
 *   forward's causal/unmasked ratio at the same length and head dim
 *   (assumption; in cuDNN's H200 rows below, which have both, the backward's
 *   ratio is the forward's within 5% from 2k to 32k).
 *   Head dim 256 has no backward: the lookup takes 128's.
 * - A100 flash2: the FlashAttention-2 paper (Dao 2023, arXiv:2307.08691)
 *   Fig. 4, forward + backward as one rate for both passes.
 * - H200 cudnn 9.19: github:NVIDIA/cudnn-frontend@3929da2
 *   benchmark/sdpa_benchmark_training/results/h200_919_only_cudnn (Llama
 *   3.1 shapes: batch 1, 64 query heads on 8, head dim 128).
 * - B200 (cudnn 9.10 and flash2 through PyTorch SDPA, causal, batch 1, 128
 *   query heads on 8): github:NVIDIA/cudnn-frontend@f937055
 *   benchmark/sdpa_benchmark_bf16_training/artifacts/
 *   sdpa_benchmark_results_NVIDIA_B200.csv.
 * - GB200 (cudnn 9.17 and flash2, causal): github:NVIDIA/cudnn-frontend@b372d39
 *   benchmark/sdpa_benchmark_training/artifacts/
 *   sdpa_bf16_benchmark_results_NVIDIA_GB200.csv; unmasked cudnn 9.22:
 *   @3929da2 .../results/llama3.1/gb200.
 * A zero rate: that pass not measured at that point. */
static const attn_default attn_defaults[] = {
/* h100 flash2: 36 points */
	{ "h100", CAPSIM_ATTN_FLASH2, { 36, 989.4 * TF, {
		{ 512, 64, 0, 282.0 * TF, 198.0 * TF },
		{ 1024, 64, 0, 306.0 * TF, 238.0 * TF },
		{ 2048, 64, 0, 318.0 * TF, 264.0 * TF },
		{ 4096, 64, 0, 321.0 * TF, 279.0 * TF },
		{ 8192, 64, 0, 322.0 * TF, 287.0 * TF },
		{ 16384, 64, 0, 324.0 * TF, 291.0 * TF },
		{ 512, 128, 0, 309.0 * TF, 214.0 * TF },
		{ 1024, 128, 0, 350.0 * TF, 260.0 * TF },
		{ 2048, 128, 0, 362.0 * TF, 291.0 * TF },
		{ 4096, 128, 0, 368.0 * TF, 310.0 * TF },
		{ 8192, 128, 0, 370.0 * TF, 318.0 * TF },
		{ 16384, 128, 0, 370.0 * TF, 322.0 * TF },
		{ 512, 256, 0, 275.0 * TF, 0.0 * TF },
		{ 1024, 256, 0, 313.0 * TF, 0.0 * TF },
		{ 2048, 256, 0, 321.0 * TF, 0.0 * TF },
		{ 4096, 256, 0, 323.0 * TF, 0.0 * TF },
		{ 8192, 256, 0, 324.0 * TF, 0.0 * TF },
		{ 16384, 256, 0, 326.0 * TF, 0.0 * TF },
		{ 512, 64, 1, 180.0 * TF, 126.4 * TF },
		{ 1024, 64, 1, 229.0 * TF, 178.1 * TF },
		{ 2048, 64, 1, 262.0 * TF, 217.5 * TF },
		{ 4096, 64, 1, 284.0 * TF, 246.8 * TF },
		{ 8192, 64, 1, 295.0 * TF, 262.9 * TF },
		{ 16384, 64, 1, 299.0 * TF, 268.5 * TF },
		{ 512, 128, 1, 191.0 * TF, 132.3 * TF },
		{ 1024, 128, 1, 260.0 * TF, 193.1 * TF },
		{ 2048, 128, 1, 298.0 * TF, 239.6 * TF },
		{ 4096, 128, 1, 319.0 * TF, 268.7 * TF },
		{ 8192, 128, 1, 333.0 * TF, 286.2 * TF },
		{ 16384, 128, 1, 335.0 * TF, 291.5 * TF },
		{ 512, 256, 1, 208.0 * TF, 0.0 * TF },
		{ 1024, 256, 1, 251.0 * TF, 0.0 * TF },
		{ 2048, 256, 1, 278.0 * TF, 0.0 * TF },
		{ 4096, 256, 1, 293.0 * TF, 0.0 * TF },
		{ 8192, 256, 1, 297.0 * TF, 0.0 * TF },
		{ 16384, 256, 1, 298.0 * TF, 0.0 * TF },
	} } },
/* h100 flash3: 36 points */
	{ "h100", CAPSIM_ATTN_FLASH3, { 36, 989.4 * TF, {
		{ 512, 64, 0, 333.0 * TF, 272.0 * TF },
		{ 1024, 64, 0, 392.0 * TF, 363.0 * TF },
		{ 2048, 64, 0, 460.0 * TF, 422.0 * TF },
		{ 4096, 64, 0, 476.0 * TF, 453.0 * TF },
		{ 8192, 64, 0, 496.0 * TF, 472.0 * TF },
		{ 16384, 64, 0, 497.0 * TF, 474.0 * TF },
		{ 512, 128, 0, 467.0 * TF, 316.0 * TF },
		{ 1024, 128, 0, 565.0 * TF, 424.0 * TF },
		{ 2048, 128, 0, 625.0 * TF, 501.0 * TF },
		{ 4096, 128, 0, 638.0 * TF, 542.0 * TF },
		{ 8192, 128, 0, 646.0 * TF, 559.0 * TF },
		{ 16384, 128, 0, 648.0 * TF, 561.0 * TF },
		{ 512, 256, 0, 482.0 * TF, 0.0 * TF },
		{ 1024, 256, 0, 627.0 * TF, 0.0 * TF },
		{ 2048, 256, 0, 707.0 * TF, 0.0 * TF },
		{ 4096, 256, 0, 736.0 * TF, 0.0 * TF },
		{ 8192, 256, 0, 746.0 * TF, 0.0 * TF },
		{ 16384, 256, 0, 756.0 * TF, 0.0 * TF },
		{ 512, 64, 1, 197.0 * TF, 160.9 * TF },
		{ 1024, 64, 1, 265.0 * TF, 245.4 * TF },
		{ 2048, 64, 1, 371.0 * TF, 340.4 * TF },
		{ 4096, 64, 1, 420.0 * TF, 399.7 * TF },
		{ 8192, 64, 1, 460.0 * TF, 437.7 * TF },
		{ 16384, 64, 1, 473.0 * TF, 451.1 * TF },
		{ 512, 128, 1, 292.0 * TF, 197.6 * TF },
		{ 1024, 128, 1, 423.0 * TF, 317.4 * TF },
		{ 2048, 128, 1, 521.0 * TF, 417.6 * TF },
		{ 4096, 128, 1, 579.0 * TF, 491.9 * TF },
		{ 8192, 128, 1, 602.0 * TF, 520.9 * TF },
		{ 16384, 128, 1, 616.0 * TF, 533.3 * TF },
		{ 512, 256, 1, 286.0 * TF, 0.0 * TF },
		{ 1024, 256, 1, 427.0 * TF, 0.0 * TF },
		{ 2048, 256, 1, 537.0 * TF, 0.0 * TF },
		{ 4096, 256, 1, 612.0 * TF, 0.0 * TF },
		{ 8192, 256, 1, 628.0 * TF, 0.0 * TF },
		{ 16384, 256, 1, 642.0 * TF, 0.0 * TF },
	} } },
/* h100 cudnn: 36 points */
	{ "h100", CAPSIM_ATTN_CUDNN, { 36, 989.4 * TF, {
		{ 512, 64, 0, 335.0 * TF, 266.0 * TF },
		{ 1024, 64, 0, 373.0 * TF, 348.0 * TF },
		{ 2048, 64, 0, 395.0 * TF, 395.0 * TF },
		{ 4096, 64, 0, 408.0 * TF, 417.0 * TF },
		{ 8192, 64, 0, 412.0 * TF, 432.0 * TF },
		{ 16384, 64, 0, 413.0 * TF, 433.0 * TF },
		{ 512, 128, 0, 497.0 * TF, 305.0 * TF },
		{ 1024, 128, 0, 574.0 * TF, 408.0 * TF },
		{ 2048, 128, 0, 617.0 * TF, 465.0 * TF },
		{ 4096, 128, 0, 609.0 * TF, 499.0 * TF },
		{ 8192, 128, 0, 600.0 * TF, 518.0 * TF },
		{ 16384, 128, 0, 595.0 * TF, 516.0 * TF },
		{ 512, 256, 0, 470.0 * TF, 0.0 * TF },
		{ 1024, 256, 0, 546.0 * TF, 0.0 * TF },
		{ 2048, 256, 0, 580.0 * TF, 0.0 * TF },
		{ 4096, 256, 0, 581.0 * TF, 0.0 * TF },
		{ 8192, 256, 0, 580.0 * TF, 0.0 * TF },
		{ 16384, 256, 0, 581.0 * TF, 0.0 * TF },
		{ 512, 64, 1, 225.0 * TF, 178.7 * TF },
		{ 1024, 64, 1, 288.0 * TF, 268.7 * TF },
		{ 2048, 64, 1, 334.0 * TF, 334.0 * TF },
		{ 4096, 64, 1, 363.0 * TF, 371.0 * TF },
		{ 8192, 64, 1, 379.0 * TF, 397.4 * TF },
		{ 16384, 64, 1, 388.0 * TF, 406.8 * TF },
		{ 512, 128, 1, 315.0 * TF, 193.3 * TF },
		{ 1024, 128, 1, 410.0 * TF, 291.4 * TF },
		{ 2048, 128, 1, 484.0 * TF, 364.8 * TF },
		{ 4096, 128, 1, 518.0 * TF, 424.4 * TF },
		{ 8192, 128, 1, 529.0 * TF, 456.7 * TF },
		{ 16384, 128, 1, 539.0 * TF, 467.4 * TF },
		{ 512, 256, 1, 308.0 * TF, 0.0 * TF },
		{ 1024, 256, 1, 391.0 * TF, 0.0 * TF },
		{ 2048, 256, 1, 450.0 * TF, 0.0 * TF },
		{ 4096, 256, 1, 483.0 * TF, 0.0 * TF },
		{ 8192, 256, 1, 497.0 * TF, 0.0 * TF },
		{ 16384, 256, 1, 509.0 * TF, 0.0 * TF },
	} } },
/* a100 flash2: 23 points */
	{ "a100", CAPSIM_ATTN_FLASH2, { 23, 312.0 * TF, {
		{ 512, 64, 0, 132.0 * TF, 132.0 * TF },
		{ 1024, 64, 0, 153.0 * TF, 153.0 * TF },
		{ 2048, 64, 0, 162.0 * TF, 162.0 * TF },
		{ 4096, 64, 0, 171.0 * TF, 171.0 * TF },
		{ 8192, 64, 0, 175.0 * TF, 175.0 * TF },
		{ 16384, 64, 0, 176.0 * TF, 176.0 * TF },
		{ 1024, 128, 0, 173.0 * TF, 173.0 * TF },
		{ 2048, 128, 0, 187.0 * TF, 187.0 * TF },
		{ 4096, 128, 0, 196.0 * TF, 196.0 * TF },
		{ 8192, 128, 0, 201.0 * TF, 201.0 * TF },
		{ 16384, 128, 0, 203.0 * TF, 203.0 * TF },
		{ 512, 64, 1, 88.0 * TF, 88.0 * TF },
		{ 1024, 64, 1, 119.0 * TF, 119.0 * TF },
		{ 2048, 64, 1, 140.0 * TF, 140.0 * TF },
		{ 4096, 64, 1, 156.0 * TF, 156.0 * TF },
		{ 8192, 64, 1, 165.0 * TF, 165.0 * TF },
		{ 16384, 64, 1, 171.0 * TF, 171.0 * TF },
		{ 512, 128, 1, 99.0 * TF, 99.0 * TF },
		{ 1024, 128, 1, 133.0 * TF, 133.0 * TF },
		{ 2048, 128, 1, 155.0 * TF, 155.0 * TF },
		{ 4096, 128, 1, 173.0 * TF, 173.0 * TF },
		{ 8192, 128, 1, 182.0 * TF, 182.0 * TF },
		{ 16384, 128, 1, 189.0 * TF, 189.0 * TF },
	} } },
/* h200 cudnn: 10 points */
	{ "h200", CAPSIM_ATTN_CUDNN, { 10, 989.5 * TF, {
		{ 2048, 128, 0, 633.0 * TF, 504.0 * TF },
		{ 4096, 128, 0, 671.0 * TF, 560.0 * TF },
		{ 8192, 128, 0, 691.0 * TF, 594.0 * TF },
		{ 16384, 128, 0, 702.0 * TF, 612.0 * TF },
		{ 32768, 128, 0, 693.0 * TF, 572.0 * TF },
		{ 2048, 128, 1, 484.0 * TF, 370.0 * TF },
		{ 4096, 128, 1, 591.0 * TF, 474.0 * TF },
		{ 8192, 128, 1, 644.0 * TF, 541.0 * TF },
		{ 16384, 128, 1, 673.0 * TF, 579.0 * TF },
		{ 32768, 128, 1, 688.0 * TF, 581.0 * TF },
	} } },
/* b200 cudnn: 9 points */
	{ "b200", CAPSIM_ATTN_CUDNN, { 9, 2250.0 * TF, {
		{ 512, 128, 1, 66.3 * TF, 43.5 * TF },
		{ 1024, 128, 1, 216.1 * TF, 178.1 * TF },
		{ 2048, 128, 1, 525.5 * TF, 383.7 * TF },
		{ 4096, 128, 1, 897.3 * TF, 709.1 * TF },
		{ 8192, 128, 1, 1211.1 * TF, 945.4 * TF },
		{ 16384, 128, 1, 1358.6 * TF, 1074.5 * TF },
		{ 32768, 128, 1, 1435.1 * TF, 1132.4 * TF },
		{ 65536, 128, 1, 1429.0 * TF, 1074.5 * TF },
		{ 131072, 128, 1, 1348.7 * TF, 1037.9 * TF },
	} } },
/* b200 flash2: 9 points */
	{ "b200", CAPSIM_ATTN_FLASH2, { 9, 2250.0 * TF, {
		{ 512, 128, 1, 60.6 * TF, 41.8 * TF },
		{ 1024, 128, 1, 147.3 * TF, 111.9 * TF },
		{ 2048, 128, 1, 251.0 * TF, 194.7 * TF },
		{ 4096, 128, 1, 327.6 * TF, 266.4 * TF },
		{ 8192, 128, 1, 376.1 * TF, 309.2 * TF },
		{ 16384, 128, 1, 397.0 * TF, 331.0 * TF },
		{ 32768, 128, 1, 406.4 * TF, 342.0 * TF },
		{ 65536, 128, 1, 410.7 * TF, 346.5 * TF },
		{ 131072, 128, 1, 412.0 * TF, 347.3 * TF },
	} } },
/* gb200 cudnn: 14 points */
	{ "gb200", CAPSIM_ATTN_CUDNN, { 14, 2500.0 * TF, {
		{ 2048, 128, 0, 1433.0 * TF, 1124.0 * TF },
		{ 4096, 128, 0, 1599.0 * TF, 1350.0 * TF },
		{ 8192, 128, 0, 1771.0 * TF, 1404.0 * TF },
		{ 16384, 128, 0, 1697.0 * TF, 1374.0 * TF },
		{ 32768, 128, 0, 1634.0 * TF, 1262.0 * TF },
		{ 512, 128, 1, 408.0 * TF, 329.0 * TF },
		{ 1024, 128, 1, 733.0 * TF, 527.0 * TF },
		{ 2048, 128, 1, 1069.0 * TF, 655.0 * TF },
		{ 4096, 128, 1, 1386.0 * TF, 1054.0 * TF },
		{ 8192, 128, 1, 1584.0 * TF, 1211.0 * TF },
		{ 16384, 128, 1, 1668.0 * TF, 1304.0 * TF },
		{ 32768, 128, 1, 1681.0 * TF, 1348.0 * TF },
		{ 65536, 128, 1, 1573.0 * TF, 1229.0 * TF },
		{ 131072, 128, 1, 1467.0 * TF, 1188.0 * TF },
	} } },
/* gb200 flash2: 9 points */
	{ "gb200", CAPSIM_ATTN_FLASH2, { 9, 2500.0 * TF, {
		{ 512, 128, 1, 163.0 * TF, 146.0 * TF },
		{ 1024, 128, 1, 255.0 * TF, 207.0 * TF },
		{ 2048, 128, 1, 336.0 * TF, 268.0 * TF },
		{ 4096, 128, 1, 387.0 * TF, 311.0 * TF },
		{ 8192, 128, 1, 414.0 * TF, 338.0 * TF },
		{ 16384, 128, 1, 430.0 * TF, 352.0 * TF },
		{ 32768, 128, 1, 438.0 * TF, 360.0 * TF },
		{ 65536, 128, 1, 442.0 * TF, 363.0 * TF },
		{ 131072, 128, 1, 444.0 * TF, 363.0 * TF },
	} } },
};
#undef TF

static const capsim_attn_curve *attn_default_curve(const char *id, int kernel)
{
	for (size_t i = 0; i < sizeof attn_defaults / sizeof attn_defaults[0]; i++) {
		const attn_default *d = &attn_defaults[i];
		if (d->kernel == kernel && strncmp(id, d->prefix, strlen(d->prefix)) == 0)
			return &d->curve;
	}
	return NULL;
}

/* The framework's kernel. Transformer Engine (megatron: Megatron-LM and
 * NeMo) "prefers cuDNN flash attention on Hopper+ architectures, and Tri
 * Dao flash attention on Ampere" (NeMo docs, memory_optimizations.rst,
 * github:NVIDIA/NeMo pull 9188, 2024). PyTorch's SDPA (torch-amp, fsdp2)
 * picks cuDNN's "Fused Flash Attention" by default on H100 and newer since
 * 2.5 (pytorch.org/blog/pytorch2-5), FlashAttention-2 before that and on
 * Ampere. DeepSpeed models come from Hugging Face with flash-attn 2
 * (attn_implementation="flash_attention_2"): an assumption. Older stacks
 * name their kernel (workload.attention="flash2"): the Megatron-LM README's
 * H100 runs of 2024 fit at an rms log error of 0.056 with FlashAttention-2's
 * curve and 0.077 with cuDNN's (docs/validation.md). */
static int gpu_is_ampere(const capsim_gpu *g)
{
	return strcmp(capsim_gpu_generation(g), "ampere") == 0;
}

static int gpu_is_hopper(const capsim_gpu *g)
{
	return strcmp(capsim_gpu_generation(g), "hopper") == 0;
}

static int attn_kernel_of_gpu(const capsim_gpu *g, int framework)
{
	if (gpu_is_ampere(g) || framework == CAPSIM_FW_DEEPSPEED)
		return CAPSIM_ATTN_FLASH2;
	return CAPSIM_ATTN_CUDNN; /* Transformer Engine's and PyTorch SDPA's */
}

void capsim_gpu_perf_for(const capsim_scenario *s, const capsim_gpu *g, const capsim_node *n,
			 capsim_gpu_perf *out)
{
	capsim_gpu_perf_default(g, s->execution, out);
	capsim_gpu_perf_attention(g, capsim_attention_kernel(s, g), out);
	capsim_gpu_perf_host(n, out);
}

int capsim_attention_kernel(const capsim_scenario *s, const capsim_gpu *g)
{
	int k;
	switch (s->attention) {
	case CAPSIM_ATTENTION_FLASH2:
		k = CAPSIM_ATTN_FLASH2;
		break;
	case CAPSIM_ATTENTION_FLASH3:
		k = CAPSIM_ATTN_FLASH3;
		break;
	case CAPSIM_ATTENTION_CUDNN:
		k = CAPSIM_ATTN_CUDNN;
		break;
	default:
		k = attn_kernel_of_gpu(g, s->framework);
		break;
	}
	if (k == CAPSIM_ATTN_FLASH3 && !gpu_is_hopper(g))
		k = CAPSIM_ATTN_CUDNN;
	return k;
}

void capsim_gpu_perf_attention(const capsim_gpu *g, int kernel, capsim_gpu_perf *perf)
{
	assert(kernel >= 0 && kernel < CAPSIM_ATTN__KERNELS);
	perf->attn_kernel = kernel;
	perf->assumed &= ~CAPSIM_PERF_ASSUMED_ATTN;
	if (g->cal.attn[kernel].n > 0) {
		perf->attn_curve = &g->cal.attn[kernel];
		return;
	}
	const capsim_attn_curve *c = attn_default_curve(g->e.id, kernel);
	if (c == NULL) {
		/* H100's curve of the kernel (it has all three), as a fraction
		 * of its peak: an assumption, flagged */
		perf->assumed |= CAPSIM_PERF_ASSUMED_ATTN;
		c = attn_default_curve("h100", kernel);
	}
	assert(c != NULL && c->n > 0);
	perf->attn_curve = c;
	if (perf->attn_frac > 0.0) /* a measured flat rate replaces any curve */
		perf->assumed &= ~CAPSIM_PERF_ASSUMED_ATTN;
}

static double attn_rate(const capsim_attn_point *p, int bwd)
{
	return bwd ? p->bwd_flop_per_s : p->fwd_flop_per_s;
}

/* Rate (FLOP/s) of the curve's points pts[0..n) of one head dim and mask at
 * seq: piecewise linear in log2(seq), held at the ends. */
static double attn_rate_seq(const capsim_attn_point *const *pts, int n, double seq, int bwd)
{
	assert(n > 0);
	double x = log2(seq > 1.0 ? seq : 1.0);
#define RATE(i) attn_rate(pts[i], bwd)
	if (n == 1 || x <= log2(pts[0]->seq))
		return RATE(0);
	for (int i = 1; i < n; i++) {
		double x1 = log2(pts[i]->seq);
		if (x <= x1) {
			double x0 = log2(pts[i - 1]->seq);
			double w = x1 > x0 ? (x - x0) / (x1 - x0) : 1.0;
			return RATE(i - 1) + w * (RATE(i) - RATE(i - 1));
		}
	}
	return RATE(n - 1);
#undef RATE
}

/* The points of curve c with head dim hd and mask causal (any mask where
 * any_mask) that measured the pass (bwd), ascending in seq, into out (n at
 * most CAPSIM_ATTN_POINTS). */
static int attn_points_of(const capsim_attn_curve *c, double hd, int causal, int any_mask,
			  int bwd, const capsim_attn_point **out)
{
	int n = 0;
	for (int i = 0; i < c->n; i++) {
		const capsim_attn_point *p = &c->pt[i];
		if (p->head_dim != hd || (!any_mask && p->causal != causal) ||
		    !(attn_rate(p, bwd) > 0.0))
			continue;
		int j = n++;
		while (j > 0 && out[j - 1]->seq > p->seq) {
			out[j] = out[j - 1];
			j--;
		}
		out[j] = p;
	}
	return n;
}

double capsim_attention_frac(const capsim_attn_curve *c, double seq, double head_dim,
			     int causal, int bwd)
{
	assert(c != NULL && c->n > 0 && c->peak_bf16_flop_per_s > 0.0);
	int any_mask = 1;
	for (int i = 0; i < c->n; i++)
		if (c->pt[i].causal == causal && attn_rate(&c->pt[i], bwd) > 0.0)
			any_mask = 0;
	/* the measured head dims that bracket head_dim */
	double lo = -1.0, hi = -1.0;
	for (int i = 0; i < c->n; i++) {
		const capsim_attn_point *p = &c->pt[i];
		if ((!any_mask && p->causal != causal) || !(attn_rate(p, bwd) > 0.0))
			continue;
		if (p->head_dim <= head_dim && p->head_dim > lo)
			lo = p->head_dim;
		if (p->head_dim >= head_dim && (hi < 0.0 || p->head_dim < hi))
			hi = p->head_dim;
	}
	if (lo < 0.0)
		lo = hi;
	if (hi < 0.0)
		hi = lo;
	const capsim_attn_point *pts[CAPSIM_ATTN_POINTS] = { 0 };
	int n = attn_points_of(c, lo, causal, any_mask, bwd, pts);
	double r = attn_rate_seq(pts, n, seq, bwd);
	if (hi > lo) {
		n = attn_points_of(c, hi, causal, any_mask, bwd, pts);
		double r_hi = attn_rate_seq(pts, n, seq, bwd);
		r += (head_dim - lo) / (hi - lo) * (r_hi - r);
	}
	return r / c->peak_bf16_flop_per_s;
}

/* What the GPU's profile measured (calibrate/, or --set) replaces the
 * defaults and clears their flags. */
static void apply_measured(const capsim_gpu *g, capsim_gpu_perf *out)
{
	if (g->eff_gemm > 0) {
		out->gemm_sat = g->eff_gemm;
		out->assumed &= ~CAPSIM_PERF_ASSUMED_GEMM_SAT;
	}
	if (g->eff_gemm_fp8 > 0) {
		out->gemm_sat_fp8 = g->eff_gemm_fp8;
		out->assumed &= ~CAPSIM_PERF_ASSUMED_FP8_SAT;
	}
	if (g->eff_hbm > 0) {
		out->hbm_eff = g->eff_hbm;
		out->assumed &= ~CAPSIM_PERF_ASSUMED_HBM;
	}
	if (g->eff_attention > 0)
		out->attn_frac = g->eff_attention;
	if (g->launch_eager_s > 0)
		out->launch_eager_s = g->launch_eager_s;
	if (g->launch_graph_s > 0)
		out->launch_graph_s = g->launch_graph_s;
	if (g->kernel_gap_s > 0)
		out->kernel_gap_s = g->kernel_gap_s;
	if (g->dispatch_s > 0)
		out->dispatch_s = g->dispatch_s;
	if (g->dispatch_compiled_s > 0)
		out->dispatch_compiled_s = g->dispatch_compiled_s;
	if (g->launch_eager_s > 0 && g->launch_graph_s > 0 && g->dispatch_s > 0)
		out->assumed &= ~CAPSIM_PERF_ASSUMED_LAUNCH;
}

static void host_kernel_cost(capsim_gpu_perf *out)
{
	int x = out->execution;
	out->host_kernel_s = x == CAPSIM_EXEC_GRAPHS ? 0.0 :
			     out->launch_eager_s + (x == CAPSIM_EXEC_COMPILED ?
						    out->dispatch_compiled_s : out->dispatch_s);
}

void capsim_gpu_perf_host(const capsim_node *n, capsim_gpu_perf *perf)
{
	if (n == NULL)
		return;
	if (n->host_launch_s > 0)
		perf->launch_eager_s = n->host_launch_s;
	if (n->host_dispatch_s > 0)
		perf->dispatch_s = n->host_dispatch_s;
	if (n->host_dispatch_compiled_s > 0)
		perf->dispatch_compiled_s = n->host_dispatch_compiled_s;
	host_kernel_cost(perf);
}

void capsim_gpu_perf_default(const capsim_gpu *g, int execution,
			     capsim_gpu_perf *out)
{
	memset(out, 0, sizeof *out);
	const perf_row *h100 = &perf_rows[0], *row = NULL;
	for (size_t i = 0; i < sizeof perf_rows / sizeof perf_rows[0]; i++)
		if (strncmp(g->e.id, perf_rows[i].prefix, strlen(perf_rows[i].prefix)) == 0)
			row = &perf_rows[i];
	int known = row != NULL;
	if (!known) {
		row = h100;
		out->assumed |= CAPSIM_PERF_ASSUMED_GEMM_SAT;
	}
	out->gemm_sat = row->sat;
	out->gemm_f0_flop = capsim_gemm_fitted.f0_flop;
	out->gemm_p = capsim_gemm_fitted.p;
	out->gemm_flop_min = GEMM_FLOP_MIN;
	out->gemm_flop_max = GEMM_FLOP_MAX;
	/* fp8: on H100, the bf16 saturation times the fp8/bf16 ratio measured
	 * on a layer's own GEMMs; on H200 the fitted cuBLASLt asymptote (see
	 * H100_FP8_OVER_BF16); where the MAMF table has the GPU's FP8 row, that
	 * row against H100's, on the fitted asymptote; elsewhere the bf16
	 * saturation scaled by H100's fp8/bf16 ratio */
	if (known && row == &perf_rows[0]) {
		out->gemm_sat_fp8 = row->sat * H100_FP8_OVER_BF16;
	} else if (known && row == &perf_rows[1]) {
		out->gemm_sat_fp8 = capsim_gemm_fitted.sat;
	} else if (known && row->fp8 > 0.0) {
		out->gemm_sat_fp8 = row->fp8 * capsim_gemm_fitted.sat / h100->fp8;
	} else {
		out->gemm_sat_fp8 = row->sat * capsim_gemm_fitted.sat / h100->sat;
		out->assumed |= CAPSIM_PERF_ASSUMED_FP8_SAT;
	}
	out->gemm_prior_sat = out->gemm_sat;
	out->gemm_prior_sat_fp8 = out->gemm_sat_fp8;
	out->hbm_eff = row->hbm > 0.0 ? row->hbm : h100->hbm;
	if (!known || !(row->hbm > 0.0))
		out->assumed |= CAPSIM_PERF_ASSUMED_HBM;
	out->launch_eager_s = LAUNCH_EAGER_S;
	out->launch_graph_s = LAUNCH_GRAPH_S;
	out->kernel_gap_s = KERNEL_GAP_S;
	out->dispatch_s = DISPATCH_S;
	out->dispatch_compiled_s = DISPATCH_COMPILED_S;
	out->execution = execution;
	out->assumed |= CAPSIM_PERF_ASSUMED_LAUNCH;
	apply_measured(g, out);
	out->launch_s = execution == CAPSIM_EXEC_GRAPHS ? out->launch_graph_s : out->kernel_gap_s;
	host_kernel_cost(out);
	out->clock_scale = capsim_power_clock_scale(g->tdp_w, g->power_limit_w);
	memcpy(out->gemm_cal, g->cal.gemm, sizeof out->gemm_cal);
	capsim_gpu_perf_attention(g, attn_kernel_of_gpu(g, CAPSIM_FW_MEGATRON), out);
}

double capsim_gemm_shape(const capsim_gpu_perf *perf, double flop)
{
	double f = flop;
	if (f < perf->gemm_flop_min)
		f = perf->gemm_flop_min;
	if (f > perf->gemm_flop_max)
		f = perf->gemm_flop_max;
	return 1.0 / (1.0 + pow(perf->gemm_f0_flop / f, perf->gemm_p));
}

/* the calibrated model of dtype, or NULL where there is none */
static const capsim_gemm_cal *cal_of(const capsim_gpu_perf *perf, int dtype)
{
	if (dtype < 0 || dtype >= CAPSIM_CAL_DTYPES || perf->gemm_cal[dtype].params <= 0)
		return NULL;
	return &perf->gemm_cal[dtype];
}

double capsim_gemm_efficiency(const capsim_gpu_perf *perf, int dtype,
			      double flop)
{
	const capsim_gemm_cal *c = cal_of(perf, dtype);
	if (c) {
		double e = cbrt(flop > 0.0 ? flop / 2.0 : 0.0);
		return capsim_gemm_cal_eff(c, dtype, e, e, e, NULL);
	}
	double sat = dtype == CAPSIM_DTYPE_FP8 ? perf->gemm_sat_fp8 : perf->gemm_sat;
	return sat * capsim_gemm_shape(perf, flop);
}

/* the dimension multiple that keeps a dtype's rows 16-byte aligned */
static double align_elems(int dtype)
{
	double in, out;
	capsim_gemm_elem_bytes(dtype, &in, &out);
	return 16.0 / in;
}

static double efficiency_mnk(const capsim_gpu_perf *perf, int dtype, double m, double n,
			     double k)
{
	const capsim_gemm_cal *c = cal_of(perf, dtype);
	if (c) {
		double flop = 2.0 * m * n * k;
		double sat = dtype == CAPSIM_DTYPE_FP8 ? perf->gemm_prior_sat_fp8 :
							 perf->gemm_prior_sat;
		double e = capsim_gemm_cal_measured(c, dtype, m, n, k,
						    sat * capsim_gemm_shape(perf, flop));
		return e >= 0.0 ? e : capsim_gemm_cal_eff(c, dtype, m, n, k, NULL);
	}
	return capsim_gemm_efficiency(perf, dtype, 2.0 * m * n * k);
}

double capsim_gemm_efficiency_mnk(const capsim_gpu_perf *perf, int dtype,
				  double m, double n, double k)
{
	if (perf->execution == CAPSIM_EXEC_COMPILED && !capsim_gemm_aligned(dtype, m, n, k)) {
		/* torch.compile pads a misaligned matmul's dimensions to the
		 * alignment (Inductor's shape_padding, on by default:
		 * torch/_inductor/config.py, fx_passes/pad_mm.py) and runs the
		 * aligned kernel over the padded FLOP */
		double a = align_elems(dtype);
		double pm = ceil(m / a) * a, pn = ceil(n / a) * a, pk = ceil(k / a) * a;
		return efficiency_mnk(perf, dtype, pm, pn, pk) * (m * n * k) / (pm * pn * pk);
	}
	return efficiency_mnk(perf, dtype, m, n, k);
}

/* ---- calibrated GEMM efficiency ------------------------------------------ */

void capsim_gemm_elem_bytes(int dtype, double *in, double *out)
{
	switch (dtype) {
	case CAPSIM_DTYPE_FP32:
	case CAPSIM_DTYPE_TF32:
		*in = *out = 4.0;
		break;
	case CAPSIM_DTYPE_FP8:
		*in = 1.0;
		*out = 2.0;
		break;
	default:
		*in = *out = 2.0;
		break;
	}
}

double capsim_gemm_intensity(int dtype, double m, double n, double k)
{
	double ein, eout;
	capsim_gemm_elem_bytes(dtype, &ein, &eout);
	double bytes = ein * (m * k + k * n) + eout * m * n;
	return bytes > 0.0 ? 2.0 * m * n * k / bytes : 0.0;
}

static double clampd(double x, double lo, double hi, int *clamped)
{
	if (x < lo) {
		*clamped = 1;
		return lo;
	}
	if (x > hi) {
		*clamped = 1;
		return hi;
	}
	return x;
}

/* T(x) / T(x_max) for T(x) = 1 / (1 + (x0/x)^pw), written so that neither
 * term is divided by a number near 0 */
static double rise(double x0, double pw, double x, double x_max)
{
	return (1.0 + pow(x0 / x_max, pw)) / (1.0 + pow(x0 / x, pw));
}

double capsim_gemm_cal_smooth(const capsim_gemm_cal *c, double flop,
			      double ai)
{
	int clamped = 0;
	double F = clampd(flop, c->flop_min, c->flop_max, &clamped);
	double I = clampd(ai, c->ai_min, c->ai_max, &clamped);
	double e = c->sat;
	if (c->params >= 3)
		e *= rise(c->f0_flop, c->p, F, c->flop_max);
	if (c->params >= 5)
		e *= rise(c->i0_flop_per_byte, c->q, I, c->ai_max);
	return e;
}

double capsim_gemm_cal_table(const capsim_gemm_cal *c, double flop)
{
	int n = c->n_table;
	if (n <= 0)
		return 1.0;
	if (n == 1 || !(flop > c->table_flop[0]))
		return c->table_ratio[0];
	if (!(flop < c->table_flop[n - 1]))
		return c->table_ratio[n - 1];
	double x[CAPSIM_CAL_TABLE];
	for (int i = 0; i < n; i++)
		x[i] = log10(c->table_flop[i]);
	gsl_interp *in = gsl_interp_alloc(n >= 3 ? gsl_interp_steffen : gsl_interp_linear,
					  (size_t)n);
	if (!in)
		abort(); /* out of memory: capsim's policy (xalloc.h) */
	double r = c->table_ratio[0];
	if (gsl_interp_init(in, x, c->table_ratio, (size_t)n) == GSL_SUCCESS)
		r = gsl_interp_eval(in, x, c->table_ratio, log10(flop), NULL);
	gsl_interp_free(in);
	return r;
}

int capsim_gemm_aligned(int dtype, double m, double n, double k)
{
	double a = align_elems(dtype);
	return fmod(m, a) == 0.0 && fmod(n, a) == 0.0 && fmod(k, a) == 0.0;
}

double capsim_gemm_cal_measured(const capsim_gemm_cal *c, int dtype, double m,
				double n, double k, double prior)
{
	for (int i = 0; i < c->n_shapes; i++) {
		if (c->shape_m[i] != m || c->shape_n[i] != n || c->shape_k[i] != k)
			continue;
		int cl = 0;
		double F = clampd(2.0 * m * n * k, c->flop_min, c->flop_max, &cl);
		double I = clampd(capsim_gemm_intensity(dtype, m, n, k), c->ai_min, c->ai_max, &cl);
		double smooth = capsim_gemm_cal_smooth(c, F, I);
		double lo = smooth * c->shape_lo[i], hi = smooth * c->shape_hi[i];
		if (!(lo > 0.0) || !(hi >= lo))
			return smooth * c->shape_ratio[i];
		return prior < lo ? lo : prior > hi ? hi : prior;
	}
	return -1.0;
}

double capsim_gemm_cal_correction(const capsim_gemm_cal *c, int dtype, double m,
				  double n, double k)
{
	for (int i = 0; i < c->n_shapes; i++)
		if (c->shape_m[i] == m && c->shape_n[i] == n && c->shape_k[i] == k)
			return c->shape_ratio[i];
	if (c->misaligned > 0.0 && !capsim_gemm_aligned(dtype, m, n, k))
		return c->misaligned;
	if (m == n && n == k)
		return capsim_gemm_cal_table(c, 2.0 * m * n * k);
	return 1.0;
}

double capsim_gemm_cal_eff(const capsim_gemm_cal *c, int dtype, double m,
			   double n, double k, int *clamped)
{
	double F = 2.0 * m * n * k, I = capsim_gemm_intensity(dtype, m, n, k);
	int cl = 0;
	if (!(F > 0.0)) {
		F = c->flop_min;
		I = c->ai_min;
		cl = 1;
	}
	F = clampd(F, c->flop_min, c->flop_max, &cl);
	I = clampd(I, c->ai_min, c->ai_max, &cl);
	if (clamped)
		*clamped = cl;
	return capsim_gemm_cal_smooth(c, F, I) * capsim_gemm_cal_correction(c, dtype, m, n, k);
}

static double peak_of(const capsim_gpu *g, int dtype)
{
	double p = capsim_gpu_peak(g, dtype);
	return p > 0.0 ? p : g->peak_bf16_flop_per_s;
}

/* what compute-bound work reaches at the power limit's clock */
static double clock_of(const capsim_gpu_perf *perf)
{
	return perf->clock_scale > 0.0 ? perf->clock_scale : 1.0;
}

static double mem_time(const capsim_gpu *g, const capsim_gpu_perf *perf,
		       double bytes)
{
	double bw = g->mem_bw_bytes_per_s * perf->hbm_eff;
	return bytes > 0.0 && bw > 0.0 ? bytes / bw : 0.0;
}

double capsim_op_time_s(const capsim_gpu *g, const capsim_gpu_perf *perf,
			int dtype, double flop, double bytes, double m,
			double n, double k)
{
	double peak = peak_of(g, dtype) * clock_of(perf);
	double eff = m > 0.0 && n > 0.0 && k > 0.0 ?
			     capsim_gemm_efficiency_mnk(perf, dtype, m, n, k) :
			     capsim_gemm_efficiency(perf, dtype, flop);
	double tc = flop > 0.0 && peak > 0.0 && eff > 0.0 ? flop / (peak * eff) : 0.0;
	double tm = mem_time(g, perf, bytes);
	return (tc > tm ? tc : tm) + perf->launch_s;
}

/* ---- the host stream ------------------------------------------------------ */

void capsim_stream_push(capsim_stream *st, double n, double host_s, double gpu_s)
{
	if (!(n > 0.0)) {
		st->gpu += gpu_s;
		st->busy += gpu_s;
		return;
	}
	double h = host_s, g = gpu_s / n;
	double end = st->gpu + gpu_s;
	double first = st->host + h + gpu_s;   /* the first kernel waits for its issue */
	double last = st->host + n * h + g;    /* the last one does */
	if (first > end)
		end = first;
	if (last > end)
		end = last;
	st->host += n * h;
	st->gpu = end;
	st->busy += gpu_s;
}

/* ---- the kernels of one transformer layer -------------------------------- */

static void set_op(capsim_op *op, const char *name, int kind, double count,
		   double flop, double bytes, double m, double n, double k)
{
	op->name = name;
	op->kind = kind;
	op->count = count;
	op->flop = flop;
	op->bytes = bytes;
	op->m = m;
	op->n = n;
	op->k = k;
}

/* `count` GEMMs of an m x k by k x n product: 2mnk FLOP each; each reads its
 * two operands and writes its output once (the compulsory traffic). */
static void gemm(capsim_op *op, const char *name, double count, double m,
		 double n, double k, double ein, double eout)
{
	set_op(op, name, CAPSIM_OPK_GEMM, count, count * 2.0 * m * n * k,
	       count * (ein * (m * k + k * n) + eout * m * n), m, n, k);
}

/* an elementwise kernel over `elems` elements: `flop_per` nominal FLOP and
 * `moves` elements read + written per element */
static void elementwise(capsim_op *op, const char *name, double elems,
			double flop_per, double moves, double e)
{
	set_op(op, name, CAPSIM_OPK_ELEMENTWISE, 1.0, flop_per * elems,
	       moves * e * elems, 0.0, 0.0, 0.0);
}

/* The MLP's up, activation and down kernels for f (the total intermediate
 * size on all TP ranks), over `tokens` rows, `count` times (one per local
 * expert). SwiGLU's gate and up projections are one GEMM of width 2f, as
 * Megatron-Core's linear_fc1 computes them. */
static void mlp(capsim_op *up, capsim_op *act, capsim_op *down,
		const char *names[3], const capsim_model *m, double count,
		double tokens, double f, double t, double e, double ein,
		double eout)
{
	double h = m->hidden;
	int glu = m->activation == CAPSIM_ACT_SWIGLU;
	gemm(up, names[0], count, tokens, (glu ? 2.0 : 1.0) * f / t, h, ein, eout);
	/* GELU (tanh form) ~8 FLOP an element, reads x and writes y; SwiGLU
	 * ~5 (silu and the product), reads gate and up, writes one */
	double elems = count * tokens * f / t;
	elementwise(act, names[1], elems, glu ? 5.0 : 8.0, glu ? 3.0 : 2.0, e);
	gemm(down, names[2], count, tokens, h, f / t, ein, eout);
}

/* Transformer Engine's FP8 (delayed scaling, Megatron's fp8 recipes): each
 * FP8 GEMM's input is cast before it, one kernel that scales by the amax
 * history and writes the fp8 copy and its transpose for the wgrad (Hopper's
 * FP8 GEMMs take TN operands): read 2 bytes, write 1 + 1, about 2 FLOP an
 * element; its weights likewise, once a step (TE caches them across the
 * micro-batches, is_first_microbatch: transformer_engine/pytorch/module/
 * linear.py), so a micro-batch carries 1/m of them; in the backward each
 * GEMM's output gradient is cast the same way before its dgrad and wgrad.
 * The router stays in 16 bits. TE fuses the input casts of QKV and FC1
 * into the norm before them (LayerNormLinear: te_cast_fused).
 *
 * A cast with its transpose runs below the copy bandwidth. Transformer
 * Engine's: 0.53 of it, from TE's GEMM profiling on an H200 NVL
 * (github:NVIDIA/TransformerEngine docs/examples/gemm_profiling/
 * gemm_profiling.rst: current scaling's casts of one layer, hidden 4096,
 * FFN 16384, 15872 tokens, take 20.285 - 16.785 = 3.50 ms; its two passes
 * move 6 bytes an element of 1241.5 M, 7.45 GB, 2.13 TB/s against the
 * H200's 4.8 TB/s x 0.835 copy rate). */
#define TE_CAST_EFF 0.53
/* torchao's float8 (tensorwise) under torch.compile, a cast Inductor
 * cannot fuse into a kernel before it: 0.63 of the copy rate, counting 4
 * bytes an element of the input, the weight and the output gradient, from
 * torchao's published Float8Linear benchmark on an H100 (github:pytorch/ao
 * torchao/float8/README.md, "Performance", example 2: M, K, N = 4096, 8192,
 * 16384, forward and backward 1.39x bf16's under torch.compile; the op
 * model's GEMMs leave 0.51 ms for the casts of 234.9 M elements, 1.84 TB/s
 * against the H100's 3.35 TB/s x 0.866). A standalone transposing cast that
 * Inductor generated reached 0.19 on the measured H200
 * (calibrate/torch/cast_probe.py, calibrate/results/
 * h200-2026-12-04-fp8-cast.jsonl), which torchao's benchmark of the whole
 * linear does not bear out; eager PyTorch, separate kernels, 0.06 there
 * (0.22 to 0.25 TB/s against a copy's 3.6 to 4.1). */
#define COMPILED_CAST_EFF 0.63
#define EAGER_CAST_EFF 0.06

/* The elements one fp8 GEMM op casts: its input (in), output gradient
 * (grad) and weights (w), all its launches */
typedef struct cast_elems {
	double in, grad, w, n;
} cast_elems;

static void cast_elems_of(const capsim_op *g, cast_elems *e)
{
	e->in = g->count * g->m * g->k;
	e->grad = g->count * g->m * g->n;
	e->w = g->count * g->k * g->n;
	e->n = g->count;
}

/* Under torch.compile, whether the kernel before op i's input (in: 1) or
 * its output gradient (0) is one Inductor generates, which then computes
 * the amax in its epilogue and writes the fp8 copies itself: the norms
 * before QKV and FC1, the activation before FC2; backward, the residual
 * stream's gradient (PROJ, FC2), the activation's backward (FC1) and
 * RoPE's (QKV, rope models). The attention kernel before PROJ, the
 * experts' dispatch and combine are not. */
static int cast_fused(const capsim_op *op, int i, int in)
{
	switch (i) {
	case CAPSIM_LOP_QKV:
		return in || op[CAPSIM_LOP_ROPE].count > 0.0;
	case CAPSIM_LOP_FC1:
	case CAPSIM_LOP_FC2:
		return 1;
	case CAPSIM_LOP_PROJ:
		return !in;
	case CAPSIM_LOP_EXPERT_FC1:
		return !in;
	case CAPSIM_LOP_EXPERT_FC2:
		return in;
	default:
		return 0;
	}
}

/* torchao's float8 tensorwise casts of one layer, as bytes at the copy rate
 * (fwd: inputs and weights; bwd: output gradients). A cast fused into the
 * kernel before it adds that kernel's writes of the fp8 copy and its
 * transpose, 2 bytes an element, at the copy rate; any other reads 2 and
 * writes 2 at `eff` of it. Weights are cast at every micro-batch (torchao
 * keeps no cache); under FSDP2 with zero 3 each rank casts its shard,
 * 1/dp, before the float8 all-gather (torchao's
 * enable_fsdp_float8_all_gather). */
static void compiled_cast_bytes(const capsim_scenario *s, const capsim_op *op, int fuse,
				double *fwd, double *bwd, double *n)
{
	double eff = fuse ? COMPILED_CAST_EFF : EAGER_CAST_EFF;
	double shard = s->framework == CAPSIM_FW_FSDP2 && s->zero >= 3 && s->dp > 1 ?
			       1.0 / s->dp : 1.0;
	*fwd = *bwd = *n = 0.0;
	for (int i = 0; i < CAPSIM_LOP_FP8_CAST; i++) {
		if (op[i].kind != CAPSIM_OPK_GEMM || op[i].count <= 0.0 || i == CAPSIM_LOP_ROUTER)
			continue;
		cast_elems e;
		cast_elems_of(&op[i], &e);
		*fwd += e.in * (fuse && cast_fused(op, i, 1) ? 2.0 : 4.0 / eff);
		*fwd += e.w * shard * 4.0 / eff;
		*bwd += e.grad * (fuse && cast_fused(op, i, 0) ? 2.0 : 4.0 / eff);
		*n += e.n;
	}
}

/* Transformer Engine with delayed scaling: whether op i's input cast is
 * fused into the norm before it. Megatron-Core builds QKV and FC1 as
 * LayerNormLinear (TELayerNormColumnParallelLinear), whose norm kernel
 * writes the fp8 input with the scale of the amax history
 * (transformer_engine/pytorch/module/layernorm_linear.py): the cast costs
 * the fp8 copy and its transpose, 2 bytes an element at the copy rate.
 * PROJ's input (after attention), FC2's (after Megatron's own SwiGLU) and
 * every output gradient are cast by TE's standalone cast-transpose; so is
 * every cast under current scaling, whose scale needs the whole tensor's
 * amax before the norm's output can be cast (an assumption: TE calls the
 * same quantized norm, which must then make two passes). */
static int te_cast_fused(const capsim_scenario *s, int i)
{
	if (s->fp8_recipe == CAPSIM_FP8_CURRENT)
		return 0;
	return i == CAPSIM_LOP_QKV || i == CAPSIM_LOP_FC1;
}

static void fp8_casts(const capsim_scenario *s, capsim_op *op)
{
	capsim_op *c = &op[CAPSIM_LOP_FP8_CAST];
	if (s->framework == CAPSIM_FW_TORCH_AMP || s->framework == CAPSIM_FW_FSDP2) {
		double fwd, bwd, n;
		compiled_cast_bytes(s, op, s->execution != CAPSIM_EXEC_EAGER, &fwd, &bwd, &n);
		/* bytes at the copy rate: what the kernels move, each share over
		 * the rate it reaches */
		set_op(c, "fp8_cast", CAPSIM_OPK_ELEMENTWISE, n, fwd / 2.0, fwd, 0.0, 0.0, 0.0);
		c->bwd_flop = bwd / 2.0;
		c->bwd_bytes = bwd;
		return;
	}
	double mb = capsim_microbatches(s), wshare = 1.0 / (mb > 0 ? mb : 1.0);
	/* current scaling reads each tensor once more for its amax first */
	double by = s->fp8_recipe == CAPSIM_FP8_CURRENT ? 6.0 : 4.0;
	double fwd = 0.0, bwd = 0.0, n = 0.0;
	for (int i = 0; i < CAPSIM_LOP_FP8_CAST; i++) {
		if (op[i].kind != CAPSIM_OPK_GEMM || op[i].count <= 0.0 || i == CAPSIM_LOP_ROUTER)
			continue;
		cast_elems e;
		cast_elems_of(&op[i], &e);
		fwd += e.in * (te_cast_fused(s, i) ? 2.0 : by / TE_CAST_EFF);
		fwd += e.w * wshare * by / TE_CAST_EFF;
		bwd += e.grad * by / TE_CAST_EFF;
		n += e.n;
	}
	/* bytes at the copy rate, as the plain-PyTorch frameworks' */
	set_op(c, "fp8_cast", CAPSIM_OPK_ELEMENTWISE, n, fwd / 2.0, fwd, 0.0, 0.0, 0.0);
	c->bwd_flop = bwd / 2.0;
	c->bwd_bytes = bwd;
}

void capsim_layer_forward(const capsim_scenario *s, int layer,
			  capsim_layer_work *out)
{
	const capsim_model *m = &s->model;
	memset(out, 0, sizeof *out);
	double t = s->tp > 0 ? s->tp : 1, cp = s->cp > 0 ? s->cp : 1;
	double ep = s->ep > 0 ? s->ep : 1;
	double b = s->micro_batch > 0 ? s->micro_batch : 1;
	double seq = s->seq_len, h = m->hidden;
	double T = b * seq / cp;                       /* queries on this GPU */
	double Tn = s->sequence_parallel ? T / t : T;  /* rows of norms and adds */
	int full32 = s->dtype == CAPSIM_DTYPE_FP32 || s->dtype == CAPSIM_DTYPE_TF32;
	double e = full32 ? 4.0 : 2.0;
	double ein = s->dtype == CAPSIM_DTYPE_FP8 ? 1.0 : e, eout = e;
	double q, k, v, o;
	attn_dims(m, &q, &k, &v, &o);
	capsim_layer_params lp;
	capsim_model_layer_params(m, layer, &lp);
	capsim_op *op = out->op;
	out->tokens = T;

	/* LayerNorm/RMSNorm: ~5 FLOP an element; reads x, writes y */
	elementwise(&op[CAPSIM_LOP_NORM_ATTN], "norm_attn", Tn * h, 5.0, 2.0, e);
	/* QKV, column-parallel. MLA: the width that gives its projections'
	 * FLOPs (its down-projections, replicated in Megatron, are divided by
	 * TP here too: an approximation) */
	double qkv = m->mla_kv_lora_rank ? (lp.attention - o * h) / h : q + k + v;
	gemm(&op[CAPSIM_LOP_QKV], "qkv", 1.0, T, qkv / t, h, ein, eout);
	if (m->position == 1 /* rope */)
		/* rotate q and k: ~3 FLOP an element, read and written */
		elementwise(&op[CAPSIM_LOP_ROPE], "rope", T * (q + k) / t, 3.0, 2.0, e);
	/* fused causal attention on this GPU's heads: each of T queries scores
	 * s/2 keys on average (causal; with CP the load-balanced ring gives
	 * every rank the same share), on a layer with a sliding window the
	 * window's mean span (capsim_model_attn_keys), 2 (q_dim + o_dim)/t FLOP
	 * per query-key pair. Reads Q, the whole sequence's K and V, writes O;
	 * CP runs it as cp steps of a ring, one launch each. */
	double hd = q / m->heads;
	set_op(&op[CAPSIM_LOP_ATTN], "attention", CAPSIM_OPK_ATTENTION, cp,
	       2.0 * T * capsim_model_attn_keys(m, layer, seq) * (q + o) / t,
	       e * (T * q / t + b * seq * (k + v) / t + T * o / t),
	       seq / cp, seq, hd);
	/* output projection, row-parallel */
	gemm(&op[CAPSIM_LOP_PROJ], "proj", 1.0, T, h, o / t, ein, eout);
	/* residual add: reads two, writes one, 1 FLOP an element */
	elementwise(&op[CAPSIM_LOP_RESID_ATTN], "resid_attn", Tn * h, 1.0, 3.0, e);
	elementwise(&op[CAPSIM_LOP_NORM_MLP], "norm_mlp", Tn * h, 5.0, 2.0, e);

	static const char *dense_names[3] = { "fc1", "act", "fc2" };
	static const char *shared_names[3] = { "shared_fc1", "shared_act", "shared_fc2" };
	static const char *expert_names[3] = { "expert_fc1", "expert_act", "expert_fc2" };
	if (lp.moe) {
		double E = m->moe_experts;
		/* router: replicated over TP, on this rank's rows */
		gemm(&op[CAPSIM_LOP_ROUTER], "router", 1.0, Tn, E, h, e, 4.0);
		if (m->moe_shared_experts > 0)
			mlp(&op[CAPSIM_LOP_FC1], &op[CAPSIM_LOP_ACT], &op[CAPSIM_LOP_FC2],
			    shared_names, m, 1.0, T,
			    (double)m->moe_shared_experts * m->moe_expert_ffn, t, e, ein, eout);
		/* E/ep local experts, each with T ep top_k / E rows (even
		 * routing), times the capacity factor where buffers are padded */
		double rows = T * ep * m->moe_top_k / E * capsim_moe_capacity(s);
		mlp(&op[CAPSIM_LOP_EXPERT_FC1], &op[CAPSIM_LOP_EXPERT_ACT],
		    &op[CAPSIM_LOP_EXPERT_FC2], expert_names, m, E / ep, rows,
		    m->moe_expert_ffn, t, e, ein, eout);
	} else {
		mlp(&op[CAPSIM_LOP_FC1], &op[CAPSIM_LOP_ACT], &op[CAPSIM_LOP_FC2],
		    dense_names, m, 1.0, T, m->ffn, t, e, ein, eout);
	}
	elementwise(&op[CAPSIM_LOP_RESID_MLP], "resid_mlp", Tn * h, 1.0, 3.0, e);
	if (s->dtype == CAPSIM_DTYPE_FP8)
		fp8_casts(s, op);

	for (int i = 0; i < CAPSIM_LOP__COUNT; i++) {
		out->flop += op[i].flop;
		out->bytes += op[i].bytes;
	}
}

void capsim_layer_backward(const capsim_layer_work *fwd,
			   capsim_layer_work *bwd)
{
	*bwd = *fwd;
	bwd->backward = 1;
	bwd->flop = bwd->bytes = 0.0;
	for (int i = 0; i < CAPSIM_LOP__COUNT; i++) {
		capsim_op *op = &bwd->op[i];
		if (op->count <= 0.0)
			continue;
		op->backward = 1;
		switch (op->kind) {
		case CAPSIM_OPK_GEMM:
			/* dgrad (m x k output) and wgrad (k x n output), each
			 * 2mnk FLOP and the same three matrices' traffic */
			op->count *= 2.0;
			op->flop *= 2.0;
			op->bytes *= 2.0;
			break;
		case CAPSIM_OPK_ATTENTION:
			/* FlashAttention-2 backward: 5 matmuls to the forward's 2;
			 * reads Q, K, V, O, dO and writes dQ, dK, dV */
			op->flop *= 2.5;
			op->bytes *= 2.0;
			break;
		default:
			if (op->bwd_bytes > 0.0) {
				op->flop = op->bwd_flop;
				op->bytes = op->bwd_bytes;
			} else {
				op->flop *= 2.0;
				op->bytes *= 2.0;
			}
			break;
		}
		bwd->flop += op->flop;
		bwd->bytes += op->bytes;
	}
}

/* What an attention kernel takes beyond its FLOP at the curve's rate: the
 * published curves are kernels of 16k tokens a batch, where a kernel's
 * fixed time is a few percent; a small one (GPT-2 at a micro-batch of 1 to
 * 8) runs well below them. On the measured H200, PyTorch's FlashAttention-2
 * kernels in the profiled GPT-2 steps at micro-batch 1 took 9.0 and 8.4 us
 * a kernel more than the curve gives (calibrate/results/
 * h200-2026-12-02-gpt2-step-c.jsonl, gpt2-124m and gpt2-355m): 8.7 us, the
 * mean. The backward runs three kernels (flash_bwd_dot_do_o, dq_dk_dv and
 * convert_dq in that profile), the forward one. Measured for one kernel
 * family on one GPU: an assumption for the others. */
#define ATTN_KERNEL_S 8.7e-6
#define ATTN_BWD_KERNELS 3.0

/* One attention op: count launches of flop / count each. Without CP, one
 * causal kernel over the whole sequence (op->n keys). With CP (count = cp
 * ring steps over chunks of op->m = seq/cp queries), the step on a rank's
 * own chunk is causal and the other cp - 1 see whole chunks unmasked; the
 * load-balanced split gives every step the same FLOP. The forward or
 * backward rate of the kernel's curve at that length and head dim (op->k);
 * a flat efficiency.attention replaces the curve (and the kernels' fixed
 * time). Attention stays in 16 bits in fp8 recipes. */
static double attention_time_s(const capsim_gpu *g, const capsim_gpu_perf *perf, int dtype,
			       const capsim_op *op)
{
	int adt = dtype == CAPSIM_DTYPE_FP8 ? CAPSIM_DTYPE_BF16 : dtype;
	double c = op->count, f = op->flop / c, by = op->bytes / c;
	double peak = peak_of(g, adt) * clock_of(perf);
	double tm = mem_time(g, perf, by);
	double e_diag, e_off;
	if (perf->attn_frac > 0.0) {
		e_diag = e_off = perf->attn_frac * capsim_gemm_shape(perf, f);
	} else {
		double len = c > 1.0 ? op->m : op->n;
		e_diag = capsim_attention_frac(perf->attn_curve, len, op->k, 1, op->backward);
		e_off = c > 1.0 ? capsim_attention_frac(perf->attn_curve, len, op->k, 0,
							op->backward) : e_diag;
	}
	if (!(f > 0.0 && peak > 0.0))
		return c * (tm + perf->launch_s);
	double t_diag = f / (peak * e_diag), t_off = f / (peak * e_off);
	double fixed = perf->attn_frac > 0.0 ? 0.0 :
		       ATTN_KERNEL_S * (op->backward ? ATTN_BWD_KERNELS : 1.0);
	return (t_diag > tm ? t_diag : tm) + (c - 1.0) * (t_off > tm ? t_off : tm) +
	       c * (perf->launch_s + fixed);
}

double capsim_layer_op_time_s(const capsim_gpu *g, const capsim_gpu_perf *perf,
			      int dtype, const capsim_op *op)
{
	if (op->count <= 0.0)
		return 0.0;
	double c = op->count, f = op->flop / c, by = op->bytes / c, t;
	switch (op->kind) {
	case CAPSIM_OPK_GEMM:
		return c * capsim_op_time_s(g, perf, dtype, f, by, op->m, op->n, op->k);
	case CAPSIM_OPK_ATTENTION:
		return attention_time_s(g, perf, dtype, op);
	default: {
		double peak = g->peak_fp32_flop_per_s > 0.0 ? g->peak_fp32_flop_per_s :
							     g->peak_bf16_flop_per_s;
		double tc = f > 0.0 && peak > 0.0 ? f / peak : 0.0;
		double tm = mem_time(g, perf, by) / (op->bw_eff > 0.0 ? op->bw_eff : 1.0);
		t = (tc > tm ? tc : tm) + perf->launch_s;
		return c * t;
	}
	}
}

double capsim_layer_time_s(const capsim_gpu *g, const capsim_gpu_perf *perf,
			   int dtype, const capsim_layer_work *w)
{
	double t = 0.0;
	for (int i = 0; i < CAPSIM_LOP__COUNT; i++)
		t += capsim_layer_op_time_s(g, perf, dtype, &w->op[i]);
	return t;
}

/* ---- fitting the GEMM efficiency ----------------------------------------- */

typedef struct fit_data {
	const double *flop, *frac;
	size_t n;
} fit_data;

/* residual_i = sat / (1 + u_i) - frac_i, u_i = 10^(p (lf0 - log10 flop_i)) */
static int fit_f(const gsl_vector *x, void *params, gsl_vector *f)
{
	const fit_data *d = params;
	double sat = gsl_vector_get(x, 0), lf0 = gsl_vector_get(x, 1);
	double p = gsl_vector_get(x, 2);
	for (size_t i = 0; i < d->n; i++) {
		double u = pow(10.0, p * (lf0 - log10(d->flop[i])));
		gsl_vector_set(f, i, sat / (1.0 + u) - d->frac[i]);
	}
	return GSL_SUCCESS;
}

static int fit_df(const gsl_vector *x, void *params, gsl_matrix *J)
{
	const fit_data *d = params;
	double sat = gsl_vector_get(x, 0), lf0 = gsl_vector_get(x, 1);
	double p = gsl_vector_get(x, 2);
	for (size_t i = 0; i < d->n; i++) {
		double a = lf0 - log10(d->flop[i]);
		double u = pow(10.0, p * a), D = 1.0 + u;
		double du = -sat / (D * D) * u * M_LN10; /* d model / d (p a) */
		gsl_matrix_set(J, i, 0, 1.0 / D);
		gsl_matrix_set(J, i, 1, du * p);
		gsl_matrix_set(J, i, 2, du * a);
	}
	return GSL_SUCCESS;
}

int capsim_gemm_fit_curve(const double *flop, const double *frac, size_t n,
			  capsim_gemm_fit *out)
{
	memset(out, 0, sizeof *out);
	if (!flop || !frac || n < 4)
		return GSL_EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!(flop[i] > 0.0) || !(frac[i] > 0.0) || !(frac[i] <= 1.0))
			return GSL_EINVAL;

	fit_data d = { flop, frac, n };
	gsl_multifit_nlinear_fdf fdf = { 0 };
	fdf.f = fit_f;
	fdf.df = fit_df;
	fdf.n = n;
	fdf.p = 3;
	fdf.params = &d;
	gsl_multifit_nlinear_parameters par = gsl_multifit_nlinear_default_parameters();
	gsl_multifit_nlinear_workspace *w =
		gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &par, n, 3);
	if (!w)
		return GSL_ENOMEM;
	double x0[3] = { 0.7, 10.0, 1.5 };
	gsl_vector_view xv = gsl_vector_view_array(x0, 3);
	int rc = gsl_multifit_nlinear_init(&xv.vector, &fdf, w);
	int info = 0;
	if (rc == GSL_SUCCESS)
		rc = gsl_multifit_nlinear_driver(200, 1e-12, 1e-12, 0.0, NULL, NULL,
						 &info, w);
	if (rc == GSL_SUCCESS) {
		const gsl_vector *x = gsl_multifit_nlinear_position(w);
		const gsl_vector *r = gsl_multifit_nlinear_residual(w);
		out->sat = gsl_vector_get(x, 0);
		out->f0_flop = pow(10.0, gsl_vector_get(x, 1));
		out->p = gsl_vector_get(x, 2);
		out->iterations = gsl_multifit_nlinear_niter(w);
		double ss = 0.0;
		for (size_t i = 0; i < n; i++) {
			double ri = gsl_vector_get(r, i);
			ss += ri * ri;
			if (fabs(ri) > out->max_abs)
				out->max_abs = fabs(ri);
		}
		out->rms = sqrt(ss / (double)n);
		if (!(out->sat > 0.0) || !(out->p > 0.0) || !isfinite(out->f0_flop))
			rc = GSL_EFAILED;
	}
	gsl_multifit_nlinear_free(w);
	return rc;
}
