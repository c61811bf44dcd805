/* test_escape.c - src/util/escape.h: each target language gets text that
 * reads back as text. Every case holds the exact bytes written, and where a
 * real reader exists on the machine (libxml2 for XML, sh for shell words)
 * the written text is read back by it. */
#include "testutil.h"

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"

typedef void (*escape_fn)(FILE *f, const char *s);

/* what fn writes for s, in a static buffer */
static const char *esc(escape_fn fn, const char *s)
{
	static char buf[4096];
	memset(buf, 0, sizeof buf);
	FILE *f = fmemopen(buf, sizeof buf, "w");
	assert_non_null(f);
	fn(f, s);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/* the hostile strings every language is tried with */
static const char *const hostile[] = {
	"plain",
	"`touch /tmp/x`",
	"a\"b'c",
	"line\nsystem(\"touch /tmp/x\")",
	"-->",
	"<evil/>",
	"]]>",
	"a--b---c-",
	"-",
	"\x1b]0;title\x07",
	"\xe2\x80\xae\x65vil",       /* U+202E RIGHT-TO-LEFT OVERRIDE, "evil" */
	"\xe2\x81\xa6x\xe2\x81\xa9", /* U+2066 .. U+2069 */
	"\xff\xfe bad utf-8 \xc0\xaf",
	"caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac",
	"=cmd|' /C calc'!A0",
	"",
};
#define N_HOSTILE (sizeof hostile / sizeof hostile[0])

/* no byte below 0x20, no DEL, no bidi control, no invalid UTF-8 in out */
static void assert_visible(const char *out)
{
	size_t n = strlen(out);
	for (size_t i = 0; i < n;) {
		int plain;
		size_t len = capsim_escape_unit(out + i, n - i, &plain);
		if (!plain)
			fail_msg("an invisible unit at byte %zu of '%s'", i, out);
		i += len;
	}
}

static void test_visible(void **state)
{
	(void)state;
	assert_string_equal(esc(capsim_term_text, "a\nb"), "a\\x0ab");
	assert_string_equal(esc(capsim_term_text, "\x1b[2J"), "\\x1b[2J");
	assert_string_equal(esc(capsim_term_text, "x\x7fy"), "x\\x7fy");
	assert_string_equal(esc(capsim_term_text, "\xe2\x80\xaeok"), "\\u{202E}ok");
	assert_string_equal(esc(capsim_term_text, "\xc2\x85"), "\\u{0085}"); /* C1 NEL */
	assert_string_equal(esc(capsim_term_text, "\xe2\x80\xa8"), "\\u{2028}");
	assert_string_equal(esc(capsim_term_text, "\xc0\xaf"), "\\xc0\\xaf"); /* overlong '/' */
	assert_string_equal(esc(capsim_term_text, "\xed\xa0\x80"), "\\xed\\xa0\\x80"); /* surrogate */
	assert_string_equal(esc(capsim_term_text, "\xe6\x97"), "\\xe6\\x97"); /* cut short */
	assert_string_equal(esc(capsim_term_text, "caf\xc3\xa9"), "caf\xc3\xa9");
	escape_fn all[] = { capsim_xml_escape, capsim_xml_comment_escape, capsim_md_escape,
			    capsim_gnuplot_string, capsim_gnuplot_datum, capsim_csv_text,
			    capsim_term_text };
	for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
		for (size_t i = 0; i < N_HOSTILE; i++)
			assert_visible(esc(all[k], hostile[i]));
}

static void test_xml(void **state)
{
	(void)state;
	assert_string_equal(esc(capsim_xml_escape, "a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
	assert_string_equal(esc(capsim_xml_escape, "]]>"), "]]&gt;");
	assert_string_equal(esc(capsim_xml_escape, "a\tb"), "a\\x09b");
	/* every hostile string, in an attribute, an element and a comment, reads
	 * back through libxml2 as one element with no other element beside it */
	for (size_t i = 0; i < N_HOSTILE; i++) {
		char doc[8192] = { 0 };
		FILE *f = fmemopen(doc, sizeof doc, "w");
		fputs("<r a=\"", f);
		capsim_xml_escape(f, hostile[i]);
		fputs("\"><!-- ", f);
		capsim_xml_comment_escape(f, hostile[i]);
		fputs(" -->", f);
		capsim_xml_escape(f, hostile[i]);
		fputs("</r>", f);
		assert_int_equal(fclose(f), 0);
		xmlDocPtr x = xmlReadMemory(doc, (int)strlen(doc), "t.xml", "UTF-8",
					    XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
		if (!x)
			fail_msg("libxml2 refused '%s'", doc);
		xmlNodePtr r = xmlDocGetRootElement(x);
		for (xmlNodePtr c = r->children; c; c = c->next)
			assert_true(c->type == XML_TEXT_NODE || c->type == XML_COMMENT_NODE);
		xmlChar *a = xmlGetProp(r, (const xmlChar *)"a");
		xmlChar *t = xmlNodeGetContent(r);
		/* what libxml2 reads is what the terminal form shows */
		char want[1024];
		snprintf(want, sizeof want, "%s", esc(capsim_term_text, hostile[i]));
		assert_string_equal((const char *)a, want);
		assert_string_equal((const char *)t, want);
		xmlFree(a);
		xmlFree(t);
		xmlFreeDoc(x);
	}
}

static void test_xml_comment(void **state)
{
	(void)state;
	assert_string_equal(esc(capsim_xml_comment_escape, "-->"), "-\\x2d>");
	assert_string_equal(esc(capsim_xml_comment_escape, "a--b---c-"), "a-\\x2db-\\x2d-c\\x2d");
	assert_string_equal(esc(capsim_xml_comment_escape, "-"), "\\x2d");
	assert_string_equal(esc(capsim_xml_comment_escape, "a-b"), "a-b");
	assert_string_equal(esc(capsim_xml_comment_escape, "/runs/--x/a.sh"), "/runs/-\\x2dx/a.sh");
	for (size_t i = 0; i < N_HOSTILE; i++) {
		const char *o = esc(capsim_xml_comment_escape, hostile[i]);
		assert_null(strstr(o, "--"));
		size_t n = strlen(o);
		assert_true(n == 0 || o[n - 1] != '-');
	}
}

static void test_markdown(void **state)
{
	(void)state;
	assert_string_equal(esc(capsim_md_escape, "<script>alert(1)</script>"),
			    "&lt;script&gt;alert(1)&lt;/script&gt;");
	assert_string_equal(esc(capsim_md_escape, "a|b*c_ d`e[f](g)"), "a\\|b\\*c\\_ d\\`e\\[f\\](g)");
	assert_string_equal(esc(capsim_md_escape, "cost_to_train_usd"), "cost_to_train_usd");
	assert_string_equal(esc(capsim_md_escape, "_x_"), "\\_x\\_");
	assert_string_equal(esc(capsim_md_escape, "# not a heading"), "\\# not a heading");
	assert_string_equal(esc(capsim_md_escape, "- x - y"), "\\- x - y");
	assert_string_equal(esc(capsim_md_escape, "12. x 3.5"), "12\\. x 3.5");
	assert_string_equal(esc(capsim_md_escape, "310.6 kW"), "310.6 kW");
	assert_string_equal(esc(capsim_md_escape, "7)"), "7\\)");
	assert_string_equal(esc(capsim_md_escape, "$1.2M, 48.5 days"), "$1.2M, 48.5 days");
	assert_string_equal(esc(capsim_md_escape, "a\nb"), "a\\x0ab");
	assert_string_equal(esc(capsim_md_escape, "A&B"), "A&amp;B");
}

static void test_gnuplot(void **state)
{
	(void)state;
	assert_string_equal(esc(capsim_gnuplot_string, "it's"), "'it''s'");
	assert_string_equal(esc(capsim_gnuplot_string, "`touch x`"), "'`touch x`'");
	assert_string_equal(esc(capsim_gnuplot_string, "a\nsystem(\"x\")"),
			    "'a\\x0asystem(\"x\")'");
	assert_string_equal(esc(capsim_gnuplot_string, "@macro"), "'@macro'");
	assert_string_equal(esc(capsim_gnuplot_datum, "a \"b\" # c\\"),
			    "\"a \\x22b\\x22 \\x23 c\\x5c\"");
	for (size_t i = 0; i < N_HOSTILE; i++) {
		const char *o = esc(capsim_gnuplot_string, hostile[i]);
		/* one literal: quotes only at the ends or doubled inside */
		size_t n = strlen(o);
		assert_true(n >= 2 && o[0] == '\'' && o[n - 1] == '\'');
		for (size_t k = 1; k + 1 < n; k++)
			if (o[k] == '\'')
				assert_int_equal(o[++k], '\'');
		o = esc(capsim_gnuplot_datum, hostile[i]);
		n = strlen(o);
		assert_true(n >= 2 && o[0] == '"' && o[n - 1] == '"');
		assert_null(memchr(o + 1, '"', n - 2));
		assert_null(strchr(o, '#'));
	}
}

static void test_csv(void **state)
{
	(void)state;
	assert_string_equal(esc(capsim_csv_text, "a,b"), "\"a,b\"");
	assert_string_equal(esc(capsim_csv_text, "say \"hi\""), "\"say \"\"hi\"\"\"");
	assert_string_equal(esc(capsim_csv_text, "=1+2"), "\"'=1+2\"");
	assert_string_equal(esc(capsim_csv_text, "@SUM(A1)"), "\"'@SUM(A1)\"");
	assert_string_equal(esc(capsim_csv_text, "-x"), "\"'-x\"");
	assert_string_equal(esc(capsim_csv_text, "a\r\nb"), "\"a\\x0d\\x0ab\"");
	assert_string_equal(esc(capsim_csv_text, ""), "\"\"");
}

/* each word, read back by sh, is the same bytes */
static void test_shell(void **state)
{
	(void)state;
	assert_string_equal(esc(capsim_sh_word, "plain-1.0/x"), "plain-1.0/x");
	assert_string_equal(esc(capsim_sh_word, ""), "''");
	assert_string_equal(esc(capsim_sh_word, "it's"), "'it'\\''s'");
	assert_string_equal(esc(capsim_sh_word, "$(x)"), "'$(x)'");
	for (size_t i = 0; i < N_HOSTILE; i++) {
		char cmd[2048] = { 0 };
		FILE *f = fmemopen(cmd, sizeof cmd, "w");
		fputs("printf %s ", f);
		capsim_sh_word(f, hostile[i]);
		assert_int_equal(fclose(f), 0);
		FILE *p = popen(cmd, "r");
		assert_non_null(p);
		char got[1024];
		size_t n = fread(got, 1, sizeof got - 1, p);
		got[n] = '\0';
		assert_int_equal(pclose(p), 0);
		assert_string_equal(got, hostile[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_visible),
		cmocka_unit_test(test_xml),
		cmocka_unit_test(test_xml_comment),
		cmocka_unit_test(test_markdown),
		cmocka_unit_test(test_gnuplot),
		cmocka_unit_test(test_csv),
		cmocka_unit_test(test_shell),
	};
	return testutil_run_group(tests, NULL, NULL);
}
