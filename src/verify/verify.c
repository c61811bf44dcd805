/* verify.c - acceptance checks (verify.h): each nccl-tests row against the
 * collective model, the likely cause of a shortfall from the same model on
 * degraded copies of the scenario, and GPU checks from a measurements
 * database. */
#include "verify.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <gsl/gsl_statistics_double.h>

#include "collective.h"
#include "nccl.h"
#include "ops.h"
#include "query.h"
#include "xalloc.h"

#define MAX_PATHS 40
#define LARGE_GEMM_FLOP 1e11

const char *const capsim_verify_cause_names[CAPSIM_CAUSE__COUNT] = {
	"none", "pcie-instead-of-nvlink", "fewer-nics", "tcp-fallback",
	"no-gpudirect-rdma", "gpu-throttled-or-virtualised", "unexplained",
};

void capsim_verify_opts_default(capsim_verify_opts *o)
{
	o->tolerance = 0.15;
	o->min_bytes = 1073741824.0;
	o->algo = -1;
	o->proto = -1;
	o->band = 1.25;
}

/* ---- naming a cause -------------------------------------------------------- */

/* a path in a few words, for evidence lists */
static void path_label(const capsim_verify_path *p, char *buf, size_t len)
{
	switch (p->cause) {
	case CAPSIM_CAUSE_PCIE: snprintf(buf, len, "PCIe instead of NVLink"); break;
	case CAPSIM_CAUSE_FEWER_NICS: snprintf(buf, len, "%d of %d NICs", p->k, p->of); break;
	case CAPSIM_CAUSE_TCP: snprintf(buf, len, "TCP sockets"); break;
	case CAPSIM_CAUSE_NO_GDR: snprintf(buf, len, "no GPUDirect RDMA"); break;
	default: snprintf(buf, len, "%s", capsim_verify_cause_names[p->cause]); break;
	}
}

static void cause_text(int cause, int k, int of, char *buf, size_t len)
{
	switch (cause) {
	case CAPSIM_CAUSE_NONE: snprintf(buf, len, "no shortfall"); break;
	case CAPSIM_CAUSE_PCIE:
		snprintf(buf, len, "PCIe instead of NVLink (P2P disabled or NVLink down)");
		break;
	case CAPSIM_CAUSE_FEWER_NICS:
		snprintf(buf, len, "fewer NICs than claimed (%d of %d per node)", k, of);
		break;
	case CAPSIM_CAUSE_TCP:
		snprintf(buf, len, "TCP fallback instead of RDMA (NCCL's sockets)");
		break;
	case CAPSIM_CAUSE_NO_GDR:
		snprintf(buf, len, "GPUDirect RDMA not in use (NIC traffic through host memory)");
		break;
	case CAPSIM_CAUSE_GPU: snprintf(buf, len, "throttled or virtualised GPU"); break;
	default:
		snprintf(buf, len, "shortfall not explained by one degraded path");
		break;
	}
}

void capsim_verify_classify(double measured, double predicted,
			    const capsim_verify_path *paths, size_t n, double band,
			    capsim_verify_diagnosis *out)
{
	size_t best = n;
	double best_dist = INFINITY;
	for (size_t i = 0; i < n; i++) {
		if (!(paths[i].busbw_bytes_per_s > 0) || !(measured > 0))
			continue;
		double dist = fabs(log(measured / paths[i].busbw_bytes_per_s));
		if (dist < best_dist) {
			best_dist = dist;
			best = i;
		}
	}
	out->measured_bytes_per_s = measured;
	out->predicted_bytes_per_s = predicted;
	out->path_bytes_per_s = best < n ? paths[best].busbw_bytes_per_s : 0;
	out->k = out->of = 0;
	if (best < n && best_dist <= log(band)) {
		out->cause = paths[best].cause;
		out->k = paths[best].k;
		out->of = paths[best].of;
	} else {
		out->cause = CAPSIM_CAUSE_UNEXPLAINED;
	}
	cause_text(out->cause, out->k, out->of, out->text, sizeof out->text);
}

