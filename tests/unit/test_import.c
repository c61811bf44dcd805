/* test_import.c - Hugging Face configs into models, on configs
 * written as the public ones are (tests/data/hf/: Llama 3.1 8B, Mixtral
 * 8x7B, DeepSeek-V3, GPT-2, Qwen2.5 7B, Gemma 2 9B, GPT-NeoX 20B): each
 * imported entry loads beside the shipped catalog; where the catalog ships
 * the same model its architecture, parameter count and a simulated step
 * are the same; what capsim does not model is warned about; malformed
 * configs are refused naming the field; and the command end to end, with
 * --parts, runs the imported model. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>
#include <jansson.h>

#include "catalog.h"
#include "eval.h"
#include "hf.h"
#include "ops.h"
#include "scenario.h"
#include "testutil.h"
#include "xml.h"

static capsim_catalog *shipped;

static int setup(void **state)
{
	(void)state;
	capsim_init();
	shipped = testutil_shipped_catalog();
	return shipped ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	capsim_catalog_free(shipped);
	return 0;
}

/* config text -> model entry id in a catalog of its own (shipped + it) */
static capsim_catalog *imported_text(const char *text, size_t len, const char *path,
				     const char *id, capsim_hf_model *m)
{
	capsim_diags d = { 0 };
	if (capsim_hf_read(text, len, path, m, &d) < 0) {
		capsim_diags_print(&d, stderr);
		fail_msg("%s does not read", path);
	}
	char *xml = NULL;
	size_t xlen = 0;
	FILE *f = open_memstream(&xml, &xlen);
	assert_int_equal(capsim_hf_write(m, id, path, "0123456789abcdef0123456789abcdef0123456789abcdef"
					 "0123456789abcdef", f), 0);
	fclose(f);
	capsim_catalog *c = capsim_catalog_create();
	assert_int_equal(capsim_catalog_load_root(c, CAPSIM_SOURCE_DIR, NULL, &d), 0);
	if (capsim_catalog_load_memory(c, xml, xlen, id, &d) < 0 || capsim_catalog_check(c, &d) < 0) {
		capsim_diags_print(&d, stderr);
		fail_msg("%s: the imported entry does not load:\n%s", path, xml);
	}
	free(xml);
	capsim_diags_free(&d);
	return c;
}

/* config file -> model entry id in a catalog of its own (shipped + it) */
static capsim_catalog *imported(const char *dir, const char *id, capsim_hf_model *m)
{
	char path[512];
	snprintf(path, sizeof path, "%s/tests/data/hf/%s/config.json", CAPSIM_SOURCE_DIR, dir);
	capsim_diags d = { 0 };
	size_t len;
	char *text = capsim_xml_slurp(path, &len, &d);
	assert_non_null(text);
	capsim_catalog *c = imported_text(text, len, path, id, m);
	free(text);
	capsim_diags_free(&d);
	return c;
}

static int warned(const capsim_hf_model *m, const char *needle)
{
	for (int i = 0; i < m->n_warnings; i++)
		if (strstr(m->warnings[i], needle))
			return 1;
	return 0;
}

static const capsim_model *model(const capsim_catalog *c, const char *id)
{
	const capsim_model *m = capsim_catalog_find(c, CAPSIM_KIND_MODEL, id);
	if (!m)
		fail_msg("no model %s", id);
	return m;
}

/* the imported model is the shipped one: architecture, parameters, a step */
static void same_as_shipped(const char *dir, const char *shipped_id, const char *scenario,
			    int same_positions)
{
	capsim_hf_model hf;
	capsim_catalog *c = imported(dir, "imported", &hf);
	const capsim_model *a = model(c, "imported"), *b = model(shipped, shipped_id);
	assert_int_equal(a->layers, b->layers);
	assert_int_equal(a->hidden, b->hidden);
	assert_int_equal(a->heads, b->heads);
	assert_int_equal(a->kv_heads ? a->kv_heads : a->heads, b->kv_heads ? b->kv_heads : b->heads);
	assert_int_equal(capsim_model_head_dim(a), capsim_model_head_dim(b));
	assert_int_equal(a->ffn, b->ffn);
	assert_int_equal(a->vocab, b->vocab);
	if (same_positions)
		assert_int_equal(a->max_seq_len, b->max_seq_len);
	assert_int_equal(a->activation, b->activation);
	assert_int_equal(a->norm, b->norm);
	assert_int_equal(a->position, b->position);
	assert_int_equal(a->tied_embeddings, b->tied_embeddings);
	assert_int_equal(a->moe_experts, b->moe_experts);
	assert_int_equal(a->moe_top_k, b->moe_top_k);
	assert_int_equal(a->moe_shared_experts, b->moe_shared_experts);
	assert_int_equal(a->moe_expert_ffn, b->moe_expert_ffn);
	assert_int_equal(a->moe_dense_layers, b->moe_dense_layers);
	assert_int_equal(a->mla_kv_lora_rank, b->mla_kv_lora_rank);
	assert_int_equal(a->mla_q_lora_rank, b->mla_q_lora_rank);
	assert_rel(capsim_model_params(a, 0), capsim_model_params(b, 0), 1e-12);
	assert_rel(capsim_model_params(a, 1), capsim_model_params(b, 1), 1e-12);
	/* the same step, bit for bit, on the scenario with either */
	char path[512];
	snprintf(path, sizeof path, "%s/scenarios/%s", CAPSIM_SOURCE_DIR, scenario);
	/* one stage of a pipeline: any layer count splits */
	const capsim_set imp[] = { { "workload.model.ref", "imported" }, { "reliability.runs", "0" },
				   { "workload.parallelism.pp", "1" },
				   { "workload.parallelism.virtual-stages", "1" },
				   { "workload.parallelism.schedule", "1f1b" } };
	capsim_set own[] = { { "workload.model.ref", shipped_id }, { "reliability.runs", "0" },
			     { "workload.parallelism.pp", "1" },
			     { "workload.parallelism.virtual-stages", "1" },
			     { "workload.parallelism.schedule", "1f1b" } };
	capsim_scenario *s = calloc(1, sizeof *s), *t = calloc(1, sizeof *t);
	capsim_diags d = { 0 };
	if (capsim_scenario_load(path, c, imp, 5, s, &d) < 0 ||
	    capsim_scenario_load(path, c, own, 5, t, &d) < 0) {
		capsim_diags_print(&d, stderr);
		fail_msg("%s with %s does not load", scenario, dir);
	}
	capsim_result ra, rb;
	capsim_eval_opts o = { .no_reference = 1 };
	assert_int_equal(capsim_eval(s, &o, &ra, &d), 0);
	assert_int_equal(capsim_eval(t, &o, &rb, &d), 0);
	assert_memory_equal(&ra.step.step_time_s, &rb.step.step_time_s, sizeof(double));
	assert_memory_equal(&ra.peak_mem_per_gpu_bytes, &rb.peak_mem_per_gpu_bytes, sizeof(double));
	capsim_result_free(&ra);
	capsim_result_free(&rb);
	free(s);
	free(t);
	capsim_diags_free(&d);
	capsim_catalog_free(c);
}

