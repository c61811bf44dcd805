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
	double node_max_w;        /* its datasheet maximum, what racks are provisioned for */
	double switches_w;        /* the fabric's switches, typical power */
	double storage_w;         /* the shared file system's typical power (0: not given) */
	int switches;
	double it_w;              /* every node and switch */
	double pue;               /* the facility's; 1 without one */
	double facility_w;        /* it_w x pue */
	double energy_per_step_j; /* facility_w x step */
	double energy_to_train_j;
	/* with a facility: racks at the node's maximum under the rack's power,
	 * and branch circuits at 80% of their rating (NEC continuous load) */
	int has_racks;
	int nodes_per_rack, racks;
	double circuit_w;         /* one circuit's usable power; 0: no circuit given */
	int circuits_per_rack;
	/* cooling: what a rack's cooling removes (0: not given), the heat its
	 * nodes give off at the step's load, and the GPU power limit they were
	 * throttled to so that it fits (0: none; capsim_eval sets it) */
	double cooling_w, rack_heat_w;
	double throttle_limit_w;
	double clock_scale;       /* the throttled GPUs' clock over the TDP's */
} capsim_power;

/* What a busy second that is not spent at the best GEMM rate draws, against
 * one that is (fitted: power.c says on what). */
extern const double capsim_power_mem_weight;

/* Cooling: the GPU power limit at which p's racks give off what their
 * cooling removes at p's load (group 0's nodes): 0 where they fit already,
 * or -1 after adding to d why no limit above the GPUs' idle power does. */
double capsim_cooling_limit(const capsim_scenario *s, const capsim_power *p, capsim_diags *d);

/* Fill *out for scenario s and its step st (switches: the fabric's switch
 * count). Returns 0, or -1 after adding to d why not: a rack that cannot
 * power one node. */
int capsim_power_estimate(const capsim_scenario *s, const capsim_step *st, int switches,
			  capsim_power *out, capsim_diags *d);

#endif
