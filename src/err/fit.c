/* fit.c - split-conformal bands on capsim's residuals, by group of features
 * with fallback, the paired differences, and leave-one-table-out coverage
 * (err.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "xalloc.h"

const char *const capsim_err_quantity_names[CAPSIM_ERR__QUANTITIES] = {
	"step", "memory", "busbw", "power", "checkpoint",
};
const char *const capsim_err_feature_names[CAPSIM_ERR__FEATURES] = {
	"gen", "stack", "host", "profile", "scale",
};
const char *const capsim_err_level_names[CAPSIM_ERR__LEVELS] = { "80%", "95%" };
const size_t capsim_err_min_n[CAPSIM_ERR__LEVELS] = { 9, 39 };

/* 1 - alpha/2 of each level as a fraction (the band's upper rank), and
 * 1 - alpha (the paired differences' rank, on |d|) */
static const size_t band_num[CAPSIM_ERR__LEVELS] = { 9, 39 }, band_den[CAPSIM_ERR__LEVELS] = {
	10, 40 };
static const size_t pair_num[CAPSIM_ERR__LEVELS] = { 4, 19 }, pair_den[CAPSIM_ERR__LEVELS] = {
	5, 20 };

int capsim_err_quantity_parse(const char *s)
{
	for (int q = 0; q < CAPSIM_ERR__QUANTITIES; q++)
		if (strcmp(s, capsim_err_quantity_names[q]) == 0)
			return q;
	return -1;
}

const char *capsim_err_scale_name(int gpus)
{
	return gpus <= 1 ? "1" : gpus <= 8 ? "2-8" : gpus <= 512 ? "9-512" : "513+";
}

/* feature k of f as the text a group's key holds */
static const char *feature_text(const capsim_err_features *f, int k)
{
	switch (k) {
	case CAPSIM_ERR_F_GEN: return f->gen;
	case CAPSIM_ERR_F_STACK: return f->stack;
	case CAPSIM_ERR_F_HOST: return f->host_bound ? "host-bound" : "gpu-bound";
	case CAPSIM_ERR_F_PROFILE: return f->profile;
	default: return capsim_err_scale_name(f->gpus);
	}
}

/* whether features f fall in a group of the given level and key */
static int in_group(const capsim_err_features *f, int level,
		    const char key[CAPSIM_ERR__FEATURES][CAPSIM_ERR_TEXT])
{
	for (int k = 0; k < CAPSIM_ERR__FEATURES - level; k++)
		if (strcmp(feature_text(f, k), key[k]) != 0)
			return 0;
	return 1;
}

