/* cmd_fit.c - capsim fit: a calibrated hardware profile from the
 * measurement store (src/fit/fit.h), written atomically. */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "catalog.h"
#include "cli.h"
#include "fit.h"
#include "xalloc.h"

enum { O_DB, O_OUT, O_GPU, O_RUNS, O_NAME, O_FORCE, O_VERBOSE, O_JSON, O_HELP };
static const capsim_cli_opt fit_opts[] = {
	[O_DB] = { "db", 0, "FILE", "the measurement database (read only)" },
	[O_OUT] = { "out", 0, "FILE", "the profile to write (hardware/calibrated/NAME.xml)" },
	[O_GPU] = { "gpu", 0, "ID", "the catalog GPU measured; default: inferred from the runs" },
	[O_RUNS] = { "runs", 0, "LIST", "run ids to fit, comma-separated; default: every run" },
	[O_NAME] = { "name", 0, "NAME", "the profile's name; default: GPU id and date" },
	[O_FORCE] = { "force", 0, NULL, "replace FILE if it exists" },
	[O_VERBOSE] = { "verbose", 0, NULL, "every GEMM point with its errors" },
	[O_JSON] = { "json", 0, NULL,
		     "one JSON object (what was fitted, its residuals, the notes)\n"
		     "instead of the report" },
	[O_HELP] = { "help", 0, NULL, "this text" },
};
const capsim_cli_cmd capsim_cli_fit_cmd = {
	.name = "fit",
	.usage = "usage: capsim fit --db DB.sqlite --out FILE.xml [--gpu ID] [--runs ID,...]\n"
		 "                  [--name NAME] [--force] [--verbose] [--json]\n"
		 "       capsim fit errors --residuals FILE.csv --out FILE.json (its own --help)\n",
	.about = "Fits a calibrated hardware profile to the runs of a measurement database\n"
		 "(capsim calibrate import): GEMM efficiency per dtype against FLOP and\n"
		 "arithmetic intensity, copy bandwidth, PCIe and NCCL latency and bandwidth,\n"
		 "power and clocks. Prints the residuals, then writes FILE atomically.\n"
		 "What the runs did not measure is left out and keeps its datasheet default.\n",
	.opts = fit_opts,
	.n_opts = CAPSIM_CLI_N(fit_opts),
	.after = "Exit status: 0 written; 1 the file could not be written, or the database\n"
		 "could not be read (locked, corrupt, not an SQLite file, an I/O error); 2 bad\n"
		 "usage, or a database without what fit needs (empty, or of a newer capsim).\n",
};

/* "1,2,5" into a new array; NULL after a message */
static int64_t *parse_runs(const char *s, size_t *n)
{
	*n = 0;
	int64_t *v = capsim_xcalloc(strlen(s) / 2 + 1, sizeof *v);
	for (const char *p = s;;) {
		char *end;
		errno = 0;
		long long id = strtoll(p, &end, 10);
		if (end == p || id <= 0 || errno || (*end && *end != ',')) {
			fprintf(stderr, "capsim fit: --runs: expected run ids like 1,2,5, found '%s'\n",
				s);
			free(v);
			return NULL;
		}
		v[(*n)++] = id;
		if (!*end)
			return v;
		p = end + 1;
	}
}

typedef struct fit_args {
	const char *db, *out, *gpu, *name;
	int64_t *runs;
	size_t n_runs;
	int force, verbose, json;
} fit_args;

