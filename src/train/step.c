/* step.c - one training step; see step.h and docs/model.md ("Training
 * step"). */
#include "step.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "check.h"
#include "collective.h"
#include "knobs.h"
#include "overlap.h"
#include "ops.h"
#include "schedule.h"
#include "vary.h"
#include "xalloc.h"

static double act_bytes(int dtype)
{
	return dtype == CAPSIM_DTYPE_FP32 || dtype == CAPSIM_DTYPE_TF32 ? 4.0 : 2.0;
}

/* The time a calibrated profile measured for this collective, when it
 * holds one: inside one node, at this rank count, within the sizes it
 * measured (an alpha-beta fit per regime, src/io/profile.h). Returns 1 and
 * sets *t, or 0. */
static int calibrated_coll(const capsim_scenario *s, capsim_coll op, double bytes, int ranks,
			   double *t)
{
	const capsim_gpu_cal *cal = &s->gpu.cal;
	if (ranks > s->node.gpus)
		return 0;
	for (int i = 0; i < cal->n_coll; i++) {
		const capsim_coll_cal *c = &cal->coll[i];
		if (c->ranks != ranks || strcmp(c->op, capsim_coll_perf_names[op]) ||
		    bytes < c->bytes_min || bytes > c->bytes_max)
			continue;
		int r = c->regimes == 2 && bytes >= c->split_bytes;
		*t = c->latency_s[r] + bytes / c->bw_bytes_per_s[r];
		return 1;
	}
	return 0;
}

/* what the step asks of a collective: NCCL's choice, folded or counted
 * where capsim finds that exact */
static capsim_coll_req coll_req(const capsim_scenario *s, capsim_coll op, double bytes, int ranks)
{
	return (capsim_coll_req){ .op = op, .bytes = bytes, .ranks = ranks, .algo = -1,
				  .proto = -1, .fold = -1, .seed = (uint64_t)s->seed };
}

/* one collective on the first `ranks` GPUs of a fabric (a tensor-parallel
 * group sits inside a node, so its GPUs are the first of node 0); its time
 * is the calibrated profile's where that measured it (the fabric still
 * names the busiest link) */
/* op of bytes over ranks: *t seconds (a calibrated profile's where it has
 * one), the busiest link into busiest, and the whole result into res, each
 * where not NULL (res zeroed when nothing runs) */
/* What collective op of `bytes` over `ranks` GPUs of f took, run or taken
 * from a run alike (out): its time, calibrated, into *t, and its busiest
 * link into *busiest where it is busier (NULL: none kept) */
static void coll_took(capsim_fabric *f, const capsim_scenario *s, capsim_coll op, double bytes,
		      int ranks, const capsim_coll_result *out, double *t,
		      capsim_step_link *busiest)
{
	*t = out->time_s;
	calibrated_coll(s, op, bytes, ranks, t);
	if (busiest && out->approximation && !busiest->approximation)
		busiest->approximation = out->approximation;
	if (busiest && out->busiest_link >= 0 && out->busiest_bytes > busiest->bytes) {
		capsim_link_kind k = capsim_fabric_link_kind(f, out->busiest_link);
		if (k < CAPSIM_LINK__COUNT) {
			busiest->kind = capsim_link_kind_names[k];
			busiest->bytes = out->busiest_bytes;
		}
	}
}

static int coll_run(capsim_fabric *f, const capsim_scenario *s, capsim_coll op, double bytes,
		    int ranks, double *t, capsim_step_link *busiest, capsim_coll_result *res,
		    capsim_diags *d)
{
	*t = 0.0;
	if (res)
		memset(res, 0, sizeof *res);
	if (ranks <= 1 || bytes <= 0.0)
		return 0;
	capsim_coll_req r = coll_req(s, op, bytes, ranks);
	capsim_coll_result out;
	if (capsim_collective_run(f, s, &r, &out, d) < 0)
		return -1;
	if (res)
		*res = out;
	coll_took(f, s, op, bytes, ranks, &out, t, busiest);
	return 0;
}

static int coll_link(capsim_fabric *f, const capsim_scenario *s, capsim_coll op,
		     double bytes, int ranks, double *t, capsim_step_link *busiest,
		     capsim_diags *d)
{
	return coll_run(f, s, op, bytes, ranks, t, busiest, NULL, d);
}

static int coll(capsim_fabric *f, const capsim_scenario *s, capsim_coll op,
		double bytes, int ranks, double *t, capsim_diags *d)
{
	return coll_link(f, s, op, bytes, ranks, t, NULL, d);
}

/* Megatron orders ranks tensor, context, data, then pipeline (fastest
 * first): GPUs per node that belong to one data-parallel group */
static int dp_members_per_node(const capsim_scenario *s)
{
	int per = s->node.gpus / (s->tp > 0 ? s->tp : 1);
	int group = s->dp * s->cp;
	if (per < 1)
		per = 1;
	return per < group ? per : group;
}

/* The data loader (loader.h): one step's data read under the tier's limits
 * while the step before runs; what the workers and prefetch do not hide
 * stalls every step. No storage in the scenario: the data is taken to be in
 * memory, no stall. */
static void data_loader(const capsim_scenario *s, capsim_step *out)
{
	capsim_loader *ld = &out->loader;
	capsim_loader_plan(s, out->tokens_per_step, ld);
	if (!ld->has_loader)
		return;
	int steps = 4 * ld->workers * (ld->prefetch > 0 ? ld->prefetch : 1) + 8;
	ld->stall_s = capsim_loader_pipeline(ld->read_s, out->step_time_s, ld->workers,
					     ld->prefetch, steps, &ld->first_batch_s);
	out->data_read_s = ld->read_s;
	out->data_stall_s = ld->stall_s;
	out->step_time_s += out->data_stall_s;
}

double capsim_step_mfu(const capsim_scenario *s, double flops_per_step, double step_time_s)
{
	double peak = 0.0;
	for (int g = 0; g < (s->n_groups > 0 ? s->n_groups : 1); g++) {
		capsim_group_view v;
		capsim_scenario_group(s, g, &v);
		peak += v.gpu->peak_bf16_flop_per_s * (double)v.nodes * v.node->gpus;
	}
	return flops_per_step / (peak * step_time_s);
}

void capsim_step_dp_plane(const capsim_scenario *s, capsim_scenario *plane)
{
	capsim_scenario_dp_plane(s, dp_members_per_node(s), plane);
}

#define DP_PLANE_RUNS 4 /* collectives one call runs on the plane, at most */

/* The first node group's data-parallel plane, kept while a step of several
 * groups is simulated: its fabric and the collectives its gradient sync
 * ran, whose results a later group's plane takes where
 * capsim_collective_same_run finds it runs them alike (GPUs of one
 * generation on the same NICs and switches: H100 and H200 nodes), rather
 * than counting the same plan again. One owner: dp_memo_free. */
typedef struct dp_memo {
	capsim_scenario *plane; /* NULL: nothing kept yet */
	capsim_fabric *f;
	int n;
	capsim_coll_req req[DP_PLANE_RUNS];
	capsim_coll_result res[DP_PLANE_RUNS];
} dp_memo;

static void dp_memo_free(dp_memo *m)
{
	capsim_fabric_destroy(m->f);
	free(m->plane);
	memset(m, 0, sizeof *m);
}

/* Runs of fewer flows are not kept: running one again costs less than
 * keeping its plane (a second one's memory is not the first's, reused) and
 * asking whether it runs alike (NCCL's search twice) */
#define DP_MEMO_MIN_FLOWS 4096

/* the kept run that request r on plane's fabric f runs alike, or NULL */
static const capsim_coll_result *dp_memo_find(const dp_memo *m, capsim_fabric *f,
					      const capsim_scenario *plane,
					      const capsim_coll_req *r)
{
	for (int i = 0; m->plane && i < m->n; i++)
		if (capsim_collective_same_run(m->f, m->plane, &m->req[i], f, plane, r))
			return &m->res[i];
	return NULL;
}

/* Gradient synchronisation of one data-parallel group (data x context
 * ranks): all-reduce of the gradients, or with ZeRO a reduce-scatter of them
 * and an all-gather of the updated weights. The groups of a step run at once,
 * one per rail on a rail-optimised fabric, so one group is simulated on a
 * plane of its own: its GPUs, their NICs and the same switches. */
/* n collectives op[i] of bytes[i] over one data-parallel (x context) group
 * on its plane of the fabric, one after another: t[i] each, and each one's
 * result in res[i] where res is not NULL */
static int dp_plane_runs(const capsim_scenario *s, int n, const capsim_coll *op,
			 const double *bytes, double *t, capsim_step_link *busiest,
			 capsim_coll_result *res, dp_memo *memo, capsim_diags *d)
{
	for (int i = 0; i < n; i++) {
		t[i] = 0.0;
		if (res)
			memset(&res[i], 0, sizeof res[i]);
	}
	int group = s->dp * s->cp;
	if (group <= 1)
		return 0;
	capsim_scenario *plane = capsim_xmalloc(sizeof *plane);
	capsim_step_dp_plane(s, plane);
	int rc = -1;
	capsim_fabric *pf = capsim_fabric_build(plane, d);
	capsim_coll_result ran[DP_PLANE_RUNS];
	CAPSIM_ASSERT(n <= DP_PLANE_RUNS);
	if (pf) {
		rc = 0;
		for (int i = 0; i < n && rc == 0; i++) {
			if (bytes[i] <= 0.0)
				continue;
			/* a ZeRO step's all-gather runs its reduce-scatter's plan:
			 * taken from it, not run again */
			int twin = -1;
			double nccl_t = -1.0;
			capsim_coll_req ri = coll_req(plane, op[i], bytes[i], group);
			for (int j = 0; j < i && twin < 0; j++) {
				capsim_coll_req rj = coll_req(plane, op[j], bytes[j], group);
				if (bytes[j] > 0.0 &&
				    capsim_collective_same_plan(pf, plane, &rj, &ri, &nccl_t))
					twin = j;
			}
			const capsim_coll_result *kept =
				twin < 0 && memo ? dp_memo_find(memo, pf, plane, &ri) : NULL;
			if (twin >= 0) {
				ran[i] = ran[twin];
				ran[i].nccl_time_s = nccl_t;
				t[i] = ran[i].time_s;
				calibrated_coll(plane, op[i], bytes[i], group, &t[i]);
			} else if (kept) { /* another group's plane ran it alike */
				ran[i] = *kept;
				coll_took(pf, plane, op[i], bytes[i], group, &ran[i], &t[i], busiest);
			} else {
				rc = coll_run(pf, plane, op[i], bytes[i], group, &t[i], busiest,
					      &ran[i], d);
			}
			if (res)
				res[i] = ran[i];
		}
		/* the first group's runs worth looking up, kept with their
		 * plane (kept for none, the planes' memory is reused) */
		for (int i = 0; rc == 0 && memo && !memo->plane && i < n; i++)
			if (bytes[i] > 0.0 && ran[i].flows >= DP_MEMO_MIN_FLOWS) {
				memo->req[memo->n] = coll_req(plane, op[i], bytes[i], group);
				memo->res[memo->n++] = ran[i];
			}
		if (memo && !memo->plane && memo->n) {
			memo->plane = plane;
			memo->f = pf;
			return rc;
		}
		capsim_fabric_destroy(pf);
	}
	free(plane);
	return rc;
}

