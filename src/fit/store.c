/* store.c - capsim fit over the measurement store: read the runs and each
 * kind of measurement (schema: src/store/measure.c, version 1 or 2), fit
 * it, and assemble the profile; see fit.h. */
#include "fit.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <sqlite3.h>

#include "xalloc.h"

/* one fit: the open store, its runs filter, the GPU and the profile */
typedef struct fitter {
	sqlite3 *db;
	const char *path;
	capsim_diags *d;
	capsim_profile *p;
	const capsim_gpu *g;
	char *filter;   /* " AND run_id IN (1,2)", or "" for every run */
	char *run_filter; /* the same on runs: " AND id IN (1,2)" */
} fitter;

/* ---- SQLite ------------------------------------------------------------- */

static sqlite3_stmt *prepare(fitter *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* the statement of the printf-formatted SQL, or NULL after a message */
static sqlite3_stmt *prepare(fitter *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *sql = capsim_xvasprintf(fmt, ap);
	va_end(ap);
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(f->db, sql, -1, &st, NULL) != SQLITE_OK) {
		capsim_diags_add(f->d, f->path, 0, "database: %s", sqlite3_errmsg(f->db));
		st = NULL;
	}
	free(sql);
	return st;
}

/* a step's outcome: 1 a row, 0 done, -1 an error (after a message) */
static int step(fitter *f, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		return 1;
	if (rc == SQLITE_DONE)
		return 0;
	capsim_diags_add(f->d, f->path, 0, "database: %s", sqlite3_errmsg(f->db));
	return -1;
}

static const char *col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *s = sqlite3_column_text(st, i);
	return s ? (const char *)s : "";
}

/* 1 when the table exists, 0 when not, -1 on an error */
static int has_table(fitter *f, const char *name)
{
	sqlite3_stmt *st = prepare(f, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND "
				      "name = '%s'", name);
	if (!st)
		return -1;
	int rc = step(f, st);
	sqlite3_finalize(st);
	return rc;
}

/* 1 when runs has the column (schema version 2), else 0 */
static int has_column(fitter *f, const char *table, const char *col)
{
	sqlite3_stmt *st = prepare(f, "SELECT 1 FROM pragma_table_info('%s') WHERE name = '%s'",
				   table, col);
	if (!st)
		return 0;
	int rc = step(f, st);
	sqlite3_finalize(st);
	return rc == 1;
}


/* ---- runs ------------------------------------------------------------------- */

/* runs.env, a JSON object of strings, into r->env */
static void parse_env(capsim_profile_run *r, const char *text)
{
	if (!text[0])
		return;
	json_t *o = json_loads(text, 0, NULL);
	const char *k;
	json_t *v;
	json_object_foreach(o, k, v) {
		r->env = capsim_xrealloc(r->env, (r->n_env + 1) * sizeof *r->env);
		capsim_profile_env *e = &r->env[r->n_env++];
		capsim_strlcpy(e->name, k, sizeof e->name);
		capsim_strlcpy(e->value, json_is_string(v) ? json_string_value(v) : "?",
			       sizeof e->value);
	}
	json_decref(o);
}

static void read_run(sqlite3_stmt *st, int v2, capsim_profile_run *r)
{
	memset(r, 0, sizeof *r);
	r->id = sqlite3_column_int64(st, 0);
	capsim_strlcpy(r->sha256, col_text(st, 1), sizeof r->sha256);
	capsim_strlcpy(r->source, col_text(st, 2), sizeof r->source);
	capsim_strlcpy(r->program, col_text(st, 3), sizeof r->program);
	capsim_strlcpy(r->date, col_text(st, 4), sizeof r->date);
	capsim_strlcpy(r->gpu, col_text(st, 5), sizeof r->gpu);
	capsim_strlcpy(r->cc, col_text(st, 6), sizeof r->cc);
	r->sms = (long)sqlite3_column_int64(st, 7);
	r->cuda_driver = (long)sqlite3_column_int64(st, 9);
	r->cuda_runtime = (long)sqlite3_column_int64(st, 10);
	r->cublaslt = (long)sqlite3_column_int64(st, 11);
	if (v2) {
		r->nccl = (long)sqlite3_column_int64(st, 12);
		r->ranks = (long)sqlite3_column_int64(st, 13);
		r->nodes = (long)sqlite3_column_int64(st, 14);
		capsim_strlcpy(r->launcher, col_text(st, 15), sizeof r->launcher);
		parse_env(r, col_text(st, 16));
	}
}

/* the selected runs into p->runs, and their memory (for the GPU's
 * inference); -1 when there are none or one asked for is absent */
