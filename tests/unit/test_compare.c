/* test_compare.c - comparisons that know about correlated error
 * (src/err/compare.h) and the doors that use them: the probability and the
 * tie in closed form from a small hand-written model, on the difference
 * (one GPU generation and stack) and on independent bands; the optimiser's
 * marks of the layouts it cannot tell from the best; the explorer's marking
 * of a delta (exact where only inputs moved it); the report's sentence for a
 * clear winner, a tie and TCO, and
 * the report without a model byte for byte the report less its comparison. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "compare.h"
#include "eval.h"
#include "knob.h"
#include "optimize.h"
#include "report.h"
#include "testutil.h"

static char dir[256];
static capsim_err_model *model;
static capsim_catalog *cat;

/* Three groups. Step, hopper / megatron (host, profile, scale dropped): the
 * pairs' |r_a - r_b| with median 0.05, 80% 0.10, 95% 0.20, largest 0.30, of
 * 40 pairs; band80 0.9-1.1. Step, ampere / torch-eager: band80 0.8-1.25, no
 * pairs. Memory, every feature dropped: pairs 80% 0.02 of 9. Power, every
 * feature dropped: band80 0.9-1.1, no pairs. */
static const char *const model_json =
	"{\"format\": \"capsim-error-model\", \"version\": 1, \"rows\": 39, \"in_sample\": 0,\n"
	" \"groups\": [\n"
	"  {\"quantity\": \"step\", \"level\": 3, \"gen\": \"hopper\", \"stack\": \"megatron\",\n"
	"   \"host\": \"*\", \"profile\": \"*\", \"scale\": \"*\", \"n\": 20, \"median_r\": 0,\n"
	"   \"band80\": [0.9, 1.1], \"band95\": null, \"pairs\": 40, \"pair_median\": 0.05,\n"
	"   \"pair80\": 0.1, \"pair95\": 0.2, \"pair_max\": 0.3},\n"
	"  {\"quantity\": \"step\", \"level\": 3, \"gen\": \"ampere\", \"stack\": \"torch-eager\",\n"
	"   \"host\": \"*\", \"profile\": \"*\", \"scale\": \"*\", \"n\": 10, \"median_r\": 0,\n"
	"   \"band80\": [0.8, 1.25], \"band95\": null, \"pairs\": 0, \"pair_median\": 0,\n"
	"   \"pair80\": null, \"pair95\": null, \"pair_max\": 0},\n"
	"  {\"quantity\": \"memory\", \"level\": 5, \"gen\": \"*\", \"stack\": \"*\",\n"
	"   \"host\": \"*\", \"profile\": \"*\", \"scale\": \"*\", \"n\": 9, \"median_r\": 0,\n"
	"   \"band80\": [0.95, 1.05], \"band95\": null, \"pairs\": 9, \"pair_median\": 0.01,\n"
	"   \"pair80\": 0.02, \"pair95\": null, \"pair_max\": 0.03},\n"
	"  {\"quantity\": \"power\", \"level\": 5, \"gen\": \"*\", \"stack\": \"*\",\n"
	"   \"host\": \"*\", \"profile\": \"*\", \"scale\": \"*\", \"n\": 9, \"median_r\": 0,\n"
	"   \"band80\": [0.9, 1.1], \"band95\": null, \"pairs\": 0, \"pair_median\": 0,\n"
	"   \"pair80\": null, \"pair95\": null, \"pair_max\": 0}\n"
	" ],\n"
	" \"coverage\": []}\n";

static const capsim_err_features hopper = { "hopper", "megatron", 0, "datasheet", 64 };
static const capsim_err_features hopper_host = { "hopper", "megatron", 1, "calibrated", 8 };
static const capsim_err_features ampere = { "ampere", "torch-eager", 0, "datasheet", 64 };
static const capsim_err_features unknown = { "", "megatron", 0, "datasheet", 64 };