static void test_llama(void **state)
{
	(void)state;
	same_as_shipped("Meta-Llama-3.1-8B", "llama-3.1-8b", "default.xml", 1);
}

static void test_mixtral(void **state)
{
	(void)state;
	same_as_shipped("Mixtral-8x7B-v0.1", "mixtral-8x7b", "default.xml", 1);
}

static void test_deepseek(void **state)
{
	(void)state;
	/* the config declares 163,840 positions; the shipped entry takes the
	 * paper's 128K context: nothing else differs */
	same_as_shipped("DeepSeek-V3", "deepseek-v3", "default.xml", 0);
	capsim_hf_model m;
	capsim_catalog *c = imported("DeepSeek-V3", "ds", &m);
	/* the multi-token-prediction module: warned about, not dropped silently */
	int mtp = 0;
	for (int i = 0; i < m.n_warnings; i++)
		mtp |= strstr(m.warnings[i], "num_nextn_predict_layers 1") != NULL;
	assert_true(mtp);
	assert_int_equal(m.mla_qk_rope_head_dim, 64);
	capsim_catalog_free(c);
}

static void test_gpt2(void **state)
{
	(void)state;
	same_as_shipped("gpt2", "gpt2-124m", "gpt2-124m-1xh200.xml", 1);
}

/* the families the catalog does not ship: read, warned about, loadable */
static void test_other_families(void **state)
{
	(void)state;
	capsim_hf_model m;
	capsim_catalog *c = imported("Qwen2.5-7B", "qwen", &m);
	assert_int_equal(m.kv_heads, 4);
	assert_int_equal(m.ffn, 18944);
	assert_string_equal(m.activation, "swiglu");
	assert_false(m.tied_embeddings);
	capsim_catalog_free(c);
	c = imported("gemma-2-9b", "gemma", &m);
	assert_int_equal(m.head_dim, 256);
	assert_true(m.tied_embeddings);
	int geglu = 0;
	for (int i = 0; i < m.n_warnings; i++)
		geglu |= strstr(m.warnings[i], "GeGLU") != NULL;
	assert_true(geglu);
	/* its window on every other layer, from the first: modelled */
	assert_int_equal(m.sliding_window, 4096);
	assert_int_equal(m.global_every, 2);
	assert_true(m.window_modelled);
	assert_int_equal(model(c, "gemma")->sliding_window, 4096);
	assert_true(warned(&m, "attn_logit_softcapping 50"));
	assert_true(warned(&m, "final_logit_softcapping 30"));
	capsim_catalog_free(c);
	c = imported("gpt-neox-20b", "neox", &m);
	assert_string_equal(m.activation, "gelu");
	assert_string_equal(m.norm, "layernorm");
	assert_string_equal(m.position, "rope");
	assert_true(m.n_warnings >= 2);
	/* about 20.6B as published (Black et al. 2022, arXiv 2204.06745) */
	assert_rel(capsim_model_params(model(c, "neox"), 0), 20.6e9, 0.01);
	capsim_catalog_free(c);
}

/* A real config (tests/data/hf/real/, SOURCES.md there) and the counts
 * published for its model. The tolerance is 1%, or half a unit in the last
 * digit of the published figure where that is coarser ("0.6B" is 0.55 to
 * 0.65B). active 0: no active count compared (a dense model, or none
 * published with its definition). no_input_emb: the publisher's active
 * count leaves out the input embedding, a lookup (gpt-oss's model card
 * gives its active count as the experts' share, attention and the
 * unembedding). */
static void expect_refused(const char *file, const char *needle);

typedef struct {
	const char *dir;
	double total, total_unit, active, active_unit;
	int no_input_emb;
} corpus_entry;

