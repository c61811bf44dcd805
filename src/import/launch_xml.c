/* launch_xml.c - a launch read (launch.c) written as capsim's files: the
 * scenario it describes, and the model entry its architecture flags give. */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "escape.h"
#include "launch.h"

/* the model flags a model entry needs: -1 after a diagnostic for each
 * missing one */
static int model_flags(const capsim_launch *l, const char *where, capsim_diags *d)
{
	static const struct {
		const char *flag;
		size_t off;
	} need[] = { { "--num-layers", offsetof(capsim_launch, layers) },
		     { "--hidden-size", offsetof(capsim_launch, hidden) },
		     { "--num-attention-heads", offsetof(capsim_launch, heads) },
		     { "--vocab-size (Megatron takes it from the tokenizer)",
		       offsetof(capsim_launch, vocab) } };
	int bad = 0;
	for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
		if (!*(const long *)((const char *)l + need[i].off)) {
			capsim_diags_add_at(d, where, "the model: %s is not in the launch; give it, or "
					    "--model ID", need[i].flag);
			bad = 1;
		}
	return bad ? -1 : 0;
}

int capsim_launch_model_text(const capsim_launch *l, const char *id, const char *where,
			     char **text, capsim_diags *d)
{
	*text = NULL;
	if (model_flags(l, where, d) < 0)
		return -1;
	/* Megatron's defaults: an FFN of 4h, or 8h/3 rounded up to 64 with SwiGLU */
	long ffn = l->ffn ? l->ffn : l->swiglu == 1 ? ((8 * l->hidden / 3 + 63) / 64) * 64 :
		   4 * l->hidden;
	size_t len = 0;
	FILE *f = open_memstream(text, &len);
	if (!f) {
		capsim_diags_add_runtime(d, NULL, "out of memory");
		return -1;
	}
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- written by capsim import from "
		   "a launch line's architecture flags -->\n<models>\n  <model id=\"");
	capsim_xml_escape(f, id);
	fprintf(f, "\" name=\"");
	capsim_xml_escape(f, id);
	fprintf(f, "\" family=\"megatron\"\n         assumption=\"the launch line's own "
		   "architecture (capsim import)\">\n");
	fprintf(f, "    <architecture layers=\"%ld\" hidden=\"%ld\" heads=\"%ld\" kv-heads=\"%ld\" "
		   "ffn=\"%ld\"\n                  activation=\"%s\" vocab=\"%ld\" max-seq-len=\"%ld\" "
		   "norm=\"%s\"\n                  position=\"%s\" tied-embeddings=\"%s\"/>\n",
		l->layers, l->hidden, l->heads, l->kv_heads ? l->kv_heads : l->heads, ffn,
		l->swiglu == 1 ? "swiglu" : "gelu", l->vocab,
		l->max_positions ? l->max_positions : l->seq_len, l->rmsnorm == 1 ? "rmsnorm" :
		"layernorm", l->rope == 1 ? "rope" : "learned", l->untied == 1 ? "false" : "true");
	if (l->experts)
		fprintf(f, "    <moe experts=\"%ld\" top-k=\"%ld\" shared-experts=\"0\" "
			   "expert-ffn=\"%ld\" dense-layers=\"0\"/>\n", l->experts,
			l->top_k ? l->top_k : 2, ffn);
	fprintf(f, "  </model>\n</models>\n");
	fclose(f);
	return 0;
}

/* What the scenario holds, worked out from the launch: the defaults
 * taken where it says nothing, and the batch and tokens it implies. */
typedef struct shape {
	long nodes, tp, pp, cp, mb, gb, v;
	long dp;       /* GPUs / (tp x pp x cp) */
	double tokens; /* 0: the launch gives no budget */
} shape;

/* l's shape on a node of node_gpus GPUs; -1 after a diagnostic for each
 * value that does not fit */
