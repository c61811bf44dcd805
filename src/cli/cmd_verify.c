/* cmd_verify.c - `capsim verify`: acceptance checks of a cluster from
 * nccl-tests logs (and calibrate/'s measurements), against what the
 * scenario's hardware should deliver; exit 3 when it falls short. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "catalog.h"
#include "cli.h"
#include "collective.h"
#include "escape.h"
#include "eval.h"
#include "nccltests.h"
#include "scenario.h"
#include "units.h"
#include "verify.h"
#include "xalloc.h"

enum { O_NCCL_TESTS, O_MEASUREMENTS, O_TOLERANCE, O_MIN_BYTES, O_OP, O_RANKS, O_ALGO, O_PROTO,
       O_SET, O_JSON, O_EXPECT, O_HELP };
static const capsim_cli_opt verify_opts[] = {
	[O_NCCL_TESTS] = { "nccl-tests", 'l', "LOG", "an nccl-tests log; more LOGs may follow" },
	[O_MEASUREMENTS] = { "measurements", 'm', "DB",
			     "an SQLite database from 'capsim calibrate import'" },
	[O_TOLERANCE] = { "tolerance", 't', "F", "shortfall allowed (default 15%)" },
	[O_MIN_BYTES] = { "min-bytes", 'b', "SIZE",
			  "the smallest size that counts (default 1 GiB, or the\n"
			  "log's largest if smaller); smaller sizes are shown" },
	[O_OP] = { "op", 'o', "OP", "the collective, where the log does not name its program" },
	[O_RANKS] = { "ranks", 'n', "N", "ranks, where the log has no '# Rank' lines" },
	[O_ALGO] = { "algo", 'a', "A", "the algorithm as the run forced it (NCCL_ALGO)" },
	[O_PROTO] = { "proto", 'p', "P", "the protocol as the run forced it (NCCL_PROTO)" },
	[O_SET] = { "set", 's', "PATH=VALUE", "override a scenario field" },
	[O_JSON] = { "json", 'j', NULL, "one JSON object" },
	[O_EXPECT] = { "expect", 'e', "FILE",
		       "check each row against the thresholds of FILE (capsim\n"
		       "expect's JSON or Prometheus rules) instead of the model:\n"
		       "no SCENARIO then, every operand a LOG" },
	[O_HELP] = { "help", 'h', NULL, "this text" },
};
const capsim_cli_cmd capsim_cli_verify_cmd = {
	.name = "verify",
	.usage = "usage: capsim verify SCENARIO --nccl-tests LOG... [--measurements DB]\n"
		 "                     [--tolerance F] [--min-bytes SIZE] [--op OP] [--ranks N]\n"
		 "                     [--algo A] [--proto P] [--set PATH=VALUE]... [--json]\n"
		 "       capsim verify --expect FILE [--nccl-tests] LOG... [--op OP] [--ranks N]\n"
		 "                     [--json]\n",
	.about = "Check a cluster against the scenario that describes what it should be:\n"
		 "each size of each nccl-tests log (the text all_reduce_perf and the other\n"
		 "*_perf programs print) against the busbw capsim predicts for that\n"
		 "collective and rank count on the scenario's fabric. A size passes when\n"
		 "measured >= (1 - tolerance) x predicted; sizes from --min-bytes count. A\n"
		 "shortfall is set against the same model on degraded hardware (PCIe for\n"
		 "NVLink, k of the N NICs, TCP sockets, no GPUDirect RDMA) to name the likely\n"
		 "cause. A measurements database adds GPU checks (GEMM rate, copy bandwidth).\n",
	.opts = verify_opts,
	.n_opts = CAPSIM_CLI_N(verify_opts),
	.after = "Exit status: 0 every check passes, 3 a check fails, 2 a log or the\n"
		 "scenario cannot be read.\n",
};

typedef struct {
	const char *scenario, *db, *expect;
	const char **logs;
	size_t n_logs;
	capsim_cli_sets sets;
	capsim_verify_opts vo;
	capsim_nccltests_hint hint;
	int json;
} opts;

static void add_log(opts *o, const char *path)
{
	o->logs = capsim_xrealloc(o->logs, (o->n_logs + 1) * sizeof *o->logs);
	o->logs[o->n_logs++] = path;
}

static int parse_quantity(const char *flag, const char *s, capsim_dim dim, double *out)
{
	char err[256];
	if (capsim_units_parse(s, dim, NULL, out, err, sizeof err) < 0) {
		fprintf(stderr, "capsim verify: %s: %s\n", flag, err);
		return -1;
	}
	return 0;
}

static int parse_option(int ch, opts *o, capsim_diags *d)
{
	switch (ch) {
	case O_NCCL_TESTS: add_log(o, optarg); return 0;
	case O_MEASUREMENTS: o->db = optarg; return 0;
	case O_TOLERANCE:
		if (parse_quantity("--tolerance", optarg, CAPSIM_DIM_RATIO, &o->vo.tolerance) < 0)
			return -1;
		if (o->vo.tolerance < 0 || o->vo.tolerance >= 1) {
			fprintf(stderr, "capsim verify: --tolerance wants at least 0 and less than 1 (0%% up to but not 100%%: a tolerance of 100%% would pass anything), found '%s'\n", optarg);
			return -1;
		}
		return 0;
	case O_MIN_BYTES:
		/* 16 TiB: as collective --bytes, above any one collective's buffer */
		return capsim_cli_quantity("verify", "--min-bytes", optarg, CAPSIM_DIM_BYTES, 0.0,
					   17592186044416.0, 1,
					   "a whole number of bytes from 0 B to 16 TiB", &o->vo.min_bytes);
	case O_OP:
		if ((o->hint.op = capsim_coll_parse(optarg)) < 0) {
			fprintf(stderr, "capsim verify: unknown --op '%s'\n", optarg);
			return -1;
		}
		return 0;
	case O_RANKS:
		o->hint.ranks = capsim_cli_count(optarg, 1 << 24);
		if (o->hint.ranks < 1) {
			fprintf(stderr, "capsim verify: --ranks wants a positive count, found '%s'\n", optarg);
			return -1;
		}
		return 0;
	case O_ALGO:
		if ((o->vo.algo = capsim_collective_algo_parse(optarg)) < 0) {
			fprintf(stderr, "capsim verify: unknown --algo '%s'\n", optarg);
			return -1;
		}
		return 0;
	case O_PROTO:
		if ((o->vo.proto = capsim_proto_parse(optarg)) < 0) {
			fprintf(stderr, "capsim verify: unknown --proto '%s' (LL, LL128, Simple)\n", optarg);
			return -1;
		}
		return 0;
	case O_SET: return capsim_cli_sets_add(&o->sets, optarg, d);
	case O_JSON: o->json = 1; return 0;
	case O_EXPECT: o->expect = optarg; return 0;
	default: return -1;
	}
}

