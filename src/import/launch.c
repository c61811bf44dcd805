/* launch.c - launch lines and scripts into a workload and cluster size; see
 * launch.h. Flag names are Megatron-LM's (megatron/training/arguments.py),
 * torchrun's, srun's and sbatch's; overrides NeMo's (key=value). */
#include "launch.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "check.h"
#include "xalloc.h"

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
			return; /* once each */
	if (l->n_notes == CAPSIM_LAUNCH_NOTES) {
		l->n_notes_more++; /* counted, and said as "and N more" */
		return;
	}
	memcpy(l->notes[l->n_notes++], text, sizeof text);
}

typedef enum {
	F_LONG,        /* a whole number into a member */
	F_RECOMPUTE,   /* --recompute-granularity full|selective */
	F_RECOMP_ACT,  /* --recompute-activations: selective */
	F_ZERO1,       /* --use-distributed-optimizer */
	F_SP,          /* --sequence-parallel */
	F_TPO,         /* --tp-comm-overlap */
	F_BF16, F_FP16,
	F_FP8,         /* --fp8-format e4m3|hybrid */
	F_FP8_PARAMS,  /* --fp8-param-gather */
	F_GRAD_BF16,   /* --grad-reduce-in-bf16 */
	F_SWIGLU,
	F_NORM,        /* --normalization LayerNorm|RMSNorm */
	F_POS,         /* --position-embedding-type learned_absolute|rope */
	F_UNTIE,
	F_NNODES,      /* torchrun --nnodes N or MIN:MAX */
	F_GRES         /* --gres gpu:8 (or gpu:h100:8) */
} fkind;

#define M(f) offsetof(capsim_launch, f)
static const struct {
	const char *name;
	fkind k;
	size_t off;
} flags[] = {
	{ "--num-layers", F_LONG, M(layers) },
	{ "--hidden-size", F_LONG, M(hidden) },
	{ "--num-attention-heads", F_LONG, M(heads) },
	{ "--num-query-groups", F_LONG, M(kv_heads) },
	{ "--ffn-hidden-size", F_LONG, M(ffn) },
	{ "--seq-length", F_LONG, M(seq_len) },
	{ "--max-position-embeddings", F_LONG, M(max_positions) },
	{ "--vocab-size", F_LONG, M(vocab) },
	{ "--micro-batch-size", F_LONG, M(micro_batch) },
	{ "--global-batch-size", F_LONG, M(global_batch) },
	{ "--tensor-model-parallel-size", F_LONG, M(tp) },
	{ "--pipeline-model-parallel-size", F_LONG, M(pp) },
	{ "--num-layers-per-virtual-pipeline-stage", F_LONG, M(vp_layers) },
	{ "--context-parallel-size", F_LONG, M(cp) },
	{ "--expert-model-parallel-size", F_LONG, M(ep) },
	{ "--num-experts", F_LONG, M(experts) },
	{ "--moe-router-topk", F_LONG, M(top_k) },
	{ "--train-iters", F_LONG, M(train_iters) },
	{ "--train-samples", F_LONG, M(train_samples) },
	{ "--recompute-granularity", F_RECOMPUTE, 0 },
	{ "--recompute-activations", F_RECOMP_ACT, 0 },
	{ "--use-distributed-optimizer", F_ZERO1, 0 },
	{ "--sequence-parallel", F_SP, 0 },
	{ "--tp-comm-overlap", F_TPO, 0 },
	{ "--bf16", F_BF16, 0 },
	{ "--fp16", F_FP16, 0 },
	{ "--fp8-format", F_FP8, 0 },
	{ "--fp8-param-gather", F_FP8_PARAMS, 0 },
	{ "--grad-reduce-in-bf16", F_GRAD_BF16, 0 },
	{ "--swiglu", F_SWIGLU, 0 },
	{ "--normalization", F_NORM, 0 },
	{ "--position-embedding-type", F_POS, 0 },
	{ "--untie-embeddings-and-output-weights", F_UNTIE, 0 },
	/* torchrun */
	{ "--nnodes", F_NNODES, 0 },
	{ "--nproc-per-node", F_LONG, M(gpus_per_node) },
	{ "--nproc_per_node", F_LONG, M(gpus_per_node) },
	/* srun and sbatch */
	{ "-N", F_LONG, M(nodes) },
	{ "--nodes", F_LONG, M(nodes) },
	{ "--gpus-per-node", F_LONG, M(gpus_per_node) },
	{ "--gres", F_GRES, 0 },
};

/* flags known to take no value (the rest of the unknown ones are taken to
 * take the next token when it is not itself a flag) */
