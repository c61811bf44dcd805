/* cmd_optimize.c - `capsim optimize [SCENARIO] [--metric M]`: the best
 * layouts of the scenario's model on its cluster (src/opt/optimize.h), with
 * what was refused and why, each layout's step broken down, and why the best
 * beats the runner-up. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "catalog.h"
#include "cli.h"
#include "clock.h"
#include "err.h"
#include "escape.h"
#include "optimize.h"
#include "progress.h"
#include "scenario.h"
#include "xalloc.h"

/* progress shows on a terminal after this long; lines come this often */
#define PROGRESS_AFTER_S 2.0
#define PROGRESS_LINE_S 5.0

enum { O_METRIC, O_TOP, O_JOBS, O_EXHAUSTIVE, O_MAX_LAYOUTS, O_MAX_SIMULATIONS, O_JSON,
       O_PROGRESS, O_NO_PROGRESS, O_SET, O_NO_INTERVALS, O_HELP };
static const capsim_cli_opt optimize_opts[] = {
	[O_METRIC] = { "metric", 0, "M",
		       "rank by tokens_per_s (the default), time_to_train_s or\n"
		       "cost_per_million_tokens_usd" },
	[O_TOP] = { "top", 0, "N", "how many layouts to print (default 5)" },
	[O_JOBS] = { "jobs", 'j', "N", "simulate on N threads (default: the CPUs capsim may run on)" },
	[O_EXHAUSTIVE] = { "exhaustive", 0, NULL, "simulate every layout the screens keep" },
	[O_MAX_LAYOUTS] = { "max-layouts", 0, "N", "refuse a larger space of layouts" },
	[O_MAX_SIMULATIONS] = { "max-simulations", 0, "N", "refuse a search of more simulations" },
	[O_JSON] = { "json", 0, NULL, "one JSON object" },
	[O_PROGRESS] = { "progress", 0, NULL, "progress on stderr from the start" },
	[O_NO_PROGRESS] = { "no-progress", 0, NULL, "no progress" },
	[O_SET] = { "set", 0, "PATH=VALUE", "override a scenario field" },
	[O_NO_INTERVALS] = { "no-intervals", 0, NULL,
			     "no marks of the layouts the model's own error cannot tell\n"
			     "from the best: the list as before it knew its error bands" },
	[O_HELP] = { "help", 0, NULL, "this text" },
};
const capsim_cli_cmd capsim_cli_optimize_cmd = {
	.name = "optimize",
	.usage = "usage: capsim optimize [SCENARIO] [--metric tokens_per_s | time_to_train_s |\n"
		 "                       cost_per_million_tokens_usd] [--top N] [-j N]\n"
		 "                       [--exhaustive] [--max-layouts N] [--max-simulations N]\n"
		 "                       [--json] [--progress | --no-progress]\n"
		 "                       [--set PATH=VALUE]... [--no-intervals]\n",
	.about = "Search every consistent layout of the scenario's model on its cluster: TP\n"
		 "(within a node, dividing the heads), PP (with virtual stages, and first and\n"
		 "last stages a layer short where that shares the layers out), CP, EP (MoE\n"
		 "models), ZeRO stage 0-3, micro-batch 1-16, recomputation none/selective/full,\n"
		 "TP and EP overlap on or off; the cluster, the global batch and everything else\n"
		 "stay as the scenario (default: scenarios/default.xml) has them. Layouts the\n"
		 "rules refuse or the memory estimate rules out are counted by reason; the rest\n"
		 "are simulated in the order of a step-time lower bound until no bound can beat\n"
		 "the list (--exhaustive: simulate them all). Prints the top N by the metric,\n"
		 "the best one's step broken down, why it beats the runner-up, and the capsim\n"
		 "run command that gives it (the --parts and --set given here, then the\n"
		 "layout's). The scenario's own layout need not suit the model: the search\n"
		 "starts there. cost_per_million_tokens_usd is the result key: the cost to\n"
		 "train per million tokens of the owned cluster or, with cost.acquire=rent,\n"
		 "of the cloud offer's GPUs. Each layout of the list is compared with the\n"
		 "best against capsim's own error (the paired band of the step time of one\n"
		 "GPU and stack): \"tie\" marks one it cannot tell apart from the best.\n",
	.opts = optimize_opts,
	.n_opts = CAPSIM_CLI_N(optimize_opts),
	.in_order = 1,
};

