/* cost.c - owning, renting and bursting; see cost.h. */
#include "cost.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "scenario.h"
#include "xalloc.h"

/* The fabric's cables: by reach class where the layout has them all priced
 * (cost.cable-*), else cost.cabling a GPU. */
static double cabling_usd(const capsim_scenario *s, const capsim_cost_inputs *in,
			  capsim_cost *c)
{
	if (in->layout && in->layout->has_layout) {
		double usd = 0.0;
		int priced = 1;
		for (int k = 0; k < CAPSIM_CABLE__COUNT; k++) {
			if (!in->layout->total[k])
				continue;
			if (!(s->cable_usd[k] > 0))
				priced = 0;
			usd += (double)in->layout->total[k] * s->cable_usd[k];
		}
		if (priced) {
			c->cabling_by_reach = 1;
			return usd;
		}
	}
	return s->cabling_usd_per_gpu * (double)capsim_scenario_gpus(s);
}

/* what every GPU of every node group draws over its idle power in the step */
static double busy_gpus_w(const capsim_power *p)
{
	double w = 0.0;
	for (int g = 0; g < p->n_groups; g++) {
		const capsim_power_group *pg = &p->group[g];
		w += (double)pg->nodes * pg->gpus_per_node * (pg->gpu_w - pg->gpu_idle_w);
	}
	return w;
}

/* one more part without a price, in c->unpriced ("A", "A and B", "A, B and C") */
static void unpriced(capsim_cost *c, const char *what)
{
	char *u = c->unpriced;
	size_t n = sizeof c->unpriced;
	if (!u[0]) {
		capsim_strlcpy(u, what, n);
		return;
	}
	char *and = strstr(u, " and ");
	if (and)
		*and = ',';
	if (and)
		memmove(and + 1, and + 4, strlen(and + 4) + 1); /* " and " -> ", " */
	size_t len = strlen(u);
	snprintf(u + len, n - len, " and %s", what);
}

/* The capex of every part class where each has a price (the nodes of every
 * group, the fabric's switches, the cables, the shared file system); a part
 * without a price is named in c->unpriced and leaves has_capex 0. */
static void capex_parts(const capsim_scenario *s, const capsim_cost_inputs *in, capsim_cost *c)
{
	int groups = s->n_groups > 0 ? s->n_groups : 1;
	for (int g = 0; g < groups; g++) {
		capsim_group_view v;
		capsim_scenario_group(s, g, &v);
		if (!(v.node->price_usd > 0)) {
			char what[160];
			snprintf(what, sizeof what, "node '%s' (%s.price.value)", v.node->e.id,
				 s->n_groups > 1 ? "cluster.group.ID" : "cluster.node");
			unpriced(c, what);
			continue;
		}
		c->capex_nodes_usd += v.nodes * v.node->price_usd;
	}
	int switches = in->fabric.leaves + in->fabric.spines + in->fabric.cores;
	if (switches > 0) {
		if (!(s->has_switch && s->fabric_switch.price_usd > 0)) {
			char what[160];
			snprintf(what, sizeof what,
				 "fabric switch '%s' (cluster.fabric.switch.price.value)",
				 s->has_switch ? s->fabric_switch.e.id : "none given");
			unpriced(c, what);
		}
		c->capex_switches_usd = switches * s->fabric_switch.price_usd;
	}
	if (c->unpriced[0]) {
		size_t len = strlen(c->unpriced);
		snprintf(c->unpriced + len, sizeof c->unpriced - len, " %s no price",
			 strstr(c->unpriced, " and ") ? "have" : "has");
		return;
	}
	c->has_capex = 1;
	c->capex_cabling_usd = cabling_usd(s, in, c);
	/* the shared file system where it has a price; without one the capex
	 * leaves it out and says so */
	if (s->has_shared_storage) {
		if (s->shared_storage.price_usd > 0)
			c->capex_storage_usd = s->shared_storage.price_usd;
		else
			snprintf(c->capex_excludes, sizeof c->capex_excludes,
				 "shared storage '%s' (no price: cluster.storage.shared.price.value)",
				 s->shared_storage_ref[0] ? s->shared_storage_ref :
							    s->shared_storage.e.id);
	}
	c->capex_usd = c->capex_nodes_usd + c->capex_switches_usd + c->capex_cabling_usd +
		       c->capex_storage_usd;
}

/* The facility's energy a year with the cluster busy all the time (the
 * step's facility power, cooling in its PUE) and idle all the time (its
 * GPUs at idle power), at the facility's price. */
