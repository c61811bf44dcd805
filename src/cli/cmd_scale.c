/* cmd_scale.c - `capsim scale SCENARIO --gpus LIST [--weak|--strong]`: the
 * same job at several cluster sizes, TP, PP and CP fixed and data parallelism
 * growing; step time, throughput and scaling efficiency per size. */
#include <errno.h>
#include <getopt.h>
#include <stdio_ext.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "catalog.h"
#include "cli.h"
#include "clock.h"
#include "eval.h"
#include "optimize.h"
#include "outfile.h"
#include "progress.h"
#include "scenario.h"
#include "table.h"
#include "xalloc.h"

enum { O_GPUS, O_WEAK, O_STRONG, O_CSV, O_JSON, O_NO_INTERVALS, O_PROGRESS, O_SET, O_HELP };
static const capsim_cli_opt scale_opts[] = {
	[O_GPUS] = { "gpus", 'g', "N,N,...", "the GPU counts to run, at most 64" },
	[O_WEAK] = { "weak", 'w', NULL,
		     "grow the global batch with data parallelism (the default):\n"
		     "the micro-batches per replica stay" },
	[O_STRONG] = { "strong", 'S', NULL,
		       "keep the global batch: each replica gets fewer micro-batches;\n"
		       "the table adds the speed-up per GPU against the first size" },
	[O_CSV] = { "csv", 'c', "FILE",
		    "write every result key of each size (the columns of capsim\n"
		    "run's result table) to FILE, whole or not at all; - for stdout" },
	[O_JSON] = { "json", 'j', NULL, "one object with a \"points\" array instead of the table" },
	[O_NO_INTERVALS] = { "no-intervals", 0, NULL,
			     "leave out the prediction intervals (the step's band in\n"
			     "the table, KEY_lo and KEY_hi in the CSV and JSON)" },
	[O_PROGRESS] = { "progress", 0, NULL,
			 "report each size as it starts and ends on stderr (always\n"
			 "when stderr is a terminal)" },
	[O_SET] = { "set", 's', "PATH=VALUE", "override a scenario field" },
	[O_HELP] = { "help", 'h', NULL, "this text" },
};
const capsim_cli_cmd capsim_cli_scale_cmd = {
	.name = "scale",
	.usage = "usage: capsim scale SCENARIO --gpus N,N,... [--weak | --strong]\n"
		 "                    [--csv FILE] [--json] [--no-intervals] [--progress]\n"
		 "                    [--set PATH=VALUE]...\n",
	.about = "Run the scenario's job at each GPU count: TP, PP and CP stay, data\n"
		 "parallelism grows. Every size is checked before the first is run. Prints\n"
		 "step time, tokens/s and scaling efficiency (as capsim run: tokens/s per GPU\n"
		 "against one replica on its own nodes).\n",
	.opts = scale_opts,
	.n_opts = CAPSIM_CLI_N(scale_opts),
};

/* One size's progress on stderr. As it starts: the progress line on a
 * terminal (util/progress.h), "[i/n] G GPUs ..." elsewhere; as it ends,
 * "[i/n] G GPUs ... done in T s (T s in all)" (on a terminal, in the
 * progress line's place). */
static void size_started(capsim_progress *p, int log, int i, int n, long gpus)
{
	char note[48];
	snprintf(note, sizeof note, "%ld GPUs", gpus);
	capsim_progress_show(p, i, n, note);
	if (log) {
		fprintf(stderr, "[%d/%d] %ld GPUs ...\n", i + 1, n, gpus);
		fflush(stderr);
	}
}

static void size_done(capsim_progress *p, int on, int i, int n, long gpus, double started)
{
	if (!on)
		return;
	capsim_progress_clear(p);
	double t = capsim_now_s();
	fprintf(stderr, "[%d/%d] %ld GPUs ... done in %.2f s (%.2f s in all)\n", i + 1, n, gpus,
		t - started, t - p->t0);
	fflush(stderr);
}

/* "N,N,...": at most max counts, each 1 to 2^31 - 1 (capsim_cli_count), no
 * empty item; -1 for anything else */
static int parse_list(const char *s, long *v, int max)
{
	int n = 0;
	for (const char *p = s;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		char item[32];
		if (n == max || len == 0 || len >= sizeof item)
			return -1;
		memcpy(item, p, len);
		item[len] = '\0';
		int x = capsim_cli_count(item, 2147483647);
		if (x < 1)
			return -1;
		v[n++] = x;
		if (!comma)
			return n;
		p = comma + 1;
	}
}

