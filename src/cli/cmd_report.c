/* cmd_report.c - `capsim report SCENARIO... --out DIR`: candidate designs for
 * one workload compared side by side (src/report/report.h). */
#include <dirent.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "catalog.h"
#include "cli.h"
#include "err.h"
#include "progress.h"
#include "report.h"
#include "results.h"
#include "run.h"
#include "scenario.h"
#include "store.h"
#include "sweep.h"
#include "sweepq.h"
#include "units.h"
#include "xalloc.h"

/* the most designs a report compares */
#define MAX_DESIGNS 12

enum { O_OUT, O_DB, O_SWEEP, O_WHERE, O_METRIC, O_BUDGET, O_DEADLINE, O_SET, O_NO_PROGRESS,
       O_GNUPLOT_TIMEOUT, O_NO_INTERVALS, O_JSON, O_HELP };
static const capsim_cli_opt report_opts[] = {
	[O_OUT] = { "out", 0, "DIR", "the report's directory (made if absent)" },
	[O_DB] = { "db", 0, "RESULTS.sqlite",
		   "the designs: the ok points of a sweep in this results store" },
	[O_SWEEP] = { "sweep", 0, "ID|NAME", "with --db: that sweep (default: the latest)" },
	[O_WHERE] = { "where", 0, "FILTER",
		      "with --db: only points where KEY OP VALUE holds (as capsim\n"
		      "query's); repeatable" },
	[O_METRIC] = { "metric", 0, "M",
		       "the decision rule's metric: cost_to_train_usd (the default),\n"
		       "wall_to_train_s, cost_per_million_tokens_usd or tco_usd" },
	[O_BUDGET] = { "budget", 0, "USD",
		       "only designs whose cost to train is within it (\"$2M\")" },
	[O_DEADLINE] = { "deadline", 0, "TIME",
			 "only designs whose wall time to train is within it (\"60 d\")" },
	[O_SET] = { "set", 0, "PATH=VALUE", "edit every design" },
	[O_NO_PROGRESS] = { "no-progress", 0, NULL, "no progress line" },
	[O_GNUPLOT_TIMEOUT] = { "gnuplot-timeout", 0, "TIME",
				"stop each figure's gnuplot after TIME (default 60 s), an error" },
	[O_NO_INTERVALS] = { "no-intervals", 0, NULL,
			     "no comparison against the model's own error: the report\n"
			     "as before it knew its error bands" },
	[O_JSON] = { "json", 0, NULL,
		     "print a summary as one JSON object on standard output: the\n"
		     "designs and their metric, the winner, the probability that it\n"
		     "is below the runner-up, the files written" },
	[O_HELP] = { "help", 0, NULL, "this text" },
};
const capsim_cli_cmd capsim_cli_report_cmd = {
	.name = "report",
	.usage = "usage: capsim report (SCENARIO... | --db RESULTS.sqlite [--sweep ID|NAME]\n"
		 "                     [--where 'KEY OP VALUE']...) --out DIR [--metric M]\n"
		 "                     [--budget USD] [--deadline TIME] [--set PATH=VALUE]...\n"
		 "                     [--no-progress] [--gnuplot-timeout TIME] [--no-intervals]\n"
		 "                     [--json]\n",
	.about = "Compare candidate designs (one scenario each) for one workload, and write\n"
		 "DIR/report.html (self-contained, figures inline), DIR/report.md (the same,\n"
		 "figures as PNG), DIR/summary.csv (the summary table, exact values) and\n"
		 "DIR/figures/ (SVG, PNG, and each figure's gnuplot script and data).\n"
		 "The decision rule: the smallest --metric among the designs within --budget\n"
		 "and --deadline; the report says which design wins and whether it still\n"
		 "does with utilisation and prices 20% lower or higher, and how likely the\n"
		 "winner is to beat the runner-up given capsim's own error (a tie where the\n"
		 "difference is inside the comparison's 80% band). The figures need\n"
		 "gnuplot on PATH: without it the text report is written, the figures are\n"
		 "not, and the exit status is 1.\n"
		 "With --db the designs are the ok points of a sweep in a results store\n"
		 "(capsim sweep; the latest sweep, or --sweep), those that match every --where,\n"
		 "at most 12: each is rebuilt from the sweep file and the base scenario the\n"
		 "store names, which must be as they were (their SHA-256).\n",
	.opts = report_opts,
	.n_opts = CAPSIM_CLI_N(report_opts),
	.in_order = 1,
};

