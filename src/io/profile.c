/* profile.c - calibrated hardware profiles: load, check, apply, write; see
 * profile.h. */
#include "profile.h"

#include "outfile.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "escape.h"
#include "ioint.h"
#include "xalloc.h"
#include "xml.h"

/* ---- reading -------------------------------------------------------------- */

/* one load: the file, the profile's label for messages, the problems seen */
typedef struct loader {
	const char *file;
	char label[CAPSIM_ID_LEN + 16];
	capsim_diags *d;
	int problems;
	capsim_profile *p;
} loader;

/* A problem at el's line: "LABEL: WHAT: MSG". */
__attribute__((format(printf, 4, 5)))
static void bad(loader *L, xmlNode *el, const char *what, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	capsim_diags_add(L->d, L->file, el ? xmlGetLineNo(el) : 0, "%s: %s: %s", L->label,
			 what, msg);
	L->problems++;
}

/* the attribute's text (caller frees with xmlFree), or NULL */
static char *prop(xmlNode *el, const char *attr)
{
	return (char *)xmlGetProp(el, (const xmlChar *)attr);
}

#define Q_REQ 0x1u   /* must be present */
#define Q_POS 0x2u   /* > 0 */
#define Q_NNEG 0x4u  /* >= 0 */

/* Quantity attr of el, of dimension dim, into *out (left alone when absent
 * and optional). max > 0 caps it. Returns 1 when read, 0 when absent, -1
 * when bad. what names the element in messages. */
static int qty(loader *L, xmlNode *el, const char *what, const char *attr,
	       capsim_dim dim, unsigned flags, double max, double *out)
{
	char *s = prop(el, attr);
	char where[160];
	snprintf(where, sizeof where, "%s.%s", what, attr);
	if (!s) {
		if (flags & Q_REQ) {
			bad(L, el, where, "missing; expected %s (e.g. '%s')", capsim_dim_name(dim),
			    capsim_dim_example(dim));
			return -1;
		}
		return 0;
	}
	char err[512];
	double v;
	int rc = 1;
	if (capsim_units_parse(s, dim, NULL, &v, err, sizeof err) < 0) {
		bad(L, el, where, "%s", err);
		rc = -1;
	} else if ((flags & Q_POS) && !(v > 0)) {
		bad(L, el, where, "expected %s > 0, found '%s'", capsim_dim_name(dim), s);
		rc = -1;
	} else if ((flags & Q_NNEG) && !(v >= 0)) {
		bad(L, el, where, "expected %s >= 0, found '%s'", capsim_dim_name(dim), s);
		rc = -1;
	} else if (max > 0 && v > max) {
		bad(L, el, where, "expected at most %g, found '%s'", max, s);
		rc = -1;
	} else {
		*out = v;
	}
	xmlFree(s);
	return rc;
}

/* An integer attribute (the schema has checked its form); def when absent. */
static long long integer(xmlNode *el, const char *attr, long long def)
{
	char *s = prop(el, attr);
	long long v = s ? strtoll(s, NULL, 10) : def;
	xmlFree(s);
	return v;
}

/* A text attribute into buf (truncated to fit), "" when absent. */
static void text(xmlNode *el, const char *attr, char *buf, size_t len)
{
	char *s = prop(el, attr);
	capsim_strlcpy(buf, s ? s : "", len);
	xmlFree(s);
}

/* "1,2,5" into ids; each must be a <run> of the profile */
static void run_list(loader *L, xmlNode *el, const char *what,
		     capsim_run_ids *ids)
{
	char *s = prop(el, "runs");
	memset(ids, 0, sizeof *ids);
	char *q = s;
	while (q && *q) {
		char *end;
		long long id = strtoll(q, &end, 10);
		if (end == q)
			break; /* the schema allows only digits and commas */
		if (ids->n == CAPSIM_PROFILE_MAX_RUNS) {
			bad(L, el, what, "runs: more than %d run ids", CAPSIM_PROFILE_MAX_RUNS);
			break;
		}
		ids->id[ids->n++] = id;
		int known = 0;
		for (size_t i = 0; i < L->p->n_runs; i++)
			known |= L->p->runs[i].id == id;
		if (!known)
			bad(L, el, what, "runs: %lld is not a <run> of this profile", id);
		q = *end == ',' ? end + 1 : end;
	}
	xmlFree(s);
}

static xmlNode *next_el(xmlNode *n)
{
	while (n && n->type != XML_ELEMENT_NODE)
		n = n->next;
	return n;
}

static int is(xmlNode *el, const char *name)
{
	return el && strcmp((const char *)el->name, name) == 0;
}

static void load_run(loader *L, xmlNode *el)
{
	capsim_profile *p = L->p;
	p->runs = capsim_xrealloc(p->runs, (p->n_runs + 1) * sizeof *p->runs);
	capsim_profile_run *r = &p->runs[p->n_runs++];
	memset(r, 0, sizeof *r);
	r->id = integer(el, "id", 0);
	for (size_t i = 0; i + 1 < p->n_runs; i++)
		if (p->runs[i].id == r->id)
			bad(L, el, "run", "id %lld appears twice", (long long)r->id);
	text(el, "program", r->program, sizeof r->program);
	text(el, "date", r->date, sizeof r->date);
	text(el, "gpu", r->gpu, sizeof r->gpu);
	text(el, "sha256", r->sha256, sizeof r->sha256);
	text(el, "source", r->source, sizeof r->source);
	text(el, "cc", r->cc, sizeof r->cc);
	text(el, "launcher", r->launcher, sizeof r->launcher);
	r->sms = (long)integer(el, "sms", 0);
	r->cuda_driver = (long)integer(el, "cuda-driver", 0);
	r->cuda_runtime = (long)integer(el, "cuda-runtime", 0);
	r->cublaslt = (long)integer(el, "cublaslt", 0);
	r->nccl = (long)integer(el, "nccl", 0);
	r->ranks = (long)integer(el, "ranks", 0);
	r->nodes = (long)integer(el, "nodes", 0);
	for (xmlNode *e = next_el(el->children); e; e = next_el(e->next)) {
		r->env = capsim_xrealloc(r->env, (r->n_env + 1) * sizeof *r->env);
		capsim_profile_env *v = &r->env[r->n_env++];
		text(e, "name", v->name, sizeof v->name);
		text(e, "value", v->value, sizeof v->value);
	}
}

