/* query.c - the store's measurements as C rows; see query.h. */
#include "query.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "storeint.h"
#include "xalloc.h"

typedef void (*fill_fn)(sqlite3_stmt *st, void *row);

/* src into dst of size bytes; text that does not fit is cut at a UTF-8
 * character boundary, never inside a character (an older database may hold
 * names longer than the rows' fields) */
static void copy_utf8(char *dst, const char *src, size_t size)
{
	if (size == 0 || capsim_strlcpy(dst, src, size) == 0)
		return;
	size_t len = strlen(dst), lead = len;
	while (lead > 0 && ((unsigned char)dst[lead - 1] & 0xC0) == 0x80)
		lead--; /* back over continuation bytes */
	if (lead == 0 || !((unsigned char)dst[lead - 1] & 0x80))
		return; /* cut after an ASCII character */
	lead--;
	unsigned char c = (unsigned char)dst[lead];
	size_t want = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
	if (len - lead < want)
		dst[lead] = '\0'; /* the last character lost its tail: drop it */
}

static void copy_text(char *dst, size_t len, sqlite3_stmt *st, int col)
{
	copy_utf8(dst, capsim_store__text(st, col), len);
}

/* The WHERE clause of a read, one of four constant texts: " WHERE 1", and
 * the GPU (bound as ?1: on runs itself its own column, else the run's) and
 * the dtype (bound as ?2) where sel names them. The runs sel lists are
 * kept by keep_run after the read: nothing of sel is ever written into
 * the SQL. */
static const char *where(const capsim_store_sel *sel, int on_runs, int has_dtype)
{
	int gpu = sel && sel->gpu, dtype = sel && sel->dtype && has_dtype;
	if (gpu && on_runs)
		return " WHERE gpu = ?1";
	if (gpu && dtype)
		return " WHERE run_id IN (SELECT id FROM runs WHERE gpu = ?1) AND dtype = ?2";
	if (gpu)
		return " WHERE run_id IN (SELECT id FROM runs WHERE gpu = ?1)";
	if (dtype)
		return " WHERE dtype = ?2";
	return " WHERE 1";
}

/* 1 when a row of run id is among those sel lists (or sel lists none) */
static int keep_run(const capsim_store_sel *sel, int64_t id)
{
	if (!sel || !sel->runs || !sel->n_runs)
		return 1;
	for (size_t i = 0; i < sel->n_runs; i++)
		if (sel->runs[i] == id)
			return 1;
	return 0;
}

/* Append the rows of "SELECT cols FROM table WHERE <sel> order" to *v (n
 * rows of size bytes each, filled by fill). A table that is absent adds
 * none. 0, or -1 after a message (what was appended stays, for the caller
 * to free). */
static int read_rows(capsim_store *s, const char *table, const char *cols, const char *order,
		     const capsim_store_sel *sel, int has_dtype, size_t size, fill_fn fill,
		     void **v, size_t *n, capsim_diags *d)
{
	int t = capsim_store__has_table(s, table, d);
	if (t <= 0)
		return t;
	/* table, cols and order are this file's constants; sel is bound */
	const char *w = where(sel, strcmp(table, "runs") == 0, has_dtype);
	char *sql = capsim_xasprintf("SELECT %s FROM %s%s%s", cols, table, w, order ? order : "");
	sqlite3_stmt *st = capsim_store__prepare(s, sql, d);
	free(sql);
	if (!st)
		return -1;
	if (sel && sel->gpu)
		sqlite3_bind_text(st, 1, sel->gpu, -1, SQLITE_STATIC);
	if (sel && sel->dtype && has_dtype)
		sqlite3_bind_text(st, 2, sel->dtype, -1, SQLITE_STATIC);
	size_t cap = *n;
	int rc;
	while ((rc = capsim_store__step(s, st, d)) == 1) {
		if (!keep_run(sel, sqlite3_column_int64(st, 0))) /* every cols starts with the run */
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 16;
			*v = capsim_xrealloc(*v, cap * size);
		}
		char *row = (char *)*v + *n * size;
		memset(row, 0, size);
		fill(st, row);
		(*n)++;
	}
	sqlite3_finalize(st);
	return rc;
}

/* A whole read into a new array: *v and *n as read_rows leaves them, or
 * NULL and 0 on failure. */
