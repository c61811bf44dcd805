/* test_launch_corpus.c - real public launch files, unedited
 * (tests/data/launch/real/, each one's repository, path, commit and license in
 * SOURCES.md): Megatron-LM's own example scripts, Slurm batch scripts of
 * Megatron-LM and NeMo from AWS's distributed-training samples, the NeMo
 * Framework Launcher's PEFT examples and torchtitan's run_train.sh, with the
 * config files they name (read with --config-root). Each is read as bash
 * would run it and
 * every value its authors set is checked, as read from the file's own text
 * (the comments give the lines); nothing else may appear. Each then goes
 * through capsim import: a file whose values hold gives a scenario that
 * capsim validate loads; one whose value truly cannot be known (a
 * placeholder, a variable set only in the environment, a config file the
 * launch names) is refused naming it. */
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
#include "xalloc.h"
#include "xml.h"

CAPSIM_TEST_TMPDIR("test-launch-corpus")

/* what a file must yield: 0 where the launch does not say */
typedef struct {
	const char *file;
	const char *env[2];     /* --env NAME=VALUE given, or NULL */
	const char *read_error; /* the script itself refused with this, or NULL */
	long nodes, gpn, tp, pp, cp, ep, vp, mb, gb, seq, iters, samples;
	const char *dtype;      /* NULL: not said */
	int zero;               /* the distributed optimizer: 1; -1 not said */
	int fsdp_zero;          /* Megatron-FSDP's sharding as ZeRO; -1 none */
	int fp8_params, sp;     /* sp: -1 not said */
	const char *recompute, *finetune;
	const char *model;      /* the catalog model the scenario is imported with */
	const char *refused;    /* capsim import's refusal, or NULL: it imports */
	const char *root;       /* --config-root under tests/data/launch/real/, or NULL */
} expect;

/* the NeMo launcher's launcher_scripts directory, its configs stored as
 * published */
#define NEMO "NeMo-Framework-Launcher/launcher_scripts"

