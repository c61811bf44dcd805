/* cmd_sweep.c - `capsim sweep FILE --db DB [-j N] [--resume]`: every point of
 * a sweep file evaluated in process on N threads (and, under mpirun, on every
 * rank), written to the results store as it comes: one transaction a second
 * or so, each point whole or absent, so that a sweep killed at any moment is
 * resumed with --resume and ends with every point once. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "catalog.h"
#include "cli.h"
#include "progress.h"
#include "run.h"
#include "sweep.h"
#include "xalloc.h"

enum { O_DB, O_JOBS, O_RESUME, O_PLAN, O_BATCH, O_PROGRESS, O_NO_PROGRESS, O_JSON, O_SET,
       O_NO_INTERVALS, O_HELP };
static const capsim_cli_opt sweep_opts[] = {
	[O_DB] = { "db", 0, "RESULTS.sqlite", "the SQLite store the points are written to" },
	[O_JOBS] = { "jobs", 'j', "N",
		     "threads evaluating points (default: the CPUs capsim may\n"
		     "run on; under MPI, one a rank)" },
	[O_RESUME] = { "resume", 0, NULL,
		       "continue the newest sweep of the same name in the store,\n"
		       "skipping every point it holds" },
	[O_PLAN] = { "plan", 0, NULL, "print the points (or why each is dropped); run nothing" },
	[O_BATCH] = { "batch", 0, "N", "commit at least every N points (default 4096)" },
	[O_PROGRESS] = { "progress", 0, NULL, "progress on stderr (the default)" },
	[O_NO_PROGRESS] = { "no-progress", 0, NULL, "no progress" },
	[O_JSON] = { "json", 0, NULL, "the summary as one JSON object" },
	[O_SET] = { "set", 0, "PATH=VALUE",
		    "edit the base scenario, after the sweep file's own <set> edits" },
	[O_NO_INTERVALS] = { "no-intervals", 0, NULL,
			     "store no prediction intervals (KEY_lo, KEY_hi, KEY_lo95,\n"
			     "KEY_hi95 of the shipped error model)" },
	[O_HELP] = { "help", 0, NULL, "this text" },
};
const capsim_cli_cmd capsim_cli_sweep_cmd = {
	.name = "sweep",
	.usage = "usage: capsim sweep FILE --db RESULTS.sqlite [-j N] [--resume] [--plan]\n"
		 "                    [--batch N] [--progress | --no-progress] [--json]\n"
		 "                    [--set PATH=VALUE]... [--no-intervals]\n",
	.about = "Evaluate every point of the sweep file FILE (a base scenario, axes over --set\n"
		 "paths, constraints; docs/user-guide.md, \"Sweeps\") in this process on N\n"
		 "threads, and write each point's parameters and result keys to the SQLite\n"
		 "store RESULTS.sqlite (docs/store.md) as a new sweep. Points that a\n"
		 "constraint drops are counted by constraint and never run; a point that\n"
		 "fails is recorded with its message. --resume needs the sweep file, the base\n"
		 "scenario and the catalog as they were. Points are committed about once a\n"
		 "second and at least every --batch points. Progress goes to stderr: one line\n"
		 "with rate and ETA on a terminal, a line every 10% otherwise.\n"
		 "Under mpirun (or srun with PMIx) the ranks share the points: rank 0 hands\n"
		 "them out a few at a time and writes the store; every rank evaluates.\n",
	.opts = sweep_opts,
	.n_opts = CAPSIM_CLI_N(sweep_opts),
	.after = "Exit status: 0 the sweep is complete (failed points included), 1 a failure\n"
		 "of the run (the store), 2 bad input, 130 interrupted (resume with --resume).\n",
	.in_order = 1,
};

/* Set by SIGINT and SIGTERM, read by every thread: an atomic (lock-free,
 * so that the handler may store it), not a volatile sig_atomic_t, which
 * orders nothing between threads. */
static atomic_int interrupted;
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "the signal handler's flag must be lock-free");

static void on_signal(int sig)
{
	(void)sig;
	int saved = errno;
	atomic_store(&interrupted, 1);
	errno = saved;
}