/* ---- the model on the scenario and its degraded copies -------------------- */

/* capsim's prediction of op at bytes on the first `ranks` GPUs of cl */
static int predict(capsim_cluster *cl, const capsim_scenario *s, int op, double bytes,
		   int ranks, int algo, int proto, capsim_coll_result *r,
		   capsim_diags *d)
{
	capsim_coll_req req;
	memset(&req, 0, sizeof req);
	req.op = (capsim_coll)op;
	req.bytes = bytes;
	req.ranks = ranks;
	req.algo = algo;
	req.proto = proto;
	req.fold = -1;
	req.seed = (uint64_t)s->seed;
	capsim_coll_point p;
	if (capsim_eval_collective(cl, &req, &p, d) < 0)
		return -1;
	*r = p.r;
	return 0;
}

/* busbw of r's collective on a copy of the scenario with one more edit
 * (capsim_scenario_set: re-resolved and re-checked, no file read), into
 * out; out's busbw stays 0 (the path is left out) when that copy is refused
 * or does not build, or a forced algorithm does not apply to it */
static void variant(const capsim_verify_ctx *c, const char *path, const char *value,
		    const capsim_coll_req *r, capsim_verify_path *out)
{
	capsim_scenario *s = capsim_xmalloc(sizeof *s);
	*s = *c->s;
	capsim_diags scratch = { 0 };
	capsim_cluster *cl = NULL;
	capsim_coll_point res;
	capsim_coll_req q = *r;
	out->busbw_bytes_per_s = 0;
	if (capsim_scenario_set(s, c->cat, path, value, &scratch) == 0)
		cl = capsim_cluster_open(s, &scratch);
	q.seed = (uint64_t)s->seed;
	if (cl && capsim_eval_collective(cl, &q, &res, &scratch) == 0) {
		out->busbw_bytes_per_s = res.r.busbw_bytes_per_s;
		out->algo = res.r.algo;
		out->proto = res.r.proto;
	}
	capsim_diags_free(&scratch);
	capsim_cluster_close(cl);
	free(s);
}

/* one degraded path, kept in out[*n] when the model runs on it */
static void add_path(const capsim_verify_ctx *c, const capsim_coll_req *r, int cause,
		     int k, int of, const char *path, const char *value,
		     capsim_verify_path *out, size_t max, size_t *n)
{
	if (*n == max)
		return;
	capsim_verify_path *p = &out[*n];
	memset(p, 0, sizeof *p);
	p->cause = cause;
	p->k = k;
	p->of = of;
	variant(c, path, value, r, p);
	if (p->busbw_bytes_per_s > 0)
		(*n)++;
}

size_t capsim_verify_paths(const capsim_verify_ctx *c, int op, double bytes,
			   int ranks, int algo, int proto, capsim_verify_path *out,
			   size_t max)
{
	const capsim_scenario *s = c->s;
	int gpn = s->node.gpus > 0 ? s->node.gpus : 1;
	int nodes = (ranks + gpn - 1) / gpn;
	int per_node = ranks < gpn ? ranks : gpn;
	capsim_coll_req r;
	memset(&r, 0, sizeof r);
	r.op = (capsim_coll)op;
	r.bytes = bytes;
	r.ranks = ranks;
	r.algo = algo;
	r.proto = proto;
	r.fold = -1;
	size_t n = 0;
	if (per_node > 1 && s->node.scaleup_fabric != CAPSIM_NODE_PCIE)
		add_path(c, &r, CAPSIM_CAUSE_PCIE, 0, 0, "cluster.node.scale-up.fabric", "pcie",
			 out, max, &n);
	if (nodes < 2)
		return n;
	int nics = s->rails > 0 && s->rails < s->node.nics ? s->rails : s->node.nics;
	for (int k = 1; k < nics; k++) {
		char value[16];
		snprintf(value, sizeof value, "%d", k);
		add_path(c, &r, CAPSIM_CAUSE_FEWER_NICS, k, nics, "cluster.fabric.rails", value,
			 out, max, &n);
	}
	if (s->transport != CAPSIM_NET_TCP)
		add_path(c, &r, CAPSIM_CAUSE_TCP, 0, 0, "cluster.fabric.transport", "tcp", out, max, &n);
	if (s->gpudirect)
		add_path(c, &r, CAPSIM_CAUSE_NO_GDR, 0, 0, "cluster.fabric.gpudirect", "off", out, max, &n);
	return n;
}

