/* optimize.c - the parallelism optimiser; see optimize.h. */
#include "optimize.h"

#include <assert.h>
#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "eval.h"
#include "scenario.h"
#include "xalloc.h"

const char *const capsim_opt_metric_names[CAPSIM_OPT__COUNT] = {
	"tokens_per_s", "time_to_train_s", "cost_per_million_tokens_usd"
};

size_t capsim_opt_config_sets(const capsim_opt_config *c, char buf[][32], capsim_set *out)
{
	static const char *const recomputes[] = { "none", "selective", "full" };
	static const char *const zeros[] = { "0", "1", "2", "3" };
	size_t n = 0;
#define SET_INT(path, v) \
	(snprintf(buf[n], 32, "%d", (v)), out[n] = (capsim_set){ (path), buf[n] }, n++)
#define SET_TEXT(path, v) (out[n] = (capsim_set){ (path), (v) }, n++)
	SET_INT("workload.parallelism.tp", c->tp);
	SET_INT("workload.parallelism.pp", c->pp);
	SET_INT("workload.parallelism.cp", c->cp);
	SET_INT("workload.parallelism.ep", c->ep);
	SET_INT("workload.parallelism.virtual-stages", c->virtual_stages);
	SET_TEXT("workload.parallelism.schedule", c->virtual_stages > 1 ? "1f1b-interleaved" : "1f1b");
	if (c->first_stage_layers)
		SET_INT("workload.parallelism.first-stage-layers", c->first_stage_layers);
	if (c->last_stage_layers)
		SET_INT("workload.parallelism.last-stage-layers", c->last_stage_layers);
	SET_TEXT("workload.parallelism.zero", zeros[c->zero]);
	SET_INT("workload.micro-batch", c->micro_batch);
	SET_TEXT("workload.parallelism.recompute", recomputes[c->recompute]);
	SET_TEXT("workload.parallelism.sequence-parallel", c->tp > 1 ? "on" : "off");
	SET_TEXT("workload.parallelism.tp-comm-overlap", c->tp_comm_overlap ? "on" : "off");
	SET_TEXT("workload.parallelism.ep-overlap", c->ep_overlap ? "on" : "off");
#undef SET_INT
#undef SET_TEXT
	return n;
}

void capsim_opt_config_text(const capsim_opt_config *c, char *buf, size_t n)
{
	static const char *const recomputes[] = { "none", "selective", "full" };
	char v[16] = "", ends[32] = "";
	if (c->virtual_stages > 1)
		snprintf(v, sizeof v, " x%d", c->virtual_stages);
	if (c->first_stage_layers)
		snprintf(ends, sizeof ends, " ends %d/%d", c->first_stage_layers, c->last_stage_layers);
	snprintf(buf, n, "tp %d pp %d%s%s cp %d ep %d dp %d zero %d mb %d %s%s%s", c->tp, c->pp, v,
		 ends, c->cp, c->ep, c->dp, c->zero, c->micro_batch, recomputes[c->recompute],
		 c->tp_comm_overlap ? " tp-ovl" : "", c->ep_overlap ? " ep-ovl" : "");
}

size_t capsim_opt_paste_sets(const capsim_scenario *s, const capsim_opt_config *c,
			     char buf[][32], capsim_set *out)
{
	size_t n = capsim_opt_config_sets(c, buf, out);
	if (s->dp_given) { /* the scenario's own dp, replaced by the layout's */
		snprintf(buf[n], 32, "%d", c->dp);
		out[n] = (capsim_set){ "workload.parallelism.dp", buf[n] };
		n++;
	}
	int given = s->first_stage_layers || s->last_stage_layers;
	if (!given || c->first_stage_layers || c->pp < 2)
		return n;
	/* the scenario's own end stages, replaced by the even split */
	int even = s->model.layers / c->pp;
	snprintf(buf[n], 32, "%d", even);
	out[n] = (capsim_set){ "workload.parallelism.first-stage-layers", buf[n] };
	n++;
	out[n] = (capsim_set){ "workload.parallelism.last-stage-layers", buf[n - 1] };
	return n + 1;
}

