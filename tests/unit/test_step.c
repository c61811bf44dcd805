/* test_step.c - one training step: consistency of what it reports,
 * properties (faster links never slower, determinism, weak scaling), and the
 * published Megatron-LM step times of SC21 Table 1 (A100) and the Megatron-LM
 * README's H100 table, printed with their errors (docs/validation.md). */
#include "catalog.h"
#include "testutil.h"
#include "residuals.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <jansson.h>

#include "collective.h"
#include "fabric.h"
#include "knobs.h"
#include "ops.h"
#include "eval.h"
#include "power.h"
#include "reliab.h"
#include "scenario.h"
#include "step.h"

TESTUTIL_CATALOG_FIXTURE

static capsim_scenario *load(const char *text, const capsim_set *sets, size_t n)
{
	capsim_scenario *s = malloc(sizeof *s);
	capsim_diags d = { 0 };
	int rc = capsim_scenario_load_memory(text, strlen(text), "s.xml", cat, sets, n, s, &d);
	capsim_diags_print(&d, stderr);
	capsim_diags_free(&d);
	if (rc)
		fail_msg("scenario does not load");
	return s;
}

static capsim_step step_of(const capsim_scenario *s)
{
	capsim_diags d = { 0 };
	capsim_fabric *f = capsim_fabric_build(s, &d);
	if (!f)
		fail_msg("fabric");
	capsim_step r;
	if (capsim_step_simulate(s, f, &r, &d) < 0) {
		capsim_diags_print(&d, stderr);
		fail_msg("step fails");
	}
	capsim_fabric_destroy(f);
	capsim_diags_free(&d);
	capsim_step_free(&r); /* the numbers stay; the path goes */
	return r;
}

/* Host-bound in capsim's own prediction: the host stream adds a quarter of
 * the step or more to the kernels (the error model's feature). */
static int host_bound(const capsim_step *r)
{
	return r->host_s >= 0.25 * r->step_time_s;
}

/* One measured step of one H200 or H100 for the error model
 * (tests/unit/residuals.h): plain PyTorch in `stack`, one GPU. */
static void record_step(const char *table, const char *row, const char *gpu,
			const char *stack, const char *profile, int host, int in_sample,
			double predicted, double measured)
{
	testutil_residual_record(&(testutil_residual){
		.table = table, .row = row, .family = "measured-steps", .quantity = "step",
		.gpu = gpu, .gen = testutil_gpu_gen(gpu), .stack = stack, .profile = profile,
		.host_bound = host, .gpus = 1, .in_sample = in_sample, .predicted = predicted,
		.measured = measured });
}

/* a measurement file's name without its directory and ".jsonl": the table
 * its rows belong to */
static void file_table(const char *file, char *table, size_t n)
{
	const char *base = strrchr(file, '/');
	snprintf(table, n, "%s", base ? base + 1 : file);
	char *dot = strstr(table, ".jsonl");
	if (dot)
		*dot = '\0';
}

/* the stack of a host_probe.py or power_probe.py mode */
static const char *torch_stack(const char *mode)
{
	return !strcmp(mode, "graphs") ? "torch-graphs" :
	       !strcmp(mode, "compile") || !strcmp(mode, "compiled") ? "torch-compiled" :
								      "torch-eager";
}

static const char base[] =
	"<scenario name=\"b\"><cluster nodes=\"4\"><node ref=\"dgx-h100\"/>"
	"<fabric topology=\"fat-tree\" transport=\"infiniband\" routing=\"adaptive\">"
	"<switch ref=\"qm9700\"/></fabric></cluster>"
	"<workload seq-len=\"4096\" global-batch=\"64\" tokens=\"1T\" dtype=\"bf16\">"
	"<model ref=\"llama-2-13b\"/><parallelism tp=\"8\" pp=\"2\" zero=\"1\" "
	"sequence-parallel=\"on\"/></workload></scenario>";

/* What the step reports adds up: tokens/s is tokens per step over the step;
 * MFU is model FLOPs over bf16 peak x GPUs x step; the breakdown's parts
 * never exceed the step; time to train is steps x step. */
static void test_consistency(void **state)
{
	(void)state;
	capsim_scenario *s = load(base, NULL, 0);
	capsim_step r = step_of(s);
	assert_rel(r.tokens_per_step, 64.0 * 4096, 0);
	assert_rel(r.tokens_per_s, r.tokens_per_step / r.step_time_s, 1e-12);
	double flops = capsim_flops_per_token(&s->model, 4096, 1) * r.tokens_per_step;
	assert_rel(r.mfu, flops / (989.4e12 * 32 * r.step_time_s), 1e-9);
	assert_true(r.compute_s < r.step_time_s);
	assert_true(r.compute_s + r.exposed_comm_s + r.bubble_s <= r.step_time_s * 1.001);
	assert_int_equal(r.microbatches, 64 / 2); /* dp = 32 / (8 x 2) = 2 */
	assert_rel(r.time_to_train_s, r.steps * r.step_time_s, 1e-12);
	assert_true(r.mfu > 0.2 && r.mfu < 0.8);
	free(s);
}

/* Faster links never slow a step; the same inputs give the same step. */
static void test_properties(void **state)
{
	(void)state;
	capsim_scenario *s = load(base, NULL, 0);
	capsim_step a = step_of(s), b = step_of(s);
	assert_true(a.step_time_s == b.step_time_s && a.events == b.events);
	const capsim_set fast[] = { { "cluster.gpu.scale-up.bandwidth", "3.6 TB/s" },
				    { "cluster.nic.port.speed", "1600 Gb/s" },
				    { "cluster.fabric.switch.ports.speed", "1600 Gb/s" } };
	capsim_scenario *t = load(base, fast, 3);
	capsim_step c = step_of(t);
	assert_true(c.step_time_s <= a.step_time_s * (1 + 1e-12));
	assert_true(c.exposed_comm_tp_s < a.exposed_comm_tp_s);
	/* overlapping TP communication with the GEMMs never makes it slower
	 * than comm-slowdown allows, and exposes less */
	const capsim_set ov[] = { { "workload.parallelism.tp-comm-overlap", "on" } };
	capsim_scenario *u = load(base, ov, 1);
	capsim_step e = step_of(u);
	assert_true(e.exposed_comm_tp_s < a.exposed_comm_tp_s);
	free(s);
	free(t);
	free(u);
}

/* Weak scaling: twice the data-parallel replicas and twice the batch keep
 * the step within a few percent on a non-blocking fabric. */
static void test_weak_scaling(void **state)
{
	(void)state;
	capsim_scenario *s = load(base, NULL, 0);
	const capsim_set twice[] = { { "cluster.nodes", "8" }, { "workload.global-batch", "128" } };
	capsim_scenario *t = load(base, twice, 2);
	capsim_step a = step_of(s), b = step_of(t);
	assert_rel(b.step_time_s, a.step_time_s, 0.05);
	assert_rel(b.tokens_per_s, 2 * a.tokens_per_s, 0.05);
	free(s);
	free(t);
}

/* Kernels replayed from CUDA graphs pay less launch overhead than eager
 * launches: a small model at micro-batch 1 (launch-bound) gains most. */
static void test_cuda_graphs(void **state)
{
	(void)state;
	const capsim_set small[] = { { "workload.model.ref", "gpt2-124m" },
				     { "workload.seq-len", "1024" },
				     { "workload.parallelism.tp", "1" },
				     { "workload.parallelism.pp", "1" },
				     { "workload.global-batch", "32" } };
	capsim_scenario *s = load(base, small, 5);
	capsim_step eager = step_of(s);
	s->execution = CAPSIM_EXEC_GRAPHS;
	capsim_step graphs = step_of(s);
	assert_true(graphs.compute_s < eager.compute_s);
	assert_true(graphs.step_time_s < eager.step_time_s);
	assert_rel(graphs.host_s, 0.0, 0);
	free(s);
}

/* ZeRO-3 gathers every layer's weights before its forward and backward and
 * scatters its gradients after, for every micro-batch: more exposed DP
 * communication than ZeRO-1's once-a-step reduction, less memory. */
static void test_zero3(void **state)
{
	(void)state;
	capsim_scenario *s = load(base, NULL, 0);
	capsim_step z1 = step_of(s);
	s->zero = 3;
	capsim_step z3 = step_of(s);
	assert_true(z3.exposed_comm_dp_s > z1.exposed_comm_dp_s);
	assert_true(z3.memory[0].peak.weights_bytes < z1.memory[0].peak.weights_bytes);
	assert_true(z3.step_time_s >= z1.step_time_s);
	free(s);
}

/* The report names each collective's bottleneck: a tensor-parallel
 * all-gather or reduce-scatter inside a DGX moves 7/8 of the layer's
 * activations through each GPU's NVLink (ring or NVLS alike); the
 * data-parallel reduce-scatter over 2 replicas, one GPU of each per node on
 * its plane, sends half the gradients (2 bytes a parameter) out of one NIC. */
static void test_busiest_links(void **state)
{
	(void)state;
	capsim_scenario *s = load(base, NULL, 0);
	capsim_step r = step_of(s);
	assert_non_null(r.busiest_tp.kind);
	assert_non_null(r.busiest_dp.kind);
	assert_int_equal(strncmp(r.busiest_tp.kind, "nvlink-", 7), 0);
	assert_int_equal(strncmp(r.busiest_dp.kind, "nic-", 4), 0);
	double full = (double)s->micro_batch * s->seq_len * s->model.hidden * 2.0;
	assert_rel(r.busiest_tp.bytes, full * 7.0 / 8.0, 0.02);
	assert_int_equal(s->dp, 2);
	assert_rel(r.busiest_dp.bytes, r.memory[0].first.params * 2.0 / 2.0, 0.02);
	/* one replica: no data-parallel collective, no link to name */
	s->nodes = 2;
	s->dp = 1;
	r = step_of(s);
	assert_null(r.busiest_dp.kind);
	free(s);
}

/* A GPU 20% slow holds up every replica: it goes to the stage with the
 * most work, whose kernels then take 1.2 times as long, and the step grows
 * by nearly all of that (1F1B's steady state runs at the slowest stage's
 * pace); no straggler, no stage named. The compute slowed beside the
 * gradient sync (the SMs its channels take, counted in compute) does not
 * grow with the straggler: within 0.1%. */
static void test_straggler(void **state)
{
	(void)state;
	capsim_scenario *s = load(base, NULL, 0);
	capsim_step fast = step_of(s);
	assert_int_equal(fast.straggler_stage, -1);
	s->straggler = 1.2;
	capsim_step slow = step_of(s);
	assert_int_equal(slow.straggler_stage, fast.critical_stage);
	assert_int_equal(slow.critical_stage, fast.critical_stage);
	assert_rel(slow.compute_s, 1.2 * fast.compute_s, 1e-3);
	double more = slow.compute_s - fast.compute_s;
	assert_true(slow.step_time_s - fast.step_time_s > 0.9 * more);
	assert_true(slow.step_time_s - fast.step_time_s < 1.1 * more);
	free(s);
}

/* Uneven stages with an interleaved schedule (Megatron-Core's first/last
 * stage layer counts with virtual pipelining, each stage's layers split
 * evenly over its chunks): llama-2-13b's 40 layers on pp 4 x v 2 as
 * 8 + 12 + 12 + 8. A middle stage, with half again the layers of an even
 * split's 10, sets the step; the ends hold 8. */
static void test_uneven_interleaved(void **state)
{
	(void)state;
	const capsim_set even[] = { { "workload.parallelism.pp", "4" },
				    { "workload.parallelism.tp", "4" },
				    { "workload.parallelism.schedule", "1f1b-interleaved" },
				    { "workload.parallelism.virtual-stages", "2" } };
	const capsim_set uneven[] = { even[0], even[1], even[2], even[3],
				      { "workload.parallelism.first-stage-layers", "8" },
				      { "workload.parallelism.last-stage-layers", "8" } };
	capsim_scenario *s = load(base, even, 4);
	capsim_step e = step_of(s);
	free(s);
	s = load(base, uneven, 6);
	capsim_step u = step_of(s);
	assert_true(u.critical_stage == 1 || u.critical_stage == 2);
	assert_int_equal(u.memory[0].first.layers, 8);
	assert_int_equal(u.memory[0].last.layers, 8);
	/* 12 layers against the even split's 10 (the LM head and embedding
	 * are small against a 13B layer stack) */
	assert_true(u.compute_s > 1.1 * e.compute_s && u.compute_s < 1.25 * e.compute_s);
	free(s);
}

/* Interleaved, each chunk's gradient buckets go out as its last backward
 * ends, and the v chunks' last backwards make one micro-batch's backward of
 * the stage: the data-parallel sync hides behind as much as without
 * interleaving. On the RoCE scenario (2:1, untuned), whose sync is exposed,
 * v = 4 and v = 1 expose the same. */
static void test_interleaved_dp_overlap(void **state)
{
	(void)state;
	const char *file = CAPSIM_SOURCE_DIR "/scenarios/h100-64node-roce200.xml";
	const capsim_set one[] = { { "workload.parallelism.schedule", "1f1b" },
				   { "workload.parallelism.virtual-stages", "1" } };
	capsim_scenario *s = malloc(sizeof *s);
	capsim_diags d = { 0 };
	assert_int_equal(capsim_scenario_load(file, cat, NULL, 0, s, &d), 0);
	assert_true(s->virtual_stages > 1);
	capsim_step v = step_of(s);
	assert_int_equal(capsim_scenario_load(file, cat, one, 2, s, &d), 0);
	capsim_step u = step_of(s);
	capsim_diags_free(&d);
	assert_true(u.exposed_comm_dp_s > 0);
	assert_rel(v.exposed_comm_dp_s, u.exposed_comm_dp_s, 1e-9);
	free(s);
}

/* The gradient sync in Megatron's buckets (docs/model.md, "Training step",
 * 7): with one bucket for all (dp-bucket past the stage's parameters) every
 * gradient is ready only as the backward ends, so the reduce-scatter and the
 * all-gather are wholly exposed and take nothing from the compute. With the
 * default buckets only the last one waits, the input embedding's or, where
 * that is smaller (here), Megatron's least bucket of 40M parameters: the
 * rest runs beside the backward (and the gathers beside the forward), so
 * the exposed time is the collectives' times the embedding's share of the
 * stage's gradients, and the compute beside them loses the SMs their
 * channels take, at most 32 of the H100's 132 a collective. */
static void test_dp_buckets(void **state)
{
	(void)state;
	const capsim_set one[] = { { "workload.parallelism.pp", "1" },
				   { "workload.micro-batch", "4" },
				   { "workload.global-batch", "16" },
				   { "workload.parallelism.dp-bucket", "1e13" } };
	capsim_scenario *s = load(base, one, 4);
	assert_int_equal(s->dp, 4);
	capsim_step a = step_of(s);
	free(s);
	s = load(base, one, 3);
	capsim_step b = step_of(s);
	printf("one bucket: sync %.4f s, exposed %.4f s, compute %.4f s; buckets: exposed "
	       "%.4f s, compute %.4f s\n", a.dp_sync_s, a.exposed_comm_dp_s, a.compute_s,
	       b.exposed_comm_dp_s, b.compute_s);
	assert_true(a.dp_sync_s > 0.0);
	assert_rel(a.exposed_comm_dp_s, a.dp_sync_s, 1e-9);
	assert_rel(b.dp_sync_s, a.dp_sync_s, 1e-12);
	double emb = (double)s->model.vocab * s->model.hidden / s->tp; /* 20.5M: less */
	double last = fmax(emb, 4e7) / b.memory[0].first.trained_params;
	assert_true(last > 0.01 && last < 0.2);
	assert_rel(b.exposed_comm_dp_s, b.dp_sync_s * last, 1e-6);
	double pen = b.compute_s - a.compute_s;
	assert_true(pen > 0.0);
	assert_true(pen <= b.dp_sync_s * (1.0 - last) * 32.0 / 132.0);
	free(s);
}

/* In an fp8 recipe the LM head stays in bf16 (Megatron's output layer is not
 * a Transformer Engine module). On one stage, doubling the vocabulary adds
 * to a micro-batch's work exactly the added head (forward, dgrad, wgrad, each
 * a bf16 GEMM) and the added loss, forward and backward. */
