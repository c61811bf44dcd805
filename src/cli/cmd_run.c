/* cmd_run.c - `capsim run SCENARIO`: one training step of the scenario's
 * workload on its cluster, and what follows from it (throughput, MFU, memory,
 * time to train). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "catalog.h"
#include "cli.h"
#include "fabric.h"
#include "scenario.h"
#include "step.h"
#include "units.h"
#include "xalloc.h"

static void help(FILE *out)
{
	fprintf(out,
		"usage: capsim run [SCENARIO] [--set PATH=VALUE]... [--json] [--verbose]\n"
		"\n"
		"Predict one training step of the scenario's workload on its cluster: step\n"
		"time and its breakdown, tokens/s, MFU, memory per GPU, time to train the\n"
		"token budget. SCENARIO defaults to scenarios/default.xml of the catalog.\n"
		"\n"
		"  --set PATH=VALUE  override a scenario field (see capsim validate --paths)\n"
		"  --json            one JSON object\n"
		"  --trace FILE      write the step's timeline as Chrome trace-event JSON\n"
		"                    (open it in Perfetto or chrome://tracing)\n"
		"  --verbose         also print the run summary (events, simulated step)\n");
}

static void line(const char *label, double v, capsim_dim dim, const char *note)
{
	char buf[48];
	capsim_units_format(v, dim, buf, sizeof buf);
	printf("  %-24s %12s%s%s\n", label, buf, note ? "  " : "", note ? note : "");
}

/* "busiest link  nic-up, 1.5 GiB per sync" under a collective's line */
static void print_link(const char *what, const capsim_step_link *l)
{
	if (!l->kind)
		return;
	char b[32], note[80];
	capsim_units_format(l->bytes, CAPSIM_DIM_BYTES, b, sizeof b);
	snprintf(note, sizeof note, "%s on one link, per %s", b, what);
	printf("    %-22s %12s %s\n", "busiest link", l->kind, note);
}

/* {"kind": "nic-up", "bytes": ...}, or null where there is no collective */
static void link_json(json_t *o, const char *key, const capsim_step_link *l)
{
	if (!l->kind) {
		json_object_set_new(o, key, json_null());
		return;
	}
	json_object_set_new(o, key, json_pack("{s:s, s:f}", "kind", l->kind, "bytes",
					      l->bytes));
}

static const char *const path_kinds[] = { "compute", "p2p", "tail" };

/* one segment of the critical path, in words */
static void path_words(const capsim_path_segment *g, char *buf, size_t n)
{
	switch (g->kind) {
	case CAPSIM_PATH_COMPUTE:
		snprintf(buf, n, "stage %d: %d F + %d B (mb %d..%d)", g->stage, g->forwards,
			 g->backwards, g->first_microbatch, g->last_microbatch);
		break;
	case CAPSIM_PATH_TRANSFER:
		snprintf(buf, n, "p2p stage %d -> %d", g->stage, g->to_stage);
		break;
	default:
		snprintf(buf, n, "stage %d: gradient sync + optimizer", g->stage);
		break;
	}
}

/* The critical path: its share by kind, then its segments (the first and
 * last few when it is long). */
static void print_path(const capsim_step *r)
{
	if (!r->path_len)
		return;
	double by[3] = { 0, 0, 0 };
	for (size_t i = 0; i < r->path_len; i++)
		by[r->path[i].kind] += (double)(r->path[i].end_ns - r->path[i].start_ns) * 1e-9;
	char a[32], b[32], c[32];
	capsim_units_format(by[0], CAPSIM_DIM_SECONDS, a, sizeof a);
	capsim_units_format(by[1], CAPSIM_DIM_SECONDS, b, sizeof b);
	capsim_units_format(by[2], CAPSIM_DIM_SECONDS, c, sizeof c);
	printf("critical path (replica %d, %zu segments): compute %s, p2p %s, tail %s\n",
	       r->critical_replica, r->path_len, a, b, c);
	if (r->path_len > 16) {
		/* where its compute lies: the three stages that hold most of it */
		int stages = 0;
		for (size_t i = 0; i < r->path_len; i++)
			if (r->path[i].stage + 1 > stages)
				stages = r->path[i].stage + 1;
		double *on = capsim_xcalloc((size_t)stages, sizeof *on);
		for (size_t i = 0; i < r->path_len; i++)
			if (r->path[i].kind == CAPSIM_PATH_COMPUTE)
				on[r->path[i].stage] +=
					(double)(r->path[i].end_ns - r->path[i].start_ns) * 1e-9;
		printf("    compute on it by stage:");
		for (int t = 0; t < 3 && t < stages; t++) {
			int best = 0;
			for (int k = 1; k < stages; k++)
				if (on[k] > on[best])
					best = k;
			if (!(on[best] > 0))
				break;
			char v[32];
			capsim_units_format(on[best], CAPSIM_DIM_SECONDS, v, sizeof v);
			printf("%s stage %d %s", t ? "," : "", best, v);
			on[best] = -1;
		}
		printf("\n");
		free(on);
	}
	/* all of it up to 16 segments; else the first and last 6 and, between
	 * them, the longest (the steady state of the busiest stage) */
	size_t head = 6, tail = 6, longest = 0;
	for (size_t i = 1; i < r->path_len; i++)
		if (r->path[i].end_ns - r->path[i].start_ns >
		    r->path[longest].end_ns - r->path[longest].start_ns)
			longest = i;
	int eliding = 0;
	for (size_t i = 0; i < r->path_len; i++) {
		int show = r->path_len <= 16 || i < head || i >= r->path_len - tail || i == longest;
		if (!show) {
			if (!eliding)
				printf("    ...\n");
			eliding = 1;
			continue;
		}
		eliding = 0;
		const capsim_path_segment *g = &r->path[i];
		char words[96], at[32], dur[32];
		path_words(g, words, sizeof words);
		capsim_units_format((double)g->start_ns * 1e-9, CAPSIM_DIM_SECONDS, at, sizeof at);
		capsim_units_format((double)(g->end_ns - g->start_ns) * 1e-9, CAPSIM_DIM_SECONDS,
				    dur, sizeof dur);
		printf("    at %-10s %-40s %12s\n", at, words, dur);
	}
}

