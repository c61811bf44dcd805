/* cmd_import.c - `capsim import hf CONFIG`: what a planner already has on
 * disk turned into capsim's files (src/import/). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "cli.h"
#include "escape.h"
#include "hf.h"
#include "launch.h"
#include "outfile.h"
#include "scenario.h"
#include "sha256.h"
#include "xalloc.h"
#include "xml.h"

#define HF_ABOUT \
	"A Hugging Face model config (config.json: Llama, Mistral, Mixtral, Qwen2/3\n" \
	"and their MoE, DeepSeek V2/V3, GPT-2, GPT-NeoX, Gemma) becomes a models file\n" \
	"of one entry (layers, hidden, heads, KV heads, head dimension, FFN and its\n" \
	"activation, vocabulary, maximum positions, norm, positions, tied embeddings,\n" \
	"MoE experts, shared experts and top-k, MLA dimensions), checked by loading\n" \
	"it beside the shipped catalog, on standard output or --out FILE. Use it with\n" \
	"capsim --parts FILE run --set workload.model.ref=ID. The id is --name, else\n" \
	"the config's directory's name (meta-llama/Llama-3.1-8B/config.json gives\n" \
	"llama-3.1-8b). What capsim does not model is listed on stderr.\n"
#define LAUNCH_ABOUT \
	"A torchrun / srun / Megatron-LM launch (NeMo key=value overrides where\n" \
	"simple) becomes a scenario (--out, default stdout): nodes and GPUs per node\n" \
	"(#SBATCH, srun, torchrun), sequence length, micro- and global batch, TP, PP,\n" \
	"virtual stages, CP, EP, recomputation, the distributed optimizer (ZeRO 1),\n" \
	"sequence parallelism, the TP overlap and the precision; the token budget\n" \
	"from --train-iters or --train-samples. The model is --model (a catalog or\n" \
	"--parts id) or, from the launch's own architecture flags, an entry written\n" \
	"to --models FILE (the vocabulary needs --vocab-size: Megatron takes it from\n" \
	"the tokenizer). The node is --node (default dgx-h100) and the fabric an NDR\n" \
	"InfiniBand fat tree: both assumptions, said in the file and on stderr with\n" \
	"every flag not modelled. The scenario is checked by loading it before it is\n" \
	"written.\n"

enum { H_NAME, H_OUT, H_HELP };
static const capsim_cli_opt hf_opts[] = {
	[H_NAME] = { "name", 0, "ID", "the model's id (default: from the config's directory)" },
	[H_OUT] = { "out", 0, "FILE", "write the models file to FILE (default: standard output)" },
	[H_HELP] = { "help", 0, NULL, "this text" },
};
const capsim_cli_cmd capsim_cli_import_hf_cmd = {
	.name = "import hf",
	.usage = "usage: capsim import hf CONFIG.json [--name ID] [--out FILE]\n",
	.about = HF_ABOUT,
	.opts = hf_opts,
	.n_opts = CAPSIM_CLI_N(hf_opts),
	.in_order = 1,
};

enum { L_NAME, L_MODEL, L_MODELS, L_NODE, L_OUT, L_HELP };
static const capsim_cli_opt launch_opts_table[] = {
	[L_NAME] = { "name", 0, "NAME", "the scenario's name (default: imported)" },
	[L_MODEL] = { "model", 0, "ID", "the model: a catalog or --parts id" },
	[L_MODELS] = { "models", 0, "FILE",
		       "write the model the launch's flags define to FILE, as a\n"
		       "models file" },
	[L_NODE] = { "node", 0, "ID", "the node type (default dgx-h100)" },
	[L_OUT] = { "out", 0, "FILE", "write the scenario to FILE (default: standard output)" },
	[L_HELP] = { "help", 0, NULL, "this text" },
};
const capsim_cli_cmd capsim_cli_import_cmdline_cmd = {
	.name = "import cmdline",
	.usage = "usage: capsim import cmdline [OPTIONS] -- LAUNCH LINE...\n",
	.about = LAUNCH_ABOUT,
	.opts = launch_opts_table,
	.n_opts = CAPSIM_CLI_N(launch_opts_table),
	.in_order = 1,
};
const capsim_cli_cmd capsim_cli_import_slurm_cmd = {
	.name = "import slurm",
	.usage = "usage: capsim import slurm [OPTIONS] SCRIPT   (a Slurm batch script, a shell\n"
		 "                           script or a Kubernetes Job that runs torchrun)\n",
	.about = LAUNCH_ABOUT,
	.opts = launch_opts_table,
	.n_opts = CAPSIM_CLI_N(launch_opts_table),
	.in_order = 1,
};

/* what capsim import imports, and how; each kind's --help has its options */
static void help(FILE *out)
{
	fprintf(out,
		"usage: capsim import hf CONFIG.json [--name ID] [--out FILE]\n"
		"       capsim import cmdline [OPTIONS] -- LAUNCH LINE...\n"
		"       capsim import slurm [OPTIONS] SCRIPT   (a Slurm batch script, a shell\n"
		"                           script or a Kubernetes Job that runs torchrun)\n"
		"  OPTIONS: [--name NAME] [--model ID | --models FILE] [--node ID] [--out FILE]\n"
		"\n"
		"hf: " HF_ABOUT "\n"
		"cmdline, slurm: " LAUNCH_ABOUT "\n"
		"'capsim import KIND --help' lists each kind's options.\n");
}