static const expect corpus[] = {
	/* GPUS_PER_NODE=8 NUM_NODES=1 (l.22-23); TP_SIZE=1 CP_SIZE=1, PP only in a
	 * comment, MICRO_BATCH_SIZE=1 GLOBAL_BATCH_SIZE=128 SEQ_LENGTH=8192
	 * (l.32-42); --train-samples 1953125000; DTYPE="fp8" selects --fp8-format
	 * hybrid and --fp8-param-gather (l.108-115); --bf16 and
	 * --grad-reduce-in-bf16; --sequence-parallel; --use-distributed-optimizer */
	{ "megatron-llama3-8b-h100-fp8.sh", { NULL }, NULL, 1, 8, 1, 0, 1, 0, 0, 1, 128, 8192, 0,
	  1953125000, "fp8", 1, -1, 1, 1, NULL, NULL, "llama-3.1-8b", NULL, NULL },
	/* NNODES=${SLURM_NNODES:-"1"}: the default, one node; PP 4, EP 8 of 8
	 * experts: the authors' "Change for multinode config" */
	{ "megatron-mixtral-8x7b.sh", { NULL }, NULL, 1, 8, 1, 4, 0, 8, 0, 1, 256, 4096, 500000, 0,
	  "bf16", 1, -1, 0, 1, NULL, NULL, "mixtral-8x7b", "ep=8 does not divide dp x cp = 2", NULL },
	/* the same on the four nodes Slurm would give it */
	{ "megatron-mixtral-8x7b.sh", { "SLURM_NNODES=4" }, NULL, 4, 8, 1, 4, 0, 8, 0, 1, 256, 4096,
	  500000, 0, "bf16", 1, -1, 0, 1, NULL, NULL, "mixtral-8x7b", NULL, NULL },
	/* NUM_NODES=1 with TP 8 x PP 16: the example as published needs 128 GPUs */
	{ "megatron-gpt3-175b.sh", { NULL }, NULL, 1, 8, 8, 16, 0, 0, 0, 1, 1536, 2048, 500000, 0,
	  "fp16", -1, -1, 0, -1, NULL, NULL, "gpt3-175b",
	  "tp x pp x cp = 8 x 16 x 1 = 128 does not divide the launch", NULL },
	{ "megatron-bert-340m.sh", { NULL }, NULL, 1, 8, 8, 16, 0, 0, 0, 4, 32, 512, 1000000, 0,
	  "fp16", -1, -1, 0, -1, NULL, NULL, "llama-2-7b",
	  "tp x pp x cp = 8 x 16 x 1 = 128 does not divide the launch", NULL },
	/* as the Llama 3 FP8 script, with --use-megatron-fsdp and
	 * --data-parallel-sharding-strategy ${SHARDING_STRATEGY} whose default is
	 * optim_grads_params (USE_MEGATRON_FSDP defaults to 1); --sequence-parallel
	 * (l.159) */
	{ "megatron-fsdp-llama3-8b-fp8.sh", { NULL }, NULL, 1, 8, 1, 0, 1, 0, 0, 1, 128, 8192, 0,
	  1953125000, "fp8", 1, 3, 1, 1, NULL, NULL, "llama-3.1-8b", NULL, NULL },
	/* sbatch <<EOF with #SBATCH --nodes=your_own_num_nodes: a placeholder */
	{ "megatron-fsdp-deepseek-v3.sbatch", { NULL },
	  "megatron-fsdp-deepseek-v3.sbatch:208: error: --nodes: expected a positive whole number, "
	  "found 'your_own_num_nodes'", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, -1, -1, 0, -1, NULL,
	  NULL, NULL, NULL, NULL },
	/* MODEL_SCALE="800M" selects TP 1 and GLOBAL_BATCH_SIZE=32 in its case;
	 * SEQ_LEN=4096, TRAIN_SAMPLES=73242188; torchrun --nproc_per_node 8 */
	{ "megatron-mamba.sh", { NULL }, NULL, 0, 8, 1, 1, 0, 0, 0, 4, 32, 4096, 0, 73242188, "bf16",
	  1, -1, 0, 1, NULL, NULL, "llama-2-7b", NULL, NULL },
	/* PP_SIZE=${WORLD_SIZE}, WORLD_SIZE=$(($GPUS_PER_NODE*$NUM_NODES)) = 8;
	 * --recompute-activations; FP8 with --fp8-param-gather */
	{ "megatron-gptoss.sh", { NULL }, NULL, 1, 8, 1, 8, 1, 1, 0, 1, 128, 8192, 0, 1953125000,
	  "fp8", 1, -1, 1, 1, "selective", NULL, "llama-3.1-8b", NULL, NULL },
	/* TP, PP and the batch are chosen on $NODES, which the script never sets */
	{ "aws-megatron-gpt3.sbatch", { NULL },
	  "--tensor-model-parallel-size $TENSOR_PARALLEL: TENSOR_PARALLEL is not set in the script",
	  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, -1, -1, 0, -1, NULL, NULL, NULL, NULL, NULL },
	/* with NODES=2 (its #SBATCH --nodes=2): TP 4, PP 2, batch 288 */
	{ "aws-megatron-gpt3.sbatch", { "NODES=2" }, NULL, 2, 8, 4, 2, 0, 0, 0, 1, 288, 2048, 0,
	  146484375, "fp16", -1, -1, 0, -1, "selective", NULL, "llama-2-7b", NULL, NULL },
	/* #SBATCH --nodes=2; TP 4 PP 4 with --sequence-parallel and the
	 * distributed optimizer; GLOBAL_BATCH_SIZE:=2048, --train-iters 5 */
	{ "aws-megatron-llama2.sbatch", { NULL }, NULL, 2, 8, 4, 4, 0, 0, 0, 1, 2048, 4096, 5, 0,
	  "fp16", 1, -1, 0, 1, NULL, NULL, "llama-2-7b", NULL, NULL },
	/* the NeMo launcher with training=gpt3/5b: without its config, refused
	 * naming the file and the option */
	{ "aws-nemo-launcher-gpt3-5b.sh", { NULL }, "training=gpt3/5b: the NeMo launcher reads the "
	  "job's values from its conf/training/gpt3/5b.yaml, which this launch does not hold: give "
	  "--config-root DIR", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, -1, -1, 0, -1, NULL, NULL,
	  NULL, NULL, NULL },
	/* with it (conf/training/gpt3/5b.yaml): trainer.devices 8, TP 1 PP 1 CP 1,
	 * global batch 2048, encoder_seq_length 2048, bf16, sequence_parallel
	 * False, activations_checkpoint_granularity null, the optimizer
	 * mcore_distributed_optim (ZeRO 1); the launch's num_nodes=2,
	 * max_steps=30 and micro_batch_size=${MBS} (2) over the file's 16, 75000
	 * and 4 */
	{ "aws-nemo-launcher-gpt3-5b.sh", { NULL }, NULL, 2, 8, 1, 1, 1, 0, 0, 2, 2048, 2048, 30, 0,
	  "bf16", 1, -1, 0, 0, "none", NULL, "llama-2-7b", NULL, NEMO },
	/* bash -c "... megatron_gpt_pretraining.py --config-name=...": 2 nodes of 8 */
	{ "aws-nemo-nemotron4-15b.sbatch", { NULL }, NULL, 2, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL,
	  -1, -1, 0, -1, NULL, NULL, "llama-2-7b", "the config file it names holds it", NULL },
	/* peft=llama/sft without its config: refused */
	{ "nemo-launcher-llama-h100-13b_1node_lora.sh", { NULL }, "peft=llama/sft: the NeMo launcher "
	  "reads the job's values from its conf/peft/llama/sft.yaml", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	  0, 0, NULL, -1, -1, 0, -1, NULL, NULL, NULL, NULL, NULL },
	/* with conf/peft/llama/sft.yaml: max_steps 20000, no CP key,
	 * encoder_seq_length ${peft.model.data.train_ds.max_seq_length}: the
	 * launch's 4096; the launch's peft_scheme=lora, fp8 with fp8_params,
	 * optim.name=fused_adam (no distributed optimizer) */
	{ "nemo-launcher-llama-h100-13b_1node_lora.sh", { NULL }, NULL, 1, 8, 1, 1, 0, 0, 0, 1, 32,
	  4096, 20000, 0, "fp8", -1, -1, 1, 0, "none", "lora", "llama-2-13b", NULL, NEMO },
	/* TP 4 PP 4 with 20 virtual stages, sequence parallel; sft.yaml's
	 * peft_scheme null (a full fine-tune) and mcore_distributed_optim */
	{ "nemo-launcher-llama-h100-70b_2node.sh", { NULL }, NULL, 2, 8, 4, 4, 0, 0, 20, 1, 32, 4096,
	  20000, 0, "fp8", 1, -1, 1, 1, "none", "full", "llama-2-70b", NULL, NEMO },
	/* conf/peft/nemotron/sft.yaml under the launch's LoRA and fused_adam */
	{ "nemo-launcher-nemotron-h100-22b_1node_lora.sh", { NULL }, NULL, 1, 8, 1, 1, 0, 0, 0, 1,
	  32, 4096, 20000, 0, "fp8", -1, -1, 1, 0, "none", "lora", "llama-2-13b", NULL, NEMO },
	/* PEFT_CONFIG's default llama/squad (peft_scheme "lora", max_seq_length
	 * 4096, fused_adam); 4 GPUs a node (A100 pods), max_steps 2000 */
	{ "nemo-launcher-llama-a100-lora_4gpu_k8s.sh", { NULL }, NULL, 1, 4, 1, 1, 0, 0, 0, 1, 128,
	  4096, 2000, 0, "bf16", -1, -1, 0, 0, "none", "lora", "llama-2-7b",
	  "the launch runs 4 GPUs a node", NEMO },
};

