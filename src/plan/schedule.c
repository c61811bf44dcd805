/* schedule.c - one training step's pipeline schedule; see schedule.h and
 * docs/model.md ("Pipeline schedules").
 *
 * Tasks are held by position: pos = k * per + n is the n-th task of stage k's
 * order (per = 2 v m), so a stage's stream is a cursor into its own slice.
 * Each stage runs its tasks in a fixed order, and a transfer is a delay that
 * never occupies a stream, so a task starts at max(its stream's previous
 * end, its input's arrival): the time an event-driven run would start it,
 * whatever the order of events at one instant. The tasks are therefore timed
 * in dependency order, with no event queue: a stage advances through its
 * order until its next task waits for an input not yet timed, and the task
 * that produces that input wakes the stage when it is timed. Each task is
 * timed once: O(T) for T tasks. */
#include "schedule.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "xalloc.h"

/* Times above this are refused up front, so no sum below can overflow. */
#define TIME_LIMIT (CAPSIM_TIME_NEVER / 4)
/* Positions travel as uint32 and index int32 fields. */
#define MAX_TASKS ((size_t)INT32_MAX)

/* a state no build may continue from (check.h) */
#define BROKEN(what) CAPSIM_BROKEN(what)

const char *capsim_pipeline_strerror(int code)
{
	switch (code) {
	case CAPSIM_PIPELINE_OK:
		return "success";
	case CAPSIM_PIPELINE_EINVAL:
		return "invalid argument";
	case CAPSIM_PIPELINE_EDIVIDE:
		return "micro-batches not a multiple of stages";
	case CAPSIM_PIPELINE_ERANGE:
		return "out of range";
	default:
		return "unknown error";
	}
}

/* Every failure passes here (one breakpoint catches them all): record the
 * message in out and return code. */
