/* test_optimize.c - the parallelism optimiser: the bounded search
 * gives the exhaustive search's top list exactly; its best is what
 * capsim_eval gives the same --set edits; every published layout of
 * Megatron-LM's SC21 Table 1 and README H100 table is searched, kept and
 * fits; the compute bound is below every simulated step; a scenario whose
 * own layout does not suit its model is searched from, and the edits that
 * paste a layout onto it replace its own dp and end stages. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "catalog.h"
#include "eval.h"
#include "optimize.h"
#include "scenario.h"
#include "step.h"
#include "testutil.h"
#include "xalloc.h"

TESTUTIL_CATALOG_FIXTURE

static capsim_scenario *load(const char *file, const capsim_set *sets, size_t n)
{
	capsim_scenario *s = calloc(1, sizeof *s);
	capsim_diags d = { 0 };
	if (capsim_scenario_load(file, cat, sets, n, s, &d) < 0) {
		capsim_diags_print(&d, stderr);
		fail_msg("%s does not load", file);
	}
	capsim_diags_free(&d);
	return s;
}

/* 8 A100s (one node), Llama 2 13B, a global batch of 32: 4,740 layouts, of
 * which the screens keep 2,547 and the bounded search simulates a few hundred, a space
 * that holds every case of the search (refused, no fit, bounded) at a third
 * of two nodes' cost, so that the exhaustive search stays short under the
 * sanitizers */
static capsim_scenario *small(void)
{
	static const capsim_set sets[] = { { "cluster.nodes", "1" },
					   { "workload.global-batch", "32" },
					   { "reliability.runs", "0" } };
	return load(CAPSIM_SOURCE_DIR "/scenarios/a100-4node-fattree.xml", sets, 3);
}

static void test_bound_equals_exhaustive(void **state)
{
	(void)state;
	capsim_scenario *s = small();
	capsim_diags d = { 0 };
	capsim_opt_options o = { .metric = CAPSIM_OPT_TOKENS_PER_S, .top = 8, .threads = 2 };
	capsim_opt_result all, bounded;
	o.exhaustive = 1;
	assert_int_equal(capsim_optimize(s, cat, &o, &all, &d), 0);
	o.exhaustive = 0;
	assert_int_equal(capsim_optimize(s, cat, &o, &bounded, &d), 0);
	assert_int_equal(all.bounded, 0);
	assert_true(bounded.bounded > 0);
	assert_true(bounded.simulated < all.simulated);
	assert_int_equal(all.candidates, bounded.candidates);
	assert_int_equal(all.n_top, 8);
	assert_int_equal(bounded.n_top, 8);
	for (size_t i = 0; i < 8; i++) {
		assert_memory_equal(&all.top[i].c, &bounded.top[i].c, sizeof all.top[i].c);
		assert_memory_equal(&all.top[i].step_time_s, &bounded.top[i].step_time_s,
				    sizeof(double));
		/* best first, and every bound below its step */
		if (i)
			assert_true(all.top[i - 1].tokens_per_s >= all.top[i].tokens_per_s);
		assert_true(all.top[i].bound_s <= all.top[i].step_time_s);
	}
	/* every layout is counted once */
	assert_int_equal(all.refused + all.no_fit + all.simulated, all.candidates);
	assert_int_equal(bounded.refused + bounded.no_fit + bounded.simulated + bounded.bounded,
			 bounded.candidates);
	/* the other metrics rank the same way (a monotone function of the step) */
	o.metric = CAPSIM_OPT_TIME_TO_TRAIN;
	capsim_opt_result ttt;
	assert_int_equal(capsim_optimize(s, cat, &o, &ttt, &d), 0);
	assert_memory_equal(&ttt.top[0].c, &all.top[0].c, sizeof ttt.top[0].c);
	capsim_opt_result_free(&ttt);
	capsim_opt_result_free(&all);
	capsim_opt_result_free(&bounded);
	capsim_diags_free(&d);
	free(s);
}