static void load_efficiency(loader *L, xmlNode *el)
{
	capsim_profile *p = L->p;
	qty(L, el, "efficiency", "gemm", CAPSIM_DIM_RATIO, Q_POS, 1.0, &p->eff_gemm);
	qty(L, el, "efficiency", "gemm-fp8", CAPSIM_DIM_RATIO, Q_POS, 1.0, &p->eff_gemm_fp8);
	qty(L, el, "efficiency", "hbm", CAPSIM_DIM_RATIO, Q_POS, 1.0, &p->eff_hbm);
	qty(L, el, "efficiency", "launch", CAPSIM_DIM_SECONDS, Q_POS, 1e-3, &p->eff_launch_s);
	qty(L, el, "efficiency", "dispatch", CAPSIM_DIM_SECONDS, Q_POS, 1e-2, &p->eff_dispatch_s);
	qty(L, el, "efficiency", "dispatch-compiled", CAPSIM_DIM_SECONDS, Q_POS, 1e-2,
	    &p->eff_dispatch_compiled_s);
	qty(L, el, "efficiency", "kernel-gap", CAPSIM_DIM_SECONDS, Q_POS, 1e-3,
	    &p->eff_kernel_gap_s);
	qty(L, el, "efficiency", "launch-graph", CAPSIM_DIM_SECONDS, Q_POS, 1e-3,
	    &p->eff_launch_graph_s);
	run_list(L, el, "efficiency", &p->eff_runs);
}

static void load_kernels(loader *L, xmlNode *el)
{
	capsim_profile *p = L->p;
	static const char *const names[2][2] = { { "layernorm-forward", "layernorm-backward" },
						 { "rmsnorm-forward", "rmsnorm-backward" } };
	for (int f = 0; f < 2; f++)
		for (int b = 0; b < 2; b++)
			qty(L, el, "kernels", names[f][b], CAPSIM_DIM_COUNT, Q_POS, 1e4,
			    &p->block_kernels[f][b]);
	run_list(L, el, "kernels", &p->kernel_runs);
}

static int dtype_index(const char *s)
{
	for (int i = 0; capsim_dtype_names[i]; i++)
		if (strcmp(capsim_dtype_names[i], s) == 0)
			return i;
	return -1;
}

/* the fit's points and its rms and largest residual */
static void fit_stats(loader *L, xmlNode *el, const char *what, size_t *points,
		      double *rms, double *max_abs, capsim_dim dim)
{
	*points = (size_t)integer(el, "points", 0);
	qty(L, el, what, "rms", dim, Q_REQ | Q_NNEG, 0, rms);
	qty(L, el, what, "max-abs", dim, Q_REQ | Q_NNEG, 0, max_abs);
}

/* The smooth model's parameters, as params says: present when used. */
static void gemm_params(loader *L, xmlNode *el, const char *what,
			capsim_gemm_cal *c)
{
	unsigned f3 = c->params >= 3 ? Q_REQ | Q_POS : Q_POS;
	unsigned f5 = c->params >= 5 ? Q_REQ | Q_POS : Q_POS;
	qty(L, el, what, "sat", CAPSIM_DIM_RATIO, Q_REQ | Q_POS, 1.5, &c->sat);
	qty(L, el, what, "f0", CAPSIM_DIM_COUNT, f3, 0, &c->f0_flop);
	qty(L, el, what, "p", CAPSIM_DIM_RATIO, f3, 100.0, &c->p);
	qty(L, el, what, "i0", CAPSIM_DIM_COUNT, f5, 0, &c->i0_flop_per_byte);
	qty(L, el, what, "q", CAPSIM_DIM_RATIO, f5, 100.0, &c->q);
	qty(L, el, what, "flop-min", CAPSIM_DIM_COUNT, Q_REQ | Q_POS, 0, &c->flop_min);
	qty(L, el, what, "flop-max", CAPSIM_DIM_COUNT, Q_REQ | Q_POS, 0, &c->flop_max);
	qty(L, el, what, "intensity-min", CAPSIM_DIM_COUNT, Q_REQ | Q_POS, 0, &c->ai_min);
	qty(L, el, what, "intensity-max", CAPSIM_DIM_COUNT, Q_REQ | Q_POS, 0, &c->ai_max);
	qty(L, el, what, "misaligned", CAPSIM_DIM_RATIO, Q_POS, 1.5, &c->misaligned);
	if (c->flop_min > c->flop_max)
		bad(L, el, what, "flop-min %g exceeds flop-max %g", c->flop_min, c->flop_max);
	if (c->ai_min > c->ai_max)
		bad(L, el, what, "intensity-min %g exceeds intensity-max %g", c->ai_min,
		    c->ai_max);
}

static void gemm_points(loader *L, xmlNode *el, const char *what,
			capsim_profile_gemm *g)
{
	for (xmlNode *e = next_el(el->children); e; e = next_el(e->next)) {
		g->points = capsim_xrealloc(g->points, (g->n_points + 1) * sizeof *g->points);
		capsim_profile_point *pt = &g->points[g->n_points++];
		memset(pt, 0, sizeof *pt);
		pt->m = (double)integer(e, "m", 0);
		pt->n = (double)integer(e, "n", 0);
		pt->k = (double)integer(e, "k", 0);
		pt->run = integer(e, "run", 0);
		qty(L, e, what, "fraction", CAPSIM_DIM_RATIO, Q_REQ | Q_POS, 1.5, &pt->frac);
		qty(L, e, what, "ratio", CAPSIM_DIM_RATIO, Q_REQ | Q_POS, 10.0, &pt->ratio);
		int known = 0;
		for (size_t i = 0; i < g->runs.n; i++)
			known |= g->runs.id[i] == pt->run;
		if (!known)
			bad(L, e, what, "point: run %lld is not in the gemm's runs",
			    (long long)pt->run);
	}
}

