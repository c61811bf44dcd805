/* hf.c - Hugging Face model configs into capsim model entries; see hf.h.
 * Field names are transformers' own (configuration_*.py of each family). */
#include "hf.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "check.h"
#include "escape.h"
#include "xalloc.h"

typedef enum { ARCH_LLAMA, ARCH_MIXTRAL, ARCH_QWEN_MOE, ARCH_DEEPSEEK, ARCH_GPT2, ARCH_NEOX,
	       ARCH_GEMMA, ARCH_GPT_OSS, ARCH_NEMOTRON, ARCH_NAS } arch;

/* what a family has beside its arch: LayerNorm where the arch has RMSNorm
 * (OLMo's, Phi-3.5-MoE's); QK-norm (Qwen3, OLMo-2, Gemma 3); the language
 * model inside a multimodal config's text_config (Gemma 3); a sliding
 * window where sliding_window is given (F_WINDOW), or only with
 * use_sliding_window (Qwen's, F_WINDOW_OPT_IN); other families' modelling
 * code ignores the key, as capsim does */
enum { F_LAYERNORM = 1, F_QK_NORM = 2, F_TEXT_CONFIG = 4, F_WINDOW_OPT_IN = 8, F_WINDOW = 16 };

static const struct {
	const char *model_type;
	const char *cls; /* the class the config's architectures field names */
	arch a;
	const char *family;
	int flags;
} archs[] = {
	{ "llama", "LlamaForCausalLM", ARCH_LLAMA, "llama", 0 },
	{ "mistral", "MistralForCausalLM", ARCH_LLAMA, "mistral", F_WINDOW },
	{ "qwen2", "Qwen2ForCausalLM", ARCH_LLAMA, "qwen2", F_WINDOW_OPT_IN },
	{ "qwen3", "Qwen3ForCausalLM", ARCH_LLAMA, "qwen3", F_QK_NORM | F_WINDOW_OPT_IN },
	{ "mixtral", "MixtralForCausalLM", ARCH_MIXTRAL, "mixtral", F_WINDOW },
	{ "qwen2_moe", "Qwen2MoeForCausalLM", ARCH_QWEN_MOE, "qwen2-moe", F_WINDOW_OPT_IN },
	{ "qwen3_moe", "Qwen3MoeForCausalLM", ARCH_QWEN_MOE, "qwen3-moe",
	  F_QK_NORM | F_WINDOW_OPT_IN },
	{ "deepseek_v2", "DeepseekV2ForCausalLM", ARCH_DEEPSEEK, "deepseek-v2", 0 },
	{ "deepseek_v3", "DeepseekV3ForCausalLM", ARCH_DEEPSEEK, "deepseek-v3", 0 },
	{ "gpt2", "GPT2LMHeadModel", ARCH_GPT2, "gpt2", 0 },
	{ "gpt_neox", "GPTNeoXForCausalLM", ARCH_NEOX, "gpt-neox", 0 },
	{ "gemma", "GemmaForCausalLM", ARCH_GEMMA, "gemma", 0 },
	{ "gemma2", "Gemma2ForCausalLM", ARCH_GEMMA, "gemma2", F_WINDOW },
	{ "gemma3_text", "Gemma3ForCausalLM", ARCH_GEMMA, "gemma3", F_QK_NORM | F_WINDOW },
	{ "gemma3", "Gemma3ForConditionalGeneration", ARCH_GEMMA, "gemma3",
	  F_QK_NORM | F_TEXT_CONFIG | F_WINDOW },
	{ "phi3", "Phi3ForCausalLM", ARCH_LLAMA, "phi3", F_WINDOW },
	{ "phimoe", "PhiMoEForCausalLM", ARCH_MIXTRAL, "phimoe", F_LAYERNORM | F_WINDOW },
	{ "olmo", "OlmoForCausalLM", ARCH_LLAMA, "olmo", F_LAYERNORM },
	{ "olmo2", "Olmo2ForCausalLM", ARCH_LLAMA, "olmo2", F_QK_NORM },
	{ "gpt_oss", "GptOssForCausalLM", ARCH_GPT_OSS, "gpt-oss", F_WINDOW },
	{ "nemotron", "NemotronForCausalLM", ARCH_NEMOTRON, "nemotron", 0 },
	{ "nemotron-nas", "DeciLMForCausalLM", ARCH_NAS, "nemotron-nas", 0 },
	{ "mimo", "MiMoForCausalLM", ARCH_LLAMA, "mimo", F_WINDOW_OPT_IN },
	{ "granite", "GraniteForCausalLM", ARCH_LLAMA, "granite", 0 },
};
#define N_ARCHS (sizeof archs / sizeof archs[0])

