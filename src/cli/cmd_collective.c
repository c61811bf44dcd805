/* cmd_collective.c - `capsim collective`: one NCCL collective on a scenario's
 * cluster, or a sweep of sizes printed as nccl-tests prints its tables. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "catalog.h"
#include "cli.h"
#include "collective.h"
#include "eval.h"
#include "scenario.h"
#include "units.h"
#include "xalloc.h"

enum { O_OP, O_BYTES, O_SWEEP, O_RANKS, O_ALGO, O_PROTO, O_CHANNELS, O_FOLD, O_NO_FOLD, O_SET,
       O_JSON, O_NO_INTERVALS, O_VERBOSE, O_HELP };
static const capsim_cli_opt collective_opts[] = {
	[O_OP] = { "op", 'o', "OP",
		   "all-reduce, all-gather, reduce-scatter, broadcast, reduce,\n"
		   "all-to-all, send-recv" },
	[O_BYTES] = { "bytes", 'b', "SIZE",
		      "nccl-tests' size: per rank for all-reduce, broadcast, reduce\n"
		      "and send-recv; the whole buffer for all-gather,\n"
		      "reduce-scatter and all-to-all (\"1 GiB\", \"8B\")" },
	[O_SWEEP] = { "sweep", 'S', "MIN:MAX",
		      "sizes from MIN to MAX, doubling (\"8B:8GiB\"): a table\n"
		      "with nccl-tests' columns" },
	[O_RANKS] = { "ranks", 'n', "N", "ranks, filling nodes in order (default: every GPU)" },
	[O_ALGO] = { "algo", 'a', "A",
		     "ring, tree, nvls, nvls-tree, collnet-direct (SHARP),\n"
		     "collnet-chain, pat, hierarchical" },
	[O_PROTO] = { "proto", 'p', "P", "LL, LL128, Simple" },
	[O_CHANNELS] = { "channels", 'c', "N", "channels (default: NCCL's)" },
	[O_FOLD] = { "fold", 0, NULL,
		     "fold ranks into symmetry classes (default: fold when the\n"
		     "flows fall into at most half as many classes, and count a\n"
		     "plan of 4,096 alike flows or more rather than simulate it;\n"
		     "the results are the same)" },
	[O_NO_FOLD] = { "no-fold", 0, NULL,
			"simulate every flow, up to workload.flow-limit" },
	[O_SET] = { "set", 's', "PATH=VALUE", "override a scenario field" },
	[O_JSON] = { "json", 'j', NULL, "one JSON object" },
	[O_NO_INTERVALS] = { "no-intervals", 0, NULL,
			     "leave out the prediction interval of the bus bandwidth\n"
			     "(and of the algorithm bandwidth and time that follow)" },
	[O_VERBOSE] = { "verbose", 'v', NULL,
			"also print the run summary (events, simulated end time,\n"
			"classes when folded)" },
	[O_HELP] = { "help", 'h', NULL, "this text" },
};
const capsim_cli_cmd capsim_cli_collective_cmd = {
	.name = "collective",
	.usage = "usage: capsim collective SCENARIO --op OP (--bytes SIZE | --sweep MIN:MAX)\n"
		 "                         [--ranks N] [--algo A] [--proto P] [--channels N]\n"
		 "                         [--set PATH=VALUE]... [--json] [--no-intervals]\n"
		 "                         [--verbose]\n",
	.about = "Simulate one NCCL collective on the scenario's cluster. The algorithm,\n"
		 "protocol and channels are chosen with NCCL's cost model (2.30) unless\n"
		 "forced; the data moves as flows over the fabric's links.\n",
	.opts = collective_opts,
	.n_opts = CAPSIM_CLI_N(collective_opts),
};

typedef struct {
	const char *scenario;
	capsim_cli_sets sets;
	int op, algo, proto, channels, ranks, json, verbose, fold, no_intervals;
	double bytes, sweep_min, sweep_max;
	int sweep;
} opts;

/* largest size: 16 TiB, far above any one collective's buffer (nccl-tests'
 * counts are size_t; capsim's flows are doubles) */
#define MAX_COLL_BYTES 17592186044416.0

