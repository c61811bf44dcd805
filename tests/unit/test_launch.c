/* test_launch.c - launch lines and scripts into scenarios, on
 * files written from the public formats (tests/data/launch/: a Slurm batch
 * script running torchrun under srun, a Megatron-LM example script of bash
 * arrays, a Kubernetes Job, NeMo overrides) and plain torchrun lines: every
 * value read, every flag not modelled listed, malformed ones refused with
 * file:line; end to end, the scenario and its model file validate and run,
 * and the model the launch defines simulates as the shipped one it is. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "eval.h"
#include "launch.h"
#include "testutil.h"
#include "xml.h"

CAPSIM_TEST_TMPDIR("test-launch")

static void script(const char *name, capsim_launch *l)
{
	char path[512];
	snprintf(path, sizeof path, "%s/tests/data/launch/%s", CAPSIM_SOURCE_DIR, name);
	capsim_diags d = { 0 };
	size_t len;
	char *text = capsim_xml_slurp(path, &len, &d);
	assert_non_null(text);
	if (capsim_launch_script(text, len, path, l, &d) < 0) {
		capsim_diags_print(&d, stderr);
		fail_msg("%s does not read", name);
	}
	free(text);
	capsim_diags_free(&d);
}

static int noted(const capsim_launch *l, const char *needle)
{
	for (int i = 0; i < l->n_notes; i++)
		if (strstr(l->notes[i], needle))
			return 1;
	return 0;
}

static void test_slurm(void **state)
{
	(void)state;
	capsim_launch l;
	script("slurm-llama3-8b.sh", &l);
	assert_int_equal(l.nodes, 8);          /* #SBATCH --nodes; torchrun's is $SLURM_NNODES */
	assert_int_equal(l.gpus_per_node, 8);  /* --gres=gpu:8 and --nproc-per-node=8 */
	assert_int_equal(l.tp, 2);             /* TP=2 expanded */
	assert_int_equal(l.pp, 1);
	assert_int_equal(l.seq_len, 8192);
	assert_int_equal(l.micro_batch, 1);
	assert_int_equal(l.global_batch, 512);
	assert_int_equal(l.train_iters, 250000);
	assert_int_equal(l.zero, 1);
	assert_string_equal(l.recompute, "selective");
	assert_int_equal(l.sequence_parallel, 1);
	assert_string_equal(l.dtype, "bf16");
	assert_int_equal(l.layers, 32);
	assert_int_equal(l.kv_heads, 8);
	assert_int_equal(l.ffn, 14336);
	assert_int_equal(l.vocab, 128256);
	assert_int_equal(l.swiglu, 1);
	assert_int_equal(l.rmsnorm, 1);
	assert_int_equal(l.rope, 1);
	assert_int_equal(l.untied, 1);
	/* never dropped in silence */
	assert_true(noted(&l, "--lr 3.0e-4: not modelled"));
	assert_true(noted(&l, "--overlap-grad-reduce: not modelled"));
	assert_true(noted(&l, "--tokenizer-type HuggingFaceTokenizer: not modelled"));
	/* torchrun's --nnodes $SLURM_NNODES: Slurm's variable, from #SBATCH --nodes */
	assert_true(noted(&l, "$SLURM_NNODES: 8, from the script's #SBATCH lines"));
	assert_true(noted(&l, "--cpus-per-task=96: not modelled"));
}

static void test_megatron_arrays(void **state)
{
	(void)state;
	capsim_launch l;
	script("megatron-gpt3-175b.sh", &l);
	assert_int_equal(l.nodes, 128);
	assert_int_equal(l.gpus_per_node, 8);
	assert_int_equal(l.tp, 8);
	assert_int_equal(l.pp, 16);
	assert_int_equal(l.layers, 96);
	assert_int_equal(l.hidden, 12288);
	assert_int_equal(l.heads, 96);
	assert_int_equal(l.seq_len, 2048);
	assert_int_equal(l.global_batch, 1536);
	assert_int_equal(l.train_iters, 500000);
	assert_int_equal(l.vocab, 51200);
	assert_string_equal(l.dtype, "fp16");
	assert_true(noted(&l, "--weight-decay 0.1: not modelled"));
	assert_true(noted(&l, "--init-method-std 0.006: not modelled"));
}

static void test_kubernetes(void **state)
{
	(void)state;
	capsim_launch l;
	script("k8s-job.yaml", &l);
	assert_int_equal(l.nodes, 2);
	assert_int_equal(l.gpus_per_node, 8);
	assert_int_equal(l.tp, 4);
	assert_int_equal(l.layers, 40);
	assert_int_equal(l.seq_len, 4096);
	assert_int_equal(l.micro_batch, 2);
	assert_int_equal(l.global_batch, 256);
	assert_true(noted(&l, "--node-rank=$JOB_COMPLETION_INDEX"));
}

static void test_nemo(void **state)
{
	(void)state;
	capsim_launch l;
	script("nemo-overrides.sh", &l);
	assert_int_equal(l.nodes, 4);
	assert_int_equal(l.gpus_per_node, 8);
	assert_int_equal(l.tp, 2);
	assert_int_equal(l.pp, 2);
	assert_int_equal(l.seq_len, 4096);
	assert_int_equal(l.train_iters, 10000);
	assert_int_equal(l.ffn, 11008);
	assert_int_equal(l.sequence_parallel, 1);
	assert_int_equal(l.zero, 1); /* model.optim.name=distributed_fused_adam: ZeRO 1 */
}

static void test_torchrun_line(void **state)
{
	(void)state;
	char *argv[] = { "torchrun", "--nnodes=4:8", "--nproc_per_node", "8", "train.py",
			 "--context-parallel-size=2", "--expert-model-parallel-size", "4",
			 "--num-layers-per-virtual-pipeline-stage", "2", "--fp8-format", "hybrid",
			 "--recompute-activations", "--some-flag" };
	capsim_launch l;
	capsim_launch_init(&l);
	capsim_diags d = { 0 };
	assert_int_equal(capsim_launch_argv(argv, (int)(sizeof argv / sizeof argv[0]), "line", &l,
					    &d), 0);
	assert_int_equal(l.nodes, 8); /* elastic: the largest */
	assert_true(noted(&l, "--nnodes 4:8: elastic"));
	assert_int_equal(l.gpus_per_node, 8);
	assert_int_equal(l.cp, 2);
	assert_int_equal(l.ep, 4);
	assert_int_equal(l.vp_layers, 2);
	assert_string_equal(l.dtype, "fp8");
	assert_string_equal(l.recompute, "selective");
	assert_true(noted(&l, "--some-flag: not modelled"));
	capsim_diags_free(&d);
}

