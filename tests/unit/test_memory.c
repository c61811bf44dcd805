/* test_memory.c - memory per GPU against closed forms: Korthikanti et al.
 * (2022) activations per layer (34sbh/t with sequence parallelism,
 * sbh(10 + 24/t) without, 2sbh/t with full recomputation), GQA and SwiGLU
 * worked by hand, 18 bytes a parameter and ZeRO sharding, and the
 * micro-batches each pipeline schedule keeps in flight. */
#include "catalog.h"
#include "scenario.h"
#include "testutil.h"
#include "residuals.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "memory.h"
#include "scenario.h"

TESTUTIL_CATALOG_FIXTURE

static capsim_scenario *load(const char *node, int nodes, const char *model,
			     int seq, int batch, const capsim_set *sets, size_t n)
{
	return testutil_scenario(cat, node, nodes, model, seq, batch, sets, n);
}

/* GPT-3 175B (h = 12288, 96 heads, FFN 4h, GELU), s = 2048, b = 1, t = 8. */
static void test_gpt3_activations(void **state)
{
	(void)state;
	double s_ = 2048, h = 12288, t = 8;
	const capsim_set sp[] = { { "workload.parallelism.tp", "8" },
				  { "workload.parallelism.pp", "8" },
				  { "workload.parallelism.sequence-parallel", "on" } };
	capsim_scenario *s = load("dgx-a100", 8, "gpt3-175b", 2048, 64, sp, 3);
	assert_rel(capsim_activation_bytes_per_layer(s), 34 * s_ * h / t, 1e-12);
	s->sequence_parallel = 0;
	assert_rel(capsim_activation_bytes_per_layer(s), s_ * h * (10 + 24 / t), 1e-12);
	s->sequence_parallel = 1;
	s->recompute = CAPSIM_RECOMPUTE_FULL;
	assert_rel(capsim_activation_bytes_per_layer(s), 2 * s_ * h / t, 1e-12);
	/* selective recomputation only drops the s x s terms a fused attention
	 * kernel never keeps */
	s->recompute = CAPSIM_RECOMPUTE_SELECTIVE;
	assert_rel(capsim_activation_bytes_per_layer(s), 34 * s_ * h / t, 1e-12);
	/* unfused attention keeps the s x s terms, 5 a s^2 b / t (Korthikanti
	 * et al.'s 34 + 5as/h), until selective recomputation drops them */
	s->attention = 1;
	s->recompute = CAPSIM_RECOMPUTE_NONE;
	assert_rel(capsim_activation_bytes_per_layer(s),
		   s_ * h / t * (34 + 5.0 * 96 * s_ / h), 1e-12);
	s->recompute = CAPSIM_RECOMPUTE_SELECTIVE;
	assert_rel(capsim_activation_bytes_per_layer(s), 34 * s_ * h / t, 1e-12);
	s->attention = 0;
	/* fp32 doubles it; context parallelism divides the sequence */
	s->dtype = CAPSIM_DTYPE_FP32;
	assert_rel(capsim_activation_bytes_per_layer(s), 2 * 34 * s_ * h / t, 1e-12);
	s->dtype = CAPSIM_DTYPE_BF16;
	s->cp = 2;
	assert_rel(capsim_activation_bytes_per_layer(s), 34 * s_ / 2 * h / t, 1e-12);
	free(s);
}

/* Llama 2 70B: h 8192, 64 heads of 128, 8 KV heads, SwiGLU FFN 28672.
 * Per token, outside TP regions 10h = 81920; inside 2q + 2k + 2v + 2o + 6f =
 * 16384 + 2048 + 2048 + 16384 + 172032 = 208896; with SP all over t = 8. */
static void test_llama70b_activations(void **state)
{
	(void)state;
	const capsim_set sp[] = { { "workload.parallelism.tp", "8" },
				  { "workload.parallelism.sequence-parallel", "on" } };
	capsim_scenario *s = load("dgx-h100", 1, "llama-2-70b", 4096, 8, sp, 2);
	assert_rel(capsim_activation_bytes_per_layer(s), 4096.0 * (81920 + 208896) / 8, 1e-12);
	free(s);
}

/* An MoE layer keeps its top-k experts' activations for each token: with
 * Mixtral's SwiGLU experts (f = 14336), 6f a token for each of the k = 2;
 * a capacity factor of 1.25 pads them, 4096 x 6 x 14336 x 2 x 0.25 =
 * 176,160,768 bytes more at s 4096, b 1, TP 1. */
static void test_moe_capacity_activations(void **state)
{
	(void)state;
	capsim_scenario *s = load("dgx-h100", 1, "mixtral-8x7b", 4096, 8, NULL, 0);
	double even = capsim_activation_bytes_per_layer(s);
	s->moe_capacity_factor = 1.25;
	assert_rel(capsim_activation_bytes_per_layer(s) - even, 176160768.0, 1e-12);
	free(s);
}

/* 18 bytes a parameter without ZeRO; ZeRO-1/2/3 divide the optimizer, then
 * gradients, then weights by the data-parallel ranks. Llama 2 7B on 8 nodes,
 * TP 1, PP 1: dp = 64. */
static void test_model_states(void **state)
{
	(void)state;
	capsim_scenario *s = load("dgx-h100", 8, "llama-2-7b", 4096, 64, NULL, 0);
	capsim_memory m;
	capsim_memory_estimate(s, &m);
	double P = capsim_model_params(&s->model, 0);
	assert_rel(m.peak.params, P, 1e-12); /* one stage, no TP: everything */
	assert_rel(m.peak.weights_bytes + m.peak.grads_bytes + m.peak.optimizer_bytes,
		   18 * P, 1e-12);
	int dp = 64;
	s->zero = 1;
	capsim_memory_estimate(s, &m);
	assert_rel(m.peak.weights_bytes + m.peak.grads_bytes + m.peak.optimizer_bytes,
		   (6 + 12.0 / dp) * P, 1e-12);
	s->zero = 3;
	capsim_memory_estimate(s, &m);
	assert_rel(m.peak.weights_bytes + m.peak.grads_bytes + m.peak.optimizer_bytes,
		   18.0 / dp * P, 1e-12);
	free(s);
}

/* 1F1B: the first stage holds p micro-batches, the last one; interleaved
 * multiplies the first stage's by 1 + (p-1)/(p v); GPipe holds all m. */