/* 1 after --help, 0, or -1 on bad usage */
static int parse_args(int argc, char **argv, opts *o, capsim_diags *d)
{
	int ch;
	capsim_verify_opts_default(&o->vo);
	o->hint.op = -1;
	optind = 1;
	while ((ch = capsim_cli_next(&capsim_cli_verify_cmd, argc, argv)) != -1) {
		if (ch == O_HELP) {
			capsim_cli_help(&capsim_cli_verify_cmd, stdout);
			return 1;
		}
		if (ch < 0 || parse_option(ch, o, d) < 0)
			return -1;
	}
	if (o->db && strcmp(o->db, "-") == 0) {
		fprintf(stderr, "capsim verify: --measurements -: a measurements database cannot "
			"be standard input or output: it is an SQLite file read in place; give a "
			"file name (./- for a file named '-')\n");
		return -1;
	}
	if (o->expect) { /* the thresholds stand for the scenario: every operand is a log */
		while (optind < argc)
			add_log(o, argv[optind++]);
		if (o->n_logs == 0 || o->db) {
			fprintf(stderr, "capsim verify: --expect wants nccl-tests LOGs (and no "
				"--measurements), found %s\n", o->db ? "--measurements" : "none");
			return -1;
		}
		return 0;
	}
	if (optind >= argc) {
		fprintf(stderr, "capsim verify: a SCENARIO is required\n");
		return -1;
	}
	o->scenario = argv[optind++];
	while (optind < argc)
		add_log(o, argv[optind++]);
	if (o->n_logs == 0 && !o->db) {
		fprintf(stderr, "capsim verify: --nccl-tests LOG... or --measurements DB is required\n");
		return -1;
	}
	return 0;
}

/* ---- text ------------------------------------------------------------------- */