static void refused(const char *name, const char *needle)
{
	char path[512];
	snprintf(path, sizeof path, "%s/tests/data/launch/bad/%s", CAPSIM_SOURCE_DIR, name);
	capsim_diags d = { 0 };
	size_t len;
	char *text = capsim_xml_slurp(path, &len, &d);
	assert_non_null(text);
	capsim_launch l;
	if (capsim_launch_script(text, len, path, &l, &d) == 0 || !capsim_diags_contains(&d, needle)) {
		capsim_diags_print(&d, stderr);
		fail_msg("%s: expected '%s'", name, needle);
	}
	free(text);
	capsim_diags_free(&d);
}

static void test_malformed(void **state)
{
	(void)state;
	refused("not-a-number.sh", "--num-layers: expected a positive whole number, found 'twelve'");
	refused("bad-recompute.sh", "--recompute-granularity: expected full or selective, found 'partial'");
	refused("no-launch.sh", "no launch line found");
	refused("doubling.sh", "pass 1048576 bytes, the limit on a line of a launch script");
	refused("nested-expansion.sh", "pass 1048576 bytes, the limit on a line of a launch script");
	refused("unterminated.sh", "unterminated \" (a double quote)");
	/* a flag at the end without its value */
	char *argv[] = { "torchrun", "train.py", "--seq-length" };
	capsim_launch l;
	capsim_launch_init(&l);
	capsim_diags d = { 0 };
	assert_int_equal(capsim_launch_argv(argv, 3, "line", &l, &d), -1);
	assert_true(capsim_diags_contains(&d, "--seq-length: expected a positive whole number, found 'nothing'"));
	capsim_diags_free(&d);
}

/* text as a script named file: 0, or -1 with d holding the reasons */
static int read_text(const char *text, size_t len, const char *file, capsim_launch *l,
		     capsim_diags *d)
{
	return capsim_launch_script(text, len, file, l, d);
}

/* d holds "WHERE: error: MSG" with needle in it, as printed */
static int printed(const capsim_diags *d, const char *needle)
{
	for (size_t i = 0; i < d->n; i++) {
		char line[600];
		snprintf(line, sizeof line, "%s: error: %s", d->v[i].where, d->v[i].msg);
		if (strstr(line, needle))
			return 1;
	}
	return 0;
}

static void refused_text(const char *text, const char *needle)
{
	capsim_diags d = { 0 };
	capsim_launch l;
	if (read_text(text, strlen(text), "s.sh", &l, &d) == 0 || !printed(&d, needle)) {
		capsim_diags_print(&d, stderr);
		fail_msg("%s: expected '%s'", text, needle);
	}
	capsim_diags_free(&d);
}

static void read_ok(const char *text, size_t len, const char *file, capsim_launch *l)
{
	capsim_diags d = { 0 };
	if (read_text(text, len, file, l, &d) < 0) {
		capsim_diags_print(&d, stderr);
		fail_msg("%.200s: does not read", text);
	}
	capsim_diags_free(&d);
}

/* what bash refuses as a syntax error is refused (it was one word with the
 * rest of the line); what bash reads across lines is read so */
static void test_shell_syntax(void **state)
{
	(void)state;
	refused_text("#!/bin/bash\ntorchrun train.py --seq-length 2048 --lr \"3e-4\n",
		     "s.sh:2: error: unterminated \" (a double quote)");
	refused_text("torchrun train.py --seq-length 2048 --name 'x\n# a comment\n",
		     "s.sh:1: error: unterminated ' (a single quote)");
	refused_text("\nA=$(hostname\ntorchrun train.py --seq-length 2048\n",
		     "s.sh:2: error: unterminated $( (a command substitution)");
	refused_text("torchrun train.py --seq-length 2048 --host `hostname\n",
		     "s.sh:1: error: unterminated ` (a command substitution)");
	refused_text("torchrun train.py --seq-length 2048 $'it\\'s\n",
		     "unterminated $' (an ANSI-C quote)");
	const char nul[] = "torchrun train.py\0 --seq-length 2048\n";
	capsim_diags d = { 0 };
	capsim_launch l;
	assert_int_equal(read_text(nul, sizeof nul - 1, "s.sh", &l, &d), -1);
	assert_true(printed(&d, "s.sh:1: error: a NUL byte"));
	capsim_diags_free(&d);
	/* a YAML launch line with an open quote: refused with its line */
	refused_text("apiVersion: batch/v1\nargs:\n  - torchrun --nnodes=2 train.py \"--lr\n",
		     "s.sh:3: error: unterminated \"");
	/* a quote over two lines, an apostrophe in a comment, a here-document's
	 * text and a YAML value: what bash (or YAML) reads, read */
	const char *ok = "#!/bin/bash\n# it's a comment\nMSG=\"two\nlines\"\nV=$((1 << 2))\n"
			 "cat <<< word\ncat <<-EOF\nit's text\n\tEOF\nX='it''s'\ncat <<EOF\nit's text\n"
			 "EOF\nARGS=(--seq-length 4096 # the sequence, it's long\n  --micro-batch-size 2\n)\n"
			 "torchrun --nproc-per-node 8 train.py ${ARGS[@]} --name \"$MSG\" # it's\n";
	read_ok(ok, strlen(ok), "s.sh", &l);
	assert_int_equal(l.seq_len, 4096);
	assert_int_equal(l.micro_batch, 2);
	assert_int_equal(l.gpus_per_node, 8);
	assert_true(noted(&l, "--name two\nlines: not modelled"));
	const char *yaml = "kind: Job\ndescription: it's a job\nargs:\n  - torchrun --nnodes=2 "
			   "train.py\n    --seq-length 1024\n";
	read_ok(yaml, strlen(yaml), "job", &l);
	assert_int_equal(l.nodes, 2);
	assert_int_equal(l.seq_len, 1024);
}

/* text read as a script: l, with the run's diagnostics freed */
static void script_text(const char *text, capsim_launch *l)
{
	read_ok(text, strlen(text), "s.sh", l);
}

/* ${V:-d} ${V-d} ${V:=d} ${V+w}, positional defaults, $(( )), and what the
 * script does not set left for the flag to refuse by name */
