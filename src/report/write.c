/* write.c - a procurement report written out: figures by gnuplot, then
 * report.md, report.html (figures inline) and summary.csv; see report.h. */
#define _GNU_SOURCE /* posix_spawn_file_actions_addchdir_np (glibc 2.29) */
#include "report.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "bom.h"
#include "child.h"
#include "escape.h"
#include "outfile.h"
#include "units.h"
#include "xalloc.h"

extern char **environ;

/* ---- formatting for people ----------------------------------------------------------- */

void capsim_report_format(double v, const char *unit, char *buf, size_t n)
{
	if (strcmp(unit, "s") == 0)
		snprintf(buf, n, "%.1f days", v / 86400.0);
	else if (strcmp(unit, "USD") == 0)
		snprintf(buf, n, fabs(v) >= 1e6 ? "$%.3fM" : fabs(v) >= 1e3 ? "$%.1fk" : "$%.3g",
			 fabs(v) >= 1e6 ? v / 1e6 : fabs(v) >= 1e3 ? v / 1e3 : v);
	else if (strcmp(unit, "W") == 0)
		snprintf(buf, n, v >= 1e6 ? "%.2f MW" : "%.1f kW", v >= 1e6 ? v / 1e6 : v / 1e3);
	else if (strcmp(unit, "1") == 0)
		snprintf(buf, n, "%.1f%%", 100.0 * v);
	else if (strcmp(unit, "bytes") == 0)
		snprintf(buf, n, "%.1f GiB", v / 1073741824.0);
	else if ((v == floor(v) || fabs(v) >= 1e4) && fabs(v) < 1e15)
		snprintf(buf, n, "%.0f", v);
	else
		snprintf(buf, n, "%.4g", v);
}

/* the rule's metric for people, in its unit */
static void metric_text(int metric, double v, char *buf, size_t n)
{
	capsim_report_format(v, metric == CAPSIM_RULE_TIME_TO_TRAIN ? "s" : "USD", buf, n);
}

/* an input of the sensitivity table for people: utilisation as a share,
 * energy a kWh, a cloud rate a GPU-hour */
static void knob_text(const char *path, double v, char *buf, size_t n)
{
	if (strcmp(path, "cost.utilization") == 0)
		snprintf(buf, n, "%.0f%%", 100.0 * v);
	else if (strcmp(path, "facility.energy.price") == 0)
		snprintf(buf, n, "$%.4f/kWh", v * 3.6e6);
	else if (strcmp(path, "cost.cloud.rate.value") == 0)
		snprintf(buf, n, "$%.3f/GPU-h", v * 3600.0);
	else
		capsim_report_format(v, "USD", buf, n);
}

/* column c of design i for people; "-" where absent */
static void cell_text(const capsim_report *rep, size_t i, size_t c, char *buf, size_t n)
{
	double v;
	const char *t;
	if (!capsim_report_cell(rep, i, c, &v, &t))
		snprintf(buf, n, "-");
	else if (t)
		snprintf(buf, n, "%s", t);
	else
		capsim_report_format(v, capsim_report_columns[c].unit, buf, n);
}

/* ---- the document model: blocks written to both Markdown and HTML --------------------- */

typedef struct {
	FILE *md, *html;
} out2;

static void heading(out2 *o, int level, const char *text)
{
	fprintf(o->md, "\n%.*s ", level, "####");
	capsim_md_escape(o->md, text);
	fputs("\n\n", o->md);
	fprintf(o->html, "<h%d>", level);
	capsim_xml_escape(o->html, text);
	fprintf(o->html, "</h%d>\n", level);
}

static void para(out2 *o, const char *text)
{
	capsim_md_escape(o->md, text);
	fputs("\n\n", o->md);
	fputs("<p>", o->html);
	capsim_xml_escape(o->html, text);
	fputs("</p>\n", o->html);
}

/* a cell that reads as a number ("$1.2M", "48.5 days", "-3"): right-aligned */
static int numeric(const char *s)
{
	if (*s == '$' || *s == '-' || *s == '+')
		s++;
	return *s >= '0' && *s <= '9';
}

/* a table: n_cols headings, then rows of cells (row-major) */
static void table(out2 *o, const char *const *head, size_t n_cols, char **cells, size_t n_rows)
{
	fputc('|', o->md);
	for (size_t c = 0; c < n_cols; c++) {
		fputc(' ', o->md);
		capsim_md_escape(o->md, head[c]);
		fputs(" |", o->md);
	}
	fputs("\n|", o->md);
	for (size_t c = 0; c < n_cols; c++)
		fputs(c ? "---:|" : "---|", o->md);
	fputc('\n', o->md);
	fputs("<table>\n<thead><tr>", o->html);
	for (size_t c = 0; c < n_cols; c++) {
		fputs("<th>", o->html);
		capsim_xml_escape(o->html, head[c]);
		fputs("</th>", o->html);
	}
	fputs("</tr></thead>\n<tbody>\n", o->html);
	for (size_t r = 0; r < n_rows; r++) {
		fputc('|', o->md);
		fputs("<tr>", o->html);
		for (size_t c = 0; c < n_cols; c++) {
			const char *s = cells[r * n_cols + c];
			fputc(' ', o->md);
			capsim_md_escape(o->md, s);
			fputs(" |", o->md);
			fputs(c && numeric(s) ? "<td class=\"n\">" : "<td>", o->html);
			capsim_xml_escape(o->html, s);
			fputs("</td>", o->html);
		}
		fputc('\n', o->md);
		fputs("</tr>\n", o->html);
	}
	fputs("\n", o->md);
	fputs("</tbody>\n</table>\n", o->html);
}

/* ---- figures ------------------------------------------------------------------------------ */

typedef struct {
	const char *name, *title;
} figure;

static const figure figures[] = {
	{ "scaling", "Scaling efficiency against GPUs (weak scaling: the global batch with the nodes)" },
	{ "breakdown", "Step time by part" },
	{ "cost", "Cumulative cost: owning against renting the same busy hours" },
	{ "power", "Heat per rack at the step's load, against the rack's circuits" },
	{ "tornado", "Sensitivity of the winner's metric to +-20% in each input" },
	{ "goodput", "Goodput against the checkpoint interval" },
};
#define N_FIGURES (sizeof figures / sizeof figures[0])

/* a file of the report's own directory: never followed, replaced whole */
static int write_file(const char *path, const char *text, capsim_diags *d)
{
	capsim_outfile of;
	if (capsim_outfile_open_own(&of, path, d) < 0)
		return -1;
	fputs(text, of.f);
	return capsim_outfile_close(&of, d);
}

/* a data file's text from a memory stream */
typedef struct {
	char *buf;
	size_t len;
	FILE *f;
} mem;

static FILE *mem_open(mem *m)
{
	m->buf = NULL;
	m->len = 0;
	m->f = open_memstream(&m->buf, &m->len);
	if (!m->f) {
		fprintf(stderr, "capsim: out of memory\n");
		abort();
	}
	return m->f;
}

static void mem_close(mem *m)
{
	fclose(m->f);
}

/* Every text that reaches a script is a gnuplot string literal
 * (capsim_gnuplot_string: single quotes, no substitution of any kind) and
 * every text in a data file one quoted field (capsim_gnuplot_datum): a name
 * read from a scenario or a store is data, never a command.
 *
 * Every figure is read by people who buy clusters: axes in their units
 * ("$1.2 M", "80%", "12 kW", "3 s", "GPUs" as whole numbers, never 1e+06),
 * every series of a chart in its own colour of one colour-blind-safe palette
 * (Okabe and Ito's eight, then grey and Paul Tol's wine: capsim_report_palette)
 * and its own point shape, and two series that coincide drawn both (the later
 * dashed) and said to coincide, in the key and under the figure. */
const char *const capsim_report_palette[CAPSIM_REPORT_COLOURS] = {
	"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#56B4E9",
	"#E69F00", "#000000", "#F0E442", "#999999", "#882255",
};