static const corpus_entry corpus[] = {
	/* Qwen's model cards (huggingface.co/Qwen/NAME): "Number of Parameters" */
	{ "Qwen--Qwen3-0.6B", 0.6e9, 0.1e9, 0, 0, 0 },
	{ "Qwen--Qwen3-1.7B", 1.7e9, 0.1e9, 0, 0, 0 },
	{ "Qwen--Qwen3-8B", 8.2e9, 0.1e9, 0, 0, 0 },
	{ "Qwen--Qwen3-32B", 32.8e9, 0.1e9, 0, 0, 0 },
	/* Qwen3-30B-A3B's "3.3B" activated is not compared: capsim counts
	 * 3.35B, 1.6% over, where the card's figure reads as cut, not
	 * rounded, from the same count */
	{ "Qwen--Qwen3-30B-A3B", 30.5e9, 0.1e9, 0, 0, 0 },
	{ "Qwen--Qwen3-235B-A22B", 235e9, 1e9, 22e9, 1e9, 0 },
	{ "Qwen--Qwen3-Coder-480B-A35B-Instruct", 480e9, 1e9, 35e9, 1e9, 0 },
	{ "Qwen--Qwen2.5-1.5B", 1.54e9, 0.01e9, 0, 0, 0 },
	{ "Qwen--Qwen2.5-7B", 7.61e9, 0.01e9, 0, 0, 0 },
	{ "Qwen--Qwen2.5-72B", 72.7e9, 0.1e9, 0, 0, 0 },
	/* model.safetensors.index.json's total_size in bytes over 2 (fp16 and
	 * bf16 weights): 13,476,839,424; 26,031,728,640; 137,953,316,864;
	 * 16,060,522,496; 141,107,412,992 */
	{ "meta-llama--Llama-2-7b-hf", 6738419712.0, 1, 0, 0, 0 },
	{ "meta-llama--Llama-2-13b-hf", 13015864320.0, 1, 0, 0, 0 },
	{ "meta-llama--Llama-2-70b-hf", 68976658432.0, 1, 0, 0, 0 },
	{ "meta-llama--Meta-Llama-3.1-8B", 8030261248.0, 1, 0, 0, 0 },
	{ "meta-llama--Meta-Llama-3.1-70B", 70553706496.0, 1, 0, 0, 0 },
	/* the Llama 3.1 model card: 405B; the Llama 3.2 model card: 1.23B, 3.21B */
	{ "meta-llama--Meta-Llama-3.1-405B", 405e9, 1e9, 0, 0, 0 },
	{ "meta-llama--Llama-3.2-1B-Instruct", 1.23e9, 0.01e9, 0, 0, 0 },
	{ "meta-llama--Llama-3.2-3B-Instruct", 3.21e9, 0.01e9, 0, 0, 0 },
	/* the Phi-3 technical report (arXiv 2404.14219, abstract): phi-3-mini
	 * 3.8B, phi-3-medium 14B; Mistral AI, "Mistral 7B" (2023-09-27): 7.3B */
	{ "microsoft--Phi-3-mini-4k-instruct", 3.8e9, 0.1e9, 0, 0, 0 },
	{ "microsoft--Phi-3-medium-4k-instruct", 14e9, 1e9, 0, 0, 0 },
	{ "mistralai--Mistral-7B-Instruct-v0.3", 7.3e9, 0.1e9, 0, 0, 0 },
	/* Mistral AI, "Mixtral of experts" (2023-12-11): 46.7B total, 12.9B per
	 * token; "Cheaper, Better, Faster, Stronger" (2024-04-17): 141B, 39B */
	{ "mistralai--Mixtral-8x7B-v0.1", 46.7e9, 0.1e9, 12.9e9, 0.1e9, 0 },
	{ "mistralai--Mixtral-8x22B-v0.1", 141e9, 1e9, 39e9, 1e9, 0 },
	/* DeepSeek-V3 (arXiv 2412.19437, abstract): 671B total; DeepSeek-R1's
	 * model card: the same; the multi-token-prediction module is not in it */
	{ "deepseek-ai--DeepSeek-V3", 671e9, 1e9, 0, 0, 0 },
	{ "deepseek-ai--DeepSeek-R1", 671e9, 1e9, 0, 0, 0 },
	/* Kimi-K2's model card: "Total Parameters 1T": one significant figure,
	 * taken as 1.0T (0.95 to 1.05T) */
	{ "moonshotai--Kimi-K2-Instruct", 1.0e12, 0.1e12, 0, 0, 0 },
	/* gpt-oss-120b & gpt-oss-20b model card (OpenAI, 2025, arXiv
	 * 2508.10925), Table 1: 20.91B total, 3.61B active; 116.83B, 5.13B */
	{ "openai--gpt-oss-20b", 20.91e9, 0.01e9, 3.61e9, 0.01e9, 1 },
	{ "openai--gpt-oss-120b", 116.83e9, 0.01e9, 5.13e9, 0.01e9, 1 },
	/* OLMo 2 13B: model.safetensors.index.json's total_size beside the config
	 * (SOURCES.md), 54,864,793,600 bytes of float32 weights over 4 */
	{ "allenai--OLMo-2-1124-13B", 13716198400.0, 1, 0, 0, 0 },
};

/* the counts must be within tol of the published: 1%, or half a unit */
static int near(double got, double want, double unit)
{
	double tol = fmax(0.01 * want, 0.5 * unit);
	return fabs(got - want) <= tol;
}

/* every real config imports, loads beside the shipped catalog, and gives
 * the parameter count published for its model */
static void test_corpus(void **state)
{
	(void)state;
	int bad = 0;
	for (size_t i = 0; i < sizeof corpus / sizeof corpus[0]; i++) {
		const corpus_entry *e = &corpus[i];
		char dir[160];
		snprintf(dir, sizeof dir, "real/%s", e->dir);
		capsim_hf_model hf;
		capsim_catalog *c = imported(dir, "imported", &hf);
		const capsim_model *m = model(c, "imported");
		double total = capsim_model_params(m, 0), active = capsim_model_params(m, 1);
		if (e->no_input_emb)
			active -= (double)m->vocab * m->hidden;
		if (!near(total, e->total, e->total_unit) ||
		    (e->active > 0 && !near(active, e->active, e->active_unit))) {
			fprintf(stderr, "%s: %.4g parameters (%.4g active); published %.4g (%.4g)\n",
				e->dir, total, active, e->total, e->active);
			bad++;
		}
		capsim_catalog_free(c);
	}
	assert_int_equal(bad, 0);
}

/* what the real configs say beyond their size: Kimi-K2 read by its
 * architectures class; gpt-oss's alternating sliding window (128 on 12
 * of 24 layers, its layer_types) and sinks; Phi-3's window on every
 * layer; Qwen3's QK-norm; MiMo's
 * shape and its multi-token-prediction layer; the heterogeneous
 * Nemotron-NAS and Gemma 4 and the hybrid Nemotron-H refused, naming why */
