/* hf.c - Hugging Face model configs into capsim model entries; see hf.h.
 * Field names are transformers' own (configuration_*.py of each family). */
#include "hf.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

#include <jansson.h>

#include "check.h"
#include "escape.h"
#include "xalloc.h"

typedef enum { ARCH_LLAMA, ARCH_MIXTRAL, ARCH_QWEN_MOE, ARCH_DEEPSEEK, ARCH_GPT2, ARCH_NEOX,
	       ARCH_GEMMA } arch;

static const struct {
	const char *model_type;
	arch a;
	const char *family;
} archs[] = {
	{ "llama", ARCH_LLAMA, "llama" },       { "mistral", ARCH_LLAMA, "mistral" },
	{ "qwen2", ARCH_LLAMA, "qwen2" },       { "qwen3", ARCH_LLAMA, "qwen3" },
	{ "mixtral", ARCH_MIXTRAL, "mixtral" }, { "qwen2_moe", ARCH_QWEN_MOE, "qwen2-moe" },
	{ "qwen3_moe", ARCH_QWEN_MOE, "qwen3-moe" }, { "deepseek_v2", ARCH_DEEPSEEK, "deepseek-v2" },
	{ "deepseek_v3", ARCH_DEEPSEEK, "deepseek-v3" }, { "gpt2", ARCH_GPT2, "gpt2" },
	{ "gpt_neox", ARCH_NEOX, "gpt-neox" },  { "gemma", ARCH_GEMMA, "gemma" },
	{ "gemma2", ARCH_GEMMA, "gemma2" },
};

typedef struct {
	json_t *o;
	const char *file;
	capsim_diags *d;
	int bad;
} reader;

static void warn(capsim_hf_model *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(capsim_hf_model *m, const char *fmt, ...)
{
	/* the fixed warnings (under a dozen) and the listed keys with their count
	 * always fit */
	if (CAPSIM_NEVER(m->n_warnings >= CAPSIM_HF_WARNINGS))
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m->warnings[m->n_warnings++], sizeof m->warnings[0], fmt, ap);
	va_end(ap);
}

static const char *kind_of(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a number with a fraction";
	case JSON_TRUE: case JSON_FALSE: return "a boolean";
	default: return "null";
	}
}

/* a whole-number field of at least min (1: a size, 0: a count that may
 * be none), at most 1e12: *out, 1 present, 0 absent (or null), -1 bad */
static int int_min_field(reader *r, const char *name, long *out, int required, long min)
{
	json_t *v = json_object_get(r->o, name);
	if (!v || json_is_null(v)) {
		if (required) {
			capsim_diags_add(r->d, r->file, 0, "%s: missing (a positive whole number)",
					 name);
			r->bad = 1;
		}
		return 0;
	}
	double x = json_is_integer(v) ? (double)json_integer_value(v) :
		   json_is_real(v) ? json_real_value(v) : NAN;
	const char *what = min ? "a positive whole number" : "a whole number";
	if (!(x >= 0) || x != floor(x) || x > 1e12) {
		capsim_diags_add(r->d, r->file, 0, "%s: expected %s, found %s", name, what,
				 !json_is_number(v) ? kind_of(v) : x != floor(x) ?
				 "a number that is not whole" : "a number out of range");
		r->bad = 1;
		return -1;
	}
	if (x < (double)min) {
		capsim_diags_add(r->d, r->file, 0, "%s: expected %s, found 0", name, what);
		r->bad = 1;
		return -1;
	}
	*out = (long)x;
	return 1;
}

/* a size: a positive whole number */
static int int_field(reader *r, const char *name, long *out, int required)
{
	return int_min_field(r, name, out, required, 1);
}

/* a string field: NULL where absent or null; another type is refused */
static const char *str_field(reader *r, const char *name)
{
	json_t *v = json_object_get(r->o, name);
	if (!v || json_is_null(v))
		return NULL;
	if (!json_is_string(v)) {
		capsim_diags_add(r->d, r->file, 0, "%s: expected a string, found %s", name,
				 kind_of(v));
		r->bad = 1;
		return NULL;
	}
	return json_string_value(v);
}

