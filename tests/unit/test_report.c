/* test_report.c - procurement reports on the shipped example
 * (scenarios/report/: rented H100s, owned H200s on InfiniBand and on RoCE):
 * the HTML is well-formed XML with every figure inline and nothing fetched
 * from a network; every figure is a valid SVG and PNG; summary.csv holds
 * what capsim_eval and `capsim run --json` give; the decision rule and its
 * sensitivity move the way costs do; without gnuplot the text is written,
 * the figures are not, and the exit status is 1; designs of two workloads
 * are refused; the figures in people's units and the palette's colours,
 * coincident lines marked, no result key's name in the text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include "catalog.h"
#include "eval.h"
#include "report.h"
#include "scenario.h"
#include "testutil.h"

static capsim_catalog *cat;
static char dir[256];

static const char *const designs[] = { "h100-rented.xml", "h200-owned-ib.xml",
					"h200-owned-roce.xml" };
#define N_DESIGNS 3

static int setup(void **state)
{
	(void)state;
	capsim_init();
	cat = testutil_shipped_catalog();
	if (!cat)
		return -1;
	return testutil_tmpdir_make(dir, sizeof dir, "test-report");
}

static int teardown(void **state)
{
	(void)state;
	capsim_catalog_free(cat);
	return testutil_tmpdir_remove(dir);
}

static capsim_scenario *load(const char *name, const capsim_set *sets, size_t n)
{
	char path[512];
	snprintf(path, sizeof path, "%s/scenarios/report/%s", CAPSIM_SOURCE_DIR, name);
	capsim_scenario *s = calloc(1, sizeof *s);
	capsim_diags d = { 0 };
	if (capsim_scenario_load(path, cat, sets, n, s, &d) < 0) {
		capsim_diags_print(&d, stderr);
		fail_msg("%s does not load", path);
	}
	capsim_diags_free(&d);
	return s;
}

static void collect(capsim_report *rep, const capsim_report_rule *rule)
{
	capsim_scenario *v[N_DESIGNS];
	for (int i = 0; i < N_DESIGNS; i++)
		v[i] = load(designs[i], NULL, 0);
	capsim_diags d = { 0 };
	if (capsim_report_collect(rep, v, N_DESIGNS, rule, cat, NULL, NULL, &d) < 0) {
		capsim_diags_print(&d, stderr);
		fail_msg("collect");
	}
	capsim_diags_free(&d);
}

static char *slurp(const char *path, size_t *n);

/* path parsed as XML from its bytes (capsim_init's entity loader serves only
 * the embedded schemas, so files are read here, not by libxml2) */
static xmlDoc *read_xml(const char *path)
{
	size_t n;
	char *buf = slurp(path, &n);
	xmlDoc *doc = xmlReadMemory(buf, (int)n, path, NULL, XML_PARSE_NONET);
	free(buf);
	return doc;
}

static char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		fail_msg("%s: cannot open", path);
	fseek(f, 0, SEEK_END);
	long len = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc((size_t)len + 1);
	assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
	buf[len] = '\0';
	fclose(f);
	if (n)
		*n = (size_t)len;
	return buf;
}

/* elements named name below n, and attributes that would fetch something */
static void walk(xmlNode *n, const char *name, int *count, int *fetches)
{
	for (; n; n = n->next) {
		if (n->type != XML_ELEMENT_NODE)
			continue;
		if (strcmp((const char *)n->name, name) == 0)
			(*count)++;
		for (xmlAttr *a = n->properties; a; a = a->next) {
			const char *an = (const char *)a->name;
			if (strcmp(an, "src") && strcmp(an, "href"))
				continue;
			xmlChar *v = xmlNodeGetContent((xmlNode *)a);
			if (v && (strncmp((const char *)v, "http", 4) == 0 || strstr((const char *)v, "//")))
				(*fetches)++;
			xmlFree(v);
		}
		walk(n->children, name, count, fetches);
	}
}

