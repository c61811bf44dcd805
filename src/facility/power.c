/* power.c - power, energy and racks; see power.h and docs/model.md ("Power
 * and energy"). */
#include "power.h"

#include "check.h"
#include "ops.h"

#include <math.h>
#include <string.h>

/* Where the GPU has no measured curve: sustained draw under back-to-back
 * GEMMs 687.2 W of the measured H200's 700 W cap (0.982 of the limit), and the
 * power-law exponent of its duty curve, 0.639 (both from
 * hardware/calibrated/h200-sxm-141gb-2026-12-02.xml, calibrate's power and
 * power-duty runs): assumptions for any other GPU. Idle: spec.h. */
#define SUSTAINED_SHARE_OF_LIMIT (687.209 / 700.0)
#define GAMMA_DEFAULT 0.639054507005

/* A busy second not spent at the best GEMM rate (memory-bound kernels, and
 * the slack of GEMMs below it) against one that is: fitted (least squares
 * on the watts, 0.01 steps) to the 1st, 3rd, 5th and 7th points of
 * calibrate/results/h200-2026-12-04-power-steps.jsonl and scored on the
 * others (docs/validation.md, "Power through training steps"); 0.58 before
 * attention had measured curves and the host ran ahead into the backward. */
const double capsim_power_mem_weight = 0.59;

static double clamp01(double x)
{
	return x < 0.0 ? 0.0 : x > 1.0 ? 1.0 : x;
}

/* Group g's GPU limit at which a full rack of its nodes gives off no more
 * than the rack's cooling removes at p's load: 0 where it fits already, or
 * -1 after adding to d why no limit above the GPUs' idle power does. */
static double group_cooling_limit(const capsim_scenario *s, const capsim_power *p, int g,
				  capsim_diags *d)
{
	const capsim_power_group *pg = &p->group[g];
	if (pg->rack_heat_w <= p->cooling_w * (1 + 1e-6))
		return 0.0;
	capsim_group_view v;
	capsim_scenario_group(s, g, &v);
	int n = pg->nodes_per_rack;
	double overhead = pg->node_w - pg->gpus_per_node * pg->gpu_w;
	/* a GPU's share of what the rack's cooling removes beyond its switch trays */
	double budget = ((p->cooling_w - pg->switch_trays_w) / n - overhead) / pg->gpus_per_node;
	double idle = pg->gpu_idle_w;
	if (!(budget > idle * (1 + 1e-6)) || !(p->load > 0)) {
		capsim_diags_add(d, s->file, capsim_scenario_line(s, "facility"),
				 "facility.cooling.per-rack: %.4g kW cannot cool %d node%s of '%s' "
				 "even with its GPUs near idle (%.0f W each, the rest of a node "
				 "%.4g kW); expected at least %.4g kW or fewer nodes a rack "
				 "(facility.rack.nodes)",
				 p->cooling_w / 1e3, n, n == 1 ? "" : "s", v.node->e.id, idle,
				 overhead / 1e3, n * (overhead + pg->gpus_per_node * idle * 1.05) / 1e3);
		return -1.0;
	}
	/* the limit L at which idle + (L - idle) load^gamma is the budget */
	return idle + (budget - idle) / pow(p->load, pg->gpu_gamma);
}

int capsim_cooling_limits(const capsim_scenario *s, const capsim_power *p,
			  double limit[CAPSIM_MAX_GROUPS], capsim_diags *d)
{
	for (int g = 0; g < CAPSIM_MAX_GROUPS; g++)
		limit[g] = 0.0;
	if (!p->has_racks || !(p->cooling_w > 0))
		return 0;
	int need = 0;
	for (int g = 0; g < p->n_groups; g++) {
		limit[g] = group_cooling_limit(s, p, g, d);
		if (limit[g] < 0)
			return -1;
		need += limit[g] > 0;
	}
	return need;
}

/* p's load: the critical stage's kernels' share of the step and their
 * tensor-core FLOP against the best GEMM rate of the training dtype on its
 * group's GPU (its saturation of the dense peak, at the power limit's
 * clock) */
