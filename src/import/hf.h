/* hf.h - a Hugging Face model config (config.json, as transformers writes
 * it) read into a capsim model entry: the architecture (layers, hidden,
 * heads, KV heads, head dimension, FFN size and activation, vocabulary,
 * maximum positions, norm, position encoding, tied embeddings), the MoE
 * block (routed and shared experts, top-k, expert FFN, leading dense
 * layers) and MLA's dimensions where present. Families, by model_type or,
 * where that is not one capsim knows, by the class the config's
 * architectures field names (Kimi-K2: DeepseekV3ForCausalLM): Llama,
 * Mistral, Mixtral, Qwen2/Qwen3 (and their MoE), DeepSeek V2/V3 (and
 * Kimi-K2), GPT-2, GPT-NeoX, Gemma 1/2/3 (Gemma 3's language model out of
 * its multimodal config), Phi-3/3.5/4 and Phi-3.5-MoE, OLMo and OLMo-2,
 * gpt-oss, Nemotron (and Nemotron-NAS where every layer has one shape),
 * MiMo, Granite, StarCoder2. The attention variants (sliding windows,
 * attention sinks, QK-norm, logit soft-capping) are recorded. What a
 * capsim model cannot say is a warning, never dropped in silence. */
#ifndef CAPSIM_HF_H
#define CAPSIM_HF_H

#include <stddef.h>
#include <stdio.h>

#include "diag.h"

#define CAPSIM_HF_WARNINGS 48
/* The keys capsim neither reads nor knows to ignore that are named one by
 * one; the rest are counted ("and N more keys"). */
#define CAPSIM_HF_KEYS_LISTED 12
/* The largest config read: that of every input file (CAPSIM_XML_MAX_BYTES). */
#define CAPSIM_HF_MAX_BYTES (8u << 20)

typedef struct capsim_hf_model {
	char model_type[64];         /* the config's, as given */
	char family[32];             /* capsim's family name for it */
	char read_as[64];            /* the architectures class it was read by, where
				      * model_type is not one capsim knows; else "" */
	long layers, hidden, heads, kv_heads, head_dim, ffn, vocab, max_seq_len;
	const char *activation;      /* gelu, swiglu, relu */
	const char *norm;            /* layernorm, rmsnorm */
	const char *position;        /* learned, rope, alibi */
	int tied_embeddings;
	long moe_experts, moe_top_k, moe_shared_experts, moe_expert_ffn, moe_dense_layers;
	long mla_q_lora_rank, mla_kv_lora_rank, mla_qk_nope_head_dim, mla_qk_rope_head_dim,
	     mla_v_head_dim;
	/* attention variants: the window of sliding-window attention (0: none)
	 * and how many layers have it; QK-norm (a norm on each head's queries
	 * and keys); attention sinks (a learned logit per head, gpt-oss);
	 * tanh soft-capping of the attention and final logits (0: none) */
	long sliding_window, sliding_layers;
	long global_every;           /* every Nth layer global (0: all windowed) */
	int window_modelled;         /* the layers' pattern one a capsim model says */
	int qk_norm, attn_sinks;
	double attn_softcap, final_softcap;
	int vision_left_out;         /* a multimodal config: its vision tower left out */
	char warnings[CAPSIM_HF_WARNINGS][200];
	int n_warnings;
} capsim_hf_model;

/* Read text (len bytes of file) into *m (zeroed first). Returns 0, or -1
 * with the reason in d: larger than CAPSIM_HF_MAX_BYTES, not JSON (with its
 * line), an architecture capsim does not know (model_type named, the known
 * ones listed), or a field that is missing or of the wrong type (named:
 * "num_attention_heads: expected a positive whole number, found a string";
 * a size of 0, an activation that is not a string). */
int capsim_hf_read(const char *text, size_t len, const char *file, capsim_hf_model *m,
		   capsim_diags *d);

/* Write m as a models file of one entry: id (a catalog id), its name for
 * people, and as its provenance the file it came from with its SHA-256.
 * Every text from the input is escaped for where it goes (an attribute, a
 * comment: capsim_xml_escape, capsim_xml_comment_escape). Returns 0, or -1
 * on a write error. */
int capsim_hf_write(const capsim_hf_model *m, const char *id, const char *file,
		    const char *sha256, FILE *out);

struct json_t;
/* m as a JSON object (a new reference; the caller's to free): its id,
 * family, model_type, the architectures class it was read by (or null),
 * the parameter count and that active per token (params, active: the
 * imported entry's, capsim_model_params), the architecture, MoE and MLA
 * fields (null where it has none), the attention variants and every
 * warning, in order, under not_modelled. */
struct json_t *capsim_hf_json(const capsim_hf_model *m, const char *id, double params,
			      double active);

#endif
