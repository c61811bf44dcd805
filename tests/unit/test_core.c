/* test_core.c - the discrete-event engine: delivery order, cancellation, run
 * limits, slot reuse, agreement with a sorted-array reference over random
 * operations, determinism, and seconds-to-nanoseconds conversion. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "queue.h"
#include "queue_cal.h"
#include "xalloc.h"

/* ---- a log of deliveries, filled by the handler record() ---- */

typedef struct rec {
	capsim_time_ns t;
	uint32_t tag;
	uint8_t prio;
	capsim_event_id id;
} rec;

typedef struct log_ctx {
	rec v[64];
	size_t n;
	capsim_sim *sim;
	size_t stop_at; /* call capsim_sim_stop at this delivery (1-based); 0 never */
} log_ctx;

static uint32_t tag_of(const capsim_event *ev)
{
	uint32_t tag;
	memcpy(&tag, ev->payload, sizeof tag);
	return tag;
}

static void record(capsim_sim *sim, const capsim_event *ev, void *ctx)
{
	log_ctx *l = ctx;
	assert_ptr_equal(sim, l->sim);
	assert_int_equal(capsim_sim_now(sim), ev->t);
	assert_true(l->n < sizeof l->v / sizeof l->v[0]);
	l->v[l->n++] = (rec){ ev->t, tag_of(ev), ev->prio, ev->id };
	if (l->stop_at && l->n == l->stop_at)
		capsim_sim_stop(sim);
}

static capsim_event_id put(capsim_sim *sim, int kind, capsim_time_ns t,
			   uint8_t prio, uint32_t tag)
{
	capsim_event_id id = capsim_sim_schedule(sim, t, prio, kind, &tag, sizeof tag);
	if (id == 0)
		fail_msg("schedule(t=%lld, prio=%u, tag=%u) refused", (long long)t,
			 prio, tag);
	return id;
}

/* The tags delivered so far must be want[0 .. n-1], in order. */
static void expect_tags(const log_ctx *l, const uint32_t *want, size_t n)
{
	if (l->n != n)
		fail_msg("%zu events delivered, expected %zu", l->n, n);
	for (size_t i = 0; i < n; i++)
		if (l->v[i].tag != want[i])
			fail_msg("delivery %zu: tag %u at t=%lld, expected tag %u", i,
				 l->v[i].tag, (long long)l->v[i].t, want[i]);
}

static capsim_sim *new_sim(log_ctx *l, int *kind)
{
	memset(l, 0, sizeof *l);
	capsim_sim *sim = capsim_sim_create();
	assert_non_null(sim);
	l->sim = sim;
	*kind = capsim_sim_add_kind(sim, record, l);
	assert_int_equal(*kind, 0);
	return sim;
}

/* ---- order ---- */

static void test_order_time_prio_seq(void **state)
{
	(void)state;
	log_ctx l;
	int k;
	capsim_sim *sim = new_sim(&l, &k);
	/* tag = expected delivery rank */
	put(sim, k, 7385, 0, 7);
	put(sim, k, 2385, 3, 3);
	put(sim, k, 2385, 1, 1);
	put(sim, k, 1000, 9, 0);
	put(sim, k, 2385, 3, 4); /* same time and prio as tag 3: after it */
	put(sim, k, 2385, 255, 6);
	put(sim, k, 2385, 1, 2);
	put(sim, k, 2385, 3, 5);
	assert_int_equal(capsim_sim_pending(sim), 8);
	assert_int_equal(capsim_sim_next_time(sim), 1000);
	assert_int_equal(capsim_sim_run(sim, CAPSIM_TIME_NEVER), 8);
	const uint32_t want[] = { 0, 1, 2, 3, 4, 5, 6, 7 };
	expect_tags(&l, want, 8);
	assert_int_equal(l.v[6].prio, 255);
	assert_int_equal(capsim_sim_now(sim), 7385);
	assert_int_equal(capsim_sim_pending(sim), 0);
	assert_int_equal(capsim_sim_delivered(sim), 8);
	assert_int_equal(capsim_sim_next_time(sim), CAPSIM_TIME_NEVER);
	capsim_sim_destroy(sim);
}

/* A handler at t=500 schedules at its own time: a lower priority value goes
 * before the pending same-time events, an equal one after them. */
typedef struct spawn_ctx {
	log_ctx *l;
	int kind;
} spawn_ctx;

static void spawn(capsim_sim *sim, const capsim_event *ev, void *ctx)
{
	spawn_ctx *c = ctx;
	record(sim, ev, c->l);
	put(sim, c->kind, ev->t, 0, 20);
	put(sim, c->kind, ev->t, 2, 21);
	/* the past stays refused inside a handler */
	assert_int_equal(capsim_sim_schedule(sim, ev->t - 1, 0, c->kind, NULL, 0), 0);
}