static int dp_plane_colls(const capsim_scenario *s, int n, const capsim_coll *op,
			  const double *bytes, double *t, capsim_step_link *busiest,
			  capsim_diags *d)
{
	return dp_plane_runs(s, n, op, bytes, t, busiest, NULL, NULL, d);
}

/* A stage's data-parallel gradient sync (docs/model.md, "Training step", 7) */
typedef struct dp_cost {
	double t, g;       /* the gradients' reduction (reduce-scatter, or all-reduce
			    * without ZeRO) and the weights' all-gather, seconds,
			    * every bucket's latency counted */
	double last;       /* share of the gradients in the last bucket, ready only as
			    * the backward ends: (0, 1] */
	double sm_t, sm_g; /* share of the GPU's SMs each runs on: its channels (one
			    * CTA each) over the SMs */
} dp_cost;

/* Parameters a gradient bucket holds (workload.parallelism.dp-bucket, else
 * the framework's default), gradients of grad_bytes each */
static double dp_bucket_params(const capsim_scenario *s, double grad_bytes)
{
	if (s->dp_bucket > 0.0)
		return s->dp_bucket;
	switch (s->framework) {
	case CAPSIM_FW_TORCH_AMP: /* DistributedDataParallel's bucket_cap_mb = 25 */
		return 25.0 * 1048576.0 / grad_bytes;
	case CAPSIM_FW_DEEPSPEED: /* ZeRO's reduce_bucket_size = 5e8 elements */
		return 5e8;
	default: { /* Megatron-Core: max(40M, 1M x the data x context ranks) */
		double b = 1e6 * s->dp * s->cp;
		return b > 4e7 ? b : 4e7;
	}
	}
}

/* The input embedding's trained parameters on one GPU of the first stage
 * (vocabulary-parallel over tp; none under LoRA, which freezes it) */
static double embedding_trained(const capsim_scenario *s)
{
	if (s->finetune == CAPSIM_FT_LORA)
		return 0.0;
	return (double)s->model.vocab * s->model.hidden / s->tp;
}

/* The gradient sync of a stage of `params` trained parameters (`embedding`
 * of them the input embedding's, whose gradients are ready last): its
 * collectives over the data x context group, into *out, with the share of
 * the gradients in the last bucket (the embedding's, or one bucket), ready
 * only as the backward ends (the all-gather's first bucket is that one),
 * and the SMs each collective's channels take. The buckets' collectives
 * are timed as one (each bucket's own latency is not charged:
 * docs/model.md, "Training step", 7). */
static int dp_sync(const capsim_scenario *s, double params, double embedding, double grad_bytes,
		   dp_cost *out, capsim_step_link *busiest, dp_memo *memo, capsim_diags *d)
{
	memset(out, 0, sizeof *out);
	double bytes = params * grad_bytes;
	if (s->dp * s->cp <= 1 || bytes <= 0.0)
		return 0;
	double tt[2];
	capsim_coll_result res[2];
	int n = 1, rc;
	if (s->zero >= 1) {
		static const capsim_coll ops[2] = { CAPSIM_COLL_REDUCESCATTER, CAPSIM_COLL_ALLGATHER };
		const double b[2] = { bytes, bytes };
		n = 2;
		rc = dp_plane_runs(s, 2, ops, b, tt, busiest, res, memo, d);
	} else {
		static const capsim_coll ar = CAPSIM_COLL_ALLREDUCE;
		rc = dp_plane_runs(s, 1, &ar, &bytes, tt, busiest, res, memo, d);
	}
	if (rc < 0)
		return rc;
	double bucket = dp_bucket_params(s, grad_bytes);
	double last = embedding > bucket ? embedding : bucket;
	out->last = last < params ? last / params : 1.0;
	double sms = capsim_gpu_sms(&s->gpu);
	for (int i = 0; i < n; i++) {
		double sm = res[i].channels / sms;
		*(i ? &out->g : &out->t) = tt[i];
		*(i ? &out->sm_g : &out->sm_t) = sm < 1.0 ? sm : 1.0;
	}
	return 0;
}

/* point-to-point transfer between GPUs of different pipeline stages (or
 * context ranks): NCCL's p2p latency plus the bytes over the slower of the
 * link kinds on the way */
static double p2p_time(const capsim_scenario *s, double bytes, int same_domain)
{
	if (bytes <= 0.0)
		return 0.0;
	double bw;
	if (same_domain && s->gpu.scaleup_kind != CAPSIM_SCALEUP_NONE &&
	    s->node.scaleup_fabric != CAPSIM_NODE_PCIE) {
		bw = capsim_gpu_scaleup_bw_per_dir(&s->gpu);
	} else if (same_domain) {
		bw = capsim_pcie_bw(s->gpu.pcie_generation ? s->gpu.pcie_generation : 4,
				    s->gpu.pcie_lanes ? s->gpu.pcie_lanes : 16);
	} else {
		bw = s->nic.port_speed_bytes_per_s;
		if (s->transport == CAPSIM_NET_TCP)
			bw *= s->tcp_efficiency;
		double pcie = capsim_pcie_bw(s->nic.pcie_generation, s->nic.pcie_lanes);
		if (pcie < bw)
			bw = pcie;
	}
	return capsim_p2p_latency_s(same_domain) + bytes / bw;
}

static int domain_of(const capsim_scenario *s, long gpu)
{
	long dom = s->node.domain_gpus > s->node.gpus ? s->node.domain_gpus : s->node.gpus;
	return (int)(gpu / dom);
}

typedef struct {
	double fwd, bwd;         /* compute per micro-batch, seconds */
	double tp_fwd, tp_bwd;   /* exposed tensor-parallel collectives */
	double cp_fwd, cp_bwd;   /* exposed context-parallel exchange */
	double ep_fwd, ep_bwd;   /* expert-parallel all-to-all */
	double dp_fwd, dp_bwd;   /* ZeRO-3: exposed per-layer weight gathers and gradient scatters */
	double host_fwd, host_bwd; /* what the host stream adds to the pass beyond its kernels */
	double host_tail;        /* the host's issue of the step's other kernels (optimizer, embedding) */
	double tensor_flop;      /* their FLOP, fwd + bwd with what is recomputed */
	double params;           /* on one GPU */
} stage_cost;

/* ---- the host stream (docs/model.md, "The host stream") ---- */

/* Kernels the framework launches for each of capsim's fused ops. 1 for
 * Megatron and DeepSpeed: Transformer Engine's and Apex's fused modules are
 * the kernels capsim's op list names (an assumption). Plain PyTorch modules
 * (torch-amp, fsdp2): an eager block's kernels over capsim's ops of the
 * same layer, forward and backward, the block's kernels from the GPU's
 * profile (its <kernels> element) or else these, measured by
 * calibrate/torch/host_probe.py on the measured H200
 * (calibrate/results/h200-2026-12-04-host.jsonl: the kernels at 6 blocks
 * less at 2, over 4):
 *   GPT-2 block (LayerNorm, GELU, biases): 21 forward, 36 backward, against
 *     capsim's 10 and 14 ops (2.10 and 2.57); the whole step agrees (709
 *     kernels for 124M and 1370 for 355M, -host-steps.jsonl: 55.1 a layer);
 *   Llama block (RMSNorm, RoPE, separate q/k/v and gate/up): 44 and 84,
 *     against 11 and 15 (4.00 and 5.60).
 * torch.compile's kernels depend on the sizes it compiles for (Inductor
 * splits reductions at large ones): the whole GPT-2 124M step launches 630
 * (micro-batch 1) and 619 (4) kernels compiled against 709 and 716 eager
 * (-host-steps.jsonl; 620 against 717 at 8, -gpt2-step-compile.jsonl), so
 * 0.865 of eager's, for both passes and both families. CUDA graphs replay
 * eager's kernels. workload.kernels-per-op overrides both passes. */
static const double block_kernels_measured[2][2] = {
	{ 21.0, 36.0 }, /* layernorm models: forward, backward */
	{ 44.0, 84.0 }, /* rmsnorm or rope models */
};
#define COMPILED_SHARE 0.865

static int llama_family(const capsim_scenario *s)
{
	return s->model.norm == 1 || s->model.position == 1;
}

/* the kernel launches of a layer's ops */
static double launches(const capsim_layer_work *w)
{
	double n = 0.0;
	for (int i = 0; i < CAPSIM_LOP__COUNT; i++)
		n += w->op[i].count;
	return n;
}

/* kernels per op of the pass w (a layer's forward or backward) */
static double kernels_per_op(const capsim_scenario *s, const capsim_layer_work *w)
{
	if (s->kernels_per_op > 0)
		return s->kernels_per_op;
	if (s->framework != CAPSIM_FW_TORCH_AMP && s->framework != CAPSIM_FW_FSDP2)
		return 1.0;
	int fam = llama_family(s), b = w->backward != 0;
	double k = s->gpu.block_kernels[fam][b] > 0 ? s->gpu.block_kernels[fam][b] :
						      block_kernels_measured[fam][b];
	double ops = launches(w);
	double x = ops > 0 ? k / ops : 1.0;
	if (x < 1.0)
		x = 1.0;
	return s->execution == CAPSIM_EXEC_COMPILED ? COMPILED_SHARE * x : x;
}

/* The step's kernels outside the layers, the LM head and the loss (the
 * embedding, learned positions, the loss's bookkeeping, zero_grad and the
 * optimizer), in ops of the family's forward kernels per op: GPT-2 124M's
 * step, 709 kernels, less 12 layers x (21.0 + 35.98) and 11.9 for capsim's
 * head and loss, is 13.3 kernels (5.5 x 2.35); Llama 3 8B's at 4 layers,
 * 614 less 4 x 128 and 24.8, is 77 (16 x 4.8; fused AdamW launches more
 * kernels for larger tensors: 32 to 42 against GPT-2's 4 to 6). */
static const double step_other_ops[2] = { 5.5, 16.0 };

/* One pass of a layer (its forward or backward) as the op model times it:
 * each op's time once, their sum, and its GEMMs' and attention's */
typedef struct pass_times {
	double op[CAPSIM_LOP__COUNT];
	double all, gemm, attn;
	double kernels_per_op;   /* the framework's kernels for each op (kernels_per_op) */
} pass_times;

static void pass_times_of(const capsim_scenario *s, const capsim_gpu_perf *perf,
			  const capsim_layer_work *w, pass_times *p)
{
	p->all = p->gemm = 0.0;
	for (int i = 0; i < CAPSIM_LOP__COUNT; i++) {
		p->op[i] = capsim_layer_op_time_s(&s->gpu, perf, s->dtype, &w->op[i]);
		p->all += p->op[i];
		if (w->op[i].count > 0 && w->op[i].kind == CAPSIM_OPK_GEMM)
			p->gemm += p->op[i];
	}
	p->attn = p->op[CAPSIM_LOP_ATTN];
	p->kernels_per_op = kernels_per_op(s, w);
}

/* whether two layers' passes are the same work, op by op (exact: the
 * same computation gives the same bits; a NaN is never equal) */
static int op_equal(const capsim_op *a, const capsim_op *b)
{
	return a->name == b->name && a->kind == b->kind && a->count == b->count &&
	       a->flop == b->flop && a->bytes == b->bytes && a->m == b->m && a->n == b->n &&
	       a->k == b->k && a->bwd_flop == b->bwd_flop && a->bwd_bytes == b->bwd_bytes &&
	       a->bw_eff == b->bw_eff && a->backward == b->backward;
}

