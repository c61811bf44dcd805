/* cmd_bom.c - `capsim bom`: the bill of materials of a scenario's cluster,
 * its parts counted from the topology, priced where the catalog has a price,
 * and the capex; see docs/user-guide.md ("Bill of materials"). */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "catalog.h"
#include "cli.h"
#include "bom.h"
#include "escape.h"
#include "eval.h"
#include "scenario.h"

enum { O_SET, O_JSON, O_HELP };
static const capsim_cli_opt bom_opts[] = {
	[O_SET] = { "set", 's', "PATH=VALUE", "override a scenario field (a price, say)" },
	[O_JSON] = { "json", 'j', NULL, "one JSON object" },
	[O_HELP] = { "help", 'h', NULL, "this text" },
};
const capsim_cli_cmd capsim_cli_bom_cmd = {
	.name = "bom",
	.usage = "usage: capsim bom [SCENARIO] [--set PATH=VALUE]... [--json]\n",
	.about = "The cluster's parts: nodes (with their GPUs and NICs), the fabric's leaf,\n"
		 "spine and core switches and the cables between them, by reach class on\n"
		 "the facility's floor (copper in a rack, optics with two transceiver ports\n"
		 "beyond), the shared storage, racks and branch circuits (a rack PDU each)\n"
		 "under the facility's limits,\n"
		 "each priced where the catalog has a price with its date, and the capex.\n"
		 "A part without a price is listed as such: give one with --set\n"
		 "(cluster.node.price.value, cluster.fabric.switch.price.value,\n"
		 "cost.cable-dac ... cost.cable-singlemode-2km,\n"
		 "cluster.storage.shared.price.value).\n",
	.opts = bom_opts,
	.n_opts = CAPSIM_CLI_N(bom_opts),
};

static void print_text(const capsim_scenario *s, const capsim_result *r, const capsim_bom_line *v,
		       int n, FILE *f)
{
	fprintf(f, "%s: bill of materials\n", s->name);
	fprintf(f, "  %-17s %-22s %9s %12s %13s  %s\n", "part", "id", "count", "unit", "total",
		"price date / note");
	int missing = 0;
	for (int i = 0; i < n; i++) {
		const capsim_bom_line *l = &v[i];
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
	double capex = capsim_result_get(r, "capex_usd", NAN);
	const char *left_out = capsim_result_string(r, "capex_excludes");
	if (isfinite(capex))
		fprintf(f, "  capex %.0f USD ($%.4gM)%s%s\n", capex, capex / 1e6,
			left_out ? "; leaves out " : "", left_out ? left_out : "");
	else
		fprintf(f, "  capex: not computed%s\n",
			missing ? ": a part has no price in the catalog; give it with --set" : "");
	const char *unpriced = capsim_result_string(r, "cost_unpriced");
	if (unpriced) {
		fputs("  not priced: ", f);
		capsim_term_text(f, unpriced);
		fputc('\n', f);
	}
}

static json_t *to_json(const capsim_result *r, const capsim_bom_line *v, int n)
{
	json_t *parts = json_array();
	for (int i = 0; i < n; i++) {
		const capsim_bom_line *l = &v[i];
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
	double capex = capsim_result_get(r, "capex_usd", NAN);
	json_object_set_new(o, "capex_usd", isfinite(capex) ? json_real(capex) : json_null());
	return o;
}

int capsim_cmd_bom(int argc, char **argv)
{
	capsim_cli_sets sets = { 0 };
	int json = 0, ch, status = CAPSIM_EXIT_USAGE;
	capsim_diags d = { 0 };
	capsim_catalog *cat = NULL;
	capsim_scenario *s = NULL;
	optind = 1;
	while ((ch = capsim_cli_next(&capsim_cli_bom_cmd, argc, argv)) != -1) {
		switch (ch) {
		case O_SET:
			if (capsim_cli_sets_add(&sets, optarg, &d) < 0)
				goto fail;
			break;
		case O_JSON: json = 1; break;
		case O_HELP:
			capsim_cli_help(&capsim_cli_bom_cmd, stdout);
			status = CAPSIM_EXIT_OK;
			goto out;
		default:
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
	capsim_bom_line v[CAPSIM_BOM_MAX];
	int n = capsim_result_bom(s, &r, v);
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
