/* cmd_sweep.c - `capsim sweep FILE --db DB [-j N] [--resume]`: every point of
 * a sweep file evaluated in process on N threads (and, under mpirun, on every
 * rank), written to the results store as it comes: one transaction a second
 * or so, each point whole or absent, so that a sweep killed at any moment is
 * resumed with --resume and ends with every point once. */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "catalog.h"
#include "cli.h"
#include "clock.h"
#include "eval.h"
#include "results.h"
#include "store.h"
#include "sweep.h"
#include "sweep_run.h"
#include "xalloc.h"

static void help(FILE *out)
{
	fprintf(out,
		"usage: capsim sweep FILE --db RESULTS.sqlite [-j N] [--resume] [--plan]\n"
		"                    [--batch N] [--progress | --no-progress] [--json]\n"
		"                    [--set PATH=VALUE]...\n"
		"\n"
		"Evaluate every point of the sweep file FILE (a base scenario, axes over --set\n"
		"paths, constraints; docs/user-guide.md, \"Sweeps\") in this process on N\n"
		"threads (-j, default 1), and write each point's parameters and result keys\n"
		"to the SQLite store RESULTS.sqlite (docs/store.md) as a new sweep. Points that\n"
		"a constraint drops are counted by constraint and never run; a point that\n"
		"fails is recorded with its message. --resume continues the newest sweep of\n"
		"the same name in the store, skipping every point it holds (the sweep file,\n"
		"the base scenario and the catalog must be as they were). --plan prints the\n"
		"points (or why each is dropped) and runs nothing. --set edits the base\n"
		"scenario, after the sweep file's own <set> edits. Points are committed\n"
		"about once a second and at least every --batch points (default 4096).\n"
		"Progress goes to stderr: a bar with rate and ETA on a terminal, a line\n"
		"every 10%% otherwise; --no-progress turns it off.\n"
		"Under mpirun (or srun with PMIx) the ranks share the points: rank 0 hands\n"
		"them out a few at a time and writes the store; every rank evaluates.\n"
		"Exit status: 0 the sweep is complete (failed points included), 1 a failure\n"
		"of the run (the store), 2 bad input, 130 interrupted (resume with --resume).\n");
}

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

/* ---- the points to run ------------------------------------------------------------ */

typedef struct {
	int64_t *idx;                 /* to evaluate, ascending */
	size_t n;
	uint64_t dropped;             /* by constraints */
	uint64_t *drops;              /* by constraint */
	uint64_t *errors;             /* of them, a test that could not be evaluated */
	char **first_error;           /* each constraint's first such message */
	uint64_t done_before;         /* in the store already (--resume) */
} plan;

static void plan_free(plan *p, size_t n_constraints)
{
	free(p->idx);
	free(p->drops);
	free(p->errors);
	for (size_t c = 0; p->first_error && c < n_constraints; c++)
		free(p->first_error[c]);
	free(p->first_error);
}

static int has_index(const int64_t *v, size_t n, int64_t x)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid] < x)
			lo = mid + 1;
		else if (v[mid] > x)
			hi = mid;
		else
			return 1;
	}
	return 0;
}

/* every point that passes the constraints and is not among done[n_done] */
static void make_plan(const capsim_sweep *sw, const int64_t *done, size_t n_done, plan *p)
{
	size_t nc = sw->n_constraints ? sw->n_constraints : 1;
	memset(p, 0, sizeof *p);
	p->drops = capsim_xcalloc(nc, sizeof *p->drops);
	p->errors = capsim_xcalloc(nc, sizeof *p->errors);
	p->first_error = capsim_xcalloc(nc, sizeof *p->first_error);
	size_t cap = 0;
	for (uint64_t i = 0; i < sw->size; i++) {
		int error;
		char err[512];
		long c = capsim_sweep_check(sw, i, &error, err, sizeof err);
		if (c >= 0) {
			p->dropped++;
			p->drops[c]++;
			if (error && p->errors[c]++ == 0)
				p->first_error[c] = capsim_xstrdup(err);
			continue;
		}
		if (has_index(done, n_done, (int64_t)i)) {
			p->done_before++;
			continue;
		}
		if (p->n == cap) {
			cap = cap ? 2 * cap : 1024;
			p->idx = capsim_xrealloc(p->idx, cap * sizeof *p->idx);
		}
		p->idx[p->n++] = (int64_t)i;
	}
}

