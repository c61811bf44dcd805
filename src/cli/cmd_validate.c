/* cmd_validate.c - `capsim validate FILE...`: check input files and say what a
 * scenario resolves to. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "catalog.h"
#include "eval.h"
#include "cli.h"
#include "outfile.h"
#include "profile.h"
#include "scenario.h"
#include "sha256.h"
#include "sweep.h"
#include "units.h"
#include "xalloc.h"
#include "xml.h"

enum { O_SET, O_RESOLVED, O_JSON, O_OUT, O_PATHS, O_CATALOG, O_HELP };
static const capsim_cli_opt validate_opts[] = {
	[O_SET] = { "set", 's', "PATH=VALUE",
		    "override a scenario field (cluster.nodes=16,\n"
		    "workload.parallelism.tp=4, cluster.gpu.memory.bandwidth=\"4 TB/s\")" },
	[O_RESOLVED] = { "resolved", 'r', NULL,
			 "print the scenario with every catalog part written out" },
	[O_JSON] = { "json", 'j', NULL,
		     "print one JSON object: each file, its kind, ok and errors" },
	[O_OUT] = { "out", 'o', "FILE",
		    "write the --resolved or --json output to FILE, whole or\n"
		    "not at all (default: standard output)" },
	[O_PATHS] = { "paths", 'p', NULL, "list every PATH that --set accepts, with its meaning" },
	[O_CATALOG] = { "catalog", 'c', "DIR",
			"catalog root with hardware/ and models/ (default: the shipped\n"
			"catalog)" },
	[O_HELP] = { "help", 'h', NULL, "this text" },
};
const capsim_cli_cmd capsim_cli_validate_cmd = {
	.name = "validate",
	.usage = "usage: capsim validate FILE... [--set PATH=VALUE]... [--resolved | --json]\n"
		 "                       [--out FILE] [--catalog DIR]\n",
	.about = "Check any file capsim reads, as the command that takes it would: scenario,\n"
		 "hardware, model, bibliography, calibrated profile and sweep files against\n"
		 "their schemas and for consistency; Hugging Face config.json, launch\n"
		 "scripts (.sh, .sbatch, Kubernetes .yaml), torchtitan .toml, nccl-tests\n"
		 "logs, measurement .jsonl, residuals .csv, the error model's .json and\n"
		 "SQLite stores. Print every problem with file:line and exit 2 if there is\n"
		 "one. For a scenario, print what it resolves to.\n",
	.opts = validate_opts,
	.n_opts = CAPSIM_CLI_N(validate_opts),
};

static void help(FILE *out)
{
	capsim_cli_help(&capsim_cli_validate_cmd, out);
	fprintf(out, "\nThe shipped catalog: %s\n", capsim_catalog_default_root());
}

static void print_summary(const capsim_scenario *s)
{
	char a[48], b[48], c[48];
	long gpus = capsim_scenario_gpus(s);
	static const char *const topo[] = { "fat-tree", "single switch", "no fabric" };
	static const char *const net[] = { "InfiniBand", "RoCE", "TCP" };
	static const char *const sched[] = { "gpipe", "1f1b", "1f1b-interleaved" };
	static const char *const rec[] = { "none", "selective", "full" };

	printf("  scenario  %s%s%s\n", s->name, s->description[0] ? ": " : "",
	       s->description);
	/* each node group: its nodes, node type and GPU; the peak sums them */
	double peak = 0, mem = 0, bw = 0;
	for (int g = 0; g < s->n_groups; g++) {
		capsim_group_view v;
		capsim_scenario_group(s, g, &v);
		long n = (long)v.nodes * v.node->gpus;
		printf("  %-9s %d x %s = %ld GPUs (%s%s%s)\n", g ? "" : "cluster", v.nodes,
		       v.node->e.id, n, v.gpu->e.id, v.profile[0] ? ", calibrated: " : "",
		       v.profile);
		peak += capsim_gpu_peak(v.gpu, s->dtype) * (double)n;
		mem += v.gpu->mem_bytes * (double)n;
		bw += v.gpu->mem_bw_bytes_per_s * (double)n;
	}
	if (s->n_groups > 1)
		printf("            %d nodes, %ld GPUs in all\n", s->nodes, gpus);
	static const char *const routing[] = { "ECMP", "adaptive", "deterministic" };
	printf("  fabric    %s, %s, %d rails of %.0f Gb/s (%s) per node, "
	       "oversubscription %.3g:1, %s routing%s%s\n",
	       topo[s->topology], net[s->transport], s->rails,
	       s->nic.port_speed_bytes_per_s * 8 / 1e9, s->nic.e.id, s->oversubscription,
	       routing[s->routing], s->routing_given == CAPSIM_ROUTING_AUTO ? " (auto)" : "",
	       s->sharp ? ", SHARP" : "");
	capsim_units_format(peak, CAPSIM_DIM_FLOP_PER_S, a, sizeof a);
	capsim_units_format(mem, CAPSIM_DIM_BYTES, b, sizeof b);
	capsim_units_format(bw, CAPSIM_DIM_BYTES_PER_S, c, sizeof c);
	printf("  peak      %s dense %s; %s of GPU memory at %s\n", a,
	       capsim_dtype_names[s->dtype], b, c);
	double tokens_per_step = s->global_batch * s->seq_len;
	capsim_units_format(s->tokens, CAPSIM_DIM_COUNT, a, sizeof a);
	printf("  workload  %s, seq-len %d, global batch %.0f sequences (%.4g M "
	       "tokens), %s tokens, %s\n",
	       s->model.e.id, s->seq_len, s->global_batch, tokens_per_step / 1e6, a,
	       capsim_dtype_names[s->dtype]);
	printf("  parallel  tp %d, pp %d, cp %d, dp %d, ep %d; %s", s->tp, s->pp,
	       s->cp, s->dp, s->ep, sched[s->schedule]);
	if (s->virtual_stages > 1)
		printf(" x%d", s->virtual_stages);
	printf(", ZeRO-%d, recompute %s", s->zero, rec[s->recompute]);
	if (s->finetune == CAPSIM_FT_LORA)
		printf("; LoRA rank %d on %s", s->lora_rank,
		       s->lora_targets == CAPSIM_LORA_ATTENTION ? "attention" : "every linear layer");
	printf("\n");
	printf("  steps     %.0f to the token budget (%d micro-batches of %d per "
	       "replica per step)\n",
	       capsim_scenario_steps(s),
	       (int)(s->global_batch / ((double)s->micro_batch * s->dp)),
	       s->micro_batch);
	const char *unused[8];
	int n_unused = capsim_scenario_not_modelled(s, unused, 8);
	for (int i = 0; i < n_unused; i++)
		printf("%s%s%s", i ? ", " : "  not yet modelled (read, checked, not used): ",
		       unused[i], i + 1 == n_unused ? "\n" : "");
	for (int k = 0; k < s->n_groups; k++) {
		capsim_memory m;
		capsim_eval_memory(s, k, &m);
		capsim_group_view gv;
		capsim_scenario_group(s, k, &gv);
		const capsim_stage_memory *p = &m.peak;
		char w[32], g[32], o[32], act[32], r[32], tot[32], cap[32], on[96] = "";
		capsim_units_format(p->weights_bytes, CAPSIM_DIM_BYTES, w, sizeof w);
		capsim_units_format(p->grads_bytes, CAPSIM_DIM_BYTES, g, sizeof g);
		capsim_units_format(p->optimizer_bytes, CAPSIM_DIM_BYTES, o, sizeof o);
		capsim_units_format(p->activations_bytes, CAPSIM_DIM_BYTES, act, sizeof act);
		capsim_units_format(p->reserve_bytes, CAPSIM_DIM_BYTES, r, sizeof r);
		capsim_units_format(p->total_bytes, CAPSIM_DIM_BYTES, tot, sizeof tot);
		capsim_units_format(m.capacity_bytes, CAPSIM_DIM_BYTES, cap, sizeof cap);
		if (s->n_groups > 1)
			snprintf(on, sizeof on, " on %s", gv.gpu->e.id);
		char casts[96] = "";
		size_t cl = 0;
		if (p->casts_bytes > 0 || p->gathers_bytes > 0) {
			char c1[32];
			capsim_units_format(p->casts_bytes + p->gathers_bytes, CAPSIM_DIM_BYTES, c1,
					    sizeof c1);
			cl = (size_t)snprintf(casts, sizeof casts, ", %s %s",
					      p->casts_bytes > 0 ? "casts" : "gathered weights", c1);
		}
		if (p->fp8_bytes > 0 && cl < sizeof casts) { /* Transformer Engine's FP8 weights */
			char f8[32];
			capsim_units_format(p->fp8_bytes, CAPSIM_DIM_BYTES, f8, sizeof f8);
			snprintf(casts + cl, sizeof casts - cl, ", FP8 weights %s", f8);
		}
		char mg[32];
		capsim_units_format(fabs(m.margin_bytes), CAPSIM_DIM_BYTES, mg, sizeof mg);
		printf("  memory    %s of %s per GPU%s at the peak (pipeline stage %d): %s, %s "
		       "(%.1f%%) %s\n"
		       "            %s recipe: weights %s, gradients %s, optimizer %s, activations "
		       "%s (%.3g micro-batches)%s, outside the model %s\n",
		       tot, cap, on, p->stage,
		       m.verdict == CAPSIM_MEM_NO ? "DOES NOT FIT" : capsim_mem_verdict_names[m.verdict],
		       mg, 100 * fabs(m.margin_bytes) / m.capacity_bytes,
		       m.margin_bytes >= 0 ? "to spare" : "short",
		       capsim_framework_names[s->framework], w, g, o, act, p->in_flight, casts, r);
		if (m.verdict == CAPSIM_MEM_CLOSE)
			printf("            close: it fits, but not if the peak is the memory model's "
			       "error (+%.1f%%) larger; not refused\n", 100 * m.band_under);
	}
}

