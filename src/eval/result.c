/* result.c - the result table and its writers (text, JSON, CSV); see eval.h. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "escape.h"
#include "eval.h"
#include "results.h"

#define R capsim_result
#define STEP(m) (offsetof(R, step) + offsetof(capsim_step, m))
#define PWR(m) (offsetof(R, power) + offsetof(capsim_power, m))
#define REL(m) (offsetof(R, reliab) + offsetof(capsim_reliab, m))

/* ---- when a key is present ---- */

static int has_cp(const R *r) { return r->cp > 1; }
static int has_pp(const R *r) { return r->pp > 1; }
static int has_ep(const R *r) { return r->ep > 1; }
static int has_variability(const R *r) { return r->step.step_time_sd_s > 0; }
static int has_scaling(const R *r) { return r->has_scaling; }
static int has_storage(const R *r) { return r->has_storage; }
static int has_loader(const R *r) { return r->step.loader.has_loader; }
static int has_epochs(const R *r) { return r->step.loader.epochs > 0; }
static int has_files(const R *r) { return r->step.loader.has_loader && r->step.loader.files_per_step > 0; }
static int has_racks(const R *r) { return r->power.has_racks; }
static int has_ckpt_storage(const R *r) { return r->reliab.has_storage; }
static int has_ckpt_times(const R *r) { return r->reliab.has_storage || r->reliab.in_memory; }
static int has_ckpt_memory(const R *r) { return r->reliab.in_memory; }
static int has_energy_cost(const R *r) { return r->cost.has_energy_cost; }
static int has_fabric(const R *r) { return r->has_fabric; }
static int has_switch_trays(const R *r) { return r->power.switch_trays_w > 0; }
static int has_capex(const R *r) { return r->cost.has_capex; }
static int has_cost_to_train(const R *r) { return r->cost.has_cost_to_train; }

static void note_acquire(const R *r, char *b, size_t n)
{
	snprintf(b, n, "(%s; cost.acquire)", r->cost.acquire_rent ? "rented from the cloud offer" :
			  "bought");
}
static int has_burst_plan(const R *r) { return r->cost.has_burst_plan; }
static int has_burst_total(const R *r) { return r->cost.has_burst_plan && r->cost.has_capex; }

static void note_burst(const R *r, char *b, size_t n)
{
	snprintf(b, n, "(%d rented GPUs beside the cluster train %.0f%% of the tokens)",
		 r->cost.burst_gpus, 100 * r->cost.burst_share);
}
static int has_breakeven(const R *r) { return r->cost.has_capex && r->cost.has_cloud_cost && isfinite(r->cost.breakeven_utilization); }
static int has_breakeven_month(const R *r) { return r->cost.has_capex && r->cost.has_cloud_cost && isfinite(r->cost.breakeven_months); }
static int has_payback_never(const R *r)
{
	return r->cost.has_capex && r->cost.has_cloud_cost && r->cost.payback[0];
}

static void note_payback_never(const R *r, char *b, size_t n)
{
	(void)r;
	snprintf(b, n, "(renting the busy hours costs less than owning them over cost.horizon)");
}

static void note_residual(const R *r, char *b, size_t n)
{
	double resell = r->cost.capex_nodes_usd + r->cost.capex_switches_usd;
	snprintf(b, n, "(%.0f%% of the nodes' and switches' price)",
		 100 * r->cost.residual_usd / resell);
}
static int has_spines(const R *r) { return r->has_fabric && r->fabric.spines > 0; }
static int has_cores(const R *r) { return r->has_fabric && r->fabric.cores > 0; }
static int has_cloud_cost(const R *r) { return r->cost.has_cloud_cost; }
static int has_layout(const R *r) { return r->layout.has_layout; }
static int has_excludes(const R *r) { return r->cost.has_capex && r->cost.capex_excludes[0]; }
static int has_unpriced(const R *r) { return !r->cost.has_capex && r->cost.unpriced[0]; }
static int has_attention_kernel(const R *r) { return r->step.attention_kernel[0] != '\0'; }

static void note_unpriced(const R *r, char *b, size_t n)
{
	snprintf(b, n, "(capex, opex, TCO, on-prem cost and break-even left out%s)",
		 r->cost.acquire_rent ? "" : "; cost.acquire buy has no cost to train");
}

static void note_capex(const R *r, char *b, size_t n)
{
	snprintf(b, n, "(cabling %s%s%s)", r->cost.cabling_by_reach ? "by reach class" : "cost.cabling a GPU",
		 r->cost.capex_excludes[0] ? "; leaves out " : "", r->cost.capex_excludes);
}

static json_t *j_cables(const R *r)
{
	static const char *const tiers[CAPSIM_CABLE_TIERS] = { "node_leaf", "leaf_spine",
								"spine_core" };
	json_t *o = json_object();
	for (int t = 0; t < CAPSIM_CABLE_TIERS; t++) {
		json_t *c = json_object();
		for (int k = 0; k < CAPSIM_CABLE__COUNT; k++)
			json_object_set_new(c, capsim_cable_class_names[k],
					    json_integer(r->layout.cables[t][k]));
		json_object_set_new(c, "longest_m", json_real(r->layout.longest_m[t]));
		json_object_set_new(o, tiers[t], c);
	}
	return o;
}

static void note_cables(const R *r, char *b, size_t n)
{
	size_t l = 0;
	b[0] = '\0';
	for (int k = 0; k < CAPSIM_CABLE__COUNT && l < n; k++) {
		if (!r->layout.total[k])
			continue;
		int w = snprintf(b + l, n - l, "%s%s %ld", l ? ", " : "",
				 capsim_cable_class_names[k], r->layout.total[k]);
		if (w < 0)
			break;
		l += (size_t)w;
	}
	double longest = 0;
	for (int t = 0; t < CAPSIM_CABLE_TIERS; t++)
		if (r->layout.longest_m[t] > longest)
			longest = r->layout.longest_m[t];
	if (l < n)
		snprintf(b + l, n - l, " (longest %.0f m; %d racks in %d rows)", longest,
			 r->layout.node_racks, r->layout.rows);
}
static int has_cloud_goodput(const R *r) { return r->cost.has_cloud_cost && r->reliab.interval_s > 0; }
static int has_reclaims(const R *r) { return r->cost.has_cloud_cost && r->cost.cloud_reclaim_rate_per_s > 0; }
static int has_goodput(const R *r) { return r->reliab.interval_s > 0 && r->reliab.job_mttf_s > 0; }
/* the expected wall time is finite (an interval's odds of surviving fit a double) */
static int has_wall(const R *r) { return has_goodput(r) && isfinite(r->reliab.wall_to_train_s); }
static int has_mc(const R *r) { return has_wall(r) && r->reliab.runs > 0; }
static int has_spares(const R *r) { return r->reliab.nodes_in_repair > 0; }

/* the expected interruptions over the run, each part's share of the rate */
static double part_interruptions(const R *r, int p)
{
	return r->reliab.interruptions * r->reliab.part_rate_per_s[p] * r->reliab.job_mttf_s;
}

static json_t *j_causes(const R *r)
{
	json_t *o = json_object();
	for (int p = 0; p < CAPSIM_PART__COUNT; p++)
		json_object_set_new(o, capsim_fail_part_names[p], json_real(part_interruptions(r, p)));
	return o;
}

static void note_causes(const R *r, char *b, size_t n)
{
	size_t l = 0;
	b[0] = '\0';
	for (int p = 0; p < CAPSIM_PART__COUNT && l < n; p++) {
		int w = snprintf(b + l, n - l, "%s%s %.3g", p ? ", " : "", capsim_fail_part_names[p],
				 part_interruptions(r, p));
		if (w < 0)
			break;
		l += (size_t)w;
	}
}

static void note_mc(const R *r, char *b, size_t n)
{
	snprintf(b, n, "(+/- %.3g d at 95%%; median %.4g d, 95th percentile %.4g d; %d runs)",
		 r->reliab.mc_wall_ci_s / 86400, r->reliab.mc_wall_p50_s / 86400,
		 r->reliab.mc_wall_p95_s / 86400, r->reliab.runs);
}

static void note_goodput(const R *r, char *b, size_t n)
{
	snprintf(b, n, "%s", r->reliab.barely_progresses ?
		 "(an interval and its save outlast the job's MTTF: the job barely progresses)" : "");
}

static void note_interval(const R *r, char *b, size_t n)
{
	snprintf(b, n, "%s", r->reliab.interval_given ? "(given)" :
		 r->reliab.in_memory ? "(Young: sqrt(2 x save's cost x MTTF), no shorter than "
				       "the replication)" :
		 "(Young: sqrt(2 x write x MTTF))");
}

static void note_mttf(const R *r, char *b, size_t n)
{
	snprintf(b, n, "(%d nodes, each failing every %.0f d; %d leaf switches)", r->nodes,
		 r->reliab.node_mtbf_s / 86400, r->fabric.leaves);
}
static int has_circuits(const R *r) { return r->power.has_racks && r->power.circuit_w > 0; }
static int has_storage_power(const R *r) { return r->power.storage_w > 0; }
static int has_cooling(const R *r) { return r->power.has_racks && r->power.cooling_w > 0; }
static int has_throttle(const R *r) { return r->power.throttle_limit_w > 0; }