static void test_report_files(void **state)
{
	(void)state;
	capsim_report rep;
	capsim_report_rule rule = { .metric = CAPSIM_RULE_COST_TO_TRAIN };
	collect(&rep, &rule);
	char out[512];
	snprintf(out, sizeof out, "%s/example", dir);
	capsim_diags d = { 0 };
	int missing = 1;
	assert_int_equal(capsim_report_write(&rep, cat, out, 60.0, &missing, &d), 0);
	assert_int_equal(missing, 0);
	/* the HTML: well-formed XML (no network, no DTD loaded), the six figures
	 * inline, nothing to fetch */
	char path[1024];
	snprintf(path, sizeof path, "%s/report.html", out);
	xmlDoc *doc = read_xml(path);
	assert_non_null(doc);
	int svgs = 0, fetches = 0;
	walk(xmlDocGetRootElement(doc), "svg", &svgs, &fetches);
	assert_int_equal(svgs, 6);
	assert_int_equal(fetches, 0);
	int tables = 0;
	walk(xmlDocGetRootElement(doc), "table", &tables, &fetches);
	/* summary, sensitivity, per design its step, bill of materials and
	 * assumptions, and the sources */
	assert_int_equal(tables, 3 + 3 * N_DESIGNS);
	xmlFreeDoc(doc);
	/* every figure: an SVG whose root is <svg>, a PNG with its signature and
	 * a header of a nonzero size; the gnuplot script and data beside */
	static const char *const figs[] = { "scaling", "breakdown", "cost", "power", "tornado",
					    "goodput" };
	for (size_t f = 0; f < 6; f++) {
		snprintf(path, sizeof path, "%s/figures/%s.svg", out, figs[f]);
		xmlDoc *svg = read_xml(path);
		assert_non_null(svg);
		assert_string_equal((const char *)xmlDocGetRootElement(svg)->name, "svg");
		xmlFreeDoc(svg);
		snprintf(path, sizeof path, "%s/figures/%s.png", out, figs[f]);
		size_t n;
		unsigned char *png = (unsigned char *)slurp(path, &n);
		assert_true(n > 1000);
		assert_memory_equal(png, "\x89PNG\r\n\x1a\n", 8);
		assert_memory_equal(png + 12, "IHDR", 4);
		uint32_t w = (uint32_t)png[16] << 24 | (uint32_t)png[17] << 16 |
			     (uint32_t)png[18] << 8 | png[19];
		assert_int_equal(w, 860);
		free(png);
		snprintf(path, sizeof path, "%s/figures/%s.gp", out, figs[f]);
		assert_int_equal(access(path, R_OK), 0);
		snprintf(path, sizeof path, "%s/figures/%s.dat", out, figs[f]);
		assert_int_equal(access(path, R_OK), 0);
	}
	/* the Markdown has the same sections and links the PNGs */
	snprintf(path, sizeof path, "%s/report.md", out);
	char *md = slurp(path, NULL);
	assert_non_null(strstr(md, "## Recommendation"));
	assert_non_null(strstr(md, "## Design: h200-owned-roce"));
	assert_non_null(strstr(md, "![Step time by part](figures/breakdown.png)"));
	/* the override of the SN5600's price is listed among the assumptions,
	 * and each catalog value with its numbered source: the H100's memory
	 * from the cited datasheet, listed under Sources */
	assert_non_null(strstr(md, "| override | cluster.fabric.switch.price.value | $50000 |"));
	assert_non_null(strstr(md, "| GPU | h100-sxm5-80gb: memory | capacity=80 GB"));
	assert_non_null(strstr(md, "## Sources"));
	/* the summary's rows: each design's value from capsim_eval, as the
	 * report formats it */
	static const struct {
		const char *heading, *key, *unit;
	} rows[] = { { "cost to train", "cost_to_train_usd", "USD" },
		     { "cloud cost", "cloud_cost_usd", "USD" },
		     { "IT power", "power_it_w", "W" },
		     { "memory headroom", "memory_margin_bytes", "bytes" } };
	for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
		char want[512];
		int at = snprintf(want, sizeof want, "| %s |", rows[k].heading);
		for (int i = 0; i < N_DESIGNS; i++) {
			char v[64];
			double x = capsim_result_number(&rep.d[i].r, capsim_result_key_find(rows[k].key));
			capsim_report_format(x, rows[k].unit, v, sizeof v);
			at += snprintf(want + at, sizeof want - (size_t)at, " %s |", v);
		}
		if (!strstr(md, want))
			fail_msg("report.md lacks the row '%s'", want);
	}
	assert_non_null(strstr(md, "| \\[1\\] | "));
	free(md);
	capsim_report_free(&rep);
	capsim_diags_free(&d);
}

