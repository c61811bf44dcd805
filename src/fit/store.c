/* store.c - capsim fit over the measurement store: read the runs and each
 * kind of measurement (src/store/query.h, any schema version), fit it, and
 * assemble the profile; see fit.h. */
#include "fit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_sort_double.h>
#include <gsl/gsl_statistics_double.h>

#include "collective.h"
#include "query.h"
#include "xalloc.h"

/* one fit: the open store, its runs filter, the GPU and the profile */
typedef struct fitter {
	capsim_store *db;
	const char *path;
	capsim_diags *d;
	capsim_profile *p;
	const capsim_gpu *g;
	capsim_store_sel sel; /* the runs of --runs, or every run */
} fitter;

/* ---- runs ------------------------------------------------------------------- */

static void copy_run(const capsim_store_run *s, capsim_profile_run *r)
{
	memset(r, 0, sizeof *r);
	r->id = s->id;
	capsim_strlcpy(r->sha256, s->sha256, sizeof r->sha256);
	capsim_strlcpy(r->source, s->source, sizeof r->source);
	capsim_strlcpy(r->program, s->program, sizeof r->program);
	capsim_strlcpy(r->date, s->date, sizeof r->date);
	capsim_strlcpy(r->gpu, s->gpu, sizeof r->gpu);
	capsim_strlcpy(r->cc, s->cc, sizeof r->cc);
	r->sms = s->sms;
	r->cuda_driver = s->cuda_driver;
	r->cuda_runtime = s->cuda_runtime;
	r->cublaslt = s->cublaslt;
	r->nccl = s->nccl;
	r->ranks = s->ranks;
	r->nodes = s->nodes;
	capsim_strlcpy(r->launcher, s->launcher, sizeof r->launcher);
	if (s->n_env)
		r->env = capsim_xcalloc(s->n_env, sizeof *r->env);
	for (size_t i = 0; i < s->n_env; i++) {
		capsim_strlcpy(r->env[i].name, s->env[i].name, sizeof r->env[i].name);
		capsim_strlcpy(r->env[i].value, s->env[i].value, sizeof r->env[i].value);
	}
	r->n_env = s->n_env;
}

/* the selected runs into p->runs, and their memory (for the GPU's
 * inference); -1 when there are none or one asked for is absent */
static int read_runs(fitter *f, const capsim_fit_options *o, double *mem_bytes)
{
	capsim_store_runs runs;
	if (capsim_store_read_runs(f->db, &f->sel, &runs, f->d) < 0)
		return -1;
	capsim_profile *p = f->p;
	if (runs.n)
		p->runs = capsim_xcalloc(runs.n, sizeof *p->runs);
	for (size_t i = 0; i < runs.n; i++) {
		copy_run(&runs.v[i], &p->runs[p->n_runs++]);
		*mem_bytes = (double)runs.v[i].memory_bytes;
	}
	capsim_store_runs_free(&runs);
	for (size_t i = 0; i < o->n_runs; i++) {
		int found = 0;
		for (size_t j = 0; j < p->n_runs; j++)
			found |= p->runs[j].id == o->runs[i];
		if (!found) {
			capsim_diags_add(f->d, f->path, 0, "--runs: run %lld is not in the database",
					 (long long)o->runs[i]);
			return -1;
		}
	}
	if (p->n_runs == 0) {
		capsim_diags_add(f->d, f->path, 0, "no runs: import calibrate/'s results first "
						   "(capsim calibrate import)");
		return -1;
	}
	for (size_t j = 1; j < p->n_runs; j++)
		if (strcmp(p->runs[j].gpu, p->runs[0].gpu) != 0) {
			capsim_diags_add(f->d, f->path, 0,
					 "runs %lld (%s) and %lld (%s) measured different GPUs; "
					 "choose one model's runs with --runs",
					 (long long)p->runs[0].id, p->runs[0].gpu,
					 (long long)p->runs[j].id, p->runs[j].gpu);
			return -1;
		}
	return 0;
}

/* ---- GEMMs --------------------------------------------------------------- */

static int dtype_index(const char *s)
{
	for (int i = 0; capsim_dtype_names[i]; i++)
		if (strcmp(capsim_dtype_names[i], s) == 0)
			return i;
	return -1;
}

/* The GEMM rows, and the sustained-load GEMMs of power_sustained (the same
 * kind of measurement, taken over seconds under the power cap), by dtype. */
