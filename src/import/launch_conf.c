/* launch_conf.c - the config files a launch line names (launch_conf.h): the
 * NeMo Framework Launcher's Hydra config groups, read with libyaml, and
 * torchtitan's TOML job config with its command-line overrides. */
#include "launch_conf.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <yaml.h>

#include "toml.h"
#include "torchtitan.h"
#include "xalloc.h"

/* YAML mappings and sequences nested deeper than this are refused; so is a
 * config of more values (aliases can multiply them), and resolving one
 * value through more interpolations, or into a longer text */
#define MAX_NESTING 64
#define MAX_ENTRIES 65536
#define MAX_RESOLVES 100000

static void note(capsim_launch *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(capsim_launch *l, const char *fmt, ...)
{
	char text[sizeof l->notes[0]];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	for (int i = 0; i < l->n_notes; i++)
		if (strcmp(l->notes[i], text) == 0)
			return;
	if (l->n_notes == CAPSIM_LAUNCH_NOTES) {
		l->n_notes_more++;
		return;
	}
	memcpy(l->notes[l->n_notes++], text, sizeof text);
}

/* the first of root/rel over l's roots that is a regular file (the
 * caller's, freed with free), or NULL with the paths tried in tried */
static char *find_file(const capsim_launch *l, const char *const *rel, int n_rel, char *tried,
		       size_t size)
{
	size_t o = 0;
	tried[0] = '\0';
	for (int r = 0; r < l->n_config_roots; r++)
		for (int k = 0; k < n_rel; k++) {
			char *p = capsim_xasprintf("%s/%s", l->config_roots[r], rel[k]);
			struct stat st;
			if (stat(p, &st) == 0 && S_ISREG(st.st_mode))
				return p;
			if (o < size) {
				int w = snprintf(tried + o, size - o, "%s%s", o ? ", " : "", p);
				o += w > 0 ? (size_t)w : 0;
			}
			free(p);
		}
	return NULL;
}

/* the text of path (the caller's, NUL-terminated, its length in *len), at
 * most CAPSIM_LAUNCH_MAX_BYTES; NULL after a refusal */
static char *slurp(const char *path, size_t *len, capsim_diags *d)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		capsim_diags_add(d, path, 0, "cannot open: %s", strerror(errno));
		return NULL;
	}
	char *text = capsim_xmalloc(CAPSIM_LAUNCH_MAX_BYTES + 2);
	*len = fread(text, 1, CAPSIM_LAUNCH_MAX_BYTES + 1, f);
	int bad = ferror(f);
	fclose(f);
	if (bad || *len > CAPSIM_LAUNCH_MAX_BYTES) {
		capsim_diags_add(d, path, 0, bad ? "cannot be read" : "larger than the %u-byte "
				 "(8 MiB) cap on input files", CAPSIM_LAUNCH_MAX_BYTES);
		free(text);
		return NULL;
	}
	text[*len] = '\0';
	return text;
}

/* ---- a Hydra config, flattened ------------------------------------------------------ */

/* one value of the config: its whole path ("peft.model.micro_batch_size"),
 * its text and line; a list's items joined as "[a, b]" */
typedef struct centry {
	char *key, *value;
	long line;
	int list, null;
} centry;

/* a config group's file read, and the launch's overrides beside it */
typedef struct conf {
	centry *e;
	size_t n, cap;
	const char *file;    /* its path */
	const char *group;   /* "training=gpt3/5b", as the launch names it */
	char **argv;         /* the launch's words: its overrides */
	int argc;
	capsim_launch *l;
	capsim_diags *d;
	long resolves;       /* interpolations resolved for the value at hand */
} conf;

static void add_entry(conf *c, char *key, char *value, long line, int list, int null)
{
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 64;
		c->e = capsim_xrealloc(c->e, c->cap * sizeof *c->e);
	}
	c->e[c->n++] = (centry){ .key = key, .value = value, .line = line, .list = list,
				 .null = null };
}

static void conf_free(conf *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->e[i].key);
		free(c->e[i].value);
	}
	free(c->e);
}

