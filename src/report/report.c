/* report.c - collecting a procurement report: each design evaluated, the
 * scaling points, the goodput curve, the decision rule and its sensitivity;
 * see report.h. Writing is in write.c. */
#include "report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "reliab.h"
#include "xalloc.h"

const char *const capsim_rule_metric_names[CAPSIM_RULE__COUNT] = {
	"cost_to_train_usd", "wall_to_train_s", "cost_per_million_tokens_usd", "tco_usd"
};

/* the index of key k in the result-key table */
static size_t key_index(const capsim_result_key *k)
{
	return (size_t)(k - capsim_result_keys);
}

/* key without its unit suffix, underscores as spaces: for a name with no label */
static void key_words(const char *key, char *buf, size_t n)
{
	static const char *const units[] = { "_usd", "_s", "_w", "_bytes", "_gb_per_s" };
	size_t len = strlen(key);
	for (size_t u = 0; u < sizeof units / sizeof units[0]; u++) {
		size_t l = strlen(units[u]);
		if (len > l && strcmp(key + len - l, units[u]) == 0) {
			len -= l;
			break;
		}
	}
	snprintf(buf, n, "%.*s", (int)len, key);
	for (char *c = buf; *c; c++)
		if (*c == '_')
			*c = ' ';
}

void capsim_report_key_label(const char *key, char *buf, size_t n)
{
	const capsim_result_key *k = capsim_result_key_find(key);
	if (!k || !k->label) {
		key_words(key, buf, n);
		return;
	}
	if (k->depth > 0 && strncmp(k->label, "per ", 4) == 0)
		for (size_t i = key_index(k); i-- > 0;)
			if (capsim_result_keys[i].depth == 0 && capsim_result_keys[i].label) {
				snprintf(buf, n, "%s %s", capsim_result_keys[i].label, k->label);
				return;
			}
	snprintf(buf, n, "%s", k->label);
}

void capsim_report_metric_label(int metric, char *buf, size_t n)
{
	capsim_report_key_label(capsim_rule_metric_names[metric], buf, n);
}

/* the rule's metric of r; NAN when the design has none */
static double metric_of(const capsim_result *r, int metric)
{
	switch (metric) {
	case CAPSIM_RULE_COST_TO_TRAIN:
		return capsim_result_get(r, "cost_to_train_usd", NAN);
	case CAPSIM_RULE_TIME_TO_TRAIN:
		return capsim_result_wall_to_train_s(r);
	case CAPSIM_RULE_COST_PER_MTOK:
		return capsim_result_get(r, "cost_per_million_tokens_usd", NAN);
	default:
		return capsim_result_rented(r) ? NAN : capsim_result_get(r, "tco_usd", NAN);
	}
}

/* s edited by sets, evaluated (no scaling reference): 0 with *r filled */
static int eval_edited(const capsim_scenario *s, const capsim_catalog *cat, const capsim_set *sets,
		       size_t n, int reference, capsim_result *r, capsim_diags *d)
{
	capsim_scenario *t = capsim_xmalloc(sizeof *t);
	*t = *s;
	int rc = capsim_scenario_set_many(t, cat, sets, n, d);
	capsim_eval_opts o = { .no_reference = !reference };
	if (rc == 0)
		rc = capsim_eval(t, &o, r, d);
	free(t);
	return rc;
}

/* weak scaling: the nodes divided by 16, 8, 4, 2 and 1, the global batch with
 * them, where the job still fits its parallelism; the points that cannot be
 * made are left out */
