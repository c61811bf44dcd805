/* expect.c - monitoring baselines: the expected nccl-tests bus bandwidths,
 * step time and power of a scenario, with their bands and thresholds, and a
 * measured nccl-tests log set against them (expect.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expect.h"
#include "xalloc.h"

const char *const capsim_expect_kind_names[CAPSIM_EXPECT__KINDS] = {
	"busbw", "step_time", "gpu_power", "node_power",
};

const char *const capsim_expect_metric_names[CAPSIM_EXPECT__KINDS] = {
	"nccl_tests_busbw_gbps", "training_step_seconds", "DCGM_FI_DEV_POWER_USAGE",
	"ipmi_dcmi_power_consumption_watts",
};

void capsim_expect_default_ops(int ops[CAPSIM_COLL__COUNT])
{
	memset(ops, 0, CAPSIM_COLL__COUNT * sizeof *ops);
	ops[CAPSIM_COLL_ALLREDUCE] = ops[CAPSIM_COLL_ALLGATHER] = 1;
	ops[CAPSIM_COLL_REDUCESCATTER] = ops[CAPSIM_COLL_ALLTOALL] = 1;
	ops[CAPSIM_COLL_BROADCAST] = ops[CAPSIM_COLL_SENDRECV] = 1;
}

size_t capsim_expect_default_sizes(double *sizes, size_t max)
{
	size_t n = 0;
	for (double b = 8; b <= 128.0 * 1024 * 1024 && n < max; b *= 2)
		sizes[n++] = b;
	return n;
}

double capsim_expect_threshold(int kind, double expected, double fraction)
{
	return kind == CAPSIM_EXPECT_STEP ? expected / fraction : expected * fraction;
}

/* a new row at the end of e's, zeroed but for its kind and the model's
 * choices (none) */
static capsim_expect_row *add_row(capsim_expect *e, int kind)
{
	if (e->n == e->cap) {
		e->cap = e->cap ? 2 * e->cap : 64;
		e->rows = capsim_xrealloc(e->rows, e->cap * sizeof *e->rows);
	}
	capsim_expect_row *r = &e->rows[e->n++];
	memset(r, 0, sizeof *r);
	r->kind = kind;
	r->op = r->algo = r->proto = r->channels = -1;
	return r;
}

static void add_note(capsim_expect *e, const char *text)
{
	if (e->n_notes < CAPSIM_EXPECT_NOTES)
		snprintf(e->notes[e->n_notes++], sizeof e->notes[0], "%s", text);
	else
		e->n_more++;
}

/* the rank counts to predict: as given, or one node's, one NVLink domain's
 * where a rack-scale domain spans nodes (an NVL72's 72 GPUs), and the
 * cluster's, each once */
static size_t rank_counts(const capsim_scenario *s, const capsim_expect_opts *o, int *out,
			  capsim_diags *d)
{
	long all = capsim_scenario_gpus(s);
	if (o->n_ranks == 0) {
		size_t n = 0;
		out[n++] = s->node.gpus;
		if (s->node.domain_gpus > s->node.gpus && s->node.domain_gpus < all)
			out[n++] = s->node.domain_gpus;
		if (all > out[n - 1])
			out[n++] = (int)all;
		return n;
	}
	for (size_t i = 0; i < o->n_ranks; i++) {
		if (o->ranks[i] > all) {
			capsim_diags_add_at(d, "--ranks", "expected at most the cluster's %ld GPUs, "
					    "found %d", all, o->ranks[i]);
			return 0;
		}
		out[i] = o->ranks[i];
	}
	return o->n_ranks;
}

/* One op at one rank count over every size: its rows, or a note where the
 * collective model refuses it. */
static void add_collective(const capsim_scenario *s, const capsim_err_model *m,
			   const capsim_expect_opts *o, int op, int ranks, capsim_expect *e)
{
	capsim_coll_req req = { 0 };
	req.op = (capsim_coll)op;
	req.ranks = ranks;
	req.algo = req.proto = req.fold = -1;
	req.seed = (uint64_t)s->seed;
	capsim_coll_point *pts = capsim_xcalloc(o->n_sizes, sizeof *pts);
	capsim_diags why = { 0 };
	if (capsim_eval_collectives(s, &req, o->sizes, o->n_sizes, pts, &why) < 0) {
		char note[256];
		snprintf(note, sizeof note, "%s on %d ranks is not predicted: %s",
			 capsim_coll_perf_names[op], ranks,
			 why.n ? why.v[0].msg : "the collective model refuses it");
		add_note(e, note);
		capsim_diags_free(&why);
		free(pts);
		return;
	}
	capsim_err_band band = { 0 };
	if (m)
		capsim_eval_busbw_band(s, m, ranks, &band);
	for (size_t i = 0; i < o->n_sizes; i++) {
		capsim_expect_row *r = add_row(e, CAPSIM_EXPECT_BUSBW);
		r->op = op;
		r->ranks = ranks;
		r->bytes = pts[i].bytes;
		r->expected = pts[i].r.busbw_bytes_per_s / 1e9;
		r->algo = pts[i].r.algo;
		r->proto = pts[i].r.proto;
		r->channels = pts[i].r.channels;
		r->time_s = pts[i].r.time_s;
		r->algbw = pts[i].r.algbw_bytes_per_s / 1e9;
		if ((r->has_band = band.has[CAPSIM_ERR_80])) {
			r->lo = r->expected * band.lo[CAPSIM_ERR_80];
			r->hi = r->expected * band.hi[CAPSIM_ERR_80];
		}
		r->threshold = capsim_expect_threshold(r->kind, r->expected, o->fraction);
	}
	free(pts);
}