static void step_load(const capsim_scenario *s, const capsim_step *st, capsim_power *out)
{
	double step = st->step_time_s;
	int cg = st->critical_group >= 0 && st->critical_group < s->n_groups ? st->critical_group : 0;
	capsim_group_view v;
	capsim_scenario_group(s, cg, &v);
	capsim_gpu_perf perf;
	capsim_gpu_perf_for(s, v.gpu, v.node, &perf);
	int dt = s->dtype;
	double sat = dt == CAPSIM_DTYPE_FP8 ? perf.gemm_sat_fp8 : perf.gemm_sat;
	if (perf.gemm_cal[dt].params > 0 && perf.gemm_cal[dt].sat > 0)
		sat = perf.gemm_cal[dt].sat;
	double rate = capsim_gpu_peak(v.gpu, dt) * sat * perf.clock_scale;
	if (!(rate > 0))
		rate = v.gpu->peak_bf16_flop_per_s * perf.gemm_sat;
	out->busy = clamp01(st->compute_s / step);
	out->flop_share = rate > 0 ? clamp01(st->compute_tensor_flop / step / rate) : 0.0;
	if (out->flop_share > out->busy)
		out->flop_share = out->busy;
	out->load = clamp01(out->flop_share +
			    capsim_power_mem_weight * (out->busy - out->flop_share));
}

/* Group g's GPU curve, its draw at load, its node's draw at the step, idle
 * and at peak */
static void group_draw(const capsim_scenario *s, int g, double load, capsim_power_group *pg)
{
	capsim_group_view v;
	capsim_scenario_group(s, g, &v);
	const capsim_gpu *gpu = v.gpu;
	const capsim_node *node = v.node;
	int capped = gpu->power_limit_w > 0 && gpu->power_limit_w < gpu->tdp_w;
	double limit = capped ? gpu->power_limit_w : gpu->tdp_w;
	double idle = gpu->cal.power_idle_w > 0 ? gpu->cal.power_idle_w :
			CAPSIM_IDLE_SHARE_OF_TDP * gpu->tdp_w;
	double sust = gpu->cal.power_sustained_w > 0 ? gpu->cal.power_sustained_w :
			SUSTAINED_SHARE_OF_LIMIT * limit;
	if (sust > limit)
		sust = limit;
	pg->gpu_idle_w = idle;
	pg->gpu_sustained_w = sust;
	pg->gpu_gamma = gpu->cal.power_gamma > 0 ? gpu->cal.power_gamma : GAMMA_DEFAULT;
	pg->gpu_w = idle + (sust - idle) * pow(load, pg->gpu_gamma);
	double overhead = capsim_node_overhead(node, gpu, v.nic, 0);
	pg->gpus_per_node = node->gpus;
	pg->nodes = v.nodes;
	pg->node_w = node->gpus * pg->gpu_w + overhead;
	pg->node_idle_w = node->gpus * idle + overhead;
	/* racks are provisioned at the node's peak */
	pg->node_max_w = capsim_node_peak_w(node, gpu, v.nic);
	if (!(pg->node_max_w > 0))
		pg->node_max_w = pg->node_w;
	/* a rack-scale system (its rack's switch trays given): the domain's
	 * trays and its switch trays */
	if (node->switch_trays > 0 && node->domain_gpus > node->gpus &&
	    node->domain_gpus % node->gpus == 0) {
		pg->domain_nodes = node->domain_gpus / node->gpus;
		pg->switch_trays_w = node->switch_trays * node->switch_tray_w;
	}
}

/* A rack-scale group's racks: one domain each, whole, at its peak. Returns
 * 0, or -1 after adding to d why the facility's rack cannot take one. */
static int domain_racks(const capsim_scenario *s, const capsim_facility *f,
			capsim_power_group *pg, capsim_diags *d)
{
	double rack = pg->domain_nodes * pg->node_max_w + pg->switch_trays_w;
	if (f->rack_power_w < rack * (1 - 1e-9)) {
		capsim_diags_add(d, s->file, capsim_scenario_line(s, "facility"),
				 "facility.rack.power: a rack of %.4g kW cannot power one whole "
				 "NVLink domain of %d nodes (%.4g kW each at peak) and its switch "
				 "trays (%.4g kW); expected at least %.4g kW",
				 f->rack_power_w / 1e3, pg->domain_nodes, pg->node_max_w / 1e3,
				 pg->switch_trays_w / 1e3, rack / 1e3);
		return -1;
	}
	if (f->rack_nodes > 0 && f->rack_nodes != pg->domain_nodes) {
		capsim_diags_add(d, s->file, capsim_scenario_line(s, "facility"),
				 "facility.rack.nodes: %d, but a rack of a rack-scale system holds "
				 "one whole NVLink domain; expected %d",
				 f->rack_nodes, pg->domain_nodes);
		return -1;
	}
	pg->nodes_per_rack = pg->domain_nodes;
	return 0;
}

