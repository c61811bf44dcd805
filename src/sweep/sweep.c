/* sweep.c - reading a sweep file and expanding it into points; see sweep.h. */
#include "sweep.h"

#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/tree.h>

#include "expr.h"
#include "xalloc.h"
#include "xml.h"

/* ---- small helpers ------------------------------------------------------------ */

/* attribute name of el, trimmed of surrounding blanks, malloc'd; NULL absent */
static char *prop(xmlNode *el, const char *name)
{
	xmlChar *v = xmlGetProp(el, (const xmlChar *)name);
	if (!v)
		return NULL;
	const char *b = (const char *)v;
	while (*b == ' ' || *b == '\t' || *b == '\n' || *b == '\r')
		b++;
	size_t n = strlen(b);
	while (n && (b[n - 1] == ' ' || b[n - 1] == '\t' || b[n - 1] == '\n' || b[n - 1] == '\r'))
		n--;
	char *s = capsim_xmalloc(n + 1);
	memcpy(s, b, n);
	s[n] = '\0';
	xmlFree(v);
	return s;
}

static int is_elem(const xmlNode *n, const char *name)
{
	return n->type == XML_ELEMENT_NODE && strcmp((const char *)n->name, name) == 0;
}

static char *keep(capsim_sweep *sw, char *s)
{
	sw->owned = capsim_xrealloc(sw->owned, (sw->n_owned + 1) * sizeof *sw->owned);
	sw->owned[sw->n_owned++] = s;
	return s;
}

/* "unknown path 'x' (did you mean a, b?)" at file:line */
static void unknown_path(capsim_diags *d, const char *file, long line, const char *what,
			 const char *path)
{
	const char *near[3];
	size_t n = capsim_scenario_nearest_paths(path, near, 3);
	char list[512] = "";
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(list);
		snprintf(list + l, sizeof list - l, "%s%s", i ? ", " : "", near[i]);
	}
	if (n)
		capsim_diags_add(d, file, line, "%s: unknown --set path '%s' (did you mean %s?)", what,
				 path, list);
	else
		capsim_diags_add(d, file, line, "%s: unknown --set path '%s' (capsim validate "
				 "--paths lists them)", what, path);
}

/* ---- values of an axis ------------------------------------------------------------ */

typedef struct {
	char **v;
	size_t n, cap;
} strvec;

static void push(strvec *sv, char *s)
{
	if (sv->n == sv->cap) {
		sv->cap = sv->cap ? 2 * sv->cap : 16;
		sv->v = capsim_xrealloc(sv->v, sv->cap * sizeof *sv->v);
	}
	sv->v[sv->n++] = s;
}

static void strvec_free(strvec *sv)
{
	for (size_t i = 0; i < sv->n; i++)
		free(sv->v[i]);
	free(sv->v);
	memset(sv, 0, sizeof *sv);
}

/* "a, b, c": the items trimmed; an empty item is refused */
static int split_list(const char *s, strvec *out, char *err, size_t errlen)
{
	for (const char *p = s;;) {
		const char *comma = strchr(p, ',');
		const char *e = comma ? comma : p + strlen(p);
		while (p < e && (*p == ' ' || *p == '\t' || *p == '\n'))
			p++;
		const char *q = e;
		while (q > p && (q[-1] == ' ' || q[-1] == '\t' || q[-1] == '\n'))
			q--;
		if (q == p) {
			snprintf(err, errlen, "values: empty item in '%s'", s);
			return -1;
		}
		if (out->n == CAPSIM_SWEEP_MAX_VALUES) {
			snprintf(err, errlen, "values: more than %d", CAPSIM_SWEEP_MAX_VALUES);
			return -1;
		}
		char *item = capsim_xmalloc((size_t)(q - p) + 1);
		memcpy(item, p, (size_t)(q - p));
		item[q - p] = '\0';
		push(out, item);
		if (!comma)
			return 0;
		p = comma + 1;
	}
}

