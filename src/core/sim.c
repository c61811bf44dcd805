/* sim.c - the discrete-event engine of core.h: event pool, handlers, run loop.
 *
 * Events live in a pool of slots with their payload inline; free slots are
 * chained in a LIFO list (the slot just delivered is the next one reused, still
 * warm in cache). Each slot counts how many times it was freed (its
 * generation), and an event id is generation << 32 | (slot + 1), so an id
 * outlives its event harmlessly: once the slot is freed the generation no
 * longer matches. The queue (a calendar queue, queue_cal.h) holds only the
 * compact keys (t, prio << 56 | seq, slot) and finds a slot's key itself.
 *
 * Known limits: 2^32 - 2 events pending at once; 2^56 events scheduled over
 * the engine's life (at 10^8 events/s, 22 years), past which it aborts rather
 * than break the order; a generation wraps after 2^32 reuses of one slot, after
 * which a very old id could match again.
 */
#include "core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "queue_cal.h"
#include "xalloc.h"

#define SEQ_BITS 56
#define SEQ_LIMIT (UINT64_C(1) << SEQ_BITS)
#define MAX_KINDS 65535
#define NO_SLOT UINT32_MAX
#define MAX_SLOTS (UINT32_MAX - 1) /* slot + 1 fits in the id; NO_SLOT unused */
#define FIRST_SLOTS 64
#define PREFETCH_AHEAD 4 /* events ahead whose slots are loaded early */

/* One event's storage. While pending, its key sits in the queue; while free,
 * next chains the free list. */
typedef struct slot {
	uint32_t gen; /* times this slot was freed */
	uint32_t next; /* next free slot (NO_SLOT ends the list); free slots only */
	uint16_t kind;
	uint8_t pending; /* 1 from schedule to delivery or cancellation */
	unsigned char payload[CAPSIM_EVENT_PAYLOAD];
} slot;

typedef struct kind_entry {
	capsim_handler h;
	void *ctx;
} kind_entry;

struct capsim_sim {
	capsim_calq q;
	slot *slots;
	size_t nslots; /* slots allocated (all on the free list or pending) */
	uint32_t free_head;
	kind_entry *kinds;
	size_t nkinds, kinds_cap;
	capsim_time_ns now; /* time of the last delivered event; 0 at first */
	uint64_t seq; /* insertion counter, below SEQ_LIMIT */
	uint64_t delivered;
	int running, stopping;
};

static inline capsim_event_id make_id(uint32_t gen, uint32_t i)
{
	return (uint64_t)gen << 32 | ((uint64_t)i + 1);
}

/* Double the pool and make the new slots the free list,
 * lowest index first, so that allocation order is deterministic. Called only
 * when the free list is empty. */
static void grow_pool(capsim_sim *sim)
{
	size_t old = sim->nslots;
	size_t cap = old ? 2 * old : FIRST_SLOTS;
	if (cap > MAX_SLOTS)
		cap = MAX_SLOTS;
	if (cap <= old)
		CAPSIM_BROKEN("more than 2^32 - 2 events pending");
	sim->slots = capsim_xrealloc_huge(sim->slots, old * sizeof *sim->slots,
					  cap * sizeof *sim->slots);
	for (size_t i = old; i < cap; i++) {
		slot *s = &sim->slots[i];
		s->gen = 0;
		s->pending = 0;
		s->next = i + 1 < cap ? (uint32_t)(i + 1) : NO_SLOT;
	}
	sim->free_head = (uint32_t)old;
	sim->nslots = cap;
}

static inline uint32_t alloc_slot(capsim_sim *sim)
{
	if (sim->free_head == NO_SLOT)
		grow_pool(sim);
	uint32_t i = sim->free_head;
	/* the free list holds only slots with no event pending */
	CAPSIM_ASSERT(i < sim->nslots && !sim->slots[i].pending);
	sim->free_head = sim->slots[i].next;
	return i;
}