static void test_defaults(void **state)
{
	(void)state;
	capsim_launch l;
	script_text("E=\nN=${SLURM_NNODES:-\"2\"}\nT=${E-3}\nU=${E:-4}\n: \"${P:=2}\"\n"
		    "S=${1:-8192}\nG=$(( (N * 4 + 0) / 2 ))\nW=${T+set}\n"
		    "torchrun --nnodes $N --nproc-per-node=8 pretrain_gpt.py --seq-length $S "
		    "--micro-batch-size ${U} --tensor-model-parallel-size $P --global-batch-size $G "
		    "--pipeline-model-parallel-size ${T:-1} --lr $W\n", &l);
	assert_int_equal(l.nodes, 2);            /* :- of an unset variable */
	assert_int_equal(l.seq_len, 8192);       /* $1's default: run without arguments */
	assert_int_equal(l.micro_batch, 4);      /* :- of an empty one */
	assert_int_equal(l.tp, 2);               /* := sets P */
	assert_int_equal(l.global_batch, 4);     /* (2 * 4 + 0) / 2 */
	assert_int_equal(l.pp, 1);               /* ${E-3} is E's empty value; then :- */
	assert_true(noted(&l, "--lr set: not modelled")); /* ${T+set}: T is set */
	assert_true(noted(&l, "${SLURM_NNODES:-\"2\"}: SLURM_NNODES is not set in the script: "
			  "its default, '2', taken"));
	/* --env gives what the script reads from its environment */
	const char *env[] = { "SLURM_NNODES=16", "1=4096" };
	capsim_diags d = { 0 };
	const char *t = "torchrun --nnodes ${SLURM_NNODES:-1} pretrain_gpt.py --seq-length $1\n";
	assert_int_equal(capsim_launch_script_env(t, strlen(t), "e.sh", env, 2, &l, &d), 0);
	assert_int_equal(l.nodes, 16);
	assert_int_equal(l.seq_len, 4096);
	const char *bad[] = { "1x=2" };
	assert_int_equal(capsim_launch_script_env(t, strlen(t), "e.sh", bad, 1, &l, &d), -1);
	assert_true(printed(&d, "--env: error: '1x=2': expected NAME=VALUE"));
	capsim_diags_free(&d);
	/* a known flag whose value the script never sets: refused by name */
	refused_text("torchrun pretrain_gpt.py --seq-length 2048 --tensor-model-parallel-size $TP\n",
		     "s.sh:1: error: --tensor-model-parallel-size $TP: TP is not set in the script (nor "
		     "by Slurm from #SBATCH lines): give it with --env TP=VALUE");
}

/* #SBATCH lines give Slurm's variables, several options a line */
static void test_slurm_env(void **state)
{
	(void)state;
	capsim_launch l;
	script_text("#!/bin/bash\n#SBATCH --nodes=8 --ntasks-per-node=4 --gpus-per-node=4\n"
		    "#SBATCH -J run --gres=gpu:4\n"
		    "srun python pretrain_gpt.py --seq-length 2048 --global-batch-size "
		    "$((SLURM_NTASKS * 2)) --micro-batch-size $SLURM_GPUS_PER_NODE "
		    "--tensor-model-parallel-size $SLURM_NTASKS_PER_NODE --pipeline-model-parallel-size "
		    "$SLURM_JOB_NUM_NODES\n", &l);
	assert_int_equal(l.nodes, 8);
	assert_int_equal(l.gpus_per_node, 4);
	assert_int_equal(l.global_batch, 64);    /* SLURM_NTASKS = 8 x 4 */
	assert_int_equal(l.micro_batch, 4);
	assert_int_equal(l.tp, 4);
	assert_int_equal(l.pp, 8);
	assert_true(noted(&l, "$SLURM_NNODES: 8, from the script's #SBATCH lines"));
}

/* arrays, +=, "${A[@]}" (an element of two words stays one word) */
static void test_arrays(void **state)
{
	(void)state;
	capsim_launch l;
	script_text("A=(--seq-length 4096)\nA+=(\"--lr 1e-4\")\nB=(\"${A[@]}\" --bf16)\n"
		    "C=(--micro-batch-size 2)\nC+=(--global-batch-size 64)\n"
		    "torchrun pretrain_gpt.py ${B[@]} \"${C[@]}\" --tag \"run ${A[*]}\"\n", &l);
	assert_int_equal(l.seq_len, 4096);
	assert_string_equal(l.dtype, "bf16");
	assert_int_equal(l.micro_batch, 2);
	assert_int_equal(l.global_batch, 64);
	assert_true(noted(&l, "--lr 1e-4: not modelled"));
	assert_true(noted(&l, "--tag run --seq-length 4096 --lr 1e-4: not modelled"));
}

/* if / elif / else and case: decided from the script's values; where they
 * rest on what it cannot know, by its defaults, and said */
static void test_blocks(void **state)
{
	(void)state;
	capsim_launch l;
	script_text("DTYPE=fp8\nMODE=${MODE:-big}\nARGS=()\n"
		    "if [[ \"$DTYPE\" == \"fp8\" ]]; then\n  ARGS+=(--fp8-format hybrid)\n"
		    "elif [ \"$DTYPE\" = bf16 ]; then\n  ARGS+=(--bf16)\nelse\n  ARGS+=(--fp16)\nfi\n"
		    "case \"$MODE\" in\n  small|tiny) TP=1 ;;\n  big)\n    TP=8\n    ;;\n"
		    "  *) TP=2 ;;\nesac\n"
		    "if [ ! -f \"$SCRIPT\" ]; then\n  echo \"pretrain_gpt.py -f not found\"; exit 1\nfi\n"
		    "if [ -n \"$WANDB_API_KEY\" ]; then ARGS+=(--wandb-project x); fi\n"
		    "[ -z \"$SEQ\" ] && SEQ=2048\n[ \"$TP\" -gt 4 ] || TP=1\n"
		    "while [[ $# -gt 0 ]]; do\n  case $1 in\n    *) ARGS+=(--bogus) ;;\n  esac\ndone\n"
		    "torchrun pretrain_gpt.py ${ARGS[@]} --tensor-model-parallel-size $TP "
		    "--seq-length $SEQ\n", &l);
	assert_string_equal(l.dtype, "fp8");     /* the then branch only */
	assert_int_equal(l.tp, 8);               /* big), by MODE's default */
	assert_int_equal(l.seq_len, 2048);       /* [ -z "$SEQ" ] && SEQ=2048 */
	assert_false(noted(&l, "--wandb-project"));
	assert_false(noted(&l, "--bogus"));      /* no arguments: the loop does not run */
	assert_false(noted(&l, "-f: not modelled")); /* a test's operand is no flag */
	assert_false(noted(&l, "-f not found"));
	assert_true(noted(&l, "line 18: if [ ! -f \"$SCRIPT\" ]: decided by a file test, taken as "
			  "the file being there: its branch not taken"));
	assert_true(noted(&l, "line 21: if [ -n \"$WANDB_API_KEY\" ]: decided by a variable the "
			  "script does not set, taken as empty: its branch not taken"));
	assert_false(noted(&l, "line 4:")); /* DTYPE is the script's own: nothing assumed */
	/* a bare "if" (found by fuzzing: its condition was read past the line) */
	script_text("if\nfi\ntorchrun train.py --seq-length 2\n", &l);
	assert_int_equal(l.seq_len, 2);
	/* blocks left open, or closed without opening: bash's syntax errors */
	refused_text("if [ 1 = 1 ]; then\ntorchrun train.py --seq-length 2\n",
		     "s.sh:1: error: if without its fi");
	refused_text("fi\ntorchrun train.py --seq-length 2\n", "s.sh:1: error: fi without its if");
	refused_text("case x in\n x) A=1 ;;\ntorchrun train.py --seq-length 2\n",
		     "s.sh:1: error: case without its esac");
}

