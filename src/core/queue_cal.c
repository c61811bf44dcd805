/* queue_cal.c - the calendar queue of queue_cal.h. */
#include "queue_cal.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "xalloc.h"

#define CAL_DEAD CAPSIM_CAL_DEAD
#define FIRST_BUCKETS 16
#define EMPTY_KEEP 8 /* entries an empty bucket keeps room for */
#define SAMPLE 512
#define PER_BUCKET 3.0 /* entries a bucket's width should hold, Brown's rule */

__extension__ typedef unsigned __int128 key128;

/* t with its sign bit flipped: signed order as unsigned order */
static inline uint64_t biased(int64_t t)
{
	return (uint64_t)t ^ (UINT64_C(1) << 63);
}

static inline key128 key(const capsim_qent *e)
{
	return (key128)biased(e->t) << 64 | e->k2;
}

/* no entry of bucket bk is later than this (capsim_calbucket) */
static inline key128 back_key(const capsim_calbucket *bk)
{
	return (key128)bk->back_t << 64 | bk->back_k2;
}

static inline int before(const capsim_qent *a, const capsim_qent *b)
{
	return key(a) < key(b);
}

static inline uint64_t slot_of(const capsim_calq *q, int64_t t)
{
	return biased(t) >> q->shift;
}

static inline size_t bucket_of_slot(const capsim_calq *q, uint64_t slot)
{
	return (size_t)(slot & (q->nb - 1));
}

static void alloc_buckets(capsim_calq *q, size_t nb)
{
	q->nb = nb;
	q->b = capsim_xcalloc(nb, sizeof *q->b);
	capsim_advise_huge(q->b, nb * sizeof *q->b);
}

void capsim_calq_init(capsim_calq *q)
{
	memset(q, 0, sizeof *q);
	alloc_buckets(q, FIRST_BUCKETS);
	q->min_b = -1;
}

static void free_buckets(capsim_calq *q)
{
	for (size_t i = 0; i < q->nb; i++)
		free(q->b[i].a);
	free(q->b);
	q->b = NULL;
}

void capsim_calq_free(capsim_calq *q)
{
	free_buckets(q);
	free(q->loc);
	memset(q, 0, sizeof *q);
}

static inline void place(capsim_calq *q, size_t bi, uint32_t i, capsim_qent e)
{
	q->b[bi].a[i] = e;
	q->loc[e.ev] = (uint64_t)bi << 32 | i;
}

/* Where e goes in bucket bk: searched from the back. */
static inline uint32_t place_in(const capsim_calbucket *bk, const capsim_qent *e)
{
	uint32_t p = bk->hi;
	while (p > bk->lo && before(e, &bk->a[p - 1]))
		p--;
	return p;
}

/* Room for one more entry at the back of bucket bi: drop the front's
 * dead space when it is a quarter or more, else double the array. */
static void make_room(capsim_calq *q, size_t bi)
{
	capsim_calbucket *bk = &q->b[bi];
	if (bk->lo >= bk->cap / 4 && bk->lo > 0) {
		uint32_t m = 0;
		for (uint32_t j = bk->lo; j < bk->hi; j++)
			if (bk->a[j].ev != CAL_DEAD)
				place(q, bi, m++, bk->a[j]);
		bk->lo = 0;
		bk->hi = m;
		if (m < bk->cap)
			return;
	}
	bk->cap = bk->cap ? 2 * bk->cap : 4;
	bk->a = capsim_xrealloc(bk->a, bk->cap * sizeof *bk->a);
}

/* Put e into its bucket, in order: from the back, where a new entry
 * usually goes; at the front's free space when it is the least. */