/* the schemas' id (common.xsd): [a-z0-9][a-z0-9._-]{0,62} */
#define ID_RULE "an id is a lower-case letter or digit, then up to 62 of a-z 0-9 . _ -"

static int is_id(const char *s)
{
	size_t n = 0;
	for (; s[n]; n++) {
		unsigned char c = (unsigned char)s[n];
		if (!(islower(c) || isdigit(c) || (n && (c == '.' || c == '_' || c == '-'))))
			return 0;
	}
	return n >= 1 && n <= 63;
}

/* a catalog id from a directory's name: lower case, other characters as
 * '-'; -1 where that is not an id (empty, too long, not a letter or digit
 * first) */
static int id_of(const char *name, char *out, size_t n)
{
	size_t k = 0;
	for (const char *p = name; *p; p++) {
		unsigned char c = (unsigned char)*p;
		if (k + 1 >= n)
			return -1;
		out[k++] = isalnum(c) ? (char)tolower(c) : c == '.' || c == '_' ? (char)c : '-';
	}
	out[k] = '\0';
	return is_id(out) ? 0 : -1;
}

/* the config's directory's name: "a/b/Llama-3.1-8B/config.json" gives "Llama-3.1-8B" */
static int dir_name(const char *path, char *out, size_t n)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return -1;
	const char *end = slash, *start = slash;
	while (start > path && start[-1] != '/')
		start--;
	if (end == start || (end - start == 1 && *start == '.'))
		return -1;
	snprintf(out, n, "%.*s", (int)(end - start), start);
	return 0;
}