static void note_cooling(const R *r, char *b, size_t n)
{
	snprintf(b, n, "(%s; a full rack gives off %.4g kW at the step's load)",
		 r->cooling_liquid ? "liquid" : "air", r->power.rack_heat_w / 1e3);
}

static void note_throttle(const R *r, char *b, size_t n)
{
	snprintf(b, n, "(the rack's cooling: compute clock x%.3f of the TDP's)",
		 r->power.clock_scale);
}

static void note_gpu_power(const R *r, char *b, size_t n)
{
	snprintf(b, n, "(load %.2f: kernels %.0f%% of the step, at the best GEMM rate %.0f%%; %s "
		 "curve)", r->power.load, 100 * r->power.busy, 100 * r->power.flop_share,
		 r->power.curve_measured ? "the profile's" : "an assumed");
}

static void note_facility(const R *r, char *b, size_t n)
{
	snprintf(b, n, "(PUE %.3g)", r->power.pue);
}

/* ---- text notes ---- */

static void note_data(const R *r, char *b, size_t n)
{
	const capsim_loader *l = &r->step.loader;
	if (!l->has_loader)
		return;
	char t[32];
	capsim_units_format(l->read_s, CAPSIM_DIM_SECONDS, t, sizeof t);
	if (l->workers > 0)
		snprintf(b, n, "(a step's data in %s, bound by %s; %d workers x %d ahead)", t,
			 capsim_load_bound_names[l->bound], l->workers, l->prefetch);
	else
		snprintf(b, n, "(a step's data in %s, bound by %s; read between steps)", t,
			 capsim_load_bound_names[l->bound]);
}

static void note_compute(const R *r, char *b, size_t n)
{
	snprintf(b, n, "(stage %d, %d micro-batches)", r->step.critical_stage,
		 r->step.microbatches);
	if (r->step.straggler_stage >= 0) {
		size_t l = strlen(b);
		snprintf(b + l, n - l, "; straggler %.3gx on stage %d", r->straggler,
			 r->step.straggler_stage);
	}
	if (r->step.replica_classes > 1) {
		size_t l = strlen(b);
		snprintf(b + l, n - l, "; %d replica classes, the slowest replica %d on %s",
			 r->step.replica_classes, r->step.critical_replica,
			 r->group[r->step.critical_group].gpu);
	}
}

static void note_variability(const R *r, char *b, size_t n)
{
	char k[32];
	capsim_units_format(r->step.variability_kernel_s, CAPSIM_DIM_SECONDS, k, sizeof k);
	if (r->step.variability_ranks > 1)
		snprintf(b, n, "(the expected slowest of %ld GPUs, rate spread %.3g%% a GPU, on %s "
			 "of kernels)", r->step.variability_ranks, 100 * r->step.variability_cv, k);
	else
		snprintf(b, n, "(one GPU waits for no other; rate spread %.3g%%, on %s of kernels)",
			 100 * r->step.variability_cv, k);
}

static void note_step_sd(const R *r, char *b, size_t n)
{
	(void)r;
	snprintf(b, n, "(the GPUs' rate spread; not the model's error)");
}

static void note_link(const capsim_step_link *l, const char *what, char *b, size_t n)
{
	if (!l->kind) {
		b[0] = '\0';
		return;
	}
	char v[32];
	capsim_units_format(l->bytes, CAPSIM_DIM_BYTES, v, sizeof v);
	snprintf(b, n, "\n    %-22s %12s %s on one link, per %s", "busiest link", l->kind, v,
		 what);
}

static void note_tp(const R *r, char *b, size_t n)
{
	note_link(&r->step.busiest_tp, "collective", b, n);
}

static void note_dp(const R *r, char *b, size_t n)
{
	note_link(&r->step.busiest_dp, r->zero >= 3 ? "layer collective" : "gradient sync", b, n);
}

/* the margin's 80% band after b's first l characters, " (80%: 1.2 GB short
 * to 3.4 GB to spare)"; returns the new length */
static size_t margin_band(const R *r, char *b, size_t l, size_t n)
{
	double lo, hi;
	const capsim_result_key *k = capsim_result_key_find("memory_margin_bytes");
	if (!k || !capsim_result_band(r, k, CAPSIM_ERR_80, &lo, &hi))
		return l;
	char a[32], z[32];
	capsim_units_format(fabs(lo), CAPSIM_DIM_BYTES, a, sizeof a);
	capsim_units_format(fabs(hi), CAPSIM_DIM_BYTES, z, sizeof z);
	int w;
	if ((lo >= 0) == (hi >= 0)) { /* one side: "36.91-39.27 GB to spare" */
		char *first = lo >= 0 ? a : z, *ua = strrchr(a, ' '), *uz = strrchr(z, ' ');
		if (ua && uz && strcmp(ua, uz) == 0)
			first[strrchr(first, ' ') - first] = '\0';
		w = snprintf(b + l, n - l, " (80%%: %s-%s %s)", first, lo >= 0 ? z : a,
			     lo >= 0 ? "to spare" : "short");
	} else {
		w = snprintf(b + l, n - l, " (80%%: %s short to %s to spare)", a, z);
	}
	return w < 0 || (size_t)w >= n - l ? l : l + (size_t)w;
}

/* the verdict of each group; then the margin with its band, and for a close
 * one what decides it */
static void note_mem(const R *r, char *b, size_t n)
{
	size_t l = 0;
	b[0] = '\0';
	for (int g = 0; g < r->n_groups && l + 1 < n; g++) {
		const capsim_group_result *gr = &r->group[g];
		char peak[32] = "";
		if (r->n_groups > 1)
			capsim_units_format(gr->peak_mem_bytes, CAPSIM_DIM_BYTES, peak, sizeof peak);
		int w = snprintf(b + l, n - l, "%s%s%s%s%sof %.4g GB (%s)", g ? "; " : "",
				 r->n_groups > 1 ? gr->gpu : "", r->n_groups > 1 ? " " : "", peak,
				 r->n_groups > 1 ? " " : "", gr->mem_capacity_bytes / 1e9,
				 gr->verdict == CAPSIM_MEM_NO ? "DOES NOT FIT" :
								capsim_mem_verdict_names[gr->verdict]);
		if (w < 0)
			break;
		l += (size_t)w;
	}
	if (l + 1 >= n || r->n_groups < 1)
		return;
	char m[32];
	capsim_units_format(fabs(r->mem_margin_bytes), CAPSIM_DIM_BYTES, m, sizeof m);
	int w = snprintf(b + l, n - l, ": %s (%.1f%%) %s", m, 100 * fabs(r->mem_margin_ratio),
			 r->mem_margin_bytes >= 0 ? "to spare" : "short");
	if (w < 0 || (size_t)w >= n - l)
		return;
	l += (size_t)w;
	l = margin_band(r, b, l, n);
	if (l + 1 >= n || strcmp(r->memory_verdict, "close") != 0)
		return;
	char res[32];
	capsim_units_format(r->mem_reserve_bytes, CAPSIM_DIM_BYTES, res, sizeof res);
	snprintf(b + l, n - l,
		 "; close: it fits, but not if the peak is the memory model's error larger, "
		 "decided by the %s recipe "
		 "(workload.framework) and %s outside the model (workload.memory-context, "
		 "nccl-buffer, nccl-channels, allocator-slack, or memory-reserve)%s",
		 capsim_framework_names[r->framework], res,
		 r->capacity_from_datasheet ?
			 " and a capacity read from the datasheet (no usable-memory)" : "");
}

static void note_ttt(const R *r, char *b, size_t n)
{
	snprintf(b, n, "(%.0f steps)", r->step.steps);
}

static void note_scaling(const R *r, char *b, size_t n)
{
	snprintf(b, n, "(%s)", r->scaling_reference);
}

static void note_not_modelled(const R *r, char *b, size_t n)
{
	size_t l = 0;
	b[0] = '\0';
	for (int i = 0; i < r->n_not_modelled && l + 1 < n; i++) {
		int w = snprintf(b + l, n - l, "%s%s", i ? ", " : "", r->not_modelled[i]);
		if (w < 0)
			break;
		l += (size_t)w;
	}
}

/* ---- structured keys ---- */

static json_t *link_json(const capsim_step_link *l)
{
	if (!l->kind)
		return json_null();
	return json_pack("{s:s, s:f}", "kind", l->kind, "bytes", l->bytes);
}

static json_t *j_busiest_tp(const R *r) { return link_json(&r->step.busiest_tp); }
static json_t *j_busiest_dp(const R *r) { return link_json(&r->step.busiest_dp); }

static const char *const path_kinds[] = { "compute", "p2p", "tail" };