static int setup(void **state)
{
	(void)state;
	capsim_init();
	if (testutil_tmpdir_make(dir, sizeof dir, "test-compare") < 0)
		return -1;
	char path[512];
	snprintf(path, sizeof path, "%s/model.json", dir);
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(model_json, f);
	fclose(f);
	capsim_diags d = { 0 };
	model = capsim_err_model_load(path, &d);
	capsim_diags_print(&d, stderr);
	capsim_diags_free(&d);
	cat = testutil_shipped_catalog();
	return model && cat ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	capsim_err_model_free(model);
	capsim_catalog_free(cat);
	return testutil_tmpdir_remove(dir);
}

/* on the difference: |d| is linear through (0, 0), (0.05, 0.5), (0.1, 0.8),
 * (0.2, 0.95), (0.3, 40/41); P(a below b) = 1 - (1 - F(|ln(a / b)|)) / 2 */
static void test_paired_closed_form(void **state)
{
	(void)state;
	capsim_err_cmp c;
	assert_int_equal(capsim_err_compare(model, CAPSIM_ERR_STEP, &hopper, exp(-0.05), &hopper,
					    1.0, &c), 0);
	assert_true(c.has && c.paired);
	assert_rel(c.half80, 0.1, 1e-12);
	assert_rel(c.p_less, 0.75, 1e-12);
	assert_true(c.tie);
	assert_non_null(strstr(c.group, "step / hopper / megatron / any"));
	/* 0.15 apart: F = 0.8 + 0.05 x 0.15 / 0.1 = 0.875, outside the band */
	capsim_err_compare(model, CAPSIM_ERR_STEP, &hopper, exp(-0.15), &hopper, 1.0, &c);
	assert_rel(c.p_less, 1.0 - 0.0625, 1e-12);
	assert_false(c.tie);
	/* just inside the band's edge: a tie, p 0.9; just outside the other way, 0.1 */
	capsim_err_compare(model, CAPSIM_ERR_STEP, &hopper, 1.0, &hopper, exp(0.1 - 1e-9), &c);
	assert_rel(c.p_less, 0.9, 1e-8);
	assert_true(c.tie);
	capsim_err_compare(model, CAPSIM_ERR_STEP, &hopper, exp(0.1 + 1e-9), &hopper, 1.0, &c);
	assert_rel(c.p_less, 0.1, 1e-6);
	assert_false(c.tie);
	/* past the largest pair: never nearer 1 than 1 / (2 (n + 1)) */
	capsim_err_compare(model, CAPSIM_ERR_STEP, &hopper, 1.0, &hopper, exp(0.4), &c);
	assert_rel(c.p_less, 1.0 - 0.5 / 41.0, 1e-12);
	/* equal predictions: 0.5, a tie */
	capsim_err_compare(model, CAPSIM_ERR_STEP, &hopper, 2.385, &hopper, 2.385, &c);
	assert_rel(c.p_less, 0.5, 1e-12);
	assert_true(c.tie);
	/* host-bound, profile and scale may differ: still one family */
	capsim_err_compare(model, CAPSIM_ERR_STEP, &hopper, 1.0, &hopper_host, exp(0.05), &c);
	assert_true(c.paired);
	assert_rel(c.p_less, 0.75, 1e-12);
	/* memory: the whole quantity's pairs */
	capsim_err_compare(model, CAPSIM_ERR_MEMORY, &hopper, 1.0, &hopper, exp(0.03), &c);
	assert_rel(c.half80, 0.02, 1e-12);
	assert_false(c.tie);
}

/* independent: each log-error normal with its band's mid-point and sigma =
 * ln(hi / lo) / (2 z80); the tie's edge is a probability of 0.1 or 0.9 */