static void energy_years(const capsim_scenario *s, const capsim_power *p, double *busy,
			 double *idle)
{
	double price = s->has_facility ? s->facility.energy_usd_per_j : 0.0;
	double idle_w = p->facility_w - p->pue * busy_gpus_w(p);
	*busy = p->facility_w * CAPSIM_YEAR_S * price;
	*idle = idle_w * CAPSIM_YEAR_S * price;
}

/* Opex a year by class, each its rate x its base, and their sum. */
static void opex_classes(const capsim_scenario *s, const capsim_cost_inputs *in, capsim_cost *c)
{
	double busy, idle, u = s->utilization;
	energy_years(s, in->power, &busy, &idle);
	c->opex_energy_per_year_usd = u * busy + (1 - u) * idle;
	/* on the power a colocation contract provisions: every node at its peak
	 * by what it holds, the switch trays, switches at their maximum, storage */
	c->opex_colocation_per_year_usd = s->has_facility ? s->facility.colo_usd_per_w_s *
								    in->power->it_peak_w *
								    CAPSIM_YEAR_S : 0.0;
	const double base[CAPSIM_SUPPORT__COUNT] = {
		[CAPSIM_SUPPORT_SERVERS] = c->capex_nodes_usd,
		[CAPSIM_SUPPORT_SWITCHES] = c->capex_switches_usd,
		[CAPSIM_SUPPORT_CABLES] = c->capex_cabling_usd,
		[CAPSIM_SUPPORT_STORAGE] = c->capex_storage_usd,
	};
	double support = 0.0;
	for (int k = 0; k < CAPSIM_SUPPORT__COUNT; k++) {
		c->opex_support_per_year_usd[k] = s->support_share[k] * base[k];
		support += c->opex_support_per_year_usd[k];
	}
	c->opex_insurance_per_year_usd = s->insurance_share * c->capex_usd;
	c->opex_staff_per_year_usd = s->staff_usd_per_s * CAPSIM_YEAR_S;
	c->opex_per_year_usd = c->opex_energy_per_year_usd + c->opex_colocation_per_year_usd;
	c->opex_per_year_usd += support + c->opex_insurance_per_year_usd + c->opex_staff_per_year_usd;
}

double capsim_cost_resale_share(const capsim_scenario *s, double age_s)
{
	return s->resale * pow(1.0 - s->resale_decline, age_s / CAPSIM_YEAR_S);
}

/* The capex less what the nodes and switches resell for at age t */
static double net_capex(const capsim_scenario *s, const capsim_cost *c, double t_s)
{
	return c->capex_usd -
	       (c->capex_nodes_usd + c->capex_switches_usd) * capsim_cost_resale_share(s, t_s);
}

double capsim_cost_rent_less_own(const capsim_scenario *s, const capsim_cost *c, double t_s)
{
	if (!c->has_capex || !c->has_cloud_cost)
		return NAN;
	double gpus = (double)capsim_scenario_gpus(s);
	double rent = s->utilization * s->cloud.rate_usd_per_gpu_s * gpus * t_s;
	return rent - net_capex(s, c, t_s) - c->opex_per_year_usd * t_s / CAPSIM_YEAR_S;
}

/* The TCO over the horizon, its present value (the capex now, the opex in
 * monthly payments at the end of each month and the residual at the
 * horizon, discounted at (1 + rate) a year), and a busy GPU-hour's cost. */
static void horizon_totals(const capsim_scenario *s, capsim_cost *c)
{
	double H = s->horizon_s, gpus = (double)capsim_scenario_gpus(s);
	c->residual_usd = c->capex_usd - net_capex(s, c, H);
	c->tco_usd = c->capex_usd - c->residual_usd + c->opex_per_year_usd * H / CAPSIM_YEAR_S;
	double months = H / (CAPSIM_YEAR_S / 12.0), pv = 0.0;
	double v = s->discount_rate > 0 ? pow(1.0 + s->discount_rate, -1.0 / 12.0) : 1.0;
	for (int m = 1; m <= (int)ceil(months - 1e-9); m++) {
		double part = m <= months ? 1.0 : months - (m - 1);
		pv += part * c->opex_per_year_usd / 12.0 * pow(v, m);
	}
	c->tco_npv_usd = c->capex_usd - c->residual_usd * pow(v, months) + pv;
	c->onprem_cost_per_gpu_hour_usd = c->tco_usd / (gpus * H / 3600.0 * s->utilization);
}