static void path_of(const char *file, char *path, size_t size)
{
	snprintf(path, size, "%s/tests/data/launch/real/%s", CAPSIM_SOURCE_DIR, file);
}

static void strings_equal(const char *what, const char *file, const char *got, const char *want)
{
	if ((got == NULL) != (want == NULL) || (got && strcmp(got, want)))
		fail_msg("%s: %s: found %s, expected %s", file, what, got ? got : "(not said)",
			 want ? want : "(not said)");
}

static void longs_equal(const char *what, const char *file, long got, long want)
{
	if (got != want)
		fail_msg("%s: %s: found %ld, expected %ld", file, what, got, want);
}

/* every value of e read from its file */
static void check_values(const expect *e, const capsim_launch *l)
{
	const long got[] = { l->nodes, l->gpus_per_node, l->tp, l->pp, l->cp, l->ep, l->vp_stages,
			     l->micro_batch, l->global_batch, l->seq_len, l->train_iters,
			     l->train_samples, l->zero, l->megatron_fsdp ? l->fsdp_zero : -1,
			     l->fp8_param_gather, l->sequence_parallel };
	const long want[] = { e->nodes, e->gpn, e->tp, e->pp, e->cp, e->ep, e->vp, e->mb, e->gb,
			      e->seq, e->iters, e->samples, e->zero, e->fsdp_zero, e->fp8_params,
			      e->sp };
	static const char *const name[] = { "nodes", "GPUs a node", "tp", "pp", "cp", "ep",
					    "virtual stages", "micro-batch", "global batch", "seq",
					    "train iters", "train samples", "distributed optimizer",
					    "FSDP sharding", "fp8 params", "sequence parallel" };
	for (size_t i = 0; i < sizeof got / sizeof got[0]; i++)
		longs_equal(name[i], e->file, got[i], want[i]);
	strings_equal("dtype", e->file, l->dtype, e->dtype);
	strings_equal("recompute", e->file, l->recompute, e->recompute);
	strings_equal("finetune", e->file, l->finetune, e->finetune);
}

