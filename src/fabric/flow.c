/* flow.c - max-min fair sharing of links by flows, re-solved per component;
 * see flow.h. */
#include "flow.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "xalloc.h"

/* A link exists in two forms. Every link belongs to a range of identical
 * links (one add_links call: same capacity, multiplicity and incast
 * efficiency), which is all that is stored until a flow first crosses it;
 * then it gets a record of its own (link_t), numbered densely in the order
 * links are first used. Flows and the solver work on the dense numbers; the
 * interface speaks link ids. A cluster of a million links that one
 * collective crosses a few hundred of costs a few hundred records. */
typedef struct {
	int base, count;
	double cap_bps, mult, incast;
} lrange;

typedef struct {
	int ext;      /* the link's id */
	uint32_t mark; /* solver scratch: the component search's epoch */
	int *flows;   /* active flows crossing this link */
	size_t n, cap;
	double cap_bps, mult;
	double incast; /* capacity share under many-to-one congestion */
	double eff_cap; /* capacity this solve */
	double load;  /* bytes/s on one physical link */
	double bytes; /* carried, one physical link, until time `since` (its
		       * load has not changed since: link_bytes) */
	double since;
	/* solver scratch */
	double frozen, wsum;
	double level;  /* saturation level while in the heap */
	size_t hpos;   /* index in the solver's heap, NOT_IN_HEAP when absent */
} link_t;

#define NOT_IN_HEAP ((size_t)-1)

typedef struct {
	int *links;   /* dense link numbers */
	size_t *pos;  /* pos[i]: index of this flow in links[i]'s flow list */
	size_t n_links;
	double remaining, mult, cap, rate;
	double lim;   /* this solve: the least of cap and its links of its own */
	int origin;
	int active;
	uint32_t mark;
	int frozen;
} flow_t;

#define DENSE_BITS 10
#define DENSE_PAGE ((size_t)1 << DENSE_BITS) /* ids a page of the link table */

struct capsim_flownet {
	lrange *r;            /* by base, ascending */
	size_t nr, capr;
	int n_ext;            /* link ids handed out */
	/* link id -> index in l + 1 of a link in use, 0: none: in pages of
	 * DENSE_PAGE ids, each made when a flow first crosses one of its links */
	int32_t **dense;
	size_t dense_pages;
	link_t *l;            /* links in use */
	size_t nl, capl;
	flow_t *f;
	size_t nf, capf;
	int *free_ids;
	size_t nfree, capfree;
	size_t active;
	uint32_t epoch;
	/* component scratch */
	int *cl, *cf;
	size_t ncl, ncf, capcl, capcf;
	uint64_t solves, visits;
	double now;   /* seconds advanced since the network was made */
	int hold;
	int *heap;    /* links by saturation level, an indexed binary min-heap */
	size_t nh, caph;
	int *seed;
	size_t nseed, capseed;
};

capsim_flownet *capsim_flownet_create(void)
{
	return capsim_xcalloc(1, sizeof(capsim_flownet));
}

void capsim_flownet_destroy(capsim_flownet *net)
{
	if (!net)
		return;
	for (size_t i = 0; i < net->nl; i++)
		free(net->l[i].flows);
	for (size_t i = 0; i < net->nf; i++) {
		free(net->f[i].links);
		free(net->f[i].pos);
	}
	free(net->l);
	free(net->f);
	free(net->free_ids);
	free(net->cl);
	free(net->cf);
	free(net->seed);
	free(net->heap);
	free(net->r);
	for (size_t i = 0; i < net->dense_pages; i++)
		free(net->dense[i]);
	free(net->dense);
	free(net);
}

