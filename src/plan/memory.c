/* memory.c - memory per GPU of a training job; see memory.h and
 * docs/model.md ("Memory"). */
#include "memory.h"

#include <math.h>
#include <string.h>

#include "check.h"

/* bytes per element of activations and of the training-precision weights */
static double act_bytes(int dtype)
{
	return dtype == CAPSIM_DTYPE_FP32 || dtype == CAPSIM_DTYPE_TF32 ? 4.0 : 2.0;
}

int capsim_microbatches(const capsim_scenario *s)
{
	double per = (double)s->micro_batch * (s->dp > 0 ? s->dp : 1);
	int m = (int)floor(s->global_batch / per);
	return m > 0 ? m : 1;
}

/* the second MLP linear's input per token: ffn, or each token's top-k
 * experts (padded to capacity) and the shared ones */
static double second_linear_width(const capsim_model *m, int moe, double capacity)
{
	if (moe)
		return m->moe_expert_ffn * (m->moe_top_k * capacity + m->moe_shared_experts);
	return m->ffn;
}

/* Korthikanti et al. (2022), Sec. 4.1, per layer, in units of s*b (tokens x
 * micro-batch) bytes at 16 bits:
 *   outside tensor-parallel regions: 4h (the two norms' inputs) + 2h (QKV
 *     input) + h (attention dropout mask) + 2h (MLP input) + h (MLP dropout
 *     mask) = 10h;
 *   inside: Q 2q, K and V 4kv, the attention output 2q (input to the output
 *     projection), and the MLP: GELU/ReLU 2f (activation input) + 2f (second
 *     linear's input), SwiGLU 2f + 2f (gate and up) + 2f (their product).
 * With q = kv = h and f = 4h GELU this is 10h + 24h = 34h, the paper's figure
 * with a fused attention kernel (no 5as/h term: flash attention keeps no
 * s x s matrix). */
static void layer_terms(const capsim_model *m, int moe, double capacity,
			double *outside, double *inside, double *fp8_saved_out,
			double *fp8_saved_in)
{
	double h = m->hidden, hd = capsim_model_head_dim(m);
	double q = m->heads * hd, o = q;
	double k = (m->kv_heads ? m->kv_heads : m->heads) * hd, v = k;
	if (m->mla_kv_lora_rank) { /* MLA: decompressed per-head K and V */
		double qk = m->mla_qk_nope_head_dim + m->mla_qk_rope_head_dim;
		q = k = m->heads * qk;
		v = o = m->heads * m->mla_v_head_dim;
	}
	double act = m->activation == CAPSIM_ACT_SWIGLU ? 6.0 : 4.0;
	double width = second_linear_width(m, moe, capacity);
	*outside = 10.0 * h;
	*inside = 2.0 * q + 2.0 * k + 2.0 * v + 2.0 * o + act * width;
	/* Transformer Engine's FP8 linears save their inputs for the backward
	 * as FP8 (1 byte, not 2): the QKV and first MLP linears' (LayerNormLinear's
	 * ln_out, outside the TP region), the output projection's (the
	 * attention output) and the second MLP linear's (transformer_engine/
	 * pytorch/module/linear.py and layernorm_linear.py, the inputs quantized
	 * before ctx.save_for_backward); Q, K, V and the activation's input stay
	 * 16-bit */
	*fp8_saved_out = 2.0 * h;
	*fp8_saved_in = o + width;
}

/* The same under PyTorch's autocast over fp32 weights, as autograd saves
 * tensors for plain PyTorch modules (Hugging Face's Llama and GPT-2 blocks,
 * calibrate/torch/memory_probe.py), in bytes a token: the embedding's output
 * is fp32, so the residual stream is, and each norm saves its fp32 input
 * (4h, twice); autocast casts an activation anew for each linear that reads
 * it, so separate Q, K, V projections (the SwiGLU models' q_proj, k_proj,
 * v_proj) save three 16-bit copies of their input (6h; a fused c_attn one,
 * 2h) and separate gate and up projections two (4h; c_fc one, 2h); the
 * attention kernel saves Q, K, V and its output (2q + 2k + 2v + 2o) and the
 * output projection its own contiguous copy of that output (2o); SwiGLU saves
 * the gate's output, its SiLU, the up projection's output and their product
 * (8f), GELU its input and output (4f). No dropout. */