static int work_equal(const capsim_layer_work *a, const capsim_layer_work *b)
{
	if (a->tokens != b->tokens || a->flop != b->flop || a->bytes != b->bytes ||
	    a->backward != b->backward)
		return 0;
	for (int i = 0; i < CAPSIM_LOP__COUNT; i++)
		if (!op_equal(&a->op[i], &b->op[i]))
			return 0;
	return 1;
}

/* The forward and backward times of a stage's last layer: most layers of a
 * stage are alike, and pass_times_of of the same work is the same. */
typedef struct pass_memo {
	int valid;
	capsim_layer_work w;
	pass_times pf, pb;
} pass_memo;

/* pf and pb for the layer of forward work w and backward wb */
static void pass_times_memo(pass_memo *memo, const capsim_scenario *s,
			    const capsim_gpu_perf *perf, const capsim_layer_work *w,
			    const capsim_layer_work *wb, pass_times *pf, pass_times *pb)
{
	if (!memo->valid || !work_equal(&memo->w, w)) {
		pass_times_of(s, perf, w, &memo->pf);
		pass_times_of(s, perf, wb, &memo->pb);
		memo->w = *w;
		memo->valid = 1;
	}
	*pf = memo->pf;
	*pb = memo->pb;
}

/* A layer's ops on the host stream, in order (reversed for a backward):
 * each op's launches x kernels per op, their GPU time (p) scaled so that
 * the layer's kernels take `total` (the op model's times with what the step
 * adds to them: compute_scale, adapters, unfused attention) */
static void stream_layer(capsim_stream *st, const capsim_gpu_perf *perf,
			 const capsim_layer_work *w, const pass_times *p, int reverse, double total)
{
	double scale = p->all > 0.0 ? total / p->all : 0.0;
	for (int j = 0; j < CAPSIM_LOP__COUNT; j++) {
		int i = reverse ? CAPSIM_LOP__COUNT - 1 - j : j;
		if (w->op[i].count > 0)
			capsim_stream_push(st, w->op[i].count * p->kernels_per_op, perf->host_kernel_s,
					   p->op[i] * scale);
	}
	if (p->all <= 0.0)
		capsim_stream_push(st, 0, 0, total);
}

/* A pass's stream from two starts, so that a backward can begin with the
 * host ahead of the GPU by what it led at the end of the forward (an eager
 * loop issues the backward while the GPU still runs the forward's last
 * kernels, the LM head's among them). capsim_stream_push is max-plus linear
 * in the stream's start, so the end from (host -lead, gpu 0) is the larger
 * of the host-led path's end less lead and the GPU-led path's. */
typedef struct pass_streams {
	capsim_stream host_led; /* from (0, none) */
	capsim_stream gpu_led;  /* from (none, 0) */
} pass_streams;

#define STREAM_NONE (-1e300) /* a start that no path leaves from */

static void streams_push(pass_streams *p, double n, double host_s, double gpu_s)
{
	capsim_stream_push(&p->host_led, n, host_s, gpu_s);
	capsim_stream_push(&p->gpu_led, n, host_s, gpu_s);
}

static void streams_layer(pass_streams *p, const capsim_gpu_perf *perf,
			  const capsim_layer_work *w, const pass_times *t, int reverse, double total)
{
	stream_layer(&p->host_led, perf, w, t, reverse, total);
	stream_layer(&p->gpu_led, perf, w, t, reverse, total);
}

/* when the GPU ends the pass, from the GPU's start at 0 and the host's at
 * -lead (lead >= 0) */
static double streams_end(const pass_streams *p, double lead)
{
	assert(lead >= 0.0);
	double h = p->host_led.gpu - lead, g = p->gpu_led.gpu;
	return h > g ? h : g;
}

/* ZeRO-3 (FSDP): each layer's weights are all-gathered before its forward
 * and again before its backward, and its gradients reduce-scattered after
 * it, over the data-parallel group; prefetching hides them behind the layer
 * before. Times in seconds for one layer of `params` parameters. */
typedef struct {
	capsim_scenario *plane;
	capsim_fabric *f;
	capsim_step_link *busiest;
	/* the last layer's size and times: the same collectives on the same
	 * idle plane take the same time, and most layers are alike */
	double params, ag, rs;
} fsdp_ctx;

static int fsdp_layer(fsdp_ctx *z, const capsim_scenario *s, double params,
		      double *ag, double *rs, capsim_diags *d)
{
	*ag = *rs = 0.0;
	if (!z->f)
		return 0;
	if (params == z->params) {
		*ag = z->ag;
		*rs = z->rs;
		return 0;
	}
	double bytes = params * 2.0; /* 16-bit weights and gradients */
	int group = s->dp * s->cp;
	capsim_coll_result got;
	if (coll_run(z->f, z->plane, CAPSIM_COLL_ALLGATHER, bytes, group, ag, z->busiest, &got,
		     d) < 0)
		return -1;
	/* the gradients' reduce-scatter runs the all-gather's plan where NCCL
	 * chooses alike (capsim_collective_same_plan): taken from it */
	capsim_coll_req rag = coll_req(z->plane, CAPSIM_COLL_ALLGATHER, bytes, group);
	capsim_coll_req rrs = coll_req(z->plane, CAPSIM_COLL_REDUCESCATTER, bytes, group);
	double nccl_t;
	if (got.time_s > 0.0 && capsim_collective_same_plan(z->f, z->plane, &rag, &rrs, &nccl_t)) {
		*rs = got.time_s;
		calibrated_coll(z->plane, CAPSIM_COLL_REDUCESCATTER, bytes, group, rs);
	} else if (coll_link(z->f, z->plane, CAPSIM_COLL_REDUCESCATTER, bytes, group, rs,
			     z->busiest, d) < 0) {
		return -1;
	}
	z->params = params;
	z->ag = *ag;
	z->rs = *rs;
	return 0;
}

/* An unfused attention core (before FlashAttention, as in Megatron-LM
 * 2021): batched GEMMs for QK^T and AV over the full s x s (no causal
 * skipping), and memory-bound passes over the a/t x s x s scores: fused
 * scale-mask-softmax (read 2, write 2 bytes an element) and dropout (read 2,
 * write 2, mask 1); backward, four GEMMs and the softmax and dropout
 * gradients (read 6 and 5 bytes an element). Replaces the fused kernel's
 * time; returns seconds. */
static double unfused_attention_s(const capsim_scenario *s, const capsim_gpu_perf *perf,
				  int backward)
{
	const capsim_model *m = &s->model;
	double hd = capsim_model_head_dim(m), a = (double)m->heads / s->tp;
	double S = s->seq_len, Sq = S / s->cp, b = s->micro_batch;
	double e = b * a * Sq * S; /* score elements on this GPU */
	double gemm = 2.0 * e * hd;
	/* one batched kernel over b x a/t heads: its efficiency is that of its
	 * whole FLOP count */
	double g1 = capsim_op_time_s(&s->gpu, perf, s->dtype, gemm, e * 2 + 2 * b * a * S * hd * 2,
				     0, 0, 0);
	double elt = capsim_op_time_s(&s->gpu, perf, CAPSIM_DTYPE_FP32, 0.0,
				      e * (backward ? 11.0 : 9.0), 0, 0, 0);
	return (backward ? 4.0 : 2.0) * g1 + elt;
}

/* FLOPs a token needs: 6N + causal attention (capsim_flops_per_token); with
 * LoRA the frozen weights' gradients are not computed (4N) and the adapters
 * are trained (6 x their parameters) */
static double model_flops_per_token(const capsim_scenario *s)
{
	const capsim_model *m = &s->model;
	double full = capsim_flops_per_token(m, s->seq_len, 1);
	if (s->finetune != CAPSIM_FT_LORA)
		return full;
	double six_n = capsim_flops_per_token(m, 0, 1), adapters = 0.0;
	for (int l = 0; l < m->layers; l++)
		adapters += capsim_lora_layer_params(s, l);
	return full - six_n / 3.0 + 6.0 * adapters;
}

/* LoRA's frozen base has no weight gradients: each GEMM's backward is its
 * dgrad alone, as long as its forward (Hu et al. 2022, sec. 4.2) */
static void frozen_backward(capsim_layer_work *wb)
{
	wb->flop = wb->bytes = 0.0;
	for (int i = 0; i < CAPSIM_LOP__COUNT; i++) {
		capsim_op *op = &wb->op[i];
		if (op->count > 0.0 && op->kind == CAPSIM_OPK_GEMM) {
			op->count /= 2.0;
			op->flop /= 2.0;
			op->bytes /= 2.0;
		}
		wb->flop += op->flop;
		wb->bytes += op->bytes;
	}
}

/* LoRA's adapters of layer l in the forward, on one GPU: x A then (x A) B for
 * each adapted din x dout matrix, 2 T r (din + dout) FLOP, reading its input
 * and writing its output once more (thin GEMMs, rated by their FLOP) */
static double lora_forward_s(const capsim_scenario *s, const capsim_gpu_perf *perf, int l,
			     double tokens)
{
	double p = capsim_lora_layer_params(s, l) / s->tp;
	if (p <= 0.0)
		return 0.0;
	double flop = 2.0 * tokens * p;
	double bytes = act_bytes(s->dtype) * tokens * p / s->lora_rank;
	return capsim_op_time_s(&s->gpu, perf, s->dtype, flop, bytes, 0, 0, 0);
}

/* Expert all-to-all overlap (workload.parallelism.ep-overlap): in 1F1B's
 * steady state a forward of one micro-batch and a backward of another run
 * paired, layer by layer, each pass's all-to-alls hidden behind the other's
 * computation, which runs comm-slowdown slower while they do (DeepSeek-V3's
 * DualPipe, arXiv 2412.19437 sec. 3.2.1). Stage k's w = min(m, p - k - 1)
 * warm-up forwards and w cool-down backwards (at least the first forward and
 * the last backward) have no partner. The schedule's tasks have one duration
 * per stage, so the step's share is spread evenly over its m micro-batches:
 * of each pass's a2a, the paired share (m - w) / m hides up to the other
 * pass's compute of the layer. */
static void ep_overlap_layer(const capsim_scenario *s, int k, double a2a, double tf,
			     double tb, stage_cost *c)
{
	int m = capsim_microbatches(s), p = s->pp;
	int w = p - k - 1 < m ? p - k - 1 : m;
	if (w < 1)
		w = 1;
	double paired = m > w ? (double)(m - w) / m : 0.0;
	double hid_f = paired * (a2a < tb ? a2a : tb); /* the forward's, behind a backward */
	double hid_b = paired * (a2a < tf ? a2a : tf); /* the backward's, behind a forward */
	c->ep_fwd -= hid_f;
	c->ep_bwd -= hid_b;
	c->bwd += hid_f * (s->comm_slowdown - 1.0);
	c->fwd += hid_b * (s->comm_slowdown - 1.0);
}

/* workload.parallelism.tp-async resolved: auto is Megatron's and
 * DeepSpeed's default (on), not plain PyTorch's */
static int tp_async_on(const capsim_scenario *s)
{
	if (s->tp_async == 1)
		return 1;
	if (s->tp_async == 2)
		return 0;
	return s->framework == CAPSIM_FW_MEGATRON || s->framework == CAPSIM_FW_DEEPSPEED;
}

/* The LM head and the loss of one micro-batch on the last stage, forward
 * and backward: a GEMM of T x V/t x h, and the logits */
