/* bom.c - the bill of materials of a scenario's cluster; see bom.h. */
#include "bom.h"

#include <stdio.h>
#include <string.h>

int capsim_bom_lines(const capsim_scenario *s, const capsim_cost_inputs *in,
		     const capsim_cost *c, capsim_bom_line *v)
{
	const capsim_fabric_counts *fc = &in->fabric;
	const capsim_layout *lay = in->layout;
	const capsim_power *pw = in->power;
	int n = 0;
	int groups = s->n_groups > 0 ? s->n_groups : 1;
	for (int g = 0; g < groups; g++) {
		capsim_group_view gv;
		capsim_scenario_group(s, g, &gv);
		capsim_bom_line *l = &v[n++];
		memset(l, 0, sizeof *l);
		l->part = "node";
		snprintf(l->id, sizeof l->id, "%s", gv.node->e.id);
		l->count = gv.nodes;
		l->unit_usd = gv.node->price_usd > 0 ? gv.node->price_usd : -1;
		snprintf(l->date, sizeof l->date, "%s", gv.node->price_date);
		l = &v[n++];
		memset(l, 0, sizeof *l);
		l->part = "GPU";
		snprintf(l->id, sizeof l->id, "%s", gv.gpu->e.id);
		l->count = (double)gv.nodes * gv.node->gpus;
		l->note = "in the node's price";
		l = &v[n++];
		memset(l, 0, sizeof *l);
		l->part = "NIC";
		snprintf(l->id, sizeof l->id, "%s", gv.nic ? gv.nic->e.id : "-");
		l->count = (double)gv.nodes * gv.node->nics;
		l->note = "in the node's price";
	}
	static const char *const tiers[3] = { "leaf switch", "spine switch", "core switch" };
	int counts[3] = { fc->leaves, fc->spines, fc->cores };
	for (int k = 0; k < 3; k++) {
		if (counts[k] <= 0)
			continue;
		capsim_bom_line *l = &v[n++];
		memset(l, 0, sizeof *l);
		l->part = tiers[k];
		snprintf(l->id, sizeof l->id, "%s", s->has_switch ? s->fabric_switch.e.id : "-");
		l->count = counts[k];
		l->unit_usd = s->has_switch && s->fabric_switch.price_usd > 0 ?
				      s->fabric_switch.price_usd : -1;
		if (s->has_switch)
			snprintf(l->date, sizeof l->date, "%s", s->fabric_switch.price_date);
	}
	static const char *const cables[3] = { "cable node-leaf", "cable leaf-spine",
					       "cable spine-core" };
	long cab[3] = { fc->cables_node_leaf, fc->cables_leaf_spine, fc->cables_spine_core };
	long links = 0;
	const int by_layout = lay->has_layout;
	for (int k = 0; k < 3; k++) {
		if (cab[k] <= 0)
			continue;
		links += cab[k];
		capsim_bom_line *l = &v[n++];
		memset(l, 0, sizeof *l);
		l->part = cables[k];
		snprintf(l->id, sizeof l->id, "-");
		l->count = (double)cab[k];
		l->note = by_layout ? "by reach below" : "in cost.cabling";
	}
	if (links > 0 && by_layout) {
		/* the layout's reach classes, priced by cost.cable-* where every
		 * class has a price, else inside cost.cabling */
		static const char *const part[CAPSIM_CABLE__COUNT] = {
			"cable dac", "cable acc", "cable multimode", "cable singlemode",
			"cable sm-2km",
		};
		for (int k = 0; k < CAPSIM_CABLE__COUNT; k++) {
			if (!lay->total[k])
				continue;
			capsim_bom_line *l = &v[n++];
			memset(l, 0, sizeof *l);
			l->part = part[k];
			snprintf(l->id, sizeof l->id, "cost.cable-%s", capsim_cable_class_names[k]);
			l->count = (double)lay->total[k];
			if (c->cabling_by_reach)
				l->unit_usd = s->cable_usd[k];
			else
				l->note = "in cost.cabling (no price for every class: cost.cable-*)";
		}
		capsim_bom_line *l = &v[n++];
		memset(l, 0, sizeof *l);
		l->part = "transceiver port";
		snprintf(l->id, sizeof l->id, "-");
		l->count = (double)lay->optical_ends;
		l->note = "two an optical cable (a twin-port module carries two); in the cables' price";
	} else if (links > 0) {
		capsim_bom_line *l = &v[n++];
		memset(l, 0, sizeof *l);
		l->part = "transceiver";
		snprintf(l->id, sizeof l->id, "-");
		l->count = 2.0 * (double)links;
		l->note = "two a cable, taken as optical (no layout: an assumption); in cost.cabling";
	}
	if (links > 0 && !c->cabling_by_reach) {
		capsim_bom_line *l = &v[n++];
		memset(l, 0, sizeof *l);
		l->part = "cabling";
		snprintf(l->id, sizeof l->id, "cost.cabling");
		l->count = (double)capsim_scenario_gpus(s);
		l->unit_usd = s->cabling_usd_per_gpu;
		l->note = "per GPU";
	}
	if (s->has_shared_storage) {
		capsim_bom_line *l = &v[n++];
		memset(l, 0, sizeof *l);
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
	if (pw->has_racks) {
		capsim_bom_line *l = &v[n++];
		memset(l, 0, sizeof *l);
		l->part = "rack";
		snprintf(l->id, sizeof l->id, "%s", s->facility.e.id);
		l->count = pw->racks;
		l->note = "not priced (colocation is opex)";
		if (pw->circuit_w > 0) {
			l = &v[n++];
			memset(l, 0, sizeof *l);
			l->part = "branch circuit";
			snprintf(l->id, sizeof l->id, "%s", s->facility.e.id);
			l->count = (double)pw->racks * pw->circuits_per_rack;
			l->note = "a rack PDU each; not priced (no public dated price)";
		}
	}
	return n;
}

