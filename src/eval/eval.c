/* eval.c - one scenario to one result; see eval.h. */
#include "eval.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "catalog.h"
#include "fabric.h"
#include "scenario.h"
#include "xalloc.h"
#include "xml.h"

void capsim_init(void)
{
	capsim_xml_init();
	size_t n;
	(void)capsim_scenario_set_paths(&n);
	(void)capsim_catalog_default_root(); /* found once, read-only after */
	gsl_set_error_handler_off();
}

/* ---- the reference for scaling efficiency ---- */

/* The same job on the fewest whole nodes of group g that hold one replica
 * (tp x pp x cp GPUs): dp = 1 when a replica fills its nodes, else the
 * replicas that fill one node. The global batch keeps the micro-batches
 * per replica (weak scaling); no straggler (it is one GPU of the big
 * cluster); the optimizer step keeps the job's ZeRO share (a replica of the
 * job does its own share, not the whole), so that the job can only lose
 * against it: to data-parallel communication, stragglers, jitter across
 * replicas, storage, slower groups. Edits go through
 * capsim_scenario_set_many, checks included.
 * Returns tokens/s per GPU, or 0 when the reference cannot run. */
static double reference_rate(const capsim_scenario *s, int g, const capsim_eval_opts *o,
			     int *ref_nodes, int *ref_dp)
{
	long replica = (long)s->tp * s->pp * s->cp;
	long G = s->node.gpus;
	long nodes = (replica + G - 1) / G;
	long dp = nodes * G / replica;
	if (nodes * G % replica)
		return 0.0;
	capsim_scenario *one = capsim_xmalloc(sizeof *one);
	capsim_scenario_as_group(s, g, one);
	char n_s[32], dp_s[32], batch_s[48];
	snprintf(n_s, sizeof n_s, "%ld", nodes);
	snprintf(dp_s, sizeof dp_s, "%ld", dp);
	snprintf(batch_s, sizeof batch_s, "%.0f", s->global_batch / s->dp * (double)dp);
	const capsim_set edits[] = {
		{ "cluster.nodes", n_s },
		{ "workload.parallelism.dp", dp_s },
		{ "workload.global-batch", batch_s },
		{ "workload.straggler", "1" },
		{ "workload.straggler-replica", "0" },
	};
	double rate = 0.0;
	capsim_diags scratch = { 0 };
	if (capsim_scenario_set_many(one, NULL, edits, sizeof edits / sizeof edits[0],
				     &scratch) == 0) {
		/* a replica of this job keeps its share of the optimizer step */
		one->optimizer_shard = s->dp * s->cp;
		capsim_fabric *f = capsim_fabric_build(one, &scratch);
		capsim_step r1;
		const capsim_knobs *kn = o && o->knobs ? o->knobs : &capsim_knobs_fitted;
		if (f && capsim_step_simulate_knobs(one, f, kn, &r1, &scratch) == 0 &&
		    r1.tokens_per_s > 0)
			rate = r1.tokens_per_s / (double)capsim_scenario_gpus(one);
		if (f)
			capsim_step_free(&r1);
		capsim_fabric_destroy(f);
	}
	capsim_diags_free(&scratch);
	free(one);
	*ref_nodes = (int)nodes;
	*ref_dp = (int)dp;
	return rate;
}

/* The best reference over the node groups: a mixed cluster is measured
 * against its fastest kind of node. */
static void scaling(const capsim_scenario *s, const capsim_eval_opts *o, capsim_result *r)
{
	double best = 0.0;
	int best_g = 0, nodes = 0, dp = 0;
	for (int g = 0; g < s->n_groups; g++) {
		int n, p;
		double rate = reference_rate(s, g, o, &n, &p);
		if (rate > best) {
			best = rate;
			best_g = g;
			nodes = n;
			dp = p;
		}
	}
	if (!(best > 0))
		return;
	r->has_scaling = 1;
	r->scaling_efficiency = r->step.tokens_per_s / (double)r->gpus / best;
	snprintf(r->scaling_reference, sizeof r->scaling_reference,
		 "tokens/s per GPU against the same job on %d %s node%s (dp %d)", nodes,
		 r->group[best_g].node, nodes == 1 ? "" : "s", dp);
}