/* a collective's size: a whole number of bytes from 1 B to 16 TiB */
static int parse_size(const char *opt, const char *s, double *out)
{
	return capsim_cli_quantity("collective", opt, s, CAPSIM_DIM_BYTES, 1.0, MAX_COLL_BYTES, 1,
				   "a whole number of bytes from 1 B to 16 TiB", out);
}

static int parse_args(int argc, char **argv, opts *o, capsim_diags *d)
{
	int ch;
	o->op = o->algo = o->proto = o->fold = -1;
	optind = 1;
	while ((ch = capsim_cli_next(&capsim_cli_collective_cmd, argc, argv)) != -1) {
		switch (ch) {
		case O_OP:
			if ((o->op = capsim_coll_parse(optarg)) < 0) {
				fprintf(stderr, "capsim collective: unknown --op '%s'\n", optarg);
				return -1;
			}
			break;
		case O_BYTES:
			if (parse_size("--bytes", optarg, &o->bytes) < 0)
				return -1;
			break;
		case O_SWEEP: {
			char *colon = strchr(optarg, ':');
			if (!colon) {
				fprintf(stderr, "capsim collective: --sweep wants MIN:MAX, found '%s'\n", optarg);
				return -1;
			}
			*colon = '\0';
			if (parse_size("--sweep", optarg, &o->sweep_min) < 0 ||
			    parse_size("--sweep", colon + 1, &o->sweep_max) < 0)
				return -1;
			if (o->sweep_min <= 0 || o->sweep_max < o->sweep_min) {
				fprintf(stderr, "capsim collective: --sweep needs 0 < MIN <= MAX\n");
				return -1;
			}
			o->sweep = 1;
			break;
		}
		case O_RANKS:
			o->ranks = capsim_cli_count(optarg, 1 << 24);
			if (o->ranks < 1) {
				fprintf(stderr, "capsim collective: --ranks wants a positive count, found '%s'\n", optarg);
				return -1;
			}
			break;
		case O_ALGO:
			if ((o->algo = capsim_collective_algo_parse(optarg)) < 0) {
				fprintf(stderr, "capsim collective: unknown --algo '%s'\n", optarg);
				return -1;
			}
			break;
		case O_PROTO:
			if ((o->proto = capsim_proto_parse(optarg)) < 0) {
				fprintf(stderr, "capsim collective: unknown --proto '%s' (LL, LL128, Simple)\n", optarg);
				return -1;
			}
			break;
		case O_CHANNELS:
			o->channels = capsim_cli_count(optarg, 64);
			if (o->channels < 1) {
				fprintf(stderr, "capsim collective: --channels wants 1..64, found '%s'\n", optarg);
				return -1;
			}
			break;
		case O_SET:
			if (capsim_cli_sets_add(&o->sets, optarg, d) < 0)
				return -1;
			break;
		case O_JSON: o->json = 1; break;
		case O_NO_INTERVALS: o->no_intervals = 1; break;
		case O_FOLD: o->fold = 1; break;
		case O_NO_FOLD: o->fold = 0; break;
		case O_VERBOSE: o->verbose = 1; break;
		case O_HELP: capsim_cli_help(&capsim_cli_collective_cmd, stdout); return 1;
		default: return -1;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "capsim collective: one SCENARIO expected\n");
		return -1;
	}
	o->scenario = argv[optind];
	if (o->op < 0) {
		fprintf(stderr, "capsim collective: --op is required\n");
		return -1;
	}
	if (o->sweep && o->bytes > 0) {
		fprintf(stderr, "capsim collective: --bytes and --sweep: give one of them\n");
		return -1;
	}
	if (!o->sweep && !(o->bytes > 0)) {
		fprintf(stderr, "capsim collective: --bytes SIZE or --sweep MIN:MAX is required\n");
		return -1;
	}
	return 0;
}

/* elements per rank nccl-tests would pass to NCCL (float, 4 bytes) */
static long count_of(int op, double bytes, int n)
{
	double per = bytes / 4.0;
	if (op == CAPSIM_COLL_ALLGATHER || op == CAPSIM_COLL_REDUCESCATTER ||
	    op == CAPSIM_COLL_ALLTOALL)
		per /= n;
	return (long)per;
}

/* The bus bandwidth's band and what follows from it at one size: the
 * algorithm bandwidth in proportion, the time inversely (ends swapped). */