/* every --set path: scenario fields, then each part slot's fields */
static void print_paths(void)
{
	for (size_t i = 0; i < capsim_scenario_n_fields; i++) {
		const capsim_field *f = &capsim_scenario_fields[i];
		printf("%-45s %s%s%s%s\n", f->path, f->doc,
		       f->def ? " (default " : "", f->def ? f->def : "",
		       f->def ? ")" : "");
	}
	for (size_t s = 0; s < capsim_n_part_slots; s++) {
		const capsim_part_slot *slot = &capsim_part_slots[s];
		const capsim_kind *k = &capsim_kinds[slot->kind];
		for (size_t i = 0; i < k->n_fields; i++) {
			if (strcmp(k->fields[i].path, "id") == 0)
				continue;
			char p[256];
			snprintf(p, sizeof p, "%s.%s", slot->path, k->fields[i].path);
			printf("%-45s %s (overrides the %s)\n", p, k->fields[i].doc,
			       k->name);
		}
	}
}


/* what the files of one invocation share */
typedef struct {
	const char *root;          /* the catalog root */
	capsim_catalog *cat;       /* loaded on first need, for scenarios and profiles */
	const capsim_set *sets;
	size_t n_sets;
	int resolved;              /* --resolved: the scenario's XML to out */
	int json;                  /* --json: no text on standard output */
	FILE *out;                 /* where --resolved goes */
	const char *out_name;      /* its name in messages: --out's path, or "standard output" */
} validate_ctx;

