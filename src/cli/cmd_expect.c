/* cmd_expect.c - `capsim expect`: monitoring baselines of the scenario's
 * cluster as deployed (expected nccl-tests bus bandwidths, step time and
 * power, with thresholds) as Prometheus alerting rules, nccl-tests-style
 * tables or JSON. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "catalog.h"
#include "cli.h"
#include "err.h"
#include "eval.h"
#include "expect.h"
#include "outfile.h"
#include "scenario.h"
#include "units.h"
#include "xalloc.h"

enum { O_THRESHOLD, O_FORMAT, O_OUT, O_OPS, O_SIZES, O_RANKS, O_NO_WORKLOAD, O_SET,
       O_NO_INTERVALS, O_HELP };
static const capsim_cli_opt expect_opts[] = {
	[O_THRESHOLD] = { "threshold", 't', "FRACTION",
			  "alert below this share of what capsim expects (\"80%\",\n"
			  "0.8; the step time: above expected / FRACTION); default 80%" },
	[O_FORMAT] = { "format", 'f', "FORMAT",
		       "prom (Prometheus alerting rules, YAML; the default),\n"
		       "nccl-tests (tables as capsim collective prints them), json" },
	[O_OUT] = { "out", 'o', "FILE",
		    "write here, whole or not at all (default -, standard output)" },
	[O_OPS] = { "ops", 0, "OP,...",
		    "collectives (default: all_reduce, all_gather, reduce_scatter,\n"
		    "alltoall, broadcast, sendrecv); none: the workload alone" },
	[O_SIZES] = { "sizes", 'S', "MIN:MAX",
		      "sizes from MIN to MAX, doubling (default 8B:128MiB, nccl-tests'\n"
		      "documented -b 8 -e 128M -f 2)" },
	[O_RANKS] = { "ranks", 'n', "N,...",
		      "rank counts (default: one node's GPUs, an NVLink domain's\n"
		      "where it spans nodes, and every GPU)" },
	[O_NO_WORKLOAD] = { "no-workload", 0, NULL,
			    "leave out the step time and power of the scenario's workload" },
	[O_SET] = { "set", 's', "PATH=VALUE", "override a scenario field" },
	[O_NO_INTERVALS] = { "no-intervals", 0, NULL,
			     "leave out the error model's 80% band beside each value" },
	[O_HELP] = { "help", 'h', NULL, "this text" },
};
const capsim_cli_cmd capsim_cli_expect_cmd = {
	.name = "expect",
	.usage = "usage: capsim expect SCENARIO [--threshold 80%] [--format prom|nccl-tests|json]\n"
		 "                     [--out FILE|-] [--ops OP,...] [--sizes MIN:MAX]\n"
		 "                     [--ranks N,...] [--no-workload] [--set PATH=VALUE]...\n"
		 "                     [--no-intervals]\n",
	.about = "Monitoring baselines of the scenario's cluster as deployed: the nccl-tests\n"
		 "bus bandwidth capsim expects per collective, size and rank count, the step\n"
		 "time of the scenario's workload and the power of its GPUs and nodes, each\n"
		 "with the error model's 80% band and a threshold. Written as Prometheus\n"
		 "alerting rules on nccl_tests_busbw_gbps{op,ranks,bytes} and\n"
		 "training_step_seconds (capsim's names: no standard exporter has them),\n"
		 "DCGM_FI_DEV_POWER_USAGE (dcgm-exporter) and ipmi_dcmi_power_consumption_watts\n"
		 "(ipmi_exporter); as nccl-tests tables; or as JSON. capsim verify --expect\n"
		 "reads the JSON or the rules back and checks nccl-tests logs against them.\n",
	.opts = expect_opts,
	.n_opts = CAPSIM_CLI_N(expect_opts),
	.after = "Exit status: 0 written, 1 the output could not be written, 2 bad usage or\n"
		 "input.\n",
};

enum { F_PROM, F_TABLES, F_JSON };

typedef struct {
	const char *scenario, *out;
	capsim_cli_sets sets;
	int format, no_intervals, no_ops;
	capsim_expect_opts eo;
	int ops[CAPSIM_COLL__COUNT];
	double sizes[64];
	int ranks[64];
} opts;

/* "all_reduce,sendrecv" into o->ops; "none": no collective */
static int parse_ops(const char *s, opts *o)
{
	memset(o->ops, 0, sizeof o->ops);
	if (strcmp(s, "none") == 0) {
		o->no_ops = 1;
		return 0;
	}
	char buf[256];
	snprintf(buf, sizeof buf, "%s", s);
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int op = capsim_coll_parse(t);
		if (op < 0) {
			fprintf(stderr, "capsim expect: --ops: expected nccl-tests collectives "
				"(all_reduce, all_gather, reduce_scatter, alltoall, broadcast, "
				"reduce, sendrecv) or none, found '%s'\n", t);
			return -1;
		}
		o->ops[op] = 1;
	}
	return 0;
}