/* a range bound: a finite number and what follows it ("400 Gb/s": 400, "Gb/s") */
static int split_qty(const char *what, const char *s, double *num, char *unit, size_t n,
		     char *err, size_t errlen)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || errno == ERANGE || !isfinite(v)) {
		snprintf(err, errlen, "%s: expected a number (and its unit), found '%s'", what, s);
		return -1;
	}
	while (*end == ' ')
		end++;
	if (strlen(end) >= n) {
		snprintf(err, errlen, "%s: unit too long in '%s'", what, s);
		return -1;
	}
	*num = v;
	capsim_strlcpy(unit, end, n);
	return 0;
}

/* v with unit, as a --set value: whole numbers without a point */
static char *format_value(double v, const char *unit)
{
	char num[64];
	if (v == floor(v) && fabs(v) < 1e15)
		snprintf(num, sizeof num, "%.0f", v);
	else
		snprintf(num, sizeof num, "%.15g", v);
	return *unit ? capsim_xasprintf("%s %s", num, unit) : capsim_xstrdup(num);
}

typedef struct {
	char *from, *to, *step, *factor, *count, *scale;
} range_spec;

static int expand_range(const range_spec *r, strvec *out, char *err, size_t errlen)
{
	double from, to;
	char ufrom[32], uto[32];
	if (!r->from || !r->to) {
		snprintf(err, errlen, "a range needs from and to");
		return -1;
	}
	if (split_qty("from", r->from, &from, ufrom, sizeof ufrom, err, errlen) < 0 ||
	    split_qty("to", r->to, &to, uto, sizeof uto, err, errlen) < 0)
		return -1;
	if (*uto && strcmp(uto, ufrom) != 0) {
		snprintf(err, errlen, "to: expected the unit of from ('%s'), found '%s'", ufrom, uto);
		return -1;
	}
	int ways = !!r->step + !!r->factor + !!r->count;
	if (ways != 1) {
		snprintf(err, errlen, "a range needs exactly one of step, factor and count, found %d",
			 ways);
		return -1;
	}
	if (r->scale && !r->count) {
		snprintf(err, errlen, "scale goes with count");
		return -1;
	}
	double tol = 1e-9 * fmax(fabs(from), fabs(to));
	if (r->step) {
		double step;
		char ustep[32];
		if (split_qty("step", r->step, &step, ustep, sizeof ustep, err, errlen) < 0)
			return -1;
		if (*ustep && strcmp(ustep, ufrom) != 0) {
			snprintf(err, errlen, "step: expected the unit of from ('%s'), found '%s'",
				 ufrom, ustep);
			return -1;
		}
		if (step == 0 || (to - from) * step < 0) {
			snprintf(err, errlen, "step %s does not go from %s to %s", r->step, r->from,
				 r->to);
			return -1;
		}
		double n = floor((to - from) / step + 1e-9) + 1;
		if (n > CAPSIM_SWEEP_MAX_VALUES) {
			snprintf(err, errlen, "range of %.0f values (at most %d)", n,
				 CAPSIM_SWEEP_MAX_VALUES);
			return -1;
		}
		for (long k = 0; k < (long)n; k++)
			push(out, format_value(from + (double)k * step, ufrom));
		return 0;
	}
	if (r->factor) {
		char *end;
		double f = strtod(r->factor, &end);
		if (end == r->factor || *end || !isfinite(f) || f <= 0 || f == 1) {
			snprintf(err, errlen, "factor: expected a number above 0 other than 1, found '%s'",
				 r->factor);
			return -1;
		}
		if (from <= 0 || to <= 0 || (f > 1) != (to >= from)) {
			snprintf(err, errlen, "factor %s does not go from %s to %s (both above 0)",
				 r->factor, r->from, r->to);
			return -1;
		}
		for (int k = 0;; k++) {
			double v = from * pow(f, k);
			if (f > 1 ? v > to + tol : v < to - tol)
				break;
			if (out->n == CAPSIM_SWEEP_MAX_VALUES) {
				snprintf(err, errlen, "range of more than %d values", CAPSIM_SWEEP_MAX_VALUES);
				return -1;
			}
			push(out, format_value(v, ufrom));
		}
		return 0;
	}
	char *end;
	long n = strtol(r->count, &end, 10);
	if (*end || n < 1 || n > CAPSIM_SWEEP_MAX_VALUES) {
		snprintf(err, errlen, "count: expected 1 to %d, found '%s'", CAPSIM_SWEEP_MAX_VALUES,
			 r->count);
		return -1;
	}
	int log_scale = r->scale && strcmp(r->scale, "log") == 0;
	if (log_scale && (from <= 0 || to <= 0)) {
		snprintf(err, errlen, "scale log needs from and to above 0");
		return -1;
	}
	for (long k = 0; k < n; k++) {
		double t = n == 1 ? 0.0 : (double)k / (double)(n - 1);
		double v = log_scale ? from * pow(to / from, t) : from + (to - from) * t;
		if (k == n - 1 && n > 1)
			v = to; /* the end exactly */
		push(out, format_value(v, ufrom));
	}
	return 0;
}