/* The scenario at `gpus` GPUs: nodes and (weak scaling) the global batch
 * edited through capsim_scenario_set_many, so every check runs. */
static int size_point(const capsim_scenario *base, const capsim_catalog *cat, long gpus,
		      int strong, capsim_scenario *out, capsim_diags *d)
{
	long G = base->node.gpus, model = (long)base->tp * base->pp * base->cp;
	if (gpus % G || gpus % model) {
		capsim_diags_add_at(d, "--gpus",
				    "%ld GPUs is not a whole number of %ld-GPU nodes and of "
				    "tp x pp x cp = %ld",
				    gpus, G, model);
		return -1;
	}
	char nodes_s[32], batch_s[48];
	snprintf(nodes_s, sizeof nodes_s, "%ld", gpus / G);
	double per_replica = base->global_batch / base->dp;
	snprintf(batch_s, sizeof batch_s, "%.0f",
		 strong ? base->global_batch : per_replica * (double)(gpus / model));
	const capsim_set edits[] = { { "cluster.nodes", nodes_s },
				     { "workload.global-batch", batch_s } };
	*out = *base;
	size_t before = d->n;
	if (capsim_scenario_set_many(out, cat, edits, 2, d) == 0)
		return 0;
	for (size_t i = before; i < d->n; i++) {
		/* say which size it was */
		char *w = d->v[i].where;
		d->v[i].where = capsim_xasprintf("--gpus %ld (%s)", gpus, w);
		free(w);
	}
	return -1;
}

/* ---- the tables ---------------------------------------------------------------- */

/* the text table's columns, one size a row; speed-up only with --strong,
 * then the note on a size that does not fit */
enum { COL_GPUS, COL_NODES, COL_DP, COL_BATCH, COL_STEP, COL_STEP_BAND, COL_TOKENS,
       COL_PER_GPU, COL_MFU, COL_SCALING, COL_SPEEDUP, COL_NOTE, N_COLS };
static const capsim_table_col size_cols[N_COLS] = {
	[COL_GPUS] = { .name = "GPUs", .kind = CAPSIM_TABLE_INT, .width = 8 },
	[COL_NODES] = { .name = "nodes", .kind = CAPSIM_TABLE_INT, .width = 6, .gap = 1 },
	[COL_DP] = { .name = "dp", .kind = CAPSIM_TABLE_INT, .width = 6, .gap = 1 },
	[COL_BATCH] = { .name = "batch", .kind = CAPSIM_TABLE_REAL, .precision = 0, .width = 10,
			.gap = 1, .flags = CAPSIM_TABLE_FIXED },
	[COL_STEP] = { .name = "step", .unit = "s", .kind = CAPSIM_TABLE_REAL, .precision = 4,
		       .width = 12, .gap = 1, .flags = CAPSIM_TABLE_FIXED },
	[COL_STEP_BAND] = { .name = "80% band", .unit = "s", .kind = CAPSIM_TABLE_TEXT,
			    .width = 16, .gap = 1 },
	[COL_TOKENS] = { .name = "tokens/s", .kind = CAPSIM_TABLE_REAL, .precision = 4,
			 .width = 14, .gap = 1 },
	[COL_PER_GPU] = { .name = "tokens/s/GPU", .kind = CAPSIM_TABLE_REAL, .precision = 4,
			  .width = 12, .gap = 1 },
	[COL_MFU] = { .name = "MFU", .kind = CAPSIM_TABLE_REAL, .precision = 1, .width = 7,
		      .gap = 1, .flags = CAPSIM_TABLE_FIXED | CAPSIM_TABLE_PERCENT },
	[COL_SCALING] = { .name = "scaling", .kind = CAPSIM_TABLE_REAL, .precision = 1,
			  .width = 9, .gap = 1, .flags = CAPSIM_TABLE_FIXED | CAPSIM_TABLE_PERCENT },
	[COL_SPEEDUP] = { .name = "speed-up/GPU", .kind = CAPSIM_TABLE_REAL, .precision = 1,
			  .width = 15, .gap = 1, .flags = CAPSIM_TABLE_FIXED | CAPSIM_TABLE_PERCENT },
	[COL_NOTE] = { .name = "", .kind = CAPSIM_TABLE_TEXT, .align = CAPSIM_TABLE_LEFT },
};