/* MIN:MAX doubling into o->sizes */
static int parse_sizes(char *s, opts *o)
{
	char *colon = strchr(s, ':');
	double lo, hi;
	if (!colon) {
		fprintf(stderr, "capsim expect: --sizes: expected MIN:MAX, found '%s'\n", s);
		return -1;
	}
	*colon = '\0';
	const char *want = "a whole number of bytes from 1 B to 16 TiB";
	if (capsim_cli_quantity("expect", "--sizes", s, CAPSIM_DIM_BYTES, 1, 17592186044416.0, 1,
				want, &lo) < 0 ||
	    capsim_cli_quantity("expect", "--sizes", colon + 1, CAPSIM_DIM_BYTES, lo,
				17592186044416.0, 1, "at least MIN, at most 16 TiB", &hi) < 0)
		return -1;
	o->eo.n_sizes = 0;
	for (double b = lo; b <= hi * (1 + 1e-12); b *= 2) {
		if (o->eo.n_sizes == 64) {
			fprintf(stderr, "capsim expect: --sizes: expected at most 64 sizes from MIN "
				"to MAX, doubling, found more\n");
			return -1;
		}
		o->sizes[o->eo.n_sizes++] = b;
	}
	return 0;
}

/* "8,256" into o->ranks */
static int parse_ranks(const char *s, opts *o)
{
	char buf[512];
	snprintf(buf, sizeof buf, "%s", s);
	o->eo.n_ranks = 0;
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int n = capsim_cli_count(t, 1 << 24);
		if (n < 1 || o->eo.n_ranks == 64) {
			fprintf(stderr, "capsim expect: --ranks: expected up to 64 positive counts "
				"separated by commas, found '%s'\n", t);
			return -1;
		}
		o->ranks[o->eo.n_ranks++] = n;
	}
	if (o->eo.n_ranks == 0) {
		fprintf(stderr, "capsim expect: --ranks: expected a count, found nothing\n");
		return -1;
	}
	return 0;
}

static int parse_threshold(const char *s, opts *o)
{
	char err[256];
	double v;
	if (capsim_units_parse(s, CAPSIM_DIM_RATIO, NULL, &v, err, sizeof err) < 0) {
		fprintf(stderr, "capsim expect: --threshold: %s\n", err);
		return -1;
	}
	if (!(v > 0 && v <= 1)) {
		fprintf(stderr, "capsim expect: --threshold: expected a share above 0%% and at "
			"most 100%%, found '%s'\n", s);
		return -1;
	}
	o->eo.fraction = v;
	return 0;
}

static int parse_format(const char *s, opts *o)
{
	if (strcmp(s, "prom") == 0 || strcmp(s, "prometheus") == 0)
		o->format = F_PROM;
	else if (strcmp(s, "nccl-tests") == 0)
		o->format = F_TABLES;
	else if (strcmp(s, "json") == 0)
		o->format = F_JSON;
	else {
		fprintf(stderr, "capsim expect: --format: expected prom, nccl-tests or json, "
			"found '%s'\n", s);
		return -1;
	}
	return 0;
}

static int parse_option(int ch, opts *o, capsim_diags *d)
{
	switch (ch) {
	case O_THRESHOLD: return parse_threshold(optarg, o);
	case O_FORMAT: return parse_format(optarg, o);
	case O_OUT: o->out = optarg; return 0;
	case O_OPS: return parse_ops(optarg, o);
	case O_SIZES: return parse_sizes(optarg, o);
	case O_RANKS: return parse_ranks(optarg, o);
	case O_NO_WORKLOAD: o->eo.workload = 0; return 0;
	case O_SET: return capsim_cli_sets_add(&o->sets, optarg, d);
	case O_NO_INTERVALS: o->no_intervals = 1; return 0;
	default: return -1;
	}
}