/* the run's progress on stderr (capsim_sweep_progress_fn) */
static void on_progress(void *ctx, size_t done, size_t failed, size_t total, int final)
{
	(void)final;
	char note[48];
	snprintf(note, sizeof note, "%zu failed", failed);
	capsim_progress_show(ctx, (long)done, (long)total, note);
}

/* ---- the summary ------------------------------------------------------------------------ */

static void summary_json(const capsim_sweep *sw, const capsim_sweep_run_result *res, int threads,
			 const char *db)
{
	json_t *o = json_object();
	json_object_set_new(o, "sweep", json_string(sw->name));
	json_object_set_new(o, "sweep_id", json_integer(res->sweep_id));
	json_object_set_new(o, "db", json_string(db));
	json_object_set_new(o, "points", json_integer((json_int_t)sw->size));
	json_object_set_new(o, "dropped", json_integer((json_int_t)res->dropped));
	json_t *by = json_array();
	for (size_t c = 0; c < sw->n_constraints; c++) {
		if (!res->drops[c])
			continue;
		json_t *e = json_object();
		json_object_set_new(e, "reason", json_string(sw->constraints[c].reason));
		json_object_set_new(e, "line", json_integer(sw->constraints[c].line));
		json_object_set_new(e, "points", json_integer((json_int_t)res->drops[c]));
		if (res->errors[c])
			json_object_set_new(e, "error", json_string(res->first_error[c]));
		json_array_append_new(by, e);
	}
	json_object_set_new(o, "dropped_by", by);
	json_object_set_new(o, "resumed_skipped", json_integer((json_int_t)res->done_before));
	json_object_set_new(o, "ok", json_integer((json_int_t)res->ok));
	json_object_set_new(o, "failed", json_integer((json_int_t)res->failed));
	json_object_set_new(o, "complete", json_boolean(!res->stopped));
	json_t *r = json_array();
	for (int k = 0; k < res->ranks; k++)
		json_array_append_new(r, json_integer((json_int_t)res->by_rank[k]));
	json_object_set_new(o, "by_rank", r);
	json_object_set_new(o, "threads", json_integer(threads));
	json_object_set_new(o, "elapsed_s", json_real(res->elapsed_s));
	json_dumpf(o, stdout, JSON_INDENT(2));
	fputc('\n', stdout);
	json_decref(o);
}

static void summary(const capsim_sweep *sw, const capsim_sweep_run_result *res, const char *db,
		    int threads, int as_json)
{
	if (as_json) {
		summary_json(sw, res, threads, db);
		return;
	}
	double elapsed = res->elapsed_s;
	printf("sweep %s (id %lld in %s): %llu points\n", sw->name, (long long)res->sweep_id, db,
	       (unsigned long long)sw->size);
	if (res->dropped)
		printf("  dropped by constraints: %llu\n", (unsigned long long)res->dropped);
	for (size_t c = 0; c < sw->n_constraints; c++) {
		if (!res->drops[c])
			continue;
		printf("    %llu  %s (line %ld)\n", (unsigned long long)res->drops[c],
		       sw->constraints[c].reason, sw->constraints[c].line);
		if (res->errors[c])
			printf("        %llu of them could not be tested: %s\n",
			       (unsigned long long)res->errors[c], res->first_error[c]);
	}
	if (res->done_before)
		printf("  in the store already (resumed): %llu\n",
		       (unsigned long long)res->done_before);
	printf("  evaluated: %zu ok, %zu failed, in %.2f s (%.1f points/s) on %d thread%s%s\n",
	       res->ok, res->failed, elapsed,
	       elapsed > 0 ? (double)(res->ok + res->failed) / elapsed : 0.0, threads,
	       threads == 1 ? "" : "s", res->ranks > 1 ? " a rank" : "");
	if (res->ranks > 1) {
		printf("  points by rank:");
		for (int k = 0; k < res->ranks; k++)
			printf(" %zu", res->by_rank[k]);
		putchar('\n');
	}
	if (res->stopped)
		printf("  interrupted: %zu points not run; capsim sweep --resume continues\n",
		       res->planned - res->ok - res->failed);
}