static int read_runs(fitter *f, const capsim_fit_options *o, double *mem_bytes)
{
	int v2 = has_column(f, "runs", "env");
	sqlite3_stmt *st = prepare(f, "SELECT id, sha256, source, program, date, gpu, cc, sms,"
				      " memory_bytes, cuda_driver, cuda_runtime, cublaslt%s"
				      " FROM runs WHERE 1%s ORDER BY id",
				   v2 ? ", nccl, ranks, nodes, launcher, env" : "", f->run_filter);
	if (!st)
		return -1;
	int rc;
	capsim_profile *p = f->p;
	while ((rc = step(f, st)) == 1) {
		p->runs = capsim_xrealloc(p->runs, (p->n_runs + 1) * sizeof *p->runs);
		read_run(st, v2, &p->runs[p->n_runs++]);
		*mem_bytes = (double)sqlite3_column_int64(st, 8);
	}
	sqlite3_finalize(st);
	if (rc < 0)
		return -1;
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
	int tg = has_table(f, "gemm"), ts = has_table(f, "power_sustained");
	if (tg < 0 || ts < 0)
		return -1;
	if (!tg && !ts)
		return 0;
	char *sus = capsim_xasprintf("SELECT run_id, dtype, m, n, k, median_flop_per_s"
				     " FROM power_sustained WHERE 1%s", f->filter);
	sqlite3_stmt *st = prepare(f, "%s%s%s%s",
				   tg ? "SELECT run_id, dtype, m, n, k, flop_per_s FROM gemm WHERE 1" : "",
				   tg ? f->filter : "", tg && ts ? " UNION ALL " : "", ts ? sus : "");
	free(sus);
	if (!st)
		return -1;
	capsim_profile_point *pts[CAPSIM_CAL_DTYPES] = { 0 };
	size_t n[CAPSIM_CAL_DTYPES] = { 0 }, unknown = 0, over = 0;
	int rc;
	while ((rc = step(f, st)) == 1) {
		int dt = dtype_index(col_text(st, 1));
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
		pt->run = sqlite3_column_int64(st, 0);
		pt->m = (double)sqlite3_column_int64(st, 2);
		pt->n = (double)sqlite3_column_int64(st, 3);
		pt->k = (double)sqlite3_column_int64(st, 4);
		pt->frac = sqlite3_column_double(st, 5) / peak;
	}
	sqlite3_finalize(st);
	if (unknown)
		capsim_profile_note(f->p, "%zu GEMM rows of a dtype capsim does not model or %s "
					  "has no peak for: left out", unknown, f->g->e.id);
	if (over)
		capsim_profile_note(f->p, "%zu GEMM rows beyond %d of one dtype: left out", over,
				    CAPSIM_PROFILE_MAX_POINTS);
	for (int i = 0; i < CAPSIM_CAL_DTYPES; i++) {
		if (rc == 0 && n[i] &&
		    capsim_fit_gemm(i, pts[i], n[i], &f->p->gemm[i], f->p) < 0)
			capsim_profile_note(f->p, "%s: GEMMs could not be fitted: left out",
					    capsim_dtype_names[i]);
		free(pts[i]);
	}
	return rc;
}

/* ---- copy bandwidth ---------------------------------------------------------- */