static void autocast_terms(const capsim_model *m, double width, double *outside,
			   double *inside)
{
	double h = m->hidden, hd = capsim_model_head_dim(m);
	double q = m->heads * hd, o = q;
	double k = (m->kv_heads ? m->kv_heads : m->heads) * hd, v = k;
	int swiglu = m->activation == CAPSIM_ACT_SWIGLU;
	*outside = 4.0 * h + (swiglu ? 6.0 : 2.0) * h + 4.0 * h + (swiglu ? 4.0 : 2.0) * h;
	*inside = 2.0 * q + 2.0 * k + 2.0 * v + 4.0 * o + (swiglu ? 8.0 : 4.0) * width;
}

/* bytes a token of the layer's input, which full recomputation keeps: the
 * fp32 residual stream under autocast, else 16 bits */
static double input_bytes(const capsim_mem_recipe *rc, const capsim_model *m)
{
	return (rc->cast_bytes > 0 ? 4.0 : 2.0) * m->hidden;
}

/* one layer's activations under recomputation mode `recompute` (the
 * scenario's own, or none for the layer recomputed whole) */
static double layer_bytes(const capsim_scenario *s, int moe, int recompute)
{
	const capsim_model *m = &s->model;
	double sb = (double)s->seq_len / s->cp * s->micro_batch;
	double outside, inside, saved_out, saved_in;
	layer_terms(m, moe, capsim_moe_capacity(s), &outside, &inside, &saved_out, &saved_in);
	capsim_mem_recipe rc;
	capsim_memory_recipe(s, &rc);
	if (rc.fp8_te) {
		outside -= saved_out;
		inside -= saved_in;
	}
	if (rc.cast_bytes > 0) { /* autocast over fp32 weights */
		autocast_terms(m, second_linear_width(m, moe, capsim_moe_capacity(s)), &outside,
			       &inside);
	}
	double scale = act_bytes(s->dtype) / 2.0; /* the terms count 16-bit values */
	double t = s->tp;
	double full;
	if (s->sequence_parallel)
		full = (outside + inside) / t;
	else
		full = outside + inside / t;
	if (recompute == CAPSIM_RECOMPUTE_FULL) /* only the layer's input */
		return sb * scale * input_bytes(&rc, m) / (s->sequence_parallel ? t : 1.0);
	/* an unfused attention core keeps its s x s matrices: softmax output
	 * (2 bytes), dropout mask (1) and output (2), 5 a s^2 b / t (Korthikanti
	 * et al. Sec. 4.1); selective recomputation drops exactly these, and a
	 * fused kernel never keeps them */
	double core = 0.0;
	if (s->attention == 1 && recompute == CAPSIM_RECOMPUTE_NONE)
		core = 5.0 * m->heads * sb * s->seq_len / t;
	return sb * scale * full + core * scale;
}

double capsim_activation_bytes_per_layer(const capsim_scenario *s)
{
	int moe = s->model.moe_experts && s->model.layers > s->model.moe_dense_layers;
	return layer_bytes(s, moe, s->recompute);
}

/* micro-batches whose activations stage k holds at the peak of its
 * schedule (Korthikanti et al. Sec. 4.2.3; Narayanan et al. 2021 Sec. 2.2) */
static double in_flight(const capsim_scenario *s, int stage, int m)
{
	int p = s->pp;
	switch (s->schedule) {
	case CAPSIM_SCHED_GPIPE:
		return m;
	case CAPSIM_SCHED_1F1B_INTERLEAVED: {
		/* Megatron-LM's interleaved schedule warms stage k up with
		 * 2(p - k - 1) + (v - 1)p chunk forwards, so k holds one more
		 * than that, each chunk a v-th of the stage's layers, and never
		 * more than the step's m v chunks (megatron/core/pipeline_parallel/
		 * schedules.py, forward_backward_pipelining_with_interleaving).
		 * For the first stage this is Korthikanti et al.'s p(1 + (p-1)/(p v)) */
		int v = s->virtual_stages;
		double chunks = 2.0 * (p - stage - 1) + (double)(v - 1) * p + 1.0;
		double all = (double)m * v;
		return (chunks < all ? chunks : all) / v;
	}
	default:
		return p - stage < m ? p - stage : m;
	}
}

const char *const capsim_mem_verdict_names[] = { "fits", "close", "does not fit" };