#define YEAR_S 3.15576e7

/* The fabric's cables: by reach class where the layout has them all priced
 * (cost.cable-*), else cost.cabling a GPU. */
static double cabling_usd(const capsim_scenario *s, capsim_result *r)
{
	if (r->layout.has_layout) {
		double usd = 0.0;
		int priced = 1;
		for (int c = 0; c < CAPSIM_CABLE__COUNT; c++) {
			if (!r->layout.total[c])
				continue;
			if (!(s->cable_usd[c] > 0))
				priced = 0;
			usd += (double)r->layout.total[c] * s->cable_usd[c];
		}
		if (priced) {
			r->cabling_by_reach = 1;
			return usd;
		}
	}
	return s->cabling_usd_per_gpu * (double)capsim_scenario_gpus(s);
}

/* Owning the cluster (docs/model.md, "Money for the training run"): the
 * capex of its nodes, switches and cabling where each has a price, opex a
 * year (energy at the utilisation, colocation of its maximum IT power,
 * support), the TCO over the horizon (capex charged for the horizon's share
 * of its depreciation), a busy GPU-hour's cost, the training run's, and the
 * utilisation at which owning costs what renting the same busy hours does. */
static void owning(const capsim_scenario *s, capsim_result *r, double wall)
{
	double nodes_usd = 0.0, max_it_w = 0.0;
	int groups = s->n_groups > 0 ? s->n_groups : 1;
	for (int g = 0; g < groups; g++) {
		capsim_group_view v;
		capsim_scenario_group(s, g, &v);
		if (!(v.node->price_usd > 0))
			return;
		nodes_usd += v.nodes * v.node->price_usd;
		max_it_w += v.nodes * (v.node->power_max_w > 0 ? v.node->power_max_w : r->power.node_w);
	}
	int switches = r->leaves + r->spines + r->cores;
	double switch_usd = 0.0;
	if (switches > 0) {
		if (!(s->has_switch && s->fabric_switch.price_usd > 0))
			return;
		switch_usd = switches * s->fabric_switch.price_usd;
		max_it_w += r->power.switches_w;
	}
	max_it_w += r->power.storage_w;
	double gpus = (double)capsim_scenario_gpus(s);
	r->has_capex = 1;
	r->capex_cabling_usd = cabling_usd(s, r);
	/* the shared file system where it has a price; without one the capex
	 * leaves it out and says so */
	if (s->has_shared_storage) {
		if (s->shared_storage.price_usd > 0)
			r->capex_storage_usd = s->shared_storage.price_usd;
		else
			snprintf(r->capex_excludes, sizeof r->capex_excludes,
				 "shared storage '%s' (no price: cluster.storage.shared.price.value)",
				 s->shared_storage_ref[0] ? s->shared_storage_ref :
							    s->shared_storage.e.id);
	}
	r->capex_usd = nodes_usd + switch_usd + r->capex_cabling_usd + r->capex_storage_usd;
	double u = s->utilization > 0 ? s->utilization : 1.0;
	double H = s->horizon_s > 0 ? s->horizon_s : 3 * YEAR_S;
	double share = s->depreciation_s > 0 && H < s->depreciation_s ? H / s->depreciation_s : 1.0;
	/* energy: the step's facility power while busy, the GPUs at idle
	 * otherwise */
	double price = s->has_facility ? s->facility.energy_usd_per_j : 0.0;
	double pue = r->power.pue;
	double idle_w = r->power.facility_w -
			pue * gpus * (r->power.gpu_w - r->power.gpu_idle_w);
	double energy_busy_year = r->power.facility_w * YEAR_S * price;
	double energy_idle_year = idle_w * YEAR_S * price;
	double colo_year = s->has_facility ? s->facility.colo_usd_per_w_s * max_it_w * YEAR_S : 0.0;
	double support_year = s->support_per_s * r->capex_usd;
	double staff_year = s->staff_usd_per_s * YEAR_S;
	r->opex_per_year_usd = u * energy_busy_year + (1 - u) * energy_idle_year + colo_year +
			       support_year + staff_year;
	r->tco_usd = r->capex_usd * share + r->opex_per_year_usd * H / YEAR_S;
	/* present value: the capex share now, the opex in monthly payments at
	 * the end of each month, discounted at (1 + rate) a year */
	double months = H / (YEAR_S / 12.0), pv = 0.0;
	double v = s->discount_rate > 0 ? pow(1.0 + s->discount_rate, -1.0 / 12.0) : 1.0;
	for (int m = 1; m <= (int)ceil(months - 1e-9); m++) {
		double part = m <= months ? 1.0 : months - (m - 1);
		pv += part * r->opex_per_year_usd / 12.0 * pow(v, m);
	}
	r->tco_npv_usd = r->capex_usd * share + pv;
	r->onprem_cost_per_gpu_hour_usd = r->tco_usd / (gpus * H / 3600.0 * u);
	r->onprem_cost_to_train_usd = r->onprem_cost_per_gpu_hour_usd * gpus * wall / 3600.0;
	if (r->has_cloud_cost) {
		/* owning at u costs fixed + u x busy energy's extra; renting, u x
		 * the rate x GPUs x H */
		double fixed = r->capex_usd * share +
			       (energy_idle_year + colo_year + support_year + staff_year) * H / YEAR_S;
		double extra = (energy_busy_year - energy_idle_year) * H / YEAR_S;
		double rent = s->cloud.rate_usd_per_gpu_s * gpus * H;
		r->breakeven_utilization = rent > extra ? fixed / (rent - extra) : INFINITY;
		/* the month in which the capex, paid up front, has been paid back
		 * by the rent saved beyond the opex at utilisation u */
		double month = YEAR_S / 12.0;
		double saved = u * s->cloud.rate_usd_per_gpu_s * gpus * month -
			       r->opex_per_year_usd / 12.0;
		r->breakeven_months = saved > 0 ? r->capex_usd / saved : INFINITY;
	}
}

