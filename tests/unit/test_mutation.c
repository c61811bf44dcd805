/* test_mutation.c - for every shipped file, removing each required attribute
 * and breaking each unit must be caught, each with a message that names the
 * attribute it concerns. A schema or loader that lets a mutation through (a
 * permissive schema, a forgotten required flag) fails here. */
#include "testutil.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "catalog.h"
#include "scenario.h"
#include "xml.h"

static capsim_catalog *full;
static char *bib_text;
static size_t bib_len;
static size_t mutations;

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc((size_t)n + 1);
	*len = fread(buf, 1, (size_t)n, f);
	buf[*len] = '\0';
	fclose(f);
	return buf;
}

static int setup(void **state)
{
	(void)state;
	capsim_diags d = { 0 };
	full = capsim_catalog_create();
	int rc = capsim_catalog_load_root(full, CAPSIM_SOURCE_DIR, NULL, &d);
	capsim_diags_free(&d);
	bib_text = slurp(CAPSIM_SOURCE_DIR "/hardware/bibliography.xml", &bib_len);
	return rc || !bib_text;
}

static int teardown(void **state)
{
	(void)state;
	capsim_catalog_free(full);
	free(bib_text);
	return 0;
}

typedef enum { FILE_CATALOG, FILE_SCENARIO } file_kind;

/* Load the mutated document; return the diagnostics. */
static void load_mutant(xmlDoc *doc, file_kind kind, capsim_diags *d)
{
	xmlChar *text = NULL;
	int len = 0;
	xmlDocDumpMemory(doc, &text, &len);
	if (kind == FILE_CATALOG) {
		capsim_catalog *c = capsim_catalog_create();
		capsim_catalog_load_memory(c, bib_text, bib_len, "bibliography.xml", d);
		capsim_catalog_load_memory(c, (const char *)text, (size_t)len, "mutant.xml", d);
		capsim_catalog_free(c);
	} else {
		capsim_scenario *s = malloc(sizeof *s);
		capsim_scenario_load_memory((const char *)text, (size_t)len, "mutant.xml",
					    full, NULL, 0, s, d);
		free(s);
	}
	xmlFree(text);
}

/* the field an attribute of an element fills, found by the element's path
 * below its entry (catalog) or below <scenario> */
static const capsim_field *field_for(const capsim_field *f, size_t n,
				     const char *path)
{
	return capsim_field_find(f, n, path);
}

static void mutate_element(xmlDoc *doc, xmlNode *el, const char *path,
			   const capsim_field *f, size_t nf, file_kind kind,
			   const char *file)
{
	/* the mutations remove and re-add attributes: walk a copy of the names */
	char names[32][64];
	size_t nn = 0;
	for (xmlAttr *a = el->properties; a && nn < 32; a = a->next)
		snprintf(names[nn++], sizeof names[0], "%s", (const char *)a->name);
	for (size_t ai = 0; ai < nn; ai++) {
		const char *attr = names[ai];
		char fp[256];
		snprintf(fp, sizeof fp, "%.150s%s%.60s", path, *path ? "." : "", attr);
		const capsim_field *fld = field_for(f, nf, fp);
		if (!fld)
			continue;
		xmlChar *orig = xmlGetProp(el, (const xmlChar *)attr);

		if (fld->flags & CAPSIM_F_REQUIRED) {
			/* remove the attribute */
			xmlUnsetProp(el, (const xmlChar *)attr);
			capsim_diags d = { 0 };
			load_mutant(doc, kind, &d);
			if (d.n == 0)
				fail_msg("%s: removing required %s went unnoticed", file, fp);
			if (!capsim_diags_contains(&d, attr)) {
				capsim_diags_print(&d, stderr);
				fail_msg("%s: removing %s: no message names '%s'", file, fp, attr);
			}
			capsim_diags_free(&d);
			xmlSetProp(el, (const xmlChar *)attr, orig);
			mutations++;
		}
		if (fld->type == CAPSIM_FT_DOUBLE || fld->type == CAPSIM_FT_INT) {
			/* break the unit */
			xmlSetProp(el, (const xmlChar *)attr, (const xmlChar *)"12 furlongs");
			capsim_diags d = { 0 };
			load_mutant(doc, kind, &d);
			if (d.n == 0)
				fail_msg("%s: %s='12 furlongs' went unnoticed", file, fp);
			/* the loader names the dotted path; the schema (for
			 * integers it types) "Element 'E', attribute 'A'" */
			char schema_form[160];
			snprintf(schema_form, sizeof schema_form, "attribute '%.100s'", attr);
			if ((!capsim_diags_contains(&d, fp) &&
			     !capsim_diags_contains(&d, schema_form)) ||
			    !capsim_diags_contains(&d, "furlongs")) {
				capsim_diags_print(&d, stderr);
				fail_msg("%s: %s='12 furlongs': no message names %s", file,
					 fp, fp);
			}
			capsim_diags_free(&d);
			xmlSetProp(el, (const xmlChar *)attr, orig);
			mutations++;
		}
		xmlFree(orig);
	}
}