/* summary.csv: each design's numbers as capsim_eval gives them, bit for bit,
 * and as `capsim run --json` prints them (10 significant digits) */
static void test_summary_values(void **state)
{
	(void)state;
	char out[512], path[1024];
	snprintf(out, sizeof out, "%s/cli", dir);
	assert_int_equal(testutil_sh("%s report %s/scenarios/report/h100-rented.xml "
			    "%s/scenarios/report/h200-owned-ib.xml "
			    "%s/scenarios/report/h200-owned-roce.xml --out %s --no-progress >/dev/null",
			    CAPSIM_BIN, CAPSIM_SOURCE_DIR, CAPSIM_SOURCE_DIR, CAPSIM_SOURCE_DIR, out), 0);
	snprintf(path, sizeof path, "%s/summary.csv", out);
	testutil_table t;
	testutil_csv_load(path, &t);
	assert_int_equal(t.n_rows, N_DESIGNS);
	static const char *const keys[] = { "cost_to_train_usd", "cloud_cost_usd", "tco_usd",
					    "power_it_w", "goodput", "tokens_per_s", "mfu",
					    "memory_margin_bytes", "breakeven_utilization" };
	for (size_t i = 0; i < N_DESIGNS; i++) {
		capsim_scenario *s = load(designs[i], NULL, 0);
		capsim_result r;
		capsim_diags d = { 0 };
		capsim_eval_opts o = { 0 };
		assert_int_equal(capsim_eval(s, &o, &r, &d), 0);
		char json_path[1024];
		snprintf(json_path, sizeof json_path, "%s/run-%zu.json", dir, i);
		assert_int_equal(testutil_sh("%s run %s/scenarios/report/%s --json > %s", CAPSIM_BIN,
				    CAPSIM_SOURCE_DIR, designs[i], json_path), 0);
		json_error_t je;
		json_t *j = json_load_file(json_path, 0, &je);
		assert_non_null(j);
		assert_string_equal(testutil_csv_get(&t, i, "design"), s->name);
		for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
			const char *cell = testutil_csv_get(&t, i, keys[k]);
			const capsim_result_key *rk = capsim_result_key_find(keys[k]);
			assert_non_null(rk);
			json_t *jv = json_object_get(j, keys[k]);
			if (!capsim_result_has(&r, rk)) {
				assert_string_equal(cell, "");
				assert_null(jv);
				continue;
			}
			double want = capsim_result_number(&r, rk), got = strtod(cell, NULL);
			assert_memory_equal(&got, &want, sizeof got);
			assert_non_null(jv);
			assert_rel(json_number_value(jv), got, 1e-9);
		}
		/* the design's wall time to train, goodput counted: the cloud run's
		 * when it rents */
		assert_rel(strtod(testutil_csv_get(&t, i, "wall_to_train_s"), NULL),
			   json_number_value(json_object_get(j, s->acquire == 1 ? "cloud_wall_to_train_s" :
							     "wall_to_train_s")), 1e-9);
		json_decref(j);
		capsim_result_free(&r);
		capsim_diags_free(&d);
		free(s);
	}
	testutil_csv_free(&t);
}