/* one input file, read once (a FIFO or `<(cat FILE)` too): every check and
 * the digest use these bytes */
typedef struct {
	const char *path;
	char *buf;
	size_t len;
	char sha256[65];
} input_bytes;

static int need_catalog(validate_ctx *c, capsim_diags *d)
{
	if (c->cat)
		return 0;
	c->cat = capsim_catalog_create();
	if (capsim_catalog_load_root(c->cat, c->root, NULL, d) < 0)
		return -1;
	return capsim_cli_parts_load(c->cat, d);
}

static void say_ok(const validate_ctx *c, const char *path)
{
	if (!c->json && !c->resolved)
		printf("%s: ok\n", path);
}

static int validate_scenario(const input_bytes *in, validate_ctx *c, capsim_diags *d)
{
	const char *path = in->path;
	if (need_catalog(c, d) < 0)
		return -1;
	capsim_scenario *s = capsim_xcalloc(1, sizeof *s);
	int rc = capsim_scenario_load_memory(in->buf, in->len, path, c->cat, c->sets, c->n_sets,
					     s, d);
	if (rc == 0 && capsim_eval_check(s, d) < 0)
		rc = -1;
	if (rc == 0 && c->resolved) {
		errno = 0;
		if (capsim_scenario_write_xml(s, c->out) < 0) {
			int e = errno ? errno : EIO;
			capsim_diags_add_runtime(d, c->out_name ? c->out_name : "standard output",
						 "cannot write the resolved scenario of %s: %s",
						 path, strerror(e));
			rc = -1;
		}
	} else if (rc == 0 && !c->json) {
		say_ok(c, path);
		print_summary(s);
	}
	free(s);
	return rc;
}

