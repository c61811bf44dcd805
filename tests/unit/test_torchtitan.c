/* test_torchtitan.c - torchtitan's own Llama 3 job configs, unedited
 * (tests/data/launch/real/torchtitan-*.toml; repository, path, commit and
 * license in SOURCES.md), read by capsim import torchtitan: every value the
 * file sets, as its text gives it, and every other key listed as not
 * modelled, none dropped; the scenario loads. What cannot be read (another
 * model, a converter capsim does not model, degrees that are not the GPUs)
 * is refused at file:line with nothing written. */
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
#include "testutil.h"
#include "toml.h"
#include "torchtitan.h"
#include "xml.h"

CAPSIM_TEST_TMPDIR("test-torchtitan")

/* what a config must yield on nodes nodes of 8 GPUs */
typedef struct {
	const char *file;
	long nodes;       /* the GPUs its own first comment names, / 8 */
	const char *model; /* NULL: the debugmodel's own architecture */
	long mb, seq, steps, tp, pp, cp, vp;
	long gb;          /* local x data-parallel (no global_batch_size set) */
	const char *dtype, *recompute, *execution;
	int overlap;      /* enable_async_tensor_parallel: 1; -1 not said */
	double tokens;    /* steps x gb x seq */
} expect;

static const expect corpus[] = {
	/* local_batch_size 8, seq_len 2048, steps 10 (l.39-42); shard -1 on 8
	 * GPUs: dp 8; schedule Interleaved1F1B with pp 1 (l.50-51); mode
	 * "selective" (l.64); compile enable=false (l.68); converters commented */
	{ "torchtitan-debug_model.toml", 1, NULL, 8, 2048, 10, 1, 1, 1, 0, 64, "bf16",
	  "selective", "eager", -1, 10.0 * 64 * 2048 },
	/* "a preset for 64 A100 GPUs" (l.1): 8 nodes; local_batch_size 1,
	 * seq_len 8192, steps 1000 (l.29-32); all degrees 1, shard -1: dp 64;
	 * mode "selective" (l.56) */
	{ "torchtitan-llama3_8b.toml", 8, "llama-3.1-8b", 1, 8192, 1000, 1, 1, 1, 0, 64, "bf16",
	  "selective", "eager", -1, 1000.0 * 64 * 8192 },
	/* 64 GPUs (l.1); local_batch_size 8, seq_len 8192, steps 1000 (l.29-32);
	 * tensor_parallel_degree 8 (l.38): dp 8; mode "full" (l.53) */
	{ "torchtitan-llama3_70b.toml", 8, "llama-3.1-70b", 8, 8192, 1000, 8, 1, 1, 0, 64, "bf16",
	  "full", "eager", -1, 1000.0 * 64 * 8192 },
	/* "a preset for 128 H100 GPUs" (l.1): 16 nodes; converters ["float8"]
	 * (l.21); local_batch_size 2, seq_len 8192, steps 3000 (l.29-32); TP 8
	 * with async TP (l.38-39): dp 16; mode "full" (l.53); compile
	 * enable=true (l.56) */
	{ "torchtitan-llama3_405b.toml", 16, "llama-3.1-405b", 2, 8192, 3000, 8, 1, 1, 0, 32,
	  "fp8", "full", "compiled", 1, 3000.0 * 32 * 8192 },
};

/* the keys the reader maps; every other key of a config must be noted */
static const char *const mapped[] = {
	"model.name", "model.flavor", "model.converters", "training.local_batch_size",
	"training.global_batch_size", "training.seq_len", "training.steps",
	"training.mixed_precision_param", "parallelism.data_parallel_replicate_degree",
	"parallelism.data_parallel_shard_degree", "parallelism.tensor_parallel_degree",
	"parallelism.pipeline_parallel_degree", "parallelism.context_parallel_degree",
	"parallelism.expert_parallel_degree", "parallelism.pipeline_parallel_schedule",
	"parallelism.enable_async_tensor_parallel", "parallelism.fsdp_reshard_after_forward",
	"activation_checkpoint.mode", "compile.enable", "training.compile", "optimizer.name",
};

static void path_of(const char *file, char *path, size_t size)
{
	snprintf(path, size, "%s/tests/data/launch/real/%s", CAPSIM_SOURCE_DIR, file);
}

static char *slurp(const char *file, size_t *len)
{
	char path[512];
	path_of(file, path, sizeof path);
	capsim_diags d = { 0 };
	char *text = capsim_xml_slurp(path, len, &d);
	assert_non_null(text);
	capsim_diags_free(&d);
	return text;
}