static void test_same_time_from_handler(void **state)
{
	(void)state;
	log_ctx l;
	int k;
	capsim_sim *sim = new_sim(&l, &k);
	spawn_ctx c = { &l, k };
	int ks = capsim_sim_add_kind(sim, spawn, &c);
	assert_int_equal(ks, 1);
	put(sim, k, 500, 2, 12);
	put(sim, ks, 500, 1, 10);
	put(sim, k, 501, 0, 30);
	assert_int_equal(capsim_sim_run(sim, CAPSIM_TIME_NEVER), 5);
	const uint32_t want[] = { 10, 20, 12, 21, 30 };
	expect_tags(&l, want, 5);
	capsim_sim_destroy(sim);
}

/* ---- payload ---- */

typedef struct payload_ctx {
	unsigned char got[3][CAPSIM_EVENT_PAYLOAD];
	uint16_t kind[3];
	size_t n;
} payload_ctx;

static void keep_payload(capsim_sim *sim, const capsim_event *ev, void *ctx)
{
	(void)sim;
	payload_ctx *p = ctx;
	memcpy(p->got[p->n], ev->payload, CAPSIM_EVENT_PAYLOAD);
	p->kind[p->n++] = ev->kind;
}

static void test_payload(void **state)
{
	(void)state;
	capsim_sim *sim = capsim_sim_create();
	payload_ctx p = { 0 };
	assert_int_equal(capsim_sim_add_kind(sim, keep_payload, &p), 0);
	assert_int_equal(capsim_sim_add_kind(sim, keep_payload, &p), 1);
	unsigned char full[CAPSIM_EVENT_PAYLOAD], part[5] = { 9, 8, 7, 6, 5 };
	for (size_t i = 0; i < sizeof full; i++)
		full[i] = (unsigned char)(0xa0 + i);
	assert_int_not_equal(capsim_sim_schedule(sim, 10, 0, 1, full, sizeof full), 0);
	assert_int_not_equal(capsim_sim_schedule(sim, 20, 0, 0, part, sizeof part), 0);
	assert_int_not_equal(capsim_sim_schedule(sim, 30, 0, 1, NULL, 0), 0);
	memset(full + 1, 0x55, 4); /* the engine copied it: later changes are not seen */
	assert_int_equal(capsim_sim_run(sim, CAPSIM_TIME_NEVER), 3);
	unsigned char want[CAPSIM_EVENT_PAYLOAD] = { 0 };
	for (size_t i = 0; i < sizeof want; i++)
		want[i] = (unsigned char)(0xa0 + i);
	assert_memory_equal(p.got[0], want, sizeof want);
	memset(want, 0, sizeof want);
	memcpy(want, part, sizeof part);
	assert_memory_equal(p.got[1], want, sizeof want);
	memset(want, 0, sizeof want);
	assert_memory_equal(p.got[2], want, sizeof want);
	assert_int_equal(p.kind[0], 1);
	assert_int_equal(p.kind[1], 0);
	assert_int_equal(p.kind[2], 1);
	capsim_sim_destroy(sim);
}

/* ---- refusals ---- */

static void test_schedule_refused(void **state)
{
	(void)state;
	log_ctx l;
	int k;
	capsim_sim *sim = new_sim(&l, &k);
	unsigned char big[CAPSIM_EVENT_PAYLOAD + 1] = { 0 };
	assert_int_equal(capsim_sim_schedule(sim, -1, 0, k, NULL, 0), 0);
	assert_int_equal(capsim_sim_schedule(sim, 10, 0, 1, NULL, 0), 0);
	assert_int_equal(capsim_sim_schedule(sim, 10, 0, -1, NULL, 0), 0);
	assert_int_equal(capsim_sim_schedule(sim, 10, 0, k, big, sizeof big), 0);
	assert_int_equal(capsim_sim_schedule(sim, CAPSIM_TIME_NEVER, 0, k, NULL, 0), 0);
	assert_int_not_equal(capsim_sim_schedule(sim, CAPSIM_TIME_NEVER - 1, 0, k, big,
						 CAPSIM_EVENT_PAYLOAD), 0);
	assert_int_equal(capsim_sim_pending(sim), 1);

	put(sim, k, 2385, 0, 1);
	assert_int_equal(capsim_sim_run(sim, 2385), 1);
	assert_int_equal(capsim_sim_now(sim), 2385);
	assert_int_equal(capsim_sim_schedule(sim, 2384, 0, k, NULL, 0), 0);
	assert_int_not_equal(capsim_sim_schedule(sim, 2385, 0, k, NULL, 0), 0);
	assert_int_equal(capsim_sim_add_kind(sim, NULL, NULL), -1);
	capsim_sim_destroy(sim);
}

static void nop(capsim_sim *sim, const capsim_event *ev, void *ctx)
{
	(void)sim;
	(void)ev;
	(void)ctx;
}