/* The CUDA context with PyTorch's library workspaces, measured on an H200
 * SXM (PyTorch 2.11, CUDA 13.0): device memory used less the allocator's
 * reserve, the same 787,283,968 bytes at all 35 points of
 * calibrate/results/h200-2026-12-03-memory*.jsonl */
#define CONTEXT_MEASURED 787283968.0
/* Transformer Engine's cuBLAS workspaces: 32 MiB on Hopper and later for
 * each of its 4 streams (transformer_engine/pytorch/cpp_extensions/gemm.py,
 * get_cublas_workspace_size_bytes; module/base.py, get_workspace) */
#define TE_WORKSPACES (4.0 * 33554432.0)
/* The memory model's error band (docs/model.md, "The verdict"). On the
 * measured H200 the PyTorch recipe's peaks were within 4.8% of the measured
 * ones either way (35 points, docs/validation.md): 5%. The other recipes
 * have no measured peaks, so their error is taken as the 10% the model is
 * held to, either way (an assumption). */
#define BAND 0.10
#define BAND_TORCH 0.05

/* what a framework keeps outside the model, its FP8 path, its error band */
static void recipe_outside(const capsim_scenario *s, capsim_mem_recipe *r)
{
	int megatron = s->framework == CAPSIM_FW_MEGATRON;
	r->fp8_te = s->dtype == CAPSIM_DTYPE_FP8 && megatron;
	/* Float8Tensor keeps a transposed copy beside its data for the
	 * backward's GEMMs where the GPU's FP8 GEMMs take TN operands only
	 * (transformer_engine/pytorch/csrc/quantizer.cpp,
	 * Float8Quantizer::create_tensor: with_transpose = columnwise usage
	 * and not nvte_is_non_tn_fp8_gemm_supported()) */
	int transpose = s->gpu.fp8_layouts == CAPSIM_FP8_LAYOUTS_TN;
	r->fp8_weight_bytes = r->fp8_te ? 1.0 + transpose : 0.0;
	/* Megatron-LM --fp8-param-gather ("keep the compute param in fp8, do
	 * not use any other intermediate dtype", megatron/training/
	 * arguments.py): the modules' GEMM weights are Float8Tensors, the
	 * gradient buffer's param storage uint8 (megatron/core/distributed/
	 * param_and_grad_buffer.py); the fp32 master stays in the optimizer */
	r->fp8_params = r->fp8_te && s->prec_params == CAPSIM_PREC_PARAMS_FP8 &&
			s->finetune != CAPSIM_FT_LORA;
	r->context_bytes = s->memory_context_bytes > 0 ? s->memory_context_bytes :
			   CONTEXT_MEASURED + (megatron ? TE_WORKSPACES : 0.0);
	r->band_under = r->band_over = s->framework == CAPSIM_FW_TORCH_AMP ? BAND_TORCH : BAND;
}

