/* test_expr.c - sweep constraints: what they mean (precedence, types, the
 * functions, short-circuits), the errors of bad ones with their columns, the
 * limits, and that several threads may evaluate one expression. */
#include "testutil.h"

#include <pthread.h>
#include <string.h>

#include "expr.h"

/* ---- a lookup backed by a small table ------------------------------------ */

typedef struct entry {
	const char *name;
	int is_text;
	double num;
	const char *text;
} entry;

static const entry table[] = {
	{ "cluster.nodes", 0, 8.0, NULL },
	{ "cluster.gpu", 1, 0.0, "h100-sxm" },
	{ "cluster.gpus-per-node", 0, 8.0, NULL },
	{ "workload.parallelism.tp", 0, 8.0, NULL },
	{ "workload.parallelism.pp", 0, 4.0, NULL },
	{ "workload.global-batch", 0, 1024.0, NULL },
	{ "workload.dtype", 1, 0.0, "bf16" },
	{ "x", 0, 8.0, NULL },
	{ "zero", 0, 0.0, NULL },
	{ "half", 0, 2.5, NULL },
	{ "huge", 0, 1e308, NULL },
	{ "empty", 1, 0.0, "" },
	{ "bad.nan", 0, NAN, NULL },
	{ "bad.notext", 1, 0.0, NULL },
};

/* the lookup's context: how often it was called, and by which names */
typedef struct lookups {
	int calls;
	char last[64];
} lookups;

static int lookup(void *ctx, const char *name, capsim_expr_value *out, char *err,
		  size_t errlen)
{
	lookups *l = ctx;
	if (l) {
		l->calls++;
		snprintf(l->last, sizeof l->last, "%s", name);
	}
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
		if (strcmp(table[i].name, name) != 0)
			continue;
		out->is_text = table[i].is_text;
		out->num = table[i].num;
		out->text = table[i].text;
		return 0;
	}
	snprintf(err, errlen, "unknown name '%s'", name);
	return -1;
}

static capsim_expr *parse_ok(const char *text)
{
	char err[256];
	capsim_expr *e = capsim_expr_parse(text, err, sizeof err);
	if (!e)
		fail_msg("'%s' did not parse: %s", text, err);
	return e;
}

/* the truth of text, which must parse and evaluate */
static int truth_of(const char *text)
{
	char err[256];
	int truth = -1;
	capsim_expr *e = parse_ok(text);
	lookups l = { 0 };
	if (capsim_expr_eval(e, lookup, &l, &truth, err, sizeof err) != 0)
		fail_msg("'%s' did not evaluate: %s", text, err);
	capsim_expr_free(e);
	if (truth != 0 && truth != 1)
		fail_msg("'%s': truth %d", text, truth);
	return truth;
}

/* text must not parse; the message must be "at column COL: ..." holding msg */
static void parse_error(const char *text, int col, const char *msg)
{
	char err[512], want[32];
	capsim_expr *e = capsim_expr_parse(text, err, sizeof err);
	if (e) {
		capsim_expr_free(e);
		fail_msg("'%s' parsed; expected an error with '%s'", text, msg);
	}
	snprintf(want, sizeof want, "at column %d: ", col);
	if (strncmp(err, want, strlen(want)) != 0 || !strstr(err, msg))
		fail_msg("'%s': message '%s', expected '%s...%s'", text, err, want, msg);
}

/* text must parse and fail to evaluate with msg in the message */
static void eval_error(const char *text, const char *msg)
{
	char err[512];
	int truth = 12345;
	capsim_expr *e = parse_ok(text);
	lookups l = { 0 };
	if (capsim_expr_eval(e, lookup, &l, &truth, err, sizeof err) != -1)
		fail_msg("'%s' evaluated to %d; expected an error with '%s'", text, truth, msg);
	capsim_expr_free(e);
	if (!strstr(err, msg))
		fail_msg("'%s': message '%s' lacks '%s'", text, err, msg);
	if (truth != 12345)
		fail_msg("'%s': truth written on error", text);
}

typedef struct truth_case {
	const char *text;
	int want;
} truth_case;

static void check_truths(const truth_case *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int got = truth_of(c[i].text);
		if (got != c[i].want)
			fail_msg("'%s' is %d, expected %d", c[i].text, got, c[i].want);
	}
}

#define CHECK_TRUTHS(c) check_truths(c, sizeof c / sizeof c[0])

/* ---- meaning ------------------------------------------------------------ */

