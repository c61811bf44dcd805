/* cmd_validate.c - `capsim validate FILE...`: check input files and say what a
 * scenario resolves to. */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "memory.h"
#include "cli.h"
#include "scenario.h"
#include "units.h"
#include "xalloc.h"
#include "xml.h"

static void help(FILE *out)
{
	fprintf(out,
		"usage: capsim validate FILE... [--set PATH=VALUE]... [--resolved]\n"
		"                       [--catalog DIR]\n"
		"\n"
		"Check scenario, hardware, model and bibliography files against their\n"
		"schemas and for consistency; print every problem with file:line and\n"
		"exit 2 if there is one. For a scenario, print what it resolves to.\n"
		"\n"
		"  --set PATH=VALUE  override a scenario field (cluster.nodes=16,\n"
		"                    workload.parallelism.tp=4, cluster.gpu.memory.bandwidth=\"4 TB/s\")\n"
		"  --resolved        print the scenario with every catalog part written out\n"
		"  --paths           list every PATH that --set accepts, with its meaning\n"
		"  --catalog DIR     catalog root with hardware/ and models/ (default: %s)\n",
		capsim_catalog_default_root());
}

static void print_summary(const capsim_scenario *s)
{
	char a[48], b[48], c[48];
	long gpus = capsim_scenario_gpus(s);
	static const char *const topo[] = { "fat-tree", "single switch", "no fabric" };
	static const char *const net[] = { "InfiniBand", "RoCE", "TCP" };
	static const char *const sched[] = { "gpipe", "1f1b", "1f1b-interleaved" };
	static const char *const rec[] = { "none", "selective", "full" };

	printf("  scenario  %s%s%s\n", s->name, s->description[0] ? ": " : "",
	       s->description);
	printf("  cluster   %d x %s = %ld GPUs (%s)\n", s->nodes, s->node.e.id,
	       gpus, s->gpu.e.id);
	printf("  fabric    %s, %s, %d rails of %.0f Gb/s (%s) per node, "
	       "oversubscription %.3g:1%s\n",
	       topo[s->topology], net[s->transport], s->rails,
	       s->nic.port_speed_bytes_per_s * 8 / 1e9, s->nic.e.id,
	       s->oversubscription, s->sharp ? ", SHARP" : "");
	capsim_units_format(capsim_gpu_peak(&s->gpu, s->dtype) * gpus,
			    CAPSIM_DIM_FLOP_PER_S, a, sizeof a);
	capsim_units_format(s->gpu.mem_bytes * gpus, CAPSIM_DIM_BYTES, b, sizeof b);
	capsim_units_format(s->gpu.mem_bw_bytes_per_s * gpus,
			    CAPSIM_DIM_BYTES_PER_S, c, sizeof c);
	printf("  peak      %s dense %s; %s of GPU memory at %s\n", a,
	       capsim_dtype_names[s->dtype], b, c);
	double tokens_per_step = s->global_batch * s->seq_len;
	capsim_units_format(s->tokens, CAPSIM_DIM_COUNT, a, sizeof a);
	printf("  workload  %s, seq-len %d, global batch %.0f sequences (%.4g M "
	       "tokens), %s tokens, %s\n",
	       s->model.e.id, s->seq_len, s->global_batch, tokens_per_step / 1e6, a,
	       capsim_dtype_names[s->dtype]);
	printf("  parallel  tp %d, pp %d, cp %d, dp %d, ep %d; %s", s->tp, s->pp,
	       s->cp, s->dp, s->ep, sched[s->schedule]);
	if (s->virtual_stages > 1)
		printf(" x%d", s->virtual_stages);
	printf(", ZeRO-%d, recompute %s\n", s->zero, rec[s->recompute]);
	printf("  steps     %.0f to the token budget (%d micro-batches of %d per "
	       "replica per step)\n",
	       s->tokens / tokens_per_step,
	       (int)(s->global_batch / ((double)s->micro_batch * s->dp)),
	       s->micro_batch);
	capsim_memory m;
	capsim_memory_estimate(s, &m);
	const capsim_stage_memory *p = &m.peak;
	char w[32], g[32], o[32], act[32], r[32], tot[32], cap[32];
	capsim_units_format(p->weights_bytes, CAPSIM_DIM_BYTES, w, sizeof w);
	capsim_units_format(p->grads_bytes, CAPSIM_DIM_BYTES, g, sizeof g);
	capsim_units_format(p->optimizer_bytes, CAPSIM_DIM_BYTES, o, sizeof o);
	capsim_units_format(p->activations_bytes, CAPSIM_DIM_BYTES, act, sizeof act);
	capsim_units_format(p->reserve_bytes, CAPSIM_DIM_BYTES, r, sizeof r);
	capsim_units_format(p->total_bytes, CAPSIM_DIM_BYTES, tot, sizeof tot);
	capsim_units_format(m.capacity_bytes, CAPSIM_DIM_BYTES, cap, sizeof cap);
	printf("  memory    %s of %s per GPU at the peak (pipeline stage %d): %s\n"
	       "            weights %s, gradients %s, optimizer %s, activations %s "
	       "(%.3g micro-batches), reserve %s\n",
	       tot, cap, p->stage, m.fits ? "fits" : "DOES NOT FIT", w, g, o, act,
	       p->in_flight, r);
}