static json_t *path_json(const capsim_step *r)
{
	json_t *a = json_array();
	for (size_t i = 0; i < r->path_len; i++) {
		const capsim_path_segment *g = &r->path[i];
		json_t *o = json_pack("{s:s, s:i, s:f, s:f}", "kind", path_kinds[g->kind], "stage",
				      g->stage, "start_s", (double)g->start_ns * 1e-9, "time_s",
				      (double)(g->end_ns - g->start_ns) * 1e-9);
		if (g->kind == CAPSIM_PATH_TRANSFER)
			json_object_set_new(o, "to_stage", json_integer(g->to_stage));
		if (g->kind == CAPSIM_PATH_COMPUTE) {
			json_object_set_new(o, "forwards", json_integer(g->forwards));
			json_object_set_new(o, "backwards", json_integer(g->backwards));
			json_object_set_new(o, "first_microbatch", json_integer(g->first_microbatch));
			json_object_set_new(o, "last_microbatch", json_integer(g->last_microbatch));
		}
		json_array_append_new(a, o);
	}
	return a;
}

/* the larger of the two node types' peaks, and whether both fit */
static double peak_bytes(const capsim_step *r)
{
	double p = r->memory.peak.total_bytes;
	if (r->has_mix && r->mix_memory.peak.total_bytes > p)
		p = r->mix_memory.peak.total_bytes;
	return p;
}

static int fits(const capsim_step *r)
{
	return r->memory.fits && (!r->has_mix || r->mix_memory.fits);
}