int capsim_flownet_add_links(capsim_flownet *net, int count, double cap_bytes_per_s,
			     double mult)
{
	int base = net->n_ext;
	if (count < 1)
		return base;
	if (net->nr == net->capr) {
		net->capr = net->capr ? 2 * net->capr : 16;
		net->r = capsim_xrealloc(net->r, net->capr * sizeof *net->r);
	}
	lrange *g = &net->r[net->nr++];
	g->base = base;
	g->count = count;
	g->cap_bps = cap_bytes_per_s;
	g->mult = mult >= 1.0 ? mult : 1.0;
	g->incast = 1.0;
	net->n_ext += count;
	return base;
}

int capsim_flownet_add_link(capsim_flownet *net, double cap_bytes_per_s,
			    double mult)
{
	return capsim_flownet_add_links(net, 1, cap_bytes_per_s, mult);
}

size_t capsim_flownet_n_links(const capsim_flownet *net)
{
	return (size_t)net->n_ext;
}

size_t capsim_flownet_links_in_use(const capsim_flownet *net)
{
	return net->nl;
}

/* the range that holds link id ext (a valid id) */
static const lrange *range_of(const capsim_flownet *net, int ext)
{
	if (net->nr == (size_t)net->n_ext)
		return &net->r[ext]; /* links added one by one (a folded network) */
	if (net->nr <= 16) { /* a fabric's kinds: counted without branches */
		size_t k = 0;
		for (size_t i = 1; i < net->nr; i++)
			k += net->r[i].base <= ext;
		return &net->r[k];
	}
	size_t lo = 0, hi = net->nr;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (net->r[mid].base <= ext)
			lo = mid;
		else
			hi = mid;
	}
	return &net->r[lo];
}

/* the dense number of link ext, or -1 while no flow has crossed it */
static int dense_get(const capsim_flownet *net, int ext)
{
	size_t p = (size_t)ext >> DENSE_BITS;
	if (ext < 0 || p >= net->dense_pages || !net->dense[p])
		return -1;
	return net->dense[p][ext & (DENSE_PAGE - 1)] - 1;
}

/* the slot of link ext in the table, its page made if new */
static int32_t *dense_slot(capsim_flownet *net, int ext)
{
	size_t p = (size_t)ext >> DENSE_BITS;
	if (p >= net->dense_pages) {
		size_t n = ((size_t)net->n_ext >> DENSE_BITS) + 1;
		if (n <= p)
			n = p + 1;
		net->dense = capsim_xrealloc(net->dense, n * sizeof *net->dense);
		memset(net->dense + net->dense_pages, 0, (n - net->dense_pages) * sizeof *net->dense);
		net->dense_pages = n;
	}
	if (!net->dense[p])
		net->dense[p] = capsim_xcalloc(DENSE_PAGE, sizeof **net->dense);
	return &net->dense[p][ext & (DENSE_PAGE - 1)];
}

/* the dense number of link ext, its record made from its range if new */
static int dense_use(capsim_flownet *net, int ext)
{
	CAPSIM_ASSERT(ext >= 0 && ext < net->n_ext);
	int32_t *slot = dense_slot(net, ext);
	if (*slot)
		return *slot - 1;
	*slot = (int32_t)net->nl + 1;
	if (net->nl == net->capl) {
		net->capl = net->capl ? 2 * net->capl : 64;
		net->l = capsim_xrealloc(net->l, net->capl * sizeof *net->l);
	}
	const lrange *g = range_of(net, ext);
	link_t *k = &net->l[net->nl];
	memset(k, 0, sizeof *k);
	k->ext = ext;
	k->cap_bps = g->cap_bps;
	k->incast = g->incast;
	k->mult = g->mult;
	k->hpos = NOT_IN_HEAP;
	return (int)net->nl++;
}

int capsim_flownet_same_links(const capsim_flownet *a, const capsim_flownet *b)
{
	if (a->active || b->active || a->n_ext != b->n_ext || a->nr != b->nr)
		return 0;
	for (size_t i = 0; i < a->nr; i++) {
		const lrange *x = &a->r[i], *y = &b->r[i];
		if (x->base != y->base || x->count != y->count || x->cap_bps != y->cap_bps ||
		    x->mult != y->mult || x->incast != y->incast)
			return 0;
	}
	return 1;
}