/* the sizes' table; without strong, no speed-up column; without bands, no
 * step band */
static void sizes_init(capsim_table *t, int strong, int bands)
{
	capsim_table_col cols[N_COLS];
	memcpy(cols, size_cols, sizeof cols);
	if (!strong)
		cols[COL_SPEEDUP].flags |= CAPSIM_TABLE_NO_TEXT;
	if (!bands)
		cols[COL_STEP_BAND].flags |= CAPSIM_TABLE_NO_TEXT;
	capsim_table_init(t, cols, N_COLS);
}

/* one size's row: per_gpu its tokens/s per GPU, first the first size's */
static size_t sizes_add(capsim_table *t, const capsim_result *r, double per_gpu, double first)
{
	size_t i = capsim_table_add_row(t);
	capsim_table_set_num(t, i, COL_GPUS, (double)r->gpus);
	capsim_table_set_num(t, i, COL_NODES, r->nodes);
	capsim_table_set_num(t, i, COL_DP, r->dp);
	capsim_table_set_num(t, i, COL_BATCH, r->global_batch);
	capsim_table_set_num(t, i, COL_STEP, r->step.step_time_s);
	double lo, hi;
	if (capsim_result_band(r, capsim_result_key_find("step_time_s"), CAPSIM_ERR_80, &lo, &hi)) {
		char b[48];
		snprintf(b, sizeof b, "%.4f-%.4f", lo, hi);
		capsim_table_set_text(t, i, COL_STEP_BAND, b);
	}
	capsim_table_set_num(t, i, COL_TOKENS, r->step.tokens_per_s);
	capsim_table_set_num(t, i, COL_PER_GPU, per_gpu);
	capsim_table_set_num(t, i, COL_MFU, r->mfu);
	if (r->has_scaling)
		capsim_table_set_num(t, i, COL_SCALING, r->scaling_efficiency);
	capsim_table_set_num(t, i, COL_SPEEDUP, per_gpu / first);
	capsim_table_set_text(t, i, COL_NOTE, !r->fits_in_memory ? "(does not fit)" :
			      strcmp(r->memory_verdict, "close") == 0 ? "(memory close)" : "");
	return i;
}

/* The CSV's table: every result key that is not structured, as
 * capsim_result_keys lists them (the columns of capsim run's result
 * table), with bands each banded key's four ends after it, reals to 10
 * significant digits. */
static void results_init(capsim_table *t, int bands)
{
	capsim_table_col *cols = capsim_xcalloc(capsim_result_n_values, sizeof *cols);
	size_t n = 0;
	for (size_t i = 0; i < capsim_result_n_keys; i++) {
		const capsim_result_key *k = &capsim_result_keys[i];
		if (k->kind == CAPSIM_RK_JSON)
			continue;
		cols[n++] = (capsim_table_col){
			.name = k->key, .csv_precision = 10, .flags = CAPSIM_TABLE_CSV_BARE_NAME,
			.kind = k->kind == CAPSIM_RK_REAL ? CAPSIM_TABLE_REAL :
				k->kind == CAPSIM_RK_BOOL ? CAPSIM_TABLE_BOOL :
				k->kind == CAPSIM_RK_TEXT ? CAPSIM_TABLE_TEXT : CAPSIM_TABLE_INT };
		for (int e = 0; bands && k->band != CAPSIM_BAND_NONE && e < 2 * CAPSIM_ERR__LEVELS;
		     e++)
			cols[n++] = (capsim_table_col){ .name = k->ends[e], .csv_precision = 10,
							.flags = CAPSIM_TABLE_CSV_BARE_NAME,
							.kind = CAPSIM_TABLE_REAL };
	}
	capsim_table_init(t, cols, n);
	free(cols);
}

/* r's keys as a row of the CSV's table (the columns results_init made, in
 * its order); those r lacks absent */
