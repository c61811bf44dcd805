/* cmd_verify_expect.c - `capsim verify --expect FILE LOG...`: nccl-tests
 * logs against the thresholds capsim expect wrote (its JSON or its
 * Prometheus rules), row by row; exit 3 naming each row below its threshold. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "escape.h"
#include "expect.h"
#include "nccltests.h"
#include "verify.h"
#include "xalloc.h"

/* one log's rows against their thresholds, as text */
static void print_verdict(const capsim_nccltests_log *lg, const capsim_expect_verdict *v)
{
	char size[48];
	fputc('\n', stdout);
	capsim_term_text(stdout, lg->file);
	printf("\n  %s, %d ranks\n", capsim_coll_perf_names[v->op], v->ranks);
	printf("  %12s  %6s  %10s  %10s  %10s  %s\n", "size", "line", "busbw GB/s", "threshold",
	       "expected", "check");
	for (size_t i = 0; i < v->n_checks; i++) {
		const capsim_expect_check *c = &v->checks[i];
		capsim_verify_format_size(c->bytes, size, sizeof size);
		if (!c->row) {
			printf("  %12s  %6ld  %10.2f  %10s  %10s  -\n", size, c->line, c->measured,
			       "-", "-");
			continue;
		}
		char x[32] = "-";
		if (c->row->expected >= 0)
			snprintf(x, sizeof x, "%.2f", c->row->expected);
		printf("  %12s  %6ld  %10.2f  %10.2f  %10s  %s\n", size, c->line, c->measured,
		       c->row->threshold, x, c->pass ? "pass" : "FAIL");
	}
	if (v->n_checked == 0)
		printf("  FAIL: no row has a threshold (op %s, %d ranks, its sizes): nothing was "
		       "verified\n", capsim_coll_perf_names[v->op], v->ranks);
	else if (v->pass)
		printf("  PASS: %zu of %zu sizes with a threshold reach it\n", v->n_checked,
		       v->n_checked);
	else
		printf("  FAIL: %zu of %zu sizes below their threshold\n", v->n_failed,
		       v->n_checked);
	for (size_t i = 0; i < v->n_checks; i++) {
		const capsim_expect_check *c = &v->checks[i];
		if (c->pass)
			continue;
		capsim_verify_format_size(c->bytes, size, sizeof size);
		fputs("  below: ", stdout);
		capsim_term_text(stdout, lg->file);
		printf(":%ld: %s on %d ranks at %s: %.2f GB/s, threshold %.2f GB/s\n", c->line,
		       capsim_coll_perf_names[v->op], v->ranks, size, c->measured,
		       c->row->threshold);
	}
}

static json_t *verdict_json(const capsim_nccltests_log *lg, const capsim_expect_verdict *v)
{
	json_t *checks = json_array();
	for (size_t i = 0; i < v->n_checks; i++) {
		const capsim_expect_check *c = &v->checks[i];
		json_t *o = json_pack("{s:f, s:I, s:f}", "bytes", c->bytes, "line",
				      (json_int_t)c->line, "measured_busbw_gb_per_s", c->measured);
		json_object_set_new(o, "threshold_gb_per_s", c->row ? json_real(c->row->threshold) :
				    json_null());
		json_object_set_new(o, "expected_gb_per_s", c->row && c->row->expected >= 0 ?
				    json_real(c->row->expected) : json_null());
		json_object_set_new(o, "checked", json_boolean(c->row != NULL));
		json_object_set_new(o, "pass", json_boolean(c->pass));
		json_array_append_new(checks, o);
	}
	return json_pack("{s:s, s:s, s:s, s:i, s:o, s:I, s:I, s:b}", "file", lg->file, "sha256",
			 lg->sha256, "op", capsim_coll_perf_names[v->op], "ranks", v->ranks,
			 "checks", checks, "checks_counted", (json_int_t)v->n_checked,
			 "checks_failed", (json_int_t)v->n_failed, "pass", v->pass);
}

int capsim_cli_verify_expect(const char *expect, const char *const *logs, size_t n,
			     const struct capsim_nccltests_hint *hint, int json)
{
	capsim_diags d = { 0 };
	capsim_expect e;
	capsim_nccltests_log *lg = capsim_xcalloc(n, sizeof *lg);
	capsim_expect_verdict *v = capsim_xcalloc(n, sizeof *v);
	int status = CAPSIM_EXIT_USAGE, bad = capsim_expect_read(expect, &e, &d) < 0;
	for (size_t i = 0; i < n; i++)
		bad |= capsim_nccltests_parse_file(logs[i], hint, &lg[i], &d) < 0;
	if (bad) {
		capsim_diags_print(&d, stderr);
		status = capsim_diags_runtime(&d) ? CAPSIM_EXIT_FAILURE : CAPSIM_EXIT_USAGE;
		goto out;
	}
	size_t failed = 0;
	for (size_t i = 0; i < n; i++) {
		capsim_expect_check_log(&e, &lg[i], &v[i]);
		failed += !v[i].pass;
	}
	if (json) {
		/* the head of every command's JSON; the baselines' file is the input */
		json_t *root = capsim_cli_json_head(NULL, NULL);
		json_object_set_new(root, "expect", json_string(expect));
		json_object_set_new(root, "scenario", json_string(e.scenario));
		json_t *arr = json_array();
		for (size_t i = 0; i < n; i++)
			json_array_append_new(arr, verdict_json(&lg[i], &v[i]));
		json_object_set_new(root, "logs", arr);
		json_object_set_new(root, "pass", json_boolean(failed == 0));
		json_dumpf(root, stdout,
			   JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
		fputc('\n', stdout);
		json_decref(root);
	} else {
		fputs("capsim verify: thresholds of ", stdout);
		capsim_term_text(stdout, strcmp(expect, "-") == 0 ? "standard input" : expect);
		fputs(" (scenario ", stdout);
		capsim_term_text(stdout, e.scenario[0] ? e.scenario : "not named");
		fputs(")\n", stdout);
		for (size_t i = 0; i < n; i++)
			print_verdict(&lg[i], &v[i]);
		printf("\nresult: %s", failed ? "FAIL" : "PASS");
		if (failed)
			printf(", %zu of %zu logs below their thresholds", failed, n);
		printf("\n");
	}
	status = failed ? CAPSIM_EXIT_ACCEPTANCE : CAPSIM_EXIT_OK;
out:
	for (size_t i = 0; i < n; i++) {
		capsim_expect_verdict_free(&v[i]);
		capsim_nccltests_free(&lg[i]);
	}
	free(v);
	free(lg);
	capsim_expect_free(&e);
	capsim_diags_free(&d);
	return status;
}