/* a workload row from result key `key` of r */
static void add_result_row(capsim_expect *e, const capsim_result *r, int kind, const char *key,
			   double fraction)
{
	const capsim_result_key *k = capsim_result_key_find(key);
	if (!k || !capsim_result_has(r, k))
		return;
	capsim_expect_row *row = add_row(e, kind);
	row->expected = capsim_result_number(r, k);
	row->has_band = capsim_result_band(r, k, CAPSIM_ERR_80, &row->lo, &row->hi);
	row->threshold = capsim_expect_threshold(kind, row->expected, fraction);
}

/* the step time and power of the scenario's workload */
static int add_workload(const capsim_scenario *s, const capsim_err_model *m, double fraction,
			capsim_expect *e, capsim_diags *d)
{
	capsim_eval_opts eo = { .errors = m, .no_reference = 1 };
	capsim_result r;
	if (capsim_eval(s, &eo, &r, d) < 0)
		return -1;
	add_result_row(e, &r, CAPSIM_EXPECT_STEP, "step_time_s", fraction);
	add_result_row(e, &r, CAPSIM_EXPECT_GPU_POWER, "power_gpu_w", fraction);
	add_result_row(e, &r, CAPSIM_EXPECT_NODE_POWER, "power_node_w", fraction);
	capsim_result_free(&r);
	return 0;
}

int capsim_expect_build(const capsim_scenario *s, const capsim_err_model *m,
			const capsim_expect_opts *o, capsim_expect *out, capsim_diags *d)
{
	memset(out, 0, sizeof *out);
	snprintf(out->scenario, sizeof out->scenario, "%s", s->name);
	snprintf(out->file, sizeof out->file, "%s", s->file);
	snprintf(out->gpu, sizeof out->gpu, "%s", s->gpu.e.id);
	out->nodes = s->nodes;
	out->gpus_per_node = s->node.gpus;
	out->fraction = o->fraction;
	int ranks[64];
	size_t n_ranks = rank_counts(s, o, ranks, d);
	if (n_ranks == 0)
		return -1;
	for (int op = 0; op < CAPSIM_COLL__COUNT; op++)
		for (size_t i = 0; o->ops[op] && i < n_ranks; i++)
			add_collective(s, m, o, op, ranks[i], out);
	if (o->workload && add_workload(s, m, o->fraction, out, d) < 0)
		return -1;
	return 0;
}

void capsim_expect_free(capsim_expect *e)
{
	free(e->rows);
	e->rows = NULL;
	e->n = e->cap = 0;
}

/* the BUSBW row of op, ranks and bytes, or NULL */
static const capsim_expect_row *find_row(const capsim_expect *e, int op, int ranks, double bytes)
{
	for (size_t i = 0; i < e->n; i++) {
		const capsim_expect_row *r = &e->rows[i];
		if (r->kind == CAPSIM_EXPECT_BUSBW && r->op == op && r->ranks == ranks &&
		    fabs(r->bytes - bytes) < 0.5)
			return r;
	}
	return NULL;
}

int capsim_expect_check_log(const capsim_expect *e, const capsim_nccltests_log *log,
			    capsim_expect_verdict *out)
{
	memset(out, 0, sizeof *out);
	out->op = log->op;
	out->ranks = log->nranks;
	out->checks = capsim_xcalloc(log->n_rows ? log->n_rows : 1, sizeof *out->checks);
	for (size_t i = 0; i < log->n_rows; i++) {
		const capsim_nccltests_row *lr = &log->rows[i];
		capsim_expect_check *c = &out->checks[out->n_checks++];
		c->bytes = lr->bytes;
		c->line = lr->line;
		c->measured = lr->oop_busbw_gb_per_s;
		c->row = find_row(e, log->op, log->nranks, lr->bytes);
		c->pass = !c->row || c->measured >= c->row->threshold;
		out->n_checked += c->row != NULL;
		out->n_failed += !c->pass;
	}
	out->pass = out->n_checked > 0 && out->n_failed == 0;
	return 0;
}

void capsim_expect_verdict_free(capsim_expect_verdict *v)
{
	free(v->checks);
	v->checks = NULL;
}