size_t capsim_flownet_n_ranges(const capsim_flownet *net)
{
	return net->nr;
}

void capsim_flownet_range(const capsim_flownet *net, size_t i, int *base, int *count,
			  double *cap_bytes_per_s)
{
	CAPSIM_ASSERT(i < net->nr);
	*base = net->r[i].base;
	*count = net->r[i].count;
	*cap_bytes_per_s = net->r[i].cap_bps;
}

double capsim_flownet_link_cap(const capsim_flownet *net, int link)
{
	return range_of(net, link)->cap_bps;
}

double capsim_flownet_max_mult(const capsim_flownet *net)
{
	double m = 1.0;
	for (size_t i = 0; i < net->nr; i++)
		if (net->r[i].mult > m)
			m = net->r[i].mult;
	return m;
}

double capsim_flownet_link_mult(const capsim_flownet *net, int link)
{
	return range_of(net, link)->mult;
}

double capsim_flownet_link_incast(const capsim_flownet *net, int link)
{
	int i = dense_get(net, link);
	return i >= 0 ? net->l[i].incast : range_of(net, link)->incast;
}

static void link_push(link_t *k, int flow, size_t *pos)
{
	if (k->n == k->cap) {
		k->cap = k->cap ? 2 * k->cap : 4;
		k->flows = capsim_xrealloc(k->flows, k->cap * sizeof *k->flows);
	}
	*pos = k->n;
	k->flows[k->n++] = flow;
}

/* remove flow from link li's list at position p; fix the moved flow's pos */
static void link_remove(capsim_flownet *net, int li, size_t p)
{
	link_t *k = &net->l[li];
	int last = k->flows[--k->n];
	if (p == k->n)
		return;
	k->flows[p] = last;
	flow_t *m = &net->f[last];
	size_t i = 0;
	for (; i < m->n_links; i++)
		if (m->links[i] == li && m->pos[i] == k->n) {
			m->pos[i] = p;
			break;
		}
	/* the moved flow knew where it stood on li */
	CAPSIM_ASSERT(i < m->n_links);
}

static void push_int(int **v, size_t *n, size_t *cap, int x)
{
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		*v = capsim_xrealloc(*v, *cap * sizeof **v);
	}
	(*v)[(*n)++] = x;
}

/* Collect the component reachable from the seed links into net->cl, net->cf
 * (breadth first over link -> flows -> links). */
static void collect(capsim_flownet *net, const int *seed, size_t n_seed)
{
	uint32_t e = ++net->epoch;
	net->ncl = net->ncf = 0;
	for (size_t i = 0; i < n_seed; i++) {
		link_t *k = &net->l[seed[i]];
		if (k->mark != e) {
			k->mark = e;
			push_int(&net->cl, &net->ncl, &net->capcl, seed[i]);
		}
	}
	for (size_t qi = 0; qi < net->ncl; qi++) {
		link_t *k = &net->l[net->cl[qi]];
		for (size_t j = 0; j < k->n; j++) {
			int fi = k->flows[j];
			flow_t *fl = &net->f[fi];
			/* a link lists only active flows */
			CAPSIM_ASSERT(fl->active);
			if (fl->mark == e)
				continue;
			fl->mark = e;
			push_int(&net->cf, &net->ncf, &net->capcf, fi);
			for (size_t m = 0; m < fl->n_links; m++) {
				link_t *k2 = &net->l[fl->links[m]];
				if (k2->mark != e) {
					k2->mark = e;
					push_int(&net->cl, &net->ncl, &net->capcl,
						 fl->links[m]);
				}
			}
		}
	}
}

/* an indexed min-heap of links keyed by (level, link id): each link is in
 * it at most once and knows its place, so a level that rises as flows
 * freeze is updated in place; the heap never holds more than the
 * component's links */