/* the evaluations' progress line (util/progress.h), on a terminal */
static void progress(void *ctx, int done, int total, const char *what)
{
	capsim_progress_show(ctx, done, total, what);
}

/* the ok points of a sweep that match the filters, each rebuilt as a
 * scenario (named SWEEP-pINDEX) from the sweep file the store names: 0 with
 * *v (n of them) the caller's, or -1 after the reason in d */
static int from_db(const char *db, const char *sel, char **where, size_t n_where,
		   const capsim_catalog *cat, const capsim_cli_sets *sets, capsim_scenario ***v,
		   size_t *n, capsim_diags *d)
{
	*v = NULL;
	*n = 0;
	capsim_store *st;
	if (capsim_store_open(db, CAPSIM_STORE_READ, &st, d) < 0)
		return -1;
	int rc = -1;
	capsim_sweepq_sweep sw = { 0 };
	capsim_sweepq_filter *f = capsim_xcalloc(n_where ? n_where : 1, sizeof *f);
	capsim_sweepq_table t = { 0 };
	capsim_sweep_input_record *in = NULL;
	size_t n_in = 0, n_f = 0;
	capsim_sweep *plan = NULL;
	capsim_scenario *base = capsim_xcalloc(1, sizeof *base);
	if (capsim_sweepq_find(st, sel, &sw, d) < 0)
		goto out;
	for (; n_f < n_where; n_f++)
		if (capsim_sweepq_filter_parse(where[n_f], &f[n_f], d) < 0)
			goto out;
	capsim_sweepq_request rq = { .sweep_id = sw.id, .filters = f, .n_filters = n_where,
				     .which = CAPSIM_SWEEPQ_OK };
	if (capsim_sweepq_read(st, &rq, &t, d) < 0 ||
	    capsim_results_read_inputs(st, sw.id, &in, &n_in, d) < 0)
		goto out;
	if (t.n_points == 0 || t.n_points > MAX_DESIGNS) {
		capsim_diags_add_at(d, db, "report: %zu points of sweep %lld '%s' match; a report "
				    "compares 1 to %d (narrow them with --where)", t.n_points,
				    (long long)sw.id, sw.name, MAX_DESIGNS);
		goto out;
	}
	/* the sweep file is the sweep's first input (capsim sweep writes it so) */
	if (n_in == 0) {
		capsim_diags_add_at(d, db, "report: sweep %lld records no input files", (long long)sw.id);
		goto out;
	}
	plan = capsim_sweep_load(in[0].file, cat, sets->v, sets->n, base, d);
	if (!plan)
		goto out;
	if (strcmp(plan->sha256, in[0].sha256) != 0) {
		capsim_diags_add_at(d, in[0].file, "report: the sweep file changed since sweep %lld "
				    "'%s' ran (its SHA-256 was %.12s...)", (long long)sw.id, sw.name,
				    in[0].sha256);
		goto out;
	}
	*v = capsim_xcalloc(t.n_points, sizeof **v);
	for (size_t i = 0; i < t.n_points; i++) {
		int64_t index = t.points[i].index;
		capsim_set p[CAPSIM_SWEEP_MAX_AXES];
		capsim_sweep_point(plan, (uint64_t)index, p);
		capsim_scenario *s = capsim_xmalloc(sizeof *s);
		*s = *base;
		(*v)[(*n)++] = s;
		if (capsim_scenario_set_many(s, cat, p, plan->n_axes, d) < 0)
			goto out;
		/* the point as it ran, unless --set edits it: the store's digest of
		 * its scenario */
		if (sets->n == 0) {
			capsim_point_record rec;
			char hex[65];
			capsim_sweep_scenario_digest(s, hex);
			int same = capsim_results_read_point(st, sw.id, index, &rec, d) == 0 &&
				   strcmp(rec.scenario_sha256, hex) == 0;
			capsim_point_record_free(&rec);
			if (!same) {
				capsim_diags_add_at(d, db, "report: point %lld of sweep '%s' does not "
						    "rebuild as it ran (the base scenario or the catalog "
						    "changed)", (long long)index, sw.name);
				goto out;
			}
		}
		snprintf(s->name, sizeof s->name, "%.50s-p%lld", sw.name, (long long)index);
	}
	rc = 0;
out:
	if (rc < 0) {
		for (size_t i = 0; i < *n; i++)
			free((*v)[i]);
		free(*v);
		*v = NULL;
		*n = 0;
	}
	for (size_t i = 0; i < n_f; i++)
		capsim_sweepq_filter_free(&f[i]);
	free(f);
	capsim_sweepq_table_free(&t);
	capsim_sweep_inputs_free(in, n_in);
	capsim_sweepq_sweep_free(&sw);
	capsim_sweep_free(plan);
	free(base);
	capsim_store_close(st);
	return rc;
}