int capsim_opt_pastable(const capsim_scenario *s, const capsim_opt_config *c)
{
	return !(s->first_stage_layers || s->last_stage_layers) || c->pp >= 2;
}

/* ---- the reasons counted ----------------------------------------------------------- */

typedef struct {
	capsim_opt_reason v[CAPSIM_OPT_MAX_REASONS];
	size_t n;
	long other;                    /* beyond the table */
} reasons;

/* msg with each run of digits as N: what messages of one kind share */
static void kind_of(const char *msg, char *out, size_t n)
{
	size_t k = 0;
	for (const char *p = msg; *p && k + 2 < n; p++) {
		if (isdigit((unsigned char)*p)) {
			out[k++] = 'N';
			while (isdigit((unsigned char)p[1]) || p[1] == '.')
				p++;
		} else {
			out[k++] = *p;
		}
	}
	out[k < n ? k : n - 1] = '\0';
}

static void count_reason(reasons *r, const char *msg)
{
	char kind[64];
	kind_of(msg, kind, sizeof kind);
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->v[i].kind, kind) == 0) {
			r->v[i].count++;
			return;
		}
	if (r->n == CAPSIM_OPT_MAX_REASONS) {
		r->other++;
		return;
	}
	capsim_opt_reason *e = &r->v[r->n++];
	capsim_strlcpy(e->kind, kind, sizeof e->kind);
	capsim_strlcpy(e->text, msg, sizeof e->text);
	e->count = 1;
}

/* ---- candidates ------------------------------------------------------------------------ */

typedef struct {
	capsim_opt_config c;
	double bound_s;
	long order;                    /* place in the enumeration: ties go to the first */
} candidate;

typedef struct {
	candidate *v;
	size_t n, cap;
} candidates;

typedef struct {
	const capsim_scenario *base;
	const capsim_opt_options *o;
	capsim_scenario *scratch;      /* the base with a candidate's fields set directly */
	candidates out;
	reasons why;
	long enumerated, refused, no_fit;
	long space;                    /* layouts to enumerate */
	long max_kept;                 /* kept layouts max-simulations allows */
	int over;                      /* more were kept: screen no further */
	double flop_per_gpu;           /* a step's model FLOPs per GPU, no recomputation */
	double peak;                   /* the fastest GPU's dense peak in the job's dtype */
	int bound_ok;                  /* the bound applies (one node type) */
} search;

/* the candidate's fields on the scratch scenario, dp and schedule derived */
static void apply(capsim_scenario *s, const capsim_opt_config *c)
{
	const capsim_scenario_layout l = {
		.tp = c->tp, .pp = c->pp, .cp = c->cp, .ep = c->ep, .dp = c->dp,
		.virtual_stages = c->virtual_stages, .first_stage_layers = c->first_stage_layers,
		.last_stage_layers = c->last_stage_layers, .zero = c->zero,
		.micro_batch = c->micro_batch, .recompute = c->recompute,
		.tp_comm_overlap = c->tp_comm_overlap, .ep_overlap = c->ep_overlap,
	};
	capsim_scenario_screen_layout(s, &l);
}

/* no simulated step is shorter: the model FLOPs at the dense peak, with the
 * forward again under full recomputation, and the pipeline's bubble */
static double bound(const search *x, const capsim_scenario *s, const capsim_opt_config *c)
{
	if (!x->bound_ok)
		return 0.0;
	double m = x->base->global_batch / ((double)c->micro_batch * c->dp);
	double v = c->virtual_stages;
	double flop = x->flop_per_gpu * (c->recompute == CAPSIM_RECOMPUTE_FULL ? 4.0 / 3.0 : 1.0);
	double peak = flop / x->peak * (1.0 + (c->pp - 1) / (m * v));
	/* the busiest stage's kernels (step.h): the tighter, as a rule */
	double kernels = capsim_eval_step_bound(s, NULL);
	return kernels > peak ? kernels : peak;
}

/* scratch with c applied: 0 kept, 1 refused by the rules, 2 out of memory
 * (the reason in why) */