static void test_kind_limit(void **state)
{
	(void)state;
	capsim_sim *sim = capsim_sim_create();
	for (int i = 0; i < 65535; i++)
		if (capsim_sim_add_kind(sim, nop, NULL) != i)
			fail_msg("kind %d not registered", i);
	assert_int_equal(capsim_sim_add_kind(sim, nop, NULL), -1);
	assert_int_not_equal(capsim_sim_schedule(sim, 3, 0, 65534, NULL, 0), 0);
	assert_int_equal(capsim_sim_schedule(sim, 3, 0, 65535, NULL, 0), 0);
	assert_int_equal(capsim_sim_run(sim, CAPSIM_TIME_NEVER), 1);
	capsim_sim_destroy(sim);
	capsim_sim_destroy(NULL);
}

/* ---- cancellation ---- */

static void test_cancel(void **state)
{
	(void)state;
	log_ctx l;
	int k;
	capsim_sim *sim = new_sim(&l, &k);
	capsim_event_id a = put(sim, k, 100, 0, 1);
	capsim_event_id b = put(sim, k, 200, 0, 2);
	capsim_event_id c = put(sim, k, 300, 0, 3);
	capsim_event_id d = put(sim, k, 150, 0, 4);
	assert_true(a != b && b != c && c != d && a != d);
	assert_int_equal(capsim_sim_cancel(sim, b), 0); /* pending */
	assert_int_equal(capsim_sim_cancel(sim, b), -1); /* already cancelled */
	assert_int_equal(capsim_sim_pending(sim), 3);
	assert_int_equal(capsim_sim_run(sim, 150), 2);
	assert_int_equal(capsim_sim_cancel(sim, a), -1); /* already delivered */
	assert_int_equal(capsim_sim_cancel(sim, d), -1);
	assert_int_equal(capsim_sim_cancel(sim, 0), -1); /* bogus ids */
	assert_int_equal(capsim_sim_cancel(sim, 0xdeadbeef00000000u), -1);
	assert_int_equal(capsim_sim_cancel(sim, (c & ~(uint64_t)UINT32_MAX) | 999999), -1);
	assert_int_equal(capsim_sim_cancel(sim, c + ((uint64_t)7 << 32)), -1);
	assert_int_equal(capsim_sim_cancel(sim, UINT64_MAX), -1);
	/* generation matches but the slot is free: delivered (a's slot, now at
	 * generation 1) or never used (slot 40 of the first 64, generation 0) */
	assert_int_equal(capsim_sim_cancel(sim, (a & UINT32_MAX) | (uint64_t)1 << 32), -1);
	assert_int_equal(capsim_sim_cancel(sim, 41), -1);
	assert_int_equal(capsim_sim_pending(sim), 1);
	assert_int_equal(capsim_sim_cancel(sim, c), 0); /* the last one */
	assert_int_equal(capsim_sim_pending(sim), 0);
	assert_int_equal(capsim_sim_next_time(sim), CAPSIM_TIME_NEVER);
	assert_int_equal(capsim_sim_run(sim, CAPSIM_TIME_NEVER), 0);
	const uint32_t want[] = { 1, 4 };
	expect_tags(&l, want, 2);
	assert_int_equal(l.v[0].id, a);
	assert_int_equal(l.v[1].id, d);
	capsim_sim_destroy(sim);
}

/* A handler cancelling its own (already delivered) id and a pending one. */
typedef struct canceller {
	log_ctx *l;
	capsim_event_id victim;
	int self_rc, victim_rc;
} canceller;

static void cancel_from_handler(capsim_sim *sim, const capsim_event *ev, void *ctx)
{
	canceller *c = ctx;
	record(sim, ev, c->l);
	c->self_rc = capsim_sim_cancel(sim, ev->id);
	c->victim_rc = capsim_sim_cancel(sim, c->victim);
}

static void test_cancel_from_handler(void **state)
{
	(void)state;
	log_ctx l;
	int k;
	capsim_sim *sim = new_sim(&l, &k);
	canceller c = { &l, 0, 1, 1 };
	int kc = capsim_sim_add_kind(sim, cancel_from_handler, &c);
	put(sim, kc, 40, 0, 1);
	c.victim = put(sim, k, 40, 0, 2); /* same time, later: still pending */
	put(sim, k, 41, 0, 3);
	assert_int_equal(capsim_sim_run(sim, CAPSIM_TIME_NEVER), 2);
	assert_int_equal(c.self_rc, -1);
	assert_int_equal(c.victim_rc, 0);
	const uint32_t want[] = { 1, 3 };
	expect_tags(&l, want, 2);
	capsim_sim_destroy(sim);
}

/* A freed slot is reused, but under a new generation: the old id cannot
 * cancel the new event. */
