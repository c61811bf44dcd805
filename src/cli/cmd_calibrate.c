/* cmd_calibrate.c - capsim calibrate import: calibrate/'s runs into the
 * measurement store (src/store/measure.h). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "measure.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: capsim calibrate import FILE.jsonl... --db DB.sqlite\n"
		"\n"
		"Stores runs of calibrate/'s programs (JSON lines) in an SQLite database,\n"
		"creating it where absent. Each file goes in whole or not at all; a file\n"
		"already stored (same SHA-256) is refused.\n"
		"\n"
		"  --db FILE   the measurement database\n");
}

static int import(int argc, char **argv)
{
	const char *db = NULL;
	static const struct option opts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	optind = 1;
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'd': db = optarg; break;
		case 'h': usage(stdout); return CAPSIM_EXIT_OK;
		default: usage(stderr); return CAPSIM_EXIT_USAGE;
		}
	}
	if (!db || optind >= argc) {
		fprintf(stderr, "capsim calibrate import: %s\n",
			!db ? "--db is required" : "no file to import");
		usage(stderr);
		return CAPSIM_EXIT_USAGE;
	}
	int status = CAPSIM_EXIT_OK;
	for (int i = optind; i < argc; i++) {
		capsim_diags d = { 0 };
		capsim_import_stats st;
		if (capsim_measure_import(argv[i], db, &st, &d) < 0) {
			capsim_diags_print(&d, stderr);
			status = CAPSIM_EXIT_USAGE;
		} else {
			printf("%s: run %lld in %s: %zu GEMMs (%zu without an algorithm), "
			       "%zu copy, %zu checks, %zu power\n", argv[i], (long long)st.run_id,
			       db, st.gemm, st.gemm_failed, st.copy, st.checks, st.power);
		}
		capsim_diags_free(&d);
	}
	return status;
}

int capsim_cmd_calibrate(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? CAPSIM_EXIT_USAGE : CAPSIM_EXIT_OK;
	}
	if (!strcmp(argv[1], "import"))
		return import(argc - 1, argv + 1);
	fprintf(stderr, "capsim calibrate: no subcommand '%s'; see 'capsim calibrate --help'\n",
		argv[1]);
	return CAPSIM_EXIT_USAGE;
}