/* The break-even against the cloud offer, over the horizon H, undiscounted.
 * Owning at utilisation u costs F + u X (F: the capex less the residual, and
 * the opex but the busy energy's extra; X: that extra), renting the same
 * busy hours u R, so u* = F / (R - X). The payback: the one root of
 * capsim_cost_rent_less_own in (0, H], which exists exactly when its value
 * at H, u (R - X) - F, is not negative, i.e. when u* <= u. */
static void breakeven(const capsim_scenario *s, const capsim_cost_inputs *in, capsim_cost *c)
{
	double H = s->horizon_s, busy, idle;
	energy_years(s, in->power, &busy, &idle);
	double fixed_year = c->opex_per_year_usd - c->opex_energy_per_year_usd + idle;
	double F = net_capex(s, c, H) + fixed_year * H / CAPSIM_YEAR_S;
	double X = (busy - idle) * H / CAPSIM_YEAR_S;
	double R = s->cloud.rate_usd_per_gpu_s * (double)capsim_scenario_gpus(s) * H;
	c->breakeven_utilization = R > X ? F / (R - X) : INFINITY;
	c->breakeven_months = INFINITY;
	if (!(capsim_cost_rent_less_own(s, c, H) >= 0)) {
		capsim_strlcpy(c->payback, "never", sizeof c->payback);
		return;
	}
	double lo = 0.0, hi = H;
	for (int i = 0; i < 200 && hi - lo > 1e-9 * H; i++) {
		double mid = 0.5 * (lo + hi);
		if (capsim_cost_rent_less_own(s, c, mid) < 0)
			lo = mid;
		else
			hi = mid;
	}
	c->breakeven_months = hi / (CAPSIM_YEAR_S / 12.0);
	CAPSIM_ASSERT(hi <= H && capsim_cost_rent_less_own(s, c, hi) >= 0);
}

/* Owning the cluster (docs/model.md, "Money for the training run"): the
 * capex of its parts where each has a price, the opex a year by class, the
 * TCO over the horizon (the capex less the residual value, plus the opex),
 * a busy GPU-hour's cost, the training run's, and the break-even against
 * the cloud offer. */
static void owning(const capsim_scenario *s, const capsim_cost_inputs *in, double wall,
		   capsim_cost *c)
{
	capex_parts(s, in, c);
	if (!c->has_capex)
		return;
	opex_classes(s, in, c);
	horizon_totals(s, c);
	double gpus = (double)capsim_scenario_gpus(s);
	c->onprem_cost_to_train_usd = c->onprem_cost_per_gpu_hour_usd * gpus * wall / 3600.0;
	if (c->has_cloud_cost)
		breakeven(s, in, c);
}

/* The same work on the cloud offer (docs/model.md, "Money for the training
 * run"): the step slower by cost.network-penalty, the job interrupted by its
 * hardware as on the cluster and, for spot, by the offer's reclaimed
 * instances (each a month's share of them), its checkpoints as the
 * scenario's at Young's interval for that rate; then its price: the GPUs,
 * the dataset and a checkpoint kept in the offer's storage while the run
 * lasts, and the trained weights taken out at the end. */
static void cloud_run(const capsim_scenario *s, const capsim_cost_inputs *in, capsim_cost *c)
{
	const capsim_reliab *rel = in->reliab;
	double ttt = in->time_to_train_s / (1.0 - s->cloud_network_penalty);
	double gpi = s->cloud.gpus_per_instance > 0 ? s->cloud.gpus_per_instance : 1;
	double gpus = (double)capsim_scenario_gpus(s);
	double instances = ceil(gpus / gpi);
	double month = CAPSIM_YEAR_S / 12.0;
	c->cloud_reclaim_rate_per_s = instances * s->cloud.reclaimed_per_month / month;
	double rate = (rel->job_mttf_s > 0 ? 1.0 / rel->job_mttf_s : 0.0) +
		      c->cloud_reclaim_rate_per_s;
	double interval;
	double g = rate > 0 ? capsim_reliab_goodput_under(s, rel, 1.0 / rate, &interval) : 0.0;
	c->cloud_goodput = g > 0 ? g : 1.0;
	c->cloud_wall_to_train_s = ttt / c->cloud_goodput;
	c->cloud_reclaims = c->cloud_wall_to_train_s * c->cloud_reclaim_rate_per_s;
	c->has_cloud_cost = 1;
	c->cloud_gpu_usd = s->cloud.rate_usd_per_gpu_s * gpus * c->cloud_wall_to_train_s;
	c->cloud_storage_usd = s->cloud.storage_usd_per_byte_s *
			       (s->dataset_bytes + rel->checkpoint_bytes) * c->cloud_wall_to_train_s;
	c->cloud_egress_usd = s->cloud.egress_usd_per_byte * rel->weights_bytes;
	c->cloud_cost_usd = c->cloud_gpu_usd + c->cloud_storage_usd + c->cloud_egress_usd;
	c->cloud_cost_per_million_tokens_usd = c->cloud_cost_usd / (s->tokens / 1e6);
}