static void test_independent_closed_form(void **state)
{
	(void)state;
	double mid_a = 0.5 * log(0.9 * 1.1), mid_b = 0.5 * log(0.8 * 1.25);
	double sa = log(1.1 / 0.9) / (2 * CAPSIM_ERR_Z80), sb = log(1.25 / 0.8) / (2 * CAPSIM_ERR_Z80);
	double s = sqrt(sa * sa + sb * sb);
	capsim_err_cmp c;
	/* the ratio at which the two measured values are as likely either way */
	double even = exp(mid_b - mid_a);
	assert_int_equal(capsim_err_compare(model, CAPSIM_ERR_STEP, &hopper, even, &ampere, 1.0,
					    &c), 0);
	assert_true(c.has);
	assert_false(c.paired);
	assert_rel(c.p_less, 0.5, 1e-12);
	assert_rel(c.half80, CAPSIM_ERR_Z80 * s, 1e-12);
	assert_true(c.tie);
	/* z80 sigmas below: p 0.9, on the edge */
	capsim_err_compare(model, CAPSIM_ERR_STEP, &hopper, even * exp(-CAPSIM_ERR_Z80 * s * (1 - 1e-9)),
			   &ampere, 1.0, &c);
	assert_rel(c.p_less, 0.9, 1e-6);
	assert_true(c.tie);
	capsim_err_compare(model, CAPSIM_ERR_STEP, &hopper, even * exp(-2 * CAPSIM_ERR_Z80 * s),
			   &ampere, 1.0, &c);
	assert_false(c.tie);
	assert_rel(c.p_less, 0.5 * erfc(-2 * CAPSIM_ERR_Z80 / sqrt(2.0)), 1e-9);
	/* no band: a quantity the model lacks, a generation no group covers */
	assert_int_equal(capsim_err_compare(model, CAPSIM_ERR_CHECKPOINT, &hopper, 1.0, &hopper,
					    1.1, &c), -1);
	assert_false(c.has);
	assert_int_equal(capsim_err_compare(model, CAPSIM_ERR_STEP, &unknown, 1.0, &hopper, 1.1,
					    &c), -1);
	assert_int_equal(capsim_err_compare(model, CAPSIM_ERR_STEP, &hopper, 0.0, &hopper, 1.1,
					    &c), -1);
}

/* the optimiser: #2 5% slower is a tie (p 0.75 ... from ln 1.05), #3 20%
 * slower is not */
static void test_optimiser_marks(void **state)
{
	(void)state;
	capsim_opt_result r = { 0 };
	capsim_opt_point top[3] = { 0 };
	double steps[3] = { 2.385, 2.385 * exp(0.05), 2.385 * exp(0.15) };
	for (int i = 0; i < 3; i++) {
		top[i].step_time_s = steps[i];
		top[i].f = hopper;
	}
	top[2].f.host_bound = 1; /* a layout's host-bound may differ */
	r.top = top;
	r.n_top = 3;
	capsim_opt_mark_ties(&r, NULL);
	assert_false(r.marked);
	assert_false(top[1].tie_best);
	capsim_opt_mark_ties(&r, model);
	assert_true(r.marked);
	assert_true(r.cmp.has && r.cmp.paired);
	assert_rel(r.cmp.half80, 0.1, 1e-12);
	assert_true(top[0].cmp_has && top[0].tie_best);
	assert_rel(top[0].p_best, 0.5, 1e-12);
	assert_true(top[1].tie_best);
	assert_rel(top[1].p_best, 0.75, 1e-12);
	assert_false(top[2].tie_best);
	assert_rel(top[2].p_best, 0.9375, 1e-12);
}

