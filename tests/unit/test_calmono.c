/* test_calmono.c - a calibration never moves the measured GPU's predictions
 * away from what was measured on it (docs/validation.md, "Calibration is
 * monotone").
 *
 * Every measured point of the measured H200 in calibrate/results/ is
 * predicted twice, from the catalog's defaults alone ("before") and with the
 * shipped profile hardware/calibrated/h200-sxm-141gb-2026-12-02.xml
 * ("after"); errors are predicted / measured - 1:
 *   - GEMMs: every cuBLASLt rate of the three sweeps (-gemm, -gemm-b,
 *     -gemm-c), the op model's GEMM rate (capsim_gemm_efficiency_mnk);
 *   - copies: every device-to-device copy rate, datasheet x hbm efficiency;
 *   - steps: every plain PyTorch step time (-gpt2-step-a, -b, -c, -pad50304,
 *     -compile, 2026-12-04's -host-steps and -power-steps), capsim's step on
 *     the one-H200 GPT-2 scenario with the point's model and sizes;
 *   - power: the GPU's mean draw through -power-steps' steps;
 *   - memory: every peak of 2026-12-03's -memory, -b and -c (the profile
 *     holds nothing of memory: the same with it as without).
 * The rule, set before the comparison: |after| <= |before| + 1 percentage
 * point at every point, unless the point is listed in `known` below with the
 * mechanism that moves it (one the profile does not hold); a listed point
 * that no longer moves away fails, so the list only shrinks. And the mean
 * absolute error over all the points must fall with the profile. */
#include "catalog.h"
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "eval.h"
#include "memory.h"
#include "ops.h"
#include "profile.h"
#include "scenario.h"

TESTUTIL_CATALOG_FIXTURE

#define RESULTS CAPSIM_SOURCE_DIR "/calibrate/results/"
#define PROFILE "hardware/calibrated/h200-sxm-141gb-2026-12-02.xml"
#define SLACK 0.01 /* one percentage point, set before the comparison */

/* Why a listed point moves away with the profile: each a mechanism the
 * profile does not hold, so no calibration of the GPU can bring it closer.
 * The data of a point decide which one it may be listed by (step_why). */
enum why {
	HOST_BOUND,   /* the host's issue sets the step */
	HOST_OVERLAP, /* host and GPU both near the step */
	COMPILE_FUSE, /* Inductor's fusion */
	POWER_LOAD,   /* the power model's load */
	N_WHY,
	NO_WHY = N_WHY /* a point no listed mechanism can explain */
};

static const char *const why_text[N_WHY] = {
	[HOST_BOUND] = "host-bound (the host issued the step in 90% of it or more): the step "
		       "is the host's cost per kernel, a property of the host that varied by "
		       "+-25% between these runs; the profile's, the median of its runs (44.7 "
		       "us), is above the defaults' 43.5 us, and these hosts were faster",
	[HOST_OVERLAP] = "host and GPU both near the step (the host issued it in 25-90% of it, "
			 "or the GPU waited 25% of it or more where the issue was not timed): "
			 "the uncalibrated GPU, 40-50% too fast at GPT-2's misaligned LM head, "
			 "cancelled the host time capsim exposes at the end of each pass; with "
			 "the GPU's time made right (the graph replays of the same sizes within "
			 "9%), that exposed host time shows",
	[COMPILE_FUSE] = "torch.compile: Inductor fuses elementwise kernels (the measured "
			 "compiled step is 18% below the padded eager one), which capsim's "
			 "compiled op list does not; the uncalibrated GEMM rate, 20-30% above "
			 "the calibrated model's at GPT-2's widths, hid it",
	[POWER_LOAD] = "the power model's load counts a busy second below the best GEMM "
		       "rate at 0.59 of one at it; the profile makes the misaligned LM head "
		       "slow, as measured, and the step's draw falls with its FLOP share",
};

/* A point known to move away, by its key (file:what). */
typedef struct known_point {
	const char *key;
	enum why why;
	int seen;
} known_point;

