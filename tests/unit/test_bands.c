/* test_bands.c - a result's prediction intervals (eval.h, docs/model.md
 * "Error bands on results"): a hand-written error model through evaluation
 * into the result's keys, JSON, text and store rows, in closed form; the
 * keys that follow from a band; without a model the output of before; and
 * the doors with a bad, a missing and no model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "catalog.h"
#include "cost.h"
#include "err.h"
#include "eval.h"
#include "results.h"
#include "scenario.h"

#include "testutil.h"

/* one whole-quantity group (level 5: every feature dropped) with its
 * bands, or null where lo is 0 */
static void put_group(FILE *f, const char *q, int n, double lo80, double hi80, double lo95,
		      double hi95, int last)
{
	fprintf(f, "{\"quantity\": \"%s\", \"level\": 5, \"gen\": \"*\", \"stack\": \"*\", "
		"\"host\": \"*\", \"profile\": \"*\", \"scale\": \"*\", \"n\": %d, "
		"\"median_r\": 0.01, \"pairs\": 0, \"pair_median\": 0, \"pair_max\": 0, "
		"\"pair80\": null, \"pair95\": null, ", q, n);
	if (lo80 > 0)
		fprintf(f, "\"band80\": [%.17g, %.17g], ", lo80, hi80);
	else
		fprintf(f, "\"band80\": null, ");
	if (lo95 > 0)
		fprintf(f, "\"band95\": [%.17g, %.17g]}%s\n", lo95, hi95, last ? "" : ",");
	else
		fprintf(f, "\"band95\": null}%s\n", last ? "" : ",");
}

/* The hand-written model: step 0.9-1.2 (80%) and 0.8-1.5 (95%), its pairs
 * 0.1 and 0.2, memory
 * 0.98-1.05 and 0.95-1.1, power 0.95-1.1 (80% only), checkpoint 0.7-1.4
 * (80% only), busbw 0.85-1.3 (80% only). */
static void write_model(const char *path)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "{\"format\": \"capsim-error-model\", \"version\": 1, \"rows\": 200, "
		"\"in_sample\": 0, \"coverage\": [], \"groups\": [\n");
	/* the step's, with its pairs: 80% 0.1, 95% 0.2 of 40 */
	fprintf(f, "{\"quantity\": \"step\", \"level\": 5, \"gen\": \"*\", \"stack\": \"*\", "
		"\"host\": \"*\", \"profile\": \"*\", \"scale\": \"*\", \"n\": 50, "
		"\"median_r\": 0.01, \"pairs\": 40, \"pair_median\": 0.05, \"pair_max\": 0.3, "
		"\"pair80\": 0.1, \"pair95\": 0.2, \"band80\": [0.9, 1.2], "
		"\"band95\": [0.8, 1.5]},\n");
	put_group(f, "memory", 40, 0.98, 1.05, 0.95, 1.1, 0);
	put_group(f, "power", 20, 0.95, 1.1, 0, 0, 0);
	put_group(f, "checkpoint", 12, 0.7, 1.4, 0, 0, 0);
	put_group(f, "busbw", 10, 0.85, 1.3, 0, 0, 1);
	fprintf(f, "]}\n");
	fclose(f);
}

static char dir[64];
static capsim_catalog *cat;
static capsim_err_model *model;
static capsim_scenario *scen;
static capsim_result with, without;

/* s evaluated with m (NULL: none) into r; fails the test when it cannot be */
static void eval(const capsim_scenario *s, const capsim_err_model *m, capsim_result *r)
{
	capsim_diags d = { 0 };
	capsim_eval_opts o = { .errors = m };
	int rc = capsim_eval(s, &o, r, &d);
	capsim_diags_print(&d, stderr);
	capsim_diags_free(&d);
	assert_int_equal(rc, 0);
}

/* the default scenario, bought, with a cloud offer beside it, checkpoints
 * to storage: every kind of banded key present */