/* Architectures known and refused: what in them a capsim model, of one
 * transformer layer shape repeated, cannot say */
static const struct {
	const char *model_type, *why;
} refused[] = {
	{ "nemotron_h", "a hybrid of Mamba-2 state-space layers and attention layers" },
	{ "jamba", "a hybrid of Mamba state-space layers and attention layers" },
	{ "falcon_h1", "Mamba-2 state-space heads beside attention in each layer" },
	{ "zamba2", "a hybrid of Mamba-2 state-space layers and shared attention blocks" },
	{ "mamba", "state-space (Mamba) layers, no attention" },
	{ "mamba2", "state-space (Mamba-2) layers, no attention" },
	{ "qwen3_next", "Gated DeltaNet linear-attention layers between its attention layers" },
	{ "gemma4", "layers that differ (its global layers' heads of global_head_dim with "
		    "num_global_key_value_heads, its sliding layers' of head_dim)" },
	{ "llama4", "layers that differ (chunked attention with RoPE, every fourth layer global "
		    "without it; Maverick's MoE and dense layers interleaved)" },
};

/* A field a family's config may leave out, and the default transformers
 * gives it there (configuration_gemma3.py, Gemma3TextConfig: Gemma 3's
 * multimodal configs give only what differs from it). Taken with a
 * warning that says so. */
static const struct {
	const char *family, *key;
	long value;
} defaults[] = {
	{ "gemma3", "num_hidden_layers", 26 },   { "gemma3", "hidden_size", 2304 },
	{ "gemma3", "intermediate_size", 9216 }, { "gemma3", "num_attention_heads", 8 },
	{ "gemma3", "num_key_value_heads", 4 },  { "gemma3", "head_dim", 256 },
	{ "gemma3", "vocab_size", 262208 },      { "gemma3", "max_position_embeddings", 131072 },
	{ "gemma3", "sliding_window", 4096 },    { "gemma3", "sliding_window_pattern", 6 },
};

typedef struct {
	json_t *o;               /* the object read: the config, or its text_config */
	const char *file;
	capsim_diags *d;
	int bad;
	capsim_hf_model *m;      /* for the warnings a default taken gives */
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
/* the default of the family's for a field it left out: 1 (*out set, and
 * said in a warning), 0 where it has none */
static int family_default(reader *r, const char *name, long *out)
{
	for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++)
		if (strcmp(defaults[i].family, r->m->family) == 0 &&
		    strcmp(defaults[i].key, name) == 0) {
			*out = defaults[i].value;
			warn(r->m, "%s: absent; the default transformers gives it for %s, %ld, "
			     "taken", name, r->m->family, *out);
			return 1;
		}
	return 0;
}

static int int_min_field(reader *r, const char *name, long *out, int required, long min)
{
	json_t *v = json_object_get(r->o, name);
	if (!v || json_is_null(v)) {
		if (family_default(r, name, out))
			return 1;
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
	if (strcmp(act, "relu2") == 0) {
		/* Nemotron's squared ReLU: an ungated MLP of two matrices */
		warn(m, "activation relu2 (squared ReLU) is modelled as relu: the same two "
		     "matrices and FLOPs; the elementwise function differs");
		return "relu";
	}
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
	"dtype", "layer_types", "sliding_window_pattern", "rope_local_base_freq",
	"experts_per_token", "swiglu_limit", "initial_context_length",
	"original_max_position_embeddings", "norm_eps", "block_configs", "text_config",
	"vision_config", "mm_tokens_per_image", "boi_token_index", "eoi_token_index",
	"image_token_index", "attention_multiplier", "embedding_multiplier", "logits_scaling",
	"residual_multiplier", "router_jitter_noise", "input_jitter_noise", "clip_qkv",
	"_name_or_path", "use_mrope", "use_qk_norm",
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
		if (a != ARCH_NAS) /* Nemotron-NAS: each layer's block gives its FFN */
			int_field(r, "intermediate_size", &m->ffn, 1);
	}
	if (int_field(r, "num_key_value_heads", &m->kv_heads, 0) == 0)
		m->kv_heads = m->heads;
	int_field(r, "head_dim", &m->head_dim, 0);
}

