/* memory.c - memory per GPU of a training job; see memory.h and
 * docs/model.md ("Memory"). */
#include "memory.h"

#include <math.h>
#include <string.h>

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
			double *outside, double *inside)
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
	double mlp;
	if (moe) /* each token's top-k experts (padded to capacity), and the shared ones */
		mlp = act * m->moe_expert_ffn *
		      (m->moe_top_k * capacity + m->moe_shared_experts);
	else
		mlp = act * m->ffn;
	*outside = 10.0 * h;
	*inside = 2.0 * q + 2.0 * k + 2.0 * v + 2.0 * o + mlp;
}

static double layer_bytes(const capsim_scenario *s, int moe)
{
	const capsim_model *m = &s->model;
	double sb = (double)s->seq_len / s->cp * s->micro_batch;
	double outside, inside;
	layer_terms(m, moe, capsim_moe_capacity(s), &outside, &inside);
	double scale = act_bytes(s->dtype) / 2.0; /* the terms count 16-bit values */
	double t = s->tp;
	double full;
	if (s->sequence_parallel)
		full = (outside + inside) / t;
	else
		full = outside + inside / t;
	if (s->recompute == CAPSIM_RECOMPUTE_FULL) /* only the layer's input */
		return sb * scale * 2.0 * m->hidden / (s->sequence_parallel ? t : 1.0);
	/* an unfused attention core keeps its s x s matrices: softmax output
	 * (2 bytes), dropout mask (1) and output (2), 5 a s^2 b / t (Korthikanti
	 * et al. Sec. 4.1); selective recomputation drops exactly these, and a
	 * fused kernel never keeps them */
	double core = 0.0;
	if (s->attention == 1 && s->recompute == CAPSIM_RECOMPUTE_NONE)
		core = 5.0 * m->heads * sb * s->seq_len / t;
	return sb * scale * full + core * scale;
}

double capsim_activation_bytes_per_layer(const capsim_scenario *s)
{
	int moe = s->model.moe_experts && s->model.layers > s->model.moe_dense_layers;
	return layer_bytes(s, moe);
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
		double base = p - stage < m ? p - stage : m;
		/* the first stage's factor 1 + (p-1)/(p v) */
		return base * (1.0 + (double)(p - 1) / ((double)p * s->virtual_stages));
	}
	default:
		return p - stage < m ? p - stage : m;
	}
}

static void stage(const capsim_scenario *s, int k, capsim_stage_memory *out)
{
	const capsim_model *m = &s->model;
	memset(out, 0, sizeof *out);
	out->stage = k;
	int first;
	int per = capsim_stage_layers(s, k, &first);
	out->layers = per;
	double t = s->tp, e = s->ep;
	double params = 0.0, act = 0.0;
	double one_act[2] = { layer_bytes(s, 0), layer_bytes(s, 1) };
	for (int l = first; l < first + per; l++) {
		capsim_layer_params lp;
		capsim_model_layer_params(m, l, &lp);
		params += (lp.attention + lp.mlp + lp.shared) / t + lp.norms + lp.router;
		if (lp.moe) /* experts spread over EP ranks, each split by TP */
			params += m->moe_experts / e * lp.expert / t;
		act += one_act[lp.moe];
	}
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

	/* Megatron's mixed precision: 16-bit weights, fp32 gradients, fp32 master
	 * weights and two Adam moments = 2 + 4 + 12 = 18 bytes a parameter; in
	 * fp32, 4 + 4 + 8 (Megatron-LM docs, distributed optimizer). ZeRO shards
	 * over the data-parallel ranks, which include context parallelism. */
	int full32 = s->dtype == CAPSIM_DTYPE_FP32 || s->dtype == CAPSIM_DTYPE_TF32;
	double wb = full32 ? 4.0 : 2.0, gb = 4.0, ob = full32 ? 8.0 : 12.0;
	double shard = (double)s->dp * s->cp;
	out->weights_bytes = params * wb / (s->zero >= 3 ? shard : 1.0);
	out->grads_bytes = params * gb / (s->zero >= 2 ? shard : 1.0);
	out->optimizer_bytes = params * ob / (s->zero >= 1 ? shard : 1.0);

	int mb = capsim_microbatches(s);
	out->in_flight = in_flight(s, k, mb);
	out->activations_bytes = out->in_flight * act;
	if (s->recompute == CAPSIM_RECOMPUTE_FULL) {
		/* one layer is recomputed whole during its backward */
		capsim_scenario none = *s;
		none.recompute = CAPSIM_RECOMPUTE_NONE;
		out->activations_bytes += layer_bytes(&none, m->moe_experts != 0);
	}
	if (k == s->pp - 1) {
		/* logits of the micro-batch in flight: 16-bit, and fp32 for the
		 * loss, vocabulary-parallel */
		double sb = (double)s->seq_len / s->cp * s->micro_batch;
		out->activations_bytes += sb * m->vocab / t * (act_bytes(s->dtype) + 4.0);
	}
	out->reserve_bytes = s->memory_reserve_bytes;
	out->total_bytes = out->weights_bytes + out->grads_bytes + out->optimizer_bytes +
			   out->activations_bytes + out->reserve_bytes;
}

void capsim_memory_estimate(const capsim_scenario *s, capsim_memory *mem)
{
	memset(mem, 0, sizeof *mem);
	stage(s, 0, &mem->first);
	stage(s, s->pp - 1, &mem->last);
	mem->peak = mem->first.total_bytes >= mem->last.total_bytes ? mem->first : mem->last;
	mem->activation_per_layer_bytes = capsim_activation_bytes_per_layer(s);
	mem->capacity_bytes = capsim_gpu_usable_bytes(&s->gpu);
	mem->fits = mem->peak.total_bytes <= mem->capacity_bytes;
}