/* The same work on the cloud offer (docs/model.md, "Money for the training
 * run"): the step slower by cost.network-penalty, the job interrupted by its
 * hardware as on the cluster and, for spot, by the offer's reclaimed
 * instances (each a month's share of them), its checkpoints as the
 * scenario's at Young's interval for that rate. */
static void cloud_run(const capsim_scenario *s, capsim_result *r)
{
	double ttt = r->step.time_to_train_s / (1.0 - s->cloud_network_penalty);
	double gpi = s->cloud.gpus_per_instance > 0 ? s->cloud.gpus_per_instance : 1;
	double instances = ceil((double)capsim_scenario_gpus(s) / gpi);
	double month = YEAR_S / 12.0;
	r->cloud_reclaim_rate_per_s = instances * s->cloud.reclaimed_per_month / month;
	double rate = (r->reliab.job_mttf_s > 0 ? 1.0 / r->reliab.job_mttf_s : 0.0) +
		      r->cloud_reclaim_rate_per_s;
	double interval;
	double g = rate > 0 ? capsim_reliab_goodput_under(s, &r->reliab, 1.0 / rate, &interval) : 0.0;
	r->cloud_goodput = g > 0 ? g : 1.0;
	r->cloud_wall_to_train_s = ttt / r->cloud_goodput;
	r->cloud_reclaims = r->cloud_wall_to_train_s * r->cloud_reclaim_rate_per_s;
}

/* The burst plan (docs/model.md, "Money for the training run"): the burst
 * job is the same workload, with the same micro-batches per replica, on
 * max-gpus / GPUs-per-node nodes of the cluster's node type (the cloud offer
 * must rent the cluster's GPU); its data-parallel degree and global batch
 * follow its size. The two jobs share the token budget in proportion to
 * their throughput (goodput counted), so they finish together. A burst job
 * that cannot be built or run leaves the plan out. */
