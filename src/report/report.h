/* report.h - procurement reports (`capsim report`): candidate designs for
 * one workload evaluated side by side, with what a buyer signs on: a summary
 * table, each design's bill of materials, step breakdown and assumptions
 * with their sources, a recommendation under the user's decision rule and
 * how sensitive it is, and figures (gnuplot at run time).
 *
 * Collecting (capsim_report_collect) evaluates each design and what the
 * figures need: the same job at fewer nodes (scaling), the goodput at other
 * checkpoint intervals, and the decision metric with utilisation and prices
 * moved. Writing (capsim_report_write) puts report.html (self-contained:
 * figures inline as SVG), report.md (the same, figures as PNG files),
 * summary.csv and figures/ (SVG, PNG and each figure's gnuplot script and
 * data) in a directory, each file whole or not at all. */
#ifndef CAPSIM_REPORT_H
#define CAPSIM_REPORT_H

#include <stddef.h>

#include "catalog.h"
#include "compare.h"
#include "diag.h"
#include "eval.h"
#include "scenario.h"

/* what the decision rule ranks by (result keys; smaller is better) */
typedef enum {
	CAPSIM_RULE_COST_TO_TRAIN,   /* cost_to_train_usd */
	CAPSIM_RULE_TIME_TO_TRAIN,   /* wall_to_train_s (goodput counted; a rented
				      * design's: cloud_wall_to_train_s) */
	CAPSIM_RULE_COST_PER_MTOK,   /* cost_per_million_tokens_usd */
	CAPSIM_RULE_TCO,             /* tco_usd (owned designs only) */
	CAPSIM_RULE__COUNT
} capsim_rule_metric;

extern const char *const capsim_rule_metric_names[CAPSIM_RULE__COUNT];

/* The colours of a figure's series, in order (gnuplot's linetypes 1 to 10):
 * Okabe and Ito's colour-blind-safe eight (Okabe, Ito, "Color Universal
 * Design", 2008, https://jfly.uni-koeln.de/color/), then grey and Paul Tol's
 * wine (https://personal.sron.nl/~pault/) for a ninth and tenth series. */
#define CAPSIM_REPORT_COLOURS 10
extern const char *const capsim_report_palette[CAPSIM_REPORT_COLOURS];

/* A result key for people: its label in the result-key table (eval.h), a
 * label that reads as a part of the heading above it ("per million tokens")
 * joined to that heading's ("cost to train per million tokens"). Keys
 * without a label, and names that are no key, are written with their
 * underscores as spaces and their unit suffix dropped, so that no key name
 * reaches a report's text. Into buf. */
void capsim_report_key_label(const char *key, char *buf, size_t n);

/* The rule's metric for people (capsim_report_key_label of its key), into buf. */
void capsim_report_metric_label(int metric, char *buf, size_t n);

typedef struct capsim_report_rule {
	int metric;                  /* capsim_rule_metric */
	double budget_usd;           /* cost_to_train_usd at most this; 0: none */
	double deadline_s;           /* wall_to_train_s at most this; 0: none */
} capsim_report_rule;

#define CAPSIM_REPORT_SCALE 5    /* scaling points: 1/16, 1/8, 1/4, 1/2, 1 of the nodes */
#define CAPSIM_REPORT_CKPT 12    /* checkpoint intervals */
#define CAPSIM_REPORT_KNOBS 4    /* sensitivity: utilisation, energy, node and cloud prices */

/* one input moved down and up by a share, and the metric at each */
typedef struct capsim_report_swing {
	const char *what;            /* "utilisation", "energy price", ... */
	const char *path;            /* the --set path moved */
	double base, low_value, high_value; /* the input (SI) */
	double low_metric, high_metric;     /* the winner's metric there */
	int winner_low, winner_high;        /* the design that wins there (-1: none) */
	int has;                     /* 0: the input does not apply (no cloud offer, ...) */
} capsim_report_swing;

typedef struct capsim_report_design {
	char label[CAPSIM_ID_LEN];   /* the scenario's name */
	char fabric[96];             /* in words: "InfiniBand, 2 tiers, 1:1, 8 rails" */
	capsim_scenario *s;          /* owned */
	capsim_result r;             /* owned (with the scaling reference) */
	int evaluated;
	/* weak scaling: the job at fewer nodes, the global batch with them */
	int n_scale;
	long scale_gpus[CAPSIM_REPORT_SCALE];
	double scale_eff[CAPSIM_REPORT_SCALE], scale_tokens_per_s[CAPSIM_REPORT_SCALE];
	/* goodput against the checkpoint interval (closed form, reliab.h) */
	int n_ckpt;
	double ckpt_s[CAPSIM_REPORT_CKPT], ckpt_goodput[CAPSIM_REPORT_CKPT];
	/* the rule */
	double metric;               /* NAN: the design has none (no price) */
	int meets;                   /* within the budget and the deadline */
	char why_not[160];           /* what it misses, when it does not meet them */
} capsim_report_design;