static void scaling(capsim_report_design *x, const capsim_catalog *cat)
{
	static const int div[CAPSIM_REPORT_SCALE] = { 16, 8, 4, 2, 1 };
	const capsim_scenario *s = x->s;
	for (int k = 0; k < CAPSIM_REPORT_SCALE; k++) {
		/* every node group shrinks by the same factor */
		int whole = 1;
		for (int g = 0; g < s->n_groups; g++)
			whole &= s->groups[g].nodes % div[k] == 0;
		if (!whole)
			continue;
		double batch = s->global_batch / div[k];
		if (batch != floor(batch) || batch < 1)
			continue;
		char nodes[CAPSIM_MAX_GROUPS][32], paths[CAPSIM_MAX_GROUPS][CAPSIM_ID_LEN + 32];
		char gb[32];
		snprintf(gb, sizeof gb, "%.0f", batch);
		capsim_set sets[CAPSIM_MAX_GROUPS + 2] = { { "workload.global-batch", gb },
							   { "reliability.runs", "0" } };
		for (int g = 0; g < s->n_groups; g++) {
			snprintf(nodes[g], sizeof nodes[g], "%d", s->groups[g].nodes / div[k]);
			snprintf(paths[g], sizeof paths[g], "cluster.group.%d.nodes", g);
			sets[2 + g] = (capsim_set){ paths[g], nodes[g] };
		}
		capsim_diags d = { 0 };
		capsim_result r;
		const capsim_result *use = &r;
		int ok;
		if (div[k] == 1) {
			use = &x->r;
			ok = 1;
		} else {
			ok = eval_edited(s, cat, sets, 2 + (size_t)s->n_groups, 1, &r, &d) == 0;
		}
		if (ok) {
			int i = x->n_scale++;
			x->scale_gpus[i] = (long)capsim_result_get(use, "gpus", 0.0);
			x->scale_eff[i] = capsim_result_get(use, "scaling_efficiency", NAN);
			x->scale_tokens_per_s[i] = capsim_result_get(use, "tokens_per_s", 0.0);
			if (use == &r)
				capsim_result_free(&r);
		}
		capsim_diags_free(&d);
	}
}

/* goodput at checkpoint intervals from 5 minutes to a day, log-spaced */
static void goodput_curve(capsim_report_design *x)
{
	for (int i = 0; i < CAPSIM_REPORT_CKPT; i++)
		x->ckpt_s[i] = 300.0 * pow(86400.0 / 300.0, (double)i / (CAPSIM_REPORT_CKPT - 1));
	size_t n = capsim_result_goodput_at(x->s, &x->r, x->ckpt_s, CAPSIM_REPORT_CKPT,
					    x->ckpt_goodput);
	x->n_ckpt = n == CAPSIM_REPORT_CKPT ? CAPSIM_REPORT_CKPT : 0;
}

static void judge(capsim_report_design *x, const capsim_report_rule *rule)
{
	x->metric = metric_of(&x->r, rule->metric);
	x->meets = isfinite(x->metric);
	x->why_not[0] = '\0';
	if (!x->meets) {
		char label[48];
		capsim_report_metric_label(rule->metric, label, sizeof label);
		snprintf(x->why_not, sizeof x->why_not, "no %s (%s)", label,
			 rule->metric == CAPSIM_RULE_TCO ? "not an owned, priced cluster" :
			 "cost.acquire buy needs every part priced, rent a cloud offer of its GPU");
		return;
	}
	double cost = capsim_result_get(&x->r, "cost_to_train_usd", NAN);
	if (rule->budget_usd > 0 && !(cost <= rule->budget_usd)) {
		x->meets = 0;
		snprintf(x->why_not, sizeof x->why_not, "over the budget: costs $%.4gM to train",
			 cost / 1e6);
	} else if (rule->deadline_s > 0 && capsim_result_wall_to_train_s(&x->r) > rule->deadline_s) {
		x->meets = 0;
		snprintf(x->why_not, sizeof x->why_not, "past the deadline: %.1f days to train",
			 capsim_result_wall_to_train_s(&x->r) / 86400.0);
	}
}

/* the best two of the designs that meet the rule, given their metrics */
static void rank(const double *metric, const int *meets, size_t n, int *best, int *second)
{
	*best = *second = -1;
	for (size_t i = 0; i < n; i++) {
		if (!meets[i])
			continue;
		if (*best < 0 || metric[i] < metric[*best]) {
			*second = *best;
			*best = (int)i;
		} else if (*second < 0 || metric[i] < metric[*second]) {
			*second = (int)i;
		}
	}
}

static void decide(capsim_report *rep)
{
	double *m = capsim_xcalloc(rep->n, sizeof *m);
	int *ok = capsim_xcalloc(rep->n, sizeof *ok);
	for (size_t i = 0; i < rep->n; i++) {
		m[i] = rep->d[i].metric;
		ok[i] = rep->d[i].meets;
	}
	rank(m, ok, rep->n, &rep->winner, &rep->runner_up);
	free(m);
	free(ok);
}