/* An ordinary group's nodes a rack: as many as the rack's power (and,
 * without rack.nodes, its cooling) allows at their peak. Returns 0, or -1
 * after adding to d why not. */
static int node_racks(const capsim_scenario *s, const capsim_facility *f,
		      capsim_power_group *pg, capsim_diags *d)
{
	double node_max = pg->node_max_w;
	pg->nodes_per_rack = (int)floor(f->rack_power_w / node_max);
	if (pg->nodes_per_rack < 1) {
		capsim_diags_add(d, s->file, capsim_scenario_line(s, "facility"),
				 "facility.rack.power: a rack of %.4g kW cannot power one node of "
				 "%.4g kW (the node's peak); expected at least %.4g kW",
				 f->rack_power_w / 1e3, node_max / 1e3, node_max / 1e3);
		return -1;
	}
	if (f->rack_nodes > 0) {
		if (f->rack_nodes > pg->nodes_per_rack) {
			capsim_diags_add(d, s->file, capsim_scenario_line(s, "facility"),
					 "facility.rack.nodes: %d nodes of %.4g kW (at peak) "
					 "exceed rack.power %.4g kW; expected at most %d",
					 f->rack_nodes, node_max / 1e3, f->rack_power_w / 1e3,
					 pg->nodes_per_rack);
			return -1;
		}
		pg->nodes_per_rack = f->rack_nodes;
	} else if (f->cooling_w > 0 && floor(f->cooling_w / node_max) < pg->nodes_per_rack) {
		/* as many as the cooling takes at the nodes' peak, at least one
		 * (which may then run throttled) */
		pg->nodes_per_rack = (int)fmax(1.0, floor(f->cooling_w / node_max));
	}
	return 0;
}

/* Group g's racks under facility f, their power at peak, heat at the
 * step's load and circuits. Returns 0, or -1 after adding to d why not. */
static int group_racks(const capsim_scenario *s, const capsim_facility *f, double circuit_w,
		       capsim_power_group *pg, capsim_diags *d)
{
	int rc = pg->domain_nodes > 0 ? domain_racks(s, f, pg, d) : node_racks(s, f, pg, d);
	if (rc < 0)
		return -1;
	pg->rack_w = pg->nodes_per_rack * pg->node_max_w + pg->switch_trays_w;
	pg->rack_heat_w = pg->nodes_per_rack * pg->node_w + pg->switch_trays_w;
	pg->racks = (pg->nodes + pg->nodes_per_rack - 1) / pg->nodes_per_rack;
	if (circuit_w > 0)
		pg->circuits_per_rack = (int)ceil(pg->rack_w / circuit_w - 1e-9);
	return 0;
}

/* With a facility's racks: each group's, and the totals (power.h) */
static int facility_racks(const capsim_scenario *s, capsim_power *out, capsim_diags *d)
{
	const capsim_facility *f = &s->facility;
	out->has_racks = 1;
	if (f->circuit_v > 0 && f->circuit_a > 0)
		out->circuit_w = 0.8 * f->circuit_v * f->circuit_a *
				 (f->circuit_phases == 3 ? sqrt(3.0) : 1.0);
	out->cooling_w = f->cooling_w;
	for (int g = 0; g < out->n_groups; g++) {
		capsim_power_group *pg = &out->group[g];
		if (group_racks(s, f, out->circuit_w, pg, d) < 0)
			return -1;
		out->racks += pg->racks;
		if (g == 0 || pg->nodes_per_rack < out->nodes_per_rack)
			out->nodes_per_rack = pg->nodes_per_rack;
		if (pg->circuits_per_rack > out->circuits_per_rack)
			out->circuits_per_rack = pg->circuits_per_rack;
		if (pg->rack_heat_w > out->rack_heat_w)
			out->rack_heat_w = pg->rack_heat_w;
		if (pg->rack_w > out->rack_w)
			out->rack_w = pg->rack_w;
	}
	return 0;
}

/* The fabric's switches and the shared file system: their draw in the step
 * (typical) and at peak (each switch's power.max where given) */
static void fabric_draw(const capsim_scenario *s, int switches, capsim_power *out)
{
	out->switches = switches;
	if (s->has_switch && s->fabric_switch.power_typical_w > 0) {
		const capsim_switch *sw = &s->fabric_switch;
		out->switches_w = switches * sw->power_typical_w;
		out->switches_max_w = switches * (sw->power_max_w > sw->power_typical_w ?
						  sw->power_max_w : sw->power_typical_w);
	}
	if (s->has_shared_storage && s->shared_storage.power_typical_w > 0)
		out->storage_w = s->shared_storage.power_typical_w;
}