static known_point known[] = {
	{ "h200-2026-12-02-gpt2-step-a:gpt2-124m/12/1024/1/eager/50257",
	  HOST_BOUND, 0 },
	{ "h200-2026-12-02-gpt2-step-a:gpt2-355m/24/1024/1/eager/50257",
	  HOST_BOUND, 0 },
	{ "h200-2026-12-02-gpt2-step-a:gpt2-355m/24/1024/4/eager/50257",
	  HOST_BOUND, 0 },
	{ "h200-2026-12-02-gpt2-step-b:gpt2-124m/12/1024/1/eager/50257",
	  HOST_BOUND, 0 },
	{ "h200-2026-12-02-gpt2-step-b:gpt2-124m/12/1024/4/eager/50257",
	  HOST_OVERLAP, 0 },
	{ "h200-2026-12-02-gpt2-step-b:gpt2-124m/12/1024/8/eager/50257",
	  HOST_OVERLAP, 0 },
	{ "h200-2026-12-02-gpt2-step-b:gpt2-355m/24/1024/1/eager/50257",
	  HOST_BOUND, 0 },
	{ "h200-2026-12-02-gpt2-step-b:gpt2-355m/24/1024/4/eager/50257",
	  HOST_BOUND, 0 },
	{ "h200-2026-12-02-gpt2-step-b:gpt2-355m/24/1024/8/eager/50257",
	  HOST_OVERLAP, 0 },
	{ "h200-2026-12-02-gpt2-step-c:gpt2-124m/12/1024/1/eager/50257",
	  HOST_BOUND, 0 },
	{ "h200-2026-12-02-gpt2-step-c:gpt2-124m/12/1024/4/eager/50257",
	  HOST_BOUND, 0 },
	{ "h200-2026-12-02-gpt2-step-pad50304:gpt2-124m/12/1024/1/eager/50304",
	  HOST_BOUND, 0 },
	{ "h200-2026-12-02-gpt2-step-pad50304:gpt2-355m/24/1024/1/eager/50304",
	  HOST_BOUND, 0 },
	{ "h200-2026-12-02-gpt2-step-pad50304:gpt2-124m/12/1024/8/eager/50304",
	  HOST_BOUND, 0 },
	{ "h200-2026-12-02-gpt2-step-pad50304:gpt2-355m/24/1024/4/eager/50304",
	  HOST_BOUND, 0 },
	{ "h200-2026-12-02-gpt2-step-compile:gpt2-124m/12/1024/8/compile/50257",
	  COMPILE_FUSE, 0 },
	{ "h200-2026-12-02-gpt2-step-compile:gpt2-124m/12/1024/32/compile/50257",
	  COMPILE_FUSE, 0 },
	{ "h200-2026-12-04-host-steps:gpt2-124m/12/1024/1/eager/50257",
	  HOST_BOUND, 0 },
	{ "h200-2026-12-04-host-steps:gpt2-124m/12/1024/16/compile/50257",
	  COMPILE_FUSE, 0 },
	{ "h200-2026-12-04-host-steps:gpt2-355m/24/1024/1/eager/50257",
	  HOST_BOUND, 0 },
	{ "h200-2026-12-04-power-steps:gpt2-124m/12/1024/1/eager/50257",
	  HOST_OVERLAP, 0 },
	{ "h200-2026-12-04-power-steps:power gpt2-124m/12/1024/1/eager/50257",
	  POWER_LOAD, 0 },
	{ "h200-2026-12-04-power-steps:gpt2-124m/12/1024/4/eager/50257",
	  HOST_OVERLAP, 0 },
	{ "h200-2026-12-04-power-steps:power gpt2-124m/12/1024/32/eager/50257",
	  POWER_LOAD, 0 },
	{ "h200-2026-12-04-power-steps:power gpt2-355m/24/1024/16/eager/50257",
	  POWER_LOAD, 0 },
	{ "h200-2026-12-04-power-steps:power gpt3-6.7b/8/2048/4/eager/50257",
	  POWER_LOAD, 0 },
};

/* one family's errors */
typedef struct family {
	const char *name;
	int n, away, listed;
	double sum_before, sum_after;
} family;