static int screen(capsim_scenario *scratch, const capsim_opt_config *c, char *why, size_t n)
{
	apply(scratch, c);
	capsim_diags d = { 0 };
	if (capsim_scenario_check_parallelism(scratch, &d) < 0) {
		capsim_strlcpy(why, d.v[0].msg, n);
		capsim_diags_free(&d);
		return 1;
	}
	/* every node type's GPUs must hold their share (as the step checks); a
	 * verdict of "close" fits at the estimate, within the memory model's error,
	 * and is kept */
	for (int i = 0; i < scratch->n_groups; i++) {
		capsim_memory mem;
		capsim_eval_memory(scratch, i, &mem);
		if (mem.fits)
			continue;
		if (scratch->n_groups == 1) {
			snprintf(why, n, "memory: needs %.1f GiB a GPU of %.1f GiB (estimate)",
				 mem.peak.total_bytes / 1073741824.0, mem.capacity_bytes / 1073741824.0);
		} else {
			capsim_group_view v;
			capsim_scenario_group(scratch, i, &v);
			snprintf(why, n, "memory: the %s GPUs need %.1f GiB of %.1f GiB (estimate)",
				 v.gpu->e.id, mem.peak.total_bytes / 1073741824.0,
				 mem.capacity_bytes / 1073741824.0);
		}
		return 2;
	}
	return 0;
}

int capsim_opt_screen(const capsim_scenario *s, const capsim_opt_config *c, char *why,
		      size_t n)
{
	capsim_scenario *t = capsim_xmalloc(sizeof *t);
	*t = *s;
	capsim_scenario_free_layout(t); /* as the search screens */
	int rc = screen(t, c, why, n);
	free(t);
	return rc ? -1 : 0;
}

static void consider(void *ctx, const capsim_opt_config *c)
{
	search *x = ctx;
	if (x->over)
		return;
	if (x->o->progress && x->enumerated % 1024 == 0)
		x->o->progress(x->o->progress_ctx, CAPSIM_OPT_SCREENING, x->enumerated, x->space);
	x->enumerated++;
	capsim_scenario *s = x->scratch;
	char why[200];
	int rc = screen(s, c, why, sizeof why);
	if (rc) {
		if (rc == 1)
			x->refused++;
		else
			x->no_fit++;
		count_reason(&x->why, why);
		return;
	}
	if (x->out.n == x->out.cap) {
		x->out.cap = x->out.cap ? 2 * x->out.cap : 1024;
		x->out.v = capsim_xrealloc(x->out.v, x->out.cap * sizeof *x->out.v);
	}
	x->out.v[x->out.n++] = (candidate){ *c, bound(x, s, c), x->enumerated };
	x->over = (long)x->out.n > x->max_kept;
}

static int divides(long a, long b)
{
	return a > 0 && b % a == 0;
}

/* first and last stages one layer short of the middle ones (Megatron's
 * --decoder-first/last-pipeline-num-layers, for the embedding and the LM
 * head), where that shares the layers out: 1 with *first, *last set */
static int uneven_ends(int layers, int pp, int v, int *first, int *last)
{
	if (pp < 3)
		return 0;
	for (int k = (layers + pp - 1) / pp; k <= layers; k++) {
		int rest = layers - (pp - 2) * k;
		if (rest < 2)
			return 0;
		if (rest > 2 * k || rest % 2)
			continue;
		*first = *last = rest / 2;
		if (*first == k || (v > 1 && (*first % v || k % v)))
			return 0;
		return 1;
	}
	return 0;
}

/* every layout of s's model on its cluster, in a fixed order, to visit;
 * with visit NULL, *count gets how many there are (the innermost loops
 * counted, not run: the count costs no more than the loops above them) */
typedef void (*visit_fn)(void *ctx, const capsim_opt_config *c);