/* a plain scalar that YAML reads as null (null, Null, NULL, ~, nothing) */
static int is_null(const yaml_node_t *n)
{
	const char *v = (const char *)n->data.scalar.value;
	return n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	       (!*v || !strcmp(v, "~") || !strcmp(v, "null") || !strcmp(v, "Null") ||
		!strcmp(v, "NULL"));
}

/* a sequence's scalars joined as "[a, b]" ("..." for one nested) */
static char *joined_list(yaml_document_t *doc, yaml_node_t *n)
{
	char *s = capsim_xasprintf("[");
	for (yaml_node_item_t *it = n->data.sequence.items.start;
	     it < n->data.sequence.items.top; it++) {
		yaml_node_t *v = yaml_document_get_node(doc, *it);
		const char *t = v && v->type == YAML_SCALAR_NODE ? (const char *)v->data.scalar.value :
				"...";
		char *next = capsim_xasprintf("%s%s%s", s, it > n->data.sequence.items.start ?
					      ", " : "", t);
		free(s);
		s = next;
	}
	char *done = capsim_xasprintf("%s]", s);
	free(s);
	return done;
}

/* Hydra's defaults list: _self_ and an optional group left empty select
 * nothing more; any other entry composes a file capsim does not read, noted */
static void defaults_list(conf *c, yaml_document_t *doc, yaml_node_t *n)
{
	if (n->type != YAML_SEQUENCE_NODE)
		return;
	for (yaml_node_item_t *it = n->data.sequence.items.start;
	     it < n->data.sequence.items.top; it++) {
		yaml_node_t *v = yaml_document_get_node(doc, *it);
		if (v && v->type == YAML_SCALAR_NODE &&
		    !strcmp((const char *)v->data.scalar.value, "_self_"))
			continue;
		if (v && v->type == YAML_MAPPING_NODE &&
		    v->data.mapping.pairs.top - v->data.mapping.pairs.start == 1) {
			yaml_node_t *k = yaml_document_get_node(doc, v->data.mapping.pairs.start->key);
			yaml_node_t *x = yaml_document_get_node(doc,
								v->data.mapping.pairs.start->value);
			if (k && x && k->type == YAML_SCALAR_NODE && x->type == YAML_SCALAR_NODE &&
			    !strncmp((const char *)k->data.scalar.value, "optional ", 9) &&
			    is_null(x))
				continue;
		}
		note(c->l, "%s: its defaults list's line %ld composes another config: not read",
		     c->group, v ? (long)v->start_mark.line + 1 : 0L);
	}
}

/* the node n at path (prefix) into c's entries; -1 after a refusal */
static int flatten(conf *c, yaml_document_t *doc, yaml_node_t *n, const char *path, int depth)
{
	long line = (long)n->start_mark.line + 1;
	if (depth > MAX_NESTING) {
		capsim_diags_add(c->d, c->file, line, "mappings nested more than %d deep",
				 MAX_NESTING);
		return -1;
	}
	if (c->n >= MAX_ENTRIES) {
		capsim_diags_add(c->d, c->file, line, "more than %d values (aliases multiply "
				 "them): past the limit of a launcher's config", MAX_ENTRIES);
		return -1;
	}
	if (n->type == YAML_SCALAR_NODE) {
		add_entry(c, capsim_xasprintf("%s", path),
			  capsim_xasprintf("%s", (const char *)n->data.scalar.value), line, 0,
			  is_null(n));
		return 0;
	}
	if (n->type == YAML_SEQUENCE_NODE) {
		add_entry(c, capsim_xasprintf("%s", path), joined_list(doc, n), line, 1, 0);
		return 0;
	}
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = yaml_document_get_node(doc, p->key);
		yaml_node_t *v = yaml_document_get_node(doc, p->value);
		if (!k || !v || k->type != YAML_SCALAR_NODE) {
			capsim_diags_add(c->d, c->file, line, "a key that is not a plain word");
			return -1;
		}
		const char *name = (const char *)k->data.scalar.value;
		if (!strcmp(name, "<<")) {
			capsim_diags_add(c->d, c->file, (long)k->start_mark.line + 1, "YAML's merge "
					 "key (<<) is not read");
			return -1;
		}
		if (depth == 0 && !strcmp(name, "defaults")) {
			defaults_list(c, doc, v);
			continue;
		}
		char *sub = capsim_xasprintf("%s.%s", path, name);
		int r = flatten(c, doc, v, sub, depth + 1);
		free(sub);
		if (r < 0)
			return -1;
	}
	return 0;
}

