/* test_table.c - src/util/table.h: one table written as aligned text, CSV
 * and JSON. Each writer's exact bytes for a table of texts, whole and not
 * whole numbers, reals, booleans, absent cells and a hostile text (a comma,
 * quotes, a line break and an escape sequence); the JSON read back by
 * jansson equal to the cells. */
#include "testutil.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "table.h"

/* what fn writes for t, in a static buffer */
static const char *written(int (*fn)(const capsim_table *, FILE *), const capsim_table *t)
{
	static char buf[4096];
	memset(buf, 0, sizeof buf);
	FILE *f = fmemopen(buf, sizeof buf, "w");
	assert_non_null(f);
	assert_int_equal(fn(t, f), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

#define HOSTILE "-a,b \"q\"\nz\x1b[2J"

static const capsim_table_col cols[] = {
	{ .name = "name", .kind = CAPSIM_TABLE_TEXT, .align = CAPSIM_TABLE_LEFT,
	  .flags = CAPSIM_TABLE_CSV_NUMBERS_BARE },
	{ .name = "count", .kind = CAPSIM_TABLE_INT, .precision = 3,
	  .flags = CAPSIM_TABLE_CSV_BARE_NAME },
	{ .name = "ratio", .unit = "s", .kind = CAPSIM_TABLE_REAL, .precision = 3 },
	{ .name = "ok", .kind = CAPSIM_TABLE_BOOL },
};

/* four rows: every kind, absent cells, the hostile text, a text that is a
 * number, a count that is not whole */
static void build(capsim_table *t)
{
	capsim_table_init(t, cols, 4);
	size_t r = capsim_table_add_row(t);
	capsim_table_set_text(t, r, 0, "plain");
	capsim_table_set_num(t, r, 1, 42);
	capsim_table_set_num(t, r, 2, 2.3851);
	capsim_table_set_num(t, r, 3, 1);
	r = capsim_table_add_row(t);
	capsim_table_set_text(t, r, 0, HOSTILE);
	capsim_table_set_num(t, r, 2, 0.1);
	r = capsim_table_add_row(t);
	capsim_table_set_num(t, r, 1, -7);
	capsim_table_set_num(t, r, 3, 0);
	r = capsim_table_add_row(t);
	capsim_table_set_text(t, r, 0, "64");
	capsim_table_set_num(t, r, 1, 3.5);
	capsim_table_set_num(t, r, 2, 1e-20);
	assert_int_equal(t->n_rows, 4);
}

static void test_text(void **state)
{
	(void)state;
	capsim_table t;
	build(&t);
	/* texts left, numbers right; the hostile text visible and 20 columns
	 * wide; the unit in the header; absent "-"; no line ends in padding */
	assert_string_equal(written(capsim_table_write_text, &t),
			    "name                  count  ratio (s)     ok\n"
			    "plain                    42       2.39   true\n"
			    "-a,b \"q\"\\x0az\\x1b[2J      -        0.1      -\n"
			    "-                        -7          -  false\n"
			    "64                      3.5      1e-20      -\n");
	capsim_table_free(&t);
}

static void test_csv(void **state)
{
	(void)state;
	capsim_table t;
	build(&t);
	/* names quoted but where bare; the hostile text one quoted field on one
	 * line, its - made text; "64" bare in the column that allows it;
	 * reals exact; absent empty */
	assert_string_equal(written(capsim_table_write_csv, &t),
			    "\"name\",count,\"ratio\",\"ok\"\n"
			    "\"plain\",42,2.3851,true\n"
			    "\"'-a,b \"\"q\"\"\\x0az\\x1b[2J\",,0.1,\n"
			    ",-7,,false\n"
			    "64,3.5,1e-20,\n");
	capsim_table_free(&t);
}

static void test_json(void **state)
{
	(void)state;
	capsim_table t;
	build(&t);
	json_t *a = capsim_table_json(&t);
	char *text = json_dumps(a, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
	assert_string_equal(text,
			    "[{\"name\":\"plain\",\"count\":42,\"ratio\":2.3851,\"ok\":true},"
			    "{\"name\":\"-a,b \\\"q\\\"\\nz\\u001B[2J\",\"count\":null,"
			    "\"ratio\":0.1,\"ok\":null},"
			    "{\"name\":null,\"count\":-7,\"ratio\":null,\"ok\":false},"
			    "{\"name\":\"64\",\"count\":3.5,\"ratio\":1e-20,\"ok\":null}]");
	/* read back: each cell as it was set */
	json_t *back = json_loads(text, 0, NULL);
	free(text);
	assert_non_null(back);
	assert_true(json_equal(a, back));
	assert_int_equal(json_array_size(back), t.n_rows);
	for (size_t i = 0; i < t.n_rows; i++) {
		json_t *o = json_array_get(back, i);
		for (size_t c = 0; c < t.n_cols; c++) {
			const capsim_table_cell *cell = &t.cells[i * t.n_cols + c];
			json_t *v = json_object_get(o, cols[c].name);
			assert_non_null(v);
			if (cell->kind == CAPSIM_TABLE_ABSENT)
				assert_true(json_is_null(v));
			else if (cell->kind == CAPSIM_TABLE_STR)
				assert_string_equal(json_string_value(v), cell->text);
			else if (cols[c].kind == CAPSIM_TABLE_BOOL)
				assert_int_equal(json_is_true(v), cell->num != 0);
			else
				assert_rel(json_number_value(v), cell->num, 0);
		}
	}
	assert_true(json_is_integer(json_object_get(json_array_get(back, 0), "count")));
	assert_true(json_is_real(json_object_get(json_array_get(back, 3), "count")));
	json_decref(back);
	/* some cells of a row, absent ones left out */
	json_t *o = json_object();
	capsim_table_json_cells(&t, 1, 1, 4, 1, o);
	assert_int_equal(json_object_size(o), 1);
	assert_rel(json_real_value(json_object_get(o, "ratio")), 0.1, 0);
	json_decref(o);
	json_decref(a);
	capsim_table_free(&t);
	/* a text that is not UTF-8: its visible form, never dropped */
	json_t *s = capsim_table_json_text("a\xff" "b");
	assert_string_equal(json_string_value(s), "a\\xffb");
	json_decref(s);
}

/* a streamed table: fixed widths, a gap of one, percentages, a cut text,
 * an empty last cell, a column only the CSV has */
static void test_line_and_flags(void **state)
{
	(void)state;
	static const capsim_table_col c2[] = {
		{ .name = "id", .kind = CAPSIM_TABLE_INT, .width = 6,
		  .flags = CAPSIM_TABLE_CSV_BARE_NAME },
		{ .name = "pct", .kind = CAPSIM_TABLE_REAL, .precision = 1, .width = 7, .gap = 1,
		  .flags = CAPSIM_TABLE_FIXED | CAPSIM_TABLE_PERCENT },
		{ .name = "note", .kind = CAPSIM_TABLE_TEXT, .align = CAPSIM_TABLE_LEFT,
		  .max_width = 5 },
		{ .name = "hidden", .kind = CAPSIM_TABLE_TEXT,
		  .flags = CAPSIM_TABLE_NO_TEXT | CAPSIM_TABLE_CSV_BARE_NAME |
			   CAPSIM_TABLE_CSV_BARE },
	};
	capsim_table t;
	capsim_table_init(&t, c2, 4);
	size_t r = capsim_table_add_row(&t);
	capsim_table_set_num(&t, r, 0, 3);
	capsim_table_set_num(&t, r, 1, 0.4567);
	capsim_table_set_text(&t, r, 2, "abcdefgh");
	capsim_table_set_text(&t, r, 3, "ok");
	r = capsim_table_add_row(&t);
	capsim_table_set_num(&t, r, 0, 12);
	capsim_table_set_num(&t, r, 1, 1.0);
	capsim_table_set_text(&t, r, 2, "");
	capsim_table_set_text(&t, r, 3, "x");
	char buf[512] = { 0 };
	FILE *f = fmemopen(buf, sizeof buf, "w");
	for (long i = -1; i < 2; i++)
		capsim_table_write_line(&t, i, f);
	assert_int_equal(fclose(f), 0);
	assert_string_equal(buf, "    id     pct  note\n"
				 "     3   45.7%  abcde...\n"
				 "    12  100.0%\n");
	assert_string_equal(written(capsim_table_write_csv, &t),
			    "id,\"pct\",\"note\",hidden\n"
			    "3,0.4567,\"abcdefgh\",ok\n"
			    "12,1,\"\",x\n");
	/* the whole table: the note column as wide as its widest cut cell */
	assert_string_equal(written(capsim_table_write_text, &t),
			    "    id     pct  note\n"
			    "     3   45.7%  abcde...\n"
			    "    12  100.0%\n");
	capsim_table_free(&t);
}

static void test_plain_number(void **state)
{
	(void)state;
	static const char *const yes[] = { "64", "-1.5e3", "+2", ".5", "7.", "1E+9" };
	static const char *const no[] = { "4 TB/s", "0x10", "inf", " 1", "1e", "", "-", "1e999" };
	double x;
	for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
		assert_true(capsim_plain_number(yes[i], &x));
	assert_true(capsim_plain_number("-1.5e3", &x));
	assert_rel(x, -1500, 0);
	for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
		assert_false(capsim_plain_number(no[i], &x));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_csv),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_line_and_flags),
		cmocka_unit_test(test_plain_number),
	};
	return testutil_run_group(tests, NULL, NULL);
}
