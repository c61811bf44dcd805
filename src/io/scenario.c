/* scenario.c - load, override, resolve and check a scenario; see scenario.h. */
#include "scenario.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

static int path_known(const char *path)
{
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
	if (where_at)
		capsim_diags_add_at(d, where_at, "unknown %s '%s'; nearest valid: %s",
				    what, path, list);
	else
		capsim_diags_add(d, where_file, line,
				 "unknown %s '%s'; nearest valid: %s", what, path,
				 list);
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

/* ---- applying --set to the document ---------------------------------------- */

static xmlNode *ensure_child(xmlNode *parent, const char *name)
{
	xmlNode *c = capsim_xml_child(parent, name);
	if (!c)
		c = xmlNewChild(parent, NULL, (const xmlChar *)name, NULL);
	return c;
}

static int apply_set(xmlNode *root, const capsim_set *s, capsim_diags *d)
{
	char where[512];
	snprintf(where, sizeof where, "--set %s=%s", s->path, s->value);
	if (!path_known(s->path)) {
		unknown_path_message("path", s->path, NULL, 0, where, d);
		return -1;
	}
	xmlNode *el = root;
	const char *p = s->path;
	const char *dot;
	char step[128];
	while ((dot = strchr(p, '.'))) {
		size_t n = (size_t)(dot - p);
		if (n >= sizeof step)
			return -1;
		memcpy(step, p, n);
		step[n] = '\0';
		el = ensure_child(el, step);
		if (!el)
			return -1;
		p = dot + 1;
	}
	xmlSetProp(el, (const xmlChar *)p, (const xmlChar *)s->value);
	return 0;
}

/* ---- unknown attributes and elements (overrides are not in the schema) ---- */

static void check_unknown(xmlNode *el, const char *path, const char *file,
			  capsim_diags *d)
{
	char sub[512];
	for (xmlAttr *a = el->properties; a; a = a->next) {
		const char *name = (const char *)a->name;
		if (strcmp(name, "src") == 0 || strcmp(name, "assumption") == 0)
			continue;
		snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "", name);
		if (!path_known(sub))
			unknown_path_message("attribute", sub, file, xmlGetLineNo(el),
					     NULL, d);
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
		if (!elem_known(sub)) {
			unknown_path_message("element", sub, file, xmlGetLineNo(c),
					     NULL, d);
			continue;
		}
		check_unknown(c, sub, file, d);
	}
}

/* ---- resolving catalog parts ------------------------------------------------- */

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

static xmlNode *elem_at(xmlNode *root, const char *path)
{
	xmlNode *dup;
	return capsim_xml_child_path(root, path, strlen(path), &dup);
}

/* line of the element at path, or of its deepest existing ancestor */
static long line_of(xmlNode *root, const char *path)
{
	char buf[256];
	capsim_strlcpy(buf, path, sizeof buf);
	for (;;) {
		xmlNode *e = elem_at(root, buf);
		if (e)
			return xmlGetLineNo(e);
		char *dot = strrchr(buf, '.');
		if (!dot)
			return xmlGetLineNo(root);
		*dot = '\0';
	}
}

static const char *set_value_of(const capsim_origin *o, const char *path)
{
	const char *v = NULL;
	for (size_t i = 0; i < o->n_sets; i++)
		if (strcmp(o->set_paths[i], path) == 0)
			v = o->set_values[i]; /* the last one given wins */
	return v;
}

/* The second node type's own GPU, NIC and NVSwitch, from the catalog
 * (its node entry names them; the catalog checked that they exist). */
