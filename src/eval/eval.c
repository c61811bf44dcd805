/* eval.c - one scenario to one result; see eval.h. */
#include "eval.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "bom.h"
#include "check.h"
#include "catalog.h"
#include "fabric.h"
#include "ops.h"
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
		capsim_scenario_keep_optimizer_shard(one, s->dp * s->cp);
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
		int n = 0, p = 0;
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

/* The burst plan: the burst job (capsim_cost_burst_job) evaluated as any
 * scenario is, without a reference run or a burst plan of its own; a burst
 * job that cannot run leaves the plan out. */
static int eval_job(const capsim_scenario *s, const capsim_eval_opts *o, int top,
		    capsim_result *r, capsim_diags *d);

static void burst_plan(const capsim_scenario *s, const capsim_eval_opts *o, capsim_result *r)
{
	capsim_scenario *b = capsim_xmalloc(sizeof *b);
	if (!capsim_cost_burst_job(s, b)) {
		free(b);
		return;
	}
	capsim_eval_opts bo = { .knobs = o ? o->knobs : NULL, .no_reference = 1 };
	capsim_result rb;
	capsim_diags scratch = { 0 };
	int rc = eval_job(b, &bo, 0, &rb, &scratch);
	capsim_diags_free(&scratch);
	long gpus = capsim_scenario_gpus(b);
	free(b);
	if (rc < 0)
		return;
	double g_on = r->reliab.goodput > 0 ? r->reliab.goodput : 1.0;
	double g_b = rb.reliab.goodput > 0 ? rb.reliab.goodput : 1.0;
	double on = r->step.tokens_per_s * g_on;
	double burst = rb.step.tokens_per_s * g_b;
	capsim_result_free(&rb);
	capsim_cost_burst_plan(s, on, burst, (int)gpus, &r->cost);
}

static int eval_once(const capsim_scenario *s, const capsim_eval_opts *o, int top,
		     capsim_result *r, capsim_diags *d);

int capsim_eval(const capsim_scenario *s, const capsim_eval_opts *o, capsim_result *r,
		capsim_diags *d)
{
	if (eval_job(s, o, 1, r, d) < 0)
		return -1;
	if (o && o->errors)
		capsim_result_set_bands(s, o->errors, r);
	return 0;
}

/* the power a GPU runs at most: its limit where set below the TDP */
static double gpu_cap_w(const capsim_gpu *g)
{
	return g->power_limit_w > 0 ? fmin(g->power_limit_w, g->tdp_w) : g->tdp_w;
}

/* s with group g's GPUs limited to cap[g] watts (where that is below what
 * they run at), made through the edit path into *t: 0, or -1 after adding
 * to d why the edit was refused. */
static int throttled(const capsim_scenario *s, const double *cap, capsim_scenario *t,
		     capsim_diags *d)
{
	*t = *s;
	int n = s->n_groups > 0 ? s->n_groups : 1;
	capsim_set edits[CAPSIM_MAX_GROUPS];
	char paths[CAPSIM_MAX_GROUPS][64], values[CAPSIM_MAX_GROUPS][48];
	size_t k = 0;
	for (int g = 0; g < n; g++) {
		capsim_group_view v;
		capsim_scenario_group(s, g, &v);
		if (!(cap[g] < gpu_cap_w(v.gpu)))
			continue;
		snprintf(paths[k], sizeof paths[k], "cluster.group.%d.gpu.power.limit", g);
		snprintf(values[k], sizeof values[k], "%.17g W", cap[g]);
		edits[k] = (capsim_set){ paths[k], values[k] };
		k++;
	}
	return k ? capsim_scenario_set_many(t, NULL, edits, k, d) : 0;
}

/* r's throttle: each group's limit where its GPUs run below what s gives
 * them, the lowest of those and the clock it sustains */
static void record_throttle(const capsim_scenario *s, const double *cap, capsim_result *r)
{
	for (int g = 0; g < s->n_groups; g++) {
		capsim_group_view v;
		capsim_scenario_group(s, g, &v);
		if (!(cap[g] < gpu_cap_w(v.gpu)))
			continue;
		r->power.group_throttle_w[g] = cap[g];
		if (r->power.throttle_limit_w > 0 && !(cap[g] < r->power.throttle_limit_w))
			continue;
		r->power.throttle_limit_w = cap[g];
		r->power.clock_scale = capsim_power_clock_scale(v.gpu->tdp_w, cap[g]);
	}
}