/* the YAML text of c->file into c's entries under stage; -1 after a refusal */
static int read_yaml(conf *c, const char *text, size_t len, const char *stage)
{
	yaml_parser_t p;
	yaml_document_t doc;
	if (!yaml_parser_initialize(&p)) {
		capsim_diags_add_runtime(c->d, c->file, "out of memory");
		return -1;
	}
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	int rc = 0;
	if (!yaml_parser_load(&p, &doc)) {
		capsim_diags_add(c->d, c->file, (long)p.problem_mark.line + 1, "not YAML: %s%s%s",
				 p.problem ? p.problem : "a syntax error", p.context ? ", " : "",
				 p.context ? p.context : "");
		yaml_parser_delete(&p);
		return -1;
	}
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	if (root && root->type != YAML_MAPPING_NODE) {
		capsim_diags_add(c->d, c->file, (long)root->start_mark.line + 1, "expected a "
				 "mapping of keys (a Hydra config), found %s", root->type ==
				 YAML_SCALAR_NODE ? "a scalar" : "a list");
		rc = -1;
	} else if (root) {
		rc = flatten(c, &doc, root, stage, 0);
	}
	yaml_document_delete(&doc);
	yaml_document_t more;
	if (!rc && yaml_parser_load(&p, &more)) {
		if (yaml_document_get_root_node(&more)) {
			capsim_diags_add(c->d, c->file, 0, "more than one YAML document: a Hydra "
					 "config is one");
			rc = -1;
		}
		yaml_document_delete(&more);
	}
	yaml_parser_delete(&p);
	return rc;
}

/* ---- the launch's overrides and Hydra's interpolations ------------------------------- */

/* an override word's key with Hydra's + ++ ~ removed, its length in *kl and
 * its value (NULL for a deletion, ~key) in *value; NULL where the word is
 * not an override */
static const char *override_key(const char *w, size_t *kl, const char **value)
{
	int del = 0;
	while (*w == '+' || *w == '~')
		del |= *w++ == '~';
	const char *eq = strchr(w, '=');
	const char *dot = strchr(w, '.');
	if (!dot || (eq && dot > eq) || w[0] == '-' || w[0] == '/' || w[0] == '$')
		return NULL;
	if (!eq && !del)
		return NULL;
	*kl = eq ? (size_t)(eq - w) : strlen(w);
	*value = del ? NULL : eq + 1;
	return w;
}

/* 1 where the launch's words give key (its value in *value, NULL where they
 * delete it or a section above it), else 0 */
static int overridden(const conf *c, const char *key, const char **value)
{
	int found = 0;
	for (int i = 0; i < c->argc; i++) {
		size_t kl;
		const char *v;
		const char *k = override_key(c->argv[i], &kl, &v);
		if (!k)
			continue;
		if (kl == strlen(key) && !strncmp(k, key, kl)) {
			*value = v;
			found = 1;
		} else if (!v && kl < strlen(key) && !strncmp(k, key, kl) && key[kl] == '.') {
			*value = NULL; /* ~section deletes what is under it */
			found = 1;
		}
	}
	return found;
}

/* the value at key (a whole path): the launch's override, else the file's
 * scalar; NULL where neither gives one */
static const char *value_at(const conf *c, const char *key)
{
	const char *v;
	if (overridden(c, key, &v))
		return v;
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->e[i].key, key))
			return c->e[i].list ? NULL : c->e[i].value;
	return NULL;
}

static int resolve(conf *c, const char *at, const char *raw, int depth, char **out,
		   char *why, size_t wsize);

/* the end of the interpolation opened at s[i] ("${"): the index of its
 * closing brace, or 0 */