static void test_pipeline_in_flight(void **state)
{
	(void)state;
	const capsim_set pp[] = { { "workload.parallelism.tp", "8" },
				  { "workload.parallelism.pp", "4" } };
	/* 4 nodes: dp = 1; 64 sequences of 1: m = 64 micro-batches */
	capsim_scenario *s = load("dgx-h100", 4, "llama-2-70b", 4096, 64, pp, 2);
	capsim_memory m;
	capsim_memory_estimate(s, &m);
	double A = capsim_activation_bytes_per_layer(s);
	assert_rel(m.first.in_flight, 4, 0);
	assert_rel(m.first.activations_bytes, 4 * 20 * A, 1e-12);
	assert_rel(m.last.in_flight, 1, 0);
	s->schedule = CAPSIM_SCHED_1F1B_INTERLEAVED;
	s->virtual_stages = 5;
	capsim_memory_estimate(s, &m);
	assert_rel(m.first.in_flight, 4 * (1 + 3.0 / 20), 1e-12);
	/* the last stage warms up (v - 1) p = 16 chunks and holds one more:
	 * 17 of its 5 chunks, 3.4 micro-batches (Megatron's warm-up count) */
	assert_rel(m.last.in_flight, 17.0 / 5.0, 1e-12);
	/* never more than the step's m v chunks: 2 micro-batches */
	s->global_batch = 2;
	capsim_memory_estimate(s, &m);
	assert_rel(m.first.in_flight, 2, 1e-12);
	assert_rel(m.last.in_flight, 2, 1e-12);
	s->global_batch = 64;
	s->schedule = CAPSIM_SCHED_GPIPE;
	capsim_memory_estimate(s, &m);
	assert_rel(m.first.in_flight, 64, 0);
	free(s);
}

/* Uneven pipeline stages: Llama 3.1 405B's 126 layers on 16 stages, one
 * layer fewer on the first and the last (7 + 14 x 8 + 7) as Meta describes
 * for its 405B run. */
static void test_uneven_stages(void **state)
{
	(void)state;
	const capsim_set pp[] = { { "workload.parallelism.tp", "8" },
				  { "workload.parallelism.pp", "16" },
				  { "workload.parallelism.first-stage-layers", "7" },
				  { "workload.parallelism.last-stage-layers", "7" } };
	capsim_scenario *s = load("dgx-h100", 16, "llama-3.1-405b", 8192, 16, pp, 4);
	int sum = 0, first, expect = 0;
	for (int k = 0; k < 16; k++) {
		int n = capsim_stage_layers(s, k, &first);
		assert_int_equal(first, expect);
		assert_int_equal(n, k == 0 || k == 15 ? 7 : 8);
		expect += n;
		sum += n;
	}
	assert_int_equal(sum, 126);
	capsim_memory m;
	capsim_memory_estimate(s, &m);
	assert_int_equal(m.first.layers, 7);
	assert_int_equal(m.last.layers, 7);
	free(s);
}

/* A 70B model's 18 bytes a parameter do not fit 8 H100s without ZeRO; the
 * estimate says so instead of failing. */
/* Learned positions: a job past the model's max-seq-len (1024 for GPT-2)
 * holds a table of seq-len rows, h = 768 wide; RoPE has no table at all. */
static void test_position_rows(void **state)
{
	(void)state;
	capsim_memory at, past;
	capsim_scenario *s = load("dgx-h100", 1, "gpt2-124m", 1024, 8, NULL, 0);
	assert_false(capsim_seq_past_positions(s));
	assert_rel(capsim_position_rows(s), 1024, 0);
	capsim_memory_estimate(s, &at);
	free(s);
	s = load("dgx-h100", 1, "gpt2-124m", 4096, 8, NULL, 0);
	assert_true(capsim_seq_past_positions(s));
	assert_rel(capsim_position_rows(s), 4096, 0);
	capsim_memory_estimate(s, &past);
	assert_rel(past.peak.params - at.peak.params, (4096.0 - 1024.0) * 768.0, 1e-9);
	free(s);
	s = load("dgx-h100", 1, "llama-2-7b", 8192, 8, NULL, 0);
	assert_true(capsim_seq_past_positions(s)); /* max-seq-len 4096 */
	assert_rel(capsim_position_rows(s), 0, 0);
	capsim_memory_estimate(s, &past);
	assert_rel(past.peak.params, capsim_model_params(&s->model, 0), 1e-12);
	free(s);
}

/* The frameworks' bytes a parameter: Megatron 2 + 4 + 4 + 8 = 18, PyTorch
 * AMP 4 + 4 + 8 = 16 with a 2-byte cast held to the backward, DeepSpeed
 * 2 + 2 + 4 + 8 = 16 (the ZeRO paper), each field overridable. */
static void test_recipes(void **state)
{
	(void)state;
	static const struct {
		const char *fw, *field, *value;
		double p, g, m, st, cast;
		int persistent;
	} want[] = {
		{ "megatron", NULL, NULL, 2, 4, 4, 8, 0, 1 },
		{ "megatron", "workload.precision.grads", "bf16", 2, 2, 4, 8, 0, 1 },
		{ "torch-amp", NULL, NULL, 4, 4, 0, 8, 2, 0 },
		{ "torch-amp", "workload.precision.params", "bf16", 2, 4, 0, 8, 0, 0 },
		{ "fsdp2", NULL, NULL, 4, 4, 0, 8, 0, 0 },
		{ "deepspeed", NULL, NULL, 2, 2, 4, 8, 0, 1 },
		{ "deepspeed", "workload.precision.states", "bf16", 2, 2, 4, 4, 0, 1 },
		{ "deepspeed", "workload.precision.master", "none", 2, 2, 0, 8, 0, 1 },
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		capsim_set sets[2] = { { "workload.framework", want[i].fw },
				       { want[i].field, want[i].value } };
		capsim_scenario *s = load("dgx-h100", 1, "llama-2-7b", 4096, 8, sets,
					  want[i].field ? 2 : 1);
		capsim_mem_recipe r;
		capsim_memory_recipe(s, &r);
		assert_rel(r.param_bytes, want[i].p, 0);
		assert_rel(r.grad_bytes, want[i].g, 0);
		assert_rel(r.master_bytes, want[i].m, 0);
		assert_rel(r.state_bytes, want[i].st, 0);
		assert_rel(r.cast_bytes, want[i].cast, 0);
		assert_int_equal(r.grads_persistent, want[i].persistent);
		free(s);
	}
}

/* capsim's memory estimate of one memory_probe.py record (a torch-memory
 * line) on one GPU of `node` (gpt2-124m-1xh200.xml cut to it, PyTorch AMP;
 * NULL: the scenario's H200). The probe's GPT is megatron-7.5b at GPT-3
 * 6.7B's 32 layers, FFN 4h and GPT-2's vocabulary, as the probe builds it;
 * its Llama 3 8B is the catalog's Llama 3.1 8B. */
