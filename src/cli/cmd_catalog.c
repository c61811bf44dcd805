/* cmd_catalog.c - `capsim catalog [KIND] [--json]`: the parts and models a
 * scenario can name, as a table or as JSON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "catalog.h"
#include "cli.h"
#include "escape.h"
#include "ioint.h"
#include "units.h"

enum { O_JSON, O_CATALOG, O_HELP };
static const capsim_cli_opt catalog_opts[] = {
	[O_JSON] = { "json", 'j', NULL, "one JSON object; values in SI with the unit in the key" },
	[O_CATALOG] = { "catalog", 'c', "DIR",
			"read DIR/hardware and DIR/models (default: the shipped catalog)" },
	[O_HELP] = { "help", 'h', NULL, "this text" },
};
const capsim_cli_cmd capsim_cli_catalog_cmd = {
	.name = "catalog",
	.usage = "usage: capsim catalog [KIND] [--json] [--catalog DIR]\n",
	.about = "List the catalog. KIND is one of: gpus nics switches nvswitches storage\n"
		 "nodes clouds facilities models refs (default: all of them).\n",
	.opts = catalog_opts,
	.n_opts = CAPSIM_CLI_N(catalog_opts),
};

static void help(FILE *out)
{
	capsim_cli_help(&capsim_cli_catalog_cmd, out);
	fprintf(out, "\nThe shipped catalog: %s\n", capsim_catalog_default_root());
}

/* "memory.capacity" + dim -> "memory_capacity_bytes" */
static void json_key(const capsim_field *f, char *buf, size_t len)
{
	size_t n = 0;
	for (const char *p = f->path; *p && n + 1 < len; p++)
		buf[n++] = (*p == '.' || *p == '-') ? '_' : *p;
	buf[n] = '\0';
	if (f->type == CAPSIM_FT_DOUBLE || f->type == CAPSIM_FT_INT) {
		const char *suffix = capsim_dim_json_suffix(f->dim);
		strncat(buf, suffix, len - strlen(buf) - 1);
	}
}

static json_t *field_json(const capsim_field *f, const void *obj)
{
	const char *at = (const char *)obj + f->offset;
	switch (f->type) {
	case CAPSIM_FT_DOUBLE:
		return *(const double *)at != 0.0 ? json_real(*(const double *)at) : NULL;
	case CAPSIM_FT_INT:
		return *(const int *)at ? json_integer(*(const int *)at) : NULL;
	case CAPSIM_FT_TEXT:
	case CAPSIM_FT_REF:
	case CAPSIM_FT_DATE:
		return *at ? json_string(at) : NULL;
	case CAPSIM_FT_FLAG:
		return json_boolean(*(const int *)at);
	case CAPSIM_FT_ENUM:
		return json_string(f->enums[*(const int *)at]);
	}
	return NULL;
}

static json_t *entry_json(const capsim_kind *k, const void *obj)
{
	json_t *o = json_object();
	const capsim_entry *e = obj;
	for (size_t i = 0; i < k->n_fields; i++) {
		char key[128];
		json_key(&k->fields[i], key, sizeof key);
		json_t *v = field_json(&k->fields[i], obj);
		if (v)
			json_object_set_new(o, key, v);
	}
	if (e->src[0])
		json_object_set_new(o, "src", json_string(e->src));
	if (e->assumption[0])
		json_object_set_new(o, "assumption", json_string(e->assumption));
	return o;
}

static void cell(const capsim_field *f, const void *obj, char *buf, size_t len)
{
	const char *at = (const char *)obj + f->offset;
	switch (f->type) {
	case CAPSIM_FT_DOUBLE: {
		double v = *(const double *)at;
		size_t pl = strlen(f->path);
		if (v == 0.0)
			snprintf(buf, len, "-");
		else if (f->dim == CAPSIM_DIM_BYTES_PER_S && pl > 5 &&
			 strcmp(f->path + pl - 5, "speed") == 0)
			snprintf(buf, len, "%.4g Gb/s", v * 8 / 1e9); /* as networks are sold */
		else
			capsim_units_format(v, f->dim, buf, len);
		return;
	}
	case CAPSIM_FT_INT:
		if (*(const int *)at == 0)
			snprintf(buf, len, "-");
		else
			snprintf(buf, len, "%d", *(const int *)at);
		return;
	default: {
		/* a text from a parts file (perhaps someone else's): shown, not sent */
		char text[128];
		if (capsim_field_format(f, obj, text, sizeof text) != 0) {
			snprintf(buf, len, "-");
			return;
		}
		memset(buf, 0, len);
		FILE *m = fmemopen(buf, len - 1, "w"); /* the last byte stays a NUL */
		if (!m) {
			snprintf(buf, len, "-");
			return;
		}
		capsim_term_text(m, text);
		fclose(m);
	}
	}
}

