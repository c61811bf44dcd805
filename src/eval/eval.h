/* eval.h - the evaluation face: one call from a resolved scenario to one
 * result. Every door (run, scale, sweep, optimize, report, explore, verify,
 * validate, collective, bom) calls the face in process and nothing else of
 * the models: no door calls the fabric, the step, the facility, memory or
 * cost models itself (tests/scripts/structure.sh holds them to it). Nothing
 * else assembles a result.
 *
 * capsim_eval builds and owns the scenario's fabric, simulates the step, the
 * facility and the cost, and runs the reference replica for scaling
 * efficiency. It never writes to the scenario it is given: the runs it
 * derives (the burst job, the scaling reference, the throttled step) are
 * copies made through the scenario's edit path. It keeps no state between
 * calls: after one capsim_init() per process it is reentrant and may be
 * called from several threads at once, each with its own result.
 *
 * The result is a plain struct described by one table (capsim_result_keys):
 * key, unit, description, member, and when the key is present. Doors read
 * it by key (capsim_result_get, _string, _has) or through the accessors
 * below; text and JSON are written from that table (capsim_result_text,
 * _json), the store's rows too (capsim_result_values), and CSV through the
 * table module (util/table.h). */
#ifndef CAPSIM_EVAL_H
#define CAPSIM_EVAL_H

#include <stdio.h>

#include "collective.h"
#include "cost.h"
#include "diag.h"
#include "err.h"
#include "knobs.h"
#include "layout.h"
#include "spec.h"
#include "power.h"
#include "reliab.h"
#include "step.h"
#include "units.h"

/* Process-wide set-up, once, before any other call and before threads:
 * libxml2, the embedded schemas' loader, the --set path list, GSL's error
 * handler (off: every GSL status is checked where it is returned). Safe to
 * call again. */
void capsim_init(void);

typedef struct capsim_eval_opts {
	const capsim_knobs *knobs; /* NULL: capsim_knobs_fitted */
	int keep_schedule;         /* keep the schedule's tasks (capsim_result_trace) */
	int no_reference;          /* skip the reference run: no scaling efficiency */
	/* the error model whose bands the result carries (capsim_result_bands;
	 * borrowed, read only); NULL: no bands */
	const capsim_err_model *errors;
} capsim_eval_opts;

#define CAPSIM_RESULT_NOTES 8

/* One node group's share of the result: its GPUs' memory and peak. */
typedef struct capsim_group_result {
	char node[CAPSIM_ID_LEN], gpu[CAPSIM_ID_LEN];
	int nodes;
	long gpus;
	double peak_flop_per_s;   /* bf16 dense peak of one GPU (MFU's denominator) */
	double peak_mem_bytes, mem_capacity_bytes;
	int verdict;              /* capsim_mem_verdict */
	int fits;                 /* not refused: fits or close */
} capsim_group_result;

/* The error model's bands on a result's predictions (err.h, docs/model.md
 * "Error bands"): on is set where the result was evaluated with a model;
 * q[quantity] the band of that prediction for the result's features
 * (capsim_result_err_features), has[] 0 at a level the model has none. The
 * checkpoint's is the GPU generation's group and wider (no save path of the
 * tables is the scenario's own). */
enum {
	CAPSIM_BAND_CARRIED = 11 /* what the power band carries: 4 draws, 7 of the owner's money */
};
typedef struct capsim_result_bands {
	int on;
	capsim_err_band q[CAPSIM_ERR__QUANTITIES];
	/* The power band carried through what follows from the GPU's draw:
	 * carried[level][0] the values at the band's low GPU power, [1] at its
	 * high (capsim_power_gpu_moved, then the cost model again): the
	 * GPU's, the node's, the IT and the facility draw; the energy opex,
	 * the opex, the TCO, its present value, a busy GPU-hour's cost, the
	 * break-even utilisation and month (INFINITY where there is none).
	 * has_carried[level] 0 where the result has no power band. */
	int has_carried[CAPSIM_ERR__LEVELS];
	double carried[CAPSIM_ERR__LEVELS][2][CAPSIM_BAND_CARRIED];
	/* the step's paired band (capsim_err_diff_band): a ratio of two steps
	 * of one GPU and stack is within e^(+/-step_pair_q[level]) */
	int has_step_pair[CAPSIM_ERR__LEVELS];
	double step_pair_q[CAPSIM_ERR__LEVELS];
} capsim_result_bands;