static capsim_memory probe_memory(json_t *o, const char *node)
{
	const char *model = json_string_value(json_object_get(o, "model"));
	char ref[32], l_s[16], seq_s[16], mb_s[16], rc_s[16];
	snprintf(ref, sizeof ref, "%s", !strcmp(model, "llama-3-8b") ? "llama-3.1-8b" :
					 !strcmp(model, "gpt3-6.7b") ? "megatron-7.5b" : model);
	snprintf(l_s, sizeof l_s, "%d", (int)json_integer_value(json_object_get(o, "layers")));
	snprintf(seq_s, sizeof seq_s, "%d", (int)json_integer_value(json_object_get(o, "seq")));
	snprintf(mb_s, sizeof mb_s, "%d", (int)json_integer_value(json_object_get(o, "micro_batch")));
	snprintf(rc_s, sizeof rc_s, "%s", json_string_value(json_object_get(o, "recompute")));
	capsim_set sets[10] = {
		{ "workload.framework", "torch-amp" },
		{ "workload.model.ref", ref },
		{ "workload.model.architecture.layers", l_s },
		{ "workload.seq-len", seq_s },
		{ "workload.micro-batch", mb_s },
		{ "workload.global-batch", mb_s },
		{ "workload.parallelism.recompute", rc_s },
	};
	size_t n = 7;
	if (!strcmp(ref, "megatron-7.5b")) {
		sets[n++] = (capsim_set){ "workload.model.architecture.vocab", "50257" };
		sets[n++] = (capsim_set){ "workload.model.architecture.ffn", "16384" };
	}
	if (node)
		sets[n++] = (capsim_set){ "cluster.node.ref", node };
	capsim_scenario *s = malloc(sizeof *s);
	capsim_diags d = { 0 };
	int lrc = capsim_scenario_load(CAPSIM_SOURCE_DIR "/scenarios/gpt2-124m-1xh200.xml", cat,
				       sets, n, s, &d);
	capsim_diags_print(&d, stderr);
	capsim_diags_free(&d);
	assert_int_equal(lrc, 0);
	capsim_memory m;
	capsim_memory_estimate(s, &m);
	free(s);
	return m;
}

/* One measured peak for the error model (tests/unit/residuals.h): PyTorch
 * AMP on one GPU, what the allocator counts against capsim's allocated
 * bytes. */
static void record_memory(const char *table, const char *row, const char *gpu,
			  double predicted, double measured)
{
	testutil_residual_record(&(testutil_residual){
		.table = table, .row = row, .family = "memory", .quantity = "memory",
		.gpu = gpu, .gen = testutil_gpu_gen(gpu), .stack = "torch-eager",
		.profile = "datasheet", .gpus = 1, .predicted = predicted,
		.measured = measured });
}

/* Peak memory under PyTorch AMP against torch.cuda.max_memory_allocated on
 * the measured H200 (calibrate/results/h200-2026-12-03-memory*.jsonl, made by
 * calibrate/torch/memory_probe.py): Llama 3 8B and Llama 2 7B cut to 2 and
 * 4 layers and whole, a whole 6.7B GPT (32 layers) and GPT-2 355M,
 * micro-batch 1 to 16, sequence 1024 to 8192, with and without full
 * recomputation: 35 points. The measurement is the allocator's, so it is
 * held against capsim's allocated_bytes (the model's bytes, without the
 * context, NCCL buffers and allocator slack beside them); with those, every
 * point that trained must not be "does not fit".
 * Tolerance: 10% per point (the memory model's target), set before comparing. A
 * point known to be outside stays listed here with its diagnosis, and the
 * test fails if it comes inside (update the list) or if any other leaves. */
static const char *const h200_known_outside[] = {
	NULL, /* none: Llama's activations under autocast are counted as autograd saves them */
};

static void test_h200_torch_amp(void **state)
{
	(void)state;
	static const char *const files[] = {
		CAPSIM_SOURCE_DIR "/calibrate/results/h200-2026-12-03-memory.jsonl",
		CAPSIM_SOURCE_DIR "/calibrate/results/h200-2026-12-03-memory-b.jsonl",
		CAPSIM_SOURCE_DIR "/calibrate/results/h200-2026-12-03-memory-c.jsonl",
	};
	char line[8192];
	int points = 0, inside = 0;
	double worst = 0, over = 0;
	for (size_t fi = 0; fi < sizeof files / sizeof files[0]; fi++) {
	FILE *f = fopen(files[fi], "r");
	assert_non_null(f);
	while (fgets(line, sizeof line, f)) {
		json_t *o = json_loads(line, 0, NULL);
		assert_non_null(o);
		const char *kind = json_string_value(json_object_get(o, "kind"));
		if (strcmp(kind, "torch-memory") != 0 || json_object_get(o, "error")) {
			json_decref(o);
			continue;
		}
		const char *model = json_string_value(json_object_get(o, "model"));
		const char *rc = json_string_value(json_object_get(o, "recompute"));
		int layers = (int)json_integer_value(json_object_get(o, "layers"));
		int seq = (int)json_integer_value(json_object_get(o, "seq"));
		int mb = (int)json_integer_value(json_object_get(o, "micro_batch"));
		double meas = json_number_value(json_object_get(o, "peak_allocated_bytes"));
		char id[96];
		snprintf(id, sizeof id, "%s/%d/%d/%d/%s", model, layers, seq, mb, rc);
		capsim_memory m = probe_memory(o, NULL);
		json_decref(o);
		/* every point ran: with what lives beside the model it must not
		 * be refused */
		if (m.verdict == CAPSIM_MEM_NO)
			fail_msg("%s ran on the H200, and capsim says it does not fit", id);
		assert_rel(m.peak.context_bytes, 787283968.0, 0);
		assert_rel(m.peak.nccl_bytes, 0.0, 0); /* one GPU: no communicator */
		double err = m.peak.allocated_bytes / meas - 1.0;
		record_memory("h200-memory-probe", id, "h200", m.peak.allocated_bytes, meas);
		int known = 0;
		for (size_t i = 0; i < sizeof h200_known_outside / sizeof h200_known_outside[0]; i++)
			known |= h200_known_outside[i] && !strcmp(id, h200_known_outside[i]);
		print_message("h200 %-28s measured %7.2f GiB, capsim %7.2f GiB, %+6.1f%%, %s%s\n",
			      id, meas / 1073741824.0, m.peak.allocated_bytes / 1073741824.0,
			      100 * err, capsim_mem_verdict_names[m.verdict],
			      known ? " (known outside)" : "");
		if (known) {
			if (fabs(err) <= 0.10)
				fail_msg("%s is inside 10%% now: take it off h200_known_outside", id);
		} else {
			if (fabs(err) > 0.10)
				fail_msg("%s: capsim %.4g B against %.4g B measured (%+.1f%%)", id,
					 m.peak.allocated_bytes, meas, 100 * err);
			inside++;
			if (fabs(err) > worst)
				worst = fabs(err);
			/* the verdict's band (docs/model.md, "The verdict") holds the
			 * measured error: the true peak up to u above capsim's
			 * and o below it */
			if (meas / m.peak.allocated_bytes - 1 > m.band_under ||
			    1 - meas / m.peak.allocated_bytes > m.band_over)
				fail_msg("%s: %+.2f%% leaves the torch-amp band (+%.1f%%, -%.1f%%)", id,
					 100 * (meas / m.peak.allocated_bytes - 1), 100 * m.band_under,
					 100 * m.band_over);
			if (err > over)
				over = err;
		}
		points++;
	}
	fclose(f);
	}
	print_message("h200: %d of %d points within 10%% (worst %.1f%%; capsim at most %.2f%% "
		      "above the measurement)\n", inside, points, 100 * worst, 100 * over);
	assert_int_equal(points, 35);
}

/* One memory_probe.py --edge record: capsim's estimate of it on one GPU of
 * `node` (gpt2-124m-1xh200.xml cut to it, PyTorch AMP), printed beside the
 * measured; *ran: it trained (else it ran out of memory), *meas: its peak
 * allocated bytes (at the failure, for one that did not train). */
