/* capsim - tensor-parallel communication hidden behind the GEMMs, as each
 * implementation does it.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include "overlap.h"

/* SMs of the H100 and H200 SXM (NVIDIA H100 Tensor Core GPU Architecture
 * whitepaper: 132 on the SXM5 part), the GPUs userbuffers is tuned for; on
 * others an assumption */
#define GPU_SMS 132.0
/* Transformer Engine's default userbuffers configuration
 * (transformer_engine/pytorch/module/base.py, initialize_ub,
 * get_default_config): ring exchange on 1 SM and the copy engine, the GEMM
 * keeping every SM, split in tp chunks; pipelined and bulk overlaps on 16
 * SMs taken from the GEMM (set_sm_margin), pipelined in 4 splits */
#define UB_COMM_SMS 16.0
#define UB_PIPELINE_SPLITS 4
/* Chunks run on rotating compute streams, so consecutive chunk GEMMs
 * overlap and fill each other's last wave: Transformer Engine's
 * _NUM_MAX_UB_STREAMS = 3 (transformer_engine/pytorch/module/base.py);
 * AsyncTP's two streams swapping roles ("Introducing Async Tensor
 * Parallelism in PyTorch", discuss.pytorch.org, 2024). A chunk GEMM runs at
 * the rate of a GEMM `streams` chunks large. */
#define UB_STREAMS 3.0
#define ASYNC_TP_STREAMS 2.0

int capsim_tp_overlap_method(const capsim_scenario *s)
{
	if (s->tp_overlap_method != CAPSIM_TPOV_FRAMEWORK)
		return s->tp_overlap_method;
	switch (s->framework) {
	case CAPSIM_FW_MEGATRON:
		return CAPSIM_TPOV_USERBUFFERS;
	case CAPSIM_FW_TORCH_AMP:
	case CAPSIM_FW_FSDP2:
		return CAPSIM_TPOV_ASYNC_TP;
	default:
		return CAPSIM_TPOV_FLAT;
	}
}

double capsim_tp_chunked_exposed(double g, double c, int n, int ring)
{
	if (c <= 0.0)
		return 0.0;
	double total;
	if (n <= 1) {
		total = g > c ? g : c;
	} else if (ring) {
		double step = c / (n - 1), chunk = g / n;
		total = (n - 1) * (chunk > step ? chunk : step) + chunk;
	} else {
		double step = c / n, chunk = g / n;
		total = chunk + (n - 1) * (chunk > step ? chunk : step) + step;
	}
	double e = total - g;
	return e < 0.0 ? 0.0 : e > c ? c : e;
}

/* share of op's launches (a backward GEMM op is dgrad and wgrad: 0.5 each)
 * run as n chunks of m / n rows, seconds by the op model */
static double gemm_chunks_s(const capsim_scenario *s, const capsim_gpu_perf *perf,
			    const capsim_op *op, double share, double n)
{
	if (op->count <= 0.0 || op->kind != CAPSIM_OPK_GEMM)
		return 0.0;
	capsim_op c = *op;
	c.count *= share * n;
	c.flop *= share;
	c.bytes *= share;
	c.m /= n;
	return capsim_layer_op_time_s(&s->gpu, perf, s->dtype, &c);
}

/* One overlap: collective c behind a share of op split in n chunks on
 * `streams` streams, the GEMM on GPU_SMS - sms SMs, into *exposed and
 * *pen */
typedef struct hide_how {
	int n, ring;
	double sms, streams;
} hide_how;

static void hide(const capsim_scenario *s, const capsim_gpu_perf *perf, double cs,
		 const capsim_op *op, double share, hide_how h, double c, double *exposed,
		 double *pen)
{
	double g0 = cs * gemm_chunks_s(s, perf, op, share, 1);
	if (g0 <= 0.0) {
		*exposed += c;
		return;
	}
	double chunks = h.n / h.streams > 1.0 ? h.n / h.streams : 1.0;
	double gn = cs * gemm_chunks_s(s, perf, op, share, chunks) * GPU_SMS / (GPU_SMS - h.sms);
	*exposed += capsim_tp_chunked_exposed(gn, c, h.n, h.ring);
	*pen += gn > g0 ? gn - g0 : 0.0;
}

/* AsyncTP's reduce-scatter ends in a kernel that sums the tp partial
 * shards of the output each rank received: reads T x h, writes T x h / t */
static double async_reduce_s(const capsim_scenario *s, const capsim_gpu_perf *perf,
			     const capsim_layer_work *w)
{
	double t = s->tp, e = s->dtype == CAPSIM_DTYPE_FP32 ? 4.0 : 2.0;
	double elems = w->tokens * s->model.hidden;
	double bytes = elems * e * (1.0 + 1.0 / t);
	capsim_op r = { .name = "tp_reduce", .kind = CAPSIM_OPK_ELEMENTWISE, .count = 1.0,
			.flop = elems, .bytes = bytes };
	return capsim_layer_op_time_s(&s->gpu, perf, CAPSIM_DTYPE_BF16, &r);
}

/* Transformer Engine's userbuffers (Megatron-Core --tp-comm-overlap, which
 * needs sequence parallelism): forward, the all-gathers before QKV and FC1
 * by ring exchange, the reduce-scatters after PROJ and FC2 pipelined;
 * backward, the output gradients' all-gathers before PROJ's and FC2's dgrad
 * by ring exchange, the input gradients' reduce-scatters beside QKV's and
 * FC1's wgrad in bulk. Without sequence parallelism (an assumption: TE
 * refuses it) each all-reduce takes its reduce-scatter's place. */