/* text with Python's JSON extensions (NaN, Infinity, -Infinity: what its
 * json module writes for such floats, and some configs hold) outside
 * strings as null: a new string (the caller's to free) and *n the number
 * replaced; lines stay where they were */
static char *python_floats_as_null(const char *text, size_t len, size_t *out_len, long *n)
{
	static const char *const words[] = { "-Infinity", "Infinity", "NaN" };
	char *out = capsim_xmalloc(2 * len + 1); /* "NaN" (3 bytes) becomes "null" (4) */
	size_t k = 0;
	int in_string = 0;
	*n = 0;
	for (size_t i = 0; i < len;) {
		char ch = text[i];
		if (in_string) {
			out[k++] = text[i++];
			if (ch == '\\' && i < len)
				out[k++] = text[i++];
			else if (ch == '"')
				in_string = 0;
			continue;
		}
		size_t w = 0;
		for (size_t j = 0; j < 3 && !w; j++)
			if (len - i >= strlen(words[j]) &&
			    memcmp(text + i, words[j], strlen(words[j])) == 0)
				w = strlen(words[j]);
		if (w) {
			memcpy(out + k, "null", 4);
			k += 4;
			i += w;
			++*n;
			continue;
		}
		in_string = ch == '"';
		out[k++] = text[i++];
	}
	out[k] = '\0';
	*out_len = k;
	return out;
}

/* text parsed as one JSON object, or NULL with the reason in d; *python
 * the NaN and Infinity values read as null */
