/* cli.h - private to src/cli: the subcommands and their shared helpers. */
#ifndef CAPSIM_CLI_H
#define CAPSIM_CLI_H

#include <getopt.h> /* optarg, optind: what capsim_cli_next leaves */
#include <stddef.h>
#include <stdio.h>

#include "diag.h"
#include "units.h"
#include "scenario.h"

enum {
	CAPSIM_EXIT_OK = 0,
	CAPSIM_EXIT_FAILURE = 1,
	CAPSIM_EXIT_USAGE = 2,
	CAPSIM_EXIT_ACCEPTANCE = 3
};

/* Each takes argv[0] = the command's name; returns an exit status. */
int capsim_cmd_catalog(int argc, char **argv);
int capsim_cmd_validate(int argc, char **argv);
int capsim_cmd_collective(int argc, char **argv);
int capsim_cmd_run(int argc, char **argv);
int capsim_cmd_scale(int argc, char **argv);
int capsim_cmd_sweep(int argc, char **argv);
int capsim_cmd_optimize(int argc, char **argv);
int capsim_cmd_query(int argc, char **argv);
int capsim_cmd_report(int argc, char **argv);
int capsim_cmd_explore(int argc, char **argv);
int capsim_cmd_import(int argc, char **argv);
int capsim_cmd_bom(int argc, char **argv);
int capsim_cmd_calibrate(int argc, char **argv);
int capsim_cmd_fit(int argc, char **argv);
int capsim_cmd_fit_errors(int argc, char **argv); /* capsim fit errors */
int capsim_cmd_verify(int argc, char **argv);
int capsim_cmd_expect(int argc, char **argv);

/* capsim verify --expect FILE: each of the n nccl-tests logs (hint: what the
 * command line says of them) against the thresholds of FILE, capsim expect's
 * JSON or rules; text or, with json, one JSON object on stdout. Returns 0
 * when every log has a row checked and none below its threshold, 3 when
 * one is (naming it), 2 when a file cannot be read. */
struct capsim_nccltests_hint;
int capsim_cli_verify_expect(const char *expect, const char *const *logs, size_t n,
			     const struct capsim_nccltests_hint *hint, int json);

const char *capsim_version_string(void);

/* The capsim command line: argv[1] names the command (or --help,
 * --version); returns the exit status, CAPSIM_EXIT_FAILURE when standard
 * output could not all be written. Call capsim_init() once per process
 * first; then it may be called again, with another vector (getopt starts
 * afresh each time). */
int capsim_main(int argc, char **argv);

/* The --set PATH=VALUE options of one command, with the buffers the pairs
 * point into. Start zeroed; capsim_cli_sets_free releases. */
typedef struct capsim_cli_sets {
	capsim_set *v;
	char **bufs;
	size_t n, cap;
} capsim_cli_sets;

/* Parse and keep one --set argument (borrowed: it must outlive the sets).
 * Returns 0, or -1 after adding the reason to d, keeping nothing. */
int capsim_cli_sets_add(capsim_cli_sets *s, const char *arg, capsim_diags *d);
void capsim_cli_sets_free(capsim_cli_sets *s);

/* The shipped catalog and the scenario at path (NULL: the catalog's
 * scenarios/default.xml) with the sets applied: what every command that
 * runs a scenario starts with. Returns 0 with *cat and *s owned by the
 * caller (capsim_catalog_free, free), or -1 after adding every problem to
 * d, with nothing to free. */
int capsim_cli_load(const char *path, const capsim_cli_sets *sets,
		    struct capsim_catalog **cat, struct capsim_scenario **s, capsim_diags *d);

/* capsim_cli_load through capsim_scenario_load_any_layout: the layout is
 * left to a search (optimize, run --layout auto), which checks each one it
 * tries. */
int capsim_cli_load_any_layout(const char *path, const capsim_cli_sets *sets,
			       struct capsim_catalog **cat, struct capsim_scenario **s,
			       capsim_diags *d);

/* The user's own catalog files, beside the shipped catalog: each --parts
 * FILE|DIR given before the command (capsim --parts my.xml run ...), then
 * each path of $CAPSIM_PARTS (colon-separated); a directory gives its *.xml
 * files in name order. capsim_cli_parts_add keeps one (at most 16; the
 * string is borrowed); capsim_cli_parts_reset forgets them. */
int capsim_cli_parts_add(const char *path);
void capsim_cli_parts_reset(void);

/* The --parts paths given on the command line (not $CAPSIM_PARTS), in order,
 * into *paths (borrowed); returns how many. */
size_t capsim_cli_parts_given(const char *const **paths);

/* The shipped catalog (capsim_catalog_default_root) and then the user's
 * files, references checked across all of them: a user part may name
 * shipped ones, but not take a shipped id. Returns 0, or -1 after adding
 * every problem to d. */
