/* dispatch.c - the capsim command line: git-style subcommands over the
 * library, as a function main() calls (and fuzz_cli, many times in one
 * process). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

typedef capsim_cli_command command;

const capsim_cli_command capsim_cli_commands[] = {
	{ "run", capsim_cmd_run, "predict one training step: step time, tokens/s, MFU, memory, time to train" },
	{ "bom", capsim_cmd_bom, "the cluster's bill of materials: nodes, switches, cables, racks, priced where the catalog can, and the capex" },
	{ "sweep", capsim_cmd_sweep, "evaluate every point of a sweep file (axes over --set paths) into an SQLite results store; threads, MPI ranks, resume" },
	{ "query", capsim_cmd_query, "read a sweep's results back: list sweeps, filter points, the best by a metric, a Pareto front; table, CSV or JSON" },
	{ "import", capsim_cmd_import, "bring a workload in: a Hugging Face config.json becomes a models file for --parts, a launch line, Slurm script or torchtitan config a scenario" },
	{ "explore", capsim_cmd_explore, "the what-if explorer: a full-screen view of the knobs and the results, recomputed as a knob changes" },
	{ "report", capsim_cmd_report, "compare candidate designs for one workload: an HTML and Markdown report with figures, the summary as CSV" },
	{ "optimize", capsim_cmd_optimize, "search TP, PP, CP, EP, ZeRO, micro-batch, recomputation and overlap for the best layout of the scenario's model on its cluster" },
	{ "scale", capsim_cmd_scale, "the same job at several GPU counts: step time, throughput, scaling efficiency" },
	{ "collective", capsim_cmd_collective, "simulate one NCCL collective (or a sweep of sizes) on a scenario's fabric" },
	{ "calibrate", capsim_cmd_calibrate, "run calibrate/'s programs; store their measurements in an SQLite database (run, import); where a probe is (path)" },
	{ "verify", capsim_cmd_verify, "acceptance checks: nccl-tests logs and measurements against the scenario's hardware" },
	{ "expect", capsim_cmd_expect, "monitoring baselines: expected nccl-tests bandwidths, step time and power as Prometheus alerting rules, tables or JSON" },
	{ "fit", capsim_cmd_fit, "fit a calibrated hardware profile to a measurement database; fit errors: the error model to capsim's validation residuals" },
	{ "catalog", capsim_cmd_catalog, "list the catalog: gpus, nics, switches, nvswitches, storage, nodes, clouds, facilities, models" },
	{ "validate", capsim_cmd_validate, "check scenario, hardware and model files; show what a scenario resolves to" },
};

const size_t capsim_cli_n_commands = sizeof capsim_cli_commands / sizeof capsim_cli_commands[0];
#define commands capsim_cli_commands

static void usage(FILE *out)
{
	fprintf(out,
		"usage: capsim [--version] [--help] [--parts FILE|DIR]... COMMAND [ARGS]\n"
		"\n"
		"capsim predicts what a GPU cluster does with a training workload.\n"
		"\n"
		"commands:\n");
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(out,
		"\n"
		"'capsim COMMAND --help' describes a command, and every command takes\n"
		"--version. 'capsim help --man' writes the manual page capsim(1) and\n"
		"'capsim help --completion bash|zsh' the shell's completion script.\n"
		"--parts adds catalog files of your own (hardware, models) beside the\n"
		"shipped catalog, as does $CAPSIM_PARTS (paths separated by ':'); capsim\n"
		"import hf makes a model file from a config.\n"
		"Exit status: 0 success, 1 failure while running, 2 bad usage or input,\n"
		"3 failed acceptance check.\n");
}

/* every command's option table; a command with subcommands has one for each */
const capsim_cli_cmd *const capsim_cli_cmds[] = {
	&capsim_cli_catalog_cmd, &capsim_cli_validate_cmd, &capsim_cli_collective_cmd,
	&capsim_cli_run_cmd, &capsim_cli_scale_cmd, &capsim_cli_sweep_cmd,
	&capsim_cli_optimize_cmd, &capsim_cli_query_cmd, &capsim_cli_report_cmd,
	&capsim_cli_explore_cmd, &capsim_cli_import_hf_cmd, &capsim_cli_import_cmdline_cmd,
	&capsim_cli_import_slurm_cmd, &capsim_cli_import_torchtitan_cmd, &capsim_cli_bom_cmd, &capsim_cli_calibrate_import_cmd,
	&capsim_cli_calibrate_run_cmd, &capsim_cli_calibrate_path_cmd, &capsim_cli_fit_cmd,
	&capsim_cli_verify_cmd, &capsim_cli_expect_cmd,
	&capsim_cli_fit_errors_cmd,
};
const size_t capsim_cli_n_cmds = sizeof capsim_cli_cmds / sizeof capsim_cli_cmds[0];