static void test_rule_and_sensitivity(void **state)
{
	(void)state;
	capsim_report rep;
	capsim_report_rule rule = { .metric = CAPSIM_RULE_COST_TO_TRAIN };
	collect(&rep, &rule);
	/* owned H200s cost less to train than renting H100s for the same run */
	assert_int_equal(rep.winner, 1);
	assert_true(rep.d[1].metric < rep.d[0].metric);
	assert_true(rep.runner_up >= 0 && rep.runner_up != rep.winner);
	for (size_t i = 0; i < N_DESIGNS; i++)
		if ((int)i != rep.winner)
			assert_true(rep.d[rep.winner].metric <= rep.d[i].metric);
	/* the owned winner's cost to train: lower at +20% utilisation (its
	 * capex over more busy hours), higher with a dearer node and energy;
	 * the cloud price does not enter an owned design's cost */
	const capsim_report_swing *u = &rep.swing[0], *e = &rep.swing[1], *nd = &rep.swing[2],
				  *c = &rep.swing[3];
	assert_true(u->has && e->has && nd->has && c->has);
	double base = rep.d[rep.winner].metric;
	assert_true(u->high_metric < base && base < u->low_metric);
	assert_true(e->low_metric < base && base < e->high_metric);
	assert_true(nd->low_metric < base && base < nd->high_metric);
	assert_rel(c->low_metric, base, 1e-12);
	assert_rel(c->high_metric, base, 1e-12);
	assert_rel(nd->low_value, 0.8 * nd->base, 1e-12);
	capsim_report_free(&rep);

	/* a budget below every design: no winner, each says why */
	capsim_report_rule tight = { .metric = CAPSIM_RULE_COST_TO_TRAIN, .budget_usd = 1e5 };
	collect(&rep, &tight);
	assert_int_equal(rep.winner, -1);
	for (size_t i = 0; i < N_DESIGNS; i++)
		assert_non_null(strstr(rep.d[i].why_not, "over the budget"));
	/* and the report is still drawn whole: the sensitivity figure has no
	 * winner to move, and says so in a figure gnuplot can draw */
	char out[512], svg[600];
	snprintf(out, sizeof out, "%s/no-winner", dir);
	capsim_diags d = { 0 };
	int missing = 1;
	assert_int_equal(capsim_report_write(&rep, cat, out, 60.0, &missing, &d), 0);
	assert_int_equal(missing, 0);
	snprintf(svg, sizeof svg, "%s/figures/tornado.svg", out);
	char *text = slurp(svg, NULL);
	assert_non_null(text);
	assert_non_null(strstr(text, "no winner to move"));
	free(text);
	capsim_diags_free(&d);
	capsim_report_free(&rep);

	/* by wall time, the H200s (faster HBM, same step otherwise) win too,
	 * and a deadline of 45 days leaves the 46.6-day rented run out */
	capsim_report_rule fast = { .metric = CAPSIM_RULE_TIME_TO_TRAIN, .deadline_s = 45 * 86400.0 };
	collect(&rep, &fast);
	assert_false(rep.d[0].meets);
	assert_non_null(strstr(rep.d[0].why_not, "past the deadline"));
	assert_true(rep.winner == 1 || rep.winner == 2);
	capsim_report_free(&rep);
}

/* without gnuplot: the text and the HTML are written, each figure says it
 * is missing, its script and data are there, the exit status is 1 */