static int read_all(capsim_store *s, const char *table, const char *cols, const char *order,
		    const capsim_store_sel *sel, int has_dtype, size_t size, fill_fn fill,
		    void **v, size_t *n, capsim_diags *d)
{
	*v = NULL;
	*n = 0;
	if (read_rows(s, table, cols, order, sel, has_dtype, size, fill, v, n, d) == 0)
		return 0;
	free(*v);
	*v = NULL;
	*n = 0;
	return -1;
}

/* ---- runs ------------------------------------------------------------------- */

#define RUN_COLS "id, sha256, source, program, date, gpu, cc, sms, memory_bytes, " \
	"cuda_driver, cuda_runtime, cublaslt"
#define RUN_COLS_2 RUN_COLS ", nccl, ranks, nodes, launcher, env"

/* runs.env, a JSON object of strings, into r->env */
static void parse_env(capsim_store_run *r, const char *text)
{
	if (!text[0])
		return;
	json_t *o = json_loads(text, 0, NULL);
	const char *k;
	json_t *v;
	json_object_foreach(o, k, v) {
		r->env = capsim_xrealloc(r->env, (r->n_env + 1) * sizeof *r->env);
		capsim_store_env *e = &r->env[r->n_env++];
		copy_utf8(e->name, k, sizeof e->name);
		copy_utf8(e->value, json_is_string(v) ? json_string_value(v) : "?",
			  sizeof e->value);
	}
	json_decref(o);
}

static void fill_run(sqlite3_stmt *st, void *row)
{
	capsim_store_run *r = row;
	r->id = sqlite3_column_int64(st, 0);
	copy_text(r->sha256, sizeof r->sha256, st, 1);
	copy_text(r->source, sizeof r->source, st, 2);
	copy_text(r->program, sizeof r->program, st, 3);
	copy_text(r->date, sizeof r->date, st, 4);
	copy_text(r->gpu, sizeof r->gpu, st, 5);
	copy_text(r->cc, sizeof r->cc, st, 6);
	r->sms = (long)sqlite3_column_int64(st, 7);
	r->memory_bytes = sqlite3_column_int64(st, 8);
	r->cuda_driver = (long)sqlite3_column_int64(st, 9);
	r->cuda_runtime = (long)sqlite3_column_int64(st, 10);
	r->cublaslt = (long)sqlite3_column_int64(st, 11);
	if (sqlite3_column_count(st) > 12) {
		r->nccl = (long)sqlite3_column_int64(st, 12);
		r->ranks = (long)sqlite3_column_int64(st, 13);
		r->nodes = (long)sqlite3_column_int64(st, 14);
		copy_text(r->launcher, sizeof r->launcher, st, 15);
		parse_env(r, capsim_store__text(st, 16));
	}
}

int capsim_store_read_runs(capsim_store *s, const capsim_store_sel *sel,
			   capsim_store_runs *out, capsim_diags *d)
{
	memset(out, 0, sizeof *out);
	int t = capsim_store__has_table(s, "runs", d);
	if (t == 0)
		capsim_diags_add(d, s->path, 0, "not a measurement database (no runs table); "
				 "create one with capsim calibrate import");
	if (t <= 0)
		return -1;
	/* schema 1 had no NCCL columns */
	int v2 = capsim_store__has_column(s, "runs", "env", d);
	if (v2 < 0)
		return -1;
	void *v;
	int rc = read_all(s, "runs", v2 ? RUN_COLS_2 : RUN_COLS, " ORDER BY id", sel, 0,
			  sizeof *out->v, fill_run, &v, &out->n, d);
	out->v = v;
	return rc;
}

void capsim_store_runs_free(capsim_store_runs *r)
{
	for (size_t i = 0; r && i < r->n; i++)
		free(r->v[i].env);
	if (r) {
		free(r->v);
		r->v = NULL;
		r->n = 0;
	}
}

/* the free of an array whose rows own nothing */
#define FREE_ROWS(type)                   \
	void type##_free(type *r)         \
	{                                 \
		if (!r)                   \
			return;           \
		free(r->v);               \
		r->v = NULL;              \
		r->n = 0;                 \
	}

/* ---- GEMMs -------------------------------------------------------------------- */

static void fill_gemm(sqlite3_stmt *st, void *row)
{
	capsim_store_gemm *g = row;
	g->run_id = sqlite3_column_int64(st, 0);
	copy_text(g->dtype, sizeof g->dtype, st, 1);
	g->m = sqlite3_column_int64(st, 2);
	g->n = sqlite3_column_int64(st, 3);
	g->k = sqlite3_column_int64(st, 4);
	g->flop = sqlite3_column_double(st, 5);
	g->flop_per_s = sqlite3_column_double(st, 6);
	g->sustained = sqlite3_column_int(st, 7);
}