/* the explorer: a delta inside the comparison's band is "within error" */
static void test_explorer_marking(void **state)
{
	(void)state;
	assert_int_equal(capsim_ui_err_quantity("tokens_per_s"), CAPSIM_ERR_STEP);
	assert_int_equal(capsim_ui_err_quantity("peak_mem_per_gpu_bytes"), CAPSIM_ERR_MEMORY);
	assert_int_equal(capsim_ui_err_quantity("racks"), -1);
	/* the step 9% longer: inside +/-10%; 11% longer: outside */
	assert_int_equal(capsim_ui_within_error(model, "step_time_s", 0, &hopper, 2.385, &hopper,
						2.385 * exp(0.09)), 1);
	assert_int_equal(capsim_ui_within_error(model, "step_time_s", 0, &hopper, 2.385, &hopper,
						2.385 * exp(0.11)), 0);
	/* a rate the inverse of the step: the same band */
	assert_int_equal(capsim_ui_within_error(model, "tokens_per_s", 0, &hopper, 1000.0, &hopper,
						1000.0 * exp(-0.09)), 1);
	assert_int_equal(capsim_ui_within_error(model, "tokens_per_s", 0, &hopper, 1000.0, &hopper,
						1000.0 * exp(0.11)), 0);
	assert_int_equal(capsim_ui_within_error(model, "cost_to_train_usd", 0, &hopper, 1e6,
						&hopper, 1.05e6), 1);
	/* one design, the cost 5% up: inputs moved it (a price), exactly */
	assert_int_equal(capsim_ui_within_error(model, "cost_to_train_usd", 1, &hopper, 1e6,
						&hopper, 1.05e6), 0);
	/* memory's band is +/-2% */
	assert_int_equal(capsim_ui_within_error(model, "peak_mem_per_gpu_bytes", 0, &hopper, 50e9,
						&hopper, 50.5e9), 1);
	assert_int_equal(capsim_ui_within_error(model, "peak_mem_per_gpu_bytes", 0, &hopper, 50e9,
						&hopper, 52e9), 0);
	/* another GPU generation: independent bands, far wider */
	assert_int_equal(capsim_ui_within_error(model, "step_time_s", 0, &hopper, 2.385, &ampere,
						2.385 * exp(0.11)), 1);
	/* nothing to say */
	assert_int_equal(capsim_ui_within_error(NULL, "step_time_s", 0, &hopper, 1.0, &hopper, 1.1),
			 -1);
	assert_int_equal(capsim_ui_within_error(model, "racks", 0, &hopper, 4.0, &hopper, 5.0), -1);
	assert_int_equal(capsim_ui_within_error(model, "step_time_s", 0, &hopper, 0.0, &hopper, 1.0),
			 -1);
}

/* one design apart from its inputs: the cost knobs leave it the same, a
 * fabric or a layout knob does not */
static void test_design_text(void **state)
{
	(void)state;
	char path[512];
	snprintf(path, sizeof path, "%s/scenarios/default.xml", CAPSIM_SOURCE_DIR);
	capsim_scenario *s = calloc(1, sizeof *s);
	capsim_diags d = { 0 };
	assert_int_equal(capsim_scenario_load(path, cat, NULL, 0, s, &d), 0);
	char a[8192], b[8192];
	capsim_ui_design_text(s, a, sizeof a);
	assert_non_null(strstr(a, "cluster.nodes=32;"));
	assert_null(strstr(a, "cost.utilization"));
	capsim_set price[] = { { "cost.utilization", "0.5" }, { "facility.energy.price", "$0.2/kWh" },
			       { "cost.horizon", "3 y" } };
	assert_int_equal(capsim_scenario_set_many(s, cat, price, 3, &d), 0);
	capsim_ui_design_text(s, b, sizeof b);
	assert_string_equal(a, b);
	capsim_set fabric = { "cluster.fabric.transport", "roce" };
	capsim_set nic = { "cluster.nic.ref", "cx7-400gbe" };
	capsim_set sw = { "cluster.fabric.switch.ref", "sn5600" };
	capsim_set all[] = { fabric, nic, sw };
	assert_int_equal(capsim_scenario_set_many(s, cat, all, 3, &d), 0);
	capsim_ui_design_text(s, b, sizeof b);
	assert_string_not_equal(a, b);
	capsim_diags_print(&d, stderr);
	capsim_diags_free(&d);
	free(s);
}

/* ---- the report ---------------------------------------------------------------------- */

static capsim_scenario *load(const char *name)
{
	char path[512];
	snprintf(path, sizeof path, "%s/scenarios/report/%s", CAPSIM_SOURCE_DIR, name);
	capsim_scenario *s = calloc(1, sizeof *s);
	capsim_diags d = { 0 };
	if (capsim_scenario_load(path, cat, NULL, 0, s, &d) < 0) {
		capsim_diags_print(&d, stderr);
		fail_msg("%s does not load", path);
	}
	capsim_diags_free(&d);
	return s;
}