/* 0, CAPSIM_EXIT_OK after --help (*done set), or CAPSIM_EXIT_USAGE */
static int parse_args(int argc, char **argv, fit_args *a, int *done)
{
	optind = 1;
	int c;
	while ((c = capsim_cli_next(&capsim_cli_fit_cmd, argc, argv)) != -1) {
		switch (c) {
		case O_DB: a->db = optarg; break;
		case O_OUT: a->out = optarg; break;
		case O_GPU: a->gpu = optarg; break;
		case O_NAME: a->name = optarg; break;
		case O_FORCE: a->force = 1; break;
		case O_VERBOSE: a->verbose = 1; break;
		case O_JSON: a->json = 1; break;
		case O_RUNS:
			free(a->runs);
			a->runs = parse_runs(optarg, &a->n_runs);
			if (!a->runs)
				return CAPSIM_EXIT_USAGE;
			break;
		case O_HELP:
			capsim_cli_help(&capsim_cli_fit_cmd, stdout);
			*done = 1;
			return CAPSIM_EXIT_OK;
		default: return CAPSIM_EXIT_USAGE;
		}
	}
	if (!a->db || !a->out || optind < argc) {
		fprintf(stderr, "capsim fit: %s\n", !a->db ? "--db is required" :
						   !a->out ? "--out is required" :
							     "unexpected argument");
		capsim_cli_help(&capsim_cli_fit_cmd, stderr);
		return CAPSIM_EXIT_USAGE;
	}
	struct stat st;
	if (!a->force && stat(a->out, &st) == 0) {
		fprintf(stderr, "capsim fit: %s exists; give --force to replace it\n", a->out);
		return CAPSIM_EXIT_USAGE;
	}
	return 0;
}

/* ---- --json ---------------------------------------------------------------- */

static json_t *run_ids_json(const capsim_run_ids *r)
{
	json_t *a = json_array();
	for (size_t i = 0; i < r->n; i++)
		json_array_append_new(a, json_integer((json_int_t)r->id[i]));
	return a;
}

static json_t *ab_json(const capsim_profile_ab *ab)
{
	return json_pack("{s:f, s:f, s:f, s:f, s:I, s:f, s:f}", "latency_s", ab->latency_s,
			 "bw_bytes_per_s", ab->bw_bytes_per_s, "bytes_min", ab->bytes_min,
			 "bytes_max", ab->bytes_max, "points", (json_int_t)ab->points,
			 "rms_rel", ab->rms, "max_abs_rel", ab->max_abs);
}

/* per dtype fitted: its parameters and residuals */
static json_t *gemm_json(const capsim_profile *p)
{
	json_t *o = json_object();
	for (int i = 0; i < CAPSIM_CAL_DTYPES; i++) {
		const capsim_profile_gemm *g = &p->gemm[i];
		if (!g->cal.params)
			continue;
		json_object_set_new(o, capsim_dtype_names[i], json_pack(
			"{s:i, s:f, s:f, s:f, s:f, s:f, s:I, s:f, s:f, s:f, s:f, s:o}",
			"params", g->cal.params, "sat", g->cal.sat, "f0_flop", g->cal.f0_flop,
			"p", g->cal.p, "i0_flop_per_byte", g->cal.i0_flop_per_byte, "q", g->cal.q,
			"points", (json_int_t)g->n_points, "rms_rel", g->rms, "max_abs_rel", g->max_abs,
			"loo_rms_rel", g->loo_rms, "loo_max_abs_rel", g->loo_max_abs, "runs",
			run_ids_json(&g->runs)));
	}
	return o;
}

static json_t *coll_json(const capsim_profile *p)
{
	json_t *a = json_array();
	for (size_t i = 0; i < p->n_coll; i++) {
		const capsim_profile_coll *c = &p->coll[i];
		json_t *reg = json_array();
		for (int r = 0; r < c->regimes; r++)
			json_array_append_new(reg, ab_json(&c->regime[r]));
		json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:i, s:i, s:f, s:o, s:o}",
						   "op", c->op, "algo", c->algo, "proto", c->proto,
						   "ranks", c->ranks, "nodes", c->nodes, "bus_factor",
						   c->bus_factor, "regimes", reg, "runs",
						   run_ids_json(&c->runs)));
	}
	return a;
}