static const char *const boolean[] = {
	"--recompute-activations", "--use-distributed-optimizer", "--sequence-parallel",
	"--tp-comm-overlap", "--bf16", "--fp16", "--swiglu", "--untie-embeddings-and-output-weights",
	"--overlap-grad-reduce", "--overlap-param-gather", "--use-flash-attn", "--no-masked-softmax-fusion",
	"--disable-bias-linear", "--group-query-attention", "--use-mcore-models", "--standalone",
	"--exclusive", "--fp8-param-gather", "--grad-reduce-in-bf16",
};

/* NeMo's overrides: key=value */
static const struct {
	const char *key;
	size_t off;
} nemo[] = {
	{ "trainer.num_nodes", M(nodes) },
	{ "trainer.devices", M(gpus_per_node) },
	{ "model.tensor_model_parallel_size", M(tp) },
	{ "model.pipeline_model_parallel_size", M(pp) },
	{ "model.context_parallel_size", M(cp) },
	{ "model.expert_model_parallel_size", M(ep) },
	{ "model.micro_batch_size", M(micro_batch) },
	{ "model.global_batch_size", M(global_batch) },
	{ "model.encoder_seq_length", M(seq_len) },
	{ "model.num_layers", M(layers) },
	{ "model.hidden_size", M(hidden) },
	{ "model.num_attention_heads", M(heads) },
	{ "model.num_query_groups", M(kv_heads) },
	{ "model.ffn_hidden_size", M(ffn) },
	{ "model.max_position_embeddings", M(max_positions) },
	{ "trainer.max_steps", M(train_iters) },
};
#undef M

static int is_boolean(const char *f)
{
	for (size_t i = 0; i < sizeof boolean / sizeof boolean[0]; i++)
		if (strcmp(boolean[i], f) == 0)
			return 1;
	return 0;
}

/* a positive whole number (every size, count and batch a launch gives is
 * one: 0 is refused as bash's launcher would fail on it, not taken as "not
 * said"): -1 after the message */
static int whole(const char *flag, const char *v, long *out, const char *where, capsim_diags *d)
{
	char *end;
	errno = 0;
	long x = v && isdigit((unsigned char)*v) ? strtol(v, &end, 10) : -1;
	if (x < 0 || *end || errno == ERANGE || x > CAPSIM_LAUNCH_MAX_WHOLE) {
		capsim_diags_add_at(d, where, "%s: expected a positive whole number, found "
				    "'%.80s%s'", flag, v ? v : "nothing",
				    v && strlen(v) > 80 ? "..." : "");
		return -1;
	}
	if (x == 0) {
		capsim_diags_add_at(d, where, "%s: expected a positive whole number (at most %ld), "
				    "found 0", flag, CAPSIM_LAUNCH_MAX_WHOLE);
		return -1;
	}
	*out = x;
	return 0;
}

static int nemo_override(capsim_launch *l, const char *tok, const char *where, capsim_diags *d)
{
	const char *eq = strchr(tok, '=');
	size_t kl = (size_t)(eq - tok);
	for (size_t i = 0; i < sizeof nemo / sizeof nemo[0]; i++)
		if (strlen(nemo[i].key) == kl && strncmp(nemo[i].key, tok, kl) == 0)
			return whole(nemo[i].key, eq + 1, (long *)((char *)l + nemo[i].off), where, d);
	if (strncmp(tok, "model.sequence_parallel=", 24) == 0) {
		l->sequence_parallel = strcmp(eq + 1, "True") == 0 || strcmp(eq + 1, "true") == 0;
		return 0;
	}
	if (strncmp(tok, "model.virtual_pipeline_model_parallel_size=", 43) == 0 &&
	    strcmp(eq + 1, "null") != 0) {
		long v;
		if (whole("model.virtual_pipeline_model_parallel_size", eq + 1, &v, where, d) < 0)
			return -1;
		l->vp_stages = v;
		return 0;
	}
	note(l, "override not modelled: %.140s", tok);
	return 0;
}