static int shape_of(const capsim_launch *l, const char *node_id, int node_gpus,
		    const char *where, shape *s, capsim_diags *d)
{
	size_t before = d->n;
	s->nodes = l->nodes ? l->nodes : 1;
	if (l->gpus_per_node && l->gpus_per_node != node_gpus)
		capsim_diags_add_at(d, where, "the launch runs %ld GPUs a node, node '%s' has %d; "
				    "give --node of that size", l->gpus_per_node, node_id, node_gpus);
	if (!l->seq_len)
		capsim_diags_add_at(d, where, "--seq-length (or model.encoder_seq_length): not in "
				    "the launch%s", l->config_elsewhere ? " (the config file it names "
				    "holds it, and capsim does not read that file)" : "");
	s->tp = l->tp ? l->tp : 1;
	s->pp = l->pp ? l->pp : 1;
	s->cp = l->cp ? l->cp : 1;
	s->mb = l->micro_batch ? l->micro_batch : 1;
	/* each value is at most CAPSIM_LAUNCH_MAX_WHOLE: products in double */
	long gpus = s->nodes * node_gpus;
	double split = (double)s->tp * (double)s->pp * (double)s->cp;
	long dp = s->dp = split <= (double)gpus ? gpus / (long)split : 1;
	double gbd = l->global_batch ? (double)l->global_batch : (double)s->mb * (double)dp;
	if (gbd > (double)CAPSIM_LAUNCH_MAX_WHOLE)
		capsim_diags_add_at(d, where, "the global batch (micro-batch %ld x data-parallel "
				    "%ld, no --global-batch-size given) is past %ld", s->mb, dp,
				    CAPSIM_LAUNCH_MAX_WHOLE);
	s->gb = gbd > (double)CAPSIM_LAUNCH_MAX_WHOLE ? 1 : (long)gbd;
	if (split > (double)gpus || gpus % (long)split)
		capsim_diags_add_at(d, where, "tp x pp x cp = %ld x %ld x %ld = %.0f does not divide "
				    "the launch's %ld GPUs (%ld node%s x %d)%s", s->tp, s->pp, s->cp,
				    split, gpus, s->nodes, s->nodes == 1 ? "" : "s", node_gpus,
				    l->nodes ? "" : ": the nodes are not in the launch (give them with "
				    "--env where the script reads them from its environment)");
	s->tokens = l->train_iters ? (double)l->train_iters * s->gb * l->seq_len :
		    l->train_samples ? (double)l->train_samples * l->seq_len : 0.0;
	s->v = l->vp_stages ? l->vp_stages :
	       l->vp_layers > 0 && l->layers ? l->layers / s->pp / l->vp_layers : 1;
	if (l->vp_layers > 0 && !l->layers)
		capsim_diags_add_at(d, where, "--num-layers-per-virtual-pipeline-stage needs "
				    "--num-layers");
	return d->n > before ? -1 : 0;
}

/* whether the launch is a LoRA fine-tune */
static int lora(const capsim_launch *l)
{
	return l->finetune && !strcmp(l->finetune, "lora");
}

/* the ZeRO stage: FSDP's sharding (Megatron-FSDP's strategy, ZeRO 3 where
 * --use-megatron-fsdp gives none: Megatron-LM's default in
 * megatron/training/arguments.py; PyTorch FSDP2's as its reader sets it,
 * ZeRO 3 where it sets none), else 1 with the distributed optimizer */
static int zero_of(const capsim_launch *l)
{
	if (l->megatron_fsdp || (l->framework && !strcmp(l->framework, "fsdp2")))
		return l->fsdp_zero >= 0 ? l->fsdp_zero : 3;
	return l->zero == 1 ? 1 : 0;
}

/* whether the launch trains in fp8 */
static int fp8(const capsim_launch *l)
{
	return l->dtype && strcmp(l->dtype, "fp8") == 0;
}

/* one line of what was assumed: prefixed, escaped for a comment where
 * comment is set */
