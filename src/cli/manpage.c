/* manpage.c - capsim(1) and the shell completion scripts, written from the
 * same tables as --help (capsim_cli_commands, capsim_cli_cmds), so that the
 * page, the completion and the help cannot drift apart. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* ---- the manual page ------------------------------------------------------------ */

/* text as roff reads it: backslashes escaped, a line starting with '.' or
 * '\'' kept as text, '-' as the minus of an option */
static void roff_text(const char *t, size_t len, FILE *out)
{
	int line_start = 1;
	for (size_t i = 0; i < len && t[i]; i++) {
		char c = t[i];
		if (line_start && (c == '.' || c == '\''))
			fputs("\\&", out);
		if (c == '\\')
			fputs("\\e", out);
		else if (c == '-')
			fputs("\\-", out);
		else
			fputc(c, out);
		line_start = c == '\n';
	}
}

/* a block of lines as they are (usage lines, aligned text): no filling */
static void roff_verbatim(const char *t, FILE *out)
{
	fputs(".nf\n", out);
	roff_text(t, strlen(t), out);
	if (*t && t[strlen(t) - 1] != '\n')
		fputc('\n', out);
	fputs(".fi\n", out);
}

/* one option: ".TP", its words in bold, then its help */
static void man_option(const capsim_cli_opt *o, FILE *out)
{
	fputs(".TP\n", out);
	if (o->letter)
		fprintf(out, "\\fB\\-%c\\fR, ", o->letter);
	fputs("\\fB\\-\\-", out);
	roff_text(o->name, strlen(o->name), out);
	fputs("\\fR", out);
	if (o->arg) {
		fputs(" \\fI", out);
		roff_text(o->arg, strlen(o->arg), out);
		fputs("\\fR", out);
	}
	fputc('\n', out);
	roff_verbatim(o->help, out);
}

/* one command's table: its name as a subsection, usage, about, options */
static void man_command(const capsim_cli_cmd *c, FILE *out)
{
	fputs(".SS capsim ", out);
	roff_text(c->name, strlen(c->name), out);
	fputc('\n', out);
	roff_verbatim(c->usage, out);
	if (c->about) {
		fputs(".PP\n", out);
		roff_verbatim(c->about, out);
	}
	for (size_t i = 0; i < c->n_opts; i++)
		man_option(&c->opts[i], out);
	static const capsim_cli_opt version = { "version", 0, NULL, "capsim's version" };
	man_option(&version, out);
	if (c->after) {
		fputs(".PP\n", out);
		roff_verbatim(c->after, out);
	}
}

static void man_head(FILE *out)
{
	fprintf(out, ".TH CAPSIM 1 \"\" \"capsim %s\" \"User Commands\"\n", capsim_version_string());
	fputs(".SH NAME\n"
	      "capsim \\- cluster capacity-planning and cost simulator for GPU training\n"
	      ".SH SYNOPSIS\n"
	      "\\fBcapsim\\fR [\\fB\\-\\-version\\fR] [\\fB\\-\\-help\\fR] "
	      "[\\fB\\-\\-parts\\fR \\fIFILE\\fR|\\fIDIR\\fR]... \\fICOMMAND\\fR [\\fIARGS\\fR]\n"
	      ".br\n"
	      "\\fBcapsim help\\fR [\\fICOMMAND\\fR | \\fB\\-\\-man\\fR | "
	      "\\fB\\-\\-completion\\fR \\fBbash\\fR|\\fBzsh\\fR]\n"
	      ".SH DESCRIPTION\n"
	      "capsim predicts what a GPU cluster does with a training workload: step time,\n"
	      "throughput, MFU, memory per GPU, power, failures, time and cost to train.\n"
	      "Every command takes \\fB\\-\\-help\\fR and \\fB\\-\\-version\\fR.\n"
	      "A scenario, sweep file or other example input may be named without its path\n"
	      "or .xml: capsim looks in the current directory, then in the shipped examples.\n"
	      ".SH COMMANDS\n",
	      out);
	for (size_t i = 0; i < capsim_cli_n_commands; i++) {
		fprintf(out, ".TP\n\\fB%s\\fR\n", capsim_cli_commands[i].name);
		roff_text(capsim_cli_commands[i].summary, strlen(capsim_cli_commands[i].summary),
			  out);
		fputc('\n', out);
	}
}