static void enumerate(const capsim_scenario *s, visit_fn visit, void *ctx, long *count)
{
	const capsim_model *m = &s->model;
	long gpus = capsim_scenario_gpus(s);
	int domain = s->node.gpus;
	static const int mbs[] = { 1, 2, 4, 8, 16 };
	int moe = m->moe_experts > 0;
	for (int tp = 1; tp <= domain && tp <= m->heads; tp++) {
		if (!divides(tp, m->heads) || !divides(tp, gpus))
			continue;
		for (int pp = 1; pp <= m->layers && pp <= gpus / tp; pp++) {
			if (!divides((long)tp * pp, gpus))
				continue;
			for (int cp = 1; cp <= 64 && (long)tp * pp * cp <= gpus; cp *= 2) {
				if (!divides((long)tp * pp * cp, gpus) || (cp > 1 && s->seq_len % (2 * cp)))
					continue;
				long dp = gpus / ((long)tp * pp * cp);
				/* virtual stages: 1, then every split of a stage's layers */
				for (int v = 1; v <= 16; v++) {
					if (v > 1 && (pp < 2 || m->layers % (pp * v)))
						continue;
					for (int ends = 0; ends < 2; ends++) {
						int first = 0, last = 0;
						if (ends && !uneven_ends(m->layers, pp, v, &first, &last))
							continue;
						if (!ends && m->layers % (pp * v) && pp > 1)
							continue;
						for (int ep = 1; ep <= (moe ? m->moe_experts : 1); ep++) {
							if (moe && (!divides(ep, m->moe_experts) ||
								    !divides(ep, dp * cp)))
								continue;
							if (!visit) {
								*count += 4L * (long)(sizeof mbs / sizeof mbs[0]) * 3 *
									  (tp > 1 ? 2 : 1) *
									  (moe && ep > 1 ? 2 : 1);
								continue;
							}
							for (int z = 0; z < 4; z++)
							for (size_t b = 0; b < sizeof mbs / sizeof mbs[0]; b++)
							for (int rc = 0; rc < 3; rc++)
							for (int ov = 0; ov < (tp > 1 ? 2 : 1); ov++)
							for (int eo = 0; eo < (moe && ep > 1 ? 2 : 1); eo++) {
								capsim_opt_config c = {
									.tp = tp, .pp = pp, .virtual_stages = v,
									.first_stage_layers = first,
									.last_stage_layers = last, .cp = cp,
									.ep = ep, .dp = (int)dp, .zero = z,
									.micro_batch = mbs[b], .recompute = rc,
									.tp_comm_overlap = ov, .ep_overlap = eo
								};
								visit(ctx, &c);
							}
						}
					}
				}
			}
		}
	}
}

typedef struct {
	const capsim_opt_config *want;
	int found;
} finding;

static void compare(void *ctx, const capsim_opt_config *c)
{
	finding *f = ctx;
	if (memcmp(c, f->want, sizeof *c) == 0)
		f->found = 1;
}

int capsim_opt_in_space(const capsim_scenario *s, const capsim_opt_config *c)
{
	finding f = { c, 0 };
	enumerate(s, compare, &f, NULL);
	return f.found;
}

long capsim_opt_space_size(const capsim_scenario *s)
{
	long n = 0;
	enumerate(s, NULL, NULL, &n);
	return n;
}

long capsim_opt_sim_weight(const capsim_scenario *s)
{
	long gpus = capsim_scenario_gpus(s);
	return gpus > CAPSIM_OPT_SIM_GPUS ? (gpus + CAPSIM_OPT_SIM_GPUS - 1) / CAPSIM_OPT_SIM_GPUS : 1;
}

static int by_bound(const void *a, const void *b)
{
	const candidate *x = a, *y = b;
	if (x->bound_s != y->bound_s)
		return x->bound_s < y->bound_s ? -1 : 1;
	return (x->order > y->order) - (x->order < y->order);
}

/* ---- simulation ------------------------------------------------------------------------- */

typedef struct {
	const capsim_scenario *base;
	const capsim_catalog *cat;
	const capsim_opt_options *o;
	const candidates *cands;
	pthread_mutex_t mu;
	size_t next;
	long bounded, simulated, failed;
	reasons why;
	capsim_opt_point *top;         /* sorted, n_top of o->top */
	long *top_order;
	size_t n_top;
	long done;
} pool;