static void assumed_line(FILE *f, const char *prefix, int comment, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void assumed_line(FILE *f, const char *prefix, int comment, const char *fmt, ...)
{
	char text[300];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	fputs(prefix, f);
	if (comment)
		capsim_xml_comment_escape(f, text);
	else
		fputs(text, f);
	fputc('\n', f);
}

/* what the scenario assumes where the launch does not say */
static void assumptions(FILE *f, const capsim_launch *l, const shape *s, const char *node_id,
			const char *prefix, int comment)
{
	if (!l->nodes)
		assumed_line(f, prefix, comment, "nodes: not in the launch; 1 assumed");
	if (!l->global_batch)
		assumed_line(f, prefix, comment, "global batch: not in the launch; micro-batch %ld x "
			     "data-parallel %ld = %ld assumed", s->mb, s->dp, s->gb);
	if (s->tokens <= 0)
		assumed_line(f, prefix, comment, "tokens: no train-iters or train-samples in the "
			     "launch; 1T assumed");
	if (l->finetune && !strcmp(l->finetune, "lora") && (!l->lora_rank || !l->lora_targets))
		assumed_line(f, prefix, comment, "LoRA: %s%s%s, NeMo's defaults for what the launch "
			     "does not give", l->lora_rank ? "" : "rank 32",
			     !l->lora_rank && !l->lora_targets ? " on " : "",
			     l->lora_targets ? "" : "the attention's QKV (capsim's attention targets)");
	if (l->fp8_param_gather && fp8(l) && lora(l))
		assumed_line(f, prefix, comment, "FP8 primary weights with LoRA: not modelled (capsim's "
			     "are for full training); the frozen base planned in 16 bits");
	if (l->fp8_param_gather && !fp8(l))
		assumed_line(f, prefix, comment, "--fp8-param-gather without --fp8-format: not "
			     "modelled (FP8 primary weights need fp8)");
	if (s->nodes > 1)
		assumed_line(f, prefix, comment, "node and fabric: assumptions (not in a launch line): "
			     "node %s, an NDR InfiniBand fat tree", node_id);
	else
		assumed_line(f, prefix, comment, "node and fabric: assumptions (not in a launch line): "
			     "node %s, one node, no fabric", node_id);
}

void capsim_launch_assumptions(const capsim_launch *l, const char *node_id, int node_gpus,
			       FILE *f, const char *prefix)
{
	capsim_diags d = { 0 };
	shape s;
	if (shape_of(l, node_id, node_gpus, "", &s, &d) == 0)
		assumptions(f, l, &s, node_id, prefix, 0);
	capsim_diags_free(&d);
}

/* the scenario's opening comment: where it came from, what was not
 * modelled and what was assumed */
static void write_comment(FILE *f, const capsim_launch *l, const shape *s, const char *where,
			  const char *node_id)
{
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- written by capsim import "
		   "from ");
	capsim_xml_comment_escape(f, where);
	fprintf(f, ".\n");
	for (int i = 0; i < l->n_notes; i++) {
		fputs("     ", f);
		capsim_xml_comment_escape(f, l->notes[i]);
		fputs("\n", f);
	}
	if (l->n_notes_more)
		fprintf(f, "     and %ld more not modelled\n", l->n_notes_more);
	assumptions(f, l, s, node_id, "     ", 1);
	fprintf(f, "-->\n");
}

/* the scenario element: the cluster (the node, and an NDR fat tree between
 * nodes), the workload and its parallelism */