static json_t *j_path(const R *r)
{
	json_t *a = json_array();
	for (size_t i = 0; i < r->step.path_len; i++) {
		const capsim_path_segment *g = &r->step.path[i];
		json_t *o = json_pack("{s:s, s:i, s:f, s:f}", "kind", path_kinds[g->kind], "stage",
				      g->stage, "start_s", (double)g->start_ns * 1e-9, "time_s",
				      (double)(g->end_ns - g->start_ns) * 1e-9);
		if (g->kind == CAPSIM_PATH_TRANSFER)
			json_object_set_new(o, "to_stage", json_integer(g->to_stage));
		if (g->kind == CAPSIM_PATH_COMPUTE) {
			json_object_set_new(o, "forwards", json_integer(g->forwards));
			json_object_set_new(o, "backwards", json_integer(g->backwards));
			json_object_set_new(o, "first_microbatch", json_integer(g->first_microbatch));
			json_object_set_new(o, "last_microbatch", json_integer(g->last_microbatch));
		}
		json_array_append_new(a, o);
	}
	return a;
}

/* group g's racks, where a cluster of several groups has a facility's racks
 * (one group's are the totals' keys) */
static void group_racks(const R *r, int g, json_t *o)
{
	const capsim_power *p = &r->power;
	if (!p->has_racks || r->n_groups < 2 || g >= p->n_groups)
		return;
	const capsim_power_group *pg = &p->group[g];
	json_object_set_new(o, "nodes_per_rack", json_integer(pg->nodes_per_rack));
	json_object_set_new(o, "racks", json_integer(pg->racks));
	json_object_set_new(o, "rack_power_w", json_real(pg->rack_w));
	if (p->circuit_w > 0)
		json_object_set_new(o, "circuits_per_rack", json_integer(pg->circuits_per_rack));
	if (p->cooling_w > 0)
		json_object_set_new(o, "rack_heat_w", json_real(pg->rack_heat_w));
	if (p->group_throttle_w[g] > 0)
		json_object_set_new(o, "gpu_throttle_limit_w", json_real(p->group_throttle_w[g]));
}

static json_t *j_groups(const R *r)
{
	json_t *a = json_array();
	for (int g = 0; g < r->n_groups; g++) {
		const capsim_group_result *gr = &r->group[g];
		json_t *o = json_pack("{s:s, s:s, s:i, s:I, s:f, s:f, s:f, s:b}", "node", gr->node,
				      "gpu", gr->gpu, "nodes", gr->nodes, "gpus",
				      (json_int_t)gr->gpus, "peak_bf16_flop_per_s",
				      gr->peak_flop_per_s, "peak_mem_per_gpu_bytes",
				      gr->peak_mem_bytes, "mem_capacity_bytes",
				      gr->mem_capacity_bytes, "fits_in_memory", gr->fits);
		json_object_set_new(o, "memory_verdict",
				    json_string(capsim_mem_verdict_names[gr->verdict]));
		group_racks(r, g, o);
		json_array_append_new(a, o);
	}
	return a;
}

/* the step's collectives that ran as an approximation past the flow limit */
static int has_approximation(const R *r)
{
	return r->step.busiest_tp.approximation || r->step.busiest_dp.approximation;
}

static json_t *j_approximations(const R *r)
{
	json_t *a = json_array();
	if (r->step.busiest_tp.approximation)
		json_array_append_new(a, json_pack("{s:s, s:s}", "collectives", "tensor-parallel",
						   "approximation",
						   r->step.busiest_tp.approximation));
	if (r->step.busiest_dp.approximation)
		json_array_append_new(a, json_pack("{s:s, s:s}", "collectives", "data-parallel",
						   "approximation",
						   r->step.busiest_dp.approximation));
	return a;
}

static void note_approximation(const R *r, char *b, size_t n)
{
	const char *tp = r->step.busiest_tp.approximation, *dp = r->step.busiest_dp.approximation;
	snprintf(b, n, "%s%s%s%s%s", tp ? "tensor-parallel collectives: " : "", tp ? tp : "",
		 tp && dp ? "; " : "", dp ? "data-parallel collectives: " : "", dp ? dp : "");
}

static json_t *j_not_modelled(const R *r)
{
	json_t *a = json_array();
	for (int i = 0; i < r->n_not_modelled; i++)
		json_array_append_new(a, json_string(r->not_modelled[i]));
	return a;
}

static int has_not_modelled(const R *r) { return r->n_not_modelled > 0; }

static int has_seq_past(const R *r) { return r->seq_past_positions; }

static void note_positions(const R *r, char *b, size_t n)
{
	if (r->learned_positions)
		snprintf(b, n,
			 "seq-len %d is past model '%s' max-seq-len %d: its learned position "
			 "table is taken to have %d rows (counted in memory)",
			 r->seq_len, r->model, r->max_seq_len, r->seq_len);
	else
		snprintf(b, n,
			 "seq-len %d is past model '%s' max-seq-len %d: a context extension "
			 "(its positions have no table)",
			 r->seq_len, r->model, r->max_seq_len);
}

static json_t *j_positions(const R *r)
{
	char b[256];
	note_positions(r, b, sizeof b);
	return json_string(b);
}

/* ---- the table ---- */

#define REAL_IF(k, m, dim_, unit_, label_, depth_, doc_, present_, note_, in_text_) \
	{ .key = k, .kind = CAPSIM_RK_REAL, .dim = dim_, .offset = m, .unit = unit_,  \
	  .label = label_, .depth = depth_, .doc = doc_, .present = present_,         \
	  .note = note_, .in_text = in_text_ }
#define REAL(k, m, dim_, unit_, label_, depth_, doc_, present_, note_) \
	REAL_IF(k, m, dim_, unit_, label_, depth_, doc_, present_, note_, NULL)
/* a key that follows a band (capsim_band_map), with its ends' names */
#define REAL_IF_B(band_, k, m, dim_, unit_, label_, depth_, doc_, present_, note_, in_text_) \
	{ .key = k, .kind = CAPSIM_RK_REAL, .dim = dim_, .offset = m, .unit = unit_,          \
	  .label = label_, .depth = depth_, .doc = doc_, .present = present_,                 \
	  .note = note_, .in_text = in_text_, .band = band_,                                  \
	  .ends = { k "_lo", k "_hi", k "_lo95", k "_hi95" } }
#define REAL_B(band_, k, m, dim_, unit_, label_, depth_, doc_, present_, note_) \
	REAL_IF_B(band_, k, m, dim_, unit_, label_, depth_, doc_, present_, note_, NULL)
#define INT(k, m, label_, doc_, present_) \
	{ .key = k, .kind = CAPSIM_RK_INT, .dim = CAPSIM_DIM_COUNT, .offset = m, .unit = "", \
	  .label = label_, .doc = doc_, .present = present_ }
#define JSON(k, f, doc_, present_, label_, note_) \
	{ .key = k, .kind = CAPSIM_RK_JSON, .dim = CAPSIM_DIM_COUNT, .unit = "",            \
	  .label = label_, .doc = doc_, .present = present_, .json = f, .note = note_ }
#define SEC CAPSIM_DIM_SECONDS

