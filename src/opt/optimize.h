/* optimize.h - the parallelism optimiser (`capsim optimize`): every
 * consistent way to lay the scenario's model out on its cluster (TP, PP with
 * virtual stages and uneven end stages, CP, EP, ZeRO stage, micro-batch,
 * recomputation, the TP and EP overlaps), the global batch and the cluster
 * kept, ranked by a metric.
 *
 * Search: each candidate is first checked by the scenario's own parallelism
 * rules and by the analytic memory estimate (capsim_memory_estimate), which
 * cost microseconds; each refusal is counted under its reason. The rest get
 * a lower bound on their step time: the step's model FLOPs (recomputation
 * counted) per GPU at the GPU's dense peak, stretched by the pipeline's
 * bubble (pp - 1) / (micro-batches x virtual stages). They are simulated in
 * the order of their bounds (capsim_scenario_set_many, then capsim_eval
 * without the scaling reference and the Monte Carlo), and the search stops
 * when the next bound is no better than the top list's last: no simulated
 * step is faster than its bound, so what is left cannot enter the list.
 *
 * For a fixed cluster and global batch every metric offered is a monotone
 * function of the step time (time to train = steps x step time; the
 * interruptions and the price per GPU-hour do not depend on the layout), so
 * one bound serves them all. */
#ifndef CAPSIM_OPTIMIZE_H
#define CAPSIM_OPTIMIZE_H

#include <stddef.h>

#include "catalog.h"
#include "compare.h"
#include "diag.h"
#include "scenario.h"
#include "spec.h"

typedef enum {
	CAPSIM_OPT_TOKENS_PER_S,        /* tokens_per_s, higher is better */
	CAPSIM_OPT_TIME_TO_TRAIN,       /* time_to_train_s */
	CAPSIM_OPT_COST_PER_MTOK,       /* cost_per_million_tokens_usd (cost.acquire: the
					 * owned cluster's or the rented one's) */
	CAPSIM_OPT__COUNT
} capsim_opt_metric;

extern const char *const capsim_opt_metric_names[CAPSIM_OPT__COUNT];

/* one layout */
typedef struct capsim_opt_config {
	int tp, pp, virtual_stages, first_stage_layers, last_stage_layers;
	int cp, ep, dp, zero, micro_batch, recompute, tp_comm_overlap, ep_overlap;
} capsim_opt_config;

#define CAPSIM_OPT_MAX_SETS 16

/* c as --set edits (paths and values), into out; buf holds the values.
 * Returns how many. Every field is written, so that the edits make the
 * layout whatever the scenario had. */
size_t capsim_opt_config_sets(const capsim_opt_config *c, char buf[][32], capsim_set *out);

/* c in a line of words, as optimize lists it: "tp 8 pp 4 x5 cp 1 ep 1 dp 8
 * zero 1 mb 1 selective tp-ovl" (x5: virtual stages; "ends F/L": the first
 * and last stages' layers), into buf of n bytes. */
void capsim_opt_config_text(const capsim_opt_config *c, char *buf, size_t n);

/* c as the --set edits that give it to scenario s as loaded from its file
 * (capsim run SCENARIO --set ...): capsim_opt_config_sets; where s gives
 * its own dp, c's dp; and where s gives its own first- and
 * last-stage-layers and c splits the layers evenly, the even split written
 * out (no edit can say "not given"). buf and out hold CAPSIM_OPT_MAX_SETS.
 * Returns how many. */
size_t capsim_opt_paste_sets(const capsim_scenario *s, const capsim_opt_config *c,
			     char buf[][32], capsim_set *out);

/* 1 when capsim_opt_paste_sets gives c to s exactly, else 0: a layout
 * without pipeline stages on a scenario that gives end stages cannot be
 * said by edits (the file's end stages must go). */
int capsim_opt_pastable(const capsim_scenario *s, const capsim_opt_config *c);

/* what one simulated layout gave */
typedef struct capsim_opt_point {
	capsim_opt_config c;
	double bound_s;                 /* its step-time lower bound */
	double step_time_s, tokens_per_s, time_to_train_s, cost_per_mtok_usd, metric;
	double mfu, peak_mem_bytes, mem_capacity_bytes;
	int mem_close;                  /* memory verdict "close": kept, with a warning */
	/* the step's parts (result keys of the same names) */
	double compute_s, bubble_s, optimizer_s, host_s, data_stall_s;
	double exposed_tp_s, exposed_cp_s, exposed_pp_s, exposed_dp_s, exposed_ep_s;
	capsim_err_features f;          /* what drives its error (capsim_result_err_features) */
	/* against the best (capsim_opt_mark_ties): cmp_has 1 where a band reaches
	 * the step; tie_best 1 where capsim cannot tell it from the best;
	 * p_best: the probability that the best's measured step is the shorter */
	int cmp_has, tie_best;
	double p_best;
} capsim_opt_point;

typedef struct capsim_opt_reason {
	char text[200];                 /* the first such message, its numbers included */
	char kind[64];                  /* what it is counted under */
	long count;
} capsim_opt_reason;

#define CAPSIM_OPT_MAX_REASONS 32