static void man_tail(FILE *out)
{
	fputs(".SH EXIT STATUS\n"
	      ".TP\n0\nsuccess\n"
	      ".TP\n1\nfailure while running (a file that could not be written, a lost database)\n"
	      ".TP\n2\nbad usage or bad input, named by file:line or option\n"
	      ".TP\n3\nfailed acceptance check (\\fBcapsim verify\\fR)\n"
	      ".SH ENVIRONMENT\n"
	      ".TP\n\\fBCAPSIM_PARTS\\fR\n"
	      "catalog files or directories of your own, separated by ':', read beside the\n"
	      "shipped catalog (as \\fB\\-\\-parts\\fR)\n"
	      ".TP\n\\fBCAPSIM_DATA\\fR\n"
	      "the catalog's root (hardware/, models/, scenarios/); by default the source\n"
	      "tree of a build, or share/capsim beside the installed binary\n"
	      ".SH FILES\n"
	      ".TP\n\\fIshare/capsim/scenarios\\fR\n"
	      "the example scenarios and sweep files, found by name\n"
	      ".TP\n\\fIshare/capsim/calibrate\\fR\n"
	      "the calibration programs and probes that \\fBcapsim calibrate\\fR runs\n"
	      ".SH SEE ALSO\n"
	      "The user guide, share/doc/capsim/user-guide.md.\n",
	      out);
}

void capsim_cli_write_man(FILE *out)
{
	man_head(out);
	fputs(".SH OPTIONS\n", out);
	for (size_t i = 0; i < capsim_cli_n_cmds; i++)
		man_command(capsim_cli_cmds[i], out);
	man_tail(out);
}

/* ---- shell completion ------------------------------------------------------------ */

/* the subcommand words of top-level command name ("import" -> "hf cmdline
 * ..."), separated by spaces, into buf; empty when it has none */
static void subcommands_of(const char *name, char *buf, size_t n)
{
	size_t len = strlen(name), used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < capsim_cli_n_cmds; i++) {
		const char *t = capsim_cli_cmds[i]->name;
		if (strncmp(t, name, len) == 0 && t[len] == ' ' && used < n)
			used += (size_t)snprintf(buf + used, n - used, "%s%s", used ? " " : "",
						 t + len + 1);
	}
}

/* every long option of c, "--a --b ...", on out */
static void long_options(const capsim_cli_cmd *c, FILE *out)
{
	for (size_t i = 0; i < c->n_opts; i++)
		fprintf(out, "--%s ", c->opts[i].name);
	fputs("--version", out);
}

static void bash_completion(FILE *out)
{
	fputs("# bash completion for capsim, written by 'capsim help --completion bash'\n"
	      "_capsim()\n"
	      "{\n"
	      "\tlocal cur=${COMP_WORDS[COMP_CWORD]} i=1 cmd='' sub=''\n"
	      "\twhile [ $i -lt $COMP_CWORD ]; do\n"
	      "\t\tcase ${COMP_WORDS[i]} in\n"
	      "\t\t--parts) i=$((i + 2)); continue ;;\n"
	      "\t\t-*) i=$((i + 1)); continue ;;\n"
	      "\t\tesac\n"
	      "\t\tif [ -z \"$cmd\" ]; then cmd=${COMP_WORDS[i]}\n"
	      "\t\telif [ -z \"$sub\" ]; then sub=${COMP_WORDS[i]}; fi\n"
	      "\t\ti=$((i + 1))\n"
	      "\tdone\n"
	      "\tlocal words=''\n"
	      "\tif [ -z \"$cmd\" ]; then\n"
	      "\t\twords='--help --version --parts",
	      out);
	for (size_t i = 0; i < capsim_cli_n_commands; i++)
		fprintf(out, " %s", capsim_cli_commands[i].name);
	fputs(" help'\n\telse\n\t\tcase \"$cmd $sub\" in\n", out);
	/* two-word commands first, so that "import hf" wins over "import" */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < capsim_cli_n_cmds; i++) {
			const capsim_cli_cmd *c = capsim_cli_cmds[i];
			int two = strchr(c->name, ' ') != NULL;
			if (two != (pass == 0))
				continue;
			fprintf(out, "\t\t\"%s%s\"*) words='", c->name, two ? "" : " ");
			long_options(c, out);
			fputs("' ;;\n", out);
		}
	fputs("\t\tesac\n", out);
	/* a command whose first operand is a subcommand */
	fputs("\t\tif [ -z \"$sub\" ]; then\n\t\t\tcase $cmd in\n", out);
	for (size_t i = 0; i < capsim_cli_n_commands; i++) {
		char subs[256];
		subcommands_of(capsim_cli_commands[i].name, subs, sizeof subs);
		if (subs[0])
			fprintf(out, "\t\t\t%s) words=\"$words %s\" ;;\n", capsim_cli_commands[i].name,
				subs);
	}
	fputs("\t\t\thelp) words=\"$words --man --completion", out);
	for (size_t i = 0; i < capsim_cli_n_commands; i++)
		fprintf(out, " %s", capsim_cli_commands[i].name);
	fputs("\" ;;\n\t\t\tesac\n\t\tfi\n\tfi\n"
	      "\tif [ -n \"$cmd\" ] && [ \"${cur#-}\" = \"$cur\" ]; then\n"
	      "\t\tCOMPREPLY=($(compgen -W \"$words\" -- \"$cur\") $(compgen -f -- \"$cur\"))\n"
	      "\telse\n"
	      "\t\tCOMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
	      "\tfi\n"
	      "}\n"
	      "complete -o filenames -F _capsim capsim\n",
	      out);
}

