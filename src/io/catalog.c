/* catalog.c - loading and checking the catalog; see catalog.h. */
/* dladdr: the shared library this code is linked into, for its catalog */
#define _GNU_SOURCE
#include "catalog.h"

#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ioint.h"
#include "xalloc.h"
#include "xml.h"

#ifndef CAPSIM_DATA_DIR
#define CAPSIM_DATA_DIR "/usr/local/share/capsim"
#endif

typedef struct {
	char *items;
	size_t n, cap;
} entry_vec;

typedef struct {
	char path[CAPSIM_PATH_LEN];
	char sha256[65];
} input_file;

struct capsim_catalog {
	entry_vec kinds[CAPSIM_KIND__COUNT];
	entry_vec refs;
	entry_vec files; /* input_file */
};

capsim_catalog *capsim_catalog_create(void)
{
	return capsim_xcalloc(1, sizeof(capsim_catalog));
}

void capsim_catalog_free(capsim_catalog *c)
{
	if (!c)
		return;
	for (size_t k = 0; k < CAPSIM_KIND__COUNT; k++)
		free(c->kinds[k].items);
	free(c->refs.items);
	free(c->files.items);
	free(c);
}

static void *vec_push(entry_vec *v, size_t size)
{
	if (v->n == v->cap) {
		v->cap = v->cap ? 2 * v->cap : 16;
		v->items = capsim_xrealloc(v->items, v->cap * size);
	}
	void *p = v->items + v->n * size;
	memset(p, 0, size);
	v->n++;
	return p;
}

static const void *vec_find(const entry_vec *v, size_t size, const char *id)
{
	for (size_t i = 0; i < v->n; i++) {
		const capsim_entry *e = (const capsim_entry *)(v->items + i * size);
		if (strcmp(e->id, id) == 0)
			return e;
	}
	return NULL;
}

size_t capsim_catalog_count(const capsim_catalog *c, capsim_kind_id k)
{
	return k < CAPSIM_KIND__COUNT ? c->kinds[k].n : 0;
}

const void *capsim_catalog_at(const capsim_catalog *c, capsim_kind_id k,
			      size_t i)
{
	if (k >= CAPSIM_KIND__COUNT || i >= c->kinds[k].n)
		return NULL;
	return c->kinds[k].items + i * capsim_kinds[k].size;
}

const void *capsim_catalog_find(const capsim_catalog *c, capsim_kind_id k,
				const char *id)
{
	if (k >= CAPSIM_KIND__COUNT)
		return NULL;
	return vec_find(&c->kinds[k], capsim_kinds[k].size, id);
}

size_t capsim_catalog_n_files(const capsim_catalog *c)
{
	return c->files.n;
}

const char *capsim_catalog_file(const capsim_catalog *c, size_t i,
				const char **sha256)
{
	if (i >= c->files.n)
		return NULL;
	const input_file *f = (const input_file *)(c->files.items + i * sizeof(input_file));
	*sha256 = f->sha256;
	return f->path;
}

size_t capsim_catalog_n_refs(const capsim_catalog *c)
{
	return c->refs.n;
}

const capsim_bibref *capsim_catalog_ref_at(const capsim_catalog *c, size_t i)
{
	return i < c->refs.n ? (const capsim_bibref *)(c->refs.items + i * sizeof(capsim_bibref)) : NULL;
}

const capsim_bibref *capsim_catalog_ref(const capsim_catalog *c,
					const char *id)
{
	return vec_find(&c->refs, sizeof(capsim_bibref), id);
}

/* 1 if dir/rel names a file that can be opened for reading */
static int readable_under(const char *dir, const char *rel)
{
	char p[PATH_MAX];
	int n = snprintf(p, sizeof p, "%s/%s", dir, rel);
	return n > 0 && (size_t)n < sizeof p && access(p, R_OK) == 0;
}