/* a point shape for each colour: filled and open circles, squares, triangles */
static const int palette_points[CAPSIM_REPORT_COLOURS] = { 7, 5, 9, 11, 13, 6, 4, 8, 10, 12 };

static void gp_head(FILE *f, const char *name, const char *title)
{
	fprintf(f, "# written by capsim report: gnuplot %s.gp (in this directory)\n"
		   "set encoding utf8\nset key below center horizontal height 1\nset grid\n"
		   "set title ", name);
	capsim_gnuplot_string(f, title);
	fputc('\n', f);
	for (int k = 0; k < CAPSIM_REPORT_COLOURS; k++)
		fprintf(f, "set linetype %d lc rgb '%s' lw 2 pt %d ps 1.2\n", k + 1,
			capsim_report_palette[k], palette_points[k]);
	fprintf(f, "set linetype cycle %d\n", CAPSIM_REPORT_COLOURS);
}

/* a figure with nothing to show still draws: a NaN alone has no range for
 * gnuplot to take ("all points y value undefined") */
static const char *const empty_plot = "unset logscale\nset xrange [0:1]\nset yrange [0:1]\n"
				      "unset xtics\nunset ytics\nplot ";

/* "plot" and the curves gathered in c, or where there are none an empty
 * figure that says why (none); c is closed and freed */
static void plot_curves(FILE *p, mem *c, int any, const char *none)
{
	mem_close(c);
	if (any)
		fprintf(p, "plot %s\n", c->buf);
	else
		fprintf(p, "%sNaN title '%s'\n", empty_plot, none);
	free(c->buf);
}

/* the script's two outputs, SVG for the HTML and PNG beside it */
static void gp_outputs(FILE *f, const char *name, const char *plot)
{
	fprintf(f, "set terminal svg size 860,440 dynamic noenhanced font 'Helvetica,12'\n"
		   "set output '%s.svg'\n%s\n"
		   "set terminal pngcairo size 860,440 noenhanced font 'Helvetica,10'\n"
		   "set output '%s.png'\n%s\nset output\n", name, plot, name, plot);
}

/* ---- the line charts' series, and which of them coincide ---- */

enum { FIG_SCALING, FIG_BREAKDOWN, FIG_COST, FIG_POWER, FIG_TORNADO, FIG_GOODPUT };

/* the most points a series has: a month of the horizon each (at most 50 years) */
#define SERIES_MAX 601

/* owned (capex less resale plus opex so far: docs/model.md's D(t), whose
 * crossing with renting is breakeven_months) and rented (the same busy
 * GPU-hours at the cloud offer's rate) at month m, USD; NAN where none */
static void cost_at(const capsim_report_design *x, int m, double *own, double *rent)
{
	const capsim_scenario *s = x->s;
	double gpus = capsim_result_get(&x->r, "gpus", 0.0);
	double rate = isfinite(capsim_result_get(&x->r, "cloud_cost_usd", NAN)) ?
			      s->cloud.rate_usd_per_gpu_s : 0.0;
	double capex = capsim_result_rented(&x->r) ? NAN :
						       capsim_result_get(&x->r, "capex_usd", NAN);
	double opex = capsim_result_get(&x->r, "opex_per_year_usd", NAN);
	double resell = capsim_result_get(&x->r, "capex_nodes_usd", NAN) +
			capsim_result_get(&x->r, "capex_switches_usd", NAN);
	double t = m * (365.25 * 86400.0 / 12.0);
	double resale = resell * s->resale * pow(1.0 - s->resale_decline, t / (365.25 * 86400.0));
	*own = capex - resale + opex * t / (365.25 * 86400.0);
	*rent = rate > 0 ? rate * gpus * s->utilization * t : NAN;
}

/* months of design x's horizon, whole, capped to the series' room */
static int cost_months(const capsim_report_design *x)
{
	int m = (int)ceil(x->s->horizon_s / (365.25 * 86400.0 / 12.0));
	return m < 0 ? 0 : m > SERIES_MAX - 1 ? SERIES_MAX - 1 : m;
}

/* the series a line chart has: a design each (scaling, goodput), or two a
 * design (cost: owned, rented); 0 for a bar chart */
static size_t n_series(const capsim_report *rep, size_t f)
{
	return f == FIG_COST ? 2 * rep->n : f == FIG_SCALING || f == FIG_GOODPUT ? rep->n : 0;
}

/* series s of figure f as (x, y) pairs into xy; returns the pairs (0: the
 * series is not drawn) */
static size_t series_points(const capsim_report *rep, size_t f, size_t s, double *xy)
{
	size_t n = 0;
	if (f == FIG_SCALING) {
		const capsim_report_design *x = &rep->d[s];
		for (int k = 0; k < x->n_scale; k++)
			if (isfinite(x->scale_eff[k])) {
				xy[2 * n] = (double)x->scale_gpus[k];
				xy[2 * n++ + 1] = x->scale_eff[k];
			}
	} else if (f == FIG_GOODPUT) {
		const capsim_report_design *x = &rep->d[s];
		for (int k = 0; k < x->n_ckpt; k++) {
			xy[2 * n] = x->ckpt_s[k];
			xy[2 * n++ + 1] = x->ckpt_goodput[k];
		}
	} else if (f == FIG_COST) {
		const capsim_report_design *x = &rep->d[s / 2];
		for (int m = 0; m <= cost_months(x); m++) {
			double own, rent;
			cost_at(x, m, &own, &rent);
			double v = s % 2 ? rent : own;
			if (!isfinite(v))
				return 0;
			xy[2 * n] = m;
			xy[2 * n++ + 1] = v;
		}
	}
	return n;
}

/* series s of figure f in words: the design's label, and for cost what it is */
static void series_label(const capsim_report *rep, size_t f, size_t s, char *buf, size_t n)
{
	if (f == FIG_COST)
		snprintf(buf, n, "%s %s", rep->d[s / 2].label, s % 2 ? "rented" : "owned");
	else
		snprintf(buf, n, "%s", rep->d[s].label);
}

/* The first series before s that series s coincides with on the chart: the
 * same x and, at every point, y within 1% of the larger of the two series'
 * largest |y| (lines that close lie on each other at the figure's size), or
 * -1. A chart draws such a series dashed over the other and says so. */
static long coincides_with(const capsim_report *rep, size_t f, size_t s)
{
	double a[2 * SERIES_MAX], b[2 * SERIES_MAX];
	size_t na = series_points(rep, f, s, a);
	if (na == 0)
		return -1;
	for (size_t t = 0; t < s; t++) {
		size_t nb = series_points(rep, f, t, b);
		int same = nb == na;
		double top = 0;
		for (size_t k = 0; same && k < na; k++)
			top = fmax(top, fmax(fabs(a[2 * k + 1]), fabs(b[2 * k + 1])));
		for (size_t k = 0; same && k < na; k++)
			same = fabs(a[2 * k] - b[2 * k]) <=
				       1e-9 * fmax(fabs(a[2 * k]), fabs(b[2 * k])) &&
			       fabs(a[2 * k + 1] - b[2 * k + 1]) <= 0.01 * top;
		if (same)
			return (long)t;
	}
	return -1;
}

/* The sentence under figure f naming the series that coincide ("In this
 * figure A and B coincide: ..."), or "" when none do. */
static void coincide_caption(const capsim_report *rep, size_t f, char *buf, size_t n)
{
	buf[0] = '\0';
	size_t at = 0;
	for (size_t s = 0; s < n_series(rep, f) && at < n; s++) {
		long t = coincides_with(rep, f, s);
		if (t < 0)
			continue;
		char a[CAPSIM_ID_LEN + 16], b[CAPSIM_ID_LEN + 16];
		series_label(rep, f, s, a, sizeof a);
		series_label(rep, f, (size_t)t, b, sizeof b);
		at += (size_t)snprintf(buf + at, n - at, "%s%s and %s coincide", at ? "; " : "",
				       b, a);
	}
	if (at && at < n)
		snprintf(buf + at, n - at, " (within 1%% of the larger value at every point): their "
			 "lines lie on each other, the second drawn dashed over the first.");
}