static int expand_catalog(const capsim_catalog *cat, const char *kind, const char *match,
			  strvec *out, char *err, size_t errlen)
{
	const capsim_kind *k = capsim_kind_by_name(kind);
	if (!k) {
		snprintf(err, errlen, "catalog: unknown kind '%s' (gpu, nic, switch, nvswitch, storage, "
			 "node, cloud, facility, model)", kind);
		return -1;
	}
	capsim_kind_id id = (capsim_kind_id)(k - capsim_kinds);
	size_t n = capsim_catalog_count(cat, id);
	for (size_t i = 0; i < n; i++) {
		const capsim_entry *e = capsim_catalog_at(cat, id, i);
		if (!match || fnmatch(match, e->id, 0) == 0)
			push(out, capsim_xstrdup(e->id));
	}
	if (out->n == 0) {
		snprintf(err, errlen, "catalog: no %s entry%s%s%s", k->name, match ? " matches '" : "",
			 match ? match : "", match ? "'" : "");
		return -1;
	}
	return 0;
}

/* Read one <axis> into sw->axes[sw->n_axes++]. */
static int read_axis(capsim_sweep *sw, xmlNode *el, int dim, int zipped,
		     const capsim_catalog *cat, const capsim_scenario *base, capsim_diags *d)
{
	long line = xmlGetLineNo(el);
	if (sw->n_axes == CAPSIM_SWEEP_MAX_AXES) {
		capsim_diags_add(d, sw->file, line, "axis: more than %d axes", CAPSIM_SWEEP_MAX_AXES);
		return -1;
	}
	char *path = prop(el, "path");
	char *values = prop(el, "values"), *catalog = prop(el, "catalog"), *match = prop(el, "match");
	range_spec r = { prop(el, "from"), prop(el, "to"), prop(el, "step"), prop(el, "factor"),
			 prop(el, "count"), prop(el, "scale") };
	strvec v = { 0 };
	char err[512] = "";
	int rc = -1;
	int ways = !!values + !!catalog + !!(r.from || r.to || r.step || r.factor || r.count);
	char what[300];
	snprintf(what, sizeof what, "axis %s", path);
	if (!capsim_scenario_path_known(path)) {
		unknown_path(d, sw->file, line, "axis", path);
		goto out;
	}
	for (size_t i = 0; i < sw->n_axes; i++)
		if (strcmp(sw->axes[i].path, path) == 0) {
			capsim_diags_add(d, sw->file, line, "%s: the path has an axis already (line %ld)",
					 what, sw->axes[i].line);
			goto out;
		}
	if (ways != 1) {
		capsim_diags_add(d, sw->file, line, "%s: expected one of values, a range (from, to) "
				 "and catalog, found %d", what, ways);
		goto out;
	}
	if (match && !catalog) {
		capsim_diags_add(d, sw->file, line, "%s: match goes with catalog", what);
		goto out;
	}
	int bad = values ? split_list(values, &v, err, sizeof err) :
		  catalog ? expand_catalog(cat, catalog, match, &v, err, sizeof err) :
		  expand_range(&r, &v, err, sizeof err);
	if (bad < 0) {
		capsim_diags_add(d, sw->file, line, "%s: %s", what, err);
		goto out;
	}
	capsim_sweep_axis *a = &sw->axes[sw->n_axes];
	memset(a, 0, sizeof *a);
	a->parsed = capsim_xcalloc(v.n, sizeof *a->parsed);
	for (size_t i = 0; i < v.n; i++) {
		if (strlen(v.v[i]) >= CAPSIM_VALUE_LEN) {
			capsim_diags_add(d, sw->file, line, "%s: value '%.40s...' longer than %d "
					 "characters", what, v.v[i], CAPSIM_VALUE_LEN - 1);
			break;
		}
		if (capsim_scenario_path_value(base, path, v.v[i], &a->parsed[i], err,
					       sizeof err) < 0) {
			capsim_diags_add(d, sw->file, line, "%s: value '%s': %s", what, v.v[i], err);
			break;
		}
		/* a value twice is a point twice, unless the axis advances with
		 * others (a zip), where it pairs with their values */
		for (size_t j = 0; j < i && !zipped; j++)
			if (strcmp(v.v[i], v.v[j]) == 0) {
				capsim_diags_add(d, sw->file, line, "%s: value '%s' given twice", what,
						 v.v[i]);
				goto dup;
			}
	}
dup:
	a->path = path;
	a->values = v.v;
	a->n = v.n;
	a->dim = dim;
	a->line = line;
	path = NULL;
	v.v = NULL;
	v.n = 0;
	sw->n_axes++;
	rc = 0;
out:
	free(path);
	free(values);
	free(catalog);
	free(match);
	free(r.from);
	free(r.to);
	free(r.step);
	free(r.factor);
	free(r.count);
	free(r.scale);
	strvec_free(&v);
	return rc;
}