static void insert(capsim_calq *q, capsim_qent e)
{
	size_t bi = bucket_of_slot(q, slot_of(q, e.t));
	capsim_calbucket *bk = &q->b[bi];
	if (bk->lo == bk->hi)
		bk->lo = bk->hi = 0;
	/* mostly the latest of its bucket: then the array's back is not read */
	uint32_t p = bk->lo == bk->hi || key(&e) > back_key(bk) ? bk->hi : place_in(bk, &e);
	if (p == bk->hi) {
		bk->back_t = biased(e.t);
		bk->back_k2 = e.k2;
	}
	if (p == bk->lo && bk->lo > 0) {
		place(q, bi, --bk->lo, e);
		return;
	}
	if (bk->hi == bk->cap) {
		uint32_t lo0 = bk->lo;
		make_room(q, bi);
		/* compaction moved the entries down, tombstones dropped */
		if (bk->lo != lo0)
			p = place_in(bk, &e);
	}
	for (uint32_t j = bk->hi; j > p; j--) {
		bk->a[j] = bk->a[j - 1];
		if (bk->a[j].ev != CAL_DEAD)
			q->loc[bk->a[j].ev] = (uint64_t)bi << 32 | j;
	}
	bk->hi++;
	place(q, bi, p, e);
	/* the bucket stays sorted by (t, k2) around the new entry, and its
	 * back key bounds it */
	CAPSIM_ASSERT((p == bk->lo || !before(&e, &bk->a[p - 1])) &&
		      (p + 1 == bk->hi || !before(&bk->a[p + 1], &e)) &&
		      key(&bk->a[bk->hi - 1]) <= back_key(bk));
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* A stride sample of the live entries' biased times, sorted; returns its size. */
static size_t sample_times(const capsim_calq *q, uint64_t *ts)
{
	size_t k = 0, seen = 0, step = q->n / SAMPLE + 1;
	for (size_t bi = 0; bi < q->nb && k < SAMPLE; bi++) {
		const capsim_calbucket *bk = &q->b[bi];
		for (uint32_t j = bk->lo; j < bk->hi && k < SAMPLE; j++)
			if (bk->a[j].ev != CAL_DEAD && seen++ % step == 0)
				ts[k++] = biased(bk->a[j].t);
	}
	qsort(ts, k, sizeof ts[0], cmp_u64);
	return k;
}

static size_t pow2_at_least(double x)
{
	size_t p = 1;
	while ((double)p < x && p < ((size_t)1 << 40))
		p *= 2;
	return p;
}

/* A width and a bucket count for the entries queued now, every entry moved
 * (in its old bucket's order, so that each new bucket mostly appends).
 * The width: the sample's median nonzero gap scaled to one entry's share,
 * times PER_BUCKET, rounded down to a power of two (at least 1 ns). The
 * year: long enough for the sample's span, never more buckets than
 * entries: many entries a tick (the width cannot go below 1 ns) must not
 * spread over a year of buckets that each keep their arrays. */
static void rebuild(capsim_calq *q)
{
	uint64_t ts[SAMPLE];
	size_t k = sample_times(q, ts);
	unsigned shift = q->shift;
	size_t nb = pow2_at_least((double)q->n / 2.0);
	if (k >= 2) {
		uint64_t gaps[SAMPLE];
		size_t g = 0;
		for (size_t j = 1; j < k; j++)
			if (ts[j] > ts[j - 1])
				gaps[g++] = ts[j] - ts[j - 1];
		shift = 0;
		if (g) {
			qsort(gaps, g, sizeof gaps[0], cmp_u64);
			double width = PER_BUCKET * (double)gaps[g / 2] * (double)k /
				       (double)q->n;
			while (shift < 62 && (double)(UINT64_C(2) << shift) <= width)
				shift++;
		}
		double span_slots = (double)((ts[k - 1] - ts[0]) >> shift) + 1.0;
		size_t by_span = pow2_at_least(2.0 * span_slots);
		if (by_span < nb)
			nb = by_span;
	}
	if (nb < FIRST_BUCKETS)
		nb = FIRST_BUCKETS;
	capsim_calbucket *old = q->b;
	size_t old_nb = q->nb;
	alloc_buckets(q, nb);
	q->shift = shift;
	size_t moved = 0;
	for (size_t bi = 0; bi < old_nb; bi++) {
		capsim_calbucket *bk = &old[bi];
		for (uint32_t j = bk->lo; j < bk->hi; j++)
			if (bk->a[j].ev != CAL_DEAD) {
				insert(q, bk->a[j]);
				moved++;
			}
		free(bk->a);
	}
	/* every live entry moved, none lost to the tombstones */
	CAPSIM_ASSERT(moved == q->n);
	free(old);
	q->min_b = -1;
	q->n_built = q->n;
}

void capsim_calq_push_fields(capsim_calq *q, int64_t t, uint64_t k2, uint32_t ev)
{
	capsim_qent e = { .t = t, .k2 = k2, .ev = ev };
	if (e.ev >= q->loc_cap) {
		size_t cap = q->loc_cap ? q->loc_cap : 64;
		while (cap <= e.ev)
			cap *= 2;
		q->loc = capsim_xrealloc_huge(q->loc, q->loc_cap * sizeof *q->loc,
					      cap * sizeof *q->loc);
		q->loc_cap = cap;
	}
	uint64_t be = biased(e.t);
	if (q->n == 0 || be < q->base)
		q->base = be;
	int newmin = q->min_b >= 0 &&
		     before(&e, &q->b[q->min_b].a[q->b[q->min_b].lo]);
	insert(q, e);
	q->n++;
	if (newmin)
		q->min_b = (int64_t)(q->loc[e.ev] >> 32);
	if (q->n > 2 * q->n_built && q->n > FIRST_BUCKETS)
		rebuild(q);
}

/* The bucket of the least entry: from base's slot (no entry is earlier),
 * the first bucket whose front lies in the slot being visited; after a
 * year of slots without one, the least of the fronts (Brown's fallback). */
static int64_t least_front(const capsim_calq *q)
{
	int64_t best = -1;
	for (size_t bi = 0; bi < q->nb; bi++) {
		const capsim_calbucket *bk = &q->b[bi];
		if (bk->lo < bk->hi &&
		    (best < 0 || before(&bk->a[bk->lo], &q->b[best].a[q->b[best].lo])))
			best = (int64_t)bi;
	}
	return best;
}

/* the bucket whose front lies in the slot being visited, from base's slot
 * on for a year; -1 when none does */
static int64_t year_scan(const capsim_calq *q)
{
	uint64_t slot = q->base >> q->shift;
	for (size_t j = 0; j < q->nb; j++, slot++) {
		size_t bi = bucket_of_slot(q, slot);
		const capsim_calbucket *bk = &q->b[bi];
		if (bk->lo < bk->hi && slot_of(q, bk->a[bk->lo].t) == slot)
			return (int64_t)bi;
	}
	return -1;
}

static int64_t find_min(const capsim_calq *q)
{
	int64_t bi = year_scan(q);
	return bi >= 0 ? bi : least_front(q);
}

/* find_min, and a new layout after a few searches that fell back to the
 * fronts: a queue that never grew past its first buckets keeps the first
 * width (1 ns) however far apart its events are, and each search then
 * visits every bucket twice. Only the layout changes: the order is the
 * entries' own. */
static int64_t find_min_adapting(capsim_calq *q)
{
	int64_t bi = year_scan(q);
	if (bi >= 0)
		return bi;
	if (++q->misses > 8 && q->n >= 2) {
		q->misses = 0;
		rebuild(q);
		bi = year_scan(q);
		if (bi >= 0)
			return bi;
	}
	return least_front(q);
}

const capsim_qent *capsim_calq_peek_slow(capsim_calq *q)
{
	if (!q->n)
		return NULL;
	if (q->min_b < 0)
		q->min_b = find_min_adapting(q);
	const capsim_calbucket *bk = &q->b[q->min_b];
	/* a bucket's front is live, and no live entry is earlier than base */
	CAPSIM_ASSERT(bk->lo < bk->hi && bk->a[bk->lo].ev != CAL_DEAD &&
		      biased(bk->a[bk->lo].t) >= q->base);
	q->base = biased(bk->a[bk->lo].t);
	return &bk->a[bk->lo];
}

const capsim_qent *capsim_calq_least(const capsim_calq *q)
{
	if (!q->n)
		return NULL;
	const capsim_calbucket *bk = &q->b[q->min_b >= 0 ? q->min_b : find_min(q)];
	return &bk->a[bk->lo];
}

/* Past the front's dead entries. A bucket left empty gives its array back:
 * a year of buckets keeping the arrays of their busiest moment would spread
 * the queue over many times its size, and the arrays freed now are those
 * malloc hands out next, still in cache. */
static inline void skip_dead(capsim_calbucket *bk)
{
	while (bk->lo < bk->hi && bk->a[bk->lo].ev == CAL_DEAD)
		bk->lo++;
	if (bk->lo == bk->hi && bk->cap > EMPTY_KEEP) {
		free(bk->a);
		bk->a = NULL;
		bk->lo = bk->hi = bk->cap = 0;
	}
}

static void after_removal(capsim_calq *q)
{
	q->n--;
	if (2 * q->n < q->n_built)
		rebuild(q);
}

capsim_qent capsim_calq_pop(capsim_calq *q)
{
	capsim_qent e = *capsim_calq_peek(q);
	capsim_calbucket *bk = &q->b[q->min_b];
	bk->lo++;
	skip_dead(bk);
	/* the next least is most often the next entry of the same bucket */
	if (!(bk->lo < bk->hi && slot_of(q, bk->a[bk->lo].t) == slot_of(q, e.t)))
		q->min_b = -1;
	after_removal(q);
	return e;
}

void capsim_calq_remove(capsim_calq *q, uint32_t ev)
{
	uint64_t l = q->loc[ev];
	size_t bi = (size_t)(l >> 32);
	capsim_calbucket *bk = &q->b[bi];
	/* loc finds the event's own entry, live */
	CAPSIM_ASSERT(bi < q->nb && (uint32_t)l >= bk->lo && (uint32_t)l < bk->hi &&
		      bk->a[(uint32_t)l].ev == ev);
	bk->a[(uint32_t)l].ev = CAL_DEAD;
	skip_dead(bk);
	if (q->min_b == (int64_t)bi)
		q->min_b = -1;
	after_removal(q);
}