/* Return slot i to the free list; its current id stops matching. */
static inline void free_slot(capsim_sim *sim, uint32_t i)
{
	slot *s = &sim->slots[i];
	/* freed once per schedule: by delivery or by cancellation */
	CAPSIM_ASSERT(s->pending);
	s->gen++;
	s->pending = 0;
	s->next = sim->free_head;
	sim->free_head = i;
}

capsim_sim *capsim_sim_create(void)
{
	capsim_sim *sim = capsim_xcalloc(1, sizeof *sim); /* aborts on OOM */
	sim->free_head = NO_SLOT;
	capsim_calq_init(&sim->q);
	return sim;
}

void capsim_sim_destroy(capsim_sim *sim)
{
	if (!sim)
		return;
	capsim_calq_free(&sim->q);
	free(sim->slots);
	free(sim->kinds);
	free(sim);
}

int capsim_sim_add_kind(capsim_sim *sim, capsim_handler h, void *ctx)
{
	if (!h || sim->nkinds >= MAX_KINDS)
		return -1;
	if (sim->nkinds == sim->kinds_cap) {
		sim->kinds_cap = sim->kinds_cap ? 2 * sim->kinds_cap : 8;
		sim->kinds = capsim_xrealloc(sim->kinds,
					     sim->kinds_cap * sizeof *sim->kinds);
	}
	sim->kinds[sim->nkinds] = (kind_entry){ h, ctx };
	return (int)sim->nkinds++;
}

capsim_event_id capsim_sim_schedule(capsim_sim *sim, capsim_time_ns t,
				    uint8_t prio, int kind, const void *payload,
				    size_t len)
{
	/* CAPSIM_TIME_NEVER is reserved: it means "nothing pending". */
	if (t < sim->now || t == CAPSIM_TIME_NEVER || kind < 0 ||
	    (size_t)kind >= sim->nkinds || len > CAPSIM_EVENT_PAYLOAD)
		return 0;
	if (sim->seq >= SEQ_LIMIT)
		CAPSIM_BROKEN("2^56 events scheduled: insertion sequence exhausted");
	uint32_t i = alloc_slot(sim);
	slot *s = &sim->slots[i];
	s->kind = (uint16_t)kind;
	s->pending = 1;
	if (payload && len) {
		memcpy(s->payload, payload, len);
		memset(s->payload + len, 0, CAPSIM_EVENT_PAYLOAD - len);
	} else {
		memset(s->payload, 0, CAPSIM_EVENT_PAYLOAD);
	}
	capsim_qent e = { .t = t, .k2 = (uint64_t)prio << SEQ_BITS | sim->seq++,
			  .ev = i };
	capsim_calq_push(&sim->q, e); /* grows through xrealloc: cannot fail */
	/* every pending event has its slot, and its slot only */
	CAPSIM_ASSERT(sim->q.n <= sim->nslots);
	return make_id(s->gen, i);
}

int capsim_sim_cancel(capsim_sim *sim, capsim_event_id id)
{
	uint64_t lo = id & UINT32_MAX;
	if (lo == 0 || lo > sim->nslots)
		return -1;
	uint32_t i = (uint32_t)(lo - 1);
	const slot *s = &sim->slots[i];
	if (!s->pending || s->gen != (uint32_t)(id >> 32))
		return -1;
	capsim_calq_remove(&sim->q, i);
	free_slot(sim, i);
	/* the id no longer matches: a second cancel is refused */
	CAPSIM_ASSERT(make_id(s->gen, i) != id);
	return 0;
}

/* Start loading the slots of the events most likely next (the least and
 * the one PREFETCH_AHEAD places on in its bucket), and their places in the
 * queue's index
 * (the slot freed by a delivery is the next scheduled, and its index entry
 * is then written): in a large pool both are cold (written when
 * scheduled), and the handlers' run before they are needed hides the wait.
 * A slot may be cancelled or displaced meanwhile; this is only a hint.
 * always_inline because GCC 12 at -O1/-O2 deletes calls to a static function
 * whose only effect is a prefetch. */