static void test_precedence(void **state)
{
	(void)state;
	static const truth_case c[] = {
		{ "1 + 2 * 3 == 7", 1 },
		{ "(1 + 2) * 3 == 9", 1 },
		{ "1 + 2 * 3 == 9", 0 },
		{ "10 - 2 - 3 == 5", 1 },        /* left to right */
		{ "64 / 4 / 2 == 8", 1 },
		{ "2 * 3 - 4 / 2 == 4", 1 },
		{ "2 * 7 % 4 == 2", 1 },         /* (2 * 7) % 4 */
		{ "-2 * -3 == 6", 1 },
		{ "- (2 + 3) == -5", 1 },
		{ "--4 == 4", 1 },
		{ "7 % 3 == 1 and -7 % 3 == -1", 1 }, /* fmod: the sign of the left */
		{ "5.5 % 2 == 1.5", 1 },
		{ "1 == 1 or 1 == 2 and 1 == 3", 1 }, /* and binds tighter */
		{ "(1 == 1 or 1 == 2) and 1 == 3", 0 },
		{ "1 == 2 and 1 == 3 or 1 == 1", 1 },
		{ "not 1 == 2", 1 },             /* not (1 == 2) */
		{ "not 1 == 1 or 1 == 1", 1 },   /* (not ...) or ... */
		{ "not (1 == 1 or 1 == 1)", 0 },
		{ "not not 1 < 2", 1 },
		{ "!(1 == 1) || 1 < 2", 1 },
		{ "1 < 2 && 2 < 1", 0 },
		{ "not(1 == 2) and(2 == 2)", 1 }, /* word operators before '(' are no calls */
	};
	CHECK_TRUTHS(c);
	/* comparisons do not chain, even where the types would allow it */
	parse_error("1 + 1 == 2 == (3 > 2)", 12, "comparisons do not chain");
}

static void test_comparisons(void **state)
{
	(void)state;
	static const truth_case c[] = {
		{ "1 < 2", 1 }, { "2 < 2", 0 }, { "2 <= 2", 1 }, { "3 <= 2", 0 },
		{ "3 > 2", 1 }, { "2 > 2", 0 }, { "2 >= 2", 1 }, { "1 >= 2", 0 },
		{ "2 == 2", 1 }, { "2 == 3", 0 }, { "2 != 3", 1 }, { "2 != 2", 0 },
		{ "0.1 + 0.2 > 0.3", 1 },  /* plain doubles */
		{ "-1 < 0", 1 },
		{ "x >= 8 and x <= 8", 1 },
		{ "x>7", 1 },              /* '>' is not a name character */
		{ "x!=7", 1 },
	};
	CHECK_TRUTHS(c);
}

static void test_numbers(void **state)
{
	(void)state;
	static const truth_case c[] = {
		{ "64 == 64", 1 },
		{ "1.5e9 == 1500000000", 1 },
		{ "0.25 * 4 == 1", 1 },
		{ ".5 == 0.5", 1 },
		{ "1e-3 == 0.001", 1 },
		{ "2E3 == 2000", 1 },
		{ "1e+2 == 100", 1 },
		{ "2-1 == 1", 1 },         /* after a number '-' is a minus */
		{ "1e308 > 1e307", 1 },
		{ "\t1\n==\r1 ", 1 },       /* any blank separates */
	};
	CHECK_TRUTHS(c);
}

static void test_names(void **state)
{
	(void)state;
	static const truth_case c[] = {
		{ "workload.parallelism.tp * workload.parallelism.pp <= 64", 1 },
		{ "workload.parallelism.tp * workload.parallelism.pp <= 16", 0 },
		{ "workload.global-batch == 1024", 1 },
		{ "workload.global-batch / cluster.gpus-per-node == 128", 1 },
		{ "x - 1 == 7", 1 },
		{ "x -1 == 7", 1 },
		{ "(x)-1 == 7", 1 },
	};
	CHECK_TRUTHS(c);
	/* "x-1" is one name, which the lookup does not know; the column is the name's */
	eval_error("x-1 == 7", "at column 1: unknown name 'x-1'");
	eval_error("1 == 1 and nodes.count > 1", "at column 12: unknown name 'nodes.count'");
	/* a function's name is a name where no '(' follows */
	eval_error("min == 3", "unknown name 'min'");
	/* a bad value from the lookup */
	eval_error("bad.nan > 0", "'bad.nan' is nan, expected a finite number");
	eval_error("bad.notext == 'a'", "'bad.notext' has no text");
}

