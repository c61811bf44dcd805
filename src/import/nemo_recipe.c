/* nemo_recipe.c - NeMo 2.0's pre-training recipes a launch names (`nemo llm
 * pretrain --factory llama3_8b`, `--factory "llama3_8b(num_nodes=2)"`,
 * `recipe=llama3_8b`): the recipe's defaults read into the launch before the
 * launch's own overrides (trainer.strategy.tensor_model_parallel_size=2 ...),
 * which the launch reader reads next (launch_conf.h). */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch_conf.h"
#include "xalloc.h"

/* The commit of github.com/NVIDIA/NeMo the table is read from: each row is
 * nemo/collections/llm/recipes/NAME.py there, its pretrain_recipe()'s
 * num_nodes and num_gpus_per_node and its MockDataModule's seq_length,
 * global_batch_size and micro_batch_size, with the trainer() defaults it
 * keeps (tensor, pipeline, virtual pipeline, context, expert parallelism,
 * sequence parallelism, max_steps 1168251); every recipe below trains in
 * bf16_mixed with distributed_fused_adam_with_cosine_annealing, whose
 * OptimizerConfig sets use_distributed_optimizer=True (ZeRO 1). */
#define NEMO_COMMIT "8cfedd7203462cb251a914e700e5605444277561"

typedef struct recipe {
	const char *name, *model; /* the recipe, and the catalog's model of its model() */
	long nodes, gpn, tp, pp, vp, cp, ep;
	int sp;
	long seq, gbs, mbs, steps;
} recipe;

static const recipe recipes[] = {
	/* llama2_7b.py: trainer(tensor_parallelism=2); MockDataModule(4096, 512, 1) */
	{ "llama2_7b", "llama-2-7b", 1, 8, 2, 1, 0, 1, 1, 0, 4096, 512, 1, 1168251 },
	/* llama3_8b.py: trainer(context_parallelism=2); (8192, 512, 1); Llama3Config8B
	 * is the catalog's Llama 3.1 8B's architecture */
	{ "llama3_8b", "llama-3.1-8b", 1, 8, 1, 1, 0, 2, 1, 0, 8192, 512, 1, 1168251 },
	/* llama3_70b.py: trainer(4, 4, virtual 5, context 2, sequence parallel) */
	{ "llama3_70b", "llama-3.1-70b", 1, 8, 4, 4, 5, 2, 1, 1, 8192, 512, 1, 1168251 },
	/* llama31_8b.py: as llama3_8b */
	{ "llama31_8b", "llama-3.1-8b", 1, 8, 1, 1, 0, 2, 1, 0, 8192, 512, 1, 1168251 },
	/* llama31_70b.py: as llama3_70b */
	{ "llama31_70b", "llama-3.1-70b", 1, 8, 4, 4, 5, 2, 1, 1, 8192, 512, 1, 1168251 },
	/* llama31_405b.py: trainer(8, 8, virtual 2, context 4, sequence parallel) */
	{ "llama31_405b", "llama-3.1-405b", 1, 8, 8, 8, 2, 4, 1, 1, 8192, 512, 1, 1168251 },
	/* mixtral_8x7b.py: pretrain_recipe(num_nodes=8); trainer(1, 4, virtual 8,
	 * expert 8); (4096, 512, 1) */
	{ "mixtral_8x7b", "mixtral-8x7b", 8, 8, 1, 4, 8, 1, 8, 0, 4096, 512, 1, 1168251 },
	/* gpt3_175b.py: trainer(4, 8, virtual 6, sequence parallel); (2048, 2048, 2) */
	{ "gpt3_175b", "gpt3-175b", 1, 8, 4, 8, 6, 1, 1, 1, 2048, 2048, 2, 1168251 },
	/* deepseek_v3.py: pretrain_recipe(num_nodes=128) with trainer(1, 16, expert
	 * 64) of deepseek.py (sequence parallel); (4096, 4096, 1) */
	{ "deepseek_v3", "deepseek-v3", 128, 8, 1, 16, 0, 1, 64, 1, 4096, 4096, 1, 1168251 },
};

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
			return;
	if (l->n_notes == CAPSIM_LAUNCH_NOTES) {
		l->n_notes_more++;
		return;
	}
	memcpy(l->notes[l->n_notes++], text, sizeof text);
}

int capsim_launch_nemo_run_at(char **argv, int argc)
{
	for (int i = 0; i + 1 < argc; i++) {
		size_t n = strlen(argv[i]);
		if ((!strcmp(argv[i], "nemo") || (n > 5 && !strcmp(argv[i] + n - 5, "/nemo"))) &&
		    !strcmp(argv[i + 1], "llm"))
			return i;
	}
	return -1;
}