static size_t closing(const char *s, size_t i)
{
	int open = 0;
	for (; s[i]; i++) {
		if (s[i] == '$' && s[i + 1] == '{')
			open++, i++;
		else if (s[i] == '}' && --open == 0)
			return i;
	}
	return 0;
}

/* a number's text as OmegaConf prints it: a whole number without a point */
static char *number_text(double x)
{
	if (fabs(x) < 9e15 && x == floor(x))
		return capsim_xasprintf("%.0f", x);
	return capsim_xasprintf("%.17g", x);
}

/* ${multiply:x, y}, ${divide_ceil:x, y}, ${divide_floor:x, y}: the
 * resolvers the NeMo launcher registers (launcher_scripts/main.py); -1 with
 * why for another, or arguments that are not two numbers */
static int resolver(conf *c, const char *at, const char *name, size_t nl,
		    const char *args, int depth, char **out, char *why, size_t wsize)
{
	double x[2];
	int n = 0;
	for (const char *p = args; n < 2;) {
		size_t k = 0;
		int open = 0;
		while (p[k] && (open || p[k] != ',')) {
			open += p[k] == '{' ? 1 : p[k] == '}' ? -1 : 0;
			k++;
		}
		char *arg = capsim_xasprintf("%.*s", (int)k, p), *v;
		int r = resolve(c, at, arg, depth + 1, &v, why, wsize);
		free(arg);
		if (r < 0)
			return -1;
		char *end;
		errno = 0;
		x[n] = strtod(v, &end);
		while (isspace((unsigned char)*end))
			end++;
		int bad = end == v || *end || errno;
		free(v);
		if (bad)
			break;
		n++;
		if (!p[k])
			break;
		p += k + 1;
	}
	int which = nl == 8 && !strncmp(name, "multiply", 8) ? 0 :
		    nl == 11 && !strncmp(name, "divide_ceil", 11) ? 1 :
		    nl == 12 && !strncmp(name, "divide_floor", 12) ? 2 : -1;
	if (which < 0 || n != 2 || (which && x[1] == 0)) {
		snprintf(why, wsize, "${%.*s:%.60s}: %s", (int)nl, name, args, which < 0 ?
			 "a resolver capsim does not know" : "expected two numbers");
		return -1;
	}
	*out = number_text(which == 0 ? x[0] * x[1] : which == 1 ? ceil(x[0] / x[1]) :
			   floor(x[0] / x[1]));
	return 0;
}

/* ${path} (absolute), ${.sibling} or ${..uncle} (relative to at's
 * section): the value it names, itself resolved */
static int reference(conf *c, const char *at, const char *ref, int depth, char **out,
		     char *why, size_t wsize)
{
	char *path;
	if (ref[0] == '.') {
		size_t up = strspn(ref, ".");
		char *base = capsim_xasprintf("%s", at);
		for (size_t k = 0; k < up; k++) {
			char *dot = strrchr(base, '.');
			if (dot)
				*dot = '\0';
			else
				base[0] = '\0';
		}
		path = capsim_xasprintf("%s%s%s", base, *base ? "." : "", ref + up);
		free(base);
	} else {
		path = capsim_xasprintf("%s", ref);
	}
	const char *v = value_at(c, path);
	int r = -1;
	if (!v)
		snprintf(why, wsize, "${%.80s}: neither the file nor the launch gives %.80s", ref,
			 path);
	else
		r = resolve(c, path, v, depth + 1, out, why, wsize);
	free(path);
	return r;
}

/* raw, the value at at, with its interpolations resolved into *out (the
 * caller's); -1 with why where one cannot be */