static void test_no_gnuplot(void **state)
{
	(void)state;
	char out[512], path[1024];
	snprintf(out, sizeof out, "%s/bare", dir);
	int st = testutil_sh("PATH=/nonexistent %s report %s/scenarios/report/h200-owned-ib.xml --out %s "
		    "--no-progress > %s/bare.out 2> %s/bare.err", CAPSIM_BIN, CAPSIM_SOURCE_DIR, out,
		    dir, dir);
	assert_int_equal(st, 1);
	snprintf(path, sizeof path, "%s/bare.err", dir);
	char *err = slurp(path, NULL);
	assert_non_null(strstr(err, "gnuplot was not found on PATH"));
	free(err);
	snprintf(path, sizeof path, "%s/report.md", out);
	char *md = slurp(path, NULL);
	assert_non_null(strstr(md, "This figure was not drawn: gnuplot is not installed"));
	assert_null(strstr(md, "figures/scaling.png"));
	free(md);
	snprintf(path, sizeof path, "%s/report.html", out);
	xmlDoc *doc = read_xml(path);
	assert_non_null(doc);
	xmlFreeDoc(doc);
	snprintf(path, sizeof path, "%s/summary.csv", out);
	assert_int_equal(access(path, R_OK), 0);
	/* every figure's data and script are there to draw later; no drawing */
	static const char *const names[] = { "scaling", "breakdown", "cost",
					     "power",   "tornado",   "goodput" };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		snprintf(path, sizeof path, "%s/figures/%s.gp", out, names[i]);
		assert_int_equal(access(path, R_OK), 0);
		snprintf(path, sizeof path, "%s/figures/%s.dat", out, names[i]);
		assert_int_equal(access(path, R_OK), 0);
		snprintf(path, sizeof path, "%s/figures/%s.svg", out, names[i]);
		assert_int_not_equal(access(path, F_OK), 0);
	}
}

static void test_one_workload(void **state)
{
	(void)state;
	char out[512];
	snprintf(out, sizeof out, "%s/mixed", dir);
	assert_int_equal(testutil_sh("%s report %s/scenarios/report/h100-rented.xml %s/scenarios/default.xml "
			    "--set workload.tokens=2T --out %s --no-progress 2>/dev/null", CAPSIM_BIN,
			    CAPSIM_SOURCE_DIR, CAPSIM_SOURCE_DIR, out), 0);
	assert_int_equal(testutil_sh("%s report %s/scenarios/report/h100-rented.xml %s/scenarios/h100-64node-ndr.xml "
			    "--out %s --no-progress 2>&1 | grep -q 'the designs must train one workload'",
			    CAPSIM_BIN, CAPSIM_SOURCE_DIR, CAPSIM_SOURCE_DIR, out), 0);
	assert_int_equal(testutil_sh("%s report %s/scenarios/report/h100-rented.xml --out %s --metric mfu "
			    "2>/dev/null", CAPSIM_BIN, CAPSIM_SOURCE_DIR, out), 2);
	assert_int_equal(testutil_sh("%s report %s/scenarios/report/h100-rented.xml 2>/dev/null", CAPSIM_BIN,
			    CAPSIM_SOURCE_DIR), 2);
}

/* runtime variability, on in the designs: each design's step section says
 * what the slowest of its GPUs adds and how steps spread, with the
 * result's own numbers, apart from the model's error; off, it says nothing */
static void test_variability_named(void **state)
{
	(void)state;
	char out[512];
	snprintf(out, sizeof out, "%s/vary", dir);
	assert_int_equal(testutil_sh("%s report %s/scenarios/report/h100-rented.xml "
				     "%s/scenarios/report/h200-owned-ib.xml --set workload.variability=on "
				     "--out %s --no-progress --no-intervals 2>/dev/null", CAPSIM_BIN,
				     CAPSIM_SOURCE_DIR, CAPSIM_SOURCE_DIR, out), 0);
	char path[600];
	snprintf(path, sizeof path, "%s/report.md", out);
	char *md = slurp(path, NULL);
	const capsim_set on[] = { { "workload.variability", "on" } };
	capsim_scenario *s = load("h100-rented.xml", on, 1);
	capsim_result r;
	capsim_diags d = { 0 };
	assert_int_equal(capsim_eval(s, NULL, &r, &d), 0);
	assert_true(r.step.variability_s > 0 && r.step.step_time_sd_s > 0);
	char want[256];
	snprintf(want, sizeof want, "the %ld GPUs that synchronise each step run their kernels at "
		 "rates that spread by %.1f%%", r.step.variability_ranks,
		 100.0 * r.step.variability_cv);
	assert_non_null(strstr(md, want));
	snprintf(want, sizeof want, "waits for the slowest of them, %.3g s of the %.6g s above",
		 r.step.variability_s, r.step.step_time_s);
	assert_non_null(strstr(md, want));
	assert_non_null(strstr(md, "apart from the model's error"));
	capsim_result_free(&r);
	free(s);
	free(md);
	/* off (the default): not a word of it */
	snprintf(out, sizeof out, "%s/steady", dir);
	assert_int_equal(testutil_sh("%s report %s/scenarios/report/h100-rented.xml "
				     "%s/scenarios/report/h200-owned-ib.xml --out %s --no-progress "
				     "--no-intervals 2>/dev/null", CAPSIM_BIN, CAPSIM_SOURCE_DIR,
				     CAPSIM_SOURCE_DIR, out), 0);
	snprintf(path, sizeof path, "%s/report.md", out);
	md = slurp(path, NULL);
	assert_null(strstr(md, "Runtime variability"));
	free(md);
}