/* the best layout, given to capsim_eval as --set edits, is what the search says */
static void test_best_is_what_run_gives(void **state)
{
	(void)state;
	capsim_scenario *s = small();
	capsim_diags d = { 0 };
	capsim_opt_options o = { .metric = CAPSIM_OPT_TOKENS_PER_S, .top = 3, .threads = 1 };
	capsim_opt_result r;
	assert_int_equal(capsim_optimize(s, cat, &o, &r, &d), 0);
	capsim_set sets[CAPSIM_OPT_MAX_SETS];
	char buf[CAPSIM_OPT_MAX_SETS][32];
	size_t n = capsim_opt_config_sets(&r.top[0].c, buf, sets);
	capsim_scenario *t = malloc(sizeof *t);
	*t = *s;
	assert_int_equal(capsim_scenario_set_many(t, cat, sets, n, &d), 0);
	capsim_result res;
	capsim_eval_opts eo = { .no_reference = 1 };
	assert_int_equal(capsim_eval(t, &eo, &res, &d), 0);
	assert_memory_equal(&res.step.step_time_s, &r.top[0].step_time_s, sizeof(double));
	assert_true(res.fits_in_memory);
	/* and its bound is below it */
	assert_true(capsim_step_compute_bound(t, NULL) <= res.step.step_time_s);
	capsim_result_free(&res);
	free(t);
	capsim_opt_result_free(&r);
	capsim_diags_free(&d);
	free(s);
}

/* the scenario of a published run and its layout, from a row of
 * tests/data/reference/megatron_sc21.csv (Narayanan et al., SC21,
 * arXiv:2104.04473, Table 1: DGX A100, fp16, full recomputation, the run
 * script's micro-batch and interleaving) or megatron_h100_readme.csv
 * (Megatron-LM README, H100 weak scaling, Megatron-Core r0.8.0: micro-batch
 * 1, ZeRO 1 (distributed optimizer), TP overlap, no interleaving) */
static capsim_scenario *published(const testutil_table *t, size_t i, int a100,
				  capsim_opt_config *c)
{
	int tp = (int)testutil_csv_num(t, i, "tp"), pp = (int)testutil_csv_num(t, i, "pp");
	int gpus = (int)testutil_csv_num(t, i, "gpus");
	int batch = (int)testutil_csv_num(t, i, "global_batch_size");
	int layers = (int)testutil_csv_num(t, i, "num_layers");
	char model[64], text[2048];
	memset(c, 0, sizeof *c);
	c->tp = tp;
	c->pp = pp;
	c->cp = c->ep = 1;
	c->dp = gpus / (tp * pp);
	if (a100) {
		const char *b = testutil_csv_get(t, i, "params_billion");
		if (strcmp(b, "1008.0") == 0)
			snprintf(model, sizeof model, "megatron-1t");
		else
			snprintf(model, sizeof model, "megatron-%sb", b);
		int per_virtual = atoi(testutil_csv_get(t, i, "interleaving_script"));
		c->virtual_stages = per_virtual > 0 ? layers / pp / per_virtual : 1;
		c->micro_batch = (int)testutil_csv_num(t, i, "micro_batch_size_script");
		c->recompute = CAPSIM_RECOMPUTE_FULL;
		snprintf(text, sizeof text,
			 "<scenario name=\"sc21\"><cluster nodes=\"%d\"><node ref=\"dgx-a100\"/>"
			 "<fabric topology=\"fat-tree\" tiers=\"3\" transport=\"infiniband\">"
			 "<switch ref=\"qm8700\"/></fabric></cluster>"
			 "<workload seq-len=\"2048\" global-batch=\"%d\" micro-batch=\"%d\" "
			 "tokens=\"300B\" dtype=\"fp16\"><model ref=\"%s\"/>"
			 "<parallelism tp=\"%d\" pp=\"%d\"/></workload>"
			 "<reliability runs=\"0\"/></scenario>", gpus / 8, batch, c->micro_batch, model,
			 tp, pp);
	} else {
		char size[32];
		capsim_strlcpy(size, testutil_csv_get(t, i, "model_size"), sizeof size);
		for (char *p = size; *p; p++)
			if (*p == 'B')
				*p = 'b';
		snprintf(model, sizeof model, "megatron-h100-%s", size);
		c->virtual_stages = 1;
		c->micro_batch = 1;
		c->zero = 1;
		c->tp_comm_overlap = tp > 1;
		snprintf(text, sizeof text,
			 "<scenario name=\"mh\"><cluster nodes=\"%d\"><node ref=\"dgx-h100\"/>"
			 "<fabric topology=\"fat-tree\" tiers=\"3\" transport=\"infiniband\">"
			 "<switch ref=\"qm9700\"/></fabric></cluster>"
			 "<workload seq-len=\"4096\" global-batch=\"%d\" tokens=\"1T\" "
			 "dtype=\"bf16\"><model ref=\"%s\"/><parallelism tp=\"%d\" pp=\"%d\"/>"
			 "</workload><reliability runs=\"0\"/></scenario>", gpus / 8, batch, model, tp,
			 pp);
	}
	capsim_scenario *s = calloc(1, sizeof *s);
	capsim_diags d = { 0 };
	if (capsim_scenario_load_memory(text, strlen(text), model, cat, NULL, 0, s, &d) < 0) {
		capsim_diags_print(&d, stderr);
		fail_msg("%s: the scenario does not load", model);
	}
	capsim_diags_free(&d);
	return s;
}