/* a number field (rotary_pct): *out, 1 present, 0 absent, -1 bad */
static int num_field(reader *r, const char *name, double *out)
{
	json_t *v = json_object_get(r->o, name);
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_number(v)) {
		capsim_diags_add(r->d, r->file, 0, "%s: expected a number, found %s", name,
				 kind_of(v));
		r->bad = 1;
		return -1;
	}
	*out = json_number_value(v);
	return 1;
}

static int bool_field(reader *r, const char *name, int def)
{
	json_t *v = json_object_get(r->o, name);
	if (!v || json_is_null(v))
		return def;
	if (!json_is_boolean(v)) {
		capsim_diags_add(r->d, r->file, 0, "%s: expected true or false, found %s", name,
				 kind_of(v));
		r->bad = 1;
		return def;
	}
	return json_is_true(v);
}

/* transformers' activation names to capsim's MLP kinds */
static const char *activation_of(capsim_hf_model *m, const char *act, int gated)
{
	if (!act)
		return gated ? "swiglu" : "gelu";
	if (gated) {
		if (strcmp(act, "silu") == 0 || strcmp(act, "swish") == 0)
			return "swiglu";
		/* GeGLU: the same three matrices as SwiGLU, another elementwise function */
		warn(m, "activation %.64s in a gated MLP (GeGLU) is modelled as swiglu: the same "
		     "three matrices and FLOPs; the elementwise function differs", act);
		return "swiglu";
	}
	if (strncmp(act, "gelu", 4) == 0)
		return "gelu";
	if (strcmp(act, "relu") == 0)
		return "relu";
	warn(m, "activation %.64s is modelled as gelu", act);
	return "gelu";
}

/* keys the families use that capsim reads, or knows not to need */
static const char *const understood[] = {
	"model_type", "architectures", "num_hidden_layers", "hidden_size", "num_attention_heads",
	"num_key_value_heads", "head_dim", "intermediate_size", "hidden_act", "hidden_activation",
	"vocab_size", "max_position_embeddings", "rms_norm_eps", "layer_norm_eps",
	"layer_norm_epsilon", "tie_word_embeddings", "rope_theta", "rope_scaling", "torch_dtype",
	"transformers_version", "bos_token_id", "eos_token_id", "pad_token_id", "initializer_range",
	"use_cache", "attention_dropout", "attention_bias", "mlp_bias", "pretraining_tp",
	"num_local_experts", "num_experts_per_tok", "num_experts", "moe_intermediate_size",
	"shared_expert_intermediate_size", "n_routed_experts", "n_shared_experts",
	"first_k_dense_replace", "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim",
	"qk_rope_head_dim", "v_head_dim", "n_layer", "n_embd", "n_head", "n_inner", "n_positions",
	"n_ctx", "activation_function", "rotary_pct", "rotary_emb_base", "use_parallel_residual",
	"sliding_window", "use_sliding_window", "max_window_layers", "router_aux_loss_coef",
	"output_router_logits", "norm_topk_prob", "decoder_sparse_step", "mlp_only_layers",
	"query_pre_attn_scalar", "final_logit_softcapping", "attn_logit_softcapping",
	"resid_pdrop", "embd_pdrop", "attn_pdrop", "summary_type", "summary_use_proj",
	"summary_activation", "summary_proj_to_labels", "summary_first_dropout",
	"scale_attn_weights", "reorder_and_upcast_attn", "scale_attn_by_inverse_layer_idx",
	"hidden_dropout", "classifier_dropout", "routed_scaling_factor", "scoring_func",
	"topk_method", "n_group", "topk_group", "moe_layer_freq", "ep_size", "aux_loss_alpha",
	"seq_aux", "num_nextn_predict_layers", "quantization_config", "auto_map", "qkv_bias",
	"tie_encoder_decoder", "is_decoder", "task_specific_params", "partial_rotary_factor",
};

static int is_understood(const char *key)
{
	for (size_t i = 0; i < sizeof understood / sizeof understood[0]; i++)
		if (strcmp(understood[i], key) == 0)
			return 1;
	return 0;
}