static void test_corpus_variants(void **state)
{
	(void)state;
	capsim_hf_model m;
	capsim_catalog *c = imported("real/moonshotai--Kimi-K2-Instruct", "kimi", &m);
	assert_string_equal(m.read_as, "DeepseekV3ForCausalLM");
	assert_string_equal(m.model_type, "kimi_k2");
	assert_int_equal(m.moe_experts, 384);
	assert_int_equal(m.moe_dense_layers, 1);
	capsim_catalog_free(c);
	c = imported("real/openai--gpt-oss-20b", "oss", &m);
	assert_int_equal(m.sliding_window, 128);
	assert_int_equal(m.sliding_layers, 12);
	assert_int_equal(m.global_every, 2); /* sliding, full, sliding, ... */
	assert_int_equal(model(c, "oss")->global_every, 2);
	assert_true(m.attn_sinks);
	assert_int_equal(m.moe_experts, 32);
	assert_int_equal(m.moe_top_k, 4);
	capsim_catalog_free(c);
	c = imported("real/microsoft--Phi-3-mini-4k-instruct", "phi", &m);
	assert_int_equal(m.sliding_window, 2047); /* every layer: modelled */
	assert_int_equal(m.sliding_layers, 32);
	assert_true(m.window_modelled);
	assert_int_equal(model(c, "phi")->sliding_window, 2047);
	capsim_catalog_free(c);
	c = imported("real/Qwen--Qwen3-8B", "q3", &m);
	assert_true(m.qk_norm);
	assert_int_equal(m.sliding_layers, 0); /* use_sliding_window false */
	capsim_catalog_free(c);
	c = imported("real/XiaomiMiMo--MiMo-7B-Base", "mimo", &m);
	assert_int_equal(m.layers, 36);
	assert_int_equal(m.kv_heads, 8);
	assert_int_equal(m.ffn, 11008);
	assert_int_equal(m.vocab, 151680);
	int mtp = 0;
	for (int i = 0; i < m.n_warnings; i++)
		mtp |= strstr(m.warnings[i], "num_nextn_predict_layers 1") != NULL;
	assert_true(mtp);
	capsim_catalog_free(c);
	expect_refused("../real/nvidia--Llama-3_3-Nemotron-Super-49B-v1/config.json",
		       "block_configs: the layers differ");
	expect_refused("../real/google--gemma-4-26B-A4B/config.json",
		       "model_type 'gemma4': layers that differ (its global layers' heads");
	expect_refused("../real/nvidia--Nemotron-H-56B-Base-8K/config.json",
		       "model_type 'nemotron_h': a hybrid of Mamba-2 state-space layers");
}

/* The families no real config of the corpus has, each from a config
 * written with transformers' field names for it (configuration_*.py):
 * Gemma 3's multimodal config giving only what differs from
 * Gemma3TextConfig's defaults (the keys of google/gemma-3-4b-pt's
 * text_config), its language model counted against the Gemma 3 report's
 * (arXiv 2503.19786, Table 1: 3,209M non-embedding parameters for 4B);
 * Phi-3; OLMo-2's QK-norm; Nemotron's squared ReLU and LayerNorm; a
 * Nemotron-NAS whose blocks are all alike; a model_type capsim does not
 * know with a class it does; Python's Infinity. */