/* Every published layout of both tables trained, so the optimiser must
 * enumerate it, keep it through its screen, and, simulated, it must fit */
static void test_published_layouts_are_feasible(void **state)
{
	(void)state;
	static const struct {
		const char *file;
		int a100;
		size_t rows;
	} tables[] = { { "megatron_sc21.csv", 1, 10 }, { "megatron_h100_readme.csv", 0, 9 } };
	for (size_t k = 0; k < 2; k++) {
		char path[512];
		snprintf(path, sizeof path, "%s/tests/data/reference/%s", CAPSIM_SOURCE_DIR,
			 tables[k].file);
		testutil_table t;
		testutil_csv_load(path, &t);
		assert_int_equal(t.n_rows, tables[k].rows);
		for (size_t i = 0; i < t.n_rows; i++) {
			capsim_opt_config c;
			capsim_scenario *s = published(&t, i, tables[k].a100, &c);
			if (!capsim_opt_in_space(s, &c))
				fail_msg("%s row %zu (%s): tp %d pp %d x%d mb %d is not searched",
					 tables[k].file, i + 1, s->model.e.id, c.tp, c.pp,
					 c.virtual_stages, c.micro_batch);
			char why[256] = "";
			if (capsim_opt_screen(s, &c, why, sizeof why) < 0)
				fail_msg("%s row %zu (%s): dropped: %s", tables[k].file, i + 1,
					 s->model.e.id, why);
			/* simulated as the search would */
			capsim_set sets[CAPSIM_OPT_MAX_SETS];
			char buf[CAPSIM_OPT_MAX_SETS][32];
			size_t n = capsim_opt_config_sets(&c, buf, sets);
			capsim_diags d = { 0 };
			assert_int_equal(capsim_scenario_set_many(s, cat, sets, n, &d), 0);
			capsim_result res;
			capsim_eval_opts eo = { .no_reference = 1 };
			assert_int_equal(capsim_eval(s, &eo, &res, &d), 0);
			if (!res.fits_in_memory)
				fail_msg("%s row %zu (%s): does not fit once simulated", tables[k].file,
					 i + 1, s->model.e.id);
			assert_true(capsim_step_compute_bound(s, NULL) <= res.step.step_time_s);
			capsim_result_free(&res);
			capsim_diags_free(&d);
			free(s);
		}
		testutil_csv_free(&t);
	}
}

/* the bound is below the simulated step: every shipped scenario as it is and
 * with its layout varied (recomputation, ZeRO 3, the TP overlap, micro-batch),
 * mixed node types included */
static void test_bound_below_every_step(void **state)
{
	(void)state;
	static const char *const files[] = {
		"default.xml", "a100-4node-fattree.xml", "gpt2-124m-1xh200.xml", "h100-256-lustre.xml",
		"h100-8node-roce400.xml", "long-context-1m.xml", "mixed-h100-h200.xml",
		"nvswitch-pod-128.xml", "onprem-burst.xml",
	};
	static const capsim_set variants[][2] = {
		{ { "reliability.runs", "0" }, { "reliability.runs", "0" } },
		{ { "workload.parallelism.recompute", "full" }, { "reliability.runs", "0" } },
		{ { "workload.parallelism.recompute", "none" }, { "workload.parallelism.zero", "3" } },
		{ { "workload.parallelism.tp-comm-overlap", "on" }, { "workload.straggler", "1.5" } },
		{ { "workload.micro-batch", "2" }, { "workload.parallelism.recompute", "selective" } },
	};
	int checked = 0;
	for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
		char path[512];
		snprintf(path, sizeof path, "%s/scenarios/%s", CAPSIM_SOURCE_DIR, files[f]);
		capsim_scenario *base = load(path, NULL, 0);
		for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
			capsim_scenario *s = malloc(sizeof *s);
			*s = *base;
			capsim_diags d = { 0 };
			/* a variant the scenario refuses (a micro-batch that does not
			 * divide its batch) is skipped */
			if (capsim_scenario_set_many(s, cat, variants[v], 2, &d) == 0) {
				capsim_result r;
				capsim_eval_opts eo = { .no_reference = 1 };
				assert_int_equal(capsim_eval(s, &eo, &r, &d), 0);
				double b = capsim_step_compute_bound(s, NULL);
				if (!(b > 0 && b <= r.step.step_time_s))
					fail_msg("%s variant %zu: bound %.17g s, step %.17g s", files[f], v, b,
						 r.step.step_time_s);
				checked++;
				capsim_result_free(&r);
			}
			capsim_diags_free(&d);
			free(s);
		}
		free(base);
	}
	assert_true(checked >= 35);
}