static void test_short_circuit(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		int want, calls;
	} c[] = {
		{ "1 == 2 and cluster.nodes > 0", 0, 0 },
		{ "1 == 1 or cluster.nodes > 0", 1, 0 },
		{ "1 == 1 and cluster.nodes > 0", 1, 1 },
		{ "1 == 2 or cluster.nodes > 0", 1, 1 },
		{ "1 == 2 and nosuch.name > 0", 0, 0 },          /* not looked up: no error */
		{ "1 == 1 or zero / zero > 0", 1, 0 },           /* no division either */
		{ "x > 100 and (x > 0 or x < 0)", 0, 1 },
		{ "x < 100 or x > 0 and x < 0", 1, 1 },
		{ "in(x, 8, cluster.nodes)", 1, 1 },             /* in() stops at a match */
		{ "in(x, cluster.nodes, workload.global-batch)", 1, 2 },
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		char err[256];
		int truth = -1;
		lookups l = { 0 };
		capsim_expr *e = parse_ok(c[i].text);
		if (capsim_expr_eval(e, lookup, &l, &truth, err, sizeof err) != 0)
			fail_msg("'%s': %s", c[i].text, err);
		if (truth != c[i].want || l.calls != c[i].calls)
			fail_msg("'%s': truth %d after %d lookups, expected %d after %d",
				 c[i].text, truth, l.calls, c[i].want, c[i].calls);
		capsim_expr_free(e);
	}
	/* when the left does not decide, the right's error shows */
	eval_error("1 == 1 and nosuch.name > 0", "at column 12: unknown name 'nosuch.name'");
}

static void test_texts(void **state)
{
	(void)state;
	static const truth_case c[] = {
		{ "cluster.gpu == 'h100-sxm'", 1 },
		{ "cluster.gpu == \"h100-sxm\"", 1 },
		{ "'h100-sxm' == cluster.gpu", 1 },
		{ "cluster.gpu == 'h100'", 0 },
		{ "cluster.gpu != 'a100'", 1 },
		{ "cluster.gpu == 'H100-SXM'", 0 },    /* exact */
		{ "empty == ''", 1 },
		{ "\"it's\" == \"it's\"", 1 },         /* the other quote inside */
		{ "'a b' != 'a  b'", 1 },
		{ "cluster.gpu == workload.dtype", 0 },
	};
	CHECK_TRUTHS(c);
	/* no escapes: 'it''s' is two texts in a row */
	parse_error("'it''s' == 'it'", 5, "expected an operator or the end, found 's'");
}

static void test_in(void **state)
{
	(void)state;
	static const truth_case c[] = {
		{ "in(cluster.gpu, 'a100', 'h100-sxm')", 1 },
		{ "in(cluster.gpu, 'a100', 'h200')", 0 },
		{ "in(cluster.gpu, 'h100-sxm')", 1 },
		{ "in(cluster.nodes, 4, 8, 16)", 1 },
		{ "in(cluster.nodes, 3, 5)", 0 },
		{ "in(x * 2, 16)", 1 },
		{ "not in(workload.dtype, 'fp8', 'fp4')", 1 },
		{ "in ( x , 8 )", 1 },
	};
	CHECK_TRUTHS(c);
	eval_error("in(cluster.gpu, 1, 2)",
		   "at column 17: in() compares a text ('h100-sxm') with a number (1)");
	eval_error("in(cluster.nodes, 'a')", "in() compares a number (8) with a text ('a')");
	parse_error("in(1, 'a')", 7, "in() compares a number (1) with a text ('a')");
	parse_error("in(x, 1, 'a')", 10, "in() compares a number (1) with a text ('a')");
	parse_error("in(x, 1 < 2)", 7, "in() compares numbers or texts, found a true/false test");
	parse_error("in(x)", 1, "in() takes at least 2 arguments, found 1");
}

static void test_divides(void **state)
{
	(void)state;
	static const truth_case c[] = {
		{ "divides(8, 64)", 1 },
		{ "divides(3, 64)", 0 },
		{ "divides(64, 64)", 1 },
		{ "divides(128, 64)", 0 },
		{ "divides(1, 0)", 1 },
		{ "divides(-2, 4)", 1 },
		{ "divides(workload.parallelism.tp, cluster.nodes * cluster.gpus-per-node)", 1 },
		{ "divides(workload.parallelism.tp * workload.parallelism.pp, 64) and x > 0", 1 },
		{ "not divides(3, x)", 1 },
	};
	CHECK_TRUTHS(c);
	eval_error("divides(2.5, 5)",
		   "at column 9: divides() needs whole numbers, found 2.5 as argument 1");
	eval_error("divides(2, half)", "divides() needs whole numbers, found 2.5 as argument 2");
	eval_error("divides(0, 4)", "division by zero: argument 1 of divides() is 0");
	eval_error("divides(zero, x)", "division by zero");
	eval_error("divides(cluster.gpu, 8)",
		   "divides() needs numbers, found a text ('h100-sxm') as argument 1");
	parse_error("divides(8)", 1, "divides() takes 2 arguments, found 1");
	parse_error("divides(1, 2, 3)", 1, "divides() takes 2 arguments, found 3");
	parse_error("divides()", 1, "divides() takes 2 arguments, found 0");
	parse_error("divides('a', 2)", 9,
		    "divides() needs numbers, found a text ('a') as argument 1");
}