static json_t *power_json(const capsim_profile_power *w)
{
	if (!w->present)
		return json_null();
	return json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:I, s:f, s:f, s:f, s:f, s:o}",
			 "limit_w", w->limit_w, "idle_w", w->idle_w, "idle_clock_hz",
			 w->idle_clock_hz, "sustained_w", w->sustained_w, "sustained_clock_hz",
			 w->sustained_clock_hz, "sustained_flop_per_s", w->sustained_flop_per_s,
			 "points", (json_int_t)w->points, "linear_a_w", w->lin_a_w, "linear_b_w",
			 w->lin_b_w, "linear_rms_w", w->lin_rms_w, "gamma", w->gamma, "runs",
			 run_ids_json(&w->runs));
}

/* the families of capsim_fit_check, each an object */
static json_t *check_json(const capsim_fit_check *c)
{
	json_t *a = json_array();
	for (size_t i = 0; i < c->n; i++) {
		const capsim_fit_family *f = &c->fam[i];
		json_t *o = json_pack("{s:s, s:I, s:f, s:f, s:f, s:f, s:I}", "family", f->name,
				      "points", (json_int_t)f->points, "mae_before_rel",
				      f->mae_before, "mae_after_rel", f->mae_after,
				      "max_abs_before_rel", f->worst_before, "max_abs_after_rel",
				      f->worst_after, "moved_away", (json_int_t)f->away);
		json_array_append_new(a, o);
	}
	return a;
}

/* each measured attention curve, by kernel name: its peak, runs and points */
static json_t *attn_json(const capsim_profile *p)
{
	json_t *o = json_object();
	for (int k = 0; k < CAPSIM_ATTN__KERNELS; k++) {
		const capsim_profile_attn *a = &p->attn[k];
		if (!a->curve.n)
			continue;
		json_t *pts = json_array();
		for (int i = 0; i < a->curve.n; i++) {
			const capsim_attn_point *pt = &a->curve.pt[i];
			json_array_append_new(pts, json_pack("{s:f, s:f, s:b, s:f, s:f}", "seq",
							     pt->seq, "head_dim", pt->head_dim,
							     "causal", pt->causal, "fwd_flop_per_s",
							     pt->fwd_flop_per_s, "bwd_flop_per_s",
							     pt->bwd_flop_per_s));
		}
		json_object_set_new(o, capsim_attn_kernel_names[k], json_pack(
			"{s:f, s:o, s:o}", "peak_bf16_flop_per_s", a->curve.peak_bf16_flop_per_s,
			"runs", run_ids_json(&a->runs), "points", pts));
	}
	return o;
}

/* the profile fitted, as one object after the common head */
static json_t *fit_json(const capsim_catalog *cat, const capsim_profile *p, const char *out,
			int written)
{
	json_t *o = capsim_cli_json_head(cat, NULL);
	json_t *runs = json_array(), *notes = json_array();
	for (size_t i = 0; i < p->n_runs; i++)
		json_array_append_new(runs, json_pack("{s:I, s:s, s:s, s:s, s:s}", "id",
						      (json_int_t)p->runs[i].id, "program",
						      p->runs[i].program, "date", p->runs[i].date,
						      "gpu", p->runs[i].gpu, "sha256",
						      p->runs[i].sha256));
	for (size_t i = 0; i < p->n_notes; i++)
		json_array_append_new(notes, json_string(p->notes[i]));
	json_object_set_new(o, "database", json_string(p->database));
	json_object_set_new(o, "profile", json_string(p->name));
	json_object_set_new(o, "gpu", json_string(p->gpu));
	json_object_set_new(o, "gpu_name", json_string(p->gpu_name));
	json_object_set_new(o, "date", json_string(p->date));
	json_object_set_new(o, "runs", runs);
	json_object_set_new(o, "gemm", gemm_json(p));
	json_object_set_new(o, "hbm", p->hbm.points ? json_pack(
		"{s:f, s:f, s:I, s:f, s:f}", "bw_bytes_per_s", p->hbm.bw_bytes_per_s, "eff",
		p->hbm.eff, "points", (json_int_t)p->hbm.points, "rms_rel", p->hbm.rms,
		"max_abs_rel", p->hbm.max_abs) : json_null());
	json_object_set_new(o, "pcie_h2d", p->pcie[0].ab.points ? ab_json(&p->pcie[0].ab) :
								   json_null());
	json_object_set_new(o, "pcie_d2h", p->pcie[1].ab.points ? ab_json(&p->pcie[1].ab) :
								   json_null());
	json_object_set_new(o, "collectives", coll_json(p));
	json_object_set_new(o, "power", power_json(&p->power));
	json_object_set_new(o, "attention", attn_json(p));
	json_object_set_new(o, "launch_eager_s", p->eff_launch_s > 0 ? json_real(p->eff_launch_s) :
									json_null());
#define OPT_REAL(key, v) json_object_set_new(o, key, (v) > 0 ? json_real(v) : json_null())
	OPT_REAL("dispatch_s", p->eff_dispatch_s);
	OPT_REAL("dispatch_compiled_s", p->eff_dispatch_compiled_s);
	OPT_REAL("kernel_gap_s", p->eff_kernel_gap_s);
	OPT_REAL("launch_graph_s", p->eff_launch_graph_s);
#undef OPT_REAL
	json_object_set_new(o, "notes", notes);
	json_object_set_new(o, "out", json_string(out));
	json_object_set_new(o, "written", json_boolean(written));
	return o;
}