int capsim_store_read_gemms(capsim_store *s, const capsim_store_sel *sel, int sustained,
			    capsim_store_gemms *out, capsim_diags *d)
{
	memset(out, 0, sizeof *out);
	void *v = NULL;
	size_t n = 0;
	int rc = read_rows(s, "gemm", "run_id, dtype, m, n, k, flop, flop_per_s, 0", NULL, sel, 1,
			   sizeof *out->v, fill_gemm, &v, &n, d);
	if (rc == 0 && sustained)
		rc = read_rows(s, "power_sustained", "run_id, dtype, m, n, k, 2.0 * m * n * k,"
			       " median_flop_per_s, 1", NULL, sel, 1, sizeof *out->v, fill_gemm, &v,
			       &n, d);
	if (rc < 0) {
		free(v);
		return -1;
	}
	out->v = v;
	out->n = n;
	return 0;
}

FREE_ROWS(capsim_store_gemms)

/* ---- copies and PCIe ------------------------------------------------------------------ */

static void fill_copy(sqlite3_stmt *st, void *row)
{
	capsim_store_copy *c = row;
	c->run_id = sqlite3_column_int64(st, 0);
	c->bytes = sqlite3_column_int64(st, 1);
	c->moved_bytes = sqlite3_column_int64(st, 2);
	c->median_s = sqlite3_column_double(st, 3);
	c->bytes_per_s = sqlite3_column_double(st, 4);
}

int capsim_store_read_copies(capsim_store *s, const capsim_store_sel *sel,
			     capsim_store_copies *out, capsim_diags *d)
{
	void *v;
	int rc = read_all(s, "copy_bandwidth", "run_id, bytes, moved_bytes, median_s, bytes_per_s",
			  NULL, sel, 0, sizeof *out->v, fill_copy, &v, &out->n, d);
	out->v = v;
	return rc;
}

FREE_ROWS(capsim_store_copies)

static void fill_pcie(sqlite3_stmt *st, void *row)
{
	capsim_store_pcie *p = row;
	p->run_id = sqlite3_column_int64(st, 0);
	copy_text(p->direction, sizeof p->direction, st, 1);
	p->pinned = sqlite3_column_int(st, 2);
	p->bytes = sqlite3_column_int64(st, 3);
	p->median_s = sqlite3_column_double(st, 4);
	p->bytes_per_s = sqlite3_column_double(st, 5);
}

int capsim_store_read_pcie(capsim_store *s, const capsim_store_sel *sel,
			   capsim_store_pcies *out, capsim_diags *d)
{
	void *v;
	int rc = read_all(s, "pcie", "run_id, direction, pinned, bytes, median_s, bytes_per_s",
			  NULL, sel, 0, sizeof *out->v, fill_pcie, &v, &out->n, d);
	out->v = v;
	return rc;
}

FREE_ROWS(capsim_store_pcies)

/* ---- NCCL --------------------------------------------------------------------------- */

static void fill_nccl(sqlite3_stmt *st, void *row)
{
	capsim_store_nccl *c = row;
	c->run_id = sqlite3_column_int64(st, 0);
	copy_text(c->op, sizeof c->op, st, 1);
	copy_text(c->dtype, sizeof c->dtype, st, 2);
	copy_text(c->redop, sizeof c->redop, st, 3);
	copy_text(c->algo, sizeof c->algo, st, 4);
	copy_text(c->proto, sizeof c->proto, st, 5);
	c->ranks = sqlite3_column_int64(st, 6);
	c->nodes = sqlite3_column_int64(st, 7);
	c->bytes = sqlite3_column_int64(st, 8);
	c->count = sqlite3_column_int64(st, 9);
	c->in_place = sqlite3_column_int(st, 10);
	c->median_s = sqlite3_column_double(st, 11);
	c->algbw_gb_per_s = sqlite3_column_double(st, 12);
	c->busbw_gb_per_s = sqlite3_column_double(st, 13);
	c->wrong = sqlite3_column_int64(st, 14);
}

int capsim_store_read_nccl(capsim_store *s, const capsim_store_sel *sel,
			   capsim_store_nccls *out, capsim_diags *d)
{
	void *v;
	int rc = read_all(s, "nccl", "run_id, op, dtype, redop, algo, proto, ranks, nodes, bytes, count,"
			  " in_place, median_s, algbw_gb_per_s, busbw_gb_per_s, wrong",
			  " ORDER BY op, algo, proto, ranks, nodes, bytes", sel, 1, sizeof *out->v, fill_nccl, &v, &out->n, d);
	out->v = v;
	return rc;
}