/* the curve of series s (data file name, index i, using u) in c: its colour
 * and shape the series' own, dashed where it coincides with an earlier one,
 * whose name the key then gives */
static void curve(FILE *c, const capsim_report *rep, size_t f, size_t s, const char *dat,
		  size_t index, const char *using, int *any)
{
	long t = coincides_with(rep, f, s);
	char label[2 * CAPSIM_ID_LEN + 48], other[CAPSIM_ID_LEN + 16];
	series_label(rep, f, s, label, sizeof label);
	if (t >= 0) {
		series_label(rep, f, (size_t)t, other, sizeof other);
		size_t l = strlen(label);
		snprintf(label + l, sizeof label - l, " (coincides with %s)", other);
	}
	/* a point every sixth month of a cost curve, every point of the others */
	fprintf(c, "%s'%s' index %zu using %s with linespoints lt %zu pi %d%s title ",
		(*any)++ ? ", " : "", dat, index, using, s % CAPSIM_REPORT_COLOURS + 1,
		f == FIG_COST ? 6 : 1, t >= 0 ? " dt 2" : "");
	capsim_gnuplot_string(c, label);
}

/* ---- the figures ---- */

static void fig_scaling(const capsim_report *rep, FILE *dat, FILE *gp)
{
	mem plot, curves;
	FILE *p = mem_open(&plot), *c = mem_open(&curves);
	fprintf(p, "set logscale x 2\nset xlabel 'GPUs'\nset format x '%%.0f'\n"
		   "set ylabel 'scaling efficiency'\nset format y '%%.0f%%%%'\n"
		   "set yrange [0:110]\n");
	int any = 0;
	for (size_t i = 0; i < rep->n; i++) {
		const capsim_report_design *x = &rep->d[i];
		fputs("# ", dat);
		capsim_gnuplot_datum(dat, x->label);
		fputs(": GPUs, scaling efficiency\n", dat);
		for (int k = 0; k < x->n_scale; k++)
			if (isfinite(x->scale_eff[k]))
				fprintf(dat, "%ld %.10g\n", x->scale_gpus[k], x->scale_eff[k]);
		fprintf(dat, "\n\n");
		curve(c, rep, FIG_SCALING, i, "scaling.dat", i, "1:($2*100)", &any);
	}
	plot_curves(p, &curves, any, "no design");
	mem_close(&plot);
	gp_outputs(gp, "scaling", plot.buf);
	free(plot.buf);
}

static const char *const parts[] = { "compute_s", "bubble_s", "exposed_comm_tp_s",
				     "exposed_comm_cp_s", "exposed_comm_pp_s", "exposed_comm_dp_s",
				     "exposed_comm_ep_s", "optimizer_s", "host_s", "data_stall_s" };
#define N_PARTS (sizeof parts / sizeof parts[0])

/* whether part k of the step takes time in any design (the others are left
 * out of the chart, so that its key lists only what is drawn) */
static int part_drawn(const capsim_report *rep, size_t k)
{
	for (size_t i = 0; i < rep->n; i++)
		if (capsim_result_get(&rep->d[i].r, parts[k], 0.0) > 0)
			return 1;
	return 0;
}

static void fig_breakdown(const capsim_report *rep, FILE *dat, FILE *gp)
{
	size_t cols = 0;
	fprintf(dat, "design");
	for (size_t k = 0; k < N_PARTS; k++) {
		if (!part_drawn(rep, k))
			continue;
		char label[96];
		capsim_report_key_label(parts[k], label, sizeof label);
		fputc(' ', dat);
		capsim_gnuplot_datum(dat, label);
		cols++;
	}
	fputc('\n', dat);
	for (size_t i = 0; i < rep->n; i++) {
		capsim_gnuplot_datum(dat, rep->d[i].label);
		for (size_t k = 0; k < N_PARTS; k++)
			if (part_drawn(rep, k))
				fprintf(dat, " %.10g",
					capsim_result_get(&rep->d[i].r, parts[k], 0.0));
		fputc('\n', dat);
	}
	mem plot;
	FILE *p = mem_open(&plot);
	fprintf(p, "set style data histograms\nset style histogram rowstacked\n"
		   "set style fill solid 0.85 border -1\nset boxwidth 0.6\n"
		   "set ylabel 'time a step'\nset format y '%%g s'\nset yrange [0:*]\n"
		   "set xtics rotate by -20\n");
	if (cols == 0)
		fprintf(p, "%sNaN title 'no step'\n", empty_plot);
	else
		fprintf(p, "plot for [c=2:%zu] 'breakdown.dat' using c:xtic(1) lt (c-1) "
			   "title columnheader(c)\n", cols + 1);
	mem_close(&plot);
	gp_outputs(gp, "breakdown", plot.buf);
	free(plot.buf);
}

static void fig_cost(const capsim_report *rep, FILE *dat, FILE *gp)
{
	mem plot, curves;
	FILE *p = mem_open(&plot), *c = mem_open(&curves);
	fprintf(p, "set xlabel 'months'\nset format x '%%.0f'\n"
		   "set ylabel 'cumulative cost'\nset format y '$%%.1s %%c'\n");
	int any = 0;
	for (size_t i = 0; i < rep->n; i++) {
		const capsim_report_design *x = &rep->d[i];
		fputs("# ", dat);
		capsim_gnuplot_datum(dat, x->label);
		fputs(": month, owned (capex - resale + opex), rented (busy hours), USD\n", dat);
		for (int m = 0; m <= cost_months(x); m++) {
			double own, rent;
			cost_at(x, m, &own, &rent);
			fprintf(dat, "%d %.10g %.10g\n", m, own, rent);
		}
		fprintf(dat, "\n\n");
		double xy[2 * SERIES_MAX];
		if (series_points(rep, FIG_COST, 2 * i, xy))
			curve(c, rep, FIG_COST, 2 * i, "cost.dat", i, "1:2", &any);
		if (series_points(rep, FIG_COST, 2 * i + 1, xy))
			curve(c, rep, FIG_COST, 2 * i + 1, "cost.dat", i, "1:3", &any);
	}
	plot_curves(p, &curves, any, "no priced design");
	mem_close(&plot);
	gp_outputs(gp, "cost", plot.buf);
	free(plot.buf);
}

static void fig_power(const capsim_report *rep, FILE *dat, FILE *gp)
{
	fprintf(dat, "design rack_heat_kw circuits_kw\n");
	for (size_t i = 0; i < rep->n; i++) {
		const capsim_power *pw = &rep->d[i].r.power;
		capsim_gnuplot_datum(dat, rep->d[i].label);
		fprintf(dat, " %.10g %.10g\n", pw->has_racks ? pw->rack_heat_w / 1e3 : 0.0,
			pw->has_racks ? pw->circuit_w * pw->circuits_per_rack / 1e3 : 0.0);
	}
	mem plot;
	FILE *p = mem_open(&plot);
	fprintf(p, "set style data histograms\nset style histogram clustered gap 1\n"
		   "set style fill solid 0.85 border -1\nset ylabel 'power a rack'\n"
		   "set format y '%%g kW'\nset yrange [0:*]\nset xtics rotate by -20\n"
		   "plot 'power.dat' using 2:xtic(1) lt 1 title 'heat per rack', "
		   "'' using 3 lt 2 title 'circuits per rack (80%% of rating)'\n");
	mem_close(&plot);
	gp_outputs(gp, "power", plot.buf);
	free(plot.buf);
}

/* the tornado's axis: its label with the unit, the format of its tics, and
 * the factor from the metric's SI value to the axis' (days for a time) */
static double tornado_axis(const capsim_report *rep, FILE *p)
{
	char label[128];
	capsim_report_metric_label(rep->rule.metric, label, sizeof label);
	int time = rep->rule.metric == CAPSIM_RULE_TIME_TO_TRAIN;
	size_t l = strlen(label);
	snprintf(label + l, sizeof label - l, time ? " (days)" : " (USD)");
	fputs("set xlabel ", p);
	capsim_gnuplot_string(p, label);
	fprintf(p, "\nset format x '%s'\n", time ? "%g days" : "$%.1s %c");
	return time ? 1.0 / 86400.0 : 1.0;
}