static void key_of(const capsim_err_features *f, int level,
		   char key[CAPSIM_ERR__FEATURES][CAPSIM_ERR_TEXT])
{
	for (int k = 0; k < CAPSIM_ERR__FEATURES; k++)
		snprintf(key[k], CAPSIM_ERR_TEXT, "%s",
			 k < CAPSIM_ERR__FEATURES - level ? feature_text(f, k) : "*");
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* the rank ceil((n + 1) num / den), 1-based */
static size_t rank_of(size_t n, size_t num, size_t den)
{
	return ((n + 1) * num + den - 1) / den;
}

/* the row counts: out-of-sample and not of table skip */
static int usable(const capsim_err_row *r, const char *skip)
{
	return !r->in_sample && !(skip && strcmp(r->table, skip) == 0);
}

/* the group's rows' r sorted, its median and conformal bands */
static void fit_bands(capsim_err_group *g, const capsim_err_rows *rows, const char *skip)
{
	double *r = capsim_xcalloc(rows->n + 1, sizeof *r);
	size_t n = 0;
	for (size_t i = 0; i < rows->n; i++) {
		const capsim_err_row *w = &rows->v[i];
		if (usable(w, skip) && w->quantity == g->quantity &&
		    in_group(&w->f, g->level, g->key))
			r[n++] = log(w->measured / w->predicted);
	}
	qsort(r, n, sizeof *r, cmp_double);
	g->n = n;
	g->median_r = n == 0 ? 0.0 : n % 2 ? r[n / 2] : 0.5 * (r[n / 2 - 1] + r[n / 2]);
	for (int l = 0; l < CAPSIM_ERR__LEVELS; l++) {
		size_t k = rank_of(n, band_num[l], band_den[l]);
		g->has[l] = n >= capsim_err_min_n[l] && k <= n;
		g->lo[l] = g->has[l] ? exp(r[n - k]) : 0.0;
		g->hi[l] = g->has[l] ? exp(r[k - 1]) : 0.0;
	}
	free(r);
}

/* the group's pairs (one table, one GPU, one stack): |r_i - r_j| sorted,
 * and their quantiles */
static void fit_pairs(capsim_err_group *g, const capsim_err_rows *rows, const char *skip)
{
	size_t *idx = capsim_xcalloc(rows->n + 1, sizeof *idx), m = 0;
	for (size_t i = 0; i < rows->n; i++) {
		const capsim_err_row *w = &rows->v[i];
		if (usable(w, skip) && w->quantity == g->quantity &&
		    in_group(&w->f, g->level, g->key))
			idx[m++] = i;
	}
	size_t cap = m * (m > 0 ? m - 1 : 0) / 2 + 1, n = 0;
	double *d = capsim_xcalloc(cap, sizeof *d);
	for (size_t a = 0; a < m; a++)
		for (size_t b = a + 1; b < m; b++) {
			const capsim_err_row *x = &rows->v[idx[a]], *y = &rows->v[idx[b]];
			if (strcmp(x->table, y->table) || strcmp(x->gpu, y->gpu) ||
			    strcmp(x->f.stack, y->f.stack))
				continue;
			d[n++] = fabs(log(x->measured / x->predicted) -
				      log(y->measured / y->predicted));
		}
	qsort(d, n, sizeof *d, cmp_double);
	g->n_pairs = n;
	g->pair_median = n ? d[rank_of(n, 1, 2) - 1] : 0.0;
	g->pair_max = n ? d[n - 1] : 0.0;
	for (int l = 0; l < CAPSIM_ERR__LEVELS; l++) {
		size_t k = rank_of(n, pair_num[l], pair_den[l]);
		g->pair_has[l] = n >= capsim_err_min_n[l] && k <= n;
		g->pair_q[l] = g->pair_has[l] ? d[k - 1] : 0.0;
	}
	free(d);
	free(idx);
}

static int cmp_group(const void *a, const void *b)
{
	const capsim_err_group *x = a, *y = b;
	if (x->quantity != y->quantity)
		return x->quantity < y->quantity ? -1 : 1;
	if (x->level != y->level)
		return x->level < y->level ? -1 : 1;
	for (int k = 0; k < CAPSIM_ERR__FEATURES; k++) {
		int c = strcmp(x->key[k], y->key[k]);
		if (c)
			return c;
	}
	return 0;
}

/* the index of the group of quantity q, level and key in m, or m->n */
static size_t find_group(const capsim_err_model *m, capsim_err_quantity q, int level,
			 const char key[CAPSIM_ERR__FEATURES][CAPSIM_ERR_TEXT])
{
	capsim_err_group probe = { .quantity = q, .level = level };
	memcpy(probe.key, key, sizeof probe.key);
	for (size_t i = 0; i < m->n; i++)
		if (cmp_group(&m->g[i], &probe) == 0)
			return i;
	return m->n;
}

capsim_err_model *capsim_err_fit_groups(const capsim_err_rows *rows, const char *skip)
{
	capsim_err_model *m = capsim_xcalloc(1, sizeof *m);
	size_t cap = 0;
	for (size_t i = 0; i < rows->n; i++) {
		const capsim_err_row *w = &rows->v[i];
		m->rows++;
		m->in_sample += w->in_sample != 0;
		if (!usable(w, skip))
			continue;
		for (int level = 0; level <= CAPSIM_ERR__FEATURES; level++) {
			char key[CAPSIM_ERR__FEATURES][CAPSIM_ERR_TEXT];
			key_of(&w->f, level, key);
			if (find_group(m, w->quantity, level, key) < m->n)
				continue;
			if (m->n == cap) {
				cap = cap ? 2 * cap : 64;
				m->g = capsim_xrealloc(m->g, cap * sizeof *m->g);
			}
			capsim_err_group *g = &m->g[m->n++];
			memset(g, 0, sizeof *g);
			g->quantity = w->quantity;
			g->level = level;
			memcpy(g->key, key, sizeof g->key);
		}
	}
	for (size_t i = 0; i < m->n; i++) {
		fit_bands(&m->g[i], rows, skip);
		fit_pairs(&m->g[i], rows, skip);
	}
	if (m->n)
		qsort(m->g, m->n, sizeof *m->g, cmp_group);
	return m;
}

capsim_err_model *capsim_err_fit(const capsim_err_rows *rows)
{
	capsim_err_model *m = capsim_err_fit_groups(rows, NULL);
	m->n_cover = capsim_err_coverage(rows, &m->cover);
	return m;
}

void capsim_err_model_free(capsim_err_model *m)
{
	if (!m)
		return;
	free(m->g);
	free(m->cover);
	free(m);
}

/* "step / hopper / megatron / any host / any profile / any scale" */
static void group_name(const capsim_err_group *g, char *buf, size_t size)
{
	int w = snprintf(buf, size, "%s", capsim_err_quantity_names[g->quantity]);
	for (int k = 0; k < CAPSIM_ERR__FEATURES && w > 0 && (size_t)w < size; k++) {
		if (strcmp(g->key[k], "*") == 0)
			w += snprintf(buf + w, size - (size_t)w, " / any %s",
				      capsim_err_feature_names[k]);
		else if (k == CAPSIM_ERR_F_SCALE)
			w += snprintf(buf + w, size - (size_t)w, " / %s GPUs", g->key[k]);
		else
			w += snprintf(buf + w, size - (size_t)w, " / %s", g->key[k]);
	}
}

/* the first group of the fallback order for q and f that has level l (pairs:
 * of the paired differences), or NULL */
static const capsim_err_group *pick(const capsim_err_model *m, capsim_err_quantity q,
				    const capsim_err_features *f, int l, int pairs)
{
	for (int level = 0; level <= CAPSIM_ERR__FEATURES; level++) {
		char key[CAPSIM_ERR__FEATURES][CAPSIM_ERR_TEXT];
		key_of(f, level, key);
		size_t i = find_group(m, q, level, key);
		if (i < m->n && (pairs ? m->g[i].pair_has[l] : m->g[i].has[l]))
			return &m->g[i];
	}
	return NULL;
}

int capsim_err_band_of(const capsim_err_model *m, capsim_err_quantity q,
		    const capsim_err_features *f, capsim_err_band *b)
{
	memset(b, 0, sizeof *b);
	for (int l = 0; l < CAPSIM_ERR__LEVELS; l++) {
		const capsim_err_group *g = pick(m, q, f, l, 0);
		if (!g)
			continue;
		b->has[l] = 1;
		b->lo[l] = g->lo[l];
		b->hi[l] = g->hi[l];
		b->n[l] = g->n;
		group_name(g, b->group[l], sizeof b->group[l]);
	}
	return b->has[CAPSIM_ERR_80] ? 0 : -1;
}

int capsim_err_diff_band(const capsim_err_model *m, capsim_err_quantity q,
			 const capsim_err_features *f, capsim_err_diff *out)
{
	memset(out, 0, sizeof *out);
	for (int l = 0; l < CAPSIM_ERR__LEVELS; l++) {
		const capsim_err_group *g = pick(m, q, f, l, 1);
		if (!g)
			continue;
		out->has[l] = 1;
		out->q[l] = g->pair_q[l];
		out->n_pairs[l] = g->n_pairs;
		group_name(g, out->group[l], sizeof out->group[l]);
		if (l == CAPSIM_ERR_80) {
			out->median = g->pair_median;
			out->max = g->pair_max;
			out->knot95 = g->pair_has[CAPSIM_ERR_95] ? g->pair_q[CAPSIM_ERR_95] : 0.0;
		}
	}
	return out->has[CAPSIM_ERR_80] ? 0 : -1;
}

/* the distribution of |d| at x: linear between (0, 0), the median, the
 * quantiles of the 80% group and its largest, capped at 1 - 1/(n + 1) */
static double abs_d_cdf(const capsim_err_diff *dd, double x)
{
	double cap = 1.0 - 1.0 / ((double)dd->n_pairs[CAPSIM_ERR_80] + 1.0);
	double kx[5] = { 0.0, dd->median, dd->q[CAPSIM_ERR_80] }, ky[5] = { 0.0, 0.5, 0.8 };
	int n = 3;
	if (dd->knot95 > 0 && cap > 0.95) {
		kx[n] = dd->knot95;
		ky[n++] = 0.95;
	}
	kx[n] = dd->max;
	ky[n++] = cap;
	double px = 0.0, py = 0.0;
	for (int i = 1; i < n; i++) {
		if (!(kx[i] > px) || !(ky[i] > py))
			continue; /* a tie of quantiles: no step of its own */
		if (x <= kx[i])
			return py + (ky[i] - py) * (x - px) / (kx[i] - px);
		px = kx[i];
		py = ky[i];
	}
	return cap;
}

double capsim_err_prob_less(const capsim_err_diff *dd, double pred_a, double pred_b)
{
	double x = log(pred_a / pred_b);
	if (x == 0.0 || !dd->has[CAPSIM_ERR_80])
		return 0.5;
	double tail = 0.5 * (1.0 - abs_d_cdf(dd, fabs(x)));
	return x > 0 ? tail : 1.0 - tail;
}