static void test_fp8_head_in_bf16(void **state)
{
	(void)state;
	double work[2], head16[2], head8[2], loss[2];
	for (int i = 0; i < 2; i++) {
		char vocab[16];
		snprintf(vocab, sizeof vocab, "%d", 32000 * (i + 1));
		const capsim_set fp8[] = { { "workload.dtype", "fp8" },
					   { "workload.parallelism.pp", "1" },
					   { "workload.global-batch", "32" },
					   { "workload.model.architecture.vocab", vocab } };
		capsim_scenario *s = load(base, fp8, 4);
		capsim_step r = step_of(s);
		capsim_gpu_perf perf;
		capsim_gpu_perf_default(&s->gpu, s->execution, &perf);
		double T = (double)s->micro_batch * s->seq_len, V = (double)s->model.vocab / s->tp;
		double h = s->model.hidden;
		head16[i] = capsim_op_time_s(&s->gpu, &perf, CAPSIM_DTYPE_BF16, 2 * T * V * h,
					     2.0 * (T * h + V * h + T * V), T, V, h);
		head8[i] = capsim_op_time_s(&s->gpu, &perf, CAPSIM_DTYPE_FP8, 2 * T * V * h,
					    2.0 * (T * h + V * h + T * V), T, V, h);
		loss[i] = capsim_op_time_s(&s->gpu, &perf, CAPSIM_DTYPE_FP32, 5 * T * V,
					   T * V * 6.0 * 2, 0, 0, 0);
		work[i] = s->model.layers * (r.layer_fwd_s + r.layer_bwd_s);
		free(s);
	}
	double k = capsim_knobs_fitted.compute_scale;
	assert_true(head8[1] < 0.8 * head16[1]);
	assert_rel(work[1] - work[0],
		   k * (3 * (head16[1] - head16[0]) + 2 * (loss[1] - loss[0])), 1e-6);
}

/* Expert all-to-all overlap: Mixtral 8x7B at ep 8 on one pipeline stage,
 * m = 8 micro-batches. Only the first forward and the last backward have no
 * partner, so 1/m of the exposed all-to-all time stays (the all-to-alls are
 * shorter than the other pass's compute); the hidden part slows the compute
 * beside it by comm-slowdown. */
static void test_ep_overlap(void **state)
{
	(void)state;
	const char *file = CAPSIM_SOURCE_DIR "/scenarios/h100-64node-ndr.xml";
	capsim_set sets[] = { { "workload.model.ref", "mixtral-8x7b" },
			      { "workload.parallelism.ep", "8" },
			      { "workload.parallelism.tp", "1" },
			      { "workload.parallelism.pp", "1" },
			      { "workload.parallelism.virtual-stages", "1" },
			      { "workload.parallelism.schedule", "1f1b" },
			      { "workload.global-batch", "4096" },
			      { "workload.parallelism.recompute", "full" },
			      { "workload.parallelism.ep-overlap", "off" } };
	size_t n = sizeof sets / sizeof sets[0];
	capsim_step r[2];
	for (int i = 0; i < 2; i++) {
		sets[n - 1].value = i ? "on" : "off";
		capsim_scenario *s = malloc(sizeof *s);
		capsim_diags d = { 0 };
		assert_int_equal(capsim_scenario_load(file, cat, sets, n, s, &d), 0);
		capsim_diags_free(&d);
		r[i] = step_of(s);
		assert_int_equal(r[i].microbatches, 8);
		free(s);
	}
	assert_true(r[0].exposed_comm_ep_s > 0);
	assert_rel(r[1].exposed_comm_ep_s, r[0].exposed_comm_ep_s / 8.0, 1e-9);
	assert_rel(r[1].compute_s - r[0].compute_s,
		   (r[0].exposed_comm_ep_s - r[1].exposed_comm_ep_s) * 0.1, 1e-6);
}

/* Selective recomputation re-runs each layer's attention core (a fused
 * kernel's forward) before its backward: the backward of a layer grows by
 * exactly that kernel's time (times the fitted compute_scale), and the
 * forward does not change. */
static void test_selective_recompute_time(void **state)
{
	(void)state;
	const capsim_set none[] = { { "workload.parallelism.recompute", "none" } };
	const capsim_set sel[] = { { "workload.parallelism.recompute", "selective" } };
	capsim_scenario *s = load(base, none, 1);
	capsim_step a = step_of(s);
	free(s);
	s = load(base, sel, 1);
	capsim_step b = step_of(s);
	capsim_layer_work w;
	capsim_layer_forward(s, 0, &w);
	capsim_gpu_perf perf;
	capsim_gpu_perf_default(&s->gpu, s->execution, &perf);
	double core = capsim_layer_op_time_s(&s->gpu, &perf, s->dtype, &w.op[CAPSIM_LOP_ATTN]);
	assert_true(core > 0);
	assert_rel(b.layer_fwd_s, a.layer_fwd_s, 1e-12);
	assert_rel(b.layer_bwd_s - a.layer_bwd_s, capsim_knobs_fitted.compute_scale * core, 1e-9);
	assert_true(b.step_time_s > a.step_time_s);
	free(s);
}

/* LoRA (rank 16, every linear layer) against full fine-tuning of the same
 * job: the frozen base's backward is dgrad alone, so a layer's backward is
 * little more than its forward; the gradient sync and the optimizer step
 * carry the adapters only (0.3% of llama-2-13b); the model FLOPs are
 * 4N + attention + 6 x adapters a token instead of 6N + attention. */
static void test_lora_step(void **state)
{
	(void)state;
	capsim_scenario *s = load(base, NULL, 0);
	capsim_step full = step_of(s);
	free(s);
	const capsim_set lora[] = { { "workload.finetune.method", "lora" } };
	s = load(base, lora, 1);
	capsim_step l = step_of(s);
	print_message("lora: layer forward %.4g ms (full %.4g), backward %.4g ms (full %.4g)\n",
		      1e3 * l.layer_fwd_s, 1e3 * full.layer_fwd_s, 1e3 * l.layer_bwd_s,
		      1e3 * full.layer_bwd_s);
	assert_true(l.layer_fwd_s > full.layer_fwd_s);          /* the adapters' GEMMs */
	assert_true(l.layer_fwd_s < 1.15 * full.layer_fwd_s);
	assert_true(l.layer_bwd_s < 0.75 * full.layer_bwd_s);   /* no wgrad */
	assert_true(l.layer_bwd_s > 0.45 * full.layer_bwd_s);
	assert_true(l.optimizer_s < 0.01 * full.optimizer_s);
	assert_true(l.exposed_comm_dp_s <= full.exposed_comm_dp_s);
	assert_true(l.step_time_s < full.step_time_s);
	double six_n = capsim_flops_per_token(&s->model, 0, 1);
	double adapters = 0.0;
	for (int i = 0; i < s->model.layers; i++)
		adapters += capsim_lora_layer_params(s, i);
	assert_rel(l.model_flops_per_step,
		   full.model_flops_per_step - (six_n / 3.0 - 6.0 * adapters) * full.tokens_per_step,
		   1e-9);
	free(s);
}

/* ---- mixed GPUs, stragglers anywhere, jitter, the critical path ---- */

/* Mixed parts. The base job's ranks (tp 8, dp 2, pp 2) put stage 1 on GPUs
 * 16-31: nodes 2 and 3. Two A100 nodes at the end run stage 1 of both
 * replicas (one class, slower than all-H100, faster than all-A100); one
 * A100 node runs replica 1's stage 1 only (two classes), and that replica
 * sets the step: the same step as with two A100 nodes, since replica 0
 * waits for it at the gradient sync either way. */
static void test_mixed_gpus(void **state)
{
	(void)state;
	capsim_scenario *h = load(base, NULL, 0);
	capsim_step hr = step_of(h);
	assert_int_equal(hr.replica_classes, 1);
	assert_int_equal(hr.n_groups, 1);
	const capsim_set two[] = { { "cluster.mix.ref", "dgx-a100" }, { "cluster.mix.nodes", "2" } };
	capsim_scenario *m2 = load(base, two, 2);
	capsim_step r2 = step_of(m2);
	assert_int_equal(r2.replica_classes, 1);
	assert_int_equal(r2.critical_stage, 1);
	assert_int_equal(r2.critical_group, 1);
	assert_int_equal(r2.n_groups, 2);
	assert_rel(r2.memory[1].capacity_bytes, 80e9, 1e-9);
	const capsim_set one[] = { { "cluster.mix.ref", "dgx-a100" }, { "cluster.mix.nodes", "1" } };
	capsim_scenario *m1 = load(base, one, 2);
	capsim_step r1 = step_of(m1);
	assert_int_equal(r1.replica_classes, 2);
	assert_int_equal(r1.critical_replica, 1);
	assert_rel(r1.step_time_s, r2.step_time_s, 1e-9);
	const capsim_set all[] = { { "cluster.node.ref", "dgx-a100" } };
	capsim_scenario *a = load(base, all, 1);
	capsim_step ar = step_of(a);
	assert_true(r2.step_time_s > hr.step_time_s * 1.2);
	assert_true(r2.step_time_s < ar.step_time_s);
	/* an all-A100 stage 1 computes as in the all-A100 job */
	assert_rel(r2.compute_s, ar.compute_s, 0.02);
	free(h);
	free(m2);
	free(m1);
	free(a);
}

/* A straggler anywhere: on a given stage it slows that stage's kernels; on
 * any replica of a uniform cluster the step is the same (replicas are
 * alike); the busiest stage is the worst place for it. */
static void test_straggler_placement(void **state)
{
	(void)state;
	capsim_scenario *s = load(base, NULL, 0);
	s->straggler = 1.3;
	capsim_step worst = step_of(s);
	assert_int_equal(worst.replica_classes, 2);
	s->straggler_replica = 1;
	capsim_step other = step_of(s);
	assert_int_equal(other.critical_replica, 1);
	assert_rel(other.step_time_s, worst.step_time_s, 1e-12);
	for (int k = 0; k < s->pp; k++) {
		s->straggler_stage = k;
		capsim_step r = step_of(s);
		assert_int_equal(r.straggler_stage, k);
		assert_true(r.step_time_s <= worst.step_time_s * (1 + 1e-12));
		if (k != worst.straggler_stage)
			assert_true(r.step_time_s < worst.step_time_s);
	}
	free(s);
}

/* E[max of g lognormal draws of mean 1 and coefficient of variation c],
 * by Simpson's rule over the standard normal: the integral of
 * exp(mu + sigma z) g Phi(z)^(g-1) phi(z). */
static double expected_max_lognormal(int g, double c)
{
	double s2 = log1p(c * c), sg = sqrt(s2), mu = -s2 / 2;
	int n = 20000;
	double a = -10, b = 10, h = (b - a) / n, sum = 0;
	for (int i = 0; i <= n; i++) {
		double z = a + i * h;
		double phi = exp(-z * z / 2) / sqrt(2 * M_PI);
		double Phi = 0.5 * erfc(-z / sqrt(2));
		double f = exp(mu + sg * z) * g * pow(Phi, g - 1) * phi;
		sum += f * (i == 0 || i == n ? 1 : i % 2 ? 4 : 2);
	}
	return sum * h / 3;
}

/* Jitter: each layer waits for the slowest of its tensor-parallel group's 8
 * GPUs, so the kernels of one stage (pp = 1: no pipeline to absorb it) take
 * E[max of 8 draws] times as long; 16 micro-batches x 40 layers average the
 * draws to within 0.5%. The same seed repeats bit for bit; another seed
 * differs. */
static void test_jitter(void **state)
{
	(void)state;
	const capsim_set flat[] = { { "workload.parallelism.pp", "1" } };
	capsim_scenario *s = load(base, flat, 1);
	capsim_step r0 = step_of(s);
	for (double c = 0.05; c <= 0.2; c *= 2) {
		s->jitter = c;
		capsim_step r = step_of(s);
		assert_int_equal(r.replica_classes, s->dp);
		double want = expected_max_lognormal(s->tp, c);
		assert_true(want > 1.0 + c); /* the max of 8 is well above the mean */
		assert_rel(r.compute_s / r0.compute_s, want, 0.005);
		capsim_step again = step_of(s);
		assert_true(again.step_time_s == r.step_time_s);
		s->seed = 2;
		capsim_step other = step_of(s);
		assert_true(other.step_time_s != r.step_time_s);
		assert_rel(other.step_time_s, r.step_time_s, 0.01);
		s->seed = 1;
	}
	free(s);
}

/* The step's critical path tiles the step from 0 to its end and names the
 * stage that finishes last at its end. */
static void test_step_critical_path(void **state)
{
	(void)state;
	capsim_scenario *s = load(base, NULL, 0);
	capsim_diags d = { 0 };
	capsim_fabric *f = capsim_fabric_build(s, &d);
	assert_non_null(f);
	capsim_step r;
	assert_int_equal(capsim_step_simulate(s, f, &r, &d), 0);
	assert_true(r.path_len >= 3);
	capsim_time_ns t = 0;
	int transfers = 0;
	for (size_t i = 0; i < r.path_len; i++) {
		assert_int_equal(r.path[i].start_ns, t);
		t = r.path[i].end_ns;
		transfers += r.path[i].kind == CAPSIM_PATH_TRANSFER;
	}
	assert_rel((double)t * 1e-9, r.step_time_s, 1e-9);
	assert_true(transfers >= 2); /* up to the last stage and back */
	assert_int_equal(r.path[r.path_len - 1].kind, CAPSIM_PATH_TAIL);
	capsim_step_free(&r);
	assert_null(r.path);
	capsim_fabric_destroy(f);
	capsim_diags_free(&d);
	free(s);
}

/* A plain PyTorch GPT-2 training loop on the measured H200 (calibrate/torch,
 * eager, bf16 autocast, flash attention, fused AdamW), with the vocabulary
 * padded to 50304 (as GPT-2 reproductions do, so that the LM head's GEMMs
 * keep aligned kernels) and with GPT-2's own 50257, against capsim before
 * and after calibration (hardware/calibrated/h200-sxm-141gb-2026-12-02.xml).
 * Calibration brings every point closer; where the GPU is busy (micro-batch
 * 16 and 32) capsim comes within 10% after it (padded) and 20% (50257). At micro-batch 1 to 8 the loop is bound by its host
 * (PyTorch issues about 55 kernels a layer, capsim counts 24 fused ones), and
 * capsim stays far below: docs/validation.md. */
static double gpt2_step_ms(const char *model, long mb, long vocab, int calibrated,
			   int *host)
{
	char path[512], mbs[16], vs[16];
	snprintf(path, sizeof path, CAPSIM_SOURCE_DIR "/scenarios/%s-1xh200.xml", model);
	snprintf(mbs, sizeof mbs, "%ld", mb);
	snprintf(vs, sizeof vs, "%ld", vocab);
	const capsim_set sets[] = {
		{ "workload.micro-batch", mbs }, { "workload.global-batch", mbs },
		{ "workload.model.architecture.vocab", vs },
		{ "cluster.node.profile", "hardware/calibrated/h200-sxm-141gb-2026-12-02.xml" } };
	capsim_scenario *s = malloc(sizeof *s);
	capsim_diags d = { 0 };
	if (capsim_scenario_load(path, cat, sets, calibrated ? 4 : 3, s, &d) < 0) {
		capsim_diags_print(&d, stderr);
		fail_msg("%s does not load", path);
	}
	capsim_diags_free(&d);
	if (calibrated)
		assert_true(s->gpu.cal.gemm[CAPSIM_DTYPE_BF16].params > 0);
	capsim_step r = step_of(s);
	free(s);
	if (host)
		*host = host_bound(&r);
	return r.step_time_s * 1e3;
}

/* One file of the benchmark against capsim before and after; within is the
 * largest error allowed after calibration at micro-batch 16 and up. */
static void gpt2_file(const char *file, long vocab, double within)
{
	FILE *fp = fopen(file, "r");
	assert_non_null(fp);
	char *line = NULL;
	size_t cap = 0;
	int points = 0;
	printf("%s\n| model | micro-batch | measured (ms) | capsim before | error | after | error |\n"
	       "|---|---:|---:|---:|---:|---:|---:|\n", file);
	while (getline(&line, &cap, fp) > 0) {
		json_t *o = json_loads(line, 0, NULL);
		assert_non_null(o);
		if (strcmp(json_string_value(json_object_get(o, "kind")), "torch-step") != 0) {
			json_decref(o);
			continue;
		}
		const char *model = json_string_value(json_object_get(o, "model"));
		long mb = (long)json_integer_value(json_object_get(o, "micro_batch"));
		assert_int_equal(json_integer_value(json_object_get(o, "vocab")), vocab);
		double meas = 1e3 * json_real_value(json_object_get(o, "median_s"));
		int host;
		double before = gpt2_step_ms(model, mb, vocab, 0, NULL);
		double after = gpt2_step_ms(model, mb, vocab, 1, &host);
		/* the calibrated profile's host costs were fitted on run c's
		 * host-paced points (below micro-batch 16): those are in-sample */
		char id[64];
		snprintf(id, sizeof id, "%s-mb%ld", model, mb);
		record_step(vocab == 50257 ? "h200-gpt2-loop-c" : "h200-gpt2-loop-pad50304", id,
			    "h200", "torch-eager", "calibrated", host, vocab == 50257 && mb < 16,
			    after, meas);
		printf("| %s | %ld | %.1f | %.1f | %+.0f%% | %.1f | %+.0f%% |\n", model, mb, meas,
		       before, 100 * (before / meas - 1), after, 100 * (after / meas - 1));
		/* where the GPU sets the pace; below, the host does, and the
		 * GPU's time is not what is measured */
		if (mb >= 16 && !(fabs(after - meas) < fabs(before - meas)))
			fail_msg("%s micro-batch %ld: after %.1f ms is no closer to %.1f than before, %.1f",
				 model, mb, after, meas, before);
		if (mb >= 16 && fabs(after / meas - 1) > within)
			fail_msg("%s micro-batch %ld: after calibration %+.1f%%", model, mb,
				 100 * (after / meas - 1));
		points++;
		json_decref(o);
	}
	free(line);
	fclose(fp);
	assert_int_equal(points, 9);
}