static void fig_tornado(const capsim_report *rep, FILE *dat, FILE *gp)
{
	double base = rep->winner >= 0 ? rep->d[rep->winner].metric : NAN;
	mem plot;
	FILE *p = mem_open(&plot);
	double scale = 1.0;
	int rows = 0;
	for (int k = 0; k < CAPSIM_REPORT_KNOBS; k++)
		rows += rep->swing[k].has;
	if (rows == 0 || !isfinite(base)) {
		fputs(empty_plot, p);
		fputs("NaN title 'no winner to move'\n", p);
	} else {
		scale = tornado_axis(rep, p);
		fprintf(p, "set style fill solid 0.7 border -1\n"
			   "set yrange [-0.7:%d-0.3]\nset ytics nomirror\n"
			   "set arrow from %.10g, graph 0 to %.10g, graph 1 nohead dt 2\n"
			   "plot 'tornado.dat' using (($3+$4)/2):1:(($3<$4?$3:$4)):(($3>$4?$3:$4)):"
			   "($1-0.3):($1+0.3):ytic(2) with boxxyerror lt 1 title '-20%% .. +20%%'\n",
			rows, base * scale, base * scale);
	}
	char label[96];
	capsim_report_metric_label(rep->rule.metric, label, sizeof label);
	fprintf(dat, "# input, low, high (the winner's %s, in %s); base %.10g\n", label,
		scale == 1.0 ? "USD" : "days", base * scale);
	for (int k = 0, row = 0; k < CAPSIM_REPORT_KNOBS; k++) {
		const capsim_report_swing *w = &rep->swing[k];
		if (!w->has)
			continue;
		fprintf(dat, "%d ", row++);
		capsim_gnuplot_datum(dat, w->what);
		fprintf(dat, " %.10g %.10g\n", w->low_metric * scale, w->high_metric * scale);
	}
	mem_close(&plot);
	gp_outputs(gp, "tornado", plot.buf);
	free(plot.buf);
}

static void fig_goodput(const capsim_report *rep, FILE *dat, FILE *gp)
{
	mem plot, curves;
	FILE *p = mem_open(&plot), *c = mem_open(&curves);
	fprintf(p, "set logscale x\nset xlabel 'checkpoint interval'\nset format x '%%g h'\n"
		   "set ylabel 'goodput'\nset format y '%%.0f%%%%'\nset yrange [*:100]\n");
	int any = 0;
	for (size_t i = 0; i < rep->n; i++) {
		const capsim_report_design *x = &rep->d[i];
		fputs("# ", dat);
		capsim_gnuplot_datum(dat, x->label);
		fprintf(dat, ": interval (h), goodput; the scenario's interval %.10g h\n",
			capsim_result_get(&x->r, "checkpoint_interval_s", NAN) / 3600.0);
		for (int k = 0; k < x->n_ckpt; k++)
			fprintf(dat, "%.10g %.10g\n", x->ckpt_s[k] / 3600.0, x->ckpt_goodput[k]);
		fprintf(dat, "\n\n");
		if (x->n_ckpt)
			curve(c, rep, FIG_GOODPUT, i, "goodput.dat", i, "1:($2*100)", &any);
	}
	plot_curves(p, &curves, any, "no failures modelled");
	mem_close(&plot);
	gp_outputs(gp, "goodput", plot.buf);
	free(plot.buf);
}

/* ---- drawing ------------------------------------------------------------------------------
 * Each figure is drawn in a directory of its own, made by mkdtemp inside
 * figures/ (mode 0700, an unpredictable name, so nothing can be planted in
 * it): its data and script are written there, gnuplot runs there with its
 * messages to a file there, under a time limit, and the SVG and PNG are
 * renamed into figures/ (a rename replaces a name and never follows it).
 * The directory is removed whatever happens. */

/* gnuplot's own outcome */
enum { GP_OK = 0, GP_FAILED = -1, GP_ABSENT = -2, GP_TIMED_OUT = -3 };

/* NAME in dir, created exclusively (never through a link), holding text */
static int put_private(const char *dir, const char *name, const char *text)
{
	char path[8192];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	size_t n = strlen(text), at = 0;
	while (at < n) {
		ssize_t w = write(fd, text + at, n - at);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			close(fd);
			return -1;
		}
		at += (size_t)w;
	}
	return close(fd);
}

/* the whole of NAME in dir (a regular file, never followed); NULL when it
 * cannot be read */
static char *read_private(const char *dir, const char *name)
{
	char path[8192];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	FILE *f = fdopen(fd, "rb");
	if (!f) {
		close(fd);
		return NULL;
	}
	mem m;
	FILE *o = mem_open(&m);
	char buf[65536];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, f)) > 0)
		fwrite(buf, 1, n, o);
	int bad = ferror(f);
	fclose(f);
	mem_close(&m);
	if (bad) {
		free(m.buf);
		return NULL;
	}
	return m.buf;
}

/* remove the drawing directory and what gnuplot or capsim left in it */
static void remove_private(const char *dir)
{
	DIR *dp = opendir(dir);
	if (dp) {
		struct dirent *e;
		while ((e = readdir(dp)) != NULL)
			if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, ".."))
				unlinkat(dirfd(dp), e->d_name, 0);
		closedir(dp);
	}
	rmdir(dir);
}

/* gnuplot SCRIPT, run in DIR with its messages to DIR/gnuplot.log, in a
 * process group of its own that is stopped when it runs past timeout_s */