/* ---- one log ---------------------------------------------------------------- */

static void note(capsim_verify_result *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void note(capsim_verify_result *r, const char *fmt, ...)
{
	if (r->n_notes == CAPSIM_VERIFY_NOTES)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->notes[r->n_notes++], sizeof r->notes[0], fmt, ap);
	va_end(ap);
}

/* 1 if the log's GPU name contains the first part of the catalog id that
 * holds a digit ("h100" of h100-sxm5-80gb, "4090" of rtx-4090) */
static int same_gpu(const char *device, const char *id)
{
	char part[CAPSIM_ID_LEN];
	const char *p = id;
	while (*p) {
		size_t len = strcspn(p, "-");
		snprintf(part, sizeof part, "%.*s", (int)len, p);
		if (strpbrk(part, "0123456789")) {
			for (const char *q = device; *q; q++)
				if (strncasecmp(q, part, strlen(part)) == 0)
					return 1;
			return 0;
		}
		p += len + (p[len] == '-');
	}
	return 1;
}

static void placement_notes(const capsim_verify_ctx *c, const capsim_nccltests_log *log,
			    capsim_verify_result *r)
{
	const capsim_scenario *s = c->s;
	if (log->device[0] && !same_gpu(log->device, s->gpu.e.id))
		note(r, "the log ran on '%s'; the scenario's GPU is %s", log->device, s->gpu.e.id);
	if (log->hosts > 0 && log->hosts != r->nodes)
		note(r, "the log's %d ranks sit on %d hosts; capsim fills nodes of %d GPUs in order (%d nodes): the prediction is for that placement",
		     r->ranks, log->hosts, s->node.gpus, r->nodes);
	if (log->warnings > 0)
		note(r, "the log holds %d NCCL WARN lines", log->warnings);
}

void capsim_verify_format_size(double bytes, char *buf, size_t len)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = bytes;
	int i = 0;
	while (i < 4 && v >= 1024 && fmod(v, 1024) == 0) {
		v /= 1024;
		i++;
	}
	snprintf(buf, len, "%.0f %s", v, unit[i]);
}

/* the evidence of a diagnosis: the failing row, the prediction and every
 * degraded path */
static void evidence(capsim_verify_diagnosis *g, const capsim_verify_check *k,
		     const capsim_verify_path *paths, size_t n)
{
	char size[48], label[64];
	capsim_verify_format_size(k->bytes, size, sizeof size);
	int len = snprintf(g->evidence, sizeof g->evidence,
			   "at %s (line %ld) measured %.1f GB/s; capsim predicts %.1f GB/s (%s/%s) on the claimed hardware",
			   size, k->line, k->measured_bytes_per_s / 1e9,
			   k->predicted_bytes_per_s / 1e9, capsim_collective_algo_name(k->algo),
			   capsim_proto_names[k->proto]);
	for (size_t i = 0; i < n && len > 0 && (size_t)len < sizeof g->evidence; i++) {
		path_label(&paths[i], label, sizeof label);
		len += snprintf(g->evidence + len, sizeof g->evidence - (size_t)len, "%s%s %.1f",
				i ? ", " : "; with ", label, paths[i].busbw_bytes_per_s / 1e9);
	}
	if (n == 0 && len > 0 && (size_t)len < sizeof g->evidence)
		snprintf(g->evidence + len, sizeof g->evidence - (size_t)len,
			 "; no degraded path applies to this placement");
}

