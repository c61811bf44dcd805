/* point.c - one sweep point evaluated into a record of store rows, and the
 * records' wire form between MPI ranks; see runint.h. */
#include "runint.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval.h"
#include "sha256.h"
#include "xalloc.h"

/* a row's text, owned by the item though the row's type holds it const */
static void free_text(const char *s)
{
	free((void *)(uintptr_t)s);
}

void sweep_item_free(sweep_item *it)
{
	if (!it)
		return;
	for (size_t i = 0; i < it->n_rows; i++)
		free_text(it->rows[i].text);
	free(it->rows);
	free(it->error);
	free(it);
}

/* every diagnostic of d on one line: "WHERE: MSG; WHERE: MSG" */
static char *diags_line(const capsim_diags *d)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return capsim_xstrdup("out of memory");
	for (size_t i = 0; i < d->n; i++)
		fprintf(f, "%s%s%s%s", i ? "; " : "", d->v[i].where ? d->v[i].where : "",
			d->v[i].where ? ": " : "", d->v[i].msg);
	if (d->n == 0)
		fputs("failed without a reason (internal)", f);
	fclose(f);
	for (char *c = buf; c && *c; c++)
		if (*c == '\n')
			*c = ' ';
	return buf ? buf : capsim_xstrdup("out of memory");
}

void capsim_sweep_scenario_digest(const capsim_scenario *s, char hex[65])
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	hex[0] = '\0';
	if (!f)
		return;
	int rc = capsim_scenario_write_xml(s, f);
	if (fclose(f) == 0 && rc == 0)
		capsim_sha256_hex(buf, len, hex);
	free(buf);
}

static void fail(sweep_item *it, const capsim_diags *d)
{
	it->failed = 1;
	it->error = diags_line(d);
}

/* r's store rows (capsim_result_values), their texts copied; a number that
 * is not finite (a break-even that never comes) is kept as its text */
static void take_rows(sweep_item *it, const capsim_result *r)
{
	it->rows = capsim_xcalloc(capsim_result_n_values, sizeof *it->rows);
	it->n_rows = capsim_result_values(r, it->rows, capsim_result_n_values);
	for (size_t i = 0; i < it->n_rows; i++) {
		capsim_result_value *v = &it->rows[i];
		if (v->text)
			v->text = capsim_xstrdup(v->text);
		else if (!isfinite(v->num))
			v->text = capsim_xstrdup(isnan(v->num) ? "nan" : v->num > 0 ? "inf" : "-inf");
	}
}

sweep_item *sweep_eval_point(const sweep_job *j, int64_t index)
{
	sweep_item *it = capsim_xcalloc(1, sizeof *it);
	it->index = index;
	capsim_set params[CAPSIM_SWEEP_MAX_AXES];
	capsim_sweep_point(j->sw, (uint64_t)index, params);
	capsim_scenario *s = capsim_xmalloc(sizeof *s);
	*s = *j->base;
	capsim_diags d = { 0 };
	if (capsim_scenario_set_many(s, j->cat, params, j->sw->n_axes, &d) < 0) {
		fail(it, &d);
		goto out;
	}
	capsim_sweep_scenario_digest(s, it->sha256);
	capsim_result r;
	capsim_eval_opts eo = { .errors = j->errors };
	if (capsim_eval(s, &eo, &r, &d) < 0) {
		fail(it, &d);
		goto out;
	}
	take_rows(it, &r);
	capsim_result_free(&r);
out:
	capsim_diags_free(&d);
	free(s);
	return it;
}

/* ---- the wire form ---------------------------------------------------------------- */

static void put(sweep_buf *b, const void *p, size_t n)
{
	if (n == 0)
		return;
	if (b->n + n > b->cap) {
		while (b->n + n > b->cap)
			b->cap = b->cap ? 2 * b->cap : 4096;
		b->p = capsim_xrealloc(b->p, b->cap);
	}
	memcpy(b->p + b->n, p, n);
	b->n += n;
}

static void put_text(sweep_buf *b, const char *s)
{
	uint32_t n = s ? (uint32_t)strlen(s) : 0;
	put(b, &n, sizeof n);
	put(b, s, n);
}

void sweep_buf_put_item(sweep_buf *b, const sweep_item *it)
{
	uint32_t n = (uint32_t)it->n_rows, failed = (uint32_t)it->failed;
	put(b, &it->index, sizeof it->index);
	put(b, &failed, sizeof failed);
	put(b, it->sha256, 64);
	put_text(b, it->error);
	put(b, &n, sizeof n);
	for (size_t i = 0; i < it->n_rows; i++) {
		const capsim_result_value *v = &it->rows[i];
		uint8_t is_text = v->text != NULL;
		put_text(b, v->key);
		put(b, &is_text, sizeof is_text);
		if (is_text)
			put_text(b, v->text);
		else
			put(b, &v->num, sizeof v->num);
	}
}

static int get(sweep_buf *b, void *p, size_t n)
{
	if (b->n - b->at < n)
		return -1;
	memcpy(p, b->p + b->at, n);
	b->at += n;
	return 0;
}

static char *get_text(sweep_buf *b, int *bad)
{
	uint32_t n;
	if (get(b, &n, sizeof n) < 0 || b->n - b->at < n) {
		*bad = 1;
		return NULL;
	}
	char *s = capsim_xmalloc((size_t)n + 1);
	memcpy(s, b->p + b->at, n);
	s[n] = '\0';
	b->at += n;
	return s;
}

/* one row: its key (one of the result table's, whose key and unit it
 * then points to), whether it is a text, the text or the number */
static int get_row(sweep_buf *b, capsim_result_value *v)
{
	int bad = 0, end = -1;
	char *name = get_text(b, &bad);
	const capsim_result_key *k = bad ? NULL : capsim_result_key_find(name);
	if (!bad && !k) /* a banded key's end */
		k = capsim_result_end_find(name, &end);
	free(name);
	uint8_t is_text;
	if (!k || get(b, &is_text, sizeof is_text) < 0)
		return -1;
	v->key = end >= 0 ? k->ends[end] : k->key;
	v->unit = k->unit;
	if (is_text) {
		v->text = get_text(b, &bad);
		return bad ? -1 : 0;
	}
	return get(b, &v->num, sizeof v->num);
}

sweep_item *sweep_buf_get_item(sweep_buf *b, int *bad)
{
	*bad = 0;
	if (b->at == b->n)
		return NULL;
	sweep_item *it = capsim_xcalloc(1, sizeof *it);
	uint32_t failed, n;
	if (get(b, &it->index, sizeof it->index) < 0 || get(b, &failed, sizeof failed) < 0 ||
	    get(b, it->sha256, 64) < 0)
		goto bad;
	it->sha256[64] = '\0';
	it->failed = failed != 0;
	it->error = get_text(b, bad);
	if (*bad)
		goto bad;
	if (!it->failed) {
		free(it->error);
		it->error = NULL;
	}
	if (get(b, &n, sizeof n) < 0 || n > capsim_result_n_values)
		goto bad;
	it->rows = capsim_xcalloc(n ? n : 1, sizeof *it->rows);
	for (uint32_t i = 0; i < n; i++) {
		capsim_result_value *v = &it->rows[it->n_rows++];
		if (get_row(b, v) < 0)
			goto bad;
	}
	return it;
bad:
	*bad = 1;
	sweep_item_free(it);
	return NULL;
}

void sweep_buf_free(sweep_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof *b);
}
