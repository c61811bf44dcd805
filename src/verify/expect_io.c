/* expect_io.c - monitoring baselines written as JSON, Prometheus alerting
 * rules and nccl-tests-style tables, and read back from the JSON or the
 * rules (expect.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <yaml.h>

#include "collective.h"
#include "expect.h"
#include "units.h"
#include "verify.h"
#include "xalloc.h"

/* the unit of a kind's values, as the JSON names it and people read it */
static const char *const kind_units[CAPSIM_EXPECT__KINDS] = { "GB/s", "s", "W", "W" };

/* what a kind measures, in words */
static const char *const kind_words[CAPSIM_EXPECT__KINDS] = {
	"bus bandwidth", "training step time", "power per GPU", "power per node",
};

/* ---- JSON ---------------------------------------------------------------------- */

static json_t *row_json(const capsim_expect_row *r)
{
	json_t *o = json_object();
	json_object_set_new(o, "check", json_string(capsim_expect_kind_names[r->kind]));
	json_object_set_new(o, "metric", json_string(capsim_expect_metric_names[r->kind]));
	if (r->kind == CAPSIM_EXPECT_BUSBW) {
		json_object_set_new(o, "op", json_string(capsim_coll_perf_names[r->op]));
		json_object_set_new(o, "ranks", json_integer(r->ranks));
		json_object_set_new(o, "bytes", json_real(r->bytes));
	}
	json_object_set_new(o, "expected", json_real(r->expected));
	if (r->has_band) {
		json_object_set_new(o, "expected_lo", json_real(r->lo));
		json_object_set_new(o, "expected_hi", json_real(r->hi));
	}
	json_object_set_new(o, "threshold", json_real(r->threshold));
	json_object_set_new(o, "unit", json_string(kind_units[r->kind]));
	if (r->kind == CAPSIM_EXPECT_BUSBW && r->algo >= 0) {
		json_object_set_new(o, "time_s", json_real(r->time_s));
		json_object_set_new(o, "algbw_gb_per_s", json_real(r->algbw));
		json_object_set_new(o, "algorithm",
				    json_string(capsim_collective_algo_name(r->algo)));
		json_object_set_new(o, "protocol", json_string(capsim_proto_names[r->proto]));
		json_object_set_new(o, "channels", json_integer(r->channels));
	}
	return o;
}

json_t *capsim_expect_json(const capsim_expect *e)
{
	json_t *o = json_object();
	json_object_set_new(o, "scenario", json_string(e->scenario));
	json_object_set_new(o, "file", json_string(e->file));
	json_object_set_new(o, "gpu", json_string(e->gpu));
	json_object_set_new(o, "nodes", json_integer(e->nodes));
	json_object_set_new(o, "gpus_per_node", json_integer(e->gpus_per_node));
	json_object_set_new(o, "threshold", json_real(e->fraction));
	json_t *metrics = json_object();
	for (int k = 0; k < CAPSIM_EXPECT__KINDS; k++)
		json_object_set_new(metrics, capsim_expect_kind_names[k],
				    json_string(capsim_expect_metric_names[k]));
	json_object_set_new(o, "metrics", metrics);
	json_t *rows = json_array();
	for (size_t i = 0; i < e->n; i++)
		json_array_append_new(rows, row_json(&e->rows[i]));
	json_object_set_new(o, "rows", rows);
	json_t *notes = json_array();
	for (int i = 0; i < e->n_notes; i++)
		json_array_append_new(notes, json_string(e->notes[i]));
	if (e->n_more)
		json_array_append_new(notes, json_sprintf("%d more combinations are not predicted "
							  "(the notes above say why for the first)",
							  e->n_more));
	json_object_set_new(o, "notes", notes);
	return o;
}

/* ---- Prometheus rules ------------------------------------------------------------ */

/* s as a YAML single-quoted scalar (a quote doubled) */
static void yq(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', f);
		fputc(*s, f);
	}
	fputc('\'', f);
}

/* v for people: four significant digits, never an exponent ("10984",
 * "584.9", "0.0009333") */
static const char *num(double v, char *buf, size_t n)
{
	int mag = v > 0 ? (int)floor(log10(v)) : 0;
	int decimals = mag >= 3 ? 0 : 3 - mag;
	snprintf(buf, n, "%.*f", decimals > 12 ? 12 : decimals, v);
	return buf;
}