static void test_written_families(void **state)
{
	(void)state;
	capsim_hf_model m;
	const char *gemma3 = "{\"architectures\": [\"Gemma3ForConditionalGeneration\"], "
		"\"model_type\": \"gemma3\", \"mm_tokens_per_image\": 256, \"text_config\": "
		"{\"hidden_size\": 2560, \"intermediate_size\": 10240, \"model_type\": "
		"\"gemma3_text\", \"num_hidden_layers\": 34, \"rope_scaling\": {\"factor\": 8.0, "
		"\"rope_type\": \"linear\"}, \"sliding_window\": 1024}, \"vision_config\": "
		"{\"hidden_size\": 1152, \"model_type\": \"siglip_vision_model\"}}";
	capsim_catalog *c = imported_text(gemma3, strlen(gemma3), "g3.json", "g3", &m);
	assert_int_equal(m.heads, 8);
	assert_int_equal(m.kv_heads, 4);
	assert_int_equal(m.head_dim, 256);
	assert_int_equal(m.vocab, 262208);
	assert_true(m.tied_embeddings && m.qk_norm && m.vision_left_out);
	assert_int_equal(m.sliding_window, 1024);
	assert_int_equal(m.sliding_layers, 34 - 34 / 6); /* 5 local to 1 global */
	assert_int_equal(m.global_every, 6);
	assert_true(warned(&m, "num_attention_heads: absent; the default transformers gives"));
	assert_true(warned(&m, "vision_config: the vision tower"));
	const capsim_model *g = model(c, "g3");
	assert_rel(capsim_model_params(g, 0) - (double)g->vocab * g->hidden, 3209e6, 0.01);
	capsim_catalog_free(c);

	const char *phi3 = "{\"model_type\": \"phi3\", \"hidden_size\": 3072, "
		"\"intermediate_size\": 8192, \"num_hidden_layers\": 32, \"num_attention_heads\": 32, "
		"\"num_key_value_heads\": 32, \"vocab_size\": 32064, \"max_position_embeddings\": "
		"4096, \"sliding_window\": 2047, \"hidden_act\": \"silu\", "
		"\"tie_word_embeddings\": false}";
	c = imported_text(phi3, strlen(phi3), "phi3.json", "phi3", &m);
	assert_string_equal(m.family, "phi3");
	assert_int_equal(m.sliding_layers, 32);
	assert_int_equal(model(c, "phi3")->sliding_window, 2047);
	assert_int_equal(model(c, "phi3")->global_every, 0);
	/* keras-hub's Phi-3 mini preset: 3,821,079,552 parameters */
	assert_rel(capsim_model_params(model(c, "phi3"), 0), 3821079552.0, 0.01);
	capsim_catalog_free(c);

	const char *olmo2 = "{\"architectures\": [\"Olmo2ForCausalLM\"], \"model_type\": "
		"\"olmo2\", \"hidden_size\": 512, \"intermediate_size\": 1024, "
		"\"num_hidden_layers\": 2, \"num_attention_heads\": 8, \"vocab_size\": 1000, "
		"\"max_position_embeddings\": 4096}";
	c = imported_text(olmo2, strlen(olmo2), "olmo2.json", "olmo2", &m);
	assert_true(m.qk_norm);
	assert_true(warned(&m, "QK-norm"));
	capsim_catalog_free(c);

	const char *nemotron = "{\"model_type\": \"nemotron\", \"hidden_size\": 512, "
		"\"intermediate_size\": 2048, \"num_hidden_layers\": 2, \"num_attention_heads\": 8, "
		"\"num_key_value_heads\": 2, \"vocab_size\": 1000, \"max_position_embeddings\": "
		"4096, \"hidden_act\": \"relu2\", \"partial_rotary_factor\": 0.5, "
		"\"norm_eps\": 1e-05}";
	c = imported_text(nemotron, strlen(nemotron), "n.json", "nem", &m);
	assert_string_equal(m.activation, "relu");
	assert_string_equal(m.norm, "layernorm");
	assert_true(warned(&m, "relu2 (squared ReLU)"));
	assert_true(warned(&m, "partial_rotary_factor 0.5"));
	capsim_catalog_free(c);

	/* every block alike: 8 heads in 2 groups of 4; ffn_mult 2.625 of 512 is
	 * 896, rounded up to 1024 (a multiple of 256) */
	const char *nas = "{\"model_type\": \"nemotron-nas\", \"hidden_size\": 512, "
		"\"num_hidden_layers\": 2, \"num_attention_heads\": 8, \"vocab_size\": 1000, "
		"\"max_position_embeddings\": 4096, \"block_configs\": ["
		"{\"attention\": {\"n_heads_in_group\": 4, \"no_op\": false}, \"ffn\": "
		"{\"ffn_mult\": 2.625, \"no_op\": false}}, "
		"{\"attention\": {\"n_heads_in_group\": 4, \"no_op\": false}, \"ffn\": "
		"{\"ffn_mult\": 2.625, \"no_op\": false}}]}";
	c = imported_text(nas, strlen(nas), "nas.json", "nas", &m);
	assert_int_equal(m.kv_heads, 2);
	assert_int_equal(m.ffn, 1024);
	capsim_catalog_free(c);

	const char *byclass = "{\"model_type\": \"my_llama\", \"architectures\": "
		"[\"LlamaForCausalLM\"], \"hidden_size\": 256, \"intermediate_size\": 512, "
		"\"num_hidden_layers\": 2, \"num_attention_heads\": 4, \"vocab_size\": 1000, "
		"\"max_position_embeddings\": 1024, \"time_step_limit\": [0.0, Infinity]}";
	c = imported_text(byclass, strlen(byclass), "c.json", "byclass", &m);
	assert_string_equal(m.read_as, "LlamaForCausalLM");
	assert_string_equal(m.family, "llama");
	assert_true(warned(&m, "model_type my_llama is not one capsim knows by name"));
	assert_true(warned(&m, "1 NaN or Infinity values"));
	capsim_catalog_free(c);
	/* a config of NaNs: each "NaN" is one byte shorter than the "null" it
	 * becomes */
	char *nans = NULL;
	size_t nlen = 0;
	FILE *f = open_memstream(&nans, &nlen);
	fprintf(f, "{\"model_type\": \"llama\", \"hidden_size\": 256, \"intermediate_size\": "
		"512, \"num_hidden_layers\": 2, \"num_attention_heads\": 4, \"vocab_size\": 1000, "
		"\"max_position_embeddings\": 1024, \"x\": [NaN");
	for (int i = 0; i < 5000; i++)
		fputs(",NaN", f);
	fputs("]}", f);
	fclose(f);
	c = imported_text(nans, nlen, "nan.json", "nans", &m);
	assert_true(warned(&m, "5001 NaN or Infinity values"));
	capsim_catalog_free(c);
	free(nans);
}

/* --json: one object with the parameter count and what is not modelled;
 * the models file only with --out; the count on stderr either way */
static void test_json(void **state)
{
	(void)state;
	char dir[64];
	assert_int_equal(testutil_tmpdir_make(dir, sizeof dir, "test-import"), 0);
	assert_int_equal(testutil_sh("cd %s && %s import hf %s/tests/data/hf/real/openai--gpt-oss-20b/"
			    "config.json --name oss --json >o.json 2>err && grep -q 'oss: 20907927360 "
			    "parameters (20.91B), 4186416960 active per token' err && test ! -e oss.xml",
			    dir, CAPSIM_BIN, CAPSIM_SOURCE_DIR), 0);
	char path[128];
	snprintf(path, sizeof path, "%s/o.json", dir);
	json_t *o = json_load_file(path, 0, NULL);
	assert_non_null(o);
	json_t *mo = json_object_get(o, "model"), *at = json_object_get(mo, "attention");
	assert_int_equal(json_integer_value(json_object_get(mo, "parameters")), 20907927360LL);
	assert_int_equal(json_integer_value(json_object_get(at, "sliding_window")), 128);
	assert_true(json_is_true(json_object_get(at, "attention_sinks")));
	assert_true(json_is_null(json_object_get(o, "models_file")));
	json_t *w = json_object_get(mo, "not_modelled");
	int sinks = 0;
	for (size_t i = 0; i < json_array_size(w); i++)
		sinks |= strstr(json_string_value(json_array_get(w, i)), "sinks") != NULL;
	assert_true(sinks);
	json_decref(o);
	assert_int_equal(testutil_sh("cd %s && %s import hf %s/tests/data/hf/real/openai--gpt-oss-20b/"
			    "config.json --name oss --json --out oss.xml >o.json 2>/dev/null && grep -q "
			    "'\"models_file\": \"oss.xml\"' o.json && grep -q 'model id=\"oss\"' oss.xml",
			    dir, CAPSIM_BIN, CAPSIM_SOURCE_DIR), 0);
	assert_int_equal(testutil_tmpdir_remove(dir), 0);
}