static capsim_memory edge_point(json_t *o, const char *node, int *ran, double *meas)
{
	*ran = json_object_get(o, "error") == NULL;
	*meas = json_number_value(json_object_get(o, "peak_allocated_bytes"));
	capsim_memory m = probe_memory(o, node);
	print_message("%s x%d seq %d mb %d %s on %s: %s, capsim %.2f GiB allocated (%.1f GB of "
		      "%.1f in all), measured %.2f GiB; %s\n",
		      json_string_value(json_object_get(o, "model")),
		      (int)json_integer_value(json_object_get(o, "layers")),
		      (int)json_integer_value(json_object_get(o, "seq")),
		      (int)json_integer_value(json_object_get(o, "micro_batch")),
		      json_string_value(json_object_get(o, "recompute")), node,
		      *ran ? "trained" : "out of memory", m.peak.allocated_bytes / 1073741824.0,
		      m.peak.total_bytes / 1e9, m.capacity_bytes / 1e9, *meas / 1073741824.0,
		      capsim_mem_verdict_names[m.verdict]);
	return m;
}

/* The runs of a memory_probe.py --edge file on `node`, against what was set
 * before comparing: each that trained is not "does not fit" and its
 * allocated peak within 10% (the memory model's target); each that ran out
 * of memory "does not fit". */
static void edge_file(const char *file, const char *node, int want_trained, int want_oom)
{
	FILE *f = fopen(file, "r");
	assert_non_null(f);
	char line[8192];
	int trained = 0, oom = 0;
	while (fgets(line, sizeof line, f)) {
		json_t *o = json_loads(line, 0, NULL);
		assert_non_null(o);
		if (strcmp(json_string_value(json_object_get(o, "kind")), "torch-memory") != 0) {
			json_decref(o);
			continue;
		}
		int ran;
		double meas;
		char id[96];
		snprintf(id, sizeof id, "%s/%d/%d/%d/%s",
			 json_string_value(json_object_get(o, "model")),
			 (int)json_integer_value(json_object_get(o, "layers")),
			 (int)json_integer_value(json_object_get(o, "seq")),
			 (int)json_integer_value(json_object_get(o, "micro_batch")),
			 json_string_value(json_object_get(o, "recompute")));
		capsim_memory m = edge_point(o, node, &ran, &meas);
		json_decref(o);
		if (ran) {
			record_memory(strstr(node, "h100") ? "h100-memory-edge" : "h200-memory-edge",
				      id, node, m.peak.allocated_bytes, meas);
			trained++;
			assert_int_not_equal(m.verdict, CAPSIM_MEM_NO);
			assert_rel(m.peak.allocated_bytes, meas, 0.10);
		} else {
			oom++;
			assert_int_equal(m.verdict, CAPSIM_MEM_NO);
		}
	}
	fclose(f);
	assert_int_equal(trained, want_trained);
	assert_int_equal(oom, want_oom);
}

/* At and past the edge of an 80 GB H100 (calibrate/results/
 * h100-2026-12-05b-memory-edge.jsonl): Llama 2 7B cut to 16, 18 and 20
 * layers at 4096 tokens, 16 layers at micro-batch 2, which trained (the last
 * two within 2.1 and 2.8 GB of the device), and the whole model with full
 * recomputation, which ran out of memory. */
static void test_h100_edge(void **state)
{
	(void)state;
	edge_file(CAPSIM_SOURCE_DIR "/calibrate/results/h100-2026-12-05b-memory-edge.jsonl",
		  "dgx-h100", 4, 1);
}

/* Past the edge of a 141 GB H200 (calibrate/results/
 * h200-2026-12-05-memory-edge.jsonl): the 6.7B GPT at micro-batch 5 and 6,
 * the whole Llama 2 7B at 4096 x 2 and 8192 x 1, all out of memory (capsim
 * 1.4% to 9% over the capacity), and the whole Llama 3 8B at 8192 tokens with
 * full recomputation, which trained. */
static void test_h200_edge(void **state)
{
	(void)state;
	edge_file(CAPSIM_SOURCE_DIR "/calibrate/results/h200-2026-12-05-memory-edge.jsonl",
		  "dgx-h200", 1, 4);
}

/* The same for calibrate/torch/gpt2_step.py's GPT-2 loop on the H200 (run c,
 * calibrate/results/h200-2026-12-02-gpt2-step-c.jsonl): 124M and 355M, 1024
 * tokens, micro-batch 1 to 32, PyTorch AMP; 10% per point. */
static void test_h200_gpt2_loop(void **state)
{
	(void)state;
	FILE *f = fopen(CAPSIM_SOURCE_DIR "/calibrate/results/h200-2026-12-02-gpt2-step-c.jsonl",
			"r");
	assert_non_null(f);
	static char line[1 << 16];
	int points = 0;
	while (fgets(line, sizeof line, f)) {
		json_t *o = json_loads(line, 0, NULL);
		assert_non_null(o);
		const char *kind = json_string_value(json_object_get(o, "kind"));
		if (strcmp(kind, "torch-step") != 0 || json_object_get(o, "error")) {
			json_decref(o);
			continue;
		}
		char file[256], mb[16];
		snprintf(file, sizeof file, "%s/scenarios/%s-1xh200.xml", CAPSIM_SOURCE_DIR,
			 json_string_value(json_object_get(o, "model")));
		snprintf(mb, sizeof mb, "%d", (int)json_integer_value(json_object_get(o, "micro_batch")));
		double meas = json_number_value(json_object_get(o, "peak_allocated_bytes"));
		json_decref(o);
		const capsim_set sets[] = { { "workload.framework", "torch-amp" },
					    { "workload.micro-batch", mb },
					    { "workload.global-batch", mb } };
		capsim_scenario *s = malloc(sizeof *s);
		capsim_diags d = { 0 };
		assert_int_equal(capsim_scenario_load(file, cat, sets, 3, s, &d), 0);
		capsim_diags_free(&d);
		capsim_memory m;
		capsim_memory_estimate(s, &m);
		free(s);
		double err = m.peak.allocated_bytes / meas - 1.0;
		char id[64];
		snprintf(id, sizeof id, "%s-mb%s", strrchr(file, '/') + 1, mb);
		record_memory("h200-gpt2-loop-memory", id, "h200", m.peak.allocated_bytes, meas);
		print_message("h200 gpt2 %s mb %s: measured %.2f GB, capsim %.2f GB, %+.1f%%\n", file,
			      mb, meas / 1e9, m.peak.allocated_bytes / 1e9, 100 * err);
		if (fabs(err) > 0.10)
			fail_msg("%s at micro-batch %s: %+.1f%%", file, mb, 100 * err);
		points++;
	}
	fclose(f);
	assert_int_equal(points, 9);
}

/* LoRA on Llama 2 7B, rank 16, every linear layer of the blocks: 39,976,960
 * trained parameters, the count PEFT's print_trainable_parameters gives for
 * this model and config (q, k, v, o, gate, up, down at r = 16: per layer
 * 16 x (4 x 8192 + 3 x 15104)). The frozen base keeps 2 bytes a parameter;
 * the adapters get Megatron's 18. */