static int hless(const capsim_flownet *net, int a, int b)
{
	const link_t *x = &net->l[a], *y = &net->l[b];
	return x->level < y->level || (x->level == y->level && x->ext < y->ext);
}

static void hplace(capsim_flownet *net, size_t i, int link)
{
	net->heap[i] = link;
	net->l[link].hpos = i;
}

static void hsift_up(capsim_flownet *net, size_t i)
{
	int link = net->heap[i];
	while (i) {
		size_t p = (i - 1) / 2;
		if (!hless(net, link, net->heap[p]))
			break;
		hplace(net, i, net->heap[p]);
		i = p;
	}
	hplace(net, i, link);
}

static void hsift_down(capsim_flownet *net, size_t i)
{
	int link = net->heap[i];
	size_t n = net->nh;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && hless(net, net->heap[c + 1], net->heap[c]))
			c++;
		if (!hless(net, net->heap[c], link))
			break;
		hplace(net, i, net->heap[c]);
		i = c;
	}
	hplace(net, i, link);
}

/* insert link at level, or move it there if it is in the heap already */
static void hset(capsim_flownet *net, int link, double level)
{
	link_t *k = &net->l[link];
	if (k->hpos == NOT_IN_HEAP) {
		if (net->nh == net->caph) {
			net->caph = net->caph ? 2 * net->caph : 256;
			net->heap = capsim_xrealloc(net->heap, net->caph * sizeof *net->heap);
		}
		k->level = level;
		net->heap[net->nh] = link;
		k->hpos = net->nh++;
		hsift_up(net, k->hpos);
		return;
	}
	double old = k->level;
	k->level = level;
	if (level < old)
		hsift_up(net, k->hpos);
	else
		hsift_down(net, k->hpos);
}

static void hremove(capsim_flownet *net, int link)
{
	size_t i = net->l[link].hpos;
	if (i == NOT_IN_HEAP)
		return;
	net->l[link].hpos = NOT_IN_HEAP;
	int last = net->heap[--net->nh];
	if (i == net->nh)
		return;
	hplace(net, i, last);
	hsift_up(net, i);
	hsift_down(net, net->l[last].hpos);
}

static double link_level(const link_t *k)
{
	return (k->eff_cap - k->frozen) / k->wsum;
}

/* capacity of a link for this solve: reduced while flows of two or more
 * origins (or a folded class of several unknown origins) share it */
static double effective_cap(const capsim_flownet *net, const link_t *k)
{
	if (k->incast >= 1.0 || k->n < 1)
		return k->cap_bps;
	int first = -2;
	for (size_t j = 0; j < k->n; j++) {
		const flow_t *fl = &net->f[k->flows[j]];
		int o = fl->origin;
		if (o < 0 && fl->mult / k->mult > 1.0 + 1e-9)
			return k->cap_bps * k->incast;
		if (first == -2)
			first = o;
		else if (o != first || o < 0)
			return k->cap_bps * k->incast;
	}
	return k->cap_bps;
}

static int cmp_cap(const void *pa, const void *pb)
{
	const flow_t *a = *(flow_t *const *)pa, *b = *(flow_t *const *)pb;
	if (a->lim != b->lim)
		return a->lim < b->lim ? -1 : 1;
	return a < b ? -1 : (a > b);
}

/* freeze one flow at rate x: its links carry it, its weight leaves them
 * (a link of its own was never in the heap: fill) */
static void freeze(capsim_flownet *net, flow_t *fl, double x)
{
	fl->frozen = 1;
	fl->rate = x;
	for (size_t m = 0; m < fl->n_links; m++) {
		link_t *k = &net->l[fl->links[m]];
		double w = fl->mult / k->mult;
		k->frozen += w * x;
		k->wsum -= w;
		if (k->n == 1) {
			k->wsum = 0.0;
		} else if (k->wsum > 1e-12) {
			hset(net, fl->links[m], link_level(k));
		} else {
			k->wsum = 0.0;
			hremove(net, fl->links[m]);
		}
	}
}