static int fit_gemms(fitter *f)
{
	capsim_store_gemms rows;
	if (capsim_store_read_gemms(f->db, &f->sel, 1, &rows, f->d) < 0)
		return -1;
	capsim_profile_point *pts[CAPSIM_CAL_DTYPES] = { 0 };
	size_t n[CAPSIM_CAL_DTYPES] = { 0 }, unknown = 0, over = 0;
	for (size_t i = 0; i < rows.n; i++) {
		const capsim_store_gemm *r = &rows.v[i];
		int dt = dtype_index(r->dtype);
		double peak = dt >= 0 ? capsim_gpu_peak(f->g, dt) : 0.0;
		if (dt < 0 || !(peak > 0.0)) {
			unknown++;
			continue;
		}
		if (n[dt] == CAPSIM_PROFILE_MAX_POINTS) {
			over++;
			continue;
		}
		pts[dt] = capsim_xrealloc(pts[dt], (n[dt] + 1) * sizeof *pts[dt]);
		capsim_profile_point *pt = &pts[dt][n[dt]++];
		memset(pt, 0, sizeof *pt);
		pt->run = r->run_id;
		pt->m = (double)r->m;
		pt->n = (double)r->n;
		pt->k = (double)r->k;
		pt->frac = r->flop_per_s / peak;
	}
	capsim_store_gemms_free(&rows);
	if (unknown)
		capsim_profile_note(f->p, "%zu GEMM rows of a dtype capsim does not model or %s "
					  "has no peak for: left out", unknown, f->g->e.id);
	if (over)
		capsim_profile_note(f->p, "%zu GEMM rows beyond %d of one dtype: left out", over,
				    CAPSIM_PROFILE_MAX_POINTS);
	for (int i = 0; i < CAPSIM_CAL_DTYPES; i++) {
		if (n[i] && capsim_fit_gemm(i, pts[i], n[i], &f->p->gemm[i], f->p) < 0)
			capsim_profile_note(f->p, "%s: GEMMs could not be fitted: left out",
					    capsim_dtype_names[i]);
		free(pts[i]);
	}
	return 0;
}

/* ---- copy bandwidth ---------------------------------------------------------- */

static int fit_hbm(fitter *f)
{
	capsim_store_copies rows;
	if (capsim_store_read_copies(f->db, &f->sel, &rows, f->d) < 0)
		return -1;
	capsim_profile_hbm *h = &f->p->hbm;
	size_t n = rows.n;
	double *bw = capsim_xcalloc(n + 1, sizeof *bw);
	for (size_t i = 0; i < n; i++) {
		bw[i] = rows.v[i].bytes_per_s;
		capsim_run_ids_add(&h->runs, rows.v[i].run_id);
	}
	capsim_store_copies_free(&rows);
	if (n && f->g->mem_bw_bytes_per_s > 0) {
		h->points = n;
		h->bw_bytes_per_s = gsl_stats_median(bw, 1, n);
		h->eff = h->bw_bytes_per_s / f->g->mem_bw_bytes_per_s;
		double ss = 0.0;
		for (size_t i = 0; i < n; i++) {
			double r = bw[i] / h->bw_bytes_per_s - 1.0;
			ss += r * r;
			h->max_abs = fmax(h->max_abs, fabs(r));
		}
		h->rms = sqrt(ss / (double)n);
	}
	free(bw);
	return 0;
}

/* ---- launch overhead -------------------------------------------------------------- */

/* PyTorch eager's host cost per kernel: the median over runs of
 * calibrate/torch's torch-launch medians (tiny kernels issued back to back,
 * so the host's issue rate sets the pace). It becomes the GPU's eager launch
 * overhead (capsim_gpu.launch_eager_s). */
static int fit_launch(fitter *f)
{
	capsim_store_torch_launches rows;
	if (capsim_store_read_torch_launch(f->db, &f->sel, &rows, f->d) < 0)
		return -1;
	double *v = capsim_xcalloc(rows.n + 1, sizeof *v);
	for (size_t i = 0; i < rows.n; i++) {
		v[i] = rows.v[i].host_median_s;
		capsim_run_ids_add(&f->p->eff_runs, rows.v[i].run_id);
	}
	if (rows.n)
		f->p->eff_launch_s = gsl_stats_median(v, 1, rows.n);
	free(v);
	capsim_store_torch_launches_free(&rows);
	return 0;
}

/* ---- the host stream ------------------------------------------------------------- */

static double host_median(double *v, size_t n)
{
	if (!n)
		return 0.0;
	gsl_sort(v, 1, n);
	return gsl_stats_median_from_sorted_data(v, 1, n);
}

/* From calibrate/torch's torch-step records that carry the host's view
 * (docs/model.md, "The host stream"):
 *   dispatch: the median over eager points of the host's issue time over
 *     the step's kernels, less the bare launch (torch-launch); compiled
 *     the same over compile points;
 *   kernel-gap: the median over eager points whose host issued the step in
 *     under half its time of (step - summed kernel durations) / kernels;
 *   launch-graph: the same over graph replays.
 * And from torch-host records, an eager block's kernels per norm family:
 * the forward's and the backward's kernels at the most blocks less at the
 * fewest, over their difference. */