static void band_json(const capsim_err_band *b, const capsim_coll_point *p, json_t *o)
{
	static const char *const ends[CAPSIM_ERR__LEVELS][2] = { { "_lo", "_hi" },
								  { "_lo95", "_hi95" } };
	for (int l = 0; l < CAPSIM_ERR__LEVELS; l++) {
		if (!b->has[l])
			continue;
		const struct {
			const char *key;
			double lo, hi;
		} v[] = {
			{ "time_s", p->r.time_s / b->hi[l], p->r.time_s / b->lo[l] },
			{ "algbw_gb_per_s", p->r.algbw_bytes_per_s / 1e9 * b->lo[l],
			  p->r.algbw_bytes_per_s / 1e9 * b->hi[l] },
			{ "busbw_gb_per_s", p->r.busbw_bytes_per_s / 1e9 * b->lo[l],
			  p->r.busbw_bytes_per_s / 1e9 * b->hi[l] },
		};
		for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
			char k[64];
			snprintf(k, sizeof k, "%s%s", v[i].key, ends[l][0]);
			json_object_set_new(o, k, json_real(v[i].lo));
			snprintf(k, sizeof k, "%s%s", v[i].key, ends[l][1]);
			json_object_set_new(o, k, json_real(v[i].hi));
		}
	}
}

/* "bands": the bus bandwidth's levels (null: none), each with its factors,
 * group and n */
static json_t *bands_json(const capsim_err_band *b)
{
	json_t *q = json_object();
	for (int l = 0; l < CAPSIM_ERR__LEVELS; l++) {
		json_t *v = b->has[l] ? json_pack("{s:f, s:f, s:s, s:I}", "lo", b->lo[l], "hi",
						  b->hi[l], "group", b->group[l], "n",
						  (json_int_t)b->n[l]) :
					json_null();
		json_object_set_new(q, capsim_err_level_names[l], v);
	}
	json_t *o = json_object();
	json_object_set_new(o, "source", json_string(
		"split-conformal prediction intervals on capsim's own validation residuals "
		"(docs/model.md and docs/validation.md, \"Error bands\"): KEY_lo, KEY_hi at 80%, "
		"KEY_lo95, KEY_hi95 at 95%"));
	json_object_set_new(o, "busbw", q);
	return o;
}

/* the line that says where the band comes from */
static void print_band_source(const capsim_err_band *b)
{
	printf("%s80%% prediction interval of the bus bandwidth: x%.3f-%.3f (%s, n %zu; capsim's "
	       "own validation residuals, docs/validation.md)\n", "# ", b->lo[CAPSIM_ERR_80],
	       b->hi[CAPSIM_ERR_80], b->group[CAPSIM_ERR_80], b->n[CAPSIM_ERR_80]);
}

static void print_one(const capsim_coll_point *p, const capsim_err_band *band)
{
	const capsim_coll_result *r = &p->r;
	char t[48], a[48], b[48];
	capsim_units_format(r->time_s, CAPSIM_DIM_SECONDS, t, sizeof t);
	capsim_units_format(r->algbw_bytes_per_s, CAPSIM_DIM_BYTES_PER_S, a, sizeof a);
	capsim_units_format(r->busbw_bytes_per_s, CAPSIM_DIM_BYTES_PER_S, b, sizeof b);
	printf("%s of %.0f bytes on %d ranks (%d nodes): %s, %s, %d channels\n",
	       capsim_coll_names[p->op], p->bytes, p->ranks, p->nodes,
	       capsim_collective_algo_name(r->algo), capsim_proto_names[r->proto], r->channels);
	printf("  time    %s (latency %.3g us)\n", t, r->latency_s * 1e6);
	if (band->has[CAPSIM_ERR_80]) {
		char lo[48], hi[48];
		capsim_units_format(r->busbw_bytes_per_s * band->lo[CAPSIM_ERR_80],
				    CAPSIM_DIM_BYTES_PER_S, lo, sizeof lo);
		capsim_units_format(r->busbw_bytes_per_s * band->hi[CAPSIM_ERR_80],
				    CAPSIM_DIM_BYTES_PER_S, hi, sizeof hi);
		const char *u = strrchr(b, ' '), *ul = strrchr(lo, ' '), *uh = strrchr(hi, ' ');
		if (u && ul && uh && strcmp(u, ul) == 0 && strcmp(u, uh) == 0) {
			lo[ul - lo] = '\0'; /* "(445.3-628)" in the value's unit */
			hi[uh - hi] = '\0';
		}
		printf("  algbw   %s\n  busbw   %s (%s-%s)\n", a, b, lo, hi);
	} else {
		printf("  algbw   %s\n  busbw   %s\n", a, b);
	}
	if (r->nccl_time_s >= 0)
		printf("  NCCL's own model: %.4g us\n", r->nccl_time_s * 1e6);
	if (p->busiest_link[0]) {
		char c[48];
		capsim_units_format(r->busiest_bytes, CAPSIM_DIM_BYTES, c, sizeof c);
		printf("  busiest link %s (%s carried)\n", p->busiest_link, c);
	}
	if (r->approximation)
		printf("  approximation: %s\n", r->approximation);
}

