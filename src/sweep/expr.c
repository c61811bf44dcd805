/* expr.c - sweep constraints: a recursive-descent parser that builds a tree of
 * nodes in one array, checks the types it can, and an evaluator that walks the
 * tree; see expr.h for the language. */
#include "expr.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

/* operators; OP_SUB is also the unary minus and OP_NOT the only other prefix */
enum {
	OP_OR,
	OP_AND,
	OP_NOT,
	OP_EQ,
	OP_NE,
	OP_LT,
	OP_LE,
	OP_GT,
	OP_GE,
	OP_ADD,
	OP_SUB,
	OP_MUL,
	OP_DIV,
	OP_MOD,
};

typedef enum tok_kind {
	T_END,
	T_NUM,
	T_TEXT,
	T_NAME,
	T_OP,
	T_LPAREN,
	T_RPAREN,
	T_COMMA,
	T_BAD, /* a lexical error, already reported */
} tok_kind;

typedef struct token {
	tok_kind kind;
	int op;            /* T_OP: OP_... */
	const char *spell; /* T_OP: as written ("&&", "and"), for messages */
	size_t at, len;    /* where it lies in the text */
	int col;           /* 1-based column of its first character */
	double num;        /* T_NUM: its value */
} token;

/* what a node is */
enum { N_NUM, N_TEXT, N_NAME, N_UNARY, N_BINARY, N_CALL };

/* what the parser knows of a node's value */
enum {
	ST_NUM,
	ST_TEXT,
	ST_BOOL,
	ST_ANY, /* a name's: a number or a text, known at evaluation */
};

typedef struct node {
	int kind;          /* N_... */
	int op;            /* N_UNARY, N_BINARY: OP_...; N_CALL: index in funcs */
	int stype;         /* ST_... */
	int height;        /* levels of nesting at and below it: 0 for a leaf */
	int col;           /* column of the operator or function, or of the leaf */
	int start;         /* column where its text starts (its opening parenthesis) */
	int kid, last;     /* first and last operand (-1: none) */
	int next;          /* the next operand of the same parent (-1: none) */
	int n_kids;
	double num;        /* N_NUM */
	const char *text;  /* N_TEXT: the text; N_NAME: the name (in the pool) */
	const char *spell; /* N_UNARY, N_BINARY: the operator as written */
} node;

struct capsim_expr {
	node *nodes;
	size_t n_nodes, cap_nodes;
	int root;
	char *pool; /* the texts and names, each terminated */
	size_t n_names;
	const char *names[CAPSIM_EXPR_MAX_NAMES]; /* into pool, first appearance first */
};

/* ---- values during evaluation ------------------------------------------- */

enum { V_NUM, V_TEXT, V_BOOL };

typedef struct value {
	int type;         /* V_... */
	double num;       /* V_NUM; V_BOOL: 0 or 1 */
	const char *text; /* V_TEXT */
} value;

typedef struct eval_state {
	const capsim_expr *e;
	capsim_expr_lookup lookup;
	void *ctx;
	char *err;
	size_t errlen;
} eval_state;

/* ---- the functions ------------------------------------------------------ */

/* Evaluate a call; its arguments are call's operands. */
typedef int (*fn_apply)(const eval_state *st, const node *call, value *out);

static int fn_divides(const eval_state *st, const node *call, value *out);
static int fn_min(const eval_state *st, const node *call, value *out);
static int fn_max(const eval_state *st, const node *call, value *out);
static int fn_log2(const eval_state *st, const node *call, value *out);
static int fn_in(const eval_state *st, const node *call, value *out);

typedef struct func {
	const char *name;
	int min_args, max_args; /* max_args -1: no upper limit */
	int arg_type;           /* ST_NUM: numbers; ST_ANY: numbers or texts, all alike */
	int result;             /* ST_BOOL or ST_NUM */
	fn_apply apply;
} func;

static const func funcs[] = {
	{ "divides", 2, 2, ST_NUM, ST_BOOL, fn_divides },
	{ "min", 2, -1, ST_NUM, ST_NUM, fn_min },
	{ "max", 2, -1, ST_NUM, ST_NUM, fn_max },
	{ "log2", 1, 1, ST_NUM, ST_NUM, fn_log2 },
	{ "in", 2, -1, ST_ANY, ST_BOOL, fn_in },
};

#define N_FUNCS (sizeof funcs / sizeof funcs[0])

/* ---- messages ----------------------------------------------------------- */

