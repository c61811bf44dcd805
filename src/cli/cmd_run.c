/* cmd_run.c - `capsim run SCENARIO`: one training step of the scenario's
 * workload on its cluster, and what follows from it (throughput, MFU, memory,
 * time to train). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "catalog.h"
#include "cli.h"
#include "eval.h"
#include "optimize.h"
#include "outfile.h"
#include "scenario.h"
#include "units.h"
#include "xalloc.h"

enum { O_SET, O_LAYOUT, O_JSON, O_NO_INTERVALS, O_TRACE, O_TRACE_LIMIT, O_VERBOSE, O_HELP };
static const capsim_cli_opt run_opts[] = {
	[O_SET] = { "set", 's', "PATH=VALUE",
		    "override a scenario field (see capsim validate --paths)" },
	[O_LAYOUT] = { "layout", 0, "auto",
		       "run the layout that capsim optimize ranks first\n"
		       "(by tokens/s), not the scenario's own; stderr says which" },
	[O_JSON] = { "json", 'j', NULL, "one JSON object" },
	[O_NO_INTERVALS] = { "no-intervals", 0, NULL,
			     "leave out the prediction intervals (KEY_lo, KEY_hi and\n"
			     "the bands of the shipped error model)" },
	[O_TRACE] = { "trace", 't', "FILE",
		      "write the step's timeline as Chrome trace-event JSON\n"
		      "(open it in Perfetto or chrome://tracing; - for stdout)" },
	[O_TRACE_LIMIT] = { "trace-limit", 'L', "SIZE",
			    "refuse a trace that could be larger (default 256 MiB)" },
	[O_VERBOSE] = { "verbose", 'v', NULL,
			"also print the run summary (events, simulated step)" },
	[O_HELP] = { "help", 'h', NULL, "this text" },
};
const capsim_cli_cmd capsim_cli_run_cmd = {
	.name = "run",
	.usage = "usage: capsim run [SCENARIO] [--set PATH=VALUE]... [--layout auto] [--json]\n"
		 "                  [--no-intervals] [--verbose]\n"
		 "                  [--trace FILE [--trace-limit SIZE]]\n",
	.about = "Predict one training step of the scenario's workload on its cluster: step\n"
		 "time and its breakdown, tokens/s, MFU, memory per GPU, time to train the\n"
		 "token budget, each prediction with its 80% and 95% interval from capsim's own\n"
		 "validation (docs/model.md, \"Error bands\"). SCENARIO defaults to\n"
		 "scenarios/default.xml of the catalog.\n"
		 "--layout auto searches the model's layouts on the cluster first (as capsim\n"
		 "optimize does, the scenario's own layout need not suit the model) and runs\n"
		 "the best.\n",
	.opts = run_opts,
	.n_opts = CAPSIM_CLI_N(run_opts),
};

/* one segment of the critical path, in words */
static void path_words(const capsim_path_segment *g, char *buf, size_t n)
{
	switch (g->kind) {
	case CAPSIM_PATH_COMPUTE:
		snprintf(buf, n, "stage %d: %d F + %d B (mb %d..%d)", g->stage, g->forwards,
			 g->backwards, g->first_microbatch, g->last_microbatch);
		break;
	case CAPSIM_PATH_TRANSFER:
		snprintf(buf, n, "p2p stage %d -> %d", g->stage, g->to_stage);
		break;
	default:
		snprintf(buf, n, "stage %d: gradient sync + optimizer", g->stage);
		break;
	}
}

/* The critical path: its share by kind, then its segments (the first and
 * last few when it is long). */