static void head_loss(const capsim_scenario *s, const capsim_gpu_perf *perf,
		      const capsim_knobs *kn, double *fwd, double *bwd)
{
	const capsim_model *m = &s->model;
	double T = (double)s->micro_batch * s->seq_len / s->cp;
	double V = (double)m->vocab / s->tp, h = m->hidden;
	/* fp8 recipes run only the blocks' linear layers in fp8 (Transformer
	 * Engine's modules); the output layer is a plain ColumnParallelLinear
	 * (megatron/core/models/gpt/gpt_model.py) and stays in bf16 */
	int hdt = s->dtype == CAPSIM_DTYPE_FP8 ? CAPSIM_DTYPE_BF16 : s->dtype;
	double head = capsim_op_time_s(&s->gpu, perf, hdt, 2 * T * V * h,
				       act_bytes(hdt) * (T * h + V * h + T * V), T, V, h);
	double loss = capsim_op_time_s(&s->gpu, perf, CAPSIM_DTYPE_FP32, 5 * T * V,
				       T * V * (act_bytes(s->dtype) + 4.0) * 2, 0, 0, 0);
	/* the LM head's wgrad too, unless it is frozen (LoRA) */
	double head_bwd = s->finetune == CAPSIM_FT_LORA ? head : 2 * head;
	double cs = capsim_knobs_scale(kn, &s->gpu);
	*fwd = cs * (head + loss);
	*bwd = cs * (head_bwd + loss);
}

/* compute and exposed communication of one stage for one micro-batch */
/* What a layer's backward recomputes first: the forward (tf, full) or
 * Megatron's selective recomputation, the attention core (QK^T, softmax,
 * dropout, AV: the core_attn module, a fused kernel's forward; Korthikanti
 * et al. 2022, sec. 4.2); cs the knobs' scale */
static double recomputed_s(const capsim_scenario *s, const capsim_gpu_perf *perf, double cs,
			   double tf, const pass_times *pf)
{
	if (s->recompute == CAPSIM_RECOMPUTE_FULL)
		return tf; /* the forward again, before the backward */
	if (s->recompute == CAPSIM_RECOMPUTE_SELECTIVE) {
		double core = s->attention == 1 ? unfused_attention_s(s, perf, 0) : pf->attn;
		return cs * core;
	}
	return 0.0;
}

/* tp_coll: one layer's tensor-parallel collectives, seconds: [0] and [1]
 * the forward's and the backward's, [2] one all-gather and [3] one
 * reduce-scatter with sequence parallelism, one all-reduce without */
#define TP_COLL_N 4

/* Overlapped by a chunked method (userbuffers, AsyncTP): what the mechanism
 * leaves exposed and adds to the layer's kernels (train/overlap.h) */
static void tp_layer_chunked(const capsim_scenario *s, const capsim_gpu_perf *perf, double cs,
			     const capsim_layer_work *w, const capsim_layer_work *wb,
			     const double *tp_coll, stage_cost *c, double *tf_pen, double *tb_pen)
{
	capsim_tp_colls tc = { 0.0, 0.0, 0.0 };
	if (s->sequence_parallel) {
		tc.ag = tp_coll[2];
		tc.rs = tp_coll[3];
	} else {
		tc.ar = tp_coll[3];
	}
	capsim_tp_hidden h;
	capsim_tp_overlap_layer(s, perf, capsim_tp_overlap_method(s), cs, w, wb, &tc, &h);
	c->tp_fwd += h.exposed_fwd;
	c->tp_bwd += h.exposed_bwd;
	*tf_pen = h.pen_fwd;
	*tb_pen = h.pen_bwd;
	if (s->recompute == CAPSIM_RECOMPUTE_FULL) {
		/* the recomputed forward's collectives, hidden as the forward's */
		c->tp_bwd += h.exposed_fwd;
		*tb_pen += h.pen_fwd;
	}
}

/* A layer's tensor-parallel collectives (tp_coll, TP_COLL_N) into c's
 * exposed TP time, and what overlapping them adds to the layer's forward
 * and backward kernels (*tf_pen, *tb_pen) */
static void tp_layer(const capsim_scenario *s, const capsim_gpu_perf *perf, double cs,
		     const capsim_layer_work *w, const capsim_layer_work *wb,
		     const pass_times *ppf, const pass_times *ppb, const double *tp_coll,
		     stage_cost *c, double *tf_pen_out, double *tb_pen_out)
{
	const pass_times pf = *ppf, pb = *ppb;
	/* tensor parallelism: per layer, two all-reduces forward and two
	 * backward; with sequence parallelism, two all-gathers and two
	 * reduce-scatters each way (Korthikanti et al. 2022, Fig. 5).
	 * Overlapped (--tp-comm-overlap) by the framework's method; the flat
	 * one hides a share tp-overlap-efficiency of what the layer's GEMMs
	 * can cover, and those GEMMs run slower by comm-slowdown while it
	 * does */
	double tf_pen = 0.0, tb_pen = 0.0;
	if (s->tp_comm_overlap && tp_coll[0] > 0.0 &&
	    capsim_tp_overlap_method(s) != CAPSIM_TPOV_FLAT) {
		tp_layer_chunked(s, perf, cs, w, wb, tp_coll, c, tf_pen_out, tb_pen_out);
		return;
	}
	if (s->tp_comm_overlap) {
		double gf = cs * pf.gemm;
		double gb = cs * pb.gemm;
		double eff = s->tp_overlap_eff > 0 ? s->tp_overlap_eff : 1.0;
		double hf = eff * (tp_coll[0] < gf ? tp_coll[0] : gf);
		double hb = eff * (tp_coll[1] < gb ? tp_coll[1] : gb);
		tf_pen = hf * (s->comm_slowdown - 1.0);
		tb_pen = hb * (s->comm_slowdown - 1.0);
		c->tp_fwd += tp_coll[0] - hf;
		c->tp_bwd += tp_coll[1] - hb;
		if (s->recompute == CAPSIM_RECOMPUTE_FULL) {
			/* the recomputed forward's collectives, hidden as the
			 * forward's are */
			tb_pen += tf_pen;
			c->tp_bwd += tp_coll[0] - hf;
		}
	} else {
		c->tp_fwd += tp_coll[0];
		double hb = 0.0;
		if (tp_async_on(s)) {
			/* the backward's collective beside the wgrad GEMMs (half
			 * of the backward's GEMM time), which it slows */
			double wgrad = 0.5 * cs * pb.gemm;
			double eff = s->tp_overlap_eff > 0 ? s->tp_overlap_eff : 1.0;
			hb = eff * (tp_coll[1] < wgrad ? tp_coll[1] : wgrad);
			tb_pen = hb * (s->comm_slowdown - 1.0);
		}
		c->tp_bwd += tp_coll[1] - hb;
		/* full recomputation re-runs the forward's all-reduces (with
		 * sequence parallelism its all-gathers and reduce-scatters)
		 * before the backward (Korthikanti et al. 2022, sec. 5) */
		if (s->recompute == CAPSIM_RECOMPUTE_FULL)
			c->tp_bwd += tp_coll[0];
	}
	*tf_pen_out = tf_pen;
	*tb_pen_out = tb_pen;
}

/* the tensor-core FLOP of a layer (for power): GEMMs and attention, with
 * what is recomputed */
static double layer_tensor_flop(const capsim_scenario *s, const capsim_layer_work *w,
				const capsim_layer_work *wb)
{
	double ff = w->op[CAPSIM_LOP_ATTN].flop, fb = wb->op[CAPSIM_LOP_ATTN].flop;
	for (int i = 0; i < CAPSIM_LOP__COUNT; i++) {
		if (w->op[i].kind == CAPSIM_OPK_GEMM)
			ff += w->op[i].flop;
		if (wb->op[i].kind == CAPSIM_OPK_GEMM)
			fb += wb->op[i].flop;
	}
	if (s->recompute == CAPSIM_RECOMPUTE_FULL)
		fb += ff;
	else if (s->recompute == CAPSIM_RECOMPUTE_SELECTIVE)
		fb += w->op[CAPSIM_LOP_ATTN].flop;
	return ff + fb;
}

/* ZeRO-3 (FSDP2, DeepSpeed): layer l's weight all-gathers and gradient
 * reduce-scatters, what of them the kernels beside them do not hide, into
 * c. The forward prefetches the next layer's all-gather during this one
 * (FSDP2's implicit forward prefetch; forward and backward prefetching in
 * the FSDP paper, arXiv 2304.11277): the stage's first layer's is exposed,
 * a later layer's hides behind the layer before (tf_prev). The backward
 * runs the previous layer's all-gather and the next one's reduce-scatter
 * during this one: the first all-gather (the stage's last layer) and the
 * last reduce-scatter (its first layer) are exposed. Layers alike, a
 * layer's own all-gather and reduce-scatter stand for its neighbours'. */
static int fsdp_cost(fsdp_ctx *z, const capsim_scenario *s, int l, int first, int last,
		     double tf_prev, double tb, stage_cost *c, capsim_diags *d)
{
	const capsim_model *m = &s->model;
	capsim_layer_params lp;
	capsim_model_layer_params(m, l, &lp);
	double lparams = (lp.attention + lp.mlp + lp.shared) / s->tp + lp.norms + lp.router +
			 (lp.moe ? m->moe_experts / (double)s->ep * lp.expert / s->tp : 0.0);
	double ag, rs;
	if (fsdp_layer(z, s, lparams, &ag, &rs, d) < 0)
		return -1;
	if (l == first)
		c->dp_fwd += ag;
	else
		c->dp_fwd += ag > tf_prev ? ag - tf_prev : 0.0;
	double beside = (l > first ? ag : 0.0) + (l < last ? rs : 0.0);
	c->dp_bwd += beside > tb ? beside - tb : 0.0;
	if (l == last)
		c->dp_bwd += ag;
	if (l == first)
		c->dp_bwd += rs;
	return 0;
}

/* Layer l of stage k: context parallelism's ring and the experts'
 * all-to-alls, into c */
static void ring_and_experts(const capsim_scenario *s, int k, int l, const pass_times *pf,
			     const pass_times *pb, double cp_step, double ep_a2a, double tf,
			     double tb, stage_cost *c)
{
	const capsim_model *m = &s->model;
	/* context parallelism: cp-1 exchanges of K and V around the ring,
	 * hidden behind the attention kernel where it is long enough */
	double attn = pf->attn, attn_b = pb->attn;
	double ring = (s->cp - 1) * cp_step;
	c->cp_fwd += ring > attn ? ring - attn : 0.0;
	c->cp_bwd += 2 * ring > attn_b ? 2 * ring - attn_b : 0.0;
	if (m->moe_experts && l >= m->moe_dense_layers) {
		c->ep_fwd += 2 * ep_a2a; /* dispatch and combine */
		c->ep_bwd += 2 * ep_a2a;
		if (s->ep_overlap)
			ep_overlap_layer(s, k, 2 * ep_a2a, tf, tb, c);
	}
}