/* the shipped sweep (scenarios/sweeps/report-70b.xml) holds the same three
 * designs as points: a report from its store equals the report of the three
 * scenario files, value for value; --where picks points; a sweep file
 * changed since it ran is refused */
static void test_from_store(void **state)
{
	(void)state;
	char db[512], a[512], b[512], c[512], sweep[512];
	snprintf(db, sizeof db, "%s/r70.sqlite", dir);
	snprintf(a, sizeof a, "%s/files", dir);
	snprintf(b, sizeof b, "%s/store", dir);
	snprintf(c, sizeof c, "%s/store-bought", dir);
	assert_int_equal(testutil_sh("%s sweep %s/scenarios/sweeps/report-70b.xml --db %s --no-progress "
			    ">/dev/null", CAPSIM_BIN, CAPSIM_SOURCE_DIR, db), 0);
	assert_int_equal(testutil_sh("%s report %s/scenarios/report/h100-rented.xml "
			    "%s/scenarios/report/h200-owned-ib.xml "
			    "%s/scenarios/report/h200-owned-roce.xml --set reliability.runs=0 "
			    "--out %s --no-progress >/dev/null", CAPSIM_BIN, CAPSIM_SOURCE_DIR,
			    CAPSIM_SOURCE_DIR, CAPSIM_SOURCE_DIR, a), 0);
	assert_int_equal(testutil_sh("%s report --db %s --out %s --no-progress >/dev/null", CAPSIM_BIN, db, b),
			 0);
	/* every column but the design's name */
	assert_int_equal(testutil_sh("cut -d, -f2- %s/summary.csv > %s/a.csv && cut -d, -f2- %s/summary.csv > "
			    "%s/b.csv && cmp -s %s/a.csv %s/b.csv", a, dir, b, dir, dir, dir), 0);
	assert_int_equal(testutil_sh("grep -c '^\"report-70b-p[012]\"' %s/summary.csv | grep -qx 3", b), 0);
	assert_int_equal(testutil_sh("%s report --db %s --where 'cost.acquire = buy' --out %s --no-progress "
			    ">/dev/null && test $(wc -l < %s/summary.csv) -eq 3", CAPSIM_BIN, db, c, c), 0);
	assert_int_equal(testutil_sh("%s report --db %s --where 'tokens_per_s > 1e12' --out %s/none "
			    "--no-progress 2>&1 | grep -q '0 points of sweep 1'", CAPSIM_BIN, db, dir), 0);
	/* the sweep file as the store names it, changed */
	snprintf(sweep, sizeof sweep, "%s/copy.xml", dir);
	assert_int_equal(testutil_sh("sed 's|[.][.]/report/|%s/scenarios/report/|' "
			    "%s/scenarios/sweeps/report-70b.xml > %s", CAPSIM_SOURCE_DIR,
			    CAPSIM_SOURCE_DIR, sweep), 0);
	snprintf(db, sizeof db, "%s/copy.sqlite", dir);
	assert_int_equal(testutil_sh("%s sweep %s --db %s --no-progress >/dev/null && echo '<!-- x -->' >> %s",
			    CAPSIM_BIN, sweep, db, sweep), 0);
	assert_int_equal(testutil_sh("%s report --db %s --out %s/changed --no-progress 2>&1 | grep -q "
			    "'the sweep file changed since sweep 1'", CAPSIM_BIN, db, dir), 0);
}

