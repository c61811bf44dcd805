/* test_launch.c - launch lines and scripts into scenarios (issue 18), on
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
	assert_true(noted(&l, "--nnodes $SLURM_NNODES: a variable set at run time"));
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
	assert_true(noted(&l, "model.optim.name=distributed_fused_adam"));
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
	refused("not-a-number.sh", "--num-layers: expected a whole number, found 'twelve'");
	refused("bad-recompute.sh", "--recompute-granularity: expected full or selective, found 'partial'");
	refused("no-launch.sh", "no launch line found");
	/* a flag at the end without its value */
	char *argv[] = { "torchrun", "train.py", "--seq-length" };
	capsim_launch l;
	capsim_launch_init(&l);
	capsim_diags d = { 0 };
	assert_int_equal(capsim_launch_argv(argv, 3, "line", &l, &d), -1);
	assert_true(capsim_diags_contains(&d, "--seq-length: expected a whole number, found 'nothing'"));
	capsim_diags_free(&d);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slurm),
		cmocka_unit_test(test_megatron_arrays),
		cmocka_unit_test(test_kubernetes),
		cmocka_unit_test(test_nemo),
		cmocka_unit_test(test_torchrun_line),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_end_to_end),
	};
	capsim_init();
	return cmocka_run_group_tests(tests, setup, teardown);
}