static json_t *parse_object(const char *text, size_t len, const char *file, capsim_diags *d,
			    long *python)
{
	if (len > CAPSIM_HF_MAX_BYTES) {
		capsim_diags_add(d, file, 0, "%zu bytes: larger than the %u-byte (8 MiB) cap on "
				 "input files", len, CAPSIM_HF_MAX_BYTES);
		return NULL;
	}
	json_error_t je;
	json_t *o = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	*python = 0;
	if (!o) {
		size_t plen;
		char *plain = python_floats_as_null(text, len, &plen, python);
		if (*python)
			o = json_loadb(plain, plen, JSON_REJECT_DUPLICATES, NULL);
		free(plain);
	}
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

/* the row of archs whose class the architectures field names (its first
 * such), or -1; *cls the class found */
static int arch_of_class(reader *r, const char **cls)
{
	json_t *v = json_object_get(r->o, "architectures");
	if (!v || json_is_null(v))
		return -1;
	if (!json_is_array(v)) {
		capsim_diags_add(r->d, r->file, 0, "architectures: expected an array of class "
				 "names, found %s", kind_of(v));
		r->bad = 1;
		return -1;
	}
	size_t i;
	json_t *e;
	json_array_foreach(v, i, e) {
		if (!json_is_string(e))
			continue;
		for (size_t k = 0; k < N_ARCHS; k++)
			if (strcmp(archs[k].cls, json_string_value(e)) == 0) {
				*cls = archs[k].cls;
				return (int)k;
			}
	}
	return -1;
}

/* The row of archs that model_type names, else that the architectures
 * field's class does (Kimi-K2: model_type kimi_k2, a DeepseekV3ForCausalLM;
 * m->read_as says so), or -1 with the reason in d */
static int find_arch(reader *r, capsim_hf_model *m)
{
	const char *mt = str_field(r, "model_type");
	if (r->bad)
		return -1;
	for (size_t i = 0; mt && i < N_ARCHS; i++)
		if (strcmp(archs[i].model_type, mt) == 0)
			return (int)i;
	const char *cls = NULL;
	int found = arch_of_class(r, &cls);
	if (r->bad)
		return -1;
	if (found >= 0) {
		capsim_strlcpy(m->read_as, cls, sizeof m->read_as);
		warn(m, "model_type %.64s is not one capsim knows by name: read as %s (its "
		     "architectures field), the %s architecture", mt ? mt : "(absent)", cls,
		     archs[found].model_type);
		return found;
	}
	for (size_t i = 0; mt && i < sizeof refused / sizeof refused[0]; i++)
		if (strcmp(refused[i].model_type, mt) == 0) {
			capsim_diags_add(r->d, r->file, 0, "model_type '%s': %s: a capsim model "
					 "repeats one transformer layer, so it cannot be imported",
					 mt, refused[i].why);
			return -1;
		}
	if (!mt) {
		capsim_diags_add(r->d, r->file, 0, "model_type: missing, and no class in "
				 "architectures that capsim reads (a Hugging Face config names its "
				 "architecture there)");
		return -1;
	}
	char list[640] = "";
	for (size_t i = 0; i < N_ARCHS; i++) {
		size_t l = strlen(list);
		snprintf(list + l, sizeof list - l, "%s%s", i ? ", " : "", archs[i].model_type);
	}
	capsim_diags_add(r->d, r->file, 0, "model_type: '%.64s%s' is not an architecture capsim "
			 "reads (%s), nor is any class its architectures field names", mt,
			 strlen(mt) > 64 ? "..." : "", list);
	return -1;
}

/* the activation, norm, position and tied embeddings of architecture a
 * (flags: the family's, F_LAYERNORM) */
static void read_layer_kind(reader *r, capsim_hf_model *m, arch a, int flags)
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
	case ARCH_NEMOTRON:
		/* an ungated squared-ReLU MLP; LayerNorm1P (a LayerNorm whose weight
		 * is stored less one) */
		m->activation = activation_of(m, act ? act : "relu2", 0);
		m->norm = "layernorm";
		m->position = "rope";
		m->tied_embeddings = bool_field(r, "tie_word_embeddings", 0);
		break;
	default:
		m->activation = activation_of(m, act, 1);
		m->norm = "rmsnorm";
		m->position = "rope";
		m->tied_embeddings = bool_field(r, "tie_word_embeddings", 0);
		break;
	}
	if (flags & F_LAYERNORM)
		m->norm = "layernorm";
	double part;
	if (num_field(r, "partial_rotary_factor", &part) == 1 && part < 1.0)
		warn(m, "partial_rotary_factor %.3g: rotary on part of each head; capsim's cost of "
		     "RoPE is the same either way", part);
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
}

/* gpt-oss's MoE: every layer's MLP is experts of intermediate_size, with a
 * router; no shared expert */
static void read_gpt_oss(reader *r, capsim_hf_model *m)
{
	int_field(r, "num_local_experts", &m->moe_experts, 1);
	if (int_field(r, "num_experts_per_tok", &m->moe_top_k, 0) == 0)
		int_field(r, "experts_per_token", &m->moe_top_k, 1);
	m->moe_expert_ffn = m->ffn;
	/* transformers' GptOssAttention: a learned sink logit per head */
	m->attn_sinks = 1;
	warn(m, "attention sinks: a learned logit per head joins each softmax; not modelled "
	     "(elementwise work beside the attention's matmuls, %ld parameters a layer)",
	     m->heads);
}

/* transformers' FFN size of a Nemotron-NAS block (_ffn_mult_to_intermediate_size):
 * 2/3 of ffn_mult x hidden, rounded up to a multiple of 256 */
static long nas_ffn(double mult, long hidden)
{
	long n = (long)(2.0 * mult * (double)hidden / 3.0);
	return n % 256 ? n + 256 - n % 256 : n;
}

