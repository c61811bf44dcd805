/* cmd_fit.c - capsim fit: a calibrated hardware profile from the
 * measurement store (src/fit/fit.h), written atomically. */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "catalog.h"
#include "cli.h"
#include "fit.h"
#include "xalloc.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: capsim fit --db DB.sqlite --out FILE.xml [--gpu ID] [--runs ID,...]\n"
		"                  [--name NAME] [--force] [--verbose]\n"
		"\n"
		"Fits a calibrated hardware profile to the runs of a measurement database\n"
		"(capsim calibrate import): GEMM efficiency per dtype against FLOP and\n"
		"arithmetic intensity, copy bandwidth, PCIe and NCCL latency and bandwidth,\n"
		"power and clocks. Prints the residuals, then writes FILE atomically.\n"
		"What the runs did not measure is left out and keeps its datasheet default.\n"
		"\n"
		"  --db FILE      the measurement database (read only)\n"
		"  --out FILE     the profile to write (hardware/calibrated/NAME.xml)\n"
		"  --gpu ID       the catalog GPU measured; default: inferred from the runs\n"
		"  --runs LIST    run ids to fit, comma-separated; default: every run\n"
		"  --name NAME    the profile's name; default: GPU id and date\n"
		"  --force        replace FILE if it exists\n"
		"  --verbose      every GEMM point with its errors\n"
		"\n"
		"Exit status: 0 written, 1 the file could not be written, 2 bad usage or a bad\n"
		"or empty database.\n");
}

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
	int force, verbose;
} fit_args;

/* 0, CAPSIM_EXIT_OK after --help (*done set), or CAPSIM_EXIT_USAGE */
static int parse_args(int argc, char **argv, fit_args *a, int *done)
{
	static const struct option opts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "out", required_argument, NULL, 'o' },
		{ "gpu", required_argument, NULL, 'g' },
		{ "runs", required_argument, NULL, 'r' },
		{ "name", required_argument, NULL, 'n' },
		{ "force", no_argument, NULL, 'f' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	optind = 1;
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'd': a->db = optarg; break;
		case 'o': a->out = optarg; break;
		case 'g': a->gpu = optarg; break;
		case 'n': a->name = optarg; break;
		case 'f': a->force = 1; break;
		case 'v': a->verbose = 1; break;
		case 'r':
			free(a->runs);
			a->runs = parse_runs(optarg, &a->n_runs);
			if (!a->runs)
				return CAPSIM_EXIT_USAGE;
			break;
		case 'h': usage(stdout); *done = 1; return CAPSIM_EXIT_OK;
		default: usage(stderr); return CAPSIM_EXIT_USAGE;
		}
	}
	if (!a->db || !a->out || optind < argc) {
		fprintf(stderr, "capsim fit: %s\n", !a->db ? "--db is required" :
						   !a->out ? "--out is required" :
							     "unexpected argument");
		usage(stderr);
		return CAPSIM_EXIT_USAGE;
	}
	struct stat st;
	if (!a->force && stat(a->out, &st) == 0) {
		fprintf(stderr, "capsim fit: %s exists; give --force to replace it\n", a->out);
		return CAPSIM_EXIT_USAGE;
	}
	return 0;
}

int capsim_cmd_fit(int argc, char **argv)
{
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
	if (capsim_catalog_load_root(cat, capsim_catalog_default_root(), NULL, &d) < 0) {
		status = CAPSIM_EXIT_USAGE;
	} else {
		capsim_fit_options o = { .gpu = a.gpu, .runs = a.runs, .n_runs = a.n_runs,
					 .name = a.name, .capsim = capsim_version_string() };
		if (capsim_fit(a.db, cat, &o, &p, &d) < 0)
			status = CAPSIM_EXIT_USAGE;
	}
	if (status == 0) {
		capsim_fit_report(&p, capsim_catalog_find(cat, CAPSIM_KIND_GPU, p.gpu), a.verbose,
				  stdout);
		if (capsim_profile_save(&p, a.out, a.force, &d) < 0)
			status = CAPSIM_EXIT_FAILURE;
		else
			printf("\nwrote %s\n", a.out);
	}
	capsim_diags_print(&d, stderr);
	capsim_diags_free(&d);
	capsim_profile_free(&p);
	capsim_catalog_free(cat);
	free(a.runs);
	return status;
}