static void test_lora(void **state)
{
	(void)state;
	const capsim_set lora[] = { { "workload.finetune.method", "lora" } };
	capsim_scenario *s = load("dgx-h100", 1, "llama-2-7b", 4096, 8, lora, 1);
	double adapters = 0.0;
	for (int l = 0; l < s->model.layers; l++)
		adapters += capsim_lora_layer_params(s, l);
	assert_rel(adapters, 39976960.0, 0);
	capsim_memory m;
	capsim_memory_estimate(s, &m);
	assert_rel(m.peak.trained_params, adapters, 1e-12);
	double P = m.peak.params;
	assert_rel(m.peak.weights_bytes, 2.0 * P + 2.0 * adapters, 1e-12);
	assert_rel(m.peak.grads_bytes, 4.0 * adapters, 1e-12);
	assert_rel(m.peak.optimizer_bytes, 12.0 * adapters, 1e-12);
	free(s);
	/* attention only, rank 8: 8 x 32768 a layer */
	const capsim_set attn[] = { { "workload.finetune.method", "lora" },
				    { "workload.finetune.targets", "attention" },
				    { "workload.finetune.rank", "8" } };
	s = load("dgx-h100", 1, "llama-2-7b", 4096, 8, attn, 3);
	assert_rel(capsim_lora_layer_params(s, 0), 8.0 * 32768.0, 0);
	free(s);
}

static void test_fits(void **state)
{
	(void)state;
	const capsim_set tp[] = { { "workload.parallelism.tp", "8" } };
	capsim_scenario *s = load("dgx-h100", 1, "llama-2-70b", 4096, 8, tp, 1);
	capsim_memory m;
	capsim_memory_estimate(s, &m);
	assert_false(m.fits);
	assert_true(m.peak.total_bytes > 150e9);
	/* what CUDA gives a process (hardware/gpus.xml's usable-memory: a
	 * deviceQuery of H100 80GB HBM3), not the datasheet's "80 GB" */
	assert_rel(m.capacity_bytes, 85045477376.0, 0);
	free(s);
	/* a GPU without usable-memory falls back to its capacity; --set overrides */
	const capsim_set a100[] = { { "cluster.gpu.ref", "a100-sxm4-80gb" } };
	s = load("dgx-h100", 1, "gpt2-124m", 1024, 8, a100, 1);
	capsim_memory_estimate(s, &m);
	assert_rel(m.capacity_bytes, 80e9, 0);
	free(s);
	const capsim_set usable[] = { { "cluster.gpu.usable-memory.bytes", "79 GiB" } };
	s = load("dgx-h100", 1, "gpt2-124m", 1024, 8, usable, 1);
	capsim_memory_estimate(s, &m);
	assert_rel(m.capacity_bytes, 79.0 * 1073741824.0, 0);
	free(s);
	const capsim_set fit[] = { { "workload.parallelism.tp", "8" },
				   { "workload.parallelism.pp", "4" },
				   { "workload.parallelism.zero", "1" },
				   { "workload.parallelism.sequence-parallel", "on" },
				   { "workload.parallelism.recompute", "full" } };
	s = load("dgx-h100", 8, "llama-2-70b", 4096, 64, fit, 5);
	capsim_memory_estimate(s, &m);
	assert_true(m.fits);
	free(s);
}

/* What lives beside the model, by hand. Llama 2 70B at TP 8, PP 4 on 256
 * H100s (dp 8): three communicators (tensor, pipeline, data), each 16
 * channels x 2 ring peers x 4 MiB = 128 MiB; the CUDA context measured on
 * the H200 (787,283,968 bytes) and Transformer Engine's 4 x 32 MiB cuBLAS
 * workspaces; the allocator's slack 1.4% of the allocated peak. A
 * memory-reserve given replaces all three. */
static void test_outside_the_model(void **state)
{
	(void)state;
	const capsim_set sets[] = { { "workload.parallelism.tp", "8" },
				    { "workload.parallelism.pp", "4" },
				    { "workload.parallelism.zero", "1" } };
	capsim_scenario *s = load("dgx-h100", 32, "llama-2-70b", 4096, 256, sets, 3);
	assert_int_equal(s->dp, 8);
	capsim_memory m;
	capsim_memory_estimate(s, &m);
	const double MiB = 1048576.0;
	assert_rel(m.peak.nccl_bytes, 3 * 16 * 2 * 4 * MiB, 1e-12);
	assert_rel(capsim_memory_nccl_bytes(s), 3 * 16 * 2 * 4 * MiB, 1e-12);
	assert_rel(m.peak.context_bytes, 787283968.0 + 4 * 32 * MiB, 1e-12);
	assert_rel(m.peak.slack_bytes, 0.014 * m.peak.allocated_bytes, 1e-12);
	assert_rel(m.peak.reserve_bytes,
		   m.peak.context_bytes + m.peak.nccl_bytes + m.peak.slack_bytes, 1e-12);
	assert_rel(m.peak.total_bytes, m.peak.allocated_bytes + m.peak.reserve_bytes, 1e-12);
	assert_rel(m.margin_bytes, m.capacity_bytes - m.peak.total_bytes, 1e-12);
	double allocated = m.peak.allocated_bytes;
	free(s);
	/* each part overridable; context parallelism adds its own and the
	 * data-and-context group; PyTorch's recipes keep no TE workspaces */
	const capsim_set more[] = { { "workload.parallelism.tp", "8" },
				    { "workload.parallelism.pp", "4" },
				    { "workload.parallelism.zero", "1" },
				    { "workload.nccl-channels", "8" },
				    { "workload.nccl-buffer", "2 MiB" },
				    { "workload.allocator-slack", "5%" },
				    { "workload.memory-context", "1 GiB" } };
	s = load("dgx-h100", 32, "llama-2-70b", 4096, 256, more, 7);
	capsim_memory_estimate(s, &m);
	assert_rel(m.peak.nccl_bytes, 3 * 8 * 2 * 2 * MiB, 1e-12);
	assert_rel(m.peak.context_bytes, 1024 * MiB, 1e-12);
	assert_rel(m.peak.allocated_bytes, allocated, 1e-12);
	assert_rel(m.peak.slack_bytes, 0.05 * allocated, 1e-12);
	s->cp = 2;
	s->dp = 4;
	assert_rel(capsim_memory_nccl_bytes(s), 4 * 8 * 2 * 2 * MiB, 1e-12);
	free(s);
	const capsim_set torch[] = { { "workload.framework", "torch-amp" } };
	s = load("dgx-h100", 1, "gpt2-124m", 1024, 8, torch, 1);
	capsim_memory_estimate(s, &m);
	assert_rel(m.peak.context_bytes, 787283968.0, 1e-12);
	assert_rel(m.peak.nccl_bytes, 1 * 16 * 2 * 4 * MiB, 1e-12); /* dp 8 */
	free(s);
	const capsim_set given[] = { { "workload.memory-reserve", "3 GiB" } };
	s = load("dgx-h100", 1, "gpt2-124m", 1024, 8, given, 1);
	capsim_memory_estimate(s, &m);
	assert_rel(m.peak.reserve_bytes, 3 * 1024 * MiB, 1e-12);
	assert_rel(m.peak.context_bytes + m.peak.nccl_bytes + m.peak.slack_bytes, 0.0, 0);
	assert_rel(m.peak.total_bytes, m.peak.allocated_bytes + 3 * 1024 * MiB, 1e-12);
	free(s);
}