/* how a Nemotron-NAS config's blocks differ from its first full block */
typedef struct {
	long attn_skip, attn_linear, attn_other, ffn_skip, ffn_linear, ffn_other;
	long groups;   /* query heads per KV head of the first full attention */
	double mult;   /* ffn_mult of the first full FFN */
} nas_blocks;

/* one half of a block (attention or ffn): 1 skipped (no_op), 2 replaced by a
 * linear layer, 0 a full one with its size in *v (n_heads_in_group or
 * ffn_mult), -1 malformed (said in r) */
static int nas_half(reader *r, json_t *block, size_t i, const char *half, const char *size_key,
		    double *v)
{
	json_t *h = json_is_object(block) ? json_object_get(block, half) : NULL;
	if (!json_is_object(h)) {
		capsim_diags_add(r->d, r->file, 0, "block_configs[%zu].%s: expected an object, "
				 "found %s", i, half, h ? kind_of(h) : "nothing");
		r->bad = 1;
		return -1;
	}
	if (json_is_true(json_object_get(h, "no_op")))
		return 1;
	if (json_is_true(json_object_get(h, "replace_with_linear")))
		return 2;
	json_t *x = json_object_get(h, size_key);
	if (!json_is_number(x) || !(json_number_value(x) > 0.0)) {
		capsim_diags_add(r->d, r->file, 0, "block_configs[%zu].%s.%s: expected a positive "
				 "number, found %s", i, half, size_key, x ? kind_of(x) : "nothing");
		r->bad = 1;
		return -1;
	}
	*v = json_number_value(x);
	return 0;
}

/* Nemotron-NAS (DeciLM): block_configs gives each layer its attention (query
 * heads per KV head, or none, or a linear layer) and its FFN (a multiple of
 * the hidden size, or none, or a linear layer). A capsim model gives every
 * layer one shape: the config is read where every block is the same full
 * block, and refused, saying how its layers differ, where they differ. */
static void read_nas(reader *r, capsim_hf_model *m)
{
	json_t *b = json_object_get(r->o, "block_configs");
	if (!json_is_array(b) || json_array_size(b) == 0) {
		capsim_diags_add(r->d, r->file, 0, "block_configs: expected an array of the "
				 "layers' blocks, found %s", b ? kind_of(b) : "nothing");
		r->bad = 1;
		return;
	}
	nas_blocks n = { .groups = 0, .mult = 0.0 };
	size_t i;
	json_t *e;
	json_array_foreach(b, i, e) {
		double g = 0.0, mult = 0.0;
		int at = nas_half(r, e, i, "attention", "n_heads_in_group", &g);
		int ff = nas_half(r, e, i, "ffn", "ffn_mult", &mult);
		if (at < 0 || ff < 0)
			return;
		n.attn_skip += at == 1;
		n.attn_linear += at == 2;
		n.ffn_skip += ff == 1;
		n.ffn_linear += ff == 2;
		if (at == 0 && !n.groups)
			n.groups = (long)g;
		else if (at == 0)
			n.attn_other += (long)g != n.groups;
		if (ff == 0 && n.mult == 0.0)
			n.mult = mult;
		else if (ff == 0)
			n.ffn_other += mult != n.mult;
	}
	long blocks = (long)json_array_size(b);
	if (blocks != m->layers || n.attn_skip || n.attn_linear || n.attn_other || n.ffn_skip ||
	    n.ffn_linear || n.ffn_other || !n.groups || m->heads % n.groups) {
		capsim_diags_add(r->d, r->file, 0, "block_configs: the layers differ (%ld "
				 "blocks for %ld layers; attention: %ld skipped, %ld a linear "
				 "layer, %ld of another KV grouping; FFN: %ld skipped, %ld a "
				 "linear layer, %ld of another size): a capsim model gives every "
				 "layer one shape, so this heterogeneous model cannot be imported",
				 blocks, m->layers, n.attn_skip, n.attn_linear, n.attn_other,
				 n.ffn_skip, n.ffn_linear, n.ffn_other);
		r->bad = 1;
		return;
	}
	m->kv_heads = m->heads / n.groups;
	m->ffn = nas_ffn(n.mult, m->hidden);
}