static int run_gnuplot(const char *dir, const char *script, double timeout_s)
{
	char a0[] = "gnuplot", a1[64];
	capsim_strlcpy(a1, script, sizeof a1);
	char *argv[] = { a0, a1, NULL };
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addchdir_np(&fa, dir);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "gnuplot.log",
					 O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
	posix_spawnattr_t at;
	posix_spawnattr_init(&at);
	sigset_t none, dfl;
	sigemptyset(&none);
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGPIPE);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &dfl);
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
				 POSIX_SPAWN_SETSIGDEF);
	pid_t pid;
	int rc = posix_spawnp(&pid, "gnuplot", &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	if (rc == ENOENT)
		return GP_ABSENT;
	if (rc != 0)
		return GP_FAILED;
	int status = 0;
	switch (capsim_child_wait(pid, timeout_s, 2.0, 1, &status)) {
	case CAPSIM_CHILD_TIMED_OUT: return GP_TIMED_OUT;
	case CAPSIM_CHILD_LOST: return GP_FAILED;
	case CAPSIM_CHILD_EXITED: break;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		return GP_ABSENT;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? GP_OK : GP_FAILED;
}

/* what gnuplot said, kept as figures/NAME.log for the user, and the error */
static void gnuplot_failed(const char *figdir, const char *priv, const char *name, int rc,
			   double timeout_s, capsim_diags *d)
{
	char path[8192];
	snprintf(path, sizeof path, "%s/%s.log", figdir, name);
	char *log = read_private(priv, "gnuplot.log");
	capsim_diags tmp = { 0 };
	int kept = log && write_file(path, log, &tmp) == 0;
	capsim_diags_free(&tmp);
	free(log);
	if (rc == GP_TIMED_OUT)
		capsim_diags_add_runtime(d, path, "gnuplot did not finish %s.gp within %g s and was "
					 "stopped (--gnuplot-timeout raises the limit)", name, timeout_s);
	else if (kept)
		capsim_diags_add_runtime(d, path, "gnuplot failed on %s/%s.gp (its messages are in "
					 "this file)", figdir, name);
	else
		capsim_diags_add_runtime(d, path, "gnuplot failed on %s/%s.gp", figdir, name);
}

/* figure NAME drawn from its data and script: its SVG text in *svg, the SVG
 * and PNG renamed into figdir. GP_OK, GP_ABSENT, or a failure (in d) */
static int draw_figure(const char *figdir, const char *name, const char *dat, const char *gp,
		       double timeout_s, char **svg, capsim_diags *d)
{
	char priv[4200], file[64], from[4400], to[4400];
	snprintf(priv, sizeof priv, "%s/.drawing-XXXXXX", figdir);
	if (!mkdtemp(priv)) {
		capsim_diags_add_runtime(d, figdir, "cannot write: %s", strerror(errno));
		return GP_FAILED;
	}
	int rc = GP_OK;
	snprintf(file, sizeof file, "%s.dat", name);
	if (put_private(priv, file, dat) < 0)
		rc = GP_FAILED;
	snprintf(file, sizeof file, "%s.gp", name);
	if (rc == GP_OK && put_private(priv, file, gp) < 0)
		rc = GP_FAILED;
	if (rc != GP_OK) {
		capsim_diags_add_runtime(d, figdir, "cannot write: %s", strerror(errno));
		remove_private(priv);
		return rc;
	}
	rc = run_gnuplot(priv, file, timeout_s);
	if (rc == GP_OK) {
		snprintf(file, sizeof file, "%s.svg", name);
		*svg = read_private(priv, file);
		if (!*svg)
			rc = GP_FAILED;
	}
	for (int k = 0; rc == GP_OK && k < 2; k++) {
		snprintf(from, sizeof from, "%s/%s.%s", priv, name, k ? "png" : "svg");
		snprintf(to, sizeof to, "%s/%s.%s", figdir, name, k ? "png" : "svg");
		if (rename(from, to) != 0) {
			capsim_diags_add_runtime(d, to, "cannot write: %s", strerror(errno));
			remove_private(priv);
			return GP_FAILED;
		}
	}
	if (rc != GP_OK && rc != GP_ABSENT)
		gnuplot_failed(figdir, priv, name, rc, timeout_s, d);
	remove_private(priv);
	return rc;
}

/* figure f: its data and script written into figdir and, where DRAW, drawn
 * (*svg its SVG text). GP_OK, GP_ABSENT, or a failure (in d) */
static int make_figure(const capsim_report *rep, const char *figdir, size_t f, int draw,
		       double timeout_s, char **svg, capsim_diags *d)
{
	const char *name = figures[f].name;
	mem dm, gm;
	FILE *dat = mem_open(&dm), *gp = mem_open(&gm);
	gp_head(gp, name, figures[f].title);
	switch (f) {
	case 0: fig_scaling(rep, dat, gp); break;
	case 1: fig_breakdown(rep, dat, gp); break;
	case 2: fig_cost(rep, dat, gp); break;
	case 3: fig_power(rep, dat, gp); break;
	case 4: fig_tornado(rep, dat, gp); break;
	default: fig_goodput(rep, dat, gp); break;
	}
	mem_close(&dm);
	mem_close(&gm);
	char path[8192];
	int rc = 0;
	snprintf(path, sizeof path, "%s/%s.dat", figdir, name);
	rc |= write_file(path, dm.buf, d);
	snprintf(path, sizeof path, "%s/%s.gp", figdir, name);
	rc |= write_file(path, gm.buf, d);
	if (rc == 0 && draw)
		rc = draw_figure(figdir, name, dm.buf, gm.buf, timeout_s, svg, d);
	else if (rc)
		rc = GP_FAILED;
	free(dm.buf);
	free(gm.buf);
	return rc;
}

/* ---- the sections ---------------------------------------------------------------------- */

static const char *const css =
	"body{font-family:Helvetica,Arial,sans-serif;max-width:1100px;margin:2em auto;"
	"padding:0 1em;color:#222;line-height:1.4}"
	"table{border-collapse:collapse;margin:0.5em 0 1.5em;font-size:0.9em}"
	"th,td{border:1px solid #bbb;padding:0.25em 0.5em;vertical-align:top}"
	"th{background:#eee;text-align:left}td.n{text-align:right}"
	"h1{border-bottom:2px solid #333}h2{border-bottom:1px solid #999;margin-top:2em}"
	".figure{margin:1em 0;page-break-inside:avoid}.figure svg{max-width:100%;height:auto}"
	".missing{color:#a00}"
	"@media print{body{max-width:none;margin:0}h2{page-break-before:always}"
	"h2.first{page-break-before:avoid}}";

/* the summary: a row a quantity, a column a design (the CSV has a row a
 * design) */
static void summary_section(out2 *o, const capsim_report *rep)
{
	heading(o, 2, "Summary");
	size_t nc = rep->n + 1, nr = capsim_report_n_columns - 1;
	const char **head = capsim_xcalloc(nc, sizeof *head);
	head[0] = "";
	for (size_t i = 0; i < rep->n; i++)
		head[i + 1] = rep->d[i].label;
	char **cells = capsim_xcalloc(nr * nc, sizeof *cells);
	for (size_t q = 1; q <= nr; q++) {
		cells[(q - 1) * nc] = capsim_xstrdup(capsim_report_columns[q].heading);
		for (size_t i = 0; i < rep->n; i++) {
			char buf[128];
			cell_text(rep, i, q, buf, sizeof buf);
			cells[(q - 1) * nc + i + 1] = capsim_xstrdup(buf);
		}
	}
	table(o, head, nc, cells, nr);
	for (size_t i = 0; i < nr * nc; i++)
		free(cells[i]);
	free(cells);
	free(head);
}

/* "cheaper than", "faster to train than": the rule's metric as a comparison */
static const char *better_words(int metric)
{
	return metric == CAPSIM_RULE_TIME_TO_TRAIN ? "faster to train than" :
	       metric == CAPSIM_RULE_COST_PER_MTOK ? "cheaper a token than" : "cheaper than";
}

/* how the comparison was made: on the difference, or on independent bands */
static void basis_text(const capsim_report *rep, char *buf, size_t n)
{
	const capsim_report_cmp *c = &rep->cmp;
	if (c->from_power)
		snprintf(buf, n, "+/-%.1f%% from independent bands of the TCO: the rest of it is "
			 "priced inputs, so its error is the GPUs' power error through the busy "
			 "hours' energy, each design's own 80%% band (taken as independent, which "
			 "overstates the spread of two designs of one GPU)",
			 100.0 * (exp(c->cmp.half80) - 1.0));
	else if (c->cmp.paired)
		snprintf(buf, n, "+/-%.1f%% on the difference: both are %s, which share most "
			 "of their error; from %s",
			 100.0 * (exp(c->cmp.half80) - 1.0), c->gen_stack[0], c->cmp.group);
	else
		snprintf(buf, n, "+/-%.1f%% from independent bands: %s against %s is not one "
			 "family, so their errors are not paired; from %s",
			 100.0 * (exp(c->cmp.half80) - 1.0), c->gen_stack[0], c->gen_stack[1],
			 c->cmp.group);
}

/* what would decide a tie: a measurement of the step, or an input whose
 * 20% move changes the winner */
static void decider_text(const capsim_report *rep, char *buf, size_t n)
{
	char metric[96];
	capsim_report_metric_label(rep->rule.metric, metric, sizeof metric);
	int at = rep->cmp.from_power ?
		 snprintf(buf, n, "What would decide it: a measured power draw of both designs' "
			  "GPUs through a training step (the power's model error is the whole of "
			  "this band; the prices are inputs that carry no model error)") :
		 snprintf(buf, n, "What would decide it: a measured step time of both designs "
			  "on their hardware (the step time's model error is the whole of this "
			  "band: the %s is taken as proportional to the step time, and the prices "
			  "are inputs that carry no model error)", metric);
	for (int k = 0; k < CAPSIM_REPORT_KNOBS && at > 0 && (size_t)at < n; k++) {
		const capsim_report_swing *s = &rep->swing[k];
		if (!s->has || (s->winner_low == rep->winner && s->winner_high == rep->winner))
			continue;
		int low = s->winner_low != rep->winner;
		int other = low ? s->winner_low : s->winner_high;
		at += snprintf(buf + at, n - (size_t)at, "; or the %s (%s): 20%% %s, the winner "
			       "is %s", s->what, s->path, low ? "lower" : "higher",
			       other >= 0 ? rep->d[other].label : "none");
		break;
	}
	if (at > 0 && (size_t)at < n)
		snprintf(buf + at, n - (size_t)at, ".");
}

/* the winner against the runner-up on the model's own error: a probability,
 * and a tie called a tie */
static void comparison(out2 *o, const capsim_report *rep)
{
	const capsim_report_cmp *c = &rep->cmp;
	if (!c->done)
		return;
	char text[2048], basis[1024];
	const capsim_report_design *w = &rep->d[rep->winner], *r = &rep->d[rep->runner_up];
	if (!c->has) {
		snprintf(text, sizeof text, "Against the model's own error: not compared; %s.",
			 c->why_none);
		para(o, text);
		return;
	}
	basis_text(rep, basis, sizeof basis);
	double apart = 100.0 * (1.0 - c->cmp.ratio);
	if (!c->cmp.tie) {
		snprintf(text, sizeof text, "Against the model's own error: %s is %s %s with "
			 "probability %.2f (%.1f%% apart; the 80%% band of the comparison is %s).",
			 w->label, better_words(rep->rule.metric), r->label, c->cmp.p_less, apart,
			 basis);
		para(o, text);
		return;
	}
	snprintf(text, sizeof text, "Against the model's own error this is a tie: %s is %s %s "
		 "with probability %.2f only; the predicted difference, %.1f%%, is inside the "
		 "80%% band of the comparison (%s). A tie: the predicted ratio inside that band, "
		 "that is a probability between 0.1 and 0.9 that the winner is the better "
		 "(docs/model.md, \"Comparisons and ties\").", w->label,
		 better_words(rep->rule.metric), r->label, c->cmp.p_less, apart, basis);
	para(o, text);
	decider_text(rep, text, sizeof text);
	para(o, text);
}

static void recommendation(out2 *o, const capsim_report *rep)
{
	heading(o, 2, "Recommendation");
	char rule[1024], metric[96];
	capsim_report_metric_label(rep->rule.metric, metric, sizeof metric);
	int at = snprintf(rule, sizeof rule, "Decision rule: the smallest %s", metric);
	if (rep->rule.budget_usd > 0)
		at += snprintf(rule + at, sizeof rule - (size_t)at,
			       ", with a cost to train of at most $%.4gM", rep->rule.budget_usd / 1e6);
	if (rep->rule.deadline_s > 0)
		snprintf(rule + at, sizeof rule - (size_t)at, ", trained within %.1f days",
			 rep->rule.deadline_s / 86400.0);
	size_t l = strlen(rule);
	snprintf(rule + l, sizeof rule - l, ".");
	para(o, rule);
	char text[1024];
	if (rep->winner < 0) {
		para(o, "No design meets the rule.");
	} else {
		const capsim_report_design *w = &rep->d[rep->winner];
		char a[64], b[64];
		metric_text(rep->rule.metric, w->metric, a, sizeof a);
		if (rep->runner_up >= 0) {
			const capsim_report_design *r2 = &rep->d[rep->runner_up];
			metric_text(rep->rule.metric, r2->metric, b, sizeof b);
			snprintf(text, sizeof text, "%s wins with %s = %s, %.1f%% below the runner-up, "
				 "%s (%s).", w->label, metric, a,
				 100.0 * (r2->metric - w->metric) / r2->metric, r2->label, b);
		} else {
			snprintf(text, sizeof text, "%s wins with %s = %s; no other design meets the "
				 "rule.", w->label, metric, a);
		}
		para(o, text);
		comparison(o, rep);
	}
	for (size_t i = 0; i < rep->n; i++)
		if (!rep->d[i].meets) {
			snprintf(text, sizeof text, "%s does not meet the rule: %s.", rep->d[i].label,
				 rep->d[i].why_not);
			para(o, text);
		}
	if (rep->winner < 0)
		return;
	heading(o, 3, "How sensitive the decision is");
	static const char *const head[] = { "input", "the winner's value",
					    "its metric at -20%", "at +20%", "winner at -20%",
					    "winner at +20%" };
	char **cells = capsim_xcalloc(CAPSIM_REPORT_KNOBS * 6, sizeof *cells);
	size_t rows = 0;
	int stable = 1;
	for (int k = 0; k < CAPSIM_REPORT_KNOBS; k++) {
		const capsim_report_swing *s = &rep->swing[k];
		if (!s->has)
			continue;
		char b[6][128];
		snprintf(b[0], sizeof b[0], "%s (%s)", s->what, s->path);
		knob_text(s->path, s->base, b[1], sizeof b[1]);
		metric_text(rep->rule.metric, s->low_metric, b[2], sizeof b[2]);
		metric_text(rep->rule.metric, s->high_metric, b[3], sizeof b[3]);
		snprintf(b[4], sizeof b[4], "%s", s->winner_low >= 0 ? rep->d[s->winner_low].label : "none");
		snprintf(b[5], sizeof b[5], "%s", s->winner_high >= 0 ? rep->d[s->winner_high].label : "none");
		stable &= s->winner_low == rep->winner && s->winner_high == rep->winner;
		for (int c = 0; c < 6; c++)
			cells[rows * 6 + (size_t)c] = capsim_xstrdup(b[c]);
		rows++;
	}
	table(o, head, 6, cells, rows);
	for (size_t i = 0; i < rows * 6; i++)
		free(cells[i]);
	free(cells);
	para(o, stable ? "The winner stays the winner with each input 20% lower or higher." :
		 "The winner changes when an input moves by 20% (above): the decision rests on it.");
}

/* the support of every part class a year */
static double support_per_year(const capsim_result *r)
{
	static const char *const keys[] = {
		"opex_support_servers_per_year_usd", "opex_support_switches_per_year_usd",
		"opex_support_cables_per_year_usd", "opex_support_storage_per_year_usd",
	};
	double sum = 0.0;
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
		sum += capsim_result_get(r, keys[i], 0.0);
	return sum;
}

static void bom_section(out2 *o, const capsim_report_design *x)
{
	capsim_bom_line v[CAPSIM_BOM_MAX];
	int n = capsim_result_bom(x->s, &x->r, v);
	static const char *const head[] = { "part", "id", "count", "unit price", "total",
					    "price date / note" };
	char **cells = capsim_xcalloc((size_t)n * 6, sizeof *cells);
	for (int i = 0; i < n; i++) {
		char b[6][192];
		snprintf(b[0], sizeof b[0], "%s", v[i].part);
		snprintf(b[1], sizeof b[1], "%s", v[i].id);
		snprintf(b[2], sizeof b[2], "%.0f", v[i].count);
		b[3][0] = b[4][0] = '\0';
		if (v[i].unit_usd > 0) {
			snprintf(b[3], sizeof b[3], "$%.0f", v[i].unit_usd);
			snprintf(b[4], sizeof b[4], "$%.0f", v[i].unit_usd * v[i].count);
		} else if (v[i].unit_usd < 0) {
			snprintf(b[3], sizeof b[3], "no price");
		}
		snprintf(b[5], sizeof b[5], "%s", v[i].note ? v[i].note : v[i].date);
		for (int c = 0; c < 6; c++)
			cells[(size_t)i * 6 + (size_t)c] = capsim_xstrdup(b[c]);
	}
	heading(o, 3, "Bill of materials");
	table(o, head, 6, cells, (size_t)n);
	for (int i = 0; i < n * 6; i++)
		free(cells[i]);
	free(cells);
	char text[512];
	double capex = capsim_result_get(&x->r, "capex_usd", NAN);
	const char *left_out = capsim_result_string(&x->r, "capex_excludes");
	if (isfinite(capex))
		snprintf(text, sizeof text, "Capex $%.0f%s%s; the nodes and switches resell for $%.0f "
			 "at the horizon. Opex $%.0f a year: energy $%.0f, colocation $%.0f, "
			 "support $%.0f, insurance $%.0f, staff $%.0f.", capex,
			 left_out ? "; it leaves out " : "", left_out ? left_out : "",
			 capsim_result_get(&x->r, "residual_usd", 0.0),
			 capsim_result_get(&x->r, "opex_per_year_usd", 0.0),
			 capsim_result_get(&x->r, "opex_energy_per_year_usd", 0.0),
			 capsim_result_get(&x->r, "opex_colocation_per_year_usd", 0.0),
			 support_per_year(&x->r),
			 capsim_result_get(&x->r, "opex_insurance_per_year_usd", 0.0),
			 capsim_result_get(&x->r, "opex_staff_per_year_usd", 0.0));
	else if (capsim_result_string(&x->r, "cost_unpriced"))
		snprintf(text, sizeof text, "No capex, TCO or break-even: the %s.",
			 capsim_result_string(&x->r, "cost_unpriced"));
	else
		snprintf(text, sizeof text, "No capex: a part has no price in the catalog.");
	para(o, text);
}

/* runtime variability, where the design models it: a physical effect of
 * its GPUs, said apart from the model's error */
static void variability_text(out2 *o, const capsim_report_design *x)
{
	const capsim_step *st = &x->r.step;
	if (!(st->variability_s > 0))
		return;
	char text[512];
	snprintf(text, sizeof text, "Runtime variability (a physical effect of the GPUs, apart "
		 "from the model's error): the %ld GPUs that synchronise each step run their "
		 "kernels at rates that spread by %.1f%% (coefficient of variation), so each step "
		 "waits for the slowest of them, %.3g s of the %.6g s above, and steps spread by "
		 "%.3g s (one standard deviation). It grows with the GPUs that synchronise.",
		 st->variability_ranks, 100.0 * st->variability_cv, st->variability_s,
		 st->step_time_s, st->step_time_sd_s);
	para(o, text);
}

static void breakdown_section(out2 *o, const capsim_report_design *x)
{
	static const char *const head[] = { "part of the step", "seconds", "share" };
	double step = capsim_result_get(&x->r, "step_time_s", 0.0);
	char **cells = capsim_xcalloc(N_PARTS * 3, sizeof *cells);
	size_t rows = 0;
	for (size_t k = 0; k < N_PARTS; k++) {
		double v = capsim_result_get(&x->r, parts[k], 0.0);
		if (v <= 0)
			continue;
		char b[3][64];
		capsim_report_key_label(parts[k], b[0], sizeof b[0]);
		snprintf(b[1], sizeof b[1], "%.6g", v);
		snprintf(b[2], sizeof b[2], "%.1f%%", step > 0 ? 100.0 * v / step : 0.0);
		for (int c = 0; c < 3; c++)
			cells[rows * 3 + (size_t)c] = capsim_xstrdup(b[c]);
		rows++;
	}
	heading(o, 3, "Step time");
	char text[256];
	snprintf(text, sizeof text, "%.6g s a step, %.6g tokens/s, MFU %.1f%%; tp %d pp %d cp %d "
		 "ep %d dp %d, ZeRO %d.", step, capsim_result_get(&x->r, "tokens_per_s", 0.0),
		 100.0 * capsim_result_get(&x->r, "mfu", 0.0), x->s->tp, x->s->pp, x->s->cp, x->s->ep,
		 x->s->dp, x->s->zero);
	para(o, text);
	table(o, head, 3, cells, rows);
	for (size_t i = 0; i < rows * 3; i++)
		free(cells[i]);
	free(cells);
	variability_text(o, x);
}

/* the bibliography ids a report cites, numbered in order of first use */
typedef struct {
	char (*id)[CAPSIM_ID_LEN];
	size_t n, cap;
} citations;

static size_t cite(citations *c, const char *id)
{
	for (size_t i = 0; i < c->n; i++)
		if (strcmp(c->id[i], id) == 0)
			return i + 1;
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 32;
		c->id = capsim_xrealloc(c->id, c->cap * sizeof *c->id);
	}
	capsim_strlcpy(c->id[c->n++], id, CAPSIM_ID_LEN);
	return c->n;
}