/* the directory of the running executable, or -1 */
static int exe_dir(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);
	if (n <= 0 || (size_t)n >= len - 1)
		return -1;
	buf[n] = '\0';
	char *slash = strrchr(buf, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	return 0;
}

/* The directory of the shared library this code is linked into (libcapsim),
 * or -1 where it is linked into the executable itself. */
static int library_dir(char *buf, size_t len)
{
	Dl_info info;
	char exe[PATH_MAX], real[PATH_MAX];
	if (!dladdr((void *)&library_dir, &info) || !info.dli_fname ||
	    !strchr(info.dli_fname, '/') || !realpath(info.dli_fname, real))
		return -1;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0 && (size_t)n < sizeof exe - 1) {
		exe[n] = '\0';
		if (strcmp(exe, real) == 0)
			return -1;
	}
	char *slash = strrchr(real, '/');
	if (!slash || (size_t)(slash - real) >= len)
		return -1;
	*slash = '\0';
	return snprintf(buf, len, "%s", real) < (int)len ? 0 : -1;
}

/* The source tree a CMake build directory was configured from: its
 * CMakeCache.txt's CMAKE_HOME_DIRECTORY into out, 0, where it holds the
 * catalog; else -1 */
static int source_of_build(const char *build, char *out, size_t len)
{
	static const char key[] = "CMAKE_HOME_DIRECTORY:INTERNAL=";
	char path[PATH_MAX], line[PATH_MAX + sizeof key];
	int n = snprintf(path, sizeof path, "%s/CMakeCache.txt", build);
	if (n < 0 || (size_t)n >= sizeof path)
		return -1;
	FILE *fp = fopen(path, "r");
	if (!fp)
		return -1;
	int rc = -1;
	while (rc < 0 && fgets(line, sizeof line, fp)) {
		if (strncmp(line, key, sizeof key - 1) != 0)
			continue;
		char *dir = line + sizeof key - 1;
		dir[strcspn(dir, "\r\n")] = '\0';
		if (*dir && readable_under(dir, "hardware/bibliography.xml") &&
		    snprintf(out, len, "%s", dir) < (int)len)
			rc = 0;
		break;
	}
	fclose(fp);
	return rc;
}

/* Where the data is, seen from the executable's (or the library's) directory
 * `bin`: bin/../share/capsim after `cmake --install` (wherever the prefix went;
 * bin/../../share/capsim for a library in a multiarch lib/ARCH),
 * or the source tree when the executable sits in a build directory of it
 * (build/capsim, build/tests/test_cli: a CMakeCache.txt in bin or its parent,
 * and hardware/bibliography.xml one level above that, or in the source
 * directory the cache names, for a build directory made elsewhere). */
static int root_near_exe(const char *bin, char *out, size_t len)
{
	static const char *const build_dirs[] = { "", "/.." };
	char p[PATH_MAX];
	static const char *const installed[] = { "/../share/capsim", "/../../share/capsim" };
	int n;
	for (size_t i = 0; i < sizeof installed / sizeof installed[0]; i++) {
		n = snprintf(p, sizeof p, "%s%s", bin, installed[i]);
		if (n > 0 && (size_t)n < sizeof p && readable_under(p, "hardware/bibliography.xml"))
			return snprintf(out, len, "%s", p) < (int)len ? 0 : -1;
	}
	for (size_t i = 0; i < sizeof build_dirs / sizeof build_dirs[0]; i++) {
		char build[PATH_MAX];
		n = snprintf(build, sizeof build, "%s%s", bin, build_dirs[i]);
		if (n < 0 || (size_t)n >= sizeof build)
			continue;
		n = snprintf(p, sizeof p, "%s/..", build);
		if (n < 0 || (size_t)n >= sizeof p)
			continue;
		if (!readable_under(build, "CMakeCache.txt"))
			continue;
		if (readable_under(p, "hardware/bibliography.xml"))
			return snprintf(out, len, "%s", p) < (int)len ? 0 : -1;
		if (source_of_build(build, out, len) == 0)
			return 0;
	}
	return -1;
}