static int fail(capsim_pipeline_result *out, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(capsim_pipeline_result *out, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(out->errmsg, sizeof out->errmsg, fmt, ap);
	va_end(ap);
	return code;
}

/* ---- the orders ---- */

typedef struct slot_id {
	int chunk, mb, bwd;
} slot_id;

/* Stage k's order (per = 2 v m entries) into o. */
static void order_gpipe(int m, slot_id *o)
{
	for (int i = 0; i < m; i++)
		o[i] = (slot_id){ 0, i, 0 };
	for (int i = 0; i < m; i++)
		o[m + i] = (slot_id){ 0, i, 1 };
}

static void order_1f1b(int p, int m, int k, slot_id *o)
{
	int w = p - k - 1 < m ? p - k - 1 : m;
	size_t n = 0;
	for (int i = 0; i < w; i++)
		o[n++] = (slot_id){ 0, i, 0 };
	for (int i = 0; i < m - w; i++) {
		o[n++] = (slot_id){ 0, w + i, 0 };
		o[n++] = (slot_id){ 0, i, 1 };
	}
	for (int i = m - w; i < m; i++)
		o[n++] = (slot_id){ 0, i, 1 };
}

/* Megatron-LM (megatron/core/pipeline_parallel/schedules.py,
 * forward_backward_pipelining_with_interleaving): the q-th forward (or
 * backward) of a stage is chunk (q mod pv) / p (backward: v - 1 minus that)
 * of micro-batch (q / pv) p + q mod p; warm-up of (p - k - 1) 2 + (v - 1) p
 * forwards, all of them when m = p; then one forward, one backward; then the
 * remaining backwards. */
static slot_id interleaved_at(int p, int v, long q, int bwd)
{
	long pv = (long)p * v;
	int chunk = (int)((q % pv) / p);
	if (bwd)
		chunk = v - 1 - chunk;
	return (slot_id){ chunk, (int)((q / pv) * p + q % p), bwd };
}

static void order_interleaved(int p, int m, int v, int k, slot_id *o)
{
	long total = (long)m * v, w;
	if (m == p) {
		w = total;
	} else {
		w = (long)(p - k - 1) * 2 + (long)(v - 1) * p;
		if (w > total)
			w = total;
	}
	size_t n = 0;
	for (long q = 0; q < w; q++)
		o[n++] = interleaved_at(p, v, q, 0);
	for (long q = 0; q < total - w; q++) {
		o[n++] = interleaved_at(p, v, w + q, 0);
		o[n++] = interleaved_at(p, v, q, 1);
	}
	for (long q = total - w; q < total; q++)
		o[n++] = interleaved_at(p, v, q, 1);
}

/* ---- the simulation ---- */

typedef struct run {
	const capsim_pipeline_spec *in;
	capsim_pipeline_result *out;
	int p, v, m;
	size_t per;               /* tasks per stage: 2 v m */
	/* per position */
	capsim_time_ns *dur;
	int32_t *consumer;        /* position needing this task's output, or -1 */
	int32_t *producer;        /* position whose output this task needs, or -1 */
	capsim_time_ns *delay;    /* transfer to the consumer */
	unsigned char *timed;     /* start and end are known */
	/* per stage */
	size_t *next;             /* cursor into the stage's order */
	int *wake;                /* stages that may advance (a stack) */
	size_t nwake;
	unsigned char *queued;    /* on the wake stack */
	uint64_t events;          /* task ends, input arrivals and tails */
} run;

/* Key of a task independent of the order: ((k v + c) m + i) 2 + bwd. */
static size_t key_of(const run *r, int k, int c, int i, int bwd)
{
	return (((size_t)k * r->v + c) * r->m + i) * 2 + bwd;
}

static void wake(run *r, int k)
{
	if (r->queued[k])
		return;
	r->queued[k] = 1;
	r->wake[r->nwake++] = k;
}

/* Time the task at pos, the next of stage k: it starts when its stream is
 * free and its input has arrived, and names what released it (the stream on
 * a tie; nothing when it starts at 0 unreleased). */
static void time_task(run *r, int k, size_t pos)
{
	capsim_pipeline_task *t = &r->out->tasks[pos];
	int first = r->next[k] == 0;
	int32_t prod = r->producer[pos];
	capsim_time_ns stream = first ? 0 : t[-1].end_ns;
	capsim_time_ns arrived = prod >= 0 ? r->out->tasks[prod].end_ns + r->delay[prod] : 0;
	capsim_time_ns now = stream > arrived ? stream : arrived;
	if (!first && stream == now) {
		t->pred = (int32_t)(pos - 1);
		t->via_transfer = 0;
	} else if (prod >= 0 && arrived == now && now > 0) {
		t->pred = prod;
		t->via_transfer = 1;
	} else {
		t->pred = -1;
		t->via_transfer = 0;
	}
	t->start_ns = now;
	t->end_ns = now + r->dur[pos];
	r->out->stage[k].busy_ns += r->dur[pos];
	r->timed[pos] = 1;
	r->next[k]++;
	r->events += 1 + (r->consumer[pos] >= 0); /* its end, its output's arrival */
}

/* Stage k through its order as far as its inputs are timed; the stage
 * waiting on an output just timed is woken. After its last task, its tail. */
static void advance(run *r, int k)
{
	while (r->next[k] < r->per) {
		size_t pos = (size_t)k * r->per + r->next[k];
		int32_t prod = r->producer[pos];
		if (prod >= 0 && !r->timed[prod])
			return; /* its producer wakes it */
		time_task(r, k, pos);
		int32_t c = r->consumer[pos];
		if (c >= 0) {
			int kc = (int)((size_t)c / r->per);
			if ((size_t)c == (size_t)kc * r->per + r->next[kc])
				wake(r, kc);
		}
	}
	capsim_pipeline_stage *st = &r->out->stage[k];
	st->last_end_ns = r->out->tasks[(size_t)k * r->per + r->per - 1].end_ns;
	st->finish_ns = st->last_end_ns + st->tail_ns;
	r->events++;
	r->next[k]++; /* per + 1: done */
}

/* Every stage from the start, then each as it is woken, until none can
 * advance. */
static void time_all(run *r)
{
	for (int k = r->p; k-- > 0;)
		wake(r, k);
	while (r->nwake) {
		int k = r->wake[--r->nwake];
		r->queued[k] = 0;
		if (r->next[k] < r->per)
			advance(r, k);
	}
}

/* Check what can be checked before allocating anything. */
static int validate(const capsim_pipeline_spec *in, capsim_pipeline_result *out)
{
	int p = in->stages, m = in->microbatches, v = in->chunks;
	if (p < 1)
		return fail(out, CAPSIM_PIPELINE_EINVAL, "pipeline: %d stages (need at least 1)", p);
	if (m < 1)
		return fail(out, CAPSIM_PIPELINE_EINVAL,
			    "pipeline: %d micro-batches (need at least 1)", m);
	if (v < 1)
		return fail(out, CAPSIM_PIPELINE_EINVAL, "pipeline: %d chunks per stage (need at least 1)", v);
	switch (in->schedule) {
	case CAPSIM_SCHED_GPIPE:
	case CAPSIM_SCHED_1F1B:
		if (v != 1)
			return fail(out, CAPSIM_PIPELINE_EINVAL,
				    "pipeline: %d chunks per stage need the interleaved schedule", v);
		break;
	case CAPSIM_SCHED_1F1B_INTERLEAVED:
		if (m % p != 0)
			return fail(out, CAPSIM_PIPELINE_EDIVIDE,
				    "pipeline: interleaved schedule needs micro-batches (%d) "
				    "to be a multiple of stages (%d)", m, p);
		break;
	default:
		return fail(out, CAPSIM_PIPELINE_EINVAL, "pipeline: unknown schedule %d", in->schedule);
	}
	if ((double)p * v * m * 2.0 > (double)MAX_TASKS)
		return fail(out, CAPSIM_PIPELINE_ERANGE,
			    "pipeline: %d x %d x %d x 2 tasks is more than %zu", p, v, m, MAX_TASKS);
	if (!in->task_ns && (!in->fwd_ns || !in->bwd_ns))
		return fail(out, CAPSIM_PIPELINE_EINVAL,
			    "pipeline: no durations (fwd_ns and bwd_ns, or task_ns)");
	if (in->p2p_ns < 0 || in->p2p_ns > TIME_LIMIT)
		return fail(out, CAPSIM_PIPELINE_EINVAL, "pipeline: p2p time %lld ns out of range",
			    (long long)in->p2p_ns);
	for (int k = 0; k < p; k++) {
		if (in->p2p_link_ns && (in->p2p_link_ns[k] < 0 || in->p2p_link_ns[k] > TIME_LIMIT))
			return fail(out, CAPSIM_PIPELINE_EINVAL,
				    "pipeline: p2p time of link %d, %lld ns, out of range", k,
				    (long long)in->p2p_link_ns[k]);
		if (in->tail_ns && (in->tail_ns[k] < 0 || in->tail_ns[k] > TIME_LIMIT))
			return fail(out, CAPSIM_PIPELINE_EINVAL,
				    "pipeline: tail of stage %d, %lld ns, out of range", k,
				    (long long)in->tail_ns[k]);
	}
	return CAPSIM_PIPELINE_OK;
}

static capsim_time_ns link_ns(const capsim_pipeline_spec *in, int k)
{
	return in->p2p_link_ns ? in->p2p_link_ns[k] : in->p2p_ns;
}

/* Each stage's order into r->out->tasks, and pos_of: task key -> position */
static void place_orders(run *r, int32_t *pos_of)
{
	const capsim_pipeline_spec *in = r->in;
	int p = r->p, v = r->v, m = r->m;
	slot_id *o = capsim_xmalloc(r->per * sizeof *o);
	for (int k = 0; k < p; k++) {
		if (in->schedule == CAPSIM_SCHED_GPIPE)
			order_gpipe(m, o);
		else if (in->schedule == CAPSIM_SCHED_1F1B)
			order_1f1b(p, m, k, o);
		else
			order_interleaved(p, m, v, k, o);
		for (size_t n = 0; n < r->per; n++) {
			size_t pos = (size_t)k * r->per + n;
			size_t key = key_of(r, k, o[n].chunk, o[n].mb, o[n].bwd);
			if (pos_of[key] >= 0)
				BROKEN("a task twice in one stage's order");
			pos_of[key] = (int32_t)pos;
			r->out->tasks[pos] = (capsim_pipeline_task){ .stage = k, .chunk = o[n].chunk,
				.microbatch = o[n].mb, .backward = o[n].bwd };
		}
	}
	free(o);
	/* every task of every stage has its one position: the orders hold
	 * 2 v m tasks each, none twice */
	for (size_t key = 0; key < (size_t)p * r->per; key++)
		CAPSIM_ASSERT(pos_of[key] >= 0);
}

/* The duration, consumer and transfer delay of the task of stage k, chunk c,
 * micro-batch i, backward b, added to *bound (a step's longest possible
 * time). 0, or an error for a bad duration or a bound past TIME_LIMIT. */
static int link_task(run *r, const int32_t *pos_of, int k, int c, int i, int b,
		     capsim_time_ns *bound)
{
	const capsim_pipeline_spec *in = r->in;
	int p = r->p, v = r->v;
	int j = c * p + k; /* virtual stage */
	int32_t pos = pos_of[key_of(r, k, c, i, b)];
	capsim_time_ns d;
	if (in->task_ns)
		d = in->task_ns(in->task_ctx, k, c, i, b);
	else
		d = b ? in->bwd_ns[k * v + c] : in->fwd_ns[k * v + c];
	if (d < 0 || d > TIME_LIMIT)
		return fail(r->out, CAPSIM_PIPELINE_EINVAL,
			    "pipeline: %s of stage %d, chunk %d, micro-batch %d: %lld ns "
			    "out of range",
			    b ? "backward" : "forward", k, c, i, (long long)d);
	r->dur[pos] = d;
	/* the consumer: next virtual stage forward, previous backward */
	int jc = b ? j - 1 : j + 1, cb = b;
	if (!b && j == v * p - 1) {
		jc = j; /* own backward */
		cb = 1;
	}
	capsim_time_ns x = 0;
	if (jc < 0) {
		r->consumer[pos] = -1;
	} else {
		int kc = jc % p;
		r->consumer[pos] = pos_of[key_of(r, kc, jc / p, i, cb)];
		/* a task's input comes from one task only */
		CAPSIM_ASSERT(r->consumer[pos] >= 0 && r->producer[r->consumer[pos]] < 0);
		r->producer[r->consumer[pos]] = pos;
		if (kc != k) /* link between k and kc */
			x = link_ns(in, b ? kc : k);
	}
	r->delay[pos] = x;
	*bound += d + x;
	if (*bound > TIME_LIMIT)
		return fail(r->out, CAPSIM_PIPELINE_ERANGE, "pipeline: a step could exceed %lld ns",
			    (long long)TIME_LIMIT);
	return CAPSIM_PIPELINE_OK;
}

/* Durations, dependencies and orders into r (allocated here, freed by the
 * caller through run_free). Returns 0, or an error for a bad duration or a
 * step whose total time could overflow. */
static int prepare(run *r)
{
	const capsim_pipeline_spec *in = r->in;
	int p = r->p, v = r->v, m = r->m;
	size_t total = (size_t)p * r->per;
	r->dur = capsim_xmalloc(total * sizeof *r->dur);
	r->consumer = capsim_xmalloc(total * sizeof *r->consumer);
	r->producer = capsim_xmalloc(total * sizeof *r->producer);
	memset(r->producer, 0xff, total * sizeof *r->producer); /* -1: none */
	r->delay = capsim_xmalloc(total * sizeof *r->delay);
	r->timed = capsim_xcalloc(total, 1);
	r->next = capsim_xcalloc((size_t)p, sizeof *r->next);
	r->wake = capsim_xmalloc((size_t)p * sizeof *r->wake);
	r->queued = capsim_xcalloc((size_t)p, 1);
	int32_t *pos_of = capsim_xmalloc(total * sizeof *pos_of);
	memset(pos_of, 0xff, total * sizeof *pos_of); /* -1: no position yet */
	place_orders(r, pos_of);

	/* durations and dependencies, in key order (the callback's contract);
	 * bound is a step's longest possible time: all work, all transfers
	 * and all tails one after another */
	int rc = CAPSIM_PIPELINE_OK;
	capsim_time_ns bound = 0;
	for (int k = 0; k < p && rc == CAPSIM_PIPELINE_OK; k++) {
		if (in->tail_ns)
			bound += in->tail_ns[k];
		for (int c = 0; c < v && rc == CAPSIM_PIPELINE_OK; c++)
			for (int i = 0; i < m && rc == CAPSIM_PIPELINE_OK; i++)
				for (int b = 0; b < 2 && rc == CAPSIM_PIPELINE_OK; b++)
					rc = link_task(r, pos_of, k, c, i, b, &bound);
	}
	/* the first virtual stage's forwards have their input from the start:
	 * they have no producer */
	for (int i = 0; i < m; i++)
		CAPSIM_ASSERT(r->producer[pos_of[key_of(r, 0, 0, i, 0)]] < 0);
	free(pos_of);
	return rc;
}

static void run_free(run *r)
{
	free(r->dur);
	free(r->consumer);
	free(r->producer);
	free(r->delay);
	free(r->timed);
	free(r->next);
	free(r->wake);
	free(r->queued);
}

int capsim_pipeline_simulate(const capsim_pipeline_spec *in,
			     capsim_pipeline_result *out)
{
	memset(out, 0, sizeof *out);
	if (!in)
		return fail(out, CAPSIM_PIPELINE_EINVAL, "pipeline: no input");
	int rc = validate(in, out);
	if (rc != CAPSIM_PIPELINE_OK)
		return rc;

	run r = { .in = in, .out = out, .p = in->stages, .v = in->chunks,
		  .m = in->microbatches };
	r.per = (size_t)2 * r.v * r.m;
	out->stages = r.p;
	out->tasks_per_stage = r.per;
	out->tasks = capsim_xcalloc((size_t)r.p * r.per, sizeof *out->tasks);
	out->stage = capsim_xcalloc((size_t)r.p, sizeof *out->stage);
	for (int k = 0; k < r.p; k++)
		out->stage[k].tail_ns = in->tail_ns ? in->tail_ns[k] : 0;
	rc = prepare(&r);
	if (rc != CAPSIM_PIPELINE_OK) {
		char msg[sizeof out->errmsg];
		memcpy(msg, out->errmsg, sizeof msg);
		run_free(&r);
		capsim_pipeline_result_free(out);
		memcpy(out->errmsg, msg, sizeof msg);
		return rc;
	}

	time_all(&r);
	out->events = r.events;

	for (int k = 0; k < r.p; k++) {
		if (r.next[k] != r.per + 1)
			BROKEN("pipeline schedule deadlocked");
		if (out->stage[k].finish_ns > out->makespan_ns)
			out->makespan_ns = out->stage[k].finish_ns;
	}
	for (int k = 0; k < r.p; k++) {
		capsim_pipeline_stage *s = &out->stage[k];
		s->idle_ns = out->makespan_ns - s->busy_ns - s->tail_ns;
		/* a stage is busy, idle or in its tail: never more than the step */
		CAPSIM_ASSERT(s->idle_ns >= 0);
	}
	run_free(&r);
	return CAPSIM_PIPELINE_OK;
}

void capsim_pipeline_result_free(capsim_pipeline_result *r)
{
	if (!r)
		return;
	free(r->tasks);
	free(r->stage);
	memset(r, 0, sizeof *r);
}

/* ---- the critical path ---- */

static void path_push(capsim_path_segment **a, size_t *n, size_t *cap,
		      capsim_path_segment seg)
{
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 16;
		*a = capsim_xrealloc(*a, *cap * sizeof **a);
	}
	(*a)[(*n)++] = seg;
}

