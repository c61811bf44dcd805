/* launch.c - launch lines and scripts into a workload and cluster size; see
 * launch.h. Flag names are Megatron-LM's (megatron/training/arguments.py),
 * torchrun's, srun's and sbatch's; overrides NeMo's (key=value). */
#include "launch.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "check.h"
#include "launch_cond.h"
#include "launch_conf.h"
#include "xalloc.h"

static void note(capsim_launch *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(capsim_launch *l, const char *fmt, ...)
{
	char text[sizeof l->notes[0]];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	for (int i = 0; i < l->n_notes; i++)
		if (strcmp(l->notes[i], text) == 0)
			return; /* once each */
	if (l->n_notes == CAPSIM_LAUNCH_NOTES) {
		l->n_notes_more++; /* counted, and said as "and N more" */
		return;
	}
	memcpy(l->notes[l->n_notes++], text, sizeof text);
}

typedef enum {
	F_LONG,        /* a whole number into a member */
	F_RECOMPUTE,   /* --recompute-granularity full|selective */
	F_RECOMP_ACT,  /* --recompute-activations: selective */
	F_ZERO1,       /* --use-distributed-optimizer */
	F_SP,          /* --sequence-parallel */
	F_TPO,         /* --tp-comm-overlap */
	F_BF16, F_FP16,
	F_FP8,         /* --fp8-format e4m3|hybrid */
	F_FP8_PARAMS,  /* --fp8-param-gather */
	F_GRAD_BF16,   /* --grad-reduce-in-bf16 */
	F_SWIGLU,
	F_NORM,        /* --normalization LayerNorm|RMSNorm */
	F_POS,         /* --position-embedding-type learned_absolute|rope */
	F_UNTIE,
	F_NNODES,      /* torchrun --nnodes N or MIN:MAX */
	F_GRES,        /* --gres gpu:8 (or gpu:h100:8) */
	F_MFSDP,       /* --use-megatron-fsdp */
	F_SHARD        /* --data-parallel-sharding-strategy no_shard|optim|optim_grads|... */
} fkind;

#define M(f) offsetof(capsim_launch, f)
static const struct {
	const char *name;
	fkind k;
	size_t off;
} flags[] = {
	{ "--num-layers", F_LONG, M(layers) },
	{ "--hidden-size", F_LONG, M(hidden) },
	{ "--num-attention-heads", F_LONG, M(heads) },
	{ "--num-query-groups", F_LONG, M(kv_heads) },
	{ "--ffn-hidden-size", F_LONG, M(ffn) },
	{ "--seq-length", F_LONG, M(seq_len) },
	{ "--max-position-embeddings", F_LONG, M(max_positions) },
	{ "--vocab-size", F_LONG, M(vocab) },
	{ "--micro-batch-size", F_LONG, M(micro_batch) },
	{ "--global-batch-size", F_LONG, M(global_batch) },
	{ "--tensor-model-parallel-size", F_LONG, M(tp) },
	{ "--pipeline-model-parallel-size", F_LONG, M(pp) },
	{ "--num-layers-per-virtual-pipeline-stage", F_LONG, M(vp_layers) },
	{ "--num-virtual-stages-per-pipeline-rank", F_LONG, M(vp_stages) },
	{ "--decoder-first-pipeline-num-layers", F_LONG, M(first_stage_layers) },
	{ "--decoder-last-pipeline-num-layers", F_LONG, M(last_stage_layers) },
	{ "--context-parallel-size", F_LONG, M(cp) },
	{ "--expert-model-parallel-size", F_LONG, M(ep) },
	{ "--num-experts", F_LONG, M(experts) },
	{ "--moe-router-topk", F_LONG, M(top_k) },
	{ "--train-iters", F_LONG, M(train_iters) },
	{ "--train-samples", F_LONG, M(train_samples) },
	{ "--recompute-granularity", F_RECOMPUTE, 0 },
	{ "--recompute-activations", F_RECOMP_ACT, 0 },
	{ "--use-distributed-optimizer", F_ZERO1, 0 },
	{ "--sequence-parallel", F_SP, 0 },
	{ "--tp-comm-overlap", F_TPO, 0 },
	{ "--bf16", F_BF16, 0 },
	{ "--fp16", F_FP16, 0 },
	{ "--fp8-format", F_FP8, 0 },
	{ "--fp8-param-gather", F_FP8_PARAMS, 0 },
	{ "--grad-reduce-in-bf16", F_GRAD_BF16, 0 },
	{ "--swiglu", F_SWIGLU, 0 },
	{ "--normalization", F_NORM, 0 },
	{ "--position-embedding-type", F_POS, 0 },
	{ "--untie-embeddings-and-output-weights", F_UNTIE, 0 },
	/* torchrun */
	{ "--nnodes", F_NNODES, 0 },
	{ "--nproc-per-node", F_LONG, M(gpus_per_node) },
	{ "--nproc_per_node", F_LONG, M(gpus_per_node) },
	/* srun and sbatch */
	{ "-N", F_LONG, M(nodes) },
	{ "--nodes", F_LONG, M(nodes) },
	{ "--gpus-per-node", F_LONG, M(gpus_per_node) },
	{ "--gres", F_GRES, 0 },
	/* Megatron-FSDP (megatron/training/arguments.py) */
	{ "--use-megatron-fsdp", F_MFSDP, 0 },
	{ "--data-parallel-sharding-strategy", F_SHARD, 0 },
};

/* flags known to take no value (the rest of the unknown ones are taken to
 * take the next token when it is not itself a flag) */
static const char *const boolean[] = {
	"--recompute-activations", "--use-distributed-optimizer", "--sequence-parallel",
	"--tp-comm-overlap", "--bf16", "--fp16", "--swiglu", "--untie-embeddings-and-output-weights",
	"--overlap-grad-reduce", "--overlap-param-gather", "--use-flash-attn", "--no-masked-softmax-fusion",
	"--disable-bias-linear", "--group-query-attention", "--use-mcore-models", "--standalone",
	"--exclusive", "--fp8-param-gather", "--grad-reduce-in-bf16",
};

/* NeMo's overrides: key=value */
static const struct {
	const char *key;
	size_t off;
} nemo[] = {
	{ "trainer.num_nodes", M(nodes) },
	{ "trainer.devices", M(gpus_per_node) },
	{ "model.tensor_model_parallel_size", M(tp) },
	{ "model.pipeline_model_parallel_size", M(pp) },
	{ "model.context_parallel_size", M(cp) },
	{ "model.expert_model_parallel_size", M(ep) },
	{ "model.micro_batch_size", M(micro_batch) },
	{ "model.global_batch_size", M(global_batch) },
	{ "model.encoder_seq_length", M(seq_len) },
	{ "model.num_layers", M(layers) },
	{ "model.hidden_size", M(hidden) },
	{ "model.num_attention_heads", M(heads) },
	{ "model.num_query_groups", M(kv_heads) },
	{ "model.ffn_hidden_size", M(ffn) },
	{ "model.max_position_embeddings", M(max_positions) },
	{ "trainer.max_steps", M(train_iters) },
	{ "model.seq_length", M(seq_len) },
	{ "model.data.seq_length", M(seq_len) },
	{ "model.data.train_ds.max_seq_length", M(seq_len) },
	{ "model.data.train_ds.micro_batch_size", M(micro_batch) },
	{ "model.data.train_ds.global_batch_size", M(global_batch) },
	{ "model.padded_vocab_size", M(vocab) },
	/* NeMo 2.0's (nemo llm pretrain): the recipe's trainer, strategy and data */
	{ "trainer.strategy.tensor_model_parallel_size", M(tp) },
	{ "trainer.strategy.pipeline_model_parallel_size", M(pp) },
	{ "trainer.strategy.context_parallel_size", M(cp) },
	{ "trainer.strategy.expert_model_parallel_size", M(ep) },
	{ "data.seq_length", M(seq_len) },
	{ "data.micro_batch_size", M(micro_batch) },
	{ "data.global_batch_size", M(global_batch) },
};
#undef M

static int is_boolean(const char *f)
{
	for (size_t i = 0; i < sizeof boolean / sizeof boolean[0]; i++)
		if (strcmp(boolean[i], f) == 0)
			return 1;
	return 0;
}

/* a positive whole number (every size, count and batch a launch gives is
 * one: 0 is refused as bash's launcher would fail on it, not taken as "not
 * said"): -1 after the message */
static int whole(const char *flag, const char *v, long *out, const char *where, capsim_diags *d)
{
	char *end;
	errno = 0;
	long x = v && isdigit((unsigned char)*v) ? strtol(v, &end, 10) : -1;
	if (x < 0 || *end || errno == ERANGE || x > CAPSIM_LAUNCH_MAX_WHOLE) {
		capsim_diags_add_at(d, where, "%s: expected a positive whole number, found "
				    "'%.80s%s'", flag, v ? v : "nothing",
				    v && strlen(v) > 80 ? "..." : "");
		return -1;
	}
	if (x == 0) {
		capsim_diags_add_at(d, where, "%s: expected a positive whole number (at most %ld), "
				    "found 0", flag, CAPSIM_LAUNCH_MAX_WHOLE);
		return -1;
	}
	*out = x;
	return 0;
}

/* a NeMo / Hydra boolean: True, true, 1 (1); False, false, 0 (0); -1 other */
static int truth(const char *v)
{
	if (!strcasecmp(v, "true") || !strcmp(v, "1"))
		return 1;
	if (!strcasecmp(v, "false") || !strcmp(v, "0"))
		return 0;
	return -1;
}

/* trainer.precision: bf16, bf16-mixed, 16, 16-mixed (NeMo's and Lightning's
 * names); 1, or 0 where capsim does not model it (32) */
static int nemo_precision(capsim_launch *l, const char *v)
{
	if (!strncmp(v, "bf16", 4)) {
		if (!l->dtype || strcmp(l->dtype, "fp8"))
			l->dtype = "bf16";
		return 1;
	}
	if (!strcmp(v, "16") || !strcmp(v, "16-mixed") || !strcmp(v, "fp16")) {
		if (!l->dtype || strcmp(l->dtype, "fp8"))
			l->dtype = "fp16";
		return 1;
	}
	return 0;
}

/* model.peft.*: the scheme (lora, or none: a full fine-tune), the LoRA rank
 * and the matrices it adapts; 1 when read, 0 when not modelled */
static int nemo_peft(capsim_launch *l, const char *key, const char *v, const char *where,
		     capsim_diags *d)
{
	if (!strcmp(key, "model.peft.peft_scheme")) {
		if (!strcmp(v, "lora") || !strcmp(v, "none") || !strcmp(v, "null")) {
			l->finetune = v[0] == 'l' ? "lora" : "full";
			return 1;
		}
		return 0; /* ptuning, adapter, ia3: not capsim's */
	}
	if (!strcmp(key, "model.peft.lora_tuning.adapter_dim"))
		return whole(key, v, &l->lora_rank, where, d) == 0;
	if (!strcmp(key, "model.peft.lora_tuning.target_modules")) {
		/* attention_qkv, attention_dense (or attention: both) alone are capsim's
		 * "attention"; any MLP module makes it "all" */
		l->lora_targets = strstr(v, "mlp") || strstr(v, "fc1") || strstr(v, "all") ?
				  "all" : "attention";
		return 1;
	}
	return 0;
}

/* NeMo's override key: Hydra's + ++ ~ dropped, and the NeMo launcher's stage
 * (training., fine_tuning., peft.) before trainer. and model. */
static const char *nemo_key(const char *tok)
{
	while (*tok == '+' || *tok == '~')
		tok++;
	static const char *const stage[] = { "training.", "fine_tuning.", "peft." };
	for (size_t i = 0; i < sizeof stage / sizeof stage[0]; i++) {
		size_t n = strlen(stage[i]);
		if (!strncmp(tok, stage[i], n) &&
		    (!strncmp(tok + n, "trainer.", 8) || !strncmp(tok + n, "model.", 6)))
			return tok + n;
	}
	return tok;
}

/* NeMo's distributed optimizers, which shard the optimizer's state over the
 * data-parallel ranks (ZeRO 1): Apex's distributed_fused_adam and Megatron
 * Core's mcore_distributed_optim (NeMo's MegatronGPTModel.setup_optimization) */
static int distributed_optimizer(const char *name)
{
	return !strcmp(name, "distributed_fused_adam") || !strcmp(name, "mcore_distributed_optim");
}

/* the overrides read other than a whole number: 1 read, 0 not modelled, -1
 * after a refusal */
static int nemo_other(capsim_launch *l, const char *key, const char *v, const char *where,
		      capsim_diags *d)
{
	int t = truth(v);
	int vp = !strcmp(key, "model.virtual_pipeline_model_parallel_size") ||
		 !strcmp(key, "trainer.strategy.virtual_pipeline_model_parallel_size");
	if ((!strcmp(key, "model.sequence_parallel") ||
	     !strcmp(key, "trainer.strategy.sequence_parallel")) && t >= 0)
		l->sequence_parallel = t;
	else if (vp && (!strcmp(v, "null") || !strcmp(v, "None")))
		l->vp_stages = 0;
	else if (vp)
		return whole(key, v, &l->vp_stages, where, d) < 0 ? -1 : 1;
	else if (!strcmp(key, "optim.config.use_distributed_optimizer") && t >= 0)
		l->zero = t;
	else if (!strcmp(key, "trainer.precision"))
		return nemo_precision(l, v);
	else if (!strcmp(key, "model.fp8") && t >= 0)
		l->dtype = t ? "fp8" : l->dtype;
	else if (!strcmp(key, "model.fp8_params") && t >= 0)
		l->fp8_param_gather = t;
	else if (!strcmp(key, "model.ub_tp_comm_overlap") && t >= 0)
		l->tp_comm_overlap = t;
	else if (!strcmp(key, "model.optim.name"))
		l->zero = distributed_optimizer(v) ? 1 : l->zero;
	else if (!strcmp(key, "model.activations_checkpoint_granularity"))
		l->recompute = !strcmp(v, "full") ? "full" : !strcmp(v, "selective") ? "selective" :
			       "none";
	else if (!strncmp(key, "model.peft.", 11))
		return nemo_peft(l, key, v, where, d);
	else
		return 0;
	/* a distributed optimizer is ZeRO 1; another keeps its state whole */
	return strcmp(key, "model.optim.name") || distributed_optimizer(v) ? 1 : 0;
}

/* the keys nemo_other reads */
static const char *const nemo_other_keys[] = {
	"model.sequence_parallel", "model.virtual_pipeline_model_parallel_size", "trainer.precision",
	"trainer.strategy.sequence_parallel", "trainer.strategy.virtual_pipeline_model_parallel_size",
	"optim.config.use_distributed_optimizer",
	"model.fp8", "model.fp8_params", "model.ub_tp_comm_overlap", "model.optim.name",
	"model.activations_checkpoint_granularity", "model.peft.peft_scheme",
	"model.peft.lora_tuning.adapter_dim", "model.peft.lora_tuning.target_modules",
};

int capsim_launch_nemo_reads(const char *key)
{
	for (size_t i = 0; i < sizeof nemo / sizeof nemo[0]; i++)
		if (!strcmp(nemo[i].key, key))
			return 1;
	for (size_t i = 0; i < sizeof nemo_other_keys / sizeof nemo_other_keys[0]; i++)
		if (!strcmp(nemo_other_keys[i], key))
			return 1;
	return 0;
}

int capsim_launch_nemo_value(capsim_launch *l, const char *key, const char *value,
			     const char *where, capsim_diags *d)
{
	for (size_t i = 0; i < sizeof nemo / sizeof nemo[0]; i++)
		if (!strcmp(nemo[i].key, key)) {
			if (!strcmp(value, "null"))
				return 1; /* Hydra's null: the code's default, as not said */
			return whole(nemo[i].key, value, (long *)((char *)l + nemo[i].off), where,
				     d) < 0 ? -1 : 1;
		}
	return nemo_other(l, key, value, where, d);
}

static int nemo_override(capsim_launch *l, const char *tok, const char *where, capsim_diags *d)
{
	const char *key = nemo_key(tok);
	const char *eq = strchr(key, '=');
	size_t kl = (size_t)(eq - key);
	char k[128];
	snprintf(k, sizeof k, "%.*s", (int)(kl < sizeof k ? kl : sizeof k - 1), key);
	int r = capsim_launch_nemo_value(l, k, eq + 1, where, d);
	if (r == 0)
		note(l, "override not modelled: %.140s", tok);
	return r < 0 ? -1 : 0;
}

static int one_flag(capsim_launch *l, int k, const char *name, const char *v, const char *where,
		    capsim_diags *d)
{
	/* a variable the script does not set (nor Slurm from its #SBATCH lines),
	 * or a command's output: not in the file, so not known */
	if (v && v[0] == '$') {
		const char *n = v + 1 + (v[1] == '{');
		size_t nl = strspn(n, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_0123456789");
		if (nl && (n[nl] == '\0' || n[nl] == '}'))
			capsim_diags_add_at(d, where, "%s %s: %.*s is not set in the script (nor by "
					    "Slurm from #SBATCH lines): give it with --env %.*s=VALUE",
					    name, v, (int)nl, n, (int)nl, n);
		else
			capsim_diags_add_at(d, where, "%s %.60s: known only when the script runs (a "
					    "command's output), not in the file", name, v);
		return -1;
	}
	switch (flags[k].k) {
	case F_LONG:
		return whole(name, v, (long *)((char *)l + flags[k].off), where, d);
	case F_RECOMPUTE:
		if (v && (strcmp(v, "full") == 0 || strcmp(v, "selective") == 0)) {
			l->recompute = strcmp(v, "full") == 0 ? "full" : "selective";
			return 0;
		}
		capsim_diags_add_at(d, where, "%s: expected full or selective, found '%s'", name,
				    v ? v : "nothing");
		return -1;
	case F_RECOMP_ACT: l->recompute = "selective"; return 0;
	case F_ZERO1: l->zero = 1; return 0;
	case F_SP: l->sequence_parallel = 1; return 0;
	case F_TPO: l->tp_comm_overlap = 1; return 0;
	case F_BF16: if (!l->dtype || strcmp(l->dtype, "fp8")) l->dtype = "bf16"; return 0;
	case F_FP16: if (!l->dtype || strcmp(l->dtype, "fp8")) l->dtype = "fp16"; return 0;
	case F_FP8:
		l->dtype = "fp8";
		if (v && strcmp(v, "hybrid") && strcmp(v, "e4m3"))
			note(l, "--fp8-format %s: costed as capsim's fp8", v);
		return 0;
	case F_FP8_PARAMS: l->fp8_param_gather = 1; return 0;
	case F_GRAD_BF16: l->grad_reduce_bf16 = 1; return 0;
	case F_SWIGLU: l->swiglu = 1; return 0;
	case F_NORM:
		l->rmsnorm = v && strcasecmp(v, "RMSNorm") == 0;
		return 0;
	case F_POS:
		l->rope = v && strcmp(v, "rope") == 0;
		return 0;
	case F_UNTIE: l->untied = 1; return 0;
	case F_MFSDP: l->megatron_fsdp = 1; return 0;
	case F_SHARD: {
		static const char *const strategy[] = { "no_shard", "optim", "optim_grads",
							"optim_grads_params" };
		for (int z = 0; z < 4; z++)
			if (v && !strcmp(v, strategy[z])) {
				l->fsdp_zero = z; /* ZeRO 0 to 3 */
				return 0;
			}
		capsim_diags_add_at(d, where, "%s: expected no_shard, optim, optim_grads or "
				    "optim_grads_params, found '%s'", name, v ? v : "nothing");
		return -1;
	}
	case F_NNODES: {
		const char *colon = v ? strchr(v, ':') : NULL;
		if (colon) {
			note(l, "--nnodes %s: elastic; the largest, %s, taken", v, colon + 1);
			v = colon + 1;
		}
		return whole(name, v, &l->nodes, where, d);
	}
	case F_GRES: {
		/* gpu:8 or gpu:h100:8 */
		const char *last = v ? strrchr(v, ':') : NULL;
		if (!v || strncmp(v, "gpu", 3) != 0 || !last) {
			note(l, "--gres %s: not GPUs", v ? v : "");
			return 0;
		}
		return whole(name, last + 1, &l->gpus_per_node, where, d);
	}
	}
	return 0;
}

static int takes_value(fkind k)
{
	switch (k) {
	case F_RECOMP_ACT: case F_ZERO1: case F_SP: case F_TPO: case F_BF16: case F_FP16:
	case F_FP8_PARAMS: case F_GRAD_BF16: case F_SWIGLU: case F_UNTIE: case F_MFSDP:
		return 0;
	default:
		return 1;
	}
}

/* a word that ends a flag's list of values: another flag (a word starting
 * with - that is not a number), the training script, a NeMo override */
static int ends_values(const char *w)
{
	char *end;
	if (w[0] == '-' && w[1]) {
		strtod(w, &end);
		return *end != '\0';
	}
	size_t n = strlen(w);
	const char *eq = strchr(w, '='), *dot = strchr(w, '.');
	return (n > 3 && strcmp(w + n - 3, ".py") == 0) || strstr(w, "torchrun") ||
	       strstr(w, "python") || (eq && dot && dot < eq);
}

/* how many of the n words at v are a flag's values (a list: every word up
 * to the next that ends it) */
static int value_words(char **v, int n)
{
	int k = 0;
	while (k < n && !ends_values(v[k]))
		k++;
	return k;
}

/* n values joined by spaces into out (cut with "..." where long) */
static void join_values(char **v, int n, char *out, size_t size)
{
	size_t o = 0;
	out[0] = '\0';
	for (int i = 0; i < n && o + 1 < size; i++) {
		int w = snprintf(out + o, size - o, "%s%s", i ? " " : "", v[i]);
		o += w > 0 ? (size_t)w : 0;
	}
	if (o >= size && size > 4)
		memcpy(out + size - 4, "...", 4);
}

/* where torchtitan's training module is among the n words at v (-m
 * torchtitan.train, or its train.py): the index of the first word of it
 * (the -m), or n */
static int torchtitan_at(char **v, int n)
{
	for (int i = 0; i < n; i++) {
		size_t len = strlen(v[i]);
		if (!strcmp(v[i], "torchtitan.train") ||
		    (len >= 19 && !strcmp(v[i] + len - 19, "torchtitan/train.py")))
			return i > 0 && !strcmp(v[i - 1], "-m") ? i - 1 : i;
	}
	return n;
}

/* a NeMo launcher's config group (training=gpt3/5b) */
static int config_group(const char *tok)
{
	return !strncmp(tok, "training=", 9) || !strncmp(tok, "fine_tuning=", 12) ||
	       !strncmp(tok, "peft=", 5);
}

int capsim_launch_argv(char **argv, int argc, const char *where, capsim_launch *l,
		       capsim_diags *d)
{
	size_t before = d->n;
	int titan = torchtitan_at(argv, argc);
	if (titan < argc) {
		/* the launcher's own words first (its GPUs), then torchtitan's */
		int start = titan + 1 + (strcmp(argv[titan], "-m") == 0);
		capsim_launch_argv(argv, titan, where, l, d);
		l->found_launcher = 1;
		capsim_launch_torchtitan(argv + start, argc - start, where, l, d);
		return d->n == before ? 0 : -1;
	}
	if (capsim_launch_nemo_recipe(argv, argc, where, l, d) < 0 ||
	    capsim_launch_nemo_configs(argv, argc, where, l, d) < 0)
		return -1;
	for (int i = 0; i < argc; i++) {
		const char *tok = argv[i];
		int recipe = capsim_launch_nemo_factory_word(argv, argc, i);
		if (recipe) {
			i += recipe - 1; /* read with its defaults, before the overrides */
			l->found_launcher = 1;
			continue;
		}
		if (tok[0] != '-') {
			if (strchr(tok, '=') && strchr(tok, '.') && strchr(tok, '.') < strchr(tok, '=') &&
			    strchr(tok, '=') > tok && !strchr("/$", tok[0])) {
				nemo_override(l, tok, where, d);
				continue;
			}
			if (config_group(tok))
				continue; /* read from its file before the overrides */
			if (tok[0] == '~' && strchr(tok, '.')) {
				note(l, "override not modelled: %.140s", tok); /* Hydra's delete */
				continue;
			}
			if (strstr(tok, "torchrun") || strcmp(tok, "srun") == 0 ||
			    strstr(tok, "python") || strstr(tok, "pretrain_") || strstr(tok, ".py"))
				l->found_launcher = 1;
			continue;
		}
		char name[128];
		const char *eq = strchr(tok, '=');
		const char *v = NULL;
		size_t nl = eq ? (size_t)(eq - tok) : strlen(tok);
		if (nl >= sizeof name)
			nl = sizeof name - 1;
		memcpy(name, tok, nl);
		name[nl] = '\0';
		int k = -1;
		for (size_t j = 0; j < sizeof flags / sizeof flags[0]; j++)
			if (strcmp(flags[j].name, name) == 0)
				k = (int)j;
		if (k >= 0) {
			if (takes_value(flags[k].k)) {
				if (eq)
					v = eq + 1;
				else if (i + 1 < argc)
					v = argv[++i];
			}
			one_flag(l, k, name, v, where, d);
			continue;
		}
		if (!strcmp(name, "--config-name") || !strcmp(name, "--config-path") ||
		    !strcmp(name, "--yaml-cfg") || !strcmp(name, "--config"))
			l->config_elsewhere = 1; /* a config file holds the rest */
		/* not modelled: named, with its value (every word of a list) when it
		 * has one */
		int vals = eq || is_boolean(name) ? 0 : value_words(argv + i + 1, argc - i - 1);
		if (eq) {
			note(l, "%.60s=%.90s: not modelled", name, eq + 1);
		} else if (vals) {
			char list[96];
			join_values(argv + i + 1, vals, list, sizeof list);
			note(l, "%.60s %s: not modelled", name, list);
			i += vals;
		} else {
			note(l, "%.60s: not modelled", name);
		}
	}
	return d->n == before ? 0 : -1;
}

/* ---- scripts ------------------------------------------------------------------------ */

/* A script is read as bash would run it, without running anything: its
 * variables (with ${V:-d}, ${V:=d}, ${V-d}, ${V+w}), arrays and +=, the
 * Slurm environment its #SBATCH lines give, if / elif / else and case
 * decided from what it sets (and, where a test rests on what it cannot
 * know, by its own defaults, said in a note), here-documents read into
 * variables, and commands held in variables run where the script runs
 * them. */

/* the separator of an array's elements in a variable's value */
#define ARRAY_SEP '\x1f'
/* if / case blocks open at once, and scripts read inside a script (a
 * here-document's, a command held in a variable) */
#define MAX_BLOCKS 64
#define MAX_INNER 8

/* a shell variable the script sets, in an open-addressing table */
typedef struct {
	char *name, *value;
	int assumed; /* its value rests on a default or a variable the script does not set */
} var;

typedef struct {
	var *slot;
	size_t cap, n; /* cap a power of two, or 0 */
} vars;

static size_t hash(const char *s, size_t len)
{
	size_t h = 1469598103934665603u;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211u;
	return h;
}

static var *slot_of(const vars *vs, const char *name, size_t len)
{
	if (!vs || !vs->cap)
		return NULL;
	for (size_t i = hash(name, len) & (vs->cap - 1);; i = (i + 1) & (vs->cap - 1)) {
		var *v = &vs->slot[i];
		if (!v->name || (strlen(v->name) == len && memcmp(v->name, name, len) == 0))
			return v;
	}
}

static const char *lookup(const vars *vs, const char *name, size_t len)
{
	const var *v = slot_of(vs, name, len);
	return v && v->name ? v->value : NULL;
}

/* NAME=value: set (a name set again gets the new value); value is taken */
static void set_var(vars *vs, const char *name, size_t len, char *value, int assumed)
{
	if (2 * (vs->n + 1) > vs->cap) {
		vars bigger = { capsim_xcalloc(vs->cap ? 2 * vs->cap : 64, sizeof(var)),
				vs->cap ? 2 * vs->cap : 64, vs->n };
		for (size_t i = 0; i < vs->cap; i++)
			if (vs->slot[i].name)
				*slot_of(&bigger, vs->slot[i].name, strlen(vs->slot[i].name)) =
					vs->slot[i];
		free(vs->slot);
		*vs = bigger;
	}
	var *v = slot_of(vs, name, len);
	if (v->name) {
		free(v->value);
	} else {
		v->name = capsim_xasprintf("%.*s", (int)len, name);
		vs->n++;
	}
	v->value = value;
	v->assumed = assumed;
}

static void free_vars(vars *vs)
{
	for (size_t i = 0; i < vs->cap; i++) {
		free(vs->slot[i].name);
		free(vs->slot[i].value);
	}
	free(vs->slot);
}

/* an if or case block being read */
typedef struct {
	char kind;        /* 'i' if, 'c' case, 'w' a loop */
	int outer;        /* the block it is in runs */
	int active;       /* the branch being read runs */
	int taken;        /* a branch ran (or was decided) */
	int want_pattern; /* case: the next word is a pattern */
	char *subject;    /* case: the word matched */
	long line;        /* where it opened */
} block;

/* what reading a script keeps from line to line */
typedef struct {
	vars vs;
	capsim_launch *l;
	capsim_diags *d;
	const char *file;
	int yaml;
	block b[MAX_BLOCKS];
	int nb;
	int inner;        /* scripts read inside this one, open */
	int in_test;      /* expanding a test's word: what the script does not set is empty */
	size_t expanded;  /* bytes of every line's words so far */
	int failed;
} shstate;

static void refuse(shstate *st, long line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void refuse(shstate *st, long line, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	capsim_diags_add(st->d, st->file, line, "%s", msg);
	st->failed = 1;
}

/* The shell's quoting: what a point of a line is inside of. */
enum { CX_SQ = '\'', CX_ANSI = 'A', CX_DQ = '"', CX_TICK = '`', CX_SUB = '(', CX_ARRAY = '[' };

typedef struct {
	char kind[CAPSIM_LAUNCH_MAX_NESTING];
	long line[CAPSIM_LAUNCH_MAX_NESTING]; /* where each opened */
	int n;
	long cur_line;   /* the line being read */
	char prev;       /* the byte before, for a comment's '#' (0 at a line's start) */
	char heredoc[64]; /* a here-document's delimiter seen (<<EOF), "" none */
	int heredoc_tabs; /* <<- */
	int yaml;        /* YAML: list punctuation between words dropped */
	int depth;       /* defaults expanded inside defaults */
	shstate *st;     /* with words: the variables, and the notes of defaults taken */
	capsim_cond_why why; /* what the expansions rested on */
	enum { WALK_OK, WALK_NESTING, WALK_LONG } err;
} shctx;

/* the words a line gives: quotes removed, variables expanded */
typedef struct {
	char **v;
	int n, cap;
	char *w;            /* the word being built */
	size_t wl, wcap;
	int in_word;
	size_t total;       /* bytes of every word, with a separator each */
} wordlist;

static const char *kind_name(char k)
{
	switch (k) {
	case CX_SQ: return "' (a single quote)";
	case CX_ANSI: return "$' (an ANSI-C quote)";
	case CX_DQ: return "\" (a double quote)";
	case CX_TICK: return "` (a command substitution)";
	case CX_SUB: return "$( (a command substitution)";
	default: return "( (a bash array)";
	}
}

static int push(shctx *c, char kind)
{
	if (c->n == CAPSIM_LAUNCH_MAX_NESTING) {
		c->err = WALK_NESTING;
		return -1;
	}
	c->kind[c->n] = kind;
	c->line[c->n++] = c->cur_line;
	return 0;
}

static void put(shctx *c, wordlist *w, char ch)
{
	if (!w)
		return;
	if (w->total + 1 > CAPSIM_LAUNCH_MAX_LINE) {
		c->err = WALK_LONG;
		return;
	}
	if (w->wl + 2 > w->wcap)
		w->w = capsim_xrealloc(w->w, w->wcap = w->wcap ? 2 * w->wcap : 64);
	w->w[w->wl++] = ch;
	w->total++;
	w->in_word = 1;
}

static void end_word(shctx *c, wordlist *w)
{
	if (!w || !w->in_word)
		return;
	if (w->total + 1 > CAPSIM_LAUNCH_MAX_LINE) {
		c->err = WALK_LONG;
		return;
	}
	if (w->n == w->cap)
		w->v = capsim_xrealloc(w->v, (size_t)(w->cap = w->cap ? 2 * w->cap : 16) *
				       sizeof *w->v);
	w->v[w->n] = capsim_xmalloc(w->wl + 1);
	if (w->wl)
		memcpy(w->v[w->n], w->w, w->wl);
	w->v[w->n++][w->wl] = '\0';
	w->wl = 0;
	w->in_word = 0;
	w->total++;
}

static void free_words(wordlist *w)
{
	for (int i = 0; i < w->n; i++)
		free(w->v[i]);
	free(w->v);
	free(w->w);
	memset(w, 0, sizeof *w);
}

/* the words joined by sep: the caller's */
static char *joined(const wordlist *w, char sep)
{
	char *val = capsim_xmalloc(w->total + 1), *q = val;
	for (int i = 0; i < w->n; i++) {
		size_t wl = strlen(w->v[i]);
		if (i)
			*q++ = sep;
		memcpy(q, w->v[i], wl);
		q += wl;
	}
	*q = '\0';
	return val;
}

/* a variable reference: $NAME, $1, ${NAME}, ${NAME[@]}, ${NAME:-word} ... */
typedef struct {
	const char *name;
	size_t nl;
	char all;          /* '@' or '*' for ${NAME[@]}, ${NAME[*]}; 0 */
	char op;           /* 0, '-', '=', '+', '?'; 'x' a form not read (${#V}, ${V%x}) */
	int colon;         /* ${V:-w}: an empty value counts as unset */
	const char *word;  /* the word after op */
	size_t wl;
	size_t len;        /* the reference's length */
} ref;

/* the index of the '}' that closes a ${ opened before s[i], or 0 */
static size_t brace_close(const char *s, size_t n, size_t i)
{
	int depth = 1, dq = 0;
	for (; i < n; i++) {
		if (s[i] == '\\') {
			i++;
		} else if (s[i] == '"') {
			dq = !dq;
		} else if (s[i] == '\'' && !dq) {
			const char *e = memchr(s + i + 1, '\'', n - i - 1);
			if (!e)
				return 0;
			i = (size_t)(e - s);
		} else if (s[i] == '$' && i + 1 < n && s[i + 1] == '{') {
			depth++;
			i++;
		} else if (s[i] == '}' && --depth == 0) {
			return i;
		}
	}
	return 0;
}

/* the name at s[i]: a name or one digit (a positional parameter); its end */
static size_t name_end(const char *s, size_t n, size_t i, int brace)
{
	if (i < n && isdigit((unsigned char)s[i])) {
		i++;
		while (brace && i < n && isdigit((unsigned char)s[i]))
			i++;
		return i;
	}
	if (i >= n || !(isalpha((unsigned char)s[i]) || s[i] == '_'))
		return 0;
	while (i < n && (isalnum((unsigned char)s[i]) || s[i] == '_'))
		i++;
	return i;
}

/* a reference at s (s[0] is '$'): 1 with *r, 0 when s holds none */
static int parse_ref(const char *s, size_t n, ref *r)
{
	memset(r, 0, sizeof *r);
	int brace = n > 1 && s[1] == '{';
	size_t i = 1 + (size_t)brace;
	size_t close = brace ? brace_close(s, n, 2) : 0;
	if (brace && !close)
		return 0;
	size_t e = name_end(s, n, i, brace);
	r->name = s + i;
	r->nl = e > i ? e - i : 0;
	if (!brace) {
		r->len = e;
		return e > 1;
	}
	r->len = close + 1;
	if (!e) {
		r->op = 'x'; /* ${#V}, ${!V} */
		return 1;
	}
	i = e;
	if (i + 2 < close && s[i] == '[' && (s[i + 1] == '@' || s[i + 1] == '*') && s[i + 2] == ']') {
		r->all = s[i + 1];
		i += 3;
	}
	if (i == close)
		return 1;
	r->colon = s[i] == ':';
	i += (size_t)r->colon;
	if (i < close && strchr("-=+?", s[i])) {
		r->op = s[i];
		r->word = s + i + 1;
		r->wl = close - i - 1;
	} else {
		r->op = 'x'; /* ${V%x}, ${V/a/b}, ${V:1:2}, ${V[0]} */
	}
	return 1;
}

/* ---- $(( )) ---------------------------------------------------------------------- */

/* an arithmetic expansion's expression, read over the script's variables */
typedef struct {
	const char *s;
	size_t n, i;
	const vars *vs;
	int ok, depth;
} arith;

static long arith_sum(arith *a);

static void arith_blank(arith *a)
{
	while (a->i < a->n && isspace((unsigned char)a->s[a->i]))
		a->i++;
}

/* a number, a variable ($V, ${V} or V: its value a whole number) or a
 * bracketed expression, with unary - + */
static long arith_atom(arith *a)
{
	arith_blank(a);
	if (a->i >= a->n || ++a->depth > CAPSIM_LAUNCH_MAX_NESTING) {
		a->ok = 0;
		return 0;
	}
	char ch = a->s[a->i];
	long v = 0;
	if (ch == '-' || ch == '+') {
		a->i++;
		v = arith_atom(a);
		v = ch == '-' ? -v : v;
	} else if (ch == '(') {
		a->i++;
		v = arith_sum(a);
		arith_blank(a);
		if (a->i < a->n && a->s[a->i] == ')')
			a->i++;
		else
			a->ok = 0;
	} else if (isdigit((unsigned char)ch)) {
		char *end;
		v = strtol(a->s + a->i, &end, 10);
		a->i = (size_t)(end - a->s);
	} else {
		size_t j = a->i + (ch == '$');
		int brace = j < a->n && a->s[j] == '{';
		j += (size_t)brace;
		size_t e = name_end(a->s, a->n, j, 1);
		const char *val = e > j ? lookup(a->vs, a->s + j, e - j) : NULL;
		char *end;
		if (!val || !*val || (v = strtol(val, &end, 10), *end) ||
		    (brace && (e >= a->n || a->s[e] != '}')))
			a->ok = 0;
		a->i = e + (size_t)brace;
	}
	a->depth--;
	return v;
}

static long arith_product(arith *a)
{
	long v = arith_atom(a);
	for (;;) {
		arith_blank(a);
		if (!a->ok || a->i >= a->n || !strchr("*/%", a->s[a->i]))
			return v;
		char op = a->s[a->i++];
		long b = arith_atom(a);
		if (op != '*' && b == 0) {
			a->ok = 0;
			return 0;
		}
		double p = (double)v * (double)b;
		if (op == '*' && (p > (double)LONG_MAX / 2 || p < -(double)LONG_MAX / 2)) {
			a->ok = 0;
			return 0;
		}
		v = op == '*' ? v * b : op == '/' ? v / b : v % b;
	}
}

static long arith_sum(arith *a)
{
	long v = arith_product(a);
	for (;;) {
		arith_blank(a);
		if (!a->ok || a->i >= a->n || (a->s[a->i] != '+' && a->s[a->i] != '-'))
			return v;
		char op = a->s[a->i++];
		long b = arith_product(a);
		if ((b > 0 && v > LONG_MAX / 2) || (b < 0 && v < -(LONG_MAX / 2))) {
			a->ok = 0;
			return 0;
		}
		v = op == '+' ? v + b : v - b;
	}
}

/* $((expr)) at s: its length with the value in *v, or 0 where it is not
 * one this reads (an operator other than + - * / %, a variable the script
 * does not set to a whole number): then left as written */
static size_t arith_expand(const vars *vs, const char *s, size_t n, long *v)
{
	if (n < 5 || memcmp(s, "$((", 3) != 0)
		return 0;
	int depth = 0;
	size_t e = 3;
	for (; e + 1 < n; e++) {
		if (s[e] == '(')
			depth++;
		else if (s[e] == ')' && depth)
			depth--;
		else if (s[e] == ')' && s[e + 1] == ')')
			break;
		else if (s[e] == ')' || s[e] == '\n')
			return 0;
	}
	if (e + 1 >= n)
		return 0;
	arith a = { .s = s + 3, .n = e - 3, .vs = vs, .ok = 1 };
	*v = arith_sum(&a);
	arith_blank(&a);
	return a.ok && a.i == a.n ? e + 2 : 0;
}

static int walk(shctx *c, const char *s, size_t n, wordlist *w);

/* word expanded as the shell expands a default: its words joined by a
 * space (the caller's) */
static char *expand_default(shctx *c, const char *word, size_t wl)
{
	shctx sub = { .cur_line = c->cur_line, .yaml = c->yaml, .depth = c->depth + 1,
		      .st = c->st };
	wordlist w = { 0 };
	if (sub.depth > CAPSIM_LAUNCH_MAX_NESTING)
		c->err = WALK_NESTING;
	else
		walk(&sub, word, wl, &w);
	end_word(&sub, &w);
	if (sub.err != WALK_OK)
		c->err = sub.err;
	c->why.unset += sub.why.unset;
	c->why.defaulted += sub.why.defaulted;
	c->why.other += sub.why.other;
	char *v = joined(&w, ' ');
	free_words(&w);
	return v;
}

/* r's value (*owned set when it is the caller's to free), or NULL where the
 * script does not say (left as written) */
static const char *resolve(shctx *c, const ref *r, char **owned)
{
	vars *vs = &c->st->vs;
	const var *v = r->op == 'x' ? NULL : slot_of(vs, r->name, r->nl);
	const char *val = v && v->name ? v->value : NULL;
	int set = val && (!r->colon || *val);
	if (val && v->assumed)
		c->why.defaulted++;
	*owned = NULL;
	switch (r->op) {
	case 0:
	case '?':
		if (!val)
			c->why.unset++;
		return val;
	case '+':
		return *owned = set ? expand_default(c, r->word, r->wl) : capsim_xasprintf("%s", "");
	case '-':
	case '=':
		if (set)
			return val;
		*owned = expand_default(c, r->word, r->wl);
		c->why.defaulted++;
		/* r->name follows its "${" */
		note(c->st->l, "%.*s: %.*s is not set in the script: its default, '%.40s', taken",
		     (int)(r->len > 70 ? 70 : r->len), r->name - 2, (int)(r->nl > 40 ? 40 : r->nl),
		     r->name, *owned);
		if (r->op == '=' && !isdigit((unsigned char)r->name[0]))
			set_var(vs, r->name, r->nl, capsim_xasprintf("%s", *owned), 1);
		return *owned;
	default:
		c->why.other++;
		return NULL;
	}
}

/* a value into the words: split at blanks outside quotes; an array's
 * elements are words of their own in "${A[@]}", joined by a space in
 * "${A[*]}" (and only its first is $A) */
static void emit(shctx *c, wordlist *w, const char *val, char top, char all)
{
	/* a command's output the script holds as its command ($(...), `...`):
	 * not known, so one word, never split into the command's own words */
	int output = val[0] == '`' || (val[0] == '$' && val[1] == '(');
	for (const char *p = val; *p && c->err == WALK_OK; p++) {
		if (*p == ARRAY_SEP && !all)
			return;
		if (*p == ARRAY_SEP && top == CX_DQ && all == '@') {
			end_word(c, w);
			w->in_word = 1;
		} else if (*p == ARRAY_SEP && top == CX_DQ) {
			put(c, w, ' ');
		} else if (!top && (*p == ARRAY_SEP || (isspace((unsigned char)*p) && !output))) {
			end_word(c, w);
		} else {
			put(c, w, *p);
		}
	}
}

/* a here-document's delimiter after "<<" at s (unquoted), into c */
static void heredoc(shctx *c, const char *s, size_t n)
{
	size_t i = 0, k = 0;
	c->heredoc_tabs = i < n && s[i] == '-';
	i += (size_t)c->heredoc_tabs;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	for (; i < n && !isspace((unsigned char)s[i]) && !strchr(";&|<>()", s[i]); i++)
		if (s[i] != '\'' && s[i] != '"' && s[i] != '\\') {
			if (k + 1 == sizeof c->heredoc)
				return; /* too long to be one: read on as lines */
			c->heredoc[k++] = s[i];
		}
	c->heredoc[k] = '\0';
}

static int word_start(char prev)
{
	return !prev || isspace((unsigned char)prev) || strchr(";&|()", prev);
}

/* ch inside '...' or $'...': the closing quote ends it (and is kept when
 * the quotes nest in others) */
static void single_quoted(shctx *c, wordlist *w, char ch)
{
	if (ch == '\'')
		c->n--;
	if (ch != '\'' || c->n)
		put(c, w, ch);
}

/* s[0] of the n left, a character no rule of walk took: a variable
 * reference (outside quotes, or in double quotes) is replaced by its value;
 * one the script does not set is left as written. Anything else is itself.
 * Returns the characters used. */
/* $@ and $*: the positional parameters given ($1, $2 ... up to the first
 * not given), words of their own in "$@"; none where none is given */
static void positional(shctx *c, wordlist *w, char top, char all)
{
	char *joined = capsim_xasprintf("%s", "");
	for (int k = 1; k < 1000; k++) {
		char name[8];
		int nl = snprintf(name, sizeof name, "%d", k);
		const char *v = lookup(&c->st->vs, name, (size_t)nl);
		if (!v)
			break;
		char *next = capsim_xasprintf("%s%s%s", joined, k > 1 ? "\x1f" : "", v);
		free(joined);
		joined = next;
	}
	if (*joined)
		emit(c, w, joined, top, all);
	free(joined);
}

static size_t plain_or_variable(shctx *c, const char *s, size_t n, wordlist *w, char top)
{
	ref r;
	if (s[0] == '$' && n > 1 && s[1] == '#' && w && c->st && (!top || top == CX_DQ)) {
		put(c, w, '0'); /* $#: the script run as it is, without arguments */
		return 2;
	}
	if (s[0] == '$' && n > 1 && (s[1] == '@' || s[1] == '*') && w && c->st &&
	    (!top || top == CX_DQ)) {
		positional(c, w, top, s[1]);
		return 2;
	}
	if (s[0] != '$' || !w || !c->st || (top && top != CX_DQ) || !parse_ref(s, n, &r)) {
		put(c, w, s[0]);
		return 1;
	}
	char *owned;
	const char *val = resolve(c, &r, &owned);
	if (!val && c->st->in_test) {
		w->in_word |= top == CX_DQ; /* a test reads what it does not know as empty */
	} else if (!val) {
		for (size_t i = 0; i < r.len; i++)
			put(c, w, s[i]);
	} else {
		emit(c, w, val, top, r.all);
	}
	free(owned);
	CAPSIM_ASSERT(r.len >= 1 && r.len <= n);
	return r.len;
}

/* one character of walk outside the quoting rules' special cases: returns
 * the characters used */
static size_t walk_quote(shctx *c, const char *s, size_t i, size_t n, wordlist *w, char top)
{
	char ch = s[i];
	size_t al;
	long av;
	if (ch == '\'' && top != CX_DQ) {
		if (top)
			put(c, w, ch);
		else if (w)
			w->in_word = 1;
		push(c, CX_SQ);
	} else if (ch == '"') {
		if (top == CX_DQ)
			c->n--;
		else
			push(c, CX_DQ);
		if (c->n > (top == CX_DQ ? 0 : 1))
			put(c, w, ch);
		else if (w)
			w->in_word = 1;
	} else if (ch == '`') {
		if (top == CX_TICK)
			c->n--;
		else
			push(c, CX_TICK);
		put(c, w, ch);
	} else if (ch == '$' && i + 1 < n && s[i + 1] == '\'' && top != CX_DQ) {
		if (top)
			put(c, w, ch), put(c, w, '\'');
		else if (w)
			w->in_word = 1;
		push(c, CX_ANSI);
		return 2;
	} else if (ch == '$' && w && c->st && (!top || top == CX_DQ) &&
		   (al = arith_expand(&c->st->vs, s + i, n - i, &av)) > 0) {
		char num[32];
		snprintf(num, sizeof num, "%ld", av);
		for (const char *p = num; *p; p++)
			put(c, w, *p);
		return al;
	} else if (ch == '$' && i + 1 < n && s[i + 1] == '(') {
		push(c, CX_SUB);
		put(c, w, ch);
		put(c, w, '(');
		return 2;
	} else if (ch == '(' && (top == CX_SUB || (!top && c->prev == '='))) {
		push(c, top ? CX_SUB : CX_ARRAY);
		put(c, w, ch);
	} else if (ch == ')' && (top == CX_SUB || top == CX_ARRAY)) {
		c->n--;
		put(c, w, ch);
	} else if (!top && !w && ch == '<' && i + 1 < n && s[i + 1] == '<') {
		/* <<EOF a here-document; <<< a here-string, no more */
		if (i + 2 < n && s[i + 2] == '<')
			return 3;
		heredoc(c, s + i + 2, n - i - 2);
		return 2;
	} else {
		return plain_or_variable(c, s + i, n - i, w, top);
	}
	return 1;
}

/* Walk s[0..n) in the shell's quoting from the contexts in c (left as they
 * are at its end). With w, the words: quotes removed at the top, variables
 * expanded (split at blanks outside quotes, whole inside), and in YAML the
 * list punctuation ([ ] , around words) dropped. Linear in n and the
 * words. Returns 1 when the walk ended inside a comment. */
static int walk(shctx *c, const char *s, size_t n, wordlist *w)
{
	for (size_t i = 0; i < n && c->err == WALK_OK;) {
		char ch = s[i], top = c->n ? c->kind[c->n - 1] : 0;
		size_t step = 1;
		if (ch == '\n')
			c->cur_line++;
		if (top == CX_SQ) {
			single_quoted(c, w, ch);
		} else if (ch == '\\' && i + 1 < n) {
			/* escaped: the backslash goes outside quotes and before $ ` " \ in
			 * double quotes; elsewhere it stays */
			if (!(c->n == 0 || (top == CX_DQ && strchr("$`\"\\", s[i + 1])) ||
			      (top == CX_ANSI && s[i + 1] == '\'')))
				put(c, w, ch);
			put(c, w, s[i + 1]);
			step = 2;
		} else if (top == CX_ANSI) {
			single_quoted(c, w, ch);
		} else if (ch == '#' && top != CX_DQ && word_start(c->prev)) {
			/* a comment, to the end of the line */
			const char *e = memchr(s + i, '\n', n - i);
			if (!e)
				return 1;
			step = (size_t)(e - (s + i));
		} else if (!top && isspace((unsigned char)ch)) {
			end_word(c, w);
		} else if (c->yaml && !top && w && !w->in_word && (ch == '[' || ch == ']' ||
								      ch == ',')) {
			/* list punctuation between words */
		} else if (c->yaml && !top && w && w->in_word && (ch == ',' || ch == ']') &&
			   (i + 1 == n || isspace((unsigned char)s[i + 1]) || s[i + 1] == ']' ||
			    s[i + 1] == ',')) {
			end_word(c, w);
		} else {
			step = walk_quote(c, s, i, n, w, top);
		}
		c->prev = s[i + step - 1];
		i += step;
	}
	return 0;
}

/* ---- the lines of a script -------------------------------------------------------- */

typedef struct {
	const char *text;
	size_t len, pos;
	long line;          /* the next physical line's number */
	char *buf;          /* the logical line */
	size_t bl, bcap;
	long first;         /* its first physical line */
	shctx c;            /* the quoting at the end of the last logical line */
	char *body;         /* its here-document's text, where has_body */
	int has_body;
	size_t bodyl, bodycap;
	long body_first;    /* the here-document's first line */
	shstate *st;
} reader;

/* the next physical line (without its newline, trailing CR and blanks) */
static void physical(reader *r, const char **s, size_t *n)
{
	const char *start = r->text + r->pos;
	const char *e = memchr(start, '\n', r->len - r->pos);
	size_t l = e ? (size_t)(e - start) : r->len - r->pos;
	r->pos += l + (e != NULL);
	r->line++;
	while (l && (start[l - 1] == '\r' || start[l - 1] == ' '))
		l--;
	*s = start;
	*n = l;
}

/* s[0..n) onto *buf (of *bl bytes in *cap): -1 past the limit of a line */
static int grow(char **buf, size_t *bl, size_t *cap, const char *s, size_t n)
{
	if (*bl + n > CAPSIM_LAUNCH_MAX_LINE)
		return -1;
	if (*bl + n + 1 > *cap) {
		*cap = 2 * (*bl + n + 1);
		*buf = capsim_xrealloc(*buf, *cap);
	}
	memcpy(*buf + *bl, s, n);
	*bl += n;
	(*buf)[*bl] = '\0';
	return 0;
}

static void append(reader *r, const char *s, size_t n)
{
	if (r->st->failed)
		return;
	if (grow(&r->buf, &r->bl, &r->bcap, s, n) < 0)
		refuse(r->st, r->first, "a logical line (lines joined by a backslash, an open quote, "
		       "$( or array) is longer than %u bytes, the limit on a line of a launch "
		       "script",
		       CAPSIM_LAUNCH_MAX_LINE);
}

static int launcher_word(const char *s)
{
	return strstr(s, "torchrun") || strcmp(s, "srun") == 0 || strstr(s, "python") ||
	       strstr(s, "pretrain_") || strcmp(s, "deepspeed") == 0 ||
	       strncmp(s, "trainer.", 8) == 0 || strcmp(s, "llm") == 0; /* nemo llm */
}

static int launcher_line(const char *s)
{
	return strstr(s, "torchrun") || strstr(s, "srun ") || strstr(s, "python") ||
	       strstr(s, "pretrain_") || strstr(s, "deepspeed ") || strstr(s, "trainer.") ||
	       strstr(s, "nemo llm ");
}

/* a YAML launch line goes on over the lines indented further that are not
 * keys of their own */
static void yaml_continue(reader *r)
{
	size_t indent = strspn(r->buf, " \t");
	while (!r->st->failed && r->pos < r->len && r->bl && r->buf[r->bl - 1] != ']') {
		const char *nx = r->text + r->pos;
		const char *e = memchr(nx, '\n', r->len - r->pos);
		size_t l = e ? (size_t)(e - nx) : r->len - r->pos;
		size_t ni = 0;
		while (ni < l && (nx[ni] == ' ' || nx[ni] == '\t'))
			ni++;
		size_t wl = ni;
		while (wl < l && nx[wl] != ' ')
			wl++;
		int key = wl > ni && nx[wl - 1] == ':' && (wl == l || nx[wl] == ' ');
		if (ni <= indent || ni == l || nx[ni] == '#' || key)
			break;
		const char *s;
		size_t n;
		physical(r, &s, &n);
		append(r, " ", 1);
		append(r, s + ni, n > ni ? n - ni : 0);
	}
}

/* a here-document's body, to its delimiter, into r->body */
static void read_body(reader *r)
{
	r->bodyl = 0;
	r->has_body = 1;
	grow(&r->body, &r->bodyl, &r->bodycap, "", 0);
	r->body_first = r->line;
	while (r->pos < r->len && !r->st->failed) {
		const char *s;
		size_t n;
		physical(r, &s, &n);
		size_t t = 0;
		while (r->c.heredoc_tabs && t < n && s[t] == '\t')
			t++;
		if (n - t == strlen(r->c.heredoc) && memcmp(s + t, r->c.heredoc, n - t) == 0)
			return;
		if (grow(&r->body, &r->bodyl, &r->bodycap, s + t, n - t) < 0 ||
		    grow(&r->body, &r->bodyl, &r->bodycap, "\n", 1) < 0)
			refuse(r->st, r->body_first, "a here-document is longer than %u bytes, the "
			       "limit on a line of a launch script", CAPSIM_LAUNCH_MAX_LINE);
	}
}

/* physical lines joined into the logical line in r->buf until its quotes,
 * $( and arrays close and no backslash continues it: 0 on a refusal */
static int join_lines(reader *r)
{
	for (;;) {
		const char *s;
		size_t n;
		physical(r, &s, &n);
		if (memchr(s, '\0', n)) {
			refuse(r->st, r->line - 1, "a NUL byte: a launch script is text");
			return 0;
		}
		char top = r->c.n ? r->c.kind[r->c.n - 1] : 0;
		int more = n && s[n - 1] == '\\' && top != CX_SQ;
		size_t from = r->bl;
		append(r, s, n - (size_t)more);
		if (r->st->failed)
			return 0;
		if (!r->st->yaml) {
			r->c.cur_line = r->line - 1;
			if (walk(&r->c, r->buf + from, r->bl - from, NULL))
				more = 0; /* a backslash in a comment continues nothing */
			if (r->c.err == WALK_NESTING) {
				refuse(r->st, r->line - 1, "quotes, $( and backticks nested more than "
				       "%d deep, the limit of a launch script",
				       CAPSIM_LAUNCH_MAX_NESTING);
				return 0;
			}
		}
		if (!more && r->c.n == 0)
			return 1;
		if (r->pos >= r->len) {
			if (r->c.n) {
				refuse(r->st, r->c.line[r->c.n - 1], "unterminated %s: the file ends "
				       "before it is closed (bash stops here with a syntax error)",
				       kind_name(r->c.kind[r->c.n - 1]));
				return 0;
			}
			return 1;
		}
		append(r, more ? " " : "\n", 1);
		r->c.prev = more ? ' ' : '\n';
	}
}

/* the next logical line into r->buf (and its here-document's text into
 * r->body): 1, or 0 at the end (or on a refusal) */
static int next_line(reader *r)
{
	if (r->st->failed || r->pos >= r->len)
		return 0;
	r->bl = 0;
	append(r, "", 0);
	r->first = r->line;
	r->has_body = 0;
	r->c.prev = 0;
	r->c.heredoc[0] = '\0';
	if (!join_lines(r))
		return 0;
	if (r->c.heredoc[0])
		read_body(r);
	if (r->st->yaml && launcher_line(r->buf))
		yaml_continue(r);
	return !r->st->failed;
}

/* the words of s[0..n) (a part of the logical line that starts at line):
 * -1 after the reason; what the expansions rested on added to *why */
static int words_n(shstate *st, long line, const char *s, size_t n, wordlist *w,
		   capsim_cond_why *why, int expand)
{
	memset(w, 0, sizeof *w);
	shctx c = { .cur_line = line, .yaml = st->yaml, .st = expand ? st : NULL };
	walk(&c, s, n, w);
	end_word(&c, w);
	if (why) {
		why->unset += c.why.unset;
		why->defaulted += c.why.defaulted;
		why->other += c.why.other;
	}
	if (c.err == WALK_LONG)
		refuse(st, line, "the line's words, its variables expanded, pass %u bytes, the "
		       "limit on a line of a launch script", CAPSIM_LAUNCH_MAX_LINE);
	else if (c.err == WALK_NESTING)
		refuse(st, line, "quotes, $( and backticks nested more than %d deep, the limit "
		       "of a launch script", CAPSIM_LAUNCH_MAX_NESTING);
	else if (c.n)
		refuse(st, c.line[c.n - 1], "unterminated %s: the line ends before it is closed "
		       "(bash stops here with a syntax error)", kind_name(c.kind[c.n - 1]));
	else if ((st->expanded += w->total) > CAPSIM_LAUNCH_MAX_EXPANDED)
		refuse(st, line, "the script's lines, their variables expanded, pass %u bytes "
		       "together, the limit of a launch script", CAPSIM_LAUNCH_MAX_EXPANDED);
	if (!st->failed)
		return 0;
	free_words(w);
	return -1;
}

static int words(shstate *st, long line, const char *s, wordlist *w)
{
	return words_n(st, line, s, strlen(s), w, NULL, 1);
}

/* ---- the commands of a line ------------------------------------------------------- */

/* where a point of a line is, for cutting it into commands and words as
 * written: inside quotes, $( ), ( ) or backticks, or at the top */
typedef struct {
	char k[CAPSIM_LAUNCH_MAX_NESTING];
	int n;
} lexer;

/* s[i] stepped over: returns the index after it (and after what it
 * escapes, a comment it starts); *top whether it stood at the top (-1: a
 * comment skipped) */
static size_t lex_step(lexer *x, const char *s, size_t n, size_t i, int *top)
{
	char ch = s[i], k = x->n ? x->k[x->n - 1] : 0;
	*top = 0;
	if (k == '\'') {
		if (ch == '\'')
			x->n--;
		return i + 1;
	}
	if (ch == '\\')
		return i + 2 > n ? n : i + 2;
	if (ch == '"' && k == '"') {
		x->n--;
		return i + 1;
	}
	if (ch == '`' && k == '`') {
		x->n--;
		return i + 1;
	}
	int open = x->n < CAPSIM_LAUNCH_MAX_NESTING;
	if (ch == '$' && i + 1 < n && s[i + 1] == '(' && open) {
		x->k[x->n++] = '(';
		return i + 2;
	}
	if ((ch == '"' || ch == '`' || (ch == '\'' && k != '"')) && open) {
		x->k[x->n++] = ch;
		return i + 1;
	}
	if (k == '"' || k == '`')
		return i + 1;
	if (ch == '(' && open) {
		x->k[x->n++] = '(';
		return i + 1;
	}
	if (ch == ')' && k == '(') {
		x->n--;
		return i + 1;
	}
	if (ch == '#' && (i == 0 || word_start(s[i - 1]))) {
		const char *e = memchr(s + i, '\n', n - i);
		*top = -1; /* a comment, to the end of its line */
		return e ? (size_t)(e - s) : n;
	}
	*top = x->n == 0;
	return i + 1;
}

/* s[0..n) cut at blanks at the top: the words as written (quotes kept),
 * each with where it starts */
static void raw_words(const char *s, size_t n, wordlist *w, size_t *at, int max)
{
	memset(w, 0, sizeof *w);
	lexer x = { .n = 0 };
	shctx c = { .err = WALK_OK };
	for (size_t i = 0; i < n && w->n < max;) {
		int top;
		size_t next = lex_step(&x, s, n, i, &top);
		if (top == -1 || (top && isspace((unsigned char)s[i]))) {
			end_word(&c, w);
		} else if (next > i) {
			if (!w->in_word && at)
				at[w->n] = i;
			for (size_t k = i; k < next; k++)
				if (s[k] != '\n' || x.n)
					put(&c, w, s[k]);
		}
		i = next > i ? next : i + 1;
	}
	if (w->n < max)
		end_word(&c, w);
}

/* the condition's word expanded (capsim_cond_expand) */
static char *expand_word(void *ctx, const char *raw, capsim_cond_why *why)
{
	shstate *st = ctx;
	wordlist w;
	st->in_test = 1;
	int bad = words_n(st, 0, raw, strlen(raw), &w, why, 1);
	st->in_test = 0;
	if (bad < 0)
		return capsim_xasprintf("%s", "");
	char *v = joined(&w, ' ');
	free_words(&w);
	return v;
}

static size_t skip_blanks(const char *s, size_t n, size_t i)
{
	while (i < n && isspace((unsigned char)s[i]))
		i++;
	return i;
}

/* why, in words (into buf) */
static const char *reasons(const capsim_cond_why *why, char *buf, size_t size)
{
	snprintf(buf, size, "%s%s%s%s%s",
		 why->unset ? "a variable the script does not set, taken as empty; " : "",
		 why->defaulted ? "the script's own defaults; " : "",
		 why->files ? "a file test, taken as the file being there; " : "",
		 why->commands ? "a command's status, taken as success; " : "",
		 why->other ? "a test not read, taken as false; " : "");
	size_t l = strlen(buf);
	if (l >= 2)
		buf[l - 2] = '\0';
	return buf;
}

/* the condition s[0..n) (of line) decided; a decision that rests on what the
 * script does not say is noted with the branch taken */
static int decide(shstate *st, const char *kw, const char *s, size_t n, long line,
		  const char *yes, const char *no)
{
	size_t b = skip_blanks(s, n, 0);
	s += b;
	n -= b;
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	wordlist raw;
	raw_words(s, n, &raw, NULL, INT_MAX);
	capsim_cond_why why = { 0 };
	int r = capsim_cond_eval(raw.v, raw.n, expand_word, st, &why);
	free_words(&raw);
	if (why.unset || why.defaulted || why.files || why.commands || why.other) {
		char buf[200];
		note(st->l, "line %ld: %s%s%.*s: decided by %s: %s", line, kw, *kw ? " " : "",
		     (int)(n > 50 ? 50 : n), s, reasons(&why, buf, sizeof buf), r ? yes : no);
	}
	return r;
}

static int running(const shstate *st)
{
	return st->nb == 0 || st->b[st->nb - 1].active;
}

/* a block's opening (or, with end, closing) keyword */
static const char *block_name(char kind, int end)
{
	return kind == 'i' ? (end ? "fi" : "if") : kind == 'c' ? (end ? "esac" : "case") :
	       end ? "done" : "loop";
}

static block *open_block(shstate *st, char kind, long line)
{
	if (st->nb == MAX_BLOCKS) {
		refuse(st, line, "if and case blocks nested more than %d deep, the limit of a "
		       "launch script", MAX_BLOCKS);
		return NULL;
	}
	block *b = &st->b[st->nb];
	*b = (block){ .kind = kind, .outer = running(st), .line = line };
	st->nb++;
	return b;
}

/* fi or esac: the block closed (bash refuses one without its opening) */
static void close_block(shstate *st, char kind, const char *kw, long line)
{
	if (!st->nb || st->b[st->nb - 1].kind != kind) {
		refuse(st, line, "%s without its %s (bash stops here with a syntax error)", kw,
		       kind == 'i' ? "if" : kind == 'c' ? "case" : "while, until or for");
		return;
	}
	free(st->b[--st->nb].subject);
}

static void piece(shstate *st, reader *r, const char *s, size_t n, long line);

/* a case block's pattern (pat|pat) then the commands after it */
static void case_pattern(shstate *st, reader *r, block *b, const char *s, size_t n, long line)
{
	lexer x = { .n = 0 };
	size_t close = n;
	for (size_t i = 0; i < n;) {
		int top;
		size_t next = lex_step(&x, s, n, i, &top);
		if (top && s[i] == ')') {
			close = i;
			break;
		}
		i = next > i ? next : i + 1;
	}
	size_t from = s[0] == '(' ? 1 : 0;
	int match = 0;
	if (b->outer && !b->taken && close > from) {
		char *pats = capsim_xasprintf("%.*s", (int)(close - from), s + from);
		for (char *p = pats, *bar; p && !match; p = bar ? bar + 1 : NULL) {
			bar = strchr(p, '|');
			if (bar)
				*bar = '\0';
			char *pat = expand_word(st, p, NULL);
			match = fnmatch(pat, b->subject, 0) == 0;
			free(pat);
		}
		free(pats);
	}
	b->active = match;
	b->taken |= match;
	b->want_pattern = 0;
	if (close < n)
		piece(st, r, s + close + 1, n - close - 1, line);
}

/* case WORD in: the block opened on WORD's value */
static void open_case(shstate *st, const char *s, size_t n, long line)
{
	block *b = open_block(st, 'c', line);
	if (!b)
		return;
	wordlist raw;
	raw_words(s, n, &raw, NULL, 1);
	capsim_cond_why why = { 0 };
	b->subject = raw.n && st->nb && b->outer ? expand_word(st, raw.v[0], &why) :
		     capsim_xasprintf("%s", "");
	if (why.unset || why.defaulted) {
		char buf[200];
		note(st->l, "line %ld: case %.40s: by %s: '%.40s'", line, raw.n ? raw.v[0] : "",
		     reasons(&why, buf, sizeof buf), b->subject);
	}
	free_words(&raw);
	b->want_pattern = 1;
}

/* s[0..n) starts with the keyword kw (a word of its own) */
static int keyword(const char *s, size_t n, const char *kw)
{
	size_t k = strlen(kw);
	return n >= k && memcmp(s, kw, k) == 0 && (n == k || isspace((unsigned char)s[k]) ||
						   s[k] == ';');
}

static void command(shstate *st, reader *r, const char *s, size_t n, long line);

/* the if, elif, else and fi of a block */
static int if_keyword(shstate *st, const char *s, size_t n, long line, size_t *rest)
{
	block *b = st->nb ? &st->b[st->nb - 1] : NULL;
	*rest = n;
	if (keyword(s, n, "if")) {
		b = open_block(st, 'i', line);
		if (b && b->outer)
			b->active = b->taken = decide(st, "if", s + 2, n - 2, line, "its branch taken",
						      "its branch not taken");
		else if (b)
			b->taken = 1;
	} else if (keyword(s, n, "elif")) {
		if (!b || b->kind != 'i') {
			refuse(st, line, "elif without its if (bash stops here with a syntax error)");
		} else if (b->outer && !b->taken) {
			b->active = b->taken = decide(st, "elif", s + 4, n - 4, line, "its branch taken",
						      "its branch not taken");
		} else {
			b->active = 0;
		}
	} else if (keyword(s, n, "else")) {
		if (!b || b->kind != 'i') {
			refuse(st, line, "else without its if (bash stops here with a syntax error)");
			return 1;
		}
		b->active = b->outer && !b->taken;
		b->taken = 1;
		*rest = 4;
	} else if (keyword(s, n, "fi")) {
		close_block(st, 'i', "fi", line);
	} else {
		return 0;
	}
	return 1;
}

/* while, until or for: a loop whose condition the script's values decide
 * false is skipped; any other's body is read once, where it stands */
static void open_loop(shstate *st, const char *s, size_t n, long line)
{
	block *b = open_block(st, 'w', line);
	if (!b || !b->outer)
		return;
	int until = keyword(s, n, "until");
	if (keyword(s, n, "for")) {
		b->active = 1;
		note(st->l, "line %ld: %.60s: a loop, its body read once", line, s);
	} else {
		size_t k = 5; /* while, until */
		b->active = decide(st, until ? "until" : "while", s + k, n - k, line, "true",
				   "false") != until;
		if (b->active)
			note(st->l, "line %ld: %.60s: a loop, its body read once", line, s);
	}
}

/* one command of a line (cut at ; & and newlines at the top): a block's
 * keyword, a case pattern, or a command run where its block runs */
static void piece(shstate *st, reader *r, const char *s, size_t n, long line)
{
	size_t i = skip_blanks(s, n, 0);
	s += i;
	n -= i;
	if (!n || st->failed)
		return;
	block *b = st->nb ? &st->b[st->nb - 1] : NULL;
	size_t rest;
	if (b && b->kind == 'c' && b->want_pattern && !keyword(s, n, "esac")) {
		case_pattern(st, r, b, s, n, line);
	} else if (if_keyword(st, s, n, line, &rest)) {
		if (rest < n)
			piece(st, r, s + rest, n - rest, line);
	} else if (keyword(s, n, "then") || keyword(s, n, "do")) {
		size_t k = s[0] == 't' ? 4 : 2;
		piece(st, r, s + k, n - k, line);
	} else if (keyword(s, n, "case")) {
		open_case(st, s + 4, n - 4, line);
	} else if (keyword(s, n, "esac")) {
		close_block(st, 'c', "esac", line);
	} else if (keyword(s, n, "while") || keyword(s, n, "until") || keyword(s, n, "for")) {
		open_loop(st, s, n, line);
	} else if (keyword(s, n, "done")) {
		close_block(st, 'w', "done", line);
	} else if (running(st)) {
		command(st, r, s, n, line);
	}
}

/* the logical line cut into commands at ; ;; & and newlines at the top */
static void pieces(shstate *st, reader *r, const char *s, size_t n, long line)
{
	lexer x = { .n = 0 };
	size_t from = 0;
	for (size_t i = 0; i <= n && !st->failed;) {
		int top = 1;
		size_t next = i < n ? lex_step(&x, s, n, i, &top) : n + 1;
		int cut = i == n || (top && (s[i] == ';' || s[i] == '\n' ||
					     (s[i] == '&' && (i + 1 == n || !strchr("&>", s[i + 1])) &&
					      (i == 0 || (s[i - 1] != '&' && s[i - 1] != '>')))));
		if (cut) {
			piece(st, r, s + from, i - from, line);
			int dsemi = i + 1 < n && s[i] == ';' && s[i + 1] == ';';
			if (dsemi && st->nb && st->b[st->nb - 1].kind == 'c') {
				st->b[st->nb - 1].want_pattern = 1;
				st->b[st->nb - 1].active = 0;
			}
			next = i + 1 + (size_t)dsemi;
			from = next;
		}
		i = next > i ? next : i + 1;
	}
}

/* w starts NAME= or NAME+= */
static int assignment_word(const char *w)
{
	if (!isalpha((unsigned char)*w) && *w != '_')
		return 0;
	while (isalnum((unsigned char)*w) || *w == '_')
		w++;
	return *w == '=' || (w[0] == '+' && w[1] == '=');
}

/* NAME=value, NAME+=value, NAME=(words), NAME+=(words), after export,
 * declare, local, readonly or typeset: 1 with the value kept, 0 when the
 * command is not one, -1 after a refusal */
static int assignment(shstate *st, const char *s, size_t n, long line)
{
	const char *p = s, *e = s + n;
	static const char *const decl[] = { "export", "declare", "local", "readonly", "typeset" };
	for (size_t k = 0; k < sizeof decl / sizeof decl[0]; k++)
		if (keyword(p, (size_t)(e - p), decl[k])) {
			/* the keyword, and its options (-a, -x) */
			for (p += strlen(decl[k]); p < e && isspace((unsigned char)*p);) {
				p = s + skip_blanks(s, n, (size_t)(p - s));
				while (p < e && *p == '-' && !isspace((unsigned char)*p))
					while (p < e && !isspace((unsigned char)*p))
						p++;
			}
			break;
		}
	const char *name = p;
	if (p == e || (!isalpha((unsigned char)*p) && *p != '_'))
		return 0;
	while (p < e && (isalnum((unsigned char)*p) || *p == '_'))
		p++;
	int add = p + 1 < e && p[0] == '+' && p[1] == '=';
	if (!(p < e && *p == '=') && !add)
		return 0;
	size_t nl = (size_t)(p - name);
	p += 1 + (size_t)add;
	int array = p < e && *p == '(';
	const char *v = p + array, *ve = e, *rest = NULL;
	if (!array) {
		/* A=1 B=2: each set; A=1 cmd: cmd run with A in its environment */
		size_t at[2];
		wordlist raw;
		raw_words(p, (size_t)(e - p), &raw, at, 2);
		int more = raw.n == 2, next = more && assignment_word(raw.v[1]);
		free_words(&raw);
		if (more && !next)
			return 0;
		if (more)
			ve = rest = p + at[1];
	}
	if (array)
		while (ve > v && ve[-1] != ')')
			ve--;
	if (array && ve > v)
		ve--;
	wordlist w;
	capsim_cond_why why = { 0 };
	if (words_n(st, line, v, (size_t)(ve - v), &w, &why, 1) < 0)
		return -1;
	char *val = joined(&w, array ? ARRAY_SEP : ' ');
	free_words(&w);
	const char *old = add ? lookup(&st->vs, name, nl) : NULL;
	if (old && *old) {
		char *both = capsim_xasprintf("%s%s%s", old, array && *val ? "\x1f" : "", val);
		free(val);
		val = both;
	}
	set_var(&st->vs, name, nl, val, why.unset || why.defaulted);
	return rest ? assignment(st, rest, (size_t)(e - rest), line) : 1;
}

/* ---- Slurm's environment from #SBATCH ---------------------------------------------- */

/* sbatch's options and the variables Slurm sets from them in the job */
static const struct {
	const char *opt, *opt2, *var, *var2;
} sbatch_env[] = {
	{ "--nodes", "-N", "SLURM_NNODES", "SLURM_JOB_NUM_NODES" },
	{ "--ntasks-per-node", NULL, "SLURM_NTASKS_PER_NODE", NULL },
	{ "--ntasks", "-n", "SLURM_NTASKS", "SLURM_NPROCS" },
	{ "--gpus-per-node", NULL, "SLURM_GPUS_PER_NODE", "SLURM_GPUS_ON_NODE" },
	{ "--gpus", "-G", "SLURM_GPUS", NULL },
	{ "--cpus-per-task", "-c", "SLURM_CPUS_PER_TASK", NULL },
	{ "--job-name", "-J", "SLURM_JOB_NAME", NULL },
	{ "--partition", "-p", "SLURM_JOB_PARTITION", NULL },
	{ "--gres", NULL, "SLURM_GPUS_ON_NODE", NULL },
};

/* a Slurm variable set from an #SBATCH option's value */
static void slurm_var(shstate *st, const char *name, const char *opt, const char *v)
{
	if (!name)
		return;
	const char *val = v;
	if (strcmp(opt, "--gres") == 0 || strcmp(opt, "--gpus-per-node") == 0) {
		/* gpu:8, gpu:h100:8, h100:8: the count */
		if (strcmp(opt, "--gres") == 0 && strncmp(v, "gpu", 3) != 0)
			return;
		const char *colon = strrchr(v, ':');
		val = colon ? colon + 1 : v;
	} else if (strcmp(opt, "--nodes") == 0 && strchr(v, '-')) {
		val = strchr(v, '-') + 1; /* a range: the largest */
	}
	set_var(&st->vs, name, strlen(name), capsim_xasprintf("%s", val), 0);
	note(st->l, "$%s: %.40s, from the script's #SBATCH lines", name, val);
}

/* the options of one #SBATCH line into Slurm's variables */
static void sbatch_vars(shstate *st, const wordlist *w)
{
	for (int i = 0; i < w->n; i++)
		for (size_t k = 0; k < sizeof sbatch_env / sizeof sbatch_env[0]; k++) {
			const char *o = sbatch_env[k].opt, *o2 = sbatch_env[k].opt2, *a = w->v[i];
			size_t ol = strlen(o);
			const char *v = NULL;
			if (strncmp(a, o, ol) == 0 && a[ol] == '=')
				v = a + ol + 1;
			else if ((strcmp(a, o) == 0 || (o2 && strcmp(a, o2) == 0)) && i + 1 < w->n)
				v = w->v[i + 1];
			else if (o2 && strncmp(a, o2, 2) == 0 && a[2])
				v = a + 2;
			if (!v)
				continue;
			slurm_var(st, sbatch_env[k].var, o, v);
			slurm_var(st, sbatch_env[k].var2, o, v);
		}
	const char *nodes = lookup(&st->vs, "SLURM_NNODES", 12);
	const char *per = lookup(&st->vs, "SLURM_NTASKS_PER_NODE", 21);
	long a, b;
	char *end1, *end2;
	if (nodes && per && !lookup(&st->vs, "SLURM_NTASKS", 12) &&
	    (a = strtol(nodes, &end1, 10)) > 0 && !*end1 && (b = strtol(per, &end2, 10)) > 0 &&
	    !*end2 && a <= CAPSIM_LAUNCH_MAX_WHOLE / b) {
		set_var(&st->vs, "SLURM_NTASKS", 12, capsim_xasprintf("%ld", a * b), 0);
		note(st->l, "$SLURM_NTASKS: %ld, from the script's #SBATCH lines", a * b);
	}
}

/* an #SBATCH line: its options read (as sbatch reads them, unexpanded) and
 * Slurm's variables set */
static void sbatch_line(shstate *st, const char *s, long line)
{
	wordlist w;
	char *where = capsim_xasprintf("%s:%ld", st->file, line);
	if (words_n(st, line, s, strlen(s), &w, NULL, 0) == 0) {
		capsim_launch_argv(w.v, w.n, where, st->l, st->d);
		sbatch_vars(st, &w);
		free_words(&w);
	}
	free(where);
}

/* ---- commands --------------------------------------------------------------------- */

static void run_text(shstate *st, const char *text, size_t len, long line, int yaml);

static int in_list(const char *s, const char *const *set)
{
	for (; *set; set++)
		if (strcmp(s, *set) == 0)
			return 1;
	return 0;
}

/* commands that run no training (their words are not a launch's, though
 * they may name one: echo "pretrain_gpt.py not found") */
static const char *const not_launch[] = {
	"echo", "printf", "mkdir", "cd", "rm", "cp", "mv", "ln", "ls", "cat", "touch", "chmod",
	"chown", "set", "unset", "shift", "sleep", "wait", "trap", "exit", "return", "pwd",
	"hostname", "date", "nvidia-smi", "tee", "pip", "git", "wget", "curl", "module", "source",
	".", "ulimit", "umask", "kill", "scontrol", "sed", "grep", "head", "tail", "find", "which",
	"command", "type", "test", "[", "[[", "true", "false", ":", NULL,
};

/* the words of one command (from a line's words, cut at && || and |) read
 * where they launch training: a word holding a whole launch line (bash -c
 * "$CMD", eval "$CMD") read as a script of its own */
static void launch_words(shstate *st, char **v, int n, long line)
{
	int k = 0;
	while (k < n && strchr(v[k], '=') && (isalpha((unsigned char)v[k][0]) || v[k][0] == '_'))
		k++; /* NAME=value before a command: its environment */
	if (k == n || in_list(v[k], not_launch))
		return;
	char *where = capsim_xasprintf("%s:%ld", st->file, line);
	int launcher = 0, at = -1;
	for (int i = k; i < n; i++) {
		if (strpbrk(v[i], " \t\n") && launcher_line(v[i])) {
			/* the launcher before it (srun ... bash -c): its own flags read */
			int end = i > k && strcmp(v[i - 1], "-c") == 0 ? i - 1 : i;
			if (launcher)
				capsim_launch_argv(v + k, end - k, where, st->l, st->d);
			run_text(st, v[i], strlen(v[i]), line, 0);
			free(where);
			return;
		}
		if (at < 0 && strstr(v[i], "torchrun"))
			at = i;
		launcher |= launcher_word(v[i]);
	}
	if (launcher) {
		at = at < 0 ? k : at;
		capsim_launch_argv(v + at, n - at, where, st->l, st->d);
		st->l->found_launcher = 1;
	}
	free(where);
}

/* [ test ] && command, [ test ] || command: 1 when s is one (the command
 * run as bash would run it), 0 when not */
static int test_and_run(shstate *st, reader *r, const char *s, size_t n, long line)
{
	if (!keyword(s, n, "[") && !keyword(s, n, "[[") && !keyword(s, n, "test"))
		return 0;
	enum { MAXW = 256 };
	size_t at[MAXW];
	wordlist raw;
	raw_words(s, n, &raw, at, MAXW);
	int op = -1;
	for (int i = 1; i < raw.n && op < 0; i++)
		if (strcmp(raw.v[i], "&&") == 0 || strcmp(raw.v[i], "||") == 0)
			if (strcmp(raw.v[i - 1], "]") == 0 || strcmp(raw.v[i - 1], "]]") == 0 ||
			    strcmp(raw.v[0], "test") == 0)
				op = i;
	if (op < 0 || op + 1 >= raw.n) {
		free_words(&raw);
		return op >= 0;
	}
	int and = raw.v[op][0] == '&';
	size_t cond_end = at[op], then = at[op + 1];
	free_words(&raw);
	if (decide(st, "", s, cond_end, line, and ? "the command after && run" :
		   "the command after || not run", and ? "the command after && not run" :
		   "the command after || run") == and)
		piece(st, r, s + then, n - then, line);
	return 1;
}

/* the variable read's words (read -r -d '' NAME <<EOF) name: the first
 * word after its options (-d, -p, -n, -N, -t, -u with their values), or
 * NULL */
static const char *read_name(const wordlist *w)
{
	for (int i = 1; i < w->n; i++) {
		const char *a = w->v[i];
		if (a[0] == '-') {
			i += a[1] && strchr("dpnNtu", a[1]) && !a[2];
			continue;
		}
		return assignment_word(a) || a[0] == '<' || !*a ? NULL : a;
	}
	return NULL;
}

/* the words of s[0..n), one command of a pipeline or an && || list, read
 * where they launch training */
static void segment(shstate *st, const char *s, size_t n, long line)
{
	wordlist w;
	if (words_n(st, line, s, n, &w, NULL, 1) < 0)
		return;
	launch_words(st, w.v, w.n, line);
	free_words(&w);
}

/* a command where its block runs: an assignment, a read of a
 * here-document, a here-document holding a launch, or commands cut at
 * && || and | (as written, not in what a variable holds) */
static void command(shstate *st, reader *r, const char *s, size_t n, long line)
{
	if (assignment(st, s, n, line) != 0 || test_and_run(st, r, s, n, line))
		return;
	if (r && r->has_body && keyword(s, n, "read")) {
		/* read -r -d '' NAME <<EOF: the here-document into NAME */
		wordlist w;
		if (words_n(st, line, s, n, &w, NULL, 1) < 0)
			return;
		const char *name = read_name(&w);
		if (name)
			set_var(&st->vs, name, strlen(name), capsim_xasprintf("%s", r->body), 0);
		free_words(&w);
		return;
	}
	if (r && r->has_body && launcher_line(r->body)) {
		r->has_body = 0; /* read once, though the line holds more commands */
		run_text(st, r->body, r->bodyl, r->body_first, 0);
		return;
	}
	lexer x = { .n = 0 };
	size_t from = 0;
	for (size_t i = 0; i <= n && !st->failed;) {
		int top = 1;
		size_t next = i < n ? lex_step(&x, s, n, i, &top) : n + 1;
		if (i == n || (top && s[i] == '|') || (top && s[i] == '&' && i + 1 < n &&
							s[i + 1] == '&')) {
			segment(st, s + from, i - from, line);
			next = i + 1 + (size_t)(i + 1 < n && (s[i + 1] == '|' || s[i + 1] == '&'));
			from = next;
		}
		i = next > i ? next : i + 1;
	}
}

/* a YAML document's line (a Kubernetes Job): nvidia.com/gpu and a launch */
static void yaml_line(shstate *st, const char *p, long line)
{
	char *where = capsim_xasprintf("%s:%ld", st->file, line);
	const char *g = strstr(p, "nvidia.com/gpu:");
	if (g && !st->l->gpus_per_node) {
		g += 15;
		while (*g == ' ' || *g == '"' || *g == '\'')
			g++;
		char num[24];
		size_t k = strspn(g, "0123456789");
		int nk = (int)(k < sizeof num ? k : sizeof num - 1);
		snprintf(num, sizeof num, "%.*s", nk, g);
		whole("nvidia.com/gpu", k < sizeof num ? num : g, &st->l->gpus_per_node, where,
		      st->d);
	}
	wordlist w;
	if (launcher_line(p) && words(st, line, p, &w) == 0) {
		launch_words(st, w.v, w.n, line);
		free_words(&w);
	}
	free(where);
}

/* one logical line of a script */
static void script_line(reader *r)
{
	shstate *st = r->st;
	const char *p = r->buf;
	while (isspace((unsigned char)*p))
		p++;
	if (st->yaml) {
		if (*p != '#')
			yaml_line(st, p, r->first);
	} else if (strncmp(p, "#SBATCH", 7) == 0) {
		sbatch_line(st, p + 7, r->first);
	} else {
		pieces(st, r, p, strlen(p), r->first);
	}
}

/* text read as a script from its line line (the file's, a here-document's,
 * a command held in a variable): its if and case blocks closed in it */
static void run_text(shstate *st, const char *text, size_t len, long line, int yaml)
{
	if (st->inner == MAX_INNER) {
		refuse(st, line, "commands held in variables or here-documents run inside one "
		       "another more than %d deep, the limit of a launch script", MAX_INNER);
		return;
	}
	int was_yaml = st->yaml, nb = st->nb;
	st->yaml = yaml;
	st->inner++;
	reader r = { .text = text, .len = len, .line = line, .st = st, .c.yaml = yaml };
	while (next_line(&r))
		script_line(&r);
	if (!st->failed && st->nb > nb)
		refuse(st, st->b[st->nb - 1].line, "%s without its %s: the %s ends before it is "
		       "closed (bash stops here with a syntax error)",
		       block_name(st->b[st->nb - 1].kind, 0), block_name(st->b[st->nb - 1].kind, 1),
		       st->inner > 1 ? "command" :
		       "file");
	while (st->nb > nb)
		free(st->b[--st->nb].subject);
	st->inner--;
	st->yaml = was_yaml;
	free(r.buf);
	free(r.body);
}

void capsim_launch_init(capsim_launch *l)
{
	memset(l, 0, sizeof *l);
	l->zero = l->sequence_parallel = l->tp_comm_overlap = -1;
	l->swiglu = l->rmsnorm = l->rope = l->untied = -1;
	l->fsdp_zero = -1;
}

/* a Kubernetes Job or another YAML document, not a shell script */
static int is_yaml(const char *text, size_t len, const char *file)
{
	size_t fl = strlen(file);
	if ((fl > 5 && strcmp(file + fl - 5, ".yaml") == 0) ||
	    (fl > 4 && strcmp(file + fl - 4, ".yml") == 0))
		return 1;
	for (size_t i = 0; i < len;) {
		const char *e = memchr(text + i, '\n', len - i);
		size_t l = e ? (size_t)(e - (text + i)) : len - i;
		const char *s = text + i;
		if (l && s[0] != '#' && !isspace((unsigned char)s[0]))
			return (l >= 11 && strncmp(s, "apiVersion:", 11) == 0) ||
			       (l >= 5 && strncmp(s, "kind:", 5) == 0) ||
			       (l >= 3 && strncmp(s, "---", 3) == 0);
		i += l + 1;
	}
	return 0;
}

/* the environment given: NAME=VALUE each into st's variables; -1 after a
 * refusal */
static int environment(shstate *st, const char *const *env, int n_env)
{
	for (int i = 0; i < n_env; i++) {
		const char *eq = strchr(env[i], '=');
		size_t e = eq ? name_end(env[i], (size_t)(eq - env[i]), 0, 1) : 0;
		if (!eq || e == 0 || env[i] + e != eq) {
			capsim_diags_add_at(st->d, "--env", "'%.80s': expected NAME=VALUE (NAME a shell "
					    "variable's name, or a number for $1, $2 ...)", env[i]);
			return -1;
		}
		set_var(&st->vs, env[i], e, capsim_xasprintf("%s", eq + 1), 0);
		note(st->l, "$%.*s: '%.60s', given (--env)", (int)e, env[i], eq + 1);
	}
	return 0;
}

int capsim_launch_script(const char *text, size_t len, const char *file, capsim_launch *l,
			 capsim_diags *d)
{
	return capsim_launch_script_env(text, len, file, NULL, 0, l, d);
}

int capsim_launch_script_env(const char *text, size_t len, const char *file,
			     const char *const *env, int n_env, capsim_launch *l, capsim_diags *d)
{
	capsim_launch_inputs in = { .env = env, .n_env = n_env };
	return capsim_launch_script_with(text, len, file, &in, l, d);
}

int capsim_launch_script_with(const char *text, size_t len, const char *file,
			      const capsim_launch_inputs *in, capsim_launch *l, capsim_diags *d)
{
	static const capsim_launch_inputs none = { 0 };
	in = in ? in : &none;
	const char *const *env = in->env;
	int n_env = in->n_env;
	capsim_launch_init(l);
	l->config_roots = in->config_roots;
	l->n_config_roots = in->n_config_roots;
	size_t before = d->n;
	if (len > CAPSIM_LAUNCH_MAX_BYTES) {
		capsim_diags_add(d, file, 0, "%zu bytes: larger than the %u-byte (8 MiB) cap on "
				 "input files", len, CAPSIM_LAUNCH_MAX_BYTES);
		return -1;
	}
	shstate st = { .l = l, .d = d, .file = file };
	if (environment(&st, env, n_env) < 0) {
		free_vars(&st.vs);
		return -1;
	}
	run_text(&st, text, len, 1, is_yaml(text, len, file));
	free_vars(&st.vs);
	if (d->n == before && !l->found_launcher) {
		capsim_diags_add(d, file, 0, "no launch line found (torchrun, srun, python, a Megatron-LM "
				 "or NeMo command)");
		return -1;
	}
	return d->n == before ? 0 : -1;
}
