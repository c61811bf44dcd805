/* sweep_run.c - one sweep point evaluated into a record, and the records'
 * wire form between MPI ranks; see sweep_run.h. */
#include "sweep_run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval.h"
#include "sha256.h"
#include "xalloc.h"

void sweep_item_free(sweep_item *it)
{
	if (!it)
		return;
	for (size_t i = 0; i < it->n_values; i++)
		free(it->values[i].text);
	free(it->values);
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

void sweep_scenario_digest(const capsim_scenario *s, char hex[65])
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

/* r's scalar keys, in table order; a number that is not finite (a
 * break-even that never comes) is kept as its text */
static void take_values(sweep_item *it, const capsim_result *r)
{
	it->values = capsim_xcalloc(capsim_result_n_keys, sizeof *it->values);
	for (size_t i = 0; i < capsim_result_n_keys; i++) {
		const capsim_result_key *k = &capsim_result_keys[i];
		if (k->kind == CAPSIM_RK_JSON || !capsim_result_has(r, k))
			continue;
		sweep_value *v = &it->values[it->n_values++];
		v->key = (uint16_t)i;
		if (k->kind == CAPSIM_RK_TEXT) {
			v->is_text = 1;
			v->text = capsim_xstrdup((const char *)r + k->offset);
			continue;
		}
		v->num = capsim_result_number(r, k);
		if (!isfinite(v->num)) {
			v->is_text = 1;
			v->text = capsim_xstrdup(isnan(v->num) ? "nan" : v->num > 0 ? "inf" : "-inf");
		}
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
	sweep_scenario_digest(s, it->sha256);
	capsim_result r;
	if (capsim_eval(s, NULL, &r, &d) < 0) {
		fail(it, &d);
		goto out;
	}
	take_values(it, &r);
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
	uint32_t n = (uint32_t)it->n_values, failed = (uint32_t)it->failed;
	put(b, &it->index, sizeof it->index);
	put(b, &failed, sizeof failed);
	put(b, it->sha256, 64);
	put_text(b, it->error);
	put(b, &n, sizeof n);
	for (size_t i = 0; i < it->n_values; i++) {
		const sweep_value *v = &it->values[i];
		put(b, &v->key, sizeof v->key);
		put(b, &v->is_text, sizeof v->is_text);
		if (v->is_text)
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
	if (get(b, &n, sizeof n) < 0 || n > capsim_result_n_keys)
		goto bad;
	it->values = capsim_xcalloc(n ? n : 1, sizeof *it->values);
	for (uint32_t i = 0; i < n; i++) {
		sweep_value *v = &it->values[it->n_values++];
		if (get(b, &v->key, sizeof v->key) < 0 || v->key >= capsim_result_n_keys ||
		    get(b, &v->is_text, sizeof v->is_text) < 0)
			goto bad;
		if (v->is_text) {
			v->text = get_text(b, bad);
			if (*bad)
				goto bad;
		} else if (get(b, &v->num, sizeof v->num) < 0) {
			goto bad;
		}
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