static void print_plan(const capsim_sweep *sw)
{
	printf("sweep %s: %llu points, %zu axes\n", sw->name, (unsigned long long)sw->size,
	       sw->n_axes);
	capsim_set sets[CAPSIM_SWEEP_MAX_AXES];
	for (uint64_t i = 0; i < sw->size; i++) {
		capsim_sweep_point(sw, i, sets);
		printf("%llu", (unsigned long long)i);
		for (size_t a = 0; a < sw->n_axes; a++)
			printf(" %s=%s", sets[a].path, sets[a].value);
		int error;
		char err[512];
		long c = capsim_sweep_check(sw, i, &error, err, sizeof err);
		if (c >= 0)
			printf("  # dropped: %s%s%s", sw->constraints[c].reason, error ? ": " : "",
			       error ? err : "");
		putchar('\n');
	}
}

/* ---- running it -------------------------------------------------------------------------- */

typedef struct {
	const char *file, *db;
	int threads, resume, plan_only, as_json, progress; /* progress: -1 auto */
	int no_intervals;
	int batch;                    /* most points a transaction */
	capsim_cli_sets sets;
} options;

static int parse_args(int argc, char **argv, options *o)
{
	o->threads = 0; /* not given: set by capsim_cmd_sweep */
	o->batch = 4096;
	o->progress = -1;
	optind = 1;
	int c;
	capsim_diags d = { 0 };
	while ((c = capsim_cli_next(&capsim_cli_sweep_cmd, argc, argv)) != -1) {
		switch (c) {
		case O_DB: o->db = optarg; break;
		case O_JOBS:
			o->threads = capsim_cli_count(optarg, 1024);
			if (o->threads < 1) {
				fprintf(stderr, "capsim sweep: -j: expected a number of threads from 1 to "
					"1024, found '%s'\n", optarg);
				return -1;
			}
			break;
		case O_BATCH:
			o->batch = capsim_cli_count(optarg, 1000000);
			if (o->batch < 1) {
				fprintf(stderr, "capsim sweep: --batch: expected points a transaction from "
					"1 to 1000000, found '%s'\n", optarg);
				return -1;
			}
			break;
		case O_RESUME: o->resume = 1; break;
		case O_PLAN: o->plan_only = 1; break;
		case O_JSON: o->as_json = 1; break;
		case O_NO_INTERVALS: o->no_intervals = 1; break;
		case O_PROGRESS: o->progress = 1; break;
		case O_NO_PROGRESS: o->progress = 0; break;
		case O_SET:
			if (capsim_cli_sets_add(&o->sets, optarg, &d) < 0) {
				capsim_diags_print(&d, stderr);
				capsim_diags_free(&d);
				return -1;
			}
			break;
		case O_HELP: capsim_cli_help(&capsim_cli_sweep_cmd, stdout); return 1;
		default: return -2; /* said why, and where --help is */
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "capsim sweep: expected one sweep file, found %d arguments\n",
			argc - optind);
		return -1;
	}
	o->file = argv[optind];
	if (!o->plan_only && !o->db) {
		fprintf(stderr, "capsim sweep: --db FILE is required (the results store)\n");
		return -1;
	}
	return 0;
}

/* the sweep once its points are known: rank 0's part; returns as
 * capsim_sweep_run */
static int run_sweep(const options *o, const capsim_sweep *sw, const capsim_catalog *cat,
		     const capsim_scenario *base, const capsim_err_model *errors, int ranks,
		     capsim_diags *d)
{
	capsim_progress pr;
	capsim_progress_init(&pr, "capsim sweep", "points",
			     o->progress == 0 ? CAPSIM_PROGRESS_OFF : CAPSIM_PROGRESS_LOG);
	capsim_sweep_run_opts ro = { .threads = o->threads, .batch = (size_t)o->batch,
				     .resume = o->resume, .ranks = ranks,
				     .version = capsim_version_string(), .stop = &interrupted,
				     .progress = on_progress, .progress_ctx = &pr,
				     .errors = errors };
	capsim_sweep_run_result res;
	int rc = capsim_sweep_run(sw, cat, base, o->db, &ro, &res, d);
	capsim_progress_end(&pr);
	if (rc >= 0)
		summary(sw, &res, o->db, o->threads, o->as_json);
	capsim_sweep_run_result_free(&res);
	return rc;
}

