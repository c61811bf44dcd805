/* findname.c - example inputs named on the command line without their path:
 * a scenario, sweep file or report design found in the current directory or
 * among the catalog's shipped examples. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "catalog.h"
#include "cli.h"

/* the folders of the catalog's root that hold examples, searched in turn */
static const char *const example_dirs[] = { "scenarios", "scenarios/sweeps", "scenarios/report" };
#define N_DIRS (sizeof example_dirs / sizeof example_dirs[0])

/* whether path names a regular file (or a link to one) */
static int is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* buf = dir/name + suffix; 0, or -1 when it does not fit */
static int join(char *buf, size_t n, const char *dir, const char *name, const char *suffix)
{
	int w = dir ? snprintf(buf, n, "%s/%s%s", dir, name, suffix) :
		      snprintf(buf, n, "%s%s", name, suffix);
	return w >= 0 && (size_t)w < n ? 0 : -1;
}

/* the first existing candidate of name, in the order capsim_cli_find_input
 * gives, into buf; 0, or -1 when none exists */
static int search(const char *name, const char *root, char *buf, size_t n)
{
	if (join(buf, n, NULL, name, ".xml") == 0 && is_file(buf))
		return 0;
	for (size_t i = 0; i < N_DIRS; i++) {
		char dir[4096];
		if (snprintf(dir, sizeof dir, "%s/%s", root, example_dirs[i]) >= (int)sizeof dir)
			continue;
		if (join(buf, n, dir, name, "") == 0 && is_file(buf))
			return 0;
		if (join(buf, n, dir, name, ".xml") == 0 && is_file(buf))
			return 0;
	}
	return -1;
}

/* the shipped example nearest to name (capsim_cli_nearest over the .xml
 * files of the example folders, without .xml), into near; "" when none is */
static void nearest_example(const char *name, const char *root, char *near, size_t n)
{
	enum { MAX_NAMES = 256 };
	char *names[MAX_NAMES];
	size_t count = 0;
	near[0] = '\0';
	for (size_t i = 0; i < N_DIRS; i++) {
		char dir[4096];
		snprintf(dir, sizeof dir, "%s/%s", root, example_dirs[i]);
		DIR *dp = opendir(dir);
		for (struct dirent *e; dp && (e = readdir(dp)) && count < MAX_NAMES;) {
			size_t len = strlen(e->d_name);
			if (len > 4 && strcmp(e->d_name + len - 4, ".xml") == 0)
				names[count++] = strndup(e->d_name, len - 4);
		}
		if (dp)
			closedir(dp);
	}
	const char *best = capsim_cli_nearest(name, (const char *const *)names, count);
	if (best)
		snprintf(near, n, "%s", best);
	for (size_t i = 0; i < count; i++)
		free(names[i]);
}

const char *capsim_cli_find_input(const char *name, char *buf, size_t n, capsim_diags *d)
{
	if (!name || strchr(name, '/') || strcmp(name, "-") == 0 || is_file(name))
		return name;
	const char *root = capsim_catalog_default_root();
	if (search(name, root, buf, n) == 0)
		return buf;
	struct stat st;
	if (stat(name, &st) == 0)
		return name; /* a directory or device: its own loader says what is wrong */
	char looked[1024];
	size_t used = (size_t)snprintf(looked, sizeof looked, "./%s, ./%s.xml", name, name);
	for (size_t i = 0; i < N_DIRS && used < sizeof looked; i++)
		used += (size_t)snprintf(looked + used, sizeof looked - used, ", %s/%s/%s[.xml]",
					 root, example_dirs[i], name);
	char near[256];
	nearest_example(name, root, near, sizeof near);
	capsim_diags_add_at(d, name,
			    "expected a file or the name of a shipped example, found neither; "
			    "looked in %s%s%s%s", looked, near[0] ? "; did you mean '" : "", near,
			    near[0] ? "'?" : "");
	return NULL;
}
