/* bands.c - the error model's bands on a result's predictions and the keys
 * that follow from them (eval.h; docs/model.md, "Error bands on results"). */
#include <math.h>
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
	[CAPSIM_BAND_CHECKPOINT] = "checkpoint",
	[CAPSIM_BAND_CLOUD_COST] = "step",
	[CAPSIM_BAND_COST] = "step",
};

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

/* power x step: each band as a centre and half-width on the log; the
 * centres add, the half-widths in quadrature (the two errors taken as
 * independent); one band alone where the other has none */
static int energy_factors(const capsim_result *r, int l, double *lo, double *hi)
{
	double sl, sh, pl, ph;
	int has_s = factors(r, CAPSIM_ERR_STEP, l, &sl, &sh);
	int has_p = factors(r, CAPSIM_ERR_POWER, l, &pl, &ph);
	if (!has_s || !has_p) {
		*lo = has_s ? sl : pl;
		*hi = has_s ? sh : ph;
		return has_s || has_p;
	}
	double c = 0.5 * (log(sl) + log(sh)) + 0.5 * (log(pl) + log(ph));
	double h = hypot(0.5 * (log(sh) - log(sl)), 0.5 * (log(ph) - log(pl)));
	*lo = exp(c - h);
	*hi = exp(c + h);
	return 1;
}

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
	case CAPSIM_BAND_POWER: if (!factors(r, CAPSIM_ERR_POWER, l, &a, &b)) return 0; break;
	case CAPSIM_BAND_CHECKPOINT:
		if (!factors(r, CAPSIM_ERR_CHECKPOINT, l, &a, &b))
			return 0;
		break;
	case CAPSIM_BAND_ENERGY: if (!energy_factors(r, l, &a, &b)) return 0; break;
	case CAPSIM_BAND_PER_STEP:
		if (!factors(r, CAPSIM_ERR_STEP, l, &b, &a))
			return 0;
		a = 1 / a; /* the slowest step gives the least */
		b = 1 / b;
		break;
	case CAPSIM_BAND_CLOUD_COST:
	case CAPSIM_BAND_COST:
		if (!factors(r, CAPSIM_ERR_STEP, l, &a, &b))
			return 0;
		if (map == CAPSIM_BAND_CLOUD_COST || r->cost.acquire_rent) {
			a = cloud_factor(r, a);
			b = cloud_factor(r, b);
		}
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
	if (!isfinite(v) || !scaled(r, k->band, level, v, lo, hi))
		return 0;
	if (*lo > *hi) { /* a negative value scaled */
		double t = *lo;
		*lo = *hi;
		*hi = t;
	}
	return 1;
}
