/* launch.h - a training job's launch read into a capsim workload and cluster
 * size: a torchrun / srun / Megatron-LM command line (with NeMo-style
 * key=value overrides where simple), or a script holding one (a Slurm batch
 * script with its #SBATCH lines, a Kubernetes Job whose container runs
 * torchrun, a Megatron-LM example script with its shell variables). Every
 * flag capsim does not model is listed, never dropped in silence. */
#ifndef CAPSIM_LAUNCH_H
#define CAPSIM_LAUNCH_H

#include <stddef.h>
#include <stdio.h>

#include "diag.h"

#define CAPSIM_LAUNCH_NOTES 64

typedef struct capsim_launch {
	/* the cluster: 0 where the launch does not say */
	long nodes, gpus_per_node;
	/* the job (0 / "" where not given) */
	long seq_len, micro_batch, global_batch, tp, pp, cp, ep;
	long vp_layers;              /* Megatron's layers a virtual stage */
	long vp_stages;              /* NeMo's virtual stages a pipeline stage */
	long train_iters, train_samples;
	double train_tokens;
	const char *recompute;       /* "none", "selective", "full", NULL */
	int zero;                    /* 1 with the distributed optimizer; -1 not said */
	int sequence_parallel, tp_comm_overlap; /* -1 not said */
	const char *dtype;           /* "bf16", "fp16", "fp8", NULL */
	/* the model's architecture where the launch gives it */
	long layers, hidden, heads, kv_heads, ffn, max_positions, vocab, experts, top_k;
	int swiglu, rmsnorm, rope, untied; /* -1 not said */
	/* what was read and what was not */
	char notes[CAPSIM_LAUNCH_NOTES][160]; /* flags not modelled, assumptions made */
	int n_notes;
	int found_launcher;          /* a torchrun, srun, python or Megatron/NeMo line was seen */
} capsim_launch;

/* Start *l empty: every "not said" member at its mark. */
void capsim_launch_init(capsim_launch *l);

/* Read an argument vector (argv[0] the launcher or the script) into *l
 * (adding to what it holds). Returns 0, or -1 with the reason in d (a flag without its
 * value, a value that is not a whole number: "--num-layers: expected a
 * whole number, found 'x'"). */
int capsim_launch_argv(char **argv, int argc, const char *where, capsim_launch *l,
		       capsim_diags *d);

/* Read a script's text: shell variables assigned in it are expanded, lines
 * continued with a backslash joined, #SBATCH lines read, and the command
 * lines of torchrun, srun, python (and a Kubernetes container's command and
 * args) read as argument vectors. Returns 0, or -1 with the reason in d
 * (file:line). */
int capsim_launch_script(const char *text, size_t len, const char *file, capsim_launch *l,
			 capsim_diags *d);

#endif