static int setup(void **state)
{
	(void)state;
	if (testutil_tmpdir_make(dir, sizeof dir, "bands") < 0)
		return -1;
	char path[128];
	snprintf(path, sizeof path, "%s/model.json", dir);
	write_model(path);
	capsim_diags d = { 0 };
	model = capsim_err_model_load(path, &d);
	capsim_diags_print(&d, stderr);
	capsim_diags_free(&d);
	cat = testutil_shipped_catalog();
	if (!model || !cat)
		return -1;
	scen = calloc(1, sizeof *scen);
	int rc = capsim_scenario_load(CAPSIM_SOURCE_DIR "/scenarios/default.xml", cat, NULL, 0,
				      scen, &d);
	capsim_diags_print(&d, stderr);
	capsim_diags_free(&d);
	if (rc < 0)
		return -1;
	eval(scen, model, &with);
	eval(scen, NULL, &without);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	capsim_result_free(&with);
	capsim_result_free(&without);
	free(scen);
	capsim_catalog_free(cat);
	capsim_err_model_free(model);
	return testutil_tmpdir_remove(dir);
}

/* key's ends at level l in r, which must have them */
static void ends(const capsim_result *r, const char *key, int l, double *lo, double *hi)
{
	const capsim_result_key *k = capsim_result_key_find(key);
	assert_non_null(k);
	if (!capsim_result_band(r, k, l, lo, hi))
		fail_msg("%s has no band at %s", key, capsim_err_level_names[l]);
}

static void expect_ends(const char *key, int l, double lo, double hi)
{
	double a, b;
	ends(&with, key, l, &a, &b);
	assert_rel(a, lo, 1e-12);
	assert_rel(b, hi, 1e-12);
}

/* The step's band is the model's factors on the step; the keys in
 * proportion to it carry the same factors. */
static void test_step_band(void **state)
{
	(void)state;
	assert_true(with.bands.on);
	assert_false(without.bands.on);
	double t = with.step.step_time_s;
	assert_rel(t, without.step.step_time_s, 1e-15);
	expect_ends("step_time_s", CAPSIM_ERR_80, 0.9 * t, 1.2 * t);
	expect_ends("step_time_s", CAPSIM_ERR_95, 0.8 * t, 1.5 * t);
	double ttt = with.step.time_to_train_s;
	expect_ends("time_to_train_s", CAPSIM_ERR_80, 0.9 * ttt, 1.2 * ttt);
	double wall = with.reliab.wall_to_train_s;
	expect_ends("wall_to_train_s", CAPSIM_ERR_95, 0.8 * wall, 1.5 * wall);
	const capsim_err_band *b = &with.bands.q[CAPSIM_ERR_STEP];
	assert_string_equal(b->group[CAPSIM_ERR_80],
			    "step / any gen / any stack / any host / any profile / any scale");
	assert_int_equal(b->n[CAPSIM_ERR_80], 50);
}

/* tokens/s and MFU: the step's band with its ends swapped, tokens / (step x
 * hi) to tokens / (step x lo) */
static void test_per_step(void **state)
{
	(void)state;
	double tok = with.step.tokens_per_s, mfu = with.mfu;
	expect_ends("tokens_per_s", CAPSIM_ERR_80, tok / 1.2, tok / 0.9);
	expect_ends("tokens_per_s", CAPSIM_ERR_95, tok / 1.5, tok / 0.8);
	expect_ends("mfu", CAPSIM_ERR_80, mfu / 1.2, mfu / 0.9);
}

/* two factor pairs taken as independent: centres added, log half-widths
 * in quadrature */
static void quadrature(double al, double ah, double bl, double bh, double *lo, double *hi)
{
	double c = 0.5 * (log(al) + log(ah)) + 0.5 * (log(bl) + log(bh));
	double h = sqrt(pow(0.5 * (log(ah) - log(al)), 2) + pow(0.5 * (log(bh) - log(bl)), 2));
	*lo = exp(c - h);
	*hi = exp(c + h);
}

/* what the facility draws with the GPUs at f x their draw (the default
 * scenario's one group, its GPUs under their limit at f 1.1): the GPUs'
 * extra through the PUE, the rest of the draw fixed */
static double facility_at(double f)
{
	const capsim_power *p = &with.power;
	double gpus = (double)p->group[0].nodes * p->group[0].gpus_per_node;
	return p->facility_w + p->pue * gpus * p->gpu_w * (f - 1);
}

/* power: the GPU's draw moved by the band, the node's and the facility's
 * by the GPUs' share of it alone (their overhead is no GPU's) */