const capsim_result_key capsim_result_keys[] = {
	{ .key = "gpus", .kind = CAPSIM_RK_LONG, .dim = CAPSIM_DIM_COUNT, .offset = offsetof(R, gpus),
	  .unit = "", .doc = "GPUs of the cluster" },
	INT("nodes", offsetof(R, nodes), NULL, "nodes of the cluster", NULL),
	INT("dp", offsetof(R, dp), NULL, "data-parallel degree", NULL),
	REAL("global_batch", offsetof(R, global_batch), CAPSIM_DIM_COUNT, "", NULL, 0,
	     "sequences per step", NULL, NULL),
	INT("microbatches", STEP(microbatches), NULL, "micro-batches per replica per step", NULL),
	REAL_B(CAPSIM_BAND_STEP, "step_time_s", STEP(step_time_s), SEC, "s", "step time", 0,
	     "time of one training step", NULL, NULL),
	REAL("compute_s", STEP(compute_s), SEC, "s", "compute", 1,
	     "kernels of the critical stage per step", NULL, note_compute),
	REAL("exposed_comm_s", STEP(exposed_comm_s), SEC, "s", NULL, 1,
	     "communication not hidden behind compute (the sum of the kinds)", NULL, NULL),
	REAL("exposed_comm_tp_s", STEP(exposed_comm_tp_s), SEC, "s", "exposed comm TP", 1,
	     "exposed tensor-parallel communication", NULL, note_tp),
	REAL_IF("exposed_comm_cp_s", STEP(exposed_comm_cp_s), SEC, "s", "exposed comm CP", 1,
		"exposed context-parallel communication", NULL, NULL, has_cp),
	REAL_IF("exposed_comm_pp_s", STEP(exposed_comm_pp_s), SEC, "s", "exposed comm PP", 1,
		"exposed pipeline transfers", NULL, NULL, has_pp),
	REAL("exposed_comm_dp_s", STEP(exposed_comm_dp_s), SEC, "s", "exposed comm DP", 1,
	     "exposed data-parallel communication", NULL, note_dp),
	REAL_IF("exposed_comm_ep_s", STEP(exposed_comm_ep_s), SEC, "s", "exposed comm EP", 1,
		"exposed expert-parallel all-to-all", NULL, NULL, has_ep),
	REAL_IF("bubble_s", STEP(bubble_s), SEC, "s", "pipeline bubble", 1,
		"pipeline idle time of the critical stage", NULL, NULL, has_pp),
	REAL("optimizer_s", STEP(optimizer_s), SEC, "s", "optimizer step", 1,
	     "optimizer step of the first stage", NULL, NULL),
	{ .key = "attention_kernel", .kind = CAPSIM_RK_TEXT, .dim = CAPSIM_DIM_COUNT,
	  .offset = STEP(attention_kernel), .unit = "", .label = "attention kernel", .depth = 1,
	  .doc = "the fused attention kernel whose measured curve rates the step's attention "
		 "(workload.attention, or the framework's); \"(H100's curve)\" where the GPU has "
		 "none of its own for it (docs/model.md, \"Attention\")",
	  .present = has_attention_kernel },
	REAL("host_s", STEP(host_s), SEC, "s", "host-bound", 1,
	     "what the host adds to the critical stage's kernels where it issues them more slowly "
	     "than the GPU runs them (workload.execution)", NULL, NULL),
	REAL("variability_s", STEP(variability_s), SEC, "s", "slowest rank", 1,
	     "what the expected slowest of the ranks that synchronise adds to the step, under "
	     "the spread of their GPUs' kernel rate (workload.variability; in step_time_s)",
	     has_variability, note_variability),
	REAL("step_time_sd_s", STEP(step_time_sd_s), SEC, "s", "step spread (1 sd)", 1,
	     "standard deviation of the step from that physical variation (the slowest "
	     "rank's), apart from the model's own error", has_variability, note_step_sd),
	REAL_IF("data_stall_s", STEP(data_stall_s), SEC, "s", "data stall", 1,
		"reading the next step's data that the loader's workers and prefetch do not hide",
		NULL, note_data, has_storage),
	REAL("data_read_s", STEP(data_read_s), SEC, "s", NULL, 1,
	     "one step's data on each reading node under the tier's tightest limit (data_bound)",
	     has_loader, NULL),
	{ .key = "data_bound", .kind = CAPSIM_RK_TEXT, .dim = CAPSIM_DIM_COUNT,
	  .offset = offsetof(R, data_bound), .unit = "",
	  .doc = "the tier's limit that sets data_read_s: aggregate bandwidth, client bandwidth, "
		 "IOPS or metadata",
	  .present = has_loader },
	REAL("data_bytes_per_step", STEP(loader.bytes_per_step), CAPSIM_DIM_BYTES, "bytes", NULL, 1,
	     "what the job reads a step: tokens x bytes per token, inputs and (with a pipeline) labels",
	     has_loader, NULL),
	REAL("data_files_per_step", STEP(loader.files_per_step), CAPSIM_DIM_COUNT, "", NULL, 1,
	     "data files opened a step (cluster.storage.shard-size)", has_files, NULL),
	REAL("data_first_batch_s", STEP(loader.first_batch_s), SEC, "s", NULL, 1,
	     "until the first batch arrives, the workers all fetching at once", has_loader, NULL),
	REAL("data_epochs", STEP(loader.epochs), CAPSIM_DIM_COUNT, "", NULL, 1,
	     "passes over cluster.storage.dataset to the token budget", has_epochs, NULL),
	REAL_B(CAPSIM_BAND_POWER, "power_gpu_w",
		PWR(gpu_w), CAPSIM_DIM_WATTS, "W", "power per GPU", 0,
	     "one GPU's mean draw over the step: idle + (sustained - idle) x load^gamma",
	     NULL, note_gpu_power),
	REAL_B(CAPSIM_BAND_POWER, "power_node_w",
		PWR(node_w), CAPSIM_DIM_WATTS, "W", "power per node", 1,
	     "one node in the step: its GPUs and its overhead (host, per-GPU parts and NICs, "
	     "by what the node holds)", NULL, NULL),
	REAL("power_node_peak_w", PWR(node_max_w), CAPSIM_DIM_WATTS, "W", NULL, 1,
	     "one node at peak, what racks and circuits are provisioned for: its GPUs at their "
	     "power limit and its overhead at full load (power.max where the node has no "
	     "power.host or power.per-gpu)", NULL, NULL),
	REAL_B(CAPSIM_BAND_POWER, "power_it_w", PWR(it_w), CAPSIM_DIM_WATTS, "W", "IT power", 1,
	     "every node, fabric switch, rack-scale switch tray and (where its power is given) "
	     "the shared file system, at the step's draw",
	     NULL, NULL),
	REAL("power_it_idle_w", PWR(it_idle_w), CAPSIM_DIM_WATTS, "W", "IT power idle", 1,
	     "the same with every GPU idle (the overhead at full load: an upper bound)", NULL,
	     NULL),
	REAL("power_it_peak_w", PWR(it_peak_w), CAPSIM_DIM_WATTS, "W", "IT power peak", 1,
	     "every node at its peak (power_node_peak_w), switches at their power.max where given",
	     NULL, NULL),
	REAL("power_switches_w", PWR(switches_w), CAPSIM_DIM_WATTS, "W", NULL, 1,
	     "the fabric's switches at their typical power", has_fabric, NULL),
	REAL("power_switch_trays_w", PWR(switch_trays_w), CAPSIM_DIM_WATTS, "W", NULL, 1,
	     "a rack-scale system's NVLink switch trays, every domain's (node switch-trays)",
	     has_switch_trays, NULL),
	REAL("power_storage_w", PWR(storage_w), CAPSIM_DIM_WATTS, "W", NULL, 1,
	     "the shared file system at its typical power", has_storage_power, NULL),
	REAL_B(CAPSIM_BAND_POWER, "power_facility_w",
		PWR(facility_w), CAPSIM_DIM_WATTS, "W", "facility power", 1,
	     "IT power x the facility's PUE (1 without a facility)", NULL, note_facility),
	REAL_B(CAPSIM_BAND_ENERGY, "energy_per_step_j",
		PWR(energy_per_step_j), CAPSIM_DIM_JOULES, "J",
	     "energy per step", 1, "facility power x step time", NULL, NULL),
	REAL_B(CAPSIM_BAND_ENERGY, "energy_to_train_j",
		PWR(energy_to_train_j), CAPSIM_DIM_JOULES, "J",
	     "energy to train", 1, "energy per step x steps", NULL, NULL),
	INT("nodes_per_rack", PWR(nodes_per_rack), "nodes per rack",
	    "nodes a rack of the facility's rack.power holds at their peak (a rack holds one "
	    "node group's nodes, a rack-scale system's one whole NVLink domain; several groups: "
	    "the fewest of theirs)", has_racks),
	REAL_IF("rack_power_w", PWR(rack_w), CAPSIM_DIM_WATTS, "W", "rack power", 1,
		"one full rack at peak: its nodes at power_node_peak_w and a rack-scale system's "
		"switch trays (several groups: the most of theirs)", has_racks, NULL, NULL),
	INT("racks", PWR(racks), "racks",
	    "racks for the cluster's nodes, each group's in its own (the sum over groups)",
	    has_racks),
	INT("circuits_per_rack", PWR(circuits_per_rack), "circuits per rack",
	    "branch circuits one full rack needs at peak (rack_power_w) at 80% of their rating "
	    "(several groups: the most of theirs)", has_circuits),
	REAL_IF("cooling_per_rack_w", PWR(cooling_w), CAPSIM_DIM_WATTS, "W", "cooling per rack", 1,
		"heat one rack's cooling removes (the facility's cooling.per-rack)", has_cooling,
		note_cooling, NULL),
	REAL_IF("rack_heat_w", PWR(rack_heat_w), CAPSIM_DIM_WATTS, "W", NULL, 1,
		"what a full rack's nodes give off at the step's load (several groups: the hottest "
		"group's rack)", has_cooling, NULL, NULL),
	REAL_IF("gpu_throttle_limit_w", PWR(throttle_limit_w), CAPSIM_DIM_WATTS, "W",
		"GPUs throttled to", 1,
		"the GPU power limit at which a rack's heat fits its cooling (several groups: the "
		"lowest of the throttled groups'); the step ran at the clock it sustains",
		has_throttle, note_throttle, NULL),
	REAL_IF("gpu_clock_scale", PWR(clock_scale), CAPSIM_DIM_RATIO, "1", NULL, 1,
		"the throttled GPUs' compute clock over the TDP's (docs/model.md, \"Power-capped "
		"GPUs\")", has_throttle, NULL, NULL),
	REAL("checkpoint_bytes", REL(checkpoint_bytes), CAPSIM_DIM_BYTES, "bytes", "checkpoint", 0,
	     "one checkpoint of the job: trained weights, master copy, optimizer state", NULL,
	     NULL),
	REAL_IF_B(CAPSIM_BAND_CHECKPOINT, "checkpoint_write_s",
		REL(write_s), SEC, "s", "checkpoint write", 1,
		"writing it to the storage tier at the save path's efficiency", has_ckpt_storage,
		NULL, NULL),
	REAL_IF_B(CAPSIM_BAND_CHECKPOINT, "checkpoint_blocking_s",
		REL(blocking_s), SEC, "s", "training waits", 1,
		"what a save stops training for: the write (sync), or a GPU's copy to host memory "
		"(cluster.storage.checkpoint-mode=async or memory)", has_ckpt_times, NULL, NULL),
	REAL_IF_B(CAPSIM_BAND_CHECKPOINT, "checkpoint_restore_s",
		REL(restore_s), SEC, "s", "checkpoint restore", 1,
		"reading it back after an interruption: from the storage tier, or (memory) a "
		"node's shard from a peer's host memory over its NICs", has_ckpt_times, NULL, NULL),
	REAL_IF_B(CAPSIM_BAND_CHECKPOINT, "checkpoint_replicate_s",
		REL(replicate_s), SEC, "s", "checkpoint replication", 1,
		"checkpoint-mode=memory: a node's shard x checkpoint-replicas over its NICs to "
		"its peers' host memory, in the background", has_ckpt_memory, NULL, NULL),
	REAL_IF("checkpoint_interval_s", REL(interval_s), SEC, "s", "checkpoint interval", 1,
		"time between checkpoints: given, or Young's optimum", has_goodput, note_interval,
		NULL),
	REAL("job_mttf_s", REL(job_mttf_s), SEC, "s", "job MTTF", 1,
	     "mean time between the job's interruptions: 1 / the sum of its parts' rates (nodes x "
	     "a node's parts, leaf switches x theirs)", NULL,
	     note_mttf),
	REAL("node_mtbf_s", REL(node_mtbf_s), SEC, "s", NULL, 1,
	     "one node's mean time between failures, its parts together", NULL, NULL),
	REAL_IF("goodput", REL(goodput), CAPSIM_DIM_RATIO, "1", "goodput", 0,
		"useful share of wall time, time_to_train_s / wall_to_train_s: checkpoints written, "
		"work lost and restarts (0 where the expected wall time overflows)", has_goodput,
		note_goodput, NULL),
	REAL_IF("interruptions", REL(interruptions), CAPSIM_DIM_COUNT, "", "interruptions", 1,
		"expected over the training run: each segment's failed attempts, e^(L/MTTF) - 1",
		has_wall, NULL, NULL),
	REAL_IF_B(CAPSIM_BAND_STEP, "wall_to_train_s",
		REL(wall_to_train_s), SEC, "s", "wall time to train", 1,
		"the expected wall time under exponential interruptions, exact: each checkpoint "
		"interval and its save, L, takes (e^(L/MTTF) - 1)(MTTF + restart) (docs/model.md)",
		has_wall, NULL, NULL),
	JSON("interruptions_by_cause", j_causes,
	     "expected interruptions over the run by part: gpu (its chip), hbm (its memory), "
	     "nvlink (NVLink and NVSwitch), nic, link (cables and optics), host (power, fans, "
	     "motherboard, CPUs, cards), software, other, switch (leaf switches); they sum to "
	     "interruptions", has_wall,
	     "interruptions by cause", note_causes),
	REAL_IF("nodes_in_repair", REL(nodes_in_repair), CAPSIM_DIM_COUNT, "", "nodes in repair", 1,
		"mean nodes out of service at a time: each part's failures a second x its repair time",
		has_spares, NULL, NULL),
	INT("spare_nodes", REL(spare_nodes), "spare nodes",
	    "spares that cover the nodes in repair 99% of the time (Poisson)", has_spares),
	REAL_IF("wall_to_train_mc_mean_s", REL(mc_wall_mean_s), SEC, "s", "Monte Carlo, mean", 1,
		"wall time to train over reliability.runs simulated runs, their mean", has_mc, note_mc,
		NULL),
	REAL_IF("wall_to_train_mc_ci_s", REL(mc_wall_ci_s), SEC, "s", NULL, 1,
		"half-width of that mean's 95% confidence interval", has_mc, NULL, NULL),
	REAL_IF("wall_to_train_mc_p50_s", REL(mc_wall_p50_s), SEC, "s", NULL, 1,
		"their median", has_mc, NULL, NULL),
	REAL_IF("wall_to_train_mc_p95_s", REL(mc_wall_p95_s), SEC, "s", NULL, 1,
		"their 95th percentile", has_mc, NULL, NULL),
	REAL_IF("interruptions_mc", REL(mc_interruptions), CAPSIM_DIM_COUNT, "", NULL, 1,
		"interruptions per simulated run, mean", has_mc, NULL, NULL),
	REAL_IF("lost_work_mc_s", REL(mc_lost_s), SEC, "s", NULL, 1,
		"work lost to interruptions per simulated run, mean", has_mc, NULL, NULL),
	INT("switches_leaf", offsetof(R, fabric.leaves), "leaf switches",
	    "the fabric's leaf switches, every rail", has_fabric),
	INT("switches_spine", offsetof(R, fabric.spines), "spine switches",
	    "its spine switches (2 and 3 tiers)", has_spines),
	INT("switches_core", offsetof(R, fabric.cores), "core switches", "its core switches (3 tiers)",
	    has_cores),
	INT("leaf_node_ports", offsetof(R, fabric.leaf_down), "leaf split, node ports",
	    "a leaf's ports to the nodes as built: the fewest uplinks whose ratio is at least "
	    "cluster.fabric.oversubscription, or more where that builds fewer switches "
	    "(2 and 3 tiers)", has_spines),
	INT("leaf_uplinks", offsetof(R, fabric.leaf_uplinks), "leaf split, uplinks",
	    "a leaf's ports to the spines (aggregation at 3 tiers) as built", has_spines),
	{ .key = "cables_node_leaf", .kind = CAPSIM_RK_LONG, .dim = CAPSIM_DIM_COUNT,
	  .offset = offsetof(R, fabric.cables_node_leaf), .unit = "", .label = "cables node-leaf",
	  .depth = 1, .doc = "cables from the nodes' NICs to the leaves", .present = has_fabric },
	{ .key = "cables_leaf_spine", .kind = CAPSIM_RK_LONG, .dim = CAPSIM_DIM_COUNT,
	  .offset = offsetof(R, fabric.cables_leaf_spine), .unit = "", .label = "cables leaf-spine",
	  .depth = 1, .doc = "cables between leaves and spines", .present = has_spines },
	{ .key = "cables_spine_core", .kind = CAPSIM_RK_LONG, .dim = CAPSIM_DIM_COUNT,
	  .offset = offsetof(R, fabric.cables_spine_core), .unit = "", .label = "cables spine-core",
	  .depth = 1, .doc = "cables between spines and cores", .present = has_cores },
	JSON("cables_by_reach", j_cables, "the cables of each tier (node_leaf, leaf_spine, "
	     "spine_core) by reach class on the facility's floor: dac (to 3 m), acc (5 m), "
	     "multimode (50 m), singlemode (500 m), singlemode-2km", has_layout,
	     "cables by reach", note_cables),
#define CABLES(k, c, doc_)                                                             \
	{ .key = k, .kind = CAPSIM_RK_LONG, .dim = CAPSIM_DIM_COUNT,                   \
	  .offset = offsetof(R, layout.total) + (c) * sizeof(long), .unit = "",        \
	  .doc = doc_, .present = has_layout }
	CABLES("cables_dac", CAPSIM_CABLE_DAC, "passive copper cables (runs to 3 m: in a rack)"),
	CABLES("cables_acc", CAPSIM_CABLE_ACC, "active copper cables (to 5 m)"),
	CABLES("cables_multimode", CAPSIM_CABLE_MMF, "multimode optical cables (to 50 m)"),
	CABLES("cables_singlemode", CAPSIM_CABLE_SMF, "single-mode optical cables (to 500 m)"),
	CABLES("cables_singlemode_2km", CAPSIM_CABLE_SMF_2KM,
	       "single-mode optical cables longer than 500 m (FR4, 2 km)"),
#undef CABLES
	{ .key = "transceiver_ports", .kind = CAPSIM_RK_LONG, .dim = CAPSIM_DIM_COUNT,
	  .offset = offsetof(R, layout.optical_ends), .unit = "", .label = "transceiver ports",
	  .depth = 1, .doc = "optical transceiver ports: two an optical cable (a twin-port "
	  "module carries two)", .present = has_layout },
	REAL_IF_B(CAPSIM_BAND_ENERGY, "energy_cost_usd",
		offsetof(R, cost.energy_cost_usd), CAPSIM_DIM_USD, "USD",
		"energy cost to train", 0,
		"facility power x wall time to train x the facility's energy price",
		has_energy_cost, NULL, NULL),
	REAL_IF_B(CAPSIM_BAND_CLOUD_COST, "cloud_cost_usd",
		offsetof(R, cost.cloud_cost_usd), CAPSIM_DIM_USD, "USD",
		"cloud cost to train", 0,
		"the GPUs at the cloud offer's rate for the cloud's wall time to train, its storage "
		"and egress (offers of the cluster's GPU only)",
		has_cloud_cost, NULL, NULL),
	REAL_IF_B(CAPSIM_BAND_CLOUD_COST, "cloud_cost_per_million_tokens_usd",
		offsetof(R, cost.cloud_cost_per_million_tokens_usd),
		CAPSIM_DIM_USD, "USD", "per million tokens", 1,
		"cloud cost to train over the token budget in millions", has_cloud_cost, NULL, NULL),
	REAL_IF_B(CAPSIM_BAND_STEP, "cloud_gpu_usd",
		offsetof(R, cost.cloud_gpu_usd), CAPSIM_DIM_USD, "USD", NULL, 1,
		"its GPUs: the offer's rate x GPUs x the cloud's wall time", has_cloud_cost, NULL,
		NULL),
	REAL_IF_B(CAPSIM_BAND_STEP, "cloud_storage_usd",
		offsetof(R, cost.cloud_storage_usd), CAPSIM_DIM_USD, "USD", NULL, 1,
		"the offer's storage for cluster.storage.dataset and a checkpoint over the cloud's "
		"wall time (0 where the offer has no storage.price)", has_cloud_cost, NULL, NULL),
	REAL_IF("cloud_egress_usd", offsetof(R, cost.cloud_egress_usd), CAPSIM_DIM_USD, "USD", NULL, 1,
		"the trained weights taken out at the offer's egress.price (0 where it has none)",
		has_cloud_cost, NULL, NULL),
	REAL_IF_B(CAPSIM_BAND_STEP, "cloud_wall_to_train_s",
		offsetof(R, cost.cloud_wall_to_train_s), SEC, "s",
		"cloud wall time", 1,
		"time to train on the offer: slower by cost.network-penalty, over its goodput",
		has_cloud_cost, NULL, NULL),
	REAL_IF("cloud_goodput", offsetof(R, cost.cloud_goodput), CAPSIM_DIM_RATIO, "1", "cloud goodput", 1,
		"useful share of the cloud run's wall time: the cluster's hardware failures and a "
		"spot offer's reclaimed instances (interruptions.per-month); present with checkpoints",
		has_cloud_goodput, NULL, NULL),
	REAL_IF("cloud_reclaims", offsetof(R, cost.cloud_reclaims), CAPSIM_DIM_COUNT, "", "spot reclaims", 1,
		"instances the provider reclaims over the cloud run (instances x its monthly share)",
		has_reclaims, NULL, NULL),
	{ .key = "cost_unpriced", .kind = CAPSIM_RK_TEXT, .dim = CAPSIM_DIM_COUNT,
	  .offset = offsetof(R, cost.unpriced), .unit = "", .label = "not priced", .depth = 0,
	  .doc = "without a capex: the parts with no price and the paths that give them; the capex, "
		 "opex, TCO, on-prem cost and break-even are left out",
	  .present = has_unpriced, .note = note_unpriced },
	REAL_IF("capex_usd", offsetof(R, cost.capex_usd), CAPSIM_DIM_USD, "USD", "capex", 0,
		"nodes, fabric switches, cabling and shared storage at their prices (present when the "
		"nodes and switches have one)", has_capex, note_capex, NULL),
	REAL_IF("capex_nodes_usd", offsetof(R, cost.capex_nodes_usd), CAPSIM_DIM_USD, "USD", NULL, 1,
		"every node group's nodes at their price", has_capex, NULL, NULL),
	REAL_IF("capex_switches_usd", offsetof(R, cost.capex_switches_usd), CAPSIM_DIM_USD, "USD",
		NULL, 1, "the fabric's switches at their price", has_capex, NULL, NULL),
	REAL_IF("capex_cabling_usd", offsetof(R, cost.capex_cabling_usd), CAPSIM_DIM_USD, "USD", NULL, 1,
		"the cables: each reach class at cost.cable-* where the layout's classes all have one, "
		"else cost.cabling a GPU", has_capex, NULL, NULL),
	REAL_IF("capex_storage_usd", offsetof(R, cost.capex_storage_usd), CAPSIM_DIM_USD, "USD", NULL, 1,
		"the shared file system at its price", has_capex, NULL, NULL),
	{ .key = "capex_excludes", .kind = CAPSIM_RK_TEXT, .dim = CAPSIM_DIM_COUNT,
	  .offset = offsetof(R, cost.capex_excludes), .unit = "",
	  .doc = "what the capex leaves out for want of a price", .present = has_excludes },
	REAL_IF("residual_usd", offsetof(R, cost.residual_usd), CAPSIM_DIM_USD, "USD",
		"residual at the horizon", 1,
		"what the nodes and switches resell for at cost.horizon: their price x cost.resale x "
		"(1 - cost.resale-decline)^years; cables, optics and storage none", has_capex,
		note_residual, NULL),
	REAL_IF_B(CAPSIM_BAND_OWNING, "opex_per_year_usd", offsetof(R, cost.opex_per_year_usd), CAPSIM_DIM_USD, "USD",
		"opex a year", 1, "the sum of the opex_*_per_year_usd classes", has_capex, NULL, NULL),
	REAL_IF_B(CAPSIM_BAND_OWNING, "opex_energy_per_year_usd", offsetof(R, cost.opex_energy_per_year_usd),
		CAPSIM_DIM_USD, "USD", "energy", 2,
		"the facility's energy (cooling in its PUE) at its price: the step's power for "
		"cost.utilization of the year, the GPUs at idle the rest", has_capex, NULL, NULL),
	REAL_IF("opex_colocation_per_year_usd", offsetof(R, cost.opex_colocation_per_year_usd),
		CAPSIM_DIM_USD, "USD", "colocation", 2,
		"the facility's colocation price x the IT load at peak (power_it_peak_w: nodes at their "
		"peak, switch trays, switches at their maximum, storage)", has_capex, NULL, NULL),
	REAL_IF("opex_support_servers_per_year_usd",
		offsetof(R, cost.opex_support_per_year_usd[CAPSIM_SUPPORT_SERVERS]), CAPSIM_DIM_USD,
		"USD", "support, servers", 2, "cost.support-servers x capex_nodes_usd", has_capex,
		NULL, NULL),
	REAL_IF("opex_support_switches_per_year_usd",
		offsetof(R, cost.opex_support_per_year_usd[CAPSIM_SUPPORT_SWITCHES]), CAPSIM_DIM_USD,
		"USD", "support, switches", 2, "cost.support-switches x capex_switches_usd", has_capex,
		NULL, NULL),
	REAL_IF("opex_support_cables_per_year_usd",
		offsetof(R, cost.opex_support_per_year_usd[CAPSIM_SUPPORT_CABLES]), CAPSIM_DIM_USD,
		"USD", "support, cables", 2, "cost.support-cables x capex_cabling_usd", has_capex,
		NULL, NULL),
	REAL_IF("opex_support_storage_per_year_usd",
		offsetof(R, cost.opex_support_per_year_usd[CAPSIM_SUPPORT_STORAGE]), CAPSIM_DIM_USD,
		"USD", "support, storage", 2, "cost.support-storage x capex_storage_usd", has_capex,
		NULL, NULL),
	REAL_IF("opex_insurance_per_year_usd", offsetof(R, cost.opex_insurance_per_year_usd),
		CAPSIM_DIM_USD, "USD", "insurance", 2, "cost.insurance x capex_usd", has_capex, NULL,
		NULL),
	REAL_IF("opex_staff_per_year_usd", offsetof(R, cost.opex_staff_per_year_usd), CAPSIM_DIM_USD,
		"USD", "staff", 2, "cost.staff", has_capex, NULL, NULL),
	REAL_IF_B(CAPSIM_BAND_OWNING, "tco_usd", offsetof(R, cost.tco_usd), CAPSIM_DIM_USD, "USD", "TCO over the horizon", 1,
		"capex - residual_usd + opex a year x cost.horizon", has_capex, NULL, NULL),
	REAL_IF_B(CAPSIM_BAND_OWNING, "tco_npv_usd", offsetof(R, cost.tco_npv_usd), CAPSIM_DIM_USD, "USD", "its present value", 1,
		"the TCO's present value at cost.discount-rate: the capex now, the opex monthly, the "
		"residual at the horizon", has_capex, NULL, NULL),
	REAL_IF_B(CAPSIM_BAND_OWNING, "onprem_cost_per_gpu_hour_usd", offsetof(R, cost.onprem_cost_per_gpu_hour_usd),
		CAPSIM_DIM_USD, "USD", "per busy GPU-hour", 1,
		"TCO over the busy GPU-hours of the horizon (GPUs x cost.horizon x cost.utilization)",
		has_capex, NULL, NULL),
	REAL_IF_B(CAPSIM_BAND_ONPREM_COST, "onprem_cost_to_train_usd",
		offsetof(R, cost.onprem_cost_to_train_usd), CAPSIM_DIM_USD,
		"USD", "on-prem cost to train", 1, "busy GPU-hour cost x GPUs x wall time to train",
		has_capex, NULL, NULL),
	REAL_IF_B(CAPSIM_BAND_COST, "cost_to_train_usd",
		offsetof(R, cost.cost_to_train_usd), CAPSIM_DIM_USD, "USD",
		"cost to train", 0,
		"the design's own: onprem_cost_to_train_usd when it buys its cluster, cloud_cost_usd "
		"when it rents (cost.acquire)", has_cost_to_train, note_acquire, NULL),
	REAL_IF_B(CAPSIM_BAND_COST, "cost_per_million_tokens_usd",
		offsetof(R, cost.cost_per_million_tokens_usd),
		CAPSIM_DIM_USD, "USD", "per million tokens", 1,
		"cost_to_train_usd over the token budget in millions", has_cost_to_train, NULL, NULL),
	REAL_IF_B(CAPSIM_BAND_OWNING, "breakeven_utilization", offsetof(R, cost.breakeven_utilization), CAPSIM_DIM_RATIO, "1",
		"break-even utilisation", 1,
		"utilisation at which a busy GPU-hour owned over cost.horizon costs what one rented "
		"from the cloud offer does, undiscounted (above 1: renting is cheaper at any)",
		has_breakeven, NULL, NULL),
	REAL_IF_B(CAPSIM_BAND_OWNING, "breakeven_months", offsetof(R, cost.breakeven_months), CAPSIM_DIM_COUNT, "", "break-even month", 1,
		"at cost.utilization, the month in which renting the busy hours so far has come to cost "
		"what owning them does (capex - residual then + opex so far), undiscounted; within "
		"cost.horizon exactly when breakeven_utilization <= cost.utilization (absent: never, "
		"and payback says so)", has_breakeven_month, NULL, NULL),
	{ .key = "payback", .kind = CAPSIM_RK_TEXT, .dim = CAPSIM_DIM_COUNT,
	  .offset = offsetof(R, cost.payback), .unit = "", .label = "break-even month", .depth = 1,
	  .doc = "\"never\" where owning does not pay back within cost.horizon at cost.utilization "
		 "(breakeven_months absent)",
	  .present = has_payback_never, .note = note_payback_never },
	INT("burst_gpus", offsetof(R, cost.burst_gpus), NULL,
	    "GPUs the burst plan rents beside the cluster (cost.burst.max-gpus, whole nodes)",
	    has_burst_plan),
	REAL_IF("burst_wall_to_train_s", offsetof(R, cost.burst_wall_to_train_s), SEC, "s",
		"with a burst, wall time", 0,
		"the cluster and the burst job together, the token budget shared by throughput",
		has_burst_plan, note_burst, NULL),
	REAL_IF("burst_share", offsetof(R, cost.burst_share), CAPSIM_DIM_RATIO, "1", NULL, 1,
		"share of the token budget the burst job trains", has_burst_plan, NULL, NULL),
	REAL_IF("burst_cost_usd", offsetof(R, cost.burst_cost_usd), CAPSIM_DIM_USD, "USD", "burst cost", 1,
		"the rented GPUs at the burst offer's rate for that time", has_burst_plan, NULL, NULL),
	REAL_IF("burst_plan_cost_usd", offsetof(R, cost.burst_plan_cost_usd), CAPSIM_DIM_USD, "USD",
		"burst plan cost", 1, "the cluster's busy GPU-hours for that time plus the burst",
		has_burst_total, NULL, NULL),
	REAL_B(CAPSIM_BAND_PER_STEP, "tokens_per_s",
		STEP(tokens_per_s), CAPSIM_DIM_COUNT, "1/s", "tokens/s", 0,
	     "training throughput", NULL, NULL),
	REAL_B(CAPSIM_BAND_PER_STEP, "mfu", offsetof(R, mfu), CAPSIM_DIM_RATIO, "1", "MFU", 0,
	     "model FLOPs over each group's bf16 dense peak x GPUs x step time", NULL, NULL),
	REAL_B(CAPSIM_BAND_MEMORY, "peak_mem_per_gpu_bytes",
		offsetof(R, peak_mem_per_gpu_bytes), CAPSIM_DIM_BYTES,
	     "bytes", "peak memory per GPU", 0, "the largest of the node groups' peaks", NULL,
	     note_mem),
	REAL_B(CAPSIM_BAND_MARGIN, "memory_margin_bytes",
		offsetof(R, mem_margin_bytes), CAPSIM_DIM_BYTES, "bytes", NULL,
	     0, "the smallest of the node groups' capacity less peak; negative: short by that",
	     NULL, NULL),
	REAL_B(CAPSIM_BAND_MARGIN_RATIO, "memory_margin_ratio",
		offsetof(R, mem_margin_ratio), CAPSIM_DIM_RATIO, "1", NULL, 0,
	     "memory_margin_bytes over that group's capacity", NULL, NULL),
	{ .key = "memory_verdict", .kind = CAPSIM_RK_TEXT, .dim = CAPSIM_DIM_COUNT,
	  .offset = offsetof(R, memory_verdict), .unit = "",
	  .doc = "the worst node group's: fits, close (it fits, but not if the peak is the "
		 "memory model's error larger) or does not fit (the estimated peak over the "
		 "capacity)" },
	{ .key = "fits_in_memory", .kind = CAPSIM_RK_BOOL, .dim = CAPSIM_DIM_COUNT,
	  .offset = offsetof(R, fits_in_memory), .unit = "",
	  .doc = "no node group's memory verdict is \"does not fit\" (fits or close)" },
	REAL_B(CAPSIM_BAND_STEP_PAIR, "scaling_efficiency", offsetof(R, scaling_efficiency),
	     CAPSIM_DIM_RATIO, "1",
	     "scaling efficiency", 0,
	     "tokens/s per GPU over the reference's (scaling_reference)", has_scaling,
	     note_scaling),
	{ .key = "scaling_reference", .kind = CAPSIM_RK_TEXT, .dim = CAPSIM_DIM_COUNT,
	  .offset = offsetof(R, scaling_reference), .unit = "",
	  .doc = "what scaling_efficiency is relative to", .present = has_scaling },
	REAL("steps", STEP(steps), CAPSIM_DIM_COUNT, "", NULL, 0,
	     "steps to the token budget", NULL, NULL),
	REAL_B(CAPSIM_BAND_STEP, "time_to_train_s",
		STEP(time_to_train_s), SEC, "s", "time to train", 0,
	     "steps x step time", NULL, note_ttt),
	INT("straggler_stage", STEP(straggler_stage), NULL,
	    "pipeline stage of the straggler; -1: none", NULL),
	INT("replica_classes", STEP(replica_classes), NULL,
	    "classes of alike data-parallel replicas simulated", NULL),
	INT("critical_replica", STEP(critical_replica), NULL,
	    "the replica whose step is the slowest", NULL),
	INT("critical_stage", STEP(critical_stage), NULL,
	    "the pipeline stage that sets the step", NULL),
	JSON("groups", j_groups,
	     "per node group: node, GPU, count, peak, memory; with several groups and a "
	     "facility's racks, the group's own (nodes_per_rack, racks, circuits_per_rack, "
	     "rack_heat_w, gpu_throttle_limit_w where its GPUs were throttled)",
	     NULL, NULL, NULL),
	JSON("critical_path", j_path, "the step's critical path, segment by segment", NULL,
	     NULL, NULL),
	JSON("busiest_link_tp", j_busiest_tp,
	     "most loaded link of one tensor-parallel collective (kind, bytes)", NULL, NULL,
	     NULL),
	JSON("busiest_link_dp", j_busiest_dp,
	     "most loaded link of one data-parallel sync (kind, bytes)", NULL, NULL, NULL),
	JSON("positions", j_positions,
	     "present when seq-len is past the model's max-seq-len: what capsim assumed",
	     has_seq_past, "positions", note_positions),
	JSON("approximations", j_approximations,
	     "present when a collective of the step ran as an approximation past "
	     "workload.flow-limit: which (tensor- or data-parallel) and what was taken for what",
	     has_approximation, "approximated", note_approximation),
	JSON("not_modelled", j_not_modelled,
	     "scenario sections given that no model reads yet", has_not_modelled,
	     "not yet modelled", note_not_modelled),
};
const size_t capsim_result_n_keys = sizeof capsim_result_keys / sizeof capsim_result_keys[0];
const size_t capsim_result_n_values =
	5 * (sizeof capsim_result_keys / sizeof capsim_result_keys[0]);