static int fit_host(fitter *f)
{
	capsim_store_torch_steps rows;
	if (capsim_store_read_torch_step(f->db, &f->sel, &rows, f->d) < 0)
		return -1;
	double *v[4];
	size_t n[4] = { 0 };
	for (int i = 0; i < 4; i++)
		v[i] = capsim_xcalloc(rows.n + 1, sizeof *v[i]);
	capsim_run_ids runs = { 0 };
	for (size_t i = 0; i < rows.n; i++) {
		const capsim_store_torch_step *r = &rows.v[i];
		if (!r->ok || r->kernels <= 0 || r->issue_median_s < 0 || r->kernel_s < 0)
			continue;
		double k = (double)r->kernels, gap = (r->median_s - r->kernel_s) / k;
		int used = 1;
		if (!strcmp(r->mode, "eager")) {
			v[0][n[0]++] = r->issue_median_s / k;
			if (r->issue_median_s < 0.5 * r->median_s)
				v[2][n[2]++] = gap;
		} else if (!strcmp(r->mode, "compile")) {
			v[1][n[1]++] = r->issue_median_s / k;
		} else if (!strcmp(r->mode, "graphs")) {
			v[3][n[3]++] = gap;
		} else {
			used = 0;
		}
		if (used)
			capsim_run_ids_add(&runs, r->run_id);
	}
	capsim_store_torch_steps_free(&rows);
	capsim_profile *p = f->p;
	double launch = p->eff_launch_s;
	double host = host_median(v[0], n[0]), host_c = host_median(v[1], n[1]);
	if (launch > 0 && host > launch)
		p->eff_dispatch_s = host - launch;
	if (launch > 0 && host_c > launch)
		p->eff_dispatch_compiled_s = host_c - launch;
	double gap = host_median(v[2], n[2]), graph = host_median(v[3], n[3]);
	if (gap > 0)
		p->eff_kernel_gap_s = gap;
	if (graph > 0)
		p->eff_launch_graph_s = graph;
	if (p->eff_dispatch_s > 0 || p->eff_kernel_gap_s > 0 || p->eff_launch_graph_s > 0)
		for (size_t i = 0; i < runs.n; i++)
			capsim_run_ids_add(&p->eff_runs, runs.id[i]);
	for (int i = 0; i < 4; i++)
		free(v[i]);

	capsim_store_torch_hosts hosts;
	if (capsim_store_read_torch_host(f->db, &f->sel, &hosts, f->d) < 0)
		return -1;
	for (int fam = 0; fam < 2; fam++) {
		const capsim_store_torch_host *lo = NULL, *hi = NULL;
		for (size_t i = 0; i < hosts.n; i++) {
			const capsim_store_torch_host *h = &hosts.v[i];
			if (strcmp(h->mode, "eager") || strcmp(h->arch, fam ? "llama" : "gpt"))
				continue;
			if (!lo || h->layers < lo->layers)
				lo = h;
			if (!hi || h->layers > hi->layers)
				hi = h;
		}
		if (!lo || hi->layers == lo->layers)
			continue;
		double dl = (double)(hi->layers - lo->layers);
		double kf = (double)(hi->kernels_fwd - lo->kernels_fwd) / dl;
		double kb = (double)(hi->kernels_bwd - lo->kernels_bwd) / dl;
		if (kf > 0 && kb > 0) {
			p->block_kernels[fam][0] = kf;
			p->block_kernels[fam][1] = kb;
			capsim_run_ids_add(&p->kernel_runs, lo->run_id);
			capsim_run_ids_add(&p->kernel_runs, hi->run_id);
		}
	}
	capsim_store_torch_hosts_free(&hosts);
	return 0;
}

/* ---- PCIe ----------------------------------------------------------------------- */

static int fit_pcie(fitter *f)
{
	static const char *const dirs[2] = { "h2d", "d2h" };
	capsim_store_pcies rows;
	if (capsim_store_read_pcie(f->db, &f->sel, &rows, f->d) < 0)
		return -1;
	double *x = capsim_xcalloc(rows.n + 1, sizeof *x), *y = capsim_xcalloc(rows.n + 1, sizeof *y);
	for (int i = 0; i < 2; i++) {
		size_t n = 0;
		capsim_run_ids runs = { 0 };
		for (size_t j = 0; j < rows.n; j++) {
			const capsim_store_pcie *r = &rows.v[j];
			if (!r->pinned || strcmp(r->direction, dirs[i]) != 0)
				continue;
			x[n] = (double)r->bytes;
			y[n++] = r->median_s;
			capsim_run_ids_add(&runs, r->run_id);
		}
		if (n && capsim_fit_alpha_beta(x, y, n, &f->p->pcie[i].ab) == 0)
			f->p->pcie[i].runs = runs;
		else if (n)
			capsim_profile_note(f->p, "pcie %s: %zu points do not give a latency "
					    "and a positive bandwidth (one size, or times that "
					    "fall with size): left at the datasheet", dirs[i], n);
	}
	free(x);
	free(y);
	capsim_store_pcies_free(&rows);
	return 0;
}

/* ---- NCCL ------------------------------------------------------------------------- */