static void test_slot_reuse_generation(void **state)
{
	(void)state;
	log_ctx l;
	int k;
	capsim_sim *sim = new_sim(&l, &k);
	capsim_event_id a = put(sim, k, 10, 0, 1);
	assert_int_equal(capsim_sim_cancel(sim, a), 0);
	capsim_event_id b = put(sim, k, 10, 0, 2);
	assert_int_equal(b & UINT32_MAX, a & UINT32_MAX); /* same slot */
	assert_true(b != a);
	assert_int_equal(capsim_sim_cancel(sim, a), -1);
	assert_int_equal(capsim_sim_pending(sim), 1);
	assert_int_equal(capsim_sim_run(sim, CAPSIM_TIME_NEVER), 1);
	/* and again after delivery */
	capsim_event_id c = put(sim, k, 11, 0, 3);
	assert_int_equal(c & UINT32_MAX, b & UINT32_MAX);
	assert_true(c != b && c != a);
	assert_int_equal(capsim_sim_cancel(sim, b), -1);
	assert_int_equal(capsim_sim_cancel(sim, a), -1);
	assert_int_equal(capsim_sim_run(sim, CAPSIM_TIME_NEVER), 1);
	const uint32_t want[] = { 2, 3 };
	expect_tags(&l, want, 2);
	assert_int_equal(l.v[0].id, b);
	assert_int_equal(l.v[1].id, c);
	capsim_sim_destroy(sim);
}

/* ---- run limits ---- */

static void test_until(void **state)
{
	(void)state;
	log_ctx l;
	int k;
	capsim_sim *sim = new_sim(&l, &k);
	put(sim, k, 100, 0, 1);
	put(sim, k, 200, 0, 2);
	put(sim, k, 300, 0, 3);
	put(sim, k, 200, 1, 4);
	assert_int_equal(capsim_sim_run(sim, 50), 0);
	assert_int_equal(capsim_sim_now(sim), 0);
	assert_int_equal(capsim_sim_run(sim, 200), 3); /* until is inclusive */
	assert_int_equal(capsim_sim_now(sim), 200);
	assert_int_equal(capsim_sim_pending(sim), 1);
	assert_int_equal(capsim_sim_next_time(sim), 300);
	assert_int_equal(capsim_sim_run(sim, 299), 0);
	put(sim, k, 250, 0, 5); /* between the last event and until: allowed */
	assert_int_equal(capsim_sim_run(sim, CAPSIM_TIME_NEVER), 2);
	const uint32_t want[] = { 1, 2, 4, 5, 3 };
	expect_tags(&l, want, 5);
	assert_int_equal(capsim_sim_delivered(sim), 5);
	capsim_sim_destroy(sim);
}

static void test_stop_from_handler(void **state)
{
	(void)state;
	log_ctx l;
	int k;
	capsim_sim *sim = new_sim(&l, &k);
	for (uint32_t i = 0; i < 5; i++)
		put(sim, k, 1000 + 7 * (capsim_time_ns)i, 0, i);
	l.stop_at = 3;
	capsim_sim_stop(sim); /* outside a run: no effect on the next run */
	assert_int_equal(capsim_sim_run(sim, CAPSIM_TIME_NEVER), 3);
	assert_int_equal(capsim_sim_now(sim), 1014);
	assert_int_equal(capsim_sim_pending(sim), 2);
	assert_int_equal(capsim_sim_run(sim, CAPSIM_TIME_NEVER), 2);
	const uint32_t want[] = { 0, 1, 2, 3, 4 };
	expect_tags(&l, want, 5);
	capsim_sim_destroy(sim);
}

static void nested_run(capsim_sim *sim, const capsim_event *ev, void *ctx)
{
	(void)ev;
	*(uint64_t *)ctx = capsim_sim_run(sim, CAPSIM_TIME_NEVER);
}

static void test_nested_run_refused(void **state)
{
	(void)state;
	capsim_sim *sim = capsim_sim_create();
	uint64_t inner = 99;
	int k = capsim_sim_add_kind(sim, nested_run, &inner);
	assert_int_not_equal(capsim_sim_schedule(sim, 1, 0, k, NULL, 0), 0);
	assert_int_not_equal(capsim_sim_schedule(sim, 2, 0, k, NULL, 0), 0);
	assert_int_equal(capsim_sim_run(sim, CAPSIM_TIME_NEVER), 2);
	assert_int_equal(inner, 0);
	capsim_sim_destroy(sim);
}

/* ---- random operations against a sorted-array reference ---- */

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* Whether delivering tag spawns a follow-up, and when and how: the same rule
 * on both sides, so that scheduling from handlers is compared too. */
static int follow_up(uint32_t tag, capsim_time_ns *dt, uint8_t *prio)
{
	uint64_t h = tag;
	h = splitmix(&h);
	*dt = (capsim_time_ns)(h >> 8) % 40;
	*prio = (uint8_t)((h >> 16) % 3);
	return h % 4 == 0;
}

typedef struct ref_ev {
	capsim_time_ns t;
	uint8_t prio;
	uint64_t seq;
	uint32_t tag;
} ref_ev;

