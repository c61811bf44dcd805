/* cli_sets.c - the --set options every command takes; see cli.h. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <stdio.h>

#include "catalog.h"
#include "cli.h"
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

int capsim_cli_load(const char *path, const capsim_cli_sets *sets, capsim_catalog **cat,
		    capsim_scenario **s, capsim_diags *d)
{
	char def[4096];
	if (!path) {
		snprintf(def, sizeof def, "%s/scenarios/default.xml", capsim_catalog_default_root());
		path = def;
	}
	*cat = capsim_catalog_create();
	*s = capsim_xcalloc(1, sizeof **s);
	if (capsim_catalog_load_root(*cat, capsim_catalog_default_root(), NULL, d) == 0 &&
	    capsim_scenario_load(path, *cat, sets ? sets->v : NULL, sets ? sets->n : 0, *s, d) == 0)
		return 0;
	capsim_catalog_free(*cat);
	free(*s);
	*cat = NULL;
	*s = NULL;
	return -1;
}