/* one group's rows: (op, algo, proto, ranks, nodes) */
typedef struct group {
	char op[CAPSIM_ID_LEN], algo[CAPSIM_ID_LEN], proto[CAPSIM_ID_LEN];
	int ranks, nodes;
	double *x, *y;
	size_t n;
	capsim_run_ids runs;
} group;

/* fit one group into the profile, or say why not */
static void fit_group(fitter *f, group *g)
{
	capsim_profile *p = f->p;
	if (g->ranks < 2) {
		capsim_profile_note(p, "nccl %s (algo %s, proto %s) on %d rank: no bandwidth is "
				       "fitted from one-rank data (nothing crosses a link); "
				       "the datasheet default stays", g->op, g->algo, g->proto,
				    g->ranks);
		return;
	}
	capsim_profile_coll c;
	memset(&c, 0, sizeof c);
	int r = capsim_fit_alpha_beta_regimes(g->x, g->y, g->n, c.regime);
	if (r < 0) {
		capsim_profile_note(p, "nccl %s (algo %s, proto %s, %d ranks): %zu points give no "
				       "positive bandwidth: left at the datasheet", g->op, g->algo,
				    g->proto, g->ranks, g->n);
		return;
	}
	capsim_strlcpy(c.op, g->op, sizeof c.op);
	capsim_strlcpy(c.algo, g->algo, sizeof c.algo);
	capsim_strlcpy(c.proto, g->proto, sizeof c.proto);
	c.ranks = g->ranks;
	c.nodes = g->nodes;
	c.regimes = r;
	int coll = capsim_coll_parse(g->op);
	c.bus_factor = coll >= 0 ? capsim_busbw_factor((capsim_coll)coll, g->ranks) : 0.0;
	c.runs = g->runs;
	p->coll = capsim_xrealloc(p->coll, (p->n_coll + 1) * sizeof *p->coll);
	p->coll[p->n_coll++] = c;
}

static int same_group(const group *g, const capsim_store_nccl *r)
{
	return !strcmp(g->op, r->op) && !strcmp(g->algo, r->algo) && !strcmp(g->proto, r->proto) &&
	       g->ranks == r->ranks && g->nodes == r->nodes;
}

static void start_group(group *g, const capsim_store_nccl *r)
{
	g->n = 0;
	memset(&g->runs, 0, sizeof g->runs);
	capsim_strlcpy(g->op, r->op, sizeof g->op);
	capsim_strlcpy(g->algo, r->algo, sizeof g->algo);
	capsim_strlcpy(g->proto, r->proto, sizeof g->proto);
	g->ranks = (int)r->ranks;
	g->nodes = (int)r->nodes;
}

/* the rows come ordered by group, then size */
static int fit_nccl(fitter *f)
{
	capsim_store_nccls rows;
	if (capsim_store_read_nccl(f->db, &f->sel, &rows, f->d) < 0)
		return -1;
	group g;
	memset(&g, 0, sizeof g);
	g.x = capsim_xcalloc(rows.n + 1, sizeof *g.x);
	g.y = capsim_xcalloc(rows.n + 1, sizeof *g.y);
	size_t wrong = 0;
	int open = 0;
	for (size_t i = 0; i < rows.n; i++) {
		const capsim_store_nccl *r = &rows.v[i];
		if (r->wrong != 0) {
			wrong++;
			continue;
		}
		if (open && !same_group(&g, r)) {
			fit_group(f, &g);
			open = 0;
		}
		if (!open) {
			start_group(&g, r);
			open = 1;
		}
		g.x[g.n] = (double)r->bytes;
		g.y[g.n++] = r->median_s;
		capsim_run_ids_add(&g.runs, r->run_id);
	}
	if (open)
		fit_group(f, &g);
	free(g.x);
	free(g.y);
	capsim_store_nccls_free(&rows);
	if (wrong)
		capsim_profile_note(f->p, "%zu nccl rows with wrong results (nccl-tests' #wrong > 0): "
					  "left out", wrong);
	return 0;
}

/* ---- power ---------------------------------------------------------------------- */

/* power readings as (u, watts) points, with their SM clocks and rates */
typedef struct pw_points {
	double *u, *w, *mhz, *rate;
	size_t n;
} pw_points;

static void add_point(pw_points *pts, double u, double w, double mhz, double rate)
{
	size_t n = pts->n + 1;
	pts->u = capsim_xrealloc(pts->u, n * sizeof *pts->u);
	pts->w = capsim_xrealloc(pts->w, n * sizeof *pts->w);
	pts->mhz = capsim_xrealloc(pts->mhz, n * sizeof *pts->mhz);
	pts->rate = capsim_xrealloc(pts->rate, n * sizeof *pts->rate);
	pts->u[pts->n] = u;
	pts->w[pts->n] = w;
	pts->mhz[pts->n] = mhz;
	pts->rate[pts->n] = rate;
	pts->n = n;
}