/* predict every row; mark those in the large-message regime and their result */
static int check_rows(const capsim_verify_ctx *c, const capsim_nccltests_log *log,
		      const capsim_verify_opts *o, capsim_verify_result *r, capsim_diags *d)
{
	double largest = 0;
	for (size_t i = 0; i < log->n_rows; i++)
		largest = fmax(largest, log->rows[i].bytes);
	r->min_checked_bytes = fmin(o->min_bytes, largest);
	r->checks = capsim_xcalloc(log->n_rows ? log->n_rows : 1, sizeof *r->checks);
	double factor = capsim_busbw_factor((capsim_coll)log->op, log->nranks);
	if (!(factor > 0))
		note(r, "%d rank%s: %s moves no bus bandwidth; nothing to check", log->nranks,
		     log->nranks == 1 ? "" : "s", capsim_coll_names[log->op]);
	double worst_excess = 0, excess_bytes = 0;
	for (size_t i = 0; i < log->n_rows; i++) {
		const capsim_nccltests_row *row = &log->rows[i];
		capsim_verify_check *k = &r->checks[r->n_checks++];
		capsim_coll_result res;
		k->bytes = row->bytes;
		k->line = row->line;
		k->measured_bytes_per_s = row->oop_busbw_gb_per_s * 1e9;
		if (predict(c->cl, c->s, log->op, row->bytes, log->nranks, o->algo, o->proto, &res, d) < 0)
			return -1;
		k->predicted_bytes_per_s = res.busbw_bytes_per_s;
		k->algo = res.algo;
		k->proto = res.proto;
		k->checked = factor > 0 && k->predicted_bytes_per_s > 0 &&
			     row->bytes >= r->min_checked_bytes;
		k->pass = k->measured_bytes_per_s >= (1 - o->tolerance) * k->predicted_bytes_per_s;
		if (!k->checked)
			continue;
		r->n_checked++;
		r->n_failed += !k->pass;
		double excess = k->predicted_bytes_per_s > 0 ?
					k->measured_bytes_per_s / k->predicted_bytes_per_s - 1 : 0;
		if (excess > o->tolerance && excess > worst_excess) {
			worst_excess = excess;
			excess_bytes = k->bytes;
		}
	}
	if (worst_excess > 0) {
		char size[48];
		capsim_verify_format_size(excess_bytes, size, sizeof size);
		note(r, "measured busbw exceeds the prediction by up to %.0f%% (at %s): the scenario may understate this cluster",
		     100 * worst_excess, size);
	}
	return 0;
}

/* the largest failing checked row, diagnosed */
static void diagnose(const capsim_verify_ctx *c, const capsim_nccltests_log *log,
		     const capsim_verify_opts *o, capsim_verify_result *r)
{
	const capsim_verify_check *worst = NULL;
	for (size_t i = 0; i < r->n_checks; i++) {
		const capsim_verify_check *k = &r->checks[i];
		if (k->checked && !k->pass && (!worst || k->bytes > worst->bytes))
			worst = k;
	}
	if (!worst)
		return;
	capsim_verify_path paths[MAX_PATHS];
	size_t n = capsim_verify_paths(c, log->op, worst->bytes, log->nranks, o->algo, o->proto,
				       paths, MAX_PATHS);
	capsim_verify_classify(worst->measured_bytes_per_s, worst->predicted_bytes_per_s,
			       paths, n, o->band, &r->diag);
	r->diag.bytes = worst->bytes;
	r->diag.line = worst->line;
	evidence(&r->diag, worst, paths, n);
	r->diagnosed = 1;
}

