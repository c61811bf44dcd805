/* version.c - capsim's version, as --version prints it on every command. */
#include "cli.h"

#ifndef CAPSIM_VERSION
#define CAPSIM_VERSION "0.0.0"
#endif
#ifndef CAPSIM_GIT_REV
#define CAPSIM_GIT_REV "unknown"
#endif

const char *capsim_version_string(void)
{
	return CAPSIM_VERSION " (git " CAPSIM_GIT_REV ")";
}