/* Cooling (docs/model.md, "Cooling"): where a rack's nodes give off more
 * heat at the step's load than its cooling removes, the GPUs run at the
 * power limit that fits, and the step is simulated again at the clock that
 * limit sustains; the load moves with the step, so the limit is found again
 * from the throttled step, a few times. A rack holds one node group's
 * nodes, so each group gets its own limit, and a group whose racks fit runs
 * unthrottled.
 *
 * top: the scenario asked for, which gets its burst plan; 0: the burst job. */
static int eval_job(const capsim_scenario *s, const capsim_eval_opts *o, int top,
		    capsim_result *r, capsim_diags *d)
{
	if (eval_once(s, o, top, r, d) < 0)
		return -1;
	double limit[CAPSIM_MAX_GROUPS], cap[CAPSIM_MAX_GROUPS];
	int need = capsim_cooling_limits(s, &r->power, limit, d);
	if (need < 0) {
		capsim_result_free(r);
		memset(r, 0, sizeof *r);
		return -1;
	}
	if (need == 0)
		return 0;
	for (int g = 0; g < s->n_groups; g++) {
		capsim_group_view v;
		capsim_scenario_group(s, g, &v);
		cap[g] = gpu_cap_w(v.gpu);
	}
	capsim_scenario *t = capsim_xmalloc(sizeof *t);
	int rc = 0;
	for (int k = 0; k < 8 && need > 0; k++) {
		for (int g = 0; g < s->n_groups; g++)
			if (limit[g] > 0)
				cap[g] = fmin(cap[g], limit[g]);
		capsim_result_free(r);
		memset(r, 0, sizeof *r);
		if (throttled(s, cap, t, d) < 0 || eval_once(t, o, top, r, d) < 0) {
			rc = -1;
			break;
		}
		need = capsim_cooling_limits(t, &r->power, limit, d);
		if (need < 0) {
			capsim_result_free(r);
			memset(r, 0, sizeof *r);
			rc = -1;
			break;
		}
	}
	if (rc == 0)
		record_throttle(s, cap, r);
	free(t);
	return rc;
}

static int eval_once(const capsim_scenario *s, const capsim_eval_opts *o, int top,
		     capsim_result *r, capsim_diags *d)
{
	memset(r, 0, sizeof *r);
	if (capsim_reliab_check(s, d) < 0)
		return -1;
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
		capsim_layout_estimate(s, f, &r->power, &r->layout);
	capsim_fabric_destroy(f);
	r->has_fabric = fc.leaves > 0;
	r->fabric = fc;
	capsim_reliab_estimate(s, &r->step, fc.leaves, &r->reliab);
	capsim_cost_inputs ci = {
		.power = &r->power,
		.layout = &r->layout,
		.reliab = &r->reliab,
		.fabric = fc,
		.time_to_train_s = r->step.time_to_train_s,
	};
	capsim_cost_estimate(s, &ci, &r->cost);
	if (top)
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
	r->mem_reserve_bytes = r->step.memory[0].peak.reserve_bytes;
	int worst = CAPSIM_MEM_FITS;
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
		gr->verdict = r->step.memory[g].verdict;
		gr->fits = r->step.memory[g].fits;
		if (gr->peak_mem_bytes > r->peak_mem_per_gpu_bytes)
			r->peak_mem_per_gpu_bytes = gr->peak_mem_bytes;
		if (!gr->fits)
			r->fits_in_memory = 0;
		if (gr->verdict > worst)
			worst = gr->verdict;
		double margin = gr->mem_capacity_bytes - gr->peak_mem_bytes;
		if (g == 0 || margin < r->mem_margin_bytes) {
			r->mem_margin_bytes = margin;
			r->mem_margin_ratio = margin / gr->mem_capacity_bytes;
		}
		if (!(v.gpu->mem_usable_bytes > 0))
			r->capacity_from_datasheet = 1;
	}
	capsim_strlcpy(r->memory_verdict, capsim_mem_verdict_names[worst], sizeof r->memory_verdict);
	r->seq_past_positions = capsim_seq_past_positions(s);
	r->seq_len = s->seq_len;
	r->max_seq_len = s->model.max_seq_len;
	r->learned_positions = s->model.position == 0;
	capsim_strlcpy(r->model, s->model.e.id, sizeof r->model);
	long in_groups = 0;
	for (int g = 0; g < r->n_groups; g++)
		in_groups += r->group[g].gpus;
	CAPSIM_ASSERT(r->n_groups >= 1 && r->n_groups <= CAPSIM_MAX_GROUPS);
	CAPSIM_ASSERT(in_groups == r->gpus);
	CAPSIM_ASSERT((long)r->dp * r->tp * r->pp * r->cp == r->gpus);
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