static void collect(capsim_report *rep, const char *a, const char *b, int metric)
{
	capsim_scenario *v[2] = { load(a), load(b) };
	capsim_report_rule rule = { .metric = metric };
	capsim_diags d = { 0 };
	if (capsim_report_collect(rep, v, 2, &rule, cat, NULL, NULL, &d) < 0) {
		capsim_diags_print(&d, stderr);
		fail_msg("collect");
	}
	capsim_diags_free(&d);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		fail_msg("%s: cannot open", path);
	fseek(f, 0, SEEK_END);
	long len = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc((size_t)len + 1);
	assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
	buf[len] = '\0';
	fclose(f);
	return buf;
}

/* rep's report.md, written into dir/sub */
static char *markdown(const capsim_report *rep, const char *sub)
{
	char out[512], path[600];
	snprintf(out, sizeof out, "%s/%s", dir, sub);
	int missing;
	capsim_diags d = { 0 };
	if (capsim_report_write(rep, cat, out, 60.0, &missing, &d) < 0) {
		capsim_diags_print(&d, stderr);
		fail_msg("write");
	}
	capsim_diags_free(&d);
	snprintf(path, sizeof path, "%s/report.md", out);
	return slurp(path);
}

/* text less each paragraph that begins with one of the comparison's words */
static void drop_comparison(char *text)
{
	static const char *const starts[] = { "Against the model's own error",
					      "What would decide it:" };
	char *w = text;
	for (const char *r = text; *r;) {
		const char *end = strstr(r, "\n\n");
		size_t len = end ? (size_t)(end - r) + 2 : strlen(r);
		int drop = 0;
		for (size_t k = 0; k < 2; k++)
			drop |= strncmp(r, starts[k], strlen(starts[k])) == 0;
		if (!drop) {
			memmove(w, r, len);
			w += len;
		}
		r += len;
	}
	*w = '\0';
}

/* the IB and RoCE H200 designs 0.2% apart: a tie, with what would decide
 * it; without a model, the report is the same less those paragraphs */
static void test_report_tie(void **state)
{
	(void)state;
	capsim_report rep;
	collect(&rep, "h200-owned-roce.xml", "h200-owned-ib.xml", CAPSIM_RULE_COST_TO_TRAIN);
	capsim_report_compare(&rep, NULL);
	assert_false(rep.cmp.done);
	char *plain = markdown(&rep, "plain");
	assert_null(strstr(plain, "Against the model's own error"));
	capsim_report_compare(&rep, model);
	assert_true(rep.cmp.done && rep.cmp.has && rep.cmp.cmp.paired && rep.cmp.cmp.tie);
	const capsim_report_design *w = &rep.d[rep.winner], *r = &rep.d[rep.runner_up];
	/* hopper / megatron: within 0.05, F = 10 |x|, p = 1 - (1 - 10 |x|) / 2 */
	double x = fabs(log(w->metric / r->metric));
	assert_true(x < 0.05);
	assert_rel(rep.cmp.cmp.p_less, 1.0 - 0.5 * (1.0 - 10.0 * x), 1e-9);
	char *md = markdown(&rep, "compared");
	char want[512];
	snprintf(want, sizeof want, "Against the model's own error this is a tie: %s is cheaper "
		 "than %s with probability %.2f only", w->label, r->label, rep.cmp.cmp.p_less);
	assert_non_null(strstr(md, want));
	assert_non_null(strstr(md, "+/-10.5% on the difference: both are hopper / megatron"));
	assert_non_null(strstr(md, "What would decide it: a measured step time of both designs"));
	drop_comparison(md);
	assert_string_equal(md, plain);
	free(md);
	free(plain);
	capsim_report_free(&rep);
}