static int import_hf(int argc, char **argv)
{
	const char *name = NULL, *out = "-";
	int c;
	optind = 1;
	while ((c = capsim_cli_next(&capsim_cli_import_hf_cmd, argc, argv)) != -1) {
		switch (c) {
		case H_NAME: name = optarg; break;
		case H_OUT: out = optarg; break;
		case H_HELP:
			capsim_cli_help(&capsim_cli_import_hf_cmd, stdout);
			return CAPSIM_EXIT_OK;
		default: return CAPSIM_EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "capsim import hf: expected one config.json, found %d\n",
			argc - optind);
		return CAPSIM_EXIT_USAGE;
	}
	const char *file = argv[optind];
	char id[64], dn[256];
	if (name && !is_id(name)) {
		fprintf(stderr, "capsim import hf: --name '");
		capsim_term_text(stderr, name);
		fprintf(stderr, "': expected an id (%s)\n", ID_RULE);
		return CAPSIM_EXIT_USAGE;
	}
	if (name) {
		capsim_strlcpy(id, name, sizeof id);
	} else if (dir_name(file, dn, sizeof dn) < 0 || id_of(dn, id, sizeof id) < 0) {
		fprintf(stderr, "capsim import hf: the config's directory gives no id (%s): give "
			"one with --name\n", ID_RULE);
		return CAPSIM_EXIT_USAGE;
	}
	capsim_diags d = { 0 };
	size_t len;
	char *text = capsim_xml_slurp(file, &len, &d);
	int status = CAPSIM_EXIT_USAGE;
	capsim_hf_model m;
	char *xml = NULL, *label = NULL;
	size_t xlen = 0;
	capsim_catalog *cat = NULL;
	if (!text || capsim_hf_read(text, len, file, &m, &d) < 0)
		goto fail;
	char sha[65];
	capsim_sha256_hex(text, len, sha);
	FILE *mem = open_memstream(&xml, &xlen);
	if (!mem || capsim_hf_write(&m, id, file, sha, mem) < 0) {
		if (mem)
			fclose(mem);
		capsim_diags_add_runtime(&d, NULL, "out of memory");
		goto fail;
	}
	fclose(mem);
	/* what it wrote loads beside the shipped catalog */
	cat = capsim_catalog_create();
	label = capsim_xasprintf("(capsim import hf %s)", file);
	if (capsim_catalog_load_root(cat, capsim_catalog_default_root(), NULL, &d) < 0)
		goto fail;
	if (capsim_catalog_find(cat, CAPSIM_KIND_MODEL, id)) {
		capsim_diags_add(&d, file, 0, "the id '%s' is a shipped model's: give this one another "
				 "with --name", id);
		goto fail;
	}
	if (capsim_catalog_load_memory(cat, xml, xlen, label, &d) < 0 ||
	    capsim_catalog_check(cat, &d) < 0)
		goto fail;
	for (int i = 0; i < m.n_warnings; i++) {
		fprintf(stderr, "capsim import hf: ");
		capsim_term_text(stderr, file);
		fprintf(stderr, ": warning: ");
		capsim_term_text(stderr, m.warnings[i]);
		fputc('\n', stderr);
	}
	capsim_outfile of;
	if (capsim_outfile_open(&of, out, &d) < 0)
		goto fail;
	fwrite(xml, 1, xlen, of.f);
	if (capsim_outfile_close(&of, &d) < 0)
		goto fail;
	status = CAPSIM_EXIT_OK;
	goto done;
fail:
	capsim_diags_print(&d, stderr);
	status = capsim_diags_runtime(&d) ? CAPSIM_EXIT_FAILURE : CAPSIM_EXIT_USAGE;
done:
	capsim_catalog_free(cat);
	free(label);
	free(xml);
	free(text);
	capsim_diags_free(&d);
	return status;
}

/* ---- launch lines and scripts ------------------------------------------------------- */

typedef struct {
	const char *name, *model, *models, *node, *out;
} launch_opts;

/* the model entry the launch's architecture flags give: 0 with its text, or
 * -1 with what is missing in d */
static int model_entry(const capsim_launch *l, const char *id, const char *where, char **text,
		       capsim_diags *d)
{
	static const struct {
		const char *flag;
		size_t off;
	} need[] = { { "--num-layers", offsetof(capsim_launch, layers) },
		     { "--hidden-size", offsetof(capsim_launch, hidden) },
		     { "--num-attention-heads", offsetof(capsim_launch, heads) },
		     { "--vocab-size (Megatron takes it from the tokenizer)",
		       offsetof(capsim_launch, vocab) } };
	int bad = 0;
	for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
		if (!*(const long *)((const char *)l + need[i].off)) {
			capsim_diags_add_at(d, where, "the model: %s is not in the launch; give it, or "
					    "--model ID", need[i].flag);
			bad = 1;
		}
	if (bad)
		return -1;
	/* Megatron's defaults: an FFN of 4h, or 8h/3 rounded up to 64 with SwiGLU */
	long ffn = l->ffn ? l->ffn : l->swiglu == 1 ? ((8 * l->hidden / 3 + 63) / 64) * 64 :
		   4 * l->hidden;
	size_t len = 0;
	FILE *f = open_memstream(text, &len);
	if (!f)
		return -1;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- written by capsim import from "
		   "a launch line's architecture flags -->\n<models>\n  <model id=\"");
	capsim_xml_escape(f, id);
	fprintf(f, "\" name=\"");
	capsim_xml_escape(f, id);
	fprintf(f, "\" family=\"megatron\"\n         assumption=\"the launch line's own "
		   "architecture (capsim import)\">\n");
	fprintf(f, "    <architecture layers=\"%ld\" hidden=\"%ld\" heads=\"%ld\" kv-heads=\"%ld\" "
		   "ffn=\"%ld\"\n                  activation=\"%s\" vocab=\"%ld\" max-seq-len=\"%ld\" "
		   "norm=\"%s\"\n                  position=\"%s\" tied-embeddings=\"%s\"/>\n",
		l->layers, l->hidden, l->heads, l->kv_heads ? l->kv_heads : l->heads, ffn,
		l->swiglu == 1 ? "swiglu" : "gelu", l->vocab,
		l->max_positions ? l->max_positions : l->seq_len, l->rmsnorm == 1 ? "rmsnorm" :
		"layernorm", l->rope == 1 ? "rope" : "learned", l->untied == 1 ? "false" : "true");
	if (l->experts)
		fprintf(f, "    <moe experts=\"%ld\" top-k=\"%ld\" shared-experts=\"0\" "
			   "expert-ffn=\"%ld\" dense-layers=\"0\"/>\n", l->experts,
			l->top_k ? l->top_k : 2, ffn);
	fprintf(f, "  </model>\n</models>\n");
	fclose(f);
	return 0;
}