/* ---- constraints -------------------------------------------------------------------- */

static int read_constraint(capsim_sweep *sw, xmlNode *el, const capsim_scenario *base,
			   capsim_diags *d)
{
	long line = xmlGetLineNo(el);
	char *text = prop(el, "test"), *reason = prop(el, "reason");
	char err[512];
	capsim_expr *e = capsim_expr_parse(text, err, sizeof err);
	if (!e) {
		capsim_diags_add(d, sw->file, line, "constraint '%s': %s", text, err);
		free(text);
		free(reason);
		return -1;
	}
	sw->constraints = capsim_xrealloc(sw->constraints,
					  (sw->n_constraints + 1) * sizeof *sw->constraints);
	capsim_sweep_constraint *c = &sw->constraints[sw->n_constraints++];
	memset(c, 0, sizeof *c);
	c->test = e;
	c->text = text;
	c->reason = reason ? reason : capsim_xstrdup(text);
	c->line = line;
	c->n_names = capsim_expr_n_names(e);
	c->axis = capsim_xcalloc(c->n_names ? c->n_names : 1, sizeof *c->axis);
	c->base = capsim_xcalloc(c->n_names ? c->n_names : 1, sizeof *c->base);
	int rc = 0;
	for (size_t i = 0; i < c->n_names; i++) {
		const char *name = capsim_expr_name(e, i);
		c->axis[i] = -1;
		for (size_t a = 0; a < sw->n_axes; a++)
			if (strcmp(sw->axes[a].path, name) == 0)
				c->axis[i] = (int)a;
		if (c->axis[i] >= 0)
			continue;
		if (!capsim_scenario_path_known(name)) {
			unknown_path(d, sw->file, line, "constraint", name);
			rc = -1;
		} else if (capsim_scenario_path_value(base, name, NULL, &c->base[i], err,
						      sizeof err) < 0) {
			capsim_diags_add(d, sw->file, line, "constraint '%s': %s", text, err);
			rc = -1;
		}
	}
	return rc;
}

/* ---- the file ------------------------------------------------------------------------ */

/* the base scenario's path: as written when absolute, else beside the sweep */
static int base_path(const char *sweep_file, const char *rel, char *out, size_t n)
{
	if (rel[0] == '/')
		return capsim_strlcpy(out, rel, n);
	const char *slash = strrchr(sweep_file, '/');
	if (!slash)
		return capsim_strlcpy(out, rel, n);
	int len = snprintf(out, n, "%.*s/%s", (int)(slash - sweep_file), sweep_file, rel);
	return len < 0 || (size_t)len >= n ? -1 : 0;
}