static int one_flag(capsim_launch *l, int k, const char *name, const char *v, const char *where,
		    capsim_diags *d)
{
	/* a variable the script does not set (Slurm's $SLURM_NNODES): left to the
	 * other flags that say the same (#SBATCH --nodes) */
	if (v && v[0] == '$') {
		note(l, "%.60s %.60s: a variable set at run time, not read", name, v);
		return 0;
	}
	switch (flags[k].k) {
	case F_LONG:
		return whole(name, v, (long *)((char *)l + flags[k].off), where, d);
	case F_RECOMPUTE:
		if (v && (strcmp(v, "full") == 0 || strcmp(v, "selective") == 0)) {
			l->recompute = strcmp(v, "full") == 0 ? "full" : "selective";
			return 0;
		}
		capsim_diags_add_at(d, where, "%s: expected full or selective, found '%s'", name,
				    v ? v : "nothing");
		return -1;
	case F_RECOMP_ACT: l->recompute = "selective"; return 0;
	case F_ZERO1: l->zero = 1; return 0;
	case F_SP: l->sequence_parallel = 1; return 0;
	case F_TPO: l->tp_comm_overlap = 1; return 0;
	case F_BF16: if (!l->dtype || strcmp(l->dtype, "fp8")) l->dtype = "bf16"; return 0;
	case F_FP16: if (!l->dtype || strcmp(l->dtype, "fp8")) l->dtype = "fp16"; return 0;
	case F_FP8:
		l->dtype = "fp8";
		if (v && strcmp(v, "hybrid") && strcmp(v, "e4m3"))
			note(l, "--fp8-format %s: costed as capsim's fp8", v);
		return 0;
	case F_FP8_PARAMS: l->fp8_param_gather = 1; return 0;
	case F_GRAD_BF16: l->grad_reduce_bf16 = 1; return 0;
	case F_SWIGLU: l->swiglu = 1; return 0;
	case F_NORM:
		l->rmsnorm = v && strcasecmp(v, "RMSNorm") == 0;
		return 0;
	case F_POS:
		l->rope = v && strcmp(v, "rope") == 0;
		return 0;
	case F_UNTIE: l->untied = 1; return 0;
	case F_NNODES: {
		const char *colon = v ? strchr(v, ':') : NULL;
		if (colon) {
			note(l, "--nnodes %s: elastic; the largest, %s, taken", v, colon + 1);
			v = colon + 1;
		}
		return whole(name, v, &l->nodes, where, d);
	}
	case F_GRES: {
		/* gpu:8 or gpu:h100:8 */
		const char *last = v ? strrchr(v, ':') : NULL;
		if (!v || strncmp(v, "gpu", 3) != 0 || !last) {
			note(l, "--gres %s: not GPUs", v ? v : "");
			return 0;
		}
		return whole(name, last + 1, &l->gpus_per_node, where, d);
	}
	}
	return 0;
}

static int takes_value(fkind k)
{
	switch (k) {
	case F_RECOMP_ACT: case F_ZERO1: case F_SP: case F_TPO: case F_BF16: case F_FP16:
	case F_FP8_PARAMS: case F_GRAD_BF16: case F_SWIGLU: case F_UNTIE:
		return 0;
	default:
		return 1;
	}
}

int capsim_launch_argv(char **argv, int argc, const char *where, capsim_launch *l,
		       capsim_diags *d)
{
	size_t before = d->n;
	for (int i = 0; i < argc; i++) {
		const char *tok = argv[i];
		if (tok[0] != '-') {
			if (strchr(tok, '=') && strchr(tok, '.') && strchr(tok, '.') < strchr(tok, '=')) {
				nemo_override(l, tok, where, d);
				continue;
			}
			if (strstr(tok, "torchrun") || strcmp(tok, "srun") == 0 ||
			    strstr(tok, "python") || strstr(tok, "pretrain_") || strstr(tok, ".py"))
				l->found_launcher = 1;
			continue;
		}
		char name[128];
		const char *eq = strchr(tok, '=');
		const char *v = NULL;
		size_t nl = eq ? (size_t)(eq - tok) : strlen(tok);
		if (nl >= sizeof name)
			nl = sizeof name - 1;
		memcpy(name, tok, nl);
		name[nl] = '\0';
		int k = -1;
		for (size_t j = 0; j < sizeof flags / sizeof flags[0]; j++)
			if (strcmp(flags[j].name, name) == 0)
				k = (int)j;
		if (k >= 0) {
			if (takes_value(flags[k].k)) {
				if (eq)
					v = eq + 1;
				else if (i + 1 < argc)
					v = argv[++i];
			}
			one_flag(l, k, name, v, where, d);
			continue;
		}
		/* not modelled: named, with its value when it has one */
		if (eq) {
			note(l, "%.60s=%.60s: not modelled", name, eq + 1);
		} else if (!is_boolean(name) && i + 1 < argc && argv[i + 1][0] != '-') {
			note(l, "%.60s %.60s: not modelled", name, argv[i + 1]);
			i++;
		} else {
			note(l, "%.60s: not modelled", name);
		}
	}
	return d->n == before ? 0 : -1;
}

/* ---- scripts ------------------------------------------------------------------------ */

/* a shell variable the script sets, in an open-addressing table */
typedef struct {
	char *name, *value;
} var;

typedef struct {
	var *slot;
	size_t cap, n; /* cap a power of two, or 0 */
} vars;

static size_t hash(const char *s, size_t len)
{
	size_t h = 1469598103934665603u;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211u;
	return h;
}

static var *slot_of(const vars *vs, const char *name, size_t len)
{
	if (!vs || !vs->cap)
		return NULL;
	for (size_t i = hash(name, len) & (vs->cap - 1);; i = (i + 1) & (vs->cap - 1)) {
		var *v = &vs->slot[i];
		if (!v->name || (strlen(v->name) == len && memcmp(v->name, name, len) == 0))
			return v;
	}
}