/* d holds "WHERE: error: MSG" with needle in it, as printed */
static int printed(const capsim_diags *d, const char *needle)
{
	for (size_t i = 0; i < d->n; i++) {
		char line[800];
		snprintf(line, sizeof line, "%s: error: %s", d->v[i].where, d->v[i].msg);
		if (strstr(line, needle))
			return 1;
	}
	return 0;
}

/* the script read (with its environment): its values, or its refusal */
static void read_one(const expect *e)
{
	char path[512];
	path_of(e->file, path, sizeof path);
	capsim_diags d = { 0 };
	size_t len;
	char *text = capsim_xml_slurp(path, &len, &d);
	assert_non_null(text);
	const char *env[2];
	int n_env = 0;
	for (int i = 0; i < 2; i++)
		if (e->env[i])
			env[n_env++] = e->env[i];
	char root[512];
	const char *roots[1] = { root };
	if (e->root)
		snprintf(root, sizeof root, "%s/tests/data/launch/real/%s", CAPSIM_SOURCE_DIR, e->root);
	capsim_launch_inputs in = { .env = env, .n_env = n_env, .config_roots = roots,
				    .n_config_roots = e->root ? 1 : 0 };
	capsim_launch l;
	int r = capsim_launch_script_with(text, len, path, &in, &l, &d);
	if (e->read_error) {
		if (r == 0 || !printed(&d, e->read_error)) {
			capsim_diags_print(&d, stderr);
			fail_msg("%s: expected the refusal '%s'", e->file, e->read_error);
		}
	} else {
		if (r < 0) {
			capsim_diags_print(&d, stderr);
			fail_msg("%s does not read", e->file);
		}
		check_values(e, &l);
	}
	free(text);
	capsim_diags_free(&d);
}

static void test_values(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof corpus / sizeof corpus[0]; i++)
		read_one(&corpus[i]);
}

/* capsim import: a scenario capsim validate loads, or the refusal naming
 * what cannot be known, with nothing written */
