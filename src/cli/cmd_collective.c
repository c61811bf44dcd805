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
#include "fabric.h"
#include "scenario.h"
#include "units.h"
#include "xalloc.h"

static void help(FILE *out)
{
	fprintf(out,
		"usage: capsim collective SCENARIO --op OP (--bytes SIZE | --sweep MIN:MAX)\n"
		"                         [--ranks N] [--algo A] [--proto P] [--channels N]\n"
		"                         [--set PATH=VALUE]... [--json] [--verbose]\n"
		"\n"
		"Simulate one NCCL collective on the scenario's cluster. The algorithm,\n"
		"protocol and channels are chosen with NCCL's cost model (2.30) unless\n"
		"forced; the data moves as flows over the fabric's links.\n"
		"\n"
		"  --op OP         all-reduce, all-gather, reduce-scatter, broadcast, reduce,\n"
		"                  all-to-all, send-recv\n"
		"  --bytes SIZE    nccl-tests' size: per rank for all-reduce, broadcast, reduce\n"
		"                  and send-recv; the whole buffer for all-gather,\n"
		"                  reduce-scatter and all-to-all (\"1 GiB\", \"8B\")\n"
		"  --sweep MIN:MAX sizes from MIN to MAX, doubling (\"8B:8GiB\"): a table\n"
		"                  with nccl-tests' columns\n"
		"  --ranks N       ranks, filling nodes in order (default: every GPU)\n"
		"  --algo A        ring, tree, nvls, nvls-tree, collnet-direct (SHARP),\n"
		"                  collnet-chain, pat, hierarchical\n"
		"  --proto P       LL, LL128, Simple\n"
		"  --channels N    channels (default: NCCL's)\n"
		"  --fold, --no-fold  fold ranks into symmetry classes, or simulate every\n"
		"                  flow (default: fold above 1024 ranks with adaptive routing)\n"
		"  --json          one JSON object\n"
		"  --verbose       also print the run summary (events, simulated end time)\n");
}

typedef struct {
	const char *scenario;
	capsim_cli_sets sets;
	int op, algo, proto, channels, ranks, json, verbose, fold;
	double bytes, sweep_min, sweep_max;
	int sweep;
} opts;

static int parse_size(const char *s, double *out)
{
	char err[256];
	if (capsim_units_parse(s, CAPSIM_DIM_BYTES, NULL, out, err, sizeof err) < 0) {
		fprintf(stderr, "capsim collective: %s\n", err);
		return -1;
	}
	return 0;
}

