/* opts.c - a command's options from one table (cli.h): getopt_long's option
 * array, its short-option string and the --help list are all made from it,
 * so that they cannot drift apart. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* getopt_long's value for --version, which every command takes beside its table */
#define VERSION_VALUE 255

/* set by capsim_cli_next when it answers --version as the help option: the
 * next capsim_cli_help prints the version instead */
static int version_asked;

/* getopt_long's value for option i: its letter, or 256 + i */
static int value_of(const capsim_cli_cmd *c, size_t i)
{
	return c->opts[i].letter ? c->opts[i].letter : 256 + (int)i;
}

/* the index of the option of value v, or -1 */
static int index_of(const capsim_cli_cmd *c, int v)
{
	for (size_t i = 0; i < c->n_opts; i++)
		if (value_of(c, i) == v)
			return (int)i;
	return -1;
}

/* getopt_long's arrays for c: lo[n_opts + 2] (its options, --version), the short string in shorts
 * (at least 3 x CAPSIM_CLI_MAX_OPTS + 3 bytes) */
static void make_arrays(const capsim_cli_cmd *c, struct option *lo, char *shorts)
{
	char *s = shorts;
	if (c->in_order)
		*s++ = '+';
	*s++ = ':'; /* a missing argument returns ':', not '?' */
	for (size_t i = 0; i < c->n_opts; i++) {
		const capsim_cli_opt *o = &c->opts[i];
		lo[i] = (struct option){ o->name, o->arg ? required_argument : no_argument, NULL,
					 value_of(c, i) };
		if (o->letter) {
			*s++ = (char)o->letter;
			if (o->arg)
				*s++ = ':';
		}
	}
	lo[c->n_opts] = (struct option){ "version", no_argument, NULL, VERSION_VALUE };
	lo[c->n_opts + 1] = (struct option){ NULL, 0, NULL, 0 };
	*s = '\0';
}

/* "did you mean '--NAME'?" on standard error, where a long option of c's
 * table is near the one given */
static void suggest_option(const capsim_cli_cmd *c, const char *given)
{
	if (strncmp(given, "--", 2) != 0)
		return;
	char word[65];
	snprintf(word, sizeof word, "%.*s", (int)strcspn(given + 2, "="), given + 2);
	const char *names[CAPSIM_CLI_MAX_OPTS + 1];
	for (size_t i = 0; i < c->n_opts && i < CAPSIM_CLI_MAX_OPTS; i++)
		names[i] = c->opts[i].name;
	names[c->n_opts] = "version";
	const char *near = capsim_cli_nearest(word, names, c->n_opts + 1);
	if (near)
		fprintf(stderr, "did you mean '--%s'?\n", near);
}

/* what was wrong with the option just read, on standard error */
static void refuse(const capsim_cli_cmd *c, int ret, char **argv)
{
	int i = index_of(c, optopt);
	const char *given = argv[optind - 1];
	if (ret == ':' && i >= 0)
		fprintf(stderr, "capsim %s: option '--%s' requires an argument (%s)\n", c->name,
			c->opts[i].name, c->opts[i].arg);
	else if (i >= 0 && strncmp(given, "--", 2) == 0)
		fprintf(stderr, "capsim %s: option '--%s' takes no argument\n", c->name,
			c->opts[i].name);
	else if (optopt > 0 && optopt < 256 && i < 0)
		fprintf(stderr, "capsim %s: invalid option '-%c'\n", c->name, optopt);
	else {
		fprintf(stderr, "capsim %s: unrecognized option '%s'\n", c->name, given);
		suggest_option(c, given);
	}
	fprintf(stderr, "try 'capsim %s --help'\n", c->name);
}

/* what option o's argument must be when it cannot be a stream ("a
 * directory"), or NULL where "-" may stand for standard input or output or
 * its reader refuses it itself (a database: the store says why) */
static const char *needs_path(const capsim_cli_opt *o)
{
	if (!o->arg)
		return NULL;
	size_t len = strlen(o->arg);
	if (len >= 3 && strcmp(o->arg + len - 3, "DIR") == 0)
		return "a directory";
	return NULL;
}