static void test_import(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof corpus / sizeof corpus[0]; i++) {
		const expect *e = &corpus[i];
		if (e->read_error)
			continue;
		char path[512], env[1024] = "";
		path_of(e->file, path, sizeof path);
		for (int k = 0; k < 2; k++)
			if (e->env[k])
				snprintf(env + strlen(env), sizeof env - strlen(env), " --env %s", e->env[k]);
		if (e->root)
			snprintf(env + strlen(env), sizeof env - strlen(env), " --config-root '%s/tests/"
				 "data/launch/real/%s'", CAPSIM_SOURCE_DIR, e->root);
		int rc = testutil_sh("rm -f %s/s.xml; %s import slurm%s --model %s --out %s/s.xml '%s' "
				     "2>%s/err", dir, CAPSIM_BIN, env, e->model, dir, path, dir);
		if (e->refused) {
			if (rc != 2 || testutil_sh("grep -qF -- '%s' %s/err", e->refused, dir) != 0 ||
			    testutil_sh("test ! -e %s/s.xml", dir) != 0)
				fail_msg("%s: expected the refusal '%s' (exit 2, nothing written)", e->file,
					 e->refused);
			continue;
		}
		if (rc != 0) {
			(void)testutil_sh("cat %s/err >&2", dir);
			fail_msg("%s: capsim import refused it", e->file);
		}
		if (testutil_sh("%s validate %s/s.xml >/dev/null", CAPSIM_BIN, dir) != 0)
			fail_msg("%s: the imported scenario does not load", e->file);
	}
}

/* what was assumed is said, on stderr and in the file: the branch a file
 * test decided, the defaults taken, the global batch written */
static void test_assumptions_said(void **state)
{
	(void)state;
	char path[512];
	path_of("megatron-llama3-8b-h100-fp8.sh", path, sizeof path);
	assert_int_equal(testutil_sh("%s import slurm --model llama-3.1-8b --out %s/l.xml '%s' "
				     "2>%s/err", CAPSIM_BIN, dir, path, dir), 0);
	static const char *const said[] = {
		("line 180: if [ ! -f \"$PRETRAIN_SCRIPT_PATH\" ]: decided by a file test, taken as "
		 "the file being there: its branch not taken"),
		"${3:-\"MOCK\"}: 3 is not set in the script: its default, ",
		"--recompute-activations", /* never: it is not in this file */
	};
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(testutil_sh("grep -qF -- '%s' %s/err", said[i], dir), 0);
		assert_int_equal(testutil_sh("grep -qF -- '%s' %s/l.xml", said[i], dir), 0);
	}
	assert_int_not_equal(testutil_sh("grep -qF -- '%s' %s/err", said[2], dir), 0);
	/* a test operand is never a flag: no -f among what was not modelled */
	assert_int_not_equal(testutil_sh("grep -q 'warning: -f' %s/err", dir), 0);
	/* nor a held command's: NEMO_FRAMEWORK_LAUNCHER_DIR=$(readlink -f ...) is
	 * one word where the launch line uses it (the A100 example, l.7 and l.17) */
	path_of("nemo-launcher-llama-a100-lora_4gpu_k8s.sh", path, sizeof path);
	assert_int_equal(testutil_sh("%s import slurm --node dgx-a100 --model llama-2-7b "
				     "--config-root '%s/tests/data/launch/real/" NEMO "' '%s' "
				     ">/dev/null 2>%s/err", CAPSIM_BIN, CAPSIM_SOURCE_DIR, path, dir), 2);
	assert_int_not_equal(testutil_sh("grep -q 'warning: -f' %s/err", dir), 0);
	/* a launch that gives its global batch has none assumed (AWS GPT-3 with
	 * NODES=2: 288); one that does not has micro-batch x DP written */
	path_of("aws-megatron-gpt3.sbatch", path, sizeof path);
	assert_int_equal(testutil_sh("%s import slurm --env NODES=2 --model llama-2-7b '%s' 2>&1 "
				     ">/dev/null | grep -q 'global batch'", CAPSIM_BIN, path), 1);
	assert_int_equal(testutil_sh("printf 'torchrun --nnodes 2 --nproc-per-node 8 pretrain_gpt.py "
				     "--seq-length 4096 --micro-batch-size 2 --tensor-model-parallel-size "
				     "2\\n' > %s/g.sh && %s import slurm --model llama-2-7b --out %s/g.xml "
				     "%s/g.sh 2>%s/gerr && grep -qF 'global batch: not in the launch; "
				     "micro-batch 2 x data-parallel 8 = 16 assumed' %s/gerr && grep -qF "
				     "'global batch: not in the launch' %s/g.xml && grep -q "
				     "'global-batch=\"16\"' %s/g.xml", dir, CAPSIM_BIN, dir, dir, dir, dir,
				     dir, dir), 0);
}