static void load_gemm(loader *L, xmlNode *el)
{
	char *dt = prop(el, "dtype");
	int i = dt ? dtype_index(dt) : -1;
	char what[32];
	snprintf(what, sizeof what, "gemm %s", dt ? dt : "?");
	xmlFree(dt);
	if (i < 0) {
		bad(L, el, "gemm", "unknown dtype");
		return;
	}
	capsim_profile_gemm *g = &L->p->gemm[i];
	if (g->cal.params) {
		bad(L, el, what, "a second <gemm> for this dtype");
		return;
	}
	g->cal.params = (int)integer(el, "params", 0);
	gemm_params(L, el, what, &g->cal);
	fit_stats(L, el, what, &g->n_points, &g->rms, &g->max_abs, CAPSIM_DIM_RATIO);
	qty(L, el, what, "loo-rms", CAPSIM_DIM_RATIO, Q_REQ | Q_NNEG, 0, &g->loo_rms);
	qty(L, el, what, "loo-max-abs", CAPSIM_DIM_RATIO, Q_REQ | Q_NNEG, 0, &g->loo_max_abs);
	qty(L, el, what, "table-rms", CAPSIM_DIM_RATIO, Q_REQ | Q_NNEG, 0, &g->table_rms);
	qty(L, el, what, "table-max-abs", CAPSIM_DIM_RATIO, Q_REQ | Q_NNEG, 0,
	    &g->table_max_abs);
	run_list(L, el, what, &g->runs);
	size_t declared = g->n_points;
	g->n_points = 0;
	gemm_points(L, el, what, g);
	if (declared != g->n_points)
		bad(L, el, what, "points=%zu but %zu <point> elements", declared, g->n_points);
	if (capsim_profile_gemm_tables(g) > 0)
		bad(L, el, what, "more than %d shapes or %d square sizes", CAPSIM_CAL_SHAPES,
		    CAPSIM_CAL_TABLE);
}

static void load_ab(loader *L, xmlNode *el, const char *what,
		    capsim_profile_ab *ab)
{
	qty(L, el, what, "latency", CAPSIM_DIM_SECONDS, Q_REQ | Q_NNEG, 0, &ab->latency_s);
	qty(L, el, what, "bandwidth", CAPSIM_DIM_BYTES_PER_S, Q_REQ | Q_POS, 0,
	    &ab->bw_bytes_per_s);
	qty(L, el, what, "bytes-min", CAPSIM_DIM_BYTES, Q_REQ | Q_POS, 0, &ab->bytes_min);
	qty(L, el, what, "bytes-max", CAPSIM_DIM_BYTES, Q_REQ | Q_POS, 0, &ab->bytes_max);
	fit_stats(L, el, what, &ab->points, &ab->rms, &ab->max_abs, CAPSIM_DIM_RATIO);
	if (ab->bytes_min > ab->bytes_max)
		bad(L, el, what, "bytes-min %g exceeds bytes-max %g", ab->bytes_min,
		    ab->bytes_max);
}

static void load_hbm(loader *L, xmlNode *el)
{
	capsim_profile_hbm *h = &L->p->hbm;
	qty(L, el, "hbm", "bandwidth", CAPSIM_DIM_BYTES_PER_S, Q_REQ | Q_POS, 0,
	    &h->bw_bytes_per_s);
	qty(L, el, "hbm", "efficiency", CAPSIM_DIM_RATIO, Q_REQ | Q_POS, 1.5, &h->eff);
	fit_stats(L, el, "hbm", &h->points, &h->rms, &h->max_abs, CAPSIM_DIM_RATIO);
	run_list(L, el, "hbm", &h->runs);
}

static void load_pcie(loader *L, xmlNode *el)
{
	char *dir = prop(el, "direction");
	int i = dir && strcmp(dir, "d2h") == 0 ? CAPSIM_PCIE_D2H : CAPSIM_PCIE_H2D;
	char what[16];
	snprintf(what, sizeof what, "pcie %s", dir ? dir : "?");
	xmlFree(dir);
	capsim_profile_pcie *pc = &L->p->pcie[i];
	if (pc->ab.points) {
		bad(L, el, what, "a second <pcie> for this direction");
		return;
	}
	load_ab(L, el, what, &pc->ab);
	run_list(L, el, what, &pc->runs);
}

static void load_coll(loader *L, xmlNode *el)
{
	capsim_profile *p = L->p;
	p->coll = capsim_xrealloc(p->coll, (p->n_coll + 1) * sizeof *p->coll);
	capsim_profile_coll *c = &p->coll[p->n_coll++];
	memset(c, 0, sizeof *c);
	text(el, "op", c->op, sizeof c->op);
	text(el, "algo", c->algo, sizeof c->algo);
	text(el, "proto", c->proto, sizeof c->proto);
	c->ranks = (int)integer(el, "ranks", 0);
	c->nodes = (int)integer(el, "nodes", 0);
	char what[CAPSIM_ID_LEN * 3 + 32];
	snprintf(what, sizeof what, "collective %s/%s/%s/%d", c->op, c->algo, c->proto, c->ranks);
	if (c->ranks < 2)
		bad(L, el, what, "ranks: a bandwidth is never fitted from one rank");
	qty(L, el, what, "bus-factor", CAPSIM_DIM_RATIO, Q_REQ | Q_POS, 2.0, &c->bus_factor);
	run_list(L, el, what, &c->runs);
	for (xmlNode *e = next_el(el->children); e && c->regimes < 2; e = next_el(e->next))
		load_ab(L, e, what, &c->regime[c->regimes++]);
	if (c->regimes == 2 && c->regime[1].bytes_min < c->regime[0].bytes_max)
		bad(L, el, what, "the large-message regime begins below the end of the small one");
	for (size_t i = 0; i + 1 < p->n_coll; i++) {
		const capsim_profile_coll *o = &p->coll[i];
		if (!strcmp(o->op, c->op) && !strcmp(o->algo, c->algo) &&
		    !strcmp(o->proto, c->proto) && o->ranks == c->ranks && o->nodes == c->nodes)
			bad(L, el, what, "appears twice");
	}
}