static void test_power(void **state)
{
	(void)state;
	const capsim_power *p = &with.power;
	assert_int_equal(p->n_groups, 1);
	double pw = p->gpu_w, gpn = p->group[0].gpus_per_node;
	assert_true(1.1 * pw < 700.0); /* the H100's limit (its TDP) not reached */
	expect_ends("power_gpu_w", CAPSIM_ERR_80, 0.95 * pw, 1.1 * pw);
	expect_ends("power_node_w", CAPSIM_ERR_80, p->node_w - gpn * 0.05 * pw,
		    p->node_w + gpn * 0.1 * pw);
	expect_ends("power_facility_w", CAPSIM_ERR_80, facility_at(0.95), facility_at(1.1));
	double lo, hi;
	assert_false(capsim_result_band(&with, capsim_result_key_find("power_gpu_w"),
					CAPSIM_ERR_95, &lo, &hi));
}

/* a band past the GPU's limit stops at it: twice the draw is the TDP, and
 * the node and IT draws move by that much alone */
static void test_power_limit(void **state)
{
	(void)state;
	const capsim_power *p = &with.power;
	capsim_power m;
	capsim_power_gpu_moved(scen, p, 2.0, &m);
	assert_rel(m.gpu_w, 700.0, 1e-15);
	assert_rel(m.group[0].gpu_w, 700.0, 1e-15);
	double more = p->group[0].gpus_per_node * (700.0 - p->gpu_w);
	assert_rel(m.node_w, p->node_w + more, 1e-12);
	assert_rel(m.it_w, p->it_w + p->group[0].nodes * more, 1e-12);
	assert_rel(m.facility_w, m.it_w * p->pue, 1e-12);
	assert_rel(m.energy_per_step_j, p->energy_per_step_j * m.facility_w / p->facility_w,
		   1e-12);
	/* what is provisioned does not move */
	assert_rel(m.it_peak_w, p->it_peak_w, 1e-15);
	assert_rel(m.it_idle_w, p->it_idle_w, 1e-15);
}

/* energy: the facility's draw (as the power band moves it) x the step, the
 * two log half-widths in quadrature about the sum of the centres; at 95%
 * the power has none, so the step's alone */
static void test_energy(void **state)
{
	(void)state;
	double fl = facility_at(0.95) / with.power.facility_w;
	double fh = facility_at(1.1) / with.power.facility_w;
	double lo, hi;
	quadrature(0.9, 1.2, fl, fh, &lo, &hi);
	double e = with.power.energy_per_step_j;
	expect_ends("energy_per_step_j", CAPSIM_ERR_80, e * lo, e * hi);
	expect_ends("energy_per_step_j", CAPSIM_ERR_95, 0.8 * e, 1.5 * e);
	double et = with.power.energy_to_train_j;
	expect_ends("energy_to_train_j", CAPSIM_ERR_80, et * lo, et * hi);
}

/* the owner's money: the busy hours' energy moves with the facility's draw
 * (the idle hours' does not), the opex and the TCO by as much over the
 * horizon, the break-even utilisation up with the power; a busy GPU-hour's
 * cost to train with it and the step, in quadrature */
static void test_owning(void **state)
{
	(void)state;
	const capsim_cost *c = &with.cost;
	const capsim_scenario *s = scen;
	assert_true(c->has_capex && s->has_facility && s->facility.energy_usd_per_j > 0);
	double years = s->horizon_s / CAPSIM_YEAR_S;
	for (int end = 0; end < 2; end++) {
		double f = end ? 1.1 : 0.95;
		double d_energy = s->utilization * (facility_at(f) - with.power.facility_w) *
				  CAPSIM_YEAR_S * s->facility.energy_usd_per_j;
		double a, b, v;
		ends(&with, "opex_energy_per_year_usd", CAPSIM_ERR_80, &a, &b);
		v = end ? b : a;
		assert_rel(v, c->opex_energy_per_year_usd + d_energy, 1e-9);
		ends(&with, "opex_per_year_usd", CAPSIM_ERR_80, &a, &b);
		assert_rel(end ? b : a, c->opex_per_year_usd + d_energy, 1e-9);
		ends(&with, "tco_usd", CAPSIM_ERR_80, &a, &b);
		assert_rel(end ? b : a, c->tco_usd + d_energy * years, 1e-9);
		ends(&with, "tco_npv_usd", CAPSIM_ERR_80, &a, &b);
		assert_true(a < c->tco_npv_usd && c->tco_npv_usd < b);
	}
	double lo, hi;
	ends(&with, "breakeven_utilization", CAPSIM_ERR_80, &lo, &hi);
	assert_true(lo < c->breakeven_utilization && c->breakeven_utilization < hi);
	/* no 95% power band: none of what it carries has one */
	assert_false(capsim_result_band(&with, capsim_result_key_find("tco_usd"), CAPSIM_ERR_95,
					&lo, &hi));
	double gl, gh;
	ends(&with, "onprem_cost_per_gpu_hour_usd", CAPSIM_ERR_80, &gl, &gh);
	double g = c->onprem_cost_per_gpu_hour_usd;
	ends(&with, "tco_usd", CAPSIM_ERR_80, &lo, &hi);
	assert_rel(gh / g, hi / c->tco_usd, 1e-12); /* a GPU-hour's cost is the TCO over hours */
	quadrature(0.9, 1.2, gl / g, gh / g, &lo, &hi);
	expect_ends("onprem_cost_to_train_usd", CAPSIM_ERR_80, c->onprem_cost_to_train_usd * lo,
		    c->onprem_cost_to_train_usd * hi);
	expect_ends("cost_to_train_usd", CAPSIM_ERR_80, c->cost_to_train_usd * lo,
		    c->cost_to_train_usd * hi);
	/* at 95% the step's alone */
	expect_ends("onprem_cost_to_train_usd", CAPSIM_ERR_95, 0.8 * c->onprem_cost_to_train_usd,
		    1.5 * c->onprem_cost_to_train_usd);
}