/* The reference: pending events in an array kept sorted by (t, prio, seq). */
typedef struct ref_model {
	ref_ev *v;
	size_t n, cap;
	uint64_t seq;
	capsim_time_ns now;
	uint32_t next_tag;
	rec *log;
	size_t nlog, logcap;
} ref_model;

static int ref_before(const ref_ev *a, const ref_ev *b)
{
	if (a->t != b->t)
		return a->t < b->t;
	if (a->prio != b->prio)
		return a->prio < b->prio;
	return a->seq < b->seq;
}

static void append(rec **v, size_t *n, size_t *cap, rec r)
{
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 1024;
		*v = realloc(*v, *cap * sizeof **v);
		assert_non_null(*v);
	}
	(*v)[(*n)++] = r;
}

/* Returns the tag, or UINT32_MAX when refused (t < now). */
static uint32_t ref_schedule(ref_model *m, capsim_time_ns t, uint8_t prio)
{
	if (t < m->now)
		return UINT32_MAX;
	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 1024;
		m->v = realloc(m->v, m->cap * sizeof *m->v);
		assert_non_null(m->v);
	}
	ref_ev e = { t, prio, m->seq++, m->next_tag++ };
	size_t i = m->n;
	while (i > 0 && ref_before(&e, &m->v[i - 1]))
		i--;
	memmove(&m->v[i + 1], &m->v[i], (m->n - i) * sizeof *m->v);
	m->v[i] = e;
	m->n++;
	return e.tag;
}

static int ref_cancel(ref_model *m, uint32_t tag)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].tag == tag) {
			memmove(&m->v[i], &m->v[i + 1], (m->n - i - 1) * sizeof *m->v);
			m->n--;
			return 0;
		}
	return -1;
}

static void ref_run(ref_model *m, capsim_time_ns until)
{
	while (m->n && m->v[0].t <= until) {
		ref_ev e = m->v[0];
		memmove(&m->v[0], &m->v[1], (m->n - 1) * sizeof *m->v);
		m->n--;
		m->now = e.t;
		append(&m->log, &m->nlog, &m->logcap, (rec){ e.t, e.tag, e.prio, 0 });
		capsim_time_ns dt;
		uint8_t prio;
		if (follow_up(e.tag, &dt, &prio))
			ref_schedule(m, e.t + dt, prio);
	}
}

/* The engine side. */
typedef struct prop {
	capsim_sim *sim;
	int kind;
	uint32_t next_tag;
	capsim_event_id *ids; /* by tag */
	size_t idcap;
	rec *log;
	size_t nlog, logcap;
} prop;

static capsim_event_id prop_schedule(prop *p, capsim_time_ns t, uint8_t prio)
{
	uint32_t tag = p->next_tag;
	capsim_event_id id =
		capsim_sim_schedule(p->sim, t, prio, p->kind, &tag, sizeof tag);
	if (!id)
		return 0;
	if (tag >= p->idcap) {
		p->idcap = p->idcap ? 2 * p->idcap : 1024;
		p->ids = realloc(p->ids, p->idcap * sizeof *p->ids);
		assert_non_null(p->ids);
	}
	p->ids[tag] = id;
	p->next_tag++;
	return id;
}

static void prop_handler(capsim_sim *sim, const capsim_event *ev, void *ctx)
{
	prop *p = ctx;
	(void)sim;
	uint32_t tag = tag_of(ev);
	append(&p->log, &p->nlog, &p->logcap, (rec){ ev->t, tag, ev->prio, ev->id });
	capsim_time_ns dt;
	uint8_t prio;
	if (follow_up(tag, &dt, &prio) && !prop_schedule(p, ev->t + dt, prio))
		fail_msg("follow-up of tag %u refused", tag);
}

/* Apply nops random operations to the engine and to the reference, check
 * that they agree after each, and return an FNV-1a hash of the deliveries
 * (time, tag, priority and id). */