/* ---- sensitivity ------------------------------------------------------------------ */

/* the inputs moved, each written in its field's unit (moved()) */
static const struct {
	const char *what, *path;
	int ratio;                  /* a share: capped at 100% */
} knobs[CAPSIM_REPORT_KNOBS] = {
	{ "utilisation", "cost.utilization", 1 },
	{ "energy price", "facility.energy.price", 0 },
	{ "node price", "cluster.node.price.value", 0 },
	{ "cloud price", "cost.cloud.rate.value", 0 },
};

/* every design's metric with knob k at factor f of its own value; NAN where
 * the design has no such input or does not meet the rule there */
static void moved(capsim_report *rep, int k, double f, const capsim_catalog *cat, double *m,
		  int *meets, double *value0)
{
	for (size_t i = 0; i < rep->n; i++) {
		const capsim_report_design *x = &rep->d[i];
		capsim_path_value v;
		char err[256];
		m[i] = NAN;
		meets[i] = 0;
		if (capsim_scenario_path_value(x->s, knobs[k].path, NULL, &v, err, sizeof err) < 0 ||
		    v.is_text || !(v.num > 0)) {
			m[i] = x->meets ? x->metric : NAN; /* unmoved: the input does not apply */
			meets[i] = x->meets;
			continue;
		}
		double nv = v.num * f;
		if (knobs[k].ratio && nv > 1.0)
			nv = 1.0;
		if ((int)i == rep->winner && value0)
			*value0 = nv;
		char text[64];
		switch (k) {
		case 0: snprintf(text, sizeof text, "%.17g", nv); break;
		case 1: snprintf(text, sizeof text, "$%.17g/J", nv); break;
		case 2: snprintf(text, sizeof text, "$%.17g", nv); break;
		default: snprintf(text, sizeof text, "$%.17g/s", nv); break;
		}
		capsim_set set = { knobs[k].path, text };
		capsim_diags d = { 0 };
		capsim_result r;
		if (eval_edited(x->s, cat, &set, 1, 0, &r, &d) == 0) {
			capsim_report_design t = *x;
			t.r = r;
			judge(&t, &rep->rule);
			m[i] = t.metric;
			meets[i] = t.meets;
			capsim_result_free(&r);
		}
		capsim_diags_free(&d);
	}
}

static void sensitivity(capsim_report *rep, const capsim_catalog *cat,
			capsim_report_progress progress, void *ctx, int *done, int total)
{
	rep->swing_share = 0.2;
	double *m = capsim_xcalloc(rep->n, sizeof *m);
	int *ok = capsim_xcalloc(rep->n, sizeof *ok);
	for (int k = 0; k < CAPSIM_REPORT_KNOBS; k++) {
		capsim_report_swing *w = &rep->swing[k];
		w->what = knobs[k].what;
		w->path = knobs[k].path;
		w->winner_low = w->winner_high = -1;
		if (rep->winner < 0)
			continue;
		capsim_path_value v;
		char err[256];
		const capsim_scenario *ws = rep->d[rep->winner].s;
		w->has = capsim_scenario_path_value(ws, w->path, NULL, &v, err, sizeof err) == 0 &&
			 !v.is_text && v.num > 0;
		if (!w->has)
			continue;
		w->base = v.num;
		int second;
		moved(rep, k, 1.0 - rep->swing_share, cat, m, ok, &w->low_value);
		rank(m, ok, rep->n, &w->winner_low, &second);
		w->low_metric = m[rep->winner];
		moved(rep, k, 1.0 + rep->swing_share, cat, m, ok, &w->high_value);
		rank(m, ok, rep->n, &w->winner_high, &second);
		w->high_metric = m[rep->winner];
		*done += 2;
		if (progress)
			progress(ctx, *done, total, w->what);
	}
	free(m);
	free(ok);
}

/* ---- the whole ---------------------------------------------------------------------- */