/* rows of the assumptions table: role, what, value, source */
typedef struct {
	char **cells;
	size_t n, cap;
	const capsim_catalog *cat;
	citations *cites;
	const char *role, *entry;
} rows4;

static void row4(rows4 *r, const char *a, const char *b, const char *c, const char *d)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 32;
		r->cells = capsim_xrealloc(r->cells, r->cap * 4 * sizeof *r->cells);
	}
	char **p = &r->cells[r->n++ * 4];
	p[0] = capsim_xstrdup(a);
	p[1] = capsim_xstrdup(b);
	p[2] = capsim_xstrdup(c);
	p[3] = capsim_xstrdup(d);
}

/* a value's source as a cell: "[N] title" (the list of sources below has
 * the rest), or its assumption */
static void source_text(const capsim_catalog *cat, citations *cites, const char *src,
			const char *assumption, char *out, size_t n)
{
	const capsim_bibref *b = src && src[0] ? capsim_catalog_ref(cat, src) : NULL;
	if (b)
		snprintf(out, n, "[%zu] %.120s", cite(cites, src), b->title);
	else if (assumption && assumption[0])
		snprintf(out, n, "assumption: %s", assumption);
	else
		snprintf(out, n, "none given");
}

static void provenance_row(void *ctx, const char *element, const char *values, const char *src,
			   const char *assumption)
{
	rows4 *r = ctx;
	char text[1024], what[160];
	source_text(r->cat, r->cites, src, assumption, text, sizeof text);
	snprintf(what, sizeof what, "%s: %s", r->entry, element);
	row4(r, r->role, what, values, text);
}

