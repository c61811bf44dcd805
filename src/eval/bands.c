/* bands.c - the error model's bands on a result's predictions and the keys
 * that follow from them (eval.h; docs/model.md, "Error bands on results"). */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "eval.h"

const char *const capsim_band_map_names[CAPSIM_BAND__MAPS] = {
	[CAPSIM_BAND_NONE] = "",
	[CAPSIM_BAND_STEP] = "step",
	[CAPSIM_BAND_PER_STEP] = "1/step",
	[CAPSIM_BAND_MEMORY] = "memory",
	[CAPSIM_BAND_MARGIN] = "memory",
	[CAPSIM_BAND_MARGIN_RATIO] = "memory",
	[CAPSIM_BAND_POWER] = "power",
	[CAPSIM_BAND_ENERGY] = "power x step",
	[CAPSIM_BAND_OWNING] = "power",
	[CAPSIM_BAND_CHECKPOINT] = "checkpoint",
	[CAPSIM_BAND_CLOUD_COST] = "step",
	[CAPSIM_BAND_ONPREM_COST] = "power x step",
	[CAPSIM_BAND_STEP_PAIR] = "step, paired",
	[CAPSIM_BAND_COST] = "power x step when owned, step when rented",
};

typedef capsim_result R;

/* where the carried values sit in a result, in the order of
 * capsim_result_bands.carried */
static const size_t carried_at[CAPSIM_BAND_CARRIED] = {
	offsetof(R, power.gpu_w),
	offsetof(R, power.node_w),
	offsetof(R, power.it_w),
	offsetof(R, power.facility_w),
	offsetof(R, cost.opex_energy_per_year_usd),
	offsetof(R, cost.opex_per_year_usd),
	offsetof(R, cost.tco_usd),
	offsetof(R, cost.tco_npv_usd),
	offsetof(R, cost.onprem_cost_per_gpu_hour_usd),
	offsetof(R, cost.breakeven_utilization),
	offsetof(R, cost.breakeven_months),
};

/* the index in carried_at of the result's value at offset; -1: none */
static int carried_index(size_t offset)
{
	for (int i = 0; i < CAPSIM_BAND_CARRIED; i++)
		if (carried_at[i] == offset)
			return i;
	return -1;
}

/* the carried values with every group's GPU at f times its draw: the draws
 * from capsim_power_gpu_moved, the owner's money from the cost model on
 * them (the step, the floor, the failures and the fabric r's) */
static void carry(const capsim_scenario *s, const R *r, double f, double v[CAPSIM_BAND_CARRIED])
{
	capsim_power pm;
	capsim_power_gpu_moved(s, &r->power, f, &pm);
	capsim_cost cm;
	capsim_cost_inputs in = {
		.power = &pm,
		.layout = &r->layout,
		.reliab = &r->reliab,
		.fabric = r->fabric,
		.time_to_train_s = r->step.time_to_train_s,
	};
	capsim_cost_estimate(s, &in, &cm);
	for (int i = 0; i < CAPSIM_BAND_CARRIED; i++) {
		size_t o = carried_at[i];
		const char *base = o >= offsetof(R, cost) && o < offsetof(R, cost) + sizeof(((const R *)0)->cost) ?
					   (const char *)&cm - offsetof(R, cost) :
					   (const char *)&pm - offsetof(R, power);
		memcpy(&v[i], base + o, sizeof v[i]);
	}
}

/* the power band's ends carried, at each level that has one */
static void carry_power(const capsim_scenario *s, R *r)
{
	const capsim_err_band *b = &r->bands.q[CAPSIM_ERR_POWER];
	for (int l = 0; l < CAPSIM_ERR__LEVELS; l++) {
		r->bands.has_carried[l] = b->has[l] && r->power.gpu_w > 0;
		if (!r->bands.has_carried[l])
			continue;
		carry(s, r, b->lo[l], r->bands.carried[l][0]);
		carry(s, r, b->hi[l], r->bands.carried[l][1]);
	}
}