/* the text of figure name's file ext in the report at out */
static char *figure_file(const char *out, const char *name, const char *ext)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/figures/%s.%s", out, name, ext);
	return slurp(path, NULL);
}

/* no result key whose name has an underscore (a name no reader should meet:
 * "cost_to_train_usd", not "goodput", which is also a word) in text, nor any
 * of its interval ends */
static void no_key_names(const char *what, const char *text)
{
	for (size_t i = 0; i < capsim_result_n_keys; i++) {
		const char *k = capsim_result_keys[i].key;
		if (!strchr(k, '_'))
			continue;
		for (const char *at = strstr(text, k); at; at = strstr(at + 1, k)) {
			char before = at > text ? at[-1] : ' ', after = at[strlen(k)];
			int word = !(before == '_' || (before >= 'a' && before <= 'z')) &&
				   !(after == '_' || (after >= 'a' && after <= 'z'));
			if (word)
				fail_msg("%s names the result key %s", what, k);
		}
	}
}

/* The figures a procurement officer reads: every script sets the palette's
 * ten colours in order; every numeric axis has a format in people's units
 * (no gnuplot default that writes 1e+06); the line charts give every series
 * its own colour; series that lie on each other are drawn dashed, named in
 * the key and in a sentence under the figure; no result key's name in the
 * text, the scripts or the breakdown's key; the SVGs' tick labels without
 * an exponent. With the cost rule and the time rule (days on the tornado). */