static int stage_cost_of(const capsim_scenario *s, capsim_fabric *f,
			 const capsim_gpu_perf *perf, const capsim_knobs *kn, int k,
			 const double *tp_coll, double ep_a2a, double cp_step,
			 fsdp_ctx *z, stage_cost *c, capsim_diags *d)
{
	(void)f;
	memset(c, 0, sizeof *c);
	int first;
	int per = capsim_stage_layers(s, k, &first);
	capsim_stream sf = { 0 };
	pass_streams sb = { { 0.0, STREAM_NONE, 0.0 }, { STREAM_NONE, 0.0, 0.0 } };
	/* kernels per op of the stage's first layer, for its head and the rest */
	capsim_layer_work w0, wb0;
	capsim_layer_forward(s, first, &w0);
	capsim_layer_backward(&w0, &wb0);
	double x = kernels_per_op(s, &w0), xb = kernels_per_op(s, &wb0), hk = perf->host_kernel_s;
	double cs = capsim_knobs_scale(kn, &s->gpu);
	double head_f = 0.0, head_b = 0.0;
	if (k == s->pp - 1) {
		head_loss(s, perf, kn, &head_f, &head_b);
		/* the backward starts with the loss's and the head's (dgrad and,
		 * unless frozen, wgrad) */
		streams_push(&sb, (s->finetune == CAPSIM_FT_LORA ? 2 : 3) * xb, hk, head_b);
	}
	double tf_prev = 0.0; /* the layer before's forward, for ZeRO-3's prefetch */
	pass_memo memo = { 0 };
	for (int l = first; l < first + per; l++) {
		capsim_layer_work w, wb;
		capsim_layer_forward(s, l, &w);
		capsim_layer_backward(&w, &wb);
		if (s->finetune == CAPSIM_FT_LORA)
			frozen_backward(&wb);
		pass_times pf, pb;
		pass_times_memo(&memo, s, perf, &w, &wb, &pf, &pb);
		double tf = pf.all, tb = pb.all;
		if (s->finetune == CAPSIM_FT_LORA) {
			double a = lora_forward_s(s, perf, l, w.tokens);
			tf += a;
			tb += 2.0 * a; /* dgrad and wgrad of each adapter */
		}
		if (s->attention == 1) {
			tf += unfused_attention_s(s, perf, 0) - pf.attn;
			tb += unfused_attention_s(s, perf, 1) - pb.attn;
		}
		/* the framework's kernels beyond capsim's ops cost the GPU their
		 * gap each */
		tf += (pf.kernels_per_op - 1.0) * launches(&w) * perf->launch_s;
		tb += (pb.kernels_per_op - 1.0) * launches(&wb) * perf->launch_s;
		tf *= cs; /* the forward's kernels */
		tb *= cs; /* the backward's own */
		double tf_kern = tf, tb_kern = tb, recomputed = recomputed_s(s, perf, cs, tf, &pf);
		tb += recomputed;
		double tf_pen, tb_pen;
		tp_layer(s, perf, cs, &w, &wb, &pf, &pb, tp_coll, c, &tf_pen, &tb_pen);
		tf += tf_pen;
		tb += tb_pen;
		c->fwd += tf;
		c->bwd += tb;
		c->tensor_flop += layer_tensor_flop(s, &w, &wb);
		/* the host issues the forward's kernels, and the backward's after
		 * what it recomputes; the GEMMs' slowdown under overlap is the
		 * GPU's alone */
		stream_layer(&sf, perf, &w, &pf, 0, tf_kern);
		capsim_stream_push(&sf, 0, 0, tf_pen);
		if (s->recompute == CAPSIM_RECOMPUTE_FULL)
			streams_layer(&sb, perf, &w, &pf, 0, recomputed);
		else if (s->recompute == CAPSIM_RECOMPUTE_SELECTIVE)
			streams_push(&sb, x, hk, recomputed); /* attention's forward */
		streams_layer(&sb, perf, &wb, &pb, 1, tb_kern);
		streams_push(&sb, 0, 0, tb_pen);
		if (s->zero >= 3 &&
		    fsdp_cost(z, s, l, first, first + per - 1, tf_prev, tb, c, d) < 0)
			return -1;
		tf_prev = tf;
		ring_and_experts(s, k, l, &pf, &pb, cp_step, ep_a2a, tf, tb, c);
	}
	if (k == s->pp - 1) {
		c->fwd += head_f;
		c->bwd += head_b;
		{
			double T = (double)s->micro_batch * s->seq_len / s->cp;
			c->tensor_flop += (s->finetune == CAPSIM_FT_LORA ? 2.0 : 3.0) * 2.0 * T *
					  ((double)s->model.vocab / s->tp) * s->model.hidden;
		}
		capsim_stream_push(&sf, 2 * x, hk, head_f); /* the head GEMM, the loss */
	}
	/* what the host adds beyond the kernels: where it issues them more
	 * slowly than the GPU runs them */
	c->host_fwd = sf.gpu - sf.busy;
	c->host_bwd = streams_end(&sb, sf.gpu - sf.host) - sb.gpu_led.busy;
	/* the step's other kernels, issued once a step: as many of them on each
	 * stage (an approximation; they are the embedding's on the first and
	 * the optimizer's on every stage) */
	c->host_tail = step_other_ops[llama_family(s)] * 0.5 * (x + xb) * hk;
	return 0;
}

/* each stage's kernels for one micro-batch (forward and backward, what is
 * recomputed counted, collectives free) on s's GPU, into cost[pp]; -1 when
 * a stage cannot be costed */
static int stage_kernels(const capsim_scenario *s, const capsim_knobs *kn, double *cost)
{
	capsim_gpu_perf perf;
	capsim_gpu_perf_for(s, &s->gpu, &s->node, &perf);
	static const double no_tp[TP_COLL_N] = { 0.0, 0.0, 0.0, 0.0 };
	fsdp_ctx z = { NULL, NULL, NULL, -1.0, 0.0, 0.0 }; /* no fabric: free collectives */
	for (int k = 0; k < s->pp; k++) {
		stage_cost c;
		if (stage_cost_of(s, NULL, &perf, kn, k, no_tp, 0.0, 0.0, &z, &c, NULL) < 0)
			return -1;
		cost[k] = c.fwd + c.bwd;
	}
	return 0;
}

double capsim_step_compute_bound(const capsim_scenario *s, const capsim_knobs *knobs)
{
	/* jitter draws kernels shorter than their mean as well as longer */
	if (s->micro_batch < 1 || s->dp < 1 || s->pp < 1 || s->jitter > 0)
		return 0.0;
	const capsim_knobs *kn = knobs ? knobs : &capsim_knobs_fitted;
	double *best = capsim_xcalloc((size_t)s->pp, sizeof *best);
	double *cost = capsim_xcalloc((size_t)s->pp, sizeof *cost);
	int ok = 1;
	if (s->n_groups == 1) {
		ok = stage_kernels(s, kn, best) == 0;
	} else {
		/* a stage runs on some group's GPUs: no faster than on the fastest
		 * group for it */
		capsim_scenario *g = capsim_xmalloc(sizeof *g);
		for (int k = 0; k < s->pp; k++)
			best[k] = INFINITY;
		for (int i = 0; i < s->n_groups && ok; i++) {
			capsim_scenario_as_group(s, i, g);
			ok = stage_kernels(g, kn, cost) == 0;
			for (int k = 0; ok && k < s->pp; k++)
				if (cost[k] < best[k])
					best[k] = cost[k];
		}
		free(g);
	}
	double busiest = 0.0;
	for (int k = 0; ok && k < s->pp; k++)
		if (best[k] > busiest)
			busiest = best[k];
	free(best);
	free(cost);
	if (!ok)
		return 0.0;
	double m = s->global_batch / ((double)s->micro_batch * s->dp);
	/* less a nanosecond for each of the stage's tasks: their durations are
	 * rounded to whole nanoseconds */
	double v = s->schedule == CAPSIM_SCHED_1F1B_INTERLEAVED ? s->virtual_stages : 1;
	double b = m * busiest - 2.0 * m * v * 1e-9;
	return b > 0 ? b : 0.0;
}

int capsim_step_simulate(const capsim_scenario *s, capsim_fabric *f,
			 capsim_step *out, capsim_diags *d)
{
	return capsim_step_simulate_knobs(s, f, &capsim_knobs_fitted, out, d);
}

int capsim_step_simulate_knobs(const capsim_scenario *s, capsim_fabric *f,
			       const capsim_knobs *kn, capsim_step *out,
			       capsim_diags *d)
{
	return capsim_step_simulate_ex(s, f, kn, 0, out, d);
}

/* ---- kinds of GPU, replicas and the step ---- */

/* One kind of GPU in the job (one per node group): the scenario as its GPUs
 * see it, and what one micro-batch costs on each stage there. */
typedef struct gpu_view {
	const capsim_scenario *s; /* the scenario, or copy */
	capsim_scenario *copy; /* owned: the scenario with the group's parts */
	capsim_fabric *f;     /* the step's fabric, or an owned one of the copy */
	int owned;
	capsim_gpu_perf perf;
	double tp_coll[TP_COLL_N]; /* one layer's tensor-parallel collectives (tp_layer) */
	double ep_a2a, cp_step;
	dp_cost dp;           /* the gradient sync of a DP group */
	stage_cost *sc;       /* [pp] */
	capsim_memory memory;
	dp_memo *memo;        /* the step's, where it has several kinds; else NULL */
} gpu_view;

static void view_free(gpu_view *w)
{
	if (w->owned) {
		capsim_fabric_destroy(w->f);
		free(w->copy);
	}
	free(w->sc);
	memset(w, 0, sizeof *w);
}

/* Everything one kind of GPU needs: op model, memory, the collectives of a
 * layer, each stage's cost per micro-batch, the gradient sync. */
