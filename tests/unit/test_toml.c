/* test_toml.c - the TOML reader (src/import/toml.h), on the TOML v1.0.0
 * specification's own examples (toml.io/en/v1.0.0): each form it reads,
 * read to the value the specification gives, and each form it does not
 * read, or that the specification calls invalid, refused at its line; a
 * text that is not UTF-8 refused at the line of its first stray byte. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "toml.h"

/* text read, or the test fails naming the reason */
static void parse_ok(const char *text, capsim_toml *t)
{
	capsim_diags d = { 0 };
	if (capsim_toml_parse(text, strlen(text), "spec.toml", t, &d) < 0) {
		capsim_diags_print(&d, stderr);
		fail_msg("refused:\n%s", text);
	}
	capsim_diags_free(&d);
}

/* text refused at spec.toml:line with want in the message */
static void parse_refused(const char *text, long line, const char *want)
{
	capsim_toml t;
	capsim_diags d = { 0 };
	if (capsim_toml_parse(text, strlen(text), "spec.toml", &t, &d) == 0)
		fail_msg("read, expected a refusal:\n%s", text);
	assert_int_equal(t.n, 0);
	char where[32];
	snprintf(where, sizeof where, "spec.toml:%ld", line);
	if (d.n < 1 || strcmp(d.v[0].where, where) || !strstr(d.v[0].msg, want))
		fail_msg("expected '%s' at %s, found %s: %s", want, where, d.n ? d.v[0].where : "-",
			 d.n ? d.v[0].msg : "-");
	capsim_diags_free(&d);
}

static const capsim_toml_value *get(capsim_toml *t, const char *key, capsim_toml_kind kind)
{
	capsim_toml_entry *e = capsim_toml_get(t, key);
	if (!e)
		fail_msg("no key '%s'", key);
	assert_int_equal(e->v.kind, kind);
	return &e->v;
}

static void str_is(capsim_toml *t, const char *key, const char *want)
{
	assert_string_equal(get(t, key, CAPSIM_TOML_STRING)->s, want);
}

static void int_is(capsim_toml *t, const char *key, long long want)
{
	assert_true(get(t, key, CAPSIM_TOML_INT)->i == want);
}

static void float_is(capsim_toml *t, const char *key, double want)
{
	double got = get(t, key, CAPSIM_TOML_FLOAT)->f;
	if (got != want && fabs(got - want) > 1e-12 * fabs(want))
		fail_msg("%s: found %.17g, expected %.17g", key, got, want);
}

/* Comment, Keys, Dotted keys */
static void test_comments_and_keys(void **state)
{
	(void)state;
	capsim_toml t;
	parse_ok("# This is a full-line comment\n"
		 "key = \"value\"  # This is a comment at the end of a line\n"
		 "another = \"# This is not a comment\"\n"
		 "bare_key = \"value\"\nbare-key = \"value\"\n1234 = \"value\"\n"
		 "\"character encoding\" = \"value\"\n'key2' = \"value\"\n"
		 "'quoted \"value\"' = \"value\"\n"
		 "name = \"Orange\"\nphysical.color = \"orange\"\nphysical.shape = \"round\"\n"
		 "fruit.name = \"banana\"     # this is best practice\n"
		 "fruit. color = \"yellow\"    # same as fruit.color\n"
		 "fruit . flavor = \"banana\"   # same as fruit.flavor\n", &t);
	assert_int_equal(t.n, 14);
	str_is(&t, "key", "value");
	str_is(&t, "another", "# This is not a comment");
	str_is(&t, "1234", "value");
	str_is(&t, "character encoding", "value");
	str_is(&t, "quoted \"value\"", "value");
	str_is(&t, "physical.shape", "round");
	str_is(&t, "fruit.color", "yellow");
	str_is(&t, "fruit.flavor", "banana");
	assert_int_equal(capsim_toml_get(&t, "fruit.flavor")->line, 15);
	assert_null(capsim_toml_get(&t, "fruit"));
	capsim_toml_free(&t);
	/* "fruit.apple.smooth" beside "fruit.orange": defining a table's keys out
	 * of order is valid */
	parse_ok("apple.type = \"fruit\"\norange.type = \"fruit\"\napple.skin = \"thin\"\n", &t);
	str_is(&t, "apple.skin", "thin");
	capsim_toml_free(&t);
}