static void print_path(const capsim_step *r, FILE *out)
{
	if (!r->path_len)
		return;
	double by[3] = { 0, 0, 0 };
	for (size_t i = 0; i < r->path_len; i++)
		by[r->path[i].kind] += (double)(r->path[i].end_ns - r->path[i].start_ns) * 1e-9;
	char a[32], b[32], c[32];
	capsim_units_format(by[0], CAPSIM_DIM_SECONDS, a, sizeof a);
	capsim_units_format(by[1], CAPSIM_DIM_SECONDS, b, sizeof b);
	capsim_units_format(by[2], CAPSIM_DIM_SECONDS, c, sizeof c);
	fprintf(out, "critical path (replica %d, %zu segments): compute %s, p2p %s, tail %s\n",
	       r->critical_replica, r->path_len, a, b, c);
	if (r->path_len > 16) {
		/* where its compute lies: the three stages that hold most of it */
		int stages = 0;
		for (size_t i = 0; i < r->path_len; i++)
			if (r->path[i].stage + 1 > stages)
				stages = r->path[i].stage + 1;
		double *on = capsim_xcalloc((size_t)stages, sizeof *on);
		for (size_t i = 0; i < r->path_len; i++)
			if (r->path[i].kind == CAPSIM_PATH_COMPUTE)
				on[r->path[i].stage] +=
					(double)(r->path[i].end_ns - r->path[i].start_ns) * 1e-9;
		fprintf(out, "    compute on it by stage:");
		for (int t = 0; t < 3 && t < stages; t++) {
			int best = 0;
			for (int k = 1; k < stages; k++)
				if (on[k] > on[best])
					best = k;
			if (!(on[best] > 0))
				break;
			char v[32];
			capsim_units_format(on[best], CAPSIM_DIM_SECONDS, v, sizeof v);
			fprintf(out, "%s stage %d %s", t ? "," : "", best, v);
			on[best] = -1;
		}
		fprintf(out, "\n");
		free(on);
	}
	/* all of it up to 16 segments; else the first and last 6 and, between
	 * them, the longest (the steady state of the busiest stage) */
	size_t head = 6, tail = 6, longest = 0;
	for (size_t i = 1; i < r->path_len; i++)
		if (r->path[i].end_ns - r->path[i].start_ns >
		    r->path[longest].end_ns - r->path[longest].start_ns)
			longest = i;
	int eliding = 0;
	for (size_t i = 0; i < r->path_len; i++) {
		int show = r->path_len <= 16 || i < head || i >= r->path_len - tail || i == longest;
		if (!show) {
			if (!eliding)
				fprintf(out, "    ...\n");
			eliding = 1;
			continue;
		}
		eliding = 0;
		const capsim_path_segment *g = &r->path[i];
		char words[96], at[32], dur[32];
		path_words(g, words, sizeof words);
		capsim_units_format((double)g->start_ns * 1e-9, CAPSIM_DIM_SECONDS, at, sizeof at);
		capsim_units_format((double)(g->end_ns - g->start_ns) * 1e-9, CAPSIM_DIM_SECONDS,
				    dur, sizeof dur);
		fprintf(out, "    at %-10s %-40s %12s\n", at, words, dur);
	}
}

/* "default: 256 x h100-sxm5-80gb + 64 x h200-sxm-141gb, llama-..., tp 8 ..." */
static void print_head(const capsim_scenario *s, const capsim_result *r, FILE *out)
{
	fprintf(out, "%s: ", s->name);
	for (int g = 0; g < r->n_groups; g++)
		fprintf(out, "%s%ld x %s", g ? " + " : "", r->group[g].gpus, r->group[g].gpu);
	fprintf(out, ", %s, tp %d pp %d cp %d dp %d ep %d, %d micro-batches of %d\n",
		s->model.e.id, s->tp, s->pp, s->cp, s->dp, s->ep, r->step.microbatches,
		s->micro_batch);
	int cal = 0;
	for (int g = 0; g < s->n_groups; g++) {
		capsim_group_view v;
		capsim_scenario_group(s, g, &v);
		if (v.gpu->cal.profile[0])
			fprintf(out, "%s%s", cal++ ? ", " : "calibrated: ", v.profile);
	}
	if (cal)
		fputc('\n', out);
}

/* the trace through the output writer: "-" is standard output, a regular
 * file is replaced whole or not at all, a device or symlink written through;
 * one that could exceed limit bytes is refused (-2) before a byte is
 * written; -1 when it cannot be written */