static void load_power(loader *L, xmlNode *el)
{
	capsim_profile_power *w = &L->p->power;
	w->present = 1;
	qty(L, el, "power", "limit", CAPSIM_DIM_WATTS, Q_POS, 0, &w->limit_w);
	qty(L, el, "power", "idle", CAPSIM_DIM_WATTS, Q_REQ | Q_POS, 0, &w->idle_w);
	qty(L, el, "power", "idle-clock", CAPSIM_DIM_HERTZ, Q_POS, 0, &w->idle_clock_hz);
	qty(L, el, "power", "sustained", CAPSIM_DIM_WATTS, Q_POS, 0, &w->sustained_w);
	qty(L, el, "power", "sustained-clock", CAPSIM_DIM_HERTZ, Q_POS, 0,
	    &w->sustained_clock_hz);
	qty(L, el, "power", "sustained-rate", CAPSIM_DIM_FLOP_PER_S, Q_POS, 0,
	    &w->sustained_flop_per_s);
	run_list(L, el, "power", &w->runs);
	for (xmlNode *e = next_el(el->children); e; e = next_el(e->next)) {
		char *kind = prop(e, "kind");
		int lin = kind && strcmp(kind, "linear") == 0;
		xmlFree(kind);
		const char *what = lin ? "power curve linear" : "power curve power-law";
		double rms = 0, mx = 0;
		fit_stats(L, e, what, &w->points, &rms, &mx, CAPSIM_DIM_WATTS);
		if (lin) {
			qty(L, e, what, "a", CAPSIM_DIM_WATTS, Q_REQ, 0, &w->lin_a_w);
			qty(L, e, what, "b", CAPSIM_DIM_WATTS, Q_REQ, 0, &w->lin_b_w);
			w->lin_rms_w = rms;
			w->lin_max_w = mx;
		} else {
			qty(L, e, what, "gamma", CAPSIM_DIM_RATIO, Q_REQ | Q_POS, 100.0, &w->gamma);
			w->gamma_rms_w = rms;
			w->gamma_max_w = mx;
		}
	}
	if (w->sustained_w > 0 && w->sustained_w < w->idle_w)
		bad(L, el, "power", "sustained %g W is below idle %g W", w->sustained_w,
		    w->idle_w);
}

/* <attention kernel=...>: index of the kernel's name, or -1 */
static int attn_kernel_index(const char *s)
{
	for (int i = 0; capsim_attn_kernel_names[i]; i++)
		if (strcmp(capsim_attn_kernel_names[i], s) == 0)
			return i;
	return -1;
}

/* one <point>: its shape, mask and two rates; a shape already in the curve
 * is refused */
static void attn_point(loader *L, xmlNode *e, const char *what, capsim_attn_curve *c)
{
	capsim_attn_point *pt = &c->pt[c->n];
	memset(pt, 0, sizeof *pt);
	pt->seq = (float)integer(e, "seq", 0);
	pt->head_dim = (float)integer(e, "head-dim", 0);
	char *mask = prop(e, "causal");
	pt->causal = mask ? capsim_flag_parse(mask) == 1 : 0;
	xmlFree(mask);
	double fwd = 0, bwd = 0;
	qty(L, e, what, "fwd", CAPSIM_DIM_FLOP_PER_S, Q_REQ | Q_POS, 1e18, &fwd);
	qty(L, e, what, "bwd", CAPSIM_DIM_FLOP_PER_S, Q_REQ | Q_POS, 1e18, &bwd);
	pt->fwd_flop_per_s = (float)fwd;
	pt->bwd_flop_per_s = (float)bwd;
	for (int i = 0; i < c->n; i++)
		if (c->pt[i].seq == pt->seq && c->pt[i].head_dim == pt->head_dim &&
		    c->pt[i].causal == pt->causal) {
			bad(L, e, what, "point: expected each seq, head-dim and causal once, found "
			    "seq=%.0f head-dim=%.0f causal=%s again", (double)pt->seq,
			    (double)pt->head_dim, pt->causal ? "true" : "false");
			return;
		}
	c->n++;
}

static void load_attention(loader *L, xmlNode *el)
{
	char *k = prop(el, "kernel");
	int i = k ? attn_kernel_index(k) : -1;
	char what[96];
	snprintf(what, sizeof what, "attention %s", k ? k : "?");
	xmlFree(k);
	if (i < 0) {
		bad(L, el, "attention.kernel", "expected flash2, flash3 or cudnn, found '%s'",
		    what + strlen("attention "));
		return;
	}
	capsim_profile_attn *a = &L->p->attn[i];
	if (a->curve.n) {
		bad(L, el, what, "a second <attention> for this kernel");
		return;
	}
	qty(L, el, what, "peak-bf16", CAPSIM_DIM_FLOP_PER_S, Q_REQ | Q_POS, 1e18,
	    &a->curve.peak_bf16_flop_per_s);
	run_list(L, el, what, &a->runs);
	for (xmlNode *e = next_el(el->children); e; e = next_el(e->next)) {
		if (a->curve.n == CAPSIM_ATTN_POINTS) {
			bad(L, e, what, "more than %d <point> elements (a curve holds at most %d)",
			    CAPSIM_ATTN_POINTS, CAPSIM_ATTN_POINTS);
			break;
		}
		attn_point(L, e, what, &a->curve);
	}
}

static void load_note(loader *L, xmlNode *el)
{
	xmlChar *t = xmlNodeGetContent(el);
	capsim_profile_note(L->p, "%s", t ? (const char *)t : "");
	xmlFree(t);
}

static void load_head(loader *L, xmlNode *root)
{
	capsim_profile *p = L->p;
	text(root, "name", p->name, sizeof p->name);
	snprintf(L->label, sizeof L->label, "profile '%s'", p->name);
	text(root, "gpu", p->gpu, sizeof p->gpu);
	text(root, "gpu-name", p->gpu_name, sizeof p->gpu_name);
	text(root, "created", p->created, sizeof p->created);
	text(root, "capsim", p->capsim, sizeof p->capsim);
	text(root, "database", p->database, sizeof p->database);
	char *date = prop(root, "date"), err[256];
	if (date && capsim_date_parse(date, p->date, sizeof p->date, err, sizeof err) < 0)
		bad(L, root, "date", "%s", err);
	xmlFree(date);
}