static int resolve(conf *c, const char *at, const char *raw, int depth, char **out,
		   char *why, size_t wsize)
{
	if (depth > CAPSIM_CONF_MAX_DEPTH) {
		snprintf(why, wsize, "interpolations refer through one another more than %d deep",
			 CAPSIM_CONF_MAX_DEPTH);
		return -1;
	}
	if (++c->resolves > MAX_RESOLVES) {
		snprintf(why, wsize, "more than %d interpolations resolved for one value",
			 MAX_RESOLVES);
		return -1;
	}
	char *s = capsim_xasprintf("%s", "");
	size_t i = 0;
	while (raw[i]) {
		size_t end = raw[i] == '$' && raw[i + 1] == '{' ? closing(raw, i) : 0;
		if (!end) { /* the plain text up to the next ${ (past this one) */
			const char *next_ref = strstr(raw + i + 1, "${");
			size_t n = next_ref ? (size_t)(next_ref - raw - i) : strlen(raw + i);
			char *next = capsim_xasprintf("%s%.*s", s, (int)n, raw + i);
			free(s);
			s = next;
			i += n;
			continue;
		}
		char *inner = capsim_xasprintf("%.*s", (int)(end - i - 2), raw + i + 2), *v = NULL;
		size_t nl = strspn(inner, "abcdefghijklmnopqrstuvwxyz_.");
		int r = nl && inner[nl] == ':' ?
			resolver(c, at, inner, nl, inner + nl + 1, depth, &v, why, wsize) :
			reference(c, at, inner, depth, &v, why, wsize);
		free(inner);
		if (r < 0) {
			free(s);
			return -1;
		}
		int long_text = strlen(s) + strlen(v) > CAPSIM_LAUNCH_MAX_LINE;
		char *next = long_text ? NULL : capsim_xasprintf("%s%s", s, v);
		free(s);
		free(v);
		if (long_text) {
			snprintf(why, wsize, "resolves to more than %u bytes", CAPSIM_LAUNCH_MAX_LINE);
			return -1;
		}
		s = next;
		i = end + 1;
	}
	while (*s && isspace((unsigned char)s[strlen(s) - 1]))
		s[strlen(s) - 1] = '\0';
	*out = s;
	return 0;
}

/* ---- the values applied ---------------------------------------------------------- */

/* the value of entry e capsim reads into l; -1 after a refusal */
static int apply(conf *c, const centry *e, const char *key)
{
	char *where = capsim_xasprintf("%s:%ld", c->file, e->line);
	char why[240], *v = NULL;
	int r = 0;
	c->resolves = 0; /* the budget is this value's */
	if (e->list) {
		capsim_diags_add_at(c->d, where, "%s: expected one value, found a list", e->key);
		r = -1;
	} else if (!strcmp(e->value, "???")) {
		capsim_diags_add_at(c->d, where, "%s: ??? (a value the launch must give), and the "
				    "launch does not give it", e->key);
		r = -1;
	} else if (resolve(c, e->key, e->null ? "null" : e->value, 0, &v, why, sizeof why) < 0) {
		capsim_diags_add_at(c->d, where, "%s: %s", e->key, why);
		r = -1;
	} else {
		r = capsim_launch_nemo_value(c->l, key, v, where, c->d);
		if (r == 0)
			note(c->l, "%s: %.60s (%s): not modelled", e->key, v, c->group);
	}
	free(v);
	free(where);
	return r < 0 ? -1 : 0;
}

/* the keys not read, a note a section: "training=gpt3/5b [model.optim] not
 * modelled: lr, weight_decay" (null ones set nothing and are left out) */
static void unread(conf *c, const unsigned char *read)
{
	char line[160] = "", section[160] = "";
	for (size_t i = 0; i < c->n; i++) {
		const centry *e = &c->e[i];
		if (read[i] || e->null)
			continue;
		const char *dot = strrchr(e->key, '.');
		int sl = dot ? (int)(dot - e->key) : 0;
		const char *name = dot ? dot + 1 : e->key;
		int same = (int)strlen(section) == sl && !strncmp(section, e->key, (size_t)sl);
		if (*line && (!same || strlen(line) + strlen(name) + 2 > 150)) {
			note(c->l, "%s", line);
			*line = '\0';
		}
		if (!*line) {
			snprintf(section, sizeof section, "%.*s", sl, e->key);
			snprintf(line, sizeof line, "%.40s [%.60s] not modelled: %.40s", c->group,
				 section, name);
		} else {
			size_t n = strlen(line);
			snprintf(line + n, sizeof line - n, ", %s", name);
		}
	}
	if (*line)
		note(c->l, "%s", line);
}