typedef struct capsim_result {
	capsim_step step;          /* owned: capsim_result_free */
	capsim_power power;        /* the facility's view of the step (power.h) */
	int cooling_liquid;        /* the facility's cooling.kind: liquid */
	capsim_reliab reliab;      /* checkpoints, failures and goodput (reliab.h) */
	/* the fabric's switches, cables and leaf split as built (fabsize.h,
	 * all rails); has_fabric 0 without a switched fabric */
	int has_fabric;
	capsim_fabric_counts fabric;
	capsim_layout layout;      /* the floor and the cables by reach (layout.h) */
	/* money: owning, energy, the cloud offer, break-even, the burst plan
	 * and the design's cost to train (cost.h) */
	capsim_cost cost;
	/* cluster and job */
	long gpus;
	int nodes, dp, tp, pp, cp, ep, zero;
	int has_storage;
	char data_bound[32];       /* the loader's limit (capsim_load_bound_names) */
	double straggler;          /* the scenario's factor (1: none) */
	double global_batch;
	int n_groups;
	capsim_group_result group[CAPSIM_MAX_GROUPS];
	/* what follows from the step */
	double mfu;                /* model FLOPs / (sum of each group's bf16 peak x step) */
	double peak_mem_per_gpu_bytes; /* the largest of the groups' */
	int fits_in_memory;        /* no group's verdict is "does not fit" */
	char memory_verdict[16];   /* the worst group's: "fits", "close", "does not fit" */
	double mem_margin_bytes;   /* the smallest capacity less peak of the groups (< 0: short) */
	double mem_margin_ratio;   /* that margin over its group's capacity */
	/* what decides a close verdict: the framework's recipe, the memory
	 * outside the model (the first group's peak stage's context, NCCL
	 * buffers and allocator slack, or memory-reserve given) and whether a
	 * capacity is the datasheet's (no usable-memory in the catalog) */
	int framework;
	double mem_reserve_bytes;
	int capacity_from_datasheet;
	int has_scaling;
	double scaling_efficiency; /* tokens/s per GPU over the reference's */
	char scaling_reference[160]; /* what the reference was, in words */
	/* seq-len past the model's max-seq-len (capsim_seq_past_positions) */
	int seq_past_positions, seq_len, max_seq_len, learned_positions;
	char model[CAPSIM_ID_LEN];
	/* parts of the scenario that no model reads yet, by their paths */
	int n_not_modelled;
	const char *not_modelled[CAPSIM_RESULT_NOTES];
	capsim_result_bands bands; /* capsim_eval_opts.errors' bands; on 0 without */
} capsim_result;

/* Evaluate s. Returns 0 and fills *r (free it with capsim_result_free), or
 * -1 after adding the reason to d (*r then holds nothing to free). A job
 * that does not fit in memory is a result (memory_verdict "does not fit",
 * fits_in_memory 0), not an error. */
int capsim_eval(const capsim_scenario *s, const capsim_eval_opts *o, capsim_result *r,
		capsim_diags *d);

void capsim_result_free(capsim_result *r);

/* The features that drive the error of r's predictions, as the error model
 * groups its residuals (err.h): the scenario's GPU generation (ampere,
 * hopper, blackwell; "" for a GPU no validation table holds), its framework
 * and execution mode (megatron, torch-eager, torch-compiled, torch-graphs,
 * deepspeed), host-bound where the host stream adds a quarter of the step or
 * more, the profile (calibrated where the GPU carries one, else datasheet)
 * and the GPU count. r: evaluated from s. */