static void test_gpt2_h200(void **state)
{
	(void)state;
	gpt2_file(CAPSIM_SOURCE_DIR "/calibrate/results/h200-2026-12-02-gpt2-step-pad50304.jsonl",
		  50304, 0.10);
	/* GPT-2's own vocabulary: the LM head's misaligned GEMMs, measured by
	 * calibrate at 0.15 of the smooth model in bf16, are what calibration
	 * adds; cuBLASLt's kernels there ran slower than PyTorch's (94 and 118
	 * against about 124 TFLOP/s), so capsim now overshoots, within 20% */
	gpt2_file(CAPSIM_SOURCE_DIR "/calibrate/results/h200-2026-12-02-gpt2-step-c.jsonl", 50257,
		  0.20);
}

/* One point of calibrate/results/h200-2026-12-04-host-steps.jsonl as a
 * scenario (the GPT-2 H200 scenario with the point's model, sizes and
 * execution), its step in ms, with the measured H200's profile or without */
static capsim_scenario *host_scenario(json_t *o, int calibrated);

static double host_step_ms(json_t *o, int calibrated, int *host)
{
	capsim_scenario *s = host_scenario(o, calibrated);
	capsim_step r = step_of(s);
	free(s);
	if (host)
		*host = host_bound(&r);
	return r.step_time_s * 1e3;
}

static capsim_scenario *host_scenario_on(json_t *o, int calibrated, const char *node_ref);

static capsim_scenario *host_scenario(json_t *o, int calibrated)
{
	return host_scenario_on(o, calibrated, NULL);
}

/* host_scenario on one GPU of node node_ref (NULL: the scenario's H200) */
static capsim_scenario *host_scenario_on(json_t *o, int calibrated, const char *node_ref)
{
	const char *model = json_string_value(json_object_get(o, "model"));
	const char *mode = json_string_value(json_object_get(o, "mode"));
	char mb[16], seq[16], layers[16];
	snprintf(mb, sizeof mb, "%lld", json_integer_value(json_object_get(o, "micro_batch")));
	snprintf(seq, sizeof seq, "%lld", json_integer_value(json_object_get(o, "seq")));
	snprintf(layers, sizeof layers, "%lld", json_integer_value(json_object_get(o, "layers")));
	capsim_set sets[12];
	size_t n = 0;
	sets[n++] = (capsim_set){ "workload.micro-batch", mb };
	sets[n++] = (capsim_set){ "workload.global-batch", mb };
	sets[n++] = (capsim_set){ "workload.seq-len", seq };
	sets[n++] = (capsim_set){ "workload.execution",
				  strcmp(mode, "compile") == 0 ? "compiled" : mode };
	if (strcmp(model, "llama-3-8b") == 0) {
		sets[n++] = (capsim_set){ "workload.model.ref", "llama-3.1-8b" };
	} else if (strcmp(model, "gpt3-6.7b") == 0) {
		/* GPT-3 6.7B's widths (Brown et al. 2020, Table 2.1) on GPT-2's block */
		sets[n++] = (capsim_set){ "workload.model.ref", "gpt2-124m" };
		sets[n++] = (capsim_set){ "workload.model.architecture.hidden", "4096" };
		sets[n++] = (capsim_set){ "workload.model.architecture.heads", "32" };
		sets[n++] = (capsim_set){ "workload.model.architecture.ffn", "16384" };
		sets[n++] = (capsim_set){ "workload.model.architecture.max-seq-len", "2048" };
	} else {
		sets[n++] = (capsim_set){ "workload.model.ref", model };
	}
	sets[n++] = (capsim_set){ "workload.model.architecture.layers", layers };
	if (calibrated)
		sets[n++] = (capsim_set){ "cluster.node.profile",
					  "hardware/calibrated/h200-sxm-141gb-2026-12-02.xml" };
	if (node_ref)
		sets[n++] = (capsim_set){ "cluster.node.ref", node_ref };
	assert_true(n <= sizeof sets / sizeof sets[0]);
	capsim_scenario *s = malloc(sizeof *s);
	capsim_diags d = { 0 };
	if (capsim_scenario_load(CAPSIM_SOURCE_DIR "/scenarios/gpt2-124m-1xh200.xml", cat, sets, n,
				 s, &d) < 0) {
		capsim_diags_print(&d, stderr);
		fail_msg("%s does not load", model);
	}
	capsim_diags_free(&d);
	return s;
}

/* Plain PyTorch steps on the measured H200 in three executions
 * (calibrate/torch/host_probe.py, one run, 31 points): GPT-2 124M and 355M
 * at micro-batch 1 to 32, eager, compiled and replayed from CUDA graphs,
 * and GPU-bound blocks of Llama 3 8B and GPT-3 6.7B. Tolerances, set per
 * kind of point:
 *   - GPU-bound (graphs; eager or compiled whose host issued the step in
 *     under half its time): calibration brings every point closer, and the
 *     graph replays (the GPU's time alone) are within 10% after it;
 *   - host-bound (the host's issue took 90% of the step or more): within
 *     30%, the spread of the host's own cost per kernel between the points
 *     of this run (34.9 to 57.0 us against the profile's 44.7 us); one row
 *     is known off (below). The profile's host costs were fitted on these
 *     runs' torch-step records with run c's (calibrate/results/refit.sh):
 *     the host-bound rows are in-sample, the GPU-bound ones are not. */
static void test_h200_host_steps(void **state)
{
	(void)state;
	FILE *fp = fopen(CAPSIM_SOURCE_DIR "/calibrate/results/h200-2026-12-04-host-steps.jsonl",
			 "r");
	assert_non_null(fp);
	char *line = NULL;
	size_t cap = 0;
	int points = 0, gpu_bound = 0, host_bound = 0;
	printf("| model | layers | seq | micro-batch | execution | measured (ms) | capsim before "
	       "| error | after | error |\n|---|---:|---:|---:|---|---:|---:|---:|---:|---:|\n");
	while (getline(&line, &cap, fp) > 0) {
		json_t *o = json_loads(line, 0, NULL);
		assert_non_null(o);
		if (strcmp(json_string_value(json_object_get(o, "kind")), "torch-step") != 0) {
			json_decref(o);
			continue;
		}
		double meas = 1e3 * json_real_value(json_object_get(o, "median_s"));
		double issue = 1e3 * json_real_value(json_object_get(o, "issue_median_s"));
		const char *mode = json_string_value(json_object_get(o, "mode"));
		const char *model = json_string_value(json_object_get(o, "model"));
		int host;
		double before = host_step_ms(o, 0, NULL), after = host_step_ms(o, 1, &host);
		double err = after / meas - 1;
		char id[96];
		snprintf(id, sizeof id, "%s-l%lld-s%lld-mb%lld-%s", model,
			 json_integer_value(json_object_get(o, "layers")),
			 json_integer_value(json_object_get(o, "seq")),
			 json_integer_value(json_object_get(o, "micro_batch")), mode);
		/* the profile's host costs were fitted on these records: only the
		 * GPU-bound points are scored */
		record_step("h200-host-steps", id, "h200", torch_stack(mode), "calibrated", host,
			    !(strcmp(mode, "graphs") == 0 || issue < 0.5 * meas), after, meas);
		printf("| %s | %lld | %lld | %lld | %s | %.2f | %.2f | %+.0f%% | %.2f | %+.0f%% |\n",
		       model, json_integer_value(json_object_get(o, "layers")),
		       json_integer_value(json_object_get(o, "seq")),
		       json_integer_value(json_object_get(o, "micro_batch")), mode, meas, before,
		       100 * (before / meas - 1), after, 100 * err);
		int graphs = strcmp(mode, "graphs") == 0;
		if (graphs || issue < 0.5 * meas) {
			gpu_bound++;
			if (!(fabs(after - meas) < fabs(before - meas)))
				fail_msg("%s %s: after %.2f ms is no closer to %.2f than before, %.2f",
					 model, mode, after, meas, before);
			/* known off, and why: GPT-2 124M's replay at micro-batch 32
			 * carries the misaligned LM head's three GEMMs at the rate
			 * cuBLASLt measured for such shapes times compute_scale (1.235,
			 * fitted on Megatron-LM's runs), where its kernels took 61 ms
			 * of the profiled eager step at that micro-batch; attention,
			 * at its measured curve since, no longer hides it */
			int off = graphs && !strcmp(model, "gpt2-124m") &&
				  json_integer_value(json_object_get(o, "micro_batch")) == 32;
			if (off && fabs(err) <= 0.10)
				fail_msg("%s graphs: %+.1f%%, within 10%%: no longer known off", model,
					 100 * err);
			if (graphs && !off && fabs(err) > 0.10)
				fail_msg("%s graphs: %+.1f%% after calibration", model, 100 * err);
		} else if (issue >= 0.9 * meas) {
			host_bound++;
			/* every host-bound point within 30% (GPT-2 355M at micro-batch
			 * 1, +33% before the host ran ahead into the backward, is
			 * inside since) */
			if (fabs(err) > 0.30)
				fail_msg("%s %s (host-bound): %+.1f%%", model, mode, 100 * err);
		}
		points++;
		json_decref(o);
	}
	free(line);
	fclose(fp);
	assert_int_equal(points, 31);
	assert_true(gpu_bound >= 18 && host_bound >= 7);
}

/* capsim's step of one GPU of `ref` running fp8_probe.py's model: Llama 3
 * 8B cut to 4 layers, plain PyTorch AMP, fused AdamW, in `dtype` and
 * `execution` */
static double fp8_probe_step(const char *ref, const char *dtype, const char *execution,
			     const char *seq, const char *mb, int *host)
{
	const capsim_set sets[] = {
		{ "cluster.node.ref", ref },
		{ "workload.model.ref", "llama-3.1-8b" },
		{ "workload.model.architecture.layers", "4" },
		{ "workload.attention", "fused" },
		{ "workload.seq-len", seq },
		{ "workload.micro-batch", mb },
		{ "workload.global-batch", mb },
		{ "workload.dtype", dtype },
		{ "workload.execution", execution },
	};
	capsim_scenario *s = malloc(sizeof *s);
	capsim_diags d = { 0 };
	assert_int_equal(capsim_scenario_load(CAPSIM_SOURCE_DIR "/scenarios/gpt2-124m-1xh200.xml",
					      cat, sets, 9, s, &d), 0);
	capsim_diags_free(&d);
	capsim_step r = step_of(s);
	free(s);
	*host = host_bound(&r);
	return r.step_time_s;
}

/* The float8 and bf16 steps of an fp8_probe.py file measured on one GPU of
 * `ref`, against capsim's, as set before comparing: compiled, fp8 faster in
 * capsim too and the speed-up (bf16's step over fp8's) within 10% of the
 * measured; eager, fp8 slower in both. Returns the points compared. */
static int fp8_file(const char *file, const char *ref)
{
	FILE *f = fopen(file, "r");
	assert_non_null(f);
	char line[8192];
	double meas[2][2][2] = { { { 0 } } }; /* [compiled][point][fp8] */
	while (fgets(line, sizeof line, f)) {
		json_t *o = json_loads(line, 0, NULL);
		assert_non_null(o);
		if (strcmp(json_string_value(json_object_get(o, "kind")), "torch-fp8-step") == 0) {
			int c = !strcmp(json_string_value(json_object_get(o, "mode")), "compile");
			int p = json_integer_value(json_object_get(o, "seq")) == 8192;
			int q = !strcmp(json_string_value(json_object_get(o, "precision")), "fp8");
			meas[c][p][q] = json_number_value(json_object_get(o, "median_s"));
		}
		json_decref(o);
	}
	fclose(f);
	static const char *const seq[2] = { "4096", "8192" }, *const mb[2] = { "2", "1" };
	int n = 0;
	char table[128];
	file_table(file, table, sizeof table);
	for (int c = 1; c >= 0; c--)
		for (int p = 0; p < 2; p++) {
			if (!(meas[c][p][0] > 0 && meas[c][p][1] > 0))
				continue;
			const char *ex = c ? "compiled" : "eager";
			double want = meas[c][p][0] / meas[c][p][1];
			double step[2];
			for (int q = 0; q < 2; q++) {
				int host;
				char id[64];
				step[q] = fp8_probe_step(ref, q ? "fp8" : "bf16", ex, seq[p], mb[p],
							 &host);
				snprintf(id, sizeof id, "%s-%sx%s-%s", ex, seq[p], mb[p],
					 q ? "fp8" : "bf16");
				record_step(table, id, ref, c ? "torch-compiled" : "torch-eager",
					    "datasheet", host, 0, step[q], meas[c][p][q]);
			}
			double got = step[0] / step[1];
			printf("%s %s %sx%s: fp8 speed-up measured %.3f, capsim %.3f (%+.1f%%)\n", ref,
			       ex, seq[p], mb[p], want, got, 100 * (got / want - 1));
			if (c) {
				assert_true(got > 1.0);
				assert_rel(got, want, 0.10);
			} else {
				assert_true(want < 1.0 && got < 1.0);
			}
			n++;
		}
	return n;
}

/* float8 against bf16 measured (calibrate/torch/fp8_probe.py: Llama 3 8B cut
 * to 4 layers, torchao's tensorwise recipe written out) on an H100
 * (h100-2026-12-05b-fp8-step.jsonl: compiled at 4096 x 2 and 8192 x 1,
 * eager at 4096 x 2) and an H200 (h200-2026-12-05-fp8-step.jsonl: compiled
 * at 4096 x 2), both with every fp8 GEMM's accumulator split; and the
 * H100 again with the forward GEMM's accumulation fast, as torchao's recipe
 * runs it (h100-2026-12-05c-fp8-step-fast.jsonl: compiled at 4096 x 2). The
 * eager ratio is printed beside the test's direction: 0.73 against 0.81. */
static void test_fp8_steps_measured(void **state)
{
	(void)state;
	assert_int_equal(fp8_file(CAPSIM_SOURCE_DIR
				  "/calibrate/results/h100-2026-12-05b-fp8-step.jsonl", "dgx-h100"), 3);
	assert_int_equal(fp8_file(CAPSIM_SOURCE_DIR
				  "/calibrate/results/h100-2026-12-05c-fp8-step-fast.jsonl", "dgx-h100"),
			 1);
	assert_int_equal(fp8_file(CAPSIM_SOURCE_DIR
				  "/calibrate/results/h200-2026-12-05-fp8-step.jsonl", "dgx-h200"), 1);
}

/* GPT-2 124M eager at micro-batch mb on one GPU of `ref` (gpt2-124m-1xh200.xml
 * cut to it), with the host costs host_probe.py --node measured on the
 * machine (launch, dispatch, dispatch-compiled, seconds), or capsim's
 * defaults (NULL). */
static double gpt2_host_step(const char *ref, int mb, const double *node, int *host)
{
	char mb_s[8], c[3][32];
	snprintf(mb_s, sizeof mb_s, "%d", mb);
	capsim_set sets[6] = {
		{ "cluster.node.ref", ref },
		{ "workload.micro-batch", mb_s },
		{ "workload.global-batch", mb_s },
	};
	size_t n = 3;
	static const char *const path[3] = { "cluster.node.cpu.launch", "cluster.node.cpu.dispatch",
					     "cluster.node.cpu.dispatch-compiled" };
	for (int i = 0; node && i < 3; i++) {
		snprintf(c[i], sizeof c[i], "%.4g s", node[i]);
		sets[n++] = (capsim_set){ path[i], c[i] };
	}
	capsim_scenario *s = malloc(sizeof *s);
	capsim_diags d = { 0 };
	assert_int_equal(capsim_scenario_load(CAPSIM_SOURCE_DIR "/scenarios/gpt2-124m-1xh200.xml",
					      cat, sets, n, s, &d), 0);
	capsim_diags_free(&d);
	capsim_step r = step_of(s);
	free(s);
	if (host)
		*host = host_bound(&r);
	return r.step_time_s;
}

/* The host costs of a host_probe.py --node file and the GPT-2 124M steps of
 * a gpt2_step.py file from the same machine (a DGX `ref` cut to one GPU):
 * every host-bound step (the host's issue time 90% of the step or more) is
 * closer to the measured with the machine's own costs than with capsim's
 * defaults; returns how many were host-bound, *worst their largest error
 * with the machine's costs. */