void capsim_result_set_bands(const capsim_scenario *s, const capsim_err_model *m,
			     capsim_result *r)
{
	memset(&r->bands, 0, sizeof r->bands);
	if (!m)
		return;
	r->bands.on = 1;
	capsim_err_features f;
	capsim_result_err_features(s, r, &f);
	capsim_err_band_of(m, CAPSIM_ERR_STEP, &f, &r->bands.q[CAPSIM_ERR_STEP]);
	capsim_err_band_of(m, CAPSIM_ERR_MEMORY, &f, &r->bands.q[CAPSIM_ERR_MEMORY]);
	capsim_err_band_of(m, CAPSIM_ERR_POWER, &f, &r->bands.q[CAPSIM_ERR_POWER]);
	/* no save path of the validation tables is the scenario's: the
	 * checkpoint's group keeps the GPU generation alone */
	capsim_err_features c = f;
	c.stack[0] = '\0';
	capsim_err_band_of(m, CAPSIM_ERR_CHECKPOINT, &c, &r->bands.q[CAPSIM_ERR_CHECKPOINT]);
	carry_power(s, r);
	capsim_err_diff dd;
	if (capsim_err_diff_band(m, CAPSIM_ERR_STEP, &f, &dd) == 0)
		for (int l = 0; l < CAPSIM_ERR__LEVELS; l++) {
			r->bands.has_step_pair[l] = dd.has[l];
			r->bands.step_pair_q[l] = dd.q[l];
		}
}

int capsim_eval_busbw_band(const capsim_scenario *s, const capsim_err_model *m, int ranks,
			   capsim_err_band *b)
{
	memset(b, 0, sizeof *b);
	if (!m)
		return -1;
	capsim_result r;
	memset(&r, 0, sizeof r);
	r.gpus = ranks;
	capsim_err_features f;
	capsim_result_err_features(s, &r, &f);
	snprintf(f.stack, sizeof f.stack, "nccl-tests");
	f.host_bound = 0;
	return capsim_err_band_of(m, CAPSIM_ERR_BUSBW, &f, b);
}

/* quantity q's factors at level l: 1, or 0 where r has none */
static int factors(const capsim_result *r, capsim_err_quantity q, int l, double *lo, double *hi)
{
	const capsim_err_band *b = &r->bands.q[q];
	if (!r->bands.on || !b->has[l])
		return 0;
	*lo = b->lo[l];
	*hi = b->hi[l];
	return 1;
}

/* two banded factors taken as independent: each as a centre and a
 * half-width on the log, the centres added and the half-widths in
 * quadrature */
static void combine(double al, double ah, double bl, double bh, double *lo, double *hi)
{
	double c = 0.5 * (log(al) + log(ah)) + 0.5 * (log(bl) + log(bh));
	double h = hypot(0.5 * (log(ah) - log(al)), 0.5 * (log(bh) - log(bl)));
	*lo = exp(c - h);
	*hi = exp(c + h);
}

/* the carried value i's factors at level l: its ends over the result's own
 * value; 0 where it has none, or an end is not finite */
static int carried_factors(const R *r, int i, int l, double *lo, double *hi)
{
	if (!r->bands.on || !r->bands.has_carried[l])
		return 0;
	double v;
	memcpy(&v, (const char *)r + carried_at[i], sizeof v);
	double a = r->bands.carried[l][0][i], b = r->bands.carried[l][1][i];
	if (!(v > 0) || !isfinite(v) || !isfinite(a) || !isfinite(b))
		return 0;
	*lo = a / v;
	*hi = b / v;
	return 1;
}

/* a carried factor x the step's: the two bands taken as independent; one
 * alone where the other has none */
static int with_step(const R *r, int i, int l, double *lo, double *hi)
{
	double sl = 1, sh = 1, pl = 1, ph = 1;
	int has_s = factors(r, CAPSIM_ERR_STEP, l, &sl, &sh);
	int has_p = carried_factors(r, i, l, &pl, &ph);
	if (!has_s || !has_p) {
		*lo = has_s ? sl : pl;
		*hi = has_s ? sh : ph;
		return has_s || has_p;
	}
	combine(sl, sh, pl, ph, lo, hi);
	return 1;
}

enum { CARRIED_FACILITY = 3, CARRIED_GPU_HOUR = 8 };

/* the smallest of the groups' capacity less peak x f, and its ratio to that
 * group's capacity */
static void margin_at(const capsim_result *r, double f, double *bytes, double *ratio)
{
	for (int g = 0; g < r->n_groups; g++) {
		const capsim_group_result *gr = &r->group[g];
		double m = gr->mem_capacity_bytes - gr->peak_mem_bytes * f;
		if (g == 0 || m < *bytes) {
			*bytes = m;
			*ratio = m / gr->mem_capacity_bytes;
		}
	}
}