/* the layers of a sliding window, by the family's rule where layer_types
 * does not list them: Gemma 2 every other layer from the first, Gemma 3
 * all but every sliding_window_pattern-th, Qwen's those from
 * max_window_layers on, the rest every layer */
static long window_layers_by_rule(reader *r, const capsim_hf_model *m, const char *mt,
				  int flags)
{
	if (strcmp(mt, "gemma2") == 0)
		return (m->layers + 1) / 2;
	if (strcmp(m->family, "gemma3") == 0) {
		long pattern = 6;
		int_field(r, "sliding_window_pattern", &pattern, 0);
		return m->layers - m->layers / pattern;
	}
	long from = 0;
	if ((flags & F_WINDOW_OPT_IN) && int_min_field(r, "max_window_layers", &from, 0, 0) == 1)
		return from < m->layers ? m->layers - from : 0;
	return m->layers;
}

/* the N of a layer_types list whose global layers are every Nth (counted
 * from 1), 0 where every layer is windowed, -1 where it is another pattern */
static long global_every_of(json_t *types)
{
	size_t n = json_array_size(types), i;
	long every = 0;
	json_t *t;
	json_array_foreach(types, i, t) {
		int sliding = json_is_string(t) &&
			      strcmp(json_string_value(t), "sliding_attention") == 0;
		if (!sliding) {
			every = (long)i + 1;
			break;
		}
	}
	for (i = 0; every && i < n; i++) {
		t = json_array_get(types, i);
		int sliding = json_is_string(t) &&
			      strcmp(json_string_value(t), "sliding_attention") == 0;
		if (sliding == ((long)(i + 1) % every == 0))
			return -1;
	}
	return every;
}

/* the window and how many layers attend within it (m->sliding_window,
 * m->sliding_layers): layer_types where the config lists each layer's
 * kind, else the family's rule; m->global_every where the pattern is one a
 * capsim model says (every Nth layer global), else said not modelled */
static void read_window(reader *r, capsim_hf_model *m, const char *mt, int flags)
{
	if (!(flags & (F_WINDOW | F_WINDOW_OPT_IN)))
		return;
	if ((flags & F_WINDOW_OPT_IN) && !bool_field(r, "use_sliding_window", 0))
		return;
	long window = 0;
	if (int_field(r, "sliding_window", &window, 0) != 1)
		return;
	json_t *types = json_object_get(r->o, "layer_types");
	long layers = 0, every = -1;
	if (json_is_array(types)) {
		size_t i;
		json_t *t;
		json_array_foreach(types, i, t)
			layers += json_is_string(t) && strcmp(json_string_value(t),
							      "sliding_attention") == 0;
		if ((long)json_array_size(types) == m->layers)
			every = global_every_of(types);
	} else {
		layers = window_layers_by_rule(r, m, mt, flags);
		/* Gemma 2 alternates from a windowed first layer; Gemma 3 has one
		 * global layer in sliding_window_pattern; Qwen's windowed layers
		 * are the last ones (from max_window_layers), another pattern */
		every = layers == m->layers ? 0 : strcmp(mt, "gemma2") == 0 ? 2 :
			m->layers - layers > 0 && strcmp(m->family, "gemma3") == 0 ?
			m->layers / (m->layers - layers) : -1;
		if (every > 0 && m->layers - m->layers / every != layers)
			every = -1;
	}
	if (!layers)
		return;
	m->sliding_window = window;
	m->sliding_layers = layers;
	if (every >= 0) {
		m->global_every = every;
		m->window_modelled = 1;
		return;
	}
	warn(m, "sliding_window %ld on %ld of %ld layers in a pattern capsim's model does not say "
	     "(it says every Nth layer global): attention costed as full causal attention (an "
	     "upper bound on its FLOPs)", window, layers, m->layers);
}

/* the attention variants (sliding window, QK-norm, logit soft-capping) and
 * a multi-token-prediction module: recorded in m, and each said not
 * modelled */