static void expect_refused(const char *file, const char *needle)
{
	char path[512];
	snprintf(path, sizeof path, "%s/tests/data/hf/bad/%s", CAPSIM_SOURCE_DIR, file);
	capsim_diags d = { 0 };
	size_t len;
	char *text = capsim_xml_slurp(path, &len, &d);
	assert_non_null(text);
	capsim_hf_model m;
	if (capsim_hf_read(text, len, path, &m, &d) == 0 || !capsim_diags_contains(&d, needle)) {
		capsim_diags_print(&d, stderr);
		fail_msg("%s: expected '%s'", file, needle);
	}
	free(text);
	capsim_diags_free(&d);
}

static void test_malformed(void **state)
{
	(void)state;
	expect_refused("string-field.json", "hidden_size: expected a positive whole number, found a string");
	expect_refused("missing-ffn.json", "intermediate_size: missing");
	expect_refused("unknown-arch.json", "model_type: 't5' is not an architecture capsim reads");
	expect_refused("not-json.json", "not JSON");
	expect_refused("array.json", "expected a JSON object");
	expect_refused("fraction.json", "n_layer: expected a positive whole number");
	expect_refused("zero-and-comment.json", "head_dim: expected a positive whole number, found 0");
	expect_refused("zero-and-comment.json", "hidden_act: expected a string, found an integer");
}

/* the Llama 3.1 8B config with extra text before its closing brace */
static char *llama_with(const char *extra, size_t *len)
{
	capsim_diags d = { 0 };
	size_t l;
	char *text = capsim_xml_slurp(CAPSIM_SOURCE_DIR "/tests/data/hf/Meta-Llama-3.1-8B/config.json",
				      &l, &d);
	assert_non_null(text);
	char *close = text + l;
	while (close > text && *--close != '}')
		;
	assert_true(*close == '}');
	char *out = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&out, &n);
	fprintf(f, "%.*s,%s}", (int)(close - text), text, extra);
	fclose(f);
	free(text);
	*len = n;
	return out;
}

static void hf_refused(const char *extra, const char *needle)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	fprintf(f, "{\"model_type\": \"llama\", \"num_hidden_layers\": 2, \"hidden_size\": 256, "
		"\"num_attention_heads\": 4, \"vocab_size\": 1000, \"max_position_embeddings\": "
		"1024, \"intermediate_size\": 512, %s}", extra);
	fclose(f);
	capsim_diags d = { 0 };
	capsim_hf_model m;
	if (capsim_hf_read(text, len, "c.json", &m, &d) == 0 || !capsim_diags_contains(&d, needle)) {
		capsim_diags_print(&d, stderr);
		fail_msg("%s: expected '%s'", extra, needle);
	}
	capsim_diags_free(&d);
	free(text);
}

/* what the schema would refuse, or a config cannot mean, is refused: a
 * head_dim of 0 (it was taken as "not given"), an activation that is not a
 * name, a size of 0, a config past the 8 MiB cap on input files */
static void test_refusals(void **state)
{
	(void)state;
	hf_refused("\"head_dim\": 0", "head_dim: expected a positive whole number, found 0");
	hf_refused("\"num_key_value_heads\": 0", "num_key_value_heads: expected a positive whole "
		   "number, found 0");
	hf_refused("\"hidden_act\": 7", "hidden_act: expected a string, found an integer");
	hf_refused("\"head_dim\": 1e300", "head_dim: expected a positive whole number, found a "
		   "number out of range");
	/* 12 MiB: one byte past the cap is refused, naming it */
	size_t big = CAPSIM_HF_MAX_BYTES + 1;
	char *text = malloc(big);
	assert_non_null(text);
	memset(text, ' ', big);
	memcpy(text, "{\"model_type\": \"llama\"}", 24);
	capsim_diags d = { 0 };
	capsim_hf_model m;
	assert_int_equal(capsim_hf_read(text, big, "big.json", &m, &d), -1);
	assert_true(capsim_diags_contains(&d, "8388609 bytes: larger than the 8388608-byte (8 MiB) "
					  "cap on input files"));
	capsim_diags_free(&d);
	free(text);
	/* through the command, a 12 MiB file (it was accepted) */
	char dir[64];
	assert_int_equal(testutil_tmpdir_make(dir, sizeof dir, "test-import"), 0);
	assert_int_equal(testutil_sh("cd %s && mkdir m && { printf '{\"model_type\":\"llama\",\"x\":\"'; "
			    "head -c 12582912 /dev/zero | tr '\\0' a; printf '\"}'; } > m/config.json && "
			    "%s import hf m/config.json 2>err; test $? -eq 2 && grep -q 'cap on input "
			    "files' err", dir, CAPSIM_BIN), 0);
	assert_int_equal(testutil_tmpdir_remove(dir), 0);
}

/* 100,000 keys capsim does not read: the first CAPSIM_HF_KEYS_LISTED named,
 * the rest counted ("and 99988 more keys"), never dropped in silence */
static void test_unknown_keys(void **state)
{
	(void)state;
	char *extra = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&extra, &n);
	for (int i = 0; i < 100000; i++)
		fprintf(f, "%s\"k%d\": 1", i ? ", " : "", i);
	fclose(f);
	size_t len;
	char *text = llama_with(extra, &len);
	capsim_diags d = { 0 };
	capsim_hf_model m;
	assert_int_equal(capsim_hf_read(text, len, "c.json", &m, &d), 0);
	int named = 0, more = 0;
	for (int i = 0; i < m.n_warnings; i++) {
		named += strstr(m.warnings[i], ": not modelled (left out)") && m.warnings[i][0] == 'k';
		more += strcmp(m.warnings[i], "and 99988 more keys: not modelled (left out)") == 0;
	}
	assert_int_equal(named, CAPSIM_HF_KEYS_LISTED);
	assert_int_equal(more, 1);
	capsim_diags_free(&d);
	free(text);
	free(extra);
}

/* a key holding "-->" and markup goes into the models file's comment
 * escaped: the file loads, holds no element of the key's, and the text
 * reads back (it ended the comment) */