void capsim_result_err_features(const capsim_scenario *s, const capsim_result *r,
				capsim_err_features *f);

/* The bands of m for r's predictions (s the scenario r was evaluated from)
 * into r->bands, on set; what capsim_eval does when given opts.errors. */
void capsim_result_set_bands(const capsim_scenario *s, const capsim_err_model *m,
			     capsim_result *r);

/* Memory per GPU of node group g (0 .. s->n_groups - 1) without simulating
 * the step: each group's GPUs hold the same shards in their own memory
 * (memory.h; what `capsim validate` shows, and the step's own estimate). */
void capsim_eval_memory(const capsim_scenario *s, int g, capsim_memory *out);

/* What capsim_eval refuses before it runs that the scenario's loader cannot
 * see: an in-memory checkpoint the nodes' host memory cannot hold, or with
 * no peer (reliab.h, capsim_reliab_check). Adds each problem to d; returns
 * 0, or -1 after adding. */
int capsim_eval_check(const capsim_scenario *s, capsim_diags *d);

/* A lower bound on the step time capsim_eval finds for s, cheaply (no
 * fabric, no schedule; capsim_step_compute_bound in step.h says how), for
 * the optimiser's bounded search; 0 where none applies. knobs NULL: the
 * fitted ones. */
double capsim_eval_step_bound(const capsim_scenario *s, const capsim_knobs *knobs);

/* Model FLOPs per token of s's model at s's sequence length, the active
 * experts counted (ops.h, capsim_flops_per_token): MFU's numerator. */
double capsim_eval_flop_per_token(const capsim_scenario *s);

/* The bill of materials of s's cluster as r (capsim_eval of s) sizes and
 * prices it, into v[CAPSIM_BOM_MAX] (bom.h); returns how many lines. */
struct capsim_bom_line;
int capsim_result_bom(const capsim_scenario *s, const capsim_result *r,
		      struct capsim_bom_line *v);

/* ---- collectives: `capsim collective`, `capsim verify` and the golden cases ---- */

/* A scenario's cluster built once for many collectives (its fabric, with
 * the flow network idle between calls). Owned by the caller; the scenario
 * is borrowed and must outlive it. */
typedef struct capsim_cluster capsim_cluster;

/* Build s's cluster, or NULL after adding the reason to d. */
capsim_cluster *capsim_cluster_open(const capsim_scenario *s, capsim_diags *d);
void capsim_cluster_close(capsim_cluster *c);

/* The cluster's GPUs, and GPUs of one node. */
int capsim_cluster_gpus(const capsim_cluster *c);
int capsim_cluster_gpus_per_node(const capsim_cluster *c);

/* req's collective at req->bytes on c (req->ranks 0: every GPU), into *out
 * (its busiest link named). Returns 0, or -1 after adding the reason to d. */
struct capsim_coll_point;
int capsim_eval_collective(capsim_cluster *c, const capsim_coll_req *req,
			   struct capsim_coll_point *out, capsim_diags *d);

/* One collective at one size on the scenario's cluster. */
typedef struct capsim_coll_point {
	int op;                 /* capsim_coll */
	double bytes;           /* nccl-tests' size */
	int ranks, nodes;
	capsim_coll_result r;
	char busiest_link[96];  /* the link busy longest, or "" */
} capsim_coll_point;

/* Run req's collective at each of n sizes on one fabric built from s
 * (req->ranks 0: every GPU; req->bytes is ignored). Returns 0 with out[i]
 * filled, or -1 after adding the reason to d. */
int capsim_eval_collectives(const capsim_scenario *s, const capsim_coll_req *req,
			    const double *bytes, size_t n, capsim_coll_point *out,
			    capsim_diags *d);

/* nccl-tests' columns of a collective, in JSON: op, bytes, ranks, algorithm,
 * protocol, channels, time_s, algbw_gb_per_s, busbw_gb_per_s, latency_s and,
 * where NCCL's own model applies, nccl_model_time_s. */