/* the catalog parts the design uses, each value's source or assumption (read
 * from the catalog file again), the scenario's overrides and edits, and the
 * scenario's own values that are assumptions */
static void assumptions_section(out2 *o, const capsim_report_design *x, const capsim_catalog *cat,
				citations *cites)
{
	const capsim_scenario *s = x->s;
	struct {
		const char *role;
		const capsim_entry *e;
	} used[] = {
		{ "node", &s->node.e }, { "GPU", &s->gpu.e }, { "NIC", &s->nic.e },
		{ "switch", s->has_switch ? &s->fabric_switch.e : NULL },
		{ "shared storage", s->has_shared_storage ? &s->shared_storage.e : NULL },
		{ "local storage", s->has_local_storage ? &s->local_storage.e : NULL },
		{ "facility", s->has_facility ? &s->facility.e : NULL },
		{ "cloud offer", s->has_cloud ? &s->cloud.e : NULL },
		{ "model", &s->model.e },
	};
	rows4 r = { .cat = cat, .cites = cites };
	for (size_t i = 0; i < sizeof used / sizeof used[0]; i++) {
		if (!used[i].e || !used[i].e->id[0])
			continue;
		char text[1024];
		source_text(cat, cites, used[i].e->src, used[i].e->assumption, text, sizeof text);
		row4(&r, used[i].role, used[i].e->id, "the entry", text);
		r.role = used[i].role;
		r.entry = used[i].e->id;
		capsim_diags d = { 0 };
		if (used[i].e->file[0] && capsim_catalog_provenance(used[i].e, provenance_row, &r, &d) < 0)
			row4(&r, used[i].role, used[i].e->id, "", "(its file could not be read again)");
		capsim_diags_free(&d);
	}
	for (int i = 0; i < s->n_overrides; i++) {
		char w[64];
		snprintf(w, sizeof w, "the scenario's override (line %ld)", s->overrides[i].line);
		row4(&r, "override", s->overrides[i].path, s->overrides[i].value,
		     s->overrides[i].line ? w : "an edit");
	}
	for (int i = 0; i < s->n_edits; i++)
		row4(&r, "--set edit", s->edits[i].path, s->edits[i].value, "the user's");
	/* the scenario's own values that its field says are assumptions */
	for (size_t f = 0; f < capsim_scenario_n_fields; f++) {
		const capsim_field *fd = &capsim_scenario_fields[f];
		if (!fd->doc || !strstr(fd->doc, "assumption"))
			continue;
		capsim_path_value v;
		char err[256], val[128];
		if (capsim_scenario_path_value(s, fd->path, NULL, &v, err, sizeof err) < 0)
			continue;
		if (v.is_text)
			snprintf(val, sizeof val, "%s", v.text);
		else
			capsim_units_format(v.num, fd->dim, val, sizeof val);
		row4(&r, "scenario", fd->path, val, fd->doc);
	}
	if (s->gpu_profile[0])
		row4(&r, "calibrated profile", s->gpu_profile, "",
		     "measured (capsim calibrate, capsim fit)");
	heading(o, 3, "Assumptions and sources");
	char text[2048];
	snprintf(text, sizeof text, "Scenario %s (SHA-256 %.16s...); the step model's knobs are "
		 "the fitted defaults (docs/model.md). Every catalog value below is listed with its "
		 "source or the assumption it rests on.", s->file, s->sha256);
	para(o, text);
	static const char *const head[] = { "part", "what", "value", "source or assumption" };
	table(o, head, 4, r.cells, r.n);
	for (size_t i = 0; i < r.n * 4; i++)
		free(r.cells[i]);
	free(r.cells);
}