static family fam[5] = { { .name = "GEMM" }, { .name = "copy" }, { .name = "step" },
			 { .name = "power" }, { .name = "memory" } };
static int failures;

static known_point *find_known(const char *key)
{
	for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
		if (known[i].key && strcmp(known[i].key, key) == 0)
			return &known[i];
	return NULL;
}

/* Judge one point: before and after are relative errors; allowed, the
 * mechanism its data allow a listing by (NO_WHY: none). */
static void judge(family *f, const char *key, double before, double after, enum why allowed)
{
	int away = fabs(after) > fabs(before) + SLACK;
	known_point *k = find_known(key);
	f->n++;
	f->sum_before += fabs(before);
	f->sum_after += fabs(after);
	printf("  %-6s %-58s before %+7.1f%%  after %+7.1f%%%s\n", f->name, key, 100 * before,
	       100 * after, away ? (k ? "  (listed)" : "  MOVES AWAY") : "");
	if (k) {
		k->seen = 1;
		f->listed++;
		if (away)
			printf("    %s\n", why_text[k->why]);
		if (k->why != allowed) {
			printf("    listed as \"%.40s...\", which its data do not show\n",
			       why_text[k->why]);
			failures++;
		}
		if (!away) {
			printf("    listed as moving away, but does not: remove it from `known`\n");
			failures++;
		}
	} else if (away) {
		f->away++;
		failures++;
	}
}

/* ---- reading the results ------------------------------------------------------ */

/* Call each(o, ctx) for every record of file whose kind is kind. */
static void each_record(const char *file, const char *kind, void (*each)(json_t *, const char *,
									  void *),
			void *ctx)
{
	char path[512];
	snprintf(path, sizeof path, RESULTS "%s", file);
	FILE *fp = fopen(path, "r");
	assert_non_null(fp);
	char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, fp) > 0) {
		json_t *o = json_loads(line, 0, NULL);
		assert_non_null(o);
		if (strcmp(json_string_value(json_object_get(o, "kind")), kind) == 0)
			each(o, file, ctx);
		json_decref(o);
	}
	free(line);
	fclose(fp);
}