struct json_t *capsim_coll_point_json(const capsim_coll_point *p);

/* ---- the result table ---- */

typedef enum {
	CAPSIM_RK_REAL,  /* double */
	CAPSIM_RK_INT,   /* int */
	CAPSIM_RK_LONG,  /* long */
	CAPSIM_RK_BOOL,  /* int 0/1 */
	CAPSIM_RK_TEXT,  /* char[] */
	CAPSIM_RK_JSON   /* structured: written by a function, JSON only */
} capsim_rkind;

struct json_t;

/* Which band a key follows, and how (docs/model.md, "Error bands on results"):
 * first order, each a monotone map of one band's ends; ENERGY combines the
 * step's and the power's log half-widths in quadrature as independent. */
typedef enum capsim_band_map {
	CAPSIM_BAND_NONE,        /* not a prediction the error model covers */
	CAPSIM_BAND_STEP,        /* in proportion to the step time */
	CAPSIM_BAND_PER_STEP,    /* in inverse proportion (tokens/s, MFU): ends swapped */
	CAPSIM_BAND_MEMORY,      /* in proportion to the peak memory */
	CAPSIM_BAND_MARGIN,      /* capacity less peak x the memory band (ends swapped) */
	CAPSIM_BAND_MARGIN_RATIO, /* that over the capacity */
	CAPSIM_BAND_POWER,       /* the GPU's draw moved by the power band (at most its limit) */
	CAPSIM_BAND_ENERGY,      /* the facility's draw (as POWER) x step time */
	CAPSIM_BAND_OWNING,      /* the owner's money moved by the power band (cost model again) */
	CAPSIM_BAND_CHECKPOINT,  /* in proportion to a checkpoint's time */
	CAPSIM_BAND_CLOUD_COST,  /* the cloud's GPUs and storage with the step, egress fixed */
	CAPSIM_BAND_ONPREM_COST, /* a busy GPU-hour's cost (as OWNING) x the step */
	CAPSIM_BAND_STEP_PAIR,   /* a ratio of two steps of one family: the paired band */
	CAPSIM_BAND_COST,        /* the design's own: ONPREM_COST, or the cloud's */
	CAPSIM_BAND__MAPS
} capsim_band_map;
/* "", "step", "1/step", "memory", "memory", "memory", "power", "power x step",
 * "checkpoint", "step", "step": the quantity a map follows, in words */
extern const char *const capsim_band_map_names[CAPSIM_BAND__MAPS];

typedef struct capsim_result_key {
	const char *key;     /* JSON/CSV name, snake_case with the unit suffix */
	capsim_rkind kind;
	capsim_dim dim;      /* for text: how the value is written */
	size_t offset;       /* into capsim_result */
	const char *unit;    /* "s", "bytes", "1" (a ratio), "" (a count or text) */
	const char *label;   /* text output label (indented by depth); NULL: not in text */
	int depth;           /* 0 heading line, 1 a part of the one above */
	const char *doc;     /* one line for people (docs/user-guide.md) */
	/* when the key is present; NULL: always */
	int (*present)(const capsim_result *r);
	/* when its text line is shown (a present key may be left out of the
	 * text where it means nothing, e.g. CP time without CP); NULL: always */
	int (*in_text)(const capsim_result *r);
	/* CAPSIM_RK_JSON: the value */
	struct json_t *(*json)(const capsim_result *r);
	/* text: words after the value ("(stage 3, 40 micro-batches)"), or the
	 * whole line for a JSON key that has one; NULL: none */
	void (*note)(const capsim_result *r, char *buf, size_t n);
	capsim_band_map band; /* the band it follows; NONE: none */
	/* a banded key's ends' names: K_lo, K_hi (80%), K_lo95, K_hi95 */
	const char *ends[2 * CAPSIM_ERR__LEVELS];
} capsim_result_key;