static int view_costs(gpu_view *w, const capsim_knobs *kn, capsim_step *out,
		      capsim_diags *d)
{
	const capsim_scenario *s = w->s;
	const capsim_model *m = &s->model;
	capsim_gpu_perf_for(s, &s->gpu, &s->node, &w->perf);
	if (out->attention_kernel[0] == '\0' && s->attention != CAPSIM_ATTENTION_UNFUSED &&
	    !(w->perf.attn_frac > 0.0))
		snprintf(out->attention_kernel, sizeof out->attention_kernel, "%s%s",
			 capsim_attn_kernel_names[w->perf.attn_kernel],
			 w->perf.assumed & CAPSIM_PERF_ASSUMED_ATTN ? " (H100's curve)" : "");
	capsim_memory_estimate(s, &w->memory);
	double T = (double)s->micro_batch * s->seq_len / s->cp;
	double ab = act_bytes(s->dtype);

	/* tensor-parallel collectives of one layer, each way */
	if (s->tp > 1) {
		double full = T * m->hidden * ab, a, b;
		if (s->sequence_parallel) {
			if (coll_link(w->f, s, CAPSIM_COLL_ALLGATHER, full, s->tp, &a,
				      &out->busiest_tp, d) < 0 ||
			    coll_link(w->f, s, CAPSIM_COLL_REDUCESCATTER, full, s->tp, &b,
				      &out->busiest_tp, d) < 0)
				return -1;
			w->tp_coll[0] = w->tp_coll[1] = 2 * (a + b);
			w->tp_coll[2] = a;
			w->tp_coll[3] = b;
		} else {
			if (coll_link(w->f, s, CAPSIM_COLL_ALLREDUCE, full, s->tp, &a,
				      &out->busiest_tp, d) < 0)
				return -1;
			w->tp_coll[0] = w->tp_coll[1] = 2 * a;
			w->tp_coll[3] = a;
		}
	}
	/* expert-parallel all-to-all of the routed tokens */
	if (s->ep > 1 && m->moe_experts &&
	    coll(w->f, s, CAPSIM_COLL_ALLTOALL,
		 T * m->moe_top_k * capsim_moe_capacity(s) * m->hidden * ab, s->ep,
		 &w->ep_a2a, d) < 0)
		return -1;
	/* one step of the context-parallel ring: this rank's K and V */
	if (s->cp > 1) {
		double kv = (m->kv_heads ? m->kv_heads : m->heads) * capsim_model_head_dim(m);
		int same = s->tp * s->cp <= s->node.gpus;
		w->cp_step = p2p_time(s, 2 * T * kv / s->tp * ab, same);
	}

	w->sc = capsim_xcalloc((size_t)s->pp, sizeof *w->sc);
	fsdp_ctx z = { NULL, NULL, &out->busiest_dp, -1.0, 0.0, 0.0 };
	int rc = -1;
	if (s->zero >= 3 && s->dp * s->cp > 1) {
		z.plane = capsim_xmalloc(sizeof *z.plane);
		capsim_step_dp_plane(s, z.plane);
		z.f = capsim_fabric_build(z.plane, d);
		if (!z.f)
			goto done;
	}
	for (int k = 0; k < s->pp; k++)
		if (stage_cost_of(s, w->f, &w->perf, kn, k, w->tp_coll, w->ep_a2a, w->cp_step,
				  &z, &w->sc[k], d) < 0)
			goto done;
	/* fp8 (Transformer Engine's delayed scaling): at the end of each
	 * micro-batch's forward and of its backward, one all_reduce(MAX) of the
	 * amaxes of every fp8 tensor of the stage (fp32 each: a GEMM's input
	 * and weight forward, its output gradient backward) over the
	 * tensor x data(x context)-parallel group, on the compute stream
	 * (transformer_engine/pytorch/quantization.py; Megatron's amax
	 * reduction group, parallel_state.py): exposed, as a DP-plane and a
	 * TP all-reduce, added to each stage's exposed DP time */
	if (s->dtype == CAPSIM_DTYPE_FP8 &&
	    (s->framework == CAPSIM_FW_MEGATRON || s->framework == CAPSIM_FW_DEEPSPEED)) {
		int first;
		int per = capsim_stage_layers(s, 0, &first);
		double n = 0.0;
		for (int l = first; l < first + per; l++) {
			capsim_layer_work lw;
			capsim_layer_forward(s, l, &lw);
			n += lw.op[CAPSIM_LOP_FP8_CAST].count;
		}
		static const capsim_coll ar[2] = { CAPSIM_COLL_ALLREDUCE, CAPSIM_COLL_ALLREDUCE };
		const double bytes[2] = { 2.0 * n * 4.0, n * 4.0 }; /* forward, backward */
		double dp[2], tp[2];
		if (dp_plane_colls(s, 2, ar, bytes, dp, NULL, d) < 0 ||
		    coll(w->f, s, CAPSIM_COLL_ALLREDUCE, bytes[0], s->tp, &tp[0], d) < 0 ||
		    coll(w->f, s, CAPSIM_COLL_ALLREDUCE, bytes[1], s->tp, &tp[1], d) < 0)
			goto done;
		for (int k = 0; k < s->pp; k++) {
			w->sc[k].dp_fwd += dp[0] + tp[0];
			w->sc[k].dp_bwd += dp[1] + tp[1];
		}
	}
	/* data-parallel gradients: 16-bit gradients of the stage's weights (the
	 * first stage, with the embedding, has the most) */
	if (s->zero < 3 &&
	    dp_sync(s, w->memory.first.trained_params, embedding_trained(s), ab, &w->dp,
		    &out->busiest_dp, w->memo, d) < 0)
		goto done;
	rc = 0;
done:
	capsim_fabric_destroy(z.f);
	free(z.plane);
	return rc;
}

/* The node group whose GPUs run stage k of replica r: its tensor x context
 * group's GPUs in Megatron's rank order (tensor, context, data, pipeline),
 * the groups' nodes in order. A tensor x context group on several kinds
 * runs at the slowest one's pace. */
static int group_kind(const capsim_scenario *s, const gpu_view *v, int r, int k)
{
	if (s->n_groups == 1)
		return 0;
	long size = (long)s->tp * s->cp;
	long first = size * (r + (long)s->dp * k), last = first + size - 1;
	int a = capsim_scenario_group_of_node(s, first / s->node.gpus);
	int b = capsim_scenario_group_of_node(s, last / s->node.gpus);
	int slow = a;
	for (int g = a + 1; g <= b; g++)
		if (v[g].sc[k].fwd + v[g].sc[k].bwd > v[slow].sc[k].fwd + v[slow].sc[k].bwd)
			slow = g;
	return slow;
}

/* Replicas that behave alike: the same kind of GPU on every stage and the
 * straggler or not. With jitter no two are alike. */
typedef struct replica_class {
	int replica;          /* the first replica of the class */
	int count;
	int straggler;        /* holds the straggler */
	unsigned char *kind;  /* [pp] */
} replica_class;

/* One replica's step, ready for the schedule. */
typedef struct replica_run {
	const capsim_scenario *s;
	const gpu_view *view;
	const replica_class *rc;
	int straggler_stage;
	int chunks;
	stage_cost *sc;                   /* [p], the straggler applied */
	capsim_time_ns *fwd, *bwd;        /* [p v] */
	capsim_time_ns *link, *zero_link, *tail; /* [p] */
	double exposed_dp0, dp_pen0, optimizer0, p2p0, host_tail0;
	/* jitter */
	gsl_rng *rng;
	uint64_t seed;
} replica_run;

static void run_free(replica_run *x)
{
	free(x->sc);
	free(x->fwd);
	free(x->bwd);
	free(x->link);
	free(x->zero_link);
	free(x->tail);
	if (x->rng)
		gsl_rng_free(x->rng);
	memset(x, 0, sizeof *x);
}

/* A task with jitter: its kernels take J x their time, where J is the mean
 * over the chunk's layers of the slowest of the tensor x context group's
 * GPUs, each a lognormal draw of mean 1 and coefficient of variation
 * s->jitter (the group synchronises at every layer's collectives). Its
 * communication keeps its time. Draws come in the schedule's key order from
 * a generator seeded by the scenario's seed and the replica, so a run
 * repeats bit for bit. */
static capsim_time_ns jitter_task(void *ctx, int k, int c, int i, int b)
{
	(void)c;
	(void)i;
	replica_run *x = ctx;
	const capsim_scenario *s = x->s;
	const stage_cost *sc = &x->sc[k];
	double comp = (b ? sc->bwd : sc->fwd) / x->chunks;
	double comm = (b ? sc->tp_bwd + sc->cp_bwd + sc->ep_bwd + sc->dp_bwd + sc->host_bwd :
			   sc->tp_fwd + sc->cp_fwd + sc->ep_fwd + sc->dp_fwd + sc->host_fwd) /
		      x->chunks;
	int first;
	int layers = capsim_stage_layers(s, k, &first) / x->chunks;
	if (layers < 1)
		layers = 1;
	double sigma2 = log1p(s->jitter * s->jitter);
	double sigma = sqrt(sigma2), mu = -sigma2 / 2.0;
	int group = s->tp * s->cp;
	double sum = 0.0;
	for (int l = 0; l < layers; l++) {
		double worst = 0.0;
		for (int g = 0; g < group; g++) {
			double xg = gsl_ran_lognormal(x->rng, mu, sigma);
			if (xg > worst)
				worst = xg;
		}
		sum += worst;
	}
	return capsim_ns_from_s(comp * sum / layers + comm);
}

/* A gradient-sync collective of c seconds behind a window of w seconds of
 * compute: all but its last bucket's share (last) runs beside the compute,
 * which meanwhile runs on the SMs the collective leaves it (a share sm
 * taken); the last bucket's share runs after it. Returns the seconds the
 * collective adds to the step that are its own (exposed), and adds to *pen
 * those that are the compute's, slowed: beside compute of w, a collective
 * of h = c (1 - last) ends inside it when h (1 - sm) <= w and the two take
 * w + h sm; past that they take h, of which h - w is exposed. */
static double dp_behind(double c, double last, double sm, double w, double *pen)
{
	if (c <= 0.0)
		return 0.0;
	double h = c * (1.0 - last);
	double exposed = h > w ? h - w : 0.0;
	double both = h * (1.0 - sm) <= w ? w + h * sm : h;
	*pen += both - w - exposed;
	return exposed + c * last;
}

/* Stage costs, transfers and tails of one replica class. dp is per stage: a
 * data-parallel group runs at its slowest kind's pace. */
static void replica_prepare(replica_run *x, const capsim_scenario *s, const gpu_view *view,
			    const replica_class *rc, int straggler_stage, const dp_cost *dp)
{
	int p = s->pp, v = s->schedule == CAPSIM_SCHED_1F1B_INTERLEAVED ? s->virtual_stages : 1;
	x->s = s;
	x->view = view;
	x->rc = rc;
	x->chunks = v;
	x->straggler_stage = rc->straggler ? straggler_stage : -1;
	x->sc = capsim_xcalloc((size_t)p, sizeof *x->sc);
	x->fwd = capsim_xcalloc((size_t)p * v, sizeof *x->fwd);
	x->bwd = capsim_xcalloc((size_t)p * v, sizeof *x->bwd);
	x->link = capsim_xcalloc((size_t)p, sizeof *x->link);
	x->zero_link = capsim_xcalloc((size_t)p, sizeof *x->zero_link);
	x->tail = capsim_xcalloc((size_t)p, sizeof *x->tail);
	const capsim_model *m = &s->model;
	double T = (double)s->micro_batch * s->seq_len / s->cp;
	double act = T * m->hidden * act_bytes(s->dtype) / (s->sequence_parallel ? s->tp : 1);
	double stride = (double)s->tp * s->cp * s->dp; /* GPUs between stages */
	for (int k = 0; k < p; k++) {
		x->sc[k] = view[rc->kind[k]].sc[k];
		if (k == x->straggler_stage) {
			x->sc[k].fwd *= s->straggler;
			x->sc[k].bwd *= s->straggler;
		}
	}
	for (int k = 0; k < p; k++) {
		const stage_cost *c = &x->sc[k];
		double f_s = c->fwd + c->tp_fwd + c->cp_fwd + c->ep_fwd + c->dp_fwd + c->host_fwd;
		double b_s = c->bwd + c->tp_bwd + c->cp_bwd + c->ep_bwd + c->dp_bwd + c->host_bwd;
		for (int q = 0; q < v; q++) {
			x->fwd[k * v + q] = capsim_ns_from_s(f_s / v);
			x->bwd[k * v + q] = capsim_ns_from_s(b_s / v);
		}
		/* activations to the next stage: the slower end's link */
		int kn = (k + 1) % p;
		long a = (long)(k * stride), b = (long)(kn * stride);
		double t = 0.0;
		if (p > 1) {
			int same = domain_of(s, a) == domain_of(s, b);
			double t0 = p2p_time(view[rc->kind[k]].s, act, same);
			double t1 = p2p_time(view[rc->kind[kn]].s, act, same);
			t = t0 > t1 ? t0 : t1;
		}
		x->link[k] = capsim_ns_from_s(t);
		if (k == 0)
			x->p2p0 = t;
		/* Megatron overlaps the reduction with the last micro-batch's
		 * backward (--overlap-grad-reduce) and, with the distributed
		 * optimizer, the all-gather of the updated weights with the next
		 * step's first forward (--overlap-param-gather). Interleaved, each
		 * of the v chunks launches its buckets as its own last backward
		 * ends, and those v chunk-backwards together are one micro-batch's
		 * backward of the whole stage: the window is the stage's backward,
		 * not one chunk's (likewise the gathers before each chunk's first
		 * forward) */
		double pen = 0.0;
		double exposed = dp_behind(dp[k].t, dp[k].last, dp[k].sm_t, c->bwd + c->tp_bwd,
					   &pen) +
				 dp_behind(dp[k].g, dp[k].last, dp[k].sm_g, c->fwd + c->tp_fwd,
					   &pen);
		/* Adam: read and write fp32 master weights, both moments and the
		 * gradient, on this GPU's shard */
		const gpu_view *w = &view[rc->kind[k]];
		double shard = s->zero < 1 ? 1.0 :
			       s->optimizer_shard ? (double)s->optimizer_shard : (double)s->dp * s->cp;
		double pbytes = k == 0 ? w->memory.first.trained_params :
					 w->memory.last.trained_params;
		double opt = pbytes / shard * 4.0 * 4.0 * 2.0 /
			     (w->s->gpu.mem_bw_bytes_per_s * w->perf.hbm_eff);
		if (k == x->straggler_stage)
			opt *= s->straggler;
		/* the host issues the optimizer's kernels (and the step's others)
		 * while the GPU runs them */
		double host = c->host_tail > opt ? c->host_tail - opt : 0.0;
		x->tail[k] = capsim_ns_from_s(exposed + pen + opt + host);
		if (k == 0) {
			x->exposed_dp0 = exposed;
			x->dp_pen0 = pen;
			x->optimizer0 = opt;
			x->host_tail0 = host;
		}
	}
	if (s->jitter > 0) {
		x->rng = gsl_rng_alloc(gsl_rng_mt19937);
		x->seed = (uint64_t)s->seed * 1000003u + (uint64_t)rc->replica;
	}
}