static const char *lookup(const vars *vs, const char *name, size_t len)
{
	const var *v = slot_of(vs, name, len);
	return v && v->name ? v->value : NULL;
}

/* NAME=value: set (a name set again gets the new value); value is taken */
static void set_var(vars *vs, const char *name, size_t len, char *value)
{
	if (2 * (vs->n + 1) > vs->cap) {
		vars bigger = { capsim_xcalloc(vs->cap ? 2 * vs->cap : 64, sizeof(var)),
				vs->cap ? 2 * vs->cap : 64, vs->n };
		for (size_t i = 0; i < vs->cap; i++)
			if (vs->slot[i].name)
				*slot_of(&bigger, vs->slot[i].name, strlen(vs->slot[i].name)) =
					vs->slot[i];
		free(vs->slot);
		*vs = bigger;
	}
	var *v = slot_of(vs, name, len);
	if (v->name) {
		free(v->value);
	} else {
		v->name = capsim_xasprintf("%.*s", (int)len, name);
		vs->n++;
	}
	v->value = value;
}

static void free_vars(vars *vs)
{
	for (size_t i = 0; i < vs->cap; i++) {
		free(vs->slot[i].name);
		free(vs->slot[i].value);
	}
	free(vs->slot);
}

/* The shell's quoting: what a point of a line is inside of. */
enum { CX_SQ = '\'', CX_ANSI = 'A', CX_DQ = '"', CX_TICK = '`', CX_SUB = '(', CX_ARRAY = '[' };

typedef struct {
	char kind[CAPSIM_LAUNCH_MAX_NESTING];
	long line[CAPSIM_LAUNCH_MAX_NESTING]; /* where each opened */
	int n;
	long cur_line;   /* the line being read */
	char prev;       /* the byte before, for a comment's '#' (0 at a line's start) */
	char heredoc[64]; /* a here-document's delimiter seen (<<EOF), "" none */
	int heredoc_tabs; /* <<- */
	enum { WALK_OK, WALK_NESTING, WALK_LONG } err;
} shctx;

/* the words a line gives: quotes removed, variables expanded */
typedef struct {
	char **v;
	int n, cap;
	char *w;            /* the word being built */
	size_t wl, wcap;
	int in_word;
	size_t total;       /* bytes of every word, with a separator each */
} wordlist;

static const char *kind_name(char k)
{
	switch (k) {
	case CX_SQ: return "' (a single quote)";
	case CX_ANSI: return "$' (an ANSI-C quote)";
	case CX_DQ: return "\" (a double quote)";
	case CX_TICK: return "` (a command substitution)";
	case CX_SUB: return "$( (a command substitution)";
	default: return "( (a bash array)";
	}
}

static int push(shctx *c, char kind)
{
	if (c->n == CAPSIM_LAUNCH_MAX_NESTING) {
		c->err = WALK_NESTING;
		return -1;
	}
	c->kind[c->n] = kind;
	c->line[c->n++] = c->cur_line;
	return 0;
}

static void put(shctx *c, wordlist *w, char ch)
{
	if (!w)
		return;
	if (w->total + 1 > CAPSIM_LAUNCH_MAX_LINE) {
		c->err = WALK_LONG;
		return;
	}
	if (w->wl + 2 > w->wcap)
		w->w = capsim_xrealloc(w->w, w->wcap = w->wcap ? 2 * w->wcap : 64);
	w->w[w->wl++] = ch;
	w->total++;
	w->in_word = 1;
}

static void end_word(shctx *c, wordlist *w)
{
	if (!w || !w->in_word)
		return;
	if (w->total + 1 > CAPSIM_LAUNCH_MAX_LINE) {
		c->err = WALK_LONG;
		return;
	}
	if (w->n == w->cap)
		w->v = capsim_xrealloc(w->v, (size_t)(w->cap = w->cap ? 2 * w->cap : 16) *
				       sizeof *w->v);
	w->v[w->n] = capsim_xmalloc(w->wl + 1);
	if (w->wl)
		memcpy(w->v[w->n], w->w, w->wl);
	w->v[w->n++][w->wl] = '\0';
	w->wl = 0;
	w->in_word = 0;
	w->total++;
}

static void free_words(wordlist *w)
{
	for (int i = 0; i < w->n; i++)
		free(w->v[i]);
	free(w->v);
	free(w->w);
	memset(w, 0, sizeof *w);
}

/* a variable reference at s ($NAME, ${NAME}, ${NAME[@]}, ${NAME[*]}): its
 * length, with the name; 0 when s holds none */