const char *capsim_catalog_default_root(void)
{
	static char buf[PATH_MAX];
	static int found;
	const char *env = getenv("CAPSIM_DATA");
	if (env && *env)
		return env;
	if (found)
		return buf;
	char bin[PATH_MAX], rel[PATH_MAX];
	/* the library's own catalog first (a program or Python using an
	 * installed libcapsim), then the executable's */
	if ((library_dir(bin, sizeof bin) == 0 && root_near_exe(bin, rel, sizeof rel) == 0) ||
	    (exe_dir(bin, sizeof bin) == 0 && root_near_exe(bin, rel, sizeof rel) == 0)) {
		/* a clean absolute path for messages; the relative one will do */
		if (!realpath(rel, buf) && snprintf(buf, sizeof buf, "%s", rel) >= (int)sizeof buf)
			return CAPSIM_DATA_DIR;
		found = 1;
		return buf;
	}
	/* the configured install prefix, for a binary copied away from it */
	return CAPSIM_DATA_DIR;
}

/* ---- provenance ---------------------------------------------------------- */

static int has_values(xmlNode *e)
{
	for (xmlAttr *a = e->properties; a; a = a->next) {
		const char *n = (const char *)a->name;
		if (strcmp(n, "src") != 0 && strcmp(n, "assumption") != 0)
			return 1;
	}
	return 0;
}

/* Every element of an entry that holds values needs a source: its own src or
 * assumption, or the entry's; every src must name a bibliography entry. */
static int check_provenance(const capsim_catalog *c, xmlNode *entry,
			    const char *file, const char *label,
			    capsim_diags *d)
{
	int problems = 0;
	xmlChar *esrc = xmlGetProp(entry, (const xmlChar *)"src");
	xmlChar *eass = xmlGetProp(entry, (const xmlChar *)"assumption");
	int entry_sourced = esrc || eass;

	if (esrc && !capsim_catalog_ref(c, (const char *)esrc)) {
		capsim_diags_add(d, file, xmlGetLineNo(entry),
				 "%s: src '%s' is not in the bibliography "
				 "(hardware/bibliography.xml)",
				 label, (const char *)esrc);
		problems++;
	}
	for (xmlNode *ch = entry->children; ch; ch = ch->next) {
		if (ch->type != XML_ELEMENT_NODE)
			continue;
		xmlChar *src = xmlGetProp(ch, (const xmlChar *)"src");
		xmlChar *ass = xmlGetProp(ch, (const xmlChar *)"assumption");
		if (src && !capsim_catalog_ref(c, (const char *)src)) {
			capsim_diags_add(d, file, xmlGetLineNo(ch),
					 "%s: %s: src '%s' is not in the bibliography "
					 "(hardware/bibliography.xml)",
					 label, (const char *)ch->name,
					 (const char *)src);
			problems++;
		}
		if (!src && !ass && !entry_sourced && has_values(ch) &&
		    strcmp((const char *)ch->name, "note") != 0) {
			capsim_diags_add(d, file, xmlGetLineNo(ch),
					 "%s: %s has no source: give src (a "
					 "bibliography id) or assumption",
					 label, (const char *)ch->name);
			problems++;
		}
		xmlFree(src);
		xmlFree(ass);
	}
	xmlFree(esrc);
	xmlFree(eass);
	return problems;
}

/* ---- per-kind checks ------------------------------------------------------ */