static uint64_t random_ops(uint64_t seed, int nops, size_t *delivered)
{
	prop p = { 0 };
	ref_model m = { 0 };
	p.sim = capsim_sim_create();
	p.kind = capsim_sim_add_kind(p.sim, prop_handler, &p);
	uint64_t s = seed;
	for (int op = 0; op < nops; op++) {
		uint64_t r = splitmix(&s);
		unsigned what = (unsigned)(r % 100);
		capsim_time_ns now = capsim_sim_now(p.sim);
		if (what < 55) { /* schedule near (ties) or far, now and then in the past */
			capsim_time_ns t = now + (capsim_time_ns)((r >> 8) % 300);
			if (r >> 63)
				t = now + (capsim_time_ns)((r >> 8) % 50000);
			if (what < 3)
				t = now - 1 - (capsim_time_ns)((r >> 8) % 5);
			uint8_t prio = (uint8_t)((r >> 24) % 4);
			uint32_t want = ref_schedule(&m, t, prio);
			capsim_event_id id = prop_schedule(&p, t, prio);
			if ((id == 0) != (want == UINT32_MAX))
				fail_msg("op %d: schedule at t=%lld (now %lld): engine %s, "
					 "reference %s",
					 op, (long long)t, (long long)now,
					 id ? "accepted" : "refused",
					 want == UINT32_MAX ? "refused" : "accepted");
		} else if (what < 78) { /* cancel a recent or any tag, and a bogus id */
			if (p.next_tag == 0)
				continue;
			uint32_t tag = (uint32_t)((r >> 8) % p.next_tag);
			if ((r >> 63) && p.next_tag > 2000)
				tag = p.next_tag - 1 - (uint32_t)((r >> 8) % 2000);
			int rc = capsim_sim_cancel(p.sim, p.ids[tag]);
			int want = ref_cancel(&m, tag);
			if (rc != want)
				fail_msg("op %d: cancel tag %u: engine %d, reference %d", op,
					 tag, rc, want);
			/* a generation never reached, on a slot that may exist */
			capsim_event_id bogus = (uint64_t)(0x80000000u | (uint32_t)(r >> 32)) << 32 |
						((r & 0xffff) + 1);
			assert_int_equal(capsim_sim_cancel(p.sim, bogus), -1);
		} else { /* run a while; every 4000 operations, to the end */
			capsim_time_ns until = now + (capsim_time_ns)((r >> 8) % 120);
			if (op % 4000 == 3999)
				until = CAPSIM_TIME_NEVER;
			capsim_sim_run(p.sim, until);
			ref_run(&m, until);
		}
		if (capsim_sim_pending(p.sim) != m.n || p.nlog != m.nlog ||
		    capsim_sim_now(p.sim) != m.now)
			fail_msg("op %d: engine %zu pending, %zu delivered, now %lld; "
				 "reference %zu, %zu, %lld",
				 op, capsim_sim_pending(p.sim), p.nlog,
				 (long long)capsim_sim_now(p.sim), m.n, m.nlog,
				 (long long)m.now);
	}
	capsim_sim_run(p.sim, CAPSIM_TIME_NEVER);
	ref_run(&m, CAPSIM_TIME_NEVER);
	assert_int_equal(p.nlog, m.nlog);
	assert_int_equal(capsim_sim_delivered(p.sim), p.nlog);
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	for (size_t i = 0; i < p.nlog; i++) {
		const rec *a = &p.log[i], *b = &m.log[i];
		if (a->t != b->t || a->tag != b->tag || a->prio != b->prio)
			fail_msg("delivery %zu: engine tag %u t=%lld prio %u; reference "
				 "tag %u t=%lld prio %u",
				 i, a->tag, (long long)a->t, a->prio, b->tag,
				 (long long)b->t, b->prio);
		if (i > 0 && a->t < p.log[i - 1].t)
			fail_msg("delivery %zu: time went back", i);
		uint64_t words[4] = { (uint64_t)a->t, a->tag, a->prio, a->id };
		const unsigned char *c = (const unsigned char *)words;
		for (size_t j = 0; j < sizeof words; j++)
			h = (h ^ c[j]) * UINT64_C(0x100000001b3);
	}
	*delivered = p.nlog;
	capsim_sim_destroy(p.sim);
	free(p.ids);
	free(p.log);
	free(m.v);
	free(m.log);
	return h;
}

static void test_random_against_reference(void **state)
{
	(void)state;
	size_t n = 0;
	random_ops(2385, 20000, &n);
	assert_true(n > 5000); /* the mix really delivers */
}

static void test_determinism(void **state)
{
	(void)state;
	size_t n1 = 0, n2 = 0, n3 = 0;
	uint64_t h1 = random_ops(42, 5000, &n1);
	uint64_t h2 = random_ops(42, 5000, &n2);
	uint64_t h3 = random_ops(43, 5000, &n3);
	assert_int_equal(n1, n2);
	if (h1 != h2)
		fail_msg("same operations, different deliveries: %016llx vs %016llx",
			 (unsigned long long)h1, (unsigned long long)h2);
	assert_true(h1 != h3); /* the hash does see the sequence */
}

/* ---- many pending: the pool and the queue grow, cancellation in bulk ---- */

static void count_sorted(capsim_sim *sim, const capsim_event *ev, void *ctx)
{
	capsim_time_ns *last = ctx;
	(void)sim;
	if (ev->t < *last)
		fail_msg("t=%lld delivered after t=%lld", (long long)ev->t,
			 (long long)*last);
	*last = ev->t;
}