static size_t var_ref(const char *s, size_t n, const char **name, size_t *nl)
{
	size_t i = 1;
	int brace = i < n && s[i] == '{';
	i += (size_t)brace;
	*name = s + i;
	if (i >= n || !(isalpha((unsigned char)s[i]) || s[i] == '_'))
		return 0;
	while (i < n && (isalnum((unsigned char)s[i]) || s[i] == '_'))
		i++;
	*nl = (size_t)(s + i - *name);
	if (!brace)
		return i;
	if (i + 2 < n && s[i] == '[' && (s[i + 1] == '@' || s[i + 1] == '*') &&
	    s[i + 2] == ']')
		i += 3;
	return i < n && s[i] == '}' ? i + 1 : 0;
}

static int word_start(char prev)
{
	return !prev || isspace((unsigned char)prev) || strchr(";&|()", prev);
}

/* a here-document's delimiter after "<<" at s (unquoted), into c */
static void heredoc(shctx *c, const char *s, size_t n)
{
	size_t i = 0, k = 0;
	c->heredoc_tabs = i < n && s[i] == '-';
	i += (size_t)c->heredoc_tabs;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	for (; i < n && !isspace((unsigned char)s[i]) && !strchr(";&|<>()", s[i]); i++)
		if (s[i] != '\'' && s[i] != '"' && s[i] != '\\') {
			if (k + 1 == sizeof c->heredoc)
				return; /* too long to be one: read on as lines */
			c->heredoc[k++] = s[i];
		}
	c->heredoc[k] = '\0';
}

/* Walk s[0..n) in the shell's quoting from the contexts in c (left as they
 * are at its end). With w, the words: quotes removed at the top, variables
 * of vs expanded (split at blanks outside quotes, whole inside), YAML and
 * JSON list punctuation ([ ] , around words) dropped. Linear in n and the
 * words. Returns 1 when the walk ended inside a comment. */
/* ch inside '...' or $'...': the closing quote ends it (and is kept when
 * the quotes nest in others) */
static void single_quoted(shctx *c, wordlist *w, char ch)
{
	if (ch == '\'')
		c->n--;
	if (ch != '\'' || c->n)
		put(c, w, ch);
}

/* s[0] of the n left, a character no rule above took: a variable known in
 * vs (outside quotes, or in double quotes) is replaced by its value, split
 * at blanks outside quotes as the shell splits; anything else is itself.
 * Returns the characters used. */
static size_t plain_or_variable(shctx *c, const char *s, size_t n, const vars *vs,
				wordlist *w, char top)
{
	const char *name;
	size_t nl, len = s[0] == '$' && w && (!top || top == CX_DQ) ?
			 var_ref(s, n, &name, &nl) : 0;
	const char *val = len ? lookup(vs, name, nl) : NULL;
	if (!val) {
		put(c, w, s[0]);
		return 1;
	}
	for (const char *p = val; *p && c->err == WALK_OK; p++)
		if (!top && isspace((unsigned char)*p))
			end_word(c, w);
		else
			put(c, w, *p);
	CAPSIM_ASSERT(len >= 1 && len <= n);
	return len;
}

static int walk(shctx *c, const char *s, size_t n, const vars *vs, wordlist *w)
{
	for (size_t i = 0; i < n && c->err == WALK_OK;) {
		char ch = s[i], top = c->n ? c->kind[c->n - 1] : 0;
		size_t step = 1;
		if (ch == '\n')
			c->cur_line++;
		if (top == CX_SQ) {
			single_quoted(c, w, ch);
		} else if (ch == '\\' && i + 1 < n) {
			/* escaped: the backslash goes outside quotes and before $ ` " \ in
			 * double quotes; elsewhere it stays */
			if (!(c->n == 0 || (top == CX_DQ && strchr("$`\"\\", s[i + 1])) ||
			      (top == CX_ANSI && s[i + 1] == '\'')))
				put(c, w, ch);
			put(c, w, s[i + 1]);
			step = 2;
		} else if (top == CX_ANSI) {
			single_quoted(c, w, ch);
		} else if (ch == '#' && top != CX_DQ && word_start(c->prev)) {
			/* a comment, to the end of the line */
			const char *e = memchr(s + i, '\n', n - i);
			if (!e)
				return 1;
			step = (size_t)(e - (s + i));
		} else if (!top && isspace((unsigned char)ch)) {
			end_word(c, w);
		} else if (!top && w && !w->in_word && (ch == '[' || ch == ']' || ch == ',')) {
			/* list punctuation between words */
		} else if (!top && w && w->in_word && (ch == ',' || ch == ']') &&
			   (i + 1 == n || isspace((unsigned char)s[i + 1]) || s[i + 1] == ']' ||
			    s[i + 1] == ',')) {
			end_word(c, w);
		} else if (ch == '\'' && top != CX_DQ) {
			if (top)
				put(c, w, ch);
			else if (w)
				w->in_word = 1;
			push(c, CX_SQ);
		} else if (ch == '"') {
			if (top == CX_DQ)
				c->n--;
			else
				push(c, CX_DQ);
			if (c->n > (top == CX_DQ ? 0 : 1))
				put(c, w, ch);
			else if (w)
				w->in_word = 1;
		} else if (ch == '`') {
			if (top == CX_TICK)
				c->n--;
			else
				push(c, CX_TICK);
			put(c, w, ch);
		} else if (ch == '$' && i + 1 < n && s[i + 1] == '\'' && top != CX_DQ) {
			if (top)
				put(c, w, ch), put(c, w, '\'');
			else if (w)
				w->in_word = 1;
			push(c, CX_ANSI);
			step = 2;
		} else if (ch == '$' && i + 1 < n && s[i + 1] == '(') {
			push(c, CX_SUB);
			put(c, w, ch);
			put(c, w, '(');
			step = 2;
		} else if (ch == '(' && (top == CX_SUB || (!top && c->prev == '='))) {
			push(c, top ? CX_SUB : CX_ARRAY);
			put(c, w, ch);
		} else if (ch == ')' && (top == CX_SUB || top == CX_ARRAY)) {
			c->n--;
			put(c, w, ch);
		} else if (!top && !w && ch == '<' && i + 1 < n && s[i + 1] == '<') {
			/* <<EOF a here-document; <<< a here-string, no more */
			if (i + 2 < n && s[i + 2] == '<')
				step = 3;
			else
				heredoc(c, s + i + 2, n - i - 2), step = 2;
		} else {
			step = plain_or_variable(c, s + i, n - i, vs, w, top);
		}
		c->prev = s[i + step - 1];
		i += step;
	}
	return 0;
}