extern const capsim_result_key capsim_result_keys[];
extern const size_t capsim_result_n_keys;

/* The key named name, or NULL. */
const capsim_result_key *capsim_result_key_find(const char *name);

/* The banded key one of whose ends (capsim_result_key.ends) is named name,
 * with *end that end's index, or NULL. */
const capsim_result_key *capsim_result_end_find(const char *name, int *end);

/* Whether key k has a value in r. */
int capsim_result_has(const capsim_result *r, const capsim_result_key *k);

/* The value of a numeric key (REAL, INT, BOOL) as a double. */
double capsim_result_number(const capsim_result *r, const capsim_result_key *k);

/* The value of the numeric key named key in r, or absent where the table
 * has no such key or r no value of it. */
double capsim_result_get(const capsim_result *r, const char *key, double absent);

/* The value of the text key named key in r (pointing into r), or NULL where
 * the table has no such text key or r no value of it. */
const char *capsim_result_string(const capsim_result *r, const char *key);

/* Key k's band in r at level (CAPSIM_ERR_80, _95): 1 with *lo <= *hi, or 0
 * where r has no bands, k follows none, or the model has none there. */
int capsim_result_band(const capsim_result *r, const capsim_result_key *k, int level,
		       double *lo, double *hi);

/* The band of a collective's bus bandwidth over ranks GPUs of s's cluster
 * (nccl-tests' stack, the scenario's GPU generation and profile): 0, or -1
 * where m has none (b: has[] all 0). */
int capsim_eval_busbw_band(const capsim_scenario *s, const capsim_err_model *m, int ranks,
			   capsim_err_band *b);

/* ---- what the doors ask of a result beyond one key ---- */

/* Whether the design rents its GPUs (cost.acquire rent). */
int capsim_result_rented(const capsim_result *r);

/* The design's wall time to train as it gets its GPUs: the cloud run's when
 * it rents (the network penalty and a spot offer's reclaims counted), else
 * the cluster's with failures and checkpoints (goodput), else the step's. */
double capsim_result_wall_to_train_s(const capsim_result *r);

/* The goodput r's checkpoints give under r's job MTTF at each of n
 * checkpoint intervals interval_s[i] (seconds; reliab.h's model, s the
 * scenario r was evaluated from), into goodput[i]. Returns how many were
 * given: 0 where r has no checkpoint storage or no failures. */
size_t capsim_result_goodput_at(const capsim_scenario *s, const capsim_result *r,
				const double *interval_s, size_t n, double *goodput);

/* Add every present key of r to the JSON object o, in table order; with
 * bands (r->bands.on), each banded key followed by its ends
 * (capsim_result_key.ends) and a "bands" object naming each quantity's
 * levels, factors, group and n. */
void capsim_result_json(const capsim_result *r, struct json_t *o);

/* The store's rows (results.h) of r's present scalar keys, in table order:
 * numbers with the table's unit, texts as text, a banded key's ends after
 * it; n must hold capsim_result_n_values. The strings point into r and the
 * table. Returns how many were written. */
struct capsim_result_value;
size_t capsim_result_values(const capsim_result *r, struct capsim_result_value *out,
			    size_t n);

/* A bound on the rows capsim_result_values writes: every key and four ends
 * of each (five times capsim_result_n_keys). */
extern const size_t capsim_result_n_values;

/* The people's report: every key with a label, present in r, one line each;
 * with bands, a banded value is followed by its 80% band ("1.23 s
 * (1.14-1.33)"), and one line first says the level and where it comes from. */
int capsim_result_text(const capsim_result *r, FILE *f);

/* The step's timeline as Chrome trace-event JSON (needs keep_schedule), at
 * most max_bytes of it: 0, -1 on a write error, -2 when the trace could be
 * larger (nothing written; capsim_result_trace_bound says how large). */
int capsim_result_trace(const capsim_result *r, FILE *f, double max_bytes);
double capsim_result_trace_bound(const capsim_result *r);

#endif
