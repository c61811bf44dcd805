/* cmd_bom.c - `capsim bom`: the bill of materials of a scenario's cluster,
 * its parts counted from the topology, priced where the catalog has a price,
 * and the capex; see docs/user-guide.md ("Bill of materials"). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "catalog.h"
#include "cli.h"
#include "eval.h"
#include "scenario.h"

static void help(FILE *out)
{
	fprintf(out,
		"usage: capsim bom [SCENARIO] [--set PATH=VALUE]... [--json]\n"
		"\n"
		"The cluster's parts: nodes (with their GPUs and NICs), the fabric's leaf,\n"
		"spine and core switches and the cables between them, by reach class on\n"
		"the facility's floor (copper in a rack, optics with two transceiver ports\n"
		"beyond), the shared storage, racks and branch circuits (a rack PDU each)\n"
		"under the facility's limits,\n"
		"each priced where the catalog has a price with its date, and the capex.\n"
		"A part without a price is listed as such: give one with --set\n"
		"(cluster.node.price.value, cluster.fabric.switch.price.value,\n"
		"cost.cable-dac ... cost.cable-singlemode-2km, cluster.storage.shared.price.value).\n");
}

typedef struct bom_line {
	const char *part;   /* "node", "leaf switch", ... */
	char id[CAPSIM_ID_LEN];
	double count;
	double unit_usd;    /* < 0: no price in the catalog; 0: priced elsewhere */
	char date[CAPSIM_DATE_LEN];
	const char *note;
} bom_line;

#define BOM_MAX (CAPSIM_MAX_GROUPS * 3 + 20)