/* the scaling efficiency, a ratio of two steps of one family: the step's
 * paired band, e^(+/-0.1) at 80% and e^(+/-0.2) at 95% */
static void test_scaling_pair(void **state)
{
	(void)state;
	assert_true(with.has_scaling);
	double e = with.scaling_efficiency;
	expect_ends("scaling_efficiency", CAPSIM_ERR_80, e * exp(-0.1), e * exp(0.1));
	expect_ends("scaling_efficiency", CAPSIM_ERR_95, e * exp(-0.2), e * exp(0.2));
	double lo, hi;
	assert_false(capsim_result_band(&without, capsim_result_key_find("scaling_efficiency"),
					CAPSIM_ERR_80, &lo, &hi));
}

/* memory: the peak in proportion; the margin capacity less the peak at the
 * other end (the largest peak leaves the least) */
static void test_memory(void **state)
{
	(void)state;
	assert_int_equal(with.n_groups, 1);
	double peak = with.group[0].peak_mem_bytes, cap = with.group[0].mem_capacity_bytes;
	expect_ends("peak_mem_per_gpu_bytes", CAPSIM_ERR_80, 0.98 * peak, 1.05 * peak);
	expect_ends("memory_margin_bytes", CAPSIM_ERR_80, cap - 1.05 * peak, cap - 0.98 * peak);
	expect_ends("memory_margin_bytes", CAPSIM_ERR_95, cap - 1.1 * peak, cap - 0.95 * peak);
	expect_ends("memory_margin_ratio", CAPSIM_ERR_80, (cap - 1.05 * peak) / cap,
		    (cap - 0.98 * peak) / cap);
	/* the verdict is the prediction's, not moved by its band */
	assert_string_equal(with.memory_verdict, without.memory_verdict);
}

/* checkpoints: their own band; no 95% where the model has none */
static void test_checkpoint(void **state)
{
	(void)state;
	double w = with.reliab.write_s, rs = with.reliab.restore_s;
	expect_ends("checkpoint_write_s", CAPSIM_ERR_80, 0.7 * w, 1.4 * w);
	expect_ends("checkpoint_restore_s", CAPSIM_ERR_80, 0.7 * rs, 1.4 * rs);
	double lo, hi;
	assert_false(capsim_result_band(&with, capsim_result_key_find("checkpoint_write_s"),
					CAPSIM_ERR_95, &lo, &hi));
	/* a key that is no prediction has no band */
	assert_false(capsim_result_band(&with, capsim_result_key_find("capex_usd"), CAPSIM_ERR_80,
					&lo, &hi));
}

