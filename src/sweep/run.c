/* run.c - a sweep's points evaluated on threads (and MPI ranks) into the
 * results store; see run.h. The writer is the calling thread: it takes the
 * workers' finished points (and, under MPI, the ranks'), writes them in
 * transactions of about a second, and hands out more. */
#include "run.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "results.h"
#include "runint.h"
#include "store.h"
#include "xalloc.h"

/* ---- the points to run ------------------------------------------------------------ */

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

/* one point a constraint drops, counted against it in out */
static void count_drop(capsim_sweep_run_result *out, long c, int error, const char *err)
{
	out->dropped++;
	out->drops[c]++;
	if (error && out->errors[c]++ == 0)
		out->first_error[c] = capsim_xstrdup(err);
}

/* every point that passes the constraints and is not among done[n_done],
 * ascending, into *idx (out counts the rest) */
static size_t make_plan(const capsim_sweep *sw, const int64_t *done, size_t n_done,
			int64_t **idx, capsim_sweep_run_result *out)
{
	size_t nc = sw->n_constraints ? sw->n_constraints : 1, n = 0, cap = 0;
	out->n_constraints = sw->n_constraints;
	out->drops = capsim_xcalloc(nc, sizeof *out->drops);
	out->errors = capsim_xcalloc(nc, sizeof *out->errors);
	out->first_error = capsim_xcalloc(nc, sizeof *out->first_error);
	*idx = NULL;
	for (uint64_t i = 0; i < sw->size; i++) {
		int error;
		char err[512];
		long c = capsim_sweep_check(sw, i, &error, err, sizeof err);
		if (c >= 0) {
			count_drop(out, c, error, err);
			continue;
		}
		if (has_index(done, n_done, (int64_t)i)) {
			out->done_before++;
			continue;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 1024;
			*idx = capsim_xrealloc(*idx, cap * sizeof **idx);
		}
		(*idx)[n++] = (int64_t)i;
	}
	return n;
}

/* ---- work shared by the threads ------------------------------------------------------ */

typedef struct {
	sweep_job job;
	const int64_t *idx;           /* the plan */
	size_t n;
	atomic_int *stop_flag;        /* the caller's; NULL: none */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	size_t next;                  /* the next of idx to hand out */
	int stop;                     /* no more handing out (a store failure) */
	sweep_item *head, *tail;      /* done, for the writer */
	int running;                  /* worker threads not yet finished */
	size_t *by_rank;              /* points each rank evaluated (the writer's count) */
	int inline_eval;              /* the writer's thread evaluates too, a point a turn */
} shared;

static int stopped_by_caller(const shared *sh)
{
	return sh->stop_flag && atomic_load(sh->stop_flag);
}