static int resolve_mix(capsim_scenario *s, xmlNode *root, const capsim_catalog *cat,
		       const capsim_origin *base, capsim_diags *d)
{
	const capsim_node *n = &s->mix_node;
	const capsim_gpu *g = capsim_catalog_find(cat, CAPSIM_KIND_GPU, n->gpu);
	const capsim_nic *c = capsim_catalog_find(cat, CAPSIM_KIND_NIC, n->nic);
	if (!g || !c) {
		capsim_diags_add(d, base->file, line_of(root, "cluster.mix"),
				 "cluster.mix: node '%s' names %s '%s', which is not in the catalog",
				 n->e.id, g ? "NIC" : "GPU", g ? n->nic : n->gpu);
		return 1;
	}
	s->mix_gpu = *g;
	s->mix_nic = *c;
	s->mix_has_nvswitch = 0;
	if (n->nvswitch[0]) {
		const capsim_nvswitch *nv = capsim_catalog_find(cat, CAPSIM_KIND_NVSWITCH, n->nvswitch);
		if (nv) {
			s->mix_nvswitch = *nv;
			s->mix_has_nvswitch = 1;
		}
	}
	return 0;
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

/* Load the profile named at `path` (an element path below <scenario>) and
 * give its GPU model's fits to g. */
static int apply_profile(const char *name, const char *where, capsim_gpu *g,
			 xmlNode *root, const char *file, capsim_diags *d)
{
	char found[CAPSIM_PATH_LEN + 512];
	if (find_profile(name, file, found, sizeof found) < 0) {
		capsim_diags_add(d, file, line_of(root, where),
				 "%s.profile: no readable profile '%s' (looked beside the "
				 "scenario and under %s)",
				 where, name, capsim_catalog_default_root());
		return 1;
	}
	capsim_profile *p = capsim_xcalloc(1, sizeof *p);
	int bad = capsim_profile_load(found, p, d) < 0 || capsim_profile_apply(p, g, d) < 0;
	if (bad)
		capsim_diags_add(d, file, line_of(root, where),
				 "%s.profile: '%s' cannot be used (above)", where, name);
	capsim_profile_free(p);
	free(p);
	return bad;
}

static int resolve_parts(capsim_scenario *s, xmlNode *root,
			 const capsim_catalog *cat, const capsim_origin *base,
			 capsim_diags *d)
{
	int problems = 0;
	char *sc = (char *)s;

	for (size_t i = 0; i < capsim_n_part_slots; i++) {
		const capsim_part_slot *slot = &capsim_part_slots[i];
		const capsim_kind *kind = &capsim_kinds[slot->kind];
		char *ref = sc + slot->ref_offset;
		xmlNode *el = elem_at(root, slot->path);

		/* the node's own GPU and NIC, unless the scenario names others;
		 * where the id came from decides where a bad one is reported */
		char ref_path[160];
		snprintf(ref_path, sizeof ref_path, "%s.ref", slot->path);
		if (!*ref && slot->kind == CAPSIM_KIND_GPU && s->node.e.id[0]) {
			capsim_strlcpy(ref, s->node.gpu, CAPSIM_ID_LEN);
			snprintf(ref_path, sizeof ref_path, "cluster.node.gpus.ref");
		}
		if (!*ref && slot->kind == CAPSIM_KIND_NIC && s->node.e.id[0]) {
			capsim_strlcpy(ref, s->node.nic, CAPSIM_ID_LEN);
			snprintf(ref_path, sizeof ref_path, "cluster.node.nics.ref");
		}
		if (!*ref) {
			if (el) {
				capsim_diags_add(d, base->file, xmlGetLineNo(el),
						 "%s: ref is required (the id of a %s "
						 "of the catalog)",
						 slot->path, kind->name);
				problems++;
			}
			continue;
		}
		const void *entry = capsim_catalog_find(cat, slot->kind, ref);
		if (!entry) {
			char near[256];
			nearest_ids(cat, slot->kind, ref, near, sizeof near);
			const char *sv = set_value_of(base, ref_path);
			char elem_path[160];
			snprintf(elem_path, sizeof elem_path, "%.*s",
				 (int)(strrchr(ref_path, '.') - ref_path), ref_path);
			if (sv) {
				char where[512];
				snprintf(where, sizeof where, "--set %s=%s", ref_path, sv);
				capsim_diags_add_at(d, where,
						    "%s: '%s' is not a %s of the catalog; "
						    "nearest: %s",
						    ref_path, ref, kind->name, near);
			} else {
				capsim_diags_add(d, base->file, line_of(root, elem_path),
						 "%s: '%s' is not a %s of the catalog; "
						 "nearest: %s",
						 ref_path, ref, kind->name, near);
			}
			problems++;
			continue;
		}
		void *obj = sc + slot->obj_offset;
		memcpy(obj, entry, kind->size);
		if (slot->has_offset != (size_t)-1)
			*(int *)(sc + slot->has_offset) = 1;
		if (el) {
			capsim_origin o = *base;
			o.prefix = slot->path;
			char label[160];
			snprintf(label, sizeof label, "%s (%s '%s')", slot->path,
				 kind->name, ref);
			o.label = label;
			int p = capsim_fields_apply(kind->fields, kind->n_fields, obj,
						    el, CAPSIM_APPLY_OVERRIDE, &o, d);
			if (!p)
				p = capsim_catalog_check_entry(slot->kind, obj,
							       base->file,
							       xmlGetLineNo(el),
							       label, d);
			problems += p;
		}
	}
	if (s->node.nvswitch[0]) {
		const capsim_nvswitch *nv =
			capsim_catalog_find(cat, CAPSIM_KIND_NVSWITCH, s->node.nvswitch);
		if (nv) {
			s->nvswitch = *nv;
			s->has_nvswitch = 1;
		}
	}
	if (s->has_mix)
		problems += resolve_mix(s, root, cat, base, d);
	return problems;
}

/* ---- consistency ------------------------------------------------------------- */

/* Can the named switch build this fabric at all? Each rail is its own plane
 * (a rail-optimised fabric), so a plane must connect every node: one switch
 * layer (single-switch, or a 1-tier fat tree) connects k nodes; a 2-tier fat
 * tree of k-port switches with leaves of d node ports (d/(k-d) = the
 * oversubscription) connects k leaves x d; a 3-tier one k pods x k/2 leaves
 * x d (k^3/4 when non-blocking: Al-Fares et al., SIGCOMM 2008). */
static void check_fabric_size(const capsim_scenario *s, const char *file,
			      long line, capsim_diags *d)
{
	long k = s->fabric_switch.ports;
	const char *sw = s->fabric_switch.e.id;
	if (s->topology == CAPSIM_TOPO_SINGLE_SWITCH || s->tiers == 1) {
		if (s->nodes > k)
			capsim_diags_add(d, file, line,
					 "fabric: %d nodes on one switch layer, but "
					 "switch '%s' has %ld ports: one switch per rail "
					 "connects at most %ld nodes",
					 s->nodes, sw, k, k);
		return;
	}
	double o = s->oversubscription;
	long down = (long)floor((double)k * o / (1.0 + o));
	long max = s->tiers == 2 ? k * down : k * (k / 2) * down;
	if (down < 1 || down >= k)
		capsim_diags_add(d, file, line,
				 "fabric: oversubscription %.3g:1 leaves no uplink on "
				 "%ld-port switch '%s'",
				 o, k, sw);
	else if (s->nodes > max)
		capsim_diags_add(d, file, line,
				 "fabric: %d nodes, more than a %d-tier fat tree of "
				 "%ld-port '%s' switches at %.3g:1 connects per rail "
				 "(%ld)",
				 s->nodes, s->tiers, k, sw, o, max);
}

static int check_consistency(capsim_scenario *s, xmlNode *root,
			     const capsim_catalog *cat, const char *file,
			     capsim_diags *d)
{
	int before = (int)d->n;
	long par = line_of(root, "workload.parallelism");
	long wl = line_of(root, "workload");
	long fab = line_of(root, "cluster.fabric");
	long gpus = capsim_scenario_gpus(s);
	const capsim_model *m = &s->model;

#define BAD(line, ...) capsim_diags_add(d, file, line, __VA_ARGS__)
	long model_par = (long)s->tp * s->pp * s->cp;
	if (gpus % model_par) {
		BAD(par, "parallelism: tp x pp x cp = %d x %d x %d = %ld does not "
		    "divide the cluster's %ld GPUs (%d nodes x %d)",
		    s->tp, s->pp, s->cp, model_par, gpus, s->nodes, s->node.gpus);
	} else {
		long dp = gpus / model_par;
		if (s->dp && s->dp != dp)
			BAD(par, "parallelism: dp=%d, but %ld GPUs / (tp x pp x cp = "
			    "%ld) gives dp=%ld",
			    s->dp, gpus, model_par, dp);
		else
			s->dp = (int)dp;
	}
	long mix = line_of(root, "cluster.mix");
	if (s->has_mix) {
		if (s->mix_nodes < 1 || s->mix_nodes >= s->nodes)
			BAD(mix, "cluster.mix.nodes: expected 1 to %d (fewer than the "
			    "cluster's %d nodes), found %d",
			    s->nodes - 1, s->nodes, s->mix_nodes);
		if (s->mix_node.gpus != s->node.gpus ||
		    (s->mix_node.domain_gpus ? s->mix_node.domain_gpus : s->mix_node.gpus) !=
			    (s->node.domain_gpus ? s->node.domain_gpus : s->node.gpus))
			BAD(mix, "cluster.mix: node '%s' has %d GPUs in NVLink domains of %d; "
			    "the cluster's '%s' has %d in domains of %d: mixed nodes must "
			    "match, so that ranks keep their places",
			    s->mix_node.e.id, s->mix_node.gpus,
			    s->mix_node.domain_gpus ? s->mix_node.domain_gpus : s->mix_node.gpus,
			    s->node.e.id, s->node.gpus,
			    s->node.domain_gpus ? s->node.domain_gpus : s->node.gpus);
	} else if (s->mix_nodes) {
		BAD(mix, "cluster.mix.nodes: %d nodes of a second type, but no "
		    "<mix ref=\"...\"/> names it", s->mix_nodes);
	}
	if (s->straggler_stage >= s->pp)
		BAD(wl, "workload.straggler-stage: expected -1 or 0 to %d (pp=%d), found %d",
		    s->pp - 1, s->pp, s->straggler_stage);
	if (s->dp && s->straggler_replica >= s->dp)
		BAD(wl, "workload.straggler-replica: expected 0 to %d (dp=%d), found %d",
		    s->dp - 1, s->dp, s->straggler_replica);
	if (m->heads % s->tp)
		BAD(par, "parallelism: tp=%d does not divide %d attention heads",
		    s->tp, m->heads);
	if (m->kv_heads && m->kv_heads % s->tp && s->tp % m->kv_heads)
		BAD(par, "parallelism: tp=%d and %d key/value heads: neither "
		    "divides the other",
		    s->tp, m->kv_heads);
	int chunks = s->pp * s->virtual_stages;
	if (s->first_stage_layers || s->last_stage_layers) {
		int ends = (s->first_stage_layers ? 1 : 0) + (s->last_stage_layers ? 1 : 0);
		int rest = m->layers - s->first_stage_layers - s->last_stage_layers;
		if (s->pp < 2 || s->virtual_stages > 1)
			BAD(par, "parallelism: first- and last-stage-layers need pp >= 2 "
			    "and no virtual stages");
		else if (rest < 0 || (s->pp > ends && (rest % (s->pp - ends) || rest == 0)) ||
			 (s->pp == ends && rest != 0))
			BAD(par, "parallelism: %d layers less first-stage-layers=%d and "
			    "last-stage-layers=%d leave %d, which %d middle stages do not "
			    "share evenly",
			    m->layers, s->first_stage_layers, s->last_stage_layers, rest,
			    s->pp - ends);
	} else if (m->layers % chunks)
		BAD(par, "parallelism: pp x virtual-stages = %d x %d = %d does not "
		    "divide %d layers",
		    s->pp, s->virtual_stages, chunks, m->layers);
	if (s->virtual_stages > 1 && s->schedule != CAPSIM_SCHED_1F1B_INTERLEAVED)
		BAD(par, "parallelism: virtual-stages=%d needs "
		    "schedule=\"1f1b-interleaved\"",
		    s->virtual_stages);
	if (s->schedule == CAPSIM_SCHED_1F1B_INTERLEAVED &&
	    (s->pp < 2 || s->virtual_stages < 2))
		BAD(par, "parallelism: schedule 1f1b-interleaved needs pp >= 2 and "
		    "virtual-stages >= 2 (found pp=%d, virtual-stages=%d)",
		    s->pp, s->virtual_stages);
	if (s->cp > 1 && s->seq_len % (2 * s->cp))
		BAD(par, "parallelism: cp=%d needs seq-len divisible by 2 x cp = %d "
		    "(causal load balancing); seq-len is %d",
		    s->cp, 2 * s->cp, s->seq_len);
	if (s->moe_capacity_factor > 0 && !m->moe_experts)
		BAD(wl, "workload: moe-capacity-factor=%g, but model '%s' has no experts",
		    s->moe_capacity_factor, m->e.id);
	if (s->ep > 1) {
		if (!m->moe_experts)
			BAD(par, "parallelism: ep=%d, but model '%s' has no experts",
			    s->ep, m->e.id);
		else if (m->moe_experts % s->ep)
			BAD(par, "parallelism: ep=%d does not divide %d experts",
			    s->ep, m->moe_experts);
		if (s->dp && ((long)s->dp * s->cp) % s->ep)
			BAD(par, "parallelism: ep=%d does not divide dp x cp = %ld",
			    s->ep, (long)s->dp * s->cp);
	}
	if (s->dp) {
		double per = (double)s->micro_batch * s->dp;
		double q = s->global_batch / per;
		if (q != floor(q))
			BAD(wl, "workload: global-batch=%.0f is not a multiple of "
			    "micro-batch x dp = %d x %d = %.0f",
			    s->global_batch, s->micro_batch, s->dp, per);
		else if (s->schedule == CAPSIM_SCHED_1F1B_INTERLEAVED && s->pp > 1 &&
			 fmod(q, s->pp) != 0)
			BAD(par, "parallelism: the interleaved schedule needs the "
			    "micro-batches per step (%.0f = global-batch / (micro-batch "
			    "x dp)) to be a multiple of pp=%d",
			    q, s->pp);
	}
	if (capsim_gpu_peak(&s->gpu, s->dtype) <= 0)
		BAD(wl, "workload: dtype=%s, but GPU '%s' has no %s peak in the "
		    "catalog",
		    capsim_dtype_names[s->dtype], s->gpu.e.id,
		    capsim_dtype_names[s->dtype]);

	/* fabric */
	if (s->rails == 0)
		s->rails = s->node.nics;
	if (s->rails > s->node.nics)
		BAD(fab, "fabric: rails=%d, but node '%s' has %d NICs", s->rails,
		    s->node.e.id, s->node.nics);
	if (s->topology == CAPSIM_TOPO_NONE && s->nodes > 1) {
		int dom = s->node.domain_gpus ? s->node.domain_gpus : s->node.gpus;
		if (gpus > dom)
			BAD(fab, "fabric: topology 'none' with %d nodes; only a single "
			    "node or one NVLink domain needs no fabric",
			    s->nodes);
	}
	int nic_t = s->nic.transport;
	if (s->transport == CAPSIM_NET_INFINIBAND && nic_t == CAPSIM_TRANSPORT_ETHERNET)
		BAD(fab, "fabric: transport 'infiniband', but NIC '%s' is "
		    "Ethernet-only",
		    s->nic.e.id);
	if (s->transport == CAPSIM_NET_ROCE && nic_t == CAPSIM_TRANSPORT_INFINIBAND)
		BAD(fab, "fabric: transport 'roce', but NIC '%s' is "
		    "InfiniBand-only",
		    s->nic.e.id);
	if (s->has_switch) {
		int sw_t = s->fabric_switch.transport;
		/* TCP runs on either (over IPoIB on InfiniBand) */
		if ((s->transport == CAPSIM_NET_INFINIBAND &&
		     sw_t == CAPSIM_TRANSPORT_ETHERNET) ||
		    (s->transport == CAPSIM_NET_ROCE &&
		     sw_t == CAPSIM_TRANSPORT_INFINIBAND))
			BAD(fab, "fabric: switch '%s' does not carry transport '%s'",
			    s->fabric_switch.e.id,
			    s->transport == CAPSIM_NET_INFINIBAND ? "infiniband" :
			    s->transport == CAPSIM_NET_ROCE ? "roce" : "tcp");
		if (s->sharp && !s->fabric_switch.sharp)
			BAD(fab, "fabric: sharp=on, but switch '%s' has no SHARP",
			    s->fabric_switch.e.id);
	}
	if (s->has_switch && s->topology != CAPSIM_TOPO_NONE)
		check_fabric_size(s, file, fab, d);
	if (s->sharp && s->transport != CAPSIM_NET_INFINIBAND)
		BAD(fab, "fabric: sharp=on needs transport 'infiniband'");
	if (s->burst_cloud[0] &&
	    !capsim_catalog_find(cat, CAPSIM_KIND_CLOUD, s->burst_cloud))
		BAD(line_of(root, "cost.burst"),
		    "cost.burst.cloud: '%s' is not a cloud offer of the catalog",
		    s->burst_cloud);
	if (s->burst_cloud[0] && !s->burst_max_gpus)
		BAD(line_of(root, "cost.burst"),
		    "cost.burst: max-gpus is missing (most GPUs rented at once)");
#undef BAD
	return (int)d->n - before;
}

/* ---- loading ------------------------------------------------------------------- */

static int load_doc(xmlDoc *doc, const char *path, const capsim_catalog *cat,
		    const capsim_set *sets, size_t n_sets, capsim_scenario *out,
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
	check_unknown(root, "", path, d);
	if (d->n != before)
		return -1;
	if (capsim_xml_validate(doc, "scenario", path, d) < 0)
		return -1;
	const char **sp = capsim_xcalloc(n_sets + 1, sizeof *sp);
	const char **sv = capsim_xcalloc(n_sets + 1, sizeof *sv);
	for (size_t i = 0; i < n_sets; i++) {
		if (apply_set(root, &sets[i], d) == 0) {
			sp[i] = sets[i].path;
			sv[i] = sets[i].value;
		} else {
			sp[i] = sv[i] = "";
		}
	}
	if (d->n != before)
		goto done;

	capsim_strlcpy(out->file, path, sizeof out->file);
	xmlNode *desc = capsim_xml_child(root, "description");
	if (desc) {
		xmlChar *t = xmlNodeGetContent(desc);
		if (t)
			capsim_strlcpy(out->description, (const char *)t,
				       sizeof out->description);
		xmlFree(t);
	}
	capsim_origin o = { .file = path, .label = "scenario", .prefix = "",
			    .set_paths = sp, .set_values = sv, .n_sets = n_sets };
	if (capsim_fields_apply(capsim_scenario_fields, capsim_scenario_n_fields,
				out, root, CAPSIM_APPLY_LOAD, &o, d))
		goto done;
	out->fabric_line = line_of(root, "cluster.fabric");
	if (resolve_parts(out, root, cat, &o, d))
		goto done;
	if (out->gpu_profile[0])
		apply_profile(out->gpu_profile,
			      capsim_xml_child(capsim_xml_child(root, "cluster"), "gpu") ?
				      "cluster.gpu" : "cluster.node",
			      &out->gpu, root, path, d);
	if (out->mix_profile[0] && out->has_mix)
		apply_profile(out->mix_profile, "cluster.mix", &out->mix_gpu, root, path, d);
	check_consistency(out, root, cat, path, d);
done:
	free(sp);
	free(sv);
	return d->n == before ? 0 : -1;
}

int capsim_scenario_load(const char *path, const capsim_catalog *cat,
			 const capsim_set *sets, size_t n_sets,
			 capsim_scenario *out, capsim_diags *d)
{
	memset(out, 0, sizeof *out);
	char sha[65];
	xmlDoc *doc = capsim_xml_read(path, sha, d);
	if (!doc)
		return -1;
	int rc = load_doc(doc, path, cat, sets, n_sets, out, d);
	xmlFreeDoc(doc);
	memcpy(out->sha256, sha, sizeof out->sha256);
	return rc;
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
	int rc = load_doc(doc, name, cat, sets, n_sets, out, d);
	xmlFreeDoc(doc);
	capsim_sha256_hex(buf, len, out->sha256);
	return rc;
}

/* ---- writing ------------------------------------------------------------------- */

static void xml_escape(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

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
		xml_escape(out, buf);
		fputc('"', out);
	}
}