int capsim_cli_catalog(struct capsim_catalog *cat, capsim_diags *d);

/* The user's files alone, into a catalog that holds a root already (what
 * capsim_cli_catalog does after the shipped catalog). 0, or -1 after d. */
int capsim_cli_parts_load(struct capsim_catalog *cat, capsim_diags *d);

/* A count given on the command line: a decimal integer from 1 to max, or -1
 * for anything else (no atoi: an out-of-range value is refused, not
 * wrapped). */
int capsim_cli_count(const char *s, int max);

/* A quantity given on the command line as option opt of command cmd ("1 GiB",
 * "256 MiB"): its unit of dimension dim, a value from lo to hi and, with
 * whole, a whole number. Returns 0 with *out set, or -1 after printing
 * "capsim CMD: OPT: expected EXPECTED, found 'S'" (or the unit parser's
 * reason) on standard error; expected says the range for people ("a whole
 * number of bytes from 1 B to 16 TiB"). */
int capsim_cli_quantity(const char *cmd, const char *opt, const char *s, capsim_dim dim,
			double lo, double hi, int whole, const char *expected, double *out);

/* A new JSON object holding schema_version, capsim_version, inputs (each
 * file with its SHA-256: the scenario if any, then the catalog's files) and,
 * with a scenario, hardware_profile and seed. The caller owns it. */
struct json_t;
struct capsim_catalog;
struct capsim_scenario;
struct json_t *capsim_cli_json_head(const struct capsim_catalog *cat,
				    const struct capsim_scenario *s);

/* The shipped error model (capsim_err_model_load_root of the catalog's
 * root) whose bands command cmd's results carry, or NULL after adding to d,
 * for the model's file, why it cannot be read and how to go on without it:
 * a missing or malformed model is bad input (exit 2). The caller frees it. */
struct capsim_err_model;
struct capsim_err_model *capsim_cli_err_model(const char *cmd, capsim_diags *d);

/* ---- options: one table a command --------------------------------------------- */

/* One option of a command: its long name (without --), its short letter or
 * 0, the name of its argument ("FILE") or NULL when it takes none, and its
 * help: one line, or lines separated by '\n'. */
typedef struct capsim_cli_opt {
	const char *name;
	int letter;
	const char *arg;
	const char *help;
} capsim_cli_opt;

/* A command's options and its --help around them: usage lines, what it
 * does (NULL: nothing), the options, and what follows them (exit statuses;
 * NULL: nothing). in_order: options end at the first operand (for a
 * command whose operands are themselves commands or files with options). */
typedef struct capsim_cli_cmd {
	const char *name;                 /* "query", "calibrate import" */
	const char *usage;
	const char *about;
	const capsim_cli_opt *opts;
	size_t n_opts;
	const char *after;
	int in_order;
} capsim_cli_cmd;

/* The most options a command may have. */
#define CAPSIM_CLI_MAX_OPTS 48

/* The next option of argv by c's table (getopt_long's option array and
 * short-option string are made from it): its index in c->opts, with
 * optarg set where it takes an argument; -1 when the options end (optind
 * then at the first operand); -2 after printing on standard error
 * "capsim CMD: unrecognized option 'X'" (or that an option requires its
 * argument, or takes none) and "try 'capsim CMD --help'". Start a parse
 * with optind = 1. */
int capsim_cli_next(const capsim_cli_cmd *c, int argc, char **argv);

/* c's --help: its usage, what it does, its options one to a line (the
 * short letter, the long name and the argument's name, then the help
 * aligned in one column), and what follows. */
void capsim_cli_help(const capsim_cli_cmd *c, FILE *out);

/* Each command's option table (the command's own file holds it). */
extern const capsim_cli_cmd capsim_cli_catalog_cmd, capsim_cli_validate_cmd,
	capsim_cli_collective_cmd, capsim_cli_run_cmd, capsim_cli_scale_cmd, capsim_cli_sweep_cmd,
	capsim_cli_optimize_cmd, capsim_cli_query_cmd, capsim_cli_report_cmd,
	capsim_cli_explore_cmd, capsim_cli_import_hf_cmd, capsim_cli_import_cmdline_cmd,
	capsim_cli_import_slurm_cmd, capsim_cli_import_torchtitan_cmd, capsim_cli_bom_cmd, capsim_cli_calibrate_import_cmd,
	capsim_cli_calibrate_run_cmd, capsim_cli_fit_cmd, capsim_cli_verify_cmd,
	capsim_cli_fit_errors_cmd, capsim_cli_expect_cmd;

/* Every command's table, once each (dispatch.c): what the tests walk. */
extern const capsim_cli_cmd *const capsim_cli_cmds[];
extern const size_t capsim_cli_n_cmds;

/* the number of elements of a static array of options */
#define CAPSIM_CLI_N(a) (sizeof (a) / sizeof (a)[0])

#endif
