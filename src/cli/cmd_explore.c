/* cmd_explore.c - `capsim explore [SCENARIO]`: the what-if explorer's
 * options; the screen is src/ui/screen.h. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "catalog.h"
#include "cli.h"
#include "screen.h"

enum { O_SET, O_NO_INTERVALS, O_HELP };
static const capsim_cli_opt explore_opts[] = {
	[O_SET] = { "set", 0, "PATH=VALUE", "override a scenario field before the view opens" },
	[O_NO_INTERVALS] = { "no-intervals", 0, NULL,
			     "deltas not marked against the model's own error" },
	[O_HELP] = { "help", 0, NULL, "this text" },
};
const capsim_cli_cmd capsim_cli_explore_cmd = {
	.name = "explore",
	.usage = "usage: capsim explore [SCENARIO] [--set PATH=VALUE]... [--no-intervals]\n",
	.about = "A full-screen what-if view of the scenario (default: scenarios/default.xml):\n"
		 "the knobs on the left, the results on the right, recomputed as a knob\n"
		 "changes (the same numbers as capsim run --set). Keys: up/down or j/k move,\n"
		 "left/right or -/+ change a value (choices cycle through the catalog),\n"
		 "Enter types one, u undoes, b pins the state as a baseline (deltas shown,\n"
		 "\"within error\" where a delta is inside capsim's own error),\n"
		 "s saves the scenario as XML, o optimises the layout (capsim optimize; u\n"
		 "undoes), ? help, q quits. Needs a terminal of 80x24 or more.\n",
	.opts = explore_opts,
	.n_opts = CAPSIM_CLI_N(explore_opts),
	.in_order = 1,
};

/* the options into sets; 0 to go on, 1 after --help, -1 after the message */
static int parse_args(int argc, char **argv, capsim_cli_sets *sets, int *intervals)
{
	capsim_diags d = { 0 };
	int c;
	optind = 1;
	while ((c = capsim_cli_next(&capsim_cli_explore_cmd, argc, argv)) != -1) {
		switch (c) {
		case O_SET:
			if (capsim_cli_sets_add(sets, optarg, &d) < 0) {
				capsim_diags_print(&d, stderr);
				capsim_diags_free(&d);
				return -1;
			}
			break;
		case O_NO_INTERVALS:
			*intervals = 0;
			break;
		case O_HELP:
			capsim_cli_help(&capsim_cli_explore_cmd, stdout);
			return 1;
		default:
			return -1;
		}
	}
	if (argc - optind > 1) {
		fprintf(stderr, "capsim explore: one SCENARIO at most\n");
		return -1;
	}
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		fprintf(stderr, "capsim explore: needs a terminal (standard input and output); "
			"capsim run --set gives the same numbers in a pipe\n");
		return -1;
	}
	return 0;
}

int capsim_cmd_explore(int argc, char **argv)
{
	capsim_cli_sets sets = { 0 };
	capsim_diags d = { 0 };
	int status = CAPSIM_EXIT_USAGE;
	int intervals = 1;
	int prc = parse_args(argc, argv, &sets, &intervals);
	if (prc != 0) {
		status = prc > 0 ? CAPSIM_EXIT_OK : CAPSIM_EXIT_USAGE;
		goto out;
	}
	capsim_catalog *cat;
	capsim_scenario *s;
	if (capsim_cli_load(optind < argc ? argv[optind] : NULL, &sets, &cat, &s, &d) < 0) {
		capsim_diags_print(&d, stderr);
		status = capsim_diags_runtime(&d) ? CAPSIM_EXIT_FAILURE : CAPSIM_EXIT_USAGE;
		goto out;
	}
	/* the error model, once: a bad or missing one is bad input (exit 2) */
	capsim_err_model *em = NULL;
	if (intervals && !(em = capsim_cli_err_model("explore", &d))) {
		capsim_diags_print(&d, stderr);
		free(s);
		capsim_catalog_free(cat);
		goto out;
	}
	int rc = capsim_ui_explore(cat, s, em);
	if (rc < 0)
		fprintf(stderr, "capsim explore: cannot start the screen\n");
	status = rc < 0 ? CAPSIM_EXIT_FAILURE : rc;
	capsim_err_model_free(em);
	capsim_catalog_free(cat);
out:
	capsim_cli_sets_free(&sets);
	capsim_diags_free(&d);
	return status;
}