/* whether a note of l lists key (its table's "[T] not modelled: ..., NAME") */
static int noted(const capsim_launch *l, const char *key)
{
	const char *dot = strrchr(key, '.');
	char head[200];
	snprintf(head, sizeof head, "[%.*s] not modelled: ", (int)(dot - key), key);
	for (int i = 0; i < l->n_notes; i++) {
		const char *n = l->notes[i];
		if (strncmp(n, head, strlen(head)))
			continue;
		for (const char *p = n + strlen(head); p; p = strstr(p, ", ")) {
			p += p[0] == ',' ? 2 : 0;
			size_t k = strcspn(p, ",");
			if (k == strlen(dot + 1) && !strncmp(p, dot + 1, k))
				return 1;
		}
	}
	return 0;
}

/* each key of the file is mapped or noted: none dropped */
static void none_dropped(const expect *e, const char *text, size_t len, const capsim_launch *l)
{
	capsim_toml t;
	capsim_diags d = { 0 };
	assert_int_equal(capsim_toml_parse(text, len, e->file, &t, &d), 0);
	for (size_t k = 0; k < t.n; k++) {
		int is_mapped = 0;
		for (size_t m = 0; m < sizeof mapped / sizeof mapped[0]; m++)
			is_mapped |= !strcmp(t.e[k].key, mapped[m]);
		if (!is_mapped && !noted(l, t.e[k].key))
			fail_msg("%s: key %s (line %ld) neither read nor noted", e->file, t.e[k].key,
				 t.e[k].line);
	}
	capsim_toml_free(&t);
}

static void test_values(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof corpus / sizeof corpus[0]; i++) {
		const expect *e = &corpus[i];
		size_t len;
		char *text = slurp(e->file, &len);
		capsim_launch l;
		const char *model = NULL;
		capsim_diags d = { 0 };
		if (capsim_torchtitan_read(text, len, e->file, e->nodes, 8, &l, &model, &d) < 0) {
			capsim_diags_print(&d, stderr);
			fail_msg("%s does not read", e->file);
		}
		if (e->model)
			assert_string_equal(model, e->model);
		else
			assert_true(model == NULL && l.layers == 6 && l.hidden == 256 && l.heads == 16 &&
				    l.vocab == 2048 && l.ffn == 768);
		const long got[] = { l.nodes, l.micro_batch, l.seq_len, l.train_iters, l.tp, l.pp,
				     l.cp, l.vp_stages, l.global_batch, l.tp_comm_overlap,
				     l.fsdp_zero };
		const long want[] = { e->nodes, e->mb, e->seq, e->steps, e->tp, e->pp, e->cp, e->vp,
				      e->gb, e->overlap, 3 };
		for (size_t k = 0; k < sizeof got / sizeof got[0]; k++)
			if (got[k] != want[k])
				fail_msg("%s: value %zu: found %ld, expected %ld", e->file, k, got[k],
					 want[k]);
		assert_string_equal(l.dtype, e->dtype);
		assert_string_equal(l.recompute, e->recompute);
		assert_string_equal(l.execution, e->execution);
		assert_string_equal(l.framework, "fsdp2");
		/* torchtitan's TP plan shards the norms over the sequence */
		assert_int_equal(l.sequence_parallel, e->tp > 1 ? 1 : -1);
		if (!strcmp(e->dtype, "fp8"))
			assert_string_equal(l.fp8_recipe, "current");
		none_dropped(e, text, len, &l);
		free(text);
		capsim_diags_free(&d);
	}
}

/* capsim import torchtitan: a scenario that loads, with the token budget
 * and ZeRO 3 under fsdp2, what was not modelled in its comment */
static void test_import(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof corpus / sizeof corpus[0]; i++) {
		const expect *e = &corpus[i];
		char path[512], models[600] = "", parts[600] = "";
		path_of(e->file, path, sizeof path);
		if (!e->model) {
			snprintf(models, sizeof models, "--models %s/m.xml", dir);
			snprintf(parts, sizeof parts, "--parts %s/m.xml", dir);
		}
		int rc = testutil_sh("%s import torchtitan --nodes %ld %s --out %s/s.xml '%s' 2>%s/err",
				     CAPSIM_BIN, e->nodes, models, dir, path, dir);
		if (rc != 0) {
			(void)testutil_sh("cat %s/err >&2", dir);
			fail_msg("%s: capsim import refused it", e->file);
		}
		assert_int_equal(testutil_sh("grep -q 'tokens=\"%.0f\"' %s/s.xml && grep -q "
					     "'framework=\"fsdp2\"' %s/s.xml && grep -q 'zero=\"3\"' "
					     "%s/s.xml && grep -q '\\[checkpoint\\] not modelled: enable, "
					     "folder, interval' %s/s.xml %s/err", e->tokens, dir, dir, dir,
					     dir, dir), 0);
		assert_int_equal(testutil_sh("%s %s validate %s/s.xml >/dev/null", CAPSIM_BIN, parts,
					     dir), 0);
	}
}