/* ---- work shared by the threads ------------------------------------------------------ */

typedef struct {
	sweep_job job;
	const plan *pl;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	size_t next;                  /* the next of pl->idx to hand out */
	int stop;                     /* no more handing out (interrupted, or a store failure) */
	sweep_item *head, *tail;      /* done, for the writer */
	int running;                  /* worker threads not yet finished */
	size_t *by_rank;              /* points each rank evaluated (the writer's count) */
	int inline_eval;              /* no worker thread: the writer's thread evaluates */
} shared;

/* up to max indices from the plan into out; returns how many */
static size_t take(shared *sh, int64_t *out, size_t max)
{
	pthread_mutex_lock(&sh->mu);
	size_t n = 0;
	while (!sh->stop && !interrupted && sh->next < sh->pl->n && n < max)
		out[n++] = sh->pl->idx[sh->next++];
	pthread_mutex_unlock(&sh->mu);
	return n;
}

static void hand_in(shared *sh, sweep_item *it)
{
	pthread_mutex_lock(&sh->mu);
	if (sh->tail)
		sh->tail->next = it;
	else
		sh->head = it;
	sh->tail = it;
	pthread_cond_signal(&sh->cv);
	pthread_mutex_unlock(&sh->mu);
}

static void *worker(void *arg)
{
	shared *sh = arg;
	int64_t i;
	while (take(sh, &i, 1) == 1)
		hand_in(sh, sweep_eval_point(&sh->job, i));
	pthread_mutex_lock(&sh->mu);
	sh->running--;
	pthread_cond_signal(&sh->cv);
	pthread_mutex_unlock(&sh->mu);
	return NULL;
}

/* Start up to n worker threads into th; returns how many started (counted
 * here, not read back from sh->running: a worker that finishes at once has
 * taken itself off that count already). Each is counted in sh->running,
 * under the lock, before it starts, so that the count never goes below the
 * workers still to finish. Where pthread_create fails, says so with its own
 * error code (it sets no errno) and starts no more. */
static int start_workers(shared *sh, pthread_t *th, int n)
{
	int started = 0, why = 0;
	while (started < n) {
		pthread_mutex_lock(&sh->mu);
		sh->running++;
		pthread_mutex_unlock(&sh->mu);
		why = pthread_create(&th[started], NULL, worker, sh);
		if (why != 0) {
			pthread_mutex_lock(&sh->mu);
			sh->running--;
			pthread_cond_signal(&sh->cv);
			pthread_mutex_unlock(&sh->mu);
			break;
		}
		started++;
	}
	if (why != 0)
		fprintf(stderr, "capsim sweep: warning: %d of %d threads started (pthread_create: "
			"%s)%s\n", started, n, strerror(why),
			started ? "" : "; evaluating in this thread");
	return started;
}

/* how many indices of the plan are still to hand out */
static size_t left_to_hand(shared *sh)
{
	pthread_mutex_lock(&sh->mu);
	size_t left = sh->pl->n > sh->next ? sh->pl->n - sh->next : 0;
	pthread_mutex_unlock(&sh->mu);
	return left;
}

/* ---- progress --------------------------------------------------------------------------- */

typedef struct {
	int on, tty;
	double t0, last;
	size_t total, last_tenth;
} progress;

static void show(progress *pr, size_t done, size_t failed, int final)
{
	if (!pr->on || pr->total == 0)
		return;
	double t = capsim_now_s(), el = t - pr->t0;
	double rate = el > 0 ? (double)done / el : 0.0;
	double eta = rate > 0 ? (double)(pr->total - done) / rate : 0.0;
	if (pr->tty) {
		if (!final && t - pr->last < 0.2)
			return;
		pr->last = t;
		int width = 30, fill = (int)((double)width * (double)done / (double)pr->total);
		char bar[32];
		for (int k = 0; k < width; k++)
			bar[k] = k < fill ? '#' : '.';
		bar[width] = '\0';
		fprintf(stderr, "\r\033[K[%s] %zu/%zu points, %zu failed, %.1f/s, ETA %.0f s%s", bar,
			done, pr->total, failed, rate, eta, final ? "\n" : "");
	} else {
		size_t tenth = done * 10 / pr->total;
		if (tenth == pr->last_tenth && (!final || tenth == 10))
			return;
		pr->last_tenth = tenth;
		fprintf(stderr, "capsim sweep: %zu/%zu points (%zu failed), %.1f points/s, "
			"%.0f s elapsed, ETA %.0f s\n", done, pr->total, failed, rate, el, eta);
	}
	fflush(stderr);
}