static void help(FILE *out)
{
	capsim_cli_help(&capsim_cli_optimize_cmd, out);
	fprintf(out,
		"\n"
		"Limits on work: a space of more than --max-layouts layouts (default %ld)\n"
		"is refused before any is screened; when the layouts the screens keep, each\n"
		"weighing one simulation per %ld GPUs of the cluster or part, are more than\n"
		"--max-simulations (default %ld), the search is refused before the first\n"
		"simulation. Either says its count and the value to raise the limit to.\n"
		"Progress (screening, then simulating) goes to stderr when it is a terminal\n"
		"and the search has run for %.0f s, and always with --progress (a line at\n"
		"each phase's start and end, and every %.0f s, where stderr is no terminal).\n",
		CAPSIM_OPT_MAX_LAYOUTS, CAPSIM_OPT_SIM_GPUS, CAPSIM_OPT_MAX_SIMULATIONS,
		PROGRESS_AFTER_S, PROGRESS_LINE_S);
}

/* The search's progress on stderr, a line a phase (util/progress.h). On
 * a terminal (unless --progress) it shows once the search has run
 * PROGRESS_AFTER_S, as one line rewritten in place; with --progress it
 * shows from the start, and where stderr is no terminal as lines: a
 * phase's start and end, and one every PROGRESS_LINE_S between. */
typedef struct {
	int on;                         /* show at all */
	int forced;                     /* --progress: from the start */
	double t0;                      /* when the search began */
	int phase;                      /* of the open line; -1 none */
	capsim_progress line[2];        /* each phase's */
} progress_state;

static const char *const phase_text[] = {
	"screening layouts (rules, memory estimate)",
	"simulating layouts (at most; the bound stops the search sooner)",
};

static void progress_start(progress_state *p, int on, int forced)
{
	p->on = on;
	p->forced = forced;
	p->t0 = capsim_now_s();
	p->phase = -1;
	for (int k = 0; k < 2; k++) {
		capsim_progress_init(&p->line[k], phase_text[k], NULL,
				     forced ? CAPSIM_PROGRESS_LOG : CAPSIM_PROGRESS_TERMINAL);
		p->line[k].log_every_s = PROGRESS_LINE_S;
	}
}

static void progress(void *ctx, int phase, long done, long total)
{
	progress_state *p = ctx;
	if (!p->on || (!p->forced && capsim_now_s() - p->t0 < PROGRESS_AFTER_S))
		return;
	if (phase != p->phase && p->phase >= 0)
		capsim_progress_end(&p->line[p->phase]);
	p->phase = done >= total ? -1 : phase;
	capsim_progress_show(&p->line[phase], done, total, NULL);
}

/* an option's count, 1 to 2^31 - 1, or -1 after the message */
static long limit_arg(const char *opt, const char *s)
{
	int v = capsim_cli_count(s, 2147483647);
	if (v < 1)
		fprintf(stderr, "capsim optimize: %s: expected a count from 1 to 2147483647, found "
			"'%s'\n", opt, s);
	return v < 1 ? -1 : v;
}

static const char *const recompute_names[] = { "none", "selective", "full" };

/* the step's parts, named as the result keys */
typedef struct {
	const char *name;
	size_t off;
} part;

static const part parts[] = {
	{ "compute_s", offsetof(capsim_opt_point, compute_s) },
	{ "bubble_s", offsetof(capsim_opt_point, bubble_s) },
	{ "exposed_comm_tp_s", offsetof(capsim_opt_point, exposed_tp_s) },
	{ "exposed_comm_cp_s", offsetof(capsim_opt_point, exposed_cp_s) },
	{ "exposed_comm_pp_s", offsetof(capsim_opt_point, exposed_pp_s) },
	{ "exposed_comm_dp_s", offsetof(capsim_opt_point, exposed_dp_s) },
	{ "exposed_comm_ep_s", offsetof(capsim_opt_point, exposed_ep_s) },
	{ "optimizer_s", offsetof(capsim_opt_point, optimizer_s) },
	{ "host_s", offsetof(capsim_opt_point, host_s) },
	{ "data_stall_s", offsetof(capsim_opt_point, data_stall_s) },
};
#define N_PARTS (sizeof parts / sizeof parts[0])

