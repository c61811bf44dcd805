/* hf.h - a Hugging Face model config (config.json, as transformers writes
 * it) read into a capsim model entry: the architecture (layers, hidden,
 * heads, KV heads, head dimension, FFN size and activation, vocabulary,
 * maximum positions, norm, position encoding, tied embeddings), the MoE
 * block (routed and shared experts, top-k, expert FFN, leading dense
 * layers) and MLA's dimensions where present. Families: Llama, Mistral,
 * Mixtral, Qwen2/Qwen3 (and their MoE), DeepSeek V2/V3, GPT-2, GPT-NeoX,
 * Gemma/Gemma 2. What a capsim model cannot say is a warning, never
 * dropped in silence. */
#ifndef CAPSIM_HF_H
#define CAPSIM_HF_H

#include <stddef.h>
#include <stdio.h>

#include "diag.h"

#define CAPSIM_HF_WARNINGS 32
/* The keys capsim neither reads nor knows to ignore that are named one by
 * one; the rest are counted ("and N more keys"). */
#define CAPSIM_HF_KEYS_LISTED 12
/* The largest config read: that of every input file (CAPSIM_XML_MAX_BYTES). */
#define CAPSIM_HF_MAX_BYTES (8u << 20)

typedef struct capsim_hf_model {
	char model_type[64];         /* the config's, as given */
	char family[32];             /* capsim's family name for it */
	long layers, hidden, heads, kv_heads, head_dim, ffn, vocab, max_seq_len;
	const char *activation;      /* gelu, swiglu, relu */
	const char *norm;            /* layernorm, rmsnorm */
	const char *position;        /* learned, rope, alibi */
	int tied_embeddings;
	long moe_experts, moe_top_k, moe_shared_experts, moe_expert_ffn, moe_dense_layers;
	long mla_q_lora_rank, mla_kv_lora_rank, mla_qk_nope_head_dim, mla_qk_rope_head_dim,
	     mla_v_head_dim;
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

#endif