/* the files of dir/figures, sorted, appended to files as "figures/NAME" */
static void figure_files(const char *dir, json_t *files)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/figures", dir);
	struct dirent **names = NULL;
	int n = scandir(path, &names, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		if (names[i]->d_name[0] != '.') {
			snprintf(path, sizeof path, "figures/%s", names[i]->d_name);
			json_array_append_new(files, json_string(path));
		}
		free(names[i]);
	}
	free(names);
}

/* a design's index as its label, or JSON null for -1 */
static json_t *design_label(const capsim_report *rep, int i)
{
	return i >= 0 && (size_t)i < rep->n ? json_string(rep->d[i].label) : json_null();
}

/* the report written to dir as one JSON object on standard output: the
 * rule, each design, the winner and runner-up, the comparison's
 * probability where the error model reaches the metric, the files */
static void report_json(const capsim_report *rep, const capsim_catalog *cat, const char *dir,
			int figures)
{
	json_t *o = capsim_cli_json_head(cat, NULL);
	json_object_set_new(o, "metric", json_string(capsim_rule_metric_names[rep->rule.metric]));
	json_t *designs = json_array();
	for (size_t i = 0; i < rep->n; i++) {
		const capsim_report_design *d = &rep->d[i];
		json_t *j = json_pack("{ss ss sb}", "label", d->label, "fabric", d->fabric,
				      "meets_rule", d->meets);
		json_object_set_new(j, "metric", isfinite(d->metric) ? json_real(d->metric) :
								      json_null());
		json_object_set_new(j, "why_not", d->meets ? json_null() : json_string(d->why_not));
		json_array_append_new(designs, j);
	}
	json_object_set_new(o, "designs", designs);
	json_object_set_new(o, "winner", design_label(rep, rep->winner));
	json_object_set_new(o, "runner_up", design_label(rep, rep->runner_up));
	json_object_set_new(o, "p_winner_below_runner_up",
			    rep->cmp.done && rep->cmp.has ? json_real(rep->cmp.cmp.p_less) :
							    json_null());
	json_object_set_new(o, "out", json_string(dir));
	json_t *files = json_pack("[sss]", "report.html", "report.md", "summary.csv");
	if (figures)
		figure_files(dir, files);
	json_object_set_new(o, "files", files);
	json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	fputc('\n', stdout);
	json_decref(o);
}

/* the report of rep written to dir and told on standard output (a line, or
 * report_json with json); returns the exit status */
static int write_report(const capsim_report *rep, const capsim_catalog *cat, const char *dir,
			double gnuplot_timeout_s, int json, capsim_diags *d)
{
	int missing;
	if (capsim_report_write(rep, cat, dir, gnuplot_timeout_s, &missing, d) < 0) {
		capsim_diags_print(d, stderr);
		return capsim_diags_runtime(d) ? CAPSIM_EXIT_FAILURE : CAPSIM_EXIT_USAGE;
	}
	if (json)
		report_json(rep, cat, dir, !missing);
	if (missing) {
		fprintf(stderr, "capsim report: gnuplot was not found on PATH (Debian: apt-get "
			"install gnuplot-nox): %s/report.html, report.md and summary.csv are "
			"written without their figures\n", dir);
		return CAPSIM_EXIT_FAILURE;
	}
	if (!json)
		printf("capsim report: %s/report.html, report.md, summary.csv and figures/\n", dir);
	return CAPSIM_EXIT_OK;
}