static double part_of(const capsim_opt_point *p, size_t i)
{
	return *(const double *)((const char *)p + parts[i].off);
}

static double metric_value(const capsim_opt_point *p, int metric)
{
	return metric == CAPSIM_OPT_TOKENS_PER_S ? p->tokens_per_s :
	       metric == CAPSIM_OPT_TIME_TO_TRAIN ? p->time_to_train_s : p->cost_per_mtok_usd;
}

/* why a beats b: the parts that differ most, and the settings that differ */
static void why(const capsim_opt_point *a, const capsim_opt_point *b, FILE *f)
{
	size_t order[N_PARTS];
	for (size_t i = 0; i < N_PARTS; i++)
		order[i] = i;
	for (size_t i = 1; i < N_PARTS; i++)
		for (size_t j = i; j > 0; j--) {
			double dj = fabs(part_of(b, order[j]) - part_of(a, order[j]));
			double dk = fabs(part_of(b, order[j - 1]) - part_of(a, order[j - 1]));
			if (dj <= dk)
				break;
			size_t t = order[j];
			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	fprintf(f, "why the best beats the runner-up: its step is %.4g s shorter (%.4g s against "
		"%.4g s, %.2f%%)\n", b->step_time_s - a->step_time_s, a->step_time_s, b->step_time_s,
		100.0 * (b->step_time_s - a->step_time_s) / b->step_time_s);
	for (size_t k = 0; k < 3; k++) {
		size_t i = order[k];
		double dv = part_of(b, i) - part_of(a, i);
		if (fabs(dv) < 1e-12)
			break;
		fprintf(f, "  %-18s %+.4g s for the runner-up (%.4g against %.4g)\n", parts[i].name,
			dv, part_of(b, i), part_of(a, i));
	}
	const capsim_opt_config *x = &a->c, *y = &b->c;
	fprintf(f, "  settings that differ:");
	int any = 0;
#define DIFF(field, name)                                                              \
	if (x->field != y->field) {                                                    \
		fprintf(f, " %s %d (runner-up %d)", name, x->field, y->field);        \
		any = 1;                                                               \
	}
	DIFF(tp, "tp") DIFF(pp, "pp") DIFF(virtual_stages, "virtual-stages")
	DIFF(first_stage_layers, "first-stage-layers") DIFF(cp, "cp") DIFF(ep, "ep")
	DIFF(dp, "dp") DIFF(zero, "zero") DIFF(micro_batch, "micro-batch")
	DIFF(tp_comm_overlap, "tp-comm-overlap") DIFF(ep_overlap, "ep-overlap")
#undef DIFF
	if (x->recompute != y->recompute) {
		fprintf(f, " recompute %s (runner-up %s)", recompute_names[x->recompute],
			recompute_names[y->recompute]);
		any = 1;
	}
	fprintf(f, "%s\n", any ? "" : " none");
}

/* the ranks whose memory verdict is close: kept, and said so */
static void warn_close(const capsim_opt_result *r)
{
	int any = 0;
	for (size_t i = 0; i < r->n_top; i++) {
		if (!r->top[i].mem_close)
			continue;
		printf("%s #%zu", any ? "," : "  warning: memory close (within the memory model's "
					      "error of the capacity; kept):", i + 1);
		any = 1;
	}
	if (any)
		printf("\n");
}

/* What the user gave that the pasted command must give again: the scenario
 * (NULL: the default), and the --set edits, in order. */
typedef struct {
	const char *path;
	const capsim_cli_sets *sets;    /* its first n_sets are the user's */
	size_t n_sets;
} user_args;

/* one word of a command line, quoted as the shell reads it */
static void sh_arg(FILE *f, const char *opt, const char *word)
{
	fputc(' ', f);
	if (opt)
		fprintf(f, "%s ", opt);
	capsim_sh_word(f, word);
}

/* The command that runs layout c of s as the user's own invocation gave s:
 * capsim, each --parts given, run, the scenario, each of the user's --set,
 * then the layout's own --set (the last of a path wins) */
static void paste_command(FILE *f, const user_args *u, const capsim_scenario *s,
			  const capsim_opt_config *c)
{
	const char *const *given;
	size_t n_parts = capsim_cli_parts_given(&given);
	fputs("capsim", f);
	for (size_t i = 0; i < n_parts; i++)
		sh_arg(f, "--parts", given[i]);
	fputs(" run", f);
	if (u->path)
		sh_arg(f, NULL, u->path);
	char word[1024];
	for (size_t i = 0; i < u->n_sets; i++) {
		snprintf(word, sizeof word, "%s=%s", u->sets->v[i].path, u->sets->v[i].value);
		sh_arg(f, "--set", word);
	}
	capsim_set sets[CAPSIM_OPT_MAX_SETS];
	char buf[CAPSIM_OPT_MAX_SETS][32];
	size_t n = capsim_opt_paste_sets(s, c, buf, sets);
	for (size_t i = 0; i < n; i++) {
		snprintf(word, sizeof word, "%s=%s", sets[i].path, sets[i].value);
		sh_arg(f, "--set", word);
	}
}

/* paste_command as a string the caller frees */
static char *paste_string(const user_args *u, const capsim_scenario *s, const capsim_opt_config *c)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return capsim_xstrdup("");
	paste_command(f, u, s, c);
	fclose(f);
	return text;
}