/* "1.23 GB/s (80% band 1.1-1.4)" or "1.23 GB/s" */
static void value_words(const capsim_expect_row *r, char *buf, size_t n)
{
	char a[32], b[32], c[32];
	if (r->has_band)
		snprintf(buf, n, "%s %s (80%% band %s-%s)", num(r->expected, a, sizeof a),
			 kind_units[r->kind], num(r->lo, b, sizeof b), num(r->hi, c, sizeof c));
	else
		snprintf(buf, n, "%s %s", num(r->expected, a, sizeof a), kind_units[r->kind]);
}

static void busbw_rule(const capsim_expect *e, const capsim_expect_row *r, FILE *f)
{
	const char *op = capsim_coll_perf_names[r->op];
	char expr[256], size[48], val[128], text[512], th[32];
	snprintf(expr, sizeof expr, "%s{op=\"%s\",ranks=\"%d\",bytes=\"%.0f\"} < %.9g",
		 capsim_expect_metric_names[r->kind], op, r->ranks, r->bytes, r->threshold);
	capsim_verify_format_size(r->bytes, size, sizeof size);
	fputs("      - alert: NcclTestsBusBandwidthLow\n        expr: ", f);
	yq(f, expr);
	fprintf(f, "\n        for: 1m\n        labels:\n          severity: warning\n"
		"          capsim_check: busbw\n          op: %s\n          ranks: '%d'\n"
		"          bytes: '%.0f'\n        annotations:\n          summary: ", op, r->ranks,
		r->bytes);
	snprintf(text, sizeof text, "nccl-tests %s on %d ranks at %s: bus bandwidth below %.0f%% "
		 "of expected", op, r->ranks, size, 100 * e->fraction);
	yq(f, text);
	value_words(r, val, sizeof val);
	snprintf(text, sizeof text, "capsim expects %s on %s; measured {{ $value }} GB/s, below "
		 "%s GB/s", val, e->scenario, num(r->threshold, th, sizeof th));
	fputs("\n          description: ", f);
	yq(f, text);
	fprintf(f, "\n          expected: '%.9g'\n", r->expected);
}

/* the workload's rule of row r: its alert, expr and words */
static void workload_rule(const capsim_expect *e, const capsim_expect_row *r, FILE *f)
{
	static const char *const alerts[CAPSIM_EXPECT__KINDS] = {
		"", "TrainingStepSlow", "GpuPowerLow", "NodePowerLow",
	};
	/* the step: the last step's time above; a GPU: each node's GPUs on average
	 * (dcgm-exporter labels them by Hostname) below; a node: its BMC's reading */
	static const char *const pre[CAPSIM_EXPECT__KINDS] = { "", "", "avg by (Hostname) (", "" };
	static const char *const post[CAPSIM_EXPECT__KINDS] = { "", " >", ") <", " <" };
	char expr[256], val[128], text[512], th[32];
	snprintf(expr, sizeof expr, "%s%s%s %.9g", pre[r->kind],
		 capsim_expect_metric_names[r->kind], post[r->kind], r->threshold);
	fprintf(f, "      - alert: %s\n        expr: ", alerts[r->kind]);
	yq(f, expr);
	fprintf(f, "\n        for: 10m\n        labels:\n          severity: warning\n"
		"          capsim_check: %s\n        annotations:\n          summary: ",
		capsim_expect_kind_names[r->kind]);
	if (r->kind == CAPSIM_EXPECT_STEP)
		snprintf(text, sizeof text, "training steps slower than expected: throughput below "
			 "%.0f%% of expected", 100 * e->fraction);
	else
		snprintf(text, sizeof text, "%s below %.0f%% of expected", kind_words[r->kind],
			 100 * e->fraction);
	yq(f, text);
	value_words(r, val, sizeof val);
	snprintf(text, sizeof text, "capsim expects %s on %s; measured {{ $value }} %s, %s %s %s",
		 val, e->scenario, kind_units[r->kind],
		 r->kind == CAPSIM_EXPECT_STEP ? "above" : "below", num(r->threshold, th, sizeof th),
		 kind_units[r->kind]);
	fputs("\n          description: ", f);
	yq(f, text);
	fprintf(f, "\n          expected: '%.9g'\n", r->expected);
}