/* An idle reading taken while the card was still loaded (the software power
 * cap active, NVML bit 4, or over half the limit) is no idle reading: NVML's
 * power is a 1 s average, and calibrate-gemm read it right after its sweep
 * until 2026-12-02. One that NVML itself marks idle (clock-event reason
 * bit 1, GpuIdle: the clocks are down for want of work) is the idle state. */
static int idle_loaded(const capsim_store_power_idle *r)
{
	return (r->has_throttle && (r->throttle_reasons & 4) != 0) ||
	       r->power_w >= 0.5 * r->power_limit_w;
}

static int idle_marked(const capsim_store_power_idle *r)
{
	return r->has_throttle && (r->throttle_reasons & 1) != 0;
}

/* The idle readings that count: when NVML marked some idle, only those,
 * else any not under load; the others are noted with why. Adds them at
 * u = 0; returns how many, the largest power limit in *limit. */
static size_t idle_points(fitter *f, const capsim_store_power_idles *rows, pw_points *pts,
			  double *limit)
{
	int marked = 0;
	for (size_t i = 0; i < rows->n; i++)
		marked |= idle_marked(&rows->v[i]) && !idle_loaded(&rows->v[i]);
	size_t n = 0;
	for (size_t i = 0; i < rows->n; i++) {
		const capsim_store_power_idle *r = &rows->v[i];
		if (idle_loaded(r) || (marked && !idle_marked(r))) {
			capsim_profile_note(f->p, "power: run %lld's idle reading (%.0f W at %.0f MHz, "
						  "throttle reasons %lld) %s; left out",
					    (long long)r->run_id, r->power_w, r->sm_mhz,
					    (long long)r->throttle_reasons,
					    idle_loaded(r) ? "was taken under load" :
							     "is not one NVML marks idle, as others are");
			continue;
		}
		add_point(pts, 0.0, r->power_w, r->sm_mhz, r->power_limit_w);
		*limit = fmax(*limit, r->power_limit_w);
		capsim_run_ids_add(&f->p->power.runs, r->run_id);
		n++;
	}
	return n;
}

/* the power_sustained (u = 1) or power_duty (u = duty) rows as points */
static int load_points(fitter *f, int sustained, pw_points *pts, size_t *n)
{
	capsim_store_power_loads rows;
	if (capsim_store_read_power_load(f->db, &f->sel, sustained, &rows, f->d) < 0)
		return -1;
	for (size_t i = 0; i < rows.n; i++) {
		const capsim_store_power_load *r = &rows.v[i];
		add_point(pts, sustained ? 1.0 : r->duty, r->median_power_w, r->median_sm_mhz,
			  r->flop_per_s);
		capsim_run_ids_add(&f->p->power.runs, r->run_id);
	}
	*n = rows.n;
	capsim_store_power_loads_free(&rows);
	return 0;
}

/* the median of column c (0 w, 1 mhz, 2 rate) over points [from, from + n) */
static double median_of(const pw_points *pts, size_t from, size_t n, int c)
{
	const double *src = c == 0 ? pts->w : c == 1 ? pts->mhz : pts->rate;
	double *v = capsim_xcalloc(n, sizeof *v);
	memcpy(v, src + from, n * sizeof *v);
	double m = gsl_stats_median(v, 1, n);
	free(v);
	return m;
}

static int fit_power(fitter *f)
{
	capsim_profile_power *w = &f->p->power;
	pw_points pts = { 0 };
	size_t idle = 0, sus = 0, duty = 0;
	double limit = 0.0;
	capsim_store_power_idles idles;
	int rc = capsim_store_read_power_idle(f->db, &f->sel, &idles, f->d);
	if (rc == 0) {
		idle = idle_points(f, &idles, &pts, &limit);
		capsim_store_power_idles_free(&idles);
		rc = load_points(f, 1, &pts, &sus);
	}
	if (rc == 0)
		rc = load_points(f, 0, &pts, &duty);
	if (rc == 0 && idle) {
		w->present = 1;
		w->limit_w = limit;
		w->idle_w = median_of(&pts, 0, idle, 0);
		w->idle_clock_hz = 1e6 * median_of(&pts, 0, idle, 1);
		if (sus) {
			w->sustained_w = median_of(&pts, idle, sus, 0);
			w->sustained_clock_hz = 1e6 * median_of(&pts, idle, sus, 1);
			w->sustained_flop_per_s = median_of(&pts, idle, sus, 2);
		}
		if (sus || duty)
			capsim_fit_power_curve(pts.u, pts.w, pts.n, w);
		if (sus && !duty && idle == 1 && sus == 1)
			capsim_profile_note(f->p, "power: idle and full load only (no power-duty "
						  "rows): the linear curve joins the two, "
						  "with no residual to judge it by");
	} else if (rc == 0 && (sus || duty)) {
		capsim_profile_note(f->p, "power: no idle reading; power under load is not fitted "
					  "without it");
		memset(&w->runs, 0, sizeof w->runs);
	}
	free(pts.u);
	free(pts.w);
	free(pts.mhz);
	free(pts.rate);
	return rc;
}