int capsim_cmd_fit(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "errors") == 0)
		return capsim_cmd_fit_errors(argc - 1, argv + 1);
	fit_args a = { 0 };
	int done = 0, status = parse_args(argc, argv, &a, &done);
	if (status || done) {
		free(a.runs);
		return status;
	}
	capsim_diags d = { 0 };
	capsim_catalog *cat = capsim_catalog_create();
	capsim_profile p;
	memset(&p, 0, sizeof p);
	if (capsim_cli_catalog(cat, &d) < 0) {
		status = CAPSIM_EXIT_USAGE;
	} else {
		capsim_fit_options o = { .gpu = a.gpu, .runs = a.runs, .n_runs = a.n_runs,
					 .name = a.name, .capsim = capsim_version_string() };
		/* a database the machine failed to read (locked, corrupt, I/O) is a
		 * runtime failure; a file that is not what fit needs, bad input */
		if (capsim_fit(a.db, cat, &o, &p, &d) < 0)
			status = capsim_diags_runtime(&d) ? CAPSIM_EXIT_FAILURE : CAPSIM_EXIT_USAGE;
	}
	capsim_fit_check check = { 0 };
	if (status == 0) {
		const capsim_gpu *g = capsim_catalog_find(cat, CAPSIM_KIND_GPU, p.gpu);
		capsim_fit_options o = { .runs = a.runs, .n_runs = a.n_runs };
		if (!g || capsim_fit_before_after(a.db, &o, &p, g, &check, &d) < 0)
			status = CAPSIM_EXIT_FAILURE;
	}
	if (status == 0) {
		if (!a.json) {
			capsim_fit_report(&p, capsim_catalog_find(cat, CAPSIM_KIND_GPU, p.gpu),
					  a.verbose, stdout);
			capsim_fit_before_after_report(&check, stdout);
		}
		if (capsim_profile_save(&p, a.out, a.force, &d) < 0)
			status = CAPSIM_EXIT_FAILURE;
		else if (!a.json)
			printf("\nwrote %s\n", a.out);
		if (a.json) {
			json_t *o = fit_json(cat, &p, a.out, status == 0);
			json_object_set_new(o, "before_after", check_json(&check));
			json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
					      JSON_REAL_PRECISION(10));
			fputc('\n', stdout);
			json_decref(o);
		}
	}
	capsim_diags_print(&d, stderr);
	capsim_diags_free(&d);
	capsim_profile_free(&p);
	capsim_catalog_free(cat);
	free(a.runs);
	return status;
}