/* Limits on the work of one search (docs/user-guide.md, "Limits on work").
 * The layouts of the space are counted before any is screened; a space of
 * more than max-layouts is refused (screening costs microseconds a layout,
 * and each kept one 72 bytes until the end). The layouts the screens keep
 * are the most the search can simulate (and what --exhaustive simulates):
 * each weighs one simulation per CAPSIM_OPT_SIM_GPUS GPUs of the cluster or
 * part (a simulation's cost grows with the fabric), and more than
 * max-simulations in all is refused as soon as the screens have kept that
 * many, before the first is simulated. A
 * simulation is itself bounded by the scenario's workload.task-limit and
 * workload.flow-limit. */
#define CAPSIM_OPT_MAX_LAYOUTS 200000L
#define CAPSIM_OPT_MAX_SIMULATIONS 50000L
#define CAPSIM_OPT_SIM_GPUS 16384L

/* the phases a search reports progress in */
enum { CAPSIM_OPT_SCREENING, CAPSIM_OPT_SIMULATING };

typedef struct capsim_opt_options {
	int metric;                     /* capsim_opt_metric */
	int top;                        /* layouts in the list (>= 1) */
	int threads;                    /* simulating at once (>= 1) */
	int exhaustive;                 /* simulate every candidate that fits (no bound) */
	long max_layouts;               /* 0: CAPSIM_OPT_MAX_LAYOUTS */
	long max_simulations;           /* 0: CAPSIM_OPT_MAX_SIMULATIONS */
	/* progress: called now and then from the calling thread, with the
	 * phase, what is done of it and its total (simulating: the most that
	 * may be simulated; the bound stops the search sooner); NULL none */
	void (*progress)(void *ctx, int phase, long done, long total);
	void *progress_ctx;
} capsim_opt_options;

typedef struct capsim_opt_result {
	long candidates;                /* layouts enumerated */
	long refused;                   /* by the parallelism rules */
	long no_fit;                    /* by the memory estimate */
	long bounded;                   /* skipped: their bound could not enter the list */
	long simulated;
	long failed;                    /* simulated, with an error or out of memory */
	long kept;                      /* through the screens: the most that may be simulated */
	capsim_opt_reason reasons[CAPSIM_OPT_MAX_REASONS];
	size_t n_reasons;
	capsim_opt_point *top;          /* best first; n_top <= options.top */
	size_t n_top;
	double elapsed_s;               /* wall time of the search */
	double batch_tokens;            /* tokens a step: global batch x seq-len */
	int marked;                     /* capsim_opt_mark_ties ran: cmp and each point's marks */
	capsim_err_cmp cmp;             /* the comparison's band (half80, group, paired) */
} capsim_opt_result;

/* 1 when the search enumerates layout c for s (every field as the search
 * sets it: dp the GPUs left, first and last stage layers 0 for an even
 * split), else 0. */
int capsim_opt_in_space(const capsim_scenario *s, const capsim_opt_config *c);

/* Whether the search keeps layout c of s for simulation: 0 when the
 * parallelism rules and the memory estimate let it through, else -1 with
 * the reason in why. c->dp must be the GPUs left by tp x pp x cp. s's own
 * dp and end stages are forgotten first, as the search does. */
int capsim_opt_screen(const capsim_scenario *s, const capsim_opt_config *c, char *why,
		      size_t n);

/* Layouts in s's search space (what the search would enumerate and screen),
 * counted without visiting them. */
long capsim_opt_space_size(const capsim_scenario *s);

/* What one simulation of s weighs against max-simulations: one for each
 * CAPSIM_OPT_SIM_GPUS GPUs of its cluster or part. */
long capsim_opt_sim_weight(const capsim_scenario *s);

/* Search s's layouts (s is not changed). Returns 0 with *r filled (free it
 * with capsim_opt_result_free); -1 when no layout fits and runs; -2 when
 * the search is past a limit, nothing simulated: past max_layouts,
 * r->candidates holds the space's size; past max_simulations, r->candidates
 * the layouts screened and r->kept those kept, one more than the limit
 * allows (screening stops there). The reason is added to d. */
int capsim_optimize(const capsim_scenario *s, const capsim_catalog *cat,
		    const capsim_opt_options *o, capsim_opt_result *r, capsim_diags *d);

void capsim_opt_result_free(capsim_opt_result *r);

/* The layouts of r's top list that capsim cannot tell apart from the best,
 * under the error model m: every layout of one search runs on the same GPU
 * and stack, so each is compared with the best on the difference (the
 * paired band of the step time, compare.h), and marked tie_best where the
 * ratio of its predicted step to the best's is inside the comparison's 80%
 * band. The best itself is marked (a tie with itself). Fills each point's
 * cmp_has, tie_best and p_best and r->cmp (the band of the comparison with
 * the runner-up, else of the best with itself); r->marked 1. m NULL:
 * nothing. */
void capsim_opt_mark_ties(capsim_opt_result *r, const capsim_err_model *m);

/* Tokens a step past which a global batch is far beyond what models are
 * trained with (an assumption, docs/model.md "Global batch"): 16M tokens,
 * four times Llama 2's 4M at 70B (arXiv 2307.09288, sec. 2.2) and five
 * times GPT-3's 3.2M at 175B (arXiv 2005.14165, table 2.1). */
#define CAPSIM_BATCH_TOKENS_WARN 16777216.0

#endif