int capsim_cmd_report(int argc, char **argv)
{
	capsim_report_rule rule = { .metric = CAPSIM_RULE_COST_TO_TRAIN };
	const char *out = NULL, *db = NULL, *sweep_sel = NULL;
	char *where[32];
	size_t n_where = 0;
	int quiet = 0, intervals = 1, json = 0, c, status = CAPSIM_EXIT_USAGE;
	double gnuplot_timeout_s = 60.0;
	capsim_err_model *em = NULL;
	capsim_cli_sets sets = { 0 };
	capsim_diags d = { 0 };
	optind = 1;
	while ((c = capsim_cli_next(&capsim_cli_report_cmd, argc, argv)) != -1) {
		switch (c) {
		case O_OUT: out = optarg; break;
		case O_METRIC: {
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
		case O_BUDGET:
			if (capsim_cli_quantity("report", "--budget", optarg, CAPSIM_DIM_USD, 1.0, 1e13, 0,
						"a cost from $1 to $10T (\"$2.5M\")",
						&rule.budget_usd) < 0)
				goto out;
			break;
		case O_DEADLINE:
			if (capsim_cli_quantity("report", "--deadline", optarg, CAPSIM_DIM_SECONDS, 3600.0,
						3.2e9, 0, "a time from 1 h to 100 y (\"60 d\")",
						&rule.deadline_s) < 0)
				goto out;
			break;
		case O_SET:
			if (capsim_cli_sets_add(&sets, optarg, &d) < 0) {
				capsim_diags_print(&d, stderr);
				goto out;
			}
			break;
		case O_GNUPLOT_TIMEOUT:
			if (capsim_cli_quantity("report", "--gnuplot-timeout", optarg,
						CAPSIM_DIM_SECONDS, 0.1, 86400.0, 0,
						"a time from 0.1 s to 1 d (\"60 s\")", &gnuplot_timeout_s) < 0)
				goto out;
			break;
		case O_NO_PROGRESS: quiet = 1; break;
		case O_NO_INTERVALS: intervals = 0; break;
		case O_JSON: json = 1; break;
		case O_DB: db = optarg; break;
		case O_SWEEP: sweep_sel = optarg; break;
		case O_WHERE:
			if (n_where == sizeof where / sizeof where[0]) {
				fprintf(stderr, "capsim report: --where: at most 32\n");
				goto out;
			}
			where[n_where++] = optarg;
			break;
		case O_HELP:
			capsim_cli_help(&capsim_cli_report_cmd, stdout);
			status = CAPSIM_EXIT_OK;
			goto out;
		default:
			goto out;
		}
	}
	if (!out) {
		fprintf(stderr, "capsim report: --out DIR is required\n");
		goto out;
	}
	if (db ? optind < argc : optind >= argc) {
		fprintf(stderr, "capsim report: expected %s\n", db ? "no scenario with --db" :
			"one or more scenarios, or --db");
		goto out;
	}
	if (!db && (sweep_sel || n_where)) {
		fprintf(stderr, "capsim report: --sweep and --where go with --db\n");
		goto out;
	}
	if (!db && argc - optind > MAX_DESIGNS) {
		fprintf(stderr, "capsim report: at most %d designs, found %d\n", MAX_DESIGNS,
			argc - optind);
		goto out;
	}
	size_t n = db ? 0 : (size_t)(argc - optind);
	capsim_catalog *cat = capsim_catalog_create();
	capsim_scenario **v = NULL;
	int bad = capsim_cli_catalog(cat, &d) < 0;
	/* the error model, once: a bad or missing one is bad input (exit 2) */
	int model_bad = !bad && intervals && !(em = capsim_cli_err_model("report", &d));
	bad |= model_bad;
	if (!bad && db) {
		bad = from_db(db, sweep_sel, where, n_where, cat, &sets, &v, &n, &d) < 0;
	} else {
		v = capsim_xcalloc(n ? n : 1, sizeof *v);
		for (size_t i = 0; i < n && !bad; i++) {
			v[i] = capsim_xcalloc(1, sizeof *v[i]);
			char found[4096];
			const char *file = capsim_cli_find_input(argv[optind + (int)i], found,
								 sizeof found, &d);
			bad = !file || capsim_scenario_load(file, cat, sets.v, sets.n, v[i], &d) < 0;
		}
	}
	capsim_report rep = { 0 };
	capsim_progress show;
	capsim_progress_init(&show, "capsim report", "evaluations",
			     quiet ? CAPSIM_PROGRESS_OFF : CAPSIM_PROGRESS_TERMINAL);
	if (bad) {
		capsim_diags_print(&d, stderr);
		status = capsim_diags_runtime(&d) && !model_bad ? CAPSIM_EXIT_FAILURE :
			 CAPSIM_EXIT_USAGE;
		for (size_t i = 0; i < n; i++)
			free(v[i]);
	} else if (capsim_report_collect(&rep, v, n, &rule, cat, progress, &show, &d) < 0) {
		capsim_progress_end(&show);
		capsim_diags_print(&d, stderr);
		status = CAPSIM_EXIT_USAGE;
	} else {
		capsim_report_compare(&rep, em);
		status = write_report(&rep, cat, out, gnuplot_timeout_s, json, &d);
	}
	capsim_report_free(&rep);
	capsim_err_model_free(em);
	free(v);
	capsim_catalog_free(cat);
out:
	capsim_cli_sets_free(&sets);
	capsim_diags_free(&d);
	return status;
}