/* 1 after --help, 0, or -1 on bad usage */
static int parse_args(int argc, char **argv, opts *o, capsim_diags *d)
{
	int ch;
	o->out = "-";
	o->eo.fraction = 0.8;
	o->eo.workload = 1;
	capsim_expect_default_ops(o->ops);
	o->eo.n_sizes = capsim_expect_default_sizes(o->sizes, 64);
	optind = 1;
	while ((ch = capsim_cli_next(&capsim_cli_expect_cmd, argc, argv)) != -1) {
		if (ch == O_HELP) {
			capsim_cli_help(&capsim_cli_expect_cmd, stdout);
			return 1;
		}
		if (ch < 0 || parse_option(ch, o, d) < 0)
			return -1;
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "capsim expect: one SCENARIO expected\n");
		return -1;
	}
	o->scenario = argv[optind];
	if (o->no_ops && !o->eo.workload) {
		fprintf(stderr, "capsim expect: --ops none with --no-workload leaves nothing to "
			"expect\n");
		return -1;
	}
	memcpy(o->eo.ops, o->ops, sizeof o->ops);
	o->eo.sizes = o->sizes;
	o->eo.ranks = o->ranks;
	return 0;
}

/* the baselines written to o->out whole, in o->format (JSON after the head
 * every command's JSON starts with: versions, inputs and their digests); 0
 * or -1 after d */
static int write_out(const opts *o, const capsim_catalog *cat, const capsim_scenario *s,
		     const capsim_expect *e, capsim_diags *d)
{
	capsim_outfile of;
	if (capsim_outfile_open(&of, o->out, d) < 0)
		return -1;
	int rc = 0;
	if (o->format == F_PROM) {
		rc = capsim_expect_write_rules(e, of.f);
	} else if (o->format == F_TABLES) {
		rc = capsim_expect_write_tables(e, of.f);
	} else {
		json_t *root = capsim_cli_json_head(cat, s), *body = capsim_expect_json(e);
		json_object_update(root, body);
		json_decref(body);
		rc = json_dumpf(root, of.f, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
				JSON_REAL_PRECISION(10));
		fputc('\n', of.f);
		json_decref(root);
	}
	if (rc < 0) {
		capsim_diags_add_runtime(d, o->out, "cannot write the baselines");
		capsim_outfile_discard(&of);
		return -1;
	}
	return capsim_outfile_close(&of, d);
}

int capsim_cmd_expect(int argc, char **argv)
{
	opts o;
	memset(&o, 0, sizeof o);
	capsim_diags d = { 0 };
	capsim_catalog *cat = NULL;
	capsim_scenario *s = NULL;
	capsim_err_model *errors = NULL;
	capsim_expect e;
	memset(&e, 0, sizeof e);
	int status = CAPSIM_EXIT_USAGE;

	int pr = parse_args(argc, argv, &o, &d);
	if (pr != 0) {
		capsim_diags_print(&d, stderr);
		status = pr > 0 ? CAPSIM_EXIT_OK : CAPSIM_EXIT_USAGE;
		goto out;
	}
	if (!o.no_intervals && !(errors = capsim_cli_err_model("expect", &d)))
		goto fail;
	if (capsim_cli_load(o.scenario, &o.sets, &cat, &s, &d) < 0 ||
	    capsim_expect_build(s, errors, &o.eo, &e, &d) < 0)
		goto fail;
	if (write_out(&o, cat, s, &e, &d) < 0) {
		capsim_diags_print(&d, stderr);
		status = CAPSIM_EXIT_FAILURE;
		goto out;
	}
	status = CAPSIM_EXIT_OK;
	goto out;
fail:
	capsim_diags_print(&d, stderr);
	status = capsim_diags_runtime(&d) ? CAPSIM_EXIT_FAILURE : CAPSIM_EXIT_USAGE;
out:
	capsim_expect_free(&e);
	capsim_err_model_free(errors);
	free(s);
	capsim_catalog_free(cat);
	capsim_diags_free(&d);
	capsim_cli_sets_free(&o.sets);
	return status;
}