static int fit_hbm(fitter *f)
{
	int t = has_table(f, "copy_bandwidth");
	if (t <= 0)
		return t;
	sqlite3_stmt *st = prepare(f, "SELECT run_id, bytes_per_s FROM copy_bandwidth WHERE 1%s",
				   f->filter);
	if (!st)
		return -1;
	capsim_profile_hbm *h = &f->p->hbm;
	double *bw = NULL;
	size_t n = 0;
	int rc;
	while ((rc = step(f, st)) == 1) {
		bw = capsim_xrealloc(bw, (n + 1) * sizeof *bw);
		bw[n++] = sqlite3_column_double(st, 1);
		capsim_run_ids_add(&h->runs, sqlite3_column_int64(st, 0));
	}
	sqlite3_finalize(st);
	if (rc == 0 && n && f->g->mem_bw_bytes_per_s > 0) {
		h->points = n;
		h->bw_bytes_per_s = capsim_fit_median(bw, n);
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
	return rc;
}

/* ---- launch overhead -------------------------------------------------------------- */

/* PyTorch eager's host cost per kernel: the median over runs of
 * calibrate/torch's torch-launch medians (tiny kernels issued back to back,
 * so the host's issue rate sets the pace). It becomes the GPU's eager launch
 * overhead (capsim_gpu.launch_eager_s). */
static int fit_launch(fitter *f)
{
	int t = has_table(f, "torch_launch");
	if (t <= 0)
		return t;
	sqlite3_stmt *st = prepare(f, "SELECT run_id, host_median_s FROM torch_launch WHERE 1%s",
				   f->filter);
	if (!st)
		return -1;
	double *v = NULL;
	size_t n = 0;
	int rc;
	while ((rc = step(f, st)) == 1) {
		v = capsim_xrealloc(v, (n + 1) * sizeof *v);
		v[n++] = sqlite3_column_double(st, 1);
		capsim_run_ids_add(&f->p->eff_runs, sqlite3_column_int64(st, 0));
	}
	sqlite3_finalize(st);
	if (rc == 0 && n)
		f->p->eff_launch_s = capsim_fit_median(v, n);
	free(v);
	return rc;
}

/* ---- PCIe ----------------------------------------------------------------------- */

static int fit_pcie(fitter *f)
{
	int t = has_table(f, "pcie");
	if (t <= 0)
		return t;
	static const char *const dirs[2] = { "h2d", "d2h" };
	for (int i = 0; i < 2; i++) {
		sqlite3_stmt *st = prepare(f, "SELECT run_id, bytes, median_s FROM pcie"
					      " WHERE direction = '%s' AND pinned = 1%s",
					   dirs[i], f->filter);
		if (!st)
			return -1;
		double *x = NULL, *y = NULL;
		size_t n = 0;
		capsim_run_ids runs = { 0 };
		int rc;
		while ((rc = step(f, st)) == 1) {
			x = capsim_xrealloc(x, (n + 1) * sizeof *x);
			y = capsim_xrealloc(y, (n + 1) * sizeof *y);
			x[n] = (double)sqlite3_column_int64(st, 1);
			y[n++] = sqlite3_column_double(st, 2);
			capsim_run_ids_add(&runs, sqlite3_column_int64(st, 0));
		}
		sqlite3_finalize(st);
		if (rc == 0 && n) {
			if (capsim_fit_alpha_beta(x, y, n, &f->p->pcie[i].ab) == 0)
				f->p->pcie[i].runs = runs;
			else
				capsim_profile_note(f->p, "pcie %s: %zu points do not give a latency "
						    "and a positive bandwidth (one size, or times that "
						    "fall with size): left at the datasheet", dirs[i], n);
		}
		free(x);
		free(y);
		if (rc < 0)
			return -1;
	}
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
	c.bus_factor = capsim_fit_bus_factor(g->op, g->ranks);
	c.runs = g->runs;
	p->coll = capsim_xrealloc(p->coll, (p->n_coll + 1) * sizeof *p->coll);
	p->coll[p->n_coll++] = c;
}

static int same_group(const group *g, sqlite3_stmt *st)
{
	return !strcmp(g->op, col_text(st, 1)) && !strcmp(g->algo, col_text(st, 2)) &&
	       !strcmp(g->proto, col_text(st, 3)) && g->ranks == sqlite3_column_int(st, 4) &&
	       g->nodes == sqlite3_column_int(st, 5);
}

static void start_group(group *g, sqlite3_stmt *st)
{
	g->n = 0;
	memset(&g->runs, 0, sizeof g->runs);
	capsim_strlcpy(g->op, col_text(st, 1), sizeof g->op);
	capsim_strlcpy(g->algo, col_text(st, 2), sizeof g->algo);
	capsim_strlcpy(g->proto, col_text(st, 3), sizeof g->proto);
	g->ranks = sqlite3_column_int(st, 4);
	g->nodes = sqlite3_column_int(st, 5);
}

static int fit_nccl(fitter *f)
{
	int t = has_table(f, "nccl");
	if (t <= 0)
		return t;
	sqlite3_stmt *st = prepare(f, "SELECT run_id, op, algo, proto, ranks, nodes, bytes,"
				      " median_s, wrong FROM nccl WHERE 1%s"
				      " ORDER BY op, algo, proto, ranks, nodes, bytes",
				   f->filter);
	if (!st)
		return -1;
	group g;
	memset(&g, 0, sizeof g);
	size_t wrong = 0, cap = 0;
	int rc, open = 0;
	while ((rc = step(f, st)) == 1) {
		if (sqlite3_column_int64(st, 8) != 0) {
			wrong++;
			continue;
		}
		if (open && !same_group(&g, st)) {
			fit_group(f, &g);
			open = 0;
		}
		if (!open) {
			start_group(&g, st);
			open = 1;
		}
		if (g.n == cap) {
			cap = cap ? 2 * cap : 64;
			g.x = capsim_xrealloc(g.x, cap * sizeof *g.x);
			g.y = capsim_xrealloc(g.y, cap * sizeof *g.y);
		}
		g.x[g.n] = (double)sqlite3_column_int64(st, 6);
		g.y[g.n++] = sqlite3_column_double(st, 7);
		capsim_run_ids_add(&g.runs, sqlite3_column_int64(st, 0));
	}
	sqlite3_finalize(st);
	if (rc == 0 && open)
		fit_group(f, &g);
	free(g.x);
	free(g.y);
	if (wrong)
		capsim_profile_note(f->p, "%zu nccl rows with wrong results (nccl-tests' #wrong > 0): "
					  "left out", wrong);
	return rc;
}

/* ---- power ---------------------------------------------------------------------- */

/* power readings as (u, watts) points, with their SM clocks and rates */
typedef struct pw_points {
	double *u, *w, *mhz, *rate;
	size_t n;
} pw_points;

/* Append the rows of sql, whose columns are run_id, watts, MHz, a rate (for
 * power_idle the power limit, kept in *limit when not NULL) and, when u < 0,
 * the utilisation; else every row is at u. *rows counts them. */
/* An idle reading that NVML itself marks idle (clock-event reason bit 1,
 * GpuIdle: the clocks are down for want of work) is the idle state; when
 * none is, any reading not under load. */
#define IDLE_LOADED "(throttle_reasons IS NOT NULL AND (throttle_reasons & 4) != 0) OR " \
	"power_w >= 0.5 * power_limit_w"
#define IDLE_MARKED "(throttle_reasons IS NOT NULL AND (throttle_reasons & 1) != 0)"

/* Which idle readings count: 1 when NVML marked some idle (only those
 * then), 0 when none, -1 on a database error. */
static int idle_marked(fitter *f)
{
	sqlite3_stmt *st = prepare(f, "SELECT count(*) FROM power_idle WHERE " IDLE_MARKED
				      " AND NOT (" IDLE_LOADED ")%s", f->filter);
	if (!st)
		return -1;
	int rc = step(f, st);
	int n = rc == 1 ? (int)sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	return rc < 0 ? -1 : n > 0;
}

/* Say which idle readings were left out, and why. */
static int note_loaded_idle(fitter *f, int marked)
{
	sqlite3_stmt *st = prepare(f, "SELECT run_id, power_w, sm_mhz, throttle_reasons, "
				      "(" IDLE_LOADED ") FROM (SELECT * FROM power_idle WHERE (" IDLE_LOADED ") OR "
				      "(%d AND NOT " IDLE_MARKED ")) WHERE 1%s", marked, f->filter);
	if (!st)
		return -1;
	int rc;
	while ((rc = step(f, st)) == 1)
		capsim_profile_note(f->p, "power: run %lld's idle reading (%.0f W at %.0f MHz, "
					  "throttle reasons %lld) %s; left out",
				    (long long)sqlite3_column_int64(st, 0),
				    sqlite3_column_double(st, 1), sqlite3_column_double(st, 2),
				    (long long)sqlite3_column_int64(st, 3),
				    sqlite3_column_int64(st, 4) ? "was taken under load" :
					    "is not one NVML marks idle, as others are");
	sqlite3_finalize(st);
	return rc < 0 ? -1 : 0;
}

static int read_power(fitter *f, const char *sql, double u, pw_points *out,
		      size_t *rows, double *limit)
{
	sqlite3_stmt *st = prepare(f, "%s WHERE 1%s", sql, f->filter);
	if (!st)
		return -1;
	int rc;
	size_t before = out->n;
	while ((rc = step(f, st)) == 1) {
		size_t n = out->n + 1;
		out->u = capsim_xrealloc(out->u, n * sizeof *out->u);
		out->w = capsim_xrealloc(out->w, n * sizeof *out->w);
		out->mhz = capsim_xrealloc(out->mhz, n * sizeof *out->mhz);
		out->rate = capsim_xrealloc(out->rate, n * sizeof *out->rate);
		out->u[out->n] = u >= 0 ? u : sqlite3_column_double(st, 4);
		out->w[out->n] = sqlite3_column_double(st, 1);
		out->mhz[out->n] = sqlite3_column_double(st, 2);
		out->rate[out->n] = sqlite3_column_double(st, 3);
		if (limit)
			*limit = fmax(*limit, sqlite3_column_double(st, 3));
		out->n = n;
		capsim_run_ids_add(&f->p->power.runs, sqlite3_column_int64(st, 0));
	}
	sqlite3_finalize(st);
	*rows = out->n - before;
	return rc;
}

/* the median of column c (0 w, 1 mhz, 2 rate) over points [from, from + n) */
static double median_of(const pw_points *pts, size_t from, size_t n, int c)
{
	const double *src = c == 0 ? pts->w : c == 1 ? pts->mhz : pts->rate;
	double *v = capsim_xcalloc(n, sizeof *v);
	memcpy(v, src + from, n * sizeof *v);
	double m = capsim_fit_median(v, n);
	free(v);
	return m;
}

static int fit_power(fitter *f)
{
	capsim_profile_power *w = &f->p->power;
	pw_points pts = { 0 };
	size_t idle = 0, sus = 0, duty = 0;
	double limit = 0.0;
	int ti = has_table(f, "power_idle"), ts = has_table(f, "power_sustained");
	int t = has_table(f, "power_duty");
	int rc = ti < 0 || ts < 0 || t < 0 ? -1 : 0;
	if (rc == 0 && ti == 1) {
		/* an idle reading taken while the card was still loaded (the software
		 * power cap active, NVML bit 4, or over half the limit) is no idle
		 * reading: NVML's power is a 1 s average, and calibrate-gemm read it
		 * right after its sweep until 2026-12-02 */
		int marked = idle_marked(f);
		rc = marked < 0 ? -1 : 0;
		char sql[512];
		snprintf(sql, sizeof sql, "SELECT run_id, power_w, sm_mhz, power_limit_w FROM "
					  "(SELECT * FROM power_idle WHERE NOT (" IDLE_LOADED ")%s)",
			 marked ? " AND " IDLE_MARKED : "");
		if (rc == 0)
			rc = read_power(f, sql, 0.0, &pts, &idle, &limit);
		if (rc == 0)
			rc = note_loaded_idle(f, marked);
	}
	if (rc == 0 && ts == 1)
		rc = read_power(f, "SELECT run_id, median_power_w, median_sm_mhz,"
				   " median_flop_per_s FROM power_sustained",
				1.0, &pts, &sus, NULL);
	if (rc == 0 && t == 1)
		rc = read_power(f, "SELECT run_id, median_power_w, median_sm_mhz,"
				   " achieved_flop_per_s, duty FROM power_duty",
				-1.0, &pts, &duty, NULL);
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

/* ---- the profile ----------------------------------------------------------------- */

/* " AND COL IN (1,2)" or "" */
static char *make_filter(const capsim_fit_options *o, const char *col)
{
	if (!o->runs || !o->n_runs)
		return capsim_xstrdup("");
	size_t cap = 32 + 24 * o->n_runs, len;
	char *s = capsim_xmalloc(cap);
	len = (size_t)snprintf(s, cap, " AND %s IN (", col);
	for (size_t i = 0; i < o->n_runs; i++)
		len += (size_t)snprintf(s + len, cap - len, "%s%lld", i ? "," : "",
					(long long)o->runs[i]);
	snprintf(s + len, cap - len, ")");
	return s;
}

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
		  p->pcie[1].ab.points || p->eff_launch_s > 0;
	for (int i = 0; i < CAPSIM_CAL_DTYPES; i++)
		any |= p->gemm[i].cal.params > 0;
	return any;
}

/* Open the store; 0, or -1 after a message when it is not one. */
static int open_store(fitter *f)
{
	if (sqlite3_open_v2(f->path, &f->db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		capsim_diags_add(f->d, f->path, 0, "cannot open the database: %s",
				 f->db ? sqlite3_errmsg(f->db) : "out of memory");
		return -1;
	}
	sqlite3_busy_timeout(f->db, 5000);
	int t = has_table(f, "runs");
	if (t == 0)
		capsim_diags_add(f->d, f->path, 0, "not a measurement database (no runs table); "
						   "create one with capsim calibrate import");
	return t == 1 ? 0 : -1;
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
	fitter f = { .path = db_path, .d = d, .p = out, .filter = make_filter(o, "run_id"),
		     .run_filter = make_filter(o, "id") };
	double mem = 0.0;
	int rc = open_store(&f);
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
	if (rc == 0) {
		fill_efficiency(out);
		if (!fitted_anything(out)) {
			capsim_diags_add(d, db_path, 0, "the runs measured nothing capsim can fit");
			rc = -1;
		}
	}
	sqlite3_close(f.db);
	free(f.filter);
	free(f.run_filter);
	if (rc < 0)
		capsim_profile_free(out);
	return rc;
}