/* torchtitan's own launcher, run_train.sh (tests/data/launch/real/torchtitan/,
 * with the configs it names where its checkout holds them) read with env
 * and its checkout as the config root (or none): 0, or -1 with d */
static int titan_launch(const char *const *env, int n_env, int with_root, capsim_launch *l,
			capsim_diags *d)
{
	char path[512], root[512];
	path_of("torchtitan/run_train.sh", path, sizeof path);
	snprintf(root, sizeof root, "%s/tests/data/launch/real/torchtitan", CAPSIM_SOURCE_DIR);
	const char *roots[1] = { root };
	size_t len;
	char *text = capsim_xml_slurp(path, &len, d);
	assert_non_null(text);
	capsim_launch_inputs in = { .env = env, .n_env = n_env, .config_roots = roots,
				    .n_config_roots = with_root };
	int r = capsim_launch_script_with(text, len, path, &in, l, d);
	free(text);
	return r;
}

/* run_train.sh: torchrun --nproc_per_node=${NGPU} (8) ... -m torchtitan.train
 * --job.config_file ${CONFIG_FILE} "$@", CONFIG_FILE's default the debug
 * model's config (l.30); COMM_MODE empty, so the torchrun branch (l.36) */
static void test_torchtitan_launcher(void **state)
{
	(void)state;
	capsim_diags d = { 0 };
	capsim_launch l;
	/* without the checkout: refused, naming the file and the option */
	assert_int_equal(titan_launch(NULL, 0, 0, &l, &d), -1);
	assert_true(printed(&d, "--job.config_file ./torchtitan/models/llama3/train_configs/"
			    "debug_model.toml: torchtitan's job config, which this launch does not "
			    "hold: give --config-root DIR"));
	capsim_diags_free(&d);
	/* with it: debug_model.toml's local_batch_size 8, seq_len 2048, steps 10,
	 * shard -1 over the 8 GPUs (ZeRO 3), selective AC, the debugmodel */
	assert_int_equal(titan_launch(NULL, 0, 1, &l, &d), 0);
	longs_equal("GPUs a node", "run_train.sh", l.gpus_per_node, 8);
	longs_equal("micro-batch", "run_train.sh", l.micro_batch, 8);
	longs_equal("global batch", "run_train.sh", l.global_batch, 64);
	longs_equal("seq", "run_train.sh", l.seq_len, 2048);
	longs_equal("steps", "run_train.sh", l.train_iters, 10);
	longs_equal("tp", "run_train.sh", l.tp, 1);
	longs_equal("FSDP sharding", "run_train.sh", l.fsdp_zero, 3);
	longs_equal("layers", "run_train.sh", l.layers, 6);
	strings_equal("recompute", "run_train.sh", l.recompute, "selective");
	strings_equal("model", "run_train.sh", l.model, NULL);
	capsim_diags_free(&d);
	/* CONFIG_FILE the 8B config and "$@" its overrides: --training.steps 2000,
	 * --parallelism.tensor_parallel_degree=2 over the file's 1000 and 1 */
	static const char *const env[] = {
		"CONFIG_FILE=./torchtitan/models/llama3/train_configs/llama3_8b.toml",
		"1=--training.steps", "2=2000", "3=--parallelism.tensor_parallel_degree=2",
	};
	assert_int_equal(titan_launch(env, 4, 1, &l, &d), 0);
	strings_equal("model", "run_train.sh", l.model, "llama-3.1-8b");
	longs_equal("steps", "run_train.sh", l.train_iters, 2000);
	longs_equal("tp", "run_train.sh", l.tp, 2);
	longs_equal("sequence parallel", "run_train.sh", l.sequence_parallel, 1);
	longs_equal("global batch", "run_train.sh", l.global_batch, 4); /* local 1 x dp 4 */
	longs_equal("seq", "run_train.sh", l.seq_len, 8192);
	capsim_diags_free(&d);
	/* an override of the wrong kind: refused, naming it */
	static const char *const bad[] = { "1=--training.seq_len", "2=long" };
	assert_int_equal(titan_launch(bad, 2, 1, &l, &d), -1);
	assert_true(printed(&d, "--training.seq_len long: expected an integer"));
	capsim_diags_free(&d);
	/* capsim import: the debug model's scenario and models file load */
	char path[512];
	path_of("torchtitan/run_train.sh", path, sizeof path);
	assert_int_equal(testutil_sh("%s import slurm --config-root '%s/tests/data/launch/real/"
				     "torchtitan' --models %s/tt-m.xml --out %s/tt.xml '%s' 2>/dev/null "
				     "&& %s --parts %s/tt-m.xml validate %s/tt.xml >/dev/null", CAPSIM_BIN,
				     CAPSIM_SOURCE_DIR, dir, dir, path, CAPSIM_BIN, dir, dir), 0);
}