static void test_comment_escape(void **state)
{
	(void)state;
	size_t len;
	char *text = llama_with("\"a-->\\n<evil/><!--\": 1", &len);
	capsim_diags d = { 0 };
	capsim_hf_model m;
	assert_int_equal(capsim_hf_read(text, len, "dir--x/c.json", &m, &d), 0);
	char *xml = NULL;
	size_t xlen = 0;
	FILE *f = open_memstream(&xml, &xlen);
	assert_int_equal(capsim_hf_write(&m, "evil-test", "dir--x/c.json", "0123456789abcdef0123456789"
					 "abcdef0123456789abcdef0123456789abcdef", f), 0);
	fclose(f);
	assert_non_null(strstr(xml, "<!-- not modelled: a-\\x2d>\\x0a<evil/><!-\\x2d: not modelled "
				    "(left out) -->"));
	assert_non_null(strstr(xml, "from dir-\\x2dx/c.json"));
	capsim_catalog *c = capsim_catalog_create();
	assert_int_equal(capsim_catalog_load_root(c, CAPSIM_SOURCE_DIR, NULL, &d), 0);
	if (capsim_catalog_load_memory(c, xml, xlen, "evil", &d) < 0 || capsim_catalog_check(c, &d) < 0) {
		capsim_diags_print(&d, stderr);
		fail_msg("the entry does not load:\n%s", xml);
	}
	/* no element but the comment's text: the only "<evil" is inside a comment */
	xmlDoc *doc = capsim_xml_read_memory(xml, xlen, "evil", &d);
	assert_non_null(doc);
	int elements = 0;
	for (xmlNode *n = xmlDocGetRootElement(doc)->children; n; n = n->next)
		elements += n->type == XML_ELEMENT_NODE;
	assert_int_equal(elements, 1); /* the model */
	xmlFreeDoc(doc);
	capsim_catalog_free(c);
	capsim_diags_free(&d);
	free(xml);
	free(text);
}

/* --name is an id (common.xsd): others are refused with the rule, not
 * rewritten ("My Model!" became "my-model-"); a directory's name too long
 * for one is refused (it was cut) */
static void test_names(void **state)
{
	(void)state;
	const char *bad[] = { "'My Model'", "'a\"/><evil'", "-x", "''", "Llama",
			      "abcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghij1234" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_int_equal(testutil_sh("%s import hf %s/tests/data/hf/Qwen2.5-7B/config.json --name=%s "
				    "2>&1 >/dev/null | grep -q \"expected an id (an id is a lower-case "
				    "letter or digit, then up to 62 of a-z 0-9 . _ -)\"", CAPSIM_BIN,
				    CAPSIM_SOURCE_DIR, bad[i]), 0);
	char dir[64];
	assert_int_equal(testutil_tmpdir_make(dir, sizeof dir, "test-import"), 0);
	assert_int_equal(testutil_sh("cd %s && d=abcdefghijabcdefghijabcdefghijabcdefghijabcdefghij"
			    "abcdefghij1234 && mkdir $d && cp %s/tests/data/hf/Qwen2.5-7B/config.json $d/ && "
			    "%s import hf $d/config.json 2>&1 >/dev/null | grep -q 'give one with --name' "
			    "&& %s import hf $d/config.json --name ok-1.2_x >/dev/null 2>&1", dir,
			    CAPSIM_SOURCE_DIR, CAPSIM_BIN, CAPSIM_BIN), 0);
	assert_int_equal(testutil_tmpdir_remove(dir), 0);
}

static void test_command(void **state)
{
	(void)state;
	char dir[] = "/tmp/capsim-test-import-XXXXXX";
	assert_non_null(mkdtemp(dir));
	/* the id from the config's directory; the file validates and runs */
	assert_int_equal(testutil_sh("%s import hf %s/tests/data/hf/Qwen2.5-7B/config.json --out %s/q.xml "
			    "2>/dev/null", CAPSIM_BIN, CAPSIM_SOURCE_DIR, dir), 0);
	assert_int_equal(testutil_sh("grep -q 'model id=\"qwen2.5-7b\"' %s/q.xml", dir), 0);
	assert_int_equal(testutil_sh("%s validate %s/q.xml >/dev/null", CAPSIM_BIN, dir), 0);
	assert_int_equal(testutil_sh("%s --parts %s/q.xml run %s/scenarios/default.xml --set "
			    "workload.model.ref=qwen2.5-7b --set workload.parallelism.tp=4 --set "
			    "workload.parallelism.pp=1 --set workload.parallelism.virtual-stages=1 "
			    "--set workload.parallelism.schedule=1f1b "
			    "| grep -q 'qwen2.5-7b, tp 4 pp 1'", CAPSIM_BIN, dir, CAPSIM_SOURCE_DIR), 0);
	/* the shipped id is refused; --name gives another */
	assert_int_equal(testutil_sh("%s import hf %s/tests/data/hf/DeepSeek-V3/config.json 2>&1 >/dev/null | "
			    "grep -q \"is a shipped model's\"", CAPSIM_BIN, CAPSIM_SOURCE_DIR), 0);
	assert_int_equal(testutil_sh("%s import hf %s/tests/data/hf/DeepSeek-V3/config.json --name my-v3 "
			    "--out %s/v3.xml 2>/dev/null", CAPSIM_BIN, CAPSIM_SOURCE_DIR, dir), 0);
	/* nothing written on a refusal */
	assert_int_equal(testutil_sh("%s import hf %s/tests/data/hf/bad/missing-ffn.json --name x --out "
			    "%s/bad.xml 2>/dev/null", CAPSIM_BIN, CAPSIM_SOURCE_DIR, dir), 2);
	assert_int_equal(testutil_sh("test ! -e %s/bad.xml && rm -rf %s", dir, dir), 0);
}

/* a model defined in the scenario (no ref): the same step as the catalog's
 * llama-2-13b on the same cluster; edited by --set as a part is; written
 * whole and read back; a field missing is refused naming it */
static void test_inline_model(void **state)
{
	(void)state;
	capsim_scenario *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
	capsim_diags d = { 0 };
	if (capsim_scenario_load(CAPSIM_SOURCE_DIR "/tests/data/inline-model.xml", shipped, NULL, 0, a,
				 &d) < 0) {
		capsim_diags_print(&d, stderr);
		fail_msg("the inline model does not load");
	}
	assert_true(a->model_inline);
	assert_string_equal(a->model.e.id, "inline-13b-model");
	assert_int_equal(capsim_scenario_load(CAPSIM_SOURCE_DIR "/scenarios/a100-4node-fattree.xml",
					      shipped, NULL, 0, b, &d), 0);
	capsim_result ra, rb;
	capsim_eval_opts o = { .no_reference = 1 };
	assert_int_equal(capsim_eval(a, &o, &ra, &d), 0);
	assert_int_equal(capsim_eval(b, &o, &rb, &d), 0);
	assert_memory_equal(&ra.step.step_time_s, &rb.step.step_time_s, sizeof(double));
	capsim_result_free(&ra);
	capsim_result_free(&rb);
	/* written whole, read back: the same model */
	char *xml = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&xml, &len);
	assert_int_equal(capsim_scenario_write_xml(a, f), 0);
	fclose(f);
	capsim_scenario *c = calloc(1, sizeof *c);
	assert_int_equal(capsim_scenario_load_memory(xml, len, "written", shipped, NULL, 0, c, &d), 0);
	assert_int_equal(c->model.layers, 40);
	assert_int_equal(c->model.ffn, 13824);
	assert_rel(capsim_model_params(&c->model, 0), capsim_model_params(&a->model, 0), 0);
	free(xml);
	/* an edit of one of its fields */
	assert_int_equal(capsim_scenario_set(a, shipped, "workload.model.architecture.layers", "20",
					     &d), 0);
	assert_int_equal(a->model.layers, 20);
	/* a field missing: refused, named */
	const char *bad = "<scenario name=\"x\"><cluster nodes=\"1\"><node ref=\"dgx-h100\"/>"
			  "<fabric topology=\"none\" transport=\"infiniband\"/></cluster>"
			  "<workload seq-len=\"1024\" "
			  "global-batch=\"8\" tokens=\"1B\" dtype=\"bf16\">"
			  "<model><architecture layers=\"2\" hidden=\"256\" heads=\"4\" "
			  "activation=\"gelu\" vocab=\"1000\" max-seq-len=\"1024\"/></model>"
			  "</workload></scenario>";
	capsim_diags e = { 0 };
	assert_int_equal(capsim_scenario_load_memory(bad, strlen(bad), "bad", shipped, NULL, 0, c, &e),
			 -1);
	assert_true(capsim_diags_contains(&e, "workload.model.architecture.ffn is missing"));
	capsim_diags_free(&e);
	capsim_diags_free(&d);
	free(a);
	free(b);
	free(c);
}