/* money: the cloud's GPUs and storage with the step and its egress fixed */
static void test_cost(void **state)
{
	(void)state;
	const capsim_cost *c = &with.cost;
	assert_true(c->has_cost_to_train && c->has_cloud_cost && !c->acquire_rent);
	double var = c->cloud_gpu_usd + c->cloud_storage_usd;
	expect_ends("cloud_cost_usd", CAPSIM_ERR_80, 0.9 * var + c->cloud_egress_usd,
		    1.2 * var + c->cloud_egress_usd);
	expect_ends("cloud_cost_per_million_tokens_usd", CAPSIM_ERR_95,
		    c->cloud_cost_per_million_tokens_usd * (0.8 * var + c->cloud_egress_usd) /
			    c->cloud_cost_usd,
		    c->cloud_cost_per_million_tokens_usd * (1.5 * var + c->cloud_egress_usd) /
			    c->cloud_cost_usd);
}

/* JSON: each banded key followed by its ends, the bands object naming the
 * groups; without a model, the JSON of before: the banded one less its
 * ends and bands */
static void test_json(void **state)
{
	(void)state;
	json_t *a = json_object(), *b = json_object();
	capsim_result_json(&with, a);
	capsim_result_json(&without, b);
	double t = with.step.step_time_s;
	assert_rel(json_real_value(json_object_get(a, "step_time_s_lo")), 0.9 * t, 1e-15);
	assert_rel(json_real_value(json_object_get(a, "step_time_s_hi95")), 1.5 * t, 1e-15);
	assert_null(json_object_get(a, "checkpoint_write_s_lo95"));
	json_t *step = json_object_get(json_object_get(json_object_get(a, "bands"), "step"), "80%");
	assert_rel(json_real_value(json_object_get(step, "lo")), 0.9, 1e-15);
	assert_int_equal(json_integer_value(json_object_get(step, "n")), 50);
	assert_true(json_is_null(json_object_get(json_object_get(json_object_get(a, "bands"),
								 "power"), "95%")));
	/* the order: the key, then its ends */
	const char *prev = NULL;
	const char *key;
	json_t *v;
	json_object_foreach(a, key, v) {
		if (strcmp(key, "step_time_s_lo") == 0)
			assert_string_equal(prev, "step_time_s");
		prev = key;
	}
	/* less its ends and bands, the JSON without a model */
	json_t *keep = json_object();
	json_object_foreach(a, key, v) {
		size_t n = strlen(key);
		int end = (n > 3 && strcmp(key + n - 3, "_lo") == 0) ||
			  (n > 3 && strcmp(key + n - 3, "_hi") == 0) ||
			  (n > 5 && strcmp(key + n - 5, "_lo95") == 0) ||
			  (n > 5 && strcmp(key + n - 5, "_hi95") == 0);
		if (!end && strcmp(key, "bands") != 0)
			json_object_set(keep, key, v);
	}
	assert_null(json_object_get(b, "bands"));
	assert_null(json_object_get(b, "step_time_s_lo"));
	char *x = json_dumps(keep, JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
	char *y = json_dumps(b, JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
	assert_string_equal(x, y);
	free(x);
	free(y);
	json_decref(keep);
	json_decref(a);
	json_decref(b);
}

/* text: the step "16.8 s (15.12-20.16)", aligned as before, and the line saying where it comes
 * from; without a model neither */
static void test_text(void **state)
{
	(void)state;
	char *buf = NULL, *plain = NULL;
	size_t n = 0, m = 0;
	FILE *f = open_memstream(&buf, &n), *g = open_memstream(&plain, &m);
	assert_int_equal(capsim_result_text(&with, f), 0);
	assert_int_equal(capsim_result_text(&without, g), 0);
	fclose(f);
	fclose(g);
	double t = with.step.step_time_s;
	char want[160], v[32], lo[32], hi[32];
	capsim_units_format(t, CAPSIM_DIM_SECONDS, v, sizeof v);
	snprintf(lo, sizeof lo, "%.4g", 0.9 * t);
	snprintf(hi, sizeof hi, "%.4g", 1.2 * t);
	assert_string_equal(v + strlen(v) - 2, " s"); /* the ends' unit left off */
	snprintf(want, sizeof want, "  %-24s %12s (%s-%s)\n", "step time", v, lo, hi);
	if (!strstr(buf, want))
		fail_msg("no line '%s' in\n%s", want, buf);
	assert_non_null(strstr(buf, "80% prediction interval, from capsim's own validation "
				    "residuals, docs/validation.md"));
	assert_null(strstr(plain, "prediction interval"));
	snprintf(want, sizeof want, "  %-24s %12s\n", "step time", v);
	assert_non_null(strstr(plain, want));
	free(buf);
	free(plain);
}

/* the store's rows: each banded key's ends right after it, with its unit */
static void test_values(void **state)
{
	(void)state;
	capsim_result_value *v = calloc(capsim_result_n_values, sizeof *v);
	size_t n = capsim_result_values(&with, v, capsim_result_n_values);
	size_t i = 0;
	while (i < n && strcmp(v[i].key, "step_time_s") != 0)
		i++;
	assert_true(i + 4 < n);
	assert_string_equal(v[i + 1].key, "step_time_s_lo");
	assert_string_equal(v[i + 4].key, "step_time_s_hi95");
	assert_string_equal(v[i + 4].unit, "s");
	assert_rel(v[i + 4].num, 1.5 * with.step.step_time_s, 1e-15);
	size_t plain = capsim_result_values(&without, v, capsim_result_n_values);
	assert_true(plain < n);
	for (size_t k = 0; k < plain; k++)
		assert_null(strstr(v[k].key, "_lo"));
	free(v);
}

/* the bus bandwidth's band of a collective: the nccl-tests stack's group,
 * here the whole quantity's */
static void test_busbw(void **state)
{
	(void)state;
	capsim_err_band b;
	assert_int_equal(capsim_eval_busbw_band(scen, model, 16, &b), 0);
	assert_true(b.has[CAPSIM_ERR_80] && !b.has[CAPSIM_ERR_95]);
	assert_rel(b.lo[CAPSIM_ERR_80], 0.85, 1e-15);
	assert_rel(b.hi[CAPSIM_ERR_80], 1.3, 1e-15);
	assert_int_equal(capsim_eval_busbw_band(scen, NULL, 16, &b), -1);
}

/* A catalog tree in dir/NAME: the shipped one linked, its error model
 * replaced by text (NULL: none) */
static void tree(const char *name, const char *text)
{
	assert_int_equal(testutil_sh("set -e; t='%s/%s'; mkdir -p \"$t/hardware/errors\"; "
				     "for f in '%s'/*; do [ \"$(basename \"$f\")\" = hardware ] || "
				     "ln -s \"$f\" \"$t/\"; done; for f in '%s'/hardware/*; do "
				     "[ \"$(basename \"$f\")\" = errors ] || ln -s \"$f\" "
				     "\"$t/hardware/\"; done", dir, name, CAPSIM_SOURCE_DIR,
				     CAPSIM_SOURCE_DIR), 0);
	if (!text)
		return;
	char path[256];
	snprintf(path, sizeof path, "%s/%s/hardware/errors/model.json", dir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* capsim CMD ... with CAPSIM_DATA the tree NAME: its exit status, stderr in
 * dir/NAME.err */
static int door(const char *name, const char *args)
{
	return testutil_sh("CAPSIM_DATA='%s/%s' '%s' %s >'%s/%s.out' 2>'%s/%s.err'", dir, name,
			   CAPSIM_BIN, args, dir, name, dir, name);
}

static int err_has(const char *name, const char *text)
{
	char path[256], buf[4096] = "";
	snprintf(path, sizeof path, "%s/%s.err", dir, name);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = '\0';
	fclose(f);
	if (!strstr(buf, text))
		print_error("stderr of %s lacks '%s':\n%s\n", name, text, buf);
	return strstr(buf, text) != NULL;
}

/* A bad model: run, scale, sweep and collective exit 2 naming the file and
 * the field; with --no-intervals they run. A missing one: exit 2 naming it. */
static void test_doors(void **state)
{
	(void)state;
	tree("bad", "{\"format\": \"capsim-error-model\", \"version\": 2}\n");
	tree("missing", NULL);
	const char *sc = "'" CAPSIM_SOURCE_DIR "/scenarios/default.xml'";
	char args[512];
	snprintf(args, sizeof args, "run %s --json", sc);
	assert_int_equal(door("bad", args), 2);
	assert_true(err_has("bad", "hardware/errors/model.json"));
	assert_true(err_has("bad", "version"));
	assert_true(err_has("bad", "--no-intervals"));
	assert_int_equal(door("missing", args), 2);
	assert_true(err_has("missing", "hardware/errors/model.json"));
	assert_true(err_has("missing", "cannot read"));
	snprintf(args, sizeof args, "scale %s --gpus 64", sc);
	assert_int_equal(door("bad", args), 2);
	assert_true(err_has("bad", "hardware/errors/model.json"));
	snprintf(args, sizeof args, "collective %s --op all-reduce --bytes 1MiB --ranks 8", sc);
	assert_int_equal(door("missing", args), 2);
	assert_true(err_has("missing", "hardware/errors/model.json"));
	snprintf(args, sizeof args, "collective %s --op all-reduce --bytes 1MiB --ranks 8 "
		 "--no-intervals", sc);
	assert_int_equal(door("missing", args), 0);
	snprintf(args, sizeof args, "run %s --json --no-intervals", sc);
	assert_int_equal(door("bad", args), 0);
}

/* --no-intervals gives what capsim gave before there were intervals: run's
 * JSON and text are the banded ones less their ends, bands and band line */
static void test_flag(void **state)
{
	(void)state;
	tree("good", NULL);
	assert_int_equal(testutil_sh("cp '%s/hardware/errors/model.json' "
				     "'%s/good/hardware/errors/'", CAPSIM_SOURCE_DIR, dir), 0);
	const char *sc = CAPSIM_SOURCE_DIR "/scenarios/default.xml";
	assert_int_equal(testutil_sh("cd '%s' && CAPSIM_DATA=good '%s' run '%s' >on.txt && "
				     "CAPSIM_DATA=good '%s' run '%s' --no-intervals >off.txt",
				     dir, CAPSIM_BIN, sc, CAPSIM_BIN, sc), 0);
	/* the banded text less the band line and each " (lo-hi)" after a value
	 * is the plain text, byte for byte */
	assert_int_equal(testutil_sh("cd '%s' && grep -v 'prediction interval' on.txt | "
				     "sed -E 's/^(  .{24} +[^ ]+( [^ (]+)?) \\([^)]*-[^)]*\\)/\\1/; "
				     "s/ \\(80%%: [^)]*\\)//' | cmp - off.txt", dir), 0);
}

/* docs/user-guide.md lists every banded key with the band it follows, and
 * no other key */
static void test_user_guide(void **state)
{
	(void)state;
	FILE *f = fopen(CAPSIM_SOURCE_DIR "/docs/user-guide.md", "r");
	assert_non_null(f);
	char line[512];
	int in = 0;
	size_t listed = 0;
	while (fgets(line, sizeof line, f)) {
		if (strstr(line, "<!-- band-keys:begin -->"))
			in = 1;
		else if (strstr(line, "<!-- band-keys:end -->"))
			break;
		if (!in || strncmp(line, "| `", 3) != 0)
			continue;
		char key[96], follows[64];
		if (sscanf(line, "| `%95[^`]` | %63[^|]|", key, follows) != 2)
			fail_msg("docs/user-guide.md: a band line reads '%s'", line);
		follows[strcspn(follows, " ")] = '\0';
		const capsim_result_key *k = capsim_result_key_find(key);
		if (!k || k->band == CAPSIM_BAND_NONE)
			fail_msg("docs/user-guide.md lists '%s', which follows no band", key);
		/* "power x step" is three words: compare the cell's start */
		if (strncmp(capsim_band_map_names[k->band], follows, strlen(follows)) != 0)
			fail_msg("docs/user-guide.md: '%s' follows '%s', the table says '%s'", key,
				 follows, capsim_band_map_names[k->band]);
		listed++;
	}
	fclose(f);
	size_t banded = 0;
	for (size_t i = 0; i < capsim_result_n_keys; i++)
		banded += capsim_result_keys[i].band != CAPSIM_BAND_NONE;
	assert_int_equal(listed, banded);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_step_band), cmocka_unit_test(test_per_step),
		cmocka_unit_test(test_power),	  cmocka_unit_test(test_power_limit),
		cmocka_unit_test(test_energy),	  cmocka_unit_test(test_owning),
		cmocka_unit_test(test_memory),	  cmocka_unit_test(test_scaling_pair),
		cmocka_unit_test(test_checkpoint), cmocka_unit_test(test_cost),
		cmocka_unit_test(test_json),	  cmocka_unit_test(test_text),
		cmocka_unit_test(test_values),	  cmocka_unit_test(test_busbw),
		cmocka_unit_test(test_doors),	  cmocka_unit_test(test_flag),
		cmocka_unit_test(test_user_guide),
	};
	return testutil_run_group(tests, setup, teardown);
}