/* What a solve promises over the component it filled: the heap left
 * empty, every flow frozen at a rate that is not negative (or NaN), and no
 * link carrying more than its capacity for the solve (to rounding). */
static void check_solved(const capsim_flownet *net)
{
	CAPSIM_ASSERT(net->nh == 0);
	for (size_t i = 0; i < net->ncf; i++) {
		const flow_t *fl = &net->f[net->cf[i]];
		CAPSIM_ASSERT(fl->frozen && fl->rate >= 0.0);
		CAPSIM_ASSERT((fl->cap <= 0.0 || fl->rate <= fl->cap) && fl->rate <= fl->lim);
	}
	for (size_t i = 0; i < net->ncl; i++) {
		const link_t *k = &net->l[net->cl[i]];
		CAPSIM_ASSERT(k->load >= 0.0 && k->load <= k->eff_cap * (1 + 1e-6) + 1e-6);
	}
}

/* Progressive filling over the collected component: every unfrozen flow
 * rises at the same rate until a link saturates or the flow meets its cap;
 * the flows on that link (or at their cap) freeze at that level. Links wait
 * in a heap by the level at which they saturate, flows with caps in a list
 * by cap: O((F x path + L) log L) for F flows and L links. A link that
 * carries one flow saturates exactly when that flow reaches its capacity
 * share, so it is that flow's cap instead (its `lim`), and stays out of the
 * heap: a NIC's or a PCIe link's under a ring, PAT or a tree mostly. */
static void fill(capsim_flownet *net)
{
	net->solves++;
	net->visits += net->ncf;
	while (net->nh) /* empty after every solve; kept safe all the same */
		net->l[net->heap[--net->nh]].hpos = NOT_IN_HEAP;
	for (size_t i = 0; i < net->ncl; i++) {
		link_t *k = &net->l[net->cl[i]];
		k->frozen = 0.0;
		k->wsum = 0.0;
		k->eff_cap = effective_cap(net, k);
	}
	size_t ncap = 0;
	for (size_t i = 0; i < net->ncf; i++) {
		flow_t *fl = &net->f[net->cf[i]];
		fl->frozen = 0;
		fl->rate = 0.0;
		for (size_t m = 0; m < fl->n_links; m++) {
			link_t *k = &net->l[fl->links[m]];
			k->wsum += fl->mult / k->mult;
		}
		if (fl->n_links == 0 && fl->cap <= 0.0) {
			fl->rate = INFINITY; /* nothing limits it */
			fl->frozen = 1;
		}
		fl->lim = fl->cap > 0.0 ? fl->cap : INFINITY;
	}
	for (size_t i = 0; i < net->ncl; i++) {
		link_t *k = &net->l[net->cl[i]];
		if (k->n != 1)
			continue;
		/* the level at which it would saturate (link_level) */
		flow_t *fl = &net->f[k->flows[0]];
		double level = k->eff_cap / k->wsum;
		if (level < fl->lim)
			fl->lim = level;
	}
	for (size_t i = 0; i < net->ncf; i++)
		ncap += net->f[net->cf[i]].lim < INFINITY;
	flow_t **capped = capsim_xmalloc((ncap ? ncap : 1) * sizeof *capped);
	ncap = 0;
	for (size_t i = 0; i < net->ncf; i++) {
		flow_t *fl = &net->f[net->cf[i]];
		if (fl->lim < INFINITY)
			capped[ncap++] = fl;
	}
	qsort(capped, ncap, sizeof *capped, cmp_cap);
	for (size_t i = 0; i < net->ncl; i++) {
		link_t *k = &net->l[net->cl[i]];
		if (k->n != 1 && k->wsum > 1e-12)
			hset(net, net->cl[i], link_level(k));
	}
	size_t ci = 0;
	for (;;) {
		while (ci < ncap && capped[ci]->frozen)
			ci++;
		/* the lowest link: every level in the heap is current */
		int top = net->nh ? net->heap[0] : -1;
		double top_level = top >= 0 ? net->l[top].level : INFINITY;
		double cap_level = ci < ncap ? capped[ci]->lim : INFINITY;
		if (top < 0 && ci >= ncap)
			break;
		if (cap_level <= top_level) {
			freeze(net, capped[ci], cap_level);
			continue;
		}
		hremove(net, top);
		link_t *k = &net->l[top];
		double x = top_level < 0.0 ? 0.0 : top_level;
		for (size_t j = 0; j < k->n; j++) {
			flow_t *fl = &net->f[k->flows[j]];
			if (!fl->frozen)
				freeze(net, fl, x);
		}
	}
	free(capped);
	for (size_t i = 0; i < net->ncl; i++) {
		link_t *k = &net->l[net->cl[i]];
		if (k->load != k->frozen) { /* its bytes so far at the old load */
			k->bytes += k->load * (net->now - k->since);
			k->since = net->now;
		}
		k->load = k->frozen;
	}
	check_solved(net);
}