/* ---- fused attention ----------------------------------------------------------------- */

/* The kernel that a PyTorch SDPA backend of attn_probe.py runs: flash is
 * PyTorch's build of FlashAttention-2, cudnn cuDNN's fused attention; the
 * memory-efficient kernel and PyTorch's own choice are no kernel capsim
 * keeps a curve for (-1). */
static int attn_kernel_of_backend(const char *backend)
{
	if (!strcmp(backend, "flash"))
		return CAPSIM_ATTN_FLASH2;
	if (!strcmp(backend, "cudnn"))
		return CAPSIM_ATTN_CUDNN;
	return -1;
}

/* order of points: head dim, then the mask (unmasked first), then seq */
static int attn_before(const capsim_store_attention *a, const capsim_store_attention *b)
{
	if (a->head_dim != b->head_dim)
		return a->head_dim < b->head_dim;
	if (a->causal != b->causal)
		return a->causal < b->causal;
	return a->seq < b->seq;
}

static int attn_same(const capsim_store_attention *a, const capsim_store_attention *b)
{
	return a->head_dim == b->head_dim && a->causal == b->causal && a->seq == b->seq;
}

/* one shape of a kernel: its point (the medians of its records), the
 * records it came from (rows[from..to)) and whether the curve keeps it */
typedef struct attn_shape {
	capsim_attn_point pt;
	size_t from, to;
	int seen, keep;
} attn_shape;

/* the end of the group (head dim, mask) that starts at shapes[i] */
static size_t attn_group_end(const attn_shape *sh, size_t n, size_t i)
{
	size_t j = i;
	while (j < n && sh[j].pt.head_dim == sh[i].pt.head_dim && sh[j].pt.causal == sh[i].pt.causal)
		j++;
	return j;
}

/* which group a curve with too little room takes first: the head dim
 * nearest 128, the most common one (the smaller of two as near: 64, GPT-2's
 * and the small models', before 192), causal before unmasked */
static int attn_group_first(const capsim_attn_point *a, const capsim_attn_point *b)
{
	double ra = fabs(a->head_dim - 128.0), rb = fabs(b->head_dim - 128.0);
	if (ra != rb)
		return ra < rb;
	if (a->head_dim != b->head_dim)
		return a->head_dim < b->head_dim;
	return a->causal > b->causal;
}

/* Mark the shapes the curve keeps: the groups (head dim, mask) in the
 * order of attn_group_first, each whole while it fits; a group that does
 * not fit is left out whole (a curve cut short in seq would be held at its
 * last rate beyond it), unless it alone is more than a curve holds: then
 * its shortest sequences fill the room left. Notes what is left out. */
static void attn_select(fitter *f, int kernel, attn_shape *sh, size_t n)
{
	size_t room = CAPSIM_ATTN_POINTS;
	for (;;) {
		size_t best = n;
		for (size_t i = 0; i < n; i = attn_group_end(sh, n, i))
			if (!sh[i].seen && (best == n || attn_group_first(&sh[i].pt, &sh[best].pt)))
				best = i;
		if (best == n)
			break;
		size_t end = attn_group_end(sh, n, best), size = end - best;
		size_t take = size <= room ? size : size > CAPSIM_ATTN_POINTS ? room : 0;
		for (size_t i = best; i < end; i++) {
			sh[i].seen = 1;
			sh[i].keep = i - best < take;
		}
		room -= take;
		if (take < size)
			capsim_profile_note(f->p, "attention %s: head dim %.0f, %s: %zu of %zu shapes "
						  "left out (a curve holds %d points: head dims nearest "
						  "128 first, the smaller of two as near, causal "
						  "before unmasked)",
					    capsim_attn_kernel_names[kernel], sh[best].pt.head_dim,
					    sh[best].pt.causal ? "causal" : "unmasked", size - take,
					    size, CAPSIM_ATTN_POINTS);
	}
}

/* the records of one kernel (rows[0..n), sorted) as a curve: one point per
 * shape, the medians of its records' rates, the shapes attn_select keeps in
 * (head dim, mask, seq) order */
