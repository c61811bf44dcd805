/* check.c - what a fitted profile does to the predictions of what was
 * measured: each family of the runs predicted from the catalog GPU's
 * defaults and with the profile applied; see fit.h. */
#include "fit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_sort_double.h>
#include <gsl/gsl_statistics_double.h>

#include "ops.h"
#include "query.h"
#include "xalloc.h"

/* a point moved away when its |error| grew by more than this */
#define AWAY 0.01

/* the GPU as the catalog has it, the same with the profile applied, and
 * the families summed so far */
typedef struct checker {
	const capsim_gpu *plain;
	capsim_gpu cal;
	capsim_fit_check *out;
} checker;

/* the family named name, added when absent; NULL when c is full */
static capsim_fit_family *family(capsim_fit_check *c, const char *name)
{
	for (size_t i = 0; i < c->n; i++)
		if (strcmp(c->fam[i].name, name) == 0)
			return &c->fam[i];
	if (c->n == CAPSIM_FIT_FAMILIES)
		return NULL;
	capsim_fit_family *f = &c->fam[c->n++];
	memset(f, 0, sizeof *f);
	f->name = name;
	return f;
}

/* add one point of predictions before and after against measured */
static void add(capsim_fit_check *c, const char *name, double before, double after,
		double measured)
{
	if (!(measured > 0) || !(before > 0) || !(after > 0))
		return;
	capsim_fit_family *f = family(c, name);
	if (!f)
		return;
	double eb = before / measured - 1, ea = after / measured - 1;
	f->mae_before += fabs(eb);
	f->mae_after += fabs(ea);
	f->worst_before = fmax(f->worst_before, fabs(eb));
	f->worst_after = fmax(f->worst_after, fabs(ea));
	f->away += fabs(ea) > fabs(eb) + AWAY;
	f->points++;
}

static int dtype_index(const char *s)
{
	for (int i = 0; capsim_dtype_names[i]; i++)
		if (strcmp(capsim_dtype_names[i], s) == 0)
			return i;
	return -1;
}

/* every GEMM rate: the op model's rate of its shape */
static int check_gemms(checker *k, capsim_store *db, const capsim_store_sel *sel,
		       capsim_diags *d)
{
	capsim_store_gemms rows;
	if (capsim_store_read_gemms(db, sel, 1, &rows, d) < 0)
		return -1;
	capsim_gpu_perf before, after;
	capsim_gpu_perf_default(k->plain, CAPSIM_EXEC_EAGER, &before);
	capsim_gpu_perf_default(&k->cal, CAPSIM_EXEC_EAGER, &after);
	for (size_t i = 0; i < rows.n; i++) {
		const capsim_store_gemm *r = &rows.v[i];
		int dt = dtype_index(r->dtype);
		if (dt < 0 || dt >= CAPSIM_CAL_DTYPES)
			continue;
		double m = (double)r->m, n = (double)r->n, kk = (double)r->k;
		double peak = capsim_gpu_peak(k->plain, dt);
		add(k->out, "GEMM rate", peak * capsim_gemm_efficiency_mnk(&before, dt, m, n, kk),
		    peak * capsim_gemm_efficiency_mnk(&after, dt, m, n, kk), r->flop_per_s);
	}
	capsim_store_gemms_free(&rows);
	return 0;
}

/* every device copy: the datasheet bandwidth at the copy efficiency */
static int check_copies(checker *k, capsim_store *db, const capsim_store_sel *sel,
			capsim_diags *d)
{
	capsim_store_copies rows;
	if (capsim_store_read_copies(db, sel, &rows, d) < 0)
		return -1;
	capsim_gpu_perf before, after;
	capsim_gpu_perf_default(k->plain, CAPSIM_EXEC_EAGER, &before);
	capsim_gpu_perf_default(&k->cal, CAPSIM_EXEC_EAGER, &after);
	double bw = k->plain->mem_bw_bytes_per_s;
	for (size_t i = 0; i < rows.n; i++)
		add(k->out, "copy bandwidth", bw * before.hbm_eff, bw * after.hbm_eff,
		    rows.v[i].bytes_per_s);
	capsim_store_copies_free(&rows);
	return 0;
}

/* every step's host issue time over its kernels, eager and compiled: the
 * host's cost per kernel (launch + dispatch) */
static int check_host(checker *k, capsim_store *db, const capsim_store_sel *sel,
		      capsim_diags *d)
{
	capsim_store_torch_steps rows;
	if (capsim_store_read_torch_step(db, sel, &rows, d) < 0)
		return -1;
	for (int mode = 0; mode < 2; mode++) {
		int exec = mode ? CAPSIM_EXEC_COMPILED : CAPSIM_EXEC_EAGER;
		capsim_gpu_perf before, after;
		capsim_gpu_perf_default(k->plain, exec, &before);
		capsim_gpu_perf_default(&k->cal, exec, &after);
		for (size_t i = 0; i < rows.n; i++) {
			const capsim_store_torch_step *r = &rows.v[i];
			if (!r->ok || r->kernels <= 0 || !(r->issue_median_s > 0) ||
			    strcmp(r->mode, mode ? "compile" : "eager") != 0)
				continue;
			add(k->out, mode ? "host per kernel, compiled" : "host per kernel, eager",
			    before.host_kernel_s, after.host_kernel_s,
			    r->issue_median_s / (double)r->kernels);
		}
	}
	capsim_store_torch_steps_free(&rows);
	return 0;
}

