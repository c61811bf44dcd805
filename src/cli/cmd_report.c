/* cmd_report.c - `capsim report SCENARIO... --out DIR`: candidate designs for
 * one workload compared side by side (src/report/report.h). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog.h"
#include "cli.h"
#include "report.h"
#include "scenario.h"
#include "units.h"
#include "xalloc.h"

static void help(FILE *out)
{
	fprintf(out,
		"usage: capsim report SCENARIO... --out DIR [--metric M] [--budget USD]\n"
		"                     [--deadline TIME] [--set PATH=VALUE]... [--no-progress]\n"
		"\n"
		"Compare candidate designs (one scenario each) for one workload, and write\n"
		"DIR/report.html (self-contained, figures inline), DIR/report.md (the same,\n"
		"figures as PNG), DIR/summary.csv (the summary table, exact values) and\n"
		"DIR/figures/ (SVG, PNG, and each figure's gnuplot script and data).\n"
		"The decision rule: the smallest --metric (cost_to_train_usd, the default;\n"
		"wall_to_train_s; cost_per_million_tokens_usd; tco_usd) among the designs\n"
		"within --budget (a cost to train, \"$2M\") and --deadline (a wall time to\n"
		"train, \"60 d\"); the report says which design wins and whether it still\n"
		"does with utilisation and prices 20%% lower or higher. --set edits every\n"
		"design. The figures need gnuplot on PATH: without it the text report is\n"
		"written, the figures are not, and the exit status is 1.\n");
}

static void progress(void *ctx, int done, int total, const char *what)
{
	if (!*(int *)ctx)
		return;
	fprintf(stderr, "\r\033[Kcapsim report: %d/%d evaluations (%s)", done, total, what);
	if (done >= total)
		fputc('\n', stderr);
	fflush(stderr);
}

int capsim_cmd_report(int argc, char **argv)
{
	enum { OPT_OUT = 256, OPT_METRIC, OPT_BUDGET, OPT_DEADLINE, OPT_SET, OPT_NO_PROGRESS,
	       OPT_HELP };
	static const struct option longopts[] = {
		{ "out", required_argument, NULL, OPT_OUT },
		{ "metric", required_argument, NULL, OPT_METRIC },
		{ "budget", required_argument, NULL, OPT_BUDGET },
		{ "deadline", required_argument, NULL, OPT_DEADLINE },
		{ "set", required_argument, NULL, OPT_SET },
		{ "no-progress", no_argument, NULL, OPT_NO_PROGRESS },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	capsim_report_rule rule = { .metric = CAPSIM_RULE_COST_TO_TRAIN };
	const char *out = NULL;
	int quiet = 0, c, status = CAPSIM_EXIT_USAGE;
	capsim_cli_sets sets = { 0 };
	capsim_diags d = { 0 };
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_OUT: out = optarg; break;
		case OPT_METRIC: {
			int m = -1;
			for (int k = 0; k < CAPSIM_RULE__COUNT; k++)
				if (strcmp(optarg, capsim_rule_metric_names[k]) == 0)
					m = k;
			if (m < 0) {
				fprintf(stderr, "capsim report: --metric: expected cost_to_train_usd, "
					"wall_to_train_s, cost_per_million_tokens_usd or tco_usd, found "
					"'%s'\n", optarg);
				goto out;
			}
			rule.metric = m;
			break;
		}
		case OPT_BUDGET:
			if (capsim_cli_quantity("report", "--budget", optarg, CAPSIM_DIM_USD, 1.0, 1e13, 0,
						"a cost from $1 to $10T (\"$2.5M\")",
						&rule.budget_usd) < 0)
				goto out;
			break;
		case OPT_DEADLINE:
			if (capsim_cli_quantity("report", "--deadline", optarg, CAPSIM_DIM_SECONDS, 3600.0,
						3.2e9, 0, "a time from 1 h to 100 y (\"60 d\")",
						&rule.deadline_s) < 0)
				goto out;
			break;
		case OPT_SET:
			if (capsim_cli_sets_add(&sets, optarg, &d) < 0) {
				capsim_diags_print(&d, stderr);
				goto out;
			}
			break;
		case OPT_NO_PROGRESS: quiet = 1; break;
		case OPT_HELP:
			help(stdout);
			status = CAPSIM_EXIT_OK;
			goto out;
		default:
			fprintf(stderr, "capsim report: unknown option '%s'\ntry 'capsim report --help'\n",
				argv[optind - 1]);
			goto out;
		}
	}
	if (!out) {
		fprintf(stderr, "capsim report: --out DIR is required\n");
		goto out;
	}
	if (optind >= argc) {
		fprintf(stderr, "capsim report: expected one or more scenarios\n");
		goto out;
	}
	size_t n = (size_t)(argc - optind);
	capsim_catalog *cat = capsim_catalog_create();
	capsim_scenario **v = capsim_xcalloc(n, sizeof *v);
	int bad = capsim_catalog_load_root(cat, capsim_catalog_default_root(), NULL, &d) < 0;
	for (size_t i = 0; i < n && !bad; i++) {
		v[i] = capsim_xcalloc(1, sizeof *v[i]);
		bad = capsim_scenario_load(argv[optind + (int)i], cat, sets.v, sets.n, v[i], &d) < 0;
	}
	capsim_report rep = { 0 };
	int show = !quiet && isatty(STDERR_FILENO);
	if (bad) {
		capsim_diags_print(&d, stderr);
		status = capsim_diags_runtime(&d) ? CAPSIM_EXIT_FAILURE : CAPSIM_EXIT_USAGE;
		for (size_t i = 0; i < n; i++)
			free(v[i]);
	} else if (capsim_report_collect(&rep, v, n, &rule, cat, progress, &show, &d) < 0) {
		capsim_diags_print(&d, stderr);
		status = CAPSIM_EXIT_USAGE;
	} else {
		int missing;
		if (capsim_report_write(&rep, cat, out, &missing, &d) < 0) {
			capsim_diags_print(&d, stderr);
			status = capsim_diags_runtime(&d) ? CAPSIM_EXIT_FAILURE : CAPSIM_EXIT_USAGE;
		} else if (missing) {
			fprintf(stderr, "capsim report: gnuplot was not found on PATH (Debian: apt-get "
				"install gnuplot-nox): %s/report.html, report.md and summary.csv are "
				"written without their figures\n", out);
			status = CAPSIM_EXIT_FAILURE;
		} else {
			printf("capsim report: %s/report.html, report.md, summary.csv and figures/\n", out);
			status = CAPSIM_EXIT_OK;
		}
	}
	capsim_report_free(&rep);
	free(v);
	capsim_catalog_free(cat);
out:
	capsim_cli_sets_free(&sets);
	capsim_diags_free(&d);
	return status;
}
