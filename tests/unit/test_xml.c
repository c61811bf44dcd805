/* test_xml.c - the limits of the safe XML reader (src/io/xml.h): at most
 * CAPSIM_XML_MAX_ATTRS attributes on an element and CAPSIM_XML_MAX_ELEMENTS
 * elements in a file, counted before parsing and refused at the element's
 * line (libxml2 costs n^2 for an element of n attributes); quoted values,
 * comments and CDATA are not counted; a scenario of half a million unknown
 * attributes lists the first 50 with their nearest paths and counts the
 * rest. */
#include "catalog.h"
#include "testutil.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eval.h"
#include "scenario.h"
#include "xml.h"

TESTUTIL_CATALOG_FIXTURE

/* a document of one <e> (on line 2) with n attributes, each value holding
 * an '=' and a '>' that are not attributes */
static xmlDoc *attrs_doc(int n, capsim_diags *d)
{
	testutil_text t = { 0 };
	testutil_put(&t, "<?xml version=\"1.0\"?>\n<e");
	for (int i = 0; i < n; i++)
		testutil_put(&t, " a%d=\"x=1 > 0\"", i);
	testutil_put(&t, "/>\n");
	xmlDoc *doc = capsim_xml_read_memory(t.s, t.n, "attrs.xml", d);
	free(t.s);
	return doc;
}

static void test_attributes(void **state)
{
	(void)state;
	capsim_diags d = { 0 };
	xmlDoc *doc = attrs_doc(CAPSIM_XML_MAX_ATTRS, &d);
	assert_non_null(doc);
	long n = 0;
	for (xmlAttr *a = xmlDocGetRootElement(doc)->properties; a; a = a->next)
		n++;
	assert_int_equal(n, CAPSIM_XML_MAX_ATTRS);
	xmlFreeDoc(doc);
	assert_int_equal(d.n, 0);

	assert_null(attrs_doc(CAPSIM_XML_MAX_ATTRS + 1, &d));
	assert_int_equal(d.n, 1);
	assert_string_equal(d.v[0].where, "attrs.xml:2");
	assert_non_null(strstr(d.v[0].msg, "element: expected at most 256 attributes"));
	capsim_diags_free(&d);

	/* 100,000 of them: refused before the parser sees one */
	assert_null(attrs_doc(100000, &d));
	assert_int_equal(d.n, 1);
	assert_string_equal(d.v[0].where, "attrs.xml:2");
	capsim_diags_free(&d);
}

/* n elements in all (the root and n - 1 children, one a line from line 3),
 * with comments, CDATA and a processing instruction that hold '<' between */
static xmlDoc *elements_doc(int n, capsim_diags *d)
{
	testutil_text t = { 0 };
	testutil_put(&t, "<?xml version=\"1.0\"?>\n<r>\n");
	for (int i = 1; i < n; i++)
		testutil_put(&t, "<c/><!-- <c/> --><![CDATA[<c/>]]><?pi <c/>?>\n");
	testutil_put(&t, "</r>\n");
	xmlDoc *doc = capsim_xml_read_memory(t.s, t.n, "elements.xml", d);
	free(t.s);
	return doc;
}

static void test_elements(void **state)
{
	(void)state;
	capsim_diags d = { 0 };
	xmlDoc *doc = elements_doc(CAPSIM_XML_MAX_ELEMENTS, &d);
	if (!doc)
		capsim_diags_print(&d, stderr);
	assert_non_null(doc);
	xmlFreeDoc(doc);
	assert_null(elements_doc(CAPSIM_XML_MAX_ELEMENTS + 1, &d));
	assert_int_equal(d.n, 1);
	char where[64];
	/* the root is element 1 on line 2; element k > 1 is on line k + 1 */
	snprintf(where, sizeof where, "elements.xml:%d", CAPSIM_XML_MAX_ELEMENTS + 2);
	assert_string_equal(d.v[0].where, where);
	assert_non_null(strstr(d.v[0].msg, "file: expected at most 20000 elements"));
	capsim_diags_free(&d);
}

/* a scenario whose <cluster> appears 2,000 times with 250 unknown
 * attributes each: 500,000 unknown names, the first 50 listed with their
 * nearest paths, the rest counted in one line */
/* the 8 MiB cap on an input file is the file's length: one byte over is
 * refused (the reading buffer doubles to 16 MiB, which passed before), the
 * cap itself is read */
static void test_size_cap(void **state)
{
	(void)state;
	char path[] = "/tmp/capsim-test-xml-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "wb");
	assert_non_null(f);
	for (unsigned i = 0; i < CAPSIM_XML_MAX_BYTES; i++)
		fputc(' ', f);
	assert_int_equal(fflush(f), 0);
	size_t len = 0;
	capsim_diags d = { 0 };
	char *buf = capsim_xml_slurp(path, &len, &d);
	assert_non_null(buf);
	assert_int_equal(len, CAPSIM_XML_MAX_BYTES);
	free(buf);
	fputc(' ', f);
	assert_int_equal(fclose(f), 0);
	assert_null(capsim_xml_slurp(path, &len, &d));
	assert_true(capsim_diags_contains(&d, "cap on input files"));
	capsim_diags_free(&d);
	unlink(path);
}

static void test_unknown_names_counted(void **state)
{
	(void)state;
	testutil_text t = { 0 };
	testutil_put(&t, "<?xml version=\"1.0\"?>\n<scenario name=\"x\">\n");
	for (int e = 0; e < 2000; e++) {
		testutil_put(&t, "<cluster");
		for (int i = 0; i < 250; i++)
			testutil_put(&t, " x%d=\"1\"", i);
		testutil_put(&t, "/>\n");
	}
	testutil_put(&t, "</scenario>\n");
	capsim_scenario *s = calloc(1, sizeof *s);
	capsim_diags d = { 0 };
	assert_int_equal(capsim_scenario_load_memory(t.s, t.n, "many.xml", cat, NULL, 0, s, &d), -1);
	assert_int_equal(d.n, 51);
	assert_string_equal(d.v[0].where, "many.xml:3");
	assert_non_null(strstr(d.v[0].msg, "unknown attribute 'cluster.x0'; nearest valid:"));
	assert_string_equal(d.v[50].where, "many.xml");
	assert_string_equal(d.v[50].msg, "499950 more unknown attributes or elements (the first 50 "
					 "are listed)");
	capsim_diags_free(&d);
	free(s);
	free(t.s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_attributes),
		cmocka_unit_test(test_elements),
		cmocka_unit_test(test_unknown_names_counted),
		cmocka_unit_test(test_size_cap),
	};
	capsim_init();
	return testutil_run_group(tests, setup, teardown);
}
