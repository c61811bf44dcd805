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

/* Where an input named on the command line is. name itself when it exists,
 * holds a '/' or is "-"; else the first file of ./NAME.xml, then, under the
 * catalog's root (the source tree of a build, share/capsim when installed),
 * scenarios/NAME, scenarios/NAME.xml, and the same in scenarios/sweeps and
 * scenarios/report. Returns name or buf (n bytes, written), or NULL after
 * adding to d, at name, every place it looked. */
const char *capsim_cli_find_input(const char *name, char *buf, size_t n, capsim_diags *d);

/* The kind of a file capsim reads that is not its XML, told from its name
 * and first bytes (validate_more.c): "store" (SQLite), "measurements"
 * (.jsonl), "error-model" (JSON of that format), "hf-config" (other JSON),
 * "residuals" (.csv), "torchtitan" (.toml), "launch" (.sh, .bash, .sbatch,
 * .slurm, .yaml, .yml, or #!), "nccl-tests" (.log, .txt, .out, or a log's
 * nThread header); NULL for XML and anything else. */
const char *capsim_cli_other_kind(const char *path, const char *buf, size_t len);

/* Whether path is a regular file that starts with SQLite's header: a store,
 * opened as a database rather than read whole (at any size). Reads 16 bytes
 * of a regular file only (never a FIFO's). */
int capsim_cli_is_store(const char *path);

/* Whether path is read as XML, one of capsim's own files: its first
 * non-blank byte is '<', it has none (the XML reader says the document is
 * empty), or its name ends in .xml. */
int capsim_cli_is_xml(const char *path, const char *buf, size_t len);

/* Check the file path (its bytes buf, len) of kind as the command that takes
 * it does (import hf, import slurm, import torchtitan, verify, calibrate
 * import into a private database, fit errors, query); 0, or -1 with every
 * problem in d. */
int capsim_cli_validate_other(const char *kind, const char *path, const char *buf, size_t len,
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

/* The CPUs this process may run on (its affinity mask, as nproc counts
 * them: under mpirun's binding, a rank's own), from 1 to max: the threads
 * a command runs on where -j is not given. */
int capsim_cli_cpus(int max);

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

/* The index of the option named name (without --) in c's table, or -1. */
int capsim_cli_find_opt(const capsim_cli_cmd *c, const char *name);

/* Every command also takes --version: capsim_cli_next answers it as the
 * index of the command's "help" option, and the capsim_cli_help that
 * follows prints "capsim VERSION" on standard output instead of the help
 * (a table without "help" gets the version printed and -2). */

/* The edit distance of a and b (insertions, deletions, substitutions and
 * two neighbouring letters swapped, each 1); words over 64 letters are at
 * (size_t)-1 from everything. */
size_t capsim_cli_edit_distance(const char *a, const char *b);

/* The name of names[0..n) nearest to word, when near enough to be what
 * the user meant (at most 2 edits, fewer than half the name's letters),
 * else NULL: what "did you mean" offers. */
const char *capsim_cli_nearest(const char *word, const char *const *names, size_t n);

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
	capsim_cli_calibrate_run_cmd, capsim_cli_calibrate_path_cmd, capsim_cli_fit_cmd,
	capsim_cli_verify_cmd, capsim_cli_fit_errors_cmd, capsim_cli_expect_cmd;

/* A command of capsim's first word: its name, what runs it, and its line in
 * capsim --help. */
typedef struct capsim_cli_command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
} capsim_cli_command;

/* capsim's commands in the order --help lists them (dispatch.c). */
extern const capsim_cli_command capsim_cli_commands[];
extern const size_t capsim_cli_n_commands;

/* capsim(1), the manual page in roff, on out: every command with its
 * summary, then every table of capsim_cli_cmds with its usage, what it
 * does, each option and its help (the same text as --help), exit statuses
 * and the environment (manpage.c). */
void capsim_cli_write_man(FILE *out);

/* The completion script for shell ("bash": a function _capsim registered
 * with complete -F; "zsh": a #compdef capsim function), from the same
 * tables: commands, subcommands, each command's options. Returns 0, or -1
 * for another shell, writing nothing. */
int capsim_cli_write_completion(const char *shell, FILE *out);

/* Every command's table, once each (dispatch.c): what the tests walk. */
extern const capsim_cli_cmd *const capsim_cli_cmds[];
extern const size_t capsim_cli_n_cmds;

/* the number of elements of a static array of options */
#define CAPSIM_CLI_N(a) (sizeof (a) / sizeof (a)[0])

#endif