void capsim_memory_recipe(const capsim_scenario *s, capsim_mem_recipe *r)
{
	int full32 = s->dtype == CAPSIM_DTYPE_FP32 || s->dtype == CAPSIM_DTYPE_TF32;
	double half = full32 ? 4.0 : 2.0; /* the training dtype's weights */
	memset(r, 0, sizeof *r);
	r->state_bytes = 8.0;
	r->frozen_bytes = half;
	switch (s->framework) {
	case CAPSIM_FW_TORCH_AMP:
		/* fp32 parameters are the only weights; autocast casts each to
		 * 16 bits in the forward and autograd keeps the cast for the
		 * backward; the loss upcasts the logits to fp32 and keeps its
		 * log-softmax (PyTorch AMP docs; measured on the H200:
		 * calibrate/results/h200-2026-12-03-memory.jsonl) */
		r->param_bytes = 4.0;
		r->grad_bytes = 4.0;
		r->cast_bytes = full32 ? 0.0 : 2.0;
		r->logit_bytes = full32 ? 8.0 : 10.0;
		break;
	case CAPSIM_FW_FSDP2:
		/* MixedPrecisionPolicy(param_dtype=bf16, reduce_dtype=fp32):
		 * sharded fp32 parameters and gradients; each layer's weights
		 * all-gathered in 16 bits, the next one prefetched */
		r->param_bytes = 4.0;
		r->grad_bytes = 4.0;
		r->logit_bytes = full32 ? 8.0 : 10.0;
		r->gathered_layers = s->zero >= 3 ? 2 : 0;
		/* the backward makes a layer's gradients whole in 16 bits and
		 * copies them to the fp32 reduce dtype for the reduce-scatter,
		 * which leaves the sharded fp32 gradient (PyTorch FSDP2,
		 * fully_shard and MixedPrecisionPolicy; Zhao et al., "PyTorch
		 * FSDP", arXiv:2304.11277, sec. 3.3 and 4.1) */
		r->layer_grad_bytes = s->zero >= 3 ? (full32 ? 4.0 : 2.0 + 4.0) : 0.0;
		break;
	case CAPSIM_FW_DEEPSPEED:
		/* ZeRO's mixed-precision Adam: 2 + 2 + 12 bytes a parameter
		 * (Rajbhandari et al., SC20, sec. 3.1) */
		r->param_bytes = half;
		r->grad_bytes = half;
		r->master_bytes = full32 ? 0.0 : 4.0;
		r->grads_persistent = 1;
		r->logit_bytes = half + 4.0;
		/* ZeRO-3 gathers module by module, prefetching, up to
		 * stage3_max_live_parameters (1e9) at once, and reduce-scatters
		 * 16-bit gradients through a bucket of reduce_bucket_size (5e8)
		 * (DeepSpeed configuration JSON documentation, ZeRO options) */
		r->gathered_layers = s->zero >= 3 ? 2 : 0;
		r->live_params_max = 1e9;
		r->layer_grad_bytes = s->zero >= 3 ? half : 0.0;
		r->grad_bucket_max = 5e8;
		break;
	default:
		/* Megatron-LM: 16-bit weights, fp32 main gradients (bf16 turns on
		 * accumulate_allreduce_grads_in_fp32, megatron/training/
		 * arguments.py), fp32 master weights: 2 + 4 + 4 + 8 = 18 bytes
		 * (Megatron-LM docs, distributed optimizer) */
		r->param_bytes = half;
		r->grad_bytes = 4.0;
		r->master_bytes = full32 ? 0.0 : 4.0;
		r->grads_persistent = 1;
		r->logit_bytes = half + 4.0;
		break;
	}
	/* params fp8: the weights outside the GEMMs (embedding, norms, LM head)
	 * stay 16-bit; the GEMMs' are the FP8 copy (recipe_outside) */
	static const double params_b[] = { 0, 4, 2, 2, 2 }, b16_32[] = { 0, 4, 2 },
			    master_b[] = { 0, 0, 4 }, states_b[] = { 0, 8, 4 };
	if (s->prec_params)
		r->param_bytes = params_b[s->prec_params];
	if (s->prec_grads)
		r->grad_bytes = b16_32[s->prec_grads];
	if (s->prec_master)
		r->master_bytes = master_b[s->prec_master];
	if (s->prec_states)
		r->state_bytes = states_b[s->prec_states];
	/* 16-bit weights, or LoRA's 16-bit frozen base: nothing to cast */
	if (r->param_bytes <= 2.0 || s->finetune == CAPSIM_FT_LORA)
		r->cast_bytes = 0.0;
	recipe_outside(s, r);
}

/* the parameters stage k's GPU holds (out->params, out->trained_params);
 * returns one layer's on average, and in *gemm the GEMM weights' */
static double stage_params(const capsim_scenario *s, int k, capsim_stage_memory *out,
			   double *gemm)
{
	const capsim_model *m = &s->model;
	int first;
	int per = capsim_stage_layers(s, k, &first);
	out->layers = per;
	double t = s->tp, e = s->ep;
	double params = 0.0, adapters = 0.0, mats = 0.0;
	for (int l = first; l < first + per; l++) {
		capsim_layer_params lp;
		capsim_model_layer_params(m, l, &lp);
		double local = (lp.attention + lp.mlp + lp.shared) / t;
		if (lp.moe) /* experts spread over EP ranks, each split by TP */
			local += m->moe_experts / e * lp.expert / t;
		params += local + lp.norms + lp.router;
		mats += local;
		adapters += capsim_lora_layer_params(s, l) / t;
	}
	double layer_params = per > 0 ? params / per : 0.0; /* one layer's, on average */
	double emb = (double)m->vocab * m->hidden / t; /* vocabulary-parallel */
	if (k == 0) {
		params += emb;
		if (m->position == 0) /* learned positions: a row per position */
			params += capsim_position_rows(s) * m->hidden;
	}
	if (k == s->pp - 1) {
		params += m->hidden; /* final norm */
		/* the LM head: its own matrix, or a copy of the tied embedding
		 * when it sits on another stage */
		if (!m->tied_embeddings || s->pp > 1)
			params += emb;
	}
	out->params = params;
	out->trained_params = s->finetune == CAPSIM_FT_LORA ? adapters : params;
	*gemm = mats;
	return layer_params;
}

