/* torchtitan.c - a torchtitan job config read into a launch (torchtitan.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toml.h"
#include "torchtitan.h"

/* the reading: the document, where it came from, and what it gives */
typedef struct tt {
	capsim_toml t;
	const char *file;
	capsim_diags *d;
	capsim_launch *l;
} tt;

static void note(capsim_launch *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(capsim_launch *l, const char *fmt, ...)
{
	if (l->n_notes == CAPSIM_LAUNCH_NOTES) {
		l->n_notes_more++;
		return;
	}
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(l->notes[l->n_notes++], sizeof l->notes[0], fmt, ap);
	va_end(ap);
}

/* key's whole number in [lo, CAPSIM_LAUNCH_MAX_WHOLE] (-1 allowed where
 * minus_one), else def (noted as torchtitan's default); -1 after a
 * diagnostic */
static int whole(tt *r, const char *key, long lo, int minus_one, long def, long *out)
{
	capsim_toml_entry *e = capsim_toml_get(&r->t, key);
	if (!e) {
		*out = def;
		note(r->l, "%s: not in the config; torchtitan's default %ld", key, def);
		return 0;
	}
	if (e->v.kind != CAPSIM_TOML_INT || ((e->v.i < lo || e->v.i > CAPSIM_LAUNCH_MAX_WHOLE) &&
					     !(minus_one && e->v.i == -1))) {
		capsim_diags_add(r->d, r->file, e->line, "%s: expected a whole number of at least "
				 "%ld%s, found %s", key, lo, minus_one ? " (or -1)" : "",
				 e->v.kind == CAPSIM_TOML_INT ? "one out of range" : "another kind");
		return -1;
	}
	*out = (long)e->v.i;
	return 0;
}

/* key's string (def where absent, noted); NULL after a diagnostic */
static const char *text_of(tt *r, const char *key, const char *def, long *line)
{
	capsim_toml_entry *e = capsim_toml_get(&r->t, key);
	*line = e ? e->line : 0;
	if (!e) {
		if (def)
			note(r->l, "%s: not in the config; torchtitan's default \"%s\"", key, def);
		return def;
	}
	if (e->v.kind != CAPSIM_TOML_STRING) {
		capsim_diags_add(r->d, r->file, e->line, "%s: expected a string", key);
		return NULL;
	}
	return e->v.s;
}

/* key's boolean (def where absent); -1 after a diagnostic */
static int flag(tt *r, const char *key, int def)
{
	capsim_toml_entry *e = capsim_toml_get(&r->t, key);
	if (!e)
		return def;
	if (e->v.kind != CAPSIM_TOML_BOOL) {
		capsim_diags_add(r->d, r->file, e->line, "%s: expected true or false", key);
		return -1;
	}
	return e->v.b;
}

/* the catalog's model for a flavor of llama3 */
static const struct {
	const char *flavor, *model;
} llama3[] = { { "8B", "llama-3.1-8b" }, { "70B", "llama-3.1-70b" },
	       { "405B", "llama-3.1-405b" } };

/* torchtitan's debugmodel (torchtitan/models/llama3/__init__.py: dim 256,
 * 6 layers, 16 heads, vocabulary 2048; the FFN 4 x 256 x 2/3 rounded up to
 * its multiple_of 256: 768; RMSNorm, RoPE, an output layer of its own) */
static void debugmodel(capsim_launch *l)
{
	l->layers = 6, l->hidden = 256, l->heads = 16, l->kv_heads = 16, l->vocab = 2048;
	l->ffn = 768, l->swiglu = 1, l->rmsnorm = 1, l->rope = 1, l->untied = 1;
}

static int read_converters(tt *r);

/* [model]: name, flavor (where *model, the caller's, is NULL), converters */
static int read_model(tt *r, const char **model)
{
	long ln, lf;
	const char *name = text_of(r, "model.name", "llama3", &ln);
	const char *flavor = text_of(r, "model.flavor", "debugmodel", &lf);
	if (!name || !flavor)
		return -1;
	if (*model) { /* the caller's: the config's model is said, not read */
		note(r->l, "model.name \"%s\", flavor \"%s\": planned as the model given, %s",
		     name, flavor, *model);
		return read_converters(r);
	}
	if (strcmp(name, "llama3")) {
		capsim_diags_add(r->d, r->file, ln, "model.name \"%s\": capsim reads torchtitan's "
				 "llama3 (no catalog model for this one); give --model ID", name);
		return -1;
	}
	for (size_t i = 0; i < sizeof llama3 / sizeof llama3[0]; i++)
		if (!strcmp(flavor, llama3[i].flavor))
			*model = llama3[i].model;
	if (!*model && strcmp(flavor, "debugmodel")) {
		capsim_diags_add(r->d, r->file, lf, "model.flavor \"%s\": expected 8B, 70B, 405B or "
				 "debugmodel; give --model ID", flavor);
		return -1;
	}
	if (!*model)
		debugmodel(r->l);
	return read_converters(r);
}

/* model.converters: ["float8"] trains in fp8 with current (tensorwise)
 * scaling, torchao's default recipe */
static int read_converters(tt *r)
{
	capsim_toml_entry *c = capsim_toml_get(&r->t, "model.converters");
	if (!c)
		return 0;
	if (c->v.kind != CAPSIM_TOML_ARRAY) {
		capsim_diags_add(r->d, r->file, c->line, "model.converters: expected an array");
		return -1;
	}
	for (size_t i = 0; i < c->v.n_items; i++) {
		const capsim_toml_value *v = &c->v.items[i];
		if (v->kind != CAPSIM_TOML_STRING || strcmp(v->s, "float8")) {
			capsim_diags_add(r->d, r->file, c->line, "model.converters: expected \"float8\" "
					 "(capsim models no other), found %s", v->kind ==
					 CAPSIM_TOML_STRING ? v->s : "another kind");
			return -1;
		}
	}
	if (c->v.n_items) {
		r->l->dtype = "fp8";
		r->l->fp8_recipe = "current";
	}
	return 0;
}

/* torchtitan's older keys, which its later configs moved: refused, never
 * read as not modelled while the new key's default is taken */
static int older_keys(tt *r)
{
	static const struct {
		const char *key, *now;
	} moved[] = {
		{ "training.batch_size", "training.local_batch_size" },
		{ "training.data_parallel_degree", "[parallelism]" },
		{ "training.data_parallel_replicate_degree", "[parallelism]" },
		{ "training.data_parallel_shard_degree", "[parallelism]" },
		{ "training.tensor_parallel_degree", "[parallelism]" },
		{ "training.pipeline_parallel_degree", "[parallelism]" },
		{ "training.context_parallel_degree", "[parallelism]" },
		{ "training.enable_float8_linear", "model.converters [\"float8\"]" },
		{ "float8.enable_float8_linear", "model.converters [\"float8\"]" },
	};
	int bad = 0;
	for (size_t i = 0; i < sizeof moved / sizeof moved[0]; i++) {
		capsim_toml_entry *e = capsim_toml_get(&r->t, moved[i].key);
		if (e) {
			capsim_diags_add(r->d, r->file, e->line, "%s: torchtitan's older key; "
					 "expected %s", moved[i].key, moved[i].now);
			bad = 1;
		}
	}
	return bad ? -1 : 0;
}

/* [training]: batches, sequence, steps, precision */
static int read_training(tt *r, long *local, long *global)
{
	capsim_launch *l = r->l;
	long steps;
	if (whole(r, "training.local_batch_size", 1, 0, 8, local) < 0 ||
	    whole(r, "training.global_batch_size", 1, 1, -1, global) < 0 ||
	    whole(r, "training.seq_len", 1, 0, 2048, &l->seq_len) < 0 ||
	    whole(r, "training.steps", 1, 0, 10000, &steps) < 0)
		return -1;
	l->micro_batch = *local;
	l->train_iters = steps;
	long line;
	const char *p = text_of(r, "training.mixed_precision_param", "bfloat16", &line);
	if (!p)
		return -1;
	if (strcmp(p, "bfloat16")) {
		capsim_diags_add(r->d, r->file, line, "training.mixed_precision_param \"%s\": capsim "
				 "plans bfloat16 (and fp8) training; expected \"bfloat16\"", p);
		return -1;
	}
	if (!l->dtype)
		l->dtype = "bf16";
	return 0;
}

/* torchtitan's pipeline schedules (torch.distributed.pipelining's
 * get_schedule_class names) and capsim's: GPipe, 1F1B and Interleaved1F1B
 * as they are; the others, whose order or split backward capsim does not
 * model, planned as the nearest capsim schedule and listed as not modelled */
static const struct {
	const char *name, *plan; /* plan: "gpipe", "1f1b" or "interleaved" */
	const char *why;         /* NULL: modelled; else why it is not */
} schedules[] = {
	{ "GPipe", "gpipe", NULL },
	{ "1F1B", "1f1b", NULL },
	{ "Interleaved1F1B", "interleaved", NULL },
	{ "LoopedBFS", "interleaved", "its breadth-first order over looped stages" },
	{ "InterleavedZeroBubble", "interleaved", "zero bubble: the backward split in two" },
	{ "ZBVZeroBubble", "interleaved", "zero bubble, two stages a rank in a V" },
	{ "DualPipeV", "interleaved", "DualPipe's overlapped forward and backward in a V" },
};

/* the pipeline schedule (pp stages): one of the table above; a looped one
 * with two stages a rank (torchtitan's default for looped schedules) */
static int read_schedule(tt *r, long pp)
{
	long line;
	const char *s = text_of(r, "parallelism.pipeline_parallel_schedule", NULL, &line);
	if (!s)
		return line ? -1 : 0;
	if (pp == 1) {
		note(r->l, "parallelism.pipeline_parallel_schedule \"%s\": no pipeline (degree 1)", s);
		return 0;
	}
	for (size_t i = 0; i < sizeof schedules / sizeof schedules[0]; i++) {
		if (strcmp(s, schedules[i].name))
			continue;
		if (!strcmp(schedules[i].plan, "gpipe"))
			r->l->schedule = "gpipe";
		if (!strcmp(schedules[i].plan, "interleaved")) {
			r->l->vp_stages = 2;
			note(r->l, "parallelism.pipeline_parallel_schedule %s: 2 stages a rank assumed "
			     "(torchtitan's default for looped schedules)", s);
		}
		if (schedules[i].why)
			note(r->l, "parallelism.pipeline_parallel_schedule %s not modelled (%.80s): "
			     "planned as interleaved 1F1B", s, schedules[i].why);
		return 0;
	}
	capsim_diags_add(r->d, r->file, line, "parallelism.pipeline_parallel_schedule \"%s\": "
			 "expected GPipe, 1F1B, Interleaved1F1B, LoopedBFS, InterleavedZeroBubble, "
			 "ZBVZeroBubble or DualPipeV", s);
	return -1;
}

/* [parallelism]: the degrees over the GPUs, FSDP's sharding, async TP */
static int read_parallelism(tt *r, long gpus, long *dp)
{
	capsim_launch *l = r->l;
	long rep, shard, ep;
	capsim_toml_entry *se = capsim_toml_get(&r->t, "parallelism.data_parallel_shard_degree");
	if (whole(r, "parallelism.data_parallel_replicate_degree", 1, 0, 1, &rep) < 0 ||
	    whole(r, "parallelism.data_parallel_shard_degree", 1, 1, -1, &shard) < 0 ||
	    whole(r, "parallelism.tensor_parallel_degree", 1, 0, 1, &l->tp) < 0 ||
	    whole(r, "parallelism.pipeline_parallel_degree", 1, 0, 1, &l->pp) < 0 ||
	    whole(r, "parallelism.context_parallel_degree", 1, 0, 1, &l->cp) < 0 ||
	    whole(r, "parallelism.expert_parallel_degree", 1, 0, 1, &ep) < 0)
		return -1;
	l->ep = ep;
	/* each degree is at most CAPSIM_LAUNCH_MAX_WHOLE: the product in double */
	double rest = (double)rep * (double)l->tp * (double)l->pp * (double)l->cp;
	char given[32] = "-1 (the rest)";
	if (shard != -1)
		snprintf(given, sizeof given, "%ld", shard);
	else
		shard = rest <= (double)gpus && gpus % (long)rest == 0 ? gpus / (long)rest : 0;
	if (!shard || rest * (double)shard != (double)gpus) {
		capsim_diags_add(r->d, r->file, se ? se->line : 0, "parallelism: replicate %ld x "
				 "shard %s x tp %ld x pp %ld x cp %ld is not the %ld GPUs (give "
				 "--nodes)", rep, given, l->tp, l->pp, l->cp, gpus);
		return -1;
	}
	*dp = rep * shard;
	l->framework = "fsdp2";
	long line;
	const char *reshard = text_of(r, "parallelism.fsdp_reshard_after_forward", NULL, &line);
	if (!reshard && line)
		return -1;
	l->fsdp_zero = shard == 1 ? 0 : reshard && !strcmp(reshard, "never") ? 2 : 3;
	if (rep > 1 && shard > 1)
		note(l, "parallelism: HSDP (replicate %ld x shard %ld) planned as ZeRO %d over all "
		     "%ld data-parallel ranks", rep, shard, l->fsdp_zero, *dp);
	if (reshard && strcmp(reshard, "never") && strcmp(reshard, "default") &&
	    strcmp(reshard, "always"))
		note(l, "parallelism.fsdp_reshard_after_forward \"%s\": not modelled", reshard);
	/* torchtitan's tensor parallelism shards the norms and the residual
	 * stream over the sequence: its TP plan's SequenceParallel layers
	 * (torchtitan/models/llama3/infra/parallelize.py, apply_tp) */
	if (l->tp > 1)
		l->sequence_parallel = 1;
	int async_tp = flag(r, "parallelism.enable_async_tensor_parallel", 0);
	if (async_tp < 0)
		return -1;
	if (async_tp)
		l->tp_comm_overlap = 1;
	return read_schedule(r, l->pp);
}

/* the global batch: local x data-parallel, or training.global_batch_size
 * where set (a multiple of it: gradient accumulation) */
static int global_batch(tt *r, long local, long global, long dp)
{
	double step = (double)local * (double)dp;
	if (global == -1) {
		if (step > (double)CAPSIM_LAUNCH_MAX_WHOLE) {
			capsim_diags_add(r->d, r->file, 0, "training: local batch %ld x data-parallel "
					 "%ld is past %ld", local, dp, CAPSIM_LAUNCH_MAX_WHOLE);
			return -1;
		}
		r->l->global_batch = (long)step;
		return 0;
	}
	if ((double)global < step || global % (local * dp)) {
		capsim_toml_entry *e = capsim_toml_get(&r->t, "training.global_batch_size");
		capsim_diags_add(r->d, r->file, e ? e->line : 0, "training.global_batch_size %ld: "
				 "expected a multiple of local_batch_size %ld x data-parallel %ld",
				 global, local, dp);
		return -1;
	}
	r->l->global_batch = global;
	return 0;
}

/* [activation_checkpoint] mode and [compile] enable */
static int read_execution(tt *r)
{
	long line;
	const char *mode = text_of(r, "activation_checkpoint.mode", "selective", &line);
	if (!mode)
		return -1;
	if (strcmp(mode, "none") && strcmp(mode, "selective") && strcmp(mode, "full")) {
		capsim_diags_add(r->d, r->file, line, "activation_checkpoint.mode \"%s\": expected "
				 "none, selective or full", mode);
		return -1;
	}
	r->l->recompute = !strcmp(mode, "none") ? "none" : !strcmp(mode, "full") ? "full" :
			  "selective";
	if (!strcmp(mode, "selective"))
		note(r->l, "activation_checkpoint.mode selective: planned as capsim's selective "
		     "recomputation (the attention's core), an assumption for torchtitan's policy");
	int compiled = flag(r, "compile.enable", 0);
	int older = flag(r, "training.compile", 0); /* torchtitan's older key */
	if (compiled < 0 || older < 0)
		return -1;
	compiled |= older;
	r->l->execution = compiled ? "compiled" : "eager";
	return 0;
}

/* [optimizer] name: AdamW (or Adam) is what capsim plans (two fp32 states
 * a parameter); another is planned so, and said */
static int read_optimizer(tt *r)
{
	long line;
	const char *name = text_of(r, "optimizer.name", "AdamW", &line);
	if (!name)
		return -1;
	if (strcmp(name, "AdamW") && strcmp(name, "Adam"))
		note(r->l, "optimizer.name \"%s\": not modelled; planned with AdamW's two states "
		     "a parameter", name);
	return 0;
}

/* each key not read, by table: "[metrics] not modelled: log_freq,
 * enable_tensorboard" (a note of at most ~150 characters each) */
static void unread(tt *r)
{
	char line[160] = "";
	char table[160] = "";
	for (size_t k = 0; k < r->t.n; k++) {
		const capsim_toml_entry *e = &r->t.e[k];
		if (e->used)
			continue;
		const char *dot = strrchr(e->key, '.');
		int tl = dot ? (int)(dot - e->key) : 0;
		const char *name = dot ? dot + 1 : e->key;
		int same = (int)strlen(table) == tl && !strncmp(table, e->key, (size_t)tl);
		if (*line && (!same || strlen(line) + strlen(name) + 2 > 150)) {
			note(r->l, "%s", line);
			*line = '\0';
		}
		if (!*line) {
			snprintf(table, sizeof table, "%.*s", tl, e->key);
			snprintf(line, sizeof line, "[%s] not modelled: %.100s", table, name);
		} else {
			size_t n = strlen(line);
			snprintf(line + n, sizeof line - n, ", %s", name);
		}
	}
	if (*line)
		note(r->l, "%s", line);
}

int capsim_torchtitan_read_doc(capsim_toml *t, const char *file, long nodes, int node_gpus,
			       capsim_launch *l, const char **model, capsim_diags *d)
{
	tt r = { .t = *t, .file = file, .d = d, .l = l };
	l->nodes = nodes;
	l->found_launcher = 1;
	long local, global, dp;
	int rc = older_keys(&r) < 0 || read_model(&r, model) < 0 ||
		 read_training(&r, &local, &global) < 0 ||
		 read_parallelism(&r, (nodes ? nodes : 1) * (long)node_gpus, &dp) < 0 ||
		 global_batch(&r, local, global, dp) < 0 || read_execution(&r) < 0 ||
		 read_optimizer(&r) < 0 ? -1 : 0;
	if (!rc)
		unread(&r);
	*t = r.t; /* its keys marked read */
	return rc;
}

int capsim_torchtitan_read(const char *text, size_t len, const char *file, long nodes,
			   int node_gpus, capsim_launch *l, const char **model, capsim_diags *d)
{
	capsim_launch_init(l);
	capsim_toml t;
	if (capsim_toml_parse(text, len, file, &t, d) < 0)
		return -1;
	int rc = capsim_torchtitan_read_doc(&t, file, nodes, node_gpus, l, model, d);
	capsim_toml_free(&t);
	return rc;
}