/* every --set path: scenario fields, then each part slot's fields */
static void print_paths(void)
{
	for (size_t i = 0; i < capsim_scenario_n_fields; i++) {
		const capsim_field *f = &capsim_scenario_fields[i];
		printf("%-45s %s%s%s%s\n", f->path, f->doc,
		       f->def ? " (default " : "", f->def ? f->def : "",
		       f->def ? ")" : "");
	}
	for (size_t s = 0; s < capsim_n_part_slots; s++) {
		const capsim_part_slot *slot = &capsim_part_slots[s];
		const capsim_kind *k = &capsim_kinds[slot->kind];
		for (size_t i = 0; i < k->n_fields; i++) {
			if (strcmp(k->fields[i].path, "id") == 0)
				continue;
			char p[256];
			snprintf(p, sizeof p, "%s.%s", slot->path, k->fields[i].path);
			printf("%-45s %s (overrides the %s)\n", p, k->fields[i].doc,
			       k->name);
		}
	}
}

static int validate_scenario(const char *path, const char *root,
			     capsim_catalog **cat, const capsim_set *sets,
			     size_t n_sets, int resolved, capsim_diags *d)
{
	if (!*cat) {
		*cat = capsim_catalog_create();
		if (capsim_catalog_load_root(*cat, root, NULL, d) < 0)
			return -1;
	}
	capsim_scenario *s = capsim_xcalloc(1, sizeof *s);
	int rc = capsim_scenario_load(path, *cat, sets, n_sets, s, d);
	if (rc == 0) {
		if (resolved) {
			capsim_scenario_write_xml(s, stdout);
		} else {
			printf("%s: ok\n", path);
			print_summary(s);
		}
	}
	free(s);
	return rc;
}

static int validate_catalog_file(const char *path, const char *root,
				 capsim_diags *d)
{
	capsim_catalog *c = capsim_catalog_create();
	size_t before = d->n;
	char real[PATH_MAX];
	const char *skip = realpath(path, real) ? real : path;
	/* everything else of the catalog first, so references resolve, then the
	 * file itself (a bibliography first, since entries cite it) */
	capsim_diags other = { 0 };
	capsim_catalog_load_root(c, root, skip, &other);
	capsim_diags_free(&other);
	capsim_catalog_load_file(c, path, d);
	if (d->n == before)
		capsim_catalog_check(c, d);
	capsim_catalog_free(c);
	if (d->n == before)
		printf("%s: ok\n", path);
	return d->n == before ? 0 : -1;
}

/* root element name of a file, "" if it cannot be read */
static void root_name(const char *path, char *buf, size_t len, long *line,
		      capsim_diags *d)
{
	xmlDoc *doc = capsim_xml_read(path, NULL, d);
	buf[0] = '\0';
	if (!doc)
		return;
	xmlNode *r = xmlDocGetRootElement(doc);
	if (r) {
		capsim_strlcpy(buf, (const char *)r->name, len);
		*line = xmlGetLineNo(r);
	}
	xmlFreeDoc(doc);
}

int capsim_cmd_validate(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "set", required_argument, NULL, 's' },
		{ "resolved", no_argument, NULL, 'r' },
		{ "paths", no_argument, NULL, 'p' },
		{ "catalog", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *root = capsim_catalog_default_root();
	capsim_cli_sets sets = { 0 };
	int resolved = 0, ch, status = CAPSIM_EXIT_OK;
	capsim_diags d = { 0 };

	optind = 1;
	while ((ch = getopt_long(argc, argv, "s:rpc:h", opts, NULL)) != -1) {
		switch (ch) {
		case 's':
			capsim_cli_sets_add(&sets, optarg, &d); /* reported with the rest */
			break;
		case 'r': resolved = 1; break;
		case 'p':
			print_paths();
			goto out;
		case 'c': root = optarg; break;
		case 'h':
			help(stdout);
			goto out;
		default:
			help(stderr);
			status = CAPSIM_EXIT_USAGE;
			goto out;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "capsim validate: no FILE given\n");
		help(stderr);
		status = CAPSIM_EXIT_USAGE;
		goto out;
	}
	if (d.n) {
		capsim_diags_print(&d, stderr);
		status = CAPSIM_EXIT_USAGE;
		goto out;
	}
	capsim_catalog *cat = NULL;
	for (int i = optind; i < argc; i++) {
		char rn[64];
		long root_line = 0;
		capsim_diags fd = { 0 };
		root_name(argv[i], rn, sizeof rn, &root_line, &fd);
		int known = strcmp(rn, "scenario") == 0 || strcmp(rn, "catalog") == 0 ||
			    strcmp(rn, "models") == 0 || strcmp(rn, "bibliography") == 0;
		if (!fd.n && !known) {
			capsim_diags_add(&fd, argv[i], root_line,
					 "root element <%s> is not one of capsim's files "
					 "(expected <scenario>, <catalog>, <models> or "
					 "<bibliography>)",
					 rn);
		} else if (!fd.n) {
			if (strcmp(rn, "scenario") == 0)
				validate_scenario(argv[i], root, &cat, sets.v, sets.n,
						  resolved, &fd);
			else if (sets.n) {
				capsim_diags_add(&fd, argv[i], 0,
						 "--set applies to scenarios only");
			} else
				validate_catalog_file(argv[i], root, &fd);
		}
		if (fd.n) {
			capsim_diags_print(&fd, stderr);
			status = CAPSIM_EXIT_USAGE;
		}
		capsim_diags_free(&fd);
	}
	capsim_catalog_free(cat);
out:
	capsim_cli_sets_free(&sets);
	capsim_diags_free(&d);
	return status;
}
