/* bom.c - the bill of materials of a scenario's cluster; see bom.h. */
#include "bom.h"

#include <stdio.h>
#include <string.h>

/* the next line of v, zeroed */
static capsim_bom_line *next_line(capsim_bom_line *v, int *n)
{
	capsim_bom_line *l = &v[(*n)++];
	memset(l, 0, sizeof *l);
	return l;
}

/* each node group's nodes, and the GPUs and NICs in their price */
static void node_lines(const capsim_scenario *s, capsim_bom_line *v, int *n)
{
	int groups = s->n_groups > 0 ? s->n_groups : 1;
	for (int g = 0; g < groups; g++) {
		capsim_group_view gv;
		capsim_scenario_group(s, g, &gv);
		capsim_bom_line *l = next_line(v, n);
		l->part = "node";
		snprintf(l->id, sizeof l->id, "%s", gv.node->e.id);
		l->count = gv.nodes;
		l->unit_usd = gv.node->price_usd > 0 ? gv.node->price_usd : -1;
		snprintf(l->date, sizeof l->date, "%s", gv.node->price_date);
		l = next_line(v, n);
		l->part = "GPU";
		snprintf(l->id, sizeof l->id, "%s", gv.gpu->e.id);
		l->count = (double)gv.nodes * gv.node->gpus;
		l->note = "in the node's price";
		l = next_line(v, n);
		l->part = "NIC";
		snprintf(l->id, sizeof l->id, "%s", gv.nic ? gv.nic->e.id : "-");
		l->count = (double)gv.nodes * gv.node->nics;
		l->note = "in the node's price";
	}
}

/* the fabric's switches, a line a tier */
static void switch_lines(const capsim_scenario *s, const capsim_fabric_counts *fc,
			 capsim_bom_line *v, int *n)
{
	static const char *const tiers[3] = { "leaf switch", "spine switch", "core switch" };
	int counts[3] = { fc->leaves, fc->spines, fc->cores };
	for (int k = 0; k < 3; k++) {
		if (counts[k] <= 0)
			continue;
		capsim_bom_line *l = next_line(v, n);
		l->part = tiers[k];
		snprintf(l->id, sizeof l->id, "%s", s->has_switch ? s->fabric_switch.e.id : "-");
		l->count = counts[k];
		l->unit_usd = s->has_switch && s->fabric_switch.price_usd > 0 ?
				      s->fabric_switch.price_usd : -1;
		if (s->has_switch)
			snprintf(l->date, sizeof l->date, "%s", s->fabric_switch.price_date);
	}
}

/* the layout's reach classes, priced by cost.cable-* where every class has
 * a price, else inside cost.cabling, and their transceiver ports */
static void reach_lines(const capsim_scenario *s, const capsim_layout *lay, const capsim_cost *c,
			capsim_bom_line *v, int *n)
{
	static const char *const part[CAPSIM_CABLE__COUNT] = {
		"cable dac", "cable acc", "cable multimode", "cable singlemode", "cable sm-2km",
	};
	for (int k = 0; k < CAPSIM_CABLE__COUNT; k++) {
		if (!lay->total[k])
			continue;
		capsim_bom_line *l = next_line(v, n);
		l->part = part[k];
		snprintf(l->id, sizeof l->id, "cost.cable-%s", capsim_cable_class_names[k]);
		l->count = (double)lay->total[k];
		if (c->cabling_by_reach)
			l->unit_usd = s->cable_usd[k];
		else
			l->note = "in cost.cabling (no price for every class: cost.cable-*)";
	}
	capsim_bom_line *l = next_line(v, n);
	l->part = "transceiver port";
	snprintf(l->id, sizeof l->id, "-");
	l->count = (double)lay->optical_ends;
	l->note = "two an optical cable (a twin-port module carries two); in the cables' price";
}

/* the fabric's cables a tier, then by reach (with a layout) or as
 * transceivers and cost.cabling (without) */
static void cable_lines(const capsim_scenario *s, const capsim_fabric_counts *fc,
			const capsim_layout *lay, const capsim_cost *c, capsim_bom_line *v, int *n)
{
	static const char *const cables[3] = { "cable node-leaf", "cable leaf-spine",
					       "cable spine-core" };
	long cab[3] = { fc->cables_node_leaf, fc->cables_leaf_spine, fc->cables_spine_core };
	long links = 0;
	const int by_layout = lay->has_layout;
	for (int k = 0; k < 3; k++) {
		if (cab[k] <= 0)
			continue;
		links += cab[k];
		capsim_bom_line *l = next_line(v, n);
		l->part = cables[k];
		snprintf(l->id, sizeof l->id, "-");
		l->count = (double)cab[k];
		l->note = by_layout ? "by reach below" : "in cost.cabling";
	}
	if (links > 0 && by_layout) {
		reach_lines(s, lay, c, v, n);
	} else if (links > 0) {
		capsim_bom_line *l = next_line(v, n);
		l->part = "transceiver";
		snprintf(l->id, sizeof l->id, "-");
		l->count = 2.0 * (double)links;
		l->note = "two a cable, taken as optical (no layout: an assumption); in cost.cabling";
	}
	if (links > 0 && !c->cabling_by_reach) {
		capsim_bom_line *l = next_line(v, n);
		l->part = "cabling";
		snprintf(l->id, sizeof l->id, "cost.cabling");
		l->count = (double)capsim_scenario_gpus(s);
		l->unit_usd = s->cabling_usd_per_gpu;
		l->note = "per GPU";
	}
}

/* the shared file system, priced where the catalog gives a price */
static void storage_line(const capsim_scenario *s, capsim_bom_line *v, int *n)
{
	capsim_bom_line *l = next_line(v, n);
	l->part = "shared storage";
	snprintf(l->id, sizeof l->id, "%s", s->shared_storage.e.id);
	l->count = 1;
	if (s->shared_storage.price_usd > 0) {
		l->unit_usd = s->shared_storage.price_usd;
		snprintf(l->date, sizeof l->date, "%s", s->shared_storage.price_date);
	} else {
		l->unit_usd = -1;
		l->note = "no price: left out of the capex (cluster.storage.shared.price.value)";
	}
}

/* the racks of every node group, and their branch circuits (each group's
 * racks need their own number) */
static void rack_lines(const capsim_scenario *s, const capsim_power *pw, capsim_bom_line *v,
		       int *n)
{
	capsim_bom_line *l = next_line(v, n);
	l->part = "rack";
	snprintf(l->id, sizeof l->id, "%s", s->facility.e.id);
	l->count = pw->racks;
	l->note = "not priced (colocation is opex)";
	if (!(pw->circuit_w > 0))
		return;
	double circuits = 0;
	for (int g = 0; g < pw->n_groups; g++)
		circuits += (double)pw->group[g].racks * pw->group[g].circuits_per_rack;
	l = next_line(v, n);
	l->part = "branch circuit";
	snprintf(l->id, sizeof l->id, "%s", s->facility.e.id);
	l->count = circuits;
	l->note = "a rack PDU each; not priced (no public dated price)";
}

int capsim_bom_lines(const capsim_scenario *s, const capsim_cost_inputs *in,
		     const capsim_cost *c, capsim_bom_line *v)
{
	int n = 0;
	node_lines(s, v, &n);
	switch_lines(s, &in->fabric, v, &n);
	cable_lines(s, &in->fabric, in->layout, c, v, &n);
	if (s->has_shared_storage)
		storage_line(s, v, &n);
	if (in->power->has_racks)
		rack_lines(s, in->power, v, &n);
	return n;
}