static void print_text(const capsim_scenario *s, const capsim_step *r)
{
	char pct[64];
	long mixed = s->has_mix ? (long)s->mix_nodes * s->node.gpus : 0;
	printf("%s: %ld x %s", s->name, capsim_scenario_gpus(s) - mixed, s->gpu.e.id);
	if (mixed)
		printf(" + %ld x %s", mixed, s->mix_gpu.e.id);
	printf(", %s, tp %d pp %d cp %d dp %d ep %d, %d micro-batches of %d\n", s->model.e.id,
	       s->tp, s->pp, s->cp, s->dp, s->ep, r->microbatches, s->micro_batch);
	if (s->gpu.cal.profile[0] || (s->has_mix && s->mix_gpu.cal.profile[0]))
		printf("calibrated: %s%s%s\n", s->gpu.cal.profile[0] ? s->gpu_profile : "",
		       s->gpu.cal.profile[0] && s->has_mix && s->mix_gpu.cal.profile[0] ? ", " : "",
		       s->has_mix && s->mix_gpu.cal.profile[0] ? s->mix_profile : "");
	line("step time", r->step_time_s, CAPSIM_DIM_SECONDS, NULL);
	snprintf(pct, sizeof pct, "(stage %d, %d micro-batches)", r->critical_stage,
		 r->microbatches);
	line("  compute", r->compute_s, CAPSIM_DIM_SECONDS, pct);
	if (r->straggler_stage >= 0)
		printf("    %-22s %11.3gx on stage %d of replica %d\n", "straggler",
		       s->straggler, r->straggler_stage, s->straggler_replica);
	if (r->replica_classes > 1)
		printf("    %-22s %12d classes simulated; the slowest is replica %d, stage %d on %s\n",
		       "replicas", r->replica_classes, r->critical_replica, r->critical_stage,
		       r->critical_kind ? s->mix_gpu.e.id : s->gpu.e.id);
	line("  exposed comm TP", r->exposed_comm_tp_s, CAPSIM_DIM_SECONDS, NULL);
	print_link("collective", &r->busiest_tp);
	if (s->cp > 1)
		line("  exposed comm CP", r->exposed_comm_cp_s, CAPSIM_DIM_SECONDS, NULL);
	if (s->pp > 1)
		line("  exposed comm PP", r->exposed_comm_pp_s, CAPSIM_DIM_SECONDS, NULL);
	line("  exposed comm DP", r->exposed_comm_dp_s, CAPSIM_DIM_SECONDS, NULL);
	print_link(s->zero >= 3 ? "layer collective" : "gradient sync", &r->busiest_dp);
	if (s->ep > 1)
		line("  exposed comm EP", r->exposed_comm_ep_s, CAPSIM_DIM_SECONDS, NULL);
	if (s->pp > 1)
		line("  pipeline bubble", r->bubble_s, CAPSIM_DIM_SECONDS, NULL);
	line("  optimizer step", r->optimizer_s, CAPSIM_DIM_SECONDS, NULL);
	if (s->has_shared_storage || s->has_local_storage)
		line("  data stall", r->data_stall_s, CAPSIM_DIM_SECONDS, NULL);
	printf("  %-24s %12.4g\n", "tokens/s", r->tokens_per_s);
	printf("  %-24s %11.1f%%\n", "MFU", 100 * r->mfu);
	snprintf(pct, sizeof pct, "of %.4g GB (%s)", r->memory.capacity_bytes / 1e9,
		 r->memory.fits ? "fits" : "DOES NOT FIT");
	line("peak memory per GPU", r->memory.peak.total_bytes, CAPSIM_DIM_BYTES, pct);
	if (r->has_mix) {
		snprintf(pct, sizeof pct, "of %.4g GB (%s)", r->mix_memory.capacity_bytes / 1e9,
			 r->mix_memory.fits ? "fits" : "DOES NOT FIT");
		char label[96];
		snprintf(label, sizeof label, "  on %s", s->mix_gpu.e.id);
		line(label, r->mix_memory.peak.total_bytes, CAPSIM_DIM_BYTES, pct);
	}
	snprintf(pct, sizeof pct, "(%.0f steps)", r->steps);
	line("time to train", r->time_to_train_s, CAPSIM_DIM_SECONDS, pct);
}

static json_t *result_json(const capsim_catalog *cat, const capsim_scenario *s,
			   const capsim_step *r)
{
	json_t *o = capsim_cli_json_head(cat, s);
#define NUM(k, v) json_object_set_new(o, k, json_real(v))
	NUM("step_time_s", r->step_time_s);
	NUM("tokens_per_s", r->tokens_per_s);
	NUM("mfu", r->mfu);
	NUM("peak_mem_per_gpu_bytes", peak_bytes(r));
	json_object_set_new(o, "fits_in_memory", json_boolean(fits(r)));
	NUM("compute_s", r->compute_s);
	NUM("exposed_comm_s", r->exposed_comm_s);
	NUM("exposed_comm_tp_s", r->exposed_comm_tp_s);
	NUM("exposed_comm_cp_s", r->exposed_comm_cp_s);
	NUM("exposed_comm_pp_s", r->exposed_comm_pp_s);
	NUM("exposed_comm_dp_s", r->exposed_comm_dp_s);
	NUM("exposed_comm_ep_s", r->exposed_comm_ep_s);
	NUM("bubble_s", r->bubble_s);
	NUM("data_stall_s", r->data_stall_s);
	NUM("time_to_train_s", r->time_to_train_s);
#undef NUM
	json_object_set_new(o, "straggler_stage", json_integer(r->straggler_stage));
	json_object_set_new(o, "replica_classes", json_integer(r->replica_classes));
	json_object_set_new(o, "critical_replica", json_integer(r->critical_replica));
	json_object_set_new(o, "critical_stage", json_integer(r->critical_stage));
	json_object_set_new(o, "critical_path", path_json(r));
	link_json(o, "busiest_link_tp", &r->busiest_tp);
	link_json(o, "busiest_link_dp", &r->busiest_dp);
	return o;
}

/* tokens/s per GPU here over tokens/s per GPU of the same job at data
 * parallelism 1 (weak scaling: micro-batches per replica kept); 0 if it
 * cannot be simulated */