/* a NeMo launcher config's values read where the launch gives none, its
 * interpolations resolved, and refused where one cannot be */
static void test_nemo_config_values(void **state)
{
	(void)state;
	char root[512];
	snprintf(root, sizeof root, "%s/tests/data/launch/real/" NEMO, CAPSIM_SOURCE_DIR);
	/* gpt3/5b.yaml's ffn_hidden_size ${multiply:4, ${.hidden_size}}: 16384,
	 * and its 24 layers of 4096 with 32 heads */
	capsim_launch l;
	capsim_launch_init(&l);
	const char *roots[1] = { root };
	l.config_roots = roots;
	l.n_config_roots = 1;
	capsim_diags d = { 0 };
	char *line[] = { "python3", "main.py", "training=gpt3/5b", "training.model.hidden_size=2048" };
	assert_int_equal(capsim_launch_argv(line, 3, "here", &l, &d), 0);
	longs_equal("ffn", "5b.yaml", l.ffn, 16384);
	longs_equal("layers", "5b.yaml", l.layers, 24);
	longs_equal("heads", "5b.yaml", l.heads, 32);
	longs_equal("nodes", "5b.yaml", l.nodes, 16);
	/* the launch's hidden size under the file's reference: 4 x 2048 */
	capsim_launch_init(&l);
	l.config_roots = roots;
	l.n_config_roots = 1;
	assert_int_equal(capsim_launch_argv(line, 4, "here", &l, &d), 0);
	longs_equal("ffn", "5b.yaml", l.ffn, 8192);
	longs_equal("hidden", "5b.yaml", l.hidden, 2048);
	/* a deleted key a value refers to: refused at the file's line */
	char *del[] = { "python3", "main.py", "training=gpt3/5b", "~training.model.hidden_size" };
	capsim_launch_init(&l);
	l.config_roots = roots;
	l.n_config_roots = 1;
	assert_int_equal(capsim_launch_argv(del, 4, "here", &l, &d), -1);
	assert_true(printed(&d, "5b.yaml:71: error: training.model.ffn_hidden_size: "
			    "${.hidden_size}: neither the file nor the launch gives "
			    "training.model.hidden_size"));
	capsim_diags_free(&d);
	/* a group named by a variable the script does not set */
	char *unset[] = { "python3", "main.py", "training=${MODEL}/5b" };
	capsim_launch_init(&l);
	l.config_roots = roots;
	l.n_config_roots = 1;
	assert_int_equal(capsim_launch_argv(unset, 3, "here", &l, &d), -1);
	assert_true(printed(&d, "here: error: training=${MODEL}/5b: names a variable the script "
			    "does not set"));
	capsim_diags_free(&d);
	/* a group the root does not hold: the paths tried named */
	char *none[] = { "python3", "main.py", "training=gpt3/7b" };
	capsim_launch_init(&l);
	l.config_roots = roots;
	l.n_config_roots = 1;
	assert_int_equal(capsim_launch_argv(none, 3, "here", &l, &d), -1);
	assert_true(printed(&d, "here: error: training=gpt3/7b: no config file at "));
	assert_true(printed(&d, "conf/training/gpt3/7b.yaml"));
	capsim_diags_free(&d);
}