static int read_sets(capsim_sweep *sw, xmlNode *root, capsim_diags *d)
{
	int rc = 0;
	for (xmlNode *n = root->children; n; n = n->next) {
		if (!is_elem(n, "set"))
			continue;
		char *path = keep(sw, prop(n, "path")), *value = keep(sw, prop(n, "value"));
		if (!capsim_scenario_path_known(path)) {
			unknown_path(d, sw->file, xmlGetLineNo(n), "set", path);
			rc = -1;
		}
		sw->sets = capsim_xrealloc(sw->sets, (sw->n_sets + 1) * sizeof *sw->sets);
		sw->sets[sw->n_sets++] = (capsim_set){ path, value };
	}
	return rc;
}

static int read_axes(capsim_sweep *sw, xmlNode *root, int zip_all, const capsim_catalog *cat,
		     const capsim_scenario *base, capsim_diags *d)
{
	int dims = 0;
	for (xmlNode *n = root->children; n; n = n->next) {
		if (is_elem(n, "axis")) {
			if (read_axis(sw, n, zip_all ? 0 : dims, zip_all, cat, base, d) < 0)
				return -1;
			if (!zip_all || dims == 0)
				dims++;
		} else if (is_elem(n, "zip")) {
			if (zip_all) {
				capsim_diags_add(d, sw->file, xmlGetLineNo(n), "zip: the sweep zips every "
						 "axis already (combine=\"zip\")");
				return -1;
			}
			for (xmlNode *c = n->children; c; c = c->next)
				if (is_elem(c, "axis") && read_axis(sw, c, dims, 1, cat, base, d) < 0)
					return -1;
			dims++;
		}
	}
	sw->n_dims = (size_t)dims;
	/* a dimension's axes have one length */
	for (size_t a = 0; a < sw->n_axes; a++) {
		capsim_sweep_axis *x = &sw->axes[a];
		size_t *len = &sw->dim_len[x->dim];
		if (*len == 0) {
			*len = x->n;
		} else if (*len != x->n) {
			capsim_diags_add(d, sw->file, x->line, "axis %s: %zu values, but the axes zipped "
					 "with it have %zu", x->path, x->n, *len);
			return -1;
		}
	}
	sw->size = 1;
	for (size_t i = 0; i < sw->n_dims; i++) {
		if (sw->size > CAPSIM_SWEEP_MAX_POINTS / sw->dim_len[i]) {
			capsim_diags_add(d, sw->file, 0, "sweep: more than %llu points",
					 CAPSIM_SWEEP_MAX_POINTS);
			return -1;
		}
		sw->size *= sw->dim_len[i];
	}
	return 0;
}

capsim_sweep *capsim_sweep_load(const char *path, const capsim_catalog *cat,
				const capsim_set *cli_sets, size_t n_cli_sets,
				capsim_scenario *base, capsim_diags *d)
{
	memset(base, 0, sizeof *base);
	size_t before = d->n;
	char sha[65];
	xmlDoc *doc = capsim_xml_read(path, sha, d);
	if (!doc)
		return NULL;
	capsim_sweep *sw = capsim_xcalloc(1, sizeof *sw);
	capsim_strlcpy(sw->file, path, sizeof sw->file);
	memcpy(sw->sha256, sha, sizeof sw->sha256);
	xmlNode *root = xmlDocGetRootElement(doc);
	if (!root || strcmp((const char *)root->name, "sweep") != 0) {
		capsim_diags_add(d, path, root ? xmlGetLineNo(root) : 0,
				 "root element <%s> is not <sweep>", root ? (const char *)root->name : "");
		goto fail;
	}
	if (capsim_xml_validate(doc, "sweep", path, d) < 0)
		goto fail;
	char *name = prop(root, "name"), *combine = prop(root, "combine");
	capsim_strlcpy(sw->name, name, sizeof sw->name);
	int zip_all = combine && strcmp(combine, "zip") == 0;
	free(name);
	free(combine);
	xmlNode *b = NULL;
	for (xmlNode *n = root->children; n && !b; n = n->next)
		if (is_elem(n, "base"))
			b = n;
	char *rel = prop(b, "scenario");
	int too_long = base_path(path, rel, sw->base_file, sizeof sw->base_file) < 0;
	if (too_long)
		capsim_diags_add(d, path, xmlGetLineNo(b), "base: path too long");
	free(rel);
	if (too_long || read_sets(sw, root, d) < 0)
		goto fail;
	size_t n_sets = sw->n_sets + n_cli_sets;
	capsim_set *all = capsim_xcalloc(n_sets ? n_sets : 1, sizeof *all);
	if (sw->n_sets)
		memcpy(all, sw->sets, sw->n_sets * sizeof *all);
	if (n_cli_sets)
		memcpy(all + sw->n_sets, cli_sets, n_cli_sets * sizeof *all);
	int rc = capsim_scenario_load(sw->base_file, cat, all, n_sets, base, d);
	free(all);
	if (rc < 0) {
		capsim_diags_add(d, path, xmlGetLineNo(b), "base: the scenario %s does not load",
				 sw->base_file);
		goto fail;
	}
	if (read_axes(sw, root, zip_all, cat, base, d) < 0 || d->n != before)
		goto fail;
	for (xmlNode *n = root->children; n; n = n->next)
		if (is_elem(n, "constraint"))
			read_constraint(sw, n, base, d);
	if (d->n != before)
		goto fail;
	xmlFreeDoc(doc);
	return sw;
fail:
	xmlFreeDoc(doc);
	capsim_sweep_free(sw);
	return NULL;
}