static double scaling_efficiency(const capsim_scenario *s, const capsim_catalog *cat,
				 const capsim_step *r, capsim_diags *d)
{
	(void)cat;
	if (s->dp <= 1)
		return 1.0;
	long gpus1 = (long)s->tp * s->pp * s->cp;
	capsim_scenario *one = capsim_xmalloc(sizeof *one);
	*one = *s;
	one->nodes = (int)((gpus1 + s->node.gpus - 1) / s->node.gpus);
	one->dp = 1;
	one->global_batch = s->global_batch / s->dp;
	one->has_mix = 0; /* the reference replica: on the cluster's own nodes */
	one->mix_nodes = 0;
	one->straggler_replica = 0;
	double eff = 0.0;
	capsim_diags scratch = { 0 };
	capsim_fabric *f = capsim_fabric_build(one, &scratch);
	capsim_step r1;
	if (f && capsim_step_simulate(one, f, &r1, &scratch) == 0 && r1.tokens_per_s > 0)
		eff = (r->tokens_per_s / (double)capsim_scenario_gpus(s)) /
		      (r1.tokens_per_s / (double)gpus1);
	capsim_step_free(&r1);
	capsim_fabric_destroy(f);
	capsim_diags_free(&scratch);
	(void)d;
	free(one);
	return eff;
}

/* write the trace to FILE.tmp, then rename: nothing half-written */
static int write_trace(const char *path, const capsim_step *r)
{
	char tmp[4096];
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "capsim run: cannot write %s\n", tmp);
		return -1;
	}
	int rc = capsim_step_trace(r, f);
	if (fclose(f) != 0 || rc < 0 || rename(tmp, path) != 0) {
		remove(tmp);
		fprintf(stderr, "capsim run: writing %s failed\n", path);
		return -1;
	}
	return 0;
}

int capsim_cmd_run(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "set", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "trace", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	capsim_cli_sets sets = { 0 };
	int json = 0, verbose = 0, ch, status = CAPSIM_EXIT_USAGE;
	const char *trace = NULL;
	capsim_diags d = { 0 };
	capsim_catalog *cat = NULL;
	capsim_scenario *s = NULL;
	capsim_fabric *f = NULL;
	char def[4096];

	optind = 1;
	while ((ch = getopt_long(argc, argv, "s:jvt:h", lo, NULL)) != -1) {
		switch (ch) {
		case 's':
			if (capsim_cli_sets_add(&sets, optarg, &d) < 0)
				goto fail;
			break;
		case 'j': json = 1; break;
		case 'v': verbose = 1; break;
		case 't': trace = optarg; break;
		case 'h':
			help(stdout);
			status = CAPSIM_EXIT_OK;
			goto out;
		default:
			help(stderr);
			goto out;
		}
	}
	if (optind + 1 < argc) {
		fprintf(stderr, "capsim run: one SCENARIO at most\n");
		goto out;
	}
	const char *path = optind < argc ? argv[optind] : NULL;
	if (!path) {
		snprintf(def, sizeof def, "%s/scenarios/default.xml", capsim_catalog_default_root());
		path = def;
	}
	cat = capsim_catalog_create();
	if (capsim_catalog_load_root(cat, capsim_catalog_default_root(), NULL, &d) < 0)
		goto fail;
	s = capsim_xcalloc(1, sizeof *s);
	if (capsim_scenario_load(path, cat, sets.v, sets.n, s, &d) < 0)
		goto fail;
	f = capsim_fabric_build(s, &d);
	if (!f)
		goto fail;
	capsim_step r;
	if (capsim_step_simulate_ex(s, f, &capsim_knobs_fitted, trace != NULL, &r, &d) < 0) {
		capsim_diags_print(&d, stderr);
		status = CAPSIM_EXIT_FAILURE;
		goto out;
	}
	double eff = scaling_efficiency(s, cat, &r, &d);
	if (trace && write_trace(trace, &r) < 0) {
		capsim_step_free(&r);
		status = CAPSIM_EXIT_FAILURE;
		goto out;
	}
	if (json) {
		json_t *o = result_json(cat, s, &r);
		if (eff > 0)
			json_object_set_new(o, "scaling_efficiency", json_real(eff));
		json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
		fputc('\n', stdout);
		json_decref(o);
	} else {
		print_text(s, &r);
		if (eff > 0)
			printf("  %-24s %11.1f%%  (tokens/s per GPU against dp = 1)\n",
			       "scaling efficiency", 100 * eff);
		print_path(&r);
	}
	capsim_step_free(&r);
	if (verbose)
		fprintf(json ? stderr : stdout,
			"# run summary: events %llu, step %.9f s, seed %llu\n",
			(unsigned long long)r.events, r.step_time_s,
			(unsigned long long)s->seed);
	status = CAPSIM_EXIT_OK;
	goto out;
fail:
	capsim_diags_print(&d, stderr);
	status = CAPSIM_EXIT_USAGE;
out:
	capsim_fabric_destroy(f);
	free(s);
	capsim_catalog_free(cat);
	capsim_diags_free(&d);
	capsim_cli_sets_free(&sets);
	return status;
}