/* whether file (under the test's directory) holds needle, as grep -F
 * finds it (the needle passed in a file: quotes of any kind in it) */
static int holds(const char *file, const char *needle)
{
	char np[600];
	snprintf(np, sizeof np, "%s/needle", dir);
	FILE *f = fopen(np, "w");
	assert_non_null(f);
	fprintf(f, "%s\n", needle);
	fclose(f);
	return testutil_sh("grep -qF -f %s %s/%s", np, dir, file) == 0;
}

/* text (a config) written to DIR/c.toml and imported on one node: exit 2,
 * want on stderr at c.toml:line, nothing written */
static void refused(const char *text, const char *opts, const char *want)
{
	char file[600];
	snprintf(file, sizeof file, "%s/c.toml", dir);
	FILE *f = fopen(file, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	int rc = testutil_sh("rm -f %s/s.xml; %s import torchtitan %s --out %s/s.xml %s 2>%s/err",
			     dir, CAPSIM_BIN, opts, dir, file, dir);
	if (rc != 2 || !holds("err", want) ||
	    testutil_sh("test ! -e %s/s.xml", dir) != 0) {
		(void)testutil_sh("cat %s/err >&2", dir);
		fail_msg("expected the refusal '%s' (exit 2, nothing written)", want);
	}
}

static void test_refused(void **state)
{
	(void)state;
	refused("[model]\nname = \"llama4\"\nflavor = \"17bx16e\"\n", "",
		"c.toml:2: error: model.name \"llama4\": capsim reads torchtitan's llama3");
	refused("[model]\nflavor = \"1B\"\n", "", "c.toml:2: error: model.flavor \"1B\"");
	refused("[model]\nflavor = \"8B\"\nconverters = [\"mx\"]\n", "",
		"c.toml:3: error: model.converters: expected \"float8\"");
	refused("[model]\nflavor = \"8B\"\n[parallelism]\ndata_parallel_shard_degree = 3\n", "",
		"c.toml:4: error: parallelism: replicate 1 x shard 3 x tp 1 x pp 1 x cp 1 is not the 8 "
		"GPUs");
	refused("[model]\nflavor = \"8B\"\n[parallelism]\ntensor_parallel_degree = 3\n", "",
		"is not the 8 GPUs");
	refused("[model]\nflavor = \"8B\"\n[training]\nglobal_batch_size = 12\n", "",
		"c.toml:4: error: training.global_batch_size 12: expected a multiple of "
		"local_batch_size 8 x data-parallel 8");
	refused("[model]\nflavor = \"8B\"\n[training]\nseq_len = \"8k\"\n", "",
		"c.toml:4: error: training.seq_len: expected a whole number of at least 1");
	refused("[model]\nflavor = \"8B\"\n[training]\nmixed_precision_param = \"float32\"\n", "",
		"c.toml:4: error: training.mixed_precision_param \"float32\"");
	refused("[model]\nflavor = \"8B\"\n[activation_checkpoint]\nmode = \"memory_budget\"\n",
		"", "c.toml:4: error: activation_checkpoint.mode \"memory_budget\"");
	refused("[model]\nflavor = \"8B\"\n[parallelism]\npipeline_parallel_degree = 2\n"
		"pipeline_parallel_schedule = \"PipelineScheduleMulti\"\n", "",
		"c.toml:5: error: parallelism.pipeline_parallel_schedule \"PipelineScheduleMulti\": "
		"expected GPipe, 1F1B, Interleaved1F1B");
	refused("[model]\nflavor = \"8B\"\n[[x]]\n", "", "c.toml:3: error: arrays of tables");
	/* torchtitan's older layout: never the new keys' defaults in silence */
	refused("[training]\nbatch_size = 2\ntensor_parallel_degree = 8\n", "",
		"c.toml:2: error: training.batch_size: torchtitan's older key; expected "
		"training.local_batch_size");
	refused("[training]\nbatch_size = 2\ntensor_parallel_degree = 8\n", "",
		"c.toml:3: error: training.tensor_parallel_degree: torchtitan's older key; "
		"expected [parallelism]");
	refused("[float8]\nenable_float8_linear = true\n", "", "c.toml:2: error: "
		"float8.enable_float8_linear: torchtitan's older key; expected model.converters");
	/* the debugmodel's architecture is written only where asked */
	refused("[model]\nflavor = \"debugmodel\"\n", "", "needs --models FILE");
	refused("[model]\nflavor = \"8B\"\n", "--nodes 0", "--nodes: expected a whole number");
}

/* a config of pipeline degree 2 with schedule (two micro-batches a step:
 * 64 = local 8 x dp 4 x 2), imported on one node: its
 * scenario's parallelism line in DIR/s.xml, stderr in DIR/err */
static void schedule_import(const char *schedule)
{
	char file[600];
	snprintf(file, sizeof file, "%s/c.toml", dir);
	FILE *f = fopen(file, "w");
	assert_non_null(f);
	fprintf(f, "[model]\nflavor = \"8B\"\n[training]\nglobal_batch_size = 64\n"
		"[parallelism]\npipeline_parallel_degree = 2\npipeline_parallel_schedule = \"%s\"\n",
		schedule);
	fclose(f);
	assert_int_equal(testutil_sh("%s import torchtitan --out %s/s.xml %s 2>%s/err", CAPSIM_BIN,
				     dir, file, dir), 0);
}

/* torchtitan's schedules: GPipe and 1F1B as capsim's; the looped and zero
 * bubble ones as interleaved 1F1B of two stages a rank, each said not
 * modelled with why; none dropped */
static void test_schedules(void **state)
{
	(void)state;
	schedule_import("GPipe");
	assert_true(holds("s.xml", "pp=\"2\""));
	assert_true(holds("s.xml", "schedule=\"gpipe\""));
	schedule_import("1F1B");
	assert_false(holds("s.xml", "schedule="));
	static const char *const looped[] = { "ZBVZeroBubble", "InterleavedZeroBubble",
					      "LoopedBFS", "DualPipeV" };
	for (size_t i = 0; i < sizeof looped / sizeof looped[0]; i++) {
		schedule_import(looped[i]);
		char said[160];
		snprintf(said, sizeof said, "parallelism.pipeline_parallel_schedule %s not modelled (",
			 looped[i]);
		if (!holds("err", said) || !holds("s.xml", said) ||
		    !holds("s.xml", "schedule=\"1f1b-interleaved\" virtual-stages=\"2\""))
			fail_msg("%s: not planned as interleaved 1F1B and said", looped[i]);
	}
	assert_true(holds("err", "DualPipe's overlapped forward and backward in a V"));
}

/* what a config leaves out is torchtitan's default, said; a global batch
 * it sets is kept (gradient accumulation); HSDP is said; the older
 * training.compile compiles; --model plans another model, the config's said */
static void test_defaults_said(void **state)
{
	(void)state;
	char file[600];
	snprintf(file, sizeof file, "%s/c.toml", dir);
	FILE *f = fopen(file, "w");
	assert_non_null(f);
	fputs("[model]\nflavor = \"8B\"\n[training]\nglobal_batch_size = 32\ncompile = true\n"
	      "local_batch_size = 2\n[parallelism]\ndata_parallel_replicate_degree = 2\n"
	      "fsdp_reshard_after_forward = \"never\"\n", f);
	fclose(f);
	assert_int_equal(testutil_sh("%s import torchtitan --nodes 1 --out %s/s.xml %s 2>%s/err",
				     CAPSIM_BIN, dir, file, dir), 0);
	static const char *const said[] = {
		"training.seq_len: not in the config; torchtitan's default 2048",
		"training.steps: not in the config; torchtitan's default 10000",
		"HSDP (replicate 2 x shard 4) planned as ZeRO 2 over all 8 data-parallel ranks",
		"node dgx-h100, one node, no fabric",
	};
	for (size_t i = 0; i < sizeof said / sizeof said[0]; i++)
		if (!holds("err", said[i]) || !holds("s.xml", said[i]))
			fail_msg("not said on stderr and in the file: %s", said[i]);
	/* 32 = local 2 x dp 8 x 2 accumulated; 10000 x 32 x 2048 tokens */
	assert_int_equal(testutil_sh("grep -q 'global-batch=\"32\" micro-batch=\"2\" "
				     "tokens=\"655360000\"' %s/s.xml && grep -q 'zero=\"2\"' "
				     "%s/s.xml && grep -q 'execution=\"compiled\"' %s/s.xml", dir, dir,
				     dir), 0);
	/* --model plans another model: the config's is said */
	f = fopen(file, "w");
	assert_non_null(f);
	fputs("[model]\nname = \"llama4\"\nflavor = \"17bx16e\"\n", f);
	fclose(f);
	assert_int_equal(testutil_sh("%s import torchtitan --model llama-3.1-8b --out %s/s.xml %s "
				     "2>%s/err && grep -q 'model ref=\"llama-3.1-8b\"' %s/s.xml", CAPSIM_BIN,
				     dir, file, dir, dir), 0);
	assert_true(holds("err", "model.name \"llama4\", flavor \"17bx16e\": planned as the model "
			  "given, llama-3.1-8b"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_import),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_schedules),
		cmocka_unit_test(test_defaults_said),
	};
	capsim_init();
	return testutil_run_group(tests, setup, teardown);
}
