/* cli.h - private to src/cli: the subcommands and their shared helpers. */
#ifndef CAPSIM_CLI_H
#define CAPSIM_CLI_H

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

const char *capsim_version_string(void);

#endif