const capsim_result_key *capsim_result_key_find(const char *name)
{
	for (size_t i = 0; i < capsim_result_n_keys; i++)
		if (strcmp(capsim_result_keys[i].key, name) == 0)
			return &capsim_result_keys[i];
	return NULL;
}

const capsim_result_key *capsim_result_end_find(const char *name, int *end)
{
	for (size_t i = 0; i < capsim_result_n_keys; i++) {
		const capsim_result_key *k = &capsim_result_keys[i];
		for (int e = 0; k->band != CAPSIM_BAND_NONE && e < 2 * CAPSIM_ERR__LEVELS; e++)
			if (strcmp(k->ends[e], name) == 0) {
				*end = e;
				return k;
			}
	}
	return NULL;
}

int capsim_result_has(const R *r, const capsim_result_key *k)
{
	return !k->present || k->present(r);
}

double capsim_result_number(const R *r, const capsim_result_key *k)
{
	const char *at = (const char *)r + k->offset;
	switch (k->kind) {
	case CAPSIM_RK_REAL: return *(const double *)at;
	case CAPSIM_RK_INT: return *(const int *)at;
	case CAPSIM_RK_LONG: return (double)*(const long *)at;
	case CAPSIM_RK_BOOL: return *(const int *)at ? 1.0 : 0.0;
	default: return NAN;
	}
}