static void results_add(capsim_table *t, const capsim_result *r)
{
	size_t row = capsim_table_add_row(t), c = 0;
	for (size_t i = 0; i < capsim_result_n_keys && c < t->n_cols; i++) {
		const capsim_result_key *k = &capsim_result_keys[i];
		if (k->kind == CAPSIM_RK_JSON)
			continue;
		size_t at = c++, ends = 0;
		if (c < t->n_cols && k->band != CAPSIM_BAND_NONE &&
		    strcmp(t->cols[c].name, k->ends[0]) == 0) {
			ends = c;
			c += 2 * CAPSIM_ERR__LEVELS;
		}
		if (!capsim_result_has(r, k))
			continue;
		if (k->kind == CAPSIM_RK_TEXT)
			capsim_table_set_text(t, row, at, capsim_result_string(r, k->key));
		else
			capsim_table_set_num(t, row, at, capsim_result_number(r, k));
		for (int l = 0; ends && l < CAPSIM_ERR__LEVELS; l++) {
			double lo, hi;
			if (!capsim_result_band(r, k, l, &lo, &hi))
				continue;
			capsim_table_set_num(t, row, ends + 2 * (size_t)l, lo);
			capsim_table_set_num(t, row, ends + 2 * (size_t)l + 1, hi);
		}
	}
}

/* standard output flushed, so that a row is seen as its size ends; -1
 * after saying why it could not be */
static int flush_rows(void)
{
	errno = 0;
	if (fflush(stdout) == 0)
		return 0;
	/* say why now; the rest of the table has nowhere to go */
	fprintf(stderr, "capsim: writing standard output: %s\n", strerror(errno ? errno : EIO));
	__fpurge(stdout);
	clearerr(stdout);
	return -1;
}

/* one size's result shown: a point of the JSON array ja, or else a row of
 * the table printed and flushed; -1 when standard output cannot take it */
static int show_size(const capsim_result *r, double per_gpu, double first, json_t *ja,
		     capsim_table *rows)
{
	if (ja) {
		json_t *p = json_object();
		capsim_result_json(r, p);
		json_array_append_new(ja, p);
		return 0;
	}
	capsim_table_write_line(rows, (long)sizes_add(rows, r, per_gpu, first), stdout);
	return flush_rows();
}

/* what the command line asks for */
typedef struct scale_args {
	long sizes[64];
	int n_sizes, strong, json, show, no_intervals;
	const char *csv;
	capsim_cli_sets sets;             /* the caller frees them */
} scale_args;

/* 0 to go on, or the exit status after --help (*done set) or after saying
 * what is wrong */
static int parse_args(int argc, char **argv, scale_args *a, int *done)
{
	capsim_diags d = { 0 };
	int ch;
	optind = 1;
	while ((ch = capsim_cli_next(&capsim_cli_scale_cmd, argc, argv)) != -1) {
		switch (ch) {
		case O_GPUS:
			a->n_sizes = parse_list(optarg, a->sizes, 64);
			if (a->n_sizes <= 0) {
				fprintf(stderr, "capsim scale: --gpus wants N,N,... (at most 64 "
					"positive counts, no empty item), found '%s'\n", optarg);
				return CAPSIM_EXIT_USAGE;
			}
			break;
		case O_WEAK: a->strong = 0; break;
		case O_STRONG: a->strong = 1; break;
		case O_CSV: a->csv = optarg; break;
		case O_JSON: a->json = 1; break;
		case O_NO_INTERVALS: a->no_intervals = 1; break;
		case O_PROGRESS: a->show = 1; break;
		case O_SET:
			if (capsim_cli_sets_add(&a->sets, optarg, &d) < 0) {
				capsim_diags_print(&d, stderr);
				capsim_diags_free(&d);
				return CAPSIM_EXIT_USAGE;
			}
			break;
		case O_HELP:
			capsim_cli_help(&capsim_cli_scale_cmd, stdout);
			*done = 1;
			return CAPSIM_EXIT_OK;
		default: return CAPSIM_EXIT_USAGE;
		}
	}
	if (optind + 1 != argc || a->n_sizes == 0) {
		fprintf(stderr, "capsim scale: SCENARIO and --gpus are required\n");
		capsim_cli_help(&capsim_cli_scale_cmd, stderr);
		return CAPSIM_EXIT_USAGE;
	}
	return 0;
}

/* a size whose global batch is past what models are trained with, said */
static void warn_batch(const capsim_result *r, int seq_len)
{
	double batch_tokens = r->global_batch * seq_len;
	if (batch_tokens > CAPSIM_BATCH_TOKENS_WARN)
		fprintf(stderr, "capsim scale: warning: at %ld GPUs the global batch is %.3g tokens "
			"a step (%.0f x %d), far beyond what models are trained with (above "
			"%.3g: docs/model.md, \"Global batch\"); --strong keeps the batch\n",
			r->gpus, batch_tokens, r->global_batch, seq_len, CAPSIM_BATCH_TOKENS_WARN);
}