static int host_node_check(const char *costs, const char *steps, const char *ref, double *worst)
{
	double node[3] = { 0 };
	FILE *f = fopen(costs, "r");
	assert_non_null(f);
	char line[1 << 14];
	while (fgets(line, sizeof line, f)) {
		json_t *o = json_loads(line, 0, NULL);
		assert_non_null(o);
		if (!strcmp(json_string_value(json_object_get(o, "kind")), "host-costs")) {
			node[0] = json_number_value(json_object_get(o, "launch_s"));
			node[1] = json_number_value(json_object_get(o, "dispatch_s"));
			node[2] = json_number_value(json_object_get(o, "dispatch_compiled_s"));
		}
		json_decref(o);
	}
	fclose(f);
	assert_true(node[0] > 0 && node[1] > 0 && node[2] > 0);
	f = fopen(steps, "r");
	assert_non_null(f);
	int bound = 0;
	char table[128];
	file_table(steps, table, sizeof table);
	*worst = 0.0;
	while (fgets(line, sizeof line, f)) {
		json_t *o = json_loads(line, 0, NULL);
		assert_non_null(o);
		if (strcmp(json_string_value(json_object_get(o, "kind")), "torch-step") != 0) {
			json_decref(o);
			continue;
		}
		int mb = (int)json_integer_value(json_object_get(o, "micro_batch"));
		double meas = json_number_value(json_object_get(o, "median_s"));
		double issue = json_number_value(json_object_get(o, "issue_median_s"));
		json_decref(o);
		int hb;
		double a = gpt2_host_step(ref, mb, NULL, NULL) / meas - 1;
		double b = gpt2_host_step(ref, mb, node, &hb) / meas - 1;
		char id[32];
		snprintf(id, sizeof id, "gpt2-124m-mb%d", mb);
		record_step(table, id, ref, "torch-eager", "datasheet", hb, 0, (1 + b) * meas, meas);
		int host = issue >= 0.9 * meas;
		printf("%s gpt2-124m mb %d (%s): %.2f ms measured, defaults %+.1f%%, this host's "
		       "costs (%.1f + %.1f us) %+.1f%%\n", ref, mb, host ? "host-bound" : "GPU-bound",
		       1e3 * meas, 100 * a, 1e6 * node[0], 1e6 * node[1], 100 * b);
		if (host) {
			bound++;
			assert_true(fabs(b) < fabs(a));
			*worst = fmax(*worst, fabs(b));
		}
	}
	fclose(f);
	return bound;
}

/* A host measured is a host known. Two machines measured on 2026-12-05,
 * each with host_probe.py --node and then gpt2_step.py's GPT-2 124M eager:
 * an H100's host (launch 6.6 us, dispatch 30.1 us) and an H200's (6.7 and
 * 15.5 us: half the H100 host's, and under half of capsim's default 38.5).
 * Set before comparing: on each, every host-bound step is closer with the
 * host's own costs than with the defaults. On the H200 both host-bound
 * steps come within the 30% the first H200's host spread set; on the H100
 * micro-batch 1 does not (+42%): gpt2_step.py's GPT-2 issues its kernels at
 * 26 us each on that host, the probe's blocks (memory_probe.py's decoder)
 * at 37 (docs/validation.md). */
static void test_host_node(void **state)
{
	(void)state;
	double worst;
	assert_int_equal(host_node_check(
		CAPSIM_SOURCE_DIR "/calibrate/results/h100-2026-12-05b-host-costs.jsonl",
		CAPSIM_SOURCE_DIR "/calibrate/results/h100-2026-12-05b-gpt2-step.jsonl",
		"dgx-h100", &worst), 3);
	assert_int_equal(host_node_check(
		CAPSIM_SOURCE_DIR "/calibrate/results/h200-2026-12-05-host-costs.jsonl",
		CAPSIM_SOURCE_DIR "/calibrate/results/h200-2026-12-05-gpt2-step.jsonl",
		"dgx-h200", &worst), 2);
	assert_true(worst <= 0.30);
}

/* fp8 under Transformer Engine: each micro-batch's forward and backward end
 * with an all_reduce(MAX) of the stage's amaxes over TP x DP, on the compute
 * stream: exposed DP time where bf16 has none, a latency-bound sliver of the
 * step; plain PyTorch (torch-amp) has no such reduction */
static void test_fp8_amax(void **state)
{
	(void)state;
	const capsim_set bf16[] = { { "workload.dtype", "bf16" } };
	const capsim_set fp8[] = { { "workload.dtype", "fp8" } };
	const capsim_set fp8_torch[] = { { "workload.dtype", "fp8" },
					 { "workload.framework", "torch-amp" } };
	const capsim_set bf16_torch[] = { { "workload.dtype", "bf16" },
					  { "workload.framework", "torch-amp" } };
	capsim_scenario *s = load(base, bf16, 1);
	capsim_step a = step_of(s);
	free(s);
	s = load(base, fp8, 1);
	capsim_step b = step_of(s);
	int mb = capsim_microbatches(s);
	free(s);
	s = load(base, fp8_torch, 2);
	capsim_step c = step_of(s);
	free(s);
	s = load(base, bf16_torch, 2);
	capsim_step c0 = step_of(s);
	free(s);
	assert_true(b.exposed_comm_dp_s > a.exposed_comm_dp_s);
	/* two all-reduces a micro-batch, each at least NCCL's latency (some us)
	 * and well under 1 ms at a few KB */
	double per = (b.exposed_comm_dp_s - a.exposed_comm_dp_s) / (2.0 * mb);
	assert_true(per > 1e-6 && per < 1e-3);
	assert_true(b.exposed_comm_dp_s < 0.01 * b.step_time_s);
	assert_rel(c.exposed_comm_dp_s, c0.exposed_comm_dp_s, 1e-9);
}

/* Power in closed form: a step whose critical stage is busy 80% of its 2 s
 * and does 40% of what the GPU's best GEMM rate would in that time draws,
 * per H100 (no profile: idle 0.115 x 700 W, sustained 687.209/700 of the
 * limit, gamma 0.639), idle + (sustained - idle) (0.4 + 0.58 x 0.4)^gamma;
 * a DGX H100 adds 10.2 kW less 8 x 700 W; 4 nodes and the fabric's
 * switches at 747 W; PUE 1.42; racks of 40.8 kW hold 4 nodes of 10.2 kW,
 * on 208 V 3-phase 60 A circuits at 80% (17.29 kW): 3 a rack */
static void test_power_closed_form(void **state)
{
	(void)state;
	static const char text[] =
		"<scenario name=\"p\"><cluster nodes=\"4\"><node ref=\"dgx-h100\"/>"
		"<fabric topology=\"fat-tree\" transport=\"infiniband\" routing=\"adaptive\">"
		"<switch ref=\"qm9700\"/></fabric></cluster><facility ref=\"us-colocation\"/>"
		"<workload seq-len=\"4096\" global-batch=\"64\" tokens=\"1T\" dtype=\"bf16\">"
		"<model ref=\"llama-2-13b\"/><parallelism tp=\"8\" pp=\"2\"/></workload></scenario>";
	capsim_scenario *s = load(text, NULL, 0);
	capsim_gpu_perf perf;
	capsim_gpu_perf_default(&s->gpu, s->execution, &perf);
	double rate = s->gpu.peak_bf16_flop_per_s * perf.gemm_sat;
	capsim_step st;
	memset(&st, 0, sizeof st);
	st.step_time_s = 2.0;
	st.compute_s = 1.6;
	st.compute_tensor_flop = 0.4 * 2.0 * rate;
	st.steps = 1000;
	capsim_power p;
	capsim_diags d = { 0 };
	assert_int_equal(capsim_power_estimate(s, &st, 3, &p, &d), 0);
	double idle = 0.115 * 700, sust = 687.209;
	double load = 0.4 + capsim_power_mem_weight * (0.8 - 0.4);
	assert_rel(p.load, load, 1e-12);
	assert_rel(p.gpu_w, idle + (sust - idle) * pow(load, 0.639054507005), 1e-12);
	assert_rel(p.node_w, 8 * p.gpu_w + (10200 - 8 * 700), 1e-12);
	assert_rel(p.switches_w, 3 * 747, 1e-12);
	assert_rel(p.it_w, 4 * p.node_w + 3 * 747, 1e-12);
	assert_rel(p.facility_w, 1.42 * p.it_w, 1e-12);
	assert_rel(p.energy_per_step_j, 2.0 * p.facility_w, 1e-12);
	assert_rel(p.energy_to_train_j, 2000.0 * p.facility_w, 1e-12);
	assert_int_equal(p.nodes_per_rack, 4);
	assert_int_equal(p.racks, 1);
	assert_rel(p.circuit_w, 0.8 * 208 * 60 * sqrt(3.0), 1e-12);
	assert_int_equal(p.circuits_per_rack, 3);
	/* an idle step draws the idle power; a saturated one the sustained */
	st.compute_s = 0;
	st.compute_tensor_flop = 0;
	assert_int_equal(capsim_power_estimate(s, &st, 3, &p, &d), 0);
	assert_rel(p.gpu_w, idle, 1e-12);
	st.compute_s = 2.0;
	st.compute_tensor_flop = 2.0 * rate;
	assert_int_equal(capsim_power_estimate(s, &st, 3, &p, &d), 0);
	assert_rel(p.gpu_w, sust, 1e-12);
	/* a rack that cannot power one node is refused */
	s->facility.rack_power_w = 5000;
	assert_int_equal(capsim_power_estimate(s, &st, 3, &p, &d), -1);
	assert_true(capsim_diags_contains(&d, "cannot power one node"));
	capsim_diags_free(&d);
	free(s);
}

/* One point of a power_probe.py file as the tests score it: its id, capsim's
 * draw against the measured mean and whether capsim calls its step
 * host-bound. */
typedef struct power_point {
	char id[96], gpu_id[CAPSIM_ID_LEN];
	const char *model;
	double measured_w, capsim_w, err;
	int host;
} power_point;

/* Every torch-power point of file, evaluated on one GPU of node node_ref
 * (NULL: the scenario's H200; calibrated: with the measured H200's profile),
 * each recorded as a residual of table (in_sample: whether the point at an
 * index was fitted on, NULL: none) and handed to check with its index.
 * Returns the points scored. */
static int power_points(const char *file, const char *node_ref, int calibrated,
			const char *table, const char *gpu, int (*in_sample)(int i),
			void (*check)(const power_point *pt, int i))
{
	FILE *fp = fopen(file, "r");
	assert_non_null(fp);
	char *line = NULL;
	size_t cap = 0;
	int i = 0;
	while (getline(&line, &cap, fp) > 0) {
		json_t *o = json_loads(line, 0, NULL);
		assert_non_null(o);
		if (strcmp(json_string_value(json_object_get(o, "kind")), "torch-power") != 0) {
			json_decref(o);
			continue;
		}
		power_point pt = { .model = json_string_value(json_object_get(o, "model")) };
		pt.measured_w = json_real_value(json_object_get(o, "power_mean_w"));
		capsim_scenario *s = host_scenario_on(o, calibrated, node_ref);
		capsim_result r;
		capsim_diags d = { 0 };
		if (capsim_eval(s, &(capsim_eval_opts){ .no_reference = 1 }, &r, &d) < 0) {
			capsim_diags_print(&d, stderr);
			fail_msg("%s: eval fails", pt.model);
		}
		capsim_diags_free(&d);
		snprintf(pt.gpu_id, sizeof pt.gpu_id, "%s", s->gpu.e.id);
		pt.capsim_w = r.power.gpu_w;
		pt.err = pt.capsim_w / pt.measured_w - 1;
		pt.host = host_bound(&r.step);
		const char *mode = json_string_value(json_object_get(o, "mode"));
		snprintf(pt.id, sizeof pt.id, "%s-l%lld-s%lld-mb%lld-%s", pt.model,
			 json_integer_value(json_object_get(o, "layers")),
			 json_integer_value(json_object_get(o, "seq")),
			 json_integer_value(json_object_get(o, "micro_batch")), mode);
		testutil_residual_record(&(testutil_residual){
			.table = table, .row = pt.id, .family = "power", .quantity = "power",
			.gpu = gpu, .gen = "hopper", .stack = torch_stack(mode),
			.profile = calibrated ? "calibrated" : "datasheet", .host_bound = pt.host,
			.gpus = 1, .in_sample = in_sample ? in_sample(i) : 0,
			.predicted = pt.capsim_w, .measured = pt.measured_w });
		printf("| %s | %lld | %lld | %lld | %s | %.0f | %.0f | %+.1f%% |", pt.model,
		       json_integer_value(json_object_get(o, "layers")),
		       json_integer_value(json_object_get(o, "seq")),
		       json_integer_value(json_object_get(o, "micro_batch")), mode, pt.measured_w,
		       pt.capsim_w, 100 * pt.err);
		check(&pt, i);
		capsim_result_free(&r);
		free(s);
		json_decref(o);
		i++;
	}
	free(line);
	fclose(fp);
	return i;
}

/* the H200 points capsim_power_mem_weight was fitted on: the 1st, 3rd, 5th, 7th */
static int h200_power_fitted(int i)
{
	return i % 2 == 0;
}

static void h200_power_check(const power_point *pt, int i)
{
	int fitted = h200_power_fitted(i);
	printf(" %s |\n", fitted ? "fitted on" : "scored");
	/* known off, and why: GPT-2 124M at micro-batch 1, eager, is
	 * host-bound; its GPU waits for the host through most of the step,
	 * and how much of that waiting the board spends near idle
	 * depends on gaps the step's mean hides */
	int known = i == 0;
	if (known && fabs(pt->err) <= 0.20)
		fail_msg("%s: %+.1f%%, within 20%%: no longer known off", pt->model, 100 * pt->err);
	if (!known && fabs(pt->err) > (fitted ? 0.20 : 0.15))
		fail_msg("%s: %+.1f%%", pt->model, 100 * pt->err);
}

/* A GPU's draw through real training steps on the measured H200
 * (calibrate/torch/power_probe.py, calibrate/results/
 * h200-2026-12-04-power-steps.jsonl: NVML every 0.1 s through 12 s of steps)
 * against capsim with the measured H200's profile. capsim_power_mem_weight was
 * fitted on the 1st, 3rd, 5th and 7th points; the others are scored within
 * 15% (the draw at an equal busy share spans 523 to 687 W in this data) and
 * every point within 20% */
static void test_h200_power(void **state)
{
	(void)state;
	printf("| model | layers | seq | micro-batch | execution | measured (W) | capsim (W) | "
	       "error | role |\n|---|---:|---:|---:|---|---:|---:|---:|---|\n");
	assert_int_equal(power_points(CAPSIM_SOURCE_DIR
				      "/calibrate/results/h200-2026-12-04-power-steps.jsonl",
				      NULL, 1, "h200-power-steps", "h200", h200_power_fitted,
				      h200_power_check),
			 8);
}

static double h100_power_sum;

static void h100_power_check(const power_point *pt, int i)
{
	(void)i;
	printf("%s\n", pt->host ? " (host-bound) |" : "");
	assert_string_equal(pt->gpu_id, "h100-sxm5-80gb");
	/* known off, and why: Llama 3 8B's 4 layers at 4096 tokens draw
	 * 686 W, near the 700 W limit, where capsim's load curve reaches
	 * 580 W at the same busy share (the H200's same point, one the
	 * memory-bound weight was fitted on, is -13.1%): its GEMMs and
	 * attention keep the board busier than the share of kernel time
	 * says */
	int known = strcmp(pt->model, "llama-3-8b") == 0;
	double tol = pt->host ? 0.30 : 0.15;
	if (known && fabs(pt->err) <= tol)
		fail_msg("%s: %+.1f%%, within %.0f%%: no longer known off", pt->id, 100 * pt->err,
			 100 * tol);
	if (!known && fabs(pt->err) > tol)
		fail_msg("%s: %+.1f%%", pt->id, 100 * pt->err);
	h100_power_sum += fabs(pt->err);
}

/* A GPU's draw through the same training steps on an H100 SXM
 * (calibrate/torch/power_probe.py, calibrate/results/
 * h100-2026-12-05d-power-steps.jsonl, 700 W limit) against capsim with the
 * datasheet's H100: nothing fitted on it. Tolerance, set before the
 * comparison: each point within 15%, as the H200's scored points; a point
 * capsim calls host-bound within 30% (its draw depends on how the board
 * idles through the gaps the step's mean hides, the H200's first point). */
static void test_h100_power(void **state)
{
	(void)state;
	h100_power_sum = 0.0;
	printf("| model | layers | seq | micro-batch | execution | measured (W) | capsim (W) | "
	       "error |\n|---|---:|---:|---:|---|---:|---:|---:|\n");
	int n = power_points(CAPSIM_SOURCE_DIR "/calibrate/results/h100-2026-12-05d-power-steps.jsonl",
			     "dgx-h100", 0, "h100-power-steps", "h100", NULL, h100_power_check);
	assert_int_equal(n, 8);
	printf("mean absolute error %.1f%%\n", 100 * h100_power_sum / n);
}

static double h100_wide_sum, h100_wide_known_sum;
static int h100_wide_known;

/* known off as a group, and why: Llama 3 8B's layers (every size) and the
 * compiled steps draw 637-692 W, at the edge of the 700 W limit, where
 * capsim's load (the share at the best GEMM rate, the rest at the
 * memory-bound weight fitted on the H200's eager steps) reads 483-600 W:
 * their fused and GEMM-dense kernels keep the board busier than the share of
 * kernel time at the best GEMM rate says (the first H100 run's Llama point
 * is the same). Their mean error must stay below -10%. */