static void print_log(const capsim_nccltests_log *lg, const capsim_verify_result *r,
		      double tolerance)
{
	char size[48];
	/* the file's name and what the log says of its GPUs are shown, not sent to
	 * the terminal */
	fputc('\n', stdout);
	capsim_term_text(stdout, r->file);
	printf("\n  %s, %d ranks", capsim_coll_names[r->op], r->ranks);
	if (r->hosts > 0)
		printf(" on %d host%s", r->hosts, r->hosts == 1 ? "" : "s");
	if (r->device[0]) {
		fputs(" (", stdout);
		capsim_term_text(stdout, r->device);
		fputc(')', stdout);
	}
	fputs("; collective from: ", stdout);
	capsim_term_text(stdout, lg->op_from);
	fputc('\n', stdout);
	printf("  %12s  %10s  %10s  %6s  %-18s %s\n", "size", "busbw GB/s", "predicted", "ratio",
	       "capsim", "check");
	for (size_t i = 0; i < r->n_checks; i++) {
		const capsim_verify_check *k = &r->checks[i];
		char model[40];
		capsim_verify_format_size(k->bytes, size, sizeof size);
		snprintf(model, sizeof model, "%s/%s", capsim_collective_algo_name(k->algo),
			 capsim_proto_names[k->proto]);
		printf("  %12s  %10.2f  %10.2f  %6.3f  %-18s %s\n", size,
		       k->measured_bytes_per_s / 1e9, k->predicted_bytes_per_s / 1e9,
		       k->predicted_bytes_per_s > 0 ? k->measured_bytes_per_s / k->predicted_bytes_per_s : 0,
		       model, !k->checked ? "-" : k->pass ? "pass" : "FAIL");
	}
	capsim_verify_format_size(r->min_checked_bytes, size, sizeof size);
	if (r->n_checked == 0)
		printf("  FAIL: no size could be checked (none from %s that the model predicts a "
		       "bus bandwidth for): nothing was verified\n", size);
	else if (r->pass)
		printf("  PASS: %zu of %zu sizes from %s reach %.0f%% of the prediction\n",
		       r->n_checked, r->n_checked, size, 100 * (1 - tolerance));
	else
		printf("  FAIL: %zu of %zu sizes from %s below %.0f%% of the prediction\n",
		       r->n_failed, r->n_checked, size, 100 * (1 - tolerance));
	if (r->diagnosed) {
		printf("  likely cause: %s\n", r->diag.text);
		printf("  evidence: %s (GB/s)\n", r->diag.evidence);
	}
	for (int i = 0; i < r->n_notes; i++) {
		fputs("  note: ", stdout);
		capsim_term_text(stdout, r->notes[i]);
		fputc('\n', stdout);
	}
}

static void print_gpu(const char *db, const capsim_verify_gpu *g)
{
	fputc('\n', stdout);
	capsim_term_text(stdout, db);
	fputs("\n  GPU checks", stdout);
	if (g->db_gpu[0]) {
		fputs(" (measured on ", stdout);
		capsim_term_text(stdout, g->db_gpu);
		fputc(')', stdout);
	}
	printf(": %s\n", g->pass ? "PASS" : "FAIL");
	if (!g->pass)
		printf("  likely cause: %s\n", g->diag.text);
	printf("  evidence: %s\n", g->diag.evidence);
}

/* ---- JSON ------------------------------------------------------------------- */

static json_t *diag_json(const capsim_verify_diagnosis *g, int with_row)
{
	json_t *o = json_object();
	json_object_set_new(o, "cause", json_string(capsim_verify_cause_names[g->cause]));
	json_object_set_new(o, "text", json_string(g->text));
	json_object_set_new(o, "evidence", json_string(g->evidence));
	if (g->cause == CAPSIM_CAUSE_FEWER_NICS) {
		json_object_set_new(o, "nics_per_node", json_integer(g->k));
		json_object_set_new(o, "nics_per_node_claimed", json_integer(g->of));
	}
	if (with_row) {
		json_object_set_new(o, "bytes", json_real(g->bytes));
		json_object_set_new(o, "line", json_integer(g->line));
		json_object_set_new(o, "measured_busbw_gb_per_s", json_real(g->measured_bytes_per_s / 1e9));
		json_object_set_new(o, "predicted_busbw_gb_per_s", json_real(g->predicted_bytes_per_s / 1e9));
		json_object_set_new(o, "path_busbw_gb_per_s", json_real(g->path_bytes_per_s / 1e9));
	}
	return o;
}