static void attn_curve(fitter *f, int kernel, const capsim_store_attention *rows, size_t n)
{
	capsim_profile_attn *a = &f->p->attn[kernel];
	double *fwd = capsim_xcalloc(n, sizeof *fwd), *bwd = capsim_xcalloc(n, sizeof *bwd);
	attn_shape *sh = capsim_xcalloc(n, sizeof *sh);
	size_t ns = 0;
	for (size_t i = 0, j; i < n; i = j) {
		size_t m = 0;
		for (j = i; j < n && attn_same(&rows[i], &rows[j]); j++) {
			fwd[m] = rows[j].fwd_flop_per_s;
			bwd[m++] = rows[j].bwd_flop_per_s;
		}
		attn_shape *s = &sh[ns++];
		s->pt.seq = (float)rows[i].seq;
		s->pt.head_dim = (float)rows[i].head_dim;
		s->pt.causal = rows[i].causal;
		s->pt.fwd_flop_per_s = (float)host_median(fwd, m);
		s->pt.bwd_flop_per_s = (float)host_median(bwd, m);
		s->from = i;
		s->to = j;
	}
	attn_select(f, kernel, sh, ns);
	a->curve.peak_bf16_flop_per_s = capsim_gpu_peak(f->g, CAPSIM_DTYPE_BF16);
	for (size_t i = 0; i < ns; i++) {
		if (!sh[i].keep)
			continue;
		a->curve.pt[a->curve.n++] = sh[i].pt;
		for (size_t r = sh[i].from; r < sh[i].to; r++)
			capsim_run_ids_add(&a->runs, rows[r].run_id);
	}
	free(sh);
	free(fwd);
	free(bwd);
}

/* attn_probe.py's timed shapes, by kernel: the records with as many key and
 * value heads as query heads (a GQA record times the same FLOPs over fewer
 * K/V heads, and is noted and left out), sorted by (head dim, mask, seq),
 * each kernel's fitted into its curve at this GPU's dense bf16 peak */
static int fit_attention(fitter *f)
{
	capsim_store_attentions rows;
	if (capsim_store_read_attention(f->db, &f->sel, &rows, f->d) < 0)
		return -1;
	size_t gqa = 0, other = 0;
	capsim_store_attention *by = capsim_xcalloc(rows.n + 1, sizeof *by);
	for (int k = 0; k < CAPSIM_ATTN__KERNELS; k++) {
		size_t n = 0;
		for (size_t i = 0; i < rows.n; i++) {
			const capsim_store_attention *r = &rows.v[i];
			if (attn_kernel_of_backend(r->backend) != k)
				continue;
			if (r->kv_heads != r->heads) {
				gqa++;
				continue;
			}
			size_t j = n++;
			for (; j > 0 && attn_before(r, &by[j - 1]); j--)
				by[j] = by[j - 1];
			by[j] = *r;
		}
		if (n)
			attn_curve(f, k, by, n);
	}
	for (size_t i = 0; i < rows.n; i++)
		other += attn_kernel_of_backend(rows.v[i].backend) < 0;
	free(by);
	capsim_store_attentions_free(&rows);
	if (gqa)
		capsim_profile_note(f->p, "attention: %zu records with fewer key/value heads than "
					  "query heads (GQA): left out of the curves", gqa);
	if (other)
		capsim_profile_note(f->p, "attention: %zu records of the efficient or default "
					  "backend: stored, no curve capsim keeps", other);
	return 0;
}

/* ---- the profile ----------------------------------------------------------------- */

/* the catalog GPU: --gpu, checked against what the runs name, or inferred */
static const capsim_gpu *pick_gpu(fitter *f, const capsim_catalog *cat,
				  const capsim_fit_options *o, double mem)
{
	char id[CAPSIM_ID_LEN];
	capsim_diags why = { 0 };
	int inferred = capsim_fit_infer_gpu(cat, f->p->runs[0].gpu, mem, id, sizeof id, &why) == 0;
	const capsim_gpu *g = NULL;
	if (o->gpu) {
		g = capsim_catalog_find(cat, CAPSIM_KIND_GPU, o->gpu);
		if (!g)
			capsim_diags_add(f->d, NULL, 0, "--gpu: '%s' is not a GPU of the catalog",
					 o->gpu);
		else if (inferred && strcmp(id, o->gpu) != 0) {
			capsim_diags_add(f->d, NULL, 0,
					 "--gpu: the runs measured '%s', which is catalog GPU '%s', "
					 "not '%s'", f->p->runs[0].gpu, id, o->gpu);
			g = NULL;
		}
	} else if (inferred) {
		g = capsim_catalog_find(cat, CAPSIM_KIND_GPU, id);
	} else {
		for (size_t i = 0; i < why.n; i++)
			capsim_diags_add(f->d, NULL, 0, "%s", why.v[i].msg);
	}
	capsim_diags_free(&why);
	return g;
}