int capsim_launch_nemo_factory_word(char **argv, int argc, int i)
{
	if (!strcmp(argv[i], "--factory") || (!strcmp(argv[i], "-f") &&
					      capsim_launch_nemo_run_at(argv, argc) >= 0))
		return 2;
	if (!strncmp(argv[i], "--factory=", 10) || !strncmp(argv[i], "recipe=", 7))
		return 1;
	return 0;
}

/* the factory named among argv: its text ("llama3_8b(num_nodes=2)"), or NULL */
static const char *factory(char **argv, int argc)
{
	for (int i = 0; i < argc; i++) {
		int k = capsim_launch_nemo_factory_word(argv, argc, i);
		if (k == 2 && i + 1 < argc)
			return argv[i + 1];
		if (k == 1)
			return strchr(argv[i], '=') + 1;
	}
	return NULL;
}

/* the factory's arguments, "num_nodes=2, name='x'": num_nodes and
 * num_gpus_per_node into l, the rest noted; -1 after a refusal */
static int factory_args(const char *args, size_t n, const char *where, capsim_launch *l,
			capsim_diags *d)
{
	char *a = capsim_xasprintf("%.*s", (int)n, args);
	int rc = 0;
	for (char *save = NULL, *p = strtok_r(a, ",", &save); p && !rc;
	     p = strtok_r(NULL, ",", &save)) {
		while (isspace((unsigned char)*p))
			p++;
		char *eq = strchr(p, '=');
		long *into = !eq ? NULL : !strncmp(p, "num_nodes=", 10) ? &l->nodes :
			     !strncmp(p, "num_gpus_per_node=", 18) ? &l->gpus_per_node : NULL;
		if (!into) {
			note(l, "--factory argument %.80s: not modelled", p);
			continue;
		}
		char *end;
		long v = strtol(eq + 1, &end, 10);
		while (isspace((unsigned char)*end))
			end++;
		if (v <= 0 || *end || v > CAPSIM_LAUNCH_MAX_WHOLE) {
			capsim_diags_add_at(d, where, "--factory %.*s: expected a positive whole "
					    "number, found '%.40s'", (int)(eq - p), p, eq + 1);
			rc = -1;
		}
		*into = v;
	}
	free(a);
	return rc;
}

/* the recipe's defaults into l */
static void apply(const recipe *r, capsim_launch *l)
{
	l->nodes = r->nodes, l->gpus_per_node = r->gpn;
	l->tp = r->tp, l->pp = r->pp, l->vp_stages = r->vp, l->cp = r->cp, l->ep = r->ep;
	l->sequence_parallel = r->sp;
	l->seq_len = r->seq, l->global_batch = r->gbs, l->micro_batch = r->mbs;
	l->train_iters = r->steps;
	l->dtype = "bf16";
	l->zero = 1;
	l->model = r->model;
}

int capsim_launch_nemo_recipe(char **argv, int argc, const char *where, capsim_launch *l,
			      capsim_diags *d)
{
	const char *f = factory(argv, argc);
	if (!f)
		return 0;
	int at = capsim_launch_nemo_run_at(argv, argc);
	if (at >= 0 && at + 2 < argc && strcmp(argv[at + 2], "pretrain")) {
		capsim_diags_add_at(d, where, "nemo llm %.40s --factory %.60s: capsim reads the "
				    "pre-training recipes' defaults (nemo llm pretrain)", argv[at + 2], f);
		return -1;
	}
	size_t nl = strcspn(f, "( ");
	const recipe *r = NULL;
	for (size_t i = 0; i < sizeof recipes / sizeof recipes[0]; i++)
		if (strlen(recipes[i].name) == nl && !strncmp(recipes[i].name, f, nl))
			r = &recipes[i];
	if (!r) {
		char names[512] = "";
		for (size_t i = 0; i < sizeof recipes / sizeof recipes[0]; i++)
			snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
				 i ? ", " : "", recipes[i].name);
		capsim_diags_add_at(d, where, "NeMo recipe '%.*s': not one capsim knows the defaults "
				    "of (%s)", (int)(nl > 60 ? 60 : nl), f, names);
		return -1;
	}
	apply(r, l);
	note(l, "NeMo recipe %s: its defaults (nemo/collections/llm/recipes/%s.py at NeMo "
	     "%.12s), under the launch's overrides", r->name, r->name, NEMO_COMMIT);
	if (!strncmp(r->name, "llama3_", 7))
		note(l, "NeMo recipe %s: Llama 3 planned as the catalog's %s (the same layers, "
		     "widths and vocabulary)", r->name, r->model);
	const char *open = strchr(f, '(');
	if (open) {
		const char *close = strrchr(f, ')');
		if (!close || close < open) {
			capsim_diags_add_at(d, where, "--factory %.80s: expected NAME(ARG=VALUE, ...)",
					    f);
			return -1;
		}
		return factory_args(open + 1, (size_t)(close - open - 1), where, l, d);
	}
	return 0;
}