int capsim_verify_log(const capsim_verify_ctx *c, const capsim_nccltests_log *log,
		      const capsim_verify_opts *o, capsim_verify_result *out,
		      capsim_diags *d)
{
	memset(out, 0, sizeof *out);
	snprintf(out->file, sizeof out->file, "%s", log->file);
	snprintf(out->sha256, sizeof out->sha256, "%s", log->sha256);
	snprintf(out->device, sizeof out->device, "%s", log->device);
	out->op = log->op;
	out->ranks = log->nranks;
	out->hosts = log->hosts;
	int gpn = c->s->node.gpus > 0 ? c->s->node.gpus : 1;
	out->nodes = (log->nranks + gpn - 1) / gpn;
	int gpus = capsim_cluster_gpus(c->cl);
	if (log->nranks > gpus) {
		capsim_diags_add(d, log->file, 0, "ranks: expected at most the scenario's %d GPUs (%s), found %d",
				 gpus, c->s->file, log->nranks);
		return -1;
	}
	placement_notes(c, log, out);
	if (check_rows(c, log, o, out, d) < 0)
		return -1;
	diagnose(c, log, o, out);
	/* a check that checked nothing does not pass */
	out->pass = out->n_checked > 0 && out->n_failed == 0;
	return 0;
}

void capsim_verify_result_free(capsim_verify_result *r)
{
	if (!r)
		return;
	free(r->checks);
	r->checks = NULL;
	r->n_checks = 0;
}

/* ---- GPU checks from a measurements database ------------------------------- */

static int dtype_index(const char *name)
{
	for (int i = 0; capsim_dtype_names[i]; i++)
		if (strcmp(capsim_dtype_names[i], name) == 0)
			return i;
	return -1;
}

static int elt_bytes(int dtype)
{
	return dtype == CAPSIM_DTYPE_FP32 || dtype == CAPSIM_DTYPE_TF32 ? 4 :
	       dtype == CAPSIM_DTYPE_FP8 ? 1 : 2;
}

/* median of measured / predicted over the large GEMMs */
static int gemm_ratio(capsim_store *db, const capsim_scenario *s, capsim_verify_gpu *out,
		      capsim_diags *d)
{
	capsim_store_gemms rows;
	if (capsim_store_read_gemms(db, NULL, 0, &rows, d) < 0)
		return -1;
	capsim_gpu_perf perf;
	capsim_gpu_perf_default(&s->gpu, 1, &perf);
	perf.launch_s = 0; /* calibrate/ times batches of back-to-back GEMMs */
	size_t n = 0;
	double *ratios = capsim_xcalloc(rows.n + 1, sizeof *ratios);
	for (size_t i = 0; i < rows.n; i++) {
		const capsim_store_gemm *g = &rows.v[i];
		int dt = dtype_index(g->dtype);
		double m = (double)g->m, nn = (double)g->n, k = (double)g->k;
		if (dt < 0 || g->flop < LARGE_GEMM_FLOP || !(g->flop_per_s > 0) ||
		    capsim_gpu_peak(&s->gpu, dt) <= 0)
			continue;
		double bytes = elt_bytes(dt) * (m * k + k * nn + m * nn);
		double t = capsim_op_time_s(&s->gpu, &perf, dt, g->flop, bytes, m, nn, k);
		ratios[n++] = g->flop_per_s / (g->flop / t);
	}
	capsim_store_gemms_free(&rows);
	out->gemms = n;
	out->gemm_ratio = gsl_stats_median(ratios, 1, n);
	free(ratios);
	return 0;
}