/* ---- the store --------------------------------------------------------------------------- */

typedef struct {
	capsim_store *db;
	int64_t sweep_id;
	int in_tx;
	double tx_started;
	size_t in_batch, batch;
} writer;

static int write_item(writer *w, const capsim_sweep *sw, const sweep_item *it, capsim_diags *d)
{
	if (!w->in_tx) {
		if (capsim_results_begin(w->db, d) < 0)
			return -1;
		w->in_tx = 1;
		w->tx_started = capsim_now_s();
		w->in_batch = 0;
	}
	capsim_set sets[CAPSIM_SWEEP_MAX_AXES];
	capsim_sweep_point(sw, (uint64_t)it->index, sets);
	capsim_result_param params[CAPSIM_SWEEP_MAX_AXES];
	for (size_t a = 0; a < sw->n_axes; a++)
		params[a] = (capsim_result_param){ sets[a].path, sets[a].value };
	capsim_result_value *vals = capsim_xcalloc(it->n_values ? it->n_values : 1, sizeof *vals);
	for (size_t i = 0; i < it->n_values; i++) {
		const capsim_result_key *k = &capsim_result_keys[it->values[i].key];
		vals[i] = (capsim_result_value){ k->key, it->values[i].is_text ? it->values[i].text : NULL,
						 it->values[i].num, k->unit };
	}
	/* a point that did not resolve has no scenario to digest: the zero digest */
	static const char zero[65] = "0000000000000000000000000000000000000000000000000000000000000000";
	capsim_result_point p = { .index = it->index,
				  .scenario_sha256 = it->sha256[0] ? it->sha256 : zero,
				  .failed = it->failed, .error = it->error,
				  .capsim_version = capsim_version_string(),
				  .params = params, .n_params = sw->n_axes,
				  .results = vals, .n_results = it->failed ? 0 : it->n_values };
	int rc = capsim_results_write_point(w->db, w->sweep_id, &p, NULL, d);
	free(vals);
	w->in_batch++;
	return rc;
}

static int commit(writer *w, capsim_diags *d)
{
	if (!w->in_tx)
		return 0;
	w->in_tx = 0;
	return capsim_results_commit(w->db, d);
}

/* commit about once a second, and every --batch points */
static int maybe_commit(writer *w, capsim_diags *d)
{
	if (w->in_tx && (capsim_now_s() - w->tx_started >= 1.0 || w->in_batch >= w->batch))
		return commit(w, d);
	return 0;
}

/* the inputs of a sweep: the sweep file, the base scenario, the catalog's files */
static size_t inputs(const capsim_sweep *sw, const capsim_scenario *base,
		     const capsim_catalog *cat, capsim_sweep_input **out)
{
	size_t n = capsim_catalog_n_files(cat);
	capsim_sweep_input *v = capsim_xcalloc(n + 2, sizeof *v);
	size_t k = 0;
	v[k++] = (capsim_sweep_input){ sw->file, sw->sha256 };
	if (strcmp(base->file, sw->file) != 0)
		v[k++] = (capsim_sweep_input){ base->file, base->sha256 };
	for (size_t i = 0; i < n; i++) {
		const char *sha;
		const char *file = capsim_catalog_file(cat, i, &sha);
		int dup = 0;
		for (size_t j = 0; j < k; j++)
			dup |= strcmp(v[j].file, file) == 0;
		if (!dup)
			v[k++] = (capsim_sweep_input){ file, sha };
	}
	*out = v;
	return k;
}