/* what Keys and Dotted keys call invalid, and a quoted key with a dot */
static void test_keys_refused(void **state)
{
	(void)state;
	parse_refused("key = # INVALID\n", 1, "expected a value");
	parse_refused("a = 1\n= \"no key name\"  # INVALID\n", 2, "expected a key");
	parse_refused("first = \"Tom\" last = \"Preston-Werner\" # INVALID\n", 1,
		      "expected the line's end");
	parse_refused("name = \"Tom\"\nname = \"Pradyun\"\n", 2, "'name' defined twice (first at "
		      "line 1)");
	parse_refused("spelling = \"favorite\"\n\"spelling\" = \"favourite\"\n", 2, "defined twice");
	parse_refused("fruit.apple = 1\nfruit.apple.smooth = true\n", 2, "'fruit.apple' is a value");
	parse_refused("fruit.apple.smooth = true\nfruit.apple = 1\n", 2, "is a table already");
	parse_refused("\"127.0.0.1\" = \"value\"\n", 1, "holding a '.'");
	parse_refused("site.\"google.com\" = true\n", 1, "holding a '.'");
	parse_refused("\"\" = \"blank\"\n", 1, "that is empty");
}

/* String: basic strings' escapes and literal strings */
static void test_strings(void **state)
{
	(void)state;
	capsim_toml t;
	parse_ok("str = \"I'm a string. \\\"You can quote me\\\". Name\\tJos\\u00E9\\nLocation\\tSF.\"\n"
		 "winpath  = 'C:\\Users\\nodejs\\templates'\n"
		 "winpath2 = '\\\\ServerX\\admin$\\system32\\'\n"
		 "quoted   = 'Tom \"Dubs\" Preston-Werner'\n"
		 "regex    = '<\\i\\c*\\s*>'\n"
		 "smile = \"\\U0001F600 \\b\\f\\r\\\\\"\n", &t);
	str_is(&t, "str", "I'm a string. \"You can quote me\". Name\tJos\xc3\xa9\nLocation\tSF.");
	str_is(&t, "winpath", "C:\\Users\\nodejs\\templates");
	str_is(&t, "winpath2", "\\\\ServerX\\admin$\\system32\\");
	str_is(&t, "quoted", "Tom \"Dubs\" Preston-Werner");
	str_is(&t, "regex", "<\\i\\c*\\s*>");
	str_is(&t, "smile", "\xf0\x9f\x98\x80 \b\f\r\\");
	capsim_toml_free(&t);
	parse_refused("str1 = \"\"\"\nRoses are red\nViolets are blue\"\"\"\n", 1,
		      "multi-line strings");
	parse_refused("a = 1\nlines  = '''\nThe first newline is\ntrimmed.\n'''\n", 2,
		      "multi-line strings");
	parse_refused("s = \"a \\x escape\"\n", 1, "a string's escape");
	parse_refused("s = \"open\n", 1, "without its closing");
	parse_refused("s = \"\\uD800\"\n", 1, "not a Unicode scalar value");
}