/* layout i's mark against the best: "  tie (p 0.52)", "  slower (p 0.97)",
 * "  -" without a band; "" when the list is not marked */
static void mark_text(const capsim_opt_result *r, size_t i, char *buf, size_t n)
{
	const capsim_opt_point *p = &r->top[i];
	if (!r->marked)
		snprintf(buf, n, "%s", "");
	else if (i == 0)
		snprintf(buf, n, "  best");
	else if (!p->cmp_has)
		snprintf(buf, n, "  -");
	else
		snprintf(buf, n, "  %s (p %.2f)", p->tie_best ? "tie" : "slower", p->p_best);
}

/* what the marks mean, under the table */
static void marks_legend(const capsim_opt_result *r)
{
	if (!r->marked || !r->cmp.has)
		return;
	long ties = 0;
	for (size_t i = 1; i < r->n_top; i++)
		ties += r->top[i].tie_best;
	printf("  vs #1: tie = indistinguishable from #1 within capsim's own error (the ratio "
	       "of the steps inside the 80%% band of their comparison, +/-%.1f%% %s; %s); p = the "
	       "probability that #1's measured step is the shorter. %ld of the %zu below #1 %s.\n",
	       100.0 * (exp(r->cmp.half80) - 1.0), r->cmp.paired ? "on the difference, one GPU "
	       "and stack" : "from independent bands", r->cmp.group, ties, r->n_top - 1,
	       ties == 1 ? "is a tie" : "are ties");
}

/* the runner-up against the best, on the model's own error */
static void runner_up_verdict(const capsim_opt_result *r)
{
	const capsim_opt_point *p = &r->top[1];
	if (!r->marked || !p->cmp_has)
		return;
	if (p->tie_best)
		printf("  within capsim's own error the two are a tie (p %.2f that the best's step "
		       "is the shorter): a measured step of each on the hardware decides it\n",
		       p->p_best);
	else
		printf("  within capsim's own error the best is the faster with probability %.2f\n",
		       p->p_best);
}

