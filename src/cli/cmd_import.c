/* cmd_import.c - `capsim import hf CONFIG`: what a planner already has on
 * disk turned into capsim's files (src/import/). */
#include <ctype.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "cli.h"
#include "hf.h"
#include "outfile.h"
#include "sha256.h"
#include "xalloc.h"
#include "xml.h"

static void help(FILE *out)
{
	fprintf(out,
		"usage: capsim import hf CONFIG.json [--name ID] [--out FILE]\n"
		"\n"
		"hf: a Hugging Face model config (config.json: Llama, Mistral, Mixtral, Qwen2/3\n"
		"and their MoE, DeepSeek V2/V3, GPT-2, GPT-NeoX, Gemma) becomes a models file\n"
		"of one entry (layers, hidden, heads, KV heads, head dimension, FFN and its\n"
		"activation, vocabulary, maximum positions, norm, positions, tied embeddings,\n"
		"MoE experts, shared experts and top-k, MLA dimensions), checked by loading\n"
		"it beside the shipped catalog, on standard output or --out FILE. Use it with\n"
		"capsim --parts FILE run --set workload.model.ref=ID. The id is --name, else\n"
		"the config's directory's name (meta-llama/Llama-3.1-8B/config.json gives\n"
		"llama-3.1-8b). What capsim does not model is listed on stderr.\n");
}

/* a catalog id from a name: lower case, other characters as '-' */
static int id_of(const char *name, char *out, size_t n)
{
	size_t k = 0;
	for (const char *p = name; *p && k + 1 < n && k < 63; p++) {
		unsigned char c = (unsigned char)*p;
		out[k++] = isalnum(c) ? (char)tolower(c) : c == '.' || c == '_' ? (char)c : '-';
	}
	out[k] = '\0';
	return k > 0 && isalnum((unsigned char)out[0]) ? 0 : -1;
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
	static const struct option longopts[] = {
		{ "name", required_argument, NULL, 'n' },
		{ "out", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *name = NULL, *out = "-";
	int c;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+", longopts, NULL)) != -1) {
		switch (c) {
		case 'n': name = optarg; break;
		case 'o': out = optarg; break;
		case 'h': help(stdout); return CAPSIM_EXIT_OK;
		default:
			fprintf(stderr, "capsim import hf: unknown option '%s'\n", argv[optind - 1]);
			return CAPSIM_EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "capsim import hf: expected one config.json, found %d\n",
			argc - optind);
		return CAPSIM_EXIT_USAGE;
	}
	const char *file = argv[optind];
	char id[64], dn[256];
	if (name ? id_of(name, id, sizeof id) < 0 :
		   dir_name(file, dn, sizeof dn) < 0 || id_of(dn, id, sizeof id) < 0) {
		fprintf(stderr, "capsim import hf: %s: give the model an id with --name (a letter or "
			"digit first)\n", name ? name : "the config's directory gives no name");
		return CAPSIM_EXIT_USAGE;
	}
	capsim_diags d = { 0 };
	size_t len;
	char *text = capsim_xml_slurp(file, &len, &d);
	int status = CAPSIM_EXIT_USAGE;
	capsim_hf_model m;
	char *xml = NULL;
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
	char label[300];
	snprintf(label, sizeof label, "(capsim import hf %s)", file);
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
	for (int i = 0; i < m.n_warnings; i++)
		fprintf(stderr, "capsim import hf: %s: warning: %s\n", file, m.warnings[i]);
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
	free(xml);
	free(text);
	capsim_diags_free(&d);
	return status;
}

int capsim_cmd_import(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "hf") == 0)
		return import_hf(argc - 1, argv + 1);
	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		help(stdout);
		return CAPSIM_EXIT_OK;
	}
	fprintf(stderr, "capsim import: expected what to import: hf (a Hugging Face config.json)%s%s\n",
		argc >= 2 ? ", found " : "", argc >= 2 ? argv[1] : "");
	return CAPSIM_EXIT_USAGE;
}