/* each entry of c: read where capsim reads its key and the launch does not
 * override it (the launch's words are read next), else noted; -1 after a
 * refusal */
static int apply_all(conf *c, size_t stage_len)
{
	unsigned char *read = capsim_xcalloc(c->n ? c->n : 1, 1);
	int rc = 0;
	for (size_t i = 0; i < c->n; i++) {
		const centry *e = &c->e[i];
		const char *key = e->key + stage_len + 1, *v;
		if (overridden(c, e->key, &v)) {
			read[i] = 1; /* the launch's own value, read after */
			continue;
		}
		if (!capsim_launch_nemo_reads(key))
			continue;
		read[i] = 1;
		if (apply(c, e, key) < 0)
			rc = -1;
	}
	if (!rc)
		unread(c, read);
	free(read);
	return rc;
}

/* one config group (stage=name) of the launch: its file found, read and
 * applied; -1 after a refusal */
static int config_group(char **argv, int argc, const char *where, const char *tok,
			capsim_launch *l, capsim_diags *d)
{
	const char *eq = strchr(tok, '=');
	size_t sl = (size_t)(eq - tok);
	char *rel[2];
	rel[0] = capsim_xasprintf("conf/%.*s/%s.yaml", (int)sl, tok, eq + 1);
	rel[1] = capsim_xasprintf("%.*s/%s.yaml", (int)sl, tok, eq + 1);
	int rc = -1;
	char tried[512], *path = NULL, *text = NULL;
	if (!eq[1] || strstr(eq + 1, "..")) {
		capsim_diags_add_at(d, where, "%s: expected a config's name (gpt3/5b)", tok);
	} else if (strchr(eq + 1, '$')) {
		capsim_diags_add_at(d, where, "%.120s: names a variable the script does not set "
				    "(nor Slurm from #SBATCH lines): give it with --env NAME=VALUE", tok);
	} else if (!l->n_config_roots) {
		capsim_diags_add_at(d, where, "%s: the NeMo launcher reads the job's values from its "
				    "%s, which this launch does not hold: give --config-root DIR "
				    "(the launcher's launcher_scripts directory)", tok, rel[0]);
	} else if (!(path = find_file(l, (const char *const *)rel, 2, tried, sizeof tried))) {
		capsim_diags_add_at(d, where, "%s: no config file at %s", tok, tried);
	} else {
		size_t len;
		text = slurp(path, &len, d);
		char *stage = capsim_xasprintf("%.*s", (int)sl, tok);
		conf c = { .file = path, .group = tok, .argv = argv, .argc = argc, .l = l, .d = d };
		if (text && read_yaml(&c, text, len, stage) == 0) {
			note(l, "%.40s: read from %.100s, under the launch's overrides", tok, path);
			rc = apply_all(&c, sl);
		}
		conf_free(&c);
		free(stage);
	}
	free(text);
	free(path);
	free(rel[0]);
	free(rel[1]);
	return rc;
}

int capsim_launch_nemo_configs(char **argv, int argc, const char *where, capsim_launch *l,
			       capsim_diags *d)
{
	int rc = 0;
	for (int i = 0; i < argc; i++)
		if (!strncmp(argv[i], "training=", 9) || !strncmp(argv[i], "fine_tuning=", 12) ||
		    !strncmp(argv[i], "peft=", 5))
			rc |= config_group(argv, argc, where, argv[i], l, d);
	return rc ? -1 : 0;
}

/* ---- torchtitan's job config and its overrides --------------------------------------- */

/* a torchtitan option's name as its config's key: without the leading --,
 * '-' as '_' (tyro accepts both) */
static char *titan_key(const char *w, size_t n)
{
	char *k = capsim_xasprintf("%.*s", (int)n, w);
	for (char *p = k; *p; p++)
		if (*p == '-')
			*p = '_';
	return k;
}

/* the overrides of argv[0..argc) onto t (job.config_file left out); -1
 * after a refusal */
