/* cli_sets.c - the --set options every command takes; see cli.h. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#include <stdio.h>
#include <sys/stat.h>

#include "catalog.h"
#include "cli.h"
#include "err.h"
#include "xalloc.h"

int capsim_cli_sets_add(capsim_cli_sets *s, const char *arg, capsim_diags *d)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 8;
		s->v = capsim_xrealloc(s->v, s->cap * sizeof *s->v);
		s->bufs = capsim_xrealloc(s->bufs, s->cap * sizeof *s->bufs);
	}
	char *buf = capsim_xmalloc(strlen(arg) + 1);
	if (capsim_set_parse(arg, buf, &s->v[s->n], d) < 0) {
		free(buf);
		return -1;
	}
	s->bufs[s->n++] = buf;
	return 0;
}

void capsim_cli_sets_free(capsim_cli_sets *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->bufs[i]);
	free(s->bufs);
	free(s->v);
	memset(s, 0, sizeof *s);
}

int capsim_cli_count(const char *s, int max)
{
	/* digits only: strtol alone would take " 8" and "+8" */
	if (!(*s >= '0' && *s <= '9'))
		return -1;
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	return end == s || *end || errno || v < 1 || v > max ? -1 : (int)v;
}

int capsim_cli_cpus(int max)
{
	long n = 0;
	cpu_set_t set;
	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof set, &set) == 0)
		n = CPU_COUNT(&set);
	if (n < 1)
		n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > max ? max : (int)n;
}

int capsim_cli_quantity(const char *cmd, const char *opt, const char *s, capsim_dim dim,
			double lo, double hi, int whole, const char *expected, double *out)
{
	char err[256];
	if (capsim_units_parse(s, dim, NULL, out, err, sizeof err) < 0) {
		fprintf(stderr, "capsim %s: %s: %s\n", cmd, opt, err);
		return -1;
	}
	if (!(*out >= lo && *out <= hi) || (whole && *out != floor(*out))) {
		fprintf(stderr, "capsim %s: %s: expected %s, found '%s'\n", cmd, opt, expected, s);
		return -1;
	}
	return 0;
}

/* capsim_cli_load; with any_layout, through capsim_scenario_load_any_layout */
static int load(const char *path, const capsim_cli_sets *sets, int any_layout,
		capsim_catalog **cat, capsim_scenario **s, capsim_diags *d)
{
	char def[4096];
	if (!path) {
		snprintf(def, sizeof def, "%s/scenarios/default.xml", capsim_catalog_default_root());
		path = def;
	} else if (!(path = capsim_cli_find_input(path, def, sizeof def, d))) {
		*cat = NULL;
		*s = NULL;
		return -1;
	}
	*cat = capsim_catalog_create();
	*s = capsim_xcalloc(1, sizeof **s);
	const capsim_set *v = sets ? sets->v : NULL;
	size_t n = sets ? sets->n : 0;
	if (capsim_cli_catalog(*cat, d) == 0 &&
	    (any_layout ? capsim_scenario_load_any_layout(path, *cat, v, n, *s, d) :
			  capsim_scenario_load(path, *cat, v, n, *s, d)) == 0)
		return 0;
	capsim_catalog_free(*cat);
	free(*s);
	*cat = NULL;
	*s = NULL;
	return -1;
}

int capsim_cli_load(const char *path, const capsim_cli_sets *sets, capsim_catalog **cat,
		    capsim_scenario **s, capsim_diags *d)
{
	return load(path, sets, 0, cat, s, d);
}

int capsim_cli_load_any_layout(const char *path, const capsim_cli_sets *sets,
			       capsim_catalog **cat, capsim_scenario **s, capsim_diags *d)
{
	return load(path, sets, 1, cat, s, d);
}

/* ---- the user's catalog files ------------------------------------------------------ */

#define MAX_PARTS 16
static const char *parts[MAX_PARTS];
static size_t n_parts;

int capsim_cli_parts_add(const char *path)
{
	if (n_parts == MAX_PARTS)
		return -1;
	parts[n_parts++] = path;
	return 0;
}

void capsim_cli_parts_reset(void)
{
	n_parts = 0;
}

size_t capsim_cli_parts_given(const char *const **paths)
{
	*paths = parts;
	return n_parts;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* one --parts path: a file, or a directory's *.xml in name order */
static int load_parts(capsim_catalog *cat, const char *path, capsim_diags *d)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		capsim_diags_add(d, path, 0, "--parts: %s", strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return capsim_catalog_load_file(cat, path, d);
	DIR *dir = opendir(path);
	if (!dir) {
		capsim_diags_add(d, path, 0, "--parts: %s", strerror(errno));
		return -1;
	}
	char **names = NULL;
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(dir))) {
		size_t len = strlen(e->d_name);
		if (len > 4 && strcmp(e->d_name + len - 4, ".xml") == 0 && e->d_name[0] != '.') {
			names = capsim_xrealloc(names, (n + 1) * sizeof *names);
			names[n++] = capsim_xasprintf("%s/%s", path, e->d_name);
		}
	}
	closedir(dir);
	qsort(names, n, sizeof *names, cmp_name);
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		if (capsim_catalog_load_file(cat, names[i], d) < 0)
			rc = -1;
		free(names[i]);
	}
	free(names);
	return rc;
}

int capsim_cli_catalog(capsim_catalog *cat, capsim_diags *d)
{
	if (capsim_catalog_load_root(cat, capsim_catalog_default_root(), NULL, d) < 0)
		return -1;
	return capsim_cli_parts_load(cat, d);
}

int capsim_cli_parts_load(capsim_catalog *cat, capsim_diags *d)
{
	int rc = 0, any = 0;
	for (size_t i = 0; i < n_parts; i++) {
		any = 1;
		if (load_parts(cat, parts[i], d) < 0)
			rc = -1;
	}
	const char *env = getenv("CAPSIM_PARTS");
	if (env && *env) {
		char *copy = capsim_xstrdup(env), *save = NULL;
		for (char *p = strtok_r(copy, ":", &save); p; p = strtok_r(NULL, ":", &save)) {
			any = 1;
			if (load_parts(cat, p, d) < 0)
				rc = -1;
		}
		free(copy);
	}
	if (rc == 0 && any && capsim_catalog_check(cat, d) < 0)
		rc = -1;
	return rc;
}

capsim_err_model *capsim_cli_err_model(const char *cmd, capsim_diags *d)
{
	capsim_diags got = { 0 };
	capsim_err_model *m = capsim_err_model_load_root(capsim_catalog_default_root(), &got);
	if (m) {
		capsim_diags_free(&got);
		return m;
	}
	/* a missing model is bad input as a malformed one is: the catalog
	 * lacks a file it ships with */
	for (size_t i = 0; i < got.n; i++)
		capsim_diags_add_at(d, got.v[i].where ? got.v[i].where : "the error model",
				    "the error model: %s (capsim %s --no-intervals leaves the "
				    "bands out; capsim fit errors refits the model)", got.v[i].msg,
				    cmd);
	capsim_diags_free(&got);
	return NULL;
}