static int h100_wide_known_off(const power_point *pt)
{
	return strcmp(pt->model, "llama-3-8b") == 0 || strstr(pt->id, "-compile") != NULL;
}

static void h100_wide_check(const power_point *pt, int i)
{
	(void)i;
	int known = h100_wide_known_off(pt);
	printf("%s%s\n", pt->host ? " (host-bound)" : "", known ? " known off |" : " |");
	assert_string_equal(pt->gpu_id, "h100-sxm5-80gb");
	double tol = pt->host ? 0.30 : 0.15;
	if (!known && fabs(pt->err) > tol)
		fail_msg("%s: %+.1f%%", pt->id, 100 * pt->err);
	h100_wide_known += known;
	h100_wide_known_sum += known ? pt->err : 0.0;
	h100_wide_sum += fabs(pt->err);
}

/* 28 more points of the same probe on an H100 SXM (calibrate/results/
 * h100-2026-12-05e-power-wide.jsonl: power_probe.py --grid wide, 10 s of
 * steps each), chosen before capsim was run on them: the four models over
 * sizes and the three executions. Nothing fitted on them. Tolerance, set
 * before the comparison, as the first H100 run's: within 15%, within 30%
 * where capsim calls the step host-bound. */
static void test_h100_power_wide(void **state)
{
	(void)state;
	h100_wide_sum = h100_wide_known_sum = 0.0;
	h100_wide_known = 0;
	printf("| model | layers | seq | micro-batch | execution | measured (W) | capsim (W) | "
	       "error | |\n|---|---:|---:|---:|---|---:|---:|---:|---|\n");
	int n = power_points(CAPSIM_SOURCE_DIR "/calibrate/results/h100-2026-12-05e-power-wide.jsonl",
			     "dgx-h100", 0, "h100-power-wide", "h100", NULL, h100_wide_check);
	assert_int_equal(n, 28);
	assert_int_equal(h100_wide_known, 10);
	double known_mean = h100_wide_known_sum / h100_wide_known;
	printf("mean absolute error %.1f%%; the %d known off %+.1f%% on average\n",
	       100 * h100_wide_sum / n, h100_wide_known, 100 * known_mean);
	if (known_mean >= -0.10)
		fail_msg("the known-off points' mean error %+.1f%%: no longer known off",
			 100 * known_mean);
	assert_true(h100_wide_sum / n <= 0.10);
}

/* Checkpoints, failures and goodput in closed form: Young's interval
 * sqrt(2 delta M); the first-order goodput tau / ((tau + delta)(1 + (r +
 * (tau + delta)/2)/M)), best near Young's interval; a Megatron checkpoint of
 * 2 + 4 + 8 bytes a parameter, saved asynchronously by Megatron's own path;
 * Lustre's aggregate and per-client limits; the job's MTTF from its parts'
 * rates, and a node MTBF that scales them; the goodput time_to_train over
 * the exact expected wall time, restarts 11 min and the restore */
static void test_reliability_closed_form(void **state)
{
	(void)state;
	assert_rel(capsim_young_interval(60, 3600), sqrt(2.0 * 60 * 3600), 1e-12);
	double g = capsim_goodput(600, 30, 300, 36000);
	assert_rel(g, 600.0 / (630.0 * (1.0 + (300 + 315.0) / 36000)), 1e-12);
	double young = capsim_young_interval(30, 36000);
	double gy = capsim_goodput(young, 30, 300, 36000);
	assert_true(gy > capsim_goodput(young / 3, 30, 300, 36000));
	assert_true(gy > capsim_goodput(young * 3, 30, 300, 36000));

	static const char text[] =
		"<scenario name=\"r\"><cluster nodes=\"4\"><node ref=\"dgx-h100\"/>"
		"<fabric topology=\"fat-tree\" transport=\"infiniband\" routing=\"adaptive\">"
		"<switch ref=\"qm9700\"/></fabric><storage><shared ref=\"lustre\">"
		"<bandwidth write=\"20 GB/s\" read=\"40 GB/s\" per-client-write=\"2 GB/s\" "
		"per-client-read=\"4 GB/s\"/></shared></storage></cluster>"
		"<workload seq-len=\"4096\" global-batch=\"64\" tokens=\"1T\" dtype=\"bf16\">"
		"<model ref=\"llama-2-13b\"/><parallelism tp=\"8\" pp=\"2\" zero=\"1\"/></workload>"
		"</scenario>";
	capsim_scenario *s = load(text, NULL, 0);
	/* Megatron saves in the background (--async-save); the sync path first */
	assert_int_equal(s->checkpoint_mode, CAPSIM_CKPT_FRAMEWORK);
	assert_true(capsim_checkpoint_async(s));
	s->checkpoint_mode = CAPSIM_CKPT_SYNC;
	capsim_step st = step_of(s);
	capsim_reliab r;
	capsim_reliab_estimate(s, &st, 8, &r);
	double bytes = capsim_model_params(&s->model, 0) * (2.0 + 4.0 + 8.0);
	assert_rel(r.checkpoint_bytes, bytes, 1e-12);
	/* 4 nodes at 2 GB/s each (8 GB/s) bind before the 20 GB/s aggregate;
	 * each of the 32 ranks copies its shard to pageable host memory at
	 * 1.372 GB/s, its one writer serialises it at 2.35 GB/s, then the
	 * storage writes; the restore's read binds before the copy back */
	assert_true(r.has_storage);
	assert_rel(r.copy_s, bytes / 32 / 1.372e9, 1e-9);
	assert_rel(r.write_s, bytes / 32 / 2.35e9 + bytes / 4 / 2e9, 1e-9);
	assert_rel(r.blocking_s, r.copy_s + r.write_s, 1e-12);
	assert_rel(r.restore_s, bytes / 4 / 4e9, 1e-9);
	/* the flat efficiency of old, given, charges the whole save at it */
	s->checkpoint_eff = 0.384;
	capsim_reliab flat;
	capsim_reliab_estimate(s, &st, 8, &flat);
	assert_rel(flat.blocking_s, bytes / 4 / 2e9 / 0.384, 1e-9);
	assert_true(flat.copy_s == 0);
	s->checkpoint_eff = 0;
	/* the parts: 8 GPUs' chips and memories, and a node's NVLink, NICs,
	 * links, host and software, x 4 nodes, and 8 leaf switches */
	const double day = 86400;
	double node = 8 / 6483.66 + 8 / 9991.22 + 1 / 25394.3 + 1 / 2539.43 + 1 / 1731.43 +
		      1 / 1104.10 + 1 / 7725.11;
	assert_rel(r.node_mtbf_s, day / node, 1e-9);
	assert_rel(r.node_mtbf_s / day, 245.07, 1e-4); /* 568 faults in 139,200 node-days */
	assert_rel(r.job_mttf_s, day / (4 * node + 8 / 59700.0), 1e-9);
	assert_rel(r.part_rate_per_s[CAPSIM_PART_GPU], 4 * 8 / 6483.66 / day, 1e-9);
	assert_rel(r.part_rate_per_s[CAPSIM_PART_HBM], 4 * 8 / 9991.22 / day, 1e-9);
	assert_rel(r.part_rate_per_s[CAPSIM_PART_NVLINK], 4 / 25394.3 / day, 1e-9);
	assert_rel(r.part_rate_per_s[CAPSIM_PART_SWITCH], 8 / 59700.0 / day, 1e-9);
	assert_true(r.part_rate_per_s[CAPSIM_PART_OTHER] == 0);
	assert_rel(r.interval_s, sqrt(2 * r.blocking_s * r.job_mttf_s), 1e-12);
	double ttt = st.time_to_train_s, restart = 11 * 60 + r.restore_s;
	double wall = capsim_expected_wall(ttt, r.interval_s, r.blocking_s, restart, r.job_mttf_s);
	assert_rel(r.wall_to_train_s, wall, 1e-12);
	assert_rel(r.goodput, ttt / wall, 1e-12);
	assert_rel(r.interruptions,
		   capsim_expected_failures(ttt, r.interval_s, r.blocking_s, r.job_mttf_s), 1e-12);
	/* the first-order goodput, at an interval a small share of the MTTF,
	 * within 0.1% of the exact one */
	assert_rel(capsim_goodput(r.interval_s, r.blocking_s, restart, r.job_mttf_s), r.goodput,
		   1e-3);
	/* async: training waits for a GPU's shard over PCIe (H100: Gen5 x16),
	 * the interval is Young's on that but no shorter than the write, and a
	 * failure while a save drains loses it too */
	s->checkpoint_mode = CAPSIM_CKPT_FRAMEWORK;
	capsim_reliab ra;
	capsim_reliab_estimate(s, &st, 8, &ra);
	double blocking = bytes / 32 / capsim_pcie_bw(s->gpu.pcie_generation, s->gpu.pcie_lanes);
	assert_rel(ra.blocking_s, blocking, 1e-12);
	/* the save costs its blocking copy and the work the steps lose while
	 * the write drains, 0.5% slower: write x 0.005 / 1.005 */
	double cost = blocking + ra.write_s * 0.005 / 1.005;
	assert_rel(capsim_save_cost(s, &ra), cost, 1e-12);
	double tau = sqrt(2 * cost * ra.job_mttf_s);
	if (tau < ra.write_s)
		tau = ra.write_s;
	assert_rel(ra.interval_s, tau, 1e-12);
	double wall_a = capsim_expected_wall(ttt, tau, cost, 660 + ra.restore_s + ra.write_s,
					     ra.job_mttf_s);
	assert_rel(ra.goodput, ttt / wall_a, 1e-12);
	s->checkpoint_drain_slowdown = 0.5;
	assert_rel(capsim_save_cost(s, &ra), blocking + ra.write_s / 3, 1e-12);
	s->checkpoint_drain_slowdown = 0.005;
	assert_true(ra.goodput > r.goodput);
	/* a framework without an async path saves synchronously; a mode given wins */
	s->framework = CAPSIM_FW_TORCH_AMP;
	assert_false(capsim_checkpoint_async(s));
	s->framework = CAPSIM_FW_DEEPSPEED;
	assert_false(capsim_checkpoint_async(s));
	s->framework = CAPSIM_FW_FSDP2;
	assert_true(capsim_checkpoint_async(s));
	s->checkpoint_mode = CAPSIM_CKPT_SYNC;
	assert_false(capsim_checkpoint_async(s));
	s->framework = CAPSIM_FW_TORCH_AMP;
	s->checkpoint_mode = CAPSIM_CKPT_ASYNC;
	assert_true(capsim_checkpoint_async(s));
	/* spares: each part's failures a second x its mean repair in the
	 * trace (Little's law), covered 99% of the time by the Poisson quantile */
	double repair = 4 * ((8 / 6483.66 + 8 / 9991.22 + 1 / 25394.3) * 6.48 + 1 / 2539.43 * 10.68 +
			     1 / 1731.43 * 4.86 + 1 / 1104.10 * 11.43 + 1 / 7725.11 * 2.04);
	assert_rel(r.nodes_in_repair, repair, 1e-9);
	assert_int_equal(r.spare_nodes, capsim_poisson_quantile(r.nodes_in_repair, 0.99));
	assert_int_equal(capsim_poisson_quantile(0.624, 0.99), 3); /* P(<=2) 0.974, P(<=3) 0.9958 */
	assert_int_equal(capsim_poisson_quantile(10, 0.99), 18);   /* P(<=17) 0.986, P(<=18) 0.993 */
	/* halving finds what stepping from 0 finds, small means to large */
	for (double mean = 0.01; mean < 5000.0; mean *= 1.37)
		for (double p = 0.5; p < 1.0; p += 0.0499) {
			int k = 0;
			while (gsl_cdf_poisson_P((unsigned)k, mean) < p)
				k++;
			if (capsim_poisson_quantile(mean, p) != k)
				fail_msg("mean %g, p %g: %d, stepping gives %d", mean, p,
					 capsim_poisson_quantile(mean, p), k);
		}
	free(s);
	/* a node MTBF given scales the node's parts to it, in proportion; at
	 * Meta RSC-1's 6.5 hardware failures per 1000 node-days, 16,384 GPUs
	 * (2048 nodes) fail every 1.8 h, Kokolis et al.'s projection; a repair
	 * given is every part's */
	const capsim_set big[] = { { "cluster.nodes", "2048" },
				   { "cluster.fabric.tiers", "3" },
				   { "workload.global-batch", "4096" },
				   { "reliability.node-mtbf", "153.85 d" },
				   { "reliability.repair", "3 d" } };
	s = load(text, big, 5);
	capsim_reliab_estimate(s, &st, 0, &r);
	assert_rel(r.job_mttf_s / 3600, 1.8, 0.01);
	assert_rel(r.node_mtbf_s / day, 153.85, 1e-9);
	assert_rel(r.part_rate_per_s[CAPSIM_PART_HOST] / r.part_rate_per_s[CAPSIM_PART_NIC],
		   2539.43 / 1104.10, 1e-9);
	assert_rel(r.nodes_in_repair, 2048 * 3 / 153.85, 1e-9);
	free(s);
	/* one part's rate given: only it moves */
	const capsim_set gpu[] = { { "reliability.gpu-mtbf", "1000 d" } };
	s = load(text, gpu, 1);
	capsim_reliab_estimate(s, &st, 8, &r);
	assert_rel(r.part_rate_per_s[CAPSIM_PART_GPU], 4 * 8 / 1000.0 / day, 1e-9);
	assert_rel(r.part_rate_per_s[CAPSIM_PART_HBM], 4 * 8 / 9991.22 / day, 1e-9);
	assert_rel(r.part_rate_per_s[CAPSIM_PART_HOST], 4 / 1104.10 / day, 1e-9);
	free(s);
}

/* A shipped scenario with sets, evaluated (no scaling reference); fails the
 * test when it does not load or run. The caller frees *r. */
static void eval_file(const char *name, const capsim_set *sets, size_t n, capsim_result *r)
{
	char path[512];
	snprintf(path, sizeof path, CAPSIM_SOURCE_DIR "/scenarios/%s", name);
	capsim_scenario *s = malloc(sizeof *s);
	capsim_diags d = { 0 };
	if (capsim_scenario_load(path, cat, sets, n, s, &d) < 0 ||
	    capsim_eval(s, &(capsim_eval_opts){ .no_reference = 1 }, r, &d) < 0) {
		capsim_diags_print(&d, stderr);
		fail_msg("%s does not run", name);
	}
	capsim_diags_free(&d);
	free(s);
}

/* Cooling: the default scenario's 32 DGX H100 in an enterprise hall
 * (25 kW racks, 20 kW of air cooling a rack). By default a rack takes one
 * node (two by power, one by cooling at 10.2 kW). Packed two a rack under
 * 16 kW, the GPUs are throttled to the power limit at which the rack's
 * heat fits its cooling, and the step is the one at that limit; under
 * 10 kW not even idle GPUs fit; three nodes exceed the rack's power. */
static void test_cooling_throttle(void **state)
{
	(void)state;
	const capsim_set hall[] = { { "facility.ref", "enterprise-air-cooled" } };
	capsim_result r;
	eval_file("default.xml", hall, 1, &r);
	assert_int_equal(r.power.nodes_per_rack, 1);
	assert_int_equal(r.power.racks, 32);
	assert_true(r.power.throttle_limit_w == 0);
	double free_step = r.step.step_time_s;
	capsim_result_free(&r);

	const capsim_set packed[] = { { "facility.ref", "enterprise-air-cooled" },
				      { "facility.rack.nodes", "2" },
				      { "facility.cooling.per-rack", "16 kW" } };
	eval_file("default.xml", packed, 3, &r);
	assert_int_equal(r.power.nodes_per_rack, 2);
	double cap = r.power.throttle_limit_w;
	assert_true(cap > 80 && cap < 700);
	assert_true(r.power.rack_heat_w <= 16e3 * (1 + 1e-6));
	assert_true(r.power.rack_heat_w > 16e3 * 0.995);
	assert_rel(r.power.clock_scale, capsim_power_clock_scale(700, cap), 1e-12);
	assert_true(r.step.step_time_s > free_step * 1.05);
	/* the same as running the GPUs at that limit by hand */
	char limit[32];
	snprintf(limit, sizeof limit, "%.17g W", cap);
	const capsim_set by_hand[] = { { "facility.ref", "enterprise-air-cooled" },
				       { "facility.rack.nodes", "2" },
				       { "cluster.gpu.power.limit", limit } };
	capsim_result h;
	eval_file("default.xml", by_hand, 3, &h);
	assert_true(h.power.throttle_limit_w == 0);
	assert_rel(h.step.step_time_s, r.step.step_time_s, 1e-12);
	assert_rel(h.power.rack_heat_w, r.power.rack_heat_w, 1e-12);
	capsim_result_free(&h);
	capsim_result_free(&r);

	char path[512];
	snprintf(path, sizeof path, CAPSIM_SOURCE_DIR "/scenarios/default.xml");
	const capsim_set hot[] = { { "facility.ref", "enterprise-air-cooled" },
				   { "facility.rack.nodes", "2" },
				   { "facility.cooling.per-rack", "10 kW" } };
	const capsim_set dense[] = { { "facility.ref", "enterprise-air-cooled" },
				     { "facility.rack.nodes", "3" } };
	const struct { const capsim_set *sets; const char *want; } bad[] = {
		{ hot, "cannot cool 2 nodes" },
		{ dense, "facility.rack.nodes: 3 nodes" },
	};
	for (size_t i = 0; i < 2; i++) {
		capsim_scenario *s = malloc(sizeof *s);
		capsim_diags d = { 0 };
		assert_int_equal(capsim_scenario_load(path, cat, bad[i].sets, i ? 2 : 3, s, &d), 0);
		assert_int_equal(capsim_eval(s, &(capsim_eval_opts){ .no_reference = 1 }, &r, &d), -1);
		assert_true(capsim_diags_contains(&d, bad[i].want));
		capsim_diags_free(&d);
		free(s);
	}
}

