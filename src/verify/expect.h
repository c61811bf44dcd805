/* expect.h - monitoring baselines of a cluster as deployed: what capsim
 * expects nccl-tests to measure on the scenario's cluster (bus bandwidth per
 * collective, size and rank count), the step time of the scenario's workload
 * and the power its GPUs and nodes draw through it, each with the error
 * model's 80% band where it has one, and a threshold: the fraction of the
 * expected value below which (above, for the step time) an operator alerts.
 *
 * The same baselines are written three ways (Prometheus alerting rules,
 * nccl-tests-style tables, JSON) and read back from the JSON or the rules
 * file, so that `capsim verify --expect` checks a measured nccl-tests log
 * against exactly the thresholds that the monitoring alerts on.
 *
 * Bandwidths are GB/s (1e9 B/s, as nccl-tests prints them), sizes bytes,
 * times seconds, power watts. */
#ifndef CAPSIM_EXPECT_H
#define CAPSIM_EXPECT_H

#include <stddef.h>
#include <stdio.h>

#include "diag.h"
#include "eval.h"
#include "nccltests.h"
#include "scenario.h"

/* What a baseline row measures. */
typedef enum capsim_expect_kind {
	CAPSIM_EXPECT_BUSBW,     /* nccl-tests' out-of-place bus bandwidth, GB/s */
	CAPSIM_EXPECT_STEP,      /* the training step, s (alert above) */
	CAPSIM_EXPECT_GPU_POWER, /* one GPU's power through the step, W */
	CAPSIM_EXPECT_NODE_POWER, /* one node's power through the step, W */
	CAPSIM_EXPECT__KINDS
} capsim_expect_kind;

/* "busbw", "step_time", "gpu_power", "node_power": the JSON's and the
 * rules' `capsim_check` label */
extern const char *const capsim_expect_kind_names[CAPSIM_EXPECT__KINDS];

/* The metric each kind is compared against in the rules: nccl_tests_busbw_gbps
 * and training_step_seconds (named by capsim: no standard exporter has them),
 * DCGM_FI_DEV_POWER_USAGE (dcgm-exporter) and ipmi_dcmi_power_consumption_watts
 * (the Prometheus community's ipmi_exporter). */
extern const char *const capsim_expect_metric_names[CAPSIM_EXPECT__KINDS];

/* One baseline. op, ranks and bytes only for BUSBW (op a capsim_coll). */
typedef struct capsim_expect_row {
	int kind;
	int op, ranks;
	double bytes;
	double expected;       /* -1: not known (rules without the annotation) */
	int has_band;
	double lo, hi;         /* the 80% band of expected, where has_band */
	double threshold;      /* BUSBW and power: fraction x expected; STEP:
				* expected / fraction */
	int algo, proto, channels; /* BUSBW: what the model chose; -1 when read back */
	double time_s, algbw;  /* BUSBW: the model's time (s) and algbw (GB/s); 0 when read back */
} capsim_expect_row;

#define CAPSIM_EXPECT_NOTES 16

/* A set of baselines: every row of one scenario at one threshold. */
typedef struct capsim_expect {
	char scenario[256];    /* the scenario's name */
	char file[1024];       /* its file ("" when read back without one) */
	char gpu[64];          /* the GPU's catalog id */
	int nodes, gpus_per_node;
	double fraction;       /* the threshold as a fraction of expected (0.8) */
	capsim_expect_row *rows;
	size_t n, cap;
	/* what could not be predicted ("alltoall on 1 rank: ..."), in words */
	char notes[CAPSIM_EXPECT_NOTES][256];
	int n_notes;
	int n_more;            /* notes past the first CAPSIM_EXPECT_NOTES, counted */
} capsim_expect;

/* What to compute. ops[op] set: predict that collective; sizes and ranks as
 * given (n_ranks 0: one node's GPUs, one NVLink domain's where a rack-scale
 * domain spans nodes, and every GPU, each count once). */
typedef struct capsim_expect_opts {
	double fraction;       /* (0, 1]: the threshold */
	int ops[CAPSIM_COLL__COUNT];
	const double *sizes;
	size_t n_sizes;
	const int *ranks;
	size_t n_ranks;
	int workload;          /* also the step time and power (capsim_eval) */
} capsim_expect_opts;