/* an option's first help line as zsh's _arguments reads a description:
 * no brackets or colons, at most 70 characters */
static void zsh_description(const char *help, FILE *out)
{
	size_t len = strcspn(help, "\n");
	for (size_t i = 0; i < len && i < 70; i++) {
		char c = help[i];
		fputc(c == '[' || c == ']' || c == ':' || c == '\'' || c == '\\' ? ' ' : c, out);
	}
}

static void zsh_command(const capsim_cli_cmd *c, FILE *out)
{
	int two = strchr(c->name, ' ') != NULL;
	fprintf(out, "\t\"%s%s\"*)\n\t\t_arguments -s \\\n", c->name, two ? "" : " ");
	for (size_t i = 0; i < c->n_opts; i++) {
		const capsim_cli_opt *o = &c->opts[i];
		fprintf(out, "\t\t\t'--%s[", o->name);
		zsh_description(o->help, out);
		fprintf(out, "]%s' \\\n", o->arg ? ":value:_files" : "");
	}
	fputs("\t\t\t'--version[capsim version]' \\\n\t\t\t'*:file:_files'\n\t\t;;\n", out);
}

static void zsh_completion(FILE *out)
{
	fputs("#compdef capsim\n"
	      "# zsh completion for capsim, written by 'capsim help --completion zsh'\n"
	      "local -a commands\n"
	      "commands=(\n",
	      out);
	for (size_t i = 0; i < capsim_cli_n_commands; i++) {
		fprintf(out, "\t'%s:", capsim_cli_commands[i].name);
		zsh_description(capsim_cli_commands[i].summary, out);
		fputs("'\n", out);
	}
	fputs("\t'help:describe a command, or write the manual page or completion'\n)\n"
	      "local cmd=${words[2]} sub=${words[3]}\n"
	      "if (( CURRENT == 2 )); then\n"
	      "\t_describe 'capsim command' commands\n"
	      "\treturn\n"
	      "fi\n",
	      out);
	fputs("if (( CURRENT == 3 )); then\n\tcase $cmd in\n", out);
	for (size_t i = 0; i < capsim_cli_n_commands; i++) {
		char subs[256];
		subcommands_of(capsim_cli_commands[i].name, subs, sizeof subs);
		if (subs[0])
			fprintf(out, "\t(%s) compadd %s; return ;;\n", capsim_cli_commands[i].name,
				subs);
	}
	fputs("\tesac\nfi\ncase \"$cmd $sub\" in\n", out);
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < capsim_cli_n_cmds; i++) {
			const capsim_cli_cmd *c = capsim_cli_cmds[i];
			if ((strchr(c->name, ' ') != NULL) == (pass == 0))
				zsh_command(c, out);
		}
	fputs("esac\n", out);
}

int capsim_cli_write_completion(const char *shell, FILE *out)
{
	if (strcmp(shell, "bash") == 0)
		bash_completion(out);
	else if (strcmp(shell, "zsh") == 0)
		zsh_completion(out);
	else
		return -1;
	return 0;
}