/* the limits on a search's work: a space of more layouts than max-layouts
 * is refused before any is screened, and more kept layouts (weighed by the
 * cluster's size) than max-simulations before any is simulated; at the
 * limit the search runs, and simulates no more than the limit */
static void test_limits(void **state)
{
	(void)state;
	capsim_scenario *s = small();
	capsim_diags d = { 0 };
	long space = capsim_opt_space_size(s);
	assert_true(space > 1000);
	assert_int_equal(capsim_opt_sim_weight(s), 1);
	capsim_opt_options o = { .metric = CAPSIM_OPT_TOKENS_PER_S, .top = 3, .threads = 1 };
	capsim_opt_result r;

	o.max_layouts = space - 1;
	assert_int_equal(capsim_optimize(s, cat, &o, &r, &d), -2);
	assert_int_equal(r.candidates, space);
	assert_int_equal(r.simulated, 0);
	assert_int_equal(d.n, 1);
	assert_string_equal(d.v[0].where, "--max-layouts");
	char want[64];
	snprintf(want, sizeof want, "are %ld to screen, more than --max-layouts %ld", space,
		 space - 1);
	assert_non_null(strstr(d.v[0].msg, want));
	capsim_opt_result_free(&r);
	capsim_diags_free(&d);

	/* the space at the limit runs; the kept layouts are counted whole (the
	 * bounded search simulates fewer; test_bound_equals_exhaustive holds the
	 * exhaustive one, which costs a simulation a kept layout) */
	o.max_layouts = space;
	assert_int_equal(capsim_optimize(s, cat, &o, &r, &d), 0);
	assert_int_equal(r.candidates, space);
	long kept = r.kept;
	assert_int_equal(kept, space - r.refused - r.no_fit);
	assert_true(r.simulated > 0 && r.simulated < kept);
	capsim_opt_result_free(&r);

	/* screening stops at the first layout kept past the limit */
	o.max_simulations = kept - 1;
	assert_int_equal(capsim_optimize(s, cat, &o, &r, &d), -2);
	assert_int_equal(r.simulated, 0);
	assert_int_equal(r.kept, kept);
	assert_true(r.candidates <= space);
	assert_int_equal(r.candidates, r.kept + r.refused + r.no_fit);
	assert_int_equal(d.n, 1);
	assert_string_equal(d.v[0].where, "--max-simulations");
	snprintf(want, sizeof want, "%ld in all, more than --max-simulations %ld", kept, kept - 1);
	assert_non_null(strstr(d.v[0].msg, want));
	capsim_opt_result_free(&r);
	capsim_diags_free(&d);

	/* at the limit: it runs */
	o.max_simulations = kept;
	assert_int_equal(capsim_optimize(s, cat, &o, &r, &d), 0);
	assert_int_equal(r.kept, kept);
	assert_true(r.simulated < kept);
	capsim_opt_result_free(&r);
	free(s);
}

/* 524,288 GPUs: each simulation weighs 32 (a 3-tier fabric of 65,536
 * nodes on 144-port Quantum-X800 switches: 64-port ones connect at most
 * 8,192), so the screens stop at the 1,563rd layout kept (50,000 / 32 =
 * 1,562 allowed) and the search is refused before the first simulation;
 * every shipped scenario's space is within the defaults */