int capsim_cmd_sweep(int argc, char **argv)
{
	options o = { 0 };
	int rank = 0, ranks = 1, mpi = 0;
	if (capsim_sweep_mpi_launched()) {
		if (!capsim_sweep_mpi_built()) {
			fprintf(stderr, "capsim sweep: launched by MPI, but this capsim was built without "
				"MPI (each rank would run the whole sweep); rebuild with Open MPI's "
				"development files installed\n");
			return CAPSIM_EXIT_USAGE;
		}
		if (capsim_sweep_mpi_init(&argc, &argv, &rank, &ranks) < 0)
			return CAPSIM_EXIT_FAILURE;
		mpi = 1;
	}
	int status;
	int prc = parse_args(argc, argv, &o);
	if (prc != 0) {
		if (prc == -1)
			fprintf(stderr, "try 'capsim sweep --help'\n");
		status = prc > 0 ? CAPSIM_EXIT_OK : CAPSIM_EXIT_USAGE;
		goto out;
	}
	/* without -j: the CPUs this process may run on; under MPI of several
	 * ranks one a rank, the ranks being the parallelism (mpirun binds a
	 * rank to a core, or to a socket past two ranks, where each rank
	 * taking the socket's cores would oversubscribe them) */
	if (!o.threads)
		o.threads = mpi && ranks > 1 ? 1 : capsim_cli_cpus(1024);
	capsim_diags d = { 0 };
	capsim_catalog *cat = capsim_catalog_create();
	capsim_scenario *base = capsim_xcalloc(1, sizeof *base);
	capsim_sweep *sw = NULL;
	capsim_err_model *errors = NULL;
	status = CAPSIM_EXIT_USAGE;
	char found[4096];
	const char *file = capsim_cli_find_input(o.file, found, sizeof found, &d);
	if (file && capsim_cli_catalog(cat, &d) == 0 &&
	    (o.no_intervals || o.plan_only || (errors = capsim_cli_err_model("sweep", &d))))
		sw = capsim_sweep_load(file, cat, o.sets.v, o.sets.n, base, &d);
	if (!sw) {
		if (rank == 0)
			capsim_diags_print(&d, stderr);
		status = capsim_diags_runtime(&d) ? CAPSIM_EXIT_FAILURE : CAPSIM_EXIT_USAGE;
	} else if (o.plan_only) {
		if (rank == 0)
			print_plan(sw);
		status = CAPSIM_EXIT_OK;
	} else {
		if (rank == 0) {
			struct sigaction sa = { 0 };
			sa.sa_handler = on_signal;
			sigaction(SIGINT, &sa, NULL);
			sigaction(SIGTERM, &sa, NULL);
			int rc = run_sweep(&o, sw, cat, base, errors, ranks, &d);
			if (rc < 0)
				capsim_diags_print(&d, stderr);
			status = rc < 0 ? (capsim_diags_runtime(&d) ? CAPSIM_EXIT_FAILURE :
					   CAPSIM_EXIT_USAGE) : rc > 0 ? 130 : CAPSIM_EXIT_OK;
			if (rc < 0 && mpi)
				capsim_sweep_mpi_abort(status);
		} else {
			capsim_sweep_run_rank(sw, cat, base, errors);
			status = CAPSIM_EXIT_OK;
		}
	}
	capsim_sweep_free(sw);
	capsim_err_model_free(errors);
	free(base);
	capsim_catalog_free(cat);
	capsim_diags_free(&d);
out:
	capsim_cli_sets_free(&o.sets);
	if (mpi)
		capsim_sweep_mpi_finalize();
	return status;
}