static inline __attribute__((always_inline)) void prefetch_slot(capsim_sim *sim, uint32_t ev)
{
	const char *p = (const char *)&sim->slots[ev];
	__builtin_prefetch(p);
	__builtin_prefetch(p + sizeof(slot) - 1);
	__builtin_prefetch(&sim->q.loc[ev], 1);
}

static inline __attribute__((always_inline)) void
prefetch_next_slot(capsim_sim *sim)
{
	const capsim_qent *next[PREFETCH_AHEAD + 1];
	if (!capsim_calq_peek(&sim->q))
		return;
	size_t n = capsim_calq_next_few(&sim->q, next, PREFETCH_AHEAD + 1);
	if (n > 0)
		prefetch_slot(sim, next[0]->ev);
	if (n > 1)
		prefetch_slot(sim, next[n - 1]->ev);
}

/* Take the least event off the queue, copy it into *ev, free its slot (so its
 * handler may schedule, and reuse the slot) and advance the clock. */
static inline void take_next(capsim_sim *sim, capsim_event *ev)
{
	capsim_qent e = capsim_calq_pop(&sim->q);
	/* time never goes backwards: schedule refuses the past, and the queue
	 * gives its least entry */
	CAPSIM_ASSERT(e.t >= sim->now && e.ev < sim->nslots);
	prefetch_next_slot(sim);
	const slot *s = &sim->slots[e.ev];
	ev->t = e.t;
	ev->prio = (uint8_t)(e.k2 >> SEQ_BITS);
	ev->kind = s->kind;
	ev->id = make_id(s->gen, e.ev);
	memcpy(ev->payload, s->payload, CAPSIM_EVENT_PAYLOAD);
	free_slot(sim, e.ev);
	sim->now = e.t;
	sim->delivered++;
}

/* A nested call (from a handler) delivers nothing and returns 0. capsim_sim_now
 * stays at the last delivered event's time, not at until, so that anything
 * between them can still be scheduled. */
uint64_t capsim_sim_run(capsim_sim *sim, capsim_time_ns until)
{
	if (sim->running)
		return 0;
	uint64_t start = sim->delivered;
	sim->running = 1;
	sim->stopping = 0;
	while (!sim->stopping) {
		const capsim_qent *top = capsim_calq_peek(&sim->q);
		if (!top || top->t > until)
			break;
		capsim_event ev;
		take_next(sim, &ev);
		const kind_entry *k = &sim->kinds[ev.kind];
		k->h(sim, &ev, k->ctx);
	}
	sim->running = 0;
	sim->stopping = 0;
	return sim->delivered - start;
}

/* Outside a run this does nothing: each run starts unstopped. */
void capsim_sim_stop(capsim_sim *sim)
{
	if (sim->running)
		sim->stopping = 1;
}

capsim_time_ns capsim_sim_now(const capsim_sim *sim)
{
	return sim->now;
}

size_t capsim_sim_pending(const capsim_sim *sim)
{
	return sim->q.n;
}

uint64_t capsim_sim_delivered(const capsim_sim *sim)
{
	return sim->delivered;
}

capsim_time_ns capsim_sim_next_time(const capsim_sim *sim)
{
	const capsim_qent *top = capsim_calq_least(&sim->q);
	return top ? top->t : CAPSIM_TIME_NEVER;
}

/* Round half away from zero. NaN, +inf and anything from +2^63 ns (about
 * 292 years) up saturate at CAPSIM_TIME_NEVER - 1; -inf and anything from
 * -2^63 ns down at -(CAPSIM_TIME_NEVER - 1), which schedule refuses as past. */
capsim_time_ns capsim_ns_from_s(double s)
{
	const double limit = 9223372036854775808.0; /* 2^63, exact in a double */
	if (isnan(s))
		return CAPSIM_TIME_NEVER - 1;
	double ns = round(s * 1e9);
	if (ns >= limit)
		return CAPSIM_TIME_NEVER - 1;
	if (ns <= -limit)
		return -(CAPSIM_TIME_NEVER - 1);
	/* |ns| <= 2^63 - 1024 here (the doubles below 2^63 are 1024 apart) */
	return (capsim_time_ns)ns;
}