static void test_huge_cluster_refused(void **state)
{
	(void)state;
	static const capsim_set sets[] = { { "cluster.nodes", "65536" },
					   { "cluster.fabric.tiers", "3" },
					   { "cluster.fabric.switch.ref", "q3400" },
					   { "workload.global-batch", "65536" },
					   { "reliability.runs", "0" } };
	capsim_scenario *s = load(CAPSIM_SOURCE_DIR "/scenarios/default.xml", sets, 5);
	assert_int_equal(capsim_opt_sim_weight(s), 32);
	long space = capsim_opt_space_size(s);
	assert_true(space <= CAPSIM_OPT_MAX_LAYOUTS);
	capsim_opt_options o = { .metric = CAPSIM_OPT_TOKENS_PER_S, .top = 5, .threads = 1 };
	capsim_opt_result r;
	capsim_diags d = { 0 };
	assert_int_equal(capsim_optimize(s, cat, &o, &r, &d), -2);
	assert_true(r.candidates < space);
	assert_int_equal(r.simulated, 0);
	assert_int_equal(r.kept, CAPSIM_OPT_MAX_SIMULATIONS / 32 + 1);
	assert_int_equal(d.n, 1);
	assert_non_null(strstr(d.v[0].msg, "each weighs 32 on 524288 GPUs"));
	assert_non_null(strstr(d.v[0].msg, "1563 of the first"));
	assert_non_null(strstr(d.v[0].msg, "50016 in all, more than --max-simulations 50000"));
	capsim_opt_result_free(&r);
	capsim_diags_free(&d);
	free(s);

	static const char *const files[] = {
		"a100-4node-fattree.xml", "default.xml", "gpt2-124m-1xh200.xml",
		"gpt2-355m-1xh200.xml", "h100-256-lustre.xml", "h100-64node-ndr.xml",
		"h100-64node-roce200.xml", "h100-8node-ndr.xml", "h100-8node-roce400.xml",
		"long-context-1m.xml", "mixed-h100-h200.xml", "nvswitch-pod-128.xml",
		"onprem-burst.xml",
	};
	for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
		char path[512];
		snprintf(path, sizeof path, "%s/scenarios/%s", CAPSIM_SOURCE_DIR, files[f]);
		capsim_scenario *x = load(path, NULL, 0);
		long n = capsim_opt_space_size(x);
		/* the kept layouts are at most the space: within max-simulations too */
		if (!(n > 0 && n <= CAPSIM_OPT_MAX_LAYOUTS && n <= CAPSIM_OPT_MAX_SIMULATIONS &&
		      capsim_opt_sim_weight(x) == 1))
			fail_msg("%s: %ld layouts", files[f], n);
		free(x);
	}
}

/* GPT-2 1.5B (25 heads, 48 layers) on 16 A100s whose scenario says tp 4,
 * pp 4 with end stages of 11 layers and dp 3: loaded with its layout left
 * free */
static const capsim_set unsuited[] = { { "cluster.nodes", "2" },
				       { "workload.global-batch", "32" },
				       { "workload.model.ref", "gpt2-1.5b" },
				       { "workload.parallelism.pp", "4" },
				       { "workload.parallelism.first-stage-layers", "11" },
				       { "workload.parallelism.last-stage-layers", "11" },
				       { "workload.parallelism.dp", "3" },
				       { "reliability.runs", "0" } };
#define UNSUITED CAPSIM_SOURCE_DIR "/scenarios/a100-4node-fattree.xml"

static capsim_scenario *load_unsuited(void)
{
	capsim_scenario *s = calloc(1, sizeof *s);
	capsim_diags d = { 0 };
	/* a load holds the layout to the rules: tp 4 does not divide 25 heads */
	assert_int_equal(capsim_scenario_load(UNSUITED, cat, unsuited, 8, s, &d), -1);
	int heads = 0;
	for (size_t i = 0; i < d.n; i++)
		heads |= strstr(d.v[i].msg, "tp=4 does not divide 25 attention heads") != NULL;
	assert_true(heads);
	capsim_diags_free(&d);
	if (capsim_scenario_load_any_layout(UNSUITED, cat, unsuited, 8, s, &d) < 0) {
		capsim_diags_print(&d, stderr);
		fail_msg("does not load with its layout left free");
	}
	capsim_diags_free(&d);
	return s;
}

/* the search starts from a scenario whose layout does not suit the model:
 * of 25 heads only tp 1 and 5 divide within a node of 8, and 5 does not
 * divide 16 GPUs, so the best has tp 1; it passes the screens, and the
 * same edits on the scenario give its step */