int capsim_catalog_check_entry(capsim_kind_id k, const void *obj,
			       const char *file, long line, const char *label,
			       capsim_diags *d)
{
	int problems = 0;
#define BAD(...) do { capsim_diags_add(d, file, line, __VA_ARGS__); problems++; } while (0)
	switch (k) {
	case CAPSIM_KIND_GPU: {
		const capsim_gpu *g = obj;
		if (g->scaleup_kind != CAPSIM_SCALEUP_NONE &&
		    g->scaleup_bw_bytes_per_s <= 0)
			BAD("%s: scale-up.bandwidth is missing for a %s link",
			    label, g->scaleup_kind == CAPSIM_SCALEUP_NVLINK ? "nvlink" : "infinity-fabric");
		if (g->peak_fp8_flop_per_s > 0 &&
		    g->peak_fp8_flop_per_s < g->peak_bf16_flop_per_s)
			BAD("%s: compute.fp8 (%.4g TFLOP/s) is below compute.bf16 "
			    "(%.4g TFLOP/s); dense peaks grow as precision falls",
			    label, g->peak_fp8_flop_per_s / 1e12,
			    g->peak_bf16_flop_per_s / 1e12);
		break;
	}
	case CAPSIM_KIND_NODE: {
		const capsim_node *n = obj;
		/* a node whose NVLink domain spans several nodes (NVL72) keeps
		 * its NVSwitch chips in switch trays, so it counts none */
		int multi = n->domain_gpus > n->gpus;
		if (n->scaleup_fabric == CAPSIM_NODE_NVSWITCH &&
		    (!n->nvswitch[0] || (!multi && n->nvswitches <= 0)))
			BAD("%s: scale-up fabric 'nvswitch' needs switch (an "
			    "nvswitch id) and, unless domain-gpus spans several "
			    "nodes, switches (how many)", label);
		if (n->domain_gpus && n->domain_gpus < n->gpus)
			BAD("%s: scale-up.domain-gpus=%d is smaller than the node's "
			    "%d GPUs", label, n->domain_gpus, n->gpus);
		if (n->domain_gpus && n->domain_gpus % n->gpus)
			BAD("%s: scale-up.domain-gpus=%d is not a whole number of "
			    "nodes of %d GPUs", label, n->domain_gpus, n->gpus);
		break;
	}
	case CAPSIM_KIND_MODEL: {
		const capsim_model *m = obj;
		if (!m->head_dim && !m->mla_kv_lora_rank && m->hidden % m->heads)
			BAD("%s: architecture.heads=%d does not divide hidden=%d "
			    "(give head-dim if that is intended)",
			    label, m->heads, m->hidden);
		if (m->kv_heads && m->heads % m->kv_heads)
			BAD("%s: architecture.kv-heads=%d does not divide heads=%d",
			    label, m->kv_heads, m->heads);
		if (m->moe_experts && m->moe_top_k > m->moe_experts)
			BAD("%s: moe.top-k=%d exceeds moe.experts=%d", label,
			    m->moe_top_k, m->moe_experts);
		if (m->moe_experts && m->moe_dense_layers >= m->layers)
			BAD("%s: moe.dense-layers=%d leaves no MoE layer of %d",
			    label, m->moe_dense_layers, m->layers);
		break;
	}
	case CAPSIM_KIND_STORAGE: {
		const capsim_storage *s = obj;
		if (s->client_read_bytes_per_s > s->read_bytes_per_s &&
		    s->scope == 1)
			BAD("%s: bandwidth.per-client-read exceeds the system's "
			    "bandwidth.read", label);
		break;
	}
	case CAPSIM_KIND_FACILITY: {
		const capsim_facility *f = obj;
		if ((f->circuit_v > 0) != (f->circuit_a > 0))
			BAD("%s: circuit needs both voltage and current", label);
		break;
	}
	default:
		break;
	}
#undef BAD
	return problems;
}

/* ---- loading ---------------------------------------------------------------- */

