/* queue_cal.h - a calendar queue (Brown, "Calendar queues: a fast O(1)
 * priority queue implementation for the simulation event set problem",
 * CACM 31(10), 1988) with the contract of queue.h: entries ordered by
 * (t, k2), each carrying its event index, removable by that index.
 *
 * Buckets cover one width of time each (a power of two nanoseconds, so that
 * the bucket is a shift, not a division), nb of them a "year"; an entry at
 * time t lives in bucket (t / width) mod nb. A bucket is an array sorted by
 * (t, k2), not a linked list: pops take its front and pushes mostly append
 * (a new entry's k2, the insertion sequence, is the largest among equal
 * times), so that both touch memory in order and a bucket crowded with one
 * tick's entries costs O(1) a push. A removal leaves a tombstone, skipped
 * when the front reaches it; loc[ev] finds an entry. When the count has
 * doubled or halved since the layout was chosen, the width is estimated
 * again from the entries' spacing (about 3 entries a bucket, Brown's rule)
 * and nb from their count and span.
 * Deterministic: the order never depends on bucket layout. The 4-ary heap
 * (queue_heap.c) is kept beside it: tests/bench/bench_hold.c runs both and
 * test_core checks that they pop the same entries. */
#ifndef CAPSIM_QUEUE_CAL_H
#define CAPSIM_QUEUE_CAL_H

#include <stddef.h>
#include <stdint.h>

#include "check.h"
#include "queue.h"

#define CAPSIM_CAL_DEAD UINT32_MAX /* a removed entry's ev (a tombstone) */

typedef struct capsim_calbucket {
	capsim_qent *a;      /* a[lo..hi) sorted; tombstones have ev CAL_DEAD */
	uint32_t lo, hi, cap; /* a[lo] is live whenever lo < hi */
	/* no entry of a[lo..hi) is later than (back_t, back_k2), t biased:
	 * a push later than it appends without reading the array, whose
	 * back is cold in a large queue */
	uint64_t back_t, back_k2;
} capsim_calbucket;

typedef struct capsim_calq {
	capsim_calbucket *b; /* nb buckets */
	size_t nb;
	unsigned shift;      /* width = 2^shift ns */
	uint64_t *loc;       /* by event: bucket << 32 | index */
	size_t loc_cap;
	size_t n;            /* live entries */
	size_t n_built;      /* n when the layout was last chosen */
	uint64_t base;       /* no live entry's biased time is earlier */
	int64_t min_b;       /* the least entry's bucket, -1: to be found */
	unsigned misses;     /* searches since the last layout that found no front
			      * within a year of slots: the width is wrong */
} capsim_calq;

void capsim_calq_init(capsim_calq *q);
void capsim_calq_free(capsim_calq *q);
/* Insert the entry (t, k2, ev) (its event must not be queued already,
 * ev < UINT32_MAX). The fields go in registers: a 24-byte entry passed by
 * value is written to the stack in halves and read back whole, which
 * store forwarding cannot serve. */
void capsim_calq_push_fields(capsim_calq *q, int64_t t, uint64_t k2, uint32_t ev);
static inline void capsim_calq_push(capsim_calq *q, capsim_qent e)
{
	capsim_calq_push_fields(q, e.t, e.k2, e.ev);
}
/* The least entry, or NULL when empty; valid until the next change. The
 * least entry's bucket is most often known already (min_b): that case is
 * answered inline, the search for it by capsim_calq_peek_slow. */
const capsim_qent *capsim_calq_peek_slow(capsim_calq *q);
static inline const capsim_qent *capsim_calq_peek(capsim_calq *q)
{
	if (!q->n || q->min_b < 0)
		return capsim_calq_peek_slow(q);
	const capsim_calbucket *bk = &q->b[q->min_b];
	uint64_t front = (uint64_t)bk->a[bk->lo].t ^ (UINT64_C(1) << 63); /* biased */
	/* a bucket's front is live, and no live entry is earlier than base */
	CAPSIM_ASSERT(bk->lo < bk->hi && bk->a[bk->lo].ev != CAPSIM_CAL_DEAD && front >= q->base);
	q->base = front;
	return &bk->a[bk->lo];
}
/* The same without caching what it finds (for a const queue). */
const capsim_qent *capsim_calq_least(const capsim_calq *q);
/* The entries most likely to be popped next, for prefetching what they point
 * to: up to `max` live entries from the front of the least entry's bucket
 * (the least first) into out; returns how many. Call after
 * capsim_calq_peek; a hint, not an order (a later bucket may hold the
 * second least). */
static inline size_t capsim_calq_next_few(const capsim_calq *q, const capsim_qent **out,
					   size_t max)
{
	if (!q->n || q->min_b < 0)
		return 0;
	const capsim_calbucket *bk = &q->b[q->min_b];
	size_t k = 0;
	for (uint32_t j = bk->lo; j < bk->hi && k < max; j++)
		if (bk->a[j].ev != CAPSIM_CAL_DEAD)
			out[k++] = &bk->a[j];
	return k;
}
/* Remove and return the least entry; q must not be empty. */
capsim_qent capsim_calq_pop(capsim_calq *q);
/* Remove event ev's entry (it must be queued). */
void capsim_calq_remove(capsim_calq *q, uint32_t ev);

#endif