/* a band's level as JSON: factors, the group it came from and its n */
static json_t *band_level_json(const capsim_err_band *b, int l)
{
	return json_pack("{s:f, s:f, s:s, s:I}", "lo", b->lo[l], "hi", b->hi[l], "group",
			 b->group[l], "n", (json_int_t)b->n[l]);
}

/* "bands": each quantity the result predicts, its levels (null: none) */
static json_t *bands_json(const R *r)
{
	static const capsim_err_quantity qs[] = { CAPSIM_ERR_STEP, CAPSIM_ERR_MEMORY,
						  CAPSIM_ERR_POWER, CAPSIM_ERR_CHECKPOINT };
	json_t *o = json_object();
	json_object_set_new(o, "source", json_string(
		"split-conformal prediction intervals on capsim's own validation residuals "
		"(docs/model.md and docs/validation.md, \"Error bands\"): KEY_lo, KEY_hi at 80%, "
		"KEY_lo95, KEY_hi95 at 95%"));
	for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++) {
		const capsim_err_band *b = &r->bands.q[qs[i]];
		json_t *q = json_object();
		for (int l = 0; l < CAPSIM_ERR__LEVELS; l++)
			json_object_set_new(q, capsim_err_level_names[l],
					    b->has[l] ? band_level_json(b, l) : json_null());
		json_object_set_new(o, capsim_err_quantity_names[qs[i]], q);
	}
	return o;
}