static void walk(xmlDoc *doc, xmlNode *el, const char *path,
		 const capsim_field *f, size_t nf, file_kind kind, const char *file)
{
	mutate_element(doc, el, path, f, nf, kind, file);
	for (xmlNode *c = el->children; c; c = c->next) {
		if (c->type != XML_ELEMENT_NODE)
			continue;
		char sub[256];
		snprintf(sub, sizeof sub, "%.150s%s%.60s", path, *path ? "." : "",
			 (const char *)c->name);
		walk(doc, c, sub, f, nf, kind, file);
	}
}

static size_t mutate_dir(const char *dir, file_kind kind)
{
	char dpath[1024];
	snprintf(dpath, sizeof dpath, "%s/%s", CAPSIM_SOURCE_DIR, dir);
	DIR *dp = opendir(dpath);
	assert_non_null(dp);
	struct dirent *de;
	size_t files = 0;
	while ((de = readdir(dp))) {
		size_t len = strlen(de->d_name);
		if (len < 5 || strcmp(de->d_name + len - 4, ".xml") != 0 ||
		    strcmp(de->d_name, "bibliography.xml") == 0)
			continue;
		char path[2400];
		snprintf(path, sizeof path, "%s/%s", dpath, de->d_name);
		capsim_diags d = { 0 };
		capsim_xml_init();
		xmlDoc *doc = capsim_xml_read(path, NULL, &d);
		assert_non_null(doc);
		xmlNode *root = xmlDocGetRootElement(doc);
		if (kind == FILE_SCENARIO) {
			walk(doc, root, "", capsim_scenario_fields,
			     capsim_scenario_n_fields, kind, path);
		} else {
			for (xmlNode *e = root->children; e; e = e->next) {
				if (e->type != XML_ELEMENT_NODE)
					continue;
				const capsim_kind *k = capsim_kind_by_name((const char *)e->name);
				assert_non_null(k);
				walk(doc, e, "", k->fields, k->n_fields, kind, path);
			}
		}
		xmlFreeDoc(doc);
		capsim_diags_free(&d);
		files++;
	}
	closedir(dp);
	return files;
}

static void test_hardware_mutations(void **state)
{
	(void)state;
	size_t before = mutations;
	assert_true(mutate_dir("hardware", FILE_CATALOG) >= 6);
	assert_true(mutations - before > 300);
}

static void test_model_mutations(void **state)
{
	(void)state;
	size_t before = mutations;
	assert_true(mutate_dir("models", FILE_CATALOG) >= 4);
	assert_true(mutations - before > 300);
}

static void test_scenario_mutations(void **state)
{
	(void)state;
	size_t before = mutations;
	assert_true(mutate_dir("scenarios", FILE_SCENARIO) >= 9);
	assert_true(mutations - before > 60);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hardware_mutations),
		cmocka_unit_test(test_model_mutations),
		cmocka_unit_test(test_scenario_mutations),
	};
	int rc = testutil_run_group_name("mutation", tests, setup, teardown);
	fprintf(stderr, "mutation: %zu mutants, each caught with its own message\n",
		mutations);
	return rc;
}