static int new_flow_id(capsim_flownet *net)
{
	if (net->nfree)
		return net->free_ids[--net->nfree];
	if (net->nf == net->capf) {
		net->capf = net->capf ? 2 * net->capf : 64;
		net->f = capsim_xrealloc(net->f, net->capf * sizeof *net->f);
	}
	memset(&net->f[net->nf], 0, sizeof net->f[0]);
	return (int)net->nf++;
}

int capsim_flownet_start(capsim_flownet *net, const int *links, size_t n_links,
			 double bytes, double mult, double cap_bytes_per_s)
{
	return capsim_flownet_start_from(net, links, n_links, bytes, mult,
					 cap_bytes_per_s, -1);
}

void capsim_flownet_set_incast_links(capsim_flownet *net, int base, int count, double eff)
{
	eff = eff > 0.0 && eff <= 1.0 ? eff : 1.0;
	long end = (long)base + count;
	for (size_t i = 0; i < net->nr; i++) {
		lrange *g = &net->r[i];
		long gend = (long)g->base + g->count;
		if (g->base >= end || gend <= base)
			continue;
		if (g->base >= base && gend <= end) {
			g->incast = eff; /* the whole range */
			continue;
		}
		/* part of a range: those links get records of their own */
		long a = g->base > base ? g->base : base, b = gend < end ? gend : end;
		for (long x = a; x < b; x++)
			dense_use(net, (int)x);
	}
	for (size_t i = 0; i < net->nl; i++)
		if (net->l[i].ext >= base && net->l[i].ext < end)
			net->l[i].incast = eff;
}

int capsim_flownet_start_from(capsim_flownet *net, const int *links,
			      size_t n_links, double bytes, double mult,
			      double cap_bytes_per_s, int origin)
{
	int id = new_flow_id(net);
	flow_t *fl = &net->f[id];
	fl->links = capsim_xrealloc(fl->links, (n_links ? n_links : 1) * sizeof *fl->links);
	fl->pos = capsim_xrealloc(fl->pos, (n_links ? n_links : 1) * sizeof *fl->pos);
	fl->n_links = n_links;
	fl->remaining = bytes > 0.0 ? bytes : 0.0;
	fl->mult = mult >= 1.0 ? mult : 1.0;
	fl->cap = cap_bytes_per_s > 0.0 ? cap_bytes_per_s : 0.0;
	fl->rate = 0.0;
	fl->origin = origin;
	fl->active = 1;
	fl->mark = 0;
	for (size_t i = 0; i < n_links; i++) {
		int li = dense_use(net, links[i]);
		fl = &net->f[id];
		fl->links[i] = li;
		link_push(&net->l[li], id, &fl->pos[i]);
	}
	net->active++;
	if (net->hold) {
		for (size_t i = 0; i < n_links; i++)
			push_int(&net->seed, &net->nseed, &net->capseed, fl->links[i]);
		if (!n_links) {
			fl->rate = fl->cap > 0.0 ? fl->cap : INFINITY;
		}
		return id;
	}
	if (n_links) {
		collect(net, fl->links, n_links);
	} else {
		net->ncl = 0;
		net->ncf = 0;
		push_int(&net->cf, &net->ncf, &net->capcf, id);
	}
	fill(net);
	return id;
}

