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

static void help(FILE *out)
{
	fprintf(out,
		"usage: capsim scale SCENARIO --gpus N,N,... [--weak | --strong]\n"
		"                    [--csv FILE] [--json] [--progress] [--set PATH=VALUE]...\n"
		"\n"
		"Run the scenario's job at each GPU count: TP, PP and CP stay, data\n"
		"parallelism grows. --weak (default) grows the global batch with it (the\n"
		"micro-batches per replica stay); --strong keeps the global batch, so each\n"
		"replica gets fewer micro-batches. Every size is checked before the first\n"
		"is run. Prints step time, tokens/s and scaling efficiency (as capsim run:\n"
		"tokens/s per GPU against one replica on its own nodes) and, with --strong,\n"
		"the speed-up per GPU against the first size. --csv FILE (- for stdout) writes every\n"
		"result key of each size (the columns of capsim run's result table);\n"
		"--json prints one object with a \"points\" array instead of the table.\n"
		"Progress (each size as it starts and ends, with its time) goes to stderr\n"
		"when stderr is a terminal, and always with --progress.\n");
}

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
enum { COL_GPUS, COL_NODES, COL_DP, COL_BATCH, COL_STEP, COL_TOKENS, COL_PER_GPU, COL_MFU,
       COL_SCALING, COL_SPEEDUP, COL_NOTE, N_COLS };
static const capsim_table_col size_cols[N_COLS] = {
	[COL_GPUS] = { .name = "GPUs", .kind = CAPSIM_TABLE_INT, .width = 8 },
	[COL_NODES] = { .name = "nodes", .kind = CAPSIM_TABLE_INT, .width = 6, .gap = 1 },
	[COL_DP] = { .name = "dp", .kind = CAPSIM_TABLE_INT, .width = 6, .gap = 1 },
	[COL_BATCH] = { .name = "batch", .kind = CAPSIM_TABLE_REAL, .precision = 0, .width = 10,
			.gap = 1, .flags = CAPSIM_TABLE_FIXED },
	[COL_STEP] = { .name = "step", .unit = "s", .kind = CAPSIM_TABLE_REAL, .precision = 4,
		       .width = 12, .gap = 1, .flags = CAPSIM_TABLE_FIXED },
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

/* the sizes' table; without strong, no speed-up column */
static void sizes_init(capsim_table *t, int strong)
{
	capsim_table_col cols[N_COLS];
	memcpy(cols, size_cols, sizeof cols);
	if (!strong)
		cols[COL_SPEEDUP].flags |= CAPSIM_TABLE_NO_TEXT;
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
	capsim_table_set_num(t, i, COL_TOKENS, r->step.tokens_per_s);
	capsim_table_set_num(t, i, COL_PER_GPU, per_gpu);
	capsim_table_set_num(t, i, COL_MFU, r->mfu);
	if (r->has_scaling)
		capsim_table_set_num(t, i, COL_SCALING, r->scaling_efficiency);
	capsim_table_set_num(t, i, COL_SPEEDUP, per_gpu / first);
	capsim_table_set_text(t, i, COL_NOTE, r->fits_in_memory ? "" : "(does not fit)");
	return i;
}

/* The CSV's table: every result key that is not structured, as
 * capsim_result_keys lists them (the columns of capsim run's result
 * table), reals to 10 significant digits. */
static void results_init(capsim_table *t)
{
	capsim_table_col *cols = capsim_xcalloc(capsim_result_n_keys, sizeof *cols);
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
	}
	capsim_table_init(t, cols, n);
	free(cols);
}