/* --resume: the sweep to continue, with its inputs as they were */
static int find_resumed(capsim_store *db, const capsim_sweep *sw, const capsim_sweep_input *in,
			size_t n_in, int64_t *id, capsim_diags *d)
{
	int found = capsim_results_find_sweep(db, sw->name, id, d);
	if (found < 0)
		return -1;
	if (found == 0) {
		capsim_diags_add(d, sw->file, 0, "--resume: the store holds no sweep named '%s'",
				 sw->name);
		return -1;
	}
	capsim_sweep_input_record *was;
	size_t n_was;
	if (capsim_results_read_inputs(db, *id, &was, &n_was, d) < 0)
		return -1;
	int rc = 0;
	for (size_t i = 0; i < n_in && rc == 0; i++) {
		const char *then = NULL;
		for (size_t j = 0; j < n_was; j++)
			if (strcmp(was[j].file, in[i].file) == 0)
				then = was[j].sha256;
		if (!then || strcmp(then, in[i].sha256) != 0) {
			capsim_diags_add(d, in[i].file, 0, "--resume: %s since sweep %lld '%s' began; "
					 "run it as a new sweep (without --resume)",
					 then ? "changed" : "was not an input", (long long)*id, sw->name);
			rc = -1;
		}
	}
	capsim_sweep_inputs_free(was, n_was);
	return rc;
}

/* ---- the summary ------------------------------------------------------------------------ */

static void summary(const capsim_sweep *sw, const plan *pl, size_t ok, size_t failed,
		    double elapsed, int64_t sweep_id, const char *db, int as_json, int stopped,
		    const size_t *by_rank, int ranks)
{
	if (as_json) {
		json_t *o = json_object();
		json_object_set_new(o, "sweep", json_string(sw->name));
		json_object_set_new(o, "sweep_id", json_integer(sweep_id));
		json_object_set_new(o, "db", json_string(db));
		json_object_set_new(o, "points", json_integer((json_int_t)sw->size));
		json_object_set_new(o, "dropped", json_integer((json_int_t)pl->dropped));
		json_t *by = json_array();
		for (size_t c = 0; c < sw->n_constraints; c++) {
			if (!pl->drops[c])
				continue;
			json_t *e = json_object();
			json_object_set_new(e, "reason", json_string(sw->constraints[c].reason));
			json_object_set_new(e, "line", json_integer(sw->constraints[c].line));
			json_object_set_new(e, "points", json_integer((json_int_t)pl->drops[c]));
			if (pl->errors[c])
				json_object_set_new(e, "error", json_string(pl->first_error[c]));
			json_array_append_new(by, e);
		}
		json_object_set_new(o, "dropped_by", by);
		json_object_set_new(o, "resumed_skipped", json_integer((json_int_t)pl->done_before));
		json_object_set_new(o, "ok", json_integer((json_int_t)ok));
		json_object_set_new(o, "failed", json_integer((json_int_t)failed));
		json_object_set_new(o, "complete", json_boolean(!stopped));
		json_t *r = json_array();
		for (int k = 0; k < ranks; k++)
			json_array_append_new(r, json_integer((json_int_t)by_rank[k]));
		json_object_set_new(o, "by_rank", r);
		json_object_set_new(o, "elapsed_s", json_real(elapsed));
		json_dumpf(o, stdout, JSON_INDENT(2));
		fputc('\n', stdout);
		json_decref(o);
		return;
	}
	printf("sweep %s (id %lld in %s): %llu points\n", sw->name, (long long)sweep_id, db,
	       (unsigned long long)sw->size);
	if (pl->dropped)
		printf("  dropped by constraints: %llu\n", (unsigned long long)pl->dropped);
	for (size_t c = 0; c < sw->n_constraints; c++) {
		if (!pl->drops[c])
			continue;
		printf("    %llu  %s (line %ld)\n", (unsigned long long)pl->drops[c],
		       sw->constraints[c].reason, sw->constraints[c].line);
		if (pl->errors[c])
			printf("        %llu of them could not be tested: %s\n",
			       (unsigned long long)pl->errors[c], pl->first_error[c]);
	}
	if (pl->done_before)
		printf("  in the store already (resumed): %llu\n", (unsigned long long)pl->done_before);
	printf("  evaluated: %zu ok, %zu failed, in %.2f s (%.1f points/s)\n", ok, failed, elapsed,
	       elapsed > 0 ? (double)(ok + failed) / elapsed : 0.0);
	if (ranks > 1) {
		printf("  points by rank:");
		for (int k = 0; k < ranks; k++)
			printf(" %zu", by_rank[k]);
		putchar('\n');
	}
	if (stopped)
		printf("  interrupted: %zu points not run; capsim sweep --resume continues\n",
		       pl->n - ok - failed);
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
	int batch;                    /* most points a transaction */
	capsim_cli_sets sets;
} options;