/* commands held in variables and here-documents, run where the script runs
 * them */
static void test_held_commands(void **state)
{
	(void)state;
	capsim_launch l;
	script_text("export CMD=\"python pretrain_gpt.py --seq-length 1024 \\\n"
		    "  --tensor-model-parallel-size 2\"\nsrun -N 4 bash -c \"$CMD\"\n", &l);
	assert_int_equal(l.nodes, 4);
	assert_int_equal(l.seq_len, 1024);
	assert_int_equal(l.tp, 2);
	script_text("TP=4\nread -r -d '' cmd <<EOF\ntorchrun --nnodes 2 pretrain_gpt.py \\\n"
		    "  --tensor-model-parallel-size $TP --seq-length 512\nEOF\n"
		    "srun bash -c \"${cmd}\"\n", &l);
	assert_int_equal(l.nodes, 2);
	assert_int_equal(l.tp, 4);
	assert_int_equal(l.seq_len, 512);
	/* a batch script written and submitted in a here-document */
	script_text("sbatch <<EOF\n#!/bin/bash\n#SBATCH --nodes=3\nsrun python pretrain_gpt.py "
		    "--seq-length 256\nEOF\n", &l);
	assert_int_equal(l.nodes, 3);
	assert_int_equal(l.seq_len, 256);
	/* A=1 cmd runs cmd; echo naming a launch runs none */
	script_text("echo torchrun --seq-length 9\nHYDRA_FULL_ERROR=1 python3 main.py "
		    "trainer.num_nodes=2 model.encoder_seq_length=128\n", &l);
	assert_int_equal(l.nodes, 2);
	assert_int_equal(l.seq_len, 128);
}

/* every flag read, listed or refused: a list-valued flag whole */
static void test_list_flags(void **state)
{
	(void)state;
	capsim_launch l;
	script_text("torchrun pretrain_gpt.py --seq-length 4096 --moe-layer-freq "
		    "\"[0]*3+[1]*58\" --recompute-modules mlp moe core_attn --data-path 0.3 /a 0.7 "
		    "/b --bf16\n", &l);
	assert_true(noted(&l, "--moe-layer-freq [0]*3+[1]*58: not modelled"));
	assert_true(noted(&l, "--recompute-modules mlp moe core_attn: not modelled"));
	assert_true(noted(&l, "--data-path 0.3 /a 0.7 /b: not modelled"));
	assert_string_equal(l.dtype, "bf16");
}

/* NeMo's overrides: LoRA, precision, the distributed optimizer */
static void test_nemo_peft(void **state)
{
	(void)state;
	capsim_launch l;
	script_text("python megatron_gpt_finetuning.py trainer.num_nodes=2 trainer.devices=8 "
		    "trainer.precision=bf16-mixed model.peft.peft_scheme=lora "
		    "model.peft.lora_tuning.adapter_dim=16 "
		    "model.peft.lora_tuning.target_modules=[attention_qkv,mlp_fc1] "
		    "++model.data.train_ds.max_seq_length=2048 model.optim.name=fused_adam "
		    "model.activations_checkpoint_granularity=full ~model.optim.bucket_cap_mb\n", &l);
	assert_string_equal(l.finetune, "lora");
	assert_int_equal(l.lora_rank, 16);
	assert_string_equal(l.lora_targets, "all");
	assert_string_equal(l.dtype, "bf16");
	assert_int_equal(l.seq_len, 2048);
	assert_string_equal(l.recompute, "full");
	assert_int_equal(l.zero, -1);
	assert_true(noted(&l, "override not modelled: model.optim.name=fused_adam"));
	assert_true(noted(&l, "override not modelled: ~model.optim.bucket_cap_mb"));
	capsim_diags d = { 0 };
	char *sc = capsim_launch_scenario_text(&l, "n", "llama-2-7b", "dgx-h100", 8, "x", &d);
	assert_non_null(sc);
	assert_non_null(strstr(sc, "<finetune method=\"lora\" rank=\"16\" targets=\"all\"/>"));
	free(sc);
	script_text("python x.py model.peft.peft_scheme=none trainer.precision=16 "
		    "model.encoder_seq_length=8\n", &l);
	assert_string_equal(l.finetune, "full");
	assert_string_equal(l.dtype, "fp16");
	capsim_diags_free(&d);
}

/* every size, count and batch is a positive whole number that fits:
 * --global-batch-size 0 was taken as "not said" (and became micro-batch x dp) */