/* distinct element paths of a kind's fields directly below prefix */
static void write_part(FILE *out, const capsim_kind *k, const void *obj,
		       const char *tag, const char *ref, int indent, const char *extra)
{
	fprintf(out, "%*s<%s ref=\"", indent, "", tag);
	xml_escape(out, ref);
	fputc('"', out);
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
	fprintf(out, "%*s</%s>\n", indent, "", tag);
}

int capsim_scenario_write_xml(const capsim_scenario *s, FILE *out)
{
	const capsim_field *f = capsim_scenario_fields;
	size_t n = capsim_scenario_n_fields;
	const char *sc = (const char *)s;

	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<scenario", out);
	write_attrs(out, f, n, s, "", 0);
	fputs(">\n", out);
	if (s->description[0]) {
		fputs("  <description>", out);
		xml_escape(out, s->description);
		fputs("</description>\n", out);
	}
	fputs("  <cluster", out);
	write_attrs(out, f, n, s, "cluster", 0);
	fputs(">\n", out);
	for (size_t i = 0; i < capsim_n_part_slots; i++) {
		const capsim_part_slot *slot = &capsim_part_slots[i];
		if (strncmp(slot->path, "cluster.", 8) != 0 ||
		    strchr(slot->path + 8, '.'))
			continue;
		char extra[CAPSIM_PATH_LEN + 48] = "";
		if (slot->has_offset != (size_t)-1 && !*(const int *)(sc + slot->has_offset))
			continue;
		if (slot->obj_offset == offsetof(capsim_scenario, mix_node))
			snprintf(extra, sizeof extra, " nodes=\"%d\"%s%s%s", s->mix_nodes,
				 s->mix_profile[0] ? " profile=\"" : "", s->mix_profile,
				 s->mix_profile[0] ? "\"" : "");
		if (slot->obj_offset == offsetof(capsim_scenario, gpu) && s->gpu_profile[0])
			snprintf(extra, sizeof extra, " profile=\"%s\"", s->gpu_profile);
		write_part(out, &capsim_kinds[slot->kind], sc + slot->obj_offset,
			   slot->path + 8, sc + slot->ref_offset, 4, extra[0] ? extra : NULL);
	}
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