/* rank 0 (or the only process): the writer loop over local threads and,
 * with ranks > 1, the workers' requests */
static int run_writer(shared *sh, writer *w, int ranks, size_t *ok, size_t *failed,
		      progress *pr, capsim_diags *d)
{
	int rc = 0, workers_left = ranks - 1;
	sweep_buf incoming = { 0 };
	for (;;) {
		/* no worker thread could start: this thread evaluates, a point a turn */
		int64_t own;
		if (sh->inline_eval && take(sh, &own, 1) == 1)
			hand_in(sh, sweep_eval_point(&sh->job, own));
		pthread_mutex_lock(&sh->mu);
		if (ranks == 1) {
			while (!sh->head && sh->running > 0)
				pthread_cond_wait(&sh->cv, &sh->mu);
		}
		sweep_item *list = sh->head;
		sh->head = sh->tail = NULL;
		int running = sh->running + (sh->inline_eval && sh->next < sh->pl->n && !sh->stop &&
					     !interrupted);
		pthread_mutex_unlock(&sh->mu);
		for (sweep_item *it = list; it; it = it->next)
			sh->by_rank[0]++;
		/* the ranks' requests: their results in, a chunk out */
		int worker_rank;
		while (workers_left > 0 && sweep_mpi_poll(&incoming, &worker_rank)) {
			int bad = 0;
			sweep_item *it;
			while ((it = sweep_buf_get_item(&incoming, &bad))) {
				it->next = list;
				list = it;
				sh->by_rank[worker_rank]++;
			}
			sweep_buf_free(&incoming);
			if (bad) {
				capsim_diags_add_runtime(d, NULL, "sweep: a malformed message from rank %d",
							 worker_rank);
				rc = -1;
			}
			size_t left = left_to_hand(sh);
			size_t chunk = left / (size_t)(4 * ranks);
			chunk = chunk < 1 ? 1 : chunk > 16 ? 16 : chunk;
			int64_t idx[16];
			size_t n = rc == 0 ? take(sh, idx, chunk) : 0;
			sweep_mpi_send_chunk(worker_rank, idx, n);
			if (n == 0)
				workers_left--;
		}
		for (sweep_item *it = list, *next; it; it = next) {
			next = it->next;
			if (rc == 0 && write_item(w, sh->job.sw, it, d) < 0) {
				rc = -1;
				pthread_mutex_lock(&sh->mu);
				sh->stop = 1;
				pthread_mutex_unlock(&sh->mu);
			}
			if (it->failed)
				(*failed)++;
			else
				(*ok)++;
			sweep_item_free(it);
		}
		if (rc == 0 && maybe_commit(w, d) < 0) {
			rc = -1;
			pthread_mutex_lock(&sh->mu);
			sh->stop = 1;
			pthread_mutex_unlock(&sh->mu);
		}
		show(pr, *ok + *failed, *failed, 0);
		if (running == 0 && workers_left == 0) {
			pthread_mutex_lock(&sh->mu);
			int empty = !sh->head;
			pthread_mutex_unlock(&sh->mu);
			if (empty)
				break;
		}
		if (ranks > 1 && !list)
			usleep(1000);
	}
	if (rc == 0 && commit(w, d) < 0)
		rc = -1;
	return rc;
}

/* a rank other than 0: ask for chunks, evaluate them, send them back */
static void run_worker_rank(const sweep_job *job)
{
	sweep_buf out = { 0 };
	for (;;) {
		int64_t *idx;
		size_t n;
		sweep_mpi_request(&out, &idx, &n);
		sweep_buf_free(&out);
		if (n == 0) {
			free(idx);
			return;
		}
		for (size_t i = 0; i < n; i++) {
			sweep_item *it = sweep_eval_point(job, idx[i]);
			sweep_buf_put_item(&out, it);
			sweep_item_free(it);
		}
		free(idx);
	}
}