/* key k's ends in r, where it has them, into o */
static void ends_json(const R *r, const capsim_result_key *k, json_t *o)
{
	for (int l = 0; l < CAPSIM_ERR__LEVELS; l++) {
		double lo, hi;
		if (!capsim_result_band(r, k, l, &lo, &hi))
			continue;
		json_object_set_new(o, k->ends[2 * l], json_real(lo));
		json_object_set_new(o, k->ends[2 * l + 1], json_real(hi));
	}
}

void capsim_result_json(const R *r, json_t *o)
{
	for (size_t i = 0; i < capsim_result_n_keys; i++) {
		const capsim_result_key *k = &capsim_result_keys[i];
		if (!capsim_result_has(r, k))
			continue;
		json_t *v;
		switch (k->kind) {
		case CAPSIM_RK_REAL: v = json_real(capsim_result_number(r, k)); break;
		case CAPSIM_RK_INT:
		case CAPSIM_RK_LONG: v = json_integer((json_int_t)capsim_result_number(r, k)); break;
		case CAPSIM_RK_BOOL: v = json_boolean(capsim_result_number(r, k) != 0); break;
		case CAPSIM_RK_TEXT: v = json_string((const char *)r + k->offset); break;
		default: v = k->json(r); break;
		}
		json_object_set_new(o, k->key, v);
		ends_json(r, k, o);
	}
	if (r->bands.on)
		json_object_set_new(o, "bands", bands_json(r));
}