/* nccl-tests' table */
static void print_sweep(const capsim_scenario *s, const capsim_coll_point *p, size_t n)
{
	int op = p[0].op;
	printf("# capsim collective: %s on %d ranks, scenario %s\n", capsim_coll_names[op],
	       p[0].ranks, s->name);
	printf("#%11s  %12s  %8s  %6s  %6s  %9s  %7s  %7s  %-14s %-6s %3s\n", "size", "count",
	       "type", "redop", "root", "time", "algbw", "busbw", "algorithm", "proto", "ch");
	printf("#%11s  %12s  %8s  %6s  %6s  %9s  %7s  %7s\n", "(B)", "(elements)", "", "", "",
	       "(us)", "(GB/s)", "(GB/s)");
	const char *redop = (op == CAPSIM_COLL_ALLGATHER || op == CAPSIM_COLL_BROADCAST ||
			     op == CAPSIM_COLL_ALLTOALL || op == CAPSIM_COLL_SENDRECV) ? "none" : "sum";
	const char *rootc = (op == CAPSIM_COLL_BROADCAST || op == CAPSIM_COLL_REDUCE) ? "0" : "-1";
	double sum = 0;
	for (size_t i = 0; i < n; i++) {
		const capsim_coll_result *r = &p[i].r;
		sum += r->busbw_bytes_per_s / 1e9;
		printf(" %11.0f  %12ld  %8s  %6s  %6s  %9.2f  %7.2f  %7.2f  %-14s %-6s %3d\n",
		       p[i].bytes, count_of(op, p[i].bytes, p[i].ranks), "float", redop, rootc,
		       r->time_s * 1e6, r->algbw_bytes_per_s / 1e9, r->busbw_bytes_per_s / 1e9,
		       capsim_collective_algo_name(r->algo), capsim_proto_names[r->proto],
		       r->channels);
	}
	printf("# Avg bus bandwidth    : %g\n", n ? sum / (double)n : 0.0);
	for (size_t i = 0; i < n; i++)
		if (p[i].r.approximation) {
			printf("# approximation (from %.0f B): %s\n", p[i].bytes, p[i].r.approximation);
			break;
		}
}

/* The JSON of n points (one: its keys at the top; a sweep: "results"), each
 * with its ends where band is given, and then the bands object */
static json_t *collective_json(const capsim_catalog *cat, const capsim_scenario *s,
			       const capsim_coll_point *pts, size_t n, int sweep,
			       const capsim_err_band *band)
{
	const capsim_err_band none = { 0 };
	json_t *root = capsim_cli_json_head(cat, s), *rows = json_array();
	for (size_t i = 0; i < n; i++) {
		json_t *one = capsim_coll_point_json(&pts[i]);
		band_json(band ? band : &none, &pts[i], one);
		if (sweep) {
			json_array_append_new(rows, one);
			continue;
		}
		json_object_update(root, one);
		json_decref(one);
	}
	if (sweep)
		json_object_set_new(root, "results", rows);
	else
		json_decref(rows);
	if (band)
		json_object_set_new(root, "bands", bands_json(band));
	return root;
}