static void write_scenario(FILE *f, const capsim_launch *l, const shape *s, const char *name,
			   const char *model, const char *node_id)
{
	fprintf(f, "<scenario name=\"");
	capsim_xml_escape(f, name);
	fprintf(f, "\">\n  <cluster nodes=\"%ld\">\n    <node ref=\"", s->nodes);
	capsim_xml_escape(f, node_id);
	fprintf(f, "\"/>\n");
	if (s->nodes > 1)
		fprintf(f, "    <fabric topology=\"fat-tree\" tiers=\"2\" transport=\"infiniband\" "
			   "oversubscription=\"1:1\">\n      <switch ref=\"qm9700\"/>\n    </fabric>\n");
	else /* one node: no fabric between nodes, as the schema says it */
		fprintf(f, "    <fabric topology=\"none\" transport=\"infiniband\"/>\n");
	char tok[64];
	if (s->tokens > 0)
		snprintf(tok, sizeof tok, "%.0f", s->tokens);
	else
		snprintf(tok, sizeof tok, "1T");
	fprintf(f, "  </cluster>\n  <workload");
	const char *const attr[][2] = { { "framework", l->framework },
					{ "fp8-recipe", l->fp8_recipe },
					{ "execution", l->execution } };
	for (size_t i = 0; i < sizeof attr / sizeof attr[0]; i++)
		if (attr[i][1])
			fprintf(f, " %s=\"%s\"", attr[i][0], attr[i][1]);
	fprintf(f, " seq-len=\"%ld\" global-batch=\"%ld\" "
		   "micro-batch=\"%ld\" tokens=\"%s\" dtype=\"%s\">\n", l->seq_len, s->gb, s->mb,
		tok, l->dtype ? l->dtype : "bf16");
	fprintf(f, "    <model ref=\"");
	capsim_xml_escape(f, model);
	fprintf(f, "\"/>\n");
	/* Megatron-LM's memory recipe where the flags change it: FP8 primary
	 * weights (fp8 only) and a 16-bit gradient buffer */
	int fp8_params = l->fp8_param_gather && fp8(l) && !lora(l);
	if (fp8_params || l->grad_reduce_bf16)
		fprintf(f, "    <precision%s%s/>\n", fp8_params ? " params=\"fp8\"" : "",
			l->grad_reduce_bf16 ? " grads=\"bf16\"" : "");
	if (l->finetune) {
		fprintf(f, "    <finetune method=\"%s\"", l->finetune);
		if (!strcmp(l->finetune, "lora")) {
			/* NeMo's LoRA where the launch does not say (an assumption, said
			 * in the comment): adapter_dim 32 (the NeMo Framework Launcher's
			 * launcher_scripts/conf/peft/llama/sft.yaml) on the attention's
			 * QKV (NeMo's nemo/collections/nlp/parts/peft_config.py,
			 * LoraPEFTConfig: the KQV adapter), capsim's nearest "attention" */
			fprintf(f, " rank=\"%ld\" targets=\"%s\"", l->lora_rank ? l->lora_rank : 32,
				l->lora_targets ? l->lora_targets : "attention");
		}
		fprintf(f, "/>\n");
	}
	fprintf(f, "    <parallelism tp=\"%ld\" pp=\"%ld\" cp=\"%ld\" "
		   "ep=\"%ld\" zero=\"%d\" recompute=\"%s\"", s->tp, s->pp, s->cp, l->ep ? l->ep : 1,
		zero_of(l), l->recompute ? l->recompute : "none");
	if (s->tp > 1 && l->sequence_parallel != -1)
		fprintf(f, " sequence-parallel=\"%s\"", l->sequence_parallel ? "on" : "off");
	if (l->tp_comm_overlap == 1)
		fprintf(f, " tp-comm-overlap=\"on\"");
	if (s->v > 1)
		fprintf(f, " schedule=\"1f1b-interleaved\" virtual-stages=\"%ld\"", s->v);
	else if (l->schedule && s->pp > 1)
		fprintf(f, " schedule=\"%s\"", l->schedule);
	if (l->first_stage_layers)
		fprintf(f, " first-stage-layers=\"%ld\"", l->first_stage_layers);
	if (l->last_stage_layers)
		fprintf(f, " last-stage-layers=\"%ld\"", l->last_stage_layers);
	fprintf(f, "/>\n  </workload>\n</scenario>\n");
}

char *capsim_launch_scenario_text(const capsim_launch *l, const char *name, const char *model,
				  const char *node_id, int node_gpus, const char *where,
				  capsim_diags *d)
{
	shape s;
	if (shape_of(l, node_id, node_gpus, where, &s, d) < 0)
		return NULL;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f) {
		capsim_diags_add_runtime(d, NULL, "out of memory");
		return NULL;
	}
	write_comment(f, l, &s, where, node_id);
	write_scenario(f, l, &s, name, model, node_id);
	fclose(f);
	return text;
}