static int validate_catalog_file(const input_bytes *in, validate_ctx *vc,
				 capsim_diags *d)
{
	const char *path = in->path;
	capsim_catalog *c = capsim_catalog_create();
	size_t before = d->n;
	char real[PATH_MAX];
	const char *skip = realpath(path, real) ? real : path;
	/* everything else of the catalog first, so references resolve, then the
	 * file itself (a bibliography first, since entries cite it) */
	capsim_diags other = { 0 };
	capsim_catalog_load_root(c, vc->root, skip, &other);
	capsim_diags_free(&other);
	capsim_catalog_load_memory(c, in->buf, in->len, path, d);
	if (d->n == before)
		capsim_catalog_check(c, d);
	capsim_catalog_free(c);
	if (d->n == before)
		say_ok(vc, path);
	return d->n == before ? 0 : -1;
}

/* A calibrated profile: read and checked (src/io/profile.h), then applied to
 * a copy of the catalog GPU it names, as a scenario's profile= would be. */
static int validate_profile(const input_bytes *in, long root_line, validate_ctx *c,
			    capsim_diags *d)
{
	const char *path = in->path;
	capsim_profile *p = capsim_xcalloc(1, sizeof *p);
	int rc = capsim_profile_load_memory(in->buf, in->len, path, p, d);
	if (rc == 0 && need_catalog(c, d) < 0)
		rc = -1;
	if (rc == 0) {
		const capsim_gpu *g = capsim_catalog_find(c->cat, CAPSIM_KIND_GPU, p->gpu);
		if (!g) {
			capsim_diags_add(d, path, root_line,
					 "profile.gpu: expected a GPU of the catalog (%s/hardware), "
					 "found '%s'", c->root, p->gpu);
			rc = -1;
		} else {
			capsim_gpu *copy = capsim_xmalloc(sizeof *copy);
			*copy = *g;
			rc = capsim_profile_apply(p, copy, d);
			free(copy);
		}
	}
	capsim_profile_free(p);
	free(p);
	if (rc == 0)
		say_ok(c, path);
	return rc;
}

/* A sweep file, read as capsim sweep reads it: its axes, values and
 * constraints, and the base scenario beside it with the --set edits. */
static int validate_sweep(const input_bytes *in, validate_ctx *c, capsim_diags *d)
{
	if (need_catalog(c, d) < 0)
		return -1;
	capsim_scenario *base = capsim_xcalloc(1, sizeof *base);
	capsim_sweep *sw = capsim_sweep_load(in->path, c->cat, c->sets, c->n_sets, base, d);
	if (sw && !c->json && !c->resolved) {
		say_ok(c, in->path);
		printf("  sweep     %s: %llu points before constraints, base %s\n", sw->name,
		       (unsigned long long)sw->size, base->name);
	}
	capsim_sweep_free(sw);
	free(base);
	return sw ? 0 : -1;
}

/* A file capsim reads that is not XML (validate_more.c), checked as the
 * command that takes it checks it. Returns its kind, or NULL when it is
 * none of them. */
static const char *validate_other(const input_bytes *in, validate_ctx *c, capsim_diags *d)
{
	const char *kind = capsim_cli_other_kind(in->path, in->buf, in->len);
	if (!kind)
		return NULL;
	if (c->n_sets)
		capsim_diags_add(d, in->path, 0, "--set applies to scenarios and sweeps only");
	else if (capsim_cli_validate_other(kind, in->path, in->buf, in->len, d) == 0)
		say_ok(c, in->path);
	return kind;
}

/* An SQLite store (capsim_cli_is_store), checked as query opens it. */
static const char *validate_store_file(const input_bytes *in, validate_ctx *c, capsim_diags *d)
{
	if (c->n_sets)
		capsim_diags_add(d, in->path, 0, "--set applies to scenarios and sweeps only");
	else if (capsim_cli_validate_other("store", in->path, NULL, 0, d) == 0)
		say_ok(c, in->path);
	return "store";
}