static void burst_plan(const capsim_scenario *s, const capsim_eval_opts *o, capsim_result *r)
{
	if (!s->has_burst || s->burst_max_gpus <= 0 || s->n_groups > 1 ||
	    strcmp(s->burst.gpu, s->gpu.e.id) != 0 || !(s->burst.rate_usd_per_gpu_s > 0))
		return;
	int nodes = s->burst_max_gpus / s->node.gpus;
	long model_par = (long)s->tp * s->pp * s->cp;
	long gpus = (long)nodes * s->node.gpus;
	if (nodes < 1 || gpus % model_par != 0 || s->dp < 1)
		return;
	capsim_scenario *b = capsim_xmalloc(sizeof *b);
	*b = *s;
	b->nodes = nodes;
	b->dp_given = 0;
	b->dp = (int)(gpus / model_par);
	b->global_batch = s->global_batch / s->dp * b->dp;
	b->has_burst = 0;
	b->burst_cloud[0] = '\0';
	b->has_cloud = 0;
	b->placement_slots = 0;
	capsim_eval_opts bo = { .knobs = o ? o->knobs : NULL, .no_reference = 1 };
	capsim_result rb;
	capsim_diags scratch = { 0 };
	int rc = capsim_eval(b, &bo, &rb, &scratch);
	capsim_diags_free(&scratch);
	free(b);
	if (rc < 0)
		return;
	double g_on = r->reliab.goodput > 0 ? r->reliab.goodput : 1.0;
	double g_b = rb.reliab.goodput > 0 ? rb.reliab.goodput : 1.0;
	double on = r->step.tokens_per_s * g_on;
	double burst = rb.step.tokens_per_s * g_b;
	capsim_result_free(&rb);
	if (!(on + burst > 0))
		return;
	r->has_burst_plan = 1;
	r->burst_gpus = (int)gpus;
	r->burst_tokens_per_s = burst;
	r->burst_share = burst / (on + burst);
	r->burst_wall_to_train_s = s->tokens / (on + burst);
	r->burst_cost_usd = s->burst.rate_usd_per_gpu_s * (double)gpus * r->burst_wall_to_train_s;
	r->burst_plan_cost_usd = r->burst_cost_usd;
	if (r->has_capex)
		r->burst_plan_cost_usd += r->onprem_cost_per_gpu_hour_usd *
					  (double)capsim_scenario_gpus(s) * r->burst_wall_to_train_s /
					  3600.0;
}

static int eval_once(const capsim_scenario *s, const capsim_eval_opts *o, capsim_result *r,
		     capsim_diags *d);

/* Cooling (docs/model.md, "Cooling"): where a rack's nodes give off more
 * heat at the step's load than its cooling removes, the GPUs run at the
 * power limit that fits, and the step is simulated again at the clock that
 * limit sustains; the load moves with the step, so the limit is found again
 * from the throttled step, a few times. */
int capsim_eval(const capsim_scenario *s, const capsim_eval_opts *o, capsim_result *r,
		capsim_diags *d)
{
	if (eval_once(s, o, r, d) < 0)
		return -1;
	double limit = capsim_cooling_limit(s, &r->power, d);
	if (limit < 0) {
		capsim_result_free(r);
		memset(r, 0, sizeof *r);
		return -1;
	}
	if (limit == 0)
		return 0;
	capsim_scenario *t = capsim_xmalloc(sizeof *t);
	*t = *s;
	double cap = s->gpu.power_limit_w > 0 ? fmin(s->gpu.power_limit_w, s->gpu.tdp_w) :
						s->gpu.tdp_w;
	int rc = 0;
	for (int k = 0; k < 8 && limit > 0; k++) {
		cap = fmin(cap, limit);
		t->gpu.power_limit_w = cap;
		capsim_result_free(r);
		if (eval_once(t, o, r, d) < 0) {
			rc = -1;
			break;
		}
		limit = capsim_cooling_limit(t, &r->power, d);
		if (limit < 0) {
			capsim_result_free(r);
			memset(r, 0, sizeof *r);
			rc = -1;
			break;
		}
	}
	if (rc == 0) {
		r->power.throttle_limit_w = cap;
		r->power.clock_scale = capsim_power_clock_scale(t->gpu.tdp_w, cap);
	}
	free(t);
	return rc;
}