static void test_figures_readable(void **state)
{
	(void)state;
	static const char *const figs[] = { "scaling", "breakdown", "cost", "power", "tornado",
					    "goodput" };
	static const char *const formats[][3] = {
		{ "scaling", "set format x '%.0f'", "set format y '%.0f%%'" },
		{ "breakdown", "set format y '%g s'", "set ylabel 'time a step'" },
		{ "cost", "set format x '%.0f'", "set format y '$%.1s %c'" },
		{ "power", "set format y '%g kW'", "set ylabel 'power a rack'" },
		{ "goodput", "set format x '%g h'", "set format y '%.0f%%'" },
	};
	static const struct {
		int metric;
		const char *axis, *format;
	} rules[] = { { CAPSIM_RULE_COST_TO_TRAIN, "set xlabel 'cost to train (USD)'",
			"set format x '$%.1s %c'" },
		      { CAPSIM_RULE_TIME_TO_TRAIN, "set xlabel 'wall time to train (days)'",
			"set format x '%g days'" } };
	for (size_t r = 0; r < 2; r++) {
		capsim_report rep;
		capsim_report_rule rule = { .metric = rules[r].metric };
		collect(&rep, &rule);
		char out[512];
		snprintf(out, sizeof out, "%s/readable-%zu", dir, r);
		capsim_diags d = { 0 };
		int missing = 1;
		assert_int_equal(capsim_report_write(&rep, cat, out, 60.0, &missing, &d), 0);
		for (size_t f = 0; f < 6; f++) {
			char *gp = figure_file(out, figs[f], "gp");
			for (int k = 0; k < CAPSIM_REPORT_COLOURS; k++) {
				char want[96];
				snprintf(want, sizeof want, "set linetype %d lc rgb '%s' ", k + 1,
					 capsim_report_palette[k]);
				if (!strstr(gp, want))
					fail_msg("%s.gp lacks '%s'", figs[f], want);
			}
			no_key_names(figs[f], gp);
			char *svg = figure_file(out, figs[f], "svg");
			if (strstr(svg, "e+0") || strstr(svg, "e-0"))
				fail_msg("%s.svg has a number with an exponent", figs[f]);
			free(svg);
			free(gp);
		}
		for (size_t k = 0; k < sizeof formats / sizeof formats[0]; k++) {
			char *gp = figure_file(out, formats[k][0], "gp");
			for (int j = 1; j < 3; j++)
				if (!strstr(gp, formats[k][j]))
					fail_msg("%s.gp lacks '%s'", formats[k][0], formats[k][j]);
			free(gp);
		}
		char *tornado = figure_file(out, "tornado", "gp");
		assert_non_null(strstr(tornado, rules[r].axis));
		assert_non_null(strstr(tornado, rules[r].format));
		free(tornado);
		/* the cost chart: h100-rented's rented curve, both H200s' owned and
		 * rented, each its own linetype; the RoCE design's curves lie on the
		 * InfiniBand's and say so */
		char *cost = figure_file(out, "cost", "gp");
		const char *plot = strstr(cost, "\nplot ");
		assert_non_null(plot);
		int seen[CAPSIM_REPORT_COLOURS + 1] = { 0 }, curves = 0;
		const char *end = strchr(plot + 1, '\n');
		for (const char *at = strstr(plot, " lt "); at && at < end; at = strstr(at + 1, " lt ")) {
			int lt = atoi(at + 4);
			assert_true(lt >= 1 && lt <= CAPSIM_REPORT_COLOURS);
			assert_int_equal(seen[lt]++, 0);
			curves++;
		}
		assert_int_equal(curves, 5);
		assert_non_null(strstr(cost, "dt 2 title 'h200-owned-roce rented (coincides with "
					     "h200-owned-ib rented)'"));
		free(cost);
		char *dat = figure_file(out, "breakdown", "dat");
		assert_non_null(strstr(dat, "design \"compute\" \"pipeline bubble\" \"exposed comm TP\""));
		no_key_names("breakdown.dat", strtok(dat, "\n"));
		free(dat);
		char path[1024];
		snprintf(path, sizeof path, "%s/report.md", out);
		char *md = slurp(path, NULL);
		assert_non_null(strstr(md, "h200-owned-ib rented and h200-owned-roce rented coincide"));
		assert_non_null(strstr(md, "| compute | "));
		no_key_names("report.md", md);
		free(md);
		snprintf(path, sizeof path, "%s/report.html", out);
		char *html = slurp(path, NULL);
		no_key_names("report.html", html);
		free(html);
		capsim_report_free(&rep);
		capsim_diags_free(&d);
	}
}

/* the words for a key: its label, joined to its heading's where it reads as
 * a part of it, and never the key where there is no label */
static void test_key_labels(void **state)
{
	(void)state;
	char b[96];
	capsim_report_key_label("cost_to_train_usd", b, sizeof b);
	assert_string_equal(b, "cost to train");
	capsim_report_key_label("cost_per_million_tokens_usd", b, sizeof b);
	assert_string_equal(b, "cost to train per million tokens");
	capsim_report_key_label("exposed_comm_tp_s", b, sizeof b);
	assert_string_equal(b, "exposed comm TP");
	capsim_report_key_label("no_such_key_usd", b, sizeof b);
	assert_string_equal(b, "no such key");
	for (int m = 0; m < CAPSIM_RULE__COUNT; m++) {
		capsim_report_metric_label(m, b, sizeof b);
		assert_null(strchr(b, '_'));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_report_files),
		cmocka_unit_test(test_summary_values),
		cmocka_unit_test(test_rule_and_sensitivity),
		cmocka_unit_test(test_no_gnuplot),
		cmocka_unit_test(test_one_workload),
		cmocka_unit_test(test_from_store),
		cmocka_unit_test(test_figures_readable),
		cmocka_unit_test(test_key_labels),
		cmocka_unit_test(test_variability_named),
	};
	return testutil_run_group(tests, setup, teardown);
}