static void fill_head(fitter *f, const capsim_fit_options *o)
{
	capsim_profile *p = f->p;
	capsim_strlcpy(p->gpu, f->g->e.id, sizeof p->gpu);
	capsim_strlcpy(p->gpu_name, p->runs[0].gpu, sizeof p->gpu_name);
	/* the newest dated run (ISO 8601: an imported nccl-tests log may have
	 * no date), else today */
	const char *newest = NULL;
	for (size_t i = 0; i < p->n_runs; i++) {
		const char *t = p->runs[i].date;
		int iso = strlen(t) >= 10 && t[4] == '-' && t[7] == '-' &&
			  strspn(t, "0123456789") == 4;
		if (iso && (!newest || strcmp(t, newest) > 0))
			newest = t;
	}
	if (newest) {
		snprintf(p->date, sizeof p->date, "%.10s", newest);
	} else {
		time_t today = time(NULL);
		struct tm tm_today;
		gmtime_r(&today, &tm_today);
		strftime(p->date, sizeof p->date, "%Y-%m-%d", &tm_today);
	}
	if (o->name) {
		capsim_strlcpy(p->name, o->name, sizeof p->name);
	} else {
		char *name = capsim_xasprintf("%s-%s", p->gpu, p->date);
		capsim_strlcpy(p->name, name, sizeof p->name);
		free(name);
	}
	time_t now = time(NULL);
	struct tm tm;
	strftime(p->created, sizeof p->created, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
	capsim_strlcpy(p->capsim, o->capsim ? o->capsim : "", sizeof p->capsim);
	capsim_strlcpy(p->database, f->path, sizeof p->database);
}

/* the <efficiency> values capsim_gpu knows, from what was fitted */
static void fill_efficiency(capsim_profile *p)
{
	const capsim_profile_gemm *g16 = p->gemm[CAPSIM_DTYPE_BF16].cal.params ?
						 &p->gemm[CAPSIM_DTYPE_BF16] :
						 &p->gemm[CAPSIM_DTYPE_FP16];
	const capsim_profile_gemm *g8 = &p->gemm[CAPSIM_DTYPE_FP8];
	if (g16->cal.params && g16->cal.sat <= 1.0) {
		p->eff_gemm = g16->cal.sat;
		for (size_t i = 0; i < g16->runs.n; i++)
			capsim_run_ids_add(&p->eff_runs, g16->runs.id[i]);
	}
	if (g8->cal.params && g8->cal.sat <= 1.0) {
		p->eff_gemm_fp8 = g8->cal.sat;
		for (size_t i = 0; i < g8->runs.n; i++)
			capsim_run_ids_add(&p->eff_runs, g8->runs.id[i]);
	}
	if (p->hbm.points && p->hbm.eff <= 1.0) {
		p->eff_hbm = p->hbm.eff;
		for (size_t i = 0; i < p->hbm.runs.n; i++)
			capsim_run_ids_add(&p->eff_runs, p->hbm.runs.id[i]);
	}
}

static int fitted_anything(const capsim_profile *p)
{
	int any = p->hbm.points || p->power.present || p->n_coll || p->pcie[0].ab.points ||
		  p->pcie[1].ab.points || p->eff_launch_s > 0 || p->eff_kernel_gap_s > 0 ||
		  p->eff_launch_graph_s > 0 || p->block_kernels[0][0] > 0 ||
		  p->block_kernels[1][0] > 0;
	for (int i = 0; i < CAPSIM_CAL_DTYPES; i++)
		any |= p->gemm[i].cal.params > 0;
	for (int i = 0; i < CAPSIM_ATTN__KERNELS; i++)
		any |= p->attn[i].curve.n > 0;
	return any;
}

/* a profile name: letters, digits, '_', '.', '-', not starting with '.' or
 * '-', 1 to 63 characters (profile.xsd) */
static int good_name(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n >= CAPSIM_ID_LEN || s[0] == '.' || s[0] == '-')
		return 0;
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == n;
}

int capsim_fit(const char *db_path, const capsim_catalog *cat,
	       const capsim_fit_options *o, capsim_profile *out,
	       capsim_diags *d)
{
	memset(out, 0, sizeof *out);
	if (o->name && !good_name(o->name)) {
		capsim_diags_add(d, NULL, 0, "--name: expected 1 to 63 letters, digits, '_', '.' or "
					     "'-' (not first), found '%s'", o->name);
		return -1;
	}
	fitter f = { .path = db_path, .d = d, .p = out,
		     .sel = { .runs = o->runs, .n_runs = o->runs ? o->n_runs : 0 } };
	double mem = 0.0;
	int rc = capsim_store_open(db_path, CAPSIM_STORE_READ, &f.db, d);
	if (rc == 0)
		rc = read_runs(&f, o, &mem);
	if (rc == 0) {
		f.g = pick_gpu(&f, cat, o, mem);
		rc = f.g ? 0 : -1;
	}
	if (rc == 0) {
		fill_head(&f, o);
		rc = fit_gemms(&f);
	}
	if (rc == 0)
		rc = fit_hbm(&f);
	if (rc == 0)
		rc = fit_pcie(&f);
	if (rc == 0)
		rc = fit_nccl(&f);
	if (rc == 0)
		rc = fit_power(&f);
	if (rc == 0)
		rc = fit_launch(&f);
	if (rc == 0)
		rc = fit_host(&f);
	if (rc == 0)
		rc = fit_attention(&f);
	if (rc == 0) {
		fill_efficiency(out);
		if (!fitted_anything(out)) {
			capsim_diags_add(d, db_path, 0, "the runs measured nothing capsim can fit");
			rc = -1;
		}
	}
	capsim_store_close(f.db);
	if (rc < 0)
		capsim_profile_free(out);
	return rc;
}