/* ---- the lines of a script -------------------------------------------------------- */

typedef struct {
	const char *text, *file;
	size_t len, pos;
	long line;          /* the next physical line's number */
	int yaml;
	char *buf;          /* the logical line */
	size_t bl, bcap;
	long first;         /* its first physical line */
	shctx c;            /* the quoting at the end of the last logical line */
	int in_heredoc;
	int body;           /* the logical line is a here-document's */
	size_t expanded;    /* bytes of every line's words so far */
	capsim_diags *d;
	int failed;
} reader;

static void refuse(reader *r, long line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void refuse(reader *r, long line, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	capsim_diags_add(r->d, r->file, line, "%s", msg);
	r->failed = 1;
}

/* the next physical line (without its newline, trailing CR and blanks) */
static void physical(reader *r, const char **s, size_t *n)
{
	const char *start = r->text + r->pos;
	const char *e = memchr(start, '\n', r->len - r->pos);
	size_t l = e ? (size_t)(e - start) : r->len - r->pos;
	r->pos += l + (e != NULL);
	r->line++;
	while (l && (start[l - 1] == '\r' || start[l - 1] == ' '))
		l--;
	*s = start;
	*n = l;
}

static void append(reader *r, const char *s, size_t n)
{
	if (r->failed)
		return;
	if (r->bl + n > CAPSIM_LAUNCH_MAX_LINE) {
		refuse(r, r->first, "a logical line (lines joined by a backslash, an open quote, "
		       "$( or array) is longer than %u bytes, the limit on a line of a launch "
		       "script",
		       CAPSIM_LAUNCH_MAX_LINE);
		return;
	}
	if (r->bl + n + 1 > r->bcap) {
		r->bcap = 2 * (r->bl + n + 1);
		r->buf = capsim_xrealloc(r->buf, r->bcap);
	}
	memcpy(r->buf + r->bl, s, n);
	r->bl += n;
	r->buf[r->bl] = '\0';
}

static int launcher_word(const char *s)
{
	return strstr(s, "torchrun") || strcmp(s, "srun") == 0 || strstr(s, "python") ||
	       strstr(s, "pretrain_") || strcmp(s, "deepspeed") == 0 ||
	       strncmp(s, "trainer.", 8) == 0;
}

static int launcher_line(const char *s)
{
	return strstr(s, "torchrun") || strstr(s, "srun ") || strstr(s, "python") ||
	       strstr(s, "pretrain_") || strstr(s, "deepspeed ") || strstr(s, "trainer.");
}

/* a YAML launch line goes on over the lines indented further that are not
 * keys of their own */
static void yaml_continue(reader *r)
{
	size_t indent = strspn(r->buf, " \t");
	while (!r->failed && r->pos < r->len && r->bl && r->buf[r->bl - 1] != ']') {
		const char *nx = r->text + r->pos;
		const char *e = memchr(nx, '\n', r->len - r->pos);
		size_t l = e ? (size_t)(e - nx) : r->len - r->pos;
		size_t ni = 0;
		while (ni < l && (nx[ni] == ' ' || nx[ni] == '\t'))
			ni++;
		size_t wl = ni;
		while (wl < l && nx[wl] != ' ')
			wl++;
		int key = wl > ni && nx[wl - 1] == ':' && (wl == l || nx[wl] == ' ');
		if (ni <= indent || ni == l || nx[ni] == '#' || key)
			break;
		const char *s;
		size_t n;
		physical(r, &s, &n);
		append(r, " ", 1);
		append(r, s + ni, n > ni ? n - ni : 0);
	}
}

/* the next logical line into r->buf: 1, or 0 at the end (or on a refusal) */
static int next_line(reader *r)
{
	if (r->failed || r->pos >= r->len)
		return 0;
	r->bl = 0;
	append(r, "", 0);
	r->first = r->line;
	r->body = r->in_heredoc;
	if (r->in_heredoc) {
		/* a here-document's body: lines as they are, to its delimiter */
		const char *s;
		size_t n;
		physical(r, &s, &n);
		size_t t = 0;
		while (r->c.heredoc_tabs && t < n && s[t] == '\t')
			t++;
		if (n - t == strlen(r->c.heredoc) && memcmp(s + t, r->c.heredoc, n - t) == 0)
			r->in_heredoc = 0;
		else
			append(r, s, n);
		return !r->failed;
	}
	r->c.prev = 0;
	r->c.heredoc[0] = '\0';
	for (;;) {
		const char *s;
		size_t n;
		physical(r, &s, &n);
		if (memchr(s, '\0', n)) {
			refuse(r, r->line - 1, "a NUL byte: a launch script is text");
			return 0;
		}
		char top = r->c.n ? r->c.kind[r->c.n - 1] : 0;
		int more = n && s[n - 1] == '\\' && top != CX_SQ;
		size_t from = r->bl;
		append(r, s, n - (size_t)more);
		if (r->failed)
			return 0;
		if (!r->yaml) {
			r->c.cur_line = r->line - 1;
			if (walk(&r->c, r->buf + from, r->bl - from, NULL, NULL))
				more = 0; /* a backslash in a comment continues nothing */
			if (r->c.err == WALK_NESTING) {
				refuse(r, r->line - 1, "quotes, $( and backticks nested more than "
				       "%d deep, the limit of a launch script",
				       CAPSIM_LAUNCH_MAX_NESTING);
				return 0;
			}
		}
		if (!more && r->c.n == 0)
			break;
		if (r->pos >= r->len) {
			if (r->c.n) {
				refuse(r, r->c.line[r->c.n - 1], "unterminated %s: the file ends "
				       "before it is closed (bash stops here with a syntax error)",
				       kind_name(r->c.kind[r->c.n - 1]));
				return 0;
			}
			break;
		}
		append(r, more ? " " : "\n", 1);
		r->c.prev = more ? ' ' : '\n';
	}
	if (r->c.heredoc[0])
		r->in_heredoc = 1;
	if (r->yaml && launcher_line(r->buf))
		yaml_continue(r);
	return !r->failed;
}

/* the words of s (a part of the logical line): -1 after the reason */
static int words(reader *r, const char *s, const vars *vs, wordlist *w)
{
	memset(w, 0, sizeof *w);
	shctx c = { .cur_line = r->first };
	walk(&c, s, strlen(s), vs, w);
	end_word(&c, w);
	if (c.err == WALK_LONG)
		refuse(r, r->first, "the line's words, its variables expanded, pass %u bytes, the "
		       "limit on a line of a launch script", CAPSIM_LAUNCH_MAX_LINE);
	else if (c.err == WALK_NESTING)
		refuse(r, r->first, "quotes, $( and backticks nested more than %d deep, the limit "
		       "of a launch script", CAPSIM_LAUNCH_MAX_NESTING);
	else if (c.n)
		refuse(r, c.line[c.n - 1], "unterminated %s: the line ends before it is closed "
		       "(bash stops here with a syntax error)", kind_name(c.kind[c.n - 1]));
	else if ((r->expanded += w->total) > CAPSIM_LAUNCH_MAX_EXPANDED)
		refuse(r, r->first, "the script's lines, their variables expanded, pass %u bytes "
		       "together, the limit of a launch script", CAPSIM_LAUNCH_MAX_EXPANDED);
	if (!r->failed)
		return 0;
	free_words(w);
	return -1;
}

/* NAME=value (or export NAME=value) alone on a line: 1 with the pair kept,
 * 0 when the line is not one, -1 after a refusal */
static int assignment(reader *r, vars *vs, const char *line)
{
	const char *p = line;
	while (isspace((unsigned char)*p))
		p++;
	if (strncmp(p, "export ", 7) == 0)
		p += 7;
	const char *n = p;
	if (!isalpha((unsigned char)*n) && *n != '_')
		return 0;
	while (isalnum((unsigned char)*p) || *p == '_')
		p++;
	if (*p != '=')
		return 0;
	const char *value = p + 1;
	char *inner = NULL;
	if (*value == '(') {
		/* a bash array, whole on the joined line: its words */
		const char *close = strrchr(value, ')');
		inner = capsim_xasprintf("%.*s", close ? (int)(close - value - 1) : (int)strlen(value + 1),
					 value + 1);
		value = inner;
	}
	wordlist w;
	int bad = words(r, value, vs, &w);
	free(inner);
	if (bad)
		return -1;
	/* the value: its words (quotes dropped) joined by spaces */
	char *val = capsim_xmalloc(w.total + 1), *q = val;
	for (int i = 0; i < w.n; i++) {
		size_t wl = strlen(w.v[i]);
		if (i)
			*q++ = ' ';
		memcpy(q, w.v[i], wl);
		q += wl;
	}
	*q = '\0';
	free_words(&w);
	set_var(vs, n, (size_t)(p - n), val);
	return 1;
}

void capsim_launch_init(capsim_launch *l)
{
	memset(l, 0, sizeof *l);
	l->zero = l->sequence_parallel = l->tp_comm_overlap = -1;
	l->swiglu = l->rmsnorm = l->rope = l->untied = -1;
}

/* a Kubernetes Job or another YAML document, not a shell script */
static int is_yaml(const char *text, size_t len, const char *file)
{
	size_t fl = strlen(file);
	if ((fl > 5 && strcmp(file + fl - 5, ".yaml") == 0) ||
	    (fl > 4 && strcmp(file + fl - 4, ".yml") == 0))
		return 1;
	for (size_t i = 0; i < len;) {
		const char *e = memchr(text + i, '\n', len - i);
		size_t l = e ? (size_t)(e - (text + i)) : len - i;
		const char *s = text + i;
		if (l && s[0] != '#' && !isspace((unsigned char)s[0]))
			return (l >= 11 && strncmp(s, "apiVersion:", 11) == 0) ||
			       (l >= 5 && strncmp(s, "kind:", 5) == 0) ||
			       (l >= 3 && strncmp(s, "---", 3) == 0);
		i += l + 1;
	}
	return 0;
}

/* one logical line of a script */
static void script_line(reader *r, vars *vs, capsim_launch *l)
{
	char *where = capsim_xasprintf("%s:%ld", r->file, r->first);
	const char *p = r->buf;
	while (isspace((unsigned char)*p))
		p++;
	wordlist w;
	if (r->body && !launcher_line(p)) {
		/* a here-document's text that runs nothing capsim reads */
	} else if (strncmp(p, "#SBATCH", 7) == 0) {
		if (words(r, p + 7, NULL, &w) == 0) {
			capsim_launch_argv(w.v, w.n, where, l, r->d);
			free_words(&w);
		}
	} else if (*p == '#' || !*p) {
		/* a comment */
	} else if (assignment(r, vs, p) != 0) {
		/* kept for what follows (or refused) */
	} else {
		/* Kubernetes: nvidia.com/gpu: 8 */
		const char *g = strstr(p, "nvidia.com/gpu:");
		if (g && !l->gpus_per_node) {
			g += 15;
			while (*g == ' ' || *g == '"' || *g == '\'')
				g++;
			char num[24];
			size_t k = strspn(g, "0123456789");
			int nk = (int)(k < sizeof num ? k : sizeof num - 1);
			snprintf(num, sizeof num, "%.*s", nk, g);
			whole("nvidia.com/gpu", k < sizeof num ? num : g, &l->gpus_per_node, where,
			      r->d);
		}
		if ((!r->yaml || launcher_line(p)) && words(r, p, vs, &w) == 0) {
			int at = -1, launcher = 0;
			for (int i = 0; i < w.n; i++) {
				if (at < 0 && strstr(w.v[i], "torchrun"))
					at = i;
				launcher |= launcher_word(w.v[i]);
			}
			if (launcher) {
				at = at < 0 ? 0 : at;
				capsim_launch_argv(w.v + at, w.n - at, where, l, r->d);
				l->found_launcher = 1;
			}
			free_words(&w);
		}
	}
	free(where);
}

int capsim_launch_script(const char *text, size_t len, const char *file, capsim_launch *l,
			 capsim_diags *d)
{
	capsim_launch_init(l);
	size_t before = d->n;
	if (len > CAPSIM_LAUNCH_MAX_BYTES) {
		capsim_diags_add(d, file, 0, "%zu bytes: larger than the %u-byte (8 MiB) cap on "
				 "input files", len, CAPSIM_LAUNCH_MAX_BYTES);
		return -1;
	}
	reader r = { .text = text, .file = file, .len = len, .line = 1, .d = d,
		     .yaml = is_yaml(text, len, file) };
	vars vs = { 0 };
	while (next_line(&r)) {
		script_line(&r, &vs, l);
		if (r.failed)
			break;
	}
	free_vars(&vs);
	free(r.buf);
	if (d->n == before && !l->found_launcher) {
		capsim_diags_add(d, file, 0, "no launch line found (torchrun, srun, python, a Megatron-LM "
				 "or NeMo command)");
		return -1;
	}
	return d->n == before ? 0 : -1;
}