/* up to max indices from the plan into out; returns how many */
static size_t take(shared *sh, int64_t *out, size_t max)
{
	pthread_mutex_lock(&sh->mu);
	size_t n = 0;
	while (!sh->stop && !stopped_by_caller(sh) && sh->next < sh->n && n < max)
		out[n++] = sh->idx[sh->next++];
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

static void set_stop(shared *sh)
{
	pthread_mutex_lock(&sh->mu);
	sh->stop = 1;
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
	size_t left = sh->n > sh->next ? sh->n - sh->next : 0;
	pthread_mutex_unlock(&sh->mu);
	return left;
}

/* ---- the store --------------------------------------------------------------------------- */

typedef struct {
	capsim_store *db;
	int64_t sweep_id;
	const char *version;
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
	/* a point that did not resolve has no scenario to digest: the zero digest */
	static const char zero[65] = "0000000000000000000000000000000000000000000000000000000000000000";
	capsim_result_point p = { .index = it->index,
				  .scenario_sha256 = it->sha256[0] ? it->sha256 : zero,
				  .failed = it->failed, .error = it->error,
				  .capsim_version = w->version,
				  .params = params, .n_params = sw->n_axes,
				  .results = it->rows, .n_results = it->failed ? 0 : it->n_rows };
	w->in_batch++;
	return capsim_results_write_point(w->db, w->sweep_id, &p, NULL, d);
}

static int commit(writer *w, capsim_diags *d)
{
	if (!w->in_tx)
		return 0;
	w->in_tx = 0;
	return capsim_results_commit(w->db, d);
}

/* commit about once a second, and every batch points */
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

/* resume: the sweep to continue, with its inputs as they were */
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

/* the sweep in the store: a new one, or (resume) the one to continue with
 * the indices it holds (*done, ascending, the caller's) */
static int open_sweep(capsim_store *db, const sweep_job *job, const capsim_sweep_run_opts *o,
		      int64_t *id, int64_t **done, size_t *n_done, capsim_diags *d)
{
	capsim_sweep_input *in;
	size_t n_in = inputs(job->sw, job->base, job->cat, &in);
	*done = NULL;
	*n_done = 0;
	int rc = capsim_results_wal(db, d);
	if (rc == 0 && o->resume) {
		rc = find_resumed(db, job->sw, in, n_in, id, d);
		if (rc == 0)
			rc = capsim_results_indices(db, *id, done, n_done, d);
	} else if (rc == 0) {
		capsim_sweep_info info = { job->sw->name, o->version, job->base->sha256, in, n_in };
		rc = capsim_results_create_sweep(db, &info, id, d);
	}
	free(in);
	return rc;
}

/* ---- the writer's loop ------------------------------------------------------------------ */

typedef struct {
	shared *sh;
	writer *w;
	int ranks, workers_left;
	capsim_sweep_run_result *out;
	const capsim_sweep_run_opts *o;
	int rc;
} turn_state;

/* the local threads' finished points, taken off the queue (waiting for one
 * where no rank can send any); *running: evaluations still to come here */
static sweep_item *take_local(turn_state *t, int *running)
{
	shared *sh = t->sh;
	/* this thread evaluates too (alone, or no worker could start), a point a turn */
	int64_t own;
	if (sh->inline_eval && take(sh, &own, 1) == 1)
		hand_in(sh, sweep_eval_point(&sh->job, own));
	pthread_mutex_lock(&sh->mu);
	if (t->ranks == 1)
		while (!sh->head && sh->running > 0)
			pthread_cond_wait(&sh->cv, &sh->mu);
	sweep_item *list = sh->head;
	sh->head = sh->tail = NULL;
	*running = sh->running + (sh->inline_eval && sh->next < sh->n && !sh->stop &&
				  !stopped_by_caller(sh));
	pthread_mutex_unlock(&sh->mu);
	for (sweep_item *it = list; it; it = it->next)
		sh->by_rank[0]++;
	return list;
}

/* the ranks' requests: their results onto *list, a chunk of indices out */
static void serve_ranks(turn_state *t, sweep_item **list, capsim_diags *d)
{
	sweep_buf incoming = { 0 };
	int worker_rank;
	while (t->workers_left > 0 && sweep_mpi_poll(&incoming, &worker_rank)) {
		int bad = 0;
		sweep_item *it;
		while ((it = sweep_buf_get_item(&incoming, &bad))) {
			it->next = *list;
			*list = it;
			t->sh->by_rank[worker_rank]++;
		}
		sweep_buf_free(&incoming);
		if (bad) {
			capsim_diags_add_runtime(d, NULL, "sweep: a malformed message from rank %d",
						 worker_rank);
			t->rc = -1;
		}
		size_t left = left_to_hand(t->sh);
		size_t chunk = left / (size_t)(4 * t->ranks);
		chunk = chunk < 1 ? 1 : chunk > 16 ? 16 : chunk;
		int64_t idx[16];
		size_t n = t->rc == 0 ? take(t->sh, idx, chunk) : 0;
		sweep_mpi_send_chunk(worker_rank, idx, n);
		if (n == 0)
			t->workers_left--;
	}
}

/* list written (while nothing has failed), counted and freed */
static void write_list(turn_state *t, sweep_item *list, capsim_diags *d)
{
	for (sweep_item *it = list, *next; it; it = next) {
		next = it->next;
		if (t->rc == 0 && write_item(t->w, t->sh->job.sw, it, d) < 0) {
			t->rc = -1;
			set_stop(t->sh);
		}
		if (it->failed)
			t->out->failed++;
		else
			t->out->ok++;
		sweep_item_free(it);
	}
	if (t->rc == 0 && maybe_commit(t->w, d) < 0) {
		t->rc = -1;
		set_stop(t->sh);
	}
}

static void report(const turn_state *t, int final)
{
	if (t->o->progress)
		t->o->progress(t->o->progress_ctx, t->out->ok + t->out->failed, t->out->failed,
			       t->out->planned, final);
}

/* rank 0 (or the only process): the writer loop over local threads and,
 * with ranks > 1, the workers' requests; returns 0 or -1 (d says why) */
static int run_writer(turn_state *t, capsim_diags *d)
{
	for (;;) {
		int running;
		sweep_item *list = take_local(t, &running);
		serve_ranks(t, &list, d);
		int had = list != NULL;
		write_list(t, list, d);
		report(t, 0);
		if (running == 0 && t->workers_left == 0) {
			pthread_mutex_lock(&t->sh->mu);
			int empty = !t->sh->head;
			pthread_mutex_unlock(&t->sh->mu);
			if (empty)
				break;
		}
		if (t->ranks > 1 && !had)
			usleep(1000);
	}
	if (t->rc == 0 && commit(t->w, d) < 0)
		t->rc = -1;
	return t->rc;
}

/* the plan's points evaluated and written; returns 0 or -1 */
static int evaluate(const sweep_job *job, const capsim_sweep_run_opts *o, writer *w,
		    const int64_t *idx, capsim_sweep_run_result *out, capsim_diags *d)
{
	int threads = o->threads > 0 ? o->threads : 1;
	/* alone, this thread is one of the N: it evaluates a point a turn
	 * between its writes, so that N threads keep N cores busy; rank 0 of
	 * several serves the other ranks beside N workers */
	int workers = out->ranks == 1 ? threads - 1 : threads;
	shared sh = { .job = *job, .idx = idx, .n = out->planned, .stop_flag = o->stop,
		      .by_rank = out->by_rank };
	pthread_mutex_init(&sh.mu, NULL);
	pthread_cond_init(&sh.cv, NULL);
	pthread_t *th = capsim_xcalloc((size_t)(workers > 0 ? workers : 1), sizeof *th);
	int started = start_workers(&sh, th, workers);
	sh.inline_eval = started == 0 || out->ranks == 1;
	turn_state t = { .sh = &sh, .w = w, .ranks = out->ranks, .workers_left = out->ranks - 1,
			 .out = out, .o = o };
	int rc = run_writer(&t, d);
	for (int k = 0; k < started; k++)
		pthread_join(th[k], NULL);
	free(th);
	report(&t, 1);
	pthread_mutex_destroy(&sh.mu);
	pthread_cond_destroy(&sh.cv);
	return rc;
}

int capsim_sweep_run(const capsim_sweep *sw, const capsim_catalog *cat,
		     const capsim_scenario *base, const char *db, const capsim_sweep_run_opts *o,
		     capsim_sweep_run_result *out, capsim_diags *d)
{
	memset(out, 0, sizeof *out);
	out->ranks = o->ranks > 1 ? o->ranks : 1;
	out->by_rank = capsim_xcalloc((size_t)out->ranks, sizeof *out->by_rank);
	if (o->resume && access(db, F_OK) != 0) {
		capsim_diags_add(d, db, 0, "--resume: no results store here to resume (%s)",
				 strerror(errno));
		return -1;
	}
	capsim_store *st;
	if (capsim_store_open(db, CAPSIM_STORE_WRITE, &st, d) < 0)
		return -1;
	sweep_job job = { sw, cat, base, o->errors };
	int64_t *done, *idx;
	size_t n_done;
	if (open_sweep(st, &job, o, &out->sweep_id, &done, &n_done, d) < 0) {
		capsim_store_close(st);
		free(done);
		return -1;
	}
	out->planned = make_plan(sw, done, n_done, &idx, out);
	free(done);
	double t0 = capsim_now_s();
	writer w = { .db = st, .sweep_id = out->sweep_id, .version = o->version,
		     .batch = o->batch ? o->batch : 4096 };
	int rc = evaluate(&job, o, &w, idx, out, d);
	free(idx);
	out->stopped = o->stop && atomic_load(o->stop) && out->ok + out->failed < out->planned;
	if (rc == 0)
		capsim_results_unwal(st); /* readers then need no -wal or -shm (results.h) */
	capsim_store_close(st);
	out->elapsed_s = capsim_now_s() - t0;
	if (rc < 0)
		return -1;
	return out->stopped ? 1 : 0;
}

void capsim_sweep_run_result_free(capsim_sweep_run_result *r)
{
	for (size_t c = 0; r->first_error && c < r->n_constraints; c++)
		free(r->first_error[c]);
	free(r->first_error);
	free(r->drops);
	free(r->errors);
	free(r->by_rank);
	memset(r, 0, sizeof *r);
}

void capsim_sweep_run_rank(const capsim_sweep *sw, const capsim_catalog *cat,
			   const capsim_scenario *base, const capsim_err_model *errors)
{
	sweep_job job = { sw, cat, base, errors };
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
			sweep_item *it = sweep_eval_point(&job, idx[i]);
			sweep_buf_put_item(&out, it);
			sweep_item_free(it);
		}
		free(idx);
	}
}