static json_t *log_json(const capsim_nccltests_log *lg, const capsim_verify_result *r)
{
	json_t *o = json_object();
	json_object_set_new(o, "file", json_string(r->file));
	json_object_set_new(o, "sha256", json_string(r->sha256));
	json_object_set_new(o, "op", json_string(capsim_coll_names[r->op]));
	json_object_set_new(o, "op_from", json_string(lg->op_from));
	json_object_set_new(o, "ranks", json_integer(r->ranks));
	json_object_set_new(o, "hosts", json_integer(r->hosts));
	json_object_set_new(o, "nodes", json_integer(r->nodes));
	json_object_set_new(o, "device", json_string(r->device));
	json_object_set_new(o, "min_checked_bytes", json_real(r->min_checked_bytes));
	json_t *checks = json_array();
	for (size_t i = 0; i < r->n_checks; i++) {
		const capsim_verify_check *k = &r->checks[i];
		json_t *c = json_object();
		json_object_set_new(c, "op", json_string(capsim_coll_names[r->op]));
		json_object_set_new(c, "ranks", json_integer(r->ranks));
		json_object_set_new(c, "bytes", json_real(k->bytes));
		json_object_set_new(c, "line", json_integer(k->line));
		json_object_set_new(c, "measured_busbw_gb_per_s", json_real(k->measured_bytes_per_s / 1e9));
		json_object_set_new(c, "predicted_busbw_gb_per_s", json_real(k->predicted_bytes_per_s / 1e9));
		json_object_set_new(c, "algorithm", json_string(capsim_collective_algo_name(k->algo)));
		json_object_set_new(c, "protocol", json_string(capsim_proto_names[k->proto]));
		json_object_set_new(c, "checked", json_boolean(k->checked));
		json_object_set_new(c, "pass", json_boolean(k->pass));
		json_array_append_new(checks, c);
	}
	json_object_set_new(o, "checks", checks);
	json_object_set_new(o, "checks_counted", json_integer((json_int_t)r->n_checked));
	json_object_set_new(o, "checks_failed", json_integer((json_int_t)r->n_failed));
	json_object_set_new(o, "pass", json_boolean(r->pass));
	json_object_set_new(o, "diagnosis", r->diagnosed ? diag_json(&r->diag, 1) : json_null());
	json_t *notes = json_array();
	for (int i = 0; i < r->n_notes; i++)
		json_array_append_new(notes, json_string(r->notes[i]));
	json_object_set_new(o, "notes", notes);
	return o;
}

static json_t *gpu_json(const char *db, const capsim_verify_gpu *g)
{
	json_t *o = json_object();
	json_object_set_new(o, "file", json_string(db));
	json_object_set_new(o, "measured_gpu", json_string(g->db_gpu));
	json_object_set_new(o, "gemms", json_integer((json_int_t)g->gemms));
	json_object_set_new(o, "gemm_rate_ratio", json_real(g->gemm_ratio));
	json_object_set_new(o, "copy_bytes_per_s", json_real(g->copy_bytes_per_s));
	json_object_set_new(o, "copy_predicted_bytes_per_s", json_real(g->copy_predicted_bytes_per_s));
	if (g->sm_mhz > 0)
		json_object_set_new(o, "sustained_sm_mhz", json_real(g->sm_mhz));
	json_object_set_new(o, "pass", json_boolean(g->pass));
	json_object_set_new(o, "diagnosis", g->pass ? json_null() : diag_json(&g->diag, 0));
	return o;
}

/* ---- the command --------------------------------------------------------------- */

typedef struct {
	capsim_catalog *cat;
	capsim_scenario *s;
	capsim_cluster *cl;
	capsim_nccltests_log *logs;
	capsim_verify_result *res;
	size_t n;
} state;

static void state_free(state *st)
{
	for (size_t i = 0; i < st->n; i++) {
		capsim_nccltests_free(&st->logs[i]);
		capsim_verify_result_free(&st->res[i]);
	}
	free(st->logs);
	free(st->res);
	capsim_cluster_close(st->cl);
	free(st->s);
	capsim_catalog_free(st->cat);
}

