/* launch.c - launch lines and scripts into a workload and cluster size; see
 * launch.h. Flag names are Megatron-LM's (megatron/training/arguments.py),
 * torchrun's, srun's and sbatch's; overrides NeMo's (key=value). */
#include "launch.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "xalloc.h"

static void note(capsim_launch *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(capsim_launch *l, const char *fmt, ...)
{
	if (l->n_notes == CAPSIM_LAUNCH_NOTES)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(l->notes[l->n_notes], sizeof l->notes[0], fmt, ap);
	va_end(ap);
	for (int i = 0; i < l->n_notes; i++)
		if (strcmp(l->notes[i], l->notes[l->n_notes]) == 0)
			return; /* once each */
	l->n_notes++;
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
	"--exclusive",
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

/* a whole number: -1 after the message */
static int whole(const char *flag, const char *v, long *out, const char *where, capsim_diags *d)
{
	char *end;
	long x = v ? strtol(v, &end, 10) : 0;
	if (!v || !*v || *end || x < 0) {
		capsim_diags_add_at(d, where, "%s: expected a whole number, found '%s'", flag,
				    v ? v : "nothing");
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
	case F_SWIGLU: case F_UNTIE:
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

typedef struct {
	char *name, *value;
} var;

typedef struct {
	var *v;
	size_t n;
} vars;

static const char *lookup(const vars *vs, const char *name, size_t len)
{
	for (size_t i = vs->n; i-- > 0;)
		if (strlen(vs->v[i].name) == len && strncmp(vs->v[i].name, name, len) == 0)
			return vs->v[i].value;
	return NULL;
}

/* s with $NAME and ${NAME} of vs expanded (others kept as written) */
static char *expand(const vars *vs, const char *s)
{
	size_t cap = strlen(s) * 2 + 64, n = 0;
	char *out = capsim_xmalloc(cap);
	for (const char *p = s; *p;) {
		const char *val = NULL;
		size_t skip = 0;
		if (p[0] == '$' && p[1] == '{') {
			const char *e = strchr(p, '}');
			if (e) {
				/* ${NAME} and a bash array's ${NAME[@]} */
				size_t nl = (size_t)(e - p - 2);
				if (nl > 3 && strncmp(e - 3, "[@]", 3) == 0)
					nl -= 3;
				val = lookup(vs, p + 2, nl);
				skip = (size_t)(e - p + 1);
			}
		} else if (p[0] == '$' && (isalpha((unsigned char)p[1]) || p[1] == '_')) {
			const char *e = p + 1;
			while (isalnum((unsigned char)*e) || *e == '_')
				e++;
			val = lookup(vs, p + 1, (size_t)(e - p - 1));
			skip = (size_t)(e - p);
		}
		const char *add = val ? val : p;
		size_t al = val ? strlen(val) : 1;
		if (!val)
			skip = 1;
		if (n + al + 1 > cap) {
			cap = (n + al + 1) * 2;
			out = capsim_xrealloc(out, cap);
		}
		memcpy(out + n, add, al);
		n += al;
		p += skip;
	}
	out[n] = '\0';
	return out;
}

/* shell-like words of s: quotes grouped and dropped; YAML and JSON list
 * punctuation ([ ] , around quoted words) dropped too */
static int words(const char *s, char ***out)
{
	int n = 0, cap = 16;
	char **v = capsim_xcalloc((size_t)cap, sizeof *v);
	const char *p = s;
	for (;;) {
		while (*p && (isspace((unsigned char)*p) || *p == '[' || *p == ']' || *p == ','))
			p++;
		if (!*p)
			break;
		size_t wl = 0, wcap = 64;
		char *w = capsim_xmalloc(wcap);
		while (*p && !isspace((unsigned char)*p)) {
			char c = *p;
			if (c == '\'' || c == '"') {
				const char *e = strchr(p + 1, c);
				if (!e)
					e = p + strlen(p);
				for (const char *q = p + 1; q < e; q++) {
					if (wl + 2 > wcap)
						w = capsim_xrealloc(w, wcap *= 2);
					w[wl++] = *q;
				}
				p = *e ? e + 1 : e;
				continue;
			}
			if ((c == ',' || c == ']') && (p[1] == '\0' || isspace((unsigned char)p[1]) ||
						       p[1] == ']' || p[1] == ','))
				break;
			if (wl + 2 > wcap)
				w = capsim_xrealloc(w, wcap *= 2);
			w[wl++] = c;
			p++;
		}
		w[wl] = '\0';
		if (n == cap)
			v = capsim_xrealloc(v, (size_t)(cap *= 2) * sizeof *v);
		v[n++] = w;
	}
	*out = v;
	return n;
}

static void free_words(char **w, int n)
{
	for (int i = 0; i < n; i++)
		free(w[i]);
	free(w);
}

/* NAME=value (or export NAME=value) alone on a line: 1 with the pair kept */
static int assignment(vars *vs, const char *line)
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
	char *ex = expand(vs, value);
	char **w;
	int nw = words(ex, &w);
	free(ex);
	free(inner);
	/* the value: its words (quotes dropped) joined by spaces */
	size_t len = 1;
	for (int i = 0; i < nw; i++)
		len += strlen(w[i]) + 1;
	char *val = capsim_xcalloc(len, 1);
	for (int i = 0; i < nw; i++) {
		if (i)
			strcat(val, " ");
		strcat(val, w[i]);
	}
	free_words(w, nw);
	vs->v = capsim_xrealloc(vs->v, (vs->n + 1) * sizeof *vs->v);
	vs->v[vs->n].name = capsim_xasprintf("%.*s", (int)(p - n), n);
	vs->v[vs->n].value = val;
	vs->n++;
	return 1;
}

static int launcher_line(const char *s)
{
	return strstr(s, "torchrun") || strstr(s, "srun ") || strstr(s, "python") ||
	       strstr(s, "pretrain_") || strstr(s, "deepspeed ") || strstr(s, "trainer.");
}

void capsim_launch_init(capsim_launch *l)
{
	memset(l, 0, sizeof *l);
	l->zero = l->sequence_parallel = l->tp_comm_overlap = -1;
	l->swiglu = l->rmsnorm = l->rope = l->untied = -1;
}

int capsim_launch_script(const char *text, size_t len, const char *file, capsim_launch *l,
			 capsim_diags *d)
{
	capsim_launch_init(l);
	vars vs = { 0 };
	size_t before = d->n;
	/* the lines, each its own string */
	char *buf = capsim_xmalloc(len + 1);
	memcpy(buf, text, len);
	buf[len] = '\0';
	size_t n_lines = 1;
	for (size_t i = 0; i < len; i++)
		n_lines += buf[i] == '\n';
	char **lines = capsim_xcalloc(n_lines, sizeof *lines);
	size_t nl = 0;
	for (char *p = buf;;) {
		lines[nl++] = p;
		char *e = strchr(p, '\n');
		if (!e)
			break;
		*e = '\0';
		p = e + 1;
	}
	char *joined = capsim_xcalloc(len + n_lines + 2, 1);
	for (size_t i = 0; i < nl; i++) {
		long first_line = (long)i + 1;
		joined[0] = '\0';
		/* backslash continuations, and a bash array to its ')' */
		for (;;) {
			char *ln = lines[i];
			size_t ll = strlen(ln);
			while (ll && (ln[ll - 1] == '\r' || ln[ll - 1] == ' '))
				ln[--ll] = '\0';
			int more = ll && ln[ll - 1] == '\\';
			if (more)
				ln[ll - 1] = ' ';
			strcat(joined, ln);
			const char *open = strstr(joined, "=(");
			if (!more && open && !strchr(open, ')') && i + 1 < nl) {
				strcat(joined, " ");
				i++;
				continue;
			}
			if (!more || i + 1 >= nl)
				break;
			i++;
		}
		/* a YAML list item or value that runs a launcher goes on over the
		 * lines indented further that are not keys of their own */
		if (launcher_line(joined)) {
			size_t indent = strspn(joined, " \t");
			while (i + 1 < nl) {
				const char *nx = lines[i + 1];
				size_t ni = strspn(nx, " \t");
				const char *colon = strstr(nx, ": ");
				int key = colon && strcspn(nx + ni, " ") > (size_t)(colon - nx - ni);
				if (ni <= indent || !nx[ni] || nx[ni] == '#' || key ||
				    joined[strlen(joined) - 1] == ']')
					break;
				strcat(joined, " ");
				strcat(joined, nx + ni);
				i++;
			}
		}
		char where[1100];
		snprintf(where, sizeof where, "%s:%ld", file, first_line);
		const char *p = joined;
		while (isspace((unsigned char)*p))
			p++;
		if (strncmp(p, "#SBATCH", 7) == 0) {
			char **w;
			int nw = words(p + 7, &w);
			capsim_launch_argv(w, nw, where, l, d);
			free_words(w, nw);
		} else if (*p == '#' || !*p) {
			/* a comment */
		} else if (assignment(&vs, p)) {
			/* kept for what follows */
		} else {
			char *x = expand(&vs, p);
			/* Kubernetes: nvidia.com/gpu: 8 */
			const char *g = strstr(x, "nvidia.com/gpu:");
			if (g && !l->gpus_per_node)
				l->gpus_per_node = strtol(g + 15, NULL, 10);
			if (launcher_line(x)) {
				const char *at = strstr(x, "torchrun");
				char **w;
				int nw = words(at ? at : x, &w);
				capsim_launch_argv(w, nw, where, l, d);
				l->found_launcher = 1;
				free_words(w, nw);
			}
			free(x);
		}
	}
	free(lines);
	for (size_t i = 0; i < vs.n; i++) {
		free(vs.v[i].name);
		free(vs.v[i].value);
	}
	free(vs.v);
	free(joined);
	free(buf);
	if (d->n == before && !l->found_launcher) {
		capsim_diags_add(d, file, 0, "no launch line found (torchrun, srun, python, a Megatron-LM "
				 "or NeMo command)");
		return -1;
	}
	return d->n == before ? 0 : -1;
}