/* -1 after refusing "-" for option i of c, on standard error; else 0 */
static int refuse_dash(const capsim_cli_cmd *c, int i)
{
	const char *what = i >= 0 ? needs_path(&c->opts[i]) : NULL;
	if (!what || !optarg || strcmp(optarg, "-") != 0)
		return 0;
	fprintf(stderr, "capsim %s: --%s: expected %s, found '-' (standard input or output is a "
		"stream, which cannot be %s)\n", c->name, c->opts[i].name, what, what);
	return -1;
}

int capsim_cli_next(const capsim_cli_cmd *c, int argc, char **argv)
{
	struct option lo[CAPSIM_CLI_MAX_OPTS + 2];
	char shorts[3 * CAPSIM_CLI_MAX_OPTS + 3];
	if (c->n_opts > CAPSIM_CLI_MAX_OPTS)
		return -2;
	make_arrays(c, lo, shorts);
	opterr = 0;
	optopt = 0;
	version_asked = 0;
	int ret = getopt_long(argc, argv, shorts, lo, NULL);
	if (ret == -1)
		return -1;
	if (ret == '?' || ret == ':') {
		refuse(c, ret, argv);
		return -2;
	}
	if (ret == VERSION_VALUE) {
		int help = capsim_cli_find_opt(c, "help");
		if (help >= 0) {
			version_asked = 1;
			return help;
		}
		printf("capsim %s\n", capsim_version_string());
		return -2;
	}
	int i = index_of(c, ret);
	return refuse_dash(c, i) < 0 ? -2 : i;
}

/* "-j, --jobs N", or "    --db FILE" where others have a letter, or
 * "--db FILE": the option's left column */
static int option_words(const capsim_cli_opt *o, int lettered, char *buf, size_t n)
{
	char letter[8] = "";
	if (o->letter)
		snprintf(letter, sizeof letter, "-%c, ", o->letter);
	else if (lettered)
		snprintf(letter, sizeof letter, "    ");
	return snprintf(buf, n, "%s--%s%s%s", letter, o->name, o->arg ? " " : "",
			o->arg ? o->arg : "");
}

/* one option's line(s): its words, then its help in column col */
static void option_help(const capsim_cli_opt *o, int lettered, int col, FILE *out)
{
	char words[128];
	option_words(o, lettered, words, sizeof words);
	fprintf(out, "  %-*s", col, words);
	for (const char *h = o->help; *h;) {
		size_t len = strcspn(h, "\n");
		fprintf(out, "%.*s\n", (int)len, h);
		h += len;
		if (*h == '\n' && *++h)
			fprintf(out, "  %*s", col, "");
	}
}

int capsim_cli_find_opt(const capsim_cli_cmd *c, const char *name)
{
	for (size_t i = 0; i < c->n_opts; i++)
		if (strcmp(c->opts[i].name, name) == 0)
			return (int)i;
	return -1;
}

void capsim_cli_help(const capsim_cli_cmd *c, FILE *out)
{
	if (version_asked) {
		version_asked = 0;
		fprintf(out == stderr ? stdout : out, "capsim %s\n", capsim_version_string());
		return;
	}
	fputs(c->usage, out);
	if (c->about)
		fprintf(out, "\n%s", c->about);
	int lettered = 0, col = 0;
	for (size_t i = 0; i < c->n_opts; i++)
		lettered |= c->opts[i].letter != 0;
	/* the help column: past the longest option, at least column 18 */
	char words[128];
	for (size_t i = 0; i < c->n_opts; i++) {
		int w = option_words(&c->opts[i], lettered, words, sizeof words);
		if (w > col)
			col = w;
	}
	col = col + 2 < 16 ? 16 : col + 2;
	fputs("\noptions:\n", out);
	for (size_t i = 0; i < c->n_opts; i++)
		option_help(&c->opts[i], lettered, col, out);
	static const capsim_cli_opt version = { "version", 0, NULL, "capsim's version" };
	option_help(&version, lettered, col, out);
	if (c->after)
		fprintf(out, "\n%s", c->after);
}