/* the rate (FLOP/s) GPU g gives kernel at one point and pass: its flat
 * attention fraction where it has one, else the kernel's curve (its
 * profile's or capsim's default), at the dense bf16 peak */
static double attn_predicted(const capsim_gpu *g, int kernel, const capsim_store_attention *r,
			     int bwd)
{
	capsim_gpu_perf perf;
	capsim_gpu_perf_default(g, CAPSIM_EXEC_EAGER, &perf);
	capsim_gpu_perf_attention(g, kernel, &perf);
	double frac = perf.attn_frac > 0 ? perf.attn_frac :
		      capsim_attention_frac(perf.attn_curve, (double)r->seq, (double)r->head_dim,
					    r->causal, bwd);
	return frac * capsim_gpu_peak(g, CAPSIM_DTYPE_BF16);
}

static int attn_kernel(const char *backend)
{
	return !strcmp(backend, "flash") ? CAPSIM_ATTN_FLASH2 :
	       !strcmp(backend, "cudnn") ? CAPSIM_ATTN_CUDNN : -1;
}

static int attn_same_point(const capsim_store_attention *a, const capsim_store_attention *b)
{
	return attn_kernel(a->backend) == attn_kernel(b->backend) && a->seq == b->seq &&
	       a->head_dim == b->head_dim && a->causal == b->causal &&
	       a->kv_heads == a->heads && b->kv_heads == b->heads;
}

/* every attention point the fit makes a curve of (flash and cudnn, as many
 * key/value heads as query heads), forward and backward: the median of its
 * records' rates against the kernel's rate without and with the profile */
static int check_attention(checker *k, capsim_store *db, const capsim_store_sel *sel,
			   capsim_diags *d)
{
	capsim_store_attentions rows;
	if (capsim_store_read_attention(db, sel, &rows, d) < 0)
		return -1;
	double *v = capsim_xcalloc(rows.n + 1, sizeof *v);
	for (size_t i = 0; i < rows.n; i++) {
		const capsim_store_attention *r = &rows.v[i];
		int kernel = attn_kernel(r->backend), first = 1;
		for (size_t j = 0; j < i && first; j++)
			first = !attn_same_point(&rows.v[j], r);
		if (kernel < 0 || r->kv_heads != r->heads || !first)
			continue;
		for (int bwd = 0; bwd < 2; bwd++) {
			size_t n = 0;
			for (size_t j = i; j < rows.n; j++)
				if (attn_same_point(&rows.v[j], r))
					v[n++] = bwd ? rows.v[j].bwd_flop_per_s :
						       rows.v[j].fwd_flop_per_s;
			gsl_sort(v, 1, n);
			add(k->out, "attention", attn_predicted(k->plain, kernel, r, bwd),
			    attn_predicted(&k->cal, kernel, r, bwd),
			    gsl_stats_median_from_sorted_data(v, 1, n));
		}
	}
	free(v);
	capsim_store_attentions_free(&rows);
	return 0;
}

int capsim_fit_before_after(const char *db_path, const capsim_fit_options *o,
			    const capsim_profile *p, const capsim_gpu *g,
			    capsim_fit_check *out, capsim_diags *d)
{
	memset(out, 0, sizeof *out);
	checker k = { .plain = g, .cal = *g, .out = out };
	if (capsim_profile_apply(p, &k.cal, d) < 0)
		return -1;
	capsim_store_sel sel = { .runs = o->runs, .n_runs = o->runs ? o->n_runs : 0 };
	capsim_store *db;
	if (capsim_store_open(db_path, CAPSIM_STORE_READ, &db, d) < 0)
		return -1;
	int rc = check_gemms(&k, db, &sel, d);
	if (rc == 0)
		rc = check_copies(&k, db, &sel, d);
	if (rc == 0)
		rc = check_host(&k, db, &sel, d);
	if (rc == 0)
		rc = check_attention(&k, db, &sel, d);
	capsim_store_close(db);
	for (size_t i = 0; i < out->n; i++) {
		capsim_fit_family *f = &out->fam[i];
		f->mae_before /= (double)f->points;
		f->mae_after /= (double)f->points;
	}
	return rc;
}

void capsim_fit_before_after_report(const capsim_fit_check *c, FILE *out)
{
	if (!c->n)
		return;
	fprintf(out, "\nBefore and after the profile, at what was measured (error = predicted / "
		     "measured - 1;\nbefore: the catalog GPU's defaults; moved away: |error| grown "
		     "by more than 1 point):\n"
		     "  family                      points   mean |error| before  after   largest "
		     "before  after   moved away\n");
	for (size_t i = 0; i < c->n; i++) {
		const capsim_fit_family *f = &c->fam[i];
		fprintf(out, "  %-27s %6zu %17.1f%% %6.1f%% %15.1f%% %6.1f%% %10zu\n", f->name,
			f->points, 100 * f->mae_before, 100 * f->mae_after, 100 * f->worst_before,
			100 * f->worst_after, f->away);
	}
	fprintf(out, "  (step times, power and memory are not predicted here: the step model "
		     "needs the workload;\n   docs/validation.md scores the measured H200's)\n");
}