/* the best copy bandwidth and the median sustained SM clock */
static int copy_and_clock(capsim_store *db, capsim_verify_gpu *out, capsim_diags *d)
{
	capsim_store_copies copies;
	capsim_store_power_loads loads;
	if (capsim_store_read_copies(db, NULL, &copies, d) < 0)
		return -1;
	for (size_t i = 0; i < copies.n; i++)
		out->copy_bytes_per_s = fmax(out->copy_bytes_per_s, copies.v[i].bytes_per_s);
	capsim_store_copies_free(&copies);
	if (capsim_store_read_power_load(db, NULL, 1, &loads, d) < 0)
		return -1;
	double *mhz = capsim_xcalloc(loads.n + 1, sizeof *mhz);
	for (size_t i = 0; i < loads.n; i++)
		mhz[i] = loads.v[i].median_sm_mhz;
	out->sm_mhz = gsl_stats_median(mhz, 1, loads.n);
	free(mhz);
	capsim_store_power_loads_free(&loads);
	return 0;
}

static void gpu_verdict(const capsim_scenario *s, double tolerance, capsim_verify_gpu *g)
{
	double copy_ratio = g->copy_predicted_bytes_per_s > 0 && g->copy_bytes_per_s > 0 ?
				    g->copy_bytes_per_s / g->copy_predicted_bytes_per_s : 0;
	int gemm_ok = g->gemms == 0 || g->gemm_ratio >= 1 - tolerance;
	int copy_ok = copy_ratio == 0 || copy_ratio >= 1 - tolerance;
	g->pass = gemm_ok && copy_ok;
	g->diag.cause = g->pass ? CAPSIM_CAUSE_NONE : CAPSIM_CAUSE_GPU;
	cause_text(g->diag.cause, 0, 0, g->diag.text, sizeof g->diag.text);
	int len = snprintf(g->diag.evidence, sizeof g->diag.evidence,
			   "median of %zu GEMMs of 1e11 FLOP or more at %.0f%% of capsim's rate for %s",
			   g->gemms, 100 * g->gemm_ratio, s->gpu.e.id);
	if (copy_ratio > 0 && len > 0)
		len += snprintf(g->diag.evidence + len, sizeof g->diag.evidence - (size_t)len,
				"; copy %.3g TB/s against %.3g TB/s predicted (%.0f%%)",
				g->copy_bytes_per_s / 1e12, g->copy_predicted_bytes_per_s / 1e12,
				100 * copy_ratio);
	if (g->sm_mhz > 0 && len > 0 && (size_t)len < sizeof g->diag.evidence)
		snprintf(g->diag.evidence + len, sizeof g->diag.evidence - (size_t)len,
			 "; sustained SM clock %.0f MHz of %.0f MHz max", g->sm_mhz,
			 g->clock_max_mhz);
}

int capsim_verify_gpu_db(const char *db_path, const capsim_scenario *s,
			 double tolerance, capsim_verify_gpu *out, capsim_diags *d)
{
	memset(out, 0, sizeof *out);
	capsim_store *db;
	if (capsim_store_open(db_path, CAPSIM_STORE_READ, &db, d) < 0)
		return -1;
	capsim_store_runs runs;
	int rc = capsim_store_read_runs(db, NULL, &runs, d);
	if (rc == 0 && runs.n)
		snprintf(out->db_gpu, sizeof out->db_gpu, "%s", runs.v[0].gpu);
	capsim_store_runs_free(&runs);
	if (rc == 0)
		rc = gemm_ratio(db, s, out, d);
	if (rc == 0)
		rc = copy_and_clock(db, out, d);
	capsim_store_close(db);
	if (rc < 0)
		return -1;
	if (out->gemms == 0 && !(out->copy_bytes_per_s > 0)) {
		capsim_diags_add(d, db_path, 0, "expected GEMMs of 1e11 FLOP or more or a copy bandwidth in a known dtype, found none");
		return -1;
	}
	capsim_gpu_perf perf;
	capsim_gpu_perf_default(&s->gpu, 1, &perf);
	out->copy_predicted_bytes_per_s = s->gpu.mem_bw_bytes_per_s * perf.hbm_eff;
	out->clock_max_mhz = s->gpu.clock_max_hz / 1e6;
	gpu_verdict(s, tolerance, out);
	return 0;
}