/* every source cited, by its number: title, where in it, address, date */
static void sources_section(out2 *o, const capsim_catalog *cat, const citations *c)
{
	heading(o, 2, "Sources");
	static const char *const head[] = { "", "source", "where in it", "address", "date" };
	char **cells = capsim_xcalloc(c->n * 5 + 1, sizeof *cells);
	for (size_t i = 0; i < c->n; i++) {
		const capsim_bibref *b = capsim_catalog_ref(cat, c->id[i]);
		char num[32];
		snprintf(num, sizeof num, "[%zu]", i + 1);
		cells[i * 5] = capsim_xstrdup(num);
		cells[i * 5 + 1] = capsim_xstrdup(b ? b->title : c->id[i]);
		cells[i * 5 + 2] = capsim_xstrdup(b ? b->where : "");
		cells[i * 5 + 3] = capsim_xstrdup(b ? b->url : "");
		cells[i * 5 + 4] = capsim_xstrdup(b ? b->date : "");
	}
	table(o, head, 5, cells, c->n);
	for (size_t i = 0; i < c->n * 5; i++)
		free(cells[i]);
	free(cells);
}

static void figures_section(out2 *o, const capsim_report *rep, char *const *svg)
{
	heading(o, 2, "Figures");
	for (size_t f = 0; f < N_FIGURES; f++) {
		char caption[1024];
		heading(o, 3, figures[f].title);
		coincide_caption(rep, f, caption, sizeof caption);
		const char *at = svg[f] ? strstr(svg[f], "<svg") : NULL;
		if (!at) {
			para(o, "(This figure was not drawn: gnuplot is not installed. Its data and "
				"script are in figures/.)");
			continue;
		}
		fprintf(o->md, "![%s](figures/%s.png)\n\n", figures[f].title, figures[f].name);
		fprintf(o->html, "<div class=\"figure\">%s</div>\n", at);
		if (caption[0])
			para(o, caption);
	}
}

static int write_csv(const capsim_report *rep, const char *path, capsim_diags *d)
{
	capsim_outfile of;
	if (capsim_outfile_open_own(&of, path, d) < 0)
		return -1;
	for (size_t c = 0; c < capsim_report_n_columns; c++)
		fprintf(of.f, "%s%s", c ? "," : "", capsim_report_columns[c].key);
	fputc('\n', of.f);
	for (size_t i = 0; i < rep->n; i++) {
		for (size_t c = 0; c < capsim_report_n_columns; c++) {
			double v;
			const char *t;
			if (c)
				fputc(',', of.f);
			if (!capsim_report_cell(rep, i, c, &v, &t))
				continue;
			if (t) {
				capsim_csv_text(of.f, t);
			} else {
				fprintf(of.f, "%.17g", v);
			}
		}
		fputc('\n', of.f);
	}
	return capsim_outfile_close(&of, d);
}

/* the report's directory: the user's own, followed where it is a link */
static int make_dir(const char *path, capsim_diags *d)
{
	if (mkdir(path, 0777) == 0 || errno == EEXIST) {
		struct stat st;
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
			return 0;
		capsim_diags_add(d, path, 0, "--out: not a directory");
		return -1;
	}
	capsim_diags_add(d, path, 0, "--out: cannot make the directory: %s", strerror(errno));
	return -1;
}

/* figures/ inside it: capsim's own name, so a symlink there (planted, or
 * left by anyone) is refused rather than followed */
static int make_own_dir(const char *path, capsim_diags *d)
{
	if (mkdir(path, 0777) != 0 && errno != EEXIST) {
		capsim_diags_add_runtime(d, path, "cannot make the directory: %s", strerror(errno));
		return -1;
	}
	struct stat st;
	if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return 0;
	capsim_diags_add_runtime(d, path, "not a directory of capsim's own (%s): remove it, or "
				 "give another --out", S_ISLNK(st.st_mode) ? "a symbolic link" :
				 "not a directory");
	return -1;
}

int capsim_report_write(const capsim_report *rep, const capsim_catalog *cat, const char *dir,
			double gnuplot_timeout_s, int *figures_missing, capsim_diags *d)
{
	CAPSIM_ASSERT(gnuplot_timeout_s > 0);
	*figures_missing = 0;
	char figdir[4096], path[8192];
	if (make_dir(dir, d) < 0)
		return -1;
	snprintf(figdir, sizeof figdir, "%s/figures", dir);
	if (make_own_dir(figdir, d) < 0)
		return -1;
	int have = 1, failed = 0;
	char *svg[N_FIGURES] = { 0 };
	for (size_t f = 0; f < N_FIGURES && !failed; f++) {
		int rc = make_figure(rep, figdir, f, have, gnuplot_timeout_s, &svg[f], d);
		if (rc == GP_ABSENT)
			have = 0;
		else if (rc != GP_OK)
			failed = 1;
	}
	if (failed) {
		for (size_t f = 0; f < N_FIGURES; f++)
			free(svg[f]);
		return -1;
	}
	*figures_missing = !have;
	mem md, html;
	out2 o = { mem_open(&md), mem_open(&html) };
	const char *title = "capsim procurement report";
	fprintf(o.md, "# %s\n\n", title);
	fprintf(o.html, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
			"<title>%s</title>\n<style>%s</style>\n</head>\n<body>\n<h1>%s</h1>\n",
		title, css, title);
	char text[512];
	citations cites = { 0 };
	snprintf(text, sizeof text, "%zu candidate designs for one workload, made %s.", rep->n,
		 rep->created);
	para(&o, text);
	recommendation(&o, rep);
	summary_section(&o, rep);
	for (size_t i = 0; i < rep->n; i++) {
		char h[CAPSIM_ID_LEN + 16];
		snprintf(h, sizeof h, "Design: %s", rep->d[i].label);
		heading(&o, 2, h);
		breakdown_section(&o, &rep->d[i]);
		bom_section(&o, &rep->d[i]);
		assumptions_section(&o, &rep->d[i], cat, &cites);
	}
	sources_section(&o, cat, &cites);
	free(cites.id);
	figures_section(&o, rep, svg);
	for (size_t f = 0; f < N_FIGURES; f++)
		free(svg[f]);
	fputs("</body>\n</html>\n", o.html);
	mem_close(&md);
	mem_close(&html);
	int rc = 0;
	snprintf(path, sizeof path, "%s/report.md", dir);
	rc |= write_file(path, md.buf, d);
	snprintf(path, sizeof path, "%s/report.html", dir);
	rc |= write_file(path, html.buf, d);
	snprintf(path, sizeof path, "%s/summary.csv", dir);
	rc |= write_csv(rep, path, d);
	free(md.buf);
	free(html.buf);
	return rc ? -1 : 0;
}