/* the scenario text; notes of what was assumed go to l's notes */
static char *scenario_text(capsim_launch *l, const launch_opts *o, const char *model,
			   const capsim_node *node, const char *where, capsim_diags *d)
{
	long nodes = l->nodes ? l->nodes : 1;
	if (l->gpus_per_node && l->gpus_per_node != node->gpus)
		capsim_diags_add_at(d, where, "the launch runs %ld GPUs a node, node '%s' has %d; "
				    "give --node of that size", l->gpus_per_node, node->e.id, node->gpus);
	if (!l->seq_len)
		capsim_diags_add_at(d, where, "--seq-length (or model.encoder_seq_length): not in "
				    "the launch");
	long tp = l->tp ? l->tp : 1, pp = l->pp ? l->pp : 1, cp = l->cp ? l->cp : 1;
	long mb = l->micro_batch ? l->micro_batch : 1;
	/* each value is at most CAPSIM_LAUNCH_MAX_WHOLE: products in double */
	long gpus = nodes * node->gpus;
	double split = (double)tp * (double)pp * (double)cp;
	long dp = split <= (double)gpus ? gpus / (long)split : 1;
	double gbd = l->global_batch ? (double)l->global_batch : (double)mb * (double)dp;
	if (gbd > (double)CAPSIM_LAUNCH_MAX_WHOLE)
		capsim_diags_add_at(d, where, "the global batch (micro-batch %ld x data-parallel "
				    "%ld, no --global-batch-size given) is past %ld", mb, dp,
				    CAPSIM_LAUNCH_MAX_WHOLE);
	long gb = gbd > (double)CAPSIM_LAUNCH_MAX_WHOLE ? 1 : (long)gbd;
	double tokens = l->train_iters ? (double)l->train_iters * gb * l->seq_len :
			l->train_samples ? (double)l->train_samples * l->seq_len : 0.0;
	long v = l->vp_stages ? l->vp_stages :
		 l->vp_layers > 0 && l->layers ? l->layers / pp / l->vp_layers : 1;
	if (l->vp_layers > 0 && !l->layers)
		capsim_diags_add_at(d, where, "--num-layers-per-virtual-pipeline-stage needs "
				    "--num-layers");
	if (d->n)
		return NULL;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- written by capsim import "
		   "from ");
	capsim_xml_comment_escape(f, where);
	fprintf(f, ".\n");
	for (int i = 0; i < l->n_notes; i++) {
		fputs("     ", f);
		capsim_xml_comment_escape(f, l->notes[i]);
		fputs("\n", f);
	}
	if (l->n_notes_more)
		fprintf(f, "     and %ld more not modelled\n", l->n_notes_more);
	if (!l->nodes)
		fprintf(f, "     nodes: not in the launch; 1 assumed\n");
	if (tokens <= 0)
		fprintf(f, "     tokens: no train-iters or train-samples in the launch; 1T assumed\n");
	fprintf(f, "     node and fabric: assumptions (not in a launch line) -->\n");
	fprintf(f, "<scenario name=\"");
	capsim_xml_escape(f, o->name);
	fprintf(f, "\">\n  <cluster nodes=\"%ld\">\n    <node ref=\"", nodes);
	capsim_xml_escape(f, node->e.id);
	fprintf(f, "\"/>\n");
	if (nodes > 1)
		fprintf(f, "    <fabric topology=\"fat-tree\" tiers=\"2\" transport=\"infiniband\" "
			   "oversubscription=\"1:1\">\n      <switch ref=\"qm9700\"/>\n    </fabric>\n");
	else /* one node: no fabric between nodes, as the schema says it */
		fprintf(f, "    <fabric topology=\"none\" transport=\"infiniband\"/>\n");
	char tok[64];
	if (tokens > 0)
		snprintf(tok, sizeof tok, "%.0f", tokens);
	else
		snprintf(tok, sizeof tok, "1T");
	fprintf(f, "  </cluster>\n  <workload seq-len=\"%ld\" global-batch=\"%ld\" "
		   "micro-batch=\"%ld\" tokens=\"%s\" dtype=\"%s\">\n", l->seq_len, gb, mb, tok,
		l->dtype ? l->dtype : "bf16");
	fprintf(f, "    <model ref=\"");
	capsim_xml_escape(f, model);
	fprintf(f, "\"/>\n    <parallelism tp=\"%ld\" pp=\"%ld\" cp=\"%ld\" "
		   "ep=\"%ld\" zero=\"%d\" recompute=\"%s\"", tp, pp, cp, l->ep ? l->ep : 1,
		l->zero == 1 ? 1 : 0, l->recompute ? l->recompute : "none");
	if (tp > 1 && l->sequence_parallel != -1)
		fprintf(f, " sequence-parallel=\"%s\"", l->sequence_parallel ? "on" : "off");
	if (l->tp_comm_overlap == 1)
		fprintf(f, " tp-comm-overlap=\"on\"");
	if (v > 1)
		fprintf(f, " schedule=\"1f1b-interleaved\" virtual-stages=\"%ld\"", v);
	fprintf(f, "/>\n  </workload>\n</scenario>\n");
	fclose(f);
	return text;
}