static int lines_of(const capsim_scenario *s, const capsim_result *r, bom_line *v)
{
	int n = 0;
	int groups = s->n_groups > 0 ? s->n_groups : 1;
	for (int g = 0; g < groups; g++) {
		capsim_group_view gv;
		capsim_scenario_group(s, g, &gv);
		bom_line *l = &v[n++];
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
	int counts[3] = { r->leaves, r->spines, r->cores };
	for (int k = 0; k < 3; k++) {
		if (counts[k] <= 0)
			continue;
		bom_line *l = &v[n++];
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
	long c[3] = { r->cables_node_leaf, r->cables_leaf_spine, r->cables_spine_core };
	long links = 0;
	const int by_layout = r->layout.has_layout;
	for (int k = 0; k < 3; k++) {
		if (c[k] <= 0)
			continue;
		links += c[k];
		bom_line *l = &v[n++];
		memset(l, 0, sizeof *l);
		l->part = cables[k];
		snprintf(l->id, sizeof l->id, "-");
		l->count = (double)c[k];
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
			if (!r->layout.total[k])
				continue;
			bom_line *l = &v[n++];
			memset(l, 0, sizeof *l);
			l->part = part[k];
			snprintf(l->id, sizeof l->id, "cost.cable-%s", capsim_cable_class_names[k]);
			l->count = (double)r->layout.total[k];
			if (r->cabling_by_reach)
				l->unit_usd = s->cable_usd[k];
			else
				l->note = "in cost.cabling (no price for every class: cost.cable-*)";
		}
		bom_line *l = &v[n++];
		memset(l, 0, sizeof *l);
		l->part = "transceiver port";
		snprintf(l->id, sizeof l->id, "-");
		l->count = (double)r->layout.optical_ends;
		l->note = "two an optical cable (a twin-port module carries two); in the cables' price";
	} else if (links > 0) {
		bom_line *l = &v[n++];
		memset(l, 0, sizeof *l);
		l->part = "transceiver";
		snprintf(l->id, sizeof l->id, "-");
		l->count = 2.0 * (double)links;
		l->note = "two a cable, taken as optical (no layout: an assumption); in cost.cabling";
	}
	if (links > 0 && !r->cabling_by_reach) {
		bom_line *l = &v[n++];
		memset(l, 0, sizeof *l);
		l->part = "cabling";
		snprintf(l->id, sizeof l->id, "cost.cabling");
		l->count = (double)capsim_scenario_gpus(s);
		l->unit_usd = s->cabling_usd_per_gpu;
		l->note = "per GPU";
	}
	if (s->has_shared_storage) {
		bom_line *l = &v[n++];
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
	if (r->power.has_racks) {
		bom_line *l = &v[n++];
		memset(l, 0, sizeof *l);
		l->part = "rack";
		snprintf(l->id, sizeof l->id, "%s", s->facility.e.id);
		l->count = r->power.racks;
		l->note = "not priced (colocation is opex)";
		if (r->power.circuit_w > 0) {
			l = &v[n++];
			memset(l, 0, sizeof *l);
			l->part = "branch circuit";
			snprintf(l->id, sizeof l->id, "%s", s->facility.e.id);
			l->count = (double)r->power.racks * r->power.circuits_per_rack;
			l->note = "a rack PDU each; not priced (no public dated price)";
		}
	}
	return n;
}

static void print_text(const capsim_scenario *s, const capsim_result *r, const bom_line *v,
		       int n, FILE *f)
{
	fprintf(f, "%s: bill of materials\n", s->name);
	fprintf(f, "  %-17s %-22s %9s %12s %13s  %s\n", "part", "id", "count", "unit", "total",
		"price date / note");
	int missing = 0;
	for (int i = 0; i < n; i++) {
		const bom_line *l = &v[i];
		char unit[32] = "", total[32] = "";
		if (l->unit_usd > 0) {
			snprintf(unit, sizeof unit, "$%.0f", l->unit_usd);
			snprintf(total, sizeof total, "$%.0f", l->unit_usd * l->count);
		} else if (l->unit_usd < 0) {
			snprintf(unit, sizeof unit, "no price");
			missing = 1;
		}
		fprintf(f, "  %-17s %-22s %9.0f %12s %13s  %s\n", l->part, l->id, l->count, unit,
			total, l->note ? l->note : l->date);
	}
	if (r->has_capex)
		fprintf(f, "  capex %.0f USD ($%.4gM)%s%s\n", r->capex_usd, r->capex_usd / 1e6,
			r->capex_excludes[0] ? "; leaves out " : "", r->capex_excludes);
	else
		fprintf(f, "  capex: not computed%s\n",
			missing ? ": a part has no price in the catalog; give it with --set" : "");
}

static json_t *to_json(const capsim_result *r, const bom_line *v, int n)
{
	json_t *parts = json_array();
	for (int i = 0; i < n; i++) {
		const bom_line *l = &v[i];
		json_t *o = json_pack("{s:s, s:s, s:f}", "part", l->part, "id", l->id, "count",
				      l->count);
		if (l->unit_usd > 0) {
			json_object_set_new(o, "unit_usd", json_real(l->unit_usd));
			json_object_set_new(o, "total_usd", json_real(l->unit_usd * l->count));
			if (l->date[0])
				json_object_set_new(o, "price_date", json_string(l->date));
		} else if (l->unit_usd < 0) {
			json_object_set_new(o, "unit_usd", json_null());
		}
		if (l->note)
			json_object_set_new(o, "note", json_string(l->note));
		json_array_append_new(parts, o);
	}
	json_t *o = json_object();
	json_object_set_new(o, "parts", parts);
	json_object_set_new(o, "capex_usd", r->has_capex ? json_real(r->capex_usd) : json_null());
	return o;
}

int capsim_cmd_bom(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "set", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	capsim_cli_sets sets = { 0 };
	int json = 0, ch, status = CAPSIM_EXIT_USAGE;
	capsim_diags d = { 0 };
	capsim_catalog *cat = NULL;
	capsim_scenario *s = NULL;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "s:jh", lo, NULL)) != -1) {
		switch (ch) {
		case 's':
			if (capsim_cli_sets_add(&sets, optarg, &d) < 0)
				goto fail;
			break;
		case 'j': json = 1; break;
		case 'h':
			help(stdout);
			status = CAPSIM_EXIT_OK;
			goto out;
		default:
			help(stderr);
			goto out;
		}
	}
	if (optind + 1 < argc) {
		fprintf(stderr, "capsim bom: one SCENARIO at most\n");
		goto out;
	}
	capsim_init();
	if (capsim_cli_load(optind < argc ? argv[optind] : NULL, &sets, &cat, &s, &d) < 0)
		goto fail;
	capsim_result r;
	capsim_eval_opts opts = { .no_reference = 1 };
	if (capsim_eval(s, &opts, &r, &d) < 0)
		goto fail;
	bom_line v[BOM_MAX];
	int n = lines_of(s, &r, v);
	if (json) {
		json_t *o = capsim_cli_json_head(cat, s);
		json_t *b = to_json(&r, v, n);
		json_object_update(o, b);
		json_decref(b);
		json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
		fputc('\n', stdout);
		json_decref(o);
	} else {
		print_text(s, &r, v, n, stdout);
	}
	capsim_result_free(&r);
	status = CAPSIM_EXIT_OK;
	goto out;
fail:
	capsim_diags_print(&d, stderr);
	status = CAPSIM_EXIT_USAGE;
out:
	free(s);
	capsim_catalog_free(cat);
	capsim_diags_free(&d);
	capsim_cli_sets_free(&sets);
	return status;
}