static int load_doc(xmlDoc *doc, const char *name, capsim_profile *out,
		    capsim_diags *d)
{
	xmlNode *root = xmlDocGetRootElement(doc);
	if (!root || strcmp((const char *)root->name, "profile") != 0) {
		capsim_diags_add(d, name, root ? xmlGetLineNo(root) : 0,
				 "root element <%s> is not a calibrated profile (expected <profile>)",
				 root ? (const char *)root->name : "");
		return -1;
	}
	if (capsim_xml_validate(doc, "profile", name, d) < 0)
		return -1;
	loader L = { .file = name, .d = d, .p = out };
	load_head(&L, root);
	capsim_strlcpy(out->file, name, sizeof out->file);
	/* runs first: every other element names them */
	for (xmlNode *el = next_el(root->children); el; el = next_el(el->next))
		if (is(el, "run"))
			load_run(&L, el);
	for (xmlNode *el = next_el(root->children); el; el = next_el(el->next)) {
		if (is(el, "efficiency"))
			load_efficiency(&L, el);
		else if (is(el, "kernels"))
			load_kernels(&L, el);
		else if (is(el, "gemm"))
			load_gemm(&L, el);
		else if (is(el, "hbm"))
			load_hbm(&L, el);
		else if (is(el, "pcie"))
			load_pcie(&L, el);
		else if (is(el, "collective"))
			load_coll(&L, el);
		else if (is(el, "power"))
			load_power(&L, el);
		else if (is(el, "attention"))
			load_attention(&L, el);
		else if (is(el, "note"))
			load_note(&L, el);
	}
	return L.problems ? -1 : 0;
}

int capsim_profile_load_memory(const char *buf, size_t len, const char *name,
			       capsim_profile *out, capsim_diags *d)
{
	memset(out, 0, sizeof *out);
	xmlDoc *doc = capsim_xml_read_memory(buf, len, name, d);
	if (!doc)
		return -1;
	int rc = load_doc(doc, name, out, d);
	xmlFreeDoc(doc);
	if (rc < 0)
		capsim_profile_free(out);
	return rc;
}

int capsim_profile_load(const char *path, capsim_profile *out,
			capsim_diags *d)
{
	memset(out, 0, sizeof *out);
	xmlDoc *doc = capsim_xml_read(path, NULL, d);
	if (!doc)
		return -1;
	int rc = load_doc(doc, path, out, d);
	xmlFreeDoc(doc);
	if (rc < 0)
		capsim_profile_free(out);
	return rc;
}

/* ---- applying -------------------------------------------------------------- */

int capsim_profile_apply(const capsim_profile *p, capsim_gpu *g,
			 capsim_diags *d)
{
	if (strcmp(p->gpu, g->e.id) != 0) {
		capsim_diags_add(d, p->file[0] ? p->file : NULL, 0,
				 "profile '%s' was measured on GPU '%s' (%s), not on '%s': "
				 "a profile applies only to the GPU model it measured",
				 p->name, p->gpu, p->gpu_name, g->e.id);
		return -1;
	}
	if (p->eff_gemm > 0)
		g->eff_gemm = p->eff_gemm;
	if (p->eff_gemm_fp8 > 0)
		g->eff_gemm_fp8 = p->eff_gemm_fp8;
	if (p->eff_hbm > 0)
		g->eff_hbm = p->eff_hbm;
	if (p->eff_launch_s > 0)
		g->launch_eager_s = p->eff_launch_s;
	if (p->eff_dispatch_s > 0)
		g->dispatch_s = p->eff_dispatch_s;
	if (p->eff_dispatch_compiled_s > 0)
		g->dispatch_compiled_s = p->eff_dispatch_compiled_s;
	if (p->eff_kernel_gap_s > 0)
		g->kernel_gap_s = p->eff_kernel_gap_s;
	if (p->eff_launch_graph_s > 0)
		g->launch_graph_s = p->eff_launch_graph_s;
	memcpy(g->block_kernels, p->block_kernels, sizeof g->block_kernels);
	memset(&g->cal, 0, sizeof g->cal);
	capsim_strlcpy(g->cal.profile, p->name, sizeof g->cal.profile);
	for (int i = 0; i < CAPSIM_CAL_DTYPES; i++)
		if (p->gemm[i].cal.params > 0)
			g->cal.gemm[i] = p->gemm[i].cal;
	for (size_t i = 0; i < p->n_coll && g->cal.n_coll < CAPSIM_CAL_COLLS; i++) {
		const capsim_profile_coll *c = &p->coll[i];
		if (c->nodes != 1 || strcmp(c->algo, "default") || strcmp(c->proto, "default") ||
		    c->regimes < 1)
			continue;
		capsim_coll_cal *k = &g->cal.coll[g->cal.n_coll++];
		capsim_strlcpy(k->op, c->op, sizeof k->op);
		k->ranks = c->ranks;
		k->regimes = c->regimes > 2 ? 2 : c->regimes;
		for (int r = 0; r < k->regimes; r++) {
			k->latency_s[r] = c->regime[r].latency_s;
			k->bw_bytes_per_s[r] = c->regime[r].bw_bytes_per_s;
		}
		k->split_bytes = k->regimes == 2 ? c->regime[1].bytes_min : c->regime[0].bytes_max;
		k->bytes_min = c->regime[0].bytes_min;
		k->bytes_max = c->regime[k->regimes - 1].bytes_max;
	}
	if (p->power.present) {
		g->cal.power_idle_w = p->power.idle_w;
		g->cal.power_sustained_w = p->power.sustained_w;
		g->cal.clock_sustained_hz = p->power.sustained_clock_hz;
		g->cal.power_gamma = p->power.gamma;
	}
	for (int i = 0; i < CAPSIM_ATTN__KERNELS; i++)
		if (p->attn[i].curve.n > 0)
			g->cal.attn[i] = p->attn[i].curve;
	return 0;
}

/* ---- writing ----------------------------------------------------------------- */

/* name="value", escaped */
static void attr(FILE *f, const char *name, const char *v)
{
	fprintf(f, " %s=\"", name);
	capsim_xml_escape(f, v);
	fputc('"', f);
}

/* a quantity: value / scale with its unit */
static void attr_q(FILE *f, const char *name, double v, double scale,
		   const char *unit)
{
	fprintf(f, " %s=\"%.12g%s%s\"", name, v / scale, unit[0] ? " " : "", unit);
}

static void attr_l(FILE *f, const char *name, long long v)
{
	if (v > 0)
		fprintf(f, " %s=\"%lld\"", name, v);
}

static void attr_runs(FILE *f, const capsim_run_ids *r)
{
	fputs(" runs=\"", f);
	for (size_t i = 0; i < r->n; i++)
		fprintf(f, "%s%lld", i ? "," : "", (long long)r->id[i]);
	fputc('"', f);
}

static void write_fit(FILE *f, size_t points, double rms, double max_abs,
		      double scale, const char *unit)
{
	fprintf(f, " points=\"%zu\"", points);
	attr_q(f, "rms", rms, scale, unit);
	attr_q(f, "max-abs", max_abs, scale, unit);
}