/* The cloud run: on an offer as dependable as the cluster it takes the
 * cluster's wall time; a shared network's penalty slows the step; a spot
 * offer's reclaimed instances (32 H100 in 4 instances at 15% a month) add
 * to the hardware's interruptions, at Young's interval for the sum; a spot
 * offer without its reclaim rate is not priced */
static void test_cloud_run(void **state)
{
	(void)state;
	capsim_result r;
	eval_file("onprem-burst.xml", NULL, 0, &r);
	assert_true(r.cost.has_cloud_cost);
	assert_rel(r.cost.cloud_wall_to_train_s, r.reliab.wall_to_train_s, 1e-12);
	assert_rel(r.cost.cloud_goodput, r.reliab.goodput, 1e-12);
	assert_true(r.cost.cloud_reclaims == 0);
	capsim_result_free(&r);
	/* AWS's S3 at $0.023 a GB-month for a 10 TB dataset and a checkpoint
	 * over the cloud run, and $0.09 a GB for the trained bf16 weights */
	const capsim_set stored[] = { { "cost.cloud.ref", "aws-p5-capacity-block" },
				      { "cluster.storage.dataset", "10 TB" } };
	eval_file("onprem-burst.xml", stored, 2, &r);
	double month = 3.15576e7 / 12;
	assert_rel(r.cost.cloud_storage_usd, 0.023e-9 / month * (10e12 + r.reliab.checkpoint_bytes) *
		   r.cost.cloud_wall_to_train_s, 1e-9);
	/* bf16 weights of a Megatron checkpoint's 2 + 4 + 8 bytes a parameter */
	assert_rel(r.reliab.weights_bytes * 7, r.reliab.checkpoint_bytes, 1e-9);
	assert_rel(r.cost.cloud_egress_usd, 0.09e-9 * r.reliab.weights_bytes, 1e-9);
	assert_rel(r.cost.cloud_cost_usd, r.cost.cloud_gpu_usd + r.cost.cloud_storage_usd + r.cost.cloud_egress_usd,
		   1e-12);
	capsim_result_free(&r);
	const capsim_set slow[] = { { "cost.network-penalty", "20%" } };
	eval_file("onprem-burst.xml", slow, 1, &r);
	assert_rel(r.cost.cloud_wall_to_train_s, r.step.time_to_train_s / 0.8 / r.cost.cloud_goodput, 1e-12);
	assert_rel(r.cost.cloud_goodput, r.reliab.goodput, 1e-12);
	assert_rel(r.cost.cloud_gpu_usd, 12.29 / 3600 * 32 * r.cost.cloud_wall_to_train_s, 1e-9);
	capsim_result_free(&r);
	const capsim_set spot[] = { { "cost.cloud.ref", "vastai-h100-spot" },
				    { "cost.cloud.interruptions.per-month", "15%" },
				    { "cluster.storage.checkpoint-mode", "sync" } };
	eval_file("onprem-burst.xml", spot, 3, &r);
	assert_true(r.cost.has_cloud_cost);
	double reclaim = 4 * 0.15 / month;
	assert_rel(r.cost.cloud_reclaim_rate_per_s, reclaim, 1e-12);
	double m = 1.0 / (1.0 / r.reliab.job_mttf_s + reclaim);
	double tau = sqrt(2 * r.reliab.blocking_s * m);
	double ttt = r.step.time_to_train_s;
	double g = ttt / capsim_expected_wall(ttt, tau, r.reliab.blocking_s,
					      660 + r.reliab.restore_s, m);
	assert_rel(r.cost.cloud_goodput, g, 1e-12);
	assert_true(r.cost.cloud_goodput < r.reliab.goodput);
	assert_rel(r.cost.cloud_wall_to_train_s, r.step.time_to_train_s / g, 1e-12);
	assert_rel(r.cost.cloud_reclaims, reclaim * r.cost.cloud_wall_to_train_s, 1e-12);
	assert_rel(r.cost.cloud_cost_usd, 1.52 / 3600 * 32 * r.cost.cloud_wall_to_train_s, 1e-9);
	capsim_result_free(&r);
	eval_file("onprem-burst.xml", spot, 1, &r);
	assert_false(r.cost.has_cloud_cost);
	int listed = 0;
	for (int i = 0; i < r.n_not_modelled; i++)
		listed |= strcmp(r.not_modelled[i], "cost.cloud") == 0;
	assert_true(listed);
	capsim_result_free(&r);
}

/* The training run's money, in closed form on scenarios/onprem-burst.xml:
 * the cloud offer (AWS p5 on demand, $12.29 a GPU-hour, H100 as the cluster)
 * x 32 GPUs x the wall time to train; the facility's energy ($0.0806/kWh) x
 * its power x that time; an offer of another GPU is not priced */
static void test_run_costs(void **state)
{
	(void)state;
	capsim_result r;
	eval_file("onprem-burst.xml", NULL, 0, &r);
	assert_true(r.cost.has_cloud_cost && r.cost.has_energy_cost);
	double wall = r.reliab.wall_to_train_s;
	assert_true(wall > r.step.time_to_train_s);
	assert_rel(r.cost.cloud_gpu_usd, 12.29 / 3600.0 * 32 * wall, 1e-9);
	assert_rel(r.cost.cloud_cost_usd, r.cost.cloud_gpu_usd + r.cost.cloud_storage_usd + r.cost.cloud_egress_usd, 1e-12);
	assert_rel(r.cost.cloud_cost_per_million_tokens_usd, r.cost.cloud_cost_usd / 200e3, 1e-12);
	assert_rel(r.cost.energy_cost_usd, r.power.facility_w * wall * 0.0806 / 3.6e6, 1e-9);
	/* the burst plan: 64 rented H100s (8 nodes) beside the 32 owned, the
	 * token budget shared by throughput so that both finish together, at
	 * RunPod's $2.79 a GPU-hour; twice the GPUs at the same batch per
	 * replica train about two thirds of the tokens */
	assert_true(r.cost.has_burst_plan);
	assert_int_equal(r.cost.burst_gpus, 64);
	double on = r.step.tokens_per_s * r.reliab.goodput;
	assert_rel(r.cost.burst_wall_to_train_s, 200e9 / (on + r.cost.burst_tokens_per_s), 1e-12);
	assert_rel(r.cost.burst_share, r.cost.burst_tokens_per_s / (on + r.cost.burst_tokens_per_s), 1e-12);
	assert_rel(r.cost.burst_share, 2.0 / 3.0, 0.1);
	assert_rel(r.cost.burst_cost_usd, 2.79 / 3600 * 64 * r.cost.burst_wall_to_train_s, 1e-9);
	assert_rel(r.cost.burst_plan_cost_usd, r.cost.burst_cost_usd + r.cost.onprem_cost_per_gpu_hour_usd * 32 *
		   r.cost.burst_wall_to_train_s / 3600, 1e-9);
	assert_true(r.cost.burst_wall_to_train_s < 0.5 * wall);
	/* the fabric's parts in the result: one 64-port switch holds the 32
	 * node ports of 4 DGX H100 on 8 rails, no spines */
	assert_true(r.has_fabric);
	assert_int_equal(r.fabric.leaves, 1);
	assert_int_equal(r.fabric.spines, 0);
	assert_int_equal(r.fabric.cables_node_leaf, 32);
	capsim_result_free(&r);
	const capsim_set h200[] = { { "cost.cloud.ref", "aws-p5e-capacity-block" } };
	eval_file("onprem-burst.xml", h200, 1, &r);
	assert_false(r.cost.has_cloud_cost);
	capsim_result_free(&r);
}

/* Owning in closed form on scenarios/h100-8node-ndr.xml (8 DGX H100 at
 * $329,736, the fabric's QM9700s at $50,000, $2,560 of cabling a GPU; 3
 * years; the nodes and switches resold at 72% x 0.77^3 of their price;
 * support 10% a year of the nodes' and the switches' price, none of the
 * cables'; US colocation of the maximum IT power; energy busy at the step's
 * facility power, idle otherwise), and the break-even against the capacity
 * block ($4.916 a GPU-hour): 0.3 to 0.6 */
static void test_owning(void **state)
{
	(void)state;
	capsim_result r;
	eval_file("h100-8node-ndr.xml", NULL, 0, &r);
	assert_true(r.cost.has_capex);
	int sw = r.fabric.leaves + r.fabric.spines + r.fabric.cores;
	assert_true(sw > 0);
	double resell = 8 * 329736.0 + sw * 50000.0;
	double capex = resell + 2560.0 * 64;
	assert_rel(r.cost.capex_usd, capex, 1e-12);
	double residual = resell * 0.72 * pow(0.77, 3);
	assert_rel(r.cost.residual_usd, residual, 1e-12);
	double year = 3.15576e7, price = 0.0806 / 3.6e6, colo = 184.06 / (1e3 * 2.6298e6);
	double idle_w = r.power.facility_w - r.power.pue * 64 * (r.power.gpu_w - r.power.gpu_idle_w);
	double max_it = 8 * 10200.0 + r.power.switches_w;
	double opex = 0.6 * r.power.facility_w * year * price + 0.4 * idle_w * year * price +
		      colo * max_it * year + 0.1 * resell;
	assert_rel(r.cost.opex_per_year_usd, opex, 1e-9);
	assert_rel(r.cost.tco_usd, capex - residual + 3 * opex, 1e-9);
	assert_rel(r.cost.tco_npv_usd, r.cost.tco_usd, 1e-9); /* undiscounted by default */
	assert_rel(r.cost.onprem_cost_per_gpu_hour_usd, r.cost.tco_usd / (64 * 3 * year / 3600 * 0.6), 1e-9);
	double fixed = capex - residual + 3 * (idle_w * year * price + colo * max_it * year +
					       0.1 * resell);
	double extra = 3 * (r.power.facility_w - idle_w) * year * price;
	double rent = 4.916 / 3600 * 64 * 3 * year;
	assert_rel(r.cost.breakeven_utilization, fixed / (rent - extra), 1e-9);
	assert_true(r.cost.breakeven_utilization > 0.3 && r.cost.breakeven_utilization < 0.6);
	capsim_result_free(&r);
	/* discounted at 8% a year: 36 monthly payments of opex / 12, an annuity
	 * of v (1 - v^36) / (1 - v) at v = 1.08^(-1/12), and the residual
	 * received after 36 months */
	const capsim_set disc[] = { { "cost.discount-rate", "8%" } };
	eval_file("h100-8node-ndr.xml", disc, 1, &r);
	double v = pow(1.08, -1.0 / 12.0);
	assert_rel(r.cost.tco_npv_usd,
		   capex - residual * pow(v, 36) + opex / 12 * v * (1 - pow(v, 36)) / (1 - v), 1e-9);
	capsim_result_free(&r);
	/* staff in the opex; a shared file system with a price in the capex
	 * (its support 10% a year), its typical power in the IT load (and so
	 * in energy and colocation) */
	const capsim_set more[] = { { "cost.staff", "$300k/y" },
				    { "cluster.storage.shared.ref", "weka" },
				    { "cluster.storage.shared.price.value", "$1.5M" } };
	eval_file("h100-8node-ndr.xml", more, 3, &r);
	double capex2 = capex + 1.5e6;
	assert_rel(r.cost.capex_usd, capex2, 1e-12);
	assert_rel(r.cost.capex_storage_usd, 1.5e6, 1e-12);
	assert_true(r.cost.capex_excludes[0] == '\0');
	assert_rel(r.power.storage_w, 6400, 1e-12);
	double it = 8 * r.power.node_w + r.power.switches_w + 6400;
	assert_rel(r.power.it_w, it, 1e-12);
	double idle2 = r.power.facility_w - r.power.pue * 64 * (r.power.gpu_w - r.power.gpu_idle_w);
	double opex2 = 0.6 * r.power.facility_w * year * price + 0.4 * idle2 * year * price +
		       colo * (max_it + 6400) * year + 0.1 * (resell + 1.5e6) + 300e3;
	assert_rel(r.cost.opex_per_year_usd, opex2, 1e-9);
	capsim_result_free(&r);
	/* without its price the storage is left out, and said to be */
	const capsim_set unpriced[] = { { "cluster.storage.shared.ref", "weka" } };
	eval_file("h100-8node-ndr.xml", unpriced, 1, &r);
	assert_rel(r.cost.capex_usd, capex, 1e-12);
	assert_non_null(strstr(r.cost.capex_excludes, "weka"));
	capsim_result_free(&r);
	/* no price for the Quantum-X800 switch: no capex */
	const capsim_set q3400[] = { { "cluster.fabric.switch.ref", "q3400" } };
	eval_file("h100-8node-ndr.xml", q3400, 1, &r);
	assert_false(r.cost.has_capex);
	capsim_result_free(&r);
}

/* The Monte Carlo run against the exact expectation: 50 days of work
 * checkpointed every 2 h (60 s saves), interruptions every 12 h on average,
 * 15 min to restart: sum over segments of (e^(L/M) - 1)(M + r); 4000 runs'
 * mean within 3 of its 95% half-widths of it; the first-order goodput
 * within 1%; the same seed gives the same runs; interruptions and lost
 * work agree with the expectation's */
static void test_reliability_monte_carlo(void **state)
{
	(void)state;
	double W = 50 * 86400.0, tau = 7200, delta = 60, r = 900, M = 12 * 3600.0;
	double e = capsim_expected_wall(W, tau, delta, r, M);
	double L = tau + delta;
	assert_rel(e, (W / tau) * expm1(L / M) * (M + r), 1e-12);
	capsim_reliab a, b;
	memset(&a, 0, sizeof a);
	memset(&b, 0, sizeof b);
	capsim_reliab_monte_carlo(W, tau, delta, r, M, 4000, 7, &a);
	assert_int_equal(a.runs, 4000);
	if (fabs(a.mc_wall_mean_s - e) > 3 * a.mc_wall_ci_s)
		fail_msg("Monte Carlo mean %.6g s, expected %.6g +/- %.3g", a.mc_wall_mean_s, e,
			 3 * a.mc_wall_ci_s);
	assert_true(a.mc_wall_p50_s < a.mc_wall_p95_s);
	assert_rel(W / capsim_goodput(tau, delta, r, M), e, 0.01);
	capsim_reliab_monte_carlo(W, tau, delta, r, M, 4000, 7, &b);
	assert_rel(b.mc_wall_mean_s, a.mc_wall_mean_s, 0);
	/* interruptions: one per M of the time not spent restarting */
	assert_rel(a.mc_interruptions, (e - a.mc_interruptions * r) / M, 0.05);
	assert_true(a.mc_lost_s > 0 && a.mc_lost_s < a.mc_interruptions * L);
}

/* A job that does not fit still gets a step, flagged. */
static void test_does_not_fit_is_a_result(void **state)
{
	(void)state;
	const capsim_set big[] = { { "workload.model.ref", "llama-2-70b" },
				   { "workload.parallelism.pp", "1" },
				   { "workload.parallelism.zero", "0" } };
	capsim_scenario *s = load(base, big, 3);
	capsim_step r = step_of(s);
	assert_false(r.memory[0].fits);
	assert_true(r.step_time_s > 0);
	free(s);
}

/* Expert and context parallelism show in the breakdown where they apply:
 * Mixtral 8x7B with 8-way expert parallelism pays all-to-alls; Llama 3.1 8B
 * over 16-way context parallelism exchanges K and V (hidden or not). */