int capsim_flownet_stop(capsim_flownet *net, int id)
{
	if (id < 0 || (size_t)id >= net->nf || !net->f[id].active)
		return -1;
	flow_t *fl = &net->f[id];
	for (size_t i = 0; i < fl->n_links; i++) {
		/* the flow stands where it says on each of its links */
		CAPSIM_ASSERT(net->l[fl->links[i]].flows[fl->pos[i]] == id);
		link_remove(net, fl->links[i], fl->pos[i]);
	}
	fl->active = 0;
	fl->rate = 0.0;
	net->active--;
	push_int(&net->free_ids, &net->nfree, &net->capfree, id);
	if (net->hold) {
		for (size_t i = 0; i < fl->n_links; i++)
			push_int(&net->seed, &net->nseed, &net->capseed, fl->links[i]);
		return 0;
	}
	if (fl->n_links) {
		collect(net, fl->links, fl->n_links);
		fill(net);
	}
	return 0;
}

void capsim_flownet_hold(capsim_flownet *net, int on)
{
	if (on) {
		net->hold = 1;
		return;
	}
	net->hold = 0;
	if (net->nseed) {
		collect(net, net->seed, net->nseed);
		fill(net);
	}
	net->nseed = 0;
}

size_t capsim_flownet_link_flows(const capsim_flownet *net, int link)
{
	if (!net->active)
		return 0;
	int i = dense_get(net, link);
	return i < 0 ? 0 : net->l[i].n;
}

void capsim_flownet_advance(capsim_flownet *net, double dt)
{
	if (dt <= 0.0)
		return;
	for (size_t i = 0; i < net->nf; i++) {
		flow_t *fl = &net->f[i];
		if (!fl->active)
			continue;
		double moved = fl->rate * dt;
		fl->remaining = moved >= fl->remaining ? 0.0 : fl->remaining - moved;
	}
	/* a link's bytes are brought up to date when its load changes (fill)
	 * or they are read: not every link at every step */
	net->now += dt;
}

int capsim_flownet_next_completion(const capsim_flownet *net, double *dt)
{
	int best = -1;
	double bt = INFINITY;
	for (size_t i = 0; i < net->nf; i++) {
		const flow_t *fl = &net->f[i];
		if (!fl->active)
			continue;
		double t = fl->remaining <= 0.0 ? 0.0 :
			   fl->rate > 0.0 ? fl->remaining / fl->rate : INFINITY;
		if (t < bt) {
			bt = t;
			best = (int)i;
		}
	}
	if (best >= 0)
		*dt = bt;
	return best;
}

double capsim_flownet_rate(const capsim_flownet *net, int flow)
{
	return net->f[flow].rate;
}

double capsim_flownet_remaining(const capsim_flownet *net, int flow)
{
	return net->f[flow].remaining;
}

size_t capsim_flownet_active(const capsim_flownet *net)
{
	return net->active;
}

double capsim_flownet_link_load(const capsim_flownet *net, int link)
{
	int i = dense_get(net, link);
	return i < 0 ? 0.0 : net->l[i].load;
}

double capsim_flownet_link_bytes(const capsim_flownet *net, int link)
{
	int i = dense_get(net, link);
	if (i < 0)
		return 0.0;
	const link_t *k = &net->l[i];
	return k->bytes + k->load * (net->now - k->since);
}

uint64_t capsim_flownet_solves(const capsim_flownet *net)
{
	return net->solves;
}

uint64_t capsim_flownet_solve_visits(const capsim_flownet *net)
{
	return net->visits;
}