static long long int_of(json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

static const char *str_of(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

/* ---- GEMMs and copies --------------------------------------------------------- */

/* the H200 of the catalog, and the same with the profile applied */
typedef struct gpus {
	const capsim_gpu *plain;
	capsim_gpu cal;
	capsim_gpu_perf before, after;
} gpus;

static void load_gpus(gpus *g)
{
	g->plain = capsim_catalog_find(cat, CAPSIM_KIND_GPU, "h200-sxm-141gb");
	assert_non_null(g->plain);
	capsim_profile p;
	capsim_diags d = { 0 };
	if (capsim_profile_load(CAPSIM_SOURCE_DIR "/" PROFILE, &p, &d) < 0) {
		capsim_diags_print(&d, stderr);
		fail_msg("the profile does not load");
	}
	g->cal = *g->plain;
	assert_int_equal(capsim_profile_apply(&p, &g->cal, &d), 0);
	capsim_profile_free(&p);
	capsim_diags_free(&d);
	capsim_gpu_perf_default(g->plain, 0, &g->before);
	capsim_gpu_perf_default(&g->cal, 0, &g->after);
}

static int dtype_of(const char *s)
{
	for (int i = 0; capsim_dtype_names[i]; i++)
		if (strcmp(capsim_dtype_names[i], s) == 0)
			return i;
	fail_msg("dtype '%s'", s);
	return -1;
}

static void gemm_point(json_t *o, const char *file, void *ctx)
{
	gpus *g = ctx;
	int dt = dtype_of(str_of(o, "dtype"));
	double m = (double)int_of(o, "m"), n = (double)int_of(o, "n"), k = (double)int_of(o, "k");
	double meas = json_real_value(json_object_get(o, "flop_per_s"));
	double peak = capsim_gpu_peak(g->plain, dt);
	double b = peak * capsim_gemm_efficiency_mnk(&g->before, dt, m, n, k) / meas - 1;
	double a = peak * capsim_gemm_efficiency_mnk(&g->after, dt, m, n, k) / meas - 1;
	char key[160];
	snprintf(key, sizeof key, "%.*s:%s %.0fx%.0fx%.0f", (int)(strlen(file) - 6), file,
		 capsim_dtype_names[dt], m, n, k);
	judge(&fam[0], key, b, a, NO_WHY);
}

static void copy_point(json_t *o, const char *file, void *ctx)
{
	gpus *g = ctx;
	double meas = json_real_value(json_object_get(o, "bytes_per_s"));
	double bw = g->plain->mem_bw_bytes_per_s;
	char key[160];
	snprintf(key, sizeof key, "%.*s:copy %lld B", (int)(strlen(file) - 6), file,
		 int_of(o, "bytes"));
	judge(&fam[1], key, bw * g->before.hbm_eff / meas - 1, bw * g->after.hbm_eff / meas - 1,
	      NO_WHY);
}

static const char *const gemm_files[] = { "h200-2026-12-02-gemm.jsonl",
					  "h200-2026-12-02-gemm-b.jsonl",
					  "h200-2026-12-02-gemm-c.jsonl" };

/* ---- steps and power ------------------------------------------------------------ */

/* The point's step on the one-H200 GPT-2 scenario: its model (GPT-3 6.7B's
 * widths on GPT-2's block; Llama 3 8B as the catalog's 3.1), layers,
 * sequence, vocabulary, micro-batch and execution; with the profile when
 * calibrated. */
static capsim_scenario *point_scenario(json_t *o, int calibrated)
{
	const char *model = str_of(o, "model"), *mode = str_of(o, "mode");
	static char mb[16], seq[16], layers[16], vocab[16];
	snprintf(mb, sizeof mb, "%lld", int_of(o, "micro_batch"));
	snprintf(seq, sizeof seq, "%lld", int_of(o, "seq"));
	snprintf(layers, sizeof layers, "%lld", int_of(o, "layers"));
	snprintf(vocab, sizeof vocab, "%lld", int_of(o, "vocab"));
	capsim_set sets[16];
	size_t n = 0;
	sets[n++] = (capsim_set){ "workload.micro-batch", mb };
	sets[n++] = (capsim_set){ "workload.global-batch", mb };
	sets[n++] = (capsim_set){ "workload.seq-len", seq };
	sets[n++] = (capsim_set){ "workload.execution",
				  strcmp(mode, "compile") == 0 ? "compiled" : mode };
	if (strcmp(model, "llama-3-8b") == 0) {
		sets[n++] = (capsim_set){ "workload.model.ref", "llama-3.1-8b" };
	} else if (strcmp(model, "gpt3-6.7b") == 0) {
		sets[n++] = (capsim_set){ "workload.model.ref", "gpt2-124m" };
		sets[n++] = (capsim_set){ "workload.model.architecture.hidden", "4096" };
		sets[n++] = (capsim_set){ "workload.model.architecture.heads", "32" };
		sets[n++] = (capsim_set){ "workload.model.architecture.ffn", "16384" };
		sets[n++] = (capsim_set){ "workload.model.architecture.max-seq-len", "2048" };
	} else {
		sets[n++] = (capsim_set){ "workload.model.ref", model };
		sets[n++] = (capsim_set){ "workload.model.architecture.vocab", vocab };
	}
	sets[n++] = (capsim_set){ "workload.model.architecture.layers", layers };
	if (calibrated)
		sets[n++] = (capsim_set){ "cluster.node.profile", PROFILE };
	capsim_scenario *s = malloc(sizeof *s);
	capsim_diags d = { 0 };
	if (capsim_scenario_load(CAPSIM_SOURCE_DIR "/scenarios/gpt2-124m-1xh200.xml", cat, sets, n,
				 s, &d) < 0) {
		capsim_diags_print(&d, stderr);
		fail_msg("%s does not load", model);
	}
	capsim_diags_free(&d);
	return s;
}

/* the step time and the GPU's draw of the point's scenario */
static void point_eval(json_t *o, int calibrated, double *step_s, double *gpu_w)
{
	capsim_scenario *s = point_scenario(o, calibrated);
	capsim_result r;
	capsim_diags d = { 0 };
	if (capsim_eval(s, &(capsim_eval_opts){ .no_reference = 1 }, &r, &d) < 0) {
		capsim_diags_print(&d, stderr);
		fail_msg("%s: eval fails", str_of(o, "model"));
	}
	capsim_diags_free(&d);
	*step_s = r.step.step_time_s;
	*gpu_w = r.power.gpu_w;
	capsim_result_free(&r);
	free(s);
}

/* The mechanism a step point's own record allows it to be listed by: a
 * compiled step, Inductor's fusion; else by the host's share of the step
 * (its issue time over the step, or where that was not timed the share the
 * GPU waited), host-bound from 90%, both near the step from 25% */
static enum why step_why(json_t *o, double meas)
{
	if (strcmp(str_of(o, "mode"), "compile") == 0)
		return COMPILE_FUSE;
	json_t *issue = json_object_get(o, "issue_median_s");
	double host = issue ? json_real_value(issue) / meas :
			      1 - json_real_value(json_object_get(o, "busy_share"));
	return host >= 0.9 ? HOST_BOUND : host >= 0.25 ? HOST_OVERLAP : NO_WHY;
}

static void step_point(json_t *o, const char *file, void *ctx)
{
	(void)ctx;
	double meas = json_real_value(json_object_get(o, "median_s"));
	double tb, ta, wb, wa;
	point_eval(o, 0, &tb, &wb);
	point_eval(o, 1, &ta, &wa);
	char key[160];
	snprintf(key, sizeof key, "%.*s:%s/%lld/%lld/%lld/%s/%lld", (int)(strlen(file) - 6), file,
		 str_of(o, "model"), int_of(o, "layers"), int_of(o, "seq"),
		 int_of(o, "micro_batch"), str_of(o, "mode"), int_of(o, "vocab"));
	judge(&fam[2], key, tb / meas - 1, ta / meas - 1, step_why(o, meas));
	double watts = json_real_value(json_object_get(o, "power_mean_w"));
	if (watts > 0) {
		key[strlen(file) - 6] = '\0';
		char wkey[200];
		snprintf(wkey, sizeof wkey, "%s:power %s", key, key + strlen(file) - 5);
		judge(&fam[3], wkey, wb / watts - 1, wa / watts - 1, POWER_LOAD);
	}
}

static const char *const step_files[] = {
	"h200-2026-12-02-gpt2-step-a.jsonl",   "h200-2026-12-02-gpt2-step-b.jsonl",
	"h200-2026-12-02-gpt2-step-c.jsonl",   "h200-2026-12-02-gpt2-step-pad50304.jsonl",
	"h200-2026-12-02-gpt2-step-compile.jsonl", "h200-2026-12-04-host-steps.jsonl",
};

/* A peak of memory_probe.py (bf16 autocast over fp32 weights, fused AdamW):
 * capsim's peak per GPU under torch-amp's recipe, no reserve (the
 * allocator's count holds no CUDA context), as unit/test_memory builds it */
static double memory_peak(json_t *o, int calibrated)
{
	const char *model = str_of(o, "model");
	static char l_s[16], seq_s[16], mb_s[16];
	snprintf(l_s, sizeof l_s, "%lld", int_of(o, "layers"));
	snprintf(seq_s, sizeof seq_s, "%lld", int_of(o, "seq"));
	snprintf(mb_s, sizeof mb_s, "%lld", int_of(o, "micro_batch"));
	const char *ref = !strcmp(model, "llama-3-8b") ? "llama-3.1-8b" :
			  !strcmp(model, "gpt3-6.7b") ? "megatron-7.5b" : model;
	capsim_set sets[12] = {
		{ "workload.framework", "torch-amp" },
		{ "workload.model.ref", ref },
		{ "workload.model.architecture.layers", l_s },
		{ "workload.seq-len", seq_s },
		{ "workload.micro-batch", mb_s },
		{ "workload.global-batch", mb_s },
		{ "workload.parallelism.recompute", str_of(o, "recompute") },
		{ "workload.memory-reserve", "0 B" },
	};
	size_t n = 8;
	if (!strcmp(ref, "megatron-7.5b")) {
		sets[n++] = (capsim_set){ "workload.model.architecture.vocab", "50257" };
		sets[n++] = (capsim_set){ "workload.model.architecture.ffn", "16384" };
	}
	if (calibrated)
		sets[n++] = (capsim_set){ "cluster.node.profile", PROFILE };
	capsim_scenario *s = malloc(sizeof *s);
	capsim_diags d = { 0 };
	if (capsim_scenario_load(CAPSIM_SOURCE_DIR "/scenarios/gpt2-124m-1xh200.xml", cat, sets, n,
				 s, &d) < 0) {
		capsim_diags_print(&d, stderr);
		fail_msg("%s does not load", model);
	}
	capsim_diags_free(&d);
	capsim_memory m;
	capsim_memory_estimate(s, &m);
	free(s);
	return m.peak.total_bytes;
}

static void memory_point(json_t *o, const char *file, void *ctx)
{
	(void)ctx;
	if (json_object_get(o, "error"))
		return;
	double meas = json_number_value(json_object_get(o, "peak_allocated_bytes"));
	char key[160];
	snprintf(key, sizeof key, "%.*s:%s/%lld/%lld/%lld/%s", (int)(strlen(file) - 6), file,
		 str_of(o, "model"), int_of(o, "layers"), int_of(o, "seq"),
		 int_of(o, "micro_batch"), str_of(o, "recompute"));
	judge(&fam[4], key, memory_peak(o, 0) / meas - 1, memory_peak(o, 1) / meas - 1, NO_WHY);
}

static const char *const memory_files[] = { "h200-2026-12-03-memory.jsonl",
					    "h200-2026-12-03-memory-b.jsonl",
					    "h200-2026-12-03-memory-c.jsonl" };

static void test_monotone(void **state)
{
	(void)state;
	gpus g;
	load_gpus(&g);
	for (size_t i = 0; i < sizeof gemm_files / sizeof gemm_files[0]; i++) {
		each_record(gemm_files[i], "gemm", gemm_point, &g);
		each_record(gemm_files[i], "hbm-copy", copy_point, &g);
	}
	for (size_t i = 0; i < sizeof step_files / sizeof step_files[0]; i++)
		each_record(step_files[i], "torch-step", step_point, NULL);
	each_record("h200-2026-12-04-power-steps.jsonl", "torch-power", step_point, NULL);
	for (size_t i = 0; i < sizeof memory_files / sizeof memory_files[0]; i++)
		each_record(memory_files[i], "torch-memory", memory_point, NULL);
	int n = 0;
	double sb = 0, sa = 0;
	printf("family  points  mean |error| before  after  moved away (listed)\n");
	for (int i = 0; i < 5; i++) {
		family *f = &fam[i];
		printf("%-6s %7d %12.2f%% %9.2f%% %6d (%d)\n", f->name, f->n,
		       100 * f->sum_before / f->n, 100 * f->sum_after / f->n, f->away, f->listed);
		n += f->n;
		sb += f->sum_before;
		sa += f->sum_after;
	}
	printf("all    %7d %12.2f%% %9.2f%%\n", n, 100 * sb / n, 100 * sa / n);
	for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
		if (known[i].key && !known[i].seen) {
			printf("listed point %s was not measured\n", known[i].key);
			failures++;
		}
	/* 13 shapes in 5 dtypes a sweep, and the third's GPT-2 LM heads */
	assert_int_equal(fam[0].n, 3 * 5 * 13 + 4 * 4 + 2);
	assert_int_equal(fam[2].n, 4 * 9 + 2 + 31 + 8);
	assert_int_equal(fam[3].n, 8);
	assert_int_equal(fam[4].n, 35);
	if (failures)
		fail_msg("%d points move away from what was measured with the profile, or are "
			 "listed and do not", failures);
	assert_true(sa < sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_monotone),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
