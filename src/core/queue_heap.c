/* queue_heap.c - the event queue of queue.h as a 4-ary min-heap in an array.
 *
 * Entry i has its children at 4i+1 .. 4i+4, contiguous (96 bytes, two or three
 * cache lines), and its parent at (i-1)/4; depth is log4(n), 10 levels for a
 * million events. Sifts move a hole rather than swapping, so each level costs
 * one 24-byte copy and one pos[] store. Keys compare as one 128-bit integer
 * (a GCC/Clang extension), the least of four children is picked by a
 * branch-free tournament (random keys make that choice a coin flip, which no
 * branch predictor learns), and sifting down prefetches the grandchildren so
 * that a large heap's cache misses overlap. Measurements and the choices
 * they settled: docs/performance.md.
 */
#include "queue.h"

#include "check.h"
#include "xalloc.h"

#define ARITY 4
#define FIRST_CAP 64

/* The (t, k2) order as one unsigned 128-bit key: t with its sign bit flipped
 * (so that signed order becomes unsigned order) above k2. Comparing two keys
 * is then one cmp/sbb pair that sets a flag, never a branch. */
__extension__ typedef unsigned __int128 key128;

static inline key128 key(const capsim_qent *e)
{
	return (key128)((uint64_t)e->t ^ (UINT64_C(1) << 63)) << 64 | e->k2;
}

/* 1 when a comes strictly before b in (t, k2) order. */
static inline int before(const capsim_qent *a, const capsim_qent *b)
{
	return key(a) < key(b);
}

/* x when pick is 0, y when it is 1, without a branch: the least of four
 * children is a coin flip on random keys, which a predictor cannot learn. */
static inline size_t choose(size_t x, size_t y, int pick)
{
	return x ^ ((x ^ y) & ((size_t)0 - (size_t)pick));
}

/* Put e at heap index i and record where its event now sits. */
static inline void place(capsim_queue *q, size_t i, capsim_qent e)
{
	q->a[i] = e;
	q->pos[e.ev] = (uint32_t)i;
}

/* Index of the least of the children c .. min(c + ARITY, n) - 1 (c < n): a
 * tournament of two independent pairs, then their winners. */
static inline size_t least_child(const capsim_qent *a, size_t c, size_t n)
{
	if (c + ARITY <= n) {
		size_t l = c + (size_t)before(&a[c + 1], &a[c]);
		size_t r = c + 2 + (size_t)before(&a[c + 3], &a[c + 2]);
		return choose(l, r, before(&a[r], &a[l]));
	}
	size_t m = c;
	for (size_t j = c + 1; j < n; j++)
		m = choose(m, j, before(&a[j], &a[m]));
	return m;
}

/* Start loading the 16 grandchildren of the node whose children begin at c
 * (they are contiguous: 384 bytes, 7 cache lines at most), so that the next
 * level's loads overlap this level's comparisons instead of waiting on them.
 * Addresses are formed as integers: the tail may lie past the array, which a
 * prefetch may touch but pointer arithmetic may not. always_inline because
 * GCC 12 at -O1/-O2 deletes calls to a static function whose only effect is a
 * prefetch (it deems them free of side effects). */
static inline __attribute__((always_inline)) void
prefetch_grandchildren(const capsim_qent *a, size_t c, size_t n)
{
	size_t g = ARITY * c + 1;
	if (g >= n)
		return;
	uintptr_t p = (uintptr_t)&a[g];
	__builtin_prefetch((const void *)p);
	__builtin_prefetch((const void *)(p + 64));
	__builtin_prefetch((const void *)(p + 128));
	__builtin_prefetch((const void *)(p + 192));
	__builtin_prefetch((const void *)(p + 256));
	__builtin_prefetch((const void *)(p + 320));
	__builtin_prefetch((const void *)(p + ARITY * ARITY * sizeof *a - 1));
}

/* The hole is at i; move it up past every parent that e precedes, then put e
 * in it. */
static void sift_up(capsim_queue *q, size_t i, capsim_qent e)
{
	const capsim_qent *a = q->a;
	while (i > 0) {
		size_t p = (i - 1) / ARITY;
		if (!before(&e, &a[p]))
			break;
		place(q, i, a[p]);
		i = p;
	}
	place(q, i, e);
	/* heap order at the hole's last place: its parent comes first */
	CAPSIM_ASSERT(i == 0 || !before(&e, &a[(i - 1) / ARITY]));
}

/* The hole is at i; move it down past every least child that precedes e,
 * then put e in it. */
static void sift_down(capsim_queue *q, size_t i, capsim_qent e)
{
	const capsim_qent *a = q->a;
	size_t n = q->n;
	for (;;) {
		size_t c = ARITY * i + 1;
		if (c >= n)
			break;
		prefetch_grandchildren(a, c, n);
		size_t m = least_child(a, c, n);
		if (!before(&a[m], &e))
			break;
		place(q, i, a[m]);
		i = m;
	}
	place(q, i, e);
	/* heap order at the hole's last place: no child comes first */
	CAPSIM_ASSERT(ARITY * i + 1 >= n || !before(&a[least_child(a, ARITY * i + 1, n)], &e));
}

int capsim_queue_push(capsim_queue *q, capsim_qent e)
{
	if (q->n == q->cap) {
		size_t cap = q->cap ? 2 * q->cap : FIRST_CAP;
		q->a = capsim_xrealloc(q->a, cap * sizeof *q->a); /* aborts on OOM */
		q->cap = cap;
	}
	sift_up(q, q->n++, e);
	return 0;
}

capsim_qent capsim_queue_pop(capsim_queue *q)
{
	CAPSIM_ASSERT(q->n > 0);
	capsim_qent top = q->a[0];
	capsim_qent last = q->a[--q->n];
	if (q->n)
		sift_down(q, 0, last);
	return top;
}

void capsim_queue_remove(capsim_queue *q, size_t i)
{
	CAPSIM_ASSERT(i < q->n);
	capsim_qent last = q->a[--q->n];
	if (i == q->n)
		return; /* the last entry itself: nothing moves */
	if (i > 0 && before(&last, &q->a[(i - 1) / ARITY]))
		sift_up(q, i, last);
	else
		sift_down(q, i, last);
}