static void write_ab(FILE *f, const capsim_profile_ab *ab)
{
	attr_q(f, "latency", ab->latency_s, 1e-6, "us");
	attr_q(f, "bandwidth", ab->bw_bytes_per_s, 1e9, "GB/s");
	attr_q(f, "bytes-min", ab->bytes_min, 1, "B");
	attr_q(f, "bytes-max", ab->bytes_max, 1, "B");
	write_fit(f, ab->points, ab->rms, ab->max_abs, 1, "");
}

static void write_run(FILE *f, const capsim_profile_run *r)
{
	fprintf(f, "  <run id=\"%lld\"", (long long)r->id);
	attr(f, "program", r->program);
	attr(f, "date", r->date);
	attr(f, "gpu", r->gpu);
	if (r->sha256[0])
		attr(f, "sha256", r->sha256);
	if (r->source[0])
		attr(f, "source", r->source);
	if (r->cc[0])
		attr(f, "cc", r->cc);
	attr_l(f, "sms", r->sms);
	attr_l(f, "cuda-driver", r->cuda_driver);
	attr_l(f, "cuda-runtime", r->cuda_runtime);
	attr_l(f, "cublaslt", r->cublaslt);
	attr_l(f, "nccl", r->nccl);
	attr_l(f, "ranks", r->ranks);
	attr_l(f, "nodes", r->nodes);
	if (r->launcher[0])
		attr(f, "launcher", r->launcher);
	if (!r->n_env) {
		fputs("/>\n", f);
		return;
	}
	fputs(">\n", f);
	for (size_t i = 0; i < r->n_env; i++) {
		fputs("    <env", f);
		attr(f, "name", r->env[i].name);
		attr(f, "value", r->env[i].value);
		fputs("/>\n", f);
	}
	fputs("  </run>\n", f);
}

static void write_gemm(FILE *f, int dtype, const capsim_profile_gemm *g)
{
	const capsim_gemm_cal *c = &g->cal;
	fprintf(f, "  <gemm dtype=\"%s\" params=\"%d\"", capsim_dtype_names[dtype], c->params);
	attr_q(f, "sat", c->sat, 1, "");
	if (c->params >= 3) {
		attr_q(f, "f0", c->f0_flop, 1, "");
		attr_q(f, "p", c->p, 1, "");
	}
	if (c->params >= 5) {
		attr_q(f, "i0", c->i0_flop_per_byte, 1, "");
		attr_q(f, "q", c->q, 1, "");
	}
	attr_q(f, "flop-min", c->flop_min, 1, "");
	attr_q(f, "flop-max", c->flop_max, 1, "");
	attr_q(f, "intensity-min", c->ai_min, 1, "");
	attr_q(f, "intensity-max", c->ai_max, 1, "");
	if (c->misaligned > 0)
		attr_q(f, "misaligned", c->misaligned, 1, "");
	write_fit(f, g->n_points, g->rms, g->max_abs, 1, "");
	attr_q(f, "loo-rms", g->loo_rms, 1, "");
	attr_q(f, "loo-max-abs", g->loo_max_abs, 1, "");
	attr_q(f, "table-rms", g->table_rms, 1, "");
	attr_q(f, "table-max-abs", g->table_max_abs, 1, "");
	attr_runs(f, &g->runs);
	fputs(">\n", f);
	for (size_t i = 0; i < g->n_points; i++) {
		const capsim_profile_point *pt = &g->points[i];
		fprintf(f, "    <point m=\"%.0f\" n=\"%.0f\" k=\"%.0f\"", pt->m, pt->n, pt->k);
		attr_q(f, "fraction", pt->frac, 1, "");
		attr_q(f, "ratio", pt->ratio, 1, "");
		fprintf(f, " run=\"%lld\"/>\n", (long long)pt->run);
	}
	fputs("  </gemm>\n", f);
}

static void write_power(FILE *f, const capsim_profile_power *w)
{
	fputs("  <power", f);
	if (w->limit_w > 0)
		attr_q(f, "limit", w->limit_w, 1, "W");
	attr_q(f, "idle", w->idle_w, 1, "W");
	if (w->idle_clock_hz > 0)
		attr_q(f, "idle-clock", w->idle_clock_hz, 1e6, "MHz");
	if (w->sustained_w > 0)
		attr_q(f, "sustained", w->sustained_w, 1, "W");
	if (w->sustained_clock_hz > 0)
		attr_q(f, "sustained-clock", w->sustained_clock_hz, 1e6, "MHz");
	if (w->sustained_flop_per_s > 0)
		attr_q(f, "sustained-rate", w->sustained_flop_per_s, 1e12, "TFLOP/s");
	attr_runs(f, &w->runs);
	if (!w->points) {
		fputs("/>\n", f);
		return;
	}
	fputs(">\n    <curve kind=\"linear\"", f);
	attr_q(f, "a", w->lin_a_w, 1, "W");
	attr_q(f, "b", w->lin_b_w, 1, "W");
	write_fit(f, w->points, w->lin_rms_w, w->lin_max_w, 1, "W");
	fputs("/>\n", f);
	if (w->gamma > 0) {
		fputs("    <curve kind=\"power-law\"", f);
		attr_q(f, "gamma", w->gamma, 1, "");
		write_fit(f, w->points, w->gamma_rms_w, w->gamma_max_w, 1, "W");
		fputs("/>\n", f);
	}
	fputs("  </power>\n", f);
}

static void write_attention(FILE *f, int kernel, const capsim_profile_attn *a)
{
	const capsim_attn_curve *c = &a->curve;
	fprintf(f, "  <attention kernel=\"%s\"", capsim_attn_kernel_names[kernel]);
	attr_q(f, "peak-bf16", c->peak_bf16_flop_per_s, 1e12, "TFLOP/s");
	attr_runs(f, &a->runs);
	fputs(">\n", f);
	for (int i = 0; i < c->n; i++) {
		const capsim_attn_point *pt = &c->pt[i];
		fprintf(f, "    <point seq=\"%.0f\" head-dim=\"%.0f\" causal=\"%s\"",
			(double)pt->seq, (double)pt->head_dim, pt->causal ? "true" : "false");
		/* single precision: 9 digits read back to the same float */
		fprintf(f, " fwd=\"%.9g TFLOP/s\" bwd=\"%.9g TFLOP/s\"/>\n",
			(double)pt->fwd_flop_per_s / 1e12, (double)pt->bwd_flop_per_s / 1e12);
	}
	fputs("  </attention>\n", f);
}