double capsim_result_get(const R *r, const char *key, double absent)
{
	const capsim_result_key *k = capsim_result_key_find(key);
	if (!k || k->kind == CAPSIM_RK_TEXT || k->kind == CAPSIM_RK_JSON || !capsim_result_has(r, k))
		return absent;
	return capsim_result_number(r, k);
}

const char *capsim_result_string(const R *r, const char *key)
{
	const capsim_result_key *k = capsim_result_key_find(key);
	if (!k || k->kind != CAPSIM_RK_TEXT || !capsim_result_has(r, k))
		return NULL;
	return (const char *)r + k->offset;
}

int capsim_result_rented(const R *r)
{
	return r->cost.acquire_rent;
}

double capsim_result_wall_to_train_s(const R *r)
{
	if (r->cost.acquire_rent && r->cost.has_cloud_cost && r->cost.cloud_wall_to_train_s > 0)
		return r->cost.cloud_wall_to_train_s;
	if (r->reliab.job_mttf_s > 0 && r->reliab.interval_s > 0 && r->reliab.wall_to_train_s != 0)
		return r->reliab.wall_to_train_s; /* infinite where it overflows */
	return r->step.time_to_train_s;
}

size_t capsim_result_values(const R *r, capsim_result_value *out, size_t n)
{
	size_t got = 0;
	for (size_t i = 0; i < capsim_result_n_keys && got < n; i++) {
		const capsim_result_key *k = &capsim_result_keys[i];
		if (k->kind == CAPSIM_RK_JSON || !capsim_result_has(r, k))
			continue;
		capsim_result_value *v = &out[got++];
		v->key = k->key;
		v->unit = k->unit;
		v->text = k->kind == CAPSIM_RK_TEXT ? (const char *)r + k->offset : NULL;
		v->num = k->kind == CAPSIM_RK_TEXT ? 0.0 : capsim_result_number(r, k);
		for (int l = 0; l < CAPSIM_ERR__LEVELS; l++) {
			double lo, hi;
			if (got + 2 > n || !capsim_result_band(r, k, l, &lo, &hi))
				continue;
			out[got++] = (capsim_result_value){ .key = k->ends[2 * l], .unit = k->unit,
							    .num = lo };
			out[got++] = (capsim_result_value){ .key = k->ends[2 * l + 1],
							    .unit = k->unit, .num = hi };
		}
	}
	return got;
}

/* v as key k's text shows it: "1.23 s", "41.2%", "1.234e+04" */
static void value_text(const capsim_result_key *k, double v, char *b, size_t n)
{
	if (k->dim == CAPSIM_DIM_RATIO)
		snprintf(b, n, "%.1f%%", 100 * v);
	else if (k->dim == CAPSIM_DIM_COUNT)
		snprintf(b, n, "%.4g", v);
	else
		capsim_units_format(v, k->dim, b, n);
}

/* an end of a band as text, its unit left off where it is the value's:
 * "1.14" beside "1.23 s", "980 ms" beside "1.02 s" */
static void end_text(const capsim_result_key *k, double v, const char *value, char *b,
		     size_t n)
{
	value_text(k, v, b, n);
	const char *vu = strrchr(value, ' '), *eu = strrchr(b, ' ');
	size_t l = strlen(b);
	if (vu && eu && strcmp(vu, eu) == 0)
		b[eu - b] = '\0';
	else if (k->dim == CAPSIM_DIM_RATIO && l > 0 && b[l - 1] == '%')
		b[l - 1] = '\0';
}

/* with a band at 80%, " (lo-hi)" to follow value; else "" */
static void banded_text(const R *r, const capsim_result_key *k, const char *value, char *b,
			size_t n)
{
	double lo, hi;
	b[0] = '\0';
	if (!capsim_result_band(r, k, CAPSIM_ERR_80, &lo, &hi))
		return;
	char a[48], z[48];
	end_text(k, lo, value, a, sizeof a);
	end_text(k, hi, value, z, sizeof z);
	snprintf(b, n, " (%s-%s)", a, z);
}

/* one line of a key with a label */
static void key_text(const R *r, const capsim_result_key *k, FILE *f)
{
	char label[64], value[48], band[112], note[512] = "";
	snprintf(label, sizeof label, "%*s%s", 2 * k->depth, "", k->label);
	if (k->note)
		k->note(r, note, sizeof note);
	if (k->kind == CAPSIM_RK_JSON) {
		fprintf(f, "  %-24s %s\n", label, note);
		return;
	}
	if (k->kind == CAPSIM_RK_TEXT) {
		fprintf(f, "  %-24s ", label);
		capsim_term_text(f, (const char *)r + k->offset);
		fprintf(f, "%s%s\n", note[0] ? "  " : "", note);
		return;
	}
	value_text(k, capsim_result_number(r, k), value, sizeof value);
	banded_text(r, k, value, band, sizeof band);
	if (note[0] == '\n')
		fprintf(f, "  %-24s %12s%s%s\n", label, value, band, note);
	else
		fprintf(f, "  %-24s %12s%s%s%s\n", label, value, band, note[0] ? "  " : "", note);
}

int capsim_result_text(const R *r, FILE *f)
{
	if (r->bands.on)
		fprintf(f, "  (in brackets: the 80%% prediction interval, from capsim's own "
			"validation residuals, docs/validation.md; 95%% in --json)\n");
	for (size_t i = 0; i < capsim_result_n_keys; i++) {
		const capsim_result_key *k = &capsim_result_keys[i];
		if (!k->label || !capsim_result_has(r, k) || (k->in_text && !k->in_text(r)))
			continue;
		key_text(r, k, f);
	}
	return ferror(f) ? -1 : 0;
}

json_t *capsim_coll_point_json(const capsim_coll_point *p)
{
	const capsim_coll_result *r = &p->r;
	json_t *o = json_object();
	json_object_set_new(o, "op", json_string(capsim_coll_names[p->op]));
	json_object_set_new(o, "bytes", json_real(p->bytes));
	json_object_set_new(o, "ranks", json_integer(p->ranks));
	json_object_set_new(o, "algorithm", json_string(capsim_collective_algo_name(r->algo)));
	json_object_set_new(o, "protocol", json_string(capsim_proto_names[r->proto]));
	json_object_set_new(o, "channels", json_integer(r->channels));
	json_object_set_new(o, "time_s", json_real(r->time_s));
	json_object_set_new(o, "algbw_gb_per_s", json_real(r->algbw_bytes_per_s / 1e9));
	json_object_set_new(o, "busbw_gb_per_s", json_real(r->busbw_bytes_per_s / 1e9));
	json_object_set_new(o, "latency_s", json_real(r->latency_s));
	if (r->nccl_time_s >= 0)
		json_object_set_new(o, "nccl_model_time_s", json_real(r->nccl_time_s));
	if (r->approximation) /* only where one was made: exact runs keep their keys */
		json_object_set_new(o, "approximation", json_string(r->approximation));
	return o;
}