static void print_table(const capsim_catalog *c, capsim_kind_id kid)
{
	const capsim_kind *k = &capsim_kinds[kid];
	size_t n = capsim_catalog_count(c, kid);
	size_t ncol = 0;
	while (k->columns[ncol])
		ncol++;
	/* widths: id column, then each field */
	size_t w[16] = { 2 };
	char buf[128];
	for (size_t i = 0; i < n; i++) {
		const capsim_entry *e = capsim_catalog_at(c, kid, i);
		if (strlen(e->id) > w[0])
			w[0] = strlen(e->id);
	}
	for (size_t j = 0; j < ncol && j < 15; j++) {
		const capsim_field *f = capsim_field_find(k->fields, k->n_fields, k->columns[j]);
		w[j + 1] = strlen(k->columns[j]);
		for (size_t i = 0; i < n; i++) {
			cell(f, capsim_catalog_at(c, kid, i), buf, sizeof buf);
			if (strlen(buf) > w[j + 1])
				w[j + 1] = strlen(buf);
		}
	}
	printf("%s (%zu)\n", k->plural, n);
	printf("  %-*s", (int)w[0], "id");
	for (size_t j = 0; j < ncol && j < 15; j++)
		printf("  %-*s", (int)w[j + 1], k->columns[j]);
	printf("\n");
	for (size_t i = 0; i < n; i++) {
		const void *obj = capsim_catalog_at(c, kid, i);
		printf("  %-*s", (int)w[0], ((const capsim_entry *)obj)->id);
		for (size_t j = 0; j < ncol && j < 15; j++) {
			const capsim_field *f =
				capsim_field_find(k->fields, k->n_fields, k->columns[j]);
			cell(f, obj, buf, sizeof buf);
			printf("  %-*s", (int)w[j + 1], buf);
		}
		printf("\n");
	}
}

static void print_refs(const capsim_catalog *c)
{
	size_t n = capsim_catalog_n_refs(c);
	printf("refs (%zu)\n", n);
	for (size_t i = 0; i < n; i++) {
		const capsim_bibref *r = capsim_catalog_ref_at(c, i);
		printf("  %s\n    ", r->e.id);
		capsim_term_text(stdout, r->title);
		fputs("; ", stdout);
		capsim_term_text(stdout, r->where);
		fputs("; ", stdout);
		capsim_term_text(stdout, r->date);
		if (r->url[0]) {
			fputs("; ", stdout);
			capsim_term_text(stdout, r->url);
		}
		fputc('\n', stdout);
	}
}

static json_t *refs_json(const capsim_catalog *c)
{
	json_t *a = json_array();
	for (size_t i = 0; i < capsim_catalog_n_refs(c); i++)
		json_array_append_new(a, entry_json(&capsim_bibref_kind,
						    capsim_catalog_ref_at(c, i)));
	return a;
}

int capsim_cmd_catalog(int argc, char **argv)
{
	int as_json = 0, ch;
	const char *root = capsim_catalog_default_root();
	optind = 1;
	while ((ch = capsim_cli_next(&capsim_cli_catalog_cmd, argc, argv)) != -1) {
		switch (ch) {
		case O_JSON: as_json = 1; break;
		case O_CATALOG: root = optarg; break;
		case O_HELP: help(stdout); return CAPSIM_EXIT_OK;
		default: return CAPSIM_EXIT_USAGE;
		}
	}
	const capsim_kind *only = NULL;
	int only_refs = 0;
	if (optind < argc) {
		if (strcmp(argv[optind], "refs") == 0)
			only_refs = 1;
		else if (!(only = capsim_kind_by_name(argv[optind]))) {
			fprintf(stderr, "capsim catalog: unknown kind '%s'; try 'capsim catalog "
				"--help'\n", argv[optind]);
			return CAPSIM_EXIT_USAGE;
		}
		if (optind + 1 < argc) {
			fprintf(stderr, "capsim catalog: one KIND at most\n");
			return CAPSIM_EXIT_USAGE;
		}
	}

	capsim_diags d = { 0 };
	capsim_catalog *c = capsim_catalog_create();
	if (capsim_catalog_load_root(c, root, NULL, &d) < 0 || capsim_cli_parts_load(c, &d) < 0) {
		capsim_diags_print(&d, stderr);
		capsim_diags_free(&d);
		capsim_catalog_free(c);
		return CAPSIM_EXIT_USAGE;
	}
	if (as_json) {
		json_t *o = capsim_cli_json_head(c, NULL);
		for (size_t k = 0; k < CAPSIM_KIND__COUNT; k++) {
			if ((only && only != &capsim_kinds[k]) || only_refs)
				continue;
			json_t *a = json_array();
			for (size_t i = 0; i < capsim_catalog_count(c, k); i++)
				json_array_append_new(a, entry_json(&capsim_kinds[k],
								    capsim_catalog_at(c, k, i)));
			json_object_set_new(o, capsim_kinds[k].plural, a);
		}
		if (!only)
			json_object_set_new(o, "refs", refs_json(c));
		json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
		json_decref(o);
	} else {
		int first = 1;
		for (size_t k = 0; k < CAPSIM_KIND__COUNT; k++) {
			if ((only && only != &capsim_kinds[k]) || only_refs)
				continue;
			if (!first)
				printf("\n");
			first = 0;
			print_table(c, k);
		}
		if (only_refs)
			print_refs(c);
	}
	capsim_catalog_free(c);
	return CAPSIM_EXIT_OK;
}