static void write_body(const capsim_profile *p, FILE *f)
{
	for (size_t i = 0; i < p->n_runs; i++)
		write_run(f, &p->runs[i]);
	if (p->eff_gemm > 0 || p->eff_gemm_fp8 > 0 || p->eff_hbm > 0 || p->eff_launch_s > 0 ||
	    p->eff_dispatch_s > 0 || p->eff_kernel_gap_s > 0 || p->eff_launch_graph_s > 0) {
		fputs("  <efficiency", f);
		if (p->eff_gemm > 0)
			attr_q(f, "gemm", p->eff_gemm, 1, "");
		if (p->eff_gemm_fp8 > 0)
			attr_q(f, "gemm-fp8", p->eff_gemm_fp8, 1, "");
		if (p->eff_hbm > 0)
			attr_q(f, "hbm", p->eff_hbm, 1, "");
		if (p->eff_launch_s > 0)
			attr_q(f, "launch", p->eff_launch_s, 1e-6, "us");
		if (p->eff_dispatch_s > 0)
			attr_q(f, "dispatch", p->eff_dispatch_s, 1e-6, "us");
		if (p->eff_dispatch_compiled_s > 0)
			attr_q(f, "dispatch-compiled", p->eff_dispatch_compiled_s, 1e-6, "us");
		if (p->eff_kernel_gap_s > 0)
			attr_q(f, "kernel-gap", p->eff_kernel_gap_s, 1e-6, "us");
		if (p->eff_launch_graph_s > 0)
			attr_q(f, "launch-graph", p->eff_launch_graph_s, 1e-6, "us");
		attr_runs(f, &p->eff_runs);
		fputs("/>\n", f);
	}
	if (p->block_kernels[0][0] > 0 || p->block_kernels[1][0] > 0) {
		static const char *const names[2][2] = {
			{ "layernorm-forward", "layernorm-backward" },
			{ "rmsnorm-forward", "rmsnorm-backward" } };
		fputs("  <kernels", f);
		for (int fam = 0; fam < 2; fam++)
			for (int b = 0; b < 2; b++)
				if (p->block_kernels[fam][b] > 0)
					attr_q(f, names[fam][b], p->block_kernels[fam][b], 1, "");
		attr_runs(f, &p->kernel_runs);
		fputs("/>\n", f);
	}
	for (int i = 0; i < CAPSIM_CAL_DTYPES; i++)
		if (p->gemm[i].cal.params > 0)
			write_gemm(f, i, &p->gemm[i]);
	if (p->hbm.points) {
		fputs("  <hbm", f);
		attr_q(f, "bandwidth", p->hbm.bw_bytes_per_s, 1e12, "TB/s");
		attr_q(f, "efficiency", p->hbm.eff, 1, "");
		write_fit(f, p->hbm.points, p->hbm.rms, p->hbm.max_abs, 1, "");
		attr_runs(f, &p->hbm.runs);
		fputs("/>\n", f);
	}
	for (int i = 0; i < 2; i++) {
		if (!p->pcie[i].ab.points)
			continue;
		fprintf(f, "  <pcie direction=\"%s\"", i == CAPSIM_PCIE_H2D ? "h2d" : "d2h");
		write_ab(f, &p->pcie[i].ab);
		attr_runs(f, &p->pcie[i].runs);
		fputs("/>\n", f);
	}
	for (size_t i = 0; i < p->n_coll; i++) {
		const capsim_profile_coll *c = &p->coll[i];
		fputs("  <collective", f);
		attr(f, "op", c->op);
		attr(f, "algo", c->algo);
		attr(f, "proto", c->proto);
		fprintf(f, " ranks=\"%d\" nodes=\"%d\"", c->ranks, c->nodes);
		attr_q(f, "bus-factor", c->bus_factor, 1, "");
		attr_runs(f, &c->runs);
		fputs(">\n", f);
		for (int r = 0; r < c->regimes; r++) {
			fputs("    <regime", f);
			write_ab(f, &c->regime[r]);
			fputs("/>\n", f);
		}
		fputs("  </collective>\n", f);
	}
	if (p->power.present)
		write_power(f, &p->power);
	for (int i = 0; i < CAPSIM_ATTN__KERNELS; i++)
		if (p->attn[i].curve.n > 0)
			write_attention(f, i, &p->attn[i]);
	for (size_t i = 0; i < p->n_notes; i++) {
		fputs("  <note>", f);
		capsim_xml_escape(f, p->notes[i]);
		fputs("</note>\n", f);
	}
}

int capsim_profile_write(const capsim_profile *p, FILE *f)
{
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	      "<!-- written by capsim fit: a calibrated hardware profile (docs/model.md,\n"
	      "     \"Calibrated profiles\"); refit rather than edit by hand -->\n"
	      "<profile", f);
	attr(f, "name", p->name);
	attr(f, "gpu", p->gpu);
	attr(f, "gpu-name", p->gpu_name);
	attr(f, "date", p->date);
	if (p->created[0])
		attr(f, "created", p->created);
	if (p->capsim[0])
		attr(f, "capsim", p->capsim);
	if (p->database[0])
		attr(f, "database", p->database);
	fputs(">\n", f);
	write_body(p, f);
	fputs("</profile>\n", f);
	return ferror(f) ? -1 : 0;
}

/* Write p to the open temporary file fd (closed here), flushed to disk. */
static int write_temp(const capsim_profile *p, int fd, const char *tmp,
		      capsim_diags *d)
{
	FILE *f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		capsim_diags_add(d, tmp, 0, "cannot write: %s", strerror(errno));
		return -1;
	}
	int rc = capsim_profile_write(p, f);
	if (rc == 0 && (fflush(f) != 0 || fsync(fileno(f)) != 0))
		rc = -1;
	int err = errno;
	if (fclose(f) != 0 && rc == 0) {
		rc = -1;
		err = errno;
	}
	if (rc < 0)
		capsim_diags_add(d, tmp, 0, "cannot write: %s", strerror(err));
	return rc;
}