/* The winner against the runner-up on the rule's metric, knowing that
 * their errors are correlated (capsim_report_compare). */
typedef struct capsim_report_cmp {
	int done;                    /* 0: not compared (no model given, or no runner-up) */
	int has;                     /* 1: the model's error reaches the metric (cmp holds) */
	capsim_err_cmp cmp;          /* winner (a) against runner-up (b) */
	char gen_stack[2][3 * CAPSIM_ERR_TEXT]; /* each one's "hopper / megatron" */
	char why_none[256];          /* when !has: why not */
	int from_power;              /* 1: the TCO's, each design's own band carried from
				      * its power's (capsim_err_compare_bands) */
} capsim_report_cmp;

typedef struct capsim_report {
	capsim_report_design *d;     /* owned, n of them */
	size_t n;
	capsim_report_rule rule;
	int winner, runner_up;       /* indices, -1: none */
	capsim_report_cmp cmp;       /* zero until capsim_report_compare */
	capsim_report_swing swing[CAPSIM_REPORT_KNOBS];
	double swing_share;          /* how far each input is moved: 0.2 = ±20% */
	char created[32];            /* UTC, ISO 8601 */
} capsim_report;

/* progress: called from the calling thread as each evaluation ends */
typedef void (*capsim_report_progress)(void *ctx, int done, int total, const char *what);

/* Take the scenarios (owned by rep from now on, freed with it), evaluate
 * each and what the figures and the recommendation need. Returns 0, or -1
 * with the reason in d (a design that cannot be evaluated). */
int capsim_report_collect(capsim_report *rep, capsim_scenario **scenarios, size_t n,
			  const capsim_report_rule *rule, const capsim_catalog *cat,
			  capsim_report_progress progress, void *ctx, capsim_diags *d);

void capsim_report_free(capsim_report *rep);

/* Compare the winner with the runner-up (when both exist) under the error
 * model m (compare.h), into rep->cmp: the metrics that scale with the step
 * time (cost to train, time to train, cost per million tokens: a step's
 * price is its time at a rate, the rate an input) compared as the step
 * time's prediction for each design's features (capsim_result_err_features),
 * on the difference where both are of one GPU generation and stack, else on
 * independent bands; TCO (priced inputs over a fixed horizon) is reached by
 * no band, and rep->cmp says so. Two designs are two designs: one predicted
 * step for both (an InfiniBand and a RoCE fabric that hide their traffic
 * alike) is still two measured steps, each with its share of the error. m NULL: nothing done, the report written as
 * without the model. */
void capsim_report_compare(capsim_report *rep, const capsim_err_model *m);

/* Write the report into dir (made when absent; a link to a directory is
 * followed, as the user's own). The text (report.md, summary.csv) and the
 * HTML are always written; the figures need gnuplot (found on PATH), each
 * given gnuplot_timeout_s (> 0) before it is stopped: without gnuplot the
 * HTML and Markdown say so in place of each figure, and *figures_missing is
 * set. Every file inside dir is capsim's own name: a symlink, FIFO or
 * device found there is replaced, never followed or opened, and a link at
 * dir/figures is refused. Every text from a scenario or a store is escaped
 * for the language it lands in (escape.h). Returns 0, or -1 with the
 * reason in d (a file that cannot be written, gnuplot failing or stopped). */
int capsim_report_write(const capsim_report *rep, const capsim_catalog *cat, const char *dir,
			double gnuplot_timeout_s, int *figures_missing, capsim_diags *d);

/* The summary table's columns, in order: the key (a result key, or one of
 * the report's own: design, fabric, acquire, memory_headroom_bytes), its
 * heading and unit. */
typedef struct capsim_report_column {
	const char *key, *heading, *unit;
} capsim_report_column;

extern const capsim_report_column capsim_report_columns[];
extern const size_t capsim_report_n_columns;

/* v in unit ("s", "USD", "W", "1", "bytes", or "" for a count) as the
 * report's tables show it: days, $k/$M, kW/MW, percent, GiB. */
void capsim_report_format(double v, const char *unit, char *buf, size_t n);

/* Design i's value in column c: 1 with *num or *text set (text points into
 * static or rep storage), 0 when absent. */
int capsim_report_cell(const capsim_report *rep, size_t i, size_t c, double *num,
		       const char **text);

#endif