int capsim_expect_write_rules(const capsim_expect *e, FILE *f)
{
	fprintf(f, "# Prometheus alerting rules written by capsim expect for scenario %s\n"
		"# (%d nodes of %d x %s): alert below %.0f%% of what capsim expects (the step\n"
		"# time: above expected / %.2f). nccl_tests_busbw_gbps and training_step_seconds\n"
		"# are capsim's names (no standard exporter has them); DCGM_FI_DEV_POWER_USAGE is\n"
		"# dcgm-exporter's, ipmi_dcmi_power_consumption_watts the ipmi_exporter's.\n",
		e->scenario, e->nodes, e->gpus_per_node, e->gpu, 100 * e->fraction, e->fraction);
	for (int i = 0; i < e->n_notes; i++)
		fprintf(f, "# note: %s\n", e->notes[i]);
	if (e->n_more)
		fprintf(f, "# note: %d more combinations are not predicted\n", e->n_more);
	fputs("groups:\n", f);
	int busbw = 0, workload = 0;
	for (size_t i = 0; i < e->n; i++)
		*(e->rows[i].kind == CAPSIM_EXPECT_BUSBW ? &busbw : &workload) += 1;
	if (busbw) {
		fputs("  - name: capsim-nccl-tests\n    rules:\n", f);
		for (size_t i = 0; i < e->n; i++)
			if (e->rows[i].kind == CAPSIM_EXPECT_BUSBW)
				busbw_rule(e, &e->rows[i], f);
	}
	if (workload) {
		fputs("  - name: capsim-training\n    rules:\n", f);
		for (size_t i = 0; i < e->n; i++)
			if (e->rows[i].kind != CAPSIM_EXPECT_BUSBW)
				workload_rule(e, &e->rows[i], f);
	}
	if (!busbw && !workload)
		fputs("  []\n", f);
	return ferror(f) ? -1 : 0;
}

/* ---- tables ---------------------------------------------------------------------- */

/* elements per rank nccl-tests would pass to NCCL (float, 4 bytes) */
static long count_of(int op, double bytes, int n)
{
	double per = bytes / 4.0;
	if (op == CAPSIM_COLL_ALLGATHER || op == CAPSIM_COLL_REDUCESCATTER ||
	    op == CAPSIM_COLL_ALLTOALL)
		per /= n;
	return (long)per;
}