static int write_trace(const char *path, const capsim_result *r, double limit,
		       const char *limit_text)
{
	capsim_outfile o;
	capsim_diags d = { 0 };
	int refused = 0;
	double bound = capsim_result_trace_bound(r);
	if (bound > limit) {
		char b[64];
		capsim_diags_add_at(&d, path, "the trace of this step could reach %s, more than "
				    "--trace-limit %s: raise --trace-limit",
				    capsim_units_format(bound, CAPSIM_DIM_BYTES, b, sizeof b), limit_text);
		refused = 1;
	} else if (capsim_outfile_open(&o, path, &d) == 0) {
		errno = 0;
		if (capsim_result_trace(r, o.f, limit) < 0) {
			int e = errno ? errno : EIO;
			capsim_diags_add_at(&d, path, "cannot write the trace: %s", strerror(e));
		}
		if (d.n)
			capsim_outfile_discard(&o);
		else
			capsim_outfile_close(&o, &d);
	}
	int rc = refused ? -2 : d.n ? -1 : 0;
	capsim_diags_print(&d, stderr);
	capsim_diags_free(&d);
	return rc;
}

/* The best layout by tokens/s of path with sets (capsim optimize's first),
 * searched on a copy loaded with search_sets (sets, the Monte Carlo off)
 * and put on *s, loaded with its layout left free: 0; -1 after d (bad
 * input, or past a limit on work); -2 after d when no layout fits and
 * runs. The layout chosen is said on stderr. */
static int choose_layout(const char *path, const capsim_cli_sets *search_sets,
			 capsim_catalog *cat, capsim_scenario *s, capsim_diags *d)
{
	capsim_catalog *tcat;
	capsim_scenario *t;
	if (capsim_cli_load_any_layout(path, search_sets, &tcat, &t, d) < 0)
		return -1;
	/* the search on every CPU capsim may run on, as capsim optimize's default */
	capsim_opt_options o = { .metric = CAPSIM_OPT_TOKENS_PER_S, .top = 1,
				 .threads = capsim_cli_cpus(1024) };
	capsim_opt_result r;
	int found = capsim_optimize(t, tcat, &o, &r, d);
	int rc = found == 0 ? 0 : found == -1 ? -2 : -1;
	if (found == -1)
		for (size_t i = 0; i < r.n_reasons; i++)
			capsim_diags_add_at(d, "--layout auto", "%ld layouts: %s", r.reasons[i].count,
					    r.reasons[i].text);
	if (found == 0) {
		capsim_set sets[CAPSIM_OPT_MAX_SETS];
		char buf[CAPSIM_OPT_MAX_SETS][32], text[160];
		size_t n = capsim_opt_config_sets(&r.top[0].c, buf, sets);
		capsim_scenario_free_layout(s);
		rc = capsim_scenario_set_many(s, cat, sets, n, d) < 0 ? -1 : 0;
		capsim_opt_config_text(&r.top[0].c, text, sizeof text);
		if (rc == 0)
			fprintf(stderr, "capsim run: --layout auto: %s (the best by tokens/s of %ld "
				"layouts, %ld simulated; capsim optimize lists the runners-up)\n",
				text, r.candidates, r.simulated);
	}
	capsim_opt_result_free(&r);
	capsim_catalog_free(tcat);
	free(t);
	return rc;
}

/* r on standard output: one JSON object, or the text report */
static void print_result(const capsim_catalog *cat, const capsim_scenario *s,
			 const capsim_result *r, int json)
{
	if (json) {
		json_t *o = capsim_cli_json_head(cat, s);
		capsim_result_json(r, o);
		json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
		fputc('\n', stdout);
		json_decref(o);
		return;
	}
	print_head(s, r, stdout);
	capsim_result_text(r, stdout);
	print_path(&r->step, stdout);
}

