/* expr.h - the constraints of a sweep file: small true/false expressions over
 * the sweep's parameters, such as
 *
 *	workload.parallelism.tp * workload.parallelism.pp <= 64
 *	divides(workload.parallelism.tp, cluster.gpus-per-node) and cluster.gpu != 'a100'
 *
 * parsed once when the file loads and evaluated for every point of the sweep.
 *
 * The language:
 *  - numbers: 64, 0.25, .5, 1.5e9 (no units, no signs: "-1" is minus one);
 *  - texts: 'h100-sxm' or "h100-sxm", without escapes;
 *  - names: a letter, then letters, digits, '.', '-' and '_' ("cluster.nodes",
 *    "workload.global-batch"); a name's value, a number or a text, comes from
 *    the caller's lookup at each evaluation. Because '-' belongs to names, a
 *    minus right after a name must have a space before it: "a - 1" subtracts,
 *    "a-1" is the name "a-1" (which the lookup will not know);
 *  - operators, loosest first: or (||); and (&&); not (!); the comparisons
 *    == != < <= > >=, which do not chain ("a < b < c" is an error); + -;
 *    * / % (% is C's fmod: the remainder has the sign of the left side);
 *    unary minus; parentheses. and, or, not are words of the language, not
 *    names;
 *  - functions: divides(a, b) (b is a whole multiple of a; both whole numbers,
 *    a not 0), min(a, b, ...), max(a, b, ...), log2(a) (a > 0) and
 *    in(x, v1, v2, ...) (x equals one of the v; numbers or texts).
 *
 * Types are checked: arithmetic and < <= > >= take numbers; == and != take two
 * numbers or two texts; and, or, not take true/false tests (comparisons,
 * divides, in, and their combinations): a number is not one. The whole
 * expression must be a true/false test. What the parser can tell without the
 * names' values (a test used as a number, a number or a name used as a test,
 * 'a' + 1, 1 == 'a') is a parse error; the rest (a name that holds a text
 * added to a number, a division by zero) fails the evaluation. and and or stop
 * at their left side when it decides, so names on the right are not looked up.
 *
 * Limits: CAPSIM_EXPR_MAX_LEN characters, CAPSIM_EXPR_MAX_DEPTH levels of
 * nesting (parentheses, operators and calls along the deepest path: also a
 * chain such as a + b + c + ... of more than that many operators) and
 * CAPSIM_EXPR_MAX_NAMES different names. Messages name the 1-based column
 * (counted in bytes): "at column 7: expected an operand, found ')'". */
#ifndef CAPSIM_EXPR_H
#define CAPSIM_EXPR_H

#include <stddef.h>

#define CAPSIM_EXPR_MAX_LEN 4096
#define CAPSIM_EXPR_MAX_DEPTH 64
#define CAPSIM_EXPR_MAX_NAMES 256

/* a parsed expression, opaque */
typedef struct capsim_expr capsim_expr;

/* the value of a name: a number (SI) when is_text is 0, else the text */
typedef struct capsim_expr_value {
	int is_text;
	double num;
	const char *text;
} capsim_expr_value;

/* Look up a name: return 0 with *out set (a finite number, or a text that lives
 * until capsim_expr_eval returns), or -1 with a message in err ("unknown name
 * 'x'"; the evaluation puts the column in front). */
typedef int (*capsim_expr_lookup)(void *ctx, const char *name, capsim_expr_value *out,
				  char *err, size_t errlen);

/* Parse text. Returns the expression, or NULL with a message in err ("at column 7:
 * expected an operand, found ')'"). */
capsim_expr *capsim_expr_parse(const char *text, char *err, size_t errlen);

/* The names it reads, in order of first appearance, each once (for checking them
 * against the known paths once, at load); function names are not among them. */
size_t capsim_expr_n_names(const capsim_expr *e);
const char *capsim_expr_name(const capsim_expr *e, size_t i); /* NULL past the end */

/* Evaluate: 0 with *truth set (1 true, 0 false), or -1 with a message in err (a
 * lookup failed, a text compared with a number, a division by zero, a result out
 * of range, ...). Reentrant: several threads may evaluate one parsed expression at
 * once; nothing is allocated. */
int capsim_expr_eval(const capsim_expr *e, capsim_expr_lookup lookup, void *ctx, int *truth,
		     char *err, size_t errlen);

void capsim_expr_free(capsim_expr *e);

#endif