static int eval_once(const capsim_scenario *s, const capsim_eval_opts *o, capsim_result *r,
		     capsim_diags *d)
{
	memset(r, 0, sizeof *r);
	capsim_fabric *f = capsim_fabric_build(s, d);
	if (!f)
		return -1;
	const capsim_knobs *kn = o && o->knobs ? o->knobs : &capsim_knobs_fitted;
	int rc = capsim_step_simulate_ex(s, f, kn, o && o->keep_schedule, &r->step, d);
	capsim_fabric_counts fc;
	capsim_fabric_get_counts(f, &fc);
	if (rc < 0) {
		capsim_fabric_destroy(f);
		memset(r, 0, sizeof *r);
		return -1;
	}
	if (capsim_power_estimate(s, &r->step, fc.leaves + fc.spines + fc.cores, &r->power,
				  d) < 0) {
		capsim_fabric_destroy(f);
		capsim_step_free(&r->step);
		memset(r, 0, sizeof *r);
		return -1;
	}
	if (r->power.has_racks)
		capsim_layout_estimate(s, f, r->power.nodes_per_rack, &r->layout);
	capsim_fabric_destroy(f);
	r->has_fabric = fc.leaves > 0;
	r->leaves = fc.leaves;
	r->spines = fc.spines;
	r->cores = fc.cores;
	r->cables_node_leaf = fc.cables_node_leaf;
	r->cables_leaf_spine = fc.cables_leaf_spine;
	r->cables_spine_core = fc.cables_spine_core;
	capsim_reliab_estimate(s, &r->step, fc.leaves, &r->reliab);
	double wall = r->reliab.wall_to_train_s > 0 ? r->reliab.wall_to_train_s :
						      r->step.time_to_train_s;
	if (s->has_facility && s->facility.energy_usd_per_j > 0) {
		r->has_energy_cost = 1;
		r->energy_cost_usd = r->power.facility_w * wall * s->facility.energy_usd_per_j;
	}
	/* the cloud offer prices the same work where it rents the same GPU */
	if (capsim_scenario_cloud_priced(s)) {
		cloud_run(s, r);
		r->has_cloud_cost = 1;
		r->cloud_gpu_usd = s->cloud.rate_usd_per_gpu_s * (double)capsim_scenario_gpus(s) *
				   r->cloud_wall_to_train_s;
		/* the dataset and a checkpoint kept in the offer's storage while the
		 * run lasts, and the trained weights taken out at the end */
		r->cloud_storage_usd = s->cloud.storage_usd_per_byte_s *
				       (s->dataset_bytes + r->reliab.checkpoint_bytes) *
				       r->cloud_wall_to_train_s;
		r->cloud_egress_usd = s->cloud.egress_usd_per_byte * r->reliab.weights_bytes;
		r->cloud_cost_usd = r->cloud_gpu_usd + r->cloud_storage_usd + r->cloud_egress_usd;
		r->cloud_cost_per_million_tokens_usd = r->cloud_cost_usd / (s->tokens / 1e6);
	}
	owning(s, r, wall);
	r->acquire_rent = s->acquire == 1;
	if (r->acquire_rent ? r->has_cloud_cost : r->has_capex) {
		r->has_cost_to_train = 1;
		r->cost_to_train_usd = r->acquire_rent ? r->cloud_cost_usd :
					 r->onprem_cost_to_train_usd;
		r->cost_per_million_tokens_usd = r->cost_to_train_usd / (s->tokens / 1e6);
	}
	burst_plan(s, o, r);
	r->gpus = capsim_scenario_gpus(s);
	r->nodes = s->nodes;
	r->dp = s->dp;
	r->tp = s->tp;
	r->pp = s->pp;
	r->cp = s->cp;
	r->ep = s->ep;
	r->zero = s->zero;
	r->has_storage = s->has_shared_storage || s->has_local_storage;
	r->cooling_liquid = s->has_facility && s->facility.cooling_kind == 1;
	if (r->step.loader.has_loader)
		capsim_strlcpy(r->data_bound, capsim_load_bound_names[r->step.loader.bound],
			       sizeof r->data_bound);
	r->straggler = s->straggler;
	r->global_batch = s->global_batch;
	r->n_groups = s->n_groups;
	r->fits_in_memory = 1;
	r->framework = s->framework;
	r->mem_reserve_bytes = s->memory_reserve_bytes;
	for (int g = 0; g < s->n_groups; g++) {
		capsim_group_view v;
		capsim_scenario_group(s, g, &v);
		capsim_group_result *gr = &r->group[g];
		capsim_strlcpy(gr->node, v.node->e.id, sizeof gr->node);
		capsim_strlcpy(gr->gpu, v.gpu->e.id, sizeof gr->gpu);
		gr->nodes = v.nodes;
		gr->gpus = (long)v.nodes * v.node->gpus;
		gr->peak_flop_per_s = v.gpu->peak_bf16_flop_per_s;
		gr->peak_mem_bytes = r->step.memory[g].peak.total_bytes;
		gr->mem_capacity_bytes = r->step.memory[g].capacity_bytes;
		gr->fits = r->step.memory[g].fits;
		if (gr->peak_mem_bytes > r->peak_mem_per_gpu_bytes)
			r->peak_mem_per_gpu_bytes = gr->peak_mem_bytes;
		if (!gr->fits)
			r->fits_in_memory = 0;
		double margin = gr->mem_capacity_bytes - gr->peak_mem_bytes;
		if (g == 0 || margin < r->mem_margin_bytes)
			r->mem_margin_bytes = margin;
		if (!(v.gpu->mem_usable_bytes > 0))
			r->capacity_from_datasheet = 1;
	}
	r->seq_past_positions = capsim_seq_past_positions(s);
	r->seq_len = s->seq_len;
	r->max_seq_len = s->model.max_seq_len;
	r->learned_positions = s->model.position == 0;
	capsim_strlcpy(r->model, s->model.e.id, sizeof r->model);
	r->mfu = r->step.mfu;
	if (!(o && o->no_reference))
		scaling(s, o, r);
	r->n_not_modelled = capsim_scenario_not_modelled(s, r->not_modelled, CAPSIM_RESULT_NOTES);
	return 0;
}