static int load_entry(capsim_catalog *c, capsim_kind_id k, xmlNode *el,
		      const char *file, capsim_diags *d)
{
	const capsim_kind *kind = &capsim_kinds[k];
	char label[160];
	xmlChar *id = xmlGetProp(el, (const xmlChar *)"id");
	snprintf(label, sizeof label, "%s '%s'", kind->name,
		 id ? (const char *)id : "?");
	xmlFree(id);

	/* fill a scratch copy first, so a bad entry leaves nothing behind */
	void *obj = capsim_xcalloc(1, kind->size);
	capsim_origin o = { .file = file, .label = label, .prefix = "" };
	int problems = capsim_fields_apply(kind->fields, kind->n_fields, obj, el,
					   CAPSIM_APPLY_LOAD, &o, d);
	capsim_entry *e = obj;
	xmlChar *src = xmlGetProp(el, (const xmlChar *)"src");
	xmlChar *ass = xmlGetProp(el, (const xmlChar *)"assumption");
	if (src)
		capsim_strlcpy(e->src, (const char *)src, sizeof e->src);
	if (ass)
		capsim_strlcpy(e->assumption, (const char *)ass, sizeof e->assumption);
	xmlFree(src);
	xmlFree(ass);
	capsim_strlcpy(e->file, file, sizeof e->file);
	e->line = xmlGetLineNo(el);

	problems += check_provenance(c, el, file, label, d);
	if (!problems)
		problems += capsim_catalog_check_entry(k, obj, file, e->line, label, d);
	const capsim_entry *prev = vec_find(&c->kinds[k], kind->size, e->id);
	if (prev) {
		capsim_diags_add(d, file, e->line,
				 "%s: duplicate id; first defined at %s:%ld", label,
				 prev->file, prev->line);
		problems++;
	}
	if (!problems)
		memcpy(vec_push(&c->kinds[k], kind->size), obj, kind->size);
	free(obj);
	return problems;
}

static int load_ref(capsim_catalog *c, xmlNode *el, const char *file,
		    capsim_diags *d)
{
	capsim_bibref r;
	memset(&r, 0, sizeof r);
	xmlChar *id = xmlGetProp(el, (const xmlChar *)"id");
	char label[160];
	snprintf(label, sizeof label, "ref '%s'", id ? (const char *)id : "?");
	xmlFree(id);
	capsim_origin o = { .file = file, .label = label, .prefix = "" };
	int problems = capsim_fields_apply(capsim_bibref_kind.fields,
					   capsim_bibref_kind.n_fields, &r, el,
					   CAPSIM_APPLY_LOAD, &o, d);
	capsim_strlcpy(r.e.file, file, sizeof r.e.file);
	r.e.line = xmlGetLineNo(el);
	const capsim_bibref *prev = capsim_catalog_ref(c, r.e.id);
	if (prev) {
		capsim_diags_add(d, file, r.e.line,
				 "%s: duplicate id; first defined at %s:%ld", label,
				 prev->e.file, prev->e.line);
		problems++;
	}
	if (!problems)
		memcpy(vec_push(&c->refs, sizeof r), &r, sizeof r);
	return problems;
}

static int load_doc(capsim_catalog *c, xmlDoc *doc, const char *path,
		    capsim_diags *d)
{
	size_t before = d->n;
	xmlNode *root = xmlDocGetRootElement(doc);
	const char *rname = root ? (const char *)root->name : "";
	const char *schema = strcmp(rname, "catalog") == 0 ? "hardware" :
			     strcmp(rname, "models") == 0 ? "model" :
			     strcmp(rname, "bibliography") == 0 ? "bibliography" :
								   NULL;
	if (!schema) {
		capsim_diags_add(d, path, root ? xmlGetLineNo(root) : 0,
				 "root element <%s> is not a catalog file (expected "
				 "<catalog>, <models> or <bibliography>)",
				 rname);
		return -1;
	}
	if (capsim_xml_validate(doc, schema, path, d) < 0)
		return -1;
	for (xmlNode *el = root->children; el; el = el->next) {
		if (el->type != XML_ELEMENT_NODE)
			continue;
		if (strcmp(schema, "bibliography") == 0) {
			load_ref(c, el, path, d);
			continue;
		}
		const capsim_kind *k = capsim_kind_by_name((const char *)el->name);
		if (!k) {
			capsim_diags_add(d, path, xmlGetLineNo(el),
					 "unknown entry <%s>", (const char *)el->name);
			continue;
		}
		load_entry(c, (capsim_kind_id)(k - capsim_kinds), el, path, d);
	}
	return d->n == before ? 0 : -1;
}