/* Run one replica's schedule, with its transfers or without them. */
static int replica_simulate(replica_run *x, int with_links, capsim_pipeline_result *pr)
{
	const capsim_scenario *s = x->s;
	capsim_pipeline_spec ps = { .stages = s->pp, .microbatches = capsim_microbatches(s),
				    .chunks = x->chunks, .schedule = s->schedule,
				    .fwd_ns = x->fwd, .bwd_ns = x->bwd,
				    .p2p_link_ns = with_links ? x->link : x->zero_link,
				    .tail_ns = x->tail };
	if (s->pp == 1)
		ps.schedule = CAPSIM_SCHED_1F1B;
	if (x->rng) {
		gsl_rng_set(x->rng, (unsigned long)x->seed);
		ps.task_ns = jitter_task;
		ps.task_ctx = x;
	}
	return capsim_pipeline_simulate(&ps, pr);
}

/* The classes of a cluster of one node group without jitter, as
 * replica_classes finds them replica by replica, without visiting each:
 * every stage of every replica is of the one kind, so only the straggler's
 * replica (if any) stands apart; classes in the order their first replicas
 * come. */
static int uniform_classes(const capsim_scenario *s, replica_class **out)
{
	int dp = s->dp, sr = s->straggler > 1.0 ? s->straggler_replica : -1;
	replica_class *c = capsim_xcalloc(2, sizeof *c);
	int n = 0;
	if (sr >= 0 && sr < dp) {
		replica_class lone = { .replica = sr, .count = 1, .straggler = 1 };
		replica_class rest = { .replica = sr == 0 ? 1 : 0, .count = dp - 1 };
		if (sr == 0)
			c[n++] = lone;
		if (dp > 1)
			c[n++] = rest;
		if (sr != 0)
			c[n++] = lone;
	} else {
		c[n++] = (replica_class){ .replica = 0, .count = dp };
	}
	for (int j = 0; j < n; j++)
		c[j].kind = capsim_xcalloc((size_t)s->pp, 1); /* the one kind: 0 */
	*out = c;
	return n;
}

/* The classes of alike replicas, replica by replica (replica_classes) */
static int classes_of_each(const capsim_scenario *s, const gpu_view *view,
			   replica_class **out)
{
	int p = s->pp, n = 0;
	replica_class *c = capsim_xcalloc((size_t)s->dp, sizeof *c);
	unsigned char *kind = capsim_xmalloc((size_t)p);
	for (int r = 0; r < s->dp; r++) {
		for (int k = 0; k < p; k++)
			kind[k] = (unsigned char)group_kind(s, view, r, k);
		int strag = s->straggler > 1.0 && r == s->straggler_replica;
		int j = 0;
		if (!(s->jitter > 0))
			for (; j < n; j++)
				if (c[j].straggler == strag && !memcmp(c[j].kind, kind, (size_t)p))
					break;
		if (s->jitter > 0 || j == n) {
			c[n] = (replica_class){ .replica = r, .count = 0, .straggler = strag,
						.kind = capsim_xmalloc((size_t)p) };
			memcpy(c[n].kind, kind, (size_t)p);
			j = n++;
		}
		c[j].count++;
	}
	free(kind);
	*out = c;
	return n;
}

static void classes_free(replica_class *c, int n)
{
	for (int j = 0; j < n; j++)
		free(c[j].kind);
	free(c);
}

/* The classes of alike replicas; returns how many, *out owned by the
 * caller (classes_free). One node group without jitter needs no visit of
 * each replica (uniform_classes): the same classes, which checked builds
 * hold to the visit. */
static int replica_classes(const capsim_scenario *s, const gpu_view *view,
			   replica_class **out)
{
	if (!(s->n_groups == 1 && !(s->jitter > 0)))
		return classes_of_each(s, view, out);
	int n = uniform_classes(s, out);
#if CAPSIM_CHECKS
	replica_class *each;
	int m = classes_of_each(s, view, &each);
	CAPSIM_ASSERT(m == n);
	for (int j = 0; j < n && j < m; j++)
		CAPSIM_ASSERT(each[j].replica == (*out)[j].replica &&
			      each[j].count == (*out)[j].count &&
			      each[j].straggler == (*out)[j].straggler &&
			      !memcmp(each[j].kind, (*out)[j].kind, (size_t)s->pp));
	classes_free(each, m);
#endif
	return n;
}

/* The straggler's stage: the scenario's, else the one with the most compute
 * per micro-batch in the straggler's replica (the worst case). */
static int straggler_stage_of(const capsim_scenario *s, const gpu_view *view,
			      const replica_class *c, int n)
{
	if (!(s->straggler > 1.0))
		return -1;
	if (s->straggler_stage >= 0)
		return s->straggler_stage;
	const replica_class *rc = NULL;
	for (int j = 0; j < n; j++)
		if (c[j].straggler)
			rc = &c[j];
	if (!rc)
		return -1;
	int worst = 0;
	for (int k = 1; k < s->pp; k++) {
		const stage_cost *a = &view[rc->kind[k]].sc[k], *b = &view[rc->kind[worst]].sc[worst];
		if (a->fwd + a->bwd > b->fwd + b->bwd)
			worst = k;
	}
	return worst;
}

/* What one step's simulation works with: each node group's view, the
 * classes of alike replicas, each stage's gradient sync, and the slowest
 * class's run with its schedules. One owner: step_work_free. */
typedef struct step_work {
	int kinds;                      /* node groups, 1 without them */
	gpu_view view[CAPSIM_MAX_GROUPS];
	replica_class *cls;             /* [ncls] */
	int ncls;
	int crit_cls;                   /* the slowest class, -1 before the classes run */
	replica_run best;               /* the slowest class's run */
	capsim_pipeline_result pr;      /* its schedule */
	capsim_pipeline_result pr0;     /* its schedule without the transfers */
	dp_cost *dp;                    /* [pp] each stage's gradient sync, slowest kind's pace */
	unsigned *present;              /* [pp] bit t: a class runs the stage on kind t */
	dp_memo memo;                   /* the first kind's DP plane, with several kinds */
} step_work;

/* Everything empty, the per-stage arrays zeroed, nothing to fail. */
static void step_work_init(step_work *w, const capsim_scenario *s)
{
	memset(w, 0, sizeof *w);
	w->kinds = s->n_groups > 0 ? s->n_groups : 1;
	w->crit_cls = -1;
	w->dp = capsim_xcalloc((size_t)s->pp, sizeof *w->dp);
	w->present = capsim_xcalloc((size_t)s->pp, sizeof *w->present);
}

/* Frees all that w holds, whatever step it reached. */
static void step_work_free(step_work *w)
{
	run_free(&w->best);
	classes_free(w->cls, w->ncls);
	for (int t = 0; t < w->kinds; t++)
		view_free(&w->view[t]);
	capsim_pipeline_result_free(&w->pr);
	capsim_pipeline_result_free(&w->pr0);
	dp_memo_free(&w->memo);
	free(w->dp);
	free(w->present);
}

/* Each node group's view of the job (the first group's is the scenario and
 * its fabric; the others' a copy with the group's parts and a fabric of
 * their own) and what a micro-batch costs on each stage there; each
 * group's memory in out. Returns 0, or -1 after a diagnostic. */
static int step_views(step_work *w, const capsim_scenario *s, capsim_fabric *f,
		      const capsim_knobs *kn, capsim_step *out, capsim_diags *d)
{
	gpu_view *view = w->view;
	view[0].s = s;
	view[0].f = f;
	for (int g = 1; g < w->kinds; g++) {
		view[g].copy = capsim_xmalloc(sizeof *view[g].copy);
		capsim_scenario_as_group(s, g, view[g].copy);
		view[g].s = view[g].copy;
		view[g].owned = 1;
		view[g].f = capsim_fabric_build(view[g].copy, d);
		if (!view[g].f)
			return -1;
	}
	for (int t = 0; t < w->kinds; t++) {
		view[t].memo = w->kinds > 1 ? &w->memo : NULL;
		if (view_costs(&view[t], kn, out, d) < 0)
			return -1;
	}
	out->n_groups = w->kinds;
	for (int g = 0; g < w->kinds; g++)
		out->memory[g] = view[g].memory;
	return 0;
}

/* Into *pace, each part of a kind's gradient sync c where it is slower. */
static void dp_slowest(dp_cost *pace, const dp_cost *c)
{
	pace->t = fmax(pace->t, c->t);
	pace->g = fmax(pace->g, c->g);
	pace->last = fmax(pace->last, c->last);
	pace->sm_t = fmax(pace->sm_t, c->sm_t);
	pace->sm_g = fmax(pace->sm_g, c->sm_g);
}

/* The replicas' classes, and each stage's gradient sync at the pace of the
 * slowest kind of GPU that runs it in any class; the straggler's stage and
 * the classes' count in out. */
static void step_sync_pace(step_work *w, const capsim_scenario *s, capsim_step *out)
{
	int p = s->pp;
	w->ncls = replica_classes(s, w->view, &w->cls);
	for (int j = 0; j < w->ncls; j++)
		for (int k = 0; k < p; k++)
			w->present[k] |= 1u << w->cls[j].kind[k];
	for (int k = 0; k < p; k++)
		for (int t = 0; t < w->kinds; t++)
			if (w->present[k] & (1u << t))
				dp_slowest(&w->dp[k], &w->view[t].dp);
	out->straggler_stage = straggler_stage_of(s, w->view, w->cls, w->ncls);
	out->replica_classes = w->ncls;
}

/* The diagnostic for a replica's schedule that failed with prc (a
 * CAPSIM_PIPELINE_ code other than OK) and r's message. */
static void schedule_error(const capsim_scenario *s, int prc, const capsim_pipeline_result *r,
			   capsim_diags *d)
{
	if (prc == CAPSIM_PIPELINE_ERANGE)
		capsim_diags_add(d, s->file, 0,
				 "workload: one step of this job is longer than the "
				 "simulator's clock holds (2^61 ns, about 73 years: %s); "
				 "a smaller seq-len, global-batch or model, or more GPUs, "
				 "make a step that can be simulated",
				 r->errmsg);
	else
		capsim_diags_add(d, s->file, 0, "workload: pipeline schedule: %s", r->errmsg);
}

