/* test_opts.c - every command's options come from one table (src/cli/cli.h):
 * through capsim_main, each command's --help lists every long option of its
 * table (with its letter and its argument's name), and an unknown option, a
 * missing argument and an argument given to an option that takes none each
 * exit 2 with a message naming the option and pointing at --help; every
 * command answers --version; a mistyped command or option gets the nearest
 * one offered; "-" is refused where a directory or database is needed; the
 * manual page holds every command and option of the tables. */
#include "testutil.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "eval.h"

typedef struct {
	int status;
	char *out, *err;
} ran;

/* the text of path; the caller frees it */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	char *text = calloc(1, 1 << 16);
	size_t n = fread(text, 1, (1 << 16) - 1, f);
	text[n] = '\0';
	fclose(f);
	return text;
}

/* capsim_main on cmd's words and then extra (NULL-ended), standard output
 * and error caught */
static ran run(const capsim_cli_cmd *cmd, const char *const *extra)
{
	char words[64], *argv[16] = { "capsim" };
	int argc = 1;
	snprintf(words, sizeof words, "%s", cmd->name);
	for (char *save = NULL, *w = strtok_r(words, " ", &save); w; w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	for (; *extra; extra++)
		argv[argc++] = (char *)(uintptr_t)*extra;
	argv[argc] = NULL;
	char out[] = "/tmp/capsim-opts-out-XXXXXX", err[] = "/tmp/capsim-opts-err-XXXXXX";
	int fo = mkstemp(out), fe = mkstemp(err);
	assert_true(fo >= 0 && fe >= 0);
	fflush(stdout);
	fflush(stderr);
	int so = dup(1), se = dup(2);
	dup2(fo, 1);
	dup2(fe, 2);
	ran r = { .status = capsim_main(argc, argv) };
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	close(fo);
	close(fe);
	r.out = slurp(out);
	r.err = slurp(err);
	unlink(out);
	unlink(err);
	return r;
}

static void ran_free(ran *r)
{
	free(r->out);
	free(r->err);
}

static void expect_in(const char *text, const char *needle, const char *cmd)
{
	if (!strstr(text, needle))
		fail_msg("capsim %s: expected\n%s\nto hold: %s", cmd, text, needle);
}

/* the tables themselves: every command once, names and letters each once,
 * within the parser's limit, every option with a help line */
static void test_tables(void **state)
{
	(void)state;
	assert_true(capsim_cli_n_cmds >= 15);
	for (size_t i = 0; i < capsim_cli_n_cmds; i++) {
		const capsim_cli_cmd *c = capsim_cli_cmds[i];
		assert_true(c->n_opts <= CAPSIM_CLI_MAX_OPTS);
		for (size_t j = 0; j < i; j++)
			assert_string_not_equal(capsim_cli_cmds[j]->name, c->name);
		for (size_t a = 0; a < c->n_opts; a++) {
			assert_non_null(c->opts[a].help);
			assert_true(c->opts[a].help[0] != '\0');
			for (size_t b = 0; b < a; b++) {
				assert_string_not_equal(c->opts[a].name, c->opts[b].name);
				assert_false(c->opts[a].letter &&
					     c->opts[a].letter == c->opts[b].letter);
			}
		}
	}
}

/* each command's --help: every option of its table, as the table has it */
static void test_help_lists_every_option(void **state)
{
	(void)state;
	static const char *const help[] = { "--help", NULL };
	for (size_t i = 0; i < capsim_cli_n_cmds; i++) {
		const capsim_cli_cmd *c = capsim_cli_cmds[i];
		ran r = run(c, help);
		if (r.status != 0)
			fail_msg("capsim %s --help: status %d\n%s", c->name, r.status, r.err);
		int help_seen = 0;
		for (size_t k = 0; k < c->n_opts; k++) {
			const capsim_cli_opt *o = &c->opts[k];
			char want[96];
			if (o->letter)
				snprintf(want, sizeof want, "-%c, --%s%s%s", o->letter, o->name,
					 o->arg ? " " : "", o->arg ? o->arg : "");
			else
				snprintf(want, sizeof want, "--%s%s%s", o->name, o->arg ? " " : "",
					 o->arg ? o->arg : "");
			expect_in(r.out, want, c->name);
			help_seen |= strcmp(o->name, "help") == 0;
		}
		assert_true(help_seen);
		ran_free(&r);
	}
}

/* an unknown option, a missing argument, an argument to an option that
 * takes none: exit 2, the option named, --help pointed at */
static void test_bad_options(void **state)
{
	(void)state;
	for (size_t i = 0; i < capsim_cli_n_cmds; i++) {
		const capsim_cli_cmd *c = capsim_cli_cmds[i];
		char want[160], try[96];
		snprintf(try, sizeof try, "try 'capsim %s --help'", c->name);

		static const char *const unknown[] = { "--no-such-option", NULL };
		ran r = run(c, unknown);
		assert_int_equal(r.status, 2);
		snprintf(want, sizeof want, "capsim %s: unrecognized option '--no-such-option'",
			 c->name);
		expect_in(r.err, want, c->name);
		expect_in(r.err, try, c->name);
		ran_free(&r);

		for (size_t k = 0; k < c->n_opts; k++) {
			const capsim_cli_opt *o = &c->opts[k];
			char opt[64];
			if (o->arg) {
				/* the option last, its argument missing */
				snprintf(opt, sizeof opt, "--%s", o->name);
				const char *const missing[] = { opt, NULL };
				r = run(c, missing);
				assert_int_equal(r.status, 2);
				snprintf(want, sizeof want, "capsim %s: option '--%s' requires an "
					 "argument (%s)", c->name, o->name, o->arg);
				expect_in(r.err, want, c->name);
				expect_in(r.err, try, c->name);
				ran_free(&r);
			} else if (strcmp(o->name, "help") != 0) {
				snprintf(opt, sizeof opt, "--%s=1", o->name);
				const char *const given[] = { opt, NULL };
				r = run(c, given);
				assert_int_equal(r.status, 2);
				snprintf(want, sizeof want, "capsim %s: option '--%s' takes no "
					 "argument", c->name, o->name);
				expect_in(r.err, want, c->name);
				ran_free(&r);
			}
		}
	}
}

/* a short letter not in the table */
static void test_bad_letter(void **state)
{
	(void)state;
	static const char *const bad[] = { "-Z", NULL };
	ran r = run(&capsim_cli_run_cmd, bad);
	assert_int_equal(r.status, 2);
	expect_in(r.err, "capsim run: invalid option '-Z'", "run");
	expect_in(r.err, "try 'capsim run --help'", "run");
	ran_free(&r);
}

/* every command, and every subcommand's table, answers --version on
 * standard output with status 0 */
static void test_version_everywhere(void **state)
{
	(void)state;
	static const char *const version[] = { "--version", NULL };
	for (size_t i = 0; i < capsim_cli_n_cmds; i++) {
		const capsim_cli_cmd *c = capsim_cli_cmds[i];
		assert_true(capsim_cli_find_opt(c, "help") >= 0);
		ran r = run(c, version);
		if (r.status != 0 || strncmp(r.out, "capsim ", 7) != 0 || r.err[0])
			fail_msg("capsim %s --version: status %d, out '%s', err '%s'", c->name,
				 r.status, r.out, r.err);
		expect_in(r.out, capsim_version_string(), c->name);
		ran_free(&r);
		/* after an option of the command too */
		static const char *const late[] = { "--help", "--version", NULL };
		r = run(c, late + 1);
		assert_int_equal(r.status, 0);
		ran_free(&r);
	}
	for (size_t i = 0; i < capsim_cli_n_commands; i++) {
		capsim_cli_cmd top = { .name = capsim_cli_commands[i].name };
		ran r = run(&top, version);
		if (r.status != 0 || strncmp(r.out, "capsim ", 7) != 0)
			fail_msg("capsim %s --version: status %d, err '%s'", top.name, r.status,
				 r.err);
		ran_free(&r);
	}
}

/* the edit distance by hand, and "did you mean" for commands, subcommands
 * and long options; nothing offered for a word near nothing */
static void test_did_you_mean(void **state)
{
	(void)state;
	assert_int_equal(capsim_cli_edit_distance("optimise", "optimize"), 1);
	assert_int_equal(capsim_cli_edit_distance("rnu", "run"), 1); /* swapped */
	assert_int_equal(capsim_cli_edit_distance("kitten", "sitting"), 3);
	assert_int_equal(capsim_cli_edit_distance("", "sweep"), 5);
	assert_int_equal(capsim_cli_edit_distance("query", "query"), 0);
	static const char *const names[] = { "run", "report", "query" };
	assert_string_equal(capsim_cli_nearest("reprot", names, 3), "report");
	assert_null(capsim_cli_nearest("xyz", names, 3));
	assert_null(capsim_cli_nearest("r", names, 3)); /* 2 edits of 3 letters: too far */

	static const struct {
		const char *words[3], *want;
	} cases[] = {
		{ { "optimise" }, "'optimise' is not a capsim command; did you mean 'optimize'?" },
		{ { "valdiate" }, "did you mean 'validate'?" },
		{ { "calibrate", "improt" }, "did you mean 'import'?" },
		{ { "import", "slrum" }, "did you mean 'capsim import slurm'?" },
		{ { "run", "--jsn" }, "did you mean '--json'?" },
		{ { "sweep", "--paln" }, "did you mean '--plan'?" },
		{ { "help", "repotr" }, "did you mean 'report'?" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		capsim_cli_cmd c = { .name = cases[i].words[0] };
		const char *const extra[] = { cases[i].words[1], NULL };
		ran r = run(&c, extra);
		assert_int_equal(r.status, 2);
		expect_in(r.err, cases[i].want, cases[i].words[0]);
		ran_free(&r);
	}
	capsim_cli_cmd far = { .name = "zzzzzz" };
	static const char *const none[] = { NULL };
	ran r = run(&far, none);
	assert_int_equal(r.status, 2);
	assert_null(strstr(r.err, "did you mean"));
	expect_in(r.err, "see 'capsim --help'", "zzzzzz");
	ran_free(&r);
}

/* every option whose argument is a directory refuses "-" (exit 2, the
 * option and the reason named); a database option refuses it as the store
 * does, calibrate run's before any program runs; nothing named "-" is made */
static void test_dash_refused(void **state)
{
	(void)state;
	char dir[] = "/tmp/capsim-opts-dash-XXXXXX", old[4096];
	assert_non_null(mkdtemp(dir));
	assert_non_null(getcwd(old, sizeof old));
	assert_int_equal(chdir(dir), 0);
	int checked = 0;
	for (size_t i = 0; i < capsim_cli_n_cmds; i++) {
		const capsim_cli_cmd *c = capsim_cli_cmds[i];
		for (size_t k = 0; k < c->n_opts; k++) {
			const capsim_cli_opt *o = &c->opts[k];
			if (!o->arg)
				continue;
			size_t len = strlen(o->arg);
			if (len < 3 || strcmp(o->arg + len - 3, "DIR") != 0)
				continue;
			char opt[64], want[128];
			snprintf(opt, sizeof opt, "--%s", o->name);
			const char *const extra[] = { opt, "-", NULL };
			ran r = run(c, extra);
			if (r.status != 2)
				fail_msg("capsim %s --%s -: status %d", c->name, o->name, r.status);
			snprintf(want, sizeof want, "capsim %s: --%s: expected a directory, found '-'",
				 c->name, o->name);
			expect_in(r.err, want, c->name);
			expect_in(r.err, "stream", c->name);
			ran_free(&r);
			assert_int_equal(access("-", F_OK), -1);
			checked++;
		}
	}
	/* calibrate run --out-dir and --bin-dir, validate and catalog --catalog,
	 * import's --config-root */
	assert_true(checked >= 5);
	static const char *const db[] = { "--db", "-", "--only", "pcie", NULL };
	ran r = run(&capsim_cli_calibrate_run_cmd, db);
	assert_int_equal(r.status, 2);
	expect_in(r.err, "--db -: a store cannot be standard input or output", "calibrate run");
	assert_null(strstr(r.err, "[1/1]")); /* nothing ran */
	ran_free(&r);
	assert_int_equal(access("-", F_OK), -1);
	/* verify's database is --measurements, and its refusal says so */
	static const char *const meas[] = { "--measurements", "-", NULL };
	r = run(&capsim_cli_verify_cmd, meas);
	assert_int_equal(r.status, 2);
	expect_in(r.err, "capsim verify: --measurements -: a measurements database cannot be "
		  "standard input or output", "verify");
	ran_free(&r);
	assert_int_equal(access("-", F_OK), -1);
	assert_int_equal(chdir(old), 0);
	assert_int_equal(rmdir(dir), 0);
}

/* capsim(1): every command with its summary, every table's subsection and
 * every option of it, through capsim help --man */
static void test_man_page(void **state)
{
	(void)state;
	capsim_cli_cmd help = { .name = "help" };
	static const char *const man[] = { "--man", NULL };
	ran r = run(&help, man);
	assert_int_equal(r.status, 0);
	expect_in(r.out, ".TH CAPSIM 1", "help --man");
	expect_in(r.out, ".SH EXIT STATUS", "help --man");
	for (size_t i = 0; i < capsim_cli_n_commands; i++) {
		char want[64];
		snprintf(want, sizeof want, "\\fB%s\\fR\n", capsim_cli_commands[i].name);
		expect_in(r.out, want, "help --man");
	}
	for (size_t i = 0; i < capsim_cli_n_cmds; i++) {
		const capsim_cli_cmd *c = capsim_cli_cmds[i];
		char want[96];
		snprintf(want, sizeof want, ".SS capsim %s\n", c->name);
		expect_in(r.out, want, "help --man");
		const char *sec = strstr(r.out, want), *next = strstr(sec + 1, ".SS ");
		for (size_t k = 0; k < c->n_opts; k++) {
			/* roff's minus for every '-' of the name */
			size_t w = (size_t)snprintf(want, sizeof want, "\\fB\\-\\-");
			for (const char *p = c->opts[k].name; *p && w + 3 < sizeof want; p++)
				w += (size_t)snprintf(want + w, sizeof want - w, "%s",
						      *p == '-' ? "\\-" : (char[2]){ *p, 0 });
			snprintf(want + w, sizeof want - w, "\\fR");
			const char *at = strstr(sec, want);
			if (!at || (next && at > next))
				fail_msg("capsim(1): no %s under capsim %s", want, c->name);
		}
	}
	ran_free(&r);
	static const char *const bad[] = { "--completion", "fish", NULL };
	r = run(&help, bad);
	assert_int_equal(r.status, 2);
	expect_in(r.err, "--completion: expected bash or zsh, found 'fish'", "help");
	ran_free(&r);
}

int main(void)
{
	capsim_init();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tables),
		cmocka_unit_test(test_help_lists_every_option),
		cmocka_unit_test(test_bad_options),
		cmocka_unit_test(test_bad_letter),
		cmocka_unit_test(test_version_everywhere),
		cmocka_unit_test(test_did_you_mean),
		cmocka_unit_test(test_dash_refused),
		cmocka_unit_test(test_man_page),
	};
	return testutil_run_group(tests, NULL, NULL);
}
