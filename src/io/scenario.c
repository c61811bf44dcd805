/* scenario.c - load, override, resolve and check a scenario; see scenario.h. */
#include "scenario.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "escape.h"
#include "ioint.h"
#include "profile.h"
#include "sha256.h"
#include "xalloc.h"
#include "xml.h"

/* ---- the paths --set accepts --------------------------------------------- */

static char **set_paths;
static size_t n_set_paths;

static void free_set_paths(void)
{
	for (size_t i = 0; i < n_set_paths; i++)
		free(set_paths[i]);
	free(set_paths);
}

const char *const *capsim_scenario_set_paths(size_t *n)
{
	if (!set_paths) {
		size_t cap = capsim_scenario_n_fields;
		for (size_t s = 0; s < capsim_n_part_slots; s++)
			cap += capsim_kinds[capsim_part_slots[s].kind].n_fields;
		set_paths = capsim_xcalloc(cap, sizeof *set_paths);
		for (size_t i = 0; i < capsim_scenario_n_fields; i++)
			set_paths[n_set_paths++] = capsim_xstrdup(capsim_scenario_fields[i].path);
		for (size_t s = 0; s < capsim_n_part_slots; s++) {
			const capsim_kind *k = &capsim_kinds[capsim_part_slots[s].kind];
			for (size_t i = 0; i < k->n_fields; i++) {
				if (strcmp(k->fields[i].path, "id") == 0)
					continue;
				set_paths[n_set_paths++] = capsim_xasprintf(
					"%s.%s", capsim_part_slots[s].path, k->fields[i].path);
			}
		}
		atexit(free_set_paths);
	}
	*n = n_set_paths;
	return (const char *const *)set_paths;
}

/* path with a node group's key written as ID ("cluster.group.h200.nodes" ->
 * "cluster.group.ID.nodes"), into buf; path itself when it is no group's */
static const char *group_template(const char *path, char *buf, size_t len)
{
	static const char head[] = "cluster.group.";
	if (strncmp(path, head, sizeof head - 1) != 0)
		return path;
	const char *dot = strchr(path + sizeof head - 1, '.');
	snprintf(buf, len, "%sID%s", head, dot ? dot : "");
	return buf;
}

int capsim_scenario_path_known(const char *path)
{
	char tmpl[256];
	path = group_template(path, tmpl, sizeof tmpl);
	size_t n;
	const char *const *p = capsim_scenario_set_paths(&n);
	for (size_t i = 0; i < n; i++)
		if (strcmp(p[i], path) == 0)
			return 1;
	return 0;
}

/* an element path is known if some attribute path continues it */
static int elem_known(const char *path)
{
	char tmpl[256];
	path = group_template(path, tmpl, sizeof tmpl);
	size_t n, len = strlen(path);
	const char *const *p = capsim_scenario_set_paths(&n);
	for (size_t i = 0; i < n; i++)
		if (strncmp(p[i], path, len) == 0 && p[i][len] == '.')
			return 1;
	return 0;
}

/* p truncated to as many dot-separated components as path has, into buf */
static const char *truncate_like(const char *p, const char *path, char *buf,
				 size_t len)
{
	size_t parts = 1;
	for (const char *c = path; *c; c++)
		parts += *c == '.';
	size_t i = 0, seen = 1;
	for (; p[i] && i + 1 < len; i++) {
		if (p[i] == '.' && seen++ == parts)
			break;
		buf[i] = p[i];
	}
	buf[i] = '\0';
	return buf;
}

/* nearest element paths: unique prefixes of the attribute paths with as many
 * components as path */
static size_t nearest_elements(const char *path, char out[][128], size_t max)
{
	size_t n, got = 0;
	const char *const *p = capsim_scenario_set_paths(&n);
	size_t best_d[8];
	if (max > 8)
		max = 8;
	if (strlen(path) > CAPSIM_NEAREST_MAX_LEN)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char cand[128];
		truncate_like(p[i], path, cand, sizeof cand);
		if (strchr(p[i] + strlen(cand), '.') == NULL)
			continue; /* an attribute, not an element */
		int dupl = 0;
		for (size_t j = 0; j < got; j++)
			if (strcmp(out[j], cand) == 0)
				dupl = 1;
		if (dupl)
			continue;
		size_t dist = capsim_edit_distance(path, cand);
		size_t pos = got;
		while (pos > 0 && best_d[pos - 1] > dist)
			pos--;
		if (pos >= max)
			continue;
		size_t last = got < max ? got : max - 1;
		for (size_t j = last; j > pos; j--) {
			memcpy(out[j], out[j - 1], sizeof out[0]);
			best_d[j] = best_d[j - 1];
		}
		memcpy(out[pos], cand, sizeof out[0]);
		best_d[pos] = dist;
		if (got < max)
			got++;
	}
	return got;
}

size_t capsim_scenario_nearest_paths(const char *path, const char **out,
				     size_t max)
{
	size_t n;
	const char *const *p = capsim_scenario_set_paths(&n);
	/* a path much longer than any valid one is near none of them, and its
	 * edit distance to each would cost its length times theirs */
	if (strlen(path) > CAPSIM_NEAREST_MAX_LEN)
		return 0;
	size_t *dist = capsim_xmalloc(n * sizeof *dist);
	for (size_t i = 0; i < n; i++) {
		/* compare the last components too, so "tpp" finds "...tp" */
		const char *tail = strrchr(p[i], '.');
		const char *ptail = strrchr(path, '.');
		size_t a = capsim_edit_distance(path, p[i]);
		size_t b = capsim_edit_distance(ptail ? ptail + 1 : path,
						tail ? tail + 1 : p[i]) + 3;
		dist[i] = a < b ? a : b;
	}
	size_t got = 0;
	while (got < max) {
		size_t best = n;
		for (size_t i = 0; i < n; i++) {
			int taken = 0;
			for (size_t j = 0; j < got; j++)
				if (out[j] == p[i])
					taken = 1;
			if (!taken && (best == n || dist[i] < dist[best]))
				best = i;
		}
		if (best == n)
			break;
		out[got++] = p[best];
	}
	free(dist);
	return got;
}

static void unknown_path_message(const char *what, const char *path,
				 const char *where_file, long line,
				 const char *where_at, capsim_diags *d)
{
	const char *near[3];
	char elems[3][128];
	size_t k;
	const capsim_retired_path *old = capsim_scenario_retired(path);
	if (old && where_at)
		capsim_diags_add_at(d, where_at, "%s is no longer read: %s", path, old->instead);
	else if (old)
		capsim_diags_add(d, where_file, line, "%s is no longer read: %s", path, old->instead);
	if (old)
		return;
	if (strcmp(what, "element") == 0) {
		k = nearest_elements(path, elems, 3);
		for (size_t i = 0; i < k; i++)
			near[i] = elems[i];
	} else {
		k = capsim_scenario_nearest_paths(path, near, 3);
	}
	char list[512] = "";
	size_t len = 0;
	for (size_t i = 0; i < k; i++) {
		int w = snprintf(list + len, sizeof list - len, "%s%s",
				 i ? ", " : "", near[i]);
		if (w > 0 && (size_t)w < sizeof list - len)
			len += (size_t)w;
	}
	if (!k)
		snprintf(list, sizeof list, "none near it (capsim validate --paths lists them)");
	/* a path too long to be meant is shown by its start and its length */
	size_t plen = strlen(path);
	int shown = plen > CAPSIM_NEAREST_MAX_LEN ? 64 : (int)plen;
	char more[48] = "";
	if (plen > CAPSIM_NEAREST_MAX_LEN)
		snprintf(more, sizeof more, "... (%zu bytes)", plen);
	if (where_at)
		capsim_diags_add_at(d, where_at, "unknown %s '%.*s%s'; nearest valid: %s", what,
				    shown, path, more, list);
	else
		capsim_diags_add(d, where_file, line, "unknown %s '%.*s%s'; nearest valid: %s",
				 what, shown, path, more, list);
}

int capsim_set_parse(const char *arg, char *buf, capsim_set *out,
		     capsim_diags *d)
{
	const char *eq = strchr(arg, '=');
	if (!eq || eq == arg) {
		capsim_diags_add_at(d, "--set",
				    "expected PATH=VALUE (e.g. cluster.nodes=16), "
				    "found '%s'",
				    arg);
		return -1;
	}
	size_t plen = (size_t)(eq - arg);
	memcpy(buf, arg, strlen(arg) + 1);
	buf[plen] = '\0';
	out->path = buf;
	out->value = buf + plen + 1;
	return 0;
}

/* ---- unknown attributes and elements (overrides are not in the schema) ---- */

/* 1, 2, 3 for the old forms <mix>, <mix2>, <mix3> of a node group; 0 else */
static int mix_index(const char *name)
{
	if (strcmp(name, "mix") == 0)
		return 1;
	if (strncmp(name, "mix", 3) == 0 && (name[3] == '2' || name[3] == '3') && !name[4])
		return name[3] - '0';
	return 0;
}

/* Unknown names of a file listed (with the nearest valid paths, which
 * cost a comparison with every path each): the first UNKNOWN_SHOWN, then
 * one line with the count of the rest. */
#define UNKNOWN_SHOWN 50

static void unknown_name(const char *what, const char *path, const char *file, long line,
			 long *seen, capsim_diags *d)
{
	if (++*seen <= UNKNOWN_SHOWN)
		unknown_path_message(what, path, file, line, NULL, d);
}

static void check_unknown_in(xmlNode *el, const char *path, const char *file, long *seen,
			     capsim_diags *d)
{
	char sub[512];
	for (xmlAttr *a = el->properties; a; a = a->next) {
		const char *name = (const char *)a->name;
		if (strcmp(name, "src") == 0 || strcmp(name, "assumption") == 0)
			continue;
		if (strcmp(path, "cluster.group.ID") == 0 && strcmp(name, "id") == 0)
			continue;
		snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "", name);
		if (!capsim_scenario_path_known(sub))
			unknown_name("attribute", sub, file, xmlGetLineNo(el), seen, d);
	}
	for (xmlNode *c = el->children; c; c = c->next) {
		if (c->type != XML_ELEMENT_NODE)
			continue;
		const char *name = (const char *)c->name;
		if (!*path && strcmp(name, "description") == 0)
			continue;
		if (strcmp(name, "note") == 0)
			continue;
		snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "", name);
		/* a node group, or one of the old forms of one */
		if (strcmp(path, "cluster") == 0 &&
		    (strcmp(name, "group") == 0 || mix_index(name) > 0))
			snprintf(sub, sizeof sub, "cluster.group.ID");
		if (!elem_known(sub)) {
			unknown_name("element", sub, file, xmlGetLineNo(c), seen, d);
			continue;
		}
		check_unknown_in(c, sub, file, seen, d);
	}
}

static void check_unknown(xmlNode *root, const char *file, capsim_diags *d)
{
	long seen = 0;
	check_unknown_in(root, "", file, &seen, d);
	if (seen > UNKNOWN_SHOWN)
		capsim_diags_add(d, file, 0, "%ld more unknown attributes or elements (the first %d "
				 "are listed)", seen - UNKNOWN_SHOWN, UNKNOWN_SHOWN);
}

/* ---- where a problem is reported ------------------------------------------- */

static long line_of(const capsim_scenario *s, const char *path)
{
	return capsim_scenario_line(s, path);
}

/* The edit that set path, the last one (it wins), or NULL. */
static const capsim_edit *edit_of(const capsim_scenario *s, const char *path)
{
	for (int i = s->n_edits - 1; i >= 0; i--)
		if (strcmp(s->edits[i].path, path) == 0)
			return &s->edits[i];
	return NULL;
}

/* A problem about the element elem caused by the fields named in `fields`
 * (space-separated full paths): located at the --set edits that gave any
 * of them, else at the element's line in the file. */