/* Every class's step; the slowest sets everyone's (they meet at the
 * gradient sync): its run, schedule and class are kept in w (the first
 * of equals), every schedule's events counted in out. Returns 0, or -1
 * after a diagnostic. */
static int step_slowest_class(step_work *w, const capsim_scenario *s, capsim_step *out,
			      capsim_diags *d)
{
	for (int j = 0; j < w->ncls; j++) {
		replica_run x;
		memset(&x, 0, sizeof x);
		capsim_pipeline_result r;
		replica_prepare(&x, s, w->view, &w->cls[j], out->straggler_stage, w->dp);
		int prc = replica_simulate(&x, 1, &r);
		if (prc != CAPSIM_PIPELINE_OK) {
			schedule_error(s, prc, &r, d);
			run_free(&x);
			return -1;
		}
		out->events += r.events;
		if (w->crit_cls < 0 || r.makespan_ns > w->pr.makespan_ns) {
			capsim_pipeline_result_free(&w->pr);
			run_free(&w->best);
			w->pr = r;
			w->best = x;
			w->crit_cls = j;
		} else {
			capsim_pipeline_result_free(&r);
			run_free(&x);
		}
	}
	return 0;
}

/* The slowest class's schedule again without its transfers (what they
 * expose is the difference), its events counted, its first replica the
 * step's critical one. Returns 0, or -1 after adding to d why that schedule
 * failed. */
static int step_without_transfers(step_work *w, const capsim_scenario *s, capsim_step *out,
				  capsim_diags *d)
{
	int prc = replica_simulate(&w->best, 0, &w->pr0);
	if (prc != CAPSIM_PIPELINE_OK) {
		schedule_error(s, prc, &w->pr0, d);
		return -1;
	}
	out->events += w->pr0.events;
	out->critical_replica = w->cls[w->crit_cls].replica;
	return 0;
}

/* The stage that finishes last sets the step: the step's time, and where
 * that stage's time goes (compute, each kind of exposed communication, the
 * host, the bubble), in out. */
static void step_breakdown(const step_work *w, const capsim_scenario *s, capsim_step *out)
{
	int p = s->pp;
	int mb = out->microbatches;
	const capsim_pipeline_result *pr = &w->pr, *pr0 = &w->pr0;
	const replica_run *best = &w->best;
	const stage_cost *sc = best->sc;
	int crit = 0;
	for (int k = 1; k < p; k++)
		if (pr->stage[k].busy_ns > pr->stage[crit].busy_ns)
			crit = k;
	out->critical_stage = crit;
	out->critical_group = w->cls[w->crit_cls].kind[crit];
	out->step_time_s = (double)pr->makespan_ns * 1e-9;
	out->p2p_s = best->p2p0;
	out->dp_sync_s = w->dp[0].t + w->dp[0].g;
	out->exposed_comm_dp_s = best->exposed_dp0;
	out->optimizer_s = best->optimizer0;
	out->exposed_comm_tp_s = mb * (sc[crit].tp_fwd + sc[crit].tp_bwd);
	out->exposed_comm_cp_s = mb * (sc[crit].cp_fwd + sc[crit].cp_bwd);
	out->exposed_comm_ep_s = mb * (sc[crit].ep_fwd + sc[crit].ep_bwd);
	out->host_s = mb * (sc[crit].host_fwd + sc[crit].host_bwd) + best->host_tail0;
	out->compute_tensor_flop = mb * sc[crit].tensor_flop;
	double dp_layers = mb * (sc[crit].dp_fwd + sc[crit].dp_bwd);
	out->exposed_comm_dp_s += dp_layers;
	if (s->jitter > 0) /* the kernels' share of the jittered busy time */
		out->compute_s = (double)pr->stage[crit].busy_ns * 1e-9 - out->exposed_comm_tp_s -
				 out->exposed_comm_cp_s - out->exposed_comm_ep_s - dp_layers -
				 mb * (sc[crit].host_fwd + sc[crit].host_bwd);
	else
		out->compute_s = mb * (sc[crit].fwd + sc[crit].bwd);
	out->compute_s += best->dp_pen0; /* slowed beside the gradient sync */
	out->exposed_comm_pp_s = (double)(pr->makespan_ns - pr0->makespan_ns) * 1e-9;
	if (out->exposed_comm_pp_s < 0)
		out->exposed_comm_pp_s = 0;
	out->exposed_comm_s = out->exposed_comm_tp_s + out->exposed_comm_cp_s +
			      out->exposed_comm_pp_s + out->exposed_comm_dp_s +
			      out->exposed_comm_ep_s;
	out->bubble_s = (double)pr0->stage[crit].idle_ns * 1e-9;
}

/* The GPUs' rate spread (workload.variability): the simulated step has every
 * rank at its model's mean rate; a synchronous step waits for the slowest of
 * the ranks that synchronise (a tensor x context group at each layer, the
 * pipeline's stages along its critical path, the replicas at the gradient
 * sync: all tp x cp x pp x dp of them), so the kernels on the critical path
 * (the critical stage's compute and its bubble, which waits on the others'
 * kernels) take the expected maximum of their rates' draws. The largest
 * coefficient of variation of the node groups' GPUs; the step, and what
 * the variability adds and spreads, in out. */
static void step_variability(const step_work *w, const capsim_scenario *s, capsim_step *out)
{
	if (!s->variability)
		return;
	double cv = 0.0;
	for (int t = 0; t < w->kinds; t++) {
		const capsim_gpu *g = &w->view[t].s->gpu;
		cv = fmax(cv, hypot(g->rate_cv, g->step_cv));
	}
	long n = (long)s->tp * s->cp * s->pp * s->dp;
	double kernel_s = out->compute_s + out->bubble_s;
	capsim_slowest_rank(kernel_s, cv, n, &out->variability_s, &out->step_time_sd_s);
	if (!(out->step_time_sd_s > 0))
		return;
	out->variability_kernel_s = kernel_s;
	out->variability_cv = cv;
	out->variability_ranks = n;
	out->step_time_s += out->variability_s;
}

/* A layer's times on the first stage, the schedule's critical path (owned
 * by out), and what the step achieves: tokens and model FLOP per step, the
 * data loader's stall added to the step, tokens per second, MFU, the steps
 * and the time to train, in out. */
static void step_throughput(const step_work *w, const capsim_scenario *s, capsim_step *out)
{
	const stage_cost *sc = w->best.sc;
	int first0;
	int layers0 = capsim_stage_layers(s, 0, &first0);
	out->layer_fwd_s = sc[0].fwd / layers0;
	out->layer_bwd_s = sc[0].bwd / layers0;
	out->tp_fwd_s = w->view[0].tp_coll[0];
	out->tp_bwd_s = w->view[0].tp_coll[1];
	out->path_len = capsim_pipeline_critical_path(&w->pr, &out->path);
	out->tokens_per_step = s->global_batch * s->seq_len;
	out->model_flops_per_step = model_flops_per_token(s) * out->tokens_per_step;
	data_loader(s, out);
	out->tokens_per_s = out->tokens_per_step / out->step_time_s;
	out->mfu = capsim_step_mfu(s, out->model_flops_per_step, out->step_time_s);
	out->steps = capsim_scenario_steps(s);
	out->time_to_train_s = out->steps * out->step_time_s;
}

int capsim_step_simulate_ex(const capsim_scenario *s, capsim_fabric *f,
			    const capsim_knobs *kn, int keep, capsim_step *out,
			    capsim_diags *d)
{
	memset(out, 0, sizeof *out);
	out->straggler_stage = -1;
	out->microbatches = capsim_microbatches(s);
	step_work w;
	step_work_init(&w, s);
	int rc = -1;
	if (step_views(&w, s, f, kn, out, d) < 0)
		goto done;
	step_sync_pace(&w, s, out);
	if (step_slowest_class(&w, s, out, d) < 0 || step_without_transfers(&w, s, out, d) < 0)
		goto done;
	step_breakdown(&w, s, out);
	step_variability(&w, s, out);
	step_throughput(&w, s, out);
	rc = 0;
	if (keep) {
		out->pipeline = capsim_xmalloc(sizeof *out->pipeline);
		*out->pipeline = w.pr; /* the step owns it now */
		memset(&w.pr, 0, sizeof w.pr);
	}
done:
	if (rc < 0)
		capsim_step_free(out);
	step_work_free(&w);
	return rc;
}

void capsim_step_free(capsim_step *r)
{
	if (!r)
		return;
	free(r->path);
	r->path = NULL;
	r->path_len = 0;
	if (r->pipeline) {
		capsim_pipeline_result_free(r->pipeline);
		free(r->pipeline);
		r->pipeline = NULL;
	}
}

/* fprintf that adds what it wrote to *sum */
static void tprintf(FILE *out, double *sum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void tprintf(FILE *out, double *sum, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vfprintf(out, fmt, ap);
	va_end(ap);
	if (n > 0)
		*sum += n;
}

double capsim_step_trace_bound(const capsim_step *r)
{
	const capsim_pipeline_result *p = r->pipeline;
	if (!p)
		return 0.0;
	/* the longest lines the writer below can print: 300 bytes for each
	 * stage's three names and tail, 160 for a task (ints of 11 digits,
	 * times of up to 20) */
	return 64.0 + p->stages * (300.0 + 160.0 * (double)p->tasks_per_stage);
}

int capsim_step_trace(const capsim_step *r, FILE *out, double max_bytes)
{
	const capsim_pipeline_result *p = r->pipeline;
	if (!p)
		return -1;
	if (capsim_step_trace_bound(r) > max_bytes)
		return -2;
	double sum = 0.0;
	tprintf(out, &sum, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
	int first = 1;
	for (int k = 0; k < p->stages; k++) {
		tprintf(out, &sum, "%s{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,"
			"\"args\":{\"name\":\"stage %d\"}},\n"
			"{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
			"\"args\":{\"name\":\"compute\"}},\n"
			"{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":1,"
			"\"args\":{\"name\":\"gradient sync + optimizer\"}}",
			first ? "" : ",\n", k, k, k, k);
		first = 0;
		for (size_t n = 0; n < p->tasks_per_stage; n++) {
			const capsim_pipeline_task *t = capsim_pipeline_task_at(p, k, n);
			tprintf(out, &sum, ",\n{\"name\":\"%s mb%d c%d\",\"cat\":\"%s\",\"ph\":\"X\","
				"\"ts\":%.3f,\"dur\":%.3f,\"pid\":%d,\"tid\":0}",
				t->backward ? "B" : "F", t->microbatch, t->chunk,
				t->backward ? "backward" : "forward", (double)t->start_ns / 1e3,
				(double)(t->end_ns - t->start_ns) / 1e3, k);
		}
		const capsim_pipeline_stage *st = &p->stage[k];
		if (st->tail_ns > 0)
			tprintf(out, &sum, ",\n{\"name\":\"gradient sync + optimizer\",\"cat\":\"tail\","
				"\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,\"pid\":%d,\"tid\":1}",
				(double)st->last_end_ns / 1e3, (double)st->tail_ns / 1e3, k);
		if (sum > max_bytes)
			return -2; /* the bound above was wrong: never write past the cap */
	}
	tprintf(out, &sum, "\n]}\n");
	return ferror(out) ? -1 : 0;
}
