/* cmd_fit_errors.c - capsim fit errors: the error model (src/err/err.h)
 * fitted on a residuals file, printed with its leave-one-table-out coverage
 * and written atomically. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "cli.h"
#include "err.h"
#include "outfile.h"

enum { O_RESIDUALS, O_OUT, O_FORCE, O_JSON, O_HELP };
static const capsim_cli_opt fit_errors_opts[] = {
	[O_RESIDUALS] = { "residuals", 0, "FILE",
			  "the residuals of capsim's validation (hardware/errors/residuals.csv)" },
	[O_OUT] = { "out", 0, "FILE", "the model to write (hardware/errors/model.json)" },
	[O_FORCE] = { "force", 0, NULL, "replace FILE if it exists" },
	[O_JSON] = { "json", 0, NULL, "one JSON object (the files, the groups and rows fitted, "
				      "each family's\ncoverage) instead of the report" },
	[O_HELP] = { "help", 0, NULL, "this text" },
};
const capsim_cli_cmd capsim_cli_fit_errors_cmd = {
	.name = "fit errors",
	.usage = "usage: capsim fit errors --residuals FILE.csv --out FILE.json [--force] "
		 "[--json]\n",
	.about = "Fits capsim's error model on the residuals of its own validation tables:\n"
		 "per quantity and group of features (GPU generation, stack, host-bound,\n"
		 "profile, scale, dropped in turn from the last) split-conformal 80% and 95%\n"
		 "bands on ln(measured / predicted), and the quantiles of the difference of\n"
		 "two rows of one table. Prints each group with its rows, median and bands,\n"
		 "and the coverage of each family when each table is left out of the fit,\n"
		 "then writes FILE.json atomically (docs/model.md, \"Error bands\").\n",
	.opts = fit_errors_opts,
	.n_opts = CAPSIM_CLI_N(fit_errors_opts),
	.after = "Exit status: 0 written; 1 the file could not be written or the residuals\n"
		 "read; 2 bad usage or a bad residuals file (its line and field named).\n",
};

typedef struct fit_errors_args {
	const char *residuals, *out;
	int force, json;
} fit_errors_args;

/* 0, CAPSIM_EXIT_OK after --help (*done set), or CAPSIM_EXIT_USAGE */
static int parse_args(int argc, char **argv, fit_errors_args *a, int *done)
{
	optind = 1;
	int c;
	while ((c = capsim_cli_next(&capsim_cli_fit_errors_cmd, argc, argv)) != -1) {
		switch (c) {
		case O_RESIDUALS: a->residuals = optarg; break;
		case O_OUT: a->out = optarg; break;
		case O_FORCE: a->force = 1; break;
		case O_JSON: a->json = 1; break;
		case O_HELP:
			capsim_cli_help(&capsim_cli_fit_errors_cmd, stdout);
			*done = 1;
			return CAPSIM_EXIT_OK;
		default: return CAPSIM_EXIT_USAGE;
		}
	}
	if (!a->residuals || !a->out || optind < argc) {
		fprintf(stderr, "capsim fit errors: %s\n",
			!a->residuals ? "--residuals is required" :
			!a->out ? "--out is required" : "unexpected argument");
		capsim_cli_help(&capsim_cli_fit_errors_cmd, stderr);
		return CAPSIM_EXIT_USAGE;
	}
	struct stat st;
	if (!a->force && strcmp(a->out, "-") != 0 && stat(a->out, &st) == 0) {
		fprintf(stderr, "capsim fit errors: %s exists; give --force to replace it\n",
			a->out);
		return CAPSIM_EXIT_USAGE;
	}
	return 0;
}

/* "0.912-1.104", or "none (n < 9)" */
static void band_text(const capsim_err_group *g, int l, char *buf, size_t n)
{
	if (g->has[l])
		snprintf(buf, n, "%.3f-%.3f", g->lo[l], g->hi[l]);
	else
		snprintf(buf, n, "none (n < %zu)", capsim_err_min_n[l]);
}

/* the groups with rows enough for an 80% band, most specific first */
static void print_groups(const capsim_err_model *m, FILE *out)
{
	fprintf(out, "%-10s %-58s %4s %9s %-16s %-16s %6s %9s\n", "quantity",
		"group (gen / stack / host / profile / scale)", "n", "median r", "80% band",
		"95% band", "pairs", "pair 80%");
	for (size_t i = 0; i < m->n; i++) {
		const capsim_err_group *g = &m->g[i];
		if (!g->has[CAPSIM_ERR_80])
			continue;
		char key[6 * CAPSIM_ERR_TEXT], b80[32], b95[32], p80[24];
		snprintf(key, sizeof key, "%s / %s / %s / %s / %s", g->key[0], g->key[1],
			 g->key[2], g->key[3], g->key[4]);
		band_text(g, CAPSIM_ERR_80, b80, sizeof b80);
		band_text(g, CAPSIM_ERR_95, b95, sizeof b95);
		if (g->pair_has[CAPSIM_ERR_80])
			snprintf(p80, sizeof p80, "+/-%.1f%%", 100 * g->pair_q[CAPSIM_ERR_80]);
		else
			snprintf(p80, sizeof p80, "-");
		fprintf(out, "%-10s %-58s %4zu %+9.4f %-16s %-16s %6zu %9s\n",
			capsim_err_quantity_names[g->quantity], key, g->n, g->median_r, b80, b95,
			g->n_pairs, p80);
	}
	for (int q = 0; q < CAPSIM_ERR__QUANTITIES; q++) {
		int any = 0;
		for (size_t i = 0; i < m->n; i++)
			any |= m->g[i].quantity == (capsim_err_quantity)q && m->g[i].has[CAPSIM_ERR_80];
		if (!any)
			fprintf(out, "%-10s no group has the %zu rows an 80%% band needs\n",
				capsim_err_quantity_names[q], capsim_err_min_n[CAPSIM_ERR_80]);
	}
}