/* Integer, Float, Boolean */
static void test_numbers(void **state)
{
	(void)state;
	capsim_toml t;
	parse_ok("int1 = +99\nint2 = 42\nint3 = 0\nint4 = -17\n"
		 "int5 = 1_000\nint6 = 5_349_221\nint7 = 53_49_221  # Indian number system grouping\n"
		 "int8 = 1_2_3_4_5  # VALID but discouraged\n"
		 "hex1 = 0xDEADBEEF\nhex2 = 0xdeadbeef\nhex3 = 0xdead_beef\n"
		 "oct1 = 0o01234567\noct2 = 0o755 # useful for Unix file permissions\n"
		 "bin1 = 0b11010110\n"
		 "flt1 = +1.0\nflt2 = 3.1415\nflt3 = -0.01\nflt4 = 5e+22\nflt5 = 1e06\n"
		 "flt6 = -2E-2\nflt7 = 6.626e-34\nflt8 = 224_617.445_991_228\n"
		 "sf1 = inf  # positive infinity\nsf2 = +inf # positive infinity\n"
		 "sf3 = -inf # negative infinity\nsf4 = nan  # actual sNaN/qNaN encoding is "
		 "implementation-specific\n"
		 "bool1 = true\nbool2 = false\n"
		 "big = 9_223_372_036_854_775_807\n", &t);
	int_is(&t, "int1", 99);
	int_is(&t, "int3", 0);
	int_is(&t, "int4", -17);
	int_is(&t, "int5", 1000);
	int_is(&t, "int7", 5349221);
	int_is(&t, "int8", 12345);
	int_is(&t, "hex1", 0xDEADBEEF);
	int_is(&t, "hex3", 0xdeadbeef);
	int_is(&t, "oct1", 01234567);
	int_is(&t, "oct2", 0755);
	int_is(&t, "bin1", 214);
	int_is(&t, "big", INT64_MAX);
	float_is(&t, "flt1", 1.0);
	float_is(&t, "flt3", -0.01);
	float_is(&t, "flt4", 5e22);
	float_is(&t, "flt5", 1e6);
	float_is(&t, "flt6", -2e-2);
	float_is(&t, "flt7", 6.626e-34);
	float_is(&t, "flt8", 224617.445991228);
	assert_true(isinf(get(&t, "sf2", CAPSIM_TOML_FLOAT)->f));
	assert_true(get(&t, "sf3", CAPSIM_TOML_FLOAT)->f < 0);
	assert_true(isnan(get(&t, "sf4", CAPSIM_TOML_FLOAT)->f));
	assert_int_equal(get(&t, "bool1", CAPSIM_TOML_BOOL)->b, 1);
	assert_int_equal(get(&t, "bool2", CAPSIM_TOML_BOOL)->b, 0);
	capsim_toml_free(&t);
	parse_refused("invalid_float_1 = .7\n", 1, "expected a value");
	parse_refused("invalid_float_2 = 7.\n", 1, "expected a value");
	parse_refused("invalid_float_3 = 3.e+20\n", 1, "expected a value");
	parse_refused("i = 01\n", 1, "expected a value");
	parse_refused("i = 1__000\n", 1, "expected a value");
	parse_refused("i = 1_000_\n", 1, "expected a value");
	parse_refused("i = 9_223_372_036_854_775_808\n", 1, "past a 64-bit integer");
	parse_refused("b = True\n", 1, "expected a value");
	parse_refused("h = 0xG\n", 1, "not an integer in base 16");
}

/* Offset Date-Time, Local Date-Time, Local Date, Local Time: not read */
static void test_dates_refused(void **state)
{
	(void)state;
	parse_refused("odt1 = 1979-05-27T07:32:00Z\n", 1, "dates and times are not read");
	parse_refused("a = 1\nodt4 = 1979-05-27 07:32:00Z\n", 2, "dates and times are not read");
	parse_refused("ld1 = 1979-05-27\n", 1, "dates and times are not read");
	parse_refused("lt1 = 07:32:00\n", 1, "dates and times are not read");
}

/* Array: of scalars, over lines, with comments and a trailing comma */
static void test_arrays(void **state)
{
	(void)state;
	capsim_toml t;
	parse_ok("integers = [ 1, 2, 3 ]\ncolors = [ \"red\", \"yellow\", \"green\" ]\n"
		 "numbers = [ 0.1, 0.2, 0.5, 1, 2, 5 ]\n"
		 "integers2 = [\n  1, 2, 3\n]\n\n"
		 "integers3 = [\n  1,\n  2, # this is ok\n]\n"
		 "empty = []\nafter = 1\n", &t);
	const capsim_toml_value *v = get(&t, "colors", CAPSIM_TOML_ARRAY);
	assert_int_equal(v->n_items, 3);
	assert_string_equal(v->items[2].s, "green");
	v = get(&t, "numbers", CAPSIM_TOML_ARRAY);
	assert_int_equal(v->n_items, 6);
	assert_int_equal(v->items[0].kind, CAPSIM_TOML_FLOAT);
	assert_int_equal(v->items[5].kind, CAPSIM_TOML_INT);
	v = get(&t, "integers3", CAPSIM_TOML_ARRAY);
	assert_int_equal(v->n_items, 2);
	assert_true(v->items[1].i == 2);
	assert_int_equal(get(&t, "empty", CAPSIM_TOML_ARRAY)->n_items, 0);
	/* lines are counted through a multi-line array */
	assert_int_equal(capsim_toml_get(&t, "after")->line, 13);
	capsim_toml_free(&t);
	parse_refused("nested_arrays_of_ints = [ [ 1, 2 ], [3, 4, 5] ]\n", 1,
		      "arrays of arrays are not read");
	parse_refused("string_array = [ \"all\", 'strings', \"\"\"are the same\"\"\", '''type''' ]\n",
		      1, "multi-line strings");
	parse_refused("contributors = [\n  \"Foo Bar <foo@example.com>\",\n  { name = \"Baz Qux\", "
		      "email = \"bazqux@example.com\", url = \"https://example.com/bazqux\" }\n]\n",
		      3, "inline tables");
	parse_refused("a = [ 1 2 ]\n", 1, "expected ',' or ']'");
	parse_refused("a = [ 1,\n", 2, "expected a value");
}