/* The command's status, or 1 when what it printed did not all reach
 * standard output (a full disk, a closed pipe): a truncated report must not
 * pass for a whole one. */
static int finish(int status)
{
	errno = 0;
	int flush_failed = fflush(stdout) != 0;
	int e = errno;
	if (flush_failed || ferror(stdout)) {
		fprintf(stderr, "capsim: writing standard output: %s\n",
			strerror(flush_failed && e ? e : EIO));
		return status != CAPSIM_EXIT_OK ? status : CAPSIM_EXIT_FAILURE;
	}
	return status;
}

/* "'X' is not a capsim command", with the nearest command where one is
 * near, on standard error */
static void not_a_command(const char *cmd)
{
	const char *names[sizeof commands / sizeof commands[0] + 2];
	size_t n = 0;
	for (; n < capsim_cli_n_commands; n++)
		names[n] = commands[n].name;
	names[n++] = "help";
	names[n++] = "version";
	const char *near = capsim_cli_nearest(cmd, names, n);
	fprintf(stderr, "capsim: '%s' is not a capsim command", cmd);
	if (near)
		fprintf(stderr, "; did you mean '%s'?\n", near);
	else
		fprintf(stderr, "; see 'capsim --help'\n");
}

/* capsim help [COMMAND | --man | --completion bash|zsh]: argv[1] is "help"
 * (or --help, -h) */
static int help(int argc, char **argv)
{
	if (argc <= 2 || strcmp(argv[1], "help") != 0) {
		usage(stdout);
		return CAPSIM_EXIT_OK;
	}
	if (strcmp(argv[2], "--man") == 0 && argc == 3) {
		capsim_cli_write_man(stdout);
		return CAPSIM_EXIT_OK;
	}
	if (strcmp(argv[2], "--completion") == 0) {
		const char *shell = argc == 4 ? argv[3] : "";
		if (capsim_cli_write_completion(shell, stdout) == 0)
			return CAPSIM_EXIT_OK;
		fprintf(stderr, "capsim help: --completion: expected bash or zsh, found '%s'\n",
			shell);
		return CAPSIM_EXIT_USAGE;
	}
	char *sub[] = { argv[2], "--help", NULL };
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (strcmp(commands[i].name, argv[2]) == 0)
			return commands[i].run(2, sub);
	not_a_command(argv[2]);
	return CAPSIM_EXIT_USAGE;
}

static int dispatch(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return CAPSIM_EXIT_USAGE;
	}
	/* options of every command, before it: the user's catalog files */
	while (argc >= 2 && strncmp(argv[1], "--parts", 7) == 0) {
		const char *v = argv[1][7] == '=' ? argv[1] + 8 : argv[1][7] == '\0' && argc >= 3 ?
				argv[2] : NULL;
		if (!v || !*v || (argv[1][7] != '=' && argv[1][7] != '\0')) {
			fprintf(stderr, "capsim: --parts: expected a catalog file or directory\n");
			return CAPSIM_EXIT_USAGE;
		}
		if (capsim_cli_parts_add(v) < 0) {
			fprintf(stderr, "capsim: --parts: at most 16\n");
			return CAPSIM_EXIT_USAGE;
		}
		int used = argv[1][7] == '=' ? 1 : 2;
		argv[used] = argv[0];
		argv += used;
		argc -= used;
	}
	if (argc < 2) {
		usage(stderr);
		return CAPSIM_EXIT_USAGE;
	}
	const char *cmd = argv[1];
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 ||
	    strcmp(cmd, "help") == 0)
		return help(argc, argv);
	/* capsim COMMAND --version: also the commands whose first operand is a
	 * subcommand (calibrate, import); the others answer it anywhere */
	if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0 ||
	    (argc >= 3 && strcmp(argv[2], "--version") == 0)) {
		printf("capsim %s\n", capsim_version_string());
		return CAPSIM_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (strcmp(commands[i].name, cmd) == 0)
			return commands[i].run(argc - 1, argv + 1);
	not_a_command(cmd);
	return CAPSIM_EXIT_USAGE;
}

/* getopt keeps state between parses: where it is in a cluster of short
 * options ("-jv") and which arguments it has permuted, pointing into the
 * argument vector it last saw. A command's own optind = 1 keeps that state;
 * optind = 0 makes glibc start afresh. So that capsim_main may run again in
 * one process with another vector, each run starts from a fresh getopt. */
static void reset_getopt(void)
{
	char arg0[] = "capsim";
	char *none[] = { arg0, NULL };
	optind = 0;
	opterr = 1;
	(void)getopt(1, none, "");
	optind = 1;
}

int capsim_main(int argc, char **argv)
{
	reset_getopt();
	capsim_cli_parts_reset();
	capsim_scenario_warnings_to(stderr);
	return finish(dispatch(argc, argv));
}