static void print_coverage(const capsim_err_model *m, FILE *out)
{
	fprintf(out, "\nleave-one-table-out coverage (each table's rows banded by the model "
		     "fitted without them):\n%-20s %5s %8s %8s %8s %8s %8s %8s %8s\n", "family",
		"rows", "banded", "in 80%", "share", "width", "banded", "in 95%", "share");
	for (size_t i = 0; i < m->n_cover; i++) {
		const capsim_err_cover *c = &m->cover[i];
		char s80[16] = "-", w80[16] = "-", s95[16] = "-";
		if (c->banded[0]) {
			snprintf(s80, sizeof s80, "%.1f%%", 100.0 * c->inside[0] / c->banded[0]);
			snprintf(w80, sizeof w80, "%.1f%%", 100.0 * c->width[0]);
		}
		if (c->banded[1])
			snprintf(s95, sizeof s95, "%.1f%%", 100.0 * c->inside[1] / c->banded[1]);
		fprintf(out, "%-20s %5zu %8zu %8zu %8s %8s %8zu %8zu %8s\n", c->family, c->rows,
			c->banded[0], c->inside[0], s80, w80, c->banded[1], c->inside[1], s95);
	}
}

/* the --json object: the files, what was fitted and each family's coverage */
static json_t *summary_json(const capsim_err_model *m, const fit_errors_args *a, int written)
{
	json_t *cover = json_array();
	for (size_t i = 0; i < m->n_cover; i++) {
		const capsim_err_cover *c = &m->cover[i];
		json_array_append_new(cover, json_pack(
			"{s:s, s:I, s:I, s:I, s:f, s:I, s:I, s:f}", "family", c->family, "rows",
			(json_int_t)c->rows, "banded80", (json_int_t)c->banded[0], "inside80",
			(json_int_t)c->inside[0], "width80", c->width[0], "banded95",
			(json_int_t)c->banded[1], "inside95", (json_int_t)c->inside[1], "width95",
			c->width[1]));
	}
	return json_pack("{s:s, s:s, s:b, s:I, s:I, s:I, s:o}", "residuals", a->residuals, "out",
			 a->out, "written", written, "rows", (json_int_t)m->rows, "in_sample",
			 (json_int_t)m->in_sample, "groups", (json_int_t)m->n, "coverage", cover);
}

/* the model written to path through a temporary; 0 or -1 after d */
static int write_model(const capsim_err_model *m, const char *path, capsim_diags *d)
{
	capsim_outfile o;
	if (capsim_outfile_open(&o, path, d) < 0)
		return -1;
	if (capsim_err_model_write(m, o.f) < 0) {
		capsim_diags_add_runtime(d, path, "cannot write the model");
		capsim_outfile_discard(&o);
		return -1;
	}
	return capsim_outfile_close(&o, d);
}

int capsim_cmd_fit_errors(int argc, char **argv)
{
	fit_errors_args a = { 0 };
	int done = 0, status = parse_args(argc, argv, &a, &done);
	if (status || done)
		return status;
	capsim_diags d = { 0 };
	capsim_err_rows rows;
	capsim_err_model *m = NULL;
	if (capsim_err_rows_load(a.residuals, &rows, &d) < 0) {
		status = capsim_diags_runtime(&d) ? CAPSIM_EXIT_FAILURE : CAPSIM_EXIT_USAGE;
	} else {
		m = capsim_err_fit(&rows);
		if (!a.json) {
			printf("error model: %zu rows of %s, %zu in-sample (kept, not fitted on), "
			       "%zu groups\n\n", m->rows, a.residuals, m->in_sample, m->n);
			print_groups(m, stdout);
			print_coverage(m, stdout);
		}
		status = write_model(m, a.out, &d) < 0 ? CAPSIM_EXIT_FAILURE : CAPSIM_EXIT_OK;
		if (a.json) {
			json_t *o = summary_json(m, &a, status == CAPSIM_EXIT_OK);
			json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
			fputc('\n', stdout);
			json_decref(o);
		} else if (status == CAPSIM_EXIT_OK) {
			printf("\nwrote %s\n", a.out);
		}
		capsim_err_rows_free(&rows);
	}
	capsim_diags_print(&d, stderr);
	capsim_diags_free(&d);
	capsim_err_model_free(m);
	return status;
}