static void test_min_max_log2(void **state)
{
	(void)state;
	static const truth_case c[] = {
		{ "min(3, 5) == 3", 1 },
		{ "min(5, 3) == 3", 1 },
		{ "max(3, 5) == 5", 1 },
		{ "min(4, 2, 8) == 2 and max(4, 9, 8) == 9", 1 },
		{ "max(min(x, 4), 2) == 4", 1 },
		{ "log2(64) == 6", 1 },
		{ "log2(x) + 1 == 4", 1 },
		{ "log2(0.5) == -1", 1 },
		{ "log2(6) > 2.58 and log2(6) < 2.59", 1 },
	};
	CHECK_TRUTHS(c);
	eval_error("log2(zero) > 0", "at column 6: log2() needs a number above 0, found 0");
	eval_error("log2(-x) > 0", "log2() needs a number above 0, found -8");
	eval_error("min(x, cluster.gpu) > 0",
		   "at column 8: min() needs numbers, found a text ('h100-sxm') as argument 2");
	parse_error("log2(1, 2) == 0", 1, "log2() takes 1 argument, found 2");
	parse_error("max(1) == 1", 1, "max() takes at least 2 arguments, found 1");
	parse_error("min(1 < 2, 3) == 1", 5,
		    "min() needs numbers, found a true/false test as argument 1");
}

/* ---- errors ------------------------------------------------------------- */

/* what the parser can tell from the text alone */
static void test_parse_type_errors(void **state)
{
	(void)state;
	parse_error("cluster.nodes", 1,
		    "expected a true/false test, found the value of 'cluster.nodes' (the whole "
		    "expression must be one");
	parse_error("1 + 1", 1, "expected a true/false test, found a number (the whole");
	parse_error("(x + 1)", 1, "expected a true/false test, found a number");
	parse_error("'abc'", 1, "expected a true/false test, found a text ('abc')");
	parse_error("min(x, 2)", 1, "expected a true/false test, found a number");
	parse_error("5 and x > 1", 1,
		    "expected a true/false test, found a number (5) on the left of 'and'");
	parse_error("x > 1 && 5", 10,
		    "expected a true/false test, found a number (5) on the right of '&&'");
	parse_error("x > 1 or cluster.nodes", 10,
		    "expected a true/false test, found the value of 'cluster.nodes' on the right "
		    "of 'or'");
	parse_error("not x", 5, "expected a true/false test, found the value of 'x' after 'not'");
	parse_error("!(x + 1)", 2, "expected a true/false test, found a number after '!'");
	parse_error("'a' + 1 > 0", 1, "'+' needs numbers, found a text ('a') on its left");
	parse_error("1 * (x < 2) > 0", 5,
		    "'*' needs numbers, found a true/false test on its right");
	parse_error("-'a' == 1", 2, "'-' needs numbers, found a text ('a') after it");
	parse_error("x < 'z'", 5, "'<' needs numbers, found a text ('z') on its right");
	parse_error("1 == 'a'", 6, "'==' compares a number (1) with a text ('a')");
	parse_error("(1 < 2) == (2 < 3)", 1,
		    "'==' compares numbers or texts, found a true/false test on its left");
}

/* what only the names' values tell */
static void test_eval_type_errors(void **state)
{
	(void)state;
	eval_error("cluster.gpu + 1 > 0",
		   "at column 1: '+' needs numbers, found a text ('h100-sxm') on its left");
	eval_error("2 * cluster.gpu > 0", "at column 5: '*' needs numbers, found a text");
	eval_error("-cluster.gpu < 0", "'-' needs numbers, found a text ('h100-sxm') after it");
	eval_error("cluster.gpu < cluster.nodes",
		   "'<' needs numbers, found a text ('h100-sxm') on its left");
	eval_error("cluster.gpu == 8",
		   "at column 16: '==' compares a text ('h100-sxm') with a number (8)");
	eval_error("cluster.nodes != cluster.gpu",
		   "'!=' compares a number (8) with a text ('h100-sxm')");
}

static void test_division_by_zero(void **state)
{
	(void)state;
	eval_error("x / zero > 1", "at column 3: division by zero: the right side of '/' is 0");
	eval_error("x % zero > 1", "at column 3: division by zero: the right side of '%' is 0");
	eval_error("1 / 0 > 1", "division by zero");
	eval_error("x / (x - 8) > 1", "at column 3: division by zero");
	/* a result too large for a double */
	eval_error("huge * 10 > 0", "at column 6: 1e+308 * 10 is out of range");
	eval_error("huge + huge > 0", "is out of range");
	eval_error("huge / 0.5 > 0", "is out of range");
}

typedef struct error_case {
	const char *text;
	int col;
	const char *msg;
} error_case;