/* root element name of a file, "" if it cannot be read */
static void root_name(const input_bytes *in, char *buf, size_t len, long *line,
		      capsim_diags *d)
{
	xmlDoc *doc = capsim_xml_read_memory(in->buf, in->len, in->path, d);
	buf[0] = '\0';
	if (!doc)
		return;
	xmlNode *r = xmlDocGetRootElement(doc);
	if (r) {
		capsim_strlcpy(buf, (const char *)r->name, len);
		*line = xmlGetLineNo(r);
	}
	xmlFreeDoc(doc);
}

/* the kind of file each root element is */
static const struct {
	const char *root, *kind;
} kinds[] = {
	{ "scenario", "scenario" },
	{ "catalog", "hardware" },
	{ "models", "models" },
	{ "bibliography", "bibliography" },
	{ "profile", "profile" },
	{ "sweep", "sweep" },
};

static const char *kind_of(const char *root)
{
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		if (strcmp(kinds[i].root, root) == 0)
			return kinds[i].kind;
	return NULL;
}

/* Check one file, every problem into d. Returns its kind ("unknown" when
 * the root element is none of capsim's, "unreadable" when it cannot be
 * parsed). */
static const char *validate_file(const input_bytes *in, validate_ctx *c, capsim_diags *d)
{
	const char *path = in->path;
	char rn[64];
	long line = 0;
	if (!in->buf)
		return "unreadable";
	const char *other = validate_other(in, c, d);
	if (other)
		return other;
	if (!capsim_cli_is_xml(path, in->buf, in->len)) {
		capsim_diags_add(d, path, 1, "expected one of the files capsim reads (its XML: "
				 "scenario, hardware, models, bibliography, profile, sweep; a "
				 "config.json, launch script, .toml, nccl-tests log, .jsonl, .csv, "
				 "SQLite store), found none of them");
		return "unknown";
	}
	root_name(in, rn, sizeof rn, &line, d);
	if (d->n)
		return "unreadable";
	const char *kind = kind_of(rn);
	if (!kind) {
		capsim_diags_add(d, path, line,
				 "root element <%s> is not one of capsim's files "
				 "(expected <scenario>, <catalog>, <models>, "
				 "<bibliography>, <profile> or <sweep>)",
				 rn);
		return "unknown";
	}
	if (strcmp(kind, "scenario") == 0)
		validate_scenario(in, c, d);
	else if (strcmp(kind, "sweep") == 0)
		validate_sweep(in, c, d);
	else if (c->n_sets)
		capsim_diags_add(d, path, 0, "--set applies to scenarios only");
	else if (strcmp(kind, "profile") == 0)
		validate_profile(in, line, c, d);
	else
		validate_catalog_file(in, c, d);
	return kind;
}

/* {"file", "sha256", "kind", "ok", "errors": [{"where", "message"}]} */
static json_t *json_file(const input_bytes *in, const char *kind, const capsim_diags *d)
{
	const char *path = in->path, *hex = in->buf ? in->sha256 : "";
	json_t *o = json_object();
	json_t *errors = json_array();
	json_object_set_new(o, "file", json_string(path));
	json_object_set_new(o, "sha256", hex[0] ? json_string(hex) : json_null());
	json_object_set_new(o, "kind", json_string(kind));
	json_object_set_new(o, "ok", json_boolean(d->n == 0));
	for (size_t i = 0; i < d->n; i++) {
		json_t *e = json_object();
		json_object_set_new(e, "where", json_string(d->v[i].where));
		json_object_set_new(e, "message", json_string(d->v[i].msg));
		json_array_append_new(errors, e);
	}
	json_object_set_new(o, "errors", errors);
	return o;
}

/* The --json object: the usual head (the catalog's files, if one was read),
 * then every file checked, then ok. */
static json_t *json_report(const validate_ctx *c, json_t *files)
{
	json_t *o = capsim_cli_json_head(c->cat, NULL);
	int ok = 1;
	size_t i;
	json_t *f;
	json_array_foreach(files, i, f)
		ok = ok && json_is_true(json_object_get(f, "ok"));
	json_object_set(o, "files", files);
	json_object_set_new(o, "ok", json_boolean(ok));
	return o;
}

/* Check argv[first..argc-1]; the --resolved or --json output goes to
 * c->out. Returns the status. */
