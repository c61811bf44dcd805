/* queue.h - the event queue contract of the engine (private to core), and
 * the 4-ary heap that implements it. Four operations over keys ordered by
 * (t, k2), where k2 packs the priority in its top 8 bits and the insertion
 * sequence below; each entry carries the index of its event, whose heap
 * position the heap keeps up to date through the pos array so that removal
 * is O(log n). The engine runs on the calendar queue of queue_cal.h, which
 * keeps the same contract (removal by event index); the heap stays as the
 * reference that tests/unit/test_core.c checks it against and that
 * tests/bench/bench_hold.c compares it with. */
#ifndef CAPSIM_QUEUE_H
#define CAPSIM_QUEUE_H

#include <stddef.h>
#include <stdint.h>

typedef struct capsim_qent {
	int64_t t;
	uint64_t k2;
	uint32_t ev; /* event index */
} capsim_qent;

typedef struct capsim_queue {
	capsim_qent *a;
	size_t n, cap;
	uint32_t *pos; /* pos[ev] = index in a; owned by the engine, sized by it */
} capsim_queue;

/* Insert e; returns 0 or -1 when out of memory. */
int capsim_queue_push(capsim_queue *q, capsim_qent e);
/* Remove and return the least entry; q must not be empty. */
capsim_qent capsim_queue_pop(capsim_queue *q);
/* Remove the entry at heap index i. */
void capsim_queue_remove(capsim_queue *q, size_t i);
/* The least entry, or NULL when empty. */
static inline const capsim_qent *capsim_queue_peek(const capsim_queue *q)
{
	return q->n ? &q->a[0] : NULL;
}

#endif