FREE_ROWS(capsim_store_nccls)

/* ---- power ------------------------------------------------------------------------- */

static void fill_idle(sqlite3_stmt *st, void *row)
{
	capsim_store_power_idle *p = row;
	p->run_id = sqlite3_column_int64(st, 0);
	p->power_limit_w = sqlite3_column_double(st, 1);
	p->power_w = sqlite3_column_double(st, 2);
	p->sm_mhz = sqlite3_column_double(st, 3);
	p->has_throttle = sqlite3_column_type(st, 4) != SQLITE_NULL;
	p->throttle_reasons = sqlite3_column_int64(st, 4);
}

int capsim_store_read_power_idle(capsim_store *s, const capsim_store_sel *sel,
				 capsim_store_power_idles *out, capsim_diags *d)
{
	void *v;
	int rc = read_all(s, "power_idle", "run_id, power_limit_w, power_w, sm_mhz, throttle_reasons",
			  NULL, sel, 0, sizeof *out->v, fill_idle, &v, &out->n, d);
	out->v = v;
	return rc;
}

FREE_ROWS(capsim_store_power_idles)

static void fill_load(sqlite3_stmt *st, void *row)
{
	capsim_store_power_load *p = row;
	p->run_id = sqlite3_column_int64(st, 0);
	p->duty = sqlite3_column_double(st, 1);
	copy_text(p->dtype, sizeof p->dtype, st, 2);
	p->m = sqlite3_column_int64(st, 3);
	p->n = sqlite3_column_int64(st, 4);
	p->k = sqlite3_column_int64(st, 5);
	p->median_power_w = sqlite3_column_double(st, 6);
	p->median_sm_mhz = sqlite3_column_double(st, 7);
	p->flop_per_s = sqlite3_column_double(st, 8);
	p->sustained = sqlite3_column_int(st, 9);
}

int capsim_store_read_power_load(capsim_store *s, const capsim_store_sel *sel, int sustained,
				 capsim_store_power_loads *out, capsim_diags *d)
{
	static const char sus_cols[] = "run_id, 1.0, dtype, m, n, k, median_power_w, median_sm_mhz,"
				       " median_flop_per_s, 1";
	static const char duty_cols[] = "run_id, duty, dtype, m, n, k, median_power_w, median_sm_mhz,"
					" achieved_flop_per_s, 0";
	void *v;
	int rc = read_all(s, sustained ? "power_sustained" : "power_duty",
			  sustained ? sus_cols : duty_cols, NULL, sel, 1, sizeof *out->v, fill_load,
			  &v, &out->n, d);
	out->v = v;
	return rc;
}

FREE_ROWS(capsim_store_power_loads)

/* ---- PyTorch ----------------------------------------------------------------------- */

static void fill_launch(sqlite3_stmt *st, void *row)
{
	capsim_store_torch_launch *t = row;
	t->run_id = sqlite3_column_int64(st, 0);
	copy_text(t->op, sizeof t->op, st, 1);
	t->elements = sqlite3_column_int64(st, 2);
	t->kernels = sqlite3_column_int64(st, 3);
	t->host_median_s = sqlite3_column_double(st, 4);
	t->total_median_s = sqlite3_column_double(st, 5);
}

int capsim_store_read_torch_launch(capsim_store *s, const capsim_store_sel *sel,
				   capsim_store_torch_launches *out, capsim_diags *d)
{
	void *v;
	int rc = read_all(s, "torch_launch", "run_id, op, elements, kernels, host_median_s, total_median_s",
			  NULL, sel, 0, sizeof *out->v, fill_launch, &v, &out->n, d);
	out->v = v;
	return rc;
}

FREE_ROWS(capsim_store_torch_launches)