/* The IT load in the step, idle and at peak: every group's nodes, the
 * rack-scale systems' switch trays (one set a domain, at their one
 * figure), the fabric's switches and the shared file system */
static void it_load(capsim_power *out)
{
	for (int g = 0; g < out->n_groups; g++) {
		const capsim_power_group *pg = &out->group[g];
		if (pg->domain_nodes > 0)
			out->switch_trays_w += pg->nodes / pg->domain_nodes * pg->switch_trays_w;
		out->it_w += pg->nodes * pg->node_w;
		out->it_idle_w += pg->nodes * pg->node_idle_w;
		out->it_peak_w += pg->nodes * pg->node_max_w;
	}
	double fixed = out->switch_trays_w + out->storage_w;
	out->it_w += fixed + out->switches_w;
	out->it_idle_w += fixed + out->switches_w;
	out->it_peak_w += fixed + out->switches_max_w;
}

int capsim_power_estimate(const capsim_scenario *s, const capsim_step *st, int switches,
			  capsim_power *out, capsim_diags *d)
{
	memset(out, 0, sizeof *out);
	double step = st->step_time_s;
	if (!(step > 0.0))
		return 0;
	step_load(s, st, out);
	out->pue = s->has_facility && s->facility.pue > 0 ? s->facility.pue : 1.0;
	out->n_groups = s->n_groups > 0 ? s->n_groups : 1;
	for (int g = 0; g < out->n_groups; g++) {
		group_draw(s, g, out->load, &out->group[g]);
		/* the loader refuses a rack-scale group that is not whole
		 * NVLink domains (a rack never holds part of one) */
		CAPSIM_ASSERT(out->group[g].domain_nodes < 1 ||
			      out->group[g].nodes % out->group[g].domain_nodes == 0);
	}
	/* group 0's, for the result's one-GPU keys */
	const capsim_power_group *g0 = &out->group[0];
	capsim_group_view v0;
	capsim_scenario_group(s, 0, &v0);
	out->gpu_idle_w = g0->gpu_idle_w;
	out->gpu_sustained_w = g0->gpu_sustained_w;
	out->gpu_gamma = g0->gpu_gamma;
	out->curve_measured = v0.gpu->cal.power_idle_w > 0 && v0.gpu->cal.power_sustained_w > 0;
	out->gpu_w = g0->gpu_w;
	out->node_w = g0->node_w;
	out->node_max_w = g0->node_max_w;
	fabric_draw(s, switches, out);
	it_load(out);
	out->facility_w = out->it_w * out->pue;
	out->energy_per_step_j = out->facility_w * step;
	out->energy_to_train_j = out->energy_per_step_j * st->steps;
	if (!s->has_facility || !(s->facility.rack_power_w > 0))
		return 0;
	return facility_racks(s, out, d);
}

/* the most group g's GPU draws: its limit, or the cooling's throttle */
static double gpu_most_w(const capsim_scenario *s, const capsim_power *p, int g)
{
	capsim_group_view v;
	capsim_scenario_group(s, g, &v);
	double w = v.gpu->power_limit_w > 0 ? fmin(v.gpu->power_limit_w, v.gpu->tdp_w) :
					      v.gpu->tdp_w;
	if (p->group_throttle_w[g] > 0)
		w = fmin(w, p->group_throttle_w[g]);
	return w;
}

void capsim_power_gpu_moved(const capsim_scenario *s, const capsim_power *p, double f,
			    capsim_power *out)
{
	CAPSIM_ASSERT(f > 0);
	*out = *p;
	for (int g = 0; g < p->n_groups; g++) {
		capsim_power_group *pg = &out->group[g];
		double w = fmin(pg->gpu_w * f, fmax(gpu_most_w(s, p, g), pg->gpu_w));
		double more = pg->gpus_per_node * (w - pg->gpu_w);
		pg->gpu_w = w;
		pg->node_w += more;
		out->it_w += pg->nodes * more;
	}
	out->gpu_w = out->group[0].gpu_w;
	out->node_w = out->group[0].node_w;
	out->facility_w = out->it_w * out->pue;
	double k = p->facility_w > 0 ? out->facility_w / p->facility_w : 1.0;
	out->energy_per_step_j = p->energy_per_step_j * k;
	out->energy_to_train_j = p->energy_to_train_j * k;
}