static int validate_all(int argc, char **argv, int first, validate_ctx *c)
{
	int status = CAPSIM_EXIT_OK;
	json_t *files = json_array();
	for (int i = first; i < argc; i++) {
		capsim_diags fd = { 0 };
		char found[4096];
		const char *path = capsim_cli_find_input(argv[i], found, sizeof found, &fd);
		input_bytes in = { .path = path ? path : argv[i] };
		/* a store is opened as a database, at any size, never read whole */
		int store = path && capsim_cli_is_store(path);
		in.buf = path && !store ? capsim_xml_slurp(in.path, &in.len, &fd) : NULL;
		if (in.buf)
			capsim_sha256_hex(in.buf, in.len, in.sha256);
		const char *kind = store ? validate_store_file(&in, c, &fd) :
					   validate_file(&in, c, &fd);
		if (c->json)
			json_array_append_new(files, json_file(&in, kind, &fd));
		free(in.buf);
		if (fd.n) {
			capsim_diags_print(&fd, stderr);
			/* a write that failed outranks bad input: exit 1 */
			if (capsim_diags_runtime(&fd))
				status = CAPSIM_EXIT_FAILURE;
			else if (status == CAPSIM_EXIT_OK)
				status = CAPSIM_EXIT_USAGE;
		}
		capsim_diags_free(&fd);
	}
	if (c->json) {
		json_t *o = json_report(c, files);
		json_dumpf(o, c->out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', c->out);
		json_decref(o);
	}
	json_decref(files);
	return status;
}

/* validate_all with its output to --out FILE, whole or not at all: a
 * --resolved run that failed keeps the old file. */
static int validate_to_file(int argc, char **argv, int first, validate_ctx *c,
			    const char *path, capsim_diags *d)
{
	capsim_outfile of;
	if (capsim_outfile_open(&of, path, d) < 0) {
		capsim_diags_print(d, stderr);
		return CAPSIM_EXIT_FAILURE;
	}
	c->out = of.f;
	c->out_name = path;
	int status = validate_all(argc, argv, first, c);
	if (c->resolved && status != CAPSIM_EXIT_OK) {
		capsim_outfile_discard(&of);
	} else if (capsim_outfile_close(&of, d) < 0) {
		capsim_diags_print(d, stderr);
		status = CAPSIM_EXIT_FAILURE;
	}
	return status;
}

int capsim_cmd_validate(int argc, char **argv)
{
	validate_ctx c = { .root = capsim_catalog_default_root() };
	capsim_cli_sets sets = { 0 };
	const char *out_path = NULL;
	int ch, status = CAPSIM_EXIT_OK;
	capsim_diags d = { 0 };

	optind = 1;
	while ((ch = capsim_cli_next(&capsim_cli_validate_cmd, argc, argv)) != -1) {
		switch (ch) {
		case O_SET:
			capsim_cli_sets_add(&sets, optarg, &d); /* reported with the rest */
			break;
		case O_RESOLVED: c.resolved = 1; break;
		case O_JSON: c.json = 1; break;
		case O_OUT: out_path = optarg; break;
		case O_PATHS:
			print_paths();
			goto out;
		case O_CATALOG: c.root = optarg; break;
		case O_HELP:
			help(stdout);
			goto out;
		default:
			status = CAPSIM_EXIT_USAGE;
			goto out;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "capsim validate: no FILE given\n");
		help(stderr);
		status = CAPSIM_EXIT_USAGE;
		goto out;
	}
	if (c.resolved && c.json)
		capsim_diags_add_at(&d, "--json", "expected --resolved or --json, found both");
	if (out_path && !c.resolved && !c.json)
		capsim_diags_add_at(&d, "--out", "expected with --resolved or --json "
				    "(the summaries go to standard output)");
	if (d.n) {
		capsim_diags_print(&d, stderr);
		status = CAPSIM_EXIT_USAGE;
		goto out;
	}
	c.sets = sets.v;
	c.n_sets = sets.n;
	if (!out_path) {
		/* standard output: main() checks that it all got there */
		c.out = stdout;
		status = validate_all(argc, argv, optind, &c);
	} else {
		status = validate_to_file(argc, argv, optind, &c, out_path, &d);
	}
	capsim_catalog_free(c.cat);
out:
	capsim_cli_sets_free(&sets);
	capsim_diags_free(&d);
	return status;
}