static void fill_step(sqlite3_stmt *st, void *row)
{
	capsim_store_torch_step *t = row;
	t->run_id = sqlite3_column_int64(st, 0);
	copy_text(t->model, sizeof t->model, st, 1);
	copy_text(t->dtype, sizeof t->dtype, st, 2);
	copy_text(t->mode, sizeof t->mode, st, 3);
	t->micro_batch = sqlite3_column_int64(st, 4);
	t->seq = sqlite3_column_int64(st, 5);
	t->vocab = sqlite3_column_int64(st, 6);
	t->ok = sqlite3_column_type(st, 11) == SQLITE_NULL;
	t->median_s = sqlite3_column_double(st, 7);
	t->tokens_per_s = sqlite3_column_double(st, 8);
	t->peak_allocated_bytes = sqlite3_column_int64(st, 9);
	t->peak_reserved_bytes = sqlite3_column_int64(st, 10);
	copy_text(t->error, sizeof t->error, st, 11);
	t->issue_median_s = -1.0;
	t->kernel_s = -1.0;
	if (sqlite3_column_count(st) < 15) /* a store older than version 5 */
		return;
	t->issue_median_s = sqlite3_column_type(st, 12) == SQLITE_NULL ? -1.0 :
			    sqlite3_column_double(st, 12);
	t->kernels = sqlite3_column_int64(st, 13);
	t->kernel_s = sqlite3_column_type(st, 14) == SQLITE_NULL ? -1.0 :
		      sqlite3_column_double(st, 14);
}

int capsim_store_read_torch_step(capsim_store *s, const capsim_store_sel *sel,
				 capsim_store_torch_steps *out, capsim_diags *d)
{
	void *v;
	int rc = read_all(s, "torch_step", capsim_store_version(s) >= 5 ?
			  "run_id, model, dtype, mode, micro_batch, seq, vocab, median_s,"
			  " tokens_per_s, peak_allocated_bytes, peak_reserved_bytes, error,"
			  " issue_median_s, kernels, kernel_s" :
			  "run_id, model, dtype, mode, micro_batch, seq, vocab, median_s,"
			  " tokens_per_s, peak_allocated_bytes, peak_reserved_bytes, error",
			  NULL, sel, 1, sizeof *out->v, fill_step, &v, &out->n, d);
	out->v = v;
	return rc;
}

FREE_ROWS(capsim_store_torch_steps)

static void fill_host(sqlite3_stmt *st, void *row)
{
	capsim_store_torch_host *t = row;
	t->run_id = sqlite3_column_int64(st, 0);
	copy_text(t->arch, sizeof t->arch, st, 1);
	copy_text(t->mode, sizeof t->mode, st, 2);
	t->layers = sqlite3_column_int64(st, 3);
	t->kernels_fwd = sqlite3_column_int64(st, 4);
	t->kernels_bwd = sqlite3_column_int64(st, 5);
	t->host_fwd_s = sqlite3_column_double(st, 6);
	t->host_bwd_s = sqlite3_column_double(st, 7);
}

int capsim_store_read_torch_host(capsim_store *s, const capsim_store_sel *sel,
				 capsim_store_torch_hosts *out, capsim_diags *d)
{
	void *v;
	int rc = read_all(s, "torch_host", "run_id, arch, mode, layers, kernels_fwd, kernels_bwd,"
			  " host_fwd_s, host_bwd_s", " AND error IS NULL ORDER BY rowid", sel, 0,
			  sizeof *out->v, fill_host, &v, &out->n, d);
	out->v = v;
	return rc;
}

FREE_ROWS(capsim_store_torch_hosts)

/* ---- fused attention --------------------------------------------------------------- */

static void fill_attention(sqlite3_stmt *st, void *row)
{
	capsim_store_attention *a = row;
	a->run_id = sqlite3_column_int64(st, 0);
	copy_text(a->backend, sizeof a->backend, st, 1);
	a->seq = sqlite3_column_int64(st, 2);
	a->heads = sqlite3_column_int64(st, 3);
	a->kv_heads = sqlite3_column_int64(st, 4);
	a->head_dim = sqlite3_column_int64(st, 5);
	a->causal = sqlite3_column_int(st, 6) != 0;
	a->fwd_flop_per_s = sqlite3_column_double(st, 7);
	a->bwd_flop_per_s = sqlite3_column_double(st, 8);
}

int capsim_store_read_attention(capsim_store *s, const capsim_store_sel *sel,
				capsim_store_attentions *out, capsim_diags *d)
{
	void *v;
	int rc = read_all(s, "attention", "run_id, backend, seq, heads, kv_heads, head_dim, causal,"
			  " fwd_flop_per_s, bwd_flop_per_s", " AND error IS NULL ORDER BY rowid", sel,
			  1, sizeof *out->v, fill_attention, &v, &out->n, d);
	out->v = v;
	return rc;
}

FREE_ROWS(capsim_store_attentions)
