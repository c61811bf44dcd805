/* cmd_scale.c - `capsim scale SCENARIO --gpus LIST [--weak|--strong]`: the
 * same job at several cluster sizes, TP, PP and CP fixed and data parallelism
 * growing; step time, throughput and scaling efficiency per size. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "cli.h"
#include "fabric.h"
#include "scenario.h"
#include "step.h"
#include "xalloc.h"

static void help(FILE *out)
{
	fprintf(out,
		"usage: capsim scale SCENARIO --gpus N,N,... [--weak | --strong]\n"
		"                    [--csv FILE] [--set PATH=VALUE]...\n"
		"\n"
		"Run the scenario's job at each GPU count: TP, PP and CP stay, data\n"
		"parallelism grows. --weak (default) grows the global batch with it (the\n"
		"micro-batches per replica stay); --strong keeps the global batch, so each\n"
		"replica gets fewer micro-batches. Prints step time, tokens/s and scaling\n"
		"efficiency (tokens/s per GPU against the smallest size); --csv also writes\n"
		"them to FILE.\n");
}

static int parse_list(const char *s, long *v, int max)
{
	int n = 0;
	const char *p = s;
	while (*p && n < max) {
		char *end;
		long x = strtol(p, &end, 10);
		if (end == p || x <= 0)
			return -1;
		v[n++] = x;
		if (*end == ',')
			end++;
		else if (*end)
			return -1;
		p = end;
	}
	return n;
}

int capsim_cmd_scale(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "gpus", required_argument, NULL, 'g' },
		{ "weak", no_argument, NULL, 'w' },
		{ "strong", no_argument, NULL, 'S' },
		{ "csv", required_argument, NULL, 'c' },
		{ "set", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	long sizes[64];
	int n_sizes = 0, strong = 0, ch, status = CAPSIM_EXIT_USAGE;
	const char *csv = NULL;
	capsim_cli_sets sets = { 0 };
	capsim_set *with = NULL; /* the user's sets, then nodes and batch */
	capsim_diags d = { 0 };
	capsim_catalog *cat = NULL;
	capsim_scenario *base = NULL, *s = NULL;
	FILE *out = NULL;
	char tmp[4096] = "";

	optind = 1;
	while ((ch = getopt_long(argc, argv, "g:wSc:s:h", lo, NULL)) != -1) {
		switch (ch) {
		case 'g':
			n_sizes = parse_list(optarg, sizes, 64);
			if (n_sizes <= 0) {
				fprintf(stderr, "capsim scale: --gpus wants N,N,... found '%s'\n", optarg);
				goto out;
			}
			break;
		case 'w': strong = 0; break;
		case 'S': strong = 1; break;
		case 'c': csv = optarg; break;
		case 's':
			if (capsim_cli_sets_add(&sets, optarg, &d) < 0)
				goto fail;
			break;
		case 'h': help(stdout); status = CAPSIM_EXIT_OK; goto out;
		default: help(stderr); goto out;
		}
	}
	if (optind + 1 != argc || n_sizes == 0) {
		fprintf(stderr, "capsim scale: SCENARIO and --gpus are required\n");
		help(stderr);
		goto out;
	}
	cat = capsim_catalog_create();
	if (capsim_catalog_load_root(cat, capsim_catalog_default_root(), NULL, &d) < 0)
		goto fail;
	base = capsim_xcalloc(1, sizeof *base);
	if (capsim_scenario_load(argv[optind], cat, sets.v, sets.n, base, &d) < 0)
		goto fail;
	with = capsim_xcalloc(sets.n + 2, sizeof *with);
	if (sets.n)
		memcpy(with, sets.v, sets.n * sizeof *with);
	if (csv) {
		snprintf(tmp, sizeof tmp, "%s.tmp", csv);
		out = fopen(tmp, "w");
		if (!out) {
			fprintf(stderr, "capsim scale: cannot write %s\n", tmp);
			status = CAPSIM_EXIT_FAILURE;
			goto out;
		}
		fprintf(out, "gpus,nodes,dp,global_batch,step_time_s,tokens_per_s,"
			     "tokens_per_s_per_gpu,mfu,scaling_efficiency,fits_in_memory\n");
	}
	int G = base->node.gpus;
	double per_replica = base->global_batch / base->dp; /* sequences */
	double ref = 0.0;
	printf("# %s, %s scaling: tp %d, pp %d, cp %d fixed\n", base->name,
	       strong ? "strong" : "weak", base->tp, base->pp, base->cp);
	printf("%8s %6s %6s %10s %12s %14s %12s %7s %9s\n", "GPUs", "nodes", "dp",
	       "batch", "step (s)", "tokens/s", "tokens/s/GPU", "MFU", "scaling");
	for (int i = 0; i < n_sizes; i++) {
		long gpus = sizes[i];
		long model = (long)base->tp * base->pp * base->cp;
		if (gpus % G || gpus % model) {
			capsim_diags_add_at(&d, "--gpus",
					    "%ld GPUs is not a whole number of %d-GPU nodes and "
					    "of tp x pp x cp = %ld",
					    gpus, G, model);
			goto fail;
		}
		long dp = gpus / model;
		double batch = strong ? base->global_batch : per_replica * dp;
		char nodes_s[32], batch_s[32];
		snprintf(nodes_s, sizeof nodes_s, "%ld", gpus / G);
		snprintf(batch_s, sizeof batch_s, "%.0f", batch);
		with[sets.n] = (capsim_set){ "cluster.nodes", nodes_s };
		with[sets.n + 1] = (capsim_set){ "workload.global-batch", batch_s };
		free(s);
		s = capsim_xcalloc(1, sizeof *s);
		if (capsim_scenario_load(argv[optind], cat, with, sets.n + 2, s, &d) < 0)
			goto fail;
		capsim_fabric *f = capsim_fabric_build(s, &d);
		if (!f)
			goto fail;
		capsim_step r;
		int rc = capsim_step_simulate(s, f, &r, &d);
		capsim_fabric_destroy(f);
		capsim_step_free(&r);
		if (rc < 0)
			goto fail;
		double per_gpu = r.tokens_per_s / (double)gpus;
		if (i == 0)
			ref = per_gpu;
		double eff = per_gpu / ref;
		printf("%8ld %6ld %6ld %10.0f %12.4f %14.4g %12.4g %6.1f%% %8.1f%%%s\n", gpus,
		       gpus / G, dp, batch, r.step_time_s, r.tokens_per_s, per_gpu, 100 * r.mfu,
		       100 * eff, r.memory.fits ? "" : "  (does not fit)");
		fflush(stdout);
		if (out)
			fprintf(out, "%ld,%ld,%ld,%.0f,%.9g,%.9g,%.9g,%.6f,%.6f,%s\n", gpus,
				gpus / G, dp, batch, r.step_time_s, r.tokens_per_s, per_gpu,
				r.mfu, eff, r.memory.fits ? "true" : "false");
	}
	if (out) {
		int bad = fclose(out) != 0;
		out = NULL;
		if (bad || rename(tmp, csv) != 0) {
			fprintf(stderr, "capsim scale: writing %s failed\n", csv);
			remove(tmp);
			status = CAPSIM_EXIT_FAILURE;
			goto out;
		}
	}
	status = CAPSIM_EXIT_OK;
	goto out;
fail:
	capsim_diags_print(&d, stderr);
	status = CAPSIM_EXIT_USAGE;
out:
	if (out) {
		fclose(out);
		remove(tmp);
	}
	free(s);
	free(base);
	capsim_catalog_free(cat);
	capsim_diags_free(&d);
	free(with);
	capsim_cli_sets_free(&sets);
	return status;
}