int capsim_cmd_run(int argc, char **argv)
{
	capsim_cli_sets sets = { 0 }, search_sets = { 0 };
	int json = 0, verbose = 0, layout_auto = 0, intervals = 1, ch, status = CAPSIM_EXIT_USAGE;
	const char *trace = NULL, *trace_limit_text = "256 MiB";
	double trace_limit = 268435456.0;
	capsim_diags d = { 0 };
	capsim_catalog *cat = NULL;
	capsim_scenario *s = NULL;
	capsim_err_model *errors = NULL;

	optind = 1;
	while ((ch = capsim_cli_next(&capsim_cli_run_cmd, argc, argv)) != -1) {
		switch (ch) {
		case O_SET:
			if (capsim_cli_sets_add(&sets, optarg, &d) < 0 ||
			    capsim_cli_sets_add(&search_sets, optarg, &d) < 0)
				goto fail;
			break;
		case O_LAYOUT:
			if (strcmp(optarg, "auto") != 0) {
				fprintf(stderr, "capsim run: --layout: expected auto, found '%s'\n",
					optarg);
				goto out;
			}
			layout_auto = 1;
			break;
		case O_JSON: json = 1; break;
		case O_NO_INTERVALS: intervals = 0; break;
		case O_VERBOSE: verbose = 1; break;
		case O_TRACE: trace = optarg; break;
		case O_TRACE_LIMIT:
			/* 1 TiB: far above what a trace viewer opens */
			if (capsim_cli_quantity("run", "--trace-limit", optarg, CAPSIM_DIM_BYTES,
						1024.0, 1099511627776.0, 1,
						"a whole number of bytes from 1 KiB to 1 TiB",
						&trace_limit) < 0)
				goto out;
			trace_limit_text = optarg;
			break;
		case O_HELP:
			capsim_cli_help(&capsim_cli_run_cmd, stdout);
			status = CAPSIM_EXIT_OK;
			goto out;
		default:
			goto out;
		}
	}
	if (optind + 1 < argc) {
		fprintf(stderr, "capsim run: one SCENARIO at most\n");
		goto out;
	}
	capsim_init();
	if (intervals && !(errors = capsim_cli_err_model("run", &d)))
		goto fail;
	const char *path = optind < argc ? argv[optind] : NULL;
	if (!layout_auto && capsim_cli_load(path, &sets, &cat, &s, &d) < 0)
		goto fail;
	if (layout_auto) {
		/* the search ranks by the step alone: no Monte Carlo of interruptions */
		if (capsim_cli_sets_add(&search_sets, "reliability.runs=0", &d) < 0 ||
		    capsim_cli_load_any_layout(path, &sets, &cat, &s, &d) < 0)
			goto fail;
		int rc = choose_layout(path, &search_sets, cat, s, &d);
		if (rc < 0) {
			capsim_diags_print(&d, stderr);
			if (d.n && strncmp(d.v[0].where, "--max-", 6) == 0)
				fprintf(stderr, "capsim run: --layout auto searches within the default "
					"limits on work; capsim optimize takes %s\n", d.v[0].where);
			status = rc == -2 ? CAPSIM_EXIT_FAILURE : CAPSIM_EXIT_USAGE;
			goto out;
		}
	}
	capsim_result r;
	capsim_eval_opts opts = { .keep_schedule = trace != NULL, .errors = errors };
	if (capsim_eval(s, &opts, &r, &d) < 0) { /* no I/O: the input is refused */
		capsim_diags_print(&d, stderr);
		status = CAPSIM_EXIT_USAGE;
		goto out;
	}
	if (s->global_batch * s->seq_len > CAPSIM_BATCH_TOKENS_WARN)
		fprintf(stderr, "capsim run: warning: the global batch is %.3g tokens a step (%.0f x "
			"%d), far beyond what models are trained with (above %.3g: docs/model.md, "
			"\"Global batch\")\n", s->global_batch * s->seq_len, s->global_batch,
			s->seq_len, CAPSIM_BATCH_TOKENS_WARN);
	int traced = trace ? write_trace(trace, &r, trace_limit, trace_limit_text) : 0;
	if (traced < 0) {
		capsim_result_free(&r);
		status = traced == -2 ? CAPSIM_EXIT_USAGE : CAPSIM_EXIT_FAILURE;
		goto out;
	}
	print_result(cat, s, &r, json);
	if (verbose)
		fprintf(json ? stderr : stdout,
			"# run summary: events %llu, step %.9f s, seed %llu\n",
			(unsigned long long)r.step.events, r.step.step_time_s,
			(unsigned long long)s->seed);
	capsim_result_free(&r);
	status = CAPSIM_EXIT_OK;
	goto out;
fail:
	capsim_diags_print(&d, stderr);
	status = CAPSIM_EXIT_USAGE;
out:
	capsim_err_model_free(errors);
	free(s);
	capsim_catalog_free(cat);
	capsim_diags_free(&d);
	capsim_cli_sets_free(&sets);
	capsim_cli_sets_free(&search_sets);
	return status;
}