static double metric_of(const capsim_opt_point *p, int metric)
{
	switch (metric) {
	case CAPSIM_OPT_TOKENS_PER_S: return -p->tokens_per_s;
	case CAPSIM_OPT_TIME_TO_TRAIN: return p->time_to_train_s;
	default: return p->cost_per_mtok_usd;
	}
}

static void fill_point(capsim_opt_point *p, const capsim_scenario *s, const capsim_result *r,
		       int metric)
{
	capsim_result_err_features(s, r, &p->f);
	p->step_time_s = capsim_result_get(r, "step_time_s", 0.0);
	p->tokens_per_s = capsim_result_get(r, "tokens_per_s", 0.0);
	p->time_to_train_s = capsim_result_get(r, "time_to_train_s", 0.0);
	p->cost_per_mtok_usd = capsim_result_get(r, "cost_per_million_tokens_usd", NAN);
	p->mfu = capsim_result_get(r, "mfu", 0.0);
	p->peak_mem_bytes = capsim_result_get(r, "peak_mem_per_gpu_bytes", 0.0);
	p->mem_capacity_bytes = r->group[0].mem_capacity_bytes;
	p->mem_close = strcmp(r->memory_verdict, "close") == 0;
	p->compute_s = capsim_result_get(r, "compute_s", 0.0);
	p->bubble_s = capsim_result_get(r, "bubble_s", 0.0);
	p->optimizer_s = capsim_result_get(r, "optimizer_s", 0.0);
	p->host_s = capsim_result_get(r, "host_s", 0.0);
	p->data_stall_s = capsim_result_get(r, "data_stall_s", 0.0);
	p->exposed_tp_s = capsim_result_get(r, "exposed_comm_tp_s", 0.0);
	p->exposed_cp_s = capsim_result_get(r, "exposed_comm_cp_s", 0.0);
	p->exposed_pp_s = capsim_result_get(r, "exposed_comm_pp_s", 0.0);
	p->exposed_dp_s = capsim_result_get(r, "exposed_comm_dp_s", 0.0);
	p->exposed_ep_s = capsim_result_get(r, "exposed_comm_ep_s", 0.0);
	p->metric = metric == CAPSIM_OPT_TOKENS_PER_S ? p->tokens_per_s : metric_of(p, metric);
}

/* 1 when a (metric, order) is better than b */
static int better(const capsim_opt_point *a, long ao, const capsim_opt_point *b, long bo,
		  int metric)
{
	double x = metric_of(a, metric), y = metric_of(b, metric);
	if (x != y)
		return x < y;
	return ao < bo;
}

static void offer(pool *pl, const capsim_opt_point *p, long order)
{
	size_t k = (size_t)pl->o->top;
	size_t at = pl->n_top;
	while (at > 0 && better(p, order, &pl->top[at - 1], pl->top_order[at - 1], pl->o->metric))
		at--;
	if (at >= k)
		return;
	size_t n = pl->n_top < k ? pl->n_top + 1 : k;
	memmove(&pl->top[at + 1], &pl->top[at], (n - 1 - at) * sizeof *pl->top);
	memmove(&pl->top_order[at + 1], &pl->top_order[at], (n - 1 - at) * sizeof *pl->top_order);
	pl->top[at] = *p;
	pl->top_order[at] = order;
	pl->n_top = n;
}

/* the slowest step of a full list: a bound at or above it cannot enter */
static double cutoff(const pool *pl)
{
	if (pl->o->exhaustive || pl->n_top < (size_t)pl->o->top)
		return INFINITY;
	double worst = 0.0;
	for (size_t i = 0; i < pl->n_top; i++)
		if (pl->top[i].step_time_s > worst)
			worst = pl->top[i].step_time_s;
	return worst;
}