static void print_text(const capsim_scenario *s, const user_args *u, const capsim_opt_result *r,
		       int metric, int threads)
{
	const char *path = u->path ? u->path : "scenarios/default.xml";
	printf("optimize %s: %s on %ld GPUs (%d nodes), global batch %.0f x %d tokens\n",
	       path, s->model.e.id, capsim_scenario_gpus(s), s->nodes, s->global_batch, s->seq_len);
	printf("  layouts: %ld enumerated, %ld refused by the rules, %ld out of memory (estimate), "
	       "%ld simulated (%ld failed), %ld skipped by the bound; %.2f s (%.0f layouts/s) on "
	       "%d thread%s\n",
	       r->candidates, r->refused, r->no_fit, r->simulated, r->failed, r->bounded,
	       r->elapsed_s, r->elapsed_s > 0 ? (double)r->candidates / r->elapsed_s : 0.0,
	       threads, threads == 1 ? "" : "s");
	if (r->n_reasons)
		printf("  why layouts were dropped (the first of each kind):\n");
	for (size_t i = 0; i < r->n_reasons; i++)
		printf("    %8ld  %s\n", r->reasons[i].count, r->reasons[i].text);
	printf("\n  #  %-52s %10s %12s %6s %9s %14s%s\n", "layout", "step (s)", "tokens/s", "MFU",
	       "mem (GiB)", capsim_opt_metric_names[metric], r->marked ? "  vs #1" : "");
	for (size_t i = 0; i < r->n_top; i++) {
		const capsim_opt_point *p = &r->top[i];
		char lay[160], mark[48];
		capsim_opt_config_text(&p->c, lay, sizeof lay);
		mark_text(r, i, mark, sizeof mark);
		printf("  %zu  %-52s %10.4g %12.6g %5.1f%% %9.1f %14.6g%s\n", i + 1, lay,
		       p->step_time_s, p->tokens_per_s, 100.0 * p->mfu,
		       p->peak_mem_bytes / 1073741824.0, metric_value(p, metric), mark);
	}
	marks_legend(r);
	warn_close(r);
	const capsim_opt_point *b = &r->top[0];
	printf("\nthe best layout's step, %.4g s:", b->step_time_s);
	for (size_t i = 0; i < N_PARTS; i++)
		if (part_of(b, i) > 0)
			printf(" %s %.4g", parts[i].name, part_of(b, i));
	printf("\n");
	if (r->n_top > 1) {
		why(&r->top[0], &r->top[1], stdout);
		runner_up_verdict(r);
	}
	fputs("to run it: ", stdout);
	paste_command(stdout, u, s, &b->c);
	fputc('\n', stdout);
	if (!capsim_opt_pastable(s, &b->c))
		printf("  note: the scenario (its file or a --set) gives first- and last-stage-layers, "
		       "which no edit can remove and pp 1 refuses: take them out to run this "
		       "layout\n");
}

static json_t *point_json(const capsim_opt_point *p, int marked, const user_args *u,
			  const capsim_scenario *s)
{
	json_t *o = json_object();
	char *cmd = paste_string(u, s, &p->c);
	json_object_set_new(o, "run", json_string(cmd));
	free(cmd);
	json_t *c = json_object();
	capsim_set sets[CAPSIM_OPT_MAX_SETS];
	char buf[CAPSIM_OPT_MAX_SETS][32];
	size_t n = capsim_opt_config_sets(&p->c, buf, sets);
	for (size_t i = 0; i < n; i++)
		json_object_set_new(c, sets[i].path, json_string(sets[i].value));
	json_object_set_new(o, "sets", c);
	json_object_set_new(o, "dp", json_integer(p->c.dp));
	json_object_set_new(o, "bound_s", json_real(p->bound_s));
	json_object_set_new(o, "step_time_s", json_real(p->step_time_s));
	json_object_set_new(o, "tokens_per_s", json_real(p->tokens_per_s));
	json_object_set_new(o, "time_to_train_s", json_real(p->time_to_train_s));
	if (isfinite(p->cost_per_mtok_usd))
		json_object_set_new(o, "cost_per_million_tokens_usd", json_real(p->cost_per_mtok_usd));
	json_object_set_new(o, "mfu", json_real(p->mfu));
	json_object_set_new(o, "peak_mem_per_gpu_bytes", json_real(p->peak_mem_bytes));
	json_object_set_new(o, "memory_close", json_boolean(p->mem_close));
	for (size_t i = 0; i < N_PARTS; i++)
		json_object_set_new(o, parts[i].name, json_real(part_of(p, i)));
	if (marked && p->cmp_has) {
		json_object_set_new(o, "indistinguishable_from_best", json_boolean(p->tie_best));
		json_object_set_new(o, "p_best_shorter", json_real(p->p_best));
	}
	return o;
}

