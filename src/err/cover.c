/* cover.c - leave-one-table-out coverage of the error model's bands: each
 * table's rows banded by a model fitted without them (err.h). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "xalloc.h"

static int cmp_text(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* the distinct values of one text field of the out-of-sample rows, sorted;
 * the caller frees the array (not the texts: they are the rows') */
static const char **distinct(const capsim_err_rows *rows, size_t offset, size_t *n)
{
	const char **v = capsim_xcalloc(rows->n + 1, sizeof *v);
	*n = 0;
	for (size_t i = 0; i < rows->n; i++) {
		const char *s = (const char *)&rows->v[i] + offset;
		if (rows->v[i].in_sample)
			continue;
		size_t k = 0;
		while (k < *n && strcmp(v[k], s) != 0)
			k++;
		if (k == *n)
			v[(*n)++] = s;
	}
	qsort(v, *n, sizeof *v, cmp_text);
	return v;
}

/* row w banded by m, counted into c */
static void count_row(const capsim_err_model *m, const capsim_err_row *w, capsim_err_cover *c)
{
	capsim_err_band b;
	capsim_err_band_of(m, w->quantity, &w->f, &b);
	c->rows++;
	for (int l = 0; l < CAPSIM_ERR__LEVELS; l++) {
		if (!b.has[l])
			continue;
		c->banded[l]++;
		c->inside[l] += w->measured >= b.lo[l] * w->predicted &&
				w->measured <= b.hi[l] * w->predicted;
		c->width[l] += b.hi[l] - b.lo[l];
	}
}

size_t capsim_err_coverage(const capsim_err_rows *rows, capsim_err_cover **out)
{
	size_t n_tables, n_fam;
	const char **tables = distinct(rows, offsetof(capsim_err_row, table), &n_tables);
	const char **fams = distinct(rows, offsetof(capsim_err_row, family), &n_fam);
	capsim_err_cover *c = capsim_xcalloc(n_fam + 1, sizeof *c);
	for (size_t k = 0; k < n_fam; k++)
		snprintf(c[k].family, sizeof c[k].family, "%s", fams[k]);
	snprintf(c[n_fam].family, sizeof c[n_fam].family, "all");
	for (size_t t = 0; t < n_tables; t++) {
		capsim_err_model *m = capsim_err_fit_groups(rows, tables[t]);
		for (size_t i = 0; i < rows->n; i++) {
			const capsim_err_row *w = &rows->v[i];
			if (w->in_sample || strcmp(w->table, tables[t]) != 0)
				continue;
			size_t k = 0;
			while (k < n_fam && strcmp(fams[k], w->family) != 0)
				k++;
			count_row(m, w, &c[k]);
			count_row(m, w, &c[n_fam]);
		}
		capsim_err_model_free(m);
	}
	for (size_t k = 0; k <= n_fam; k++)
		for (int l = 0; l < CAPSIM_ERR__LEVELS; l++)
			if (c[k].banded[l])
				c[k].width[l] /= (double)c[k].banded[l];
	free(tables);
	free(fams);
	*out = c;
	return n_fam + 1;
}