void capsim_eval_memory(const capsim_scenario *s, int g, capsim_memory *out)
{
	if (s->n_groups <= 1) {
		capsim_memory_estimate(s, out);
		return;
	}
	capsim_scenario *view = capsim_xmalloc(sizeof *view);
	capsim_scenario_as_group(s, g, view);
	capsim_memory_estimate(view, out);
	free(view);
}

double capsim_eval_step_bound(const capsim_scenario *s, const capsim_knobs *knobs)
{
	return capsim_step_compute_bound(s, knobs);
}

double capsim_eval_flop_per_token(const capsim_scenario *s)
{
	return capsim_flops_per_token(&s->model, s->seq_len, 1);
}

size_t capsim_result_goodput_at(const capsim_scenario *s, const capsim_result *r,
				const double *interval_s, size_t n, double *goodput)
{
	const capsim_reliab *rb = &r->reliab;
	if (!(rb->job_mttf_s > 0) || !rb->has_storage)
		return 0;
	capsim_scenario *t = capsim_xmalloc(sizeof *t);
	*t = *s;
	capsim_diags scratch = { 0 };
	size_t done = 0;
	for (; done < n; done++) {
		char v[48];
		snprintf(v, sizeof v, "%.17g s", interval_s[done]);
		if (capsim_scenario_set(t, NULL, "cluster.storage.checkpoint-interval", v,
					&scratch) < 0)
			break;
		double used;
		goodput[done] = capsim_reliab_goodput_under(t, rb, rb->job_mttf_s, &used);
	}
	capsim_diags_free(&scratch);
	free(t);
	return done;
}

int capsim_result_bom(const capsim_scenario *s, const capsim_result *r, capsim_bom_line *v)
{
	capsim_cost_inputs in = {
		.power = &r->power,
		.layout = &r->layout,
		.reliab = &r->reliab,
		.fabric = r->fabric,
		.time_to_train_s = r->step.time_to_train_s,
	};
	return capsim_bom_lines(s, &in, &r->cost, v);
}

int capsim_result_trace(const capsim_result *r, FILE *f, double max_bytes)
{
	return capsim_step_trace(&r->step, f, max_bytes);
}

double capsim_result_trace_bound(const capsim_result *r)
{
	return capsim_step_trace_bound(&r->step);
}

struct capsim_cluster {
	const capsim_scenario *s;
	capsim_fabric *f;
};

int capsim_eval_check(const capsim_scenario *s, capsim_diags *d)
{
	return capsim_reliab_check(s, d);
}

capsim_cluster *capsim_cluster_open(const capsim_scenario *s, capsim_diags *d)
{
	capsim_fabric *f = capsim_fabric_build(s, d);
	if (!f)
		return NULL;
	capsim_cluster *c = capsim_xmalloc(sizeof *c);
	c->s = s;
	c->f = f;
	return c;
}

void capsim_cluster_close(capsim_cluster *c)
{
	if (!c)
		return;
	capsim_fabric_destroy(c->f);
	free(c);
}

int capsim_cluster_gpus(const capsim_cluster *c)
{
	return capsim_fabric_gpus(c->f);
}

int capsim_cluster_gpus_per_node(const capsim_cluster *c)
{
	return capsim_fabric_gpus_per_node(c->f);
}

int capsim_eval_collective(capsim_cluster *c, const capsim_coll_req *req, capsim_coll_point *p,
			   capsim_diags *d)
{
	capsim_coll_req q = *req;
	if (!q.ranks)
		q.ranks = capsim_fabric_gpus(c->f);
	int G = capsim_fabric_gpus_per_node(c->f);
	memset(p, 0, sizeof *p);
	p->op = (int)q.op;
	p->bytes = q.bytes;
	p->ranks = q.ranks;
	p->nodes = (q.ranks + G - 1) / G;
	if (capsim_collective_run(c->f, c->s, &q, &p->r, d) < 0)
		return -1;
	if (p->r.busiest_link >= 0)
		capsim_fabric_link_name(c->f, p->r.busiest_link, p->busiest_link,
					sizeof p->busiest_link);
	return 0;
}

int capsim_eval_collectives(const capsim_scenario *s, const capsim_coll_req *req,
			    const double *bytes, size_t n, capsim_coll_point *out,
			    capsim_diags *d)
{
	capsim_cluster *c = capsim_cluster_open(s, d);
	if (!c)
		return -1;
	capsim_coll_req q = *req;
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		q.bytes = bytes[i];
		rc = capsim_eval_collective(c, &q, &out[i], d);
	}
	capsim_cluster_close(c);
	return rc;
}