static int import_launch(int argc, char **argv, int script)
{
	const capsim_cli_cmd *cmd = script ? &capsim_cli_import_slurm_cmd :
					     &capsim_cli_import_cmdline_cmd;
	launch_opts o = { .name = "imported", .node = "dgx-h100", .out = "-" };
	int c;
	optind = 1;
	while ((c = capsim_cli_next(cmd, argc, argv)) != -1) {
		switch (c) {
		case L_NAME: o.name = optarg; break;
		case L_MODEL: o.model = optarg; break;
		case L_MODELS: o.models = optarg; break;
		case L_NODE: o.node = optarg; break;
		case L_OUT: o.out = optarg; break;
		case L_HELP: capsim_cli_help(cmd, stdout); return CAPSIM_EXIT_OK;
		default: return CAPSIM_EXIT_USAGE;
		}
	}
	if (!is_id(o.name) || (!o.model && strlen(o.name) > 57)) {
		fprintf(stderr, "capsim import: --name '");
		capsim_term_text(stderr, o.name);
		fprintf(stderr, "': expected an id (%s)%s\n", ID_RULE, is_id(o.name) ?
			", of at most 57 where the model written is NAME-model" : "");
		return CAPSIM_EXIT_USAGE;
	}
	const char *const ids[][2] = { { "--model", o.model }, { "--node", o.node } };
	for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
		if (ids[i][1] && !is_id(ids[i][1])) {
			fprintf(stderr, "capsim import: %s '", ids[i][0]);
			capsim_term_text(stderr, ids[i][1]);
			fprintf(stderr, "': expected an id (%s)\n", ID_RULE);
			return CAPSIM_EXIT_USAGE;
		}
	capsim_diags d = { 0 };
	capsim_launch l;
	const char *where = script ? (optind < argc ? argv[optind] : "") : "the command line";
	char *text = NULL, *models_xml = NULL, *sc = NULL;
	int status = CAPSIM_EXIT_USAGE;
	capsim_catalog *cat = capsim_catalog_create();
	capsim_scenario *s = capsim_xcalloc(1, sizeof *s);
	if (script) {
		if (optind != argc - 1) {
			fprintf(stderr, "capsim import slurm: expected one script, found %d\n",
				argc - optind);
			goto out;
		}
		size_t len;
		text = capsim_xml_slurp(argv[optind], &len, &d);
		if (!text || capsim_launch_script(text, len, argv[optind], &l, &d) < 0)
			goto fail;
	} else {
		if (optind >= argc) {
			fprintf(stderr, "capsim import cmdline: expected the launch line after --\n");
			goto out;
		}
		capsim_launch_init(&l);
		if (capsim_launch_argv(argv + optind, argc - optind, where, &l, &d) < 0)
			goto fail;
	}
	if (capsim_cli_catalog(cat, &d) < 0)
		goto fail;
	const capsim_node *node = capsim_catalog_find(cat, CAPSIM_KIND_NODE, o.node);
	if (!node) {
		capsim_diags_add_at(&d, "--node", "no node '%s' in the catalog", o.node);
		goto fail;
	}
	char model_id[CAPSIM_ID_LEN];
	if (o.model) {
		capsim_strlcpy(model_id, o.model, sizeof model_id);
	} else {
		if (!o.models) {
			capsim_diags_add_at(&d, where, "the model: give --model ID (a catalog or --parts "
					    "model), or --models FILE to write the one the launch defines");
			goto fail;
		}
		snprintf(model_id, sizeof model_id, "%s-model", o.name);
		if (model_entry(&l, model_id, where, &models_xml, &d) < 0 ||
		    capsim_catalog_load_memory(cat, models_xml, strlen(models_xml), o.models, &d) < 0 ||
		    capsim_catalog_check(cat, &d) < 0)
			goto fail;
	}
	sc = scenario_text(&l, &o, model_id, node, where, &d);
	if (!sc)
		goto fail;
	/* it loads, as capsim run would load it */
	if (capsim_scenario_load_memory(sc, strlen(sc), o.out, cat, NULL, 0, s, &d) < 0)
		goto fail;
	for (int i = 0; i < l.n_notes; i++) {
		fprintf(stderr, "capsim import: warning: ");
		capsim_term_text(stderr, l.notes[i]);
		fputc('\n', stderr);
	}
	if (l.n_notes_more)
		fprintf(stderr, "capsim import: warning: and %ld more not modelled\n",
			l.n_notes_more);
	capsim_outfile of;
	if (models_xml) {
		if (capsim_outfile_open(&of, o.models, &d) < 0)
			goto fail;
		fputs(models_xml, of.f);
		if (capsim_outfile_close(&of, &d) < 0)
			goto fail;
	}
	if (capsim_outfile_open(&of, o.out, &d) < 0)
		goto fail;
	fputs(sc, of.f);
	if (capsim_outfile_close(&of, &d) < 0)
		goto fail;
	status = CAPSIM_EXIT_OK;
	goto out;
fail:
	capsim_diags_print(&d, stderr);
	status = capsim_diags_runtime(&d) ? CAPSIM_EXIT_FAILURE : CAPSIM_EXIT_USAGE;
out:
	free(sc);
	free(models_xml);
	free(text);
	free(s);
	capsim_catalog_free(cat);
	capsim_diags_free(&d);
	return status;
}

int capsim_cmd_import(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "cmdline") == 0)
		return import_launch(argc - 1, argv + 1, 0);
	if (argc >= 2 && strcmp(argv[1], "slurm") == 0)
		return import_launch(argc - 1, argv + 1, 1);
	if (argc >= 2 && strcmp(argv[1], "hf") == 0)
		return import_hf(argc - 1, argv + 1);
	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		help(stdout);
		return CAPSIM_EXIT_OK;
	}
	fprintf(stderr, "capsim import: expected what to import: hf (a Hugging Face config.json), "
		"cmdline (a launch line) or slurm (a batch script)%s%s\n",
		argc >= 2 ? ", found " : "", argc >= 2 ? argv[1] : "");
	return CAPSIM_EXIT_USAGE;
}