/* the band the marks come from: {"band80": half-width as a share, "paired",
 * "group"} */
static json_t *comparison_json(const capsim_opt_result *r)
{
	json_t *c = json_object();
	json_object_set_new(c, "band80", json_real(exp(r->cmp.half80) - 1.0));
	json_object_set_new(c, "paired", json_boolean(r->cmp.paired));
	json_object_set_new(c, "group", json_string(r->cmp.group));
	return c;
}

static void print_json(const capsim_scenario *s, const user_args *u, const capsim_opt_result *r,
		       int metric, int threads, json_t *o)
{
	json_object_set_new(o, "metric", json_string(capsim_opt_metric_names[metric]));
	json_object_set_new(o, "layouts", json_integer(r->candidates));
	json_object_set_new(o, "refused", json_integer(r->refused));
	json_object_set_new(o, "no_fit", json_integer(r->no_fit));
	json_object_set_new(o, "simulated", json_integer(r->simulated));
	json_object_set_new(o, "failed", json_integer(r->failed));
	json_object_set_new(o, "bounded", json_integer(r->bounded));
	json_object_set_new(o, "threads", json_integer(threads));
	json_object_set_new(o, "elapsed_s", json_real(r->elapsed_s));
	json_object_set_new(o, "batch_tokens", json_real(r->batch_tokens));
	json_t *why = json_array();
	for (size_t i = 0; i < r->n_reasons; i++) {
		json_t *e = json_object();
		json_object_set_new(e, "reason", json_string(r->reasons[i].text));
		json_object_set_new(e, "layouts", json_integer(r->reasons[i].count));
		json_array_append_new(why, e);
	}
	json_object_set_new(o, "dropped_by", why);
	json_t *top = json_array();
	for (size_t i = 0; i < r->n_top; i++)
		json_array_append_new(top, point_json(&r->top[i], r->marked, u, s));
	json_object_set_new(o, "top", top);
	if (r->marked && r->cmp.has)
		json_object_set_new(o, "comparison", comparison_json(r));
	json_dumpf(o, stdout, JSON_INDENT(2));
	fputc('\n', stdout);
}