static int parse_args(int argc, char **argv, options *o)
{
	enum { OPT_DB = 256, OPT_BATCH, OPT_RESUME, OPT_PLAN, OPT_JSON, OPT_PROGRESS, OPT_NO_PROGRESS, OPT_SET,
	       OPT_HELP };
	static const struct option longopts[] = {
		{ "db", required_argument, NULL, OPT_DB },
		{ "jobs", required_argument, NULL, 'j' },
		{ "batch", required_argument, NULL, OPT_BATCH },
		{ "resume", no_argument, NULL, OPT_RESUME },
		{ "plan", no_argument, NULL, OPT_PLAN },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "progress", no_argument, NULL, OPT_PROGRESS },
		{ "no-progress", no_argument, NULL, OPT_NO_PROGRESS },
		{ "set", required_argument, NULL, OPT_SET },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	o->threads = 1;
	o->batch = 4096;
	o->progress = -1;
	opterr = 0;
	optind = 1;
	int c;
	capsim_diags d = { 0 };
	while ((c = getopt_long(argc, argv, "+j:", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_DB: o->db = optarg; break;
		case 'j':
			o->threads = capsim_cli_count(optarg, 1024);
			if (o->threads < 1) {
				fprintf(stderr, "capsim sweep: -j: expected a number of threads from 1 to "
					"1024, found '%s'\n", optarg);
				return -1;
			}
			break;
		case OPT_BATCH:
			o->batch = capsim_cli_count(optarg, 1000000);
			if (o->batch < 1) {
				fprintf(stderr, "capsim sweep: --batch: expected points a transaction from "
					"1 to 1000000, found '%s'\n", optarg);
				return -1;
			}
			break;
		case OPT_RESUME: o->resume = 1; break;
		case OPT_PLAN: o->plan_only = 1; break;
		case OPT_JSON: o->as_json = 1; break;
		case OPT_PROGRESS: o->progress = 1; break;
		case OPT_NO_PROGRESS: o->progress = 0; break;
		case OPT_SET:
			if (capsim_cli_sets_add(&o->sets, optarg, &d) < 0) {
				capsim_diags_print(&d, stderr);
				capsim_diags_free(&d);
				return -1;
			}
			break;
		case OPT_HELP: help(stdout); return 1;
		default:
			fprintf(stderr, "capsim sweep: unknown option '%s'\n", argv[optind - 1]);
			return -1;
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

/* the sweep once its points are known: rank 0's part */
static int run_sweep(const options *o, sweep_job *job, int ranks, capsim_diags *d)
{
	const capsim_sweep *sw = job->sw;
	capsim_store *db;
	if (o->resume && access(o->db, F_OK) != 0) {
		capsim_diags_add(d, o->db, 0, "--resume: no results store here to resume (%s)",
				 strerror(errno));
		return -1;
	}
	if (capsim_store_open(o->db, CAPSIM_STORE_WRITE, &db, d) < 0)
		return -1;
	capsim_sweep_input *in;
	size_t n_in = inputs(sw, job->base, job->cat, &in);
	int64_t sweep_id = 0, *done = NULL;
	size_t n_done = 0;
	int rc = capsim_results_wal(db, d);
	if (rc == 0 && o->resume) {
		rc = find_resumed(db, sw, in, n_in, &sweep_id, d);
		if (rc == 0)
			rc = capsim_results_indices(db, sweep_id, &done, &n_done, d);
	} else if (rc == 0) {
		capsim_sweep_info info = { sw->name, capsim_version_string(), job->base->sha256, in,
					   n_in };
		rc = capsim_results_create_sweep(db, &info, &sweep_id, d);
	}
	free(in);
	if (rc < 0) {
		capsim_store_close(db);
		free(done);
		return -1;
	}
	plan pl;
	make_plan(sw, done, n_done, &pl);
	free(done);

	shared sh = { .job = *job, .pl = &pl };
	sh.by_rank = capsim_xcalloc((size_t)ranks, sizeof *sh.by_rank);
	pthread_mutex_init(&sh.mu, NULL);
	pthread_cond_init(&sh.cv, NULL);
	int tty = isatty(STDERR_FILENO);
	progress pr = { .on = o->progress < 0 ? 1 : o->progress, .tty = tty && o->progress != 0,
			.t0 = capsim_now_s(), .total = pl.n };
	writer w = { .db = db, .sweep_id = sweep_id, .batch = (size_t)o->batch };
	pthread_t *th = capsim_xcalloc((size_t)o->threads, sizeof *th);
	int started = start_workers(&sh, th, o->threads);
	size_t ok = 0, failed = 0;
	sh.inline_eval = started == 0;
	rc = run_writer(&sh, &w, ranks, &ok, &failed, &pr, d);
	for (int t = 0; t < started; t++)
		pthread_join(th[t], NULL);
	free(th);
	show(&pr, ok + failed, failed, 1);
	int stopped = interrupted && ok + failed < pl.n;
	if (rc == 0)
		capsim_results_unwal(db); /* readers then need no -wal or -shm (results.h) */
	capsim_store_close(db);
	if (rc == 0)
		summary(sw, &pl, ok, failed, capsim_now_s() - pr.t0, sweep_id, o->db, o->as_json, stopped,
			sh.by_rank, ranks);
	free(sh.by_rank);
	plan_free(&pl, sw->n_constraints);
	pthread_mutex_destroy(&sh.mu);
	pthread_cond_destroy(&sh.cv);
	if (rc < 0)
		return -1;
	return stopped ? 1 : 0;
}

int capsim_cmd_sweep(int argc, char **argv)
{
	options o = { 0 };
	int rank = 0, ranks = 1, mpi = 0;
	if (sweep_mpi_launched()) {
		if (!sweep_mpi_built()) {
			fprintf(stderr, "capsim sweep: launched by MPI, but this capsim was built without "
				"MPI (each rank would run the whole sweep); rebuild with Open MPI's "
				"development files installed\n");
			return CAPSIM_EXIT_USAGE;
		}
		if (sweep_mpi_init(&argc, &argv, &rank, &ranks) < 0)
			return CAPSIM_EXIT_FAILURE;
		mpi = 1;
	}
	int status;
	int prc = parse_args(argc, argv, &o);
	if (prc != 0) {
		if (prc < 0)
			fprintf(stderr, "try 'capsim sweep --help'\n");
		status = prc > 0 ? CAPSIM_EXIT_OK : CAPSIM_EXIT_USAGE;
		goto out;
	}
	capsim_diags d = { 0 };
	capsim_catalog *cat = capsim_catalog_create();
	capsim_scenario *base = capsim_xcalloc(1, sizeof *base);
	capsim_sweep *sw = NULL;
	status = CAPSIM_EXIT_USAGE;
	if (capsim_cli_catalog(cat, &d) == 0)
		sw = capsim_sweep_load(o.file, cat, o.sets.v, o.sets.n, base, &d);
	if (!sw) {
		if (rank == 0)
			capsim_diags_print(&d, stderr);
		status = capsim_diags_runtime(&d) ? CAPSIM_EXIT_FAILURE : CAPSIM_EXIT_USAGE;
	} else if (o.plan_only) {
		if (rank == 0)
			print_plan(sw);
		status = CAPSIM_EXIT_OK;
	} else {
		sweep_job job = { sw, cat, base };
		if (rank == 0) {
			struct sigaction sa = { 0 };
			sa.sa_handler = on_signal;
			sigaction(SIGINT, &sa, NULL);
			sigaction(SIGTERM, &sa, NULL);
			int rc = run_sweep(&o, &job, ranks, &d);
			if (rc < 0)
				capsim_diags_print(&d, stderr);
			status = rc < 0 ? (capsim_diags_runtime(&d) ? CAPSIM_EXIT_FAILURE :
					   CAPSIM_EXIT_USAGE) : rc > 0 ? 130 : CAPSIM_EXIT_OK;
			if (rc < 0 && mpi)
				sweep_mpi_abort(status);
		} else {
			run_worker_rank(&job);
			status = CAPSIM_EXIT_OK;
		}
	}
	capsim_sweep_free(sw);
	free(base);
	capsim_catalog_free(cat);
	capsim_diags_free(&d);
out:
	capsim_cli_sets_free(&o.sets);
	if (mpi)
		sweep_mpi_finalize();
	return status;
}