/* the framework's copies of the model (capsim_memory_recipe); ZeRO shards
 * over the data-parallel ranks, which include context parallelism (or the
 * scaling reference's kept shard) */
static void stage_states(const capsim_scenario *s, const capsim_mem_recipe *rc,
			 double layer_params, double gemm, capsim_stage_memory *out)
{
	double shard = s->optimizer_shard ? (double)s->optimizer_shard : (double)s->dp * s->cp;
	double trained = out->trained_params;
	/* LoRA: the frozen base has no gradient, master or moments; the
	 * adapters are trained with the framework's recipe */
	double frozen = s->finetune == CAPSIM_FT_LORA ? out->params * rc->frozen_bytes : 0.0;
	/* FP8 primary weights: the GEMMs' weights are only in fp8_bytes */
	double high = rc->fp8_params ? trained - gemm : trained;
	out->weights_bytes = (frozen + high * rc->param_bytes) / (s->zero >= 3 ? shard : 1.0);
	out->grads_bytes = trained * rc->grad_bytes / (s->zero >= 2 ? shard : 1.0);
	out->optimizer_bytes =
		trained * (rc->master_bytes + rc->state_bytes) / (s->zero >= 1 ? shard : 1.0);
	/* autocast's 16-bit copy of every weight the in-flight forward used;
	 * with full recomputation only the layer being recomputed has one */
	out->casts_bytes = rc->cast_bytes * (s->recompute == CAPSIM_RECOMPUTE_FULL ?
						     layer_params : out->params);
	/* ZeRO-3 (FSDP2, DeepSpeed): the layer computed and the one
	 * prefetched, whole in 16 bits (DeepSpeed: up to its live cap), and in
	 * the backward the layer's gradients before their reduce-scatter */
	double live = rc->gathered_layers * layer_params, bucket = layer_params;
	if (rc->live_params_max > 0 && live > rc->live_params_max)
		live = rc->live_params_max;
	if (rc->grad_bucket_max > 0 && bucket > rc->grad_bucket_max)
		bucket = rc->grad_bucket_max;
	out->gathers_bytes = 2.0 * live + rc->layer_grad_bytes * bucket;
	/* Transformer Engine keeps each GEMM weight's FP8 copy and, for the
	 * backward's GEMMs, its transpose, cast once and cached across the
	 * step's micro-batches (TransformerLayer's is_first_microbatch); FP8
	 * primary weights are that copy, sharded as the weights are */
	out->fp8_bytes = rc->fp8_weight_bytes * gemm /
			 (rc->fp8_params && s->zero >= 3 ? shard : 1.0);
}

/* activations of the micro-batches stage k holds, and the loss's logits */
static void stage_activations(const capsim_scenario *s, int k, const capsim_mem_recipe *rc,
			      capsim_stage_memory *out)
{
	const capsim_model *m = &s->model;
	int first;
	int per = capsim_stage_layers(s, k, &first);
	double one_act[2] = { layer_bytes(s, 0, s->recompute), layer_bytes(s, 1, s->recompute) };
	double act = 0.0;
	for (int l = first; l < first + per; l++) {
		capsim_layer_params lp;
		capsim_model_layer_params(m, l, &lp);
		act += one_act[lp.moe];
	}
	int mb = capsim_microbatches(s);
	out->in_flight = in_flight(s, k, mb);
	/* at least one micro-batch is held, never more than the step has */
	CAPSIM_ASSERT(out->in_flight > 0 && out->in_flight <= mb);
	out->activations_bytes = out->in_flight * act;
	if (s->recompute == CAPSIM_RECOMPUTE_FULL) {
		/* one layer is recomputed whole during its backward */
		out->activations_bytes +=
			layer_bytes(s, m->moe_experts != 0, CAPSIM_RECOMPUTE_NONE);
	}
	if (k == s->pp - 1) {
		/* logits of the micro-batch in flight, vocabulary-parallel: 16-bit
		 * and an fp32 copy for the loss (Megatron's fused cross entropy),
		 * or also the loss's fp32 log-softmax (PyTorch's) */
		double sb = (double)s->seq_len / s->cp * s->micro_batch;
		out->activations_bytes += sb * m->vocab / s->tp * rc->logit_bytes;
	}
}