/* r's keys as a row of the CSV's table; those r lacks absent */
static void results_add(capsim_table *t, const capsim_result *r)
{
	size_t row = capsim_table_add_row(t);
	for (size_t c = 0; c < t->n_cols; c++) {
		const capsim_result_key *k = capsim_result_key_find(t->cols[c].name);
		if (!capsim_result_has(r, k))
			continue;
		if (k->kind == CAPSIM_RK_TEXT)
			capsim_table_set_text(t, row, c, capsim_result_string(r, k->key));
		else
			capsim_table_set_num(t, row, c, capsim_result_number(r, k));
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

int capsim_cmd_scale(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "gpus", required_argument, NULL, 'g' },
		{ "weak", no_argument, NULL, 'w' },
		{ "strong", no_argument, NULL, 'S' },
		{ "csv", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "progress", no_argument, NULL, 'P' },
		{ "set", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	long sizes[64];
	int n_sizes = 0, strong = 0, json = 0, show = 0, ch, status = CAPSIM_EXIT_USAGE;
	const char *csv = NULL;
	capsim_cli_sets sets = { 0 };
	capsim_diags d = { 0 };
	capsim_catalog *cat = NULL;
	capsim_scenario *base = NULL, *pts = NULL;
	capsim_outfile csv_out;
	FILE *out = NULL;
	json_t *jo = NULL, *ja = NULL;
	capsim_table rows = { 0 }, results = { 0 };

	optind = 1;
	while ((ch = getopt_long(argc, argv, "g:wSc:js:h", lo, NULL)) != -1) {
		switch (ch) {
		case 'g':
			n_sizes = parse_list(optarg, sizes, 64);
			if (n_sizes <= 0) {
				fprintf(stderr, "capsim scale: --gpus wants N,N,... (at most 64 "
					"positive counts, no empty item), found '%s'\n", optarg);
				goto out;
			}
			break;
		case 'w': strong = 0; break;
		case 'S': strong = 1; break;
		case 'c': csv = optarg; break;
		case 'j': json = 1; break;
		case 'P': show = 1; break;
		case 's':
			if (capsim_cli_sets_add(&sets, optarg, &d) < 0)
				goto fail;
			break;
		case 'h': help(stdout); status = CAPSIM_EXIT_OK; goto out;
		default: help(stderr); goto out;
		}
	}
	if (optind + 1 != argc || n_sizes == 0) {
		fprintf(stderr, "capsim scale: SCENARIO and --gpus are required\n");
		help(stderr);
		goto out;
	}
	capsim_init();
	if (capsim_cli_load(argv[optind], &sets, &cat, &base, &d) < 0)
		goto fail;
	/* every size checked before the first runs */
	pts = capsim_xcalloc((size_t)n_sizes, sizeof *pts);
	for (int i = 0; i < n_sizes; i++)
		size_point(base, cat, sizes[i], strong, &pts[i], &d);
	if (d.n)
		goto fail;
	if (csv) {
		if (capsim_outfile_open(&csv_out, csv, &d) < 0) {
			capsim_diags_print(&d, stderr);
			status = CAPSIM_EXIT_FAILURE;
			goto out;
		}
		out = csv_out.f;
		results_init(&results);
	}
	if (json) {
		jo = capsim_cli_json_head(cat, base);
		json_object_set_new(jo, "mode", json_string(strong ? "strong" : "weak"));
		ja = json_array();
	} else {
		printf("# %s, %s scaling: tp %d, pp %d, cp %d fixed\n", base->name,
		       strong ? "strong" : "weak", base->tp, base->pp, base->cp);
		sizes_init(&rows, strong);
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
		if (capsim_eval(&pts[i], NULL, &r, &d) < 0) { /* no I/O: the input is refused */
			capsim_progress_end(&pr);
			capsim_diags_print(&d, stderr);
			goto out;
		}
		size_done(&pr, show, i, n_sizes, r.gpus, started);
		double batch_tokens = r.global_batch * pts[i].seq_len;
		if (batch_tokens > CAPSIM_BATCH_TOKENS_WARN)
			fprintf(stderr, "capsim scale: warning: at %ld GPUs the global batch is %.3g tokens "
				"a step (%.0f x %d), far beyond what models are trained with (above "
				"%.3g: docs/model.md, \"Global batch\"); --strong keeps the batch\n",
				r.gpus, batch_tokens, r.global_batch, pts[i].seq_len,
				CAPSIM_BATCH_TOKENS_WARN);
		double per_gpu = r.step.tokens_per_s / (double)r.gpus;
		if (i == 0)
			first = per_gpu;
		if (json) {
			json_t *p = json_object();
			capsim_result_json(&r, p);
			json_array_append_new(ja, p);
		} else {
			capsim_table_write_line(&rows, (long)sizes_add(&rows, &r, per_gpu, first),
						stdout);
			if (flush_rows() < 0) {
				capsim_result_free(&r);
				status = CAPSIM_EXIT_FAILURE;
				goto out;
			}
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
	capsim_catalog_free(cat);
	capsim_diags_free(&d);
	capsim_cli_sets_free(&sets);
	return status;
}