int capsim_catalog_load_file(capsim_catalog *c, const char *path,
			     capsim_diags *d)
{
	char sha[65];
	xmlDoc *doc = capsim_xml_read(path, sha, d);
	if (!doc)
		return -1;
	int rc = load_doc(c, doc, path, d);
	xmlFreeDoc(doc);
	input_file *f = vec_push(&c->files, sizeof *f);
	capsim_strlcpy(f->path, path, sizeof f->path);
	memcpy(f->sha256, sha, sizeof f->sha256);
	return rc;
}

int capsim_catalog_load_memory(capsim_catalog *c, const char *buf,
			       size_t len, const char *name, capsim_diags *d)
{
	xmlDoc *doc = capsim_xml_read_memory(buf, len, name, d);
	if (!doc)
		return -1;
	int rc = load_doc(c, doc, name, d);
	xmlFreeDoc(doc);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* *.xml files of dir in name order; caller frees each and the array */
static char **list_xml(const char *dir, size_t *n, capsim_diags *d)
{
	DIR *dp = opendir(dir);
	char **v = NULL;
	size_t cap = 0;
	*n = 0;
	if (!dp) {
		capsim_diags_add(d, dir, 0, "cannot open catalog directory");
		return NULL;
	}
	struct dirent *de;
	while ((de = readdir(dp))) {
		size_t len = strlen(de->d_name);
		if (len < 5 || strcmp(de->d_name + len - 4, ".xml") != 0 ||
		    de->d_name[0] == '.')
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 16;
			v = capsim_xrealloc(v, cap * sizeof *v);
		}
		v[(*n)++] = capsim_xasprintf("%s/%s", dir, de->d_name);
	}
	closedir(dp);
	if (*n)
		qsort(v, *n, sizeof *v, cmp_str);
	return v;
}

static int same_file(const char *a, const char *skip)
{
	char ra[PATH_MAX];
	if (!skip)
		return 0;
	if (!realpath(a, ra))
		return 0;
	return strcmp(ra, skip) == 0;
}

int capsim_catalog_load_root(capsim_catalog *c, const char *root,
			     const char *skip, capsim_diags *d)
{
	size_t before = d->n;
	char rskip[PATH_MAX];
	const char *skipr = skip && realpath(skip, rskip) ? rskip : NULL;
	char *bib = capsim_xasprintf("%s/hardware/bibliography.xml", root);
	if (!same_file(bib, skipr))
		capsim_catalog_load_file(c, bib, d);
	static const char *const dirs[] = { "hardware", "models" };
	for (size_t k = 0; k < 2; k++) {
		char *dir = capsim_xasprintf("%s/%s", root, dirs[k]);
		size_t n;
		char **files = list_xml(dir, &n, d);
		for (size_t i = 0; i < n; i++) {
			if (strcmp(files[i], bib) != 0 && !same_file(files[i], skipr))
				capsim_catalog_load_file(c, files[i], d);
			free(files[i]);
		}
		free(files);
		free(dir);
	}
	free(bib);
	if (!skip)
		capsim_catalog_check(c, d);
	return d->n == before ? 0 : -1;
}

