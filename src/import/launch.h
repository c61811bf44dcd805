/* launch.h - a training job's launch read into a capsim workload and cluster
 * size: a torchrun / srun / Megatron-LM command line (with NeMo-style
 * key=value overrides where simple), or a script holding one (a Slurm batch
 * script with its #SBATCH lines, a Kubernetes Job whose container runs
 * torchrun, a Megatron-LM example script with its shell variables). Every
 * flag capsim does not model is listed, never dropped in silence. What was
 * read is written as a scenario's XML, and as a models file where the
 * launch's flags define the model. */
#ifndef CAPSIM_LAUNCH_H
#define CAPSIM_LAUNCH_H

#include <stddef.h>
#include <stdio.h>

#include "diag.h"

#define CAPSIM_LAUNCH_NOTES 256

/* Limits on a script (each passed is refused, naming the limit):
 * - its size: that of every input file (CAPSIM_XML_MAX_BYTES, 8 MiB);
 * - a logical line (physical lines joined by a backslash, an open quote,
 *   $( or array) and the words it gives once its variables are expanded:
 *   1 MiB each;
 * - the words of every line of the script, expanded, together: 16 MiB
 *   (this bounds the variables' memory and the reader's work);
 * - quotes, $( and backticks nested in one another: 64 deep. */
#define CAPSIM_LAUNCH_MAX_BYTES (8u << 20)
#define CAPSIM_LAUNCH_MAX_LINE (1u << 20)
#define CAPSIM_LAUNCH_MAX_EXPANDED (16u << 20)
#define CAPSIM_LAUNCH_MAX_NESTING 64
/* The largest whole number a flag or override takes. */
#define CAPSIM_LAUNCH_MAX_WHOLE 2147483647L

typedef struct capsim_launch {
	/* the cluster: 0 where the launch does not say */
	long nodes, gpus_per_node;
	/* the job (0 / "" where not given) */
	long seq_len, micro_batch, global_batch, tp, pp, cp, ep;
	long vp_layers;              /* Megatron's layers a virtual stage */
	long vp_stages;              /* NeMo's virtual stages a pipeline stage */
	const char *schedule;        /* "gpipe" where the launch names GPipe; NULL: 1F1B,
				      * interleaved with virtual stages */
	long first_stage_layers, last_stage_layers; /* Megatron's uneven split; 0 even */
	long train_iters, train_samples;
	double train_tokens;
	const char *recompute;       /* "none", "selective", "full", NULL */
	int zero;                    /* 1 with the distributed optimizer; -1 not said */
	int megatron_fsdp;           /* --use-megatron-fsdp */
	int fsdp_zero;               /* its --data-parallel-sharding-strategy as ZeRO 0-3; -1 */
	int sequence_parallel, tp_comm_overlap; /* -1 not said */
	const char *dtype;           /* "bf16", "fp16", "fp8", NULL */
	/* the workload's framework ("fsdp2"), FP8 recipe ("current") and
	 * execution ("eager", "compiled") where the reader knows them; NULL */
	const char *framework, *fp8_recipe, *execution;
	int fp8_param_gather;        /* --fp8-param-gather: FP8 primary weights (with fp8) */
	int grad_reduce_bf16;        /* --grad-reduce-in-bf16: a 16-bit gradient buffer */
	/* a fine-tune (NeMo's model.peft.*): "lora", "full" or NULL (pre-training);
	 * LoRA's rank and matrices ("all", "attention") where given */
	const char *finetune;
	long lora_rank;
	const char *lora_targets;
	/* the model's architecture where the launch gives it */
	long layers, hidden, heads, kv_heads, ffn, max_positions, vocab, experts, top_k;
	int swiglu, rmsnorm, rope, untied; /* -1 not said */
	/* what was read and what was not */
	char notes[CAPSIM_LAUNCH_NOTES][160]; /* flags not modelled, assumptions made */
	int n_notes;
	long n_notes_more;           /* notes past the first CAPSIM_LAUNCH_NOTES: counted */
	int found_launcher;          /* a torchrun, srun, python or Megatron/NeMo line was seen */
	int config_elsewhere;        /* a config file holds the rest (--config-name, training=) */
	/* the catalog model a config the launch names gives (torchtitan's
	 * llama3 flavors), or NULL */
	const char *model;
	/* where the config files a launch names are found, the first root
	 * holding one read (set by the caller before reading argv; the script
	 * readers take them from their inputs): the NeMo launcher's
	 * training=gpt3/5b is ROOT/conf/training/gpt3/5b.yaml (ROOT its
	 * launcher_scripts directory) or ROOT/training/gpt3/5b.yaml, and
	 * torchtitan's --job.config_file PATH is ROOT/PATH (ROOT the checkout
	 * its run_train.sh runs in) */
	const char *const *config_roots;
	int n_config_roots;
} capsim_launch;

/* what a script reads besides its text: its environment (NAME=VALUE each,
 * as capsim_launch_script_env takes them) and the config roots above */
typedef struct capsim_launch_inputs {
	const char *const *env;
	int n_env;
	const char *const *config_roots;
	int n_config_roots;
} capsim_launch_inputs;

/* Start *l empty: every "not said" member at its mark. */
void capsim_launch_init(capsim_launch *l);

