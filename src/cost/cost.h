/* cost.h - the decision layer's money: owning the cluster (capex, opex, TCO
 * and its present value, a busy GPU-hour), the energy of the training run,
 * renting the same work from the scenario's cloud offer, the on-prem against
 * cloud break-even, the design's own cost to train (cost.acquire), and the
 * burst plan. Equations and sources: docs/model.md ("Money for the training
 * run"). US dollars, seconds.
 *
 * The cost model reads what the other models sized (the facility's power,
 * floor layout and reliability, the fabric's switches and cables, the
 * step's time to train) and never simulates: the burst job's throughput is
 * the caller's to evaluate (capsim_cost_burst_job gives its scenario). */
#ifndef CAPSIM_COST_H
#define CAPSIM_COST_H

#include "diag.h"
#include "fabric.h"
#include "layout.h"
#include "power.h"
#include "reliab.h"
#include "spec.h"

/* What the cost model prices: the cluster as the models sized it. */
typedef struct capsim_cost_inputs {
	const capsim_power *power;
	const capsim_layout *layout;
	const capsim_reliab *reliab;
	capsim_fabric_counts fabric;  /* switches and cables; all zero without a fabric */
	double time_to_train_s;       /* the step's, failures not counted */
} capsim_cost_inputs;

typedef struct capsim_cost {
	/* owning the cluster over cost.horizon at cost.utilization (has_capex:
	 * every part has a price): TCO = capex - residual + opex x horizon */
	int has_capex;
	double capex_usd, opex_per_year_usd, tco_usd;
	double capex_nodes_usd;    /* every node group's nodes at their price */
	double capex_switches_usd; /* the fabric's switches at theirs */
	double capex_cabling_usd;  /* by reach class (cabling_by_reach) or cost.cabling a GPU */
	int cabling_by_reach;
	double capex_storage_usd;  /* the shared file system's price, where it has one */
	double residual_usd;       /* what the nodes and switches resell for at the horizon */
	/* opex_per_year_usd by class, each its rate x its base: energy at
	 * cost.utilization, colocation of the IT load at peak, support by part
	 * class (CAPSIM_SUPPORT_*: its share x the class's capex), insurance
	 * (its share x the capex) and staff */
	double opex_energy_per_year_usd, opex_colocation_per_year_usd;
	double opex_support_per_year_usd[CAPSIM_SUPPORT__COUNT];
	double opex_insurance_per_year_usd, opex_staff_per_year_usd;
	char capex_excludes[160];  /* what the capex leaves out for want of a price; "" none */
	/* without a capex: the part whose missing price leaves out the capex,
	 * TCO, on-prem cost and break-even, and where to give it; "" none */
	char unpriced[512];
	double tco_npv_usd;        /* its present value at cost.discount-rate */
	double onprem_cost_per_gpu_hour_usd, onprem_cost_to_train_usd;
	/* against the cloud offer, over the horizon, undiscounted: the
	 * utilisation at which a busy GPU-hour owned costs what one rented
	 * does (> 1: renting is cheaper at any; inf: renting is cheaper even
	 * against the energy alone), and at cost.utilization the month in which
	 * renting the same busy hours has come to cost more than owning
	 * (capex - residual then + opex so far); inf: never within the
	 * horizon. breakeven_months <= the horizon's months exactly when
	 * breakeven_utilization <= cost.utilization. */
	double breakeven_utilization;
	double breakeven_months;
	char payback[8];              /* "never" where breakeven_months is inf; "" otherwise */
	/* the burst plan (cost.burst): the same workload on up to max-gpus of
	 * the burst cloud's GPUs beside the cluster, the token budget shared so
	 * that both finish together */
	int has_burst_plan;
	int burst_gpus;
	double burst_tokens_per_s;     /* the burst job's, goodput counted */
	double burst_share;            /* of the token budget */
	double burst_wall_to_train_s;  /* both together */
	double burst_cost_usd;         /* the rented GPUs for that time */
	double burst_plan_cost_usd;    /* the cluster's busy GPU-hours (with capex) + the burst */
	/* money for the training run's wall time (goodput counted): the
	 * facility's energy, and the scenario's cloud offer for the same GPUs */
	int has_energy_cost, has_cloud_cost;
	double energy_cost_usd;
	double cloud_cost_usd, cloud_cost_per_million_tokens_usd;
	/* the cloud run: its goodput (hardware failures as the cluster's, and
	 * a spot offer's reclaimed instances), wall time (cost.network-penalty
	 * counted), the reclaims a second and over the run */
	double cloud_goodput, cloud_wall_to_train_s;
	/* cloud_cost_usd's parts: the GPUs, the offer's storage, egress */
	double cloud_gpu_usd, cloud_storage_usd, cloud_egress_usd;
	double cloud_reclaim_rate_per_s, cloud_reclaims;
	/* the design's own cost to train, as cost.acquire gets its GPUs: the
	 * on-prem cost (buy, where every part has a price) or the cloud's (rent) */
	int has_cost_to_train;
	int acquire_rent;
	double cost_to_train_usd, cost_per_million_tokens_usd;
} capsim_cost;

/* Seconds in a mean Julian year: the unit of a rate "a year". */
#define CAPSIM_YEAR_S 3.15576e7

/* The share of a new node's or switch's price that one age_s seconds old
 * resells for: cost.resale x (1 - cost.resale-decline)^(age in years).
 * cost.resale at age 0 (a used part sells below a new one), then convex and,
 * with a decline above 0, decreasing in the age. */
double capsim_cost_resale_share(const capsim_scenario *s, double age_s);

/* What renting the busy hours of t seconds at cost.utilization costs, less
 * what owning costs for them (capex - residual at age t + opex a year x t),
 * for c as capsim_cost_estimate filled it from s (with a capex and a cloud
 * offer; NaN otherwise). Convex in t and negative at 0 where anything
 * loses value on purchase, so it crosses 0 at most once: at the payback. */
double capsim_cost_rent_less_own(const capsim_scenario *s, const capsim_cost *c, double t_s);

/* Fill *out (zeroed first) for scenario s as in sizes it: energy, the cloud
 * run, owning, break-even and the cost to train. The burst plan is left out
 * (capsim_cost_burst_plan adds it). */
void capsim_cost_estimate(const capsim_scenario *s, const capsim_cost_inputs *in,
			  capsim_cost *out);

/* The burst job of s (cost.burst): the same workload, with the same
 * micro-batches per replica, on max-gpus / GPUs-per-node nodes of the
 * cluster's node type, its data-parallel degree and global batch following
 * its size, no cloud or burst of its own. Made from s through the scenario's
 * one edit path (capsim_scenario_set_many), so that it is checked as any
 * scenario is. Returns 1 and fills *out with it, 0 where s has no burst plan
 * to make (no burst offer, another GPU, a size no whole replica fills, or an
 * edit the checks refuse). */
int capsim_cost_burst_job(const capsim_scenario *s, capsim_scenario *out);

/* The burst plan, from the cluster's and the burst job's tokens a second
 * (goodput counted) and the burst job's GPUs: the token budget shared so
 * that both finish together, the rented GPUs' cost for that time, and the
 * plan's total with the cluster's busy GPU-hours where c has a capex. */
void capsim_cost_burst_plan(const capsim_scenario *s, double cluster_tokens_per_s,
			    double burst_tokens_per_s, int burst_gpus, capsim_cost *c);

#endif