int capsim_cmd_scale(int argc, char **argv)
{
	scale_args a = { 0 };
	int done = 0, status = parse_args(argc, argv, &a, &done);
	if (status || done) {
		capsim_cli_sets_free(&a.sets);
		return status;
	}
	status = CAPSIM_EXIT_USAGE;
	int n_sizes = a.n_sizes, strong = a.strong, json = a.json, show = a.show;
	capsim_diags d = { 0 };
	capsim_catalog *cat = NULL;
	capsim_scenario *base = NULL, *pts = NULL;
	capsim_outfile csv_out;
	FILE *out = NULL;
	json_t *jo = NULL, *ja = NULL;
	capsim_table rows = { 0 }, results = { 0 };
	capsim_err_model *errors = NULL;

	capsim_init();
	if (!a.no_intervals && !(errors = capsim_cli_err_model("scale", &d)))
		goto fail;
	if (capsim_cli_load(argv[optind], &a.sets, &cat, &base, &d) < 0)
		goto fail;
	/* every size checked before the first runs */
	pts = capsim_xcalloc((size_t)n_sizes, sizeof *pts);
	for (int i = 0; i < n_sizes; i++)
		size_point(base, cat, a.sizes[i], strong, &pts[i], &d);
	if (d.n)
		goto fail;
	if (a.csv) {
		if (capsim_outfile_open(&csv_out, a.csv, &d) < 0) {
			capsim_diags_print(&d, stderr);
			status = CAPSIM_EXIT_FAILURE;
			goto out;
		}
		out = csv_out.f;
		results_init(&results, errors != NULL);
	}
	if (json) {
		jo = capsim_cli_json_head(cat, base);
		json_object_set_new(jo, "mode", json_string(strong ? "strong" : "weak"));
		ja = json_array();
	} else {
		printf("# %s, %s scaling: tp %d, pp %d, cp %d fixed\n", base->name,
		       strong ? "strong" : "weak", base->tp, base->pp, base->cp);
		sizes_init(&rows, strong, errors != NULL);
		capsim_table_write_line(&rows, -1, stdout);
	}
	double first = 0.0;
	int tty = isatty(STDERR_FILENO);
	capsim_progress pr;
	capsim_progress_init(&pr, "capsim scale", "sizes",
			     show || tty ? CAPSIM_PROGRESS_TERMINAL : CAPSIM_PROGRESS_OFF);
	show = show || tty;
	for (int i = 0; i < n_sizes; i++) {
		capsim_result r;
		double started = capsim_now_s();
		size_started(&pr, show && !tty, i, n_sizes, capsim_scenario_gpus(&pts[i]));
		capsim_eval_opts eo = { .errors = errors };
		if (capsim_eval(&pts[i], &eo, &r, &d) < 0) { /* no I/O: the input is refused */
			capsim_progress_end(&pr);
			capsim_diags_print(&d, stderr);
			goto out;
		}
		size_done(&pr, show, i, n_sizes, r.gpus, started);
		warn_batch(&r, pts[i].seq_len);
		double per_gpu = r.step.tokens_per_s / (double)r.gpus;
		if (i == 0)
			first = per_gpu;
		if (show_size(&r, per_gpu, first, ja, &rows) < 0) {
			capsim_result_free(&r);
			status = CAPSIM_EXIT_FAILURE;
			goto out;
		}
		if (out)
			results_add(&results, &r);
		capsim_result_free(&r);
	}
	if (json) {
		json_object_set_new(jo, "points", ja);
		ja = NULL;
		json_dumpf(jo, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
		fputc('\n', stdout);
	}
	if (out) {
		capsim_table_write_csv(&results, out);
		out = NULL;
		if (capsim_outfile_close(&csv_out, &d) < 0) {
			capsim_diags_print(&d, stderr);
			status = CAPSIM_EXIT_FAILURE;
			goto out;
		}
	}
	status = CAPSIM_EXIT_OK;
	goto out;
fail:
	capsim_diags_print(&d, stderr);
	status = CAPSIM_EXIT_USAGE;
out:
	if (out)
		capsim_outfile_discard(&csv_out);
	json_decref(ja);
	json_decref(jo);
	capsim_table_free(&rows);
	capsim_table_free(&results);
	free(pts);
	free(base);
	capsim_err_model_free(errors);
	capsim_catalog_free(cat);
	capsim_diags_free(&d);
	capsim_cli_sets_free(&a.sets);
	return status;
}