static int titan_overrides(char **argv, int argc, const char *where, capsim_toml *t,
			   capsim_diags *d)
{
	for (int i = 0; i < argc; i++) {
		const char *w = argv[i];
		if (!*w)
			continue; /* "$@" without arguments */
		if (strncmp(w, "--", 2) || !strchr(w, '.')) {
			capsim_diags_add_at(d, where, "'%.60s': expected torchtitan's --section.key "
					    "VALUE", w);
			return -1;
		}
		const char *eq = strchr(w, '=');
		char *key = titan_key(w + 2, eq ? (size_t)(eq - w - 2) : strlen(w + 2));
		const char *v = eq ? eq + 1 : i + 1 < argc && strncmp(argv[i + 1], "--", 2) ?
			argv[++i] : NULL;
		int r = 0;
		if (strcmp(key, "job.config_file")) {
			char *dot = strrchr(key, '.');
			if (!v && !strncmp(dot + 1, "no_", 3)) { /* tyro's --section.no-key */
				memmove(dot + 1, dot + 4, strlen(dot + 4) + 1);
				v = "false";
			}
			r = capsim_toml_override(t, key, v ? v : "true", 0, where, d);
		}
		free(key);
		if (r < 0)
			return -1;
	}
	return 0;
}

/* the job config's path among argv[0..argc) (--job.config_file PATH or
 * =PATH, tyro's --job.config-file too), or NULL */
static const char *titan_config(char **argv, int argc)
{
	for (int i = 0; i < argc; i++) {
		const char *w = argv[i];
		if (!strncmp(w, "--job.config_file", 17) || !strncmp(w, "--job.config-file", 17)) {
			if (w[17] == '=')
				return w + 18;
			if (!w[17] && i + 1 < argc)
				return argv[i + 1];
		}
	}
	return NULL;
}

/* the job config named (path, relative to a root) read into t; -1 after a
 * refusal */
static int titan_doc(const char *named, const char *where, const capsim_launch *l,
		     capsim_toml *t, char **path, capsim_diags *d)
{
	char tried[512];
	const char *rel = named;
	while (rel[0] == '.' && rel[1] == '/')
		rel += 2;
	if (!l->n_config_roots) {
		capsim_diags_add_at(d, where, "--job.config_file %.120s: torchtitan's job config, "
				    "which this launch does not hold: give --config-root DIR (the "
				    "torchtitan checkout the launch runs in)", named);
		return -1;
	}
	if (named[0] == '/' || strstr(named, "..") ||
	    !(*path = find_file(l, &rel, 1, tried, sizeof tried))) {
		capsim_diags_add_at(d, where, "--job.config_file %.120s: %s%s", named,
				    named[0] == '/' || strstr(named, "..") ?
				    "expected a path inside the checkout" : "no config file at ",
				    named[0] == '/' || strstr(named, "..") ? "" : tried);
		return -1;
	}
	size_t len;
	char *text = slurp(*path, &len, d);
	int r = text ? capsim_toml_parse(text, len, *path, t, d) : -1;
	free(text);
	return r;
}

int capsim_launch_torchtitan(char **argv, int argc, const char *where, capsim_launch *l,
			     capsim_diags *d)
{
	const char *named = titan_config(argv, argc);
	capsim_toml t = { 0 };
	char *path = NULL;
	if (!l->gpus_per_node) {
		capsim_diags_add_at(d, where, "torchtitan's degrees need the GPUs a node: the launch "
				    "gives no --nproc_per_node");
		return -1;
	}
	if (named && titan_doc(named, where, l, &t, &path, d) < 0)
		return -1;
	if (!named)
		note(l, "torchtitan: no --job.config_file; its defaults");
	int rc = -1;
	if (titan_overrides(argv, argc, where, &t, d) == 0) {
		rc = capsim_torchtitan_read_doc(&t, path ? path : where, l->nodes,
						(int)l->gpus_per_node, l, &l->model, d);
		if (named && rc == 0)
			note(l, "--job.config_file %.50s: read from %.90s, under the launch's "
			     "overrides", named, path);
	}
	capsim_toml_free(&t);
	free(path);
	return rc;
}
