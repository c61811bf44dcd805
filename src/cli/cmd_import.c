/* cmd_import.c - `capsim import hf|cmdline|slurm`: what a planner already
 * has on disk turned into capsim's files (src/import/); this file parses the
 * options, checks what src/import/ wrote by loading it, and writes it. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "catalog.h"
#include "cli.h"
#include "escape.h"
#include "hf.h"
#include "launch.h"
#include "torchtitan.h"
#include "outfile.h"
#include "scenario.h"
#include "sha256.h"
#include "xalloc.h"
#include "xml.h"

#define HF_ABOUT \
	"A Hugging Face model config (config.json: Llama, Mistral, Mixtral, Qwen2/3\n" \
	"and their MoE, DeepSeek V2/V3 and Kimi-K2, GPT-2, GPT-NeoX, Gemma 1/2/3,\n" \
	"Phi-3/3.5/4, OLMo/OLMo-2, gpt-oss, Nemotron, MiMo, Granite; by model_type,\n" \
	"else by the class in architectures) becomes a models file\n" \
	"of one entry (layers, hidden, heads, KV heads, head dimension, FFN and its\n" \
	"activation, vocabulary, maximum positions, norm, positions, tied embeddings,\n" \
	"MoE experts, shared experts and top-k, MLA dimensions), checked by loading\n" \
	"it beside the shipped catalog, on standard output or --out FILE. Use it with\n" \
	"capsim --parts FILE run --set workload.model.ref=ID. The id is --name, else\n" \
	"the config's directory's name (meta-llama/Llama-3.1-8B/config.json gives\n" \
	"llama-3.1-8b). What capsim does not model is listed on stderr, with the\n" \
	"parameter count imported; --json prints them as one object instead of the\n" \
	"models file (written then only with --out).\n"
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
	"every flag not modelled. A script is evaluated as bash would run it (its\n" \
	"variables and defaults, Slurm's variables from #SBATCH, arrays, if and case,\n" \
	"here-documents, commands held in variables); a test resting on what the file\n" \
	"cannot say is decided by the script's defaults and said; what it reads from\n" \
	"its environment is given with --env. The config files a launch names (the\n" \
	"NeMo launcher's training=gpt3/5b, torchtitan's --job.config_file) are read\n" \
	"from --config-root, under the launch's own overrides; without it they are\n" \
	"refused, naming the file. The scenario is checked by loading it before it\n" \
	"is written.\n"

enum { H_NAME, H_OUT, H_JSON, H_HELP };
static const capsim_cli_opt hf_opts[] = {
	[H_NAME] = { "name", 0, "ID", "the model's id (default: from the config's directory)" },
	[H_OUT] = { "out", 0, "FILE", "write the models file to FILE (default: standard output)" },
	[H_JSON] = { "json", 0, NULL,
		     "print a summary (parameters, architecture, what is not\n"
		     "modelled) as one JSON object on standard output" },
	[H_HELP] = { "help", 0, NULL, "this text" },
};
const capsim_cli_cmd capsim_cli_import_hf_cmd = {
	.name = "import hf",
	.usage = "usage: capsim import hf CONFIG.json [--name ID] [--out FILE] [--json]\n",
	.about = HF_ABOUT,
	.opts = hf_opts,
	.n_opts = CAPSIM_CLI_N(hf_opts),
	.in_order = 1,
};

enum { L_NAME, L_MODEL, L_MODELS, L_NODE, L_ENV, L_ROOT, L_OUT, L_JSON, L_HELP };
static const capsim_cli_opt launch_opts_table[] = {
	[L_NAME] = { "name", 0, "NAME", "the scenario's name (default: imported)" },
	[L_MODEL] = { "model", 0, "ID", "the model: a catalog or --parts id" },
	[L_MODELS] = { "models", 0, "FILE",
		       "write the model the launch's flags define to FILE, as a\n"
		       "models file" },
	[L_NODE] = { "node", 0, "ID", "the node type (default dgx-h100)" },
	[L_ENV] = { "env", 0, "NAME=VALUE",
		    "a variable of the script's environment (SLURM_NNODES=16,\n"
		    "1=/data/tokenizer for $1): what the script reads but does\n"
		    "not set; repeat it for each" },
	[L_ROOT] = { "config-root", 0, "DIR",
		     "where the config files the launch names are: the NeMo\n"
		     "launcher's launcher_scripts directory (training=gpt3/5b\n"
		     "reads DIR/conf/training/gpt3/5b.yaml), the torchtitan\n"
		     "checkout (--job.config_file PATH reads DIR/PATH); repeat\n"
		     "it, the first holding the file read" },
	[L_OUT] = { "out", 0, "FILE", "write the scenario to FILE (default: standard output)" },
	[L_JSON] = { "json", 0, NULL,
		     "print a summary (the file read, the scenario written and its\n"
		     "text, what was not modelled, what was assumed) as one JSON\n"
		     "object on standard output; without --out, the scenario is\n"
		     "written only there" },
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

#define TITAN_ABOUT \
	"A torchtitan job config (its TOML) becomes a scenario (--out, default\n" \
	"stdout): [model] llama3's 8B, 70B or 405B (the catalog's llama-3.1-*; the\n" \
	"debugmodel written to --models FILE), converters [\"float8\"] (fp8, current\n" \
	"scaling); [training] local and global batch, seq_len, steps (the token\n" \
	"budget: steps x global batch x seq_len); [parallelism] the data-parallel\n" \
	"replicate and shard degrees (shard -1: the GPUs left), TP, PP, CP, EP, the\n" \
	"schedule and async TP; [activation_checkpoint] mode; [compile] enable. The\n" \
	"framework is fsdp2 (ZeRO 3 when sharded). torchtitan's defaults where a key\n" \
	"is absent; every other key listed as not modelled, in the file and on stderr.\n" \
	"The GPUs are --nodes (default 1, an assumption) of --node (default\n" \
	"dgx-h100); the fabric an NDR InfiniBand fat tree (an assumption). --model ID\n" \
	"plans another catalog or --parts model.\n"

enum { T_NAME, T_MODEL, T_MODELS, T_NODE, T_NODES, T_OUT, T_JSON, T_HELP };
static const capsim_cli_opt titan_opts[] = {
	[T_NAME] = { "name", 0, "NAME", "the scenario's name (default: imported)" },
	[T_MODEL] = { "model", 0, "ID", "the model: a catalog or --parts id (default: the\n"
					 "config's flavor)" },
	[T_MODELS] = { "models", 0, "FILE", "write the debugmodel's entry to FILE, as a models file" },
	[T_NODE] = { "node", 0, "ID", "the node type (default dgx-h100)" },
	[T_NODES] = { "nodes", 0, "N", "the nodes the job runs on (default 1)" },
	[T_OUT] = { "out", 0, "FILE", "write the scenario to FILE (default: standard output)" },
	[T_JSON] = { "json", 0, NULL,
		     "print a summary (the file read, the scenario written and its\n"
		     "text, what was not modelled, what was assumed) as one JSON\n"
		     "object on standard output; without --out, the scenario is\n"
		     "written only there" },
	[T_HELP] = { "help", 0, NULL, "this text" },
};
const capsim_cli_cmd capsim_cli_import_torchtitan_cmd = {
	.name = "import torchtitan",
	.usage = "usage: capsim import torchtitan [OPTIONS] CONFIG.toml\n",
	.about = TITAN_ABOUT,
	.opts = titan_opts,
	.n_opts = CAPSIM_CLI_N(titan_opts),
	.in_order = 1,
};

/* what capsim import imports, and how; each kind's --help has its options */
static void help(FILE *out)
{
	fprintf(out,
		"usage: capsim import hf CONFIG.json [--name ID] [--out FILE] [--json]\n"
		"       capsim import cmdline [OPTIONS] -- LAUNCH LINE...\n"
		"       capsim import slurm [OPTIONS] SCRIPT   (a Slurm batch script, a shell\n"
		"                           script or a Kubernetes Job that runs torchrun)\n"
		"  OPTIONS: [--name NAME] [--model ID | --models FILE] [--node ID]\n"
		"           [--env NAME=VALUE]... [--config-root DIR]... [--out FILE]\n"
		"       capsim import torchtitan [--name NAME] [--model ID | --models FILE]\n"
		"           [--node ID] [--nodes N] [--out FILE] CONFIG.toml\n"
		"\n"
		"hf: " HF_ABOUT "\n"
		"cmdline, slurm: " LAUNCH_ABOUT "\n"
		"torchtitan: " TITAN_ABOUT "\n"
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

/* the imported entry's parameter count (and that active per token, where
 * it has experts) on stderr; with json, the summary on stdout */
static void hf_report(const capsim_hf_model *m, const capsim_model *cm, const char *file,
		      const char *sha, const char *models_file, int json)
{
	double params = capsim_model_params(cm, 0), active = capsim_model_params(cm, 1);
	fprintf(stderr, "capsim import hf: ");
	capsim_term_text(stderr, file);
	fprintf(stderr, ": %s: %.0f parameters (%.2fB)", cm->e.id, params, params / 1e9);
	if (m->moe_experts)
		fprintf(stderr, ", %.0f active per token (%.2fB)", active, active / 1e9);
	if (m->window_modelled)
		fprintf(stderr, "; a sliding window of %ld on %ld of %ld layers, modelled",
			m->sliding_window, m->sliding_layers, m->layers);
	fputc('\n', stderr);
	if (!json)
		return;
	json_t *o = capsim_cli_json_head(NULL, NULL);
	json_t *in = json_pack("{ss ss}", "file", file, "sha256", sha);
	json_array_append_new(json_object_get(o, "inputs"), in ? in : json_null());
	json_object_set_new(o, "model", capsim_hf_json(m, cm->e.id, params, active));
	json_object_set_new(o, "models_file", models_file ? json_string(models_file) : json_null());
	json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	fputc('\n', stdout);
	json_decref(o);
}

static int import_hf(int argc, char **argv)
{
	const char *name = NULL, *out = "-";
	int c, json = 0, out_given = 0;
	optind = 1;
	while ((c = capsim_cli_next(&capsim_cli_import_hf_cmd, argc, argv)) != -1) {
		switch (c) {
		case H_NAME: name = optarg; break;
		case H_OUT: out = optarg; out_given = 1; break;
		case H_JSON: json = 1; break;
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
	if (!json || out_given) { /* --json alone: the summary is the output */
		if (capsim_outfile_open(&of, out, &d) < 0)
			goto fail;
		fwrite(xml, 1, xlen, of.f);
		if (capsim_outfile_close(&of, &d) < 0)
			goto fail;
	}
	hf_report(&m, capsim_catalog_find(cat, CAPSIM_KIND_MODEL, id), file, sha,
		  out_given ? out : NULL, json);
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

#define MAX_ENV 64

typedef struct {
	const char *name, *model, *models, *node, *out;
	int json;
	const char *env[MAX_ENV];
	int n_env;
	const char *roots[MAX_ENV];
	int n_roots;
} launch_opts;

/* The model a launch's scenario names, into model_id: `given` (a catalog or
 * --parts id) where there is one, else "NAME-model", the launch's own
 * architecture written to *models_xml (owned by the caller) and loaded into
 * cat as `models` would hold it. Returns 0, or -1 after a diagnostic at
 * `where`: `missing` when neither a model nor --models is given. */
static int launch_model(capsim_catalog *cat, const capsim_launch *l, const char *given,
			const char *name, const char *models, const char *where,
			const char *missing, char *model_id, char **models_xml, capsim_diags *d)
{
	if (given) {
		capsim_strlcpy(model_id, given, CAPSIM_ID_LEN);
		return 0;
	}
	if (!models) {
		capsim_diags_add_at(d, where, "the model: %s", missing);
		return -1;
	}
	snprintf(model_id, CAPSIM_ID_LEN, "%s-model", name);
	if (capsim_launch_model_text(l, model_id, where, models_xml, d) < 0 ||
	    capsim_catalog_load_memory(cat, *models_xml, strlen(*models_xml), models, d) < 0 ||
	    capsim_catalog_check(cat, d) < 0)
		return -1;
	return 0;
}

/* where an imported scenario goes: out (NULL: not written; the JSON
 * summary carries it), the launch's own model (models_xml, where set) to
 * models, and with json a summary on standard output; text (len bytes, NULL
 * for a command line) is the file read */
typedef struct {
	const char *out, *models, *models_xml;
	int json;
	const char *text;
	size_t len;
} launch_dest;

/* the lines capsim_launch_assumptions writes, as a JSON array */
static json_t *assumptions_json(const capsim_launch *l, const capsim_node *node)
{
	char *buf = NULL;
	size_t n = 0;
	json_t *a = json_array();
	FILE *mem = open_memstream(&buf, &n);
	if (!mem)
		return a;
	capsim_launch_assumptions(l, node->e.id, node->gpus, mem, "");
	fclose(mem);
	for (char *line = buf, *nl; line && *line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		if (*line)
			json_array_append_new(a, json_string(line));
	}
	free(buf);
	return a;
}

/* an import's summary as one JSON object on standard output: the file read
 * (where one was), the scenario (its name, model, node, file and text),
 * the models file, what was not modelled and what was assumed */
static void launch_json(const capsim_launch *l, const capsim_node *node, const char *name,
			const char *model_id, const char *where, const launch_dest *dest,
			const char *sc)
{
	json_t *o = capsim_cli_json_head(NULL, NULL);
	if (dest->text) {
		char sha[65];
		capsim_sha256_hex(dest->text, dest->len, sha);
		json_array_append_new(json_object_get(o, "inputs"),
				      json_pack("{ss ss}", "file", where, "sha256", sha));
	}
	json_object_set_new(o, "scenario", json_pack("{ss ss ss so ss}", "name", name, "model",
						      model_id, "node", node->e.id, "file",
						      dest->out ? json_string(dest->out) :
								  json_null(),
						      "xml", sc));
	json_object_set_new(o, "models_file", dest->models_xml ? json_string(dest->models) :
								   json_null());
	json_t *notes = json_array();
	for (int i = 0; i < l->n_notes; i++)
		json_array_append_new(notes, json_string(l->notes[i]));
	json_object_set_new(o, "not_modelled", notes);
	json_object_set_new(o, "not_modelled_more", json_integer(l->n_notes_more));
	json_object_set_new(o, "assumed", assumptions_json(l, node));
	json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	fputc('\n', stdout);
	json_decref(o);
}

/* what was not modelled and what was assumed, on stderr before the
 * scenario is written and checked (a refusal may rest on them); then the
 * scenario of l (into *sc, the caller's), loaded as capsim run would load
 * it, and written where dest says */
static int write_launch(const capsim_launch *l, const capsim_node *node, const char *name,
			const char *model_id, const char *where, const launch_dest *dest,
			capsim_catalog *cat, capsim_scenario *s, char **sc, capsim_diags *d)
{
	for (int i = 0; i < l->n_notes; i++) {
		fprintf(stderr, "capsim import: warning: ");
		capsim_term_text(stderr, l->notes[i]);
		fputc('\n', stderr);
	}
	if (l->n_notes_more)
		fprintf(stderr, "capsim import: warning: and %ld more not modelled\n",
			l->n_notes_more);
	capsim_launch_assumptions(l, node->e.id, node->gpus, stderr, "capsim import: assumed: ");
	*sc = capsim_launch_scenario_text(l, name, model_id, node->e.id, node->gpus, where, d);
	if (!*sc || capsim_scenario_load_memory(*sc, strlen(*sc), dest->out ? dest->out : where,
						cat, NULL, 0, s, d) < 0)
		return -1;
	capsim_outfile of;
	if (dest->models_xml) {
		if (capsim_outfile_open(&of, dest->models, d) < 0)
			return -1;
		fputs(dest->models_xml, of.f);
		if (capsim_outfile_close(&of, d) < 0)
			return -1;
	}
	if (dest->out) {
		if (capsim_outfile_open(&of, dest->out, d) < 0)
			return -1;
		fputs(*sc, of.f);
		if (capsim_outfile_close(&of, d) < 0)
			return -1;
	}
	if (dest->json)
		launch_json(l, node, name, model_id, where, dest, *sc);
	return 0;
}

/* the options of import cmdline or slurm (cmd) into *o; -1 after saying
 * why on stderr, 1 after --help */
static int launch_args(const capsim_cli_cmd *cmd, int argc, char **argv, launch_opts *o)
{
	int c;
	optind = 1;
	while ((c = capsim_cli_next(cmd, argc, argv)) != -1) {
		switch (c) {
		case L_NAME: o->name = optarg; break;
		case L_MODEL: o->model = optarg; break;
		case L_MODELS: o->models = optarg; break;
		case L_NODE: o->node = optarg; break;
		case L_ENV:
			if (o->n_env == MAX_ENV) {
				fprintf(stderr, "capsim import: --env: at most %d\n", MAX_ENV);
				return -1;
			}
			o->env[o->n_env++] = optarg;
			break;
		case L_ROOT:
			if (o->n_roots == MAX_ENV) {
				fprintf(stderr, "capsim import: --config-root: at most %d\n", MAX_ENV);
				return -1;
			}
			o->roots[o->n_roots++] = optarg;
			break;
		case L_OUT: o->out = optarg; break;
		case L_JSON: o->json = 1; break;
		case L_HELP: capsim_cli_help(cmd, stdout); return 1;
		default: return -1;
		}
	}
	if (!is_id(o->name) || (!o->model && strlen(o->name) > 57)) {
		fprintf(stderr, "capsim import: --name '");
		capsim_term_text(stderr, o->name);
		fprintf(stderr, "': expected an id (%s)%s\n", ID_RULE, is_id(o->name) ?
			", of at most 57 where the model written is NAME-model" : "");
		return -1;
	}
	const char *const ids[][2] = { { "--model", o->model }, { "--node", o->node } };
	for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
		if (ids[i][1] && !is_id(ids[i][1])) {
			fprintf(stderr, "capsim import: %s '", ids[i][0]);
			capsim_term_text(stderr, ids[i][1]);
			fprintf(stderr, "': expected an id (%s)\n", ID_RULE);
			return -1;
		}
	return 0;
}

static int import_launch(int argc, char **argv, int script)
{
	const capsim_cli_cmd *cmd = script ? &capsim_cli_import_slurm_cmd :
					     &capsim_cli_import_cmdline_cmd;
	launch_opts o = { .name = "imported", .node = "dgx-h100" };
	int a = launch_args(cmd, argc, argv, &o);
	if (a)
		return a > 0 ? CAPSIM_EXIT_OK : CAPSIM_EXIT_USAGE;
	capsim_diags d = { 0 };
	capsim_launch l;
	const char *where = script ? (optind < argc ? argv[optind] : "") : "the command line";
	char *text = NULL, *models_xml = NULL, *sc = NULL;
	size_t len = 0;
	int status = CAPSIM_EXIT_USAGE;
	capsim_catalog *cat = capsim_catalog_create();
	capsim_scenario *s = capsim_xcalloc(1, sizeof *s);
	if (script) {
		if (optind != argc - 1) {
			fprintf(stderr, "capsim import slurm: expected one script, found %d\n",
				argc - optind);
			goto out;
		}
		text = capsim_xml_slurp(argv[optind], &len, &d);
		capsim_launch_inputs in = { .env = o.env, .n_env = o.n_env, .config_roots = o.roots,
					    .n_config_roots = o.n_roots };
		if (!text || capsim_launch_script_with(text, len, argv[optind], &in, &l, &d) < 0)
			goto fail;
	} else {
		if (optind >= argc) {
			fprintf(stderr, "capsim import cmdline: expected the launch line after --\n");
			goto out;
		}
		capsim_launch_init(&l);
		l.config_roots = o.roots;
		l.n_config_roots = o.n_roots;
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
	if (launch_model(cat, &l, o.model ? o.model : l.model, o.name, o.models, where,
			 "give --model ID (a catalog or --parts model), or --models FILE to write "
			 "the one the launch defines", model_id, &models_xml, &d) < 0)
		goto fail;
	launch_dest dest = { .out = o.out ? o.out : o.json ? NULL : "-", .models = o.models,
			     .models_xml = models_xml, .json = o.json, .text = text, .len = len };
	if (write_launch(&l, node, o.name, model_id, where, &dest, cat, s, &sc, &d) < 0)
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

/* ---- torchtitan job configs ------------------------------------------------------- */

/* capsim import torchtitan's options, checked */
typedef struct {
	const char *name, *model, *models, *node, *out, *file;
	long nodes;
	int json;
} titan_opts_t;

/* the options into *o; -1 after saying why on stderr, 1 after --help */
static int titan_args(int argc, char **argv, titan_opts_t *o)
{
	const capsim_cli_cmd *cmd = &capsim_cli_import_torchtitan_cmd;
	int c;
	optind = 1;
	while ((c = capsim_cli_next(cmd, argc, argv)) != -1) {
		switch (c) {
		case T_NAME: o->name = optarg; break;
		case T_MODEL: o->model = optarg; break;
		case T_MODELS: o->models = optarg; break;
		case T_NODE: o->node = optarg; break;
		case T_NODES:
			if ((o->nodes = capsim_cli_count(optarg, 1 << 20)) < 0) {
				fprintf(stderr, "capsim import torchtitan: --nodes: expected a whole "
					"number from 1 to %d, found '", 1 << 20);
				capsim_term_text(stderr, optarg);
				fprintf(stderr, "'\n");
				return -1;
			}
			break;
		case T_OUT: o->out = optarg; break;
		case T_JSON: o->json = 1; break;
		case T_HELP: capsim_cli_help(cmd, stdout); return 1;
		default: return -1;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "capsim import torchtitan: expected one config, found %d\n",
			argc - optind);
		return -1;
	}
	o->file = argv[optind];
	const char *const ids[][2] = { { "--name", o->name }, { "--model", o->model },
					{ "--node", o->node } };
	for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
		if (ids[i][1] && (!is_id(ids[i][1]) || (i == 0 && strlen(ids[i][1]) > 57))) {
			fprintf(stderr, "capsim import torchtitan: %s '", ids[i][0]);
			capsim_term_text(stderr, ids[i][1]);
			fprintf(stderr, "': expected an id (%s)%s\n", ID_RULE, i == 0 ?
				", of at most 57 where the model written is NAME-model" : "");
			return -1;
		}
	return 0;
}

static int import_torchtitan(int argc, char **argv)
{
	titan_opts_t o = { .name = "imported", .node = "dgx-h100" };
	int a = titan_args(argc, argv, &o);
	if (a)
		return a > 0 ? CAPSIM_EXIT_OK : CAPSIM_EXIT_USAGE;
	capsim_diags d = { 0 };
	capsim_launch l;
	char *text = NULL, *models_xml = NULL, *sc = NULL;
	const char *flavor_model = o.model;
	int status = CAPSIM_EXIT_USAGE;
	capsim_catalog *cat = capsim_catalog_create();
	capsim_scenario *s = capsim_xcalloc(1, sizeof *s);
	size_t len;
	if (capsim_cli_catalog(cat, &d) < 0)
		goto fail;
	const capsim_node *node = capsim_catalog_find(cat, CAPSIM_KIND_NODE, o.node);
	if (!node) {
		capsim_diags_add_at(&d, "--node", "no node '%s' in the catalog", o.node);
		goto fail;
	}
	text = capsim_xml_slurp(o.file, &len, &d);
	if (!text || capsim_torchtitan_read(text, len, o.file, o.nodes, node->gpus, &l,
					    &flavor_model, &d) < 0)
		goto fail;
	char model_id[CAPSIM_ID_LEN];
	if (launch_model(cat, &l, o.model ? o.model : flavor_model, o.name, o.models, o.file,
			 "the debugmodel's entry needs --models FILE (or give --model ID)", model_id,
			 &models_xml, &d) < 0)
		goto fail;
	launch_dest dest = { .out = o.out ? o.out : o.json ? NULL : "-", .models = o.models,
			     .models_xml = models_xml, .json = o.json, .text = text, .len = len };
	if (write_launch(&l, node, o.name, model_id, o.file, &dest, cat, s, &sc, &d) < 0)
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
	if (argc >= 2 && strcmp(argv[1], "torchtitan") == 0)
		return import_torchtitan(argc - 1, argv + 1);
	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		help(stdout);
		return CAPSIM_EXIT_OK;
	}
	fprintf(stderr, "capsim import: expected what to import: hf (a Hugging Face config.json), "
		"cmdline (a launch line), slurm (a batch script) or torchtitan (a job config)%s%s\n",
		argc >= 2 ? ", found " : "", argc >= 2 ? argv[1] : "");
	static const char *const kinds[] = { "hf", "cmdline", "slurm", "torchtitan" };
	const char *near = argc >= 2 ? capsim_cli_nearest(argv[1], kinds, 4) : NULL;
	if (near)
		fprintf(stderr, "did you mean 'capsim import %s'?\n", near);
	return CAPSIM_EXIT_USAGE;
}