static void read_common(reader *r, capsim_hf_model *m, arch a)
{
	const int gpt2 = a == ARCH_GPT2;
	int_field(r, gpt2 ? "n_layer" : "num_hidden_layers", &m->layers, 1);
	int_field(r, gpt2 ? "n_embd" : "hidden_size", &m->hidden, 1);
	int_field(r, gpt2 ? "n_head" : "num_attention_heads", &m->heads, 1);
	int_field(r, "vocab_size", &m->vocab, 1);
	if (gpt2) {
		if (int_field(r, "n_positions", &m->max_seq_len, 0) == 0)
			int_field(r, "n_ctx", &m->max_seq_len, 1);
		if (int_field(r, "n_inner", &m->ffn, 0) == 0)
			m->ffn = 4 * m->hidden; /* GPT-2: n_inner null is 4 x n_embd */
	} else {
		int_field(r, "max_position_embeddings", &m->max_seq_len, 1);
		int_field(r, "intermediate_size", &m->ffn, 1);
	}
	if (int_field(r, "num_key_value_heads", &m->kv_heads, 0) == 0)
		m->kv_heads = m->heads;
	int_field(r, "head_dim", &m->head_dim, 0);
}

/* text parsed as one JSON object, or NULL with the reason in d */
static json_t *parse_object(const char *text, size_t len, const char *file, capsim_diags *d)
{
	if (len > CAPSIM_HF_MAX_BYTES) {
		capsim_diags_add(d, file, 0, "%zu bytes: larger than the %u-byte (8 MiB) cap on "
				 "input files", len, CAPSIM_HF_MAX_BYTES);
		return NULL;
	}
	json_error_t je;
	json_t *o = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!o) {
		capsim_diags_add(d, file, je.line, "not JSON: %s", je.text);
		return NULL;
	}
	if (!json_is_object(o)) {
		capsim_diags_add(d, file, 0, "expected a JSON object (a config.json), found %s",
				 kind_of(o));
		json_decref(o);
		return NULL;
	}
	return o;
}

/* The row of archs that model_type names, or -1 with the reason in d */
static int find_arch(reader *r)
{
	const char *mt = str_field(r, "model_type");
	if (r->bad)
		return -1;
	if (!mt) {
		capsim_diags_add(r->d, r->file, 0, "model_type: missing (a Hugging Face config "
				 "names its architecture there)");
		return -1;
	}
	int found = -1;
	for (size_t i = 0; i < sizeof archs / sizeof archs[0]; i++)
		if (strcmp(archs[i].model_type, mt) == 0)
			found = (int)i;
	if (found < 0) {
		char list[512] = "";
		for (size_t i = 0; i < sizeof archs / sizeof archs[0]; i++) {
			size_t l = strlen(list);
			snprintf(list + l, sizeof list - l, "%s%s", i ? ", " : "", archs[i].model_type);
		}
		capsim_diags_add(r->d, r->file, 0, "model_type: '%.64s%s' is not an architecture "
				 "capsim reads (%s)", mt, strlen(mt) > 64 ? "..." : "", list);
	}
	return found;
}

/* the activation, norm, position and tied embeddings of architecture a */
static void read_layer_kind(reader *r, capsim_hf_model *m, arch a)
{
	const char *act = str_field(r, a == ARCH_GPT2 ? "activation_function" :
				    a == ARCH_GEMMA && str_field(r, "hidden_activation") ?
				    "hidden_activation" : "hidden_act");
	switch (a) {
	case ARCH_GPT2:
		m->activation = activation_of(m, act, 0);
		m->norm = "layernorm";
		m->position = "learned";
		m->tied_embeddings = bool_field(r, "tie_word_embeddings", 1);
		break;
	case ARCH_NEOX:
		m->activation = activation_of(m, act, 0);
		m->norm = "layernorm";
		m->position = "rope";
		m->tied_embeddings = bool_field(r, "tie_word_embeddings", 0);
		double pct;
		if (num_field(r, "rotary_pct", &pct) == 1 && pct < 1.0)
			warn(m, "rotary_pct %.3g: rotary on part of each head; capsim's cost of RoPE is "
			     "the same either way", pct);
		if (bool_field(r, "use_parallel_residual", 1))
			warn(m, "use_parallel_residual: attention and MLP in parallel; capsim runs them "
			     "one after the other (the same work)");
		break;
	case ARCH_GEMMA:
		m->activation = activation_of(m, act, 1);
		m->norm = "rmsnorm";
		m->position = "rope";
		m->tied_embeddings = bool_field(r, "tie_word_embeddings", 1);
		break;
	default:
		m->activation = activation_of(m, act, 1);
		m->norm = "rmsnorm";
		m->position = "rope";
		m->tied_embeddings = bool_field(r, "tie_word_embeddings", 0);
		break;
	}
}