/* the cloud's cost at step factor f: GPUs and storage over a wall time in
 * proportion to the step, egress fixed; as a factor on v */
static double cloud_factor(const capsim_result *r, double f)
{
	const capsim_cost *c = &r->cost;
	if (!(c->cloud_cost_usd > 0))
		return f;
	return ((c->cloud_gpu_usd + c->cloud_storage_usd) * f + c->cloud_egress_usd) /
	       c->cloud_cost_usd;
}

/* v's band under a map that scales it by a factor of one band's ends */
static int scaled(const capsim_result *r, capsim_band_map map, int l, double v, double *lo,
		  double *hi)
{
	double a, b;
	switch (map) {
	case CAPSIM_BAND_STEP: if (!factors(r, CAPSIM_ERR_STEP, l, &a, &b)) return 0; break;
	case CAPSIM_BAND_MEMORY: if (!factors(r, CAPSIM_ERR_MEMORY, l, &a, &b)) return 0; break;

	case CAPSIM_BAND_CHECKPOINT:
		if (!factors(r, CAPSIM_ERR_CHECKPOINT, l, &a, &b))
			return 0;
		break;
	case CAPSIM_BAND_ENERGY:
		if (!with_step(r, CARRIED_FACILITY, l, &a, &b))
			return 0;
		break;
	case CAPSIM_BAND_ONPREM_COST:
		if (!with_step(r, CARRIED_GPU_HOUR, l, &a, &b))
			return 0;
		break;
	case CAPSIM_BAND_PER_STEP:
		if (!factors(r, CAPSIM_ERR_STEP, l, &b, &a))
			return 0;
		a = 1 / a; /* the slowest step gives the least */
		b = 1 / b;
		break;
	case CAPSIM_BAND_COST:
		if (!r->cost.acquire_rent) {
			if (!with_step(r, CARRIED_GPU_HOUR, l, &a, &b))
				return 0;
			break;
		}
		if (!factors(r, CAPSIM_ERR_STEP, l, &a, &b)) /* it rents: the cloud's */
			return 0;
		a = cloud_factor(r, a);
		b = cloud_factor(r, b);
		break;
	case CAPSIM_BAND_STEP_PAIR:
		if (!r->bands.has_step_pair[l])
			return 0;
		a = exp(-r->bands.step_pair_q[l]);
		b = exp(r->bands.step_pair_q[l]);
		break;
	case CAPSIM_BAND_CLOUD_COST:
		if (!factors(r, CAPSIM_ERR_STEP, l, &a, &b))
			return 0;
		a = cloud_factor(r, a);
		b = cloud_factor(r, b);
		break;
	default: return 0;
	}
	*lo = v * a;
	*hi = v * b;
	return 1;
}

int capsim_result_band(const capsim_result *r, const capsim_result_key *k, int level,
		       double *lo, double *hi)
{
	if (!r->bands.on || k->band == CAPSIM_BAND_NONE || level < 0 ||
	    level >= CAPSIM_ERR__LEVELS || !capsim_result_has(r, k))
		return 0;
	if (k->band == CAPSIM_BAND_MARGIN || k->band == CAPSIM_BAND_MARGIN_RATIO) {
		double a, b, lb = 0, lr = 0, hb = 0, hr = 0;
		if (!factors(r, CAPSIM_ERR_MEMORY, level, &a, &b))
			return 0;
		margin_at(r, b, &lb, &lr); /* the largest peak leaves the least */
		margin_at(r, a, &hb, &hr);
		*lo = k->band == CAPSIM_BAND_MARGIN ? lb : lr;
		*hi = k->band == CAPSIM_BAND_MARGIN ? hb : hr;
		return 1;
	}
	double v = capsim_result_number(r, k);
	if (!isfinite(v))
		return 0;
	if (k->band == CAPSIM_BAND_POWER || k->band == CAPSIM_BAND_OWNING) {
		/* the carried ends themselves: a draw at most the GPU's limit, a
		 * cost from the cost model again */
		int i = carried_index(k->offset);
		double a, b;
		if (i < 0 || !carried_factors(r, i, level, &a, &b))
			return 0;
		*lo = r->bands.carried[level][0][i];
		*hi = r->bands.carried[level][1][i];
	} else if (!scaled(r, k->band, level, v, lo, hi)) {
		return 0;
	}
	if (*lo > *hi) { /* a negative value scaled */
		double t = *lo;
		*lo = *hi;
		*hi = t;
	}
	return 1;
}