int capsim_cmd_collective(int argc, char **argv)
{
	opts o;
	memset(&o, 0, sizeof o);
	capsim_diags d = { 0 };
	int status = CAPSIM_EXIT_USAGE;
	capsim_catalog *cat = NULL;
	capsim_scenario *s = NULL;
	json_t *root = NULL;
	double *sizes = NULL;
	capsim_coll_point *pts = NULL;
	capsim_err_model *errors = NULL;
	capsim_err_band band = { 0 };

	int pr = parse_args(argc, argv, &o, &d);
	if (pr != 0) {
		capsim_diags_print(&d, stderr);
		status = pr > 0 ? CAPSIM_EXIT_OK : CAPSIM_EXIT_USAGE;
		goto out;
	}
	if (!o.no_intervals && !(errors = capsim_cli_err_model("collective", &d)))
		goto fail;
	if (capsim_cli_load(o.scenario, &o.sets, &cat, &s, &d) < 0)
		goto fail;
	capsim_coll_req req = { 0 };
	req.op = (capsim_coll)o.op;
	req.ranks = o.ranks; /* 0: every GPU */
	req.algo = o.algo;
	req.proto = o.proto;
	req.channels = o.channels;
	req.seed = (uint64_t)s->seed;
	req.fold = o.fold;
	/* one size, or the sweep's: MIN, doubling, up to MAX */
	size_t n_sizes = 0;
	sizes = capsim_xcalloc(64, sizeof *sizes);
	if (!o.sweep)
		sizes[n_sizes++] = o.bytes;
	for (double b = o.sweep_min; o.sweep && b <= o.sweep_max * (1 + 1e-12); b *= 2) {
		if (n_sizes == 64) {
			capsim_diags_add_at(&d, "--sweep", "more than 64 sizes from MIN to MAX, doubling");
			goto fail;
		}
		sizes[n_sizes++] = b;
	}
	pts = capsim_xcalloc(n_sizes, sizeof *pts);
	if (capsim_eval_collectives(s, &req, sizes, n_sizes, pts, &d) < 0)
		goto fail;
	if (errors)
		capsim_eval_busbw_band(s, errors, pts[0].ranks, &band);
	uint64_t events = 0, flows = 0;
	size_t fclasses = 0, lclasses = 0, n_folded = 0, n_block = 0, n_counted = 0;
	int blocks = 0;
	double end_s = 0;
	for (size_t i = 0; i < n_sizes; i++) {
		events += pts[i].r.events;
		flows += pts[i].r.flows;
		if (pts[i].r.quotient_blocks) {
			n_block++;
			blocks = pts[i].r.quotient_blocks;
		}
		n_counted += pts[i].r.counted != 0;
		if (pts[i].r.folded) {
			n_folded++;
			fclasses += pts[i].r.flow_classes;
			if (pts[i].r.link_classes > lclasses)
				lclasses = pts[i].r.link_classes;
		}
		end_s += pts[i].r.time_s;
	}
	if (o.json)
		root = collective_json(cat, s, pts, n_sizes, o.sweep, errors ? &band : NULL);
	else if (!o.sweep)
		print_one(&pts[0], &band);
	else
		print_sweep(s, pts, n_sizes);
	if (!o.json && band.has[CAPSIM_ERR_80])
		print_band_source(&band);
	if (o.json) {
		json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
		fputc('\n', stdout);
	}
	if (o.verbose) {
		FILE *to = o.json ? stderr : stdout;
		fprintf(to, "# run summary: events %llu, flows %llu, simulated time %.9f s, seed %llu\n",
			(unsigned long long)events, (unsigned long long)flows, end_s,
			(unsigned long long)s->seed);
		if (n_folded)
			fprintf(to, "# folded: %zu of %zu sizes, %zu flow classes, at most %zu link classes\n",
				n_folded, n_sizes, fclasses, lclasses);
		if (n_block)
			fprintf(to, "# on one block: %zu of %zu sizes simulated on the first of %d alike "
				"blocks of nodes\n", n_block, n_sizes, blocks);
		if (n_counted)
			fprintf(to, "# counted: %zu of %zu sizes routed and counted onto the links, not "
				"simulated (docs/model.md, \"Past the flow limit\")\n", n_counted, n_sizes);
	}
	status = CAPSIM_EXIT_OK;
	goto out;
fail:
	capsim_diags_print(&d, stderr);
	status = CAPSIM_EXIT_USAGE;
out:
	json_decref(root);
	free(sizes);
	free(pts);
	free(s);
	capsim_err_model_free(errors);
	capsim_catalog_free(cat);
	capsim_diags_free(&d);
	capsim_cli_sets_free(&o.sets);
	return status;
}