/* Qwen's MoE fields: routed experts, and one shared expert of their size */
static void read_qwen_moe(reader *r, capsim_hf_model *m)
{
	int_field(r, "num_experts", &m->moe_experts, 1);
	int_field(r, "num_experts_per_tok", &m->moe_top_k, 1);
	int_field(r, "moe_intermediate_size", &m->moe_expert_ffn, 1);
	long shared = 0;
	if (int_min_field(r, "shared_expert_intermediate_size", &shared, 0, 0) == 1 &&
	    shared > 0) {
		m->moe_shared_experts = 1;
		if (shared != m->moe_expert_ffn)
			warn(m, "shared_expert_intermediate_size %ld differs from the routed "
			     "experts' %ld: counted as one shared expert of the routed size",
			     shared, m->moe_expert_ffn);
	}
}

/* DeepSeek's MoE and MLA fields */
static void read_deepseek(reader *r, capsim_hf_model *m)
{
	int_field(r, "n_routed_experts", &m->moe_experts, 1);
	int_field(r, "num_experts_per_tok", &m->moe_top_k, 1);
	int_field(r, "moe_intermediate_size", &m->moe_expert_ffn, 1);
	int_min_field(r, "n_shared_experts", &m->moe_shared_experts, 0, 0);
	int_min_field(r, "first_k_dense_replace", &m->moe_dense_layers, 0, 0);
	int_min_field(r, "q_lora_rank", &m->mla_q_lora_rank, 0, 0);
	int_field(r, "kv_lora_rank", &m->mla_kv_lora_rank, 1);
	int_field(r, "qk_nope_head_dim", &m->mla_qk_nope_head_dim, 1);
	int_field(r, "qk_rope_head_dim", &m->mla_qk_rope_head_dim, 1);
	int_field(r, "v_head_dim", &m->mla_v_head_dim, 1);
	/* MLA's attention: heads of v_head_dim (as the shipped DeepSeek entries give
	 * head-dim), queries and keys of qk_nope + qk_rope (the mla block) */
	if (!m->head_dim)
		m->head_dim = m->mla_v_head_dim;
	long mtp = 0;
	if (int_min_field(r, "num_nextn_predict_layers", &mtp, 0, 0) == 1 && mtp > 0)
		warn(m, "num_nextn_predict_layers %ld: the multi-token-prediction module is "
		     "not modelled", mtp);
}

/* a warning for every key that neither capsim reads nor knows to need: the
 * first ones named (a long key cut, and said to be), the rest counted */
static void warn_unknown_keys(json_t *o, capsim_hf_model *m)
{
	const char *key;
	json_t *v;
	long unknown = 0;
	json_object_foreach(o, key, v) {
		(void)v;
		if (is_understood(key) || unknown++ >= CAPSIM_HF_KEYS_LISTED)
			continue;
		size_t kl = strlen(key), cut = kl > 80 ? 80 : kl;
		while (cut < kl && cut > 0 && ((unsigned char)key[cut] & 0xc0) == 0x80)
			cut--; /* not inside a UTF-8 character */
		if (cut < kl)
			warn(m, "%.*s... (a key of %zu bytes): not modelled (left out)", (int)cut,
			     key, kl);
		else
			warn(m, "%s: not modelled (left out)", key);
	}
	if (unknown > CAPSIM_HF_KEYS_LISTED)
		warn(m, "and %ld more keys: not modelled (left out)",
		     unknown - CAPSIM_HF_KEYS_LISTED);
}