static void blame(capsim_diags *d, const capsim_scenario *s, const char *elem,
		  const char *fields, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void blame(capsim_diags *d, const capsim_scenario *s, const char *elem,
		  const char *fields, const char *fmt, ...)
{
	char msg[1024], where[1024] = "";
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	size_t len = 0;
	for (const char *p = fields; p && *p;) {
		while (*p == ' ')
			p++;
		const char *e = strchr(p, ' ');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		char path[128];
		if (n && n < sizeof path) {
			memcpy(path, p, n);
			path[n] = '\0';
			/* "a.b." names every edit below a.b; "a.b" the last edit of it */
			const capsim_edit *last = path[n - 1] == '.' ? NULL : edit_of(s, path);
			for (int i = 0; i < s->n_edits; i++) {
				const capsim_edit *x = &s->edits[i];
				if (last ? x != last : strncmp(x->path, path, n) != 0)
					continue;
				int w = snprintf(where + len, sizeof where - len, "%s--set %s=%s",
						 len ? " " : "", x->path, x->value);
				if (w > 0 && (size_t)w < sizeof where - len)
					len += (size_t)w;
			}
		}
		p += n;
	}
	if (len)
		capsim_diags_add_at(d, where, "%s", msg);
	else
		capsim_diags_add(d, s->file, line_of(s, elem), "%s", msg);
}

/* ---- resolving catalog parts ------------------------------------------------- */

/* The path of group g's part (0 its node, 1 its GPU, 2 its NIC), into buf:
 * cluster.node, cluster.gpu, cluster.nic for the one-group form's group,
 * cluster.group.ID, cluster.group.ID.gpu, cluster.group.ID.nic else. */
static const char *group_prefix(const capsim_scenario *s, int g, int part, char *buf, size_t n)
{
	static const char *const shorthand[] = { "cluster.node", "cluster.gpu", "cluster.nic" };
	static const char *const tail[] = { "", ".gpu", ".nic" };
	if (s->groups[g].shorthand)
		snprintf(buf, n, "%s", shorthand[part]);
	else
		snprintf(buf, n, "cluster.group.%s%s", s->groups[g].id, tail[part]);
	return buf;
}

static void nearest_ids(const capsim_catalog *cat, capsim_kind_id k,
			const char *id, char *buf, size_t len)
{
	size_t n = capsim_catalog_count(cat, k);
	const char *best[3] = { NULL, NULL, NULL };
	size_t bd[3] = { (size_t)-1, (size_t)-1, (size_t)-1 };
	for (size_t i = 0; i < n; i++) {
		const capsim_entry *e = capsim_catalog_at(cat, k, i);
		size_t dist = capsim_edit_distance(id, e->id);
		for (size_t j = 0; j < 3; j++) {
			if (dist < bd[j]) {
				for (size_t m = 2; m > j; m--) {
					bd[m] = bd[m - 1];
					best[m] = best[m - 1];
				}
				bd[j] = dist;
				best[j] = e->id;
				break;
			}
		}
	}
	snprintf(buf, len, "%s%s%s%s%s", best[0] ? best[0] : "(none)",
		 best[1] ? ", " : "", best[1] ? best[1] : "", best[2] ? ", " : "",
		 best[2] ? best[2] : "");
}

/* Find a profile: as given when absolute, else beside the scenario, else
 * under the catalog root. Writes the path found (or the first tried) to
 * out; returns 0 when found. */
static int find_profile(const char *name, const char *scenario_path, char *out, size_t n)
{
	if (name[0] == '/') {
		snprintf(out, n, "%s", name);
		return access(out, R_OK) == 0 ? 0 : -1;
	}
	const char *slash = strrchr(scenario_path, '/');
	int dir = slash ? (int)(slash - scenario_path) : 0;
	char first[CAPSIM_PATH_LEN + 256];
	if (dir)
		snprintf(first, sizeof first, "%.*s/%s", dir, scenario_path, name);
	else
		snprintf(first, sizeof first, "%s", name);
	if (access(first, R_OK) == 0) {
		snprintf(out, n, "%s", first);
		return 0;
	}
	snprintf(out, n, "%s/%s", capsim_catalog_default_root(), name);
	if (access(out, R_OK) == 0)
		return 0;
	snprintf(out, n, "%s", first);
	return -1;
}

/* Load the profile named by the field at `field` (a full path) and give its
 * GPU model's fits to g. */
static int apply_profile(const capsim_scenario *s, const char *name, const char *field,
			 capsim_gpu *g, capsim_diags *d)
{
	char found[CAPSIM_PATH_LEN + 512];
	char elem[128];
	capsim_strlcpy(elem, field, sizeof elem);
	char *dot = strrchr(elem, '.');
	if (dot)
		*dot = '\0';
	if (find_profile(name, s->file, found, sizeof found) < 0) {
		blame(d, s, elem, field,
		      "%s: no readable profile '%s' (looked beside the scenario and under %s)",
		      field, name, capsim_catalog_default_root());
		return 1;
	}
	capsim_profile *p = capsim_xcalloc(1, sizeof *p);
	int bad = capsim_profile_load(found, p, d) < 0 || capsim_profile_apply(p, g, d) < 0;
	if (bad)
		blame(d, s, elem, field, "%s: '%s' cannot be used (above)", field, name);
	capsim_profile_free(p);
	free(p);
	return bad;
}

/* Reapply the overrides below prefix (a part's path) onto obj, a kind's. */
static int apply_overrides(const capsim_scenario *s, const char *prefix, capsim_kind_id kid,
			   void *obj, const char *label, capsim_diags *d)
{
	const capsim_kind *kind = &capsim_kinds[kid];
	size_t plen = strlen(prefix);
	int problems = 0, any = 0;
	long line = 0;
	for (int i = 0; i < s->n_overrides; i++) {
		const capsim_override *o = &s->overrides[i];
		if (strncmp(o->path, prefix, plen) != 0 || o->path[plen] != '.')
			continue;
		const capsim_field *f = capsim_field_find(kind->fields, kind->n_fields,
							  o->path + plen + 1);
		if (!f)
			continue; /* a part below this one (cluster.group.ID.gpu.*) */
		char err[512];
		if (capsim_field_parse(f, o->value, obj, err, sizeof err) < 0) {
			if (o->line)
				capsim_diags_add(d, s->file, o->line, "%s: %s: %s", label,
						 o->path, err);
			else
				blame(d, s, prefix, o->path, "%s: %s", o->path, err);
			problems++;
		}
		any = 1;
		if (o->line && !line)
			line = o->line;
	}
	if (any && !problems) {
		if (capsim_catalog_check_entry(kid, obj, s->file,
					       line ? line : line_of(s, prefix), label, d))
			problems++;
	}
	return problems;
}

/* Copy every part from the catalog and reapply its overrides; the node's
 * GPU, NIC and NVSwitch unless the scenario names others; the profiles. */
/* The scenario's own model (a <model> without ref): the kind's defaults,
 * then the element's fields (kept as overrides, so that --set edits them as
 * it edits a catalog part's), every required field given, checked as a
 * catalog entry is. Returns the problems found. */
static int inline_model(capsim_scenario *s, const capsim_part_slot *slot, const capsim_kind *kind,
			capsim_diags *d)
{
	capsim_model *m = &s->model;
	memset(m, 0, sizeof *m);
	char err[512];
	int problems = 0;
	size_t plen = strlen(slot->path);
	for (size_t j = 0; j < kind->n_fields; j++) {
		const capsim_field *f = &kind->fields[j];
		if (strcmp(f->path, "id") == 0)
			continue;
		int given = 0;
		for (int i = 0; i < s->n_overrides && !given; i++)
			given = strncmp(s->overrides[i].path, slot->path, plen) == 0 &&
				s->overrides[i].path[plen] == '.' &&
				strcmp(s->overrides[i].path + plen + 1, f->path) == 0;
		if (given)
			continue;
		if (f->flags & CAPSIM_F_REQUIRED) {
			char path[256];
			snprintf(path, sizeof path, "%s.%s", slot->path, f->path);
			blame(d, s, slot->path, path, "%s: %s is missing (%s): a model without a ref is "
			      "defined in the scenario, whole", slot->path, path, f->doc);
			problems++;
		} else if (f->def && capsim_field_parse(f, f->def, m, err, sizeof err) < 0) {
			problems++;
		}
	}
	if (problems)
		return problems;
	snprintf(m->e.id, sizeof m->e.id, "%.56s-model", s->name);
	capsim_strlcpy(m->e.file, s->file, sizeof m->e.file);
	m->e.line = line_of(s, slot->path);
	if (!m->e.assumption[0])
		capsim_strlcpy(m->e.assumption, "defined in the scenario file",
			       sizeof m->e.assumption);
	char label[160];
	snprintf(label, sizeof label, "%s (defined in the scenario)", slot->path);
	return apply_overrides(s, slot->path, slot->kind, m, label, d);
}

/* Copy a part of group g from the catalog by ref and reapply its overrides:
 * part 1 its GPU, 2 its NIC (the node's own where the group names none). */
static int resolve_group_part(capsim_scenario *s, int g, int part, const capsim_catalog *cat,
			      capsim_diags *d)
{
	capsim_node_group *m = &s->groups[g];
	capsim_kind_id kid = part == 1 ? CAPSIM_KIND_GPU : CAPSIM_KIND_NIC;
	const char *given = part == 1 ? m->gpu_ref : m->nic_ref;
	const char *ref = given[0] ? given : part == 1 ? m->node.gpu : m->node.nic;
	char pre[128], node_pre[128], ref_path[160], label[256], near[256];
	group_prefix(s, g, part, pre, sizeof pre);
	group_prefix(s, g, 0, node_pre, sizeof node_pre);
	/* where the id came from decides where a bad one is reported */
	if (given[0])
		snprintf(ref_path, sizeof ref_path, "%s.ref", pre);
	else
		snprintf(ref_path, sizeof ref_path, "%s.%s", node_pre,
			 part == 1 ? "gpus.ref" : "nics.ref");
	const void *entry = capsim_catalog_find(cat, kid, ref);
	if (!entry) {
		char elem[160];
		nearest_ids(cat, kid, ref, near, sizeof near);
		snprintf(elem, sizeof elem, "%.*s", (int)(strrchr(ref_path, '.') - ref_path),
			 ref_path);
		blame(d, s, elem, ref_path,
		      "%s: '%s' is not a %s of the catalog; nearest: %s", ref_path, ref,
		      capsim_kinds[kid].name, near);
		return 1;
	}
	void *obj = part == 1 ? (void *)&m->gpu : (void *)&m->nic;
	memcpy(obj, entry, capsim_kinds[kid].size);
	snprintf(label, sizeof label, "%s (%s '%s')", pre, capsim_kinds[kid].name, ref);
	return apply_overrides(s, pre, kid, obj, label, d);
}

/* Group g's node, GPU, NIC and NVSwitch from the catalog, its overrides and
 * its profile. */
static int resolve_group(capsim_scenario *s, int g, const capsim_catalog *cat, capsim_diags *d)
{
	capsim_node_group *m = &s->groups[g];
	char pre[128], ref_path[160], label[256], near[256];
	group_prefix(s, g, 0, pre, sizeof pre);
	snprintf(ref_path, sizeof ref_path, "%s.ref", pre);
	const capsim_node *node = capsim_catalog_find(cat, CAPSIM_KIND_NODE, m->node_ref);
	if (!node) {
		nearest_ids(cat, CAPSIM_KIND_NODE, m->node_ref, near, sizeof near);
		blame(d, s, pre, ref_path, "%s: '%s' is not a node of the catalog; nearest: %s",
		      ref_path, m->node_ref, near);
		return 1;
	}
	m->node = *node;
	snprintf(label, sizeof label, "%s (node '%s')", pre, m->node_ref);
	int problems = apply_overrides(s, pre, CAPSIM_KIND_NODE, &m->node, label, d);
	if (problems)
		return problems;
	problems += resolve_group_part(s, g, 1, cat, d);
	problems += resolve_group_part(s, g, 2, cat, d);
	m->has_nvswitch = 0;
	const capsim_nvswitch *nv = m->node.nvswitch[0] ?
		capsim_catalog_find(cat, CAPSIM_KIND_NVSWITCH, m->node.nvswitch) : NULL;
	if (nv) {
		m->nvswitch = *nv;
		m->has_nvswitch = 1;
	}
	if (problems || !m->profile[0])
		return problems;
	char field[160];
	if (!m->shorthand)
		snprintf(field, sizeof field, "%s.profile", pre);
	else
		snprintf(field, sizeof field, "%s", edit_of(s, "cluster.gpu.profile") ||
			 m->gpu_ref[0] ? "cluster.gpu.profile" : "cluster.node.profile");
	return apply_profile(s, m->profile, field, &m->gpu, d);
}

/* Every group's parts; then the cluster's nodes (their sum) and the one-group
 * view (the first group's). */
static int resolve_groups(capsim_scenario *s, const capsim_catalog *cat, capsim_diags *d)
{
	int problems = 0;
	for (int g = 0; g < s->n_groups; g++)
		problems += resolve_group(s, g, cat, d);
	if (s->n_groups > 0)
		capsim_scenario_view_group(s, 0);
	return problems;
}

static int resolve_parts(capsim_scenario *s, const capsim_catalog *cat, capsim_diags *d)
{
	int problems = 0;
	char *sc = (char *)s;

	for (size_t i = 0; i < capsim_n_part_slots; i++) {
		const capsim_part_slot *slot = &capsim_part_slots[i];
		const capsim_kind *kind = &capsim_kinds[slot->kind];
		const char *ref = sc + slot->ref_offset;
		if (slot->group)
			continue; /* resolve_groups */
		if (slot->has_offset != (size_t)-1)
			*(int *)(sc + slot->has_offset) = 0;
		char ref_path[160];
		snprintf(ref_path, sizeof ref_path, "%s.ref", slot->path);
		if (!*ref && slot->kind == CAPSIM_KIND_MODEL && s->model_inline) {
			problems += inline_model(s, slot, kind, d);
			continue;
		}
		if (!*ref)
			continue;
		const void *entry = capsim_catalog_find(cat, slot->kind, ref);
		if (!entry) {
			char near[256], elem[160];
			nearest_ids(cat, slot->kind, ref, near, sizeof near);
			snprintf(elem, sizeof elem, "%.*s",
				 (int)(strrchr(ref_path, '.') - ref_path), ref_path);
			blame(d, s, elem, ref_path, "%s: '%s' is not a %s of the catalog; nearest: %s",
			      ref_path, ref, kind->name, near);
			problems++;
			continue;
		}
		void *obj = sc + slot->obj_offset;
		memcpy(obj, entry, kind->size);
		if (slot->has_offset != (size_t)-1)
			*(int *)(sc + slot->has_offset) = 1;
		char label[160];
		snprintf(label, sizeof label, "%s (%s '%s')", slot->path, kind->name, ref);
		problems += apply_overrides(s, slot->path, slot->kind, obj, label, d);
	}
	if (problems)
		return problems;
	problems += resolve_groups(s, cat, d);
	return problems;
}

/* ---- consistency ------------------------------------------------------------- */

#define PAR "workload.parallelism"
#define P_TP PAR ".tp"
#define P_PP PAR ".pp"
#define P_CP PAR ".cp"
#define P_DP PAR ".dp"
#define P_EP PAR ".ep"
#define P_VS PAR ".virtual-stages"
#define P_SCHED PAR ".schedule"
#define C_NODES "cluster.nodes cluster.node.ref cluster.node.gpus.count"
#define C_FAB "cluster.fabric"

/* Can the named switch build this fabric at all? Each rail is its own plane
 * (a rail-optimised fabric), so a plane must connect every node: one switch
 * layer (single-switch, or a 1-tier fat tree) connects k nodes; a 2-tier fat
 * tree of k-port switches with leaves of d node ports (d/(k-d) = the
 * oversubscription) connects k leaves x d; a 3-tier one k pods x k/2 leaves
 * x d (k^3/4 when non-blocking: Al-Fares et al., SIGCOMM 2008). */
/* The fat tree the asked tiers can build (fabsize.h): the sizing the fabric
 * and the bill of materials use, so that validate refuses what run would. */
static void check_fabric_size(const capsim_scenario *s, capsim_diags *d)
{
	capsim_fabric_size_in in;
	if (!capsim_scenario_fabric_size_in(s, &in))
		return;
	capsim_fabric_counts c;
	char err[256];
	if (capsim_fabric_size(&in, &c, err, sizeof err) < 0)
		blame(d, s, C_FAB,
		      C_NODES " cluster.fabric.topology cluster.fabric.tiers "
		      "cluster.fabric.oversubscription cluster.fabric.rails cluster.fabric.switch.",
		      "fabric: %s (switch '%s')", err, s->fabric_switch.e.id);
}

static int domain_gpus(const capsim_node *n)
{
	return n->domain_gpus ? n->domain_gpus : n->gpus;
}

/* the values derived from the others: dp, rails */
static void derive(capsim_scenario *s)
{
	long nodes = 0;
	for (int g = 0; g < s->n_groups; g++)
		nodes += s->groups[g].nodes;
	s->nodes = nodes > INT_MAX ? INT_MAX : (int)nodes;
	long gpus = capsim_scenario_gpus(s);
	long model_par = (long)s->tp * s->pp * s->cp;
	s->dp = s->dp_given;
	if (!s->dp_given && model_par > 0 && gpus % model_par == 0 && gpus / model_par <= INT_MAX)
		s->dp = (int)(gpus / model_par);
	s->rails = s->rails_given ? s->rails_given : s->node.nics;
	s->routing = s->routing_given;
	if (s->routing == CAPSIM_ROUTING_AUTO)
		s->routing = s->transport == CAPSIM_NET_INFINIBAND ? CAPSIM_ROUTING_DETERMINISTIC :
								      CAPSIM_ROUTING_ECMP;
}

/* Each group has nodes, and the GPUs and NVLink domains of a node that every
 * other group has (ranks keep their places across groups). */
static void check_groups(const capsim_scenario *s, capsim_diags *d)
{
	const capsim_node_group *first = &s->groups[0];
	for (int g = 0; g < s->n_groups; g++) {
		const capsim_node_group *m = &s->groups[g];
		char pre[128], why[320];
		group_prefix(s, g, 0, pre, sizeof pre);
		snprintf(why, sizeof why, "%s.nodes%s", pre, m->shorthand ? " cluster.nodes" : "");
		if (m->nodes < 1)
			blame(d, s, pre, why, "%s.nodes: missing (how many of the cluster's nodes are "
			      "'%s')", pre, m->node.e.id);
		snprintf(why, sizeof why, "%s.ref %s.gpus.count", pre, pre);
		if (g > 0 && (m->node.gpus != first->node.gpus ||
			      domain_gpus(&m->node) != domain_gpus(&first->node)))
			blame(d, s, pre, why,
			      "%s: node '%s' has %d GPUs in NVLink domains of %d; group '%s' (node "
			      "'%s') has %d in domains of %d: a cluster's groups must match, so that "
			      "ranks keep their places",
			      pre, m->node.e.id, m->node.gpus, domain_gpus(&m->node), first->id,
			      first->node.e.id, first->node.gpus, domain_gpus(&first->node));
	}
}

/* The degrees against the cluster and the model: tp x pp x cp divides the
 * GPUs (and gives the dp given), the stragglers' stage and replica exist,
 * tp divides the heads. */
static void check_degrees(const capsim_scenario *s, capsim_diags *d)
{
	long gpus = capsim_scenario_gpus(s);
	const capsim_model *m = &s->model;
	long model_par = (long)s->tp * s->pp * s->cp;
	if (gpus % model_par) {
		blame(d, s, PAR, C_NODES " " P_TP " " P_PP " " P_CP,
		      "parallelism: tp x pp x cp = %d x %d x %d = %ld does not divide the "
		      "cluster's %ld GPUs (%d nodes x %d)",
		      s->tp, s->pp, s->cp, model_par, gpus, s->nodes, s->node.gpus);
	} else if (s->dp_given && s->dp_given != gpus / model_par) {
		blame(d, s, PAR, C_NODES " " P_TP " " P_PP " " P_CP " " P_DP,
		      "parallelism: dp=%d, but %ld GPUs / (tp x pp x cp = %ld) gives dp=%ld",
		      s->dp_given, gpus, model_par, gpus / model_par);
	} else if (gpus / model_par > INT_MAX) {
		blame(d, s, PAR, C_NODES, "parallelism: dp=%ld is too large", gpus / model_par);
	}
	if (s->straggler_stage >= s->pp)
		blame(d, s, "workload", "workload.straggler-stage " P_PP,
		      "workload.straggler-stage: expected -1 or 0 to %d (pp=%d), found %d",
		      s->pp - 1, s->pp, s->straggler_stage);
	if (s->dp && s->straggler_replica >= s->dp)
		blame(d, s, "workload", "workload.straggler-replica " P_DP " " C_NODES,
		      "workload.straggler-replica: expected 0 to %d (dp=%d), found %d",
		      s->dp - 1, s->dp, s->straggler_replica);
	if (m->heads % s->tp)
		blame(d, s, PAR, P_TP " workload.model.ref",
		      "parallelism: tp=%d does not divide %d attention heads", s->tp, m->heads);
	if (m->kv_heads && m->kv_heads % s->tp && s->tp % m->kv_heads)
		blame(d, s, PAR, P_TP " workload.model.ref",
		      "parallelism: tp=%d and %d key/value heads: neither divides the other",
		      s->tp, m->kv_heads);
}

/* An end stage's layers over v virtual chunks: none given, an even split,
 * or one less than that where the embedding or the loss fills its slot. */
static int chunks_even(int layers, int v)
{
	return layers == 0 || layers % v == 0 || (layers + 1) % v == 0;
}

/* The layers split over the stages: an even split over pp x virtual
 * stages, or the ends given and the middle stages' share even. */
static void check_stages(const capsim_scenario *s, capsim_diags *d)
{
	const capsim_model *m = &s->model;
	int chunks = s->pp * s->virtual_stages;
	const char *stage_fields = P_PP " " P_VS " " PAR ".first-stage-layers " PAR
				   ".last-stage-layers workload.model.ref";
	if (s->first_stage_layers || s->last_stage_layers) {
		int ends = (s->first_stage_layers ? 1 : 0) + (s->last_stage_layers ? 1 : 0);
		int rest = m->layers - s->first_stage_layers - s->last_stage_layers;
		int v = s->virtual_stages;
		int middle = s->pp > ends && rest > 0 ? rest / (s->pp - ends) : 0;
		if (s->pp < 2)
			blame(d, s, PAR, stage_fields,
			      "parallelism: first- and last-stage-layers need pp >= 2");
		else if (rest < 0 || (s->pp > ends && (rest % (s->pp - ends) || rest == 0)) ||
			 (s->pp == ends && rest != 0))
			blame(d, s, PAR, stage_fields,
			      "parallelism: %d layers less first-stage-layers=%d and "
			      "last-stage-layers=%d leave %d, which %d middle stages do not share "
			      "evenly",
			      m->layers, s->first_stage_layers, s->last_stage_layers, rest,
			      s->pp - ends);
		/* Megatron-Core splits each stage's layers evenly over its
		 * virtual chunks (get_transformer_layer_offset); an end stage
		 * may hold one layer less, where the embedding or the loss
		 * counts as a layer of its first or last chunk
		 * (--account-for-embedding-in-pipeline-split,
		 * --account-for-loss-in-pipeline-split) */
		else if (v > 1 && (!chunks_even(s->first_stage_layers, v) ||
				   !chunks_even(s->last_stage_layers, v) || middle % v))
			blame(d, s, PAR, stage_fields,
			      "parallelism: with virtual-stages=%d every stage's layers split into "
			      "%d chunks, but first-stage-layers=%d, last-stage-layers=%d and %d "
			      "layers a middle stage do not all divide by %d (an end stage may "
			      "hold one less, for the embedding or the loss)",
			      v, v, s->first_stage_layers, s->last_stage_layers, middle, v);
	} else if (m->layers % chunks) {
		blame(d, s, PAR, stage_fields,
		      "parallelism: pp x virtual-stages = %d x %d = %d does not divide %d layers",
		      s->pp, s->virtual_stages, chunks, m->layers);
	}
}

/* The schedule against the virtual stages and pp, and cp against the
 * sequence. */
static void check_schedule(const capsim_scenario *s, capsim_diags *d)
{
	if (s->virtual_stages > 1 && s->schedule != CAPSIM_SCHED_1F1B_INTERLEAVED)
		blame(d, s, PAR, P_VS " " P_SCHED,
		      "parallelism: virtual-stages=%d needs schedule=\"1f1b-interleaved\"",
		      s->virtual_stages);
	if (s->schedule == CAPSIM_SCHED_1F1B_INTERLEAVED && (s->pp < 2 || s->virtual_stages < 2))
		blame(d, s, PAR, P_VS " " P_SCHED " " P_PP,
		      "parallelism: schedule 1f1b-interleaved needs pp >= 2 and virtual-stages "
		      ">= 2 (found pp=%d, virtual-stages=%d)",
		      s->pp, s->virtual_stages);
	if (s->cp > 1 && s->seq_len % (2 * s->cp))
		blame(d, s, PAR, P_CP " workload.seq-len",
		      "parallelism: cp=%d needs seq-len divisible by 2 x cp = %d (causal load "
		      "balancing); seq-len is %d",
		      s->cp, 2 * s->cp, s->seq_len);
}

/* Experts: a capacity factor or ep needs a model with experts, ep divides
 * them and dp x cp. */
static void check_experts(const capsim_scenario *s, capsim_diags *d)
{
	const capsim_model *m = &s->model;
	if (s->moe_capacity_factor > 0 && !m->moe_experts)
		blame(d, s, "workload", "workload.moe-capacity-factor workload.model.ref",
		      "workload: moe-capacity-factor=%g, but model '%s' has no experts",
		      s->moe_capacity_factor, m->e.id);
	if (s->ep > 1) {
		if (!m->moe_experts)
			blame(d, s, PAR, P_EP " workload.model.ref",
			      "parallelism: ep=%d, but model '%s' has no experts", s->ep, m->e.id);
		else if (m->moe_experts % s->ep)
			blame(d, s, PAR, P_EP " workload.model.ref",
			      "parallelism: ep=%d does not divide %d experts", s->ep,
			      m->moe_experts);
		if (s->dp && ((long)s->dp * s->cp) % s->ep)
			blame(d, s, PAR, P_EP " " P_DP " " P_CP " " C_NODES,
			      "parallelism: ep=%d does not divide dp x cp = %ld", s->ep,
			      (long)s->dp * s->cp);
	}
}

/* The batch: micro-batches a step whole (and a multiple of pp when
 * interleaved), and the step's pipeline tasks under the task limit. */
static void check_batch(const capsim_scenario *s, capsim_diags *d)
{
	if (s->dp) {
		double per = (double)s->micro_batch * s->dp;
		double q = s->global_batch / per;
		if (q != floor(q))
			blame(d, s, "workload",
			      "workload.global-batch workload.micro-batch " P_DP " " C_NODES " " P_TP
			      " " P_PP " " P_CP,
			      "workload: global-batch=%.0f is not a multiple of micro-batch x dp "
			      "= %d x %d = %.0f",
			      s->global_batch, s->micro_batch, s->dp, per);
		else if (s->schedule == CAPSIM_SCHED_1F1B_INTERLEAVED && s->pp > 1 &&
			 fmod(q, s->pp) != 0)
			blame(d, s, PAR, "workload.global-batch workload.micro-batch " P_PP " " P_SCHED,
			      "parallelism: the interleaved schedule needs the micro-batches per "
			      "step (%.0f = global-batch / (micro-batch x dp)) to be a multiple of "
			      "pp=%d",
			      q, s->pp);
	}
	/* the work of one step, bounded before it runs: 2 tasks per micro-batch,
	 * stage and chunk, for each replica simulated (all of them with jitter) */
	if (s->dp && s->micro_batch > 0) {
		double mb = s->global_batch / ((double)s->micro_batch * s->dp);
		double v = s->schedule == CAPSIM_SCHED_1F1B_INTERLEAVED ? s->virtual_stages : 1;
		double replicas = s->jitter > 0 ? s->dp : 1;
		double tasks = 2.0 * mb * s->pp * v * replicas;
		if (tasks > s->task_limit)
			blame(d, s, "workload",
			      "workload.global-batch workload.micro-batch workload.jitter " P_PP " " P_VS
			      " " C_NODES " workload.task-limit",
			      "workload: one step is %.3g pipeline tasks (2 x %.0f micro-batches x pp %d "
			      "x %.0f chunks x %.0f replicas simulated), more than workload.task-limit "
			      "= %.3g; raise the limit to run it (about 130 bytes and 1.4 us a task)",
			      tasks, mb, s->pp, v, replicas, s->task_limit);
	}
}

/* A rack-scale system (a node whose NVLink domain's switch trays are given)
 * is placed and bought a whole domain at a time: its group's nodes must
 * fill whole domains. */
static void check_whole_domains(const capsim_scenario *s, int g, const capsim_group_view *v,
				capsim_diags *d)
{
	const capsim_node *node = v->node;
	if (node->switch_trays <= 0 || node->gpus <= 0 || node->domain_gpus <= node->gpus)
		return;
	if (node->domain_gpus % node->gpus != 0) {
		blame(d, s, "cluster", "cluster.node.ref cluster.node.gpus.count",
		      "cluster: node '%s' has %d GPUs, but its NVLink domain (scale-up.domain-gpus) "
		      "of %d GPUs is not a whole number of such nodes; expected a multiple of %d",
		      node->e.id, node->gpus, node->domain_gpus, node->gpus);
		return;
	}
	int per = node->domain_gpus / node->gpus;
	if (v->nodes % per == 0)
		return;
	int lo = v->nodes / per * per;
	char path[96];
	if (g == 0 && s->groups[0].shorthand)
		snprintf(path, sizeof path, "cluster.nodes");
	else
		snprintf(path, sizeof path, "cluster.group.%s.nodes", s->groups[g].id);
	blame(d, s, "cluster", path,
	      "%s: %d nodes of '%s' are not whole NVLink domains of %d nodes (%d GPUs, one rack "
	      "each with its switch trays); expected a multiple of %d, such as %d or %d",
	      path, v->nodes, node->e.id, per, node->domain_gpus, per, lo > 0 ? lo : per,
	      lo > 0 ? lo + per : 2 * per);
}

/* Each group's parts against the job: a power limit above idle, a node the
 * facility's rack can power, a peak in the job's dtype. */
static void check_group_parts(const capsim_scenario *s, capsim_diags *d)
{
	for (int g = 0; g < s->n_groups; g++) {
		capsim_group_view v;
		capsim_scenario_group(s, g, &v);
		if (v.gpu->power_limit_w > 0 && capsim_power_clock_scale(v.gpu->tdp_w,
									 v.gpu->power_limit_w) <= 0)
			blame(d, s, "cluster", "cluster.gpu.power.limit cluster.gpu.ref cluster.node.ref",
			      "cluster: GPU '%s' at power.limit %.0f W is at or below its idle power "
			      "(about 11.5%% of its %.0f W TDP): nothing would run",
			      v.gpu->e.id, v.gpu->power_limit_w, v.gpu->tdp_w);
		double peak_w = capsim_node_peak_w(v.node, v.gpu, v.nic);
		if (s->has_facility && s->facility.rack_power_w > 0 && peak_w > s->facility.rack_power_w)
			blame(d, s, "facility", "facility.rack.power facility.ref cluster.node.ref",
			      "facility: rack.power %.4g kW cannot power one node '%s' of %.4g kW at "
			      "its peak; expected a rack of at least %.4g kW",
			      s->facility.rack_power_w / 1e3, v.node->e.id, peak_w / 1e3, peak_w / 1e3);
		check_whole_domains(s, g, &v, d);
		if (capsim_gpu_peak(v.gpu, s->dtype) <= 0)
			blame(d, s, "workload", "workload.dtype cluster.gpu.ref cluster.node.ref",
			      "workload: dtype=%s, but GPU '%s' has no %s peak in the catalog",
			      capsim_dtype_names[s->dtype], v.gpu->e.id,
			      capsim_dtype_names[s->dtype]);
	}
}

/* precision params="fp8" is Transformer Engine's FP8 primary weights under
 * Megatron-LM (--fp8-param-gather): an FP8 run of the megatron recipe that
 * trains every weight. */
static void check_precision(const capsim_scenario *s, capsim_diags *d)
{
	if (s->prec_params != CAPSIM_PREC_PARAMS_FP8)
		return;
	if (s->dtype != CAPSIM_DTYPE_FP8 || s->framework != CAPSIM_FW_MEGATRON ||
	    s->finetune == CAPSIM_FT_LORA)
		blame(d, s, "workload.precision",
		      "workload.precision.params workload.dtype workload.framework "
		      "workload.finetune.method",
		      "workload: precision params=fp8 (Transformer Engine's FP8 primary weights) "
		      "needs dtype=fp8, framework=megatron and full training; found dtype=%s, "
		      "framework=%s%s",
		      capsim_dtype_names[s->dtype], capsim_framework_names[s->framework],
		      s->finetune == CAPSIM_FT_LORA ? ", finetune lora" : "");
}

static void check_parallelism(const capsim_scenario *s, capsim_diags *d)
{
	check_degrees(s, d);
	check_stages(s, d);
	check_schedule(s, d);
	check_experts(s, d);
	check_batch(s, d);
	check_group_parts(s, d);
}

int capsim_scenario_check_parallelism(const capsim_scenario *s, capsim_diags *d)
{
	size_t before = d->n;
	check_parallelism(s, d);
	return d->n == before ? 0 : -1;
}

static void warn(const char *where, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A catalog switch given more ports at its model's speed, so that it
 * switches more than the model (ports x speed): legal, a switch of one's
 * own, but more often a port count given without the speed of the split (a
 * 64-port 800 Gb/s switch is 128 ports of 400 Gb/s), so said, once a
 * process */
static void check_switch_bandwidth(const capsim_scenario *s, const capsim_catalog *cat)
{
	static atomic_int warned;
	const capsim_switch *sw = &s->fabric_switch;
	const capsim_switch *model =
		cat ? capsim_catalog_find(cat, CAPSIM_KIND_SWITCH, sw->e.id) : NULL;
	if (!model)
		return;
	double has = sw->ports * sw->port_speed_bytes_per_s;
	double made = model->ports * model->port_speed_bytes_per_s;
	/* a speed of one's own: a switch of one's own, knowingly */
	if (fabs(sw->port_speed_bytes_per_s - model->port_speed_bytes_per_s) >
		    1e-9 * model->port_speed_bytes_per_s ||
	    has <= made * (1 + 1e-9) || atomic_exchange(&warned, 1))
		return;
	warn(s->file,
	     "cluster.fabric.switch: %d ports at %g Gb/s make a %g Tb/s switch, %.3gx the '%s' of the "
	     "catalog (%d ports at %g Gb/s); for its ports split, give "
	     "cluster.fabric.switch.ports.speed too (%d ports at %g Gb/s)",
	     sw->ports, sw->port_speed_bytes_per_s * 8e-9, has * 8e-12, has / made, sw->e.id,
	     model->ports, model->port_speed_bytes_per_s * 8e-9, sw->ports,
	     made / sw->ports * 8e-9);
}

static void check_fabric(const capsim_scenario *s, const capsim_catalog *cat,
			 capsim_diags *d)
{
	if (s->rails > s->node.nics)
		blame(d, s, C_FAB, "cluster.fabric.rails cluster.node.ref",
		      "fabric: rails=%d, but node '%s' has %d NICs", s->rails, s->node.e.id,
		      s->node.nics);
	if (s->topology == CAPSIM_TOPO_NONE && s->nodes > 1 &&
	    capsim_scenario_gpus(s) > domain_gpus(&s->node))
		blame(d, s, C_FAB, "cluster.fabric.topology " C_NODES,
		      "fabric: topology 'none' with %d nodes; only a single node or one NVLink "
		      "domain needs no fabric",
		      s->nodes);
	for (int g = 0; g < s->n_groups; g++) {
		capsim_group_view v;
		capsim_scenario_group(s, g, &v);
		int nic_t = v.nic->transport;
		if (s->transport == CAPSIM_NET_INFINIBAND && nic_t == CAPSIM_TRANSPORT_ETHERNET)
			blame(d, s, C_FAB, "cluster.fabric.transport cluster.nic.ref cluster.node.ref",
			      "fabric: transport 'infiniband', but NIC '%s' is Ethernet-only",
			      v.nic->e.id);
		if (s->transport == CAPSIM_NET_ROCE && nic_t == CAPSIM_TRANSPORT_INFINIBAND)
			blame(d, s, C_FAB, "cluster.fabric.transport cluster.nic.ref cluster.node.ref",
			      "fabric: transport 'roce', but NIC '%s' is InfiniBand-only",
			      v.nic->e.id);
	}
	if (s->has_switch) {
		int sw_t = s->fabric_switch.transport;
		/* TCP runs on either (over IPoIB on InfiniBand) */
		if ((s->transport == CAPSIM_NET_INFINIBAND && sw_t == CAPSIM_TRANSPORT_ETHERNET) ||
		    (s->transport == CAPSIM_NET_ROCE && sw_t == CAPSIM_TRANSPORT_INFINIBAND))
			blame(d, s, C_FAB, "cluster.fabric.transport cluster.fabric.switch.ref",
			      "fabric: switch '%s' does not carry transport '%s'",
			      s->fabric_switch.e.id,
			      s->transport == CAPSIM_NET_INFINIBAND ? "infiniband" :
			      s->transport == CAPSIM_NET_ROCE ? "roce" : "tcp");
		if (s->sharp && !s->fabric_switch.sharp)
			blame(d, s, C_FAB, "cluster.fabric.sharp cluster.fabric.switch.ref",
			      "fabric: sharp=on, but switch '%s' has no SHARP", s->fabric_switch.e.id);
		if (s->topology != CAPSIM_TOPO_NONE)
			check_fabric_size(s, d);
		check_switch_bandwidth(s, cat);
	}
	if (s->sharp && s->transport != CAPSIM_NET_INFINIBAND)
		blame(d, s, C_FAB, "cluster.fabric.sharp cluster.fabric.transport",
		      "fabric: sharp=on needs transport 'infiniband'");
	if (s->burst_cloud[0] && cat && !capsim_catalog_find(cat, CAPSIM_KIND_CLOUD, s->burst_cloud))
		blame(d, s, "cost.burst", "cost.burst.cloud",
		      "cost.burst.cloud: '%s' is not a cloud offer of the catalog", s->burst_cloud);
	if (s->burst_cloud[0] && !s->burst_max_gpus)
		blame(d, s, "cost.burst", "cost.burst.max-gpus",
		      "cost.burst: max-gpus is missing (most GPUs rented at once)");
}

/* Derive dp and rails, then check what the schema cannot say; with
 * any_layout, of the parallelism rules only the node groups' parts against
 * the job (the layout is a search's to choose). Returns the number of
 * problems added. */
static int check_consistency(capsim_scenario *s, const capsim_catalog *cat, int any_layout,
			     capsim_diags *d)
{
	size_t before = d->n;
	derive(s);
	check_groups(s, d);
	if (any_layout)
		check_group_parts(s, d);
	else
		check_parallelism(s, d);
	check_precision(s, d);
	check_fabric(s, cat, d);
	s->has_burst = 0;
	if (s->burst_cloud[0] && cat) {
		const capsim_cloud *bc = capsim_catalog_find(cat, CAPSIM_KIND_CLOUD, s->burst_cloud);
		if (bc) {
			s->burst = *bc;
			s->has_burst = 1;
		}
	}
	return (int)(d->n - before);
}

/* ---- node groups: warnings, ids, fields ----------------------------------------- */

static FILE *warnings_out;

void capsim_scenario_warnings_to(FILE *out)
{
	warnings_out = out;
}

static void warn(const char *where, const char *fmt, ...)
{
	if (!warnings_out)
		return;
	va_list ap;
	va_start(ap, fmt);
	fprintf(warnings_out, "%s: warning: ", where);
	vfprintf(warnings_out, fmt, ap);
	fputc('\n', warnings_out);
	va_end(ap);
}

/* 1 when a group of s other than group `except` has id */
static int group_id_taken(const capsim_scenario *s, const char *id, int except)
{
	for (int g = 0; g < s->n_groups; g++)
		if (g != except && strcmp(s->groups[g].id, id) == 0)
			return 1;
	return 0;
}

/* Group g's id where none was given: its node ref (dots as dashes), then
 * REF-2, REF-3, ... past the ids of every group. */
static void default_group_id(capsim_scenario *s, int g)
{
	char base[CAPSIM_ID_LEN - 8];
	capsim_strlcpy(base, s->groups[g].node_ref[0] ? s->groups[g].node_ref : "group",
		       sizeof base);
	for (char *c = base; *c; c++)
		if (*c == '.')
			*c = '-';
	char *id = s->groups[g].id;
	snprintf(id, CAPSIM_ID_LEN, "%s", base);
	for (int k = 2; group_id_taken(s, id, g) && k < 1000; k++)
		snprintf(id, CAPSIM_ID_LEN, "%s-%d", base, k);
}

/* Parse value into group g's field at rest ("nodes", "gpu.ref"): 0; -1
 * with the reason in err; -2 when rest is no field of a group's own. */
static int set_group_field(capsim_scenario *s, int g, const char *rest, const char *value,
			   char *err, size_t errlen)
{
	char tmpl[256];
	snprintf(tmpl, sizeof tmpl, "cluster.group.ID.%s", rest);
	const capsim_field *f = capsim_field_find(capsim_scenario_fields,
						  capsim_scenario_n_fields, tmpl);
	if (!f)
		return -2;
	capsim_field one = *f;
	one.offset += (size_t)g * sizeof(capsim_node_group);
	return capsim_field_parse(&one, value, s, err, errlen) < 0 ? -1 : 0;
}

/* ---- edits --------------------------------------------------------------------- */

/* The part slot that path overrides (path = slot path + "." + a field of
 * its kind other than id), or NULL. */
static const capsim_part_slot *override_slot(const char *path, const capsim_field **field)
{
	for (size_t i = 0; i < capsim_n_part_slots; i++) {
		const capsim_part_slot *slot = &capsim_part_slots[i];
		size_t n = strlen(slot->path);
		if (strncmp(path, slot->path, n) != 0 || path[n] != '.')
			continue;
		const capsim_kind *k = &capsim_kinds[slot->kind];
		const capsim_field *f = capsim_field_find(k->fields, k->n_fields, path + n + 1);
		if (f && strcmp(f->path, "id") != 0) {
			*field = f;
			return slot;
		}
	}
	return NULL;
}

static int add_override(capsim_scenario *s, const char *path, const char *value, long line,
			capsim_diags *d, const char *where)
{
	capsim_override *o = NULL;
	for (int i = 0; i < s->n_overrides; i++)
		if (strcmp(s->overrides[i].path, path) == 0)
			o = &s->overrides[i];
	if (strlen(value) >= CAPSIM_VALUE_LEN || strlen(path) >= sizeof o->path) {
		capsim_diags_add_at(d, where, "%s: value longer than %d characters", path,
				    CAPSIM_VALUE_LEN - 1);
		return -1;
	}
	if (!o) {
		if (s->n_overrides == CAPSIM_MAX_OVERRIDES) {
			capsim_diags_add_at(d, where, "%s: more than %d part fields overridden",
					    path, CAPSIM_MAX_OVERRIDES);
			return -1;
		}
		o = &s->overrides[s->n_overrides++];
	}
	capsim_strlcpy(o->path, path, sizeof o->path);
	capsim_strlcpy(o->value, value, sizeof o->value);
	o->line = line;
	return 0;
}

/* Remember the edit of path (its last value wins), so that an error it
 * causes names it: 0, or -1 after adding to d, at where, that s already
 * remembers CAPSIM_MAX_EDITS other paths (never one forgotten silently). */
static int remember_edit(capsim_scenario *s, const char *path, const char *value,
			 const char *where, capsim_diags *d)
{
	for (int i = 0; i < s->n_edits; i++)
		if (strcmp(s->edits[i].path, path) == 0) {
			capsim_strlcpy(s->edits[i].value, value, sizeof s->edits[i].value);
			return 0;
		}
	if (s->n_edits == CAPSIM_MAX_EDITS) {
		capsim_diags_add_at(d, where, "%s: expected at most %d distinct paths edited in "
				    "one scenario (each is remembered so that an error names the "
				    "--set that caused it), found a %dth", path, CAPSIM_MAX_EDITS,
				    CAPSIM_MAX_EDITS + 1);
		return -1;
	}
	capsim_edit *e = &s->edits[s->n_edits++];
	capsim_strlcpy(e->path, path, sizeof e->path);
	capsim_strlcpy(e->value, value, sizeof e->value);
	return 0;
}

/* An edit of group g's field or part at rest (below cluster.group.ID); path
 * is the edit as remembered. Returns as apply_edit. */
static int edit_group(capsim_scenario *s, int g, const char *rest, const char *path,
		      const char *value, const char *where, capsim_diags *d)
{
	char err[512];
	int rc = set_group_field(s, g, rest, value, err, sizeof err);
	if (rc == -1) {
		capsim_diags_add_at(d, where, "%s: %s", path, err);
		return -1;
	}
	if (rc == 0) {
		if (remember_edit(s, path, value, where, d) < 0)
			return -1;
		return strcmp(rest, "nodes") != 0;
	}
	/* a field of the group's node, GPU or NIC: an override */
	int part = strncmp(rest, "gpu.", 4) == 0 ? 1 : strncmp(rest, "nic.", 4) == 0 ? 2 : 0;
	const capsim_kind *k = &capsim_kinds[part == 1 ? CAPSIM_KIND_GPU : part == 2 ?
					     CAPSIM_KIND_NIC : CAPSIM_KIND_NODE];
	const char *field = part ? rest + 4 : rest;
	const capsim_field *f = capsim_field_find(k->fields, k->n_fields, field);
	if (!f || strcmp(f->path, "id") == 0) {
		unknown_path_message("path", path, NULL, 0, where, d);
		return -1;
	}
	char pre[128], full[256];
	snprintf(full, sizeof full, "%s.%s", group_prefix(s, g, part, pre, sizeof pre), field);
	if (add_override(s, full, value, 0, d, where) < 0 ||
	    remember_edit(s, full, value, where, d) < 0)
		return -1;
	return 1;
}

/* cluster.nodes: the one group's nodes; in a cluster of groups the total,
 * the first group taking the difference (as capsim scale resizes a job). */
static int edit_nodes(capsim_scenario *s, const char *value, const char *where,
		      capsim_diags *d)
{
	const capsim_field *f = capsim_field_find(capsim_scenario_fields,
						  capsim_scenario_n_fields, "cluster.nodes");
	int n = 0;
	char err[512];
	capsim_field one = *f;
	one.offset = 0;
	if (capsim_field_parse(&one, value, &n, err, sizeof err) < 0) {
		capsim_diags_add_at(d, where, "cluster.nodes: %s", err);
		return -1;
	}
	int others = 0;
	for (int g = 1; g < s->n_groups; g++)
		others += s->groups[g].nodes;
	if (n <= others) {
		char ids[512];
		capsim_scenario_group_ids(s, ids, sizeof ids);
		capsim_diags_add_at(d, where, "cluster.nodes: expected more than the %d nodes of the "
				    "groups after the first (%s), found %d; or set "
				    "cluster.group.ID.nodes", others, ids, n);
		return -1;
	}
	if (remember_edit(s, "cluster.nodes", value, where, d) < 0)
		return -1;
	s->groups[0].nodes = n - others;
	s->nodes = n;
	return 0;
}

/* The old paths cluster.mix.*, cluster.mix2.*, cluster.mix3.* (groups 1, 2,
 * 3, nodes taken from the first group's), with one warning a process.
 * Returns as apply_edit; -2 when path is none of them. */
static int edit_mix(capsim_scenario *s, const char *path, const char *value, const char *where,
		    capsim_diags *d)
{
	static atomic_int warned;
	const char *dot = strncmp(path, "cluster.", 8) == 0 ? strchr(path + 8, '.') : NULL;
	char name[8];
	if (!dot || dot - (path + 8) >= (long)sizeof name)
		return -2;
	snprintf(name, sizeof name, "%.*s", (int)(dot - (path + 8)), path + 8);
	int k = mix_index(name);
	if (!k)
		return -2;
	const char *rest = dot + 1;
	if (atomic_exchange(&warned, 1) == 0)
		warn(where, "cluster.%s.* is the old form of a node group's paths: write "
		     "cluster.group.%d.%s (or cluster.group.ID.%s)", name, k, rest, rest);
	if (k > s->n_groups || (k == s->n_groups && strcmp(rest, "ref") != 0)) {
		if (strcmp(rest, "nodes") == 0)
			capsim_diags_add_at(d, where, "%s: %s nodes of a further type, but no <%s "
					    "ref=\"...\"/> names it", path, value, name);
		else
			capsim_diags_add_at(d, where, "%s: given without the node groups before it "
					    "(the cluster has %d)", path, s->n_groups);
		return -1;
	}
	if (k == s->n_groups) {
		memset(&s->groups[k], 0, sizeof s->groups[k]);
		s->n_groups++;
		set_group_field(s, k, "ref", value, NULL, 0);
		default_group_id(s, k);
	}
	int before = s->groups[k].nodes;
	int rc = edit_group(s, k, rest, path, value, where, d);
	if (rc >= 0 && strcmp(rest, "nodes") == 0) {
		int total = s->nodes, left = s->groups[0].nodes - (s->groups[k].nodes - before);
		if (left < 1) {
			capsim_diags_add_at(d, where, "cluster.mix.nodes: expected 1 to %d (fewer "
					    "than the cluster's %d nodes), found %d", total - 1, total,
					    total - left);
			return -1;
		}
		s->groups[0].nodes = left;
	}
	return rc;
}

/* The one-group form's paths (cluster.node.*, cluster.gpu.*, cluster.nic.*):
 * the first group's. Writes its part's rest to *rest (for cluster.node.F:
 * F; cluster.gpu.F: gpu.F) into buf; 0 when path is none of them. */
static int shorthand_rest(const char *path, char *buf, size_t len)
{
	static const char *const heads[] = { "cluster.node.", "cluster.gpu.", "cluster.nic." };
	static const char *const parts[] = { "", "gpu.", "nic." };
	for (int k = 0; k < 3; k++) {
		size_t n = strlen(heads[k]);
		if (strncmp(path, heads[k], n) != 0)
			continue;
		const char *r = path + n;
		snprintf(buf, len, "%s%s", strcmp(r, "profile") == 0 ? "" : parts[k], r);
		return 1;
	}
	return 0;
}

/* Apply one edit to s without checking the whole; returns 0, 1 when the
 * parts must be resolved again, or -1 after adding the reason to d. */
static int apply_edit(capsim_scenario *s, const char *path, const char *value,
		      capsim_diags *d)
{
	char where[512], tmpl[256], rest[256];
	snprintf(where, sizeof where, "--set %s=%s", path, value);
	int rc = edit_mix(s, path, value, where, d);
	if (rc != -2)
		return rc;
	if (strcmp(path, "cluster.nodes") == 0)
		return edit_nodes(s, value, where, d);
	if (s->n_groups > 0 && shorthand_rest(path, rest, sizeof rest))
		return edit_group(s, 0, rest, path, value, where, d);
	int g = capsim_scenario_group_path(s, path, tmpl, sizeof tmpl);
	if (g == -2) {
		char ids[512];
		capsim_scenario_group_ids(s, ids, sizeof ids);
		capsim_diags_add_at(d, where, "%s: no node group has that id or index; the "
				    "groups: %s (0 to %d)", path, ids, s->n_groups - 1);
		return -1;
	}
	if (g >= 0) {
		char canon[256];
		const char *r = tmpl + strlen("cluster.group.ID.");
		snprintf(canon, sizeof canon, "cluster.group.%s.%s", s->groups[g].id, r);
		return edit_group(s, g, r, canon, value, where, d);
	}
	const capsim_field *f = capsim_field_find(capsim_scenario_fields,
						  capsim_scenario_n_fields, path);
	if (f && !(f->flags & CAPSIM_F_GROUP)) {
		char err[512];
		if (capsim_field_parse(f, value, s, err, sizeof err) < 0) {
			capsim_diags_add_at(d, where, "%s: %s", path, err);
			return -1;
		}
		if (remember_edit(s, path, value, where, d) < 0)
			return -1;
		return f->type == CAPSIM_FT_REF || strstr(path, ".profile") != NULL;
	}
	const capsim_field *pf;
	if (override_slot(path, &pf)) {
		if (add_override(s, path, value, 0, d, where) < 0 ||
		    remember_edit(s, path, value, where, d) < 0)
			return -1;
		return 1;
	}
	unknown_path_message("path", path, NULL, 0, where, d);
	return -1;
}

/* f's value in obj as a capsim_path_value */
static void field_value(const capsim_field *f, const void *obj, capsim_path_value *out)
{
	const char *at = (const char *)obj + f->offset;
	memset(out, 0, sizeof *out);
	switch (f->type) {
	case CAPSIM_FT_DOUBLE:
		out->num = *(const double *)at;
		return;
	case CAPSIM_FT_INT:
	case CAPSIM_FT_FLAG:
		out->num = *(const int *)at;
		return;
	case CAPSIM_FT_ENUM:
		out->is_text = 1;
		capsim_strlcpy(out->text, f->enums[*(const int *)at], sizeof out->text);
		return;
	case CAPSIM_FT_TEXT:
	case CAPSIM_FT_REF:
	case CAPSIM_FT_DATE:
		out->is_text = 1;
		capsim_strlcpy(out->text, at, sizeof out->text);
		return;
	}
}

const capsim_field *capsim_scenario_path_field(const char *path)
{
	char tmpl[256];
	path = group_template(path, tmpl, sizeof tmpl);
	const capsim_field *f = capsim_field_find(capsim_scenario_fields,
						  capsim_scenario_n_fields, path);
	if (!f)
		override_slot(path, &f);
	return f;
}

/* The field at path and the object it reads from in s: a scenario field, a
 * node group's (its key any id or index of s), or a part's. NULL with err. */
static const capsim_field *path_target(const capsim_scenario *s, const char *path,
				       const char **obj, int *present, char *err, size_t errlen)
{
	char tmpl[256];
	int g = capsim_scenario_group_path(s, path, tmpl, sizeof tmpl);
	if (g == -2) {
		snprintf(err, errlen, "%s: no node group has that id or index", path);
		return NULL;
	}
	const char *p = g >= 0 ? tmpl : path;
	*obj = (const char *)s + (g > 0 ? (size_t)g * sizeof(capsim_node_group) : 0);
	*present = 1;
	const capsim_field *f = capsim_field_find(capsim_scenario_fields,
						  capsim_scenario_n_fields, p);
	if (f)
		return f;
	const capsim_part_slot *slot = override_slot(p, &f);
	if (!f) {
		snprintf(err, errlen, "unknown path '%s'", path);
		return NULL;
	}
	if (slot->has_offset != (size_t)-1 && !*(const int *)(*obj + slot->has_offset))
		*present = 0;
	*obj += slot->obj_offset;
	return f;
}

int capsim_scenario_path_value(const capsim_scenario *s, const char *path, const char *value,
			       capsim_path_value *out, char *err, size_t errlen)
{
	const char *obj;
	int present;
	const capsim_field *f = path_target(s, path, &obj, &present, err, errlen);
	if (!f)
		return -1;
	if (!value) {
		if (!present) {
			snprintf(err, errlen, "%s: the scenario has none of it", path);
			return -1;
		}
		field_value(f, obj, out);
		return 0;
	}
	/* parsed into scratch room for the field alone */
	size_t size = f->type == CAPSIM_FT_DOUBLE ? sizeof(double) :
		      f->type == CAPSIM_FT_INT || f->type == CAPSIM_FT_FLAG ||
		      f->type == CAPSIM_FT_ENUM ? sizeof(int) : f->size;
	capsim_field one = *f;
	one.offset = 0;
	union {
		double num;
		char text[CAPSIM_PATH_LEN];
	} scratch;
	if (size > sizeof scratch) {
		snprintf(err, errlen, "internal: %s: field too large", path);
		return -1;
	}
	if (capsim_field_parse(&one, value, &scratch, err, errlen) < 0)
		return -1;
	field_value(&one, &scratch, out);
	return 0;
}

int capsim_scenario_set(capsim_scenario *s, const capsim_catalog *cat, const char *path,
			const char *value, capsim_diags *d)
{
	capsim_set one = { path, value };
	return capsim_scenario_set_many(s, cat, &one, 1, d);
}

int capsim_scenario_set_many(capsim_scenario *s, const capsim_catalog *cat,
			     const capsim_set *sets, size_t n, capsim_diags *d)
{
	size_t before = d->n;
	if (!cat)
		cat = s->catalog;
	capsim_scenario *t = capsim_xmalloc(sizeof *t);
	*t = *s;
	int resolve = 0;
	for (size_t i = 0; i < n; i++) {
		int rc = apply_edit(t, sets[i].path, sets[i].value, d);
		if (rc > 0)
			resolve = 1;
	}
	if (d->n == before && resolve && !cat)
		capsim_diags_add_at(d, sets[0].path, "internal: an edit of a part needs the catalog");
	else if (d->n == before && resolve) {
		resolve_parts(t, cat, d);
		t->catalog = cat;
	}
	if (d->n == before)
		check_consistency(t, cat, 0, d);
	int ok = d->n == before;
	if (ok)
		*s = *t;
	free(t);
	return ok ? 0 : -1;
}

/* ---- loading ------------------------------------------------------------------- */

/* Every element's line, by its path below <scenario>, once a path: a node
 * group's (and an old <mix>'s) children under cluster.group, <note>s left
 * out. The file was checked for unknown names first, so the paths are the
 * elements of the settable paths (capsim_scenario_set_paths: every proper
 * prefix, a group's without its id) and the root and <description>: 103 of
 * at most 32 characters, which test_groups checks against the cap.
 * Returns 0, or -1 after adding to d that a path does not fit. */
static int record_lines(capsim_scenario *s, xmlNode *el, const char *path, capsim_diags *d)
{
	if (s->n_lines == CAPSIM_MAX_LINES || strlen(path) >= sizeof s->lines[0].path) {
		capsim_diags_add(d, s->file, xmlGetLineNo(el),
				 "internal: element <%s> (%s): expected at most %d element paths "
				 "of at most %zu characters to keep lines of",
				 (const char *)el->name, path, CAPSIM_MAX_LINES,
				 sizeof s->lines[0].path - 1);
		return -1;
	}
	capsim_elem_line *l = &s->lines[s->n_lines++];
	capsim_strlcpy(l->path, path, sizeof l->path);
	l->line = xmlGetLineNo(el);
	for (xmlNode *c = el->children; c; c = c->next) {
		if (c->type != XML_ELEMENT_NODE || strcmp((const char *)c->name, "note") == 0)
			continue;
		const char *name = (const char *)c->name;
		if (strcmp(path, "cluster") == 0 && mix_index(name) > 0)
			name = "group";
		char sub[256];
		snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "", name);
		int seen = 0;
		for (int i = 0; i < s->n_lines; i++)
			if (strcmp(s->lines[i].path, sub) == 0)
				seen = 1;
		if (!seen && record_lines(s, c, sub, d) < 0)
			return -1;
	}
	return 0;
}

/* The fields of kind kid that element el gives, checked as the file's
 * (duplicates, malformed values at their lines) and kept as overrides below
 * prefix. Returns the problems found. */
static int record_part(capsim_scenario *s, xmlNode *el, capsim_kind_id kid, const char *prefix,
		       const char *label, capsim_diags *d)
{
	const capsim_kind *kind = &capsim_kinds[kid];
	capsim_origin o = { .file = s->file, .label = label, .prefix = prefix };
	void *scratch = capsim_xcalloc(1, kind->size);
	int problems = capsim_fields_apply(kind->fields, kind->n_fields, scratch, el,
					   CAPSIM_APPLY_OVERRIDE, &o, d);
	free(scratch);
	if (problems)
		return problems;
	xmlNode *dup;
	for (size_t j = 0; j < kind->n_fields; j++) {
		const capsim_field *f = &kind->fields[j];
		if (strcmp(f->path, "id") == 0)
			continue;
		const char *dot = strrchr(f->path, '.');
		size_t elen = dot ? (size_t)(dot - f->path) : 0;
		xmlNode *holder = capsim_xml_child_path(el, f->path, elen, &dup);
		xmlChar *v = holder ? xmlGetProp(holder, (const xmlChar *)(dot ? dot + 1 : f->path)) : NULL;
		if (!v)
			continue;
		char full[256], where[CAPSIM_PATH_LEN + 32];
		snprintf(full, sizeof full, "%s.%s", prefix, f->path);
		snprintf(where, sizeof where, "%s:%ld", s->file, xmlGetLineNo(holder));
		if (add_override(s, full, (const char *)v, xmlGetLineNo(holder), d, where) < 0)
			problems++;
		xmlFree(v);
	}
	return problems;
}

/* The part overrides the file gives for parts that are no node group's. */
static int record_overrides(capsim_scenario *s, xmlNode *root, capsim_diags *d)
{
	int problems = 0;
	for (size_t i = 0; i < capsim_n_part_slots; i++) {
		const capsim_part_slot *slot = &capsim_part_slots[i];
		const capsim_kind *kind = &capsim_kinds[slot->kind];
		if (slot->group)
			continue; /* read_groups */
		xmlNode *dup;
		xmlNode *el = capsim_xml_child_path(root, slot->path, strlen(slot->path), &dup);
		if (!el)
			continue;
		const char *ref = (const char *)s + slot->ref_offset;
		/* a model may be defined in the scenario itself: its fields, no ref */
		int inline_model = !*ref && slot->kind == CAPSIM_KIND_MODEL;
		if (!*ref && !inline_model) {
			capsim_diags_add(d, s->file, xmlGetLineNo(el),
					 "%s: ref is required (the id of a %s of the catalog)",
					 slot->path, kind->name);
			problems++;
			continue;
		}
		s->model_inline |= inline_model;
		char label[160];
		if (inline_model)
			snprintf(label, sizeof label, "%s (defined in the scenario)", slot->path);
		else
			snprintf(label, sizeof label, "%s (%s '%s')", slot->path, kind->name, ref);
		problems += record_part(s, el, slot->kind, slot->path, label, d);
	}
	return problems;
}

/* ---- node groups in the file ---------------------------------------------------- */

/* A new group at element el (line), or -1 past the most a cluster holds. */
static int add_group(capsim_scenario *s, xmlNode *el, int found, capsim_diags *d)
{
	if (s->n_groups == CAPSIM_MAX_GROUPS) {
		capsim_diags_add(d, s->file, xmlGetLineNo(el), "cluster: %d node groups, more than "
				 "the %d a cluster holds", found, CAPSIM_MAX_GROUPS);
		return -1;
	}
	int g = s->n_groups++;
	memset(&s->groups[g], 0, sizeof s->groups[g]);
	s->groups[g].line = xmlGetLineNo(el);
	return g;
}

/* An attribute of a group's element into its field rest; the problems. */
static int group_attr(capsim_scenario *s, int g, xmlNode *el, const char *attr,
		      const char *rest, const char *elem, capsim_diags *d)
{
	xmlChar *v = el ? xmlGetProp(el, (const xmlChar *)attr) : NULL;
	if (!v)
		return 0;
	char err[512];
	int bad = set_group_field(s, g, rest, (const char *)v, err, sizeof err) < 0;
	if (bad)
		capsim_diags_add(d, s->file, xmlGetLineNo(el), "%s: %s: %s", elem, attr, err);
	xmlFree(v);
	return bad;
}

/* 1 when a group before g has id */
static int id_before(const capsim_scenario *s, const char *id, int g)
{
	for (int i = 0; i < g; i++)
		if (strcmp(s->groups[i].id, id) == 0)
			return 1;
	return 0;
}

/* A group's id as given: no dots (they separate a path), not all digits (an
 * index), unique. */
static int check_group_id(capsim_scenario *s, int g, xmlNode *el, capsim_diags *d)
{
	const char *id = s->groups[g].id;
	const char *why = strchr(id, '.') ? "a dot separates the parts of a path" :
			  strspn(id, "0123456789") == strlen(id) ? "digits alone are an index" :
			  id_before(s, id, g) ? "a group before it has it" : NULL;
	if (!why)
		return 0;
	capsim_diags_add(d, s->file, xmlGetLineNo(el), "cluster.group: id '%s' cannot name a "
			 "group (%s): expected a unique id of letters, digits, - and _", id, why);
	return 1;
}

/* The one-group form: <cluster nodes="N"><node ref="..."/> with the
 * cluster's <gpu> and <nic>, as group 0. */
static int read_shorthand(capsim_scenario *s, xmlNode *cl, xmlNode *node,
			  const capsim_catalog *cat, capsim_diags *d)
{
	int g = add_group(s, node, 1, d);
	capsim_node_group *m = &s->groups[g];
	m->shorthand = 1;
	capsim_strlcpy(m->node_ref, s->node_ref, sizeof m->node_ref);
	capsim_strlcpy(m->gpu_ref, s->gpu_ref, sizeof m->gpu_ref);
	capsim_strlcpy(m->nic_ref, s->nic_ref, sizeof m->nic_ref);
	capsim_strlcpy(m->profile, s->gpu_profile, sizeof m->profile);
	m->nodes = s->nodes;
	default_group_id(s, g);
	if (!s->nodes) {
		capsim_diags_add(d, s->file, xmlGetLineNo(cl), "cluster: nodes is missing (how many "
				 "nodes of type '%s' the cluster has)", m->node_ref);
		return 1;
	}
	const capsim_node *entry = capsim_catalog_find(cat, CAPSIM_KIND_NODE, m->node_ref);
	char label[256];
	snprintf(label, sizeof label, "cluster.node (node '%s')", m->node_ref);
	int problems = record_part(s, node, CAPSIM_KIND_NODE, "cluster.node", label, d);
	static const char *const tag[2] = { "gpu", "nic" };
	for (int k = 0; k < 2; k++) {
		xmlNode *el = capsim_xml_child(cl, tag[k]);
		if (!el)
			continue;
		const char *ref = k == 0 ? m->gpu_ref : m->nic_ref;
		if (!*ref && entry)
			ref = k == 0 ? entry->gpu : entry->nic;
		char path[32];
		snprintf(path, sizeof path, "cluster.%s", tag[k]);
		snprintf(label, sizeof label, "%s (%s '%s')", path, tag[k], ref);
		problems += record_part(s, el, k == 0 ? CAPSIM_KIND_GPU : CAPSIM_KIND_NIC, path,
					label, d);
	}
	return problems;
}

/* The old forms <mix>, <mix2>, <mix3> (the last nodes of the cluster's, in
 * that order) as groups after the one-group form's, with a warning each. */
static int read_mixes(capsim_scenario *s, xmlNode *mix[4], capsim_diags *d)
{
	int problems = 0, others = 0, found = 1;
	for (int k = 1; k <= 3; k++)
		found += mix[k] != NULL;
	for (int k = 1; k <= 3; k++) {
		if (!mix[k])
			continue;
		char elem[16], where[CAPSIM_PATH_LEN + 32];
		snprintf(elem, sizeof elem, "cluster.%s", (const char *)mix[k]->name);
		int g = add_group(s, mix[k], found, d);
		if (g < 0)
			return problems + 1;
		problems += group_attr(s, g, mix[k], "ref", "ref", elem, d);
		problems += group_attr(s, g, mix[k], "profile", "profile", elem, d);
		problems += group_attr(s, g, mix[k], "nodes", "nodes", elem, d);
		capsim_node_group *m = &s->groups[g];
		if (!m->node_ref[0]) {
			capsim_diags_add(d, s->file, m->line, "%s: ref is required (the id of a node "
					 "of the catalog)", elem);
			return problems + 1;
		}
		default_group_id(s, g);
		snprintf(where, sizeof where, "%s:%ld", s->file, m->line);
		warn(where, "<%s> is the old form of a node group: write <group id=\"%s\" "
		     "ref=\"%s\" nodes=\"%d\"/> (capsim validate --resolved writes the scenario so)",
		     (const char *)mix[k]->name, m->id, m->node_ref, m->nodes);
		char pre[128], label[256];
		group_prefix(s, g, 0, pre, sizeof pre);
		snprintf(label, sizeof label, "%s (node '%s')", elem, m->node_ref);
		problems += record_part(s, mix[k], CAPSIM_KIND_NODE, pre, label, d);
		others += m->nodes;
	}
	if (!problems && s->n_groups > 1 && others >= s->nodes) {
		capsim_diags_add(d, s->file, s->groups[1].line, "cluster.mix.nodes: expected 1 to %d "
				 "(fewer than the cluster's %d nodes), found %d", s->nodes - 1,
				 s->nodes, others);
		problems++;
	} else if (s->n_groups > 1) {
		s->groups[0].nodes = s->nodes - others;
	}
	return problems;
}

/* <group> elements in the order given: their attributes and ids, then
 * their parts' overrides below cluster.group.ID. */
static int read_group_elements(capsim_scenario *s, xmlNode *cl, int found, capsim_diags *d)
{
	int problems = 0;
	xmlNode *el[CAPSIM_MAX_GROUPS];
	for (xmlNode *c = cl->children; c; c = c->next) {
		if (c->type != XML_ELEMENT_NODE || strcmp((const char *)c->name, "group") != 0)
			continue;
		int g = add_group(s, c, found, d);
		if (g < 0)
			return problems + 1;
		el[g] = c;
		problems += group_attr(s, g, c, "ref", "ref", "cluster.group", d);
		problems += group_attr(s, g, c, "nodes", "nodes", "cluster.group", d);
		problems += group_attr(s, g, c, "profile", "profile", "cluster.group", d);
		problems += group_attr(s, g, capsim_xml_child(c, "gpu"), "ref", "gpu.ref",
				       "cluster.group.gpu", d);
		problems += group_attr(s, g, capsim_xml_child(c, "nic"), "ref", "nic.ref",
				       "cluster.group.nic", d);
		xmlChar *id = xmlGetProp(c, (const xmlChar *)"id");
		if (id)
			capsim_strlcpy(s->groups[g].id, (const char *)id, sizeof s->groups[g].id);
		xmlFree(id);
	}
	for (int g = 0; g < s->n_groups; g++)
		problems += s->groups[g].id[0] ? check_group_id(s, g, el[g], d) : 0;
	for (int g = 0; g < s->n_groups; g++)
		if (!s->groups[g].id[0])
			default_group_id(s, g);
	if (problems)
		return problems;
	for (int g = 0; g < s->n_groups; g++) {
		char pre[3][128], label[256];
		for (int k = 0; k < 3; k++)
			group_prefix(s, g, k, pre[k], sizeof pre[k]);
		snprintf(label, sizeof label, "%s (node '%s')", pre[0], s->groups[g].node_ref);
		problems += record_part(s, el[g], CAPSIM_KIND_NODE, pre[0], label, d);
		xmlNode *gpu = capsim_xml_child(el[g], "gpu"), *nic = capsim_xml_child(el[g], "nic");
		if (gpu)
			problems += record_part(s, gpu, CAPSIM_KIND_GPU, pre[1], pre[1], d);
		if (nic)
			problems += record_part(s, nic, CAPSIM_KIND_NIC, pre[2], pre[2], d);
	}
	return problems;
}

/* The element below <cluster> that may be given once, repeated: a problem. */
static int once(capsim_scenario *s, xmlNode *cl, const char *name, xmlNode **first,
		capsim_diags *d)
{
	int n = 0;
	*first = NULL;
	for (xmlNode *c = cl->children; c; c = c->next) {
		if (c->type != XML_ELEMENT_NODE || strcmp((const char *)c->name, name) != 0)
			continue;
		if (n++ == 0) {
			*first = c;
		} else {
			capsim_diags_add(d, s->file, xmlGetLineNo(c), "cluster: element '%s' is given "
					 "more than once", name);
			return 1;
		}
	}
	return 0;
}

/* The cluster's node groups: <group> elements, or the one-group form (and
 * the old forms of further groups after it). */
static int read_groups(capsim_scenario *s, xmlNode *root, const capsim_catalog *cat,
		       capsim_diags *d)
{
	xmlNode *cl = capsim_xml_child(root, "cluster");
	xmlNode *node, *gpu, *nic, *mix[4] = { NULL, NULL, NULL, NULL };
	int problems = once(s, cl, "node", &node, d) + once(s, cl, "gpu", &gpu, d) +
		       once(s, cl, "nic", &nic, d) + once(s, cl, "mix", &mix[1], d) +
		       once(s, cl, "mix2", &mix[2], d) + once(s, cl, "mix3", &mix[3], d);
	int n = 0;
	for (xmlNode *c = cl->children; c; c = c->next)
		n += c->type == XML_ELEMENT_NODE && strcmp((const char *)c->name, "group") == 0;
	xmlNode *alone = node ? node : gpu ? gpu : nic ? nic : mix[1] ? mix[1] : mix[2] ? mix[2] :
			 mix[3];
	if (problems)
		return problems;
	if (n && alone) {
		capsim_diags_add(d, s->file, xmlGetLineNo(alone), "cluster.%s: expected inside a "
				 "<group> (a cluster of <group> elements has no <%s> of its own), "
				 "found beside them", (const char *)alone->name,
				 (const char *)alone->name);
		return 1;
	}
	if (n) {
		problems = read_group_elements(s, cl, n, d);
		long sum = 0;
		for (int g = 0; g < s->n_groups; g++)
			sum += s->groups[g].nodes;
		if (!problems && s->nodes && s->nodes != sum) {
			capsim_diags_add(d, s->file, xmlGetLineNo(cl), "cluster.nodes: expected the sum "
					 "of the groups' nodes, %ld, found %d (or leave it out)",
					 sum, s->nodes);
			problems++;
		}
		return problems;
	}
	if (!node) {
		capsim_diags_add(d, s->file, xmlGetLineNo(cl), "cluster: no node type: expected "
				 "<group id=\"...\" ref=\"...\" nodes=\"...\"/> elements, or one "
				 "<node ref=\"...\"/> with <cluster nodes=\"...\">");
		return 1;
	}
	problems = read_shorthand(s, cl, node, cat, d);
	return problems ? problems : read_mixes(s, mix, d);
}

static int load_doc(xmlDoc *doc, const char *path, const capsim_catalog *cat,
		    const capsim_set *sets, size_t n_sets, int any_layout, capsim_scenario *out,
		    capsim_diags *d)
{
	size_t before = d->n;
	xmlNode *root = xmlDocGetRootElement(doc);
	if (!root || strcmp((const char *)root->name, "scenario") != 0) {
		capsim_diags_add(d, path, root ? xmlGetLineNo(root) : 0,
				 "root element <%s> is not <scenario>",
				 root ? (const char *)root->name : "");
		return -1;
	}
	/* unknown names first, with the nearest valid paths: the schema would
	 * refuse them too, but without suggestions */
	check_unknown(root, path, d);
	if (d->n != before)
		return -1;
	if (capsim_xml_validate(doc, "scenario", path, d) < 0)
		return -1;

	capsim_strlcpy(out->file, path, sizeof out->file);
	xmlNode *desc = capsim_xml_child(root, "description");
	if (desc) {
		xmlChar *t = xmlNodeGetContent(desc);
		if (t)
			capsim_strlcpy(out->description, (const char *)t,
				       sizeof out->description);
		xmlFree(t);
	}
	if (record_lines(out, root, "", d) < 0)
		return -1;
	capsim_origin o = { .file = path, .label = "scenario", .prefix = "" };
	if (capsim_fields_apply(capsim_scenario_fields, capsim_scenario_n_fields,
				out, root, CAPSIM_APPLY_LOAD, &o, d))
		return -1;
	if (read_groups(out, root, cat, d) || record_overrides(out, root, d))
		return -1;
	out->fabric_line = line_of(out, "cluster.fabric");
	/* the edits: refs, fields and overrides, before anything is resolved */
	for (size_t i = 0; i < n_sets; i++)
		apply_edit(out, sets[i].path, sets[i].value, d);
	if (d->n != before)
		return -1;
	if (resolve_parts(out, cat, d))
		return -1;
	check_consistency(out, cat, any_layout, d);
	out->catalog = cat;
	return d->n == before ? 0 : -1;
}

static int load_file(const char *path, const capsim_catalog *cat, const capsim_set *sets,
		     size_t n_sets, int any_layout, capsim_scenario *out, capsim_diags *d)
{
	memset(out, 0, sizeof *out);
	char sha[65];
	xmlDoc *doc = capsim_xml_read(path, sha, d);
	if (!doc)
		return -1;
	int rc = load_doc(doc, path, cat, sets, n_sets, any_layout, out, d);
	xmlFreeDoc(doc);
	memcpy(out->sha256, sha, sizeof out->sha256);
	return rc;
}

int capsim_scenario_load(const char *path, const capsim_catalog *cat,
			 const capsim_set *sets, size_t n_sets,
			 capsim_scenario *out, capsim_diags *d)
{
	return load_file(path, cat, sets, n_sets, 0, out, d);
}

int capsim_scenario_load_any_layout(const char *path, const capsim_catalog *cat,
				    const capsim_set *sets, size_t n_sets, capsim_scenario *out,
				    capsim_diags *d)
{
	return load_file(path, cat, sets, n_sets, 1, out, d);
}

int capsim_scenario_load_memory(const char *buf, size_t len, const char *name,
				const capsim_catalog *cat,
				const capsim_set *sets, size_t n_sets,
				capsim_scenario *out, capsim_diags *d)
{
	memset(out, 0, sizeof *out);
	xmlDoc *doc = capsim_xml_read_memory(buf, len, name, d);
	if (!doc)
		return -1;
	int rc = load_doc(doc, name, cat, sets, n_sets, 0, out, d);
	xmlFreeDoc(doc);
	capsim_sha256_hex(buf, len, out->sha256);
	return rc;
}

/* ---- writing ------------------------------------------------------------------- */

/* Write the fields of f whose element path (without the attribute) is elem,
 * as attributes. */
static void write_attrs(FILE *out, const capsim_field *f, size_t n,
			const void *obj, const char *elem, int skip_id)
{
	char buf[512];
	size_t elen = strlen(elem);
	for (size_t i = 0; i < n; i++) {
		const char *dot = strrchr(f[i].path, '.');
		size_t plen = dot ? (size_t)(dot - f[i].path) : 0;
		if (plen != elen || strncmp(f[i].path, elem, elen) != 0)
			continue;
		if (skip_id && strcmp(f[i].path, "id") == 0)
			continue;
		if (capsim_field_format(&f[i], obj, buf, sizeof buf) != 0)
			continue;
		fprintf(out, " %s=\"", dot ? dot + 1 : f[i].path);
		capsim_xml_escape(out, buf);
		fputc('"', out);
	}
}

/* a part's own attributes: nodes="N" (a node group's; none when nodes < 0)
 * and profile="PATH" (escaped), into buf */
static void part_extra(char *buf, size_t size, int nodes, const char *profile)
{
	FILE *f = fmemopen(buf, size, "w");
	if (!f) {
		buf[0] = '\0';
		return;
	}
	if (nodes >= 0)
		fprintf(f, " nodes=\"%d\"", nodes);
	if (profile[0]) {
		fputs(" profile=\"", f);
		capsim_xml_escape(f, profile);
		fputc('"', f);
	}
	fclose(f);
}

/* A part's element: its ref, extra, its attributes and child elements, left
 * open for what goes inside it. */
static void write_part_open(FILE *out, const capsim_kind *k, const void *obj,
			    const char *tag, const char *ref, int indent, const char *extra)
{
	fprintf(out, "%*s<%s", indent, "", tag);
	if (*ref) {
		fputs(" ref=\"", out);
		capsim_xml_escape(out, ref);
		fputc('"', out);
	}
	if (extra)
		fputs(extra, out);
	write_attrs(out, k->fields, k->n_fields, obj, "", 1);
	fputs(">\n", out);
	for (size_t i = 0; i < k->n_fields; i++) {
		const char *dot = strrchr(k->fields[i].path, '.');
		if (!dot)
			continue;
		char el[128];
		size_t len = (size_t)(dot - k->fields[i].path);
		snprintf(el, sizeof el, "%.*s", (int)len, k->fields[i].path);
		/* first field of this element only */
		int seen = 0;
		for (size_t j = 0; j < i; j++) {
			const char *dj = strrchr(k->fields[j].path, '.');
			if (dj && (size_t)(dj - k->fields[j].path) == len &&
			    strncmp(k->fields[j].path, el, len) == 0)
				seen = 1;
		}
		if (seen)
			continue;
		char buf[512];
		int any = 0;
		for (size_t j = i; j < k->n_fields; j++) {
			const char *dj = strrchr(k->fields[j].path, '.');
			if (dj && (size_t)(dj - k->fields[j].path) == len &&
			    strncmp(k->fields[j].path, el, len) == 0 &&
			    capsim_field_format(&k->fields[j], obj, buf, sizeof buf) == 0)
				any = 1;
		}
		if (!any)
			continue;
		fprintf(out, "%*s<%s", indent + 2, "", el);
		write_attrs(out, k->fields, k->n_fields, obj, el, 1);
		fputs("/>\n", out);
	}
}

/* A part's element, whole. */
static void write_part(FILE *out, const capsim_kind *k, const void *obj,
		       const char *tag, const char *ref, int indent, const char *extra)
{
	write_part_open(out, k, obj, tag, ref, indent, extra);
	fprintf(out, "%*s</%s>\n", indent, "", tag);
}

/* Each node group as a <group> element: its id, node, nodes and profile, the
 * node's fields, and its GPU and NIC inside it. */
static void write_groups(FILE *out, const capsim_scenario *s)
{
	for (int g = 0; g < s->n_groups; g++) {
		const capsim_node_group *m = &s->groups[g];
		/* room for a profile path escaped: at most 6 bytes a byte (&quot;) */
		char extra[6 * CAPSIM_PATH_LEN + 6 * CAPSIM_ID_LEN + 64];
		FILE *f = fmemopen(extra, sizeof extra, "w");
		if (!f)
			continue;
		fputs(" id=\"", f);
		capsim_xml_escape(f, m->id);
		fclose(f);
		size_t at = strlen(extra);
		snprintf(extra + at, sizeof extra - at, "\"");
		at = strlen(extra);
		part_extra(extra + at, sizeof extra - at, m->nodes, m->profile);
		write_part_open(out, &capsim_kinds[CAPSIM_KIND_NODE], &m->node, "group",
				m->node_ref, 4, extra);
		write_part(out, &capsim_kinds[CAPSIM_KIND_GPU], &m->gpu, "gpu", m->gpu_ref, 6,
			   NULL);
		write_part(out, &capsim_kinds[CAPSIM_KIND_NIC], &m->nic, "nic", m->nic_ref, 6,
			   NULL);
		fputs("    </group>\n", out);
	}
}

int capsim_scenario_write_xml(const capsim_scenario *s, FILE *out)
{
	const capsim_field *f = capsim_scenario_fields;
	size_t n = capsim_scenario_n_fields;

	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<scenario", out);
	write_attrs(out, f, n, s, "", 0);
	fputs(">\n", out);
	if (s->description[0]) {
		fputs("  <description>", out);
		capsim_xml_escape(out, s->description);
		fputs("</description>\n", out);
	}
	fputs("  <cluster", out);
	write_attrs(out, f, n, s, "cluster", 0);
	fputs(">\n", out);
	write_groups(out, s);
	fputs("    <fabric", out);
	write_attrs(out, f, n, s, "cluster.fabric", 0);
	fputs(">\n", out);
	if (s->has_switch)
		write_part(out, &capsim_kinds[CAPSIM_KIND_SWITCH], &s->fabric_switch,
			   "switch", s->switch_ref, 6, NULL);
	fputs("    </fabric>\n", out);
	fputs("    <storage", out);
	write_attrs(out, f, n, s, "cluster.storage", 0);
	fputs(">\n", out);
	if (s->has_local_storage)
		write_part(out, &capsim_kinds[CAPSIM_KIND_STORAGE], &s->local_storage,
			   "local", s->local_storage_ref, 6, NULL);
	if (s->has_shared_storage)
		write_part(out, &capsim_kinds[CAPSIM_KIND_STORAGE], &s->shared_storage,
			   "shared", s->shared_storage_ref, 6, NULL);
	fputs("    </storage>\n  </cluster>\n", out);
	fputs("  <workload", out);
	write_attrs(out, f, n, s, "workload", 0);
	fputs(">\n", out);
	write_part(out, &capsim_kinds[CAPSIM_KIND_MODEL], &s->model, "model",
		   s->model_ref, 4, NULL);
	fputs("    <parallelism", out);
	write_attrs(out, f, n, s, "workload.parallelism", 0);
	fputs("/>\n  </workload>\n", out);
	if (s->has_facility)
		write_part(out, &capsim_kinds[CAPSIM_KIND_FACILITY], &s->facility,
			   "facility", s->facility_ref, 2, NULL);
	fputs("  <cost", out);
	write_attrs(out, f, n, s, "cost", 0);
	fputs(">\n", out);
	if (s->has_cloud)
		write_part(out, &capsim_kinds[CAPSIM_KIND_CLOUD], &s->cloud, "cloud",
			   s->cloud_ref, 4, NULL);
	if (s->burst_cloud[0]) {
		fputs("    <burst", out);
		write_attrs(out, f, n, s, "cost.burst", 0);
		fputs("/>\n", out);
	}
	fputs("  </cost>\n</scenario>\n", out);
	return ferror(out) ? -1 : 0;
}

/* ---- changes that are not a user's edit ---------------------------------------- */

void capsim_scenario_screen_layout(capsim_scenario *scratch, const capsim_scenario_layout *l)
{
	scratch->tp = l->tp;
	scratch->pp = l->pp;
	scratch->cp = l->cp;
	scratch->ep = l->ep;
	scratch->dp = l->dp;
	scratch->virtual_stages = l->virtual_stages;
	scratch->schedule = l->virtual_stages > 1 ? CAPSIM_SCHED_1F1B_INTERLEAVED : CAPSIM_SCHED_1F1B;
	scratch->first_stage_layers = l->first_stage_layers;
	scratch->last_stage_layers = l->last_stage_layers;
	scratch->zero = l->zero;
	scratch->micro_batch = l->micro_batch;
	scratch->recompute = l->recompute;
	scratch->sequence_parallel = l->tp > 1;
	scratch->tp_comm_overlap = l->tp_comm_overlap;
	scratch->ep_overlap = l->ep_overlap;
}

void capsim_scenario_free_layout(capsim_scenario *s)
{
	s->first_stage_layers = s->last_stage_layers = 0;
	s->dp_given = 0;
}

void capsim_scenario_keep_optimizer_shard(capsim_scenario *s, int gpus)
{
	s->optimizer_shard = gpus;
}