int capsim_cmd_optimize(int argc, char **argv)
{
	capsim_opt_options o = { .metric = CAPSIM_OPT_TOKENS_PER_S, .top = 5,
				 .threads = capsim_cli_cpus(1024) };
	int as_json = 0, quiet = 0, forced = 0, intervals = 1, c;
	capsim_err_model *em = NULL;
	capsim_cli_sets sets = { 0 };
	capsim_diags d = { 0 };
	int status = CAPSIM_EXIT_USAGE;
	optind = 1;
	while ((c = capsim_cli_next(&capsim_cli_optimize_cmd, argc, argv)) != -1) {
		switch (c) {
		case O_METRIC: {
			int m = -1;
			for (int k = 0; k < CAPSIM_OPT__COUNT; k++)
				if (strcmp(optarg, capsim_opt_metric_names[k]) == 0)
					m = k;
			if (m < 0) {
				fprintf(stderr, "capsim optimize: --metric: expected tokens_per_s, "
					"time_to_train_s or cost_per_million_tokens_usd, found '%s'\n",
					optarg);
				goto out;
			}
			o.metric = m;
			break;
		}
		case O_TOP:
			o.top = capsim_cli_count(optarg, 1000);
			if (o.top < 1) {
				fprintf(stderr, "capsim optimize: --top: expected 1 to 1000, found '%s'\n",
					optarg);
				goto out;
			}
			break;
		case O_JOBS:
			o.threads = capsim_cli_count(optarg, 1024);
			if (o.threads < 1) {
				fprintf(stderr, "capsim optimize: -j: expected 1 to 1024 threads, found "
					"'%s'\n", optarg);
				goto out;
			}
			break;
		case O_EXHAUSTIVE: o.exhaustive = 1; break;
		case O_JSON: as_json = 1; break;
		case O_NO_PROGRESS: quiet = 1; break;
		case O_PROGRESS: forced = 1; break;
		case O_NO_INTERVALS: intervals = 0; break;
		case O_MAX_LAYOUTS:
			if ((o.max_layouts = limit_arg("--max-layouts", optarg)) < 0)
				goto out;
			break;
		case O_MAX_SIMULATIONS:
			if ((o.max_simulations = limit_arg("--max-simulations", optarg)) < 0)
				goto out;
			break;
		case O_SET:
			if (capsim_cli_sets_add(&sets, optarg, &d) < 0) {
				capsim_diags_print(&d, stderr);
				goto out;
			}
			break;
		case O_HELP:
			help(stdout);
			status = CAPSIM_EXIT_OK;
			goto out;
		default:
			goto out;
		}
	}
	if (argc - optind > 1) {
		fprintf(stderr, "capsim optimize: expected at most one scenario, found %d\n",
			argc - optind);
		goto out;
	}
	const char *path = optind < argc ? argv[optind] : NULL;
	capsim_catalog *cat;
	capsim_scenario *s;
	/* what a layout is ranked by needs neither the Monte Carlo of
	 * interruptions nor anything else that does not move with the layout */
	user_args u = { path, &sets, sets.n };
	if (capsim_cli_sets_add(&sets, "reliability.runs=0", &d) < 0 ||
	    capsim_cli_load_any_layout(path, &sets, &cat, &s, &d) < 0) {
		capsim_diags_print(&d, stderr);
		status = capsim_diags_runtime(&d) ? CAPSIM_EXIT_FAILURE : CAPSIM_EXIT_USAGE;
		goto out;
	}
	/* the error model, once: a bad or missing one is bad input (exit 2) */
	if (intervals && !(em = capsim_cli_err_model("optimize", &d))) {
		capsim_diags_print(&d, stderr);
		capsim_catalog_free(cat);
		free(s);
		goto out;
	}
	progress_state ps;
	progress_start(&ps, forced || (!quiet && !as_json && isatty(STDERR_FILENO)), forced);
	o.progress = progress;
	o.progress_ctx = &ps;
	capsim_opt_result r;
	int rc = capsim_optimize(s, cat, &o, &r, &d);
	if (ps.phase >= 0)
		capsim_progress_end(&ps.line[ps.phase]);
	if (rc == -2) {
		/* past a limit on work: refused before the simulations */
		capsim_diags_print(&d, stderr);
		status = CAPSIM_EXIT_USAGE;
	} else if (rc < 0) {
		capsim_diags_print(&d, stderr);
		for (size_t i = 0; i < r.n_reasons; i++)
			fprintf(stderr, "  %8ld  %s\n", r.reasons[i].count, r.reasons[i].text);
		status = CAPSIM_EXIT_FAILURE;
	} else {
		if (r.batch_tokens > CAPSIM_BATCH_TOKENS_WARN)
			fprintf(stderr, "capsim optimize: warning: the global batch is %.3g tokens a step "
				"(%.0f x %d), far beyond what models are trained with (above %.3g: "
				"docs/model.md, \"Global batch\"); the layouts are legal, the training "
				"may not converge as fast\n", r.batch_tokens, s->global_batch, s->seq_len,
				CAPSIM_BATCH_TOKENS_WARN);
		capsim_opt_mark_ties(&r, em);
		if (as_json) {
			json_t *head = capsim_cli_json_head(cat, s);
			print_json(s, &u, &r, o.metric, o.threads, head);
			json_decref(head);
		} else {
			print_text(s, &u, &r, o.metric, o.threads);
		}
		status = CAPSIM_EXIT_OK;
	}
	capsim_opt_result_free(&r);
	capsim_err_model_free(em);
	capsim_catalog_free(cat);
	free(s);
out:
	capsim_cli_sets_free(&sets);
	capsim_diags_free(&d);
	return status;
}