static void userbuffers(const capsim_scenario *s, const capsim_gpu_perf *perf, double cs,
			const capsim_layer_work *w, const capsim_layer_work *wb,
			const capsim_tp_colls *tc, capsim_tp_hidden *o)
{
	hide_how ring = { s->tp, 1, 0.0, UB_STREAMS };
	hide_how pipe = { UB_PIPELINE_SPLITS, 0, UB_COMM_SMS, UB_STREAMS };
	hide_how bulk = { 1, 0, UB_COMM_SMS, 1.0 };
	double rs = tc->ag > 0.0 ? tc->rs : tc->ar;
	if (tc->ag > 0.0) {
		hide(s, perf, cs, &w->op[CAPSIM_LOP_QKV], 1.0, ring, tc->ag, &o->exposed_fwd,
		     &o->pen_fwd);
		hide(s, perf, cs, &w->op[CAPSIM_LOP_FC1], 1.0, ring, tc->ag, &o->exposed_fwd,
		     &o->pen_fwd);
		hide(s, perf, cs, &wb->op[CAPSIM_LOP_PROJ], 0.5, ring, tc->ag, &o->exposed_bwd,
		     &o->pen_bwd);
		hide(s, perf, cs, &wb->op[CAPSIM_LOP_FC2], 0.5, ring, tc->ag, &o->exposed_bwd,
		     &o->pen_bwd);
	}
	hide(s, perf, cs, &w->op[CAPSIM_LOP_PROJ], 1.0, pipe, rs, &o->exposed_fwd, &o->pen_fwd);
	hide(s, perf, cs, &w->op[CAPSIM_LOP_FC2], 1.0, pipe, rs, &o->exposed_fwd, &o->pen_fwd);
	hide(s, perf, cs, &wb->op[CAPSIM_LOP_QKV], 0.5, bulk, rs, &o->exposed_bwd, &o->pen_bwd);
	hide(s, perf, cs, &wb->op[CAPSIM_LOP_FC1], 0.5, bulk, rs, &o->exposed_bwd, &o->pen_bwd);
}

/* PyTorch's AsyncTP (torch.compile's micro-pipelining over symmetric
 * memory, with sequence parallelism): every all-gather + matmul and matmul
 * + reduce-scatter split in tp chunks whose transfers run on the copy
 * engine, taking no SMs; each reduce-scatter ends in a reduction kernel.
 * Forward as userbuffers; backward, the output gradients' all-gathers
 * before PROJ's and FC2's dgrad, the input gradients' reduce-scatters after
 * QKV's and FC1's dgrad. Without sequence parallelism nothing is
 * decomposed: the all-reduces stay exposed; nor in eager execution, as
 * AsyncTP is a torch.compile pass (torchtitan refuses it without compile). */
static void async_tp(const capsim_scenario *s, const capsim_gpu_perf *perf, double cs,
		     const capsim_layer_work *w, const capsim_layer_work *wb,
		     const capsim_tp_colls *tc, capsim_tp_hidden *o)
{
	if (tc->ag <= 0.0 || s->execution == CAPSIM_EXEC_EAGER) {
		double pass = tc->ag > 0.0 ? 2.0 * (tc->ag + tc->rs) : 2.0 * tc->ar;
		o->exposed_fwd += pass;
		o->exposed_bwd += pass;
		return;
	}
	hide_how ring = { s->tp, 1, 0.0, ASYNC_TP_STREAMS };
	hide_how pipe = { s->tp, 0, 0.0, ASYNC_TP_STREAMS };
	double red = cs * async_reduce_s(s, perf, w);
	hide(s, perf, cs, &w->op[CAPSIM_LOP_QKV], 1.0, ring, tc->ag, &o->exposed_fwd, &o->pen_fwd);
	hide(s, perf, cs, &w->op[CAPSIM_LOP_FC1], 1.0, ring, tc->ag, &o->exposed_fwd, &o->pen_fwd);
	hide(s, perf, cs, &w->op[CAPSIM_LOP_PROJ], 1.0, pipe, tc->rs, &o->exposed_fwd, &o->pen_fwd);
	hide(s, perf, cs, &w->op[CAPSIM_LOP_FC2], 1.0, pipe, tc->rs, &o->exposed_fwd, &o->pen_fwd);
	hide(s, perf, cs, &wb->op[CAPSIM_LOP_PROJ], 0.5, ring, tc->ag, &o->exposed_bwd,
	     &o->pen_bwd);
	hide(s, perf, cs, &wb->op[CAPSIM_LOP_FC2], 0.5, ring, tc->ag, &o->exposed_bwd, &o->pen_bwd);
	hide(s, perf, cs, &wb->op[CAPSIM_LOP_QKV], 0.5, pipe, tc->rs, &o->exposed_bwd, &o->pen_bwd);
	hide(s, perf, cs, &wb->op[CAPSIM_LOP_FC1], 0.5, pipe, tc->rs, &o->exposed_bwd, &o->pen_bwd);
	o->pen_fwd += 2.0 * red;
	o->pen_bwd += 2.0 * red;
}

void capsim_tp_overlap_layer(const capsim_scenario *s, const capsim_gpu_perf *perf, int m,
			     double cs, const capsim_layer_work *w, const capsim_layer_work *wb,
			     const capsim_tp_colls *tc, capsim_tp_hidden *out)
{
	out->exposed_fwd = out->exposed_bwd = out->pen_fwd = out->pen_bwd = 0.0;
	if (m == CAPSIM_TPOV_ASYNC_TP)
		async_tp(s, perf, cs, w, wb, tc, out);
	else
		userbuffers(s, perf, cs, w, wb, tc, out);
}