/* text written as DIR/conf/training/x/NAME.yaml and read as training=x/NAME
 * with DIR as the root: the diagnostics' count, want among them */
static void config_refused(const char *name, const char *text, const char *want)
{
	char path[600], root[512];
	snprintf(root, sizeof root, "%s", dir);
	assert_int_equal(testutil_sh("mkdir -p %s/conf/training/x", dir), 0);
	snprintf(path, sizeof path, "%s/conf/training/x/%s.yaml", dir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	char group[80];
	snprintf(group, sizeof group, "training=x/%s", name);
	char *line[] = { "python3", "main.py", group };
	capsim_launch l;
	capsim_launch_init(&l);
	const char *roots[1] = { root };
	l.config_roots = roots;
	l.n_config_roots = 1;
	capsim_diags d = { 0 };
	assert_int_equal(capsim_launch_argv(line, 3, "here", &l, &d), -1);
	if (!printed(&d, want)) {
		capsim_diags_print(&d, stderr);
		fail_msg("%s: expected '%s'", name, want);
	}
	capsim_diags_free(&d);
}

/* a config that would multiply itself (aliases of aliases, interpolations
 * of interpolations, a cycle), a missing value and YAML that does not parse:
 * each refused at its file's line, in bounded time and memory */
static void test_nemo_config_limits(void **state)
{
	(void)state;
	char *bomb = capsim_xasprintf("a0: &a0 {v: 1}\n");
	for (int i = 1; i < 12; i++) {
		char *next = capsim_xasprintf("%sa%d: &a%d {", bomb, i, i);
		free(bomb);
		bomb = next;
		for (int j = 0; j < 10; j++) {
			next = capsim_xasprintf("%s%sk%d: *a%d", bomb, j ? ", " : "", j, i - 1);
			free(bomb);
			bomb = next;
		}
		next = capsim_xasprintf("%s}\n", bomb);
		free(bomb);
		bomb = next;
	}
	config_refused("bomb", bomb, "bomb.yaml:1: error: more than 65536 values (aliases "
		       "multiply them)");
	free(bomb);
	char *fan = capsim_xasprintf("model:\n  b0: 1\n");
	for (int i = 1; i < 13; i++) {
		char *next = capsim_xasprintf("%s  b%d: ${.b%d}${.b%d}${.b%d}${.b%d}\n", fan, i, i - 1,
					      i - 1, i - 1, i - 1);
		free(fan);
		fan = next;
	}
	char *use = capsim_xasprintf("%s  micro_batch_size: ${.b12}\n", fan);
	config_refused("fan", use, "fan.yaml:15: error: training.model.micro_batch_size: more "
		       "than 100000 interpolations resolved for one value");
	free(fan);
	free(use);
	config_refused("cycle", "model:\n  micro_batch_size: ${.global_batch_size}\n"
		       "  global_batch_size: ${.micro_batch_size}\n", "cycle.yaml:2: error: "
		       "training.model.micro_batch_size: interpolations refer through one another "
		       "more than 16 deep");
	config_refused("missing", "model:\n  micro_batch_size: ???\n", "missing.yaml:2: error: "
		       "training.model.micro_batch_size: ??? (a value the launch must give)");
	config_refused("list", "model:\n  micro_batch_size: [1, 2]\n", "list.yaml:2: error: "
		       "training.model.micro_batch_size: expected one value, found a list");
	config_refused("broken", "model:\n  a: [1, 2\n", "broken.yaml:");
	config_refused("broken", "model:\n  a: [1, 2\n", ": error: not YAML: ");
	config_refused("resolver", "model:\n  micro_batch_size: ${oc.env:MBS}\n",
		       "resolver.yaml:2: error: training.model.micro_batch_size: ${oc.env:MBS}: a "
		       "resolver capsim does not know");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_import),
		cmocka_unit_test(test_assumptions_said),
		cmocka_unit_test(test_torchtitan_launcher),
		cmocka_unit_test(test_nemo_config_values),
		cmocka_unit_test(test_nemo_config_limits),
	};
	capsim_init();
	return testutil_run_group(tests, setup, teardown);
}