/* the user's catalog files: --parts FILE and DIR, $CAPSIM_PARTS; a shipped
 * id refused; listed by capsim catalog; a missing path refused */
static void test_parts(void **state)
{
	(void)state;
	char dir[] = "/tmp/capsim-test-parts-XXXXXX";
	assert_non_null(mkdtemp(dir));
	assert_int_equal(testutil_sh("mkdir %s/parts && %s import hf %s/tests/data/hf/Qwen2.5-7B/config.json "
			    "--name my-qwen --out %s/parts/qwen.xml 2>/dev/null", dir, CAPSIM_BIN,
			    CAPSIM_SOURCE_DIR, dir), 0);
	const char *run = "run --set workload.model.ref=my-qwen --set workload.parallelism.tp=4 "
			  "--set workload.parallelism.pp=1 --set workload.parallelism.virtual-stages=1 "
			  "--set workload.parallelism.schedule=1f1b";
	assert_int_equal(testutil_sh("%s --parts %s/parts/qwen.xml %s >/dev/null", CAPSIM_BIN, dir, run), 0);
	assert_int_equal(testutil_sh("%s --parts=%s/parts %s >/dev/null", CAPSIM_BIN, dir, run), 0);
	assert_int_equal(testutil_sh("CAPSIM_PARTS=/nonexistent-dir-x:%s/parts %s %s 2>/dev/null; test $? -eq 2",
			    dir, CAPSIM_BIN, run), 0);
	assert_int_equal(testutil_sh("CAPSIM_PARTS=%s/parts %s %s >/dev/null", dir, CAPSIM_BIN, run), 0);
	/* without them the id is unknown */
	assert_int_equal(testutil_sh("%s %s 2>/dev/null; test $? -eq 2", CAPSIM_BIN, run), 0);
	assert_int_equal(testutil_sh("%s --parts %s/parts catalog models | grep -q my-qwen", CAPSIM_BIN, dir), 0);
	/* a shipped id is not taken */
	assert_int_equal(testutil_sh("sed 's/my-qwen/llama-2-7b/' %s/parts/qwen.xml > %s/dup.xml && %s --parts "
			    "%s/dup.xml run 2>&1 | grep -q \"model 'llama-2-7b': duplicate id\"", dir,
			    dir, CAPSIM_BIN, dir), 0);
	assert_int_equal(testutil_sh("%s --parts 2>/dev/null; test $? -eq 2", CAPSIM_BIN), 0);
	assert_int_equal(testutil_sh("rm -rf %s", dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_llama),
		cmocka_unit_test(test_mixtral),
		cmocka_unit_test(test_deepseek),
		cmocka_unit_test(test_gpt2),
		cmocka_unit_test(test_other_families),
		cmocka_unit_test(test_corpus),
		cmocka_unit_test(test_corpus_variants),
		cmocka_unit_test(test_written_families),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_unknown_keys),
		cmocka_unit_test(test_comment_escape),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_command),
		cmocka_unit_test(test_inline_model),
		cmocka_unit_test(test_parts),
	};
	return testutil_run_group(tests, setup, teardown);
}