void capsim_sweep_free(capsim_sweep *sw)
{
	if (!sw)
		return;
	for (size_t a = 0; a < sw->n_axes; a++) {
		capsim_sweep_axis *x = &sw->axes[a];
		for (size_t i = 0; i < x->n; i++)
			free(x->values[i]);
		free(x->values);
		free(x->parsed);
		free(x->path);
	}
	for (size_t c = 0; c < sw->n_constraints; c++) {
		capsim_sweep_constraint *k = &sw->constraints[c];
		capsim_expr_free(k->test);
		free(k->text);
		free(k->reason);
		free(k->axis);
		free(k->base);
	}
	free(sw->constraints);
	for (size_t i = 0; i < sw->n_owned; i++)
		free(sw->owned[i]);
	free(sw->owned);
	free(sw->sets);
	free(sw);
}

/* ---- points --------------------------------------------------------------------------- */

/* each dimension's value index of point index: the first dimension outermost */
static void digits(const capsim_sweep *sw, uint64_t index, size_t *at)
{
	for (size_t i = sw->n_dims; i-- > 0;) {
		at[i] = (size_t)(index % sw->dim_len[i]);
		index /= sw->dim_len[i];
	}
}

void capsim_sweep_point(const capsim_sweep *sw, uint64_t index, capsim_set *out)
{
	size_t at[CAPSIM_SWEEP_MAX_AXES];
	digits(sw, index, at);
	for (size_t a = 0; a < sw->n_axes; a++) {
		const capsim_sweep_axis *x = &sw->axes[a];
		out[a] = (capsim_set){ x->path, x->values[at[x->dim]] };
	}
}

typedef struct {
	const capsim_sweep *sw;
	const capsim_sweep_constraint *c;
	const size_t *at;
} lookup_ctx;

static int lookup(void *ctx, const char *name, capsim_expr_value *out, char *err, size_t errlen)
{
	const lookup_ctx *l = ctx;
	for (size_t i = 0; i < l->c->n_names; i++) {
		if (strcmp(capsim_expr_name(l->c->test, i), name) != 0)
			continue;
		const capsim_path_value *v = &l->c->base[i];
		if (l->c->axis[i] >= 0) {
			const capsim_sweep_axis *x = &l->sw->axes[l->c->axis[i]];
			v = &x->parsed[l->at[x->dim]];
		}
		*out = (capsim_expr_value){ v->is_text, v->num, v->text };
		return 0;
	}
	snprintf(err, errlen, "internal: '%s' is not a name of the test", name);
	return -1;
}

long capsim_sweep_check(const capsim_sweep *sw, uint64_t index, int *error, char *err,
			size_t errlen)
{
	size_t at[CAPSIM_SWEEP_MAX_AXES];
	digits(sw, index, at);
	*error = 0;
	for (size_t c = 0; c < sw->n_constraints; c++) {
		lookup_ctx l = { sw, &sw->constraints[c], at };
		int truth;
		if (capsim_expr_eval(sw->constraints[c].test, lookup, &l, &truth, err, errlen) < 0) {
			*error = 1;
			return (long)c;
		}
		if (!truth)
			return (long)c;
	}
	return -1;
}