/* parse every log, then check each; 0, or -1 with the reasons in d */
static int check_logs(const opts *o, state *st, capsim_diags *d)
{
	st->logs = capsim_xcalloc(o->n_logs ? o->n_logs : 1, sizeof *st->logs);
	st->res = capsim_xcalloc(o->n_logs ? o->n_logs : 1, sizeof *st->res);
	st->n = o->n_logs;
	int bad = 0;
	for (size_t i = 0; i < o->n_logs; i++)
		bad |= capsim_nccltests_parse_file(o->logs[i], &o->hint, &st->logs[i], d) < 0;
	if (bad)
		return -1;
	capsim_verify_ctx c = { st->cat, st->s, st->cl };
	for (size_t i = 0; i < o->n_logs; i++)
		if (capsim_verify_log(&c, &st->logs[i], &o->vo, &st->res[i], d) < 0)
			return -1;
	return 0;
}

static int report(const opts *o, const state *st, const capsim_verify_gpu *gpu)
{
	size_t failed = 0;
	for (size_t i = 0; i < st->n; i++)
		failed += !st->res[i].pass;
	int pass = failed == 0 && (!o->db || gpu->pass);
	if (o->json) {
		json_t *root = capsim_cli_json_head(st->cat, st->s);
		json_object_set_new(root, "tolerance", json_real(o->vo.tolerance));
		json_object_set_new(root, "min_bytes", json_real(o->vo.min_bytes));
		json_object_set_new(root, "algorithm_forced", o->vo.algo >= 0 ?
				    json_string(capsim_collective_algo_name(o->vo.algo)) : json_null());
		json_object_set_new(root, "protocol_forced", o->vo.proto >= 0 ?
				    json_string(capsim_proto_names[o->vo.proto]) : json_null());
		json_t *logs = json_array();
		for (size_t i = 0; i < st->n; i++)
			json_array_append_new(logs, log_json(&st->logs[i], &st->res[i]));
		json_object_set_new(root, "logs", logs);
		if (o->db)
			json_object_set_new(root, "gpu", gpu_json(o->db, gpu));
		json_object_set_new(root, "pass", json_boolean(pass));
		json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
		fputc('\n', stdout);
		json_decref(root);
	} else {
		printf("capsim verify: scenario %s (%s): %ld x %s, tolerance %.0f%%\n", st->s->name,
		       st->s->file, capsim_scenario_gpus(st->s), st->s->gpu.e.id,
		       100 * o->vo.tolerance);
		for (size_t i = 0; i < st->n; i++)
			print_log(&st->logs[i], &st->res[i], o->vo.tolerance);
		if (o->db)
			print_gpu(o->db, gpu);
		printf("\nresult: %s", pass ? "PASS" : "FAIL");
		if (failed)
			printf(", %zu of %zu logs fall short", failed, st->n);
		if (o->db && !gpu->pass)
			printf(", GPU checks fail");
		printf("\n");
	}
	return pass ? CAPSIM_EXIT_OK : CAPSIM_EXIT_ACCEPTANCE;
}

int capsim_cmd_verify(int argc, char **argv)
{
	opts o;
	memset(&o, 0, sizeof o);
	state st;
	memset(&st, 0, sizeof st);
	capsim_diags d = { 0 };
	capsim_verify_gpu gpu;
	memset(&gpu, 0, sizeof gpu);
	int status = CAPSIM_EXIT_USAGE;

	int pr = parse_args(argc, argv, &o, &d);
	if (pr != 0) {
		capsim_diags_print(&d, stderr);
		status = pr > 0 ? CAPSIM_EXIT_OK : CAPSIM_EXIT_USAGE;
		goto out;
	}
	if (o.expect) {
		status = capsim_cli_verify_expect(o.expect, o.logs, o.n_logs, &o.hint, o.json);
		goto out;
	}
	if (capsim_cli_load(o.scenario, &o.sets, &st.cat, &st.s, &d) < 0)
		goto fail;
	st.cl = capsim_cluster_open(st.s, &d);
	if (!st.cl || check_logs(&o, &st, &d) < 0)
		goto fail;
	if (o.db && capsim_verify_gpu_db(o.db, st.s, o.vo.tolerance, &gpu, &d) < 0)
		goto fail;
	status = report(&o, &st, &gpu);
	goto out;
fail:
	capsim_diags_print(&d, stderr);
	/* a database that cannot be read (locked, corrupt) is a runtime failure */
	status = capsim_diags_runtime(&d) ? CAPSIM_EXIT_FAILURE : CAPSIM_EXIT_USAGE;
out:
	state_free(&st);
	free(o.logs);
	capsim_diags_free(&d);
	capsim_cli_sets_free(&o.sets);
	return status;
}