static void simulate(pool *pl, const candidate *cd)
{
	capsim_set sets[CAPSIM_OPT_MAX_SETS];
	char buf[CAPSIM_OPT_MAX_SETS][32];
	size_t n = capsim_opt_config_sets(&cd->c, buf, sets);
	capsim_scenario *s = capsim_xmalloc(sizeof *s);
	*s = *pl->base;
	capsim_diags d = { 0 };
	capsim_result r;
	int ok = capsim_scenario_set_many(s, pl->cat, sets, n, &d) == 0;
	capsim_eval_opts eo = { .no_reference = 1 };
	if (ok)
		ok = capsim_eval(s, &eo, &r, &d) == 0 ? 1 : 0;
	pthread_mutex_lock(&pl->mu);
	pl->simulated++;
	pl->done++;
	if (!ok) {
		pl->failed++;
		count_reason(&pl->why, d.n ? d.v[0].msg : "failed");
	} else if (!capsim_result_get(&r, "fits_in_memory", 0.0)) {
		pl->failed++;
		count_reason(&pl->why, "memory: does not fit once simulated");
	} else {
		capsim_opt_point p = { .c = cd->c, .bound_s = cd->bound_s };
		fill_point(&p, s, &r, pl->o->metric);
		if (isnan(metric_of(&p, pl->o->metric))) {
			pl->failed++;
			count_reason(&pl->why, "cost: no cost to train (cost.acquire buy needs a "
					       "price for every part, rent a cloud offer of the GPU)");
		} else {
			offer(pl, &p, cd->order);
		}
	}
	pthread_mutex_unlock(&pl->mu);
	if (ok)
		capsim_result_free(&r);
	capsim_diags_free(&d);
	free(s);
}

static void *worker(void *arg)
{
	pool *pl = arg;
	for (;;) {
		pthread_mutex_lock(&pl->mu);
		if (pl->next < pl->cands->n && pl->cands->v[pl->next].bound_s >= cutoff(pl)) {
			/* sorted by bound: nothing after can enter either */
			pl->bounded += (long)(pl->cands->n - pl->next);
			pl->done += (long)(pl->cands->n - pl->next);
			pl->next = pl->cands->n;
		}
		if (pl->next >= pl->cands->n) {
			pthread_mutex_unlock(&pl->mu);
			return NULL;
		}
		const candidate *cd = &pl->cands->v[pl->next++];
		pthread_mutex_unlock(&pl->mu);
		simulate(pl, cd);
	}
}

/* ---- the whole ------------------------------------------------------------------------- */

static void merge_reasons(capsim_opt_result *r, const reasons *a)
{
	for (size_t i = 0; i < a->n; i++) {
		size_t j = 0;
		while (j < r->n_reasons && strcmp(r->reasons[j].kind, a->v[i].kind) != 0)
			j++;
		if (j == r->n_reasons) {
			if (j == CAPSIM_OPT_MAX_REASONS)
				continue;
			r->reasons[r->n_reasons++] = a->v[i];
		} else {
			r->reasons[j].count += a->v[i].count;
		}
	}
}

static int by_count(const void *a, const void *b)
{
	const capsim_opt_reason *x = a, *y = b;
	return (y->count > x->count) - (y->count < x->count);
}

/* ---- the limits ------------------------------------------------------------------------ */

static long limit_of(long given, long dflt)
{
	return given > 0 ? given : dflt;
}

/* 0 when a space of n layouts is within max-layouts, else -1 with why */
static int past_layouts(const capsim_scenario *s, const capsim_opt_options *o, long n,
			capsim_diags *d)
{
	long max = limit_of(o->max_layouts, CAPSIM_OPT_MAX_LAYOUTS);
	if (n <= max)
		return 0;
	capsim_diags_add_at(d, "--max-layouts",
			    "the layouts of %s on %ld GPUs are %ld to screen, more than "
			    "--max-layouts %ld (each costs microseconds to screen and 72 bytes "
			    "kept); raise --max-layouts to %ld to search them all",
			    s->model.e.id, capsim_scenario_gpus(s), n, max, n);
	return -1;
}

/* the most layouts the screens may keep within max-simulations */
static long max_kept(const capsim_scenario *s, const capsim_opt_options *o)
{
	return limit_of(o->max_simulations, CAPSIM_OPT_MAX_SIMULATIONS) / capsim_opt_sim_weight(s);
}

/* why a search whose screens kept more than max_kept(s, o) layouts (after
 * enumerating x->enumerated) is refused */