/* Does the file at path load back as a profile? */
static int loads_back(const char *file, const char *path, capsim_diags *d)
{
	capsim_profile back;
	capsim_diags why = { 0 };
	int rc = 0;
	if (capsim_profile_load(file, &back, &why) < 0) {
		/* where names the temporary file (file:line): keep only its line,
		 * which is the same line of path once renamed */
		const char *where = why.n && why.v[0].where ? why.v[0].where : "";
		const char *colon = strrchr(where, ':');
		long line = colon ? strtol(colon + 1, NULL, 10) : 0;
		capsim_diags_add(d, path, line, "internal: the profile written does not load back: %s",
				 why.n ? why.v[0].msg : "no reason given");
		rc = -1;
	}
	capsim_profile_free(&back);
	capsim_diags_free(&why);
	return rc;
}

/* "-", or --force: through the output writer, so that standard output, a
 * device or a symlink is written through and a regular file replaced whole */
static int save_through(const capsim_profile *p, const char *path, capsim_diags *d)
{
	capsim_outfile o;
	if (capsim_outfile_open(&o, path, d) < 0)
		return -1;
	int rc = capsim_profile_write(p, o.f);
	if (rc < 0)
		capsim_diags_add(d, path, 0, "cannot write the profile");
	if (rc == 0 && o.tmp[0] && (fflush(o.f) != 0 || loads_back(o.tmp, path, d) < 0))
		rc = -1;
	if (rc < 0) {
		capsim_outfile_discard(&o);
		return -1;
	}
	return capsim_outfile_close(&o, d);
}

int capsim_profile_save(const capsim_profile *p, const char *path, int force,
			capsim_diags *d)
{
	struct stat st;
	if (force || strcmp(path, "-") == 0)
		return save_through(p, path, d);
	if (!force && stat(path, &st) == 0) {
		capsim_diags_add(d, path, 0, "exists; refusing to overwrite it (use --force)");
		return -1;
	}
	char *tmp = capsim_xasprintf("%s.tmp.XXXXXX", path);
	int fd = mkstemp(tmp);
	if (fd < 0) {
		capsim_diags_add(d, path, 0, "cannot create a temporary file beside it: %s",
				 strerror(errno));
		free(tmp);
		return -1;
	}
	int rc = fchmod(fd, 0644) == 0 ? 0 : -1;
	if (rc < 0) {
		capsim_diags_add(d, tmp, 0, "cannot set its mode: %s", strerror(errno));
		close(fd);
	} else {
		rc = write_temp(p, fd, tmp, d);
	}
	if (rc == 0)
		rc = loads_back(tmp, path, d);
	/* a new file: link() fails rather than replace one that appeared
	 * meanwhile (--force goes through save_through) */
	if (rc == 0 && link(tmp, path) != 0) {
		capsim_diags_add(d, path, 0, "cannot create: %s", strerror(errno));
		rc = -1;
	}
	unlink(tmp);
	free(tmp);
	return rc;
}

/* ---- the table ----------------------------------------------------------------- */

/* index of (m, n, k) among c's shapes, or -1 */
static int find_shape(const capsim_gemm_cal *c, const capsim_profile_point *pt)
{
	for (int i = 0; i < c->n_shapes; i++)
		if (c->shape_m[i] == pt->m && c->shape_n[i] == pt->n && c->shape_k[i] == pt->k)
			return i;
	return -1;
}

int capsim_profile_gemm_tables(capsim_profile_gemm *g)
{
	capsim_gemm_cal *c = &g->cal;
	int cnt[CAPSIM_CAL_SHAPES] = { 0 }, dropped = 0;
	c->n_shapes = c->n_table = 0;
	/* geometric means of the ratios, shape by shape */
	for (size_t i = 0; i < g->n_points; i++) {
		const capsim_profile_point *pt = &g->points[i];
		int j = find_shape(c, pt);
		if (j < 0 && c->n_shapes == CAPSIM_CAL_SHAPES) {
			dropped++;
			continue;
		}
		if (j < 0) {
			j = c->n_shapes++;
			c->shape_m[j] = pt->m;
			c->shape_n[j] = pt->n;
			c->shape_k[j] = pt->k;
			c->shape_ratio[j] = 0.0;
			c->shape_lo[j] = c->shape_hi[j] = pt->ratio;
		}
		c->shape_ratio[j] += log(pt->ratio);
		c->shape_lo[j] = fmin(c->shape_lo[j], pt->ratio);
		c->shape_hi[j] = fmax(c->shape_hi[j], pt->ratio);
		cnt[j]++;
	}
	for (int j = 0; j < c->n_shapes; j++)
		c->shape_ratio[j] = exp(c->shape_ratio[j] / cnt[j]);
	/* the square shapes, by F ascending (selection sort: at most 32) */
	int used[CAPSIM_CAL_SHAPES] = { 0 };
	for (;;) {
		int lo = -1;
		for (int j = 0; j < c->n_shapes; j++)
			if (!used[j] && c->shape_m[j] == c->shape_n[j] &&
			    c->shape_n[j] == c->shape_k[j] && (lo < 0 || c->shape_m[j] < c->shape_m[lo]))
				lo = j;
		if (lo < 0)
			break;
		used[lo] = 1;
		if (c->n_table == CAPSIM_CAL_TABLE) {
			dropped++;
			continue;
		}
		c->table_flop[c->n_table] = 2.0 * c->shape_m[lo] * c->shape_m[lo] * c->shape_m[lo];
		c->table_ratio[c->n_table++] = c->shape_ratio[lo];
	}
	return dropped;
}

/* ---- notes and freeing -------------------------------------------------------- */

void capsim_run_ids_add(capsim_run_ids *r, int64_t id)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->id[i] == id)
			return;
	if (r->n < CAPSIM_PROFILE_MAX_RUNS)
		r->id[r->n++] = id;
}

void capsim_profile_note(capsim_profile *p, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = capsim_xvasprintf(fmt, ap);
	va_end(ap);
	p->notes = capsim_xrealloc(p->notes, (p->n_notes + 1) * sizeof *p->notes);
	p->notes[p->n_notes++] = s;
}

void capsim_profile_free(capsim_profile *p)
{
	for (size_t i = 0; i < p->n_runs; i++)
		free(p->runs[i].env);
	free(p->runs);
	for (int i = 0; i < CAPSIM_CAL_DTYPES; i++)
		free(p->gemm[i].points);
	free(p->coll);
	for (size_t i = 0; i < p->n_notes; i++)
		free(p->notes[i]);
	free(p->notes);
	memset(p, 0, sizeof *p);
}