void capsim_result_free(capsim_result *r)
{
	if (!r)
		return;
	capsim_step_free(&r->step);
}

int capsim_result_trace(const capsim_result *r, FILE *f, double max_bytes)
{
	return capsim_step_trace(&r->step, f, max_bytes);
}

double capsim_result_trace_bound(const capsim_result *r)
{
	return capsim_step_trace_bound(&r->step);
}

int capsim_eval_collectives(const capsim_scenario *s, const capsim_coll_req *req,
			    const double *bytes, size_t n, capsim_coll_point *out,
			    capsim_diags *d)
{
	capsim_fabric *f = capsim_fabric_build(s, d);
	if (!f)
		return -1;
	capsim_coll_req q = *req;
	if (!q.ranks)
		q.ranks = capsim_fabric_gpus(f);
	int G = capsim_fabric_gpus_per_node(f);
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		capsim_coll_point *p = &out[i];
		memset(p, 0, sizeof *p);
		q.bytes = bytes[i];
		p->op = (int)q.op;
		p->bytes = bytes[i];
		p->ranks = q.ranks;
		p->nodes = (q.ranks + G - 1) / G;
		rc = capsim_collective_run(f, s, &q, &p->r, d);
		if (rc == 0 && p->r.busiest_link >= 0)
			capsim_fabric_link_name(f, p->r.busiest_link, p->busiest_link,
						sizeof p->busiest_link);
	}
	capsim_fabric_destroy(f);
	return rc < 0 ? -1 : 0;
}