static void test_parse_errors(void **state)
{
	(void)state;
	static const error_case c[] = {
		/* an operand missing */
		{ "", 1, "expected an operand, found the end" },
		{ "   ", 4, "expected an operand, found the end" },
		{ "(1 + )", 6, "expected an operand, found ')'" },
		{ "1 +", 4, "expected an operand, found the end" },
		{ "x > 1 and", 10, "expected an operand, found the end" },
		{ "* 2 == 1", 1, "expected an operand, found '*'" },
		{ "x == and", 6, "expected an operand, found 'and'" },
		{ "and == 1", 1, "expected an operand, found 'and'" },
		{ "()", 2, "expected an operand, found ')'" },
		{ "min(1,) == 1", 7, "expected an operand, found ')'" },
		{ "x == ,", 6, "expected an operand, found ','" },
		{ "x == 1 + !", 10, "expected an operand, found '!'" },
		/* an operator or a closer missing */
		{ "(1 == 1", 8, "expected an operator or ')', found the end" },
		{ "((1 == 1) and (2 == 2)", 23, "expected an operator or ')', found the end" },
		{ "1 == 1 1", 8, "expected an operator or the end, found '1'" },
		{ "x y", 3, "expected an operator or the end, found 'y'" },
		{ "x == 1)", 7, "expected an operator or the end, found ')'" },
		{ "x == 'a' 'b'", 10, "expected an operator or the end, found 'b'" },
		{ "x == 1 AND x == 2", 8, "expected an operator or the end, found 'AND'" },
		{ "min(1 2) == 1", 7, "expected an operator, ',' or ')', found '2'" },
		{ "min(1, 2 + 1", 13, "expected an operator, ',' or ')', found the end" },
		/* a minus glued to a name */
		{ "x- 1 == 7", 4, "found '1' ('x-' takes the '-' into the name: put a space" },
		/* comparisons do not chain */
		{ "1 < 2 < 3", 7, "comparisons do not chain" },
		{ "x == 1 != 0", 8, "comparisons do not chain" },
		/* bad tokens */
		{ "'abc", 1, "unterminated string: expected a closing '" },
		{ "x == \"abc", 6, "unterminated string: expected a closing \"" },
		{ "1.5.3 == 1", 1, "malformed number '1.5.3'" },
		{ "64k == 1", 1, "malformed number '64k'" },
		{ "x == 1e", 6, "malformed number '1e'" },
		{ "x == 1e+", 6, "malformed number '1e'" },
		{ "x == 5.", 6, "malformed number '5.'" },
		{ "x == 0x10", 6, "malformed number '0x10'" },
		{ "x == 2_000", 6, "malformed number '2_000'" },
		{ "1e999 > 0", 1, "the number '1e999' is out of range" },
		{ "x # 1", 3, "unexpected character '#'" },
		{ "x == $5", 6, "unexpected character '$'" },
		{ "_x == 1", 1, "unexpected character '_'" },
		{ "x = 1", 3, "unexpected '='; did you mean '=='?" },
		{ "x > 1 & x < 2", 7, "unexpected '&'; did you mean '&&'?" },
		{ "x > 1 | x < 2", 7, "unexpected '|'; did you mean '||'?" },
		{ "x == \xc3\xa9", 6, "unexpected byte 0xc3" },
		{ "x ==\x01 1", 5, "unexpected byte 0x01" },
		/* functions */
		{ "foo(1) == 1", 1, "unknown function 'foo'; the functions are divides(), min(), "
				    "max(), log2(), in()" },
		{ "cluster.nodes(1) == 1", 1, "unknown function 'cluster.nodes'" },
		{ "min(1) == 1", 1, "min() takes at least 2 arguments, found 1" },
		{ "log2() == 1", 1, "log2() takes 1 argument, found 0" },
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
		parse_error(c[i].text, c[i].col, c[i].msg);
	/* no text at all */
	char err[64];
	assert_null(capsim_expr_parse(NULL, err, sizeof err));
	assert_string_equal(err, "no expression");
}

/* n copies of s into buf (which has room) */
static char *repeat(char *buf, const char *s, int n)
{
	for (int i = 0; i < n; i++)
		strcat(buf, s);
	return buf;
}

static void test_depth_limit(void **state)
{
	(void)state;
	static char text[CAPSIM_EXPR_MAX_LEN * 4];
	/* 63 parentheses around a comparison: 64 levels, the most */
	text[0] = '\0';
	repeat(text, "(", 63);
	strcat(text, "1 == 1");
	repeat(text, ")", 63);
	assert_int_equal(truth_of(text), 1);
	/* one more */
	text[0] = '\0';
	repeat(text, "(", 64);
	strcat(text, "1 == 1");
	repeat(text, ")", 64);
	parse_error(text, 1, "nested deeper than 64 levels");
	/* thousands of parentheses: refused at the 65th, no deep recursion */
	text[0] = '\0';
	repeat(text, "(", 4000);
	parse_error(text, 65, "nested deeper than 64 levels");
	/* prefix operators count the same way */
	text[0] = '\0';
	repeat(text, "not ", 63);
	strcat(text, "1 == 1");
	assert_int_equal(truth_of(text), 0);
	text[0] = '\0';
	repeat(text, "not ", 1000);
	strcat(text, "1 == 1");
	parse_error(text, 257, "nested deeper than 64 levels");
	text[0] = '\0';
	repeat(text, "-", 2000);
	strcat(text, "1 == 1");
	parse_error(text, 65, "nested deeper than 64 levels");
	/* so do calls: 64 of them are the most, and then not even a comparison fits */
	text[0] = '\0';
	repeat(text, "min(1, ", 64);
	strcat(text, "1");
	repeat(text, ")", 64);
	strcat(text, " == 1");
	parse_error(text, 64 * 7 + 1 + 64 + 2, "nested deeper than 64 levels");
	text[0] = '\0';
	repeat(text, "min(1, ", 65);
	parse_error(text, 64 * 7 + 1, "nested deeper than 64 levels");
	/* and a long chain of operators: 63 '+' and the '==' pass, 64 '+' do not */
	strcpy(text, "1");
	repeat(text, " + 1", 63);
	strcat(text, " == 64");
	assert_int_equal(truth_of(text), 1);
	strcpy(text, "1");
	repeat(text, " + 1", 64);
	strcat(text, " == 65");
	parse_error(text, 1 + 64 * 4 + 2, "nested deeper than 64 levels");
	/* many operands side by side are not deep */
	strcpy(text, "in(x");
	repeat(text, ", 1", 1000);
	strcat(text, ", 8)");
	assert_int_equal(truth_of(text), 1);
}

static void test_limits(void **state)
{
	(void)state;
	static char text[CAPSIM_EXPR_MAX_LEN + 2];
	char err[256];
	/* exactly the longest text */
	memset(text, ' ', CAPSIM_EXPR_MAX_LEN);
	memcpy(text, "1 == 1", 6);
	text[CAPSIM_EXPR_MAX_LEN] = '\0';
	assert_int_equal(truth_of(text), 1);
	/* one more character */
	text[CAPSIM_EXPR_MAX_LEN] = ' ';
	text[CAPSIM_EXPR_MAX_LEN + 1] = '\0';
	assert_null(capsim_expr_parse(text, err, sizeof err));
	assert_string_equal(err, "the expression is longer than 4096 characters");
	/* 256 different names pass, 257 do not */
	for (int n = 256; n <= 257; n++) {
		text[0] = '\0';
		strcat(text, "in(1");
		for (int i = 0; i < n; i++) {
			char name[16];
			snprintf(name, sizeof name, ", n%d", i);
			strcat(text, name);
		}
		strcat(text, ")");
		capsim_expr *e = capsim_expr_parse(text, err, sizeof err);
		if (n == 256) {
			if (!e)
				fail_msg("256 names: %s", err);
			assert_int_equal(capsim_expr_n_names(e), 256);
			assert_string_equal(capsim_expr_name(e, 255), "n255");
			capsim_expr_free(e);
		} else {
			assert_null(e);
			assert_non_null(strstr(err, "more than 256 different names"));
			/* the column of the 257th: after "in(1" and ", nI" for i < 256 */
			assert_non_null(strstr(err, "at column 1433:"));
		}
	}
}

static void test_names_listed(void **state)
{
	(void)state;
	capsim_expr *e = parse_ok("b > 0 and divides(a, b) and in(workload.global-batch, 512, a)"
				  " or cluster.gpu == 'a' and b < c");
	assert_int_equal(capsim_expr_n_names(e), 5);
	assert_string_equal(capsim_expr_name(e, 0), "b");
	assert_string_equal(capsim_expr_name(e, 1), "a");
	assert_string_equal(capsim_expr_name(e, 2), "workload.global-batch");
	assert_string_equal(capsim_expr_name(e, 3), "cluster.gpu");
	assert_string_equal(capsim_expr_name(e, 4), "c");
	assert_null(capsim_expr_name(e, 5));
	capsim_expr_free(e);
	/* names with '-', '_' and digits, and the names that are not names */
	e = parse_ok("a_1.b-2 == 'x-y' and not x-1 > min(2, 3) and 3 > 2");
	assert_int_equal(capsim_expr_n_names(e), 2);
	assert_string_equal(capsim_expr_name(e, 0), "a_1.b-2");
	assert_string_equal(capsim_expr_name(e, 1), "x-1");
	capsim_expr_free(e);
	/* none */
	e = parse_ok("1 == 1");
	assert_int_equal(capsim_expr_n_names(e), 0);
	assert_null(capsim_expr_name(e, 0));
	capsim_expr_free(e);
	assert_int_equal(capsim_expr_n_names(NULL), 0);
	assert_null(capsim_expr_name(NULL, 0));
	capsim_expr_free(NULL);
}

/* messages are cut to the buffer, never past it */
static void test_error_buffer(void **state)
{
	(void)state;
	char err[16];
	memset(err, 'x', sizeof err);
	assert_null(capsim_expr_parse("x == 1 1", err, sizeof err));
	assert_int_equal(strlen(err), sizeof err - 1);
	assert_null(capsim_expr_parse("x == 1 1", NULL, 0));
	assert_null(capsim_expr_parse("x == 1 1", err, 0));
	capsim_expr *e = parse_ok("cluster.gpu == 8");
	int truth = 7;
	memset(err, 'x', sizeof err);
	assert_int_equal(capsim_expr_eval(e, lookup, NULL, &truth, err, sizeof err), -1);
	assert_int_equal(strlen(err), sizeof err - 1);
	assert_int_equal(capsim_expr_eval(e, lookup, NULL, &truth, NULL, 0), -1);
	assert_int_equal(capsim_expr_eval(e, NULL, NULL, &truth, err, sizeof err), -1);
	assert_int_equal(capsim_expr_eval(NULL, lookup, NULL, &truth, err, sizeof err), -1);
	assert_int_equal(truth, 7);
	capsim_expr_free(e);
}

/* a lookup whose failure says nothing still gives a message */
static int silent_lookup(void *ctx, const char *name, capsim_expr_value *out, char *err,
			 size_t errlen)
{
	(void)ctx, (void)name, (void)out, (void)err, (void)errlen;
	return -1;
}

static void test_lookup_failure(void **state)
{
	(void)state;
	char err[128];
	int truth;
	capsim_expr *e = parse_ok("1 < 2 and  what.ever > 0");
	assert_int_equal(capsim_expr_eval(e, silent_lookup, NULL, &truth, err, sizeof err), -1);
	assert_string_equal(err, "at column 12: the name has no value");
	capsim_expr_free(e);
}

/* ---- reentrancy --------------------------------------------------------- */

/* a lookup that evaluates the same expression again, inside itself */
typedef struct nested {
	const capsim_expr *e;
	int level;
	double x;
} nested;

static int nested_lookup(void *ctx, const char *name, capsim_expr_value *out, char *err,
			 size_t errlen)
{
	nested *n = ctx;
	(void)name;
	if (n->level < 3) {
		nested inner = { n->e, n->level + 1, n->x + 1 };
		int truth;
		if (capsim_expr_eval(n->e, nested_lookup, &inner, &truth, err, errlen) != 0)
			return -1;
	}
	out->is_text = 0;
	out->num = n->x;
	return 0;
}

static void test_nested_eval(void **state)
{
	(void)state;
	capsim_expr *e = parse_ok("x == 10");
	nested n = { e, 0, 10 };
	char err[128];
	int truth = -1;
	assert_int_equal(capsim_expr_eval(e, nested_lookup, &n, &truth, err, sizeof err), 0);
	assert_int_equal(truth, 1);
	capsim_expr_free(e);
}

typedef struct worker {
	const capsim_expr *e;
	double x; /* this thread's value of x */
	int trues, falses, errors;
} worker;

static int worker_lookup(void *ctx, const char *name, capsim_expr_value *out, char *err,
			 size_t errlen)
{
	const worker *w = ctx;
	if (strcmp(name, "x") == 0) {
		out->is_text = 0;
		out->num = w->x;
		return 0;
	}
	if (strcmp(name, "cluster.gpu") == 0) {
		out->is_text = 1;
		out->text = w->x > 4 ? "h100" : "a100";
		return 0;
	}
	snprintf(err, errlen, "unknown name '%s'", name);
	return -1;
}

static void *work(void *arg)
{
	worker *w = arg;
	for (int i = 0; i < 20000; i++) {
		char err[128];
		int truth;
		if (capsim_expr_eval(w->e, worker_lookup, w, &truth, err, sizeof err) != 0)
			w->errors++;
		else if (truth)
			w->trues++;
		else
			w->falses++;
	}
	return NULL;
}

static void test_threads(void **state)
{
	(void)state;
	capsim_expr *e = parse_ok("divides(x, 64) and in(cluster.gpu, 'h100') and 64 / x > 1");
	worker w[6];
	pthread_t t[6];
	for (int i = 0; i < 6; i++) {
		w[i] = (worker){ e, (double)(1 << i), 0, 0, 0 };
		assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
	}
	for (int i = 0; i < 6; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		/* x = 1, 2, 4: a100; 8, 16, 32: h100, divides 64, 64 / x > 1 */
		int want = w[i].x > 4;
		assert_int_equal(w[i].errors, 0);
		assert_int_equal(w[i].trues, want ? 20000 : 0);
		assert_int_equal(w[i].falses, want ? 0 : 20000);
	}
	capsim_expr_free(e);
}

/* ---- robustness --------------------------------------------------------- */

/* Parse text; when it parses, evaluate it. Every failure has a message with
 * a column. Returns 1 when it parsed. */
static int try_text(const char *text)
{
	char err[256] = "";
	capsim_expr *e = capsim_expr_parse(text, err, sizeof err);
	if (!e) {
		if (strncmp(err, "at column ", 10) != 0 &&
		    strcmp(err, "the expression is longer than 4096 characters") != 0)
			fail_msg("'%s': message '%s'", text, err);
		return 0;
	}
	for (size_t i = 0; i < capsim_expr_n_names(e); i++)
		assert_non_null(capsim_expr_name(e, i));
	int truth = -1;
	lookups l = { 0 };
	if (capsim_expr_eval(e, lookup, &l, &truth, err, sizeof err) == 0)
		assert_true(truth == 0 || truth == 1);
	else if (strncmp(err, "at column ", 10) != 0)
		fail_msg("'%s': message '%s'", text, err);
	capsim_expr_free(e);
	return 1;
}

static uint64_t next_random(uint64_t *seed)
{
	*seed = *seed * 6364136223846793005u + 1442695040888963407u;
	return *seed >> 33;
}

/* Random texts of the language's pieces and stray bytes, and valid texts with a
 * byte changed, dropped or added: each parses or fails with a column, and what
 * parses evaluates or fails with one (ASan and UBSan watch). */
static void test_random_texts(void **state)
{
	(void)state;
	static const char *pieces[] = {
		"x", "cluster.gpu", "zero", "half", "huge", "a-", "-", "+", "*", "/", "%",
		"==", "!=", "<", "<=", ">", ">=", "and", "or", "not", "&&", "||", "!", "(",
		")", ",", "1", "0", "2.5", "1e308", "'h100-sxm'", "\"a", "min(", "max(",
		"log2(", "in(", "divides(", " ", " ", " ", "=", "&", "#", "\xff", "1e", ".5",
	};
	static const char *valid[] = {
		"workload.parallelism.tp * workload.parallelism.pp <= 64",
		"divides(x, 64) and in(cluster.gpu, 'h100-sxm', 'a100') or not x / half > 3",
		"-(x - 1) % 3 != min(x, 2, log2(huge)) || !(cluster.gpu == \"b\") && 1e3 >= .5",
		"max(zero, 1) / zero == 1 or x <= 8",
	};
	static const char bytes[] = "x1.-+*/%=!<>&|()',\" eandortin _9\x80";
	uint64_t seed = 0x9e3779b97f4a7c15u;
	int parsed = 0;
	for (int round = 0; round < 20000; round++) {
		char text[256] = "";
		int n = (int)(next_random(&seed) % 16) + 1;
		for (int i = 0; i < n; i++) {
			size_t k = next_random(&seed) % (sizeof pieces / sizeof pieces[0]);
			const char *s = pieces[k];
			if (strlen(text) + strlen(s) + 2 < sizeof text) {
				strcat(text, s);
				if (next_random(&seed) & 1)
					strcat(text, " ");
			}
		}
		parsed += try_text(text);
	}
	for (int round = 0; round < 20000; round++) {
		char text[256];
		snprintf(text, sizeof text, "%s", valid[round % (sizeof valid / sizeof valid[0])]);
		for (int k = (int)(next_random(&seed) % 3); k >= 0; k--) {
			size_t len = strlen(text), at = next_random(&seed) % (len + 1);
			char c = bytes[next_random(&seed) % (sizeof bytes - 1)];
			switch (next_random(&seed) % 3) {
			case 0: /* change one */
				if (at < len)
					text[at] = c;
				break;
			case 1: /* drop one */
				memmove(text + at, text + at + (at < len), len - at + (at == len));
				break;
			default: /* add one */
				if (len + 2 < sizeof text) {
					memmove(text + at + 1, text + at, len - at + 1);
					text[at] = c;
				}
				break;
			}
		}
		parsed += try_text(text);
	}
	/* a good share of them made sense */
	assert_true(parsed > 2000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_precedence),
		cmocka_unit_test(test_comparisons),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_short_circuit),
		cmocka_unit_test(test_texts),
		cmocka_unit_test(test_in),
		cmocka_unit_test(test_divides),
		cmocka_unit_test(test_min_max_log2),
		cmocka_unit_test(test_parse_type_errors),
		cmocka_unit_test(test_eval_type_errors),
		cmocka_unit_test(test_division_by_zero),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_depth_limit),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_names_listed),
		cmocka_unit_test(test_error_buffer),
		cmocka_unit_test(test_lookup_failure),
		cmocka_unit_test(test_nested_eval),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_random_texts),
	};
	return testutil_run_group_name("expr", tests, NULL, NULL);
}