size_t capsim_pipeline_critical_path(const capsim_pipeline_result *r,
				     capsim_path_segment **out)
{
	*out = NULL;
	if (!r || !r->tasks || r->stages < 1 || r->tasks_per_stage == 0)
		return 0;
	int crit = 0;
	for (int k = 1; k < r->stages; k++)
		if (r->stage[k].finish_ns > r->stage[crit].finish_ns)
			crit = k;
	/* walk back from the critical stage's last task; the chain is at most
	 * every task once */
	size_t total = (size_t)r->stages * r->tasks_per_stage;
	int32_t *chain = capsim_xmalloc(total * sizeof *chain);
	size_t len = 0;
	int32_t pos = (int32_t)((size_t)crit * r->tasks_per_stage + r->tasks_per_stage - 1);
	while (pos >= 0 && len < total) {
		chain[len++] = pos;
		pos = r->tasks[pos].pred;
	}
	capsim_path_segment *a = NULL;
	size_t n = 0, cap = 0;
	for (size_t q = len; q-- > 0;) {
		const capsim_pipeline_task *t = &r->tasks[chain[q]];
		capsim_path_segment *last = n ? &a[n - 1] : NULL;
		if (q + 1 < len && t->via_transfer) {
			const capsim_pipeline_task *from = &r->tasks[chain[q + 1]];
			if (t->start_ns > from->end_ns || from->stage != t->stage) {
				path_push(&a, &n, &cap, (capsim_path_segment){
					.kind = CAPSIM_PATH_TRANSFER, .stage = from->stage,
					.to_stage = t->stage, .start_ns = from->end_ns,
					.end_ns = t->start_ns });
				last = NULL;
			}
		}
		if (last && last->kind == CAPSIM_PATH_COMPUTE && last->stage == t->stage &&
		    last->end_ns == t->start_ns) {
			last->end_ns = t->end_ns;
			last->last_microbatch = t->microbatch;
			if (t->backward)
				last->backwards++;
			else
				last->forwards++;
			continue;
		}
		path_push(&a, &n, &cap, (capsim_path_segment){
			.kind = CAPSIM_PATH_COMPUTE, .stage = t->stage, .to_stage = t->stage,
			.forwards = !t->backward, .backwards = t->backward,
			.first_microbatch = t->microbatch, .last_microbatch = t->microbatch,
			.start_ns = t->start_ns, .end_ns = t->end_ns });
	}
	free(chain);
	const capsim_pipeline_stage *st = &r->stage[crit];
	if (st->tail_ns > 0)
		path_push(&a, &n, &cap, (capsim_path_segment){
			.kind = CAPSIM_PATH_TAIL, .stage = crit, .to_stage = crit,
			.start_ns = st->last_end_ns, .end_ns = st->finish_ns });
	*out = a;
	return n;
}