int capsim_hf_read(const char *text, size_t len, const char *file, capsim_hf_model *m,
		   capsim_diags *d)
{
	memset(m, 0, sizeof *m);
	json_t *o = parse_object(text, len, file, d);
	if (!o)
		return -1;
	reader r = { o, file, d, 0 };
	int found = find_arch(&r);
	if (found < 0) {
		json_decref(o);
		return -1;
	}
	const char *mt = archs[found].model_type;
	arch a = archs[found].a;
	capsim_strlcpy(m->model_type, mt, sizeof m->model_type);
	capsim_strlcpy(m->family, archs[found].family, sizeof m->family);
	read_common(&r, m, a);
	read_layer_kind(&r, m, a);
	if (a == ARCH_MIXTRAL) {
		int_field(&r, "num_local_experts", &m->moe_experts, 1);
		int_field(&r, "num_experts_per_tok", &m->moe_top_k, 1);
		m->moe_expert_ffn = m->ffn;
	} else if (a == ARCH_QWEN_MOE) {
		read_qwen_moe(&r, m);
	} else if (a == ARCH_DEEPSEEK) {
		read_deepseek(&r, m);
	}
	if (json_object_get(o, "sliding_window") && !json_is_null(json_object_get(o,
									   "sliding_window")) &&
	    bool_field(&r, "use_sliding_window", a != ARCH_LLAMA || strcmp(mt, "mistral") == 0))
		warn(m, "sliding_window: attention over a window is costed as full causal attention");
	if (json_object_get(o, "rope_scaling") && !json_is_null(json_object_get(o, "rope_scaling")))
		warn(m, "rope_scaling: a context extension; capsim costs RoPE the same either way");
	warn_unknown_keys(o, m);
	if (!r.bad && m->heads && m->hidden % m->heads && !m->head_dim) {
		capsim_diags_add(d, file, 0, "hidden_size %ld is not a multiple of num_attention_heads "
				 "%ld, and no head_dim is given", m->hidden, m->heads);
		r.bad = 1;
	}
	json_decref(o);
	return r.bad ? -1 : 0;
}

int capsim_hf_write(const capsim_hf_model *m, const char *id, const char *file,
		    const char *sha256, FILE *out)
{
	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		     "<!-- written by capsim import hf from ");
	capsim_xml_comment_escape(out, file);
	fprintf(out, " (SHA-256 %s) -->\n<models>\n  <model id=\"", sha256);
	capsim_xml_escape(out, id);
	fprintf(out, "\" name=\"");
	capsim_xml_escape(out, id);
	fprintf(out, "\" family=\"");
	capsim_xml_escape(out, m->family);
	fprintf(out, "\"\n         assumption=\"read from a Hugging Face config (model_type ");
	capsim_xml_escape(out, m->model_type);
	fprintf(out, ", SHA-256 %.16s) by capsim import hf\">\n", sha256);
	fprintf(out, "    <architecture layers=\"%ld\" hidden=\"%ld\" heads=\"%ld\" kv-heads=\"%ld\"",
		m->layers, m->hidden, m->heads, m->kv_heads);
	if (m->head_dim)
		fprintf(out, " head-dim=\"%ld\"", m->head_dim);
	fprintf(out, "\n                  ffn=\"%ld\" activation=\"%s\" vocab=\"%ld\" "
		     "max-seq-len=\"%ld\"\n                  norm=\"%s\" position=\"%s\" "
		     "tied-embeddings=\"%s\"/>\n", m->ffn, m->activation, m->vocab, m->max_seq_len,
		m->norm, m->position, m->tied_embeddings ? "true" : "false");
	if (m->moe_experts)
		fprintf(out, "    <moe experts=\"%ld\" top-k=\"%ld\" shared-experts=\"%ld\" "
			     "expert-ffn=\"%ld\" dense-layers=\"%ld\"/>\n", m->moe_experts,
			m->moe_top_k, m->moe_shared_experts, m->moe_expert_ffn, m->moe_dense_layers);
	if (m->mla_kv_lora_rank) {
		fprintf(out, "    <mla");
		if (m->mla_q_lora_rank)
			fprintf(out, " q-lora-rank=\"%ld\"", m->mla_q_lora_rank);
		fprintf(out, " kv-lora-rank=\"%ld\" qk-nope-head-dim=\"%ld\" qk-rope-head-dim=\"%ld\" "
			     "v-head-dim=\"%ld\"/>\n", m->mla_kv_lora_rank, m->mla_qk_nope_head_dim,
			m->mla_qk_rope_head_dim, m->mla_v_head_dim);
	}
	for (int i = 0; i < m->n_warnings; i++) {
		fprintf(out, "    <!-- not modelled: ");
		capsim_xml_comment_escape(out, m->warnings[i]);
		fprintf(out, " -->\n");
	}
	fprintf(out, "  </model>\n</models>\n");
	return ferror(out) ? -1 : 0;
}