/* The three words at their edges, with the error of 10% on the under side
 * (Megatron's recipe, unmeasured) and 5% (PyTorch AMP's, measured): an
 * estimate over the capacity does not fit, whatever the error (every
 * measured run out of memory was estimated over it; every run that trained,
 * under). */
static void test_verdict(void **state)
{
	(void)state;
	double C = 85045477376.0;
	assert_int_equal(capsim_memory_verdict(0.909 * C, C, 0.10), CAPSIM_MEM_FITS);
	assert_int_equal(capsim_memory_verdict(0.92 * C, C, 0.10), CAPSIM_MEM_CLOSE);
	assert_int_equal(capsim_memory_verdict(1.0 * C, C, 0.10), CAPSIM_MEM_CLOSE);
	assert_int_equal(capsim_memory_verdict(1.001 * C, C, 0.10), CAPSIM_MEM_NO);
	assert_int_equal(capsim_memory_verdict(0.95 * C, C, 0.05), CAPSIM_MEM_FITS);
	assert_int_equal(capsim_memory_verdict(0.96 * C, C, 0.05), CAPSIM_MEM_CLOSE);
	assert_int_equal(capsim_memory_verdict(1.014 * C, C, 0.05), CAPSIM_MEM_NO);
	assert_string_equal(capsim_mem_verdict_names[CAPSIM_MEM_CLOSE], "close");
	assert_string_equal(capsim_mem_verdict_names[CAPSIM_MEM_NO], "does not fit");
	/* the estimate's own: fits means not refused, close included */
	const capsim_set tp[] = { { "workload.parallelism.tp", "8" } };
	capsim_scenario *s = load("dgx-h100", 1, "llama-2-70b", 4096, 8, tp, 1);
	capsim_memory m;
	capsim_memory_estimate(s, &m);
	assert_int_equal(m.verdict, CAPSIM_MEM_NO);
	assert_false(m.fits);
	assert_rel(m.band_under, 0.10, 0);
	assert_rel(m.band_over, 0.10, 0);
	s->gpu.mem_usable_bytes = 1.05 * m.peak.total_bytes; /* 95% of it */
	capsim_memory_estimate(s, &m);
	assert_rel(m.margin_bytes, m.capacity_bytes - m.capacity_bytes / 1.05, 1e-12);
	assert_int_equal(m.verdict, CAPSIM_MEM_CLOSE);
	assert_true(m.fits);
	free(s);
}

/* Transformer Engine FP8 (Megatron): each GEMM weight's FP8 copy and its
 * transpose, 2 bytes a GEMM parameter on the GPU, and the four linears'
 * inputs saved as FP8. Llama 2 70B at TP 8 with SP: outside 10h - 2h =
 * 65536, inside 208896 - (o + f) = 208896 - 8192 - 28672 = 172032 bytes a
 * token at 16 bits, over t. PyTorch's recipes keep 16-bit copies. */
static void test_fp8_te(void **state)
{
	(void)state;
	const capsim_set sp[] = { { "workload.parallelism.tp", "8" },
				  { "workload.parallelism.sequence-parallel", "on" },
				  { "workload.dtype", "fp8" } };
	capsim_scenario *s = load("dgx-h100", 1, "llama-2-70b", 4096, 8, sp, 3);
	assert_rel(capsim_activation_bytes_per_layer(s), 4096.0 * (65536 + 172032) / 8, 1e-12);
	capsim_memory m;
	capsim_memory_estimate(s, &m);
	double gemm = 0.0;
	for (int l = 0; l < s->model.layers; l++) {
		capsim_layer_params lp;
		capsim_model_layer_params(&s->model, l, &lp);
		gemm += (lp.attention + lp.mlp + lp.shared) / 8;
	}
	assert_rel(m.peak.fp8_bytes, 2.0 * gemm, 1e-12);
	/* 64 layers of (4 x 8192^2 / 8 + 8192 x 1024 x 2 ... ) by hand: Q, O
	 * 8192 x 8192, K, V 8192 x 1024, three 8192 x 28672 */
	double per = 2 * 8192.0 * 8192 + 2 * 8192.0 * 1024 + 3 * 8192.0 * 28672;
	assert_rel(gemm, 80 * per / 8, 1e-12);
	s->framework = CAPSIM_FW_TORCH_AMP;
	capsim_memory_estimate(s, &m);
	assert_rel(m.peak.fp8_bytes, 0.0, 0);
	free(s);
}

/* FP8 primary weights (precision params="fp8", Megatron-LM's
 * --fp8-param-gather) with a 16-bit gradient buffer (grads="bf16"), as
 * Megatron-Bridge's FP8 recipes run: the GEMM weights are kept once, in FP8
 * with their transposes on H100 (2 bytes a GEMM parameter), with no 16-bit
 * copy; the embedding, norms and LM head stay 16-bit; the gradients are
 * 2 bytes a parameter, the master and moments unchanged. Llama 2 70B at
 * TP 8: weights + gradients + FP8 copies go from 2 + 4 + 2 (gemm) bytes a
 * parameter to 2 (the rest) + 2 + 2 (gemm). */
static void test_fp8_params(void **state)
{
	(void)state;
	const capsim_set sp[] = { { "workload.parallelism.tp", "8" },
				  { "workload.parallelism.sequence-parallel", "on" },
				  { "workload.dtype", "fp8" } };
	capsim_scenario *s = load("dgx-h100", 4, "llama-2-70b", 4096, 8, sp, 3);
	assert_int_equal(s->dp, 4);
	capsim_memory before, m;
	capsim_memory_estimate(s, &before);
	s->prec_params = CAPSIM_PREC_PARAMS_FP8;
	s->prec_grads = 2; /* bf16 */
	capsim_memory_estimate(s, &m);
	double params = m.peak.params, gemm = 0.0;
	for (int l = 0; l < s->model.layers; l++) {
		capsim_layer_params lp;
		capsim_model_layer_params(&s->model, l, &lp);
		gemm += (lp.attention + lp.mlp + lp.shared) / 8;
	}
	assert_rel(params, before.peak.params, 1e-12);
	assert_rel(m.peak.weights_bytes, 2.0 * (params - gemm), 1e-12);
	assert_rel(m.peak.fp8_bytes, 2.0 * gemm, 1e-12);
	assert_rel(m.peak.grads_bytes, 2.0 * params, 1e-12);
	assert_rel(m.peak.optimizer_bytes, before.peak.optimizer_bytes, 1e-12);
	/* activations are the FP8 linears' either way */
	assert_rel(m.peak.activations_bytes, before.peak.activations_bytes, 1e-12);
	assert_rel(before.peak.weights_bytes + before.peak.grads_bytes + before.peak.fp8_bytes -
			   (m.peak.weights_bytes + m.peak.grads_bytes + m.peak.fp8_bytes),
		   2.0 * gemm + 2.0 * params, 1e-12);
	/* ZeRO-3 shards the FP8 weights as it shards the weights */
	s->zero = 3;
	capsim_memory_estimate(s, &m);
	assert_rel(m.peak.fp8_bytes, 2.0 * gemm / 4, 1e-12);
	free(s);
}