void capsim_cost_estimate(const capsim_scenario *s, const capsim_cost_inputs *in,
			  capsim_cost *out)
{
	memset(out, 0, sizeof *out);
	double wall = in->reliab->wall_to_train_s > 0 ? in->reliab->wall_to_train_s :
							in->time_to_train_s;
	if (s->has_facility && s->facility.energy_usd_per_j > 0) {
		out->has_energy_cost = 1;
		out->energy_cost_usd = in->power->facility_w * wall * s->facility.energy_usd_per_j;
	}
	/* the cloud offer prices the same work where it rents the same GPU */
	if (capsim_scenario_cloud_priced(s))
		cloud_run(s, in, out);
	owning(s, in, wall, out);
	CAPSIM_ASSERT(!out->has_capex || (out->capex_usd >= 0 && out->opex_per_year_usd >= 0 &&
					   out->tco_usd >= 0));
	CAPSIM_ASSERT(!out->has_cloud_cost || out->cloud_cost_usd >= out->cloud_gpu_usd);
	out->acquire_rent = s->acquire == 1;
	if (out->acquire_rent ? out->has_cloud_cost : out->has_capex) {
		out->has_cost_to_train = 1;
		out->cost_to_train_usd = out->acquire_rent ? out->cloud_cost_usd :
							      out->onprem_cost_to_train_usd;
		out->cost_per_million_tokens_usd = out->cost_to_train_usd / (s->tokens / 1e6);
	}
}

/* ---- the burst plan (docs/model.md, "Money for the training run") ---- */

int capsim_cost_burst_job(const capsim_scenario *s, capsim_scenario *out)
{
	if (!s->has_burst || s->burst_max_gpus <= 0 || s->n_groups > 1 ||
	    strcmp(s->burst.gpu, s->gpu.e.id) != 0 || !(s->burst.rate_usd_per_gpu_s > 0))
		return 0;
	int nodes = s->burst_max_gpus / s->node.gpus;
	long model_par = (long)s->tp * s->pp * s->cp;
	long gpus = (long)nodes * s->node.gpus;
	if (nodes < 1 || gpus % model_par != 0 || s->dp < 1)
		return 0;
	char n_s[32], dp_s[32], batch_s[48];
	snprintf(n_s, sizeof n_s, "%d", nodes);
	snprintf(dp_s, sizeof dp_s, "%ld", gpus / model_par);
	snprintf(batch_s, sizeof batch_s, "%.17g", s->global_batch / s->dp * (double)(gpus / model_par));
	const capsim_set edits[] = {
		{ "cluster.nodes", n_s },
		{ "workload.parallelism.dp", dp_s },
		{ "workload.global-batch", batch_s },
	};
	*out = *s;
	capsim_diags scratch = { 0 };
	int rc = capsim_scenario_set_many(out, NULL, edits, sizeof edits / sizeof edits[0],
					  &scratch);
	capsim_diags_free(&scratch);
	return rc == 0;
}

void capsim_cost_burst_plan(const capsim_scenario *s, double on, double burst, int burst_gpus,
			    capsim_cost *c)
{
	if (!(on + burst > 0))
		return;
	CAPSIM_ASSERT(on >= 0 && burst >= 0 && burst_gpus > 0);
	c->has_burst_plan = 1;
	c->burst_gpus = burst_gpus;
	c->burst_tokens_per_s = burst;
	c->burst_share = burst / (on + burst);
	c->burst_wall_to_train_s = s->tokens / (on + burst);
	c->burst_cost_usd = s->burst.rate_usd_per_gpu_s * (double)burst_gpus *
			    c->burst_wall_to_train_s;
	c->burst_plan_cost_usd = c->burst_cost_usd;
	if (c->has_capex)
		c->burst_plan_cost_usd += c->onprem_cost_per_gpu_hour_usd *
					  (double)capsim_scenario_gpus(s) *
					  c->burst_wall_to_train_s / 3600.0;
}