int capsim_catalog_check(const capsim_catalog *c, capsim_diags *d)
{
	size_t before = d->n;
	for (size_t i = 0; i < c->kinds[CAPSIM_KIND_NODE].n; i++) {
		const capsim_node *n = capsim_catalog_at(c, CAPSIM_KIND_NODE, i);
		if (!capsim_catalog_find(c, CAPSIM_KIND_GPU, n->gpu))
			capsim_diags_add(d, n->e.file, n->e.line,
					 "node '%s': gpus.ref '%s' is not a GPU of the catalog",
					 n->e.id, n->gpu);
		if (!capsim_catalog_find(c, CAPSIM_KIND_NIC, n->nic))
			capsim_diags_add(d, n->e.file, n->e.line,
					 "node '%s': nics.ref '%s' is not a NIC of the catalog",
					 n->e.id, n->nic);
		if (n->nvswitch[0] &&
		    !capsim_catalog_find(c, CAPSIM_KIND_NVSWITCH, n->nvswitch))
			capsim_diags_add(d, n->e.file, n->e.line,
					 "node '%s': scale-up.switch '%s' is not an "
					 "nvswitch of the catalog",
					 n->e.id, n->nvswitch);
	}
	for (size_t i = 0; i < c->kinds[CAPSIM_KIND_CLOUD].n; i++) {
		const capsim_cloud *o = capsim_catalog_at(c, CAPSIM_KIND_CLOUD, i);
		if (!capsim_catalog_find(c, CAPSIM_KIND_GPU, o->gpu))
			capsim_diags_add(d, o->e.file, o->e.line,
					 "cloud '%s': instance.gpu '%s' is not a GPU of "
					 "the catalog",
					 o->e.id, o->gpu);
	}
	return d->n == before ? 0 : -1;
}

/* ---- provenance of one entry's values ------------------------------------------------ */

static xmlNode *entry_at(xmlNode *n, const char *id, long line)
{
	for (; n; n = n->next) {
		if (n->type != XML_ELEMENT_NODE)
			continue;
		xmlChar *v = xmlGetProp(n, (const xmlChar *)"id");
		int hit = v && strcmp((const char *)v, id) == 0 && xmlGetLineNo(n) == line;
		xmlFree(v);
		if (hit)
			return n;
		xmlNode *in = entry_at(n->children, id, line);
		if (in)
			return in;
	}
	return NULL;
}

int capsim_catalog_provenance(const capsim_entry *e, capsim_provenance_fn fn, void *ctx,
			      capsim_diags *d)
{
	xmlDoc *doc = capsim_xml_read(e->file, NULL, d);
	if (!doc)
		return -1;
	xmlNode *entry = entry_at(xmlDocGetRootElement(doc), e->id, e->line);
	if (!entry) {
		capsim_diags_add(d, e->file, e->line, "entry '%s' is no longer there", e->id);
		xmlFreeDoc(doc);
		return -1;
	}
	int n = 0;
	for (xmlNode *ch = entry->children; ch; ch = ch->next) {
		if (ch->type != XML_ELEMENT_NODE || !has_values(ch) ||
		    strcmp((const char *)ch->name, "note") == 0)
			continue;
		xmlChar *src = xmlGetProp(ch, (const xmlChar *)"src");
		xmlChar *ass = xmlGetProp(ch, (const xmlChar *)"assumption");
		char values[512] = "";
		size_t at = 0;
		for (xmlAttr *a = ch->properties; a && at + 1 < sizeof values; a = a->next) {
			const char *an = (const char *)a->name;
			if (strcmp(an, "src") == 0 || strcmp(an, "assumption") == 0)
				continue;
			xmlChar *v = xmlNodeGetContent((xmlNode *)a);
			int k = snprintf(values + at, sizeof values - at, "%s%s=%s", at ? " " : "", an,
					 v ? (const char *)v : "");
			xmlFree(v);
			if (k < 0)
				break;
			at += (size_t)k < sizeof values - at ? (size_t)k : sizeof values - at - 1;
		}
		fn(ctx, (const char *)ch->name, values,
		   src ? (const char *)src : ass ? "" : e->src,
		   ass ? (const char *)ass : src ? "" : e->assumption);
		xmlFree(src);
		xmlFree(ass);
		n++;
	}
	xmlFreeDoc(doc);
	return n;
}