/* Blackwell's FP8 GEMMs take any operand layout (the catalog's fp8 layouts
 * "any"): Transformer Engine keeps one FP8 copy of each GEMM weight, 1 byte
 * a parameter, where Hopper keeps its transpose too (2); as primary weights
 * the same. Llama 2 70B at TP 8 on a DGX B200. */
static void test_fp8_layouts(void **state)
{
	(void)state;
	const capsim_set sp[] = { { "workload.parallelism.tp", "8" },
				  { "workload.parallelism.sequence-parallel", "on" },
				  { "workload.dtype", "fp8" } };
	capsim_scenario *s = load("dgx-b200", 1, "llama-2-70b", 4096, 8, sp, 3);
	assert_int_equal(s->gpu.fp8_layouts, CAPSIM_FP8_LAYOUTS_ANY);
	double gemm = 0.0;
	for (int l = 0; l < s->model.layers; l++) {
		capsim_layer_params lp;
		capsim_model_layer_params(&s->model, l, &lp);
		gemm += (lp.attention + lp.mlp + lp.shared) / 8;
	}
	capsim_memory m;
	capsim_memory_estimate(s, &m);
	assert_rel(m.peak.fp8_bytes, gemm, 1e-12);
	s->prec_params = CAPSIM_PREC_PARAMS_FP8;
	capsim_memory_estimate(s, &m);
	assert_rel(m.peak.fp8_bytes, gemm, 1e-12);
	assert_rel(m.peak.weights_bytes, 2.0 * (m.peak.params - gemm), 1e-12);
	s->gpu.fp8_layouts = CAPSIM_FP8_LAYOUTS_TN;
	capsim_memory_estimate(s, &m);
	assert_rel(m.peak.fp8_bytes, 2.0 * gemm, 1e-12);
	free(s);
	/* Hopper is TN only, and so is a GPU that does not say */
	s = load("dgx-h100", 1, "llama-2-70b", 4096, 8, sp, 3);
	assert_int_equal(s->gpu.fp8_layouts, CAPSIM_FP8_LAYOUTS_TN);
	free(s);
}

/* PyTorch autocast over fp32 weights, Llama 3 8B (h 4096, 32 heads of 128,
 * 8 KV heads, SwiGLU f 14336), as autograd saves it: outside 4h + 6h + 4h +
 * 4h = 73728, inside 2q + 2k + 2v + 4o + 8f = 8192 + 2048 + 2048 + 16384 +
 * 114688 = 143360, 53h a token in all (Korthikanti's count is 36h); full
 * recomputation keeps the fp32 residual, 4h. GPT-2 (fused c_attn and c_fc,
 * GELU): 4h + 2h + 4h + 2h + 2q + 2k + 2v + 4o + 4f = 38h. */
static void test_autocast_activations(void **state)
{
	(void)state;
	const capsim_set torch[] = { { "workload.framework", "torch-amp" } };
	capsim_scenario *s = load("dgx-h100", 1, "llama-3.1-8b", 4096, 8, torch, 1);
	double h = 4096;
	assert_rel(capsim_activation_bytes_per_layer(s), 4096.0 * (73728 + 143360), 1e-12);
	assert_rel(73728.0 + 143360, 53 * h, 1e-12);
	s->recompute = CAPSIM_RECOMPUTE_FULL;
	assert_rel(capsim_activation_bytes_per_layer(s), 4096.0 * 4 * h, 1e-12);
	free(s);
	s = load("dgx-h100", 1, "gpt2-124m", 1024, 8, torch, 1);
	assert_rel(capsim_activation_bytes_per_layer(s), 1024.0 * 38 * 768, 1e-12);
	free(s);
}

/* FSDP2 with ZeRO-3: the layer computed and the one prefetched whole in
 * 16 bits (2 x 2 bytes a layer parameter) and, in the backward, one layer's
 * gradients whole in 16 bits and in the fp32 reduce dtype (2 + 4); DeepSpeed
 * caps both. */
static void test_fsdp2_buffers(void **state)
{
	(void)state;
	const capsim_set z3[] = { { "workload.framework", "fsdp2" },
				  { "workload.parallelism.zero", "3" } };
	capsim_scenario *s = load("dgx-h100", 1, "llama-3.1-8b", 8192, 8, z3, 2);
	capsim_memory m;
	capsim_memory_estimate(s, &m);
	capsim_layer_params lp;
	capsim_model_layer_params(&s->model, 0, &lp);
	double layer = lp.attention + lp.mlp + lp.norms;
	assert_rel(m.peak.gathers_bytes, (2 * 2 + 2 + 4) * layer, 1e-12);
	/* 16 bytes a parameter, all sharded over the 8 GPUs */
	double P = capsim_model_params(&s->model, 0);
	assert_rel(m.peak.weights_bytes + m.peak.grads_bytes + m.peak.optimizer_bytes, 16 * P / 8,
		   1e-9);
	free(s);
	/* DeepSpeed's ZeRO-3 on a 5-billion-parameter layer (529.6B, h 20480):
	 * 1e9 parameters live at once and a 5e8 bucket of 16-bit gradients */
	const capsim_set ds[] = { { "workload.framework", "deepspeed" },
				  { "workload.parallelism.zero", "3" },
				  { "cluster.fabric.tiers", "3" } };
	s = load("dgx-a100", 80, "megatron-529.6b", 2048, 640, ds, 3);
	capsim_memory_estimate(s, &m);
	assert_rel(m.peak.gathers_bytes, 2 * 1e9 + 2 * 5e8, 1e-12);
	free(s);
}

/* Megatron's distributed optimizer at 512 data-parallel GPUs: 2 + 4 + 12/d
 * bytes a parameter (Megatron-LM docs, dist_optimizer.md: 6 + 12/d for bf16
 * weights with fp32 gradients); the gradient buckets are views of the one
 * fp32 buffer, so nothing else is kept. */
static void test_dist_optimizer_512(void **state)
{
	(void)state;
	const capsim_set z1[] = { { "workload.parallelism.zero", "1" },
				  { "workload.parallelism.recompute", "full" } };
	capsim_scenario *s = load("dgx-h100", 64, "llama-3.1-8b", 8192, 512, z1, 2);
	assert_int_equal(s->dp, 512);
	capsim_memory m;
	capsim_memory_estimate(s, &m);
	double P = capsim_model_params(&s->model, 0);
	assert_rel(m.peak.weights_bytes + m.peak.grads_bytes + m.peak.optimizer_bytes,
		   (6 + 12.0 / 512) * P, 1e-12);
	assert_rel(m.peak.allocated_bytes,
		   m.peak.weights_bytes + m.peak.grads_bytes + m.peak.optimizer_bytes +
			   m.peak.activations_bytes,
		   1e-12);
	assert_int_equal(m.verdict, CAPSIM_MEM_FITS);
	/* the scaling reference's one replica keeps the job's shard */
	s->optimizer_shard = 512;
	s->dp = 1;
	capsim_memory_estimate(s, &m);
	assert_rel(m.peak.optimizer_bytes, 12.0 / 512 * P, 1e-12);
	free(s);
}