static void read_variants(reader *r, capsim_hf_model *m, const char *mt, int flags)
{
	read_window(r, m, mt, flags);
	double cap;
	if (num_field(r, "attn_logit_softcapping", &cap) == 1 && cap > 0.0) {
		m->attn_softcap = cap;
		warn(m, "attn_logit_softcapping %g: tanh soft-capping of the attention logits is "
		     "not modelled (elementwise work beside the attention's matmuls)", cap);
	}
	if (num_field(r, "final_logit_softcapping", &cap) == 1 && cap > 0.0) {
		m->final_softcap = cap;
		warn(m, "final_logit_softcapping %g: tanh soft-capping of the output logits is not "
		     "modelled (elementwise work on the logits)", cap);
	}
	if ((flags & F_QK_NORM) || bool_field(r, "use_qk_norm", 0)) {
		m->qk_norm = 1;
		warn(m, "QK-norm: a norm on each head's queries and keys; its parameters and "
		     "elementwise work are not modelled (both under 0.1%% of the layer's)");
	}
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

/* a multimodal config (Gemma 3's): r reads its text_config, the language
 * model; the vision tower is said to be left out. 0, or -1 (said in d) */
static int enter_text_config(reader *r, capsim_hf_model *m)
{
	json_t *t = json_object_get(r->o, "text_config");
	if (!json_is_object(t)) {
		capsim_diags_add(r->d, r->file, 0, "text_config: expected the language model's "
				 "config (an object), found %s", t ? kind_of(t) : "nothing");
		r->bad = 1;
		return -1;
	}
	if (json_object_get(r->o, "vision_config")) {
		m->vision_left_out = 1;
		warn(m, "vision_config: the vision tower and its projector are not modelled: the "
		     "language model (text_config) is imported alone");
	}
	r->o = t;
	return 0;
}

/* the architecture's own block: experts, MLA, Nemotron-NAS's layers */
static void read_arch_block(reader *r, capsim_hf_model *m, arch a)
{
	switch (a) {
	case ARCH_MIXTRAL:
		int_field(r, "num_local_experts", &m->moe_experts, 1);
		int_field(r, "num_experts_per_tok", &m->moe_top_k, 1);
		m->moe_expert_ffn = m->ffn;
		break;
	case ARCH_QWEN_MOE: read_qwen_moe(r, m); break;
	case ARCH_DEEPSEEK: read_deepseek(r, m); break;
	case ARCH_GPT_OSS: read_gpt_oss(r, m); break;
	case ARCH_NAS:
		if (!r->bad)
			read_nas(r, m);
		break;
	default: break;
	}
}

int capsim_hf_read(const char *text, size_t len, const char *file, capsim_hf_model *m,
		   capsim_diags *d)
{
	memset(m, 0, sizeof *m);
	long python = 0;
	json_t *o = parse_object(text, len, file, d, &python);
	if (!o)
		return -1;
	if (python)
		warn(m, "%ld NaN or Infinity values (Python's JSON extension): read as null",
		     python);
	reader r = { o, file, d, 0, m };
	int found = find_arch(&r, m);
	if (found < 0) {
		json_decref(o);
		return -1;
	}
	const char *mt = archs[found].model_type;
	arch a = archs[found].a;
	int flags = archs[found].flags;
	json_t *mto = json_object_get(o, "model_type");
	capsim_strlcpy(m->model_type, json_is_string(mto) ? json_string_value(mto) : mt,
		       sizeof m->model_type);
	capsim_strlcpy(m->family, archs[found].family, sizeof m->family);
	if ((flags & F_TEXT_CONFIG) && enter_text_config(&r, m) < 0) {
		json_decref(o);
		return -1;
	}
	read_common(&r, m, a);
	read_layer_kind(&r, m, a, flags);
	read_arch_block(&r, m, a);
	read_variants(&r, m, mt, flags);
	if (json_object_get(r.o, "rope_scaling") && !json_is_null(json_object_get(r.o,
										  "rope_scaling")))
		warn(m, "rope_scaling: a context extension; capsim costs RoPE the same either way");
	warn_unknown_keys(o, m);
	if (r.o != o)
		warn_unknown_keys(r.o, m);
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
		     "tied-embeddings=\"%s\"", m->ffn, m->activation, m->vocab, m->max_seq_len,
		m->norm, m->position, m->tied_embeddings ? "true" : "false");
	if (m->window_modelled)
		fprintf(out, "\n                  sliding-window=\"%ld\" global-every=\"%ld\"",
			m->sliding_window, m->global_every);
	fprintf(out, "/>\n");
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

/* the architecture's fields, as the models file gives them */
static json_t *architecture_json(const capsim_hf_model *m)
{
	return json_pack("{sI sI sI sI sI sI ss sI sI ss ss sb}", "layers", (json_int_t)m->layers,
			 "hidden", (json_int_t)m->hidden, "heads", (json_int_t)m->heads,
			 "kv_heads", (json_int_t)m->kv_heads, "head_dim",
			 (json_int_t)(m->head_dim ? m->head_dim : m->hidden / m->heads), "ffn",
			 (json_int_t)m->ffn, "activation", m->activation, "vocab",
			 (json_int_t)m->vocab, "max_seq_len", (json_int_t)m->max_seq_len, "norm",
			 m->norm, "position", m->position, "tied_embeddings", m->tied_embeddings);
}

static json_t *moe_json(const capsim_hf_model *m)
{
	if (!m->moe_experts)
		return json_null();
	return json_pack("{sI sI sI sI sI}", "experts", (json_int_t)m->moe_experts, "top_k",
			 (json_int_t)m->moe_top_k, "shared_experts",
			 (json_int_t)m->moe_shared_experts, "expert_ffn",
			 (json_int_t)m->moe_expert_ffn, "dense_layers",
			 (json_int_t)m->moe_dense_layers);
}

static json_t *mla_json(const capsim_hf_model *m)
{
	if (!m->mla_kv_lora_rank)
		return json_null();
	return json_pack("{sI sI sI sI sI}", "q_lora_rank", (json_int_t)m->mla_q_lora_rank,
			 "kv_lora_rank", (json_int_t)m->mla_kv_lora_rank, "qk_nope_head_dim",
			 (json_int_t)m->mla_qk_nope_head_dim, "qk_rope_head_dim",
			 (json_int_t)m->mla_qk_rope_head_dim, "v_head_dim",
			 (json_int_t)m->mla_v_head_dim);
}

/* the attention variants: 0 / false where the model has none */
static json_t *attention_json(const capsim_hf_model *m)
{
	return json_pack("{sI sI sI sb sb sb sf sf}", "sliding_window",
			 (json_int_t)m->sliding_window, "sliding_layers",
			 (json_int_t)m->sliding_layers, "global_every", (json_int_t)m->global_every,
			 "window_modelled", m->window_modelled, "qk_norm", m->qk_norm,
			 "attention_sinks", m->attn_sinks, "attn_logit_softcapping",
			 m->attn_softcap, "final_logit_softcapping", m->final_softcap);
}

json_t *capsim_hf_json(const capsim_hf_model *m, const char *id, double params, double active)
{
	json_t *o = json_object();
	json_object_set_new(o, "id", json_string(id));
	json_object_set_new(o, "family", json_string(m->family));
	json_object_set_new(o, "model_type", json_string(m->model_type));
	json_object_set_new(o, "read_as", m->read_as[0] ? json_string(m->read_as) : json_null());
	json_object_set_new(o, "parameters", json_integer((json_int_t)llround(params)));
	json_object_set_new(o, "active_parameters", json_integer((json_int_t)llround(active)));
	json_object_set_new(o, "architecture", architecture_json(m));
	json_object_set_new(o, "moe", moe_json(m));
	json_object_set_new(o, "mla", mla_json(m));
	json_object_set_new(o, "attention", attention_json(m));
	json_object_set_new(o, "vision_left_out", json_boolean(m->vision_left_out));
	json_t *w = json_array();
	for (int i = 0; i < m->n_warnings; i++)
		json_array_append_new(w, json_string(m->warnings[i]));
	json_object_set_new(o, "not_modelled", w);
	return o;
}