static void put(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void put(char *err, size_t errlen, const char *fmt, ...)
{
	if (!err || !errlen)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* "at column COL: MSG" into err; returns -1 */
static int put_at(char *err, size_t errlen, int col, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));

static int put_at(char *err, size_t errlen, int col, const char *fmt, va_list ap)
{
	char msg[512];
	vsnprintf(msg, sizeof msg, fmt, ap);
	put(err, errlen, "at column %d: %s", col, msg);
	return -1;
}

/* ---- the lexer ---------------------------------------------------------- */

typedef struct parser {
	const char *src;
	size_t pos;      /* the next character to read */
	token tok;       /* the current token */
	token prev;      /* the one before it (for a hint about '-') */
	int depth;       /* parentheses, calls and prefix operators open around tok */
	capsim_expr *e;
	size_t pool_used, pool_cap;
	int failed;      /* an error is in err: the first one stays */
	char *err;
	size_t errlen;
} parser;

static int fail(parser *p, int col, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(parser *p, int col, const char *fmt, ...)
{
	if (p->failed)
		return -1;
	p->failed = 1;
	va_list ap;
	va_start(ap, fmt);
	put_at(p->err, p->errlen, col, fmt, ap);
	va_end(ap);
	return -1;
}

static int is_space(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static int is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static int is_letter(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int is_name_char(int c)
{
	return is_letter(c) || is_digit(c) || c == '.' || c == '-' || c == '_';
}

/* a number at p->pos: digits, a fraction, an exponent; anything name-like
 * glued to it ("64k", "1.5.3", "0x10") makes it malformed */
static void lex_number(parser *p, token *t)
{
	const char *s = p->src;
	size_t i = t->at;
	while (is_digit(s[i]))
		i++;
	if (s[i] == '.' && is_digit(s[i + 1])) {
		i++;
		while (is_digit(s[i]))
			i++;
	}
	if (s[i] == 'e' || s[i] == 'E') {
		size_t j = i + 1;
		if (s[j] == '+' || s[j] == '-')
			j++;
		if (is_digit(s[j])) {
			while (is_digit(s[j]))
				j++;
			i = j;
		}
	}
	char *end = NULL;
	double v = strtod(s + t->at, &end);
	if ((is_name_char(s[i]) && s[i] != '-') || end != s + i) {
		while (is_name_char(s[i]) && s[i] != '-')
			i++;
		t->kind = T_BAD;
		fail(p, t->col, "malformed number '%.*s'", (int)(i - t->at > 32 ? 32 : i - t->at),
		     s + t->at);
		return;
	}
	t->len = i - t->at;
	if (!isfinite(v)) {
		t->kind = T_BAD;
		fail(p, t->col, "the number '%.*s' is out of range",
		     (int)(t->len > 32 ? 32 : t->len), s + t->at);
		return;
	}
	t->kind = T_NUM;
	t->num = v;
}

/* a word at p->pos: a name, or one of the word operators */
static void lex_word(parser *p, token *t)
{
	static const struct {
		const char *word;
		int op;
	} words[] = { { "or", OP_OR }, { "and", OP_AND }, { "not", OP_NOT } };
	size_t i = t->at;
	while (is_name_char(p->src[i]))
		i++;
	t->len = i - t->at;
	t->kind = T_NAME;
	for (size_t w = 0; w < sizeof words / sizeof words[0]; w++) {
		if (strlen(words[w].word) == t->len &&
		    memcmp(words[w].word, p->src + t->at, t->len) == 0) {
			t->kind = T_OP;
			t->op = words[w].op;
			t->spell = words[w].word;
		}
	}
}

/* a quoted text at p->pos, without escapes */
static void lex_text(parser *p, token *t)
{
	char q = p->src[t->at];
	size_t i = t->at + 1;
	while (p->src[i] && p->src[i] != q)
		i++;
	if (!p->src[i]) {
		t->kind = T_BAD;
		fail(p, t->col, "unterminated string: expected a closing %c", q);
		return;
	}
	t->kind = T_TEXT;
	t->len = i + 1 - t->at;
}

/* the operator or punctuation at p->pos */
static void lex_punct(parser *p, token *t)
{
	static const struct {
		const char *spell;
		tok_kind kind;
		int op;
	} puncts[] = {
		/* two characters first, so that "<=" is not '<' then '=' */
		{ "==", T_OP, OP_EQ }, { "!=", T_OP, OP_NE }, { "<=", T_OP, OP_LE },
		{ ">=", T_OP, OP_GE }, { "&&", T_OP, OP_AND }, { "||", T_OP, OP_OR },
		{ "<", T_OP, OP_LT }, { ">", T_OP, OP_GT }, { "!", T_OP, OP_NOT },
		{ "+", T_OP, OP_ADD }, { "-", T_OP, OP_SUB }, { "*", T_OP, OP_MUL },
		{ "/", T_OP, OP_DIV }, { "%", T_OP, OP_MOD }, { "(", T_LPAREN, 0 },
		{ ")", T_RPAREN, 0 }, { ",", T_COMMA, 0 },
	};
	const char *s = p->src + t->at;
	for (size_t i = 0; i < sizeof puncts / sizeof puncts[0]; i++) {
		size_t n = strlen(puncts[i].spell);
		if (strncmp(s, puncts[i].spell, n) == 0) {
			t->kind = puncts[i].kind;
			t->op = puncts[i].op;
			t->spell = puncts[i].spell;
			t->len = n;
			return;
		}
	}
	t->kind = T_BAD;
	unsigned char c = (unsigned char)*s;
	if (c == '=')
		fail(p, t->col, "unexpected '='; did you mean '=='?");
	else if (c == '&')
		fail(p, t->col, "unexpected '&'; did you mean '&&'?");
	else if (c == '|')
		fail(p, t->col, "unexpected '|'; did you mean '||'?");
	else if (c > ' ' && c < 0x7f)
		fail(p, t->col, "unexpected character '%c'", c);
	else
		fail(p, t->col, "unexpected byte 0x%02x", c);
}

/* Read the next token into p->tok. */
static void advance(parser *p)
{
	p->prev = p->tok;
	while (is_space(p->src[p->pos]))
		p->pos++;
	token t = { 0 };
	t.at = p->pos;
	t.col = (int)p->pos + 1;
	unsigned char c = (unsigned char)p->src[p->pos];
	if (!c)
		t.kind = T_END;
	else if (is_digit(c) || (c == '.' && is_digit(p->src[p->pos + 1])))
		lex_number(p, &t);
	else if (is_letter(c))
		lex_word(p, &t);
	else if (c == '\'' || c == '"')
		lex_text(p, &t);
	else
		lex_punct(p, &t);
	if (p->failed)
		t.kind = T_BAD;
	p->pos = t.at + t.len;
	p->tok = t;
}

/* how a token reads in a message: "'b'", "')'", "the end" */
static void tok_desc(const parser *p, const token *t, char *buf, size_t n)
{
	if (t->kind == T_END)
		snprintf(buf, n, "the end");
	else if (t->kind == T_TEXT)
		snprintf(buf, n, "%.*s%s", (int)(t->len > 34 ? 33 : t->len), p->src + t->at,
			 t->len > 34 ? "..." : "");
	else
		snprintf(buf, n, "'%.*s%s'", (int)(t->len > 32 ? 32 : t->len), p->src + t->at,
			 t->len > 32 ? "..." : "");
}

/* "expected WHAT, found TOKEN", with a hint when the token before was a name
 * that swallowed a minus */
static int expected(parser *p, const char *what)
{
	char found[48];
	tok_desc(p, &p->tok, found, sizeof found);
	const token *b = &p->prev;
	if (b->kind == T_NAME && p->src[b->at + b->len - 1] == '-')
		return fail(p, p->tok.col,
			    "expected %s, found %s ('%.*s' takes the '-' into the name: put a "
			    "space before a minus)",
			    what, found, (int)(b->len > 32 ? 32 : b->len), p->src + b->at);
	return fail(p, p->tok.col, "expected %s, found %s", what, found);
}

/* ---- the tree ----------------------------------------------------------- */

static node *nd(const parser *p, int i)
{
	return &p->e->nodes[i];
}

static int add_node(parser *p, int kind, int col, int stype)
{
	capsim_expr *e = p->e;
	if (e->n_nodes == e->cap_nodes) {
		e->cap_nodes = e->cap_nodes ? 2 * e->cap_nodes : 16;
		e->nodes = capsim_xrealloc(e->nodes, e->cap_nodes * sizeof *e->nodes);
	}
	node *k = &e->nodes[e->n_nodes];
	memset(k, 0, sizeof *k);
	k->kind = kind;
	k->col = k->start = col;
	k->stype = stype;
	k->kid = k->last = k->next = -1;
	return (int)e->n_nodes++;
}

/* One more level of nesting over node i (a parenthesis); col: where it opens. */
static int raise_height(parser *p, int i, int height, int col)
{
	if (height > CAPSIM_EXPR_MAX_DEPTH)
		return fail(p, col, "nested deeper than %d levels", CAPSIM_EXPR_MAX_DEPTH);
	nd(p, i)->height = height;
	return 0;
}

/* Make kid the last operand of parent. */
static int append_kid(parser *p, int parent, int kid)
{
	node *k = nd(p, parent);
	int h = nd(p, kid)->height + 1;
	if (h > k->height && raise_height(p, parent, h, k->col))
		return -1;
	if (k->last < 0)
		k->kid = kid;
	else
		nd(p, k->last)->next = kid;
	k->last = kid;
	k->n_kids++;
	return 0;
}

/* Enter a parenthesis, call or prefix operator at col. */
static int enter(parser *p, int col)
{
	if (++p->depth > CAPSIM_EXPR_MAX_DEPTH)
		return fail(p, col, "nested deeper than %d levels", CAPSIM_EXPR_MAX_DEPTH);
	return 0;
}

static void leave(parser *p)
{
	p->depth--;
}

static const char *pool_copy(parser *p, const char *s, size_t n)
{
	if (p->pool_used + n + 1 > p->pool_cap) {
		fail(p, 1, "internal error: the text pool is full");
		return NULL;
	}
	char *d = p->e->pool + p->pool_used;
	memcpy(d, s, n);
	d[n] = '\0';
	p->pool_used += n + 1;
	return d;
}

/* The name of token t, once in the names. */
static const char *intern(parser *p, const token *t)
{
	capsim_expr *e = p->e;
	const char *s = p->src + t->at;
	for (size_t i = 0; i < e->n_names; i++)
		if (strncmp(e->names[i], s, t->len) == 0 && e->names[i][t->len] == '\0')
			return e->names[i];
	if (e->n_names == CAPSIM_EXPR_MAX_NAMES) {
		fail(p, t->col, "more than %d different names", CAPSIM_EXPR_MAX_NAMES);
		return NULL;
	}
	const char *d = pool_copy(p, s, t->len);
	if (d)
		e->names[e->n_names++] = d;
	return d;
}

/* ---- static types ------------------------------------------------------- */

/* what node i is, as the parser knows it: "a number (64)", "the value of 'x'" */
static void static_desc(const parser *p, int i, char *buf, size_t n)
{
	const node *k = nd(p, i);
	switch (k->stype) {
	case ST_NUM:
		if (k->kind == N_NUM)
			snprintf(buf, n, "a number (%g)", k->num);
		else
			snprintf(buf, n, "a number");
		break;
	case ST_TEXT:
		snprintf(buf, n, "a text ('%.32s')", k->text);
		break;
	case ST_BOOL:
		snprintf(buf, n, "a true/false test");
		break;
	default:
		snprintf(buf, n, "the value of '%.64s'", k->text);
		break;
	}
}

/* Node i must be a true/false test: where says where it stands ("on the left
 * of 'and'"). */
static int need_bool(parser *p, int i, const char *where)
{
	if (nd(p, i)->stype == ST_BOOL)
		return 0;
	char d[112];
	static_desc(p, i, d, sizeof d);
	return fail(p, nd(p, i)->start, "expected a true/false test, found %s %s", d, where);
}

/* Node i must be a number for what ("'+'", "min()"), where it stands ("on its left"). */
static int need_num(parser *p, int i, const char *what, const char *where)
{
	int t = nd(p, i)->stype;
	if (t == ST_NUM || t == ST_ANY)
		return 0;
	char d[112];
	static_desc(p, i, d, sizeof d);
	return fail(p, nd(p, i)->start, "%s needs numbers, found %s %s", what, d, where);
}

/* Node i must be a number or a text, and of the type of node like when that is
 * known (like -1: none), for what compares them ("'=='", "in()"). */
static int need_alike(parser *p, int i, int like, const char *what, const char *where)
{
	char d[112], l[112];
	static_desc(p, i, d, sizeof d);
	int t = nd(p, i)->stype;
	if (t == ST_BOOL)
		return fail(p, nd(p, i)->start, "%s compares numbers or texts, found %s %s", what,
			    d, where);
	if (like < 0 || t == ST_ANY || nd(p, like)->stype == ST_ANY || nd(p, like)->stype == t)
		return 0;
	static_desc(p, like, l, sizeof l);
	return fail(p, nd(p, i)->start, "%s compares %s with %s", what, l, d);
}

/* ---- the parser --------------------------------------------------------- */

static int parse_or(parser *p);

static int is_cmp(int op)
{
	return op >= OP_EQ && op <= OP_GE;
}

/* The binary operator o over l and r, its types checked. */
static int make_binary(parser *p, const token *o, int l, int r)
{
	char what[16], on_left[48], on_right[48];
	snprintf(what, sizeof what, "'%s'", o->spell);
	snprintf(on_left, sizeof on_left, "on the left of '%s'", o->spell);
	snprintf(on_right, sizeof on_right, "on the right of '%s'", o->spell);
	int type = ST_BOOL;
	if (o->op == OP_AND || o->op == OP_OR) {
		if (need_bool(p, l, on_left) || need_bool(p, r, on_right))
			return -1;
	} else if (o->op == OP_EQ || o->op == OP_NE) {
		if (need_alike(p, l, -1, what, "on its left") ||
		    need_alike(p, r, l, what, "on its right"))
			return -1;
	} else {
		if (need_num(p, l, what, "on its left") || need_num(p, r, what, "on its right"))
			return -1;
		if (!is_cmp(o->op))
			type = ST_NUM;
	}
	int i = add_node(p, N_BINARY, o->col, type);
	nd(p, i)->op = o->op;
	nd(p, i)->spell = o->spell;
	nd(p, i)->start = nd(p, l)->start;
	if (append_kid(p, i, l) || append_kid(p, i, r))
		return -1;
	return i;
}

/* The prefix operator o (not, minus) over operand k. */
static int make_unary(parser *p, const token *o, int k)
{
	char what[16], after[32];
	snprintf(what, sizeof what, "'%s'", o->spell);
	snprintf(after, sizeof after, "after '%s'", o->spell);
	if (o->op == OP_NOT ? need_bool(p, k, after) : need_num(p, k, what, "after it"))
		return -1;
	int i = add_node(p, N_UNARY, o->col, o->op == OP_NOT ? ST_BOOL : ST_NUM);
	nd(p, i)->op = o->op;
	nd(p, i)->spell = o->spell;
	if (append_kid(p, i, k))
		return -1;
	return i;
}

static const func *find_func(const char *s, size_t n)
{
	for (size_t i = 0; i < N_FUNCS; i++)
		if (strlen(funcs[i].name) == n && memcmp(funcs[i].name, s, n) == 0)
			return &funcs[i];
	return NULL;
}

/* Check argument a (the argno-th) of call of f, before it joins the call: a
 * number, or (in) a number or a text like the arguments before it. */
static int check_arg(parser *p, const func *f, int call, int a, int argno)
{
	char what[16], where[32];
	snprintf(what, sizeof what, "%s()", f->name);
	snprintf(where, sizeof where, "as argument %d", argno);
	if (f->arg_type == ST_NUM)
		return need_num(p, a, what, where);
	int like = -1;
	for (int i = nd(p, call)->kid; i >= 0 && like < 0; i = nd(p, i)->next)
		if (nd(p, i)->stype != ST_ANY)
			like = i;
	return need_alike(p, a, like, what, where);
}

/* NAME ( args ): the name is p->tok, the '(' follows it. */
static int parse_call(parser *p)
{
	token name = p->tok;
	const func *f = find_func(p->src + name.at, name.len);
	if (!f) {
		char known[128] = "";
		for (size_t i = 0; i < N_FUNCS; i++) {
			size_t n = strlen(known);
			snprintf(known + n, sizeof known - n, "%s%s()", i ? ", " : "",
				 funcs[i].name);
		}
		return fail(p, name.col, "unknown function '%.*s'; the functions are %s",
			    (int)(name.len > 32 ? 32 : name.len), p->src + name.at, known);
	}
	if (enter(p, name.col))
		return -1;
	advance(p); /* the '(' */
	advance(p);
	int call = add_node(p, N_CALL, name.col, f->result);
	nd(p, call)->op = (int)(f - funcs);
	int argno = 0;
	if (p->tok.kind != T_RPAREN) {
		for (;;) {
			int a = parse_or(p);
			if (a < 0 || check_arg(p, f, call, a, ++argno) || append_kid(p, call, a))
				return -1;
			if (p->tok.kind == T_COMMA) {
				advance(p);
				continue;
			}
			if (p->tok.kind == T_RPAREN)
				break;
			return expected(p, "an operator, ',' or ')'");
		}
	}
	leave(p);
	advance(p);
	if (argno < f->min_args || (f->max_args >= 0 && argno > f->max_args)) {
		const char *s = f->min_args == 1 ? "" : "s";
		if (f->max_args < 0)
			return fail(p, name.col, "%s() takes at least %d argument%s, found %d",
				    f->name, f->min_args, s, argno);
		if (f->max_args == f->min_args)
			return fail(p, name.col, "%s() takes %d argument%s, found %d", f->name,
				    f->min_args, s, argno);
		return fail(p, name.col, "%s() takes %d to %d arguments, found %d", f->name,
			    f->min_args, f->max_args, argno);
	}
	return call;
}

/* 1 when the token after the name at p->tok is '(' */
static int call_follows(const parser *p)
{
	size_t i = p->pos;
	while (is_space(p->src[i]))
		i++;
	return p->src[i] == '(';
}

/* number, text, name, call, ( expr ) */
static int parse_primary(parser *p)
{
	token t = p->tok;
	int i;
	switch (t.kind) {
	case T_NUM:
		i = add_node(p, N_NUM, t.col, ST_NUM);
		nd(p, i)->num = t.num;
		advance(p);
		return i;
	case T_TEXT: {
		const char *s = pool_copy(p, p->src + t.at + 1, t.len - 2);
		if (!s)
			return -1;
		i = add_node(p, N_TEXT, t.col, ST_TEXT);
		nd(p, i)->text = s;
		advance(p);
		return i;
	}
	case T_NAME: {
		if (call_follows(p))
			return parse_call(p);
		const char *s = intern(p, &t);
		if (!s)
			return -1;
		i = add_node(p, N_NAME, t.col, ST_ANY);
		nd(p, i)->text = s;
		advance(p);
		return i;
	}
	case T_LPAREN:
		if (enter(p, t.col))
			return -1;
		advance(p);
		i = parse_or(p);
		if (i < 0)
			return -1;
		if (p->tok.kind != T_RPAREN)
			return expected(p, "an operator or ')'");
		leave(p);
		advance(p);
		if (raise_height(p, i, nd(p, i)->height + 1, t.col))
			return -1;
		nd(p, i)->start = t.col;
		return i;
	case T_BAD:
		return -1;
	default:
		return expected(p, "an operand");
	}
}

/* - unary | primary */
static int parse_unary(parser *p)
{
	if (p->tok.kind != T_OP || p->tok.op != OP_SUB)
		return parse_primary(p);
	token o = p->tok;
	if (enter(p, o.col))
		return -1;
	advance(p);
	int k = parse_unary(p);
	if (k < 0)
		return -1;
	leave(p);
	return make_unary(p, &o, k);
}

/* one level of left-associative binary operators from lo to hi, over sub */
static int parse_level(parser *p, int lo, int hi, int (*sub)(parser *))
{
	int l = sub(p);
	while (l >= 0 && p->tok.kind == T_OP && p->tok.op >= lo && p->tok.op <= hi) {
		token o = p->tok;
		advance(p);
		int r = sub(p);
		if (r < 0)
			return -1;
		l = make_binary(p, &o, l, r);
	}
	return l;
}

static int parse_mul(parser *p)
{
	return parse_level(p, OP_MUL, OP_MOD, parse_unary);
}

static int parse_add(parser *p)
{
	return parse_level(p, OP_ADD, OP_SUB, parse_mul);
}

/* add [cmp add]: comparisons do not chain */
static int parse_cmp(parser *p)
{
	int l = parse_add(p);
	if (l < 0 || p->tok.kind != T_OP || !is_cmp(p->tok.op))
		return l;
	token o = p->tok;
	advance(p);
	int r = parse_add(p);
	if (r < 0)
		return -1;
	if (p->tok.kind == T_OP && is_cmp(p->tok.op))
		return fail(p, p->tok.col,
			    "comparisons do not chain: write 'a < b and b < c', not 'a < b < c'");
	return make_binary(p, &o, l, r);
}

/* not not | cmp */
static int parse_not(parser *p)
{
	if (p->tok.kind != T_OP || p->tok.op != OP_NOT)
		return parse_cmp(p);
	token o = p->tok;
	if (enter(p, o.col))
		return -1;
	advance(p);
	int k = parse_not(p);
	if (k < 0)
		return -1;
	leave(p);
	return make_unary(p, &o, k);
}

static int parse_and(parser *p)
{
	return parse_level(p, OP_AND, OP_AND, parse_not);
}

static int parse_or(parser *p)
{
	return parse_level(p, OP_OR, OP_OR, parse_and);
}

capsim_expr *capsim_expr_parse(const char *text, char *err, size_t errlen)
{
	put(err, errlen, "%s", "");
	if (!text) {
		put(err, errlen, "no expression");
		return NULL;
	}
	size_t len = strnlen(text, CAPSIM_EXPR_MAX_LEN + 1);
	if (len > CAPSIM_EXPR_MAX_LEN) {
		put(err, errlen, "the expression is longer than %d characters",
		    CAPSIM_EXPR_MAX_LEN);
		return NULL;
	}
	capsim_expr *e = capsim_xcalloc(1, sizeof *e);
	/* every copy is a token's characters and a terminator: at most 2 a character */
	e->pool = capsim_xmalloc(2 * len + 2);
	parser p = { 0 };
	p.src = text;
	p.e = e;
	p.pool_cap = 2 * len + 2;
	p.err = err;
	p.errlen = errlen;
	advance(&p);
	int root = parse_or(&p);
	if (root >= 0 && p.tok.kind != T_END)
		root = expected(&p, "an operator or the end");
	if (root >= 0 && nd(&p, root)->stype != ST_BOOL) {
		char d[112];
		static_desc(&p, root, d, sizeof d);
		root = fail(&p, nd(&p, root)->start,
			    "expected a true/false test, found %s (the whole expression must be "
			    "one, such as 'x <= 64')",
			    d);
	}
	if (root < 0) {
		capsim_expr_free(e);
		return NULL;
	}
	e->root = root;
	return e;
}

size_t capsim_expr_n_names(const capsim_expr *e)
{
	return e ? e->n_names : 0;
}

const char *capsim_expr_name(const capsim_expr *e, size_t i)
{
	return e && i < e->n_names ? e->names[i] : NULL;
}

void capsim_expr_free(capsim_expr *e)
{
	if (!e)
		return;
	free(e->nodes);
	free(e->pool);
	free(e);
}

/* ---- evaluation --------------------------------------------------------- */

static int efail(const eval_state *st, int col, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int efail(const eval_state *st, int col, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	put_at(st->err, st->errlen, col, fmt, ap);
	va_end(ap);
	return -1;
}

static const node *kid_of(const eval_state *st, int i)
{
	return &st->e->nodes[i];
}

/* "a number (8)", "a text ('h100')", "a true/false test" */
static void value_desc(const value *v, char *buf, size_t n)
{
	if (v->type == V_NUM)
		snprintf(buf, n, "a number (%g)", v->num);
	else if (v->type == V_TEXT)
		snprintf(buf, n, "a text ('%.32s')", v->text);
	else
		snprintf(buf, n, "a true/false test");
}

/* value v of node k has the wrong type: "WHAT needs KIND, found V WHERE" */
static int wrong(const eval_state *st, const node *k, const value *v, const char *what,
		 const char *where)
{
	char d[96];
	value_desc(v, d, sizeof d);
	return efail(st, k->start, "%s, found %s%s%s", what, d, where[0] ? " " : "", where);
}

static int eval_node(const eval_state *st, int i, value *out);

static int eval_name(const eval_state *st, const node *k, value *out)
{
	capsim_expr_value v = { 0, 0.0, NULL };
	char msg[256] = "";
	int rc = st->lookup(st->ctx, k->text, &v, msg, sizeof msg);
	msg[sizeof msg - 1] = '\0';
	if (rc != 0)
		return efail(st, k->col, "%s", msg[0] ? msg : "the name has no value");
	if (v.is_text) {
		if (!v.text)
			return efail(st, k->col, "'%.64s' has no text", k->text);
		out->type = V_TEXT;
		out->text = v.text;
		return 0;
	}
	if (!isfinite(v.num))
		return efail(st, k->col, "'%.64s' is %g, expected a finite number", k->text, v.num);
	out->type = V_NUM;
	out->num = v.num;
	return 0;
}

/* evaluate node i, a number for what */
static int eval_num(const eval_state *st, int i, double *x, const char *what, const char *where)
{
	value v;
	if (eval_node(st, i, &v))
		return -1;
	if (v.type != V_NUM) {
		char need[48];
		snprintf(need, sizeof need, "%s needs numbers", what);
		return wrong(st, kid_of(st, i), &v, need, where);
	}
	*x = v.num;
	return 0;
}

/* evaluate node i, a true/false test */
static int eval_bool(const eval_state *st, int i, int *b, const char *where)
{
	value v;
	if (eval_node(st, i, &v))
		return -1;
	if (v.type != V_BOOL)
		return wrong(st, kid_of(st, i), &v, "expected a true/false test", where);
	*b = v.num != 0;
	return 0;
}

/* 1 when a and b are equal numbers or equal texts; -1 with a message when they
 * are not alike (b's node: kb) */
static int same(const eval_state *st, const value *a, const value *b, const node *kb,
		const char *what)
{
	if (a->type == V_BOOL || b->type == V_BOOL) {
		char need[48];
		snprintf(need, sizeof need, "%s compares numbers or texts", what);
		return wrong(st, kb, a->type == V_BOOL ? a : b, need, "");
	}
	if (a->type != b->type) {
		char da[96], db[96];
		value_desc(a, da, sizeof da);
		value_desc(b, db, sizeof db);
		return efail(st, kb->start, "%s compares %s with %s", what, da, db);
	}
	if (a->type == V_NUM)
		return a->num == b->num;
	return strcmp(a->text, b->text) == 0;
}

static void set_bool(value *out, int b)
{
	out->type = V_BOOL;
	out->num = b ? 1.0 : 0.0;
	out->text = NULL;
}

static void set_num(value *out, double x)
{
	out->type = V_NUM;
	out->num = x;
	out->text = NULL;
}

/* and, or: the right side only when the left does not decide */
static int eval_logic(const eval_state *st, const node *k, value *out)
{
	char where[48];
	int a = 0, b = 0;
	snprintf(where, sizeof where, "on the left of '%s'", k->spell);
	if (eval_bool(st, k->kid, &a, where))
		return -1;
	if (k->op == OP_AND ? !a : a) {
		set_bool(out, a);
		return 0;
	}
	snprintf(where, sizeof where, "on the right of '%s'", k->spell);
	if (eval_bool(st, kid_of(st, k->kid)->next, &b, where))
		return -1;
	set_bool(out, b);
	return 0;
}

static int eval_binary(const eval_state *st, const node *k, value *out)
{
	if (k->op == OP_AND || k->op == OP_OR)
		return eval_logic(st, k, out);
	int li = k->kid, ri = kid_of(st, li)->next;
	char what[16];
	snprintf(what, sizeof what, "'%s'", k->spell);
	if (k->op == OP_EQ || k->op == OP_NE) {
		value a, b;
		if (eval_node(st, li, &a) || eval_node(st, ri, &b))
			return -1;
		int eq = same(st, &a, &b, kid_of(st, ri), what);
		if (eq < 0)
			return -1;
		set_bool(out, k->op == OP_EQ ? eq : !eq);
		return 0;
	}
	double x = 0.0, y = 0.0, z;
	if (eval_num(st, li, &x, what, "on its left") || eval_num(st, ri, &y, what, "on its right"))
		return -1;
	switch (k->op) {
	case OP_LT:
		set_bool(out, x < y);
		return 0;
	case OP_LE:
		set_bool(out, x <= y);
		return 0;
	case OP_GT:
		set_bool(out, x > y);
		return 0;
	case OP_GE:
		set_bool(out, x >= y);
		return 0;
	case OP_ADD:
		z = x + y;
		break;
	case OP_SUB:
		z = x - y;
		break;
	case OP_MUL:
		z = x * y;
		break;
	default: /* OP_DIV, OP_MOD */
		if (y == 0.0)
			return efail(st, k->col, "division by zero: the right side of %s is 0",
				     what);
		z = k->op == OP_DIV ? x / y : fmod(x, y);
		break;
	}
	if (!isfinite(z))
		return efail(st, k->col, "%g %s %g is out of range", x, k->spell, y);
	set_num(out, z);
	return 0;
}

static int eval_unary(const eval_state *st, const node *k, value *out)
{
	if (k->op == OP_NOT) {
		char where[32];
		int b = 0;
		snprintf(where, sizeof where, "after '%s'", k->spell);
		if (eval_bool(st, k->kid, &b, where))
			return -1;
		set_bool(out, !b);
		return 0;
	}
	double x = 0.0;
	if (eval_num(st, k->kid, &x, "'-'", "after it"))
		return -1;
	set_num(out, -x);
	return 0;
}

static int eval_node(const eval_state *st, int i, value *out)
{
	const node *k = kid_of(st, i);
	switch (k->kind) {
	case N_NUM:
		set_num(out, k->num);
		return 0;
	case N_TEXT:
		out->type = V_TEXT;
		out->num = 0.0;
		out->text = k->text;
		return 0;
	case N_NAME:
		return eval_name(st, k, out);
	case N_UNARY:
		return eval_unary(st, k, out);
	case N_BINARY:
		return eval_binary(st, k, out);
	default:
		return funcs[k->op].apply(st, k, out);
	}
}

/* the next argument of a call of f, a number; *i: its node, then the next's */
static int arg_num(const eval_state *st, const node *call, int *i, int argno, double *x)
{
	char what[16], where[32];
	snprintf(what, sizeof what, "%s()", funcs[call->op].name);
	snprintf(where, sizeof where, "as argument %d", argno);
	int at = *i;
	*i = kid_of(st, at)->next;
	return eval_num(st, at, x, what, where);
}

static int fn_divides(const eval_state *st, const node *call, value *out)
{
	int i = call->kid;
	double a = 0.0, b = 0.0;
	if (arg_num(st, call, &i, 1, &a) || arg_num(st, call, &i, 2, &b))
		return -1;
	const node *ka = kid_of(st, call->kid), *kb = kid_of(st, ka->next);
	if (floor(a) != a)
		return efail(st, ka->start, "divides() needs whole numbers, found %g as argument 1",
			     a);
	if (floor(b) != b)
		return efail(st, kb->start, "divides() needs whole numbers, found %g as argument 2",
			     b);
	if (a == 0.0)
		return efail(st, ka->start, "division by zero: argument 1 of divides() is 0");
	set_bool(out, fmod(b, a) == 0.0);
	return 0;
}

/* min (sign 1) or max (sign -1) of the arguments */
static int extreme(const eval_state *st, const node *call, value *out, int sign)
{
	int i = call->kid, argno = 1;
	double best = 0.0, x = 0.0;
	if (arg_num(st, call, &i, argno, &best))
		return -1;
	while (i >= 0) {
		if (arg_num(st, call, &i, ++argno, &x))
			return -1;
		if (sign > 0 ? x < best : x > best)
			best = x;
	}
	set_num(out, best);
	return 0;
}

static int fn_min(const eval_state *st, const node *call, value *out)
{
	return extreme(st, call, out, 1);
}

static int fn_max(const eval_state *st, const node *call, value *out)
{
	return extreme(st, call, out, -1);
}

static int fn_log2(const eval_state *st, const node *call, value *out)
{
	int i = call->kid;
	double x = 0.0;
	if (arg_num(st, call, &i, 1, &x))
		return -1;
	if (!(x > 0.0))
		return efail(st, kid_of(st, call->kid)->start,
			     "log2() needs a number above 0, found %g", x);
	set_num(out, log2(x));
	return 0;
}

/* in(x, v1, v2, ...): stops at the first v equal to x */
static int fn_in(const eval_state *st, const node *call, value *out)
{
	value x, v;
	if (eval_node(st, call->kid, &x))
		return -1;
	for (int i = kid_of(st, call->kid)->next; i >= 0; i = kid_of(st, i)->next) {
		if (eval_node(st, i, &v))
			return -1;
		int eq = same(st, &x, &v, kid_of(st, i), "in()");
		if (eq < 0)
			return -1;
		if (eq) {
			set_bool(out, 1);
			return 0;
		}
	}
	set_bool(out, 0);
	return 0;
}

int capsim_expr_eval(const capsim_expr *e, capsim_expr_lookup lookup, void *ctx, int *truth,
		     char *err, size_t errlen)
{
	put(err, errlen, "%s", "");
	if (!e || !lookup || !truth) {
		put(err, errlen, "no expression, lookup or result to evaluate");
		return -1;
	}
	eval_state st = { e, lookup, ctx, err, errlen };
	value v;
	if (eval_node(&st, e->root, &v))
		return -1;
	if (v.type != V_BOOL)
		return wrong(&st, kid_of(&st, e->root), &v, "expected a true/false test",
			     "(the whole expression)");
	*truth = v.num != 0;
	return 0;
}