static void test_moe_and_context(void **state)
{
	(void)state;
	const capsim_set moe[] = { { "workload.model.ref", "mixtral-8x7b" },
				   { "workload.parallelism.tp", "2" },
				   { "workload.parallelism.pp", "1" },
				   { "workload.parallelism.ep", "8" } };
	capsim_scenario *s = load(base, moe, 4);
	capsim_step r = step_of(s);
	assert_true(r.exposed_comm_ep_s > 0);
	assert_rel(r.exposed_comm_s, r.exposed_comm_tp_s + r.exposed_comm_cp_s +
		   r.exposed_comm_pp_s + r.exposed_comm_dp_s + r.exposed_comm_ep_s, 1e-12);
	/* a capacity factor of 2 doubles the all-to-all's bytes and the
	 * experts' rows: more exposed EP time, more compute */
	s->moe_capacity_factor = 2.0;
	capsim_step r2 = step_of(s);
	assert_true(r2.exposed_comm_ep_s > 1.5 * r.exposed_comm_ep_s);
	assert_true(r2.compute_s > r.compute_s);
	s->moe_capacity_factor = 0.0;
	s->ep = 1;
	capsim_step r1 = step_of(s);
	assert_true(r1.exposed_comm_ep_s == 0);
	free(s);
	const capsim_set cp[] = { { "workload.model.ref", "llama-3.1-8b" },
				  { "workload.seq-len", "131072" },
				  { "workload.parallelism.pp", "1" },
				  { "workload.parallelism.cp", "4" },
				  { "workload.global-batch", "8" } };
	s = load(base, cp, 5);
	r = step_of(s);
	assert_true(r.exposed_comm_cp_s >= 0);
	assert_true(r.step_time_s > 0 && r.mfu > 0.1);
	free(s);
}

/* The data loader reads the next step's tokens during this one: 64 x 4096
 * tokens as int32 (Llama 3.1's vocabulary of 128256 does not fit uint16),
 * twice with pipelining (first and last stage), from Lustre at its aggregate
 * rate; a stall only where reading takes longer than the step. */
static void test_data_stall(void **state)
{
	(void)state;
	static const char lustre[] =
		"<scenario name=\"d\"><cluster nodes=\"4\"><node ref=\"dgx-h100\"/>"
		"<fabric topology=\"fat-tree\" transport=\"infiniband\" routing=\"adaptive\">"
		"<switch ref=\"qm9700\"/></fabric><storage><shared ref=\"lustre\">"
		"<bandwidth read=\"%s\" per-client-read=\"%s\"/></shared></storage></cluster>"
		"<workload seq-len=\"4096\" global-batch=\"64\" tokens=\"1T\" dtype=\"bf16\">"
		"<model ref=\"llama-3.1-8b\"/><parallelism tp=\"8\" pp=\"2\" zero=\"1\" "
		"sequence-parallel=\"on\"/></workload></scenario>";
	char text[2048];
	double bytes = 64.0 * 4096 * 4 * 2;
	snprintf(text, sizeof text, lustre, "80 GB/s", "40 GB/s");
	capsim_scenario *s = load(text, NULL, 0);
	capsim_step fast = step_of(s);
	assert_rel(fast.data_read_s, bytes / 80e9, 1e-9);
	assert_true(fast.data_stall_s == 0);
	free(s);
	snprintf(text, sizeof text, lustre, "1 MB/s", "1 MB/s");
	s = load(text, NULL, 0);
	capsim_step slow = step_of(s);
	assert_rel(slow.data_read_s, bytes / 1e6, 1e-9); /* aggregate binds: 4 nodes */
	assert_true(slow.data_read_s > fast.step_time_s);
	assert_rel(slow.data_stall_s, slow.data_read_s - fast.step_time_s, 1e-6);
	assert_rel(slow.step_time_s, slow.data_read_s, 1e-9);
	free(s);
}

/* The step simulates one data-parallel group's gradient reduction on a
 * plane of its own (capsim_step_dp_plane). Unfolded, all 32 groups of 1,024
 * GPUs (TP 8, PP 4, DP 32) reduce at once over the whole 2:1 fat tree; the
 * two agree within 2%, all-reduce and reduce-scatter alike. */
static void test_dp_plane_matches_all_groups(void **state)
{
	(void)state;
	static const char text[] =
		"<scenario name=\"u\"><cluster nodes=\"128\"><node ref=\"dgx-h100\"/>"
		"<fabric topology=\"fat-tree\" transport=\"infiniband\" routing=\"adaptive\" "
		"oversubscription=\"2:1\"><switch ref=\"qm9700\"/></fabric></cluster>"
		"<workload seq-len=\"4096\" global-batch=\"256\" tokens=\"1T\" dtype=\"bf16\">"
		"<model ref=\"llama-2-70b\"/><parallelism tp=\"8\" pp=\"4\"/></workload></scenario>";
	capsim_scenario *s = load(text, NULL, 0);
	assert_int_equal(s->dp, 32);
	static const capsim_coll ops[] = { CAPSIM_COLL_ALLREDUCE, CAPSIM_COLL_REDUCESCATTER };
	for (size_t k = 0; k < 2; k++) {
		double S = 4.385e9;
		capsim_coll_req r = { .op = ops[k], .bytes = S, .ranks = 32,
				      .algo = CAPSIM_ALGO_RING, .proto = CAPSIM_PROTO_SIMPLE,
				      .channels = 8, .no_nccl_caps = 1 };
		capsim_diags d = { 0 };
		/* folded: one group on its plane */
		capsim_scenario *plane = malloc(sizeof *plane);
		capsim_step_dp_plane(s, plane);
		assert_int_equal(plane->nodes, 32);
		capsim_fabric *pf = capsim_fabric_build(plane, &d);
		capsim_coll_result a;
		assert_int_equal(capsim_collective_run(pf, plane, &r, &a, &d), 0);
		capsim_fabric_destroy(pf);
		free(plane);
		/* unfolded: every group at once; group (tensor rank t, stage p)
		 * starts at GPU t + p x (tp x dp), members tp apart */
		int bases[32], n = 0;
		for (int st = 0; st < 4; st++)
			for (int t = 0; t < 8; t++)
				bases[n++] = t + st * 8 * 32;
		capsim_fabric *f = capsim_fabric_build(s, &d);
		capsim_coll_result b;
		assert_int_equal(capsim_collective_run_groups(f, s, &r, bases, n, 8, &b, &d), 0);
		capsim_fabric_destroy(f);
		capsim_diags_print(&d, stderr);
		capsim_diags_free(&d);
		assert_true(b.flows >= 32 * 32);
		printf("%s of %.4g B over 32 ranks: plane %.6f s, all 32 groups %.6f s\n",
		       capsim_coll_names[ops[k]], S, a.time_s, b.time_s);
		if (fabs(b.time_s - a.time_s) > 0.02 * a.time_s)
			fail_msg("%s: plane %g s, all groups %g s", capsim_coll_names[ops[k]],
				 a.time_s, b.time_s);
	}
	free(s);
}

/* ---- published step times -------------------------------------------------- */

typedef struct {
	char model[64];
	int tp, pp, gpus, batch, micro, vstages;
	double tflops; /* published, per GPU */
} pub_row;

#define PUB_MAX 16
static pub_row sc21[PUB_MAX], h100[PUB_MAX];
static size_t n_sc21, n_h100;

/* The catalog model of `family` with row i's architecture (layers, hidden
 * size, heads, vocabulary); fails the test unless exactly one matches, so
 * the catalog and the published table cannot drift apart. */
static void model_of(const testutil_table *t, size_t i, const char *family, pub_row *w)
{
	int layers = (int)testutil_csv_num(t, i, "num_layers");
	int hidden = (int)testutil_csv_num(t, i, "hidden_size");
	int heads = (int)testutil_csv_num(t, i, "attention_heads");
	int vocab = (int)testutil_csv_num(t, i, "vocab");
	int found = 0;
	for (size_t k = 0; k < capsim_catalog_count(cat, CAPSIM_KIND_MODEL); k++) {
		const capsim_model *m = capsim_catalog_at(cat, CAPSIM_KIND_MODEL, k);
		if (strcmp(m->family, family) != 0 || m->layers != layers ||
		    m->hidden != hidden || m->heads != heads || m->vocab != vocab)
			continue;
		snprintf(w->model, sizeof w->model, "%s", m->e.id);
		found++;
	}
	if (found != 1)
		fail_msg("%s row %zu (l %d, h %d, heads %d, V %d): %d catalog models of "
			 "family %s match, expected 1", family, i + 1, layers, hidden, heads,
			 vocab, found, family);
}

/* Narayanan et al. SC21 Table 1 (tests/data/reference/megatron_sc21.csv):
 * DGX A100 on HDR InfiniBand, fp16, full recomputation; interleaved schedules
 * as in the paper's run script (virtual stages = layers per stage / the
 * script's "N layers/virtual stage") */
static size_t load_sc21(pub_row *rows)
{
	testutil_table t;
	testutil_csv_load(CAPSIM_SOURCE_DIR "/tests/data/reference/megatron_sc21.csv", &t);
	if (t.n_rows > PUB_MAX)
		fail_msg("megatron_sc21.csv: %zu rows, at most %d", t.n_rows, PUB_MAX);
	for (size_t i = 0; i < t.n_rows; i++) {
		pub_row *w = &rows[i];
		model_of(&t, i, "megatron-sc21", w);
		w->tp = (int)testutil_csv_num(&t, i, "tp");
		w->pp = (int)testutil_csv_num(&t, i, "pp");
		w->gpus = (int)testutil_csv_num(&t, i, "gpus");
		w->batch = (int)testutil_csv_num(&t, i, "global_batch_size");
		w->micro = (int)testutil_csv_num(&t, i, "micro_batch_size_script");
		w->tflops = testutil_csv_num(&t, i, "achieved_tflops_per_gpu");
		const char *il = testutil_csv_get(&t, i, "interleaving_script");
		int per_virtual = atoi(il);
		int layers = (int)testutil_csv_num(&t, i, "num_layers");
		w->vstages = per_virtual > 0 ? layers / w->pp / per_virtual : 1;
		if (per_virtual > 0 && w->vstages * per_virtual * w->pp != layers)
			fail_msg("megatron_sc21.csv row %zu: '%s' does not divide %d layers "
				 "over pp %d", i + 1, il, layers, w->pp);
	}
	size_t n = t.n_rows;
	testutil_csv_free(&t);
	return n;
}

/* Megatron-LM README, H100 weak scaling (Megatron-Core r0.8.0, with
 * overlapped TP, DP gradient and parameter communication;
 * tests/data/reference/megatron_h100_readme.csv). The README states no
 * micro-batch size: 1, and no interleaving. */
static size_t load_h100(pub_row *rows)
{
	testutil_table t;
	testutil_csv_load(CAPSIM_SOURCE_DIR "/tests/data/reference/megatron_h100_readme.csv", &t);
	if (t.n_rows > PUB_MAX)
		fail_msg("megatron_h100_readme.csv: %zu rows, at most %d", t.n_rows, PUB_MAX);
	for (size_t i = 0; i < t.n_rows; i++) {
		pub_row *w = &rows[i];
		model_of(&t, i, "megatron-h100", w);
		w->tp = (int)testutil_csv_num(&t, i, "tp");
		w->pp = (int)testutil_csv_num(&t, i, "pp");
		w->gpus = (int)testutil_csv_num(&t, i, "gpus");
		w->batch = (int)testutil_csv_num(&t, i, "global_batch_size");
		w->micro = 1;
		w->vstages = 1;
		w->tflops = testutil_csv_num(&t, i, "tflops_per_gpu");
	}
	size_t n = t.n_rows;
	testutil_csv_free(&t);
	return n;
}

/* both tables, read once; every row of each is used */
static void load_published(void)
{
	if (n_sc21)
		return;
	n_sc21 = load_sc21(sc21);
	n_h100 = load_h100(h100);
	assert_int_equal(n_sc21, 10);
	assert_int_equal(n_h100, 9);
}

/* relative errors of capsim's step against the published one, per row;
 * SC21's own FLOP count (Eq. 3: full recomputation, full attention); the
 * H100 table's, Megatron-Core 0.8's (full attention, no recomputation) */
/* The measured H200's calibrated GEMM models (hardware/calibrated/
 * h200-sxm-141gb-2026-12-02.xml), standing in for an H100's when the knob is
 * refitted for a calibrated curve: the same GH100 die, 132 SMs and 700 W
 * (an assumption; the H100's HBM keeps its own bandwidth) */
static capsim_gemm_cal h200_cal[CAPSIM_CAL_DTYPES];
static int have_h200_cal;

static void load_h200_cal(void)
{
	if (have_h200_cal)
		return;
	const capsim_set sets[] = {
		{ "cluster.node.profile", "hardware/calibrated/h200-sxm-141gb-2026-12-02.xml" } };
	capsim_scenario *s = malloc(sizeof *s);
	capsim_diags d = { 0 };
	if (capsim_scenario_load(CAPSIM_SOURCE_DIR "/scenarios/gpt2-124m-1xh200.xml", cat, sets, 1,
				 s, &d) < 0) {
		capsim_diags_print(&d, stderr);
		fail_msg("the H200 profile does not load");
	}
	capsim_diags_free(&d);
	memcpy(h200_cal, s->gpu.cal.gemm, sizeof h200_cal);
	assert_true(h200_cal[CAPSIM_DTYPE_BF16].params > 0);
	free(s);
	have_h200_cal = 1;
}

static const capsim_gemm_cal *errors_cal; /* set: every GPU takes these GEMM models */
static int step_variability;               /* set: workload.variability on */
static int mem_verdict[PUB_MAX];           /* each published row's memory verdict */
static int pub_host[PUB_MAX];              /* each row host-bound in capsim's step */

static void errors(const pub_row *rows, size_t n, int a100, const capsim_knobs *kn,
		   double *err, double *pub, double *got, double *mem)
{
	for (size_t i = 0; i < n; i++) {
		const pub_row *w = &rows[i];
		char text[2048];
		if (a100)
			snprintf(text, sizeof text,
				 "<scenario name=\"sc21\"><cluster nodes=\"%d\"><node ref=\"dgx-a100\"/>"
				 "<fabric topology=\"fat-tree\" tiers=\"3\" transport=\"infiniband\" "
				 "routing=\"adaptive\"><switch ref=\"qm8700\"/></fabric></cluster>"
				 "<workload seq-len=\"2048\" global-batch=\"%d\" micro-batch=\"%d\" "
				 "tokens=\"300B\" dtype=\"fp16\" attention=\"unfused\"><model ref=\"%s\"/>"
				 "<parallelism tp=\"%d\" pp=\"%d\" recompute=\"full\" tp-async=\"off\" "
				 "schedule=\"%s\" virtual-stages=\"%d\"/>"
				 "</workload></scenario>",
				 w->gpus / 8, w->batch, w->micro, w->model, w->tp, w->pp,
				 w->vstages > 1 ? "1f1b-interleaved" : "1f1b", w->vstages);
		else /* 2024's stack: FlashAttention-2's rates fit these runs (rms log
		      * error 0.056 against 0.077 with cuDNN's, docs/validation.md) */
			snprintf(text, sizeof text,
				 "<scenario name=\"mh\"><cluster nodes=\"%d\"><node ref=\"dgx-h100\"/>"
				 "<fabric topology=\"fat-tree\" tiers=\"3\" transport=\"infiniband\" "
				 "routing=\"adaptive\"><switch ref=\"qm9700\"/></fabric></cluster>"
				 "<workload seq-len=\"4096\" global-batch=\"%d\" tokens=\"1T\" dtype=\"bf16\" "
				 "attention=\"flash2\">"
				 "<model ref=\"%s\"/><parallelism tp=\"%d\" pp=\"%d\" zero=\"1\" "
				 "sequence-parallel=\"%s\" tp-comm-overlap=\"on\"/></workload></scenario>",
				 w->gpus / 8, w->batch, w->model, w->tp, w->pp, w->tp > 1 ? "on" : "off");
		const capsim_set on[] = { { "workload.variability", "on" } };
		capsim_scenario *s = load(text, step_variability ? on : NULL, step_variability);
		if (errors_cal)
			memcpy(s->gpu.cal.gemm, errors_cal, sizeof s->gpu.cal.gemm);
		capsim_diags d = { 0 };
		capsim_fabric *f = capsim_fabric_build(s, &d);
		capsim_step r;
		if (!f || capsim_step_simulate_knobs(s, f, kn, &r, &d) < 0) {
			capsim_diags_print(&d, stderr);
			fail_msg("%s: step fails", w->model);
		}
		capsim_fabric_destroy(f);
		capsim_diags_free(&d);
		capsim_step_free(&r);
		double flops = a100 ?
			capsim_flops_megatron(s->model.layers, s->model.hidden, 2048,
					      s->model.vocab, w->batch) :
			capsim_flops_megatron_core(&s->model, 4096, (double)w->batch,
						   CAPSIM_MCORE_FLOPS_2024);
		pub[i] = flops / (w->tflops * 1e12 * w->gpus);
		got[i] = r.step_time_s;
		pub_host[i] = host_bound(&r);
		err[i] = (got[i] - pub[i]) / pub[i];
		/* every configuration ran on 80 GB parts: a memory model that
		 * says one does not fit is wrong ("close" is not a refusal) */
		if (mem) {
			mem[i] = r.memory[0].peak.total_bytes;
			mem_verdict[i] = r.memory[0].verdict;
			if (r.memory[0].verdict == CAPSIM_MEM_NO)
				fail_msg("%s: %.1f GB does not fit in %.0f GB, yet it ran",
					 w->model, mem[i] / 1e9, r.memory[0].capacity_bytes / 1e9);
		}
		free(s);
	}
}