static void test_many_pending(void **state)
{
	(void)state;
	enum { N = 100000 };
	capsim_sim *sim = capsim_sim_create();
	capsim_time_ns last = 0;
	int k = capsim_sim_add_kind(sim, count_sorted, &last);
	capsim_event_id *ids = malloc(N * sizeof *ids);
	assert_non_null(ids);
	uint64_t s = 7;
	for (int i = 0; i < N; i++) {
		ids[i] = capsim_sim_schedule(sim, (capsim_time_ns)(splitmix(&s) % 1000000),
					     (uint8_t)(i % 7), k, NULL, 0);
		assert_int_not_equal(ids[i], 0);
	}
	for (int i = 0; i < N; i += 2)
		assert_int_equal(capsim_sim_cancel(sim, ids[i]), 0);
	assert_int_equal(capsim_sim_pending(sim), N / 2);
	assert_int_equal(capsim_sim_run(sim, CAPSIM_TIME_NEVER), N / 2);
	for (int i = 0; i < N; i++)
		assert_int_equal(capsim_sim_cancel(sim, ids[i]), -1);
	free(ids);
	capsim_sim_destroy(sim);
}

/* The pool grows past 4 MiB (advised huge pages, copied rather than
 * realloc'd) while events are pending: each keeps its payload. */
static void check_payload_of_t(capsim_sim *sim, const capsim_event *ev, void *ctx)
{
	uint64_t *seen = ctx, v;
	(void)sim;
	memcpy(&v, ev->payload, sizeof v);
	if (v != (uint64_t)ev->t * UINT64_C(2654435761))
		fail_msg("t=%lld carries payload %llu", (long long)ev->t,
			 (unsigned long long)v);
	++*seen;
}

static void test_payloads_survive_growth(void **state)
{
	(void)state;
	enum { N = 300000 };
	capsim_sim *sim = capsim_sim_create();
	uint64_t seen = 0;
	int k = capsim_sim_add_kind(sim, check_payload_of_t, &seen);
	for (uint64_t i = 0; i < N; i++) {
		capsim_time_ns t = (capsim_time_ns)((i * 7919) % N); /* a permutation */
		uint64_t v = (uint64_t)t * UINT64_C(2654435761);
		assert_int_not_equal(capsim_sim_schedule(sim, t, 0, k, &v, sizeof v), 0);
	}
	assert_int_equal(capsim_sim_run(sim, CAPSIM_TIME_NEVER), N);
	assert_int_equal(seen, N);
	capsim_sim_destroy(sim);
}

static void test_xrealloc_huge_keeps_contents(void **state)
{
	(void)state;
	size_t small = (size_t)3 << 20, big = (size_t)9 << 20;
	unsigned char *p = capsim_xrealloc_huge(NULL, 0, small);
	for (size_t i = 0; i < small; i++)
		p[i] = (unsigned char)(i * 31 + 7);
	p = capsim_xrealloc_huge(p, small, big); /* past 4 MiB: copied */
	for (size_t i = 0; i < small; i++)
		if (p[i] != (unsigned char)(i * 31 + 7))
			fail_msg("byte %zu lost in the move", i);
	memset(p + small, 0xab, big - small);
	p = capsim_xrealloc_huge(p, big, small); /* shrinking: realloc */
	for (size_t i = 0; i < small; i++)
		if (p[i] != (unsigned char)(i * 31 + 7))
			fail_msg("byte %zu lost in the shrink", i);
	free(p);
}

/* ---- seconds to nanoseconds ---- */

static void test_ns_from_s(void **state)
{
	(void)state;
	const capsim_time_ns top = CAPSIM_TIME_NEVER - 1;
	assert_int_equal(capsim_ns_from_s(2.385e-6), 2385);
	assert_int_equal(capsim_ns_from_s(2.3855e-6), 2386); /* nearest, not truncated */
	assert_int_equal(capsim_ns_from_s(0.6e-9), 1);
	assert_int_equal(capsim_ns_from_s(0.4e-9), 0);
	assert_int_equal(capsim_ns_from_s(-0.6e-9), -1);
	assert_int_equal(capsim_ns_from_s(1.5e-9), 2); /* halves away from zero */
	assert_int_equal(capsim_ns_from_s(-2.5e-9), -3);
	assert_int_equal(capsim_ns_from_s(7.0000000035), INT64_C(7000000004));
	assert_int_equal(capsim_ns_from_s(0.0), 0);
	assert_int_equal(capsim_ns_from_s(9.2e9), INT64_C(9200000000000000000));
	assert_int_equal(capsim_ns_from_s(9223372036.8547745),
			 INT64_C(9223372036854774784)); /* largest below 2^63 */
	assert_int_equal(capsim_ns_from_s(9223372036.8547764), top); /* 2^63 ns */
	assert_int_equal(capsim_ns_from_s(1e30), top);
	assert_int_equal(capsim_ns_from_s(INFINITY), top);
	assert_int_equal(capsim_ns_from_s(NAN), top);
	assert_int_equal(capsim_ns_from_s(-NAN), top);
	assert_int_equal(capsim_ns_from_s(-1e30), -top);
	assert_int_equal(capsim_ns_from_s(-INFINITY), -top);
}