static int parse_args(int argc, char **argv, opts *o, capsim_diags *d)
{
	static const struct option lo[] = {
		{ "op", required_argument, NULL, 'o' },
		{ "bytes", required_argument, NULL, 'b' },
		{ "sweep", required_argument, NULL, 'S' },
		{ "ranks", required_argument, NULL, 'n' },
		{ "algo", required_argument, NULL, 'a' },
		{ "proto", required_argument, NULL, 'p' },
		{ "channels", required_argument, NULL, 'c' },
		{ "set", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "fold", no_argument, NULL, 'F' },
		{ "no-fold", no_argument, NULL, 'U' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;
	o->op = o->algo = o->proto = o->fold = -1;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "o:b:S:n:a:p:c:s:jvh", lo, NULL)) != -1) {
		switch (ch) {
		case 'o':
			if ((o->op = capsim_coll_parse(optarg)) < 0) {
				fprintf(stderr, "capsim collective: unknown --op '%s'\n", optarg);
				return -1;
			}
			break;
		case 'b':
			if (parse_size(optarg, &o->bytes) < 0)
				return -1;
			break;
		case 'S': {
			char *colon = strchr(optarg, ':');
			if (!colon) {
				fprintf(stderr, "capsim collective: --sweep wants MIN:MAX, found '%s'\n", optarg);
				return -1;
			}
			*colon = '\0';
			if (parse_size(optarg, &o->sweep_min) < 0 ||
			    parse_size(colon + 1, &o->sweep_max) < 0)
				return -1;
			if (o->sweep_min <= 0 || o->sweep_max < o->sweep_min) {
				fprintf(stderr, "capsim collective: --sweep needs 0 < MIN <= MAX\n");
				return -1;
			}
			o->sweep = 1;
			break;
		}
		case 'n':
			o->ranks = atoi(optarg);
			if (o->ranks < 1) {
				fprintf(stderr, "capsim collective: --ranks wants a positive count, found '%s'\n", optarg);
				return -1;
			}
			break;
		case 'a':
			if ((o->algo = capsim_collective_algo_parse(optarg)) < 0) {
				fprintf(stderr, "capsim collective: unknown --algo '%s'\n", optarg);
				return -1;
			}
			break;
		case 'p':
			if ((o->proto = capsim_proto_parse(optarg)) < 0) {
				fprintf(stderr, "capsim collective: unknown --proto '%s' (LL, LL128, Simple)\n", optarg);
				return -1;
			}
			break;
		case 'c':
			o->channels = atoi(optarg);
			if (o->channels < 1 || o->channels > 64) {
				fprintf(stderr, "capsim collective: --channels wants 1..64, found '%s'\n", optarg);
				return -1;
			}
			break;
		case 's':
			if (capsim_cli_sets_add(&o->sets, optarg, d) < 0)
				return -1;
			break;
		case 'j': o->json = 1; break;
		case 'F': o->fold = 1; break;
		case 'U': o->fold = 0; break;
		case 'v': o->verbose = 1; break;
		case 'h': help(stdout); return 1;
		default: help(stderr); return -1;
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

static json_t *result_json(int op, double bytes, int n, const capsim_coll_result *r)
{
	json_t *o = json_object();
	json_object_set_new(o, "op", json_string(capsim_coll_names[op]));
	json_object_set_new(o, "bytes", json_real(bytes));
	json_object_set_new(o, "ranks", json_integer(n));
	json_object_set_new(o, "algorithm", json_string(capsim_collective_algo_name(r->algo)));
	json_object_set_new(o, "protocol", json_string(capsim_proto_names[r->proto]));
	json_object_set_new(o, "channels", json_integer(r->channels));
	json_object_set_new(o, "time_s", json_real(r->time_s));
	json_object_set_new(o, "algbw_gb_per_s", json_real(r->algbw_bytes_per_s / 1e9));
	json_object_set_new(o, "busbw_gb_per_s", json_real(r->busbw_bytes_per_s / 1e9));
	json_object_set_new(o, "latency_s", json_real(r->latency_s));
	if (r->nccl_time_s >= 0)
		json_object_set_new(o, "nccl_model_time_s", json_real(r->nccl_time_s));
	return o;
}

int capsim_cmd_collective(int argc, char **argv)
{
	opts o;
	memset(&o, 0, sizeof o);
	capsim_diags d = { 0 };
	int status = CAPSIM_EXIT_USAGE;
	capsim_catalog *cat = NULL;
	capsim_scenario *s = NULL;
	capsim_fabric *f = NULL;
	json_t *root = NULL;

	int pr = parse_args(argc, argv, &o, &d);
	if (pr != 0) {
		capsim_diags_print(&d, stderr);
		status = pr > 0 ? CAPSIM_EXIT_OK : CAPSIM_EXIT_USAGE;
		goto out;
	}
	if (capsim_cli_load(o.scenario, &o.sets, &cat, &s, &d) < 0)
		goto fail;
	f = capsim_fabric_build(s, &d);
	if (!f)
		goto fail;
	int n = o.ranks ? o.ranks : capsim_fabric_gpus(f);

	capsim_coll_req req = { 0 };
	req.op = (capsim_coll)o.op;
	req.ranks = n;
	req.algo = o.algo;
	req.proto = o.proto;
	req.channels = o.channels;
	req.seed = (uint64_t)s->seed;
	req.fold = o.fold;

	if (o.json) {
		root = capsim_cli_json_head(cat, s);
	}

	uint64_t events = 0, flows = 0;
	double end_s = 0;
	if (!o.sweep) {
		capsim_coll_result r;
		req.bytes = o.bytes;
		if (capsim_collective_run(f, s, &req, &r, &d) < 0)
			goto fail;
		events += r.events;
		flows += r.flows;
		end_s += r.time_s;
		if (o.json) {
			json_t *one = result_json(o.op, o.bytes, n, &r);
			json_object_update(root, one);
			json_decref(one);
		} else {
			char t[48], a[48], b[48];
			capsim_units_format(r.time_s, CAPSIM_DIM_SECONDS, t, sizeof t);
			capsim_units_format(r.algbw_bytes_per_s, CAPSIM_DIM_BYTES_PER_S, a, sizeof a);
			capsim_units_format(r.busbw_bytes_per_s, CAPSIM_DIM_BYTES_PER_S, b, sizeof b);
			printf("%s of %.0f bytes on %d ranks (%d nodes): %s, %s, %d channels\n",
			       capsim_coll_names[o.op], o.bytes, n,
			       (n + capsim_fabric_gpus_per_node(f) - 1) / capsim_fabric_gpus_per_node(f),
			       capsim_collective_algo_name(r.algo), capsim_proto_names[r.proto],
			       r.channels);
			printf("  time    %s (latency %.3g us)\n", t, r.latency_s * 1e6);
			printf("  algbw   %s\n  busbw   %s\n", a, b);
			if (r.nccl_time_s >= 0)
				printf("  NCCL's own model: %.4g us\n", r.nccl_time_s * 1e6);
			if (r.busiest_link >= 0) {
				char name[96], c[48];
				capsim_fabric_link_name(f, r.busiest_link, name, sizeof name);
				capsim_units_format(r.busiest_bytes, CAPSIM_DIM_BYTES, c, sizeof c);
				printf("  busiest link %s (%s carried)\n", name, c);
			}
		}
	} else {
		json_t *rows = o.json ? json_array() : NULL;
		if (!o.json) {
			printf("# capsim collective: %s on %d ranks, scenario %s\n",
			       capsim_coll_names[o.op], n, s->name);
			printf("#%11s  %12s  %8s  %6s  %6s  %9s  %7s  %7s  %-14s %-6s %3s\n",
			       "size", "count", "type", "redop", "root", "time", "algbw",
			       "busbw", "algorithm", "proto", "ch");
			printf("#%11s  %12s  %8s  %6s  %6s  %9s  %7s  %7s\n", "(B)",
			       "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)");
		}
		double sum_busbw = 0;
		int rows_n = 0;
		for (double b = o.sweep_min; b <= o.sweep_max * (1 + 1e-12); b *= 2) {
			capsim_coll_result r;
			req.bytes = b;
			if (capsim_collective_run(f, s, &req, &r, &d) < 0)
				goto fail;
			events += r.events;
			flows += r.flows;
			end_s += r.time_s;
			sum_busbw += r.busbw_bytes_per_s / 1e9;
			rows_n++;
			if (o.json) {
				json_array_append_new(rows, result_json(o.op, b, n, &r));
				continue;
			}
			const char *redop = (o.op == CAPSIM_COLL_ALLGATHER || o.op == CAPSIM_COLL_BROADCAST ||
					     o.op == CAPSIM_COLL_ALLTOALL || o.op == CAPSIM_COLL_SENDRECV) ?
						    "none" : "sum";
			const char *rootc = (o.op == CAPSIM_COLL_BROADCAST || o.op == CAPSIM_COLL_REDUCE) ? "0" : "-1";
			printf(" %11.0f  %12ld  %8s  %6s  %6s  %9.2f  %7.2f  %7.2f  %-14s %-6s %3d\n",
			       b, count_of(o.op, b, n), "float", redop, rootc, r.time_s * 1e6,
			       r.algbw_bytes_per_s / 1e9, r.busbw_bytes_per_s / 1e9,
			       capsim_collective_algo_name(r.algo), capsim_proto_names[r.proto],
			       r.channels);
			fflush(stdout);
		}
		if (o.json)
			json_object_set_new(root, "results", rows);
		else
			printf("# Avg bus bandwidth    : %g\n", rows_n ? sum_busbw / rows_n : 0.0);
	}
	if (o.json) {
		json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
		fputc('\n', stdout);
	}
	if (o.verbose)
		fprintf(o.json ? stderr : stdout,
			"# run summary: events %llu, flows %llu, simulated time %.9f s, seed %llu\n",
			(unsigned long long)events, (unsigned long long)flows, end_s,
			(unsigned long long)s->seed);
	status = CAPSIM_EXIT_OK;
	goto out;
fail:
	capsim_diags_print(&d, stderr);
	status = CAPSIM_EXIT_USAGE;
out:
	json_decref(root);
	capsim_fabric_destroy(f);
	free(s);
	capsim_catalog_free(cat);
	capsim_diags_free(&d);
	capsim_cli_sets_free(&o.sets);
	return status;
}