/* rented H100s against owned H200s, 43% apart: a clear winner */
static void test_report_clear(void **state)
{
	(void)state;
	capsim_report rep;
	collect(&rep, "h100-rented.xml", "h200-owned-ib.xml", CAPSIM_RULE_COST_TO_TRAIN);
	capsim_report_compare(&rep, model);
	assert_true(rep.cmp.has && !rep.cmp.cmp.tie);
	assert_rel(rep.cmp.cmp.p_less, 1.0 - 0.5 / 41.0, 1e-12);
	char *md = markdown(&rep, "clear");
	assert_non_null(strstr(md, "Against the model's own error: h200-owned-ib is cheaper than "
				   "h100-rented with probability 0.99 ("));
	assert_null(strstr(md, "What would decide it"));
	free(md);
	capsim_report_free(&rep);
}

/* x's TCO and its 80% band, the power's carried (bands.c) */
static void tco_and_band(const capsim_report_design *x, double *v, double *lo, double *hi)
{
	capsim_result r = x->r;
	capsim_result_set_bands(x->s, model, &r);
	const capsim_result_key *k = capsim_result_key_find("tco_usd");
	*v = capsim_result_number(&r, k);
	assert_true(capsim_result_band(&r, k, CAPSIM_ERR_80, lo, hi));
	assert_true(*lo < *v && *v < *hi);
}

/* by TCO: the rest of it priced inputs, its error the power's through the
 * busy hours' energy, each design's band its own, taken as independent;
 * without a power band, not compared */
static void test_report_tco(void **state)
{
	(void)state;
	capsim_report rep;
	collect(&rep, "h200-owned-roce.xml", "h200-owned-ib.xml", CAPSIM_RULE_TCO);
	capsim_report_compare(&rep, model);
	assert_true(rep.cmp.done && rep.cmp.has && rep.cmp.from_power && !rep.cmp.cmp.paired);
	const capsim_report_design *w = &rep.d[rep.winner], *r = &rep.d[rep.runner_up];
	double a, al, ah, b, bl, bh;
	tco_and_band(w, &a, &al, &ah);
	tco_and_band(r, &b, &bl, &bh);
	assert_rel(a, w->metric, 1e-12);
	/* ln of each measured TCO normal: mean at its band's mid-point, sigma
	 * its log-width over 2 z80 */
	double ma = 0.5 * log(al * ah / (a * a)), mb = 0.5 * log(bl * bh / (b * b));
	double sa = log(ah / al) / (2 * CAPSIM_ERR_Z80), sb = log(bh / bl) / (2 * CAPSIM_ERR_Z80);
	double mean = log(a / b) + ma - mb, s = sqrt(sa * sa + sb * sb);
	assert_rel(rep.cmp.cmp.p_less, 0.5 * erfc(mean / (s * sqrt(2.0))), 1e-9);
	assert_rel(rep.cmp.cmp.half80, CAPSIM_ERR_Z80 * s, 1e-12);
	char *md = markdown(&rep, "tco");
	assert_non_null(strstr(md, "from independent bands of the TCO"));
	if (rep.cmp.cmp.tie)
		assert_non_null(strstr(md, "What would decide it: a measured power draw"));
	free(md);
	capsim_report_free(&rep);
	/* a model without a power band: not compared, and the reason said */
	capsim_err_model none = *model;
	none.n = 3; /* the step and memory groups alone */
	collect(&rep, "h200-owned-roce.xml", "h200-owned-ib.xml", CAPSIM_RULE_TCO);
	capsim_report_compare(&rep, &none);
	assert_true(rep.cmp.done && !rep.cmp.has);
	md = markdown(&rep, "tco-none");
	assert_non_null(strstr(md, "Against the model's own error: not compared; the on-prem TCO "
				   "is priced inputs over a fixed horizon but for the busy hours' "
				   "energy"));
	free(md);
	capsim_report_free(&rep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_paired_closed_form),
		cmocka_unit_test(test_independent_closed_form),
		cmocka_unit_test(test_optimiser_marks),
		cmocka_unit_test(test_explorer_marking),
		cmocka_unit_test(test_design_text),
		cmocka_unit_test(test_report_tie),
		cmocka_unit_test(test_report_clear),
		cmocka_unit_test(test_report_tco),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