static void test_search_from_unsuited_layout(void **state)
{
	(void)state;
	capsim_scenario *s = load_unsuited();
	capsim_diags d = { 0 };
	capsim_opt_options o = { .metric = CAPSIM_OPT_TOKENS_PER_S, .top = 2, .threads = 1 };
	capsim_opt_result r;
	assert_int_equal(capsim_optimize(s, cat, &o, &r, &d), 0);
	assert_int_equal(r.n_top, 2);
	const capsim_opt_config *c = &r.top[0].c;
	assert_int_equal(c->tp, 1);
	char why[200];
	assert_int_equal(capsim_opt_screen(s, c, why, sizeof why), 0);
	/* the layout as pasted onto the scenario as loaded, its dp and end
	 * stages replaced where the layout says otherwise */
	capsim_set sets[CAPSIM_OPT_MAX_SETS];
	char buf[CAPSIM_OPT_MAX_SETS][32];
	capsim_scenario *t = malloc(sizeof *t);
	*t = *s;
	if (capsim_opt_pastable(s, c)) {
		size_t n = capsim_opt_paste_sets(s, c, buf, sets);
		assert_int_equal(capsim_scenario_set_many(t, cat, sets, n, &d), 0);
		assert_int_equal(t->dp, c->dp);
		capsim_result res;
		capsim_eval_opts eo = { .no_reference = 1 };
		assert_int_equal(capsim_eval(t, &eo, &res, &d), 0);
		assert_memory_equal(&res.step.step_time_s, &r.top[0].step_time_s, sizeof(double));
		capsim_result_free(&res);
	}
	free(t);
	capsim_opt_result_free(&r);
	capsim_diags_free(&d);
	free(s);
}

/* the edits that paste a layout onto the scenario as its file has it: dp
 * always, and the even split written out over the file's end stages; a
 * layout of one stage cannot be said over them */
static void test_paste_over_file_layout(void **state)
{
	(void)state;
	capsim_scenario *s = load_unsuited();
	capsim_diags d = { 0 };
	capsim_opt_config even = { .tp = 1, .pp = 2, .virtual_stages = 1, .cp = 1, .ep = 1,
				   .dp = 8, .zero = 1, .micro_batch = 1 };
	capsim_set sets[CAPSIM_OPT_MAX_SETS];
	char buf[CAPSIM_OPT_MAX_SETS][32];
	assert_true(capsim_opt_pastable(s, &even));
	size_t n = capsim_opt_paste_sets(s, &even, buf, sets);
	capsim_scenario *t = malloc(sizeof *t), *u = malloc(sizeof *u);
	*t = *s;
	assert_int_equal(capsim_scenario_set_many(t, cat, sets, n, &d), 0);
	assert_int_equal(t->dp, 8);
	assert_int_equal(t->first_stage_layers, 24);
	assert_int_equal(t->last_stage_layers, 24);
	/* the same step as the layout on the scenario with its own end stages
	 * and dp forgotten (what the search simulates) */
	*u = *s;
	capsim_scenario_free_layout(u);
	n = capsim_opt_config_sets(&even, buf, sets);
	assert_int_equal(capsim_scenario_set_many(u, cat, sets, n, &d), 0);
	assert_int_equal(u->first_stage_layers, 0);
	capsim_result a, b;
	capsim_eval_opts eo = { .no_reference = 1 };
	assert_int_equal(capsim_eval(t, &eo, &a, &d), 0);
	assert_int_equal(capsim_eval(u, &eo, &b, &d), 0);
	assert_memory_equal(&a.step.step_time_s, &b.step.step_time_s, sizeof(double));
	assert_memory_equal(&a.group[0].peak_mem_bytes, &b.group[0].peak_mem_bytes,
			    sizeof(double));
	capsim_result_free(&a);
	capsim_result_free(&b);
	/* one stage: the file's end stages cannot be edited away */
	capsim_opt_config one = even;
	one.pp = 1;
	one.dp = 16;
	assert_false(capsim_opt_pastable(s, &one));
	free(t);
	free(u);
	capsim_diags_free(&d);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bound_equals_exhaustive),
		cmocka_unit_test(test_best_is_what_run_gives),
		cmocka_unit_test(test_published_layouts_are_feasible),
		cmocka_unit_test(test_bound_below_every_step),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_huge_cluster_refused),
		cmocka_unit_test(test_search_from_unsuited_layout),
		cmocka_unit_test(test_paste_over_file_layout),
	};
	capsim_init();
	return testutil_run_group(tests, setup, teardown);
}