static double msle(const pub_row *rows, size_t n, int a100, double scale)
{
	capsim_knobs kn = capsim_knobs_fitted;
	kn.compute_scale = scale;
	kn.compute_scale_calibrated = scale;
	double err[PUB_MAX], pub[PUB_MAX], got[PUB_MAX], sum = 0;
	errors(rows, n, a100, &kn, err, pub, got, NULL);
	for (size_t i = 0; i < n; i++)
		sum += log(got[i] / pub[i]) * log(got[i] / pub[i]);
	return sum / n;
}

/* golden-section search of the mean squared log error of the step time
 * on the H100 table */
static double fit_scale(void)
{
	const double g = 0.6180339887498949;
	double a = 0.8, b = 2.0;
	double c = b - g * (b - a), d = a + g * (b - a);
	double fc = msle(h100, n_h100, 0, c), fd = msle(h100, n_h100, 0, d);
	while (b - a > 0.002) {
		if (fc < fd) {
			b = d; d = c; fd = fc;
			c = b - g * (b - a);
			fc = msle(h100, n_h100, 0, c);
		} else {
			a = c; c = d; fc = fd;
			d = a + g * (b - a);
			fd = msle(h100, n_h100, 0, d);
		}
	}
	return 0.5 * (a + b);
}

/* The knob is fitted on the H100 table, once with the datasheet GEMM curve
 * and once with a calibrated one (the measured H200's); knobs.c must hold both */
static void test_fit_knobs(void **state)
{
	(void)state;
	load_published();
	double fit = fit_scale();
	printf("fitted compute_scale %.4f (knobs.c: %.4f); rms log error %.3f\n", fit,
	       capsim_knobs_fitted.compute_scale, sqrt(msle(h100, n_h100, 0, fit)));
	assert_rel(capsim_knobs_fitted.compute_scale, fit, 0.02);
	load_h200_cal();
	errors_cal = h200_cal;
	double cal = fit_scale();
	printf("fitted compute_scale_calibrated %.4f (knobs.c: %.4f); rms log error %.3f\n", cal,
	       capsim_knobs_fitted.compute_scale_calibrated, sqrt(msle(h100, n_h100, 0, cal)));
	errors_cal = NULL;
	assert_rel(capsim_knobs_fitted.compute_scale_calibrated, cal, 0.02);
}

static void table(const char *title, const pub_row *rows, size_t n, int a100,
		  double lo, double hi)
{
	double err[PUB_MAX], pub[PUB_MAX], got[PUB_MAX], mem[PUB_MAX], sum = 0;
	errors(rows, n, a100, &capsim_knobs_fitted, err, pub, got, mem);
	printf("%s\n\n| model | GPUs | TP | PP | published step (s) | capsim (s) | error "
	       "| capsim peak memory (GB) | verdict |\n|---|---:|---:|---:|---:|---:|---:|---:|---|\n",
	       title);
	for (size_t i = 0; i < n; i++) {
		printf("| %s | %d | %d | %d | %.3f | %.3f | %+.1f%% | %.1f | %s |\n", rows[i].model,
		       rows[i].gpus, rows[i].tp, rows[i].pp, pub[i], got[i], 100 * err[i],
		       mem[i] / 1e9, capsim_mem_verdict_names[mem_verdict[i]]);
		sum += fabs(err[i]);
		/* the H100 table is where compute_scale is fitted: in-sample */
		testutil_residual_record(&(testutil_residual){
			.table = a100 ? "megatron-sc21-table1" : "megatron-lm-readme-h100",
			.row = rows[i].model, .family = "published-megatron", .quantity = "step",
			.gpu = a100 ? "dgx-a100" : "dgx-h100", .gen = a100 ? "ampere" : "hopper",
			.stack = "megatron", .profile = "datasheet", .host_bound = pub_host[i],
			.gpus = rows[i].gpus, .in_sample = !a100, .predicted = got[i],
			.measured = pub[i] });
		/* the step model aims at 10% a row and 5% on average; hold the present
		 * band so that a regression shows */
		if (err[i] < lo || err[i] > hi)
			fail_msg("%s: %+.1f%% leaves [%+.0f%%, %+.0f%%]", rows[i].model,
				 100 * err[i], 100 * lo, 100 * hi);
	}
	printf("\nmean absolute error: %.1f%%\n\n", 100 * sum / n);
}

static void test_published_steps(void **state)
{
	(void)state;
	load_published();
	table("Megatron-LM README, H100 (fitted on)", h100, n_h100, 0, -0.10, 0.10);
	table("SC21 Table 1, A100 (scored)", sc21, n_sc21, 1, -0.10, 0.10);
}

/* Korthikanti et al. 2022 (arXiv:2205.05198), Table 5: end-to-end
 * iteration times on DGX A100 80GB (Selene), data-parallel size 1, with
 * full recomputation and with the paper's work (selective recomputation and
 * sequence parallelism); Table 3's configurations
 * (tests/data/reference/korthikanti2022_table5.csv), sequence 2048,
 * vocabulary 51200, interleaving of 3 for 175B and 530B, attention as in
 * 2022 (unfused), mixed precision taken as fp16, tensor-parallel
 * collectives exposed. Scored, not fitted on: the same 10% a row as the
 * other published tables, set before the comparison. */
/* the catalog's models of Table 5's rows, in the file's order */
static const char *const k22_ids[] = { "megatron-22b", "megatron-175b", "megatron-529.6b",
				       "megatron-1t" };

/* Row i of Table 5 (t) as a scenario, model id, with full recomputation or
 * (sel) selective recomputation and sequence parallelism; the spread on
 * where step_variability is set. */
static capsim_scenario *k22_scenario(const testutil_table *t, size_t i, const char *id, int sel)
{
	int tp = (int)testutil_csv_num(t, i, "tp"), pp = (int)testutil_csv_num(t, i, "pp");
	int gpus = (int)testutil_csv_num(t, i, "gpus");
	int batch = (int)testutil_csv_num(t, i, "global_batch_size");
	int micro = (int)testutil_csv_num(t, i, "micro_batch_size");
	int v = atoi(testutil_csv_get(t, i, "interleave"));
	char text[2048];
	snprintf(text, sizeof text,
		 "<scenario name=\"k22\"><cluster nodes=\"%d\"><node ref=\"dgx-a100\"/>"
		 "<fabric topology=\"fat-tree\" tiers=\"3\" transport=\"infiniband\" "
		 "routing=\"adaptive\"><switch ref=\"qm8700\"/></fabric></cluster>"
		 "<workload seq-len=\"2048\" global-batch=\"%d\" micro-batch=\"%d\" "
		 "tokens=\"300B\" dtype=\"fp16\" attention=\"unfused\"><model ref=\"%s\"/>"
		 "<parallelism tp=\"%d\" pp=\"%d\" dp=\"1\" recompute=\"%s\" "
		 "sequence-parallel=\"%s\" schedule=\"%s\" virtual-stages=\"%d\"/>"
		 "</workload></scenario>",
		 gpus / 8, batch, micro, id, tp, pp, sel ? "selective" : "full",
		 sel ? "on" : "off", v > 1 ? "1f1b-interleaved" : "1f1b", v > 1 ? v : 1);
	const capsim_set on[] = { { "workload.variability", "on" } };
	return load(text, step_variability ? on : NULL, step_variability);
}

static void test_korthikanti_2022(void **state)
{
	(void)state;
	testutil_table t;
	testutil_csv_load(CAPSIM_SOURCE_DIR "/tests/data/reference/korthikanti2022_table5.csv", &t);
	assert_int_equal(t.n_rows, 4);
	const char *const *ids = k22_ids;
	printf("| model | GPUs | TP | PP | recomputation | published (s) | capsim (s) | error "
	       "| capsim peak memory (GB) | verdict |\n|---|---:|---:|---:|---|---:|---:|---:|---:|---|\n");
	double sum = 0.0;
	int n = 0;
	for (size_t i = 0; i < t.n_rows; i++) {
		const capsim_model *m = capsim_catalog_find(cat, CAPSIM_KIND_MODEL, ids[i]);
		assert_non_null(m);
		assert_int_equal(m->layers, (int)testutil_csv_num(&t, i, "num_layers"));
		assert_int_equal(m->hidden, (int)testutil_csv_num(&t, i, "hidden_size"));
		assert_int_equal(m->heads, (int)testutil_csv_num(&t, i, "attention_heads"));
		int tp = (int)testutil_csv_num(&t, i, "tp"), pp = (int)testutil_csv_num(&t, i, "pp");
		int gpus = (int)testutil_csv_num(&t, i, "gpus");
		for (int sel = 0; sel < 2; sel++) {
			capsim_scenario *s = k22_scenario(&t, i, ids[i], sel);
			capsim_step r = step_of(s);
			double pub = testutil_csv_num(&t, i, sel ? "present_work_s" : "full_recompute_s");
			double err = r.step_time_s / pub - 1;
			char id[64];
			snprintf(id, sizeof id, "%s-%s", ids[i], sel ? "selective" : "full");
			testutil_residual_record(&(testutil_residual){
				.table = "korthikanti2022-table5", .row = id,
				.family = "published-megatron", .quantity = "step", .gpu = "dgx-a100",
				.gen = "ampere", .stack = "megatron", .profile = "datasheet",
				.host_bound = host_bound(&r), .gpus = gpus, .predicted = r.step_time_s,
				.measured = pub });
			printf("| %s | %d | %d | %d | %s | %.2f | %.2f | %+.1f%% | %.1f | %s |\n", ids[i],
			       gpus, tp, pp, sel ? "selective + SP" : "full", pub, r.step_time_s,
			       100 * err, r.memory[0].peak.total_bytes / 1e9,
			       capsim_mem_verdict_names[r.memory[0].verdict]);
			/* every configuration ran on 80 GB parts: not "does not fit" */
			if (r.memory[0].verdict == CAPSIM_MEM_NO)
				fail_msg("%s: %.1f GB does not fit, yet it ran", ids[i],
					 r.memory[0].peak.total_bytes / 1e9);
			/* every row within 10% (the 1T model's full recomputation,
			 * +11.5% while compute_scale was 1.273, is inside since) */
			if (fabs(err) > 0.10)
				fail_msg("%s (%s): %+.1f%% leaves 10%%", ids[i], sel ? "selective" : "full",
					 100 * err);
			sum += fabs(err);
			n++;
			free(s);
		}
	}
	printf("\nmean absolute error: %.1f%%\n\n", 100 * sum / n);
	testutil_csv_free(&t);
}

/* ---- runtime variability: every family before and after -------------------- */

/* each family's mean absolute error with the GPUs' rate spread off and on
 * (docs/validation.md, "Runtime variability: the expected slowest rank") */
#define README_MAE_OFF 0.0425
#define README_MAE_ON 0.0669
#define SC21_MAE_OFF 0.02065
#define SC21_MAE_ON 0.03923
#define K22_MAE_OFF 0.04414
#define K22_MAE_ON 0.06687

/* One family's mean absolute error and its rows within 10%, from each row's
 * error off and on (each row printed by its name), as a line of
 * docs/validation.md's table. */
static void variability_line(const char *name, const char *const *rows, const double *off,
			     const double *on, size_t n, double mae[2])
{
	int within[2] = { 0, 0 };
	mae[0] = mae[1] = 0.0;
	for (size_t i = 0; i < n; i++) {
		printf("  %s: %+.1f%% -> %+.1f%%\n", rows[i], 100 * off[i], 100 * on[i]);
		mae[0] += fabs(off[i]) / (double)n;
		mae[1] += fabs(on[i]) / (double)n;
		within[0] += fabs(off[i]) <= 0.10;
		within[1] += fabs(on[i]) <= 0.10;
		/* the spread only adds to a step */
		assert_true(on[i] >= off[i] - 1e-12);
	}
	printf("| %s | %zu | %.1f%% | %.1f%% | %d | %d |\n", name, n, 100 * mae[0], 100 * mae[1],
	       within[0], within[1]);
}

/* Table 5's eight rows' errors, the spread on where step_variability is set */
static size_t k22_errors(double *err)
{
	testutil_table t;
	testutil_csv_load(CAPSIM_SOURCE_DIR "/tests/data/reference/korthikanti2022_table5.csv", &t);
	size_t n = 0;
	for (size_t i = 0; i < t.n_rows; i++)
		for (int sel = 0; sel < 2; sel++) {
			capsim_scenario *s = k22_scenario(&t, i, k22_ids[i], sel);
			capsim_step r = step_of(s);
			double pub = testutil_csv_num(&t, i,
						      sel ? "present_work_s" : "full_recompute_s");
			err[n++] = r.step_time_s / pub - 1;
			capsim_step_free(&r);
			free(s);
		}
	testutil_csv_free(&t);
	return n;
}

/* The Megatron-LM tables of this file with the GPUs' rate spread on and off
 * (docs/validation.md, "Runtime variability"): each family's mean error as
 * recorded there, and no row shorter with the spread than without. */
static void test_variability_published(void **state)
{
	(void)state;
	load_published();
	double off[PUB_MAX], on[PUB_MAX], pub[PUB_MAX], got[PUB_MAX], mae[2];
	const char *names[PUB_MAX];
	for (size_t i = 0; i < n_h100; i++)
		names[i] = h100[i].model;
	printf("| family | rows | MAE off | MAE on | within 10%% off | on |\n"
	       "|---|---:|---:|---:|---:|---:|\n");
	errors(h100, n_h100, 0, &capsim_knobs_fitted, off, pub, got, NULL);
	step_variability = 1;
	errors(h100, n_h100, 0, &capsim_knobs_fitted, on, pub, got, NULL);
	step_variability = 0;
	variability_line("Megatron-LM README, H100", names, off, on, n_h100, mae);
	assert_rel(mae[0], README_MAE_OFF, 0.01);
	assert_rel(mae[1], README_MAE_ON, 0.01);
	errors(sc21, n_sc21, 1, &capsim_knobs_fitted, off, pub, got, NULL);
	step_variability = 1;
	errors(sc21, n_sc21, 1, &capsim_knobs_fitted, on, pub, got, NULL);
	step_variability = 0;
	for (size_t i = 0; i < n_sc21; i++)
		names[i] = sc21[i].model;
	variability_line("SC21 Table 1, A100", names, off, on, n_sc21, mae);
	assert_rel(mae[0], SC21_MAE_OFF, 0.01);
	assert_rel(mae[1], SC21_MAE_ON, 0.01);
	size_t n = k22_errors(off);
	step_variability = 1;
	assert_int_equal(k22_errors(on), n);
	step_variability = 0;
	for (size_t i = 0; i < n; i++)
		names[i] = i % 2 ? "selective + SP" : k22_ids[i / 2];
	variability_line("Korthikanti et al. 2022, A100", names, off, on, n, mae);
	assert_rel(mae[0], K22_MAE_OFF, 0.01);
	assert_rel(mae[1], K22_MAE_ON, 0.01);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_consistency),
		cmocka_unit_test(test_properties),
		cmocka_unit_test(test_weak_scaling),
		cmocka_unit_test(test_does_not_fit_is_a_result),
		cmocka_unit_test(test_zero3),
		cmocka_unit_test(test_busiest_links),
		cmocka_unit_test(test_straggler),
		cmocka_unit_test(test_uneven_interleaved),
		cmocka_unit_test(test_lora_step),
		cmocka_unit_test(test_selective_recompute_time),
		cmocka_unit_test(test_interleaved_dp_overlap),
		cmocka_unit_test(test_dp_buckets),
		cmocka_unit_test(test_fp8_head_in_bf16),
		cmocka_unit_test(test_ep_overlap),
		cmocka_unit_test(test_mixed_gpus),
		cmocka_unit_test(test_straggler_placement),
		cmocka_unit_test(test_jitter),
		cmocka_unit_test(test_step_critical_path),
		cmocka_unit_test(test_gpt2_h200),
		cmocka_unit_test(test_h200_host_steps),
		cmocka_unit_test(test_fp8_amax),
		cmocka_unit_test(test_fp8_steps_measured),
		cmocka_unit_test(test_host_node),
		cmocka_unit_test(test_power_closed_form),
		cmocka_unit_test(test_h200_power),
		cmocka_unit_test(test_h100_power),
		cmocka_unit_test(test_h100_power_wide),
		cmocka_unit_test(test_reliability_closed_form),
		cmocka_unit_test(test_run_costs),
		cmocka_unit_test(test_cooling_throttle),
		cmocka_unit_test(test_cloud_run),
		cmocka_unit_test(test_owning),
		cmocka_unit_test(test_reliability_monte_carlo),
		cmocka_unit_test(test_cuda_graphs),
		cmocka_unit_test(test_moe_and_context),
		cmocka_unit_test(test_dp_plane_matches_all_groups),
		cmocka_unit_test(test_data_stall),
		cmocka_unit_test(test_fit_knobs),
		cmocka_unit_test(test_korthikanti_2022),
		cmocka_unit_test(test_published_steps),
		cmocka_unit_test(test_variability_published),
	};
	return testutil_run_group_name("step", tests, setup, teardown);
}