double capsim_memory_nccl_bytes(const capsim_scenario *s)
{
	int groups = (s->tp > 1) + (s->cp > 1) + (s->ep > 1) + (s->pp > 1) +
		     ((long)s->dp * s->cp > 1);
	return groups * (double)s->nccl_channels * 2.0 * s->nccl_buffer_bytes;
}

/* the peak the model's bytes reach, and what lives beside them */
static void stage_peak(const capsim_scenario *s, const capsim_mem_recipe *rc,
		       capsim_stage_memory *out)
{
	/* gradients made in the backward replace activations it frees: the
	 * peak is at the backward's start (everything held, no gradient yet)
	 * or at the optimizer step (every gradient, no activation) */
	double held = out->activations_bytes + out->casts_bytes + out->gathers_bytes;
	double kept = out->weights_bytes + out->optimizer_bytes + out->fp8_bytes;
	if (rc->grads_persistent)
		out->allocated_bytes = kept + out->grads_bytes + held;
	else
		out->allocated_bytes = kept + (held > out->grads_bytes ? held : out->grads_bytes);
	if (s->memory_reserve_bytes > 0) {
		out->reserve_bytes = s->memory_reserve_bytes; /* given whole */
	} else {
		out->context_bytes = rc->context_bytes;
		out->nccl_bytes = capsim_memory_nccl_bytes(s);
		out->slack_bytes = s->allocator_slack * out->allocated_bytes;
		out->reserve_bytes = out->context_bytes + out->nccl_bytes + out->slack_bytes;
	}
	out->total_bytes = out->allocated_bytes + out->reserve_bytes;
	/* every part is a count of bytes, and the peak holds at least what is
	 * kept between steps */
	CAPSIM_ASSERT(out->params >= 0 && out->weights_bytes >= 0 && out->grads_bytes >= 0 &&
		      out->optimizer_bytes >= 0 && out->activations_bytes >= 0 &&
		      out->casts_bytes >= 0 && out->gathers_bytes >= 0 && out->fp8_bytes >= 0);
	CAPSIM_ASSERT(out->allocated_bytes >= kept && out->total_bytes >= out->allocated_bytes);
}

static void stage(const capsim_scenario *s, int k, capsim_stage_memory *out)
{
	memset(out, 0, sizeof *out);
	out->stage = k;
	capsim_mem_recipe rc;
	capsim_memory_recipe(s, &rc);
	double gemm;
	double layer_params = stage_params(s, k, out, &gemm);
	stage_states(s, &rc, layer_params, gemm, out);
	stage_activations(s, k, &rc, out);
	stage_peak(s, &rc, out);
}

int capsim_memory_verdict(double peak, double capacity, double under)
{
	if (peak * (1.0 + under) <= capacity)
		return CAPSIM_MEM_FITS;
	if (peak > capacity)
		return CAPSIM_MEM_NO;
	return CAPSIM_MEM_CLOSE;
}

void capsim_memory_estimate(const capsim_scenario *s, capsim_memory *mem)
{
	memset(mem, 0, sizeof *mem);
	stage(s, 0, &mem->first);
	stage(s, s->pp - 1, &mem->last);
	mem->peak = mem->first.total_bytes >= mem->last.total_bytes ? mem->first : mem->last;
	mem->activation_per_layer_bytes = capsim_activation_bytes_per_layer(s);
	mem->capacity_bytes = capsim_gpu_usable_bytes(&s->gpu);
	capsim_mem_recipe rc;
	capsim_memory_recipe(s, &rc);
	mem->band_under = rc.band_under;
	mem->band_over = rc.band_over;
	mem->margin_bytes = mem->capacity_bytes - mem->peak.total_bytes;
	mem->verdict = capsim_memory_verdict(mem->peak.total_bytes, mem->capacity_bytes,
					     rc.band_under);
	mem->fits = mem->verdict != CAPSIM_MEM_NO;
}