/* Read an argument vector (argv[0] the launcher or the script) into *l
 * (adding to what it holds): the config files it names (the NeMo launcher's
 * training=, peft=, fine_tuning=; torchtitan's --job.config_file) read from
 * l's config roots first, under the vector's own overrides (launch_conf.h),
 * and refused, naming the file and --config-root, where l has no root.
 * Returns 0, or -1 with the reason in d (a flag without its
 * value, a value that is not a positive whole number of at most
 * CAPSIM_LAUNCH_MAX_WHOLE: "--num-layers: expected a positive whole number,
 * found 'x'"; a size or batch of 0 is refused). */
int capsim_launch_argv(char **argv, int argc, const char *where, capsim_launch *l,
		       capsim_diags *d);

/* Read a script's text as bash would run it, running nothing: lines
 * continued with a backslash joined (and so lines inside an open quote, $(,
 * backtick or bash array); variables with their defaults (${V:-d} ${V-d}
 * ${V:=d} ${V:+w}, $1 unset, $# 0, "$@" the positional parameters given in
 * the environment, none where none is) and $(( )) expanded; Slurm's variables
 * (SLURM_NNODES, SLURM_NTASKS_PER_NODE, SLURM_GPUS_PER_NODE ...) set from
 * the #SBATCH lines, which are read as options too; arrays, += and
 * "${A[@]}"; if/elif/else, case, while and [ ] && decided from the script's
 * values, and where a test rests on what the file cannot say (a variable it
 * never sets, a file test, a command's status) by its own defaults (empty,
 * the file there, success), each such decision and each default taken noted
 * in l; here-documents read into variables (read -r -d '' NAME <<EOF) or,
 * holding a launch, read as scripts; a command held in a variable read where
 * it runs (bash -c "$CMD", eval); and the command lines of torchrun, srun,
 * python (and a Kubernetes container's command and args) read as argument
 * vectors, words split as the shell splits them. A file named *.yaml or
 * *.yml, or whose first line that is not a comment is a YAML document's
 * (apiVersion:, kind:, ---), is read as YAML: a launch line goes on over the
 * lines indented further. Returns 0, or -1 with the reason in d
 * (file:line): a quote, $( or backtick left open, an if without fi, a fi
 * without if (bash's syntax errors), a flag capsim reads whose value is a
 * variable the script never sets, a NUL byte, a limit above passed (and
 * blocks nested past 64, held commands past 8). */
int capsim_launch_script(const char *text, size_t len, const char *file, capsim_launch *l,
			 capsim_diags *d);

/* capsim_launch_script with the script's environment: each of env[0..n_env)
 * NAME=VALUE (NAME a shell name, or a positional parameter's number: 1 for
 * $1) set before the script runs, as the shell that runs it would have it.
 * A malformed one is refused (at "--env"). */
int capsim_launch_script_env(const char *text, size_t len, const char *file,
			     const char *const *env, int n_env, capsim_launch *l, capsim_diags *d);

/* capsim_launch_script_env with the inputs in (env and config roots; NULL:
 * none). */
int capsim_launch_script_with(const char *text, size_t len, const char *file,
			      const capsim_launch_inputs *in, capsim_launch *l, capsim_diags *d);

/* The models file of one entry, id, that l's architecture flags define
 * (family megatron; Megatron's defaults where a flag is absent: an FFN of
 * 4 x hidden, or 8 x hidden / 3 rounded up to 64 with SwiGLU; KV heads as
 * heads; GELU, LayerNorm, learned positions, tied embeddings; top-k 2 with
 * experts), id XML-escaped. Returns 0 with the text in *text (the caller's,
 * freed with free), or -1 with *text NULL and, at where, each of
 * --num-layers, --hidden-size, --num-attention-heads and --vocab-size the
 * launch does not give in d. */
int capsim_launch_model_text(const capsim_launch *l, const char *id, const char *where,
			     char **text, capsim_diags *d);

/* The scenario l describes, as XML text: named name, on l's nodes (1 when
 * it does not say) of node node_id (node_gpus GPUs a node) joined by an NDR
 * InfiniBand fat tree (none for one node), training model with l's
 * sequence length, batches (the global one micro-batch x data-parallel when
 * it gives none), token budget (1T when it gives none), precision,
 * parallelism (ZeRO from the distributed optimizer, or Megatron-FSDP's
 * sharding) and fine-tune (LoRA of rank 32 on the attention where NeMo's
 * overrides give no rank or matrices). Its opening comment names where it
 * came from (where: a script's path or "the command line"), each of l's
 * notes and what was assumed (capsim_launch_assumptions' lines), escaped
 * for a comment; the names are XML-escaped. Returns the text (the caller's,
 * freed with free), or NULL with each reason in d, at where: GPUs a node
 * other than node_gpus, no sequence length, tp x pp x cp not dividing the
 * launch's GPUs, a global batch past CAPSIM_LAUNCH_MAX_WHOLE, layers a
 * virtual stage without layers. */
char *capsim_launch_scenario_text(const capsim_launch *l, const char *name, const char *model,
				  const char *node_id, int node_gpus, const char *where,
				  capsim_diags *d);

/* What the scenario of l on node node_id (node_gpus GPUs a node) assumes
 * where the launch does not say (nodes, the global batch as micro-batch x
 * data-parallel, the token budget, the node and fabric), a line each on f
 * after prefix: the lines its comment holds. Nothing where l's shape does
 * not hold (capsim_launch_scenario_text says why). */
void capsim_launch_assumptions(const capsim_launch *l, const char *node_id, int node_gpus,
			       FILE *f, const char *prefix);

#endif