/* The calendar queue against the 4-ary heap: the same random pushes
 * (mostly ahead of the last pop, as a simulation makes them, some behind
 * it, ties in time with random priorities), removals of random queued
 * events and pops, through resizes both ways, crowded ticks first and
 * times spread over hours later; every pop must return the same entry. */
static void test_calendar_matches_heap(void **state)
{
	(void)state;
	enum { EVENTS = 20000, OPS = 400000 };
	capsim_queue h = { 0 };
	h.pos = calloc(EVENTS, sizeof *h.pos);
	capsim_calq c;
	capsim_calq_init(&c);
	char *queued = calloc(EVENTS, 1);
	uint64_t rng = 12345, seq = 0;
	int64_t now = 0;
	size_t n = 0, pops = 0, removes = 0, max_nb = 0;
	unsigned max_shift = 0;
	for (int op = 0; op < OPS; op++) {
		rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
		uint32_t r = (uint32_t)(rng >> 33);
		/* grow to about 8,000 queued, then drain, then grow again */
		int phase = (op / 100000) % 2;
		int want_push = phase == 0 ? r % 10 < 6 : r % 10 < 3;
		if (n == 0)
			want_push = 1;
		uint32_t ev = (r >> 8) % EVENTS;
		if (want_push && !queued[ev]) {
			int64_t dt = (int64_t)((r >> 4) % 4000);
			if (r % 97 == 0)
				dt = -(int64_t)(r % 500); /* behind the last pop */
			if (r % 13 == 0)
				dt = 0; /* ties */
			if (op >= 200000 && r % 3 == 0)
				/* far ahead, spread over 2^44 ns: wide buckets, and
				 * years the least entry's search must cross */
				dt = (int64_t)((rng >> 7) & ((UINT64_C(1) << 44) - 1));
			capsim_qent e = { .t = now + dt,
					  .k2 = (uint64_t)(r % 4) << 56 | seq++, .ev = ev };
			capsim_queue_push(&h, e);
			capsim_calq_push(&c, e);
			queued[ev] = 1;
			n++;
		} else if (r % 5 == 0 && n > 0) {
			/* remove a random queued event */
			uint32_t k = ev;
			while (!queued[k])
				k = (k + 1) % EVENTS;
			capsim_queue_remove(&h, h.pos[k]);
			capsim_calq_remove(&c, k);
			queued[k] = 0;
			n--;
			removes++;
		} else if (n > 0) {
			const capsim_qent *pl = capsim_calq_least(&c);
			assert_non_null(pl);
			uint32_t least_ev = pl->ev;
			const capsim_qent *pc = capsim_calq_peek(&c);
			assert_non_null(pc);
			assert_int_equal(pc->ev, least_ev);
			assert_true(pc->ev == capsim_queue_peek(&h)->ev);
			capsim_qent a = capsim_queue_pop(&h);
			capsim_qent b = capsim_calq_pop(&c);
			assert_true(a.t == b.t && a.k2 == b.k2 && a.ev == b.ev);
			queued[a.ev] = 0;
			now = a.t;
			n--;
			pops++;
		}
		assert_int_equal(c.n, n);
		if (c.nb > max_nb)
			max_nb = c.nb;
		if (c.shift > max_shift)
			max_shift = c.shift;
	}
	assert_true(pops > 50000 && removes > 10000);
	assert_true(max_nb >= 2048); /* it grew, and shrank on the way down */
	assert_true(c.nb < max_nb);
	assert_true(max_shift >= 20); /* widths chosen from the spacing */
	while (n > 0) {
		capsim_qent a = capsim_queue_pop(&h);
		capsim_qent b = capsim_calq_pop(&c);
		assert_true(a.t == b.t && a.k2 == b.k2 && a.ev == b.ev);
		n--;
	}
	assert_null(capsim_calq_peek(&c));
	free(h.a);
	free(h.pos);
	free(queued);
	capsim_calq_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_time_prio_seq),
		cmocka_unit_test(test_same_time_from_handler),
		cmocka_unit_test(test_payload),
		cmocka_unit_test(test_schedule_refused),
		cmocka_unit_test(test_kind_limit),
		cmocka_unit_test(test_cancel),
		cmocka_unit_test(test_cancel_from_handler),
		cmocka_unit_test(test_slot_reuse_generation),
		cmocka_unit_test(test_until),
		cmocka_unit_test(test_stop_from_handler),
		cmocka_unit_test(test_nested_run_refused),
		cmocka_unit_test(test_random_against_reference),
		cmocka_unit_test(test_determinism),
		cmocka_unit_test(test_many_pending),
		cmocka_unit_test(test_payloads_survive_growth),
		cmocka_unit_test(test_xrealloc_huge_keeps_contents),
		cmocka_unit_test(test_calendar_matches_heap),
		cmocka_unit_test(test_ns_from_s),
	};
	return testutil_run_group_name("core", tests, NULL, NULL);
}
