/* test_opts.c - every command's options come from one table (src/cli/cli.h):
 * through capsim_main, each command's --help lists every long option of its
 * table (with its letter and its argument's name), and an unknown option, a
 * missing argument and an argument given to an option that takes none each
 * exit 2 with a message naming the option and pointing at --help. */
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

int main(void)
{
	capsim_init();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tables),
		cmocka_unit_test(test_help_lists_every_option),
		cmocka_unit_test(test_bad_options),
		cmocka_unit_test(test_bad_letter),
	};
	return testutil_run_group(tests, NULL, NULL);
}