static void table_head(const capsim_expect *e, const capsim_expect_row *r, FILE *f)
{
	fprintf(f, "# capsim expect: %s on %d ranks, scenario %s, threshold %.0f%% of expected\n",
		capsim_coll_perf_names[r->op], r->ranks, e->scenario, 100 * e->fraction);
	fprintf(f, "#%11s  %12s  %8s  %6s  %6s  %9s  %7s  %7s  %8s  %8s  %9s  %-14s %-6s %3s\n",
		"size", "count", "type", "redop", "root", "time", "algbw", "busbw", "busbw_lo",
		"busbw_hi", "threshold", "algorithm", "proto", "ch");
	fprintf(f, "#%11s  %12s  %8s  %6s  %6s  %9s  %7s  %7s  %8s  %8s  %9s\n", "(B)",
		"(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "(GB/s)", "(GB/s)", "(GB/s)");
}

static void table_row(const capsim_expect_row *r, FILE *f)
{
	int op = r->op;
	const char *redop = (op == CAPSIM_COLL_ALLGATHER || op == CAPSIM_COLL_BROADCAST ||
			     op == CAPSIM_COLL_ALLTOALL || op == CAPSIM_COLL_SENDRECV) ?
				    "none" : "sum";
	const char *root = (op == CAPSIM_COLL_BROADCAST || op == CAPSIM_COLL_REDUCE) ? "0" : "-1";
	char lo[16] = "-", hi[16] = "-";
	if (r->has_band) {
		snprintf(lo, sizeof lo, "%.2f", r->lo);
		snprintf(hi, sizeof hi, "%.2f", r->hi);
	}
	fprintf(f, " %11.0f  %12ld  %8s  %6s  %6s  %9.2f  %7.2f  %7.2f  %8s  %8s  %9.2f  %-14s "
		"%-6s %3d\n", r->bytes, count_of(op, r->bytes, r->ranks), "float", redop, root,
		r->time_s * 1e6, r->algbw, r->expected, lo, hi, r->threshold,
		r->algo >= 0 ? capsim_collective_algo_name(r->algo) : "-",
		r->proto >= 0 ? capsim_proto_names[r->proto] : "-", r->channels);
}

static void workload_table(const capsim_expect *e, FILE *f)
{
	int any = 0;
	for (size_t i = 0; i < e->n; i++) {
		const capsim_expect_row *r = &e->rows[i];
		if (r->kind == CAPSIM_EXPECT_BUSBW)
			continue;
		if (!any++)
			fprintf(f, "\n# capsim expect: the workload of scenario %s\n#%-22s  %10s  "
				"%10s  %10s  %10s  %-5s %s\n", e->scenario, "check", "expected",
				"lo", "hi", "threshold", "unit", "metric");
		char lo[32] = "-", hi[32] = "-", x[32], th[32];
		if (r->has_band) {
			num(r->lo, lo, sizeof lo);
			num(r->hi, hi, sizeof hi);
		}
		fprintf(f, " %-22s  %10s  %10s  %10s  %10s  %-5s %s\n", kind_words[r->kind],
			num(r->expected, x, sizeof x), lo, hi, num(r->threshold, th, sizeof th),
			kind_units[r->kind], capsim_expect_metric_names[r->kind]);
	}
}

int capsim_expect_write_tables(const capsim_expect *e, FILE *f)
{
	const capsim_expect_row *prev = NULL;
	for (size_t i = 0; i < e->n; i++) {
		const capsim_expect_row *r = &e->rows[i];
		if (r->kind != CAPSIM_EXPECT_BUSBW)
			continue;
		if (!prev || prev->op != r->op || prev->ranks != r->ranks) {
			if (prev)
				fputc('\n', f);
			table_head(e, r, f);
		}
		table_row(r, f);
		prev = r;
	}
	workload_table(e, f);
	for (int i = 0; i < e->n_notes; i++)
		fprintf(f, "# note: %s\n", e->notes[i]);
	if (e->n_more)
		fprintf(f, "# note: %d more combinations are not predicted\n", e->n_more);
	return ferror(f) ? -1 : 0;
}

/* ---- reading JSON ---------------------------------------------------------------- */

static int kind_parse(const char *s)
{
	for (int k = 0; k < CAPSIM_EXPECT__KINDS; k++)
		if (strcmp(s, capsim_expect_kind_names[k]) == 0)
			return k;
	return -1;
}

/* "busbw, step_time, gpu_power or node_power" */
static void kinds_list(char *buf, size_t n)
{
	buf[0] = '\0';
	for (int k = 0; k < CAPSIM_EXPECT__KINDS; k++) {
		size_t l = strlen(buf);
		snprintf(buf + l, n - l, "%s%s", k == 0 ? "" : k == CAPSIM_EXPECT__KINDS - 1 ?
			 " or " : ", ", capsim_expect_kind_names[k]);
	}
}

/* the number field of row i; -1 after adding to d */
static int json_num(const char *path, size_t i, json_t *row, const char *field, int need,
		    double *out, capsim_diags *d)
{
	json_t *v = json_object_get(row, field);
	if (!v && !need)
		return 0;
	if (!json_is_number(v) || !isfinite(json_number_value(v)) || json_number_value(v) < 0) {
		capsim_diags_add(d, path, 0, "rows[%zu].%s: expected a number at least 0, found %s",
				 i, field, v ? "another value" : "nothing");
		return -1;
	}
	*out = json_number_value(v);
	return 1;
}

/* the collective's fields of a BUSBW row */
static int json_busbw(const char *path, size_t i, json_t *row, capsim_expect_row *r,
		      capsim_diags *d)
{
	const char *op = json_string_value(json_object_get(row, "op"));
	if (!op || (r->op = capsim_coll_parse(op)) < 0) {
		capsim_diags_add(d, path, 0, "rows[%zu].op: expected an nccl-tests collective "
				 "(all_reduce ... sendrecv), found '%s'", i, op ? op : "");
		return -1;
	}
	double ranks = 0;
	if (json_num(path, i, row, "ranks", 1, &ranks, d) < 0 ||
	    json_num(path, i, row, "bytes", 1, &r->bytes, d) < 0)
		return -1;
	if (ranks < 1 || ranks > (1 << 24) || ranks != floor(ranks)) {
		capsim_diags_add(d, path, 0, "rows[%zu].ranks: expected a whole number from 1 to "
				 "16777216, found %g", i, ranks);
		return -1;
	}
	r->ranks = (int)ranks;
	return 0;
}

static int json_row(const char *path, size_t i, json_t *row, capsim_expect *e, capsim_diags *d)
{
	const char *check = json_string_value(json_object_get(row, "check"));
	int kind = check ? kind_parse(check) : -1;
	if (kind < 0) {
		char kinds[96];
		kinds_list(kinds, sizeof kinds);
		capsim_diags_add(d, path, 0, "rows[%zu].check: expected %s, found '%s'", i, kinds,
				 check ? check : "");
		return -1;
	}
	capsim_expect_row r = { .kind = kind, .op = -1, .algo = -1, .proto = -1, .channels = -1 };
	if (kind == CAPSIM_EXPECT_BUSBW && json_busbw(path, i, row, &r, d) < 0)
		return -1;
	if (json_num(path, i, row, "expected", 1, &r.expected, d) < 0 ||
	    json_num(path, i, row, "threshold", 1, &r.threshold, d) < 0)
		return -1;
	int lo = json_num(path, i, row, "expected_lo", 0, &r.lo, d);
	int hi = json_num(path, i, row, "expected_hi", 0, &r.hi, d);
	if (lo < 0 || hi < 0)
		return -1;
	r.has_band = lo > 0 && hi > 0;
	if (e->n == e->cap) {
		e->cap = e->cap ? 2 * e->cap : 64;
		e->rows = capsim_xrealloc(e->rows, e->cap * sizeof *e->rows);
	}
	e->rows[e->n++] = r;
	return 0;
}

static int read_json(const char *path, const char *text, capsim_expect *e, capsim_diags *d)
{
	json_error_t err;
	json_t *root = json_loads(text, 0, &err);
	if (!root) {
		capsim_diags_add(d, path, err.line, "expected JSON, found: %s", err.text);
		return -1;
	}
	int rc = -1;
	json_t *rows = json_object_get(root, "rows");
	double fraction = 0;
	json_t *th = json_object_get(root, "threshold");
	if (json_is_number(th))
		fraction = json_number_value(th);
	if (!json_is_array(rows)) {
		capsim_diags_add(d, path, 0, "rows: expected an array of baselines (capsim expect "
				 "--format json), found %s", rows ? "another value" : "nothing");
		goto out;
	}
	if (!(fraction > 0 && fraction <= 1)) {
		capsim_diags_add(d, path, 0, "threshold: expected a fraction above 0 and at most 1, "
				 "found %s", th ? "another value" : "nothing");
		goto out;
	}
	e->fraction = fraction;
	snprintf(e->scenario, sizeof e->scenario, "%s",
		 json_string_value(json_object_get(root, "scenario")) ?
		 json_string_value(json_object_get(root, "scenario")) : "");
	for (size_t i = 0; i < json_array_size(rows); i++)
		if (json_row(path, i, json_array_get(rows, i), e, d) < 0)
			goto out;
	rc = 0;
out:
	json_decref(root);
	return rc;
}

/* ---- reading rules --------------------------------------------------------------- */

typedef struct ydoc {
	const char *path;
	yaml_document_t doc;
	capsim_diags *d;
} ydoc;

/* the value of key in mapping node m, or NULL */
static yaml_node_t *ymap_get(ydoc *y, yaml_node_t *m, const char *key)
{
	if (!m || m->type != YAML_MAPPING_NODE)
		return NULL;
	yaml_node_pair_t *p = m->data.mapping.pairs.start;
	for (; p < m->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(&y->doc, p->key);
		if (k && k->type == YAML_SCALAR_NODE &&
		    strcmp((char *)k->data.scalar.value, key) == 0)
			return yaml_document_get_node(&y->doc, p->value);
	}
	return NULL;
}

static const char *yscalar(yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static long yline(yaml_node_t *n)
{
	return n ? (long)n->start_mark.line + 1 : 0;
}

/* the number a rule's expr compares with: after its last '<' or '>' */
static int expr_threshold(ydoc *y, yaml_node_t *rule, int kind, double *out)
{
	yaml_node_t *en = ymap_get(y, rule, "expr");
	const char *expr = yscalar(en);
	const char *cmp = expr ? strrchr(expr, kind == CAPSIM_EXPECT_STEP ? '>' : '<') : NULL;
	char *end = NULL;
	if (cmp) {
		errno = 0;
		*out = strtod(cmp + 1, &end);
	}
	if (!cmp || strstr(expr, capsim_expect_metric_names[kind]) == NULL || end == cmp + 1 ||
	    errno || *end != '\0' || !isfinite(*out) || *out < 0) {
		capsim_diags_add(y->d, y->path, yline(en ? en : rule), "expr: expected '%s ... %c "
				 "THRESHOLD' (as capsim expect writes it), found '%s'",
				 capsim_expect_metric_names[kind],
				 kind == CAPSIM_EXPECT_STEP ? '>' : '<', expr ? expr : "");
		return -1;
	}
	return 0;
}

/* a whole label of a rule's labels, from 1 to max */
static int ylabel_count(ydoc *y, yaml_node_t *labels, const char *key, double max, double *out)
{
	yaml_node_t *n = ymap_get(y, labels, key);
	const char *s = yscalar(n);
	char *end = NULL;
	*out = s ? strtod(s, &end) : 0;
	if (!s || end == s || *end || !(*out >= 1 && *out <= max) || *out != floor(*out)) {
		capsim_diags_add(y->d, y->path, yline(n ? n : labels), "labels.%s: expected a whole "
				 "number from 1 to %.0f, found '%s'", key, max, s ? s : "");
		return -1;
	}
	return 0;
}

static int rule_busbw(ydoc *y, yaml_node_t *labels, capsim_expect_row *r)
{
	yaml_node_t *opn = ymap_get(y, labels, "op");
	const char *op = yscalar(opn);
	if (!op || (r->op = capsim_coll_parse(op)) < 0) {
		capsim_diags_add(y->d, y->path, yline(opn ? opn : labels), "labels.op: expected an "
				 "nccl-tests collective (all_reduce ... sendrecv), found '%s'",
				 op ? op : "");
		return -1;
	}
	double ranks;
	if (ylabel_count(y, labels, "ranks", 16777216.0, &ranks) < 0 ||
	    ylabel_count(y, labels, "bytes", 1125899906842624.0, &r->bytes) < 0)
		return -1;
	r->ranks = (int)ranks;
	return 0;
}

/* One rule: a capsim baseline where its labels say capsim_check; others are
 * the user's own and are left alone. 1 a row, 0 none, -1 a fault. */
static int rule_row(ydoc *y, yaml_node_t *rule, capsim_expect_row *r)
{
	yaml_node_t *labels = ymap_get(y, rule, "labels");
	yaml_node_t *cn = ymap_get(y, labels, "capsim_check");
	const char *check = yscalar(cn);
	if (!check)
		return 0;
	memset(r, 0, sizeof *r);
	r->op = r->algo = r->proto = r->channels = -1;
	if ((r->kind = kind_parse(check)) < 0) {
		char kinds[96];
		kinds_list(kinds, sizeof kinds);
		capsim_diags_add(y->d, y->path, yline(cn), "labels.capsim_check: expected %s, found "
				 "'%s'", kinds, check);
		return -1;
	}
	if (r->kind == CAPSIM_EXPECT_BUSBW && rule_busbw(y, labels, r) < 0)
		return -1;
	/* the expected value, for people: -1 where the annotation is not a number */
	const char *x = yscalar(ymap_get(y, ymap_get(y, rule, "annotations"), "expected"));
	char *end = NULL;
	r->expected = x ? strtod(x, &end) : -1;
	if (!x || end == x || *end || !isfinite(r->expected) || r->expected < 0)
		r->expected = -1;
	return expr_threshold(y, rule, r->kind, &r->threshold) < 0 ? -1 : 1;
}

static int rules_of_group(ydoc *y, yaml_node_t *group, capsim_expect *e)
{
	yaml_node_t *rules = ymap_get(y, group, "rules");
	if (!rules || rules->type != YAML_SEQUENCE_NODE) {
		capsim_diags_add(y->d, y->path, yline(group), "groups[].rules: expected a list of "
				 "rules, found %s", rules ? "another value" : "nothing");
		return -1;
	}
	for (yaml_node_item_t *it = rules->data.sequence.items.start;
	     it < rules->data.sequence.items.top; it++) {
		capsim_expect_row r;
		int got = rule_row(y, yaml_document_get_node(&y->doc, *it), &r);
		if (got < 0)
			return -1;
		if (!got)
			continue;
		if (e->n == e->cap) {
			e->cap = e->cap ? 2 * e->cap : 64;
			e->rows = capsim_xrealloc(e->rows, e->cap * sizeof *e->rows);
		}
		e->rows[e->n++] = r;
	}
	return 0;
}

static int read_rules(const char *path, const char *text, size_t len, capsim_expect *e,
		      capsim_diags *d)
{
	yaml_parser_t p;
	ydoc y = { .path = path, .d = d };
	yaml_parser_initialize(&p);
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	if (!yaml_parser_load(&p, &y.doc)) {
		capsim_diags_add(d, path, (long)p.problem_mark.line + 1, "expected YAML (Prometheus "
				 "rules), found: %s", p.problem ? p.problem : "unreadable text");
		yaml_parser_delete(&p);
		return -1;
	}
	yaml_parser_delete(&p);
	int rc = -1;
	yaml_node_t *groups = ymap_get(&y, yaml_document_get_root_node(&y.doc), "groups");
	if (!groups || groups->type != YAML_SEQUENCE_NODE) {
		capsim_diags_add(d, path, 1, "groups: expected Prometheus rule groups (capsim expect "
				 "--format prom), found %s", groups ? "another value" : "nothing");
		goto out;
	}
	for (yaml_node_item_t *it = groups->data.sequence.items.start;
	     it < groups->data.sequence.items.top; it++)
		if (rules_of_group(&y, yaml_document_get_node(&y.doc, *it), e) < 0)
			goto out;
	if (e->n == 0) {
		capsim_diags_add(d, path, 1, "rules: expected capsim's baselines (rules labelled "
				 "capsim_check), found none");
		goto out;
	}
	rc = 0;
out:
	yaml_document_delete(&y.doc);
	return rc;
}

/* the whole file, NUL-terminated, at most 64 MiB; NULL after adding to d */
static char *slurp(const char *path, size_t *len, capsim_diags *d)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	if (!f) {
		capsim_diags_add(d, path, 0, "cannot read: %s", strerror(errno));
		return NULL;
	}
	size_t cap = 65536, n = 0, got;
	char *buf = capsim_xmalloc(cap);
	while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
		n += got;
		if (n + 1 == cap && cap < ((size_t)64 << 20))
			buf = capsim_xrealloc(buf, cap *= 2);
		else if (n + 1 == cap)
			break;
	}
	int bad = ferror(f) || n + 1 == cap;
	if (f != stdin)
		fclose(f);
	if (bad) {
		capsim_diags_add(d, path, 0, "cannot read: %s", n + 1 == cap ?
				 "larger than 64 MiB" : "read error");
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

int capsim_expect_read_memory(const char *text, size_t len, const char *name,
			      capsim_expect *out, capsim_diags *d)
{
	memset(out, 0, sizeof *out);
	if (memchr(text, '\0', len)) {
		capsim_diags_add(d, name, 0, "expected text (JSON or YAML), found a NUL byte");
		return -1;
	}
	char *copy = capsim_xmalloc(len + 1); /* NUL-terminated for jansson */
	memcpy(copy, text, len);
	copy[len] = '\0';
	const char *p = copy;
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	int rc = *p == '{' ? read_json(name, copy, out, d) : read_rules(name, copy, len, out, d);
	free(copy);
	if (rc == 0 && out->n == 0) {
		capsim_diags_add(d, name, 0, "rows: expected at least one baseline, found none");
		rc = -1;
	}
	return rc;
}

int capsim_expect_read(const char *path, capsim_expect *out, capsim_diags *d)
{
	memset(out, 0, sizeof *out);
	size_t len = 0;
	char *text = slurp(path, &len, d);
	if (!text)
		return -1;
	int rc = capsim_expect_read_memory(text, len,
					   strcmp(path, "-") == 0 ? "standard input" : path, out, d);
	free(text);
	return rc;
}