static void past_simulations(const capsim_scenario *s, const capsim_opt_options *o,
			     const search *x, capsim_diags *d)
{
	long max = limit_of(o->max_simulations, CAPSIM_OPT_MAX_SIMULATIONS);
	long w = capsim_opt_sim_weight(s);
	char weight[160] = "";
	if (w > 1)
		snprintf(weight, sizeof weight, " (each weighs %ld on %ld GPUs: one per %ld GPUs or "
			 "part)", w, capsim_scenario_gpus(s), CAPSIM_OPT_SIM_GPUS);
	/* the most the whole space could need: every layout not screened kept */
	double most = (double)((long)x->out.n + x->space - x->enumerated) * (double)w;
	capsim_diags_add_at(d, "--max-simulations",
			    "the search may simulate every layout of %s that passes the rules and "
			    "the memory estimate%s; %zu of the first %ld of %ld layouts pass, %.0f "
			    "in all, more than --max-simulations %ld (screening stopped there); "
			    "raise --max-simulations, to at most %.0f for the whole space",
			    s->model.e.id, weight, x->out.n, x->enumerated, x->space,
			    (double)x->out.n * (double)w, max, most);
}

/* x's bound inputs for s: the model FLOPs a GPU does a step, and the dense
 * peak of the job's fastest GPU (the FLOP bound) */
static void bound_inputs(search *x, const capsim_scenario *s)
{
	x->flop_per_gpu = capsim_eval_flop_per_token(s) * s->global_batch * s->seq_len /
			  (double)capsim_scenario_gpus(s);
	x->peak = capsim_gpu_peak(&s->gpu, s->dtype);
	x->bound_ok = x->flop_per_gpu > 0;
	for (int g = 1; g < s->n_groups; g++) {
		capsim_group_view v;
		capsim_scenario_group(s, g, &v);
		double p = capsim_gpu_peak(v.gpu, s->dtype);
		if (p > x->peak)
			x->peak = p;
	}
	if (!(x->peak > 0))
		x->peak = INFINITY;
}

/* Simulate pl's candidates on o->threads threads (the caller's alone when
 * none starts), the caller's thread reporting progress while they work. */
static void simulate_all(pool *pl, const capsim_opt_options *o)
{
	long n = (long)pl->cands->n;
	if (o->progress) /* the phase's start, before any thread can finish one */
		o->progress(o->progress_ctx, CAPSIM_OPT_SIMULATING, 0, n);
	int threads = o->threads;
	pthread_t *th = capsim_xcalloc((size_t)threads, sizeof *th);
	int started = 0;
	for (int t = 0; t < threads; t++)
		if (pthread_create(&th[t], NULL, worker, pl) == 0)
			started++;
		else
			break;
	if (started == 0)
		worker(pl);
	for (;;) {
		pthread_mutex_lock(&pl->mu);
		long done = pl->done;
		int over = pl->next >= pl->cands->n;
		pthread_mutex_unlock(&pl->mu);
		if (o->progress)
			o->progress(o->progress_ctx, CAPSIM_OPT_SIMULATING, done, n);
		if (over)
			break;
		struct timespec ts = { 0, 100000000 };
		nanosleep(&ts, NULL);
	}
	for (int t = 0; t < started; t++)
		pthread_join(th[t], NULL);
	free(th);
	if (o->progress)
		o->progress(o->progress_ctx, CAPSIM_OPT_SIMULATING, n, n);
}

/* The search's counts, reasons and best layouts into r (which takes pl's
 * top list). */
static void collect(const search *x, pool *pl, const capsim_scenario *s, capsim_opt_result *r)
{
	r->candidates = x->enumerated;
	r->refused = x->refused;
	r->no_fit = x->no_fit;
	r->bounded = pl->bounded;
	r->simulated = pl->simulated;
	r->failed = pl->failed;
	r->kept = (long)x->out.n;
	merge_reasons(r, &x->why);
	merge_reasons(r, &pl->why);
	qsort(r->reasons, r->n_reasons, sizeof r->reasons[0], by_count);
	r->top = pl->top;
	r->n_top = pl->n_top;
	pl->top = NULL;
	r->batch_tokens = s->global_batch * s->seq_len;
}