static void fabric_words(const capsim_scenario *s, char *buf, size_t n)
{
	static const char *const transports[] = { "InfiniBand", "RoCE", "TCP" };
	if (s->topology == CAPSIM_TOPO_NONE) {
		snprintf(buf, n, "none (one node)");
		return;
	}
	const char *t = transports[s->transport >= 0 && s->transport < 3 ? s->transport : 2];
	if (s->topology == CAPSIM_TOPO_SINGLE_SWITCH)
		snprintf(buf, n, "%s, one switch, %d rails", t, s->rails);
	else
		snprintf(buf, n, "%s, %d-tier fat tree, %g:1, %d rails", t, s->tiers,
			 s->oversubscription, s->rails);
}

int capsim_report_collect(capsim_report *rep, capsim_scenario **scenarios, size_t n,
			  const capsim_report_rule *rule, const capsim_catalog *cat,
			  capsim_report_progress progress, void *ctx, capsim_diags *d)
{
	memset(rep, 0, sizeof *rep);
	rep->rule = *rule;
	rep->winner = rep->runner_up = -1;
	time_t now = time(NULL);
	struct tm tm;
	strftime(rep->created, sizeof rep->created, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
	rep->d = capsim_xcalloc(n ? n : 1, sizeof *rep->d);
	rep->n = n;
	for (size_t i = 0; i < n; i++) {
		rep->d[i].s = scenarios[i];
		capsim_strlcpy(rep->d[i].label, scenarios[i]->name, sizeof rep->d[i].label);
		fabric_words(scenarios[i], rep->d[i].fabric, sizeof rep->d[i].fabric);
	}
	/* one workload: the same model and token budget in every design */
	for (size_t i = 1; i < n; i++) {
		const capsim_scenario *a = scenarios[0], *b = scenarios[i];
		if (strcmp(a->model.e.id, b->model.e.id) != 0 || a->tokens != b->tokens ||
		    a->seq_len != b->seq_len) {
			capsim_diags_add_at(d, b->file, "report: the designs must train one workload: "
					    "%s trains %s on %.4g tokens of %d, %s %s on %.4g tokens of %d",
					    a->name, a->model.e.id, a->tokens, a->seq_len, b->name,
					    b->model.e.id, b->tokens, b->seq_len);
			return -1;
		}
	}
	int total = (int)n * 2 + 2 * CAPSIM_REPORT_KNOBS, done = 0;
	for (size_t i = 0; i < n; i++) {
		capsim_report_design *x = &rep->d[i];
		capsim_eval_opts o = { 0 };
		if (capsim_eval(x->s, &o, &x->r, d) < 0) {
			capsim_diags_add_at(d, x->s->file, "report: design '%s' cannot be evaluated",
					    x->label);
			return -1;
		}
		x->evaluated = 1;
		if (progress)
			progress(ctx, ++done, total, x->label);
		scaling(x, cat);
		goodput_curve(x);
		judge(x, rule);
		if (progress)
			progress(ctx, ++done, total, x->label);
	}
	decide(rep);
	sensitivity(rep, cat, progress, ctx, &done, total);
	return 0;
}

void capsim_report_free(capsim_report *rep)
{
	for (size_t i = 0; rep->d && i < rep->n; i++) {
		if (rep->d[i].evaluated)
			capsim_result_free(&rep->d[i].r);
		free(rep->d[i].s);
	}
	free(rep->d);
	memset(rep, 0, sizeof *rep);
}

/* ---- the winner against the runner-up, on correlated error ------------------------------- */

/* x's TCO band at 80% (the power's carried through the busy hours'
 * energy: bands.c), on a copy of its result; 0 where it has none */
static int tco_band(const capsim_report_design *x, const capsim_err_model *m, double *lo,
		    double *hi)
{
	capsim_result banded = x->r; /* the bands alone are set: nothing owned moves */
	capsim_result_set_bands(x->s, m, &banded);
	return capsim_result_band(&banded, capsim_result_key_find("tco_usd"), CAPSIM_ERR_80, lo,
				  hi);
}

/* the TCO rule: the rest of the TCO is priced inputs, so its error is the
 * power's through the busy hours' energy, each design's band its own */
static void tco_compare(const capsim_report_design *w, const capsim_report_design *r,
			const capsim_err_model *m, capsim_report_cmp *c)
{
	double wl, wh, rl, rh;
	c->from_power = 1;
	c->has = tco_band(w, m, &wl, &wh) && tco_band(r, m, &rl, &rh) &&
		 capsim_err_compare_bands(w->metric, wl, wh, r->metric, rl, rh, &c->cmp) == 0;
	if (!c->has)
		snprintf(c->why_none, sizeof c->why_none, "the on-prem TCO is priced inputs over a "
			 "fixed horizon but for the busy hours' energy, and the error model has no "
			 "band of the power for these designs");
}

void capsim_report_compare(capsim_report *rep, const capsim_err_model *m)
{
	capsim_report_cmp *c = &rep->cmp;
	memset(c, 0, sizeof *c);
	if (!m || rep->winner < 0 || rep->runner_up < 0)
		return;
	c->done = 1;
	const capsim_report_design *w = &rep->d[rep->winner], *r = &rep->d[rep->runner_up];
	if (rep->rule.metric == CAPSIM_RULE_TCO) {
		tco_compare(w, r, m, c);
		return;
	}
	capsim_err_features fw, fr;
	capsim_result_err_features(w->s, &w->r, &fw);
	capsim_result_err_features(r->s, &r->r, &fr);
	snprintf(c->gen_stack[0], sizeof c->gen_stack[0], "%s / %s", fw.gen[0] ? fw.gen : "no "
		 "validated generation", fw.stack);
	snprintf(c->gen_stack[1], sizeof c->gen_stack[1], "%s / %s", fr.gen[0] ? fr.gen : "no "
		 "validated generation", fr.stack);
	c->has = capsim_err_compare(m, CAPSIM_ERR_STEP, &fw, w->metric, &fr, r->metric,
				    &c->cmp) == 0;
	if (!c->has)
		snprintf(c->why_none, sizeof c->why_none, "the error model has no band of the "
			 "step time for these designs");
}

/* ---- the summary table ---------------------------------------------------------------- */

const capsim_report_column capsim_report_columns[] = {
	{ "design", "design", "" },
	{ "gpus", "GPUs", "" },
	{ "nodes", "nodes", "" },
	{ "fabric", "fabric", "" },
	{ "acquire", "bought or rented", "" },
	{ "wall_to_train_s", "time to train", "s" },
	{ "cost_to_train_usd", "cost to train", "USD" },
	{ "tco_usd", "on-prem TCO", "USD" },
	{ "cloud_cost_usd", "cloud cost", "USD" },
	{ "breakeven_utilization", "break-even utilisation", "1" },
	{ "breakeven_months", "break-even month", "" },
	{ "cost_per_million_tokens_usd", "cost per million tokens", "USD" },
	{ "power_it_w", "IT power", "W" },
	{ "power_facility_w", "facility power", "W" },
	{ "racks", "racks", "" },
	{ "goodput", "goodput", "1" },
	{ "interruptions", "interruptions", "" },
	{ "memory_margin_bytes", "memory headroom", "bytes" },
	{ "tokens_per_s", "tokens/s", "" },
	{ "mfu", "MFU", "1" },
};
const size_t capsim_report_n_columns = sizeof capsim_report_columns /
				       sizeof capsim_report_columns[0];

int capsim_report_cell(const capsim_report *rep, size_t i, size_t c, double *num,
		       const char **text)
{
	const capsim_report_design *x = &rep->d[i];
	const char *key = capsim_report_columns[c].key;
	*text = NULL;
	if (strcmp(key, "design") == 0) {
		*text = x->label;
		return 1;
	}
	if (strcmp(key, "fabric") == 0) {
		*text = x->fabric;
		return 1;
	}
	if (strcmp(key, "acquire") == 0) {
		*text = capsim_result_rented(&x->r) ? "rented" : "bought";
		return 1;
	}
	if (strcmp(key, "wall_to_train_s") == 0) {
		*num = capsim_result_wall_to_train_s(&x->r);
		return 1;
	}
	const capsim_result_key *k = capsim_result_key_find(key);
	if (!k || !capsim_result_has(&x->r, k))
		return 0;
	if (k->kind == CAPSIM_RK_TEXT) {
		*text = (const char *)&x->r + k->offset;
		return 1;
	}
	*num = capsim_result_number(&x->r, k);
	return isfinite(*num);
}