/* The ops a monitoring baseline has by default: all_reduce, all_gather,
 * reduce_scatter, alltoall, broadcast and sendrecv, set in ops[]. */
void capsim_expect_default_ops(int ops[CAPSIM_COLL__COUNT]);

/* nccl-tests' documented sweep (its README: -b 8 -e 128M -f 2): 8 B to 128 MiB,
 * doubling, into sizes (room for 25); returns how many. */
size_t capsim_expect_default_sizes(double *sizes, size_t max);

/* Compute the baselines of s (loaded, its --set applied) into *out (zeroed
 * first; free with capsim_expect_free, also after a failure): each op at each
 * rank count and size (a combination the collective model refuses is left
 * out with a note saying why), then with o->workload the step time, the GPU's
 * and the node's power from capsim_eval. m (NULL: no bands) gives the 80%
 * bands. A rank count above the cluster's GPUs, or a step that cannot be
 * evaluated, goes to d: returns -1; else 0. */
int capsim_expect_build(const capsim_scenario *s, const capsim_err_model *m,
			const capsim_expect_opts *o, capsim_expect *out, capsim_diags *d);

void capsim_expect_free(capsim_expect *e);

/* The threshold of a row from its expected value and fraction. */
double capsim_expect_threshold(int kind, double expected, double fraction);

/* ---- writing (expect_io.c) ---- */

/* The baselines as one JSON object (the caller owns it): scenario, file, gpu,
 * nodes, gpus_per_node, threshold (the fraction), metrics (each kind's metric
 * name) and rows: each with check (the kind's name), metric, op (nccl-tests'
 * name), ranks, bytes, expected, expected_lo, expected_hi (where banded),
 * threshold, unit, and for collectives algorithm, protocol, channels; notes. */
struct json_t *capsim_expect_json(const capsim_expect *e);

/* Prometheus alerting rules (YAML): one group of the collectives' rules and
 * one of the workload's, each rule an alert with its expr (metric, labels and
 * the threshold), for, labels (severity, capsim_check, op, ranks, bytes) and
 * annotations (summary, description with the expected value and its band).
 * Returns 0, or -1 when f could not be written. */
int capsim_expect_write_rules(const capsim_expect *e, FILE *f);

/* nccl-tests-style tables: for each op and rank count, `capsim collective
 * --sweep`'s columns with the band's ends and the threshold after them; then
 * the workload's rows. Returns 0, or -1 when f could not be written. */
int capsim_expect_write_tables(const capsim_expect *e, FILE *f);

/* ---- reading back ---- */

/* Read baselines from path: the JSON written by capsim_expect_json or the
 * rules written by capsim_expect_write_rules (told apart by the first
 * character that is not white space: '{' is JSON). Every row's threshold is
 * the file's own (for rules, the number its expr compares with). Each fault
 * adds "FILE[:LINE]: FIELD: expected X, found Y" to d: returns -1; else 0.
 * Free with capsim_expect_free. */
int capsim_expect_read(const char *path, capsim_expect *out, capsim_diags *d);

/* The same for len bytes of text in memory (a NUL among them is refused);
 * name is used in messages. */
int capsim_expect_read_memory(const char *text, size_t len, const char *name,
			      capsim_expect *out, capsim_diags *d);

/* One measured row of a log set against its threshold. */
typedef struct capsim_expect_check {
	double bytes;
	long line;
	double measured;       /* out-of-place busbw, GB/s */
	const capsim_expect_row *row; /* its baseline, or NULL: none for it */
	int pass;              /* measured >= threshold (1 when row is NULL) */
} capsim_expect_check;

typedef struct capsim_expect_verdict {
	int op, ranks;
	capsim_expect_check *checks; /* one per row of the log */
	size_t n_checks, n_checked, n_failed;
	int pass;              /* every checked row passes and one was checked */
} capsim_expect_verdict;

/* Set each row of log against the BUSBW baseline of the log's op, rank count
 * and size. Returns 0 (free out with capsim_expect_verdict_free). */
int capsim_expect_check_log(const capsim_expect *e, const capsim_nccltests_log *log,
			    capsim_expect_verdict *out);
void capsim_expect_verdict_free(capsim_expect_verdict *v);

#endif