int capsim_optimize(const capsim_scenario *s, const capsim_catalog *cat,
		    const capsim_opt_options *o, capsim_opt_result *r, capsim_diags *d)
{
	memset(r, 0, sizeof *r);
	if (o->top < 1 || o->threads < 1 || o->metric < 0 || o->metric >= CAPSIM_OPT__COUNT) {
		capsim_diags_add_at(d, "optimize", "internal: bad options");
		return -1;
	}
	double t0 = capsim_now_s();
	/* the layout is the search's: the scenario's own end stages and data
	 * parallelism (when it gives them) would hold every layout to its own */
	capsim_scenario *work = capsim_xmalloc(sizeof *work);
	*work = *s;
	capsim_scenario_free_layout(work);
	s = work;
	search x = { .base = s, .o = o, .space = capsim_opt_space_size(s),
		     .max_kept = max_kept(s, o) };
	if (past_layouts(s, o, x.space, d) < 0) {
		r->candidates = x.space;
		free(work);
		return -2;
	}
	/* screen every layout: the rules, the memory estimate, the bound */
	x.scratch = capsim_xmalloc(sizeof *x.scratch);
	*x.scratch = *s;
	bound_inputs(&x, s);
	enumerate(s, consider, &x, NULL);
	free(x.scratch);
	assert(x.over || x.enumerated == x.space);
	if (o->progress && !x.over)
		o->progress(o->progress_ctx, CAPSIM_OPT_SCREENING, x.enumerated, x.space);
	if (x.over) {
		past_simulations(s, o, &x, d);
		r->candidates = x.enumerated;
		r->refused = x.refused;
		r->no_fit = x.no_fit;
		r->kept = (long)x.out.n;
		free(x.out.v);
		free(work);
		return -2;
	}
	/* simulate the kept ones, best bound first */
	if (x.out.n) /* none kept: no array to sort */
		qsort(x.out.v, x.out.n, sizeof *x.out.v, by_bound);
	pool pl = { .base = s, .cat = cat, .o = o, .cands = &x.out };
	pthread_mutex_init(&pl.mu, NULL);
	pl.top = capsim_xcalloc((size_t)o->top, sizeof *pl.top);
	pl.top_order = capsim_xcalloc((size_t)o->top, sizeof *pl.top_order);
	simulate_all(&pl, o);
	collect(&x, &pl, s, r);
	free(pl.top_order);
	free(x.out.v);
	pthread_mutex_destroy(&pl.mu);
	r->elapsed_s = capsim_now_s() - t0;
	int found = r->n_top > 0;
	if (!found)
		capsim_diags_add_at(d, "optimize", "no layout of %s on %ld GPUs fits and runs "
				    "(%ld refused by the rules, %ld out of memory, %ld failed)",
				    s->model.e.id, capsim_scenario_gpus(s), r->refused, r->no_fit,
				    r->failed);
	free(work);
	return found ? 0 : -1;
}

void capsim_opt_result_free(capsim_opt_result *r)
{
	free(r->top);
	memset(r, 0, sizeof *r);
}

void capsim_opt_mark_ties(capsim_opt_result *r, const capsim_err_model *m)
{
	if (!m || r->n_top == 0)
		return;
	r->marked = 1;
	memset(&r->cmp, 0, sizeof r->cmp);
	const capsim_opt_point *b = &r->top[0];
	for (size_t i = 0; i < r->n_top; i++) {
		capsim_opt_point *p = &r->top[i];
		capsim_err_cmp c;
		p->cmp_has = capsim_err_compare(m, CAPSIM_ERR_STEP, &b->f, b->step_time_s, &p->f,
						p->step_time_s, &c) == 0;
		p->tie_best = p->cmp_has && c.tie;
		p->p_best = p->cmp_has ? c.p_less : NAN;
		if (p->cmp_has && (i == 1 || (i == 0 && r->n_top == 1)))
			r->cmp = c;
	}
}