static void test_positive(void **state)
{
	(void)state;
	char *bad[][2] = {
		{ "--global-batch-size", "0" }, { "--micro-batch-size", "0" },
		{ "--seq-length", "-2048" }, { "--tensor-model-parallel-size", "0" },
		{ "--num-layers", "99999999999999999999" }, { "--nnodes", "0" },
		{ "--global-batch-size", "2147483648" }, { "--gres", "gpu:0" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char *argv[] = { "torchrun", "train.py", bad[i][0], bad[i][1] };
		capsim_launch l;
		capsim_launch_init(&l);
		capsim_diags d = { 0 };
		assert_int_equal(capsim_launch_argv(argv, 4, "line", &l, &d), -1);
		assert_true(capsim_diags_contains(&d, "expected a positive whole number"));
		capsim_diags_free(&d);
	}
	refused_text("torchrun train.py trainer.num_nodes=0\n", "trainer.num_nodes: expected a "
		     "positive whole number (at most 2147483647), found 0");
	refused_text("kind: Job\n- torchrun train.py\nnvidia.com/gpu: 0\n", "nvidia.com/gpu: "
		     "expected a positive whole number");
	assert_int_equal(testutil_sh("%s import cmdline --model llama-2-13b -- torchrun --nnodes 4 "
			    "--nproc-per-node 8 pretrain_gpt.py --seq-length 4096 --global-batch-size 0 "
			    "2>&1 >/dev/null | grep -q 'the command line: error: --global-batch-size: "
			    "expected a positive whole number'", CAPSIM_BIN), 0);
}

/* a script text made of n copies of unit after head */
static char *repeated(const char *head, const char *unit, size_t n, size_t *len)
{
	size_t hl = strlen(head), ul = strlen(unit);
	char *s = malloc(hl + n * ul + 64);
	assert_non_null(s);
	memcpy(s, head, hl);
	for (size_t i = 0; i < n; i++)
		memcpy(s + hl + i * ul, unit, ul);
	*len = hl + n * ul;
	s[*len] = '\0';
	return s;
}

/* a doubling variable is refused at the line that passes the limit of a
 * line's expansion, before it is built (it took gigabytes); one that stays
 * under it but is used over and over passes the limit of the script */
static void test_expansion_limits(void **state)
{
	(void)state;
	size_t len;
	char *s = repeated("A=x\n", "A=$A$A\n", 40, &len);
	capsim_diags d = { 0 };
	capsim_launch l;
	assert_int_equal(read_text(s, len, "bomb.sh", &l, &d), -1);
	/* 2^20 bytes at line 21 (A=x is line 1, each line doubles): refused there */
	if (!printed(&d, "bomb.sh:21: error: the line's words, its variables "
				   "expanded, pass 1048576 bytes")) {
		capsim_diags_print(&d, stderr);
		fail_msg("the doubling script is not refused at line 21");
	}
	assert_int_equal(d.n, 1);
	capsim_diags_free(&d);
	free(s);
	/* on one line: A=$A$A$A... of a 512 KiB value */
	s = repeated("A=x\nA=$A$A\nA=$A$A\nA=$A$A\nA=$A$A\nA=$A$A\nA=$A$A\nA=$A$A\nA=$A$A\nA=$A$A\n"
		     "A=$A$A\nA=$A$A\nA=$A$A\nA=$A$A\nA=$A$A\nA=$A$A\nA=$A$A\nA=$A$A\nA=$A$A\n"
		     "A=$A$A\nB=$A", "$A", 300, &len);
	assert_int_equal(read_text(s, len, "one.sh", &l, &d), -1);
	assert_true(printed(&d, "one.sh:21: error: the line's words"));
	capsim_diags_free(&d);
	free(s);
	/* a 512 KiB value used on 40 lines: each under the line's limit, the
	 * script's 16 MiB passed on the 32nd */
	s = repeated("A=x\nA=$A$A\nA=$A$A\nA=$A$A\nA=$A$A\nA=$A$A\nA=$A$A\nA=$A$A\nA=$A$A\nA=$A$A\n"
		     "A=$A$A\nA=$A$A\nA=$A$A\nA=$A$A\nA=$A$A\nA=$A$A\nA=$A$A\nA=$A$A\nA=$A$A\n"
		     "A=$A$A\n", "echo $A\n", 40, &len);
	assert_int_equal(read_text(s, len, "total.sh", &l, &d), -1);
	assert_true(capsim_diags_contains(&d, "pass 16777216 bytes together, the limit of a "
					  "launch script"));
	capsim_diags_free(&d);
	free(s);
	/* a name set again replaces its value: 200,000 settings of 1,000 names
	 * and a launch line that reads them */
	char *many = malloc(200000 * 16 + 128), *p = many;
	assert_non_null(many);
	for (int i = 0; i < 200000; i++)
		p += sprintf(p, "V%d=%d\n", i % 1000, i + 1);
	p += sprintf(p, "torchrun train.py --seq-length $V999 --micro-batch-size $V0\n");
	read_ok(many, (size_t)(p - many), "many.sh", &l);
	assert_int_equal(l.seq_len, 200000);
	assert_int_equal(l.micro_batch, 199001);
	free(many);
}

/* continued lines: joined in one pass (750,000 of them took minutes); a
 * logical line past 1 MiB is refused naming its first line; the script is
 * at most 8 MiB */
static void test_line_limits(void **state)
{
	(void)state;
	size_t len;
	char *s = repeated("#!/bin/bash\ntorchrun train.py --seq-length 2048 \\\n", "  --a 1 \\\n",
			   100000, &len);
	capsim_launch l;
	read_ok(s, len, "long.sh", &l);
	assert_int_equal(l.seq_len, 2048);
	assert_true(noted(&l, "--a 1: not modelled"));
	free(s);
	s = repeated("#!/bin/bash\ntorchrun train.py \\\n", "-a \\\n", 750000, &len);
	capsim_diags d = { 0 };
	assert_int_equal(read_text(s, len, "cont.sh", &l, &d), -1);
	assert_true(printed(&d, "cont.sh:2: error: a logical line (lines joined by "
					  "a backslash, an open quote, $( or array) is longer than "
					  "1048576 bytes"));
	capsim_diags_free(&d);
	free(s);
	/* an array never closed: the file's end names where it opened */
	s = repeated("ARGS=(\n", "  --a 1\n", 1000, &len);
	assert_int_equal(read_text(s, len, "arr.sh", &l, &d), -1);
	assert_true(printed(&d, "arr.sh:1: error: unterminated ( (a bash array)"));
	capsim_diags_free(&d);
	free(s);
	s = repeated("torchrun train.py\n", "#\n", (CAPSIM_LAUNCH_MAX_BYTES - 18) / 2 + 1, &len);
	assert_int_equal(read_text(s, len, "big.sh", &l, &d), -1);
	assert_true(printed(&d, "bytes: larger than the "
					  "8388608-byte (8 MiB) cap"));
	capsim_diags_free(&d);
	free(s);
}

/* past the notes kept, the rest are counted, never dropped in silence */
static void test_notes_counted(void **state)
{
	(void)state;
	char *argv[1 + 300];
	char names[300][16];
	argv[0] = "torchrun";
	for (int i = 0; i < 300; i++) {
		snprintf(names[i], sizeof names[i], "--flag-%d", i);
		argv[1 + i] = names[i];
	}
	capsim_launch l;
	capsim_launch_init(&l);
	capsim_diags d = { 0 };
	assert_int_equal(capsim_launch_argv(argv, 301, "line", &l, &d), 0);
	assert_int_equal(l.n_notes, CAPSIM_LAUNCH_NOTES);
	assert_int_equal(l.n_notes_more, 300 - CAPSIM_LAUNCH_NOTES);
	capsim_diags_free(&d);
}

/* a flag and a script path holding "--" and "-->" go into the scenario's
 * comment escaped: it loads, holds no element of theirs, and the text
 * reads back (the path was refused by libxml2: a double hyphen) */
static void test_comment_escape(void **state)
{
	(void)state;
	assert_int_equal(testutil_sh("%s import cmdline --model llama-2-13b --out %s/x.xml -- torchrun "
			    "--nnodes 4 --nproc-per-node 8 pretrain_gpt.py --seq-length 4096 '--x-->' "
			    "'<evil/><!--' 2>/dev/null", CAPSIM_BIN, dir), 0);
	assert_int_equal(testutil_sh("%s validate %s/x.xml >/dev/null", CAPSIM_BIN, dir), 0);
	assert_int_equal(testutil_sh("grep -qF -- '-\\x2dx-\\x2d> &lt;evil/>' %s/x.xml || "
			    "grep -qF -- '-\\x2dx-\\x2d> <evil/><!-\\x2d: not modelled' %s/x.xml", dir,
			    dir), 0);
	assert_int_equal(testutil_sh("grep -c -- '-->' %s/x.xml | grep -qx 1", dir), 0);
	assert_int_equal(testutil_sh("mkdir -p %s/a--b && printf 'torchrun --nproc-per-node 8 train.py "
			    "--seq-length 2048\n' > %s/a--b/run--x.sh && %s import slurm "
			    "%s/a--b/run--x.sh --model llama-2-13b --out %s/p.xml 2>/dev/null && %s "
			    "validate %s/p.xml >/dev/null && grep -qF 'a-\\x2db/run-\\x2dx.sh' %s/p.xml", dir,
			    dir, CAPSIM_BIN, dir, dir, CAPSIM_BIN, dir, dir), 0);
}

/* --name is the scenario's name, an id (common.xsd); --model and --node too */
static void test_names(void **state)
{
	(void)state;
	const char *bad[] = { "--name 'My Model'", "--name 'x\"/><evil a=\"'", "--name -x",
			      "--name ''", "--model 'llama\"/>'", "--node 'DGX H100'",
			      "--name abcdefghijabcdefghijabcdefghijabcdefghijabcdefghij12345678" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_int_equal(testutil_sh("%s import cmdline %s %s --models %s/m.xml -- torchrun "
				    "train.py --seq-length 2048 2>&1 >/dev/null | grep -q 'expected an "
				    "id (an id is a lower-case letter or digit'", CAPSIM_BIN, bad[i],
				    strstr(bad[i], "--model ") ? "" : "", dir), 0);
}

/* the Slurm script's scenario and the model it defines: they validate and
 * run, and the model is Llama 3.1 8B's architecture: the same step as the
 * shipped entry's */
static void test_end_to_end(void **state)
{
	(void)state;
	const char *sc = CAPSIM_SOURCE_DIR "/tests/data/launch/slurm-llama3-8b.sh";
	assert_int_equal(testutil_sh("%s import slurm %s --name llama3-8b --models %s/m.xml --out %s/s.xml "
			    "2>/dev/null", CAPSIM_BIN, sc, dir, dir), 0);
	assert_int_equal(testutil_sh("%s --parts %s/m.xml validate %s/s.xml >/dev/null", CAPSIM_BIN, dir, dir), 0);
	assert_int_equal(testutil_sh("%s import slurm %s --name llama3-8b --model llama-3.1-8b --out %s/own.xml "
			    "2>/dev/null", CAPSIM_BIN, sc, dir), 0);
	assert_int_equal(testutil_sh("%s --parts %s/m.xml run %s/s.xml --set reliability.runs=0 --json | "
			    "grep '\"step_time_s\"' > %s/a && %s run %s/own.xml --set "
			    "reliability.runs=0 --json | grep '\"step_time_s\"' > %s/b && cmp -s %s/a %s/b",
			    CAPSIM_BIN, dir, dir, dir, CAPSIM_BIN, dir, dir, dir, dir), 0);
	/* the warnings name what is not modelled; the scenario says what it assumed */
	assert_int_equal(testutil_sh("%s import slurm %s --model llama-3.1-8b 2>&1 >/dev/null | grep -q "
			    "'warning: --lr 3.0e-4: not modelled'", CAPSIM_BIN, sc), 0);
	assert_int_equal(testutil_sh("grep -q 'node and fabric: assumptions' %s/own.xml", dir), 0);
	/* a command line too, and no model: refused, nothing written */
	assert_int_equal(testutil_sh("%s import cmdline --model llama-2-13b --out %s/c.xml -- torchrun "
			    "--nnodes 4 --nproc-per-node 8 pretrain_gpt.py --tensor-model-parallel-size "
			    "8 --seq-length 4096 --global-batch-size 256 2>/dev/null && %s validate "
			    "%s/c.xml >/dev/null", CAPSIM_BIN, dir, CAPSIM_BIN, dir), 0);
	assert_int_equal(testutil_sh("%s import cmdline --out %s/none.xml -- torchrun train.py --seq-length "
			    "2048 2>/dev/null; test $? -eq 2 && test ! -e %s/none.xml", CAPSIM_BIN, dir,
			    dir), 0);
}

/* the writers, called without the command: a launch line's scenario text
 * holds its values, the defaults and assumptions said in the comment, the
 * names escaped; its model text the flags and Megatron's defaults; what is
 * missing is refused at where, with nothing written */
static void test_writers(void **state)
{
	(void)state;
	char *argv[] = { "torchrun", "--nnodes", "2", "train.py", "--seq-length", "4096",
			 "--tensor-model-parallel-size", "4", "--micro-batch-size", "2",
			 "--train-iters", "10", "--num-layers", "24", "--hidden-size", "3000",
			 "--num-attention-heads", "24", "--vocab-size", "50000", "--swiglu",
			 "--sequence-parallel", "--lr", "1e-4" };
	capsim_launch l;
	capsim_launch_init(&l);
	capsim_diags d = { 0 };
	assert_int_equal(capsim_launch_argv(argv, sizeof argv / sizeof argv[0], "line", &l, &d), 0);
	char *sc = capsim_launch_scenario_text(&l, "a&b", "m<1>", "dgx-h100", 8, "x--y", &d);
	assert_non_null(sc);
	assert_int_equal(d.n, 0);
	assert_non_null(strstr(sc, "<!-- written by capsim import from x-\\x2dy.\n"));
	assert_non_null(strstr(sc, "     -\\x2dlr 1e-4: not modelled\n"));
	assert_non_null(strstr(sc, "<scenario name=\"a&amp;b\">\n  <cluster nodes=\"2\">"));
	assert_non_null(strstr(sc, "<switch ref=\"qm9700\"/>"));
	/* 16 GPUs over tp 4: dp 4, global batch 2 x 4 = 8; 10 steps of 8 x 4096 */
	assert_non_null(strstr(sc, "<workload seq-len=\"4096\" global-batch=\"8\" "
				   "micro-batch=\"2\" tokens=\"327680\" dtype=\"bf16\">"));
	assert_non_null(strstr(sc, "<model ref=\"m&lt;1&gt;\"/>"));
	assert_non_null(strstr(sc, "tp=\"4\" pp=\"1\" cp=\"1\" ep=\"1\" zero=\"0\" "
				   "recompute=\"none\" sequence-parallel=\"on\"/>"));
	assert_null(strstr(sc, "1T assumed"));
	assert_null(strstr(sc, "<precision"));
	free(sc);
	char *models = NULL;
	assert_int_equal(capsim_launch_model_text(&l, "n-model", "line", &models, &d), 0);
	/* SwiGLU's FFN: 8 x 3000 / 3 = 8000, rounded up to 64: 8000 */
	assert_non_null(strstr(models, "layers=\"24\" hidden=\"3000\" heads=\"24\" "
				       "kv-heads=\"24\" ffn=\"8000\""));
	assert_non_null(strstr(models, "activation=\"swiglu\" vocab=\"50000\" "
				       "max-seq-len=\"4096\""));
	free(models);
	/* Megatron-LM's FP8 primary weights and 16-bit gradients become the
	 * workload's precision; FP8 primary weights without fp8 are said, not
	 * written */
	char *fp8[] = { "torchrun", "train.py", "--seq-length", "4096", "--fp8-format", "hybrid",
			"--fp8-param-gather", "--grad-reduce-in-bf16", "--bf16" };
	capsim_launch_init(&l);
	assert_int_equal(capsim_launch_argv(fp8, 9, "line", &l, &d), 0);
	sc = capsim_launch_scenario_text(&l, "f", "m", "dgx-h100", 8, "line", &d);
	assert_non_null(sc);
	assert_non_null(strstr(sc, "dtype=\"fp8\""));
	assert_non_null(strstr(sc, "<precision params=\"fp8\" grads=\"bf16\"/>"));
	free(sc);
	char *bf16[] = { "torchrun", "train.py", "--seq-length", "4096", "--fp8-param-gather" };
	capsim_launch_init(&l);
	assert_int_equal(capsim_launch_argv(bf16, 5, "line", &l, &d), 0);
	assert_int_equal(l.fp8_param_gather, 1);
	sc = capsim_launch_scenario_text(&l, "f", "m", "dgx-h100", 8, "line", &d);
	assert_non_null(sc);
	assert_null(strstr(sc, "<precision"));
	assert_non_null(strstr(sc, "-\\x2dfp8-param-gather without -\\x2dfp8-format: not modelled"));
	free(sc);
	/* a node of another size, and no sequence length: both said, no text */
	capsim_launch_init(&l);
	char *bare[] = { "torchrun", "--nproc-per-node", "4", "train.py" };
	assert_int_equal(capsim_launch_argv(bare, 4, "line", &l, &d), 0);
	assert_null(capsim_launch_scenario_text(&l, "s", "m", "dgx-h100", 8, "line", &d));
	assert_int_equal(d.n, 2);
	assert_true(capsim_diags_contains(&d, "the launch runs 4 GPUs a node, node 'dgx-h100' "
					      "has 8"));
	assert_true(capsim_diags_contains(&d, "--seq-length"));
	assert_string_equal(d.v[0].where, "line");
	capsim_diags_free(&d);
	assert_int_equal(capsim_launch_model_text(&l, "m", "line", &models, &d), -1);
	assert_null(models);
	assert_int_equal(d.n, 4);
	assert_true(capsim_diags_contains(&d, "--vocab-size"));
	capsim_diags_free(&d);
}

/* one command line, its words split at spaces, read into *l (emptied first):
 * 0, or -1 with d */
static int command_line(const char *line, capsim_launch *l, capsim_diags *d)
{
	char *copy = strdup(line), *argv[32], *save = NULL;
	int argc = 0;
	for (char *w = strtok_r(copy, " ", &save); w && argc < 32; w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	capsim_launch_init(l);
	int r = capsim_launch_argv(argv, argc, "the command line", l, d);
	free(copy);
	return r;
}

/* NeMo 2.0's recipes: the command lines NeMo's own documentation gives
 * (docs/source/features/parallelisms.rst, nlp/nemo_megatron/batching.rst at
 * NeMo 8cfedd7203462cb251a914e700e5605444277561) read as the recipe's
 * defaults under their overrides; the defaults are its
 * nemo/collections/llm/recipes/NAME.py at that commit */
static void test_nemo_recipes(void **state)
{
	(void)state;
	capsim_launch l;
	capsim_diags d = { 0 };
	/* llama3_8b: TP 1, CP 2, 8192 x 512 x 1, 1168251 steps, bf16, the
	 * distributed optimizer; TP 2 from the launch */
	assert_int_equal(command_line("nemo llm pretrain --factory llama3_8b "
				      "trainer.strategy.tensor_model_parallel_size=2", &l, &d), 0);
	assert_int_equal(l.tp, 2);
	assert_int_equal(l.cp, 2);
	assert_int_equal(l.pp, 1);
	assert_int_equal(l.seq_len, 8192);
	assert_int_equal(l.global_batch, 512);
	assert_int_equal(l.micro_batch, 1);
	assert_int_equal(l.train_iters, 1168251);
	assert_int_equal(l.nodes, 1);
	assert_int_equal(l.gpus_per_node, 8);
	assert_int_equal(l.zero, 1);
	assert_string_equal(l.dtype, "bf16");
	assert_string_equal(l.model, "llama-3.1-8b");
	/* virtual stages over the recipe's none */
	assert_int_equal(command_line("nemo llm pretrain --factory llama3_8b "
				      "trainer.strategy.pipeline_model_parallel_size=2 "
				      "trainer.strategy.virtual_pipeline_model_parallel_size=2", &l, &d), 0);
	assert_int_equal(l.pp, 2);
	assert_int_equal(l.vp_stages, 2);
	/* mixtral_8x7b: 8 nodes, PP 4 with 8 virtual stages, EP 8, 4096 x 512;
	 * EP 4 from the launch, expert TP not modelled and said */
	assert_int_equal(command_line("nemo llm pretrain --factory mixtral_8x7b "
				      "trainer.strategy.expert_model_parallel_size=4 "
				      "trainer.strategy.expert_tensor_parallel_size=4", &l, &d), 0);
	assert_int_equal(l.ep, 4);
	assert_int_equal(l.nodes, 8);
	assert_int_equal(l.pp, 4);
	assert_int_equal(l.vp_stages, 8);
	assert_int_equal(l.seq_len, 4096);
	assert_string_equal(l.model, "mixtral-8x7b");
	int said = 0;
	for (int i = 0; i < l.n_notes; i++)
		said |= strstr(l.notes[i], "trainer.strategy.expert_tensor_parallel_size=4") != NULL;
	assert_true(said);
	/* the batches */
	assert_int_equal(command_line("nemo llm pretrain --factory llama3_8b data.micro_batch_size=4 "
				      "data.global_batch_size=16 trainer.accumulate_grad_batches=1",
				      &l, &d), 0);
	assert_int_equal(l.micro_batch, 4);
	assert_int_equal(l.global_batch, 16);
	/* the factory's own arguments: llama31_405b's TP 8, PP 8, 2 virtual
	 * stages, CP 4, sequence parallel, on the 128 nodes given */
	assert_int_equal(command_line("nemo llm pretrain --factory "
				      "llama31_405b(num_nodes=128,num_gpus_per_node=8)", &l, &d), 0);
	assert_int_equal(l.nodes, 128);
	assert_int_equal(l.tp, 8);
	assert_int_equal(l.pp, 8);
	assert_int_equal(l.vp_stages, 2);
	assert_int_equal(l.cp, 4);
	assert_int_equal(l.sequence_parallel, 1);
	/* recipe=NAME, and the distributed optimizer turned off */
	assert_int_equal(command_line("python pretrain.py recipe=gpt3_175b "
				      "optim.config.use_distributed_optimizer=False", &l, &d), 0);
	assert_int_equal(l.tp, 4);
	assert_int_equal(l.vp_stages, 6);
	assert_int_equal(l.global_batch, 2048);
	assert_int_equal(l.micro_batch, 2);
	assert_int_equal(l.zero, 0);
	assert_int_equal(d.n, 0);
	/* refused: a recipe not in the table, named; a fine-tune; a bad argument */
	assert_int_equal(command_line("nemo llm pretrain --factory qwen3_8b", &l, &d), -1);
	assert_true(capsim_diags_contains(&d, "NeMo recipe 'qwen3_8b': not one capsim knows"));
	capsim_diags_free(&d);
	assert_int_equal(command_line("nemo llm finetune --factory llama3_8b", &l, &d), -1);
	assert_true(capsim_diags_contains(&d, "capsim reads the pre-training recipes' defaults"));
	capsim_diags_free(&d);
	assert_int_equal(command_line("nemo llm pretrain --factory llama3_8b(num_nodes=two)", &l,
				      &d), -1);
	assert_true(capsim_diags_contains(&d, "--factory num_nodes: expected a positive whole "
					  "number, found 'two'"));
	capsim_diags_free(&d);
	/* imported without --model: the recipe's model, a scenario that loads */
	assert_int_equal(testutil_sh("%s import cmdline --out %s/recipe.xml -- nemo llm pretrain "
				     "--factory llama3_8b trainer.strategy.tensor_model_parallel_size=2 "
				     "2>/dev/null && %s validate %s/recipe.xml >/dev/null && grep -q "
				     "'ref=\"llama-3.1-8b\"' %s/recipe.xml", CAPSIM_BIN, dir, CAPSIM_BIN,
				     dir, dir), 0);
}

/* Megatron-LM's pipeline variants (megatron/training/arguments.py): virtual
 * stages a rank, an uneven first and last stage, read; a custom layout
 * listed as not modelled with its value whole */
static void test_megatron_pipeline(void **state)
{
	(void)state;
	capsim_launch l;
	capsim_diags d = { 0 };
	assert_int_equal(command_line("torchrun pretrain_gpt.py --pipeline-model-parallel-size 4 "
				      "--num-virtual-stages-per-pipeline-rank 2 "
				      "--decoder-first-pipeline-num-layers 6 "
				      "--decoder-last-pipeline-num-layers 6 --seq-length 4096", &l, &d), 0);
	assert_int_equal(l.pp, 4);
	assert_int_equal(l.vp_stages, 2);
	assert_int_equal(l.first_stage_layers, 6);
	assert_int_equal(l.last_stage_layers, 6);
	char *xml = capsim_launch_scenario_text(&l, "p", "llama-3.1-8b", "dgx-h100", 8, "here", &d);
	assert_non_null(xml);
	assert_non_null(strstr(xml, "schedule=\"1f1b-interleaved\" virtual-stages=\"2\" "
			       "first-stage-layers=\"6\" last-stage-layers=\"6\""));
	free(xml);
	assert_int_equal(command_line("torchrun pretrain_gpt.py --pipeline-model-parallel-size 4 "
				      "--pipeline-model-parallel-layout Et*3|(tt|)*29m|L", &l, &d), 0);
	int said = 0;
	for (int i = 0; i < l.n_notes; i++)
		said |= !strcmp(l.notes[i], "--pipeline-model-parallel-layout Et*3|(tt|)*29m|L: not "
				"modelled");
	assert_true(said);
	capsim_diags_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slurm),
		cmocka_unit_test(test_megatron_arrays),
		cmocka_unit_test(test_kubernetes),
		cmocka_unit_test(test_nemo),
		cmocka_unit_test(test_torchrun_line),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_shell_syntax),
		cmocka_unit_test(test_positive),
		cmocka_unit_test(test_expansion_limits),
		cmocka_unit_test(test_line_limits),
		cmocka_unit_test(test_notes_counted),
		cmocka_unit_test(test_comment_escape),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_end_to_end),
		cmocka_unit_test(test_writers),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_slurm_env),
		cmocka_unit_test(test_arrays),
		cmocka_unit_test(test_blocks),
		cmocka_unit_test(test_held_commands),
		cmocka_unit_test(test_list_flags),
		cmocka_unit_test(test_nemo_peft),
		cmocka_unit_test(test_nemo_recipes),
		cmocka_unit_test(test_megatron_pipeline),
	};
	capsim_init();
	return testutil_run_group(tests, setup, teardown);
}