/* Narayanan et al.'s SC21 Table 2 (tests/data/reference/megatron_sc21_table2.csv):
 * GPT 174.6B and 529.6B with ZeRO-3 and no model parallelism (DeepSpeed's
 * recipe, ZeRO-3 over every GPU, micro-batch 1 to 4) and with PTD-P
 * (Megatron's, TP 8 and PP 12 or 35), on DGX A100 80GB, fp16, full
 * recomputation as in the paper's Table 1 runs (tests: unit/test_step). Every
 * row trained, so none may be "does not fit" (set before the comparison);
 * the table of verdicts is printed for docs/validation.md. */
static void test_sc21_table2_trained(void **state)
{
	(void)state;
	testutil_table t;
	testutil_csv_load(CAPSIM_SOURCE_DIR "/tests/data/reference/megatron_sc21_table2.csv", &t);
	assert_int_equal(t.n_rows, 12);
	print_message("| scheme | model | GPUs | TP | PP | micro-batch | capsim peak (GB) | margin "
		      "| verdict |\n|---|---|---:|---:|---:|---:|---:|---:|---|\n");
	for (size_t i = 0; i < t.n_rows; i++) {
		int zero3 = testutil_csv_num(&t, i, "model_parallel_size") == 1;
		const char *model = testutil_csv_num(&t, i, "params_billion") < 200 ?
					    "megatron-175b" : "megatron-529.6b";
		int gpus = (int)testutil_csv_num(&t, i, "gpus");
		char tp[8], pp[8], mb[8];
		snprintf(tp, sizeof tp, "%d", (int)testutil_csv_num(&t, i, "tp"));
		snprintf(pp, sizeof pp, "%d", (int)testutil_csv_num(&t, i, "pp"));
		snprintf(mb, sizeof mb, "%d", (int)testutil_csv_num(&t, i, "micro_batch_size"));
		const capsim_set sets[] = { { "workload.framework", zero3 ? "deepspeed" : "megatron" },
					    { "workload.parallelism.zero", zero3 ? "3" : "0" },
					    { "workload.parallelism.tp", tp },
					    { "workload.parallelism.pp", pp },
					    { "workload.micro-batch", mb },
					    { "workload.dtype", "fp16" },
					    { "workload.attention", "unfused" },
					    { "workload.parallelism.recompute", "full" },
					    { "cluster.fabric.tiers", "3" } };
		capsim_scenario *s = load("dgx-a100", gpus / 8, model, 2048,
					  (int)testutil_csv_num(&t, i, "global_batch_size"), sets, 9);
		capsim_memory m;
		capsim_memory_estimate(s, &m);
		print_message("| %s | %s | %d | %s | %s | %s | %.1f | %+.1f%% | %s |\n",
			      zero3 ? "ZeRO-3" : "PTD-P", model, gpus, tp, pp, mb,
			      m.peak.total_bytes / 1e9, 100 * m.margin_bytes / m.capacity_bytes,
			      capsim_mem_verdict_names[m.verdict]);
		if (m.verdict == CAPSIM_MEM_NO)
			fail_msg("%s %s on %d GPUs trained, and capsim says it does not fit (%.1f GB "
				 "of %.1f GB)", zero3 ? "ZeRO-3" : "PTD-P", model, gpus,
				 m.peak.total_bytes / 1e9, m.capacity_bytes / 1e9);
		free(s);
	}
	testutil_csv_free(&t);
}

/* Runs that ran out of memory, from public reports
 * (tests/data/reference/memory_oom.csv): each must be "does not fit", a
 * tolerance set before the comparison. */
static void test_published_oom(void **state)
{
	(void)state;
	testutil_table t;
	testutil_csv_load(CAPSIM_SOURCE_DIR "/tests/data/reference/memory_oom.csv", &t);
	assert_true(t.n_rows >= 1);
	for (size_t i = 0; i < t.n_rows; i++) {
		const capsim_set sets[] = {
			{ "workload.framework", testutil_csv_get(&t, i, "framework") },
			{ "workload.dtype", testutil_csv_get(&t, i, "dtype") },
			{ "workload.micro-batch", testutil_csv_get(&t, i, "micro_batch") },
			{ "workload.parallelism.recompute", testutil_csv_get(&t, i, "recompute") },
			{ "cluster.node.gpus.count", testutil_csv_get(&t, i, "gpus") } };
		capsim_scenario *s = load(testutil_csv_get(&t, i, "node"), 1,
					  testutil_csv_get(&t, i, "model"),
					  (int)testutil_csv_num(&t, i, "seq_len"),
					  (int)testutil_csv_num(&t, i, "micro_batch"), sets, 5);
		capsim_memory m;
		capsim_memory_estimate(s, &m);
		print_message("oom %s on %s: capsim %.1f GB of %.1f GB, %s\n",
			      testutil_csv_get(&t, i, "model"), testutil_csv_get(&t, i, "node"),
			      m.peak.total_bytes / 1e9, m.capacity_bytes / 1e9,
			      capsim_mem_verdict_names[m.verdict]);
		if (m.verdict != CAPSIM_MEM_NO)
			fail_msg("%s ran out of memory (%s), and capsim says %s",
				 testutil_csv_get(&t, i, "model"), testutil_csv_get(&t, i, "source"),
				 capsim_mem_verdict_names[m.verdict]);
		free(s);
	}
	testutil_csv_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gpt3_activations),
		cmocka_unit_test(test_llama70b_activations),
		cmocka_unit_test(test_model_states),
		cmocka_unit_test(test_moe_capacity_activations),
		cmocka_unit_test(test_pipeline_in_flight),
		cmocka_unit_test(test_uneven_stages),
		cmocka_unit_test(test_position_rows),
		cmocka_unit_test(test_recipes),
		cmocka_unit_test(test_lora),
		cmocka_unit_test(test_h200_torch_amp),
		cmocka_unit_test(test_h100_edge),
		cmocka_unit_test(test_h200_edge),
		cmocka_unit_test(test_h200_gpt2_loop),
		cmocka_unit_test(test_fits),
		cmocka_unit_test(test_outside_the_model),
		cmocka_unit_test(test_verdict),
		cmocka_unit_test(test_fp8_te),
		cmocka_unit_test(test_fp8_params),
		cmocka_unit_test(test_fp8_layouts),
		cmocka_unit_test(test_autocast_activations),
		cmocka_unit_test(test_fsdp2_buffers),
		cmocka_unit_test(test_dist_optimizer_512),
		cmocka_unit_test(test_sc21_table2_trained),
		cmocka_unit_test(test_published_oom),
	};
	return testutil_run_group_name("memory", tests, setup, teardown);
}