/* Table: headers, dotted headers, whitespace; defining one twice refused */
static void test_tables(void **state)
{
	(void)state;
	capsim_toml t;
	parse_ok("[table-1]\nkey1 = \"some string\"\nkey2 = 123\n\n"
		 "[table-2]\nkey1 = \"another string\"\nkey2 = 456\n\n"
		 "[a.b.c]            # this is best practice\nk = 1\n"
		 "[ d.e.f ]          # same as [d.e.f]\nk = 2\n"
		 "[ g .  h  . i ]    # same as [g.h.i]\nk = 3\n"
		 "[ j . \"\xca\x9e\" . 'l' ]  # same as [j.\"\xca\x9e\".'l']\nk = 4\n"
		 "# [x] you\n# [x.y] don't\n# [x.y.z] need these\n"
		 "[x.y.z.w] # for this to work\n\n[x] # defining a super-table afterward is ok\n"
		 "v = 5\n"
		 "[fruit]\napple.color = \"red\"\napple.taste.sweet = true\n"
		 "[fruit.apple.texture]  # you can add sub-tables\nsmooth = true\n", &t);
	int_is(&t, "table-2.key2", 456);
	int_is(&t, "a.b.c.k", 1);
	int_is(&t, "d.e.f.k", 2);
	int_is(&t, "g.h.i.k", 3);
	int_is(&t, "j.\xca\x9e.l.k", 4);
	int_is(&t, "x.v", 5);
	assert_int_equal(get(&t, "fruit.apple.taste.sweet", CAPSIM_TOML_BOOL)->b, 1);
	assert_int_equal(get(&t, "fruit.apple.texture.smooth", CAPSIM_TOML_BOOL)->b, 1);
	capsim_toml_free(&t);
	parse_refused("[fruit]\napple = \"red\"\n\n[fruit]\norange = \"orange\"\n", 4,
		      "table [fruit] defined twice");
	parse_refused("[fruit]\napple = \"red\"\n\n[fruit.apple]\ntexture = \"smooth\"\n", 4,
		      "defines it already");
	parse_refused("[fruit]\napple.color = \"red\"\napple.taste.sweet = true\n\n"
		      "[fruit.apple]  # INVALID\n", 5, "defines it already");
	parse_refused("[dog.\"tater.man\"]\ntype.name = \"pug\"\n", 1, "holding a '.'");
	parse_refused("[[products]]\nname = \"Hammer\"\n", 1, "arrays of tables");
	parse_refused("name = { first = \"Tom\", last = \"Preston-Werner\" }\n", 1,
		      "inline tables");
	parse_refused("[a\nb = 1\n", 1, "expected ']'");
}

/* the reader's own limits and what no TOML text holds */
static void test_limits(void **state)
{
	(void)state;
	capsim_toml t;
	capsim_diags d = { 0 };
	const char nul[] = "a = 1\n\0";
	assert_int_equal(capsim_toml_parse(nul, sizeof nul - 1, "n.toml", &t, &d), -1);
	assert_non_null(strstr(d.v[0].msg, "a NUL byte"));
	capsim_diags_free(&d);
	parse_refused("a = 1\nb = 2\n# \x01\n", 3, "a control character");
	/* UTF-8 as TOML says: a stray byte, an overlong form, a surrogate */
	parse_refused("a = 1\nb = \"\xff\"\n", 2, "byte 0xff: the text is not UTF-8");
	parse_refused("a = \"\xc0\xaf\"\n", 1, "byte 0xc0");
	parse_refused("# ok\n\n# \xed\xa0\x80\n", 3, "byte 0xed");
	parse_refused("a = 1 \x02\n", 1, "expected the line's end after a value, found 0x02");
	/* an empty text and one of comments only are empty documents */
	parse_ok("", &t);
	assert_int_equal(t.n, 0);
	parse_ok("# only\r\n\r\n", &t);
	assert_int_equal(t.n, 0);
	assert_null(capsim_toml_get(&t, "a"));
	capsim_toml_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_comments_and_keys), cmocka_unit_test(test_keys_refused),
		cmocka_unit_test(test_strings),           cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_dates_refused),     cmocka_unit_test(test_arrays),
		cmocka_unit_test(test_tables),            cmocka_unit_test(test_limits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
