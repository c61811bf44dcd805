/* power.h - the facility: a GPU's power through the step from its kernels'
 * share of it and the power curve of its profile, a node's, the fabric's
 * switches, the IT load and the facility's (PUE), energy per step and to
 * train, and racks under the facility's rack and circuit limits. Equations
 * and sources: docs/model.md ("Power and energy"). Watts, joules. */
#ifndef CAPSIM_POWER_H
#define CAPSIM_POWER_H

#include "diag.h"
#include "spec.h"
#include "step.h"

/* One node group in the facility: its GPU's curve and draw, its node's, and
 * its own racks (a rack holds nodes of one type). */
typedef struct capsim_power_group {
	double gpu_idle_w, gpu_sustained_w, gpu_gamma; /* the curve of its GPU */
	double gpu_w;             /* one GPU, the mean over the step */
	double node_w;            /* one node: GPUs + overhead */
	double node_idle_w;       /* one node with its GPUs idle */
	double node_max_w;        /* its peak, what its racks are provisioned for: its GPUs
				   * at their limit and the overhead at full load
				   * (capsim_node_overhead); power.max where the node has
				   * no breakdown, less what capped GPUs cannot draw */
	int gpus_per_node, nodes;
	/* a rack-scale system (the node's NVLink domain spans domain_nodes of
	 * them): each domain whole in a rack of its own with its switch trays
	 * (switch_trays_w a rack); domain_nodes 0: an ordinary node */
	int domain_nodes;
	double switch_trays_w;
	int nodes_per_rack, racks, circuits_per_rack; /* with a facility's racks */
	double rack_w;            /* a full rack at peak: nodes_per_rack x node_max_w +
				   * switch_trays_w, what its circuits carry */
	double rack_heat_w;       /* a full rack of them at the step's load */
} capsim_power_group;

typedef struct capsim_power {
	/* the critical stage's GPU over the step: its kernels' share (busy),
	 * and its tensor-core FLOP over what the GPU's best GEMM rate would do
	 * in the step (flop_share) */
	double busy, flop_share;
	double load;              /* flop_share + mem_weight x (busy - flop_share), at most 1 */
	/* the curve P(u) = idle + (sustained - idle) u^gamma */
	double gpu_idle_w, gpu_sustained_w, gpu_gamma;
	int curve_measured;       /* 1: idle and sustained from the GPU's profile */
	double gpu_w;             /* one GPU, the mean over the step (group 0's GPU) */
	double node_w;            /* one node of group 0: GPUs + overhead */
	double node_max_w;        /* its peak (group 0's node_max_w) */
	double switches_w;        /* the fabric's switches, typical power */
	double switches_max_w;    /* at their power.max (typical where none is given) */
	double switch_trays_w;    /* rack-scale systems' NVLink switch trays, every domain's */
	double storage_w;         /* the shared file system's typical power (0: not given) */
	int switches;
	double it_w;              /* every node and switch at the step's draw */
	double it_idle_w;         /* the same with every GPU idle */
	double it_peak_w;         /* every node at node_max_w, switches at their maximum */
	double pue;               /* the facility's; 1 without one */
	double facility_w;        /* it_w x pue */
	double energy_per_step_j; /* facility_w x step */
	double energy_to_train_j;
	/* with a facility: each group's nodes in racks of their own at the
	 * node's peak under the rack's power (a rack-scale system's NVLink
	 * domains one a rack, whole), and branch circuits at 80% of their
	 * rating (NEC continuous load) for a rack's peak. The totals: racks the sum over
	 * groups; nodes_per_rack the fewest, circuits_per_rack the most and
	 * rack_heat_w the hottest of a group's full rack (group 0's alone in a
	 * one-group cluster) */
	int has_racks;
	int nodes_per_rack, racks;
	double rack_w;            /* the most of a group's full rack at peak */
	double circuit_w;         /* one circuit's usable power; 0: no circuit given */
	int circuits_per_rack;
	/* cooling: what a rack's cooling removes (0: not given), the heat its
	 * nodes give off at the step's load, and the GPU power limit they were
	 * throttled to so that it fits (0: none; capsim_eval sets it: the
	 * lowest of the groups' limits, clock_scale that group's) */
	double cooling_w, rack_heat_w;
	double throttle_limit_w;
	double clock_scale;       /* the throttled GPUs' clock over the TDP's */
	int n_groups;             /* the scenario's */
	capsim_power_group group[CAPSIM_MAX_GROUPS];
	double group_throttle_w[CAPSIM_MAX_GROUPS]; /* each group's limit; 0: not throttled */
} capsim_power;

/* What a busy second that is not spent at the best GEMM rate draws, against
 * one that is (fitted: power.c says on what). */
extern const double capsim_power_mem_weight;

/* Cooling, per node group (a rack holds one group's nodes): limit[g] is the
 * GPU power limit at which group g's racks give off what their cooling
 * removes at p's load, 0 where they fit already. Returns the number of
 * groups that need a limit, or -1 after adding to d why no limit above a
 * group's GPUs' idle power does. */
int capsim_cooling_limits(const capsim_scenario *s, const capsim_power *p,
			  double limit[CAPSIM_MAX_GROUPS], capsim_diags *d);

/* p with each group's GPU drawing f times its mean over the step, at most
 * the limit it runs under (the scenario's power limit or TDP, or the
 * cooling's throttle), and what follows from that draw moved alike: the
 * node's draw, the IT and facility draws and the energies. The idle, peak
 * and rack figures are what is provisioned, not the step's draw, and stay.
 * What a band on the GPU's power carries (docs/model.md, "Error bands on
 * results"). f > 0. */
void capsim_power_gpu_moved(const capsim_scenario *s, const capsim_power *p, double f,
			    capsim_power *out);

/* Fill *out for scenario s and its step st (switches: the fabric's switch
 * count). Returns 0, or -1 after adding to d why not: a rack-scale group
 * whose nodes are not whole NVLink domains (a rack never holds part of one),
 * or, with a facility's racks, a rack that cannot power one node of some
 * group, or one whole domain of a rack-scale group. */
int capsim_power_estimate(const capsim_scenario *s, const capsim_step *st, int switches,
			  capsim_power *out, capsim_diags *d);

#endif
