/* collective.c - NCCL collectives as flows on the fabric; see collective.h
 * and docs/model.md ("Collectives on the fabric"). */
#include "collective.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "check.h"
#include "core.h"
#include "hmap.h"
#include "mix.h"
#include "xalloc.h"

#define MAX_PATH 16 /* the longest route, and a flowspec of 88 bytes */
_Static_assert(MAX_PATH >= CAPSIM_FABRIC_ROUTE_MAX, "a flow holds the longest route");
/* below this many flows a phase is not worth the refinement (and its
 * classes are few anyway) */
#define FOLD_MIN_FLOWS 16

/* ---- names ------------------------------------------------------------- */

const char *capsim_collective_algo_name(int algo)
{
	if (algo >= 0 && algo < CAPSIM_ALGO__COUNT)
		return capsim_algo_names[algo];
	if (algo == CAPSIM_ALGO_HIERARCHICAL)
		return "hierarchical";
	if (algo == CAPSIM_ALGO_P2P)
		return "p2p";
	return "?";
}

int capsim_collective_algo_parse(const char *s)
{
	if (strcasecmp(s, "hierarchical") == 0)
		return CAPSIM_ALGO_HIERARCHICAL;
	if (strcasecmp(s, "p2p") == 0)
		return CAPSIM_ALGO_P2P;
	return capsim_algo_parse(s);
}

double capsim_busbw_factor(capsim_coll op, int n)
{
	/* nccl-tests doc/PERFORMANCE.md (reference nccl_busbw_formulas.csv) */
	switch (op) {
	case CAPSIM_COLL_ALLREDUCE:
		return n > 1 ? 2.0 * (n - 1) / n : 0.0;
	case CAPSIM_COLL_ALLGATHER:
	case CAPSIM_COLL_REDUCESCATTER:
	case CAPSIM_COLL_ALLTOALL:
		return n > 1 ? (double)(n - 1) / n : 0.0;
	default:
		return 1.0;
	}
}

/* ---- NCCL's view of the hardware ------------------------------------------ */

static capsim_gpu_arch arch_of(const capsim_gpu *g)
{
	/* NCCL classes GPUs by compute capability, which the catalog does not
	 * state: FP4 marks Blackwell, 4th-gen NVLink Hopper; the rest (A100,
	 * and Ada's RTX 4090 at SM 8.9) fall in NCCL's Ampere class */
	if (g->peak_fp4_flop_per_s > 0)
		return CAPSIM_ARCH_BLACKWELL;
	if (g->scaleup_kind == CAPSIM_SCALEUP_NVLINK && g->scaleup_generation >= 5)
		return CAPSIM_ARCH_BLACKWELL;
	if (g->scaleup_kind == CAPSIM_SCALEUP_NVLINK && g->scaleup_generation == 4)
		return CAPSIM_ARCH_HOPPER;
	return CAPSIM_ARCH_AMPERE;
}

void capsim_collective_nccl_hw(const capsim_scenario *s, capsim_nccl_hw *hw)
{
	memset(hw, 0, sizeof *hw);
	/* NCCL sees a multi-node NVLink domain (NVL72) as one node */
	hw->gpus_per_node = s->node.domain_gpus > s->node.gpus ? s->node.domain_gpus : s->node.gpus;
	hw->arch = arch_of(&s->gpu);
	/* NCCL's per-link NVLink figures (reference nccl_model.md 1.5,
	 * src/graph/topo.h): SM80 20.0, SM90 20.6, SM100 40.1 GB/s */
	static const double per_link[] = { 20.0, 20.0, 20.6, 40.1 };
	if (s->gpu.scaleup_kind == CAPSIM_SCALEUP_NVLINK &&
	    s->node.scaleup_fabric != CAPSIM_NODE_PCIE) {
		/* a link carries 25 GB/s a direction up to NVLink 4, 50 from
		 * NVLink 5; NCCL's per-link figure scales with what the scenario
		 * says the GPU's links carry (an override of their bandwidth) */
		double nominal = s->gpu.scaleup_generation >= 5 ? 50e9 : 25e9;
		double per_dir = capsim_gpu_scaleup_bw_per_dir(&s->gpu);
		int links = s->gpu.scaleup_links;
		if (!links)
			links = (int)lround(per_dir / nominal);
		if (links < 1)
			links = 1;
		hw->nvlink_bw_per_gpu = links * per_link[hw->arch] * (per_dir / (links * nominal));
	}
	hw->nvswitch = s->node.scaleup_fabric == CAPSIM_NODE_NVSWITCH;
	/* NCCL counts PCIe as width x speed / 80 GB/s, speed code 60/120/240/480
	 * for Gen3/4/5/6 (reference nccl_model.md 1.5) */
	static const double code[] = { 0, 60, 60, 60, 120, 240, 480 };
	int gen = s->nic.pcie_generation < 7 ? s->nic.pcie_generation : 6;
	hw->pcie_bw = s->nic.pcie_lanes * code[gen] / 80.0;
	hw->nic_bw = s->nic.port_speed_bytes_per_s * 8.0 / 1e6 / 8000.0;
	/* NCCL fuses the topologies of every node of a multi-node NVLink
	 * domain (an MNNVL clique) into one (ncclTopoGetSystem,
	 * src/graph/topo.cc): its channels leave the domain through any of
	 * the domain's NICs, not one node's */
	int rails = s->rails ? s->rails : s->node.nics;
	hw->nics_per_node = s->node.domain_gpus > s->node.gpus ?
		rails * (s->node.domain_gpus / s->node.gpus) : rails;
	hw->gdr = s->gpudirect;
}

/* ---- flows of a phase ---------------------------------------------------- */

typedef struct {
	int links[MAX_PATH];
	int n;
	int origin; /* the NIC it enters the fabric through, or -1 */
	double bytes, mult;
} flowspec;

/* On one block: a plan that moving its ranks by whole blocks of nodes maps
 * onto itself, on a fabric that the same move maps onto itself
 * (capsim_fabric_translation_block), is simulated on the first block alone.
 * Only the flows that leave the first block's GPUs are built, and each link
 * they cross is taken to its representative in the first block
 * (capsim_fabric_link_orbit): the flow from the last block into the first
 * stands for itself on the first block's links, and so on. Every block is a
 * copy of the first, so each representative link carries what each link of
 * its orbit carries and the rates are those of the whole plan (an orbit
 * partition is equitable: the argument of folding, docs/model.md). */
typedef struct {
	int gpus;  /* GPUs of a block: a flow from a GPU past them is not built (0: off) */
	int nodes; /* nodes of a block */
	int copies; /* blocks the ranks span */
} quotient;

typedef struct link_census link_census;

typedef struct {
	flowspec *v;
	size_t n, cap;
	double lat_s;
	quotient q; /* the plan's */
	size_t path_total; /* links over every path, for folding */
	int top_link;      /* the highest link id a path crosses, or -1 */
	link_census *cs;   /* the plan's census: its flows are counted, not kept */
	double busy_s;     /* in a census, its busiest link's busy time */
	int leaf;          /* in a census, nodes a leaf whose flows inside the
			    * first leaf stand for every leaf's (ring_leaf_of):
			    * they go to leaf_cs, on their leaf orbits; 0: none */
	link_census *leaf_cs;
	int node0;         /* in a census, every node's own links carry the
			    * same flows (pat_phases): the first node's stand
			    * for all, the others' are not counted */
} phase;

typedef struct {
	phase *ph;
	size_t n, cap;
	quotient q;
	link_census *cs;
	int leaf; /* as the phase's */
	link_census *leaf_cs;
} plan;

/* ---- the census: a plan's flows routed and counted, not simulated ------- */

/* Past workload.flow-limit, where no symmetry folds a plan, and below it
 * for a large plan where that is exact (capsim_collective_run),
 * its flows are routed as they would run and their bytes counted onto the
 * links they cross, phase by phase, and each phase takes its busiest link's
 * busy time (bytes over capacity). Where a phase's flows carry the same bytes, that is
 * the max-min run's time exactly: a flow's rate is at all times at least
 * the equal share of its tightest link (progressive filling saturates a
 * link at no lower level, and a link's flows only leave), so every flow
 * ends by its links' largest busy time, and no link ends before its own.
 * NCCL's caps, one time for every flow, keep it so. So does a phase whose
 * flows differ in size but never share a link with one of another size
 * (a tree's chains on NVLink and its edges on the NICs, NVLS's pushes and
 * its tree): each connected set of flows is alike, and ends with its own
 * busiest link. Where two sizes meet on a link, it is a lower bound. On a lossy
 * fabric a link whose flows come from two or more NICs is taken at its
 * incast share for all its bytes, as the flow network takes it while they
 * run together. */
struct link_census {
	const capsim_flownet *net;
	double *load;   /* per link id: the open phase's bytes on one physical link */
	int *origin;    /* per link id, on a lossy fabric alone (NULL: no link
			 * loses capacity to incast): whose the bytes are, 0
			 * none yet, one origin + 2, or SEVERAL */
	double *size;   /* per link id, where a plan's flows may differ in size
			 * (NULL: they are alike): the open phase's flow size on
			 * it, 0 none yet */
	int mixed;      /* a link carried flows of two sizes in one phase */
	int unit;       /* every link stands for one (no multiplicities) */
	int *touched;   /* the links the open phase has loaded */
	size_t nt, capt;
	double *total;  /* per link id, every phase's bytes: made when a plan
			 * has a second phase */
	int *seen;      /* the links any phase has loaded, with total */
	size_t ns, cap_seen;
	int top_link;     /* the last closed phase's busiest link, or -1 */
	double top_bytes; /* what it carried */
	double weight;    /* the flows each routed one stands for */
	double stood_for; /* flows the routed ones stand for */
	double routes;    /* the most flows an all-to-all routes (alltoall_flows) */
	int sampled;      /* an all-to-all's pairs were sampled */
	int blocks;       /* counted on the first of this many blocks of nodes
			   * (count_tree_blocks); 0: not */
	/* sparse: load, origin, size and total are kept for the links met
	 * alone, at slots found by link id (a few flows spread over a large
	 * fabric touch a page of each per-link array a link otherwise); else
	 * they are indexed by link id */
	int sparse;
	/* a bit a link id, so that a link's first load is known without
	 * reading its slot (a read of a fresh page maps the zero page and the
	 * write after it faults again to copy it), else NULL: dense
	 * (CENSUS_DENSE), the open phase's links in mark (counted in nt, not
	 * listed); by id (CENSUS_BY_ID), in fresh beside their list; both,
	 * the links any phase loaded in seen_mark (listed in seen) */
	uint64_t *mark, *seen_mark, *fresh;
	size_t words;
	capsim_hmap slot;
	size_t nslots, capslots;
};

#define SEVERAL (-1)

/* The flows a census routes per flow of workload.flow-limit: routing one
 * costs a small share of simulating it (docs/performance.md, "Past the
 * flow limit") */
#define CENSUS_ROUTES_PER_FLOW 64.0
#define CENSUS_ROUTES_TEXT "64 routes a flow of workload.flow-limit"

/* Below workload.flow-limit, a plan is counted rather than simulated from
 * this many flows where the census is exact (census_exact_for: on a
 * lossless fabric where no link carries flows of two sizes, on a lossy one
 * for alike flows): the same time to the engine's clock (test_census), without
 * building, folding and running it. Smaller plans run flow by flow, the
 * reference the census is held to. */
#define CENSUS_MIN_FLOWS 4096.0

/* How a census keeps its per-link arrays: by link id, the links each phase
 * loaded listed as they come; by link id with a bit a link for the links
 * each phase loaded and for those any phase did (dense: where the plan
 * loads a good share of the fabric's links, a link's first load is then
 * written without reading the array first, which would fault each fresh
 * page in twice, and a phase is closed in id order from its bits); or at
 * slots for the links met alone, few flows spread over a large fabric */
enum census_mode { CENSUS_BY_ID, CENSUS_DENSE, CENSUS_SPARSE };

static void census_init(link_census *cs, const capsim_flownet *net, int lossy, int sizes,
			enum census_mode mode)
{
	size_t n = mode == CENSUS_SPARSE ? 64 : capsim_flownet_n_links(net);
	memset(cs, 0, sizeof *cs);
	cs->net = net;
	cs->sparse = mode == CENSUS_SPARSE;
	cs->capslots = cs->sparse ? n : 0;
	/* calloc's fresh pages cost nothing until a flow crosses them */
	cs->load = capsim_xcalloc(n ? n : 1, sizeof *cs->load);
	if (lossy)
		cs->origin = capsim_xcalloc(n ? n : 1, sizeof *cs->origin);
	if (sizes)
		cs->size = capsim_xcalloc(n ? n : 1, sizeof *cs->size);
	if (mode == CENSUS_DENSE) {
		cs->words = n / 64 + 1;
		cs->mark = capsim_xcalloc(cs->words, sizeof *cs->mark);
		cs->seen_mark = capsim_xcalloc(cs->words, sizeof *cs->seen_mark);
	} else if (mode == CENSUS_BY_ID) {
		cs->words = n / 64 + 1;
		cs->fresh = capsim_xcalloc(cs->words, sizeof *cs->fresh);
		cs->seen_mark = capsim_xcalloc(cs->words, sizeof *cs->seen_mark);
	}
	cs->unit = capsim_flownet_max_mult(net) <= 1.0;
	cs->weight = 1.0;
	cs->top_link = -1;
}

/* sets bit l of w; returns whether it was set already */
static inline int test_and_set(uint64_t *w, int l)
{
	uint64_t b = (uint64_t)1 << (l & 63);
	int was = (w[l >> 6] & b) != 0;
	w[l >> 6] |= b;
	return was;
}

/* clears bit l of w */
static inline void clear_bit(uint64_t *w, int l)
{
	w[l >> 6] &= ~((uint64_t)1 << (l & 63));
}

/* a per-link array of a sparse census grown from old to cap entries, the
 * new ones zero */
static void *grow_zeroed(void *p, size_t old, size_t cap, size_t size)
{
	if (!p)
		return NULL;
	char *q = capsim_xrealloc(p, cap * size);
	memset(q + old * size, 0, (cap - old) * size);
	return q;
}

/* Where link l's entries are in cs's per-link arrays: l itself, or in a
 * sparse census its slot (-1 for a link never met) */
static inline long census_find(const link_census *cs, int l)
{
	return cs->sparse ? capsim_hmap_get(&cs->slot, (uint64_t)l) : l;
}

/* census_find, a sparse census's slot made on first use */
static long census_slot(link_census *cs, int l)
{
	long v = census_find(cs, l);
	if (v >= 0)
		return v;
	if (cs->nslots == cs->capslots) {
		size_t old = cs->capslots, cap = 2 * old;
		cs->load = grow_zeroed(cs->load, old, cap, sizeof *cs->load);
		cs->origin = grow_zeroed(cs->origin, old, cap, sizeof *cs->origin);
		cs->size = grow_zeroed(cs->size, old, cap, sizeof *cs->size);
		cs->total = grow_zeroed(cs->total, old, cap, sizeof *cs->total);
		cs->capslots = cap;
	}
	v = (long)cs->nslots++;
	capsim_hmap_set(&cs->slot, (uint64_t)l, (int32_t)v);
	return v;
}

/* link l's load in cs: 0 for a link a sparse census never met */
static inline double census_load(const link_census *cs, int l)
{
	long i = census_find(cs, l);
	return i < 0 ? 0.0 : cs->load[i];
}

static void census_free(link_census *cs)
{
	capsim_hmap_free(&cs->slot);
	free(cs->load);
	free(cs->origin);
	free(cs->size);
	free(cs->touched);
	free(cs->total);
	free(cs->seen);
	free(cs->mark);
	free(cs->seen_mark);
	free(cs->fresh);
}

static void push_link(int **v, size_t *n, size_t *cap, int l)
{
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 1024;
		*v = capsim_xrealloc(*v, *cap * sizeof **v);
	}
	(*v)[(*n)++] = l;
}

/* Whether busy time b of link l beats the best so far, `top` of link
 * top_l: by more than rounding, or level with it and of a lower id, so that
 * the same link is named whatever order the links are visited in */
static int busier(double b, int l, double top, int top_l)
{
	return b > top * (1 + 1e-12) || (top_l >= 0 && l < top_l && b >= top * (1 - 1e-12));
}

/* The link that carried the most for its capacity over every phase, as a
 * run flow by flow names it (busiest_used): its id (-1: none), bytes into
 * *bytes */
static int census_busiest(const link_census *cs, double *bytes)
{
	if (!cs->total) { /* one phase */
		*bytes = cs->top_bytes;
		return cs->top_link;
	}
	int top = -1;
	double best = 0.0;
	*bytes = 0.0;
	for (size_t i = 0; i < cs->ns; i++) {
		int l = cs->seen[i];
		double total = cs->total[census_find(cs, l)];
		double cap = capsim_flownet_link_cap(cs->net, l);
		double busy = cap > 0 ? total / cap : 0.0;
		if (busier(busy, l, best, top)) {
			best = busy;
			top = l;
			*bytes = total;
		}
	}
	return top;
}

/* mult flows of `bytes` from `origin` (-1: none) over a path's links */
static void census_path(link_census *cs, const int *links, int n, int origin, double bytes,
			double mult)
{
	CAPSIM_ASSERT(bytes > 0 && mult >= 1 && origin >= -1);
	double add = bytes * mult * cs->weight;
	for (int j = 0; j < n; j++) {
		int l = links[j];
		long at = census_slot(cs, l);
		double m = cs->unit ? 1.0 : capsim_flownet_link_mult(cs->net, l);
		double share = cs->unit ? add : add / m; /* one physical link's */
		/* bytes > 0: a link loaded is nonzero, so its first load is
		 * known by its bit or its zero, and written, not added */
		int first = cs->mark  ? !test_and_set(cs->mark, l) :
			    cs->fresh ? !test_and_set(cs->fresh, l) :
					cs->load[at] == 0.0;
		if (first) {
			if (cs->mark)
				cs->nt++;
			else
				push_link(&cs->touched, &cs->nt, &cs->capt, l);
			cs->load[at] = share;
		} else {
			cs->load[at] += share;
		}
		if (cs->size) {
			double *z = &cs->size[at];
			if (first)
				*z = bytes;
			else if (fabs(*z - bytes) > 1e-12 * bytes)
				cs->mixed = 1;
		}
		if (!cs->origin)
			continue;
		/* as the flow network tells many-to-one congestion: two
		 * origins, or flows of none, or one flow standing for several
		 * of unknown origin on a link */
		int *o = &cs->origin[at];
		if ((origin < 0 && mult / m > 1.0 + 1e-9) ||
		    (!first && (*o != origin + 2 || origin < 0)))
			*o = SEVERAL;
		else if (first)
			*o = origin + 2;
	}
	cs->stood_for += cs->weight;
}

/* Link l (at slot `at`) of capacity cap into the closing phase: its busy
 * time at its share into *best, its plain busy time into the phase's top,
 * its load into the plan's totals, its slot cleared */
static void close_link(link_census *cs, int l, long at, double cap, double *best, double *top)
{
	double load = cs->load[at];
	double eff = cs->origin && cs->origin[at] == SEVERAL ?
			     cap * capsim_flownet_link_incast(cs->net, l) : cap;
	double busy = eff > 0 ? load / eff : 0.0;
	if (busy > *best)
		*best = busy;
	double plain = cap > 0 ? load / cap : 0.0;
	if (busier(plain, l, *top, cs->top_link)) {
		*top = plain;
		cs->top_link = l;
		cs->top_bytes = load;
	}
	if (cs->total) {
		int fresh = cs->seen_mark ? !test_and_set(cs->seen_mark, l) : cs->total[at] == 0.0;
		if (fresh) {
			push_link(&cs->seen, &cs->ns, &cs->cap_seen, l);
			cs->total[at] = load;
		} else {
			cs->total[at] += load;
		}
	}
	cs->load[at] = 0.0;
	if (cs->fresh)
		clear_bit(cs->fresh, l);
	if (cs->origin)
		cs->origin[at] = 0;
	if (cs->size)
		cs->size[at] = 0.0;
}

/* A dense census's open phase closed from its bits, in id order (the
 * ranges of alike links, sorted by id, cover every id) */
static void close_marked(link_census *cs, double *best, double *top)
{
	size_t r = 0, nr = capsim_flownet_n_ranges(cs->net);
	int base, count;
	double cap;
	capsim_flownet_range(cs->net, 0, &base, &count, &cap);
	for (size_t w = 0; w < cs->words; w++) {
		uint64_t bits = cs->mark[w];
		cs->mark[w] = 0;
		while (bits) {
			int l = (int)(w * 64) + __builtin_ctzll(bits);
			bits &= bits - 1;
			while (l >= base + count) {
				CAPSIM_ASSERT(r + 1 < nr);
				capsim_flownet_range(cs->net, ++r, &base, &count, &cap);
			}
			close_link(cs, l, l, cap, best, top);
		}
	}
}

/* The open phase is complete (`more`: another follows): its busiest link's
 * busy time into ph, its busiest link by bytes over capacity as the last,
 * its loads into the plan's totals where it has two phases or more, and
 * the links cleared for the next */
static void census_close(link_census *cs, phase *ph, int more)
{
	if (more && !cs->total) {
		size_t n = cs->sparse ? cs->capslots : capsim_flownet_n_links(cs->net);
		cs->total = capsim_xcalloc(n ? n : 1, sizeof *cs->total);
	}
	double best = 0.0, top = 0.0;
	cs->top_link = -1;
	cs->top_bytes = 0.0;
	if (cs->mark) {
		close_marked(cs, &best, &top);
	} else {
		for (size_t i = 0; i < cs->nt; i++) {
			int l = cs->touched[i];
			close_link(cs, l, census_find(cs, l), capsim_flownet_link_cap(cs->net, l),
				   &best, &top);
		}
	}
	cs->nt = 0;
	ph->busy_s = best;
}

static phase *new_phase(plan *p, double lat_s)
{
	if (p->cs && p->n)
		census_close(p->cs, &p->ph[p->n - 1], 1);
	if (p->n == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 4;
		p->ph = capsim_xrealloc(p->ph, p->cap * sizeof *p->ph);
	}
	phase *ph = &p->ph[p->n++];
	memset(ph, 0, sizeof *ph);
	ph->lat_s = lat_s;
	ph->q = p->q;
	ph->top_link = -1;
	ph->cs = p->cs;
	ph->leaf = p->leaf;
	ph->leaf_cs = p->leaf_cs;
	return ph;
}

static void free_plan(plan *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->ph[i].v);
	free(p->ph);
}

static flowspec *new_flow(phase *ph)
{
	if (ph->n == ph->cap) {
		ph->cap = ph->cap ? 2 * ph->cap : 64;
		ph->v = capsim_xrealloc(ph->v, ph->cap * sizeof *ph->v);
	}
	flowspec *fs = &ph->v[ph->n++];
	memset(fs, 0, sizeof *fs);
	return fs;
}

/* a flow's path is complete: what folding needs of the phase's paths */
static void note_path(phase *ph, const flowspec *fs)
{
	ph->path_total += (size_t)fs->n;
	for (int j = 0; j < fs->n; j++)
		if (fs->links[j] > ph->top_link)
			ph->top_link = fs->links[j];
}

/* A transfer of a counted phase (xfer): where it runs, on one block its
 * links' orbits' */
static void xfer_counted(phase *ph, capsim_fabric *f, int a, int b, double bytes, double mult,
			 uint64_t hash)
{
	link_census *cs = ph->cs;
	int G = capsim_fabric_gpus_per_node(f);
	int na = G == 1 ? a : a / G, nb = G == 1 ? b : b / G;
	int orbit = ph->q.gpus ? ph->q.nodes : 0;
	if (ph->leaf) { /* inside a leaf: the first leaf's stand for all */
		int la = na / ph->leaf;
		if (la == nb / ph->leaf) {
			if (la > 0)
				return;
			cs = ph->leaf_cs;
			orbit = ph->leaf;
		}
	}
	/* from the first block (or leaf) to it, a route stays on the block's
	 * links, each its own orbit */
	int inside = !orbit || nb < orbit;
	int nb_first = inside ? nb : nb % orbit; /* b's node moved onto the first block */
	/* neither end the first node: only the switches' links are counted
	 * (pat_phases), none under one leaf */
	int switches = ph->node0 && na && nb_first;
	int links[MAX_PATH], n, origin;
	if (switches) {
		n = (int)capsim_fabric_route_switches(f, a, b, hash, links, MAX_PATH, &origin);
	} else {
		double lat;
		n = (int)capsim_fabric_route(f, a, b, hash, links, MAX_PATH, &lat);
	}
	if (inside)
		for (int j = 0; orbit && j < n; j++)
			CAPSIM_ASSERT(capsim_fabric_link_orbit(f, links[j], orbit) == links[j]);
	else
		for (int j = 0; j < n; j++)
			links[j] = capsim_fabric_link_orbit(f, links[j], orbit);
	if (!switches) /* the source's NIC, on the first block */
		origin = capsim_fabric_origin(f, links, (size_t)n);
	if (ph->node0 && !switches) /* the switches' links and the first node's */
		n = (int)capsim_fabric_keep_first_node(f, links, (size_t)n);
	census_path(cs, links, n, origin, bytes, mult);
}

/* a GPU-to-GPU transfer, routed now (adaptive routing sees earlier flows of
 * the phase only once they run, so it balances by hash order here too) */
static void xfer(phase *ph, capsim_fabric *f, int a, int b, double bytes,
		 double mult, uint64_t hash)
{
	CAPSIM_ASSERT(a >= 0 && b >= 0 && a < capsim_fabric_gpus(f) && b < capsim_fabric_gpus(f));
	if (a == b || bytes <= 0 || (ph->q.gpus && a >= ph->q.gpus))
		return;
	if (ph->cs) {
		xfer_counted(ph, f, a, b, bytes, mult, hash);
		return;
	}
	flowspec *fs = new_flow(ph);
	double lat;
	fs->n = (int)capsim_fabric_route(f, a, b, hash, fs->links, MAX_PATH, &lat);
	/* the fabric's longest route (three tiers up and down) fits */
	if (CAPSIM_NEVER(fs->n > MAX_PATH))
		fs->n = MAX_PATH;
	if (ph->q.gpus && b >= ph->q.gpus) /* else on the first block's links */
		for (int j = 0; j < fs->n; j++)
			fs->links[j] = capsim_fabric_link_orbit(f, fs->links[j], ph->q.nodes);
	fs->origin = capsim_fabric_origin(f, fs->links, (size_t)fs->n);
	fs->bytes = bytes;
	fs->mult = mult;
	note_path(ph, fs);
}

static void path_flow(phase *ph, const int *links, int n, double bytes,
		      double mult)
{
	if (ph->cs) {
		if (bytes > 0)
			census_path(ph->cs, links, n < MAX_PATH ? n : MAX_PATH, -1, bytes, mult);
		return;
	}
	flowspec *fs = new_flow(ph);
	for (int i = 0; i < n && i < MAX_PATH; i++)
		fs->links[i] = links[i];
	fs->n = n < MAX_PATH ? n : MAX_PATH;
	fs->origin = -1;
	fs->bytes = bytes;
	fs->mult = mult;
	note_path(ph, fs);
}

/* ---- algorithms -------------------------------------------------------------- */

typedef struct {
	capsim_fabric *f;
	int n;      /* ranks */
	int G;      /* GPUs per node */
	int nodes;  /* nodes the ranks occupy */
	int rails;
	int nch;
	double eff; /* payload per wire byte of the protocol */
	uint64_t seed;
} ctx;

/* local index of the GPU that starts channel c's ring inside a node: the
 * first GPU on the channel's rail, so each channel enters and leaves nodes
 * through its own NIC as NCCL's rings do */
static int channel_start(const ctx *c, int ch)
{
	int r = ch % c->rails;
	/* the least g with floor(g rails / G) = r: ceil(r G / rails), if its
	 * floor is r (no GPU sits on the rail otherwise) */
	long g = ((long)r * c->G + c->rails - 1) / c->rails;
	return g < c->G && g * c->rails / c->G == r ? (int)g : 0;
}

/* The ranks of a request as NCCL groups them: by node, or by NVLink domain
 * where nodes share one (NCCL fuses an MNNVL clique's topologies into one
 * node, ncclTopoGetSystem in src/graph/topo.cc), whose rails are then all
 * its nodes' NICs, in node order. */
static ctx ctx_of(capsim_fabric *f, const capsim_coll_req *r)
{
	int G = capsim_fabric_gpus_per_node(f), D = capsim_fabric_domain_gpus(f);
	int rails = capsim_fabric_rails(f);
	if (D > G && D % G == 0) {
		rails *= D / G;
		G = D;
	}
	ctx c = { .f = f, .n = r->ranks, .G = G, .nodes = (r->ranks + G - 1) / G,
		  .rails = rails, .seed = r->seed };
	return c;
}

/* rank at position i of channel ch's ring */
static int ring_rank(const ctx *c, int ch, int i)
{
	int per = c->n < c->G ? c->n : c->G;
	int node = i / per, pos = i % per;
	int st = c->n < c->G ? 0 : channel_start(c, ch);
	return node * c->G + (st + pos) % per;
}

/* channels whose rings coincide are one flow of multiplicity k */
static int distinct_rings(const ctx *c)
{
	if (c->n <= c->G)
		return 1; /* single node: every channel rings the same GPUs */
	return c->nch < c->rails ? c->nch : c->rails;
}

static double ring_mult(const ctx *c, int ring)
{
	int d = distinct_rings(c);
	int k = c->nch / d + (ring < c->nch % d ? 1 : 0);
	return k;
}

/* every ring edge carries `edge_bytes` (payload, whole collective) split
 * over the channels; chain = 1 drops the edge back to the first rank */
static void ring_flows(phase *ph, const ctx *c, double edge_bytes, int chain)
{
	int d = distinct_rings(c);
	double per_ch = edge_bytes / c->nch / c->eff;
	double channels = 0;
	/* on one block, the flows from its GPUs: a ring's position i is on
	 * node i / G (whole nodes), so the first block's are its first */
	int last = c->n - (chain ? 1 : 0);
	if (ph->q.gpus && ph->q.gpus < last)
		last = ph->q.gpus;
	int per = c->n < c->G ? c->n : c->G;
	/* counted on leaves (xfer): a leaf's positions, past the first of
	 * which a flow to the same leaf is left out, so the loop skips to the
	 * leaf's last position, whose flow leaves it (a leaf's GPUs are its
	 * positions: whole nodes or NVLink domains of per GPUs, in order) */
	long span = ph->cs && ph->leaf ? (long)ph->leaf * capsim_fabric_gpus_per_node(c->f) : 0;
	CAPSIM_ASSERT(!span || (per == c->G && span % per == 0));
	for (int ring = 0; ring < d; ring++) {
		double mult = ring_mult(c, ring);
		int st = c->n < c->G ? 0 : channel_start(c, ring);
		channels += mult;
		/* ring_rank(c, ring, i), stepped: position i is GPU
		 * (st + pos) mod per of node i / per */
		int node = 0, pos = 0, a = ring_rank(c, ring, 0);
		long end = span - 1; /* the last position of i's leaf */
		for (int i = 0; i < last; i++) {
			if (span && i > end)
				end += span; /* i starts the next leaf: pos 0 */
			if (span && i >= span && i < end) {
				CAPSIM_ASSERT(i == end - span + 1 && pos == 0);
				if (end >= last)
					break;
				i = (int)end;
				node += (int)(span / per) - 1;
				pos = per - 1;
				a = node * c->G + (st + pos < per ? st + pos : st + pos - per);
				CAPSIM_ASSERT(a == ring_rank(c, ring, i));
			}
			if (++pos == per) {
				pos = 0;
				node++;
			}
			if (i + 1 == c->n)
				node = pos = 0; /* the ring closes */
			int local = st + pos < per ? st + pos : st + pos - per;
			int b = node * c->G + local;
			CAPSIM_ASSERT(b == ring_rank(c, ring, (i + 1) % c->n));
			xfer(ph, c->f, a, b, per_ch, mult, c->seed + (uint64_t)ring * 7919 + (uint64_t)i);
			a = b;
		}
	}
	/* the distinct rings carry every channel once: the bytes are all sent */
	CAPSIM_ASSERT(channels == c->nch);
}

/* A flow of a plan from GPU a to GPU b, handed to a sink: built into a
 * phase (phase_sink), or counted onto the links its route crosses
 * (census_sink). */
typedef void (*flow_sink)(void *arg, int a, int b, double bytes, double mult, uint64_t hash);

typedef struct {
	phase *ph;
	capsim_fabric *f;
} phase_arg;

static void phase_sink(void *arg, int a, int b, double bytes, double mult, uint64_t hash)
{
	phase_arg *pa = arg;
	xfer(pa->ph, pa->f, a, b, bytes, mult, hash);
}

/* The parent of node r > 0 in NCCL's binary tree over m nodes
 * (ncclGetBtree, src/graph/trees.cc of NVIDIA/nccl): r's lowest set bit
 * cleared and the next one set, or only cleared where that passes the last
 * node. Node 0 is the root. Most edges join near nodes: half of them
 * neighbours, a quarter nodes two apart, and so on. */
static int btree_parent(int r, int m)
{
	CAPSIM_ASSERT(r > 0 && r < m);
	int bit = r & -r;
	int up = (r ^ bit) | (bit << 1);
	return up < m ? up : r ^ bit;
}

int capsim_collective_dtree_parent(int nodes, int tree, int node)
{
	CAPSIM_ASSERT(nodes >= 1 && node >= 0 && node < nodes && (tree == 0 || tree == 1));
	if (tree == 0)
		return node ? btree_parent(node, nodes) : -1;
	if (nodes % 2 == 0) { /* the first tree mirrored: node m - 1 - r at r's place */
		int r = nodes - 1 - node;
		return r ? nodes - 1 - btree_parent(r, nodes) : -1;
	}
	int r = (node - 1 + nodes) % nodes; /* shifted by one node */
	return r ? (btree_parent(r, nodes) + 1) % nodes : -1;
}

/* The child of tree t's edge at position i (1 .. m - 1) of the binary tree
 * over m nodes: the node standing there (tree 1 mirrors or shifts, as
 * capsim_collective_dtree_parent) */
static int dtree_child(int m, int t, int i)
{
	if (t == 0)
		return i;
	return m % 2 == 0 ? m - 1 - i : (i + 1) % m;
}

/* NCCL's trees on blocks of nodes (count_tree_blocks): the edges of the
 * first block that every block repeats, and where the others go. */
typedef struct {
	int nodes;      /* nodes of a block, a power of two */
	flow_sink rest; /* the edges that are no block's copy of the first's */
	void *rest_arg;
} tree_block;

/* Whether tree t's edge whose child stands at position i of the binary
 * tree is a copy of an edge of the first block in every block of b nodes
 * (b a power of two dividing the nodes): i's lowest set bit, below b / 2,
 * keeps its parent ((i ^ bit) | bit << 1) inside i's block at the place
 * the first block's has. The children at a block's start and middle join
 * other blocks, or their own by the block's parity. The mirrored tree
 * maps blocks onto blocks (m - 1 - i), so the same test holds. */
static int tree_edge_repeats(int i, int b)
{
	int j = i % b;
	return j != 0 && j != b / 2;
}

/* What tree_edges emits for one channel ring: its per-channel bytes, the
 * rings it stands for, the local GPU its edges leave from */
typedef struct {
	const ctx *c;
	flow_sink emit;
	void *arg;
	const tree_block *tb;
	double bytes, mult;
	int st;
} tree_emit;

/* tree t's edge whose child stands at position i, both ways: to emit, or
 * with tb to tb->rest where it is no block's copy of the first's, or not at
 * all where the first block's copy stands for it */
static void tree_edge(const tree_emit *te, int t, int i)
{
	const ctx *c = te->c;
	int child = dtree_child(c->nodes, t, i);
	flow_sink to = te->emit;
	void *to_arg = te->arg;
	if (te->tb && !tree_edge_repeats(i, te->tb->nodes)) {
		to = te->tb->rest;
		to_arg = te->tb->rest_arg;
	} else if (te->tb && child >= te->tb->nodes) {
		return; /* the first block's copy stands for it */
	}
	int parent = capsim_collective_dtree_parent(c->nodes, t, child);
	int a = child * c->G + te->st, b = parent * c->G + te->st;
	to(to_arg, a, b, te->bytes, te->mult, c->seed + (uint64_t)a * 31 + (uint64_t)t);
	to(to_arg, b, a, te->bytes, te->mult, c->seed + (uint64_t)b * 37 + (uint64_t)t);
}

/* NCCL's double binary tree between nodes, chains inside them (chains = 0:
 * the trees' edges alone): each tree carries half the channels; every edge
 * moves the data up (reduce) and down (broadcast), pipelined. With tb, the
 * chains and the repeated edges (tree_edge_repeats) of the first block
 * alone go to emit, and every other edge to tb->rest: the positions whose
 * edges go anywhere are visited alone, in the order of all of them (the
 * first tree's first block, then the multiples of half a block; the second
 * tree's multiples of half a block, then its last block, which holds the
 * first block's nodes), so that routes are placed as they would be. */
static void tree_edges(const ctx *c, double bytes, int chains, flow_sink emit, void *arg,
		       const tree_block *tb)
{
	int per = c->n < c->G ? c->n : c->G;
	double per_ch = bytes / c->nch / c->eff;
	int d = distinct_rings(c), m = c->nodes;
	int chain_nodes = tb ? tb->nodes : m;
	for (int ring = 0; ring < d; ring++) {
		double mult = ring_mult(c, ring);
		int st = c->n < c->G ? 0 : channel_start(c, ring);
		/* intra-node chain, both directions (NVLSTree reduces inside
		 * the node with NVLS instead) */
		for (int node = 0; chains && node < chain_nodes; node++)
			for (int p = 0; p + 1 < per; p++) {
				int a = node * c->G + (st + p) % per;
				int b = node * c->G + (st + p + 1) % per;
				emit(arg, a, b, per_ch, mult, c->seed + (uint64_t)a);
				emit(arg, b, a, per_ch, mult, c->seed + (uint64_t)b);
			}
		/* NCCL's double binary tree over nodes (ncclGetDtree); tree t
		 * takes half the channels */
		tree_emit te = { c, emit, arg, tb, per_ch / 2, mult, st };
		if (m < 2)
			continue;
		if (!tb) {
			for (int t = 0; t < 2; t++)
				for (int i = 1; i < m; i++)
					tree_edge(&te, t, i);
			continue;
		}
		int b = tb->nodes, half = b / 2;
		CAPSIM_ASSERT(half >= 1 && m % b == 0 && m % 2 == 0);
		for (int i = 1; i < b; i++)
			tree_edge(&te, 0, i);
		for (int i = b; i < m; i += half)
			tree_edge(&te, 0, i);
		for (int i = half; i < m - b; i += half)
			tree_edge(&te, 1, i);
		for (int i = m - b; i < m; i++)
			tree_edge(&te, 1, i);
	}
}

static void tree_flows(phase *ph, const ctx *c, double bytes, int chains)
{
	phase_arg pa = { ph, c->f };
	tree_edges(c, bytes, chains, phase_sink, &pa, NULL);
}

/* NVLink SHARP inside a domain: each GPU pushes its data into the switch,
 * which reduces it, and reads the result back: every GPU link carries the
 * buffer once per direction */
static int nvls_flows(phase *ph, const ctx *c, capsim_fabric *f, double bytes)
{
	int links[MAX_PATH];
	double lat;
	/* on one block, its GPUs' flows alone */
	int n = ph->q.gpus ? ph->q.gpus : c->n;
	for (int g = 0; g < n; g++) {
		/* a same-domain route is [up(g), down(peer)]: keep one end */
		int peer = (g % c->G) ? g - 1 : g + 1;
		if (peer >= c->n)
			return -1;
		size_t k = capsim_fabric_route(f, g, peer, 0, links, MAX_PATH, &lat);
		if (k != 2)
			return -1;
		path_flow(ph, &links[0], 1, bytes / c->eff, 1.0);
		k = capsim_fabric_route(f, peer, g, 0, links, MAX_PATH, &lat);
		path_flow(ph, &links[1], 1, bytes / c->eff, 1.0);
	}
	return 0;
}

/* SHARP (CollNet): reduce inside each node over NVLink, each node's NICs
 * send their share of the buffer into the switches once and receive the
 * reduced result once: a node puts S on the wire, where a ring puts
 * 2(n-1)/n S */
static void collnet_flows(phase *ph, const ctx *c, double bytes, int intra_ring)
{
	int per = c->n < c->G ? c->n : c->G;
	double intra = per > 1 ? bytes * (per - 1) / per : 0.0;
	int links[MAX_PATH];
	double lat;
	/* on one block, its nodes' flows alone */
	int nodes = ph->q.nodes ? ph->q.nodes : c->nodes;
	for (int node = 0; node < nodes; node++) {
		for (int p = 0; intra_ring && p < per && per > 1; p++) {
			int a = node * c->G + p, b = node * c->G + (p + 1) % per;
			/* reduce-scatter and all-gather inside the node, as a ring */
			xfer(ph, c->f, a, b, 2 * intra / c->eff, 1.0, 0);
		}
		for (int r = 0; r < c->rails; r++) {
			/* the NIC's leg to its leaf and back: the first and last
			 * links of a route to the same rail of another node,
			 * without the path between switches */
			int other = ((node + 1) % c->nodes) * c->G + r * c->G / c->rails;
			int a = node * c->G + r * c->G / c->rails;
			size_t k = capsim_fabric_route(c->f, a, other, 0, links, MAX_PATH, &lat);
			double share = bytes / c->rails / c->eff;
			/* up: GPU PCIe and NIC uplink; down: NIC downlink, GPU PCIe */
			int up[4], nu = 0, down[4], nd = 0;
			for (size_t i = 0; i < k; i++) {
				capsim_link_kind kind = capsim_fabric_link_kind(c->f, links[i]);
				if ((kind == CAPSIM_LINK_PCIE_UP || kind == CAPSIM_LINK_NIC_UP ||
				     (kind == CAPSIM_LINK_HOST && nu < 3)) && nu < 4)
					up[nu++] = links[i];
			}
			size_t kb = capsim_fabric_route(c->f, other, a, 0, links, MAX_PATH, &lat);
			for (size_t i = 0; i < kb; i++) {
				capsim_link_kind kind = capsim_fabric_link_kind(c->f, links[i]);
				if ((kind == CAPSIM_LINK_NIC_DOWN || kind == CAPSIM_LINK_PCIE_DOWN) &&
				    nd < 4)
					down[nd++] = links[i];
			}
			path_flow(ph, up, nu, share, 1.0);
			path_flow(ph, down, nd, share, 1.0);
		}
	}
}

/* PAT for all-gather/reduce-scatter at one GPU per node: log2(n) steps,
 * step k exchanging 2^k blocks of S/n with the rank 2^k away */
static void pat_phases(plan *p, const ctx *c, double total, double lat_s)
{
	int steps = 0;
	while ((1 << steps) < c->n)
		steps++;
	double sent = 0;
	/* Counted, with one GPU a node and no NVLink between nodes: each step
	 * is a shift, so every node sends one flow and receives one, alike,
	 * over its own links as every other node does (its GPU's PCIe, its
	 * NIC on the first rail, their host bounces): the first node's links
	 * carry what each node's do, and, of the lowest ids of their kinds,
	 * are the ones a census names among equals. The switches' links are
	 * counted as they come. */
	int node0 = p->cs && c->G == 1 && capsim_fabric_gpus_per_node(c->f) == 1 &&
		    capsim_fabric_domain_gpus(c->f) == 1;
	for (int k = 0; k < steps; k++) {
		phase *ph = new_phase(p, k == 0 ? lat_s : 0.0);
		ph->node0 = node0;
		int dist = 1 << k;
		double blocks = dist;
		if (dist * 2 > c->n)
			blocks = c->n - dist; /* the last step sends what is left */
		sent += blocks;
		/* on one block, the flows from its ranks (one GPU a node) */
		int from = ph->q.gpus && ph->q.gpus < c->n ? ph->q.gpus : c->n;
		double bytes = blocks * total / c->n / c->eff;
		for (int i = 0, j = dist; i < from; i++, j = j + 1 < c->n ? j + 1 : 0)
			xfer(ph, c->f, i * c->G, j * c->G, bytes, 1.0, c->seed + (uint64_t)i);
	}
	/* each rank ends with the n - 1 blocks of the others, no more */
	CAPSIM_ASSERT(sent == c->n - 1);
}

/* An upper bound on the flows the builders above make for op under algo
 * (each xfer or path_flow call is one; xfer drops a rank's transfer to
 * itself, so the bound can exceed the count by those), computed before any
 * is built so that a collective too large to simulate is refused without
 * allocating it. Doubles: n x n overflows an int at 46,341 ranks. */
static double plan_flows(const ctx *c, capsim_coll op, int algo)
{
	double n = c->n, nodes = c->nodes, G = c->G;
	double per = c->n < c->G ? c->n : c->G;
	double d = distinct_rings(c);
	double chains = d * 2.0 * nodes * (per - 1.0);
	double trees = nodes > 1 ? d * 2.0 * 2.0 * (nodes - 1.0) : 0.0;
	double collnet = nodes * (per > 1 ? per : 0.0) + nodes * c->rails * 2.0;
	double steps = 0;
	while (ldexp(1.0, (int)steps) < n)
		steps++;
	if (n <= 1)
		return 0.0;
	switch (algo) {
	case CAPSIM_ALGO_P2P:
		return op == CAPSIM_COLL_SENDRECV ? n : n * (n - 1.0);
	case CAPSIM_ALGO_HIERARCHICAL:
		return 2.0 * nodes * G + G * nodes;
	case CAPSIM_ALGO_RING:
		return d * n;
	case CAPSIM_ALGO_TREE:
		return chains + trees;
	case CAPSIM_ALGO_NVLS:
	case CAPSIM_ALGO_NVLS_TREE:
		return 2.0 * n + (nodes > 1 ? (algo == CAPSIM_ALGO_NVLS ?
					       nodes * c->rails * 2.0 : trees) : 0.0);
	case CAPSIM_ALGO_COLLNET_DIRECT:
	case CAPSIM_ALGO_COLLNET_CHAIN:
		return collnet;
	case CAPSIM_ALGO_PAT:
		return steps * n;
	default:
		return 0.0;
	}
}

static int cmp_int(const void *pa, const void *pb)
{
	int a = *(const int *)pa, b = *(const int *)pb;
	return (a > b) - (a < b);
}

/* The largest link id of a plan's flows (-1: none), and how many links
 * its paths hold in all: its phases' tallies (note_path) */
static int plan_top_link(const plan *p, size_t *total)
{
	int top = -1;
	*total = 0;
	for (size_t a = 0; a < p->n; a++) {
		*total += p->ph[a].path_total;
		if (p->ph[a].top_link > top)
			top = p->ph[a].top_link;
	}
	return top;
}

/* whether ids up to top are dense enough among `total` uses for a direct
 * table (a whole-cluster collective) rather than a hash (a small group on
 * a large fabric) */
static int dense_ids(int top, size_t total)
{
	return (size_t)top + 1 <= 4 * total + 1024;
}

/* The distinct links a plan's flows cross, ascending; *n gets how many. */
static int *plan_links(const plan *p, size_t *n)
{
	size_t total;
	int top = plan_top_link(p, &total);
	unsigned char *mark = dense_ids(top, total) ? capsim_xcalloc((size_t)top + 1, 1) : NULL;
	capsim_hmap seen = { 0 };
	int *v = NULL;
	size_t k = 0, cap = 0;
	for (size_t a = 0; a < p->n; a++)
		for (size_t i = 0; i < p->ph[a].n; i++) {
			const flowspec *fs = &p->ph[a].v[i];
			for (int j = 0; j < fs->n; j++) {
				int l = fs->links[j];
				if (mark ? mark[l] != 0 :
					   capsim_hmap_get_or_put(&seen, (uint64_t)l, (int32_t)k) !=
						   (int32_t)k)
					continue;
				if (mark)
					mark[l] = 1;
				if (k == cap) {
					cap = cap ? 2 * cap : 256;
					v = capsim_xrealloc(v, cap * sizeof *v);
				}
				v[k++] = l;
			}
		}
	capsim_hmap_free(&seen);
	free(mark);
	if (k)
		qsort(v, k, sizeof *v, cmp_int);
	*n = k;
	return v;
}

/* ---- the driver: flows on the event engine ---------------------------------- */

typedef struct {
	capsim_sim *sim;
	capsim_flownet *net;
	int kind;
	capsim_time_ns last;
	int *ids;
	double *bytes0;
	size_t n, left;
	double work, budget; /* flow-events so far, and the most allowed (0: any) */
	int over;            /* stopped for passing budget */
} driver;

static void schedule_next(driver *dr)
{
	double dt;
	if (!dr->left || capsim_flownet_next_completion(dr->net, &dt) < 0)
		return;
	capsim_time_ns now = capsim_sim_now(dr->sim);
	capsim_time_ns at = now + (capsim_time_ns)ceil(dt * 1e9);
	capsim_sim_schedule(dr->sim, at, 0, dr->kind, NULL, 0);
}

static void on_completion(capsim_sim *sim, const capsim_event *ev, void *arg)
{
	(void)ev;
	driver *dr = arg;
	/* each end advances and re-solves the flows still running: the run's
	 * work is their sum over its events */
	dr->work += (double)dr->left;
	if (dr->budget > 0 && dr->work > dr->budget) {
		dr->over = 1;
		capsim_sim_stop(sim);
		return;
	}
	capsim_time_ns now = capsim_sim_now(sim);
	capsim_flownet_advance(dr->net, (double)(now - dr->last) * 1e-9);
	dr->last = now;
	capsim_flownet_hold(dr->net, 1);
	for (size_t i = 0; i < dr->n; i++) {
		if (dr->ids[i] < 0)
			continue;
		double rem = capsim_flownet_remaining(dr->net, dr->ids[i]);
		double rate = capsim_flownet_rate(dr->net, dr->ids[i]);
		/* done, or within a nanosecond of done */
		if (rem <= 1e-12 * dr->bytes0[i] || rem <= rate * 1e-9) {
			capsim_flownet_stop(dr->net, dr->ids[i]);
			dr->ids[i] = -1;
			dr->left--;
		}
	}
	capsim_flownet_hold(dr->net, 0);
	schedule_next(dr);
}

/* Run one phase; returns its bandwidth time in seconds. caps: per-flow rate
 * caps (bytes/s) or NULL. budget: the most flow-events the run may take
 * (work_budget; 0: any), past which it stops, *over set (over may be NULL
 * when budget is 0). */
static double run_phase_within(capsim_flownet *net, const phase *ph, const double *caps,
			       uint64_t *events, uint64_t *flows, double budget, int *over)
{
	driver dr = { 0 };
	dr.budget = budget;
	dr.sim = capsim_sim_create();
	dr.net = net;
	dr.kind = capsim_sim_add_kind(dr.sim, on_completion, &dr);
	dr.ids = capsim_xcalloc(ph->n ? ph->n : 1, sizeof *dr.ids);
	dr.bytes0 = capsim_xcalloc(ph->n ? ph->n : 1, sizeof *dr.bytes0);
	dr.n = ph->n;
	capsim_flownet_hold(net, 1);
	for (size_t i = 0; i < ph->n; i++) {
		const flowspec *fs = &ph->v[i];
		dr.ids[i] = capsim_flownet_start_from(net, fs->links, (size_t)fs->n, fs->bytes,
						      fs->mult, caps ? caps[i] : 0.0, fs->origin);
		dr.bytes0[i] = fs->bytes;
	}
	dr.left = ph->n;
	capsim_flownet_hold(net, 0);
	*flows += ph->n;
	schedule_next(&dr);
	*events += capsim_sim_run(dr.sim, CAPSIM_TIME_NEVER);
	double t = (double)capsim_sim_now(dr.sim) * 1e-9;
	/* a flow with no rate (a zero-capacity link) never finishes, nor do
	 * those of a run stopped for its work: stop them, solving once */
	capsim_flownet_hold(net, 1);
	for (size_t i = 0; i < dr.n; i++)
		if (dr.ids[i] >= 0)
			capsim_flownet_stop(net, dr.ids[i]);
	capsim_flownet_hold(net, 0);
	free(dr.ids);
	free(dr.bytes0);
	capsim_sim_destroy(dr.sim);
	if (over)
		*over = dr.over;
	return t;
}

static double run_phase(capsim_flownet *net, const phase *ph, const double *caps,
			uint64_t *events, uint64_t *flows)
{
	return run_phase_within(net, ph, caps, events, flows, 0.0, NULL);
}

/* ---- folding into symmetry classes ------------------------------------------ */

/* Folding finds an equitable partition by colour refinement: links start
 * coloured by kind and capacity, flows by size, cap and the colours along
 * their path; a link's next colour adds the multiset of flow colours
 * crossing it, a flow's the new colours of its path, until the number of
 * colours stops growing. Links of one colour then carry the same traffic,
 * so one link of multiplicity m per colour, and one flow of multiplicity w
 * per flow colour, give the max-min rates of the whole network exactly. */

static uint64_t hash_double(double v)
{
	uint64_t u;
	memcpy(&u, &v, sizeof u);
	return capsim_mix64(u);
}

/* replace hashes by dense colour numbers, in the order the hashes are
 * first seen (a hash table, so a round costs O(n), not a sort's
 * O(n log n)); returns the number of colours */
static size_t densify(const uint64_t *h, size_t n, int *colour, capsim_hmap *seen)
{
	capsim_hmap_clear(seen);
	int32_t c = 0;
	/* the last few hashes met, by their low bits: flows and links come
	 * in runs of alike ones (a ring's edges inside a leaf, a leaf's
	 * links), which skip the table */
	uint64_t recent[16];
	int32_t recent_c[16];
	memset(recent_c, 0xff, sizeof recent_c);
	for (size_t i = 0; i < n; i++) {
		unsigned r = (unsigned)(h[i] & 15);
		if (recent_c[r] >= 0 && recent[r] == h[i]) {
			colour[i] = recent_c[r];
			continue;
		}
		int32_t v = capsim_hmap_get_or_put(seen, h[i], c);
		if (v == c)
			c++;
		colour[i] = v;
		recent[r] = h[i];
		recent_c[r] = v;
	}
	return (size_t)c;
}

/* Folding loses which NIC each flow came from, which incast on a lossy
 * fabric depends on, and the symmetry of scattered nodes; and a folded run
 * has a network of its own, so it cannot share the fabric with flows that
 * are running. */
static int can_fold(capsim_fabric *f)
{
	return !capsim_fabric_lossy(f) && !capsim_fabric_scattered(f) &&
	       capsim_flownet_active(capsim_fabric_net(f)) == 0;
}

/* On one block (below), each flow keeps the NIC it came from, so a lossy
 * fabric's incast is counted as on the whole fabric: the plans run so send
 * all of a NIC's flows to one node, so the flows that meet on a link of the
 * first block from two NICs are those that meet on it from two NICs in the
 * whole (a flow from the last block into the first, standing in as the one
 * from the first into the second, starts from a NIC whose other flows, if
 * any, also leave the block). */
static int can_quotient(capsim_fabric *f)
{
	return !capsim_fabric_scattered(f) && capsim_flownet_active(capsim_fabric_net(f)) == 0;
}

/* a phase in symmetry classes: the links it crosses numbered densely (in
 * the order first crossed), the flows' paths in those numbers, and the
 * colours of both */
typedef struct {
	size_t nl, nf, nlc, nfc;
	int *phys;   /* dense number -> link id */
	int *off;    /* flow i's path: idx[off[i] .. off[i + 1]) */
	int *idx;
	int *lcol, *fcol;
} classes;

static void classes_free(classes *k)
{
	free(k->phys);
	free(k->off);
	free(k->idx);
	free(k->lcol);
	free(k->fcol);
	memset(k, 0, sizeof *k);
}

#define DIRECT_IDS ((size_t)1 << 24)

/* number the links of ph's paths densely: by a direct table when the ids
 * span little more than the paths hold (a whole-cluster collective) or are
 * below DIRECT_IDS, else by hash; and, in the same pass over
 * the flows, what each flow is apart from its path (size, cap,
 * multiplicity) into fbase */
static void number_links(const phase *ph, const double *caps, classes *k, uint64_t *fbase)
{
	size_t total = ph->path_total;
	int top = ph->top_link;
	k->off = capsim_xmalloc((ph->n + 1) * sizeof *k->off);
	k->idx = capsim_xmalloc((total ? total : 1) * sizeof *k->idx);
	int *direct = NULL;
	capsim_hmap seen = { 0 };
	/* a table of every id up to the highest: calloc's pages are zero
	 * until touched, so a sparse use (one block's links, spread over the
	 * fabric's kinds) costs the pages it touches, up to 64 MB of ids */
	if (dense_ids(top, total) || (size_t)top < DIRECT_IDS)
		direct = capsim_xcalloc((size_t)top + 2, sizeof *direct); /* number + 1 */
	size_t cap = 0, at = 0;
	for (size_t i = 0; i < ph->n; i++) {
		const flowspec *fs = &ph->v[i];
		fbase[i] = hash_double(fs->bytes) ^ capsim_mix64(hash_double(caps ? caps[i] : 0.0)) ^
			   capsim_mix64(hash_double(fs->mult) + 7);
		k->off[i] = (int)at;
		for (int j = 0; j < fs->n; j++) {
			int l = fs->links[j];
			int v;
			if (direct) {
				if (!direct[l])
					direct[l] = (int)k->nl + 1;
				v = direct[l] - 1;
			} else {
				v = capsim_hmap_get_or_put(&seen, (uint64_t)l, (int32_t)k->nl);
			}
			if ((size_t)v == k->nl) {
				if (k->nl == cap) {
					cap = cap ? 2 * cap : 256;
					k->phys = capsim_xrealloc(k->phys, cap * sizeof *k->phys);
				}
				k->phys[k->nl++] = l;
			}
			k->idx[at++] = v;
		}
	}
	/* the phase's tally of its paths is whole */
	CAPSIM_ASSERT(at == total);
	k->off[ph->n] = (int)at;
	k->nf = ph->n;
	free(direct);
	capsim_hmap_free(&seen);
}

/* Colour refinement of ph into k. Colours only split from round to round,
 * so once the flows have more than `limit` colours folding cannot pay and
 * the refinement stops: returns -1 (k freed); else 0. */
static int fold_classes(capsim_fabric *f, const phase *ph, const double *caps,
			size_t limit, classes *k)
{
	capsim_flownet *src = capsim_fabric_net(f);
	memset(k, 0, sizeof *k);
	uint64_t *fbase = capsim_xmalloc((ph->n ? ph->n : 1) * sizeof *fbase);
	number_links(ph, caps, k, fbase);
	size_t nl = k->nl, nf = k->nf;
	capsim_hmap colours = { 0 };
	uint64_t *lh = capsim_xmalloc((nl ? nl : 1) * sizeof *lh);
	uint64_t *fh = capsim_xmalloc((nf ? nf : 1) * sizeof *fh);
	k->lcol = capsim_xcalloc(nl ? nl : 1, sizeof *k->lcol);
	k->fcol = capsim_xcalloc(nf ? nf : 1, sizeof *k->fcol);
	for (size_t l = 0; l < nl; l++)
		lh[l] = capsim_mix64((uint64_t)capsim_fabric_link_kind(f, k->phys[l]) * 0x9e3779b97f4a7c15ULL ^
				     hash_double(capsim_flownet_link_cap(src, k->phys[l])));
	int rc = 0;
	k->nlc = densify(lh, nl, k->lcol, &colours);
	for (int round = 0; round < 32; round++) {
		/* flows: what they are and the colours along the path */
		for (size_t i = 0; i < nf; i++) {
			uint64_t h = fbase[i];
			for (int j = k->off[i]; j < k->off[i + 1]; j++)
				h = capsim_mix64(h * 31 + (uint64_t)k->lcol[k->idx[j]] + 1);
			fh[i] = h;
		}
		k->nfc = densify(fh, nf, k->fcol, &colours);
		if (k->nfc > limit) {
			rc = -1;
			break;
		}
		/* links: their colour and the multiset of flow colours on them */
		for (size_t l = 0; l < nl; l++)
			lh[l] = capsim_mix64((uint64_t)k->lcol[l] + 0x51ed27);
		for (size_t i = 0; i < nf; i++) {
			uint64_t w = capsim_mix64((uint64_t)k->fcol[i] * 2654435761ULL + 17);
			for (int j = k->off[i]; j < k->off[i + 1]; j++)
				lh[k->idx[j]] += w;
		}
		size_t before = k->nlc;
		k->nlc = densify(lh, nl, k->lcol, &colours);
		if (k->nlc == before)
			break;
	}
	free(lh);
	free(fh);
	free(fbase);
	capsim_hmap_free(&colours);
	if (rc < 0)
		classes_free(k);
	return rc;
}

/* the busiest link of a folded run */
typedef struct {
	int link;
	double bytes;
} busiest;

/* The busy time (bytes over capacity) of each of the n links of folded
 * network fn into busy; returns the longest. The busiest link is then, of
 * the classes within 1e-12 of it (as the unfolded scan ties), the lowest
 * link id. */
static double class_busy(const capsim_flownet *fn, size_t n, double *busy)
{
	double top = 0.0;
	for (size_t c = 0; c < n; c++) {
		double cap = capsim_flownet_link_cap(fn, (int)c);
		busy[c] = cap > 0 ? capsim_flownet_link_bytes(fn, (int)c) / cap : 0.0;
		if (busy[c] > top)
			top = busy[c];
	}
	return top;
}

/* b takes link id `link` of class c if c is among the busiest and the id
 * is lower than b's */
static void offer_busiest(const capsim_flownet *fn, const double *busy, double top,
			  int c, int link, busiest *b)
{
	if (top > 0 && busy[c] * (1 + 1e-12) >= top && (b->link < 0 || link < b->link)) {
		b->link = link;
		b->bytes = capsim_flownet_link_bytes(fn, c);
	}
}

/* 1 when the bytes a and b's flows move, their multiplicities counted,
 * agree to 1e-9 (summed in another order): a folded phase moves what the
 * phase does */
static int same_bytes(const phase *a, const phase *b)
{
	double sa = 0, sb = 0;
	for (size_t i = 0; i < a->n; i++)
		sa += a->v[i].bytes * a->v[i].mult;
	for (size_t i = 0; i < b->n; i++)
		sb += b->v[i].bytes * b->v[i].mult;
	return fabs(sa - sb) <= 1e-9 * fmax(fabs(sa), fabs(sb));
}

/* Run ph folded by k; returns its bandwidth time. b gets the busiest link,
 * and link_bytes (k->nl, or NULL) what each of the phase's links carried,
 * in k's dense numbering; budget and over as for run_phase_within, in
 * flow-events of the classes. */
static double run_classes(capsim_fabric *f, const phase *ph, const double *caps,
			  const classes *k, uint64_t *events, uint64_t *flows,
			  size_t *n_fclass, size_t *n_lclass, busiest *b, double *link_bytes,
			  double budget, int *over)
{
	capsim_flownet *src = capsim_fabric_net(f);
	size_t nlc = k->nlc, nfc = k->nfc;
	double *m = capsim_xcalloc(nlc ? nlc : 1, sizeof *m);
	double *cap = capsim_xcalloc(nlc ? nlc : 1, sizeof *cap);
	for (size_t l = 0; l < k->nl; l++) {
		m[k->lcol[l]] += 1;
		cap[k->lcol[l]] = capsim_flownet_link_cap(src, k->phys[l]);
	}
	capsim_flownet *fn = capsim_flownet_create();
	for (size_t c = 0; c < nlc; c++)
		capsim_flownet_add_link(fn, cap[c], m[c]);
	phase folded = { 0 };
	double *fcaps = capsim_xcalloc(nfc ? nfc : 1, sizeof *fcaps);
	int *first = capsim_xmalloc((nfc ? nfc : 1) * sizeof *first);
	for (size_t c = 0; c < nfc; c++)
		first[c] = -1;
	for (size_t i = 0; i < k->nf; i++) {
		int c = k->fcol[i];
		if (first[c] >= 0) {
			folded.v[first[c]].mult += ph->v[i].mult;
			continue;
		}
		flowspec *g = new_flow(&folded);
		first[c] = (int)(folded.n - 1);
		g->n = k->off[i + 1] - k->off[i];
		for (int j = 0; j < g->n; j++)
			g->links[j] = k->lcol[k->idx[k->off[i] + j]];
		g->bytes = ph->v[i].bytes;
		g->mult = ph->v[i].mult;
		g->origin = -1;
		fcaps[folded.n - 1] = caps ? caps[i] : 0.0;
	}
	CAPSIM_ASSERT(folded.n == nfc && same_bytes(&folded, ph));
	uint64_t before = *flows;
	double t = run_phase_within(fn, &folded, caps ? fcaps : NULL, events, flows, budget, over);
	*flows = before + ph->n;
	*n_fclass += folded.n;
	if (nlc > *n_lclass)
		*n_lclass = nlc;
	double top = class_busy(fn, nlc, m); /* m now: busy times */
	b->link = -1;
	b->bytes = 0.0;
	for (size_t l = 0; l < k->nl; l++) {
		offer_busiest(fn, m, top, k->lcol[l], k->phys[l], b);
		if (link_bytes)
			link_bytes[l] = capsim_flownet_link_bytes(fn, k->lcol[l]);
	}
	free(folded.v);
	free(fcaps);
	free(first);
	capsim_flownet_destroy(fn);
	free(m);
	free(cap);
	return t;
}

/* ---- all-to-all in classes ------------------------------------------------- */

/* the flows ph stands for: its multiplicities summed */
static double pairs_of(const phase *ph)
{
	double sum = 0;
	for (size_t i = 0; i < ph->n; i++)
		sum += ph->v[i].mult;
	return sum;
}

/* The ordered pairs of distinct nodes among the first `nodes`, filled in
 * order into leaves of per_leaf nodes and pods of pod_nodes, by where the
 * second sits from the first: out[0] the same leaf, out[1] the same pod,
 * out[2] beyond. With whole leaves and pods, nodes x (per_leaf - 1), and so
 * on; a last leaf or pod part full counts what it holds. */
static void node_pairs(int nodes, int per_leaf, int pod_nodes, double out[3])
{
	double leaf_sq = 0.0, pod_sq = 0.0;
	for (int first = 0; first < nodes; first += per_leaf) {
		double k = nodes - first < per_leaf ? nodes - first : per_leaf;
		leaf_sq += k * k;
	}
	for (int first = 0; first < nodes; first += pod_nodes) {
		double k = nodes - first < pod_nodes ? nodes - first : pod_nodes;
		pod_sq += k * k;
	}
	out[0] = leaf_sq - nodes;
	out[1] = pod_sq - leaf_sq;
	out[2] = (double)nodes * nodes - pod_sq;
}

/* per-flow rate caps of a phase: a flow may go no faster than NCCL's model
 * says its channel can (its bytes over NCCL's bandwidth time), so an idle
 * fabric gives NCCL's own time and a loaded one more; NULL when there is
 * no such bound (point-to-point, several phases, caps turned off) */
static double *nccl_caps(const phase *ph, double nccl_bw_s, const capsim_coll_req *r,
			 size_t phases)
{
	if (!(nccl_bw_s > 0) || r->no_nccl_caps || phases != 1)
		return NULL;
	double *caps = capsim_xcalloc(ph->n ? ph->n : 1, sizeof *caps);
	for (size_t i = 0; i < ph->n; i++)
		caps[i] = ph->v[i].bytes / nccl_bw_s;
	return caps;
}

/* Flows in classes over the link classes of capsim_fabric_link_class, each
 * class routed once from a representative pair and standing for `mult`
 * flows; a link class stands for as many links as the nodes use
 * (capsim_fabric_class_links). */
typedef struct {
	capsim_fabric *f;
	phase folded;
	capsim_hmap seen;
	size_t nl, capl;
	int *first, *key; /* a class's lowest link seen, and its key */
} class_net;

/* the link class of link l, numbered in k */
static int class_of(class_net *k, int l)
{
	int cls = capsim_fabric_link_class(k->f, l);
	int32_t v = capsim_hmap_get_or_put(&k->seen, (uint64_t)cls, (int32_t)k->nl);
	if ((size_t)v == k->nl) {
		if (k->nl == k->capl) {
			k->capl = k->capl ? 2 * k->capl : 64;
			k->first = capsim_xrealloc(k->first, k->capl * sizeof *k->first);
			k->key = capsim_xrealloc(k->key, k->capl * sizeof *k->key);
		}
		k->first[k->nl] = l;
		k->key[k->nl++] = cls;
	} else if (l < k->first[v]) {
		k->first[v] = l;
	}
	return v;
}

/* a class of mult flows of `bytes` each over the links of a route */
static void class_path(class_net *k, const int *links, size_t n, double bytes, double mult)
{
	flowspec *fs = new_flow(&k->folded);
	fs->n = (int)(n < MAX_PATH ? n : MAX_PATH);
	fs->bytes = bytes;
	fs->mult = mult;
	fs->origin = -1;
	for (int j = 0; j < fs->n; j++)
		fs->links[j] = class_of(k, links[j]);
}

/* a class of mult flows from GPU a to GPU b, routed once */
static void class_flow(class_net *k, int a, int b, uint64_t hash, double bytes, double mult)
{
	int links[MAX_PATH];
	double lat;
	size_t n = capsim_fabric_route(k->f, a, b, hash, links, MAX_PATH, &lat);
	class_path(k, links, n, bytes, mult);
}

/* Run k's classes on the first `nodes` nodes' links, each flow capped at
 * caps[i] where caps is not NULL; returns the bandwidth time, b the busiest
 * link; the counters of out as for stood_for flows. */
static double class_run(class_net *k, int nodes, double stood_for, const double *caps,
			const double *link_mult, uint64_t *events, uint64_t *flows,
			size_t *n_fclass, size_t *n_lclass, busiest *b)
{
	capsim_flownet *src = capsim_fabric_net(k->f);
	capsim_flownet *fn = capsim_flownet_create();
	for (size_t l = 0; l < k->nl; l++) {
		capsim_flownet_add_link(fn, capsim_flownet_link_cap(src, k->first[l]),
					link_mult ? link_mult[l] :
					(double)capsim_fabric_class_links(k->f, k->key[l], nodes));
		/* a lossy link's class: a class flow standing for more than one
		 * flow a link, or two classes on it, count as flows from
		 * several NICs (the flows of a class come from as many) */
		double eff = capsim_flownet_link_incast(src, k->first[l]);
		if (eff < 1.0)
			capsim_flownet_set_incast_links(fn, (int)l, 1, eff);
	}
	uint64_t before = *flows;
	double t = run_phase(fn, &k->folded, caps, events, flows);
	*flows = before + (uint64_t)stood_for;
	*n_fclass += k->folded.n;
	if (k->nl > *n_lclass)
		*n_lclass = k->nl;
	double *busy = capsim_xmalloc((k->nl ? k->nl : 1) * sizeof *busy);
	double top = class_busy(fn, k->nl, busy);
	b->link = -1;
	b->bytes = 0.0;
	for (size_t l = 0; l < k->nl; l++)
		offer_busiest(fn, busy, top, (int)l, k->first[l], b);
	free(busy);
	capsim_flownet_destroy(fn);
	free(k->folded.v);
	free(k->first);
	free(k->key);
	capsim_hmap_free(&k->seen);
	memset(k, 0, sizeof *k);
	return t;
}

/* the leaves and pods the first `nodes` nodes fill, as the classes see them:
 * a representative node of each kind of place from node 0 (the same leaf,
 * the same pod, beyond) */
static void class_places(capsim_fabric *f, int nodes, int *per_leaf, int *pod_nodes)
{
	capsim_fabric_shape sh;
	capsim_fabric_get_shape(f, &sh);
	*per_leaf = sh.tiers == 1 || nodes <= sh.per_leaf ? nodes : sh.per_leaf;
	*pod_nodes = sh.tiers == 3 && nodes > sh.pod_leaves * sh.per_leaf ?
			     sh.pod_leaves * sh.per_leaf : nodes;
}

/* An all-to-all among whole nodes that all see the same fabric
 * (capsim_fabric_symmetric), generated in classes without building its
 * n(n-1) pairs: a flow class for each source GPU's local index, destination
 * GPU's local index and where the destination node sits (the same node,
 * leaf, pod, or beyond), routed once from node 0 to a representative node;
 * its links' classes are their kind and local index, rail or plane
 * (capsim_fabric_link_class), as many links each as the nodes use. Under
 * D-mod-K with the fabric spreading destinations evenly this partition is
 * equitable, so the run is exact (test_alltoall_classes); under adaptive
 * routing it assumes the uplinks share a class's routes evenly, as the
 * least-loaded choice does to within one route; past the flow limit, on a
 * fabric its nodes do not see alike, it is the pairs' expected load
 * (A2A_EVEN). Returns the bandwidth time. */
static double run_alltoall_classes(capsim_fabric *f, const ctx *c, double bytes,
				   uint64_t *events, uint64_t *flows, size_t *n_fclass,
				   size_t *n_lclass, busiest *b)
{
	int G = c->G, nodes = c->n / G, per_leaf, pod_nodes;
	class_places(f, nodes, &per_leaf, &pod_nodes);
	/* where destinations sit from node 0: a representative, and the
	 * ordered pairs of nodes that sit so */
	const int rep[3] = { 1, per_leaf, pod_nodes };
	double count[3];
	node_pairs(nodes, per_leaf, pod_nodes, count);
	class_net k = { .f = f };
	for (int ga = 0; ga < G; ga++)
		for (int gb = 0; gb < G; gb++)
			for (int t = -1; t < 3; t++) {
				if (t < 0 ? ga == gb : count[t] <= 0)
					continue;
				int dst = (t < 0 ? 0 : rep[t]) * G + gb;
				class_flow(&k, ga, dst, c->seed, bytes,
					   t < 0 ? (double)nodes : count[t]);
			}
	/* the classes stand for every ordered pair of ranks once */
	CAPSIM_ASSERT(pairs_of(&k.folded) == (double)c->n * (c->n - 1));
	return class_run(&k, nodes, (double)c->n * (c->n - 1), NULL, NULL, events, flows,
			 n_fclass, n_lclass, b);
}

/* where node b sits from node a: 0 the same leaf, 1 the same pod, 2 beyond */
static int place_of(int a, int b, int per_leaf, int pod_nodes)
{
	if (a / per_leaf == b / per_leaf)
		return 0;
	return a / pod_nodes == b / pod_nodes ? 1 : 2;
}

/* flows between nodes counted by where they run (place_of) */
typedef struct {
	int G, per_leaf, pod_nodes;
	double flows[3];
} place_count;

static void place_sink(void *arg, int a, int b, double bytes, double mult, uint64_t hash)
{
	place_count *pc = arg;
	(void)bytes;
	(void)mult;
	(void)hash;
	pc->flows[place_of(a / pc->G, b / pc->G, pc->per_leaf, pc->pod_nodes)] += 1.0;
}

/* The census of a tree under ECMP or D-mod-K: every edge between nodes
 * routed (with the hash its flow would draw) and counted, in flows, onto
 * the switch links it crosses; nothing is simulated. */
typedef struct {
	capsim_fabric *f;
	double *load; /* flows on each link of the fabric */
} edge_census;

static int switch_kind(capsim_link_kind k)
{
	return k == CAPSIM_LINK_LEAF_UP || k == CAPSIM_LINK_SPINE_DOWN ||
	       k == CAPSIM_LINK_AGG_UP || k == CAPSIM_LINK_CORE_DOWN;
}

static void census_sink(void *arg, int a, int b, double bytes, double mult, uint64_t hash)
{
	edge_census *cs = arg;
	int links[MAX_PATH];
	double lat;
	(void)bytes;
	size_t n = capsim_fabric_route(cs->f, a, b, hash, links, MAX_PATH, &lat);
	for (size_t j = 0; j < n && j < MAX_PATH; j++)
		if (switch_kind(capsim_fabric_link_kind(cs->f, links[j])))
			cs->load[links[j]] += mult;
}

/* The multiplicity each class link of k takes under a census of the
 * trees' edges: a switch link class carrying W flows in k, whose busiest
 * link carries B of them in the census, stands for W / B links, so that
 * each carries what the busiest does (other classes: as many links as the
 * nodes use). */
static double *census_mult(const ctx *c, class_net *k, int nodes)
{
	capsim_fabric *f = c->f;
	size_t nl = capsim_flownet_n_links(capsim_fabric_net(f));
	edge_census cs = { f, capsim_xcalloc(nl ? nl : 1, sizeof *cs.load) };
	tree_edges(c, 1.0, 0, census_sink, &cs, NULL);
	double *busiest_of = capsim_xcalloc(k->nl ? k->nl : 1, sizeof *busiest_of);
	for (size_t l = 0; l < nl; l++) {
		if (cs.load[l] <= 0)
			continue;
		int32_t v = capsim_hmap_get(&k->seen, (uint64_t)capsim_fabric_link_class(f, (int)l));
		if (v >= 0 && cs.load[l] > busiest_of[v])
			busiest_of[v] = cs.load[l];
	}
	free(cs.load);
	double *w = capsim_xcalloc(k->nl ? k->nl : 1, sizeof *w);
	for (size_t i = 0; i < k->folded.n; i++)
		for (int j = 0; j < k->folded.v[i].n; j++)
			w[k->folded.v[i].links[j]] += k->folded.v[i].mult;
	double *mult = capsim_xmalloc((k->nl ? k->nl : 1) * sizeof *mult);
	for (size_t l = 0; l < k->nl; l++) {
		double m = (double)capsim_fabric_class_links(f, k->key[l], nodes);
		if (switch_kind(capsim_fabric_link_kind(f, k->first[l])) && busiest_of[l] > 0) {
			double even = w[l] / busiest_of[l];
			m = even < 1.0 ? 1.0 : even < m ? even : m;
		}
		mult[l] = m;
	}
	free(w);
	free(busiest_of);
	return mult;
}

/* NCCL's double binary tree (tree_edges), or NVLS inside the nodes and the
 * tree between them (nvls_phase), past the flow limit in classes: the tree's
 * edges counted by where they run (inside a leaf, a pod, beyond), each kind
 * routed once from node 0 and its load spread evenly over the links of each
 * kind in use; the chains inside the nodes, and NVLS's pushes and pulls, by
 * the GPU's local index. Under adaptive routing, which balances the uplinks
 * to within a route, that is the whole approximation; under ECMP and D-mod-K
 * (census = 1), whose hash or destination piles edges onto some links, each
 * switch link class is loaded as its busiest link is (census_mult): the
 * tree's time is its slowest edge's. An approximation either way, said in
 * the result. Returns the bandwidth time. */
static double run_tree_classes(capsim_fabric *f, const ctx *c, int algo,
			       const capsim_coll_req *r, double nccl_bw_s, int census,
			       uint64_t *events, uint64_t *flows, size_t *n_fclass,
			       size_t *n_lclass, busiest *b)
{
	double S = r->bytes;
	int G = c->G, nodes = c->nodes, per_leaf, pod_nodes;
	class_places(f, nodes, &per_leaf, &pod_nodes);
	const int rep[3] = { 1, per_leaf, pod_nodes };
	/* the trees' flows between nodes by place, one ring's (a channel's
	 * trees, each edge a flow up and one down) */
	ctx one = *c;
	one.nch = 1;
	place_count pc = { G, per_leaf, pod_nodes, { 0.0, 0.0, 0.0 } };
	tree_edges(&one, 1.0, 0, place_sink, &pc, NULL);
	const double *edges = pc.flows;
	class_net k = { .f = f };
	double per_ch = S / c->nch / c->eff, stood_for = 0.0;
	int d = distinct_rings(c), per = c->n < G ? c->n : G;
	for (int ring = 0; ring < d; ring++) {
		double mult = ring_mult(c, ring);
		int st = c->n < G ? 0 : channel_start(c, ring);
		for (int p = 0; algo == CAPSIM_ALGO_TREE && p + 1 < per; p++) {
			/* the chain inside each node, both ways */
			int a = (st + p) % per, bb = (st + p + 1) % per;
			class_flow(&k, a, bb, c->seed, per_ch, mult * nodes);
			class_flow(&k, bb, a, c->seed, per_ch, mult * nodes);
			stood_for += 2.0 * nodes;
		}
		for (int t = 0; t < 3; t++)
			if (edges[t] > 0) {
				class_flow(&k, st, rep[t] * G + st, c->seed, per_ch / 2,
					   mult * edges[t] / 2.0);
				class_flow(&k, rep[t] * G + st, st, c->seed, per_ch / 2,
					   mult * edges[t] / 2.0);
				stood_for += edges[t];
			}
	}
	if (algo == CAPSIM_ALGO_NVLS_TREE) {
		/* each GPU pushes into the switch and pulls the result
		 * (nvls_flows): its NVLink up and down, a node's GPUs alike */
		double nv = r->op == CAPSIM_COLL_ALLREDUCE ? S : S * (c->n - 1) / c->n;
		for (int g = 0; g < G; g++) {
			int links[MAX_PATH];
			double lat;
			int peer = g % G ? g - 1 : g + 1;
			size_t n = capsim_fabric_route(f, g, peer, 0, links, MAX_PATH, &lat);
			CAPSIM_ASSERT(n == 2);
			class_path(&k, &links[0], 1, nv / c->eff, nodes);
			n = capsim_fabric_route(f, peer, g, 0, links, MAX_PATH, &lat);
			class_path(&k, &links[1], 1, nv / c->eff, nodes);
			stood_for += 2.0 * nodes;
		}
	}
	/* NCCL's own bandwidth caps each class's flows as each flow's */
	double *caps = nccl_caps(&k.folded, nccl_bw_s, r, 1);
	double *mult = census ? census_mult(c, &k, nodes) : NULL;
	double t = class_run(&k, nodes, stood_for, caps, mult, events, flows, n_fclass,
			     n_lclass, b);
	free(mult);
	free(caps);
	return t;
}

/* network steps a collective takes in sequence (the nInter of NCCL's
 * latency model, reference nccl_model.md 1.4) */
static double net_steps(capsim_coll op, int algo, int nodes)
{
	int lg = 0;
	while ((2 << lg) <= nodes)
		lg++; /* floor(log2(nodes)) */
	switch (algo) {
	case CAPSIM_ALGO_RING:
	case CAPSIM_ALGO_HIERARCHICAL:
		return op == CAPSIM_COLL_ALLREDUCE ? 2.0 * (nodes - 1) : nodes - 1;
	case CAPSIM_ALGO_TREE:
	case CAPSIM_ALGO_NVLS_TREE:
		return 2.0 * lg;
	case CAPSIM_ALGO_PAT:
		return lg;
	case CAPSIM_ALGO_P2P:
		return 1.0;
	default: /* CollNet, NVLS across nodes: up and down once */
		return 2.0;
	}
}

/* ---- choosing and running ------------------------------------------------------ */

static const char *file_of(const capsim_scenario *s)
{
	return s->file[0] ? s->file : "scenario";
}

/* protocol efficiency on the wire: LL moves 4 bytes of data per 8-byte
 * line (data + flag), LL128 120 of every 128 bytes (NCCL src/include/
 * device.h: NCCL_LL128_LINESIZE 128, one 8-byte flag per line), Simple all */
static double proto_eff(int proto)
{
	switch (proto) {
	case CAPSIM_PROTO_LL: return 0.5;
	case CAPSIM_PROTO_LL128: return 120.0 / 128.0;
	default: return 1.0;
	}
}

/* point-to-point latency: NCCL's ring step for Simple, the base plus one
 * hop's hardware latency (reference nccl_model.md 1.2-1.3: 8.4 us base;
 * NVLink 3.4 us, network 14.0 us) */
double capsim_p2p_latency_s(int intra)
{
	return (8.4 + (intra ? 3.4 : 14.0)) * 1e-6;
}


/* what NCCL's view of the hardware chose for a collective, and what it
 * predicts */
typedef struct {
	capsim_nccl_topo topo; /* NCCL's graphs of the ranks */
	int algo, proto, nch;
	double lat_s;       /* the latency the collective pays */
	double nccl_bw_s;   /* NCCL's bandwidth time, or -1 */
	double nccl_time_s; /* NCCL's predicted time, or -1 */
} choice;

/* the request against the fabric: 0, or -1 with the reason in d */
static int check_request(capsim_fabric *f, const capsim_scenario *s, const capsim_coll_req *r,
			 capsim_diags *d)
{
	if (r->ranks < 1 || r->ranks > capsim_fabric_gpus(f)) {
		capsim_diags_add(d, file_of(s), s->fabric_line,
				 "collective: %d ranks, but the cluster has %d GPUs",
				 r->ranks, capsim_fabric_gpus(f));
		return -1;
	}
	if (!(r->bytes >= 0)) {
		capsim_diags_add(d, file_of(s), s->fabric_line, "collective: negative size");
		return -1;
	}
	return 0;
}

/* NCCL's graphs for c's ranks into ch->topo: 0, or -1 with the reason in d */
static int search_topo(const capsim_scenario *s, const ctx *c, choice *ch, capsim_diags *d)
{
	capsim_nccl_hw hw;
	capsim_collective_nccl_hw(s, &hw);
	memset(&ch->topo, 0, sizeof ch->topo);
	int domain = hw.gpus_per_node;
	int nccl_nodes = (c->n + domain - 1) / domain;
	if (capsim_nccl_search(&hw, c->n, nccl_nodes, &ch->topo) < 0) {
		capsim_diags_add(d, file_of(s), s->fabric_line,
				 "collective: NCCL's topology search found no graph "
				 "for %d ranks on %d nodes",
				 c->n, nccl_nodes);
		return -1;
	}
	capsim_nccl_topo *topo = &ch->topo;
	topo->nvls_enable = s->has_nvswitch && s->nvswitch.nvls && hw.arch >= CAPSIM_ARCH_HOPPER;
	topo->collnet_enable = s->sharp;
	topo->pat_enable = 1;
	topo->ll128_enable = hw.nvlink_bw_per_gpu > 0;
	topo->cpu_amd = 0;
	return 0;
}

/* the channels of NCCL's ring graph, at least one */
static int ring_channels(const capsim_nccl_topo *topo)
{
	return topo->graph[CAPSIM_ALGO_RING].n_channels > 0 ?
		       topo->graph[CAPSIM_ALGO_RING].n_channels : 1;
}

/* all-to-all and send/receive: point-to-point, Simple unless asked */
static int choose_p2p(const capsim_scenario *s, const capsim_coll_req *r, const ctx *c,
		      choice *ch, capsim_diags *d)
{
	if (ch->algo >= 0 && ch->algo != CAPSIM_ALGO_P2P) {
		capsim_diags_add(d, file_of(s), s->fabric_line,
				 "collective: %s runs point-to-point; algorithm "
				 "'%s' does not apply",
				 capsim_coll_names[r->op], capsim_collective_algo_name(ch->algo));
		return -1;
	}
	ch->algo = CAPSIM_ALGO_P2P;
	ch->proto = ch->proto >= 0 ? ch->proto : CAPSIM_PROTO_SIMPLE;
	if (!ch->nch)
		ch->nch = ring_channels(&ch->topo);
	ch->lat_s = capsim_p2p_latency_s(c->nodes == 1);
	return 0;
}

/* the hierarchical all-reduce: whole nodes, at least two */
static int choose_hierarchical(const capsim_scenario *s, const capsim_coll_req *r,
			       const ctx *c, choice *ch, capsim_diags *d)
{
	if (r->op != CAPSIM_COLL_ALLREDUCE || c->nodes < 2 || c->n % c->G) {
		capsim_diags_add(d, file_of(s), s->fabric_line,
				 "collective: the hierarchical algorithm needs an "
				 "all-reduce over whole nodes, at least two");
		return -1;
	}
	ch->proto = ch->proto >= 0 ? ch->proto : CAPSIM_PROTO_SIMPLE;
	if (!ch->nch)
		ch->nch = ring_channels(&ch->topo);
	return 0;
}

/* NCCL's own choice among the algorithms and protocols asked for */
static int choose_by_nccl(const capsim_scenario *s, const capsim_coll_req *r, const ctx *c,
			  choice *ch, capsim_diags *d)
{
	int algo = ch->algo, proto = ch->proto;
	unsigned am = algo >= 0 ? 1u << algo : ~0u;
	unsigned pm = proto >= 0 ? 1u << proto : ~0u;
	capsim_nccl_choice nc;
	if (capsim_nccl_select(&ch->topo, r->op, r->bytes, am, pm, &nc) < 0) {
		capsim_diags_add(d, file_of(s), s->fabric_line,
				 "collective: %s%s%s%s does not apply to %s on %d "
				 "ranks over %d nodes here",
				 algo >= 0 ? "algorithm " : "no algorithm",
				 algo >= 0 ? capsim_collective_algo_name(algo) : "",
				 proto >= 0 ? " with protocol " : "",
				 proto >= 0 ? capsim_proto_names[proto] : "",
				 capsim_coll_names[r->op], c->n, c->nodes);
		return -1;
	}
	ch->algo = (int)nc.algo;
	ch->proto = (int)nc.proto;
	if (!ch->nch)
		ch->nch = nc.n_channels > 0 ? nc.n_channels : 1;
	ch->lat_s = nc.lat_us * 1e-6;
	ch->nccl_time_s = nc.time_us * 1e-6;
	ch->nccl_bw_s = (nc.time_us - nc.lat_us) * 1e-6;
	return 0;
}

/* NCCL's view and choice for the request: the algorithm, protocol,
 * channels and latency into ch; 0, or -1 with the reason in d */
static int choose(const capsim_scenario *s, const capsim_coll_req *r, const ctx *c,
		  choice *ch, capsim_diags *d)
{
	ch->algo = r->algo;
	ch->proto = r->proto;
	ch->nch = r->channels;
	ch->lat_s = 0.0;
	ch->nccl_bw_s = -1.0;
	ch->nccl_time_s = -1.0;
	if (search_topo(s, c, ch, d) < 0)
		return -1;
	int p2p = r->op == CAPSIM_COLL_ALLTOALL || r->op == CAPSIM_COLL_SENDRECV;
	int rc = p2p ? choose_p2p(s, r, c, ch, d) :
		 ch->algo == CAPSIM_ALGO_HIERARCHICAL ? choose_hierarchical(s, r, c, ch, d) :
							  choose_by_nccl(s, r, c, ch, d);
	if (rc < 0)
		return -1;
	CAPSIM_ASSERT(ch->proto >= 0 && ch->proto < CAPSIM_PROTO__COUNT && ch->nch >= 1);
	if (s->transport == CAPSIM_NET_TCP && c->nodes > 1) {
		/* every network step pays the socket path's extra latency */
		double steps = net_steps(r->op, ch->algo, c->nodes);
		ch->lat_s += steps * s->tcp_latency_s;
		if (ch->nccl_time_s >= 0)
			ch->nccl_time_s += steps * s->tcp_latency_s;
	}
	return 0;
}

/* How an all-to-all runs: pair by pair (or not an all-to-all); in classes
 * that are exact, among whole, alike nodes under D-mod-K always and under
 * adaptive routing past the flow limit; or in classes as an approximation
 * past the flow limit otherwise */
enum { A2A_PAIRS = 0, A2A_CLASSES, A2A_EVEN };

static int alltoall_in_classes(capsim_fabric *f, const capsim_scenario *s,
			       const capsim_coll_req *r, const ctx *c, double flows)
{
	int n = c->n, G = c->G;
	if (!(r->op == CAPSIM_COLL_ALLTOALL && n > 1 && r->bytes > 0 && r->fold != 0 &&
	      can_fold(f) && n % G == 0))
		return A2A_PAIRS;
	int dmodk = s->routing == CAPSIM_ROUTING_DETERMINISTIC, over = flows > s->flow_limit;
	if (s->routing != CAPSIM_ROUTING_ECMP && (dmodk || over) &&
	    capsim_fabric_symmetric(f, n / G, dmodk))
		return A2A_CLASSES;
	return over && capsim_fabric_in_order(f, n / G) ? A2A_EVEN : A2A_PAIRS;
}

/* What an all-to-all past workload.flow-limit is simulated as where its
 * classes are not exact (A2A_EVEN): said in the result. */
static const char A2A_EVEN_TEXT[] =
	"all-to-all: more pairs than workload.flow-limit on a fabric that its nodes do not all "
	"see alike (ECMP's hash, D-mod-K picks that do not spread evenly, or leaves and pods "
	"filled unevenly), so each pair's traffic is taken as its expected load, spread evenly "
	"over the links of each kind in use (collisions and the fuller leaves' extra load not "
	"counted); raise the limit to route every pair";

/* Whether a tree (or NVLS and a tree) past the flow limit runs in classes
 * (run_tree_classes): whole nodes filling the leaves in order, one NVLink
 * domain a node, on an idle, contiguous fabric, lossy or not (a class link
 * carrying more than a flow a link counts as several NICs': class_run). */
static int tree_in_classes(capsim_fabric *f, const capsim_coll_req *r, const ctx *c, int algo)
{
	return (algo == CAPSIM_ALGO_TREE || (algo == CAPSIM_ALGO_NVLS_TREE && c->G > 1)) &&
	       r->fold != 0 && can_quotient(f) && c->G == capsim_fabric_gpus_per_node(f) &&
	       c->n == c->nodes * c->G && capsim_fabric_in_order(f, c->nodes);
}

/* How a tree runs in classes, evenly (adaptive routing) or from the census
 * (ECMP, D-mod-K: under either a tree puts few flows on a link and the hash
 * or the destination piles some up; spread evenly, the classes were 44%
 * short of every flow under ECMP at 32 nodes and 9% under D-mod-K on 3
 * tiers), each after why it does */
#define TREE_EVEN \
	"the trees' edges are counted by where they run (inside a leaf, a pod, beyond) and " \
	"each kind's load is spread evenly over the links of that kind in use (a tree's " \
	"uneven loads not counted); raise the limit to simulate every flow"
#define TREE_CENSUS \
	"the trees' edges are counted by where they run (inside a leaf, a pod, beyond), every " \
	"edge routed and counted but not simulated, and each kind of switch link loaded as " \
	"its busiest link is (a tree finishes with its slowest edge); raise the limit to " \
	"simulate every flow"
#define TREE_PAST_LIMIT "tree: more flows than workload.flow-limit, so "
#define TREE_PAST_WORK \
	"tree: its flow-by-flow run passed the work workload.flow-limit allows (its flows " \
	"end apart, each end re-solving the rest), so "

static const char TREE_EVEN_TEXT[] = TREE_PAST_LIMIT TREE_EVEN;
static const char TREE_CENSUS_TEXT[] = TREE_PAST_LIMIT TREE_CENSUS;
static const char TREE_WORK_EVEN_TEXT[] = TREE_PAST_WORK TREE_EVEN;
static const char TREE_WORK_CENSUS_TEXT[] = TREE_PAST_WORK TREE_CENSUS;

/* The work a tree's flow-by-flow run may take before its classes take over:
 * flow-events (each end of a flow advances and re-solves the flows still
 * running) per flow of workload.flow-limit. Under ECMP a tree's flows end
 * apart, hundreds of ends at 8,192 nodes, so its work grows as the square
 * of its flows (16,384 nodes of one rail: 64 s; bounded, 4.7 s); a run of
 * a few ends (D-mod-K, adaptive routing) stays well inside. */
#define WORK_PER_FLOW 2.0

/* Plans whose every phase moves flows of one size: rings (and their
 * chains), PAT's steps, send-recv, all-to-all, the hierarchical
 * all-reduce's three phases, and NCCL's trees between nodes of one rank
 * each (where a node holds a chain of ranks, the chain's edges move twice
 * a tree edge's bytes). For them the census is the max-min run's time
 * exactly on a lossless fabric; CollNet and NVLS mix sizes. */
static int census_alike(const ctx *c, int algo)
{
	int chains = (c->n < c->G ? c->n : c->G) > 1;
	return algo == CAPSIM_ALGO_RING || algo == CAPSIM_ALGO_PAT || algo == CAPSIM_ALGO_P2P ||
	       algo == CAPSIM_ALGO_HIERARCHICAL || (algo == CAPSIM_ALGO_TREE && !chains);
}

/* Whether the census can give a plan's time exactly on this fabric: a
 * lossless one with nothing else running on it (the census counts the
 * plan's flows alone) */
static int census_lossless(capsim_fabric *f)
{
	return !capsim_fabric_lossy(f) && capsim_flownet_active(capsim_fabric_net(f)) == 0;
}

/* Whether the census gives this plan's time exactly: on an idle lossless
 * fabric where no link carries flows of two sizes (count_plan tells), and
 * on an idle lossy one for plans of alike flows (census_alike). There a
 * link's origins only leave as its flows end, so its capacity only grows;
 * the busiest link's flows, all of one size, share it equally from the
 * start and end together, its origins with them, so that it stays at the
 * share it started at (test_census_lossy holds it to every flow
 * simulated). */
static int census_exact_for(capsim_fabric *f, const ctx *c, int algo)
{
	return capsim_flownet_active(capsim_fabric_net(f)) == 0 &&
	       (!capsim_fabric_lossy(f) || census_alike(c, algo));
}

/* What a plan past workload.flow-limit that nothing folds is taken as
 * (census, above): said in the result */
#define CENSUS \
	"more flows than workload.flow-limit and no symmetry to fold them by (a lossy " \
	"fabric's all-to-all, scattered nodes, NVLink domains across nodes), so every flow " \
	"is routed and counted on the links it crosses, not simulated, and each phase takes " \
	"its busiest link's busy time: the max-min time where no link carries flows of two " \
	"sizes, a lower bound where one does, and on a lossy fabric a link of flows from " \
	"several NICs at its incast share throughout"
static const char CENSUS_TEXT[] = CENSUS "; raise the limit to simulate every flow";
static const char CENSUS_SAMPLED_TEXT[] =
	CENSUS "; past " CENSUS_ROUTES_TEXT " the all-to-all's pairs are sampled: of its "
	"shifts (rank i to rank i + d), those that keep flows inside a node whole, the rest "
	"as blocks at the middle of equal strata, each shift standing for its stratum's (a "
	"small sample overstates the busiest switch link); raise the limit to simulate "
	"every flow";

/* What a ring or PAT past workload.flow-limit is simulated as under ECMP,
 * whose hash gives every flow a path of its own, so that blocks of nodes
 * are not alike: said in the result. */
static const char ECMP_BLOCK[] =
	"ECMP: more flows than workload.flow-limit, so the first block of nodes' hash draws "
	"stand for every block's (each block's collisions as the first's); raise the limit "
	"to hash every flow";

/* the hierarchical all-reduce's three phases: intra reduce-scatter, inter
 * all-reduce per local rank, intra all-gather; NCCL's ring latency for
 * each sub-collective */
static void hierarchical_phases(plan *p, const ctx *c, const choice *ch, double S)
{
	capsim_fabric *f = c->f;
	int G = c->G, proto = ch->proto;
	capsim_nccl_topo sub = ch->topo;
	double l1 = 0, l2 = 0;
	double lat[CAPSIM_ALGO__COUNT][CAPSIM_PROTO__COUNT];
	double bw[CAPSIM_ALGO__COUNT][CAPSIM_PROTO__COUNT];
	sub.n_ranks = G;
	sub.n_nodes = 1;
	capsim_nccl_tune(&sub, CAPSIM_COLL_REDUCESCATTER, lat, bw);
	l1 = lat[CAPSIM_ALGO_RING][proto] * 1e-6;
	sub.n_ranks = c->nodes;
	sub.n_nodes = c->nodes;
	capsim_nccl_tune(&sub, CAPSIM_COLL_ALLREDUCE, lat, bw);
	l2 = lat[CAPSIM_ALGO_RING][proto] * 1e-6;
	phase *ph = new_phase(p, l1);
	for (int node = 0; node < c->nodes; node++) {
		for (int g = 0; g < G; g++)
			xfer(ph, f, node * G + g, node * G + (g + 1) % G,
			     S * (G - 1) / G / c->eff, 1.0, 0);
	}
	ph = new_phase(p, l2);
	for (int g = 0; g < G; g++)
		for (int node = 0; node < c->nodes; node++)
			xfer(ph, f, node * G + g, ((node + 1) % c->nodes) * G + g,
			     2.0 * (c->nodes - 1) / c->nodes * S / G / c->eff, 1.0,
			     c->seed + (uint64_t)node * 131 + (uint64_t)g);
	ph = new_phase(p, l1);
	for (int node = 0; node < c->nodes; node++)
		for (int g = 0; g < G; g++)
			xfer(ph, f, node * G + g, node * G + (g + 1) % G,
			     S * (G - 1) / G / c->eff, 1.0, 0);
}

/* the ring's one phase: every edge carries what op moves */
static void ring_phase(plan *p, const ctx *c, capsim_coll op, double S, double lat_s)
{
	int n = c->n;
	phase *ph = new_phase(p, lat_s);
	switch (op) {
	case CAPSIM_COLL_ALLREDUCE:
		ring_flows(ph, c, 2.0 * (n - 1) / n * S, 0);
		break;
	case CAPSIM_COLL_ALLGATHER:
	case CAPSIM_COLL_REDUCESCATTER:
		ring_flows(ph, c, (double)(n - 1) / n * S, 0);
		break;
	default: /* broadcast, reduce: a pipelined chain */
		ring_flows(ph, c, S, 1);
		break;
	}
}

/* NVLS inside each node, and between nodes SHARP (NVLS) or a tree (NVLS
 * tree): 0, or -1 when the ranks are not in NVLink domains of two GPUs */
static int nvls_phase(plan *p, const ctx *c, capsim_coll op, int algo, double S,
		      double lat_s)
{
	int n = c->n;
	phase *ph = new_phase(p, lat_s);
	double nv = S;
	if (op != CAPSIM_COLL_ALLREDUCE)
		nv = S * (n - 1) / n; /* all-gather / reduce-scatter */
	if (c->nodes > 1) {
		/* inside each node NVLS, between nodes SHARP or a tree */
		if (algo == CAPSIM_ALGO_NVLS)
			collnet_flows(ph, c, S, 0);
		else
			tree_flows(ph, c, S, 0);
	}
	return nvls_flows(ph, c, c->f, nv);
}

/* The blocks a plan runs on (On one block, above): rings and PAT, whose
 * flows go from each rank to one a fixed distance on, a send-recv, the
 * hierarchical all-reduce (rings inside each node and over the nodes),
 * CollNet and NVLS between nodes (inside each node and to its switch), on
 * whole nodes of a fabric with translation symmetry, under D-mod-K or
 * adaptive routing (ECMP's hash does not move with the ranks; CollNet's and
 * NVLS's legs take no hash), on an idle,
 * contiguous fabric, lossy or not (can_quotient), unless fold is 0. Zero:
 * none. */
static quotient quotient_of(capsim_fabric *f, const capsim_scenario *s,
			    const capsim_coll_req *r, const ctx *c, int algo, int ecmp)
{
	quotient q = { 0, 0, 0 };
	/* a ring's all-reduce, all-gather and reduce-scatter close the ring;
	 * its broadcast and reduce are a chain, broken at the last rank */
	int ring = algo == CAPSIM_ALGO_RING &&
		   (r->op == CAPSIM_COLL_ALLREDUCE || r->op == CAPSIM_COLL_ALLGATHER ||
		    r->op == CAPSIM_COLL_REDUCESCATTER);
	/* CollNet's flows, and NVLS's between nodes (SHARP), stay inside each
	 * node and on its NICs' legs to the switch, which no hash picks */
	int local = algo == CAPSIM_ALGO_COLLNET_DIRECT || algo == CAPSIM_ALGO_COLLNET_CHAIN ||
		    algo == CAPSIM_ALGO_NVLS;
	int shift = ring || (algo == CAPSIM_ALGO_PAT && c->G == 1) ||
		    (algo == CAPSIM_ALGO_P2P && r->op == CAPSIM_COLL_SENDRECV) ||
		    algo == CAPSIM_ALGO_HIERARCHICAL || local;
	if (!shift || r->fold == 0 || !can_quotient(f) ||
	    (s->routing == CAPSIM_ROUTING_ECMP && !ecmp && !local) ||
	    c->G != capsim_fabric_gpus_per_node(f) || c->n != c->nodes * c->G)
		return q;
	int b = capsim_fabric_translation_block(f, c->nodes,
						s->routing == CAPSIM_ROUTING_DETERMINISTIC);
	if (b <= 0)
		return q;
	q.nodes = b;
	q.gpus = b * c->G;
	q.copies = c->nodes / b;
	CAPSIM_ASSERT(q.copies >= 2 && q.copies * b == c->nodes);
	return q;
}

/* an all-to-all's flow from rank i to rank j */
static void alltoall_pair(phase *ph, const ctx *c, int i, int j, double bytes)
{
	xfer(ph, c->f, i, j, bytes, 1.0, c->seed + (uint64_t)i * (uint64_t)c->n + (uint64_t)j);
}

/* An all-to-all's n(n-1) pairs, each of `bytes`. In a census past its
 * routes, the n - 1 shifts (rank i to rank i + d) in two parts: those that
 * keep some flows inside a node (d < G, d > n - G) whole, and of the rest,
 * where every flow leaves its node, blocks of G consecutive shifts, one at
 * the middle of each of equal strata, each shift standing for its
 * stratum's. A shift is a permutation, and a block of G meets every local
 * index of the destinations once, so each NIC's load is the whole's (to
 * within a shift where G does not divide the strata); the switch links'
 * are the sample's. */
static void alltoall_flows(phase *ph, const ctx *c, double bytes)
{
	int n = c->n, G = c->G;
	link_census *cs = ph->cs;
	double pairs = (double)n * (n - 1);
	int mid = n - 2 * G + 1; /* shifts G .. n - G */
	double edge_routes = 2.0 * (G - 1) * n;
	int blocks = cs ? (int)fmin((cs->routes - edge_routes) / ((double)n * G), (double)INT_MAX) : 0;
	if (blocks < 1)
		blocks = 1;
	if (!cs || pairs <= cs->routes || 2.0 * blocks * G > mid) {
		for (int i = 0; i < n; i++)
			for (int j = 0; j < n; j++)
				if (i != j)
					alltoall_pair(ph, c, i, j, bytes);
		return;
	}
	cs->sampled = 1;
	for (int d = 1; d < G; d++)
		for (int i = 0; i < n; i++) {
			alltoall_pair(ph, c, i, (i + d) % n, bytes);
			alltoall_pair(ph, c, i, (i + n - d) % n, bytes);
		}
	cs->weight = (double)mid / ((double)blocks * G);
	double stratum = (double)mid / blocks;
	for (int k = 0; k < blocks; k++) {
		int d0 = G + (int)((k + 0.5) * stratum - 0.5 * G);
		if (d0 < G)
			d0 = G;
		if (d0 > n - 2 * G + 1)
			d0 = n - 2 * G + 1;
		for (int d = d0; d < d0 + G; d++)
			for (int i = 0; i < n; i++)
				alltoall_pair(ph, c, i, (i + d) % n, bytes);
	}
	cs->weight = 1.0;
}

/* The flows of the collective, phase by phase, into p (an all-to-all in
 * classes has none: it runs apart). 0, or -1 with the reason in d. */
static int build_plan(plan *p, const ctx *c, const capsim_scenario *s, const capsim_coll_req *r,
		      const choice *ch, int apart, capsim_diags *d)
{
	capsim_fabric *f = c->f;
	int n = c->n, algo = ch->algo;
	double S = r->bytes, lat_s = ch->lat_s;
	if (n == 1 || S == 0 || apart)
		return 0; /* nothing moves, or it moves in classes apart */
	if (algo == CAPSIM_ALGO_P2P && r->op == CAPSIM_COLL_SENDRECV) {
		phase *ph = new_phase(p, lat_s);
		for (int i = 0; i < n; i++)
			xfer(ph, f, i, (i + 1) % n, S / c->eff, 1.0, c->seed + (uint64_t)i);
	} else if (algo == CAPSIM_ALGO_P2P) {
		alltoall_flows(new_phase(p, lat_s), c, S / n / c->eff);
	} else if (algo == CAPSIM_ALGO_HIERARCHICAL) {
		hierarchical_phases(p, c, ch, S);
	} else if (algo == CAPSIM_ALGO_RING) {
		ring_phase(p, c, r->op, S, lat_s);
	} else if (algo == CAPSIM_ALGO_TREE) {
		tree_flows(new_phase(p, lat_s), c, S, 1);
	} else if (algo == CAPSIM_ALGO_NVLS || algo == CAPSIM_ALGO_NVLS_TREE) {
		if (nvls_phase(p, c, r->op, algo, S, lat_s) < 0) {
			capsim_diags_add(d, file_of(s), s->fabric_line,
					 "collective: NVLS needs the ranks in NVLink "
					 "domains of at least two GPUs");
			return -1;
		}
	} else if (algo == CAPSIM_ALGO_COLLNET_DIRECT || algo == CAPSIM_ALGO_COLLNET_CHAIN) {
		collnet_flows(new_phase(p, lat_s), c, S, 1);
	} else if (algo == CAPSIM_ALGO_PAT) {
		pat_phases(p, c, S, lat_s);
	}
	return 0;
}

/* Whether a plan may be counted on copies of part of it (the trees'
 * blocks, a ring's leaves): folding left on, its ranks whole nodes of a
 * contiguous, idle, lossless fabric */
static int counts_on_copies(capsim_fabric *f, const capsim_coll_req *r, const ctx *c)
{
	return r->fold != 0 && can_quotient(f) && census_lossless(f) &&
	       c->G == capsim_fabric_gpus_per_node(f) && c->n == c->nodes * c->G;
}

/* The block of nodes NCCL's trees are counted on (count_tree_blocks): the
 * fabric's translation block (a leaf's nodes, a pod's), where it is a
 * power of two, for the tree algorithm over whole nodes of a contiguous,
 * idle, lossless fabric under D-mod-K or adaptive routing (ECMP's hash does
 * not move with the nodes). 0: none. */
static int tree_block_of(capsim_fabric *f, const capsim_scenario *s, const capsim_coll_req *r,
			 const ctx *c, int algo)
{
	if (algo != CAPSIM_ALGO_TREE || s->routing == CAPSIM_ROUTING_ECMP ||
	    !counts_on_copies(f, r, c))
		return 0;
	int b = capsim_fabric_translation_block(f, c->nodes,
						s->routing == CAPSIM_ROUTING_DETERMINISTIC);
	return b >= 2 && (b & (b - 1)) == 0 ? b : 0;
}

/* link l carrying `load` becomes cs's busiest where its busy time passes
 * *best (busier) */
static void note_busier(link_census *cs, int l, double load, double *best)
{
	double cap = capsim_flownet_link_cap(cs->net, l);
	double busy = cap > 0 ? load / cap : 0.0;
	if (busier(busy, l, *best, cs->top_link)) {
		*best = busy;
		cs->top_link = l;
		cs->top_bytes = load;
	}
}

/* A one-phase plan counted at two levels, closed: `outer`, the plan's
 * census, on the links its flows cross (or their orbits on one block);
 * `inner`, flows that each stand for `copies` alike ones in the other
 * blocks of `block` nodes, their links taken to their orbits under that
 * translation (capsim_fabric_link_orbit). A link carries its orbit's inner
 * load and its own outer load, so the busiest is the busiest inner orbit,
 * or a link of the outer census with its orbit's inner load added (an
 * orbit with no outer load on any of its links carries its inner load
 * alone, which the first maximum covers; one with outer load everywhere is
 * at least as loaded as the first maximum). The phase's busy time, the
 * busiest link and the flows stood for go to outer; inner is emptied. */
static void close_two_levels(link_census *outer, link_census *inner, phase *ph, capsim_fabric *f,
			     int block, double copies)
{
	CAPSIM_ASSERT(!outer->mark && !inner->mark); /* their links listed */
	CAPSIM_ASSERT(!outer->total && !outer->origin && !inner->origin);
	double best = 0.0;
	outer->top_link = -1;
	outer->top_bytes = 0.0;
	for (size_t i = 0; i < inner->nt; i++) {
		int l = inner->touched[i];
		note_busier(outer, l, census_load(inner, l), &best);
	}
	/* the kinds of link inner loaded: only theirs have orbits to look up */
	unsigned kinds = 0;
	for (size_t i = 0; i < inner->nt; i++)
		kinds |= 1u << capsim_fabric_link_kind(f, inner->touched[i]);
	for (size_t i = 0; i < outer->nt; i++) {
		int l = outer->touched[i];
		long at = census_find(outer, l), io = -1;
		if (kinds & (1u << capsim_fabric_link_kind(f, l)))
			io = census_find(inner, capsim_fabric_link_orbit(f, l, block));
		double load = outer->load[at] + (io >= 0 ? inner->load[io] : 0.0);
		if (inner->size && io >= 0 && inner->size[io] != 0.0 &&
		    fabs(inner->size[io] - outer->size[at]) > 1e-12 * outer->size[at])
			outer->mixed = 1;
		note_busier(outer, l, load, &best);
		outer->load[at] = 0.0;
		if (outer->fresh)
			clear_bit(outer->fresh, l);
		if (outer->size)
			outer->size[at] = 0.0;
	}
	outer->nt = 0;
	ph->busy_s = best;
	outer->mixed |= inner->mixed;
	outer->stood_for += inner->stood_for * copies;
	for (size_t i = 0; i < inner->nt; i++) {
		long at = census_find(inner, inner->touched[i]);
		inner->load[at] = 0.0;
		if (inner->fresh)
			clear_bit(inner->fresh, inner->touched[i]);
		if (inner->size)
			inner->size[at] = 0.0;
	}
	inner->nt = 0;
}

/* NCCL's trees over `block`-node blocks (tree_block_of), counted into cs
 * as count_plan counts a plan: the first block's chains and the edges every
 * block repeats (tree_edge_repeats) routed once, on the first block, for
 * all of them; the edges between blocks, and those at a block's start and
 * middle, two a tree and block, routed one by one. Over 524,288 nodes of
 * one GPU in pods of 4,096: about 17,000 routes for 2.1 million flows. The
 * same time as every flow simulated (test_census_tree_blocks). */
static void count_tree_blocks(plan *p, link_census *cs, capsim_fabric *f, const ctx *c,
			      const capsim_coll_req *r, const choice *ch, int block)
{
	/* whole blocks of a power of two nodes: an even count, so the second
	 * tree mirrors the first (tree_edge_repeats holds for both) */
	CAPSIM_ASSERT(block >= 2 && c->nodes % block == 0 && c->nodes / block >= 2);
	int sizes = !census_alike(c, ch->algo);
	link_census first;
	/* the edges between blocks are few and spread over the fabric */
	census_init(cs, capsim_fabric_net(f), 0, sizes, CENSUS_SPARSE);
	census_init(&first, capsim_fabric_net(f), 0, sizes, CENSUS_BY_ID);
	p->cs = cs;
	phase *ph = new_phase(p, ch->lat_s);
	phase firsts = { .cs = &first, .top_link = -1,
			 .q = { block * c->G, block, c->nodes / block } };
	phase_arg in = { &firsts, f }, out = { ph, f };
	tree_block tb = { block, phase_sink, &out };
	tree_edges(c, r->bytes, 1, phase_sink, &in, &tb);
	close_two_levels(cs, &first, ph, f, block, c->nodes / block);
	cs->blocks = c->nodes / block;
	census_free(&first);
}

/* The leaf a closed ring is counted on, inside its block (or the whole
 * fabric): its flows inside a leaf repeat in every leaf (a ring steps
 * from each node to the next), and go nowhere a routing picks, so the
 * first leaf's stand for every leaf's, on any routing; the rest are
 * counted as before. Where the ranks fill whole leaves of a contiguous,
 * idle, lossless fabric of two tiers or more, and a block (or the fabric)
 * holds more than one leaf. 0: none. */
static int ring_leaf_of(capsim_fabric *f, const capsim_coll_req *r, const ctx *c, int algo,
			const quotient *q)
{
	if (algo != CAPSIM_ALGO_RING ||
	    (r->op != CAPSIM_COLL_ALLREDUCE && r->op != CAPSIM_COLL_ALLGATHER &&
	     r->op != CAPSIM_COLL_REDUCESCATTER))
		return 0;
	/* An NVLink domain of several nodes (GB200 NVL72) whose ranks fill
	 * it: a ring's flows inside one go over NVLink alone, the same in
	 * every domain (ring_rank: a domain's positions are its GPUs), so the
	 * first domain's stand for every domain's on any fabric, placement
	 * and routing; the flows between domains are counted as they come */
	int G = capsim_fabric_gpus_per_node(f), D = capsim_fabric_domain_gpus(f);
	if (D > G)
		return r->fold != 0 && census_lossless(f) && D % G == 0 && c->G == D &&
			       c->n == c->nodes * c->G && c->nodes >= 2 && !q->copies ?
			       D / G :
			       0;
	if (!counts_on_copies(f, r, c))
		return 0;
	capsim_fabric_shape sh;
	capsim_fabric_get_shape(f, &sh);
	int span = q->nodes ? q->nodes : c->nodes;
	if (sh.tiers < 2 || sh.per_leaf < 2 || span <= sh.per_leaf || span % sh.per_leaf ||
	    c->nodes % sh.per_leaf)
		return 0;
	return sh.per_leaf;
}

/* Count plan p in a census cs, closed: 0. Where `strict` asks for the
 * census to be exact and a link carried flows of two sizes (a plan that
 * census_alike does not vouch for), 1, with nothing of it kept: p is
 * empty again but for its quotient, and the fabric's routes forgotten.
 * -1 with the reason in d. */
static int count_plan(plan *p, link_census *cs, capsim_fabric *f, const ctx *c,
		      const capsim_scenario *s, const capsim_coll_req *r, const choice *ch,
		      int strict, capsim_diags *d)
{
	int block = r->bytes > 0 && c->n > 1 ? tree_block_of(f, s, r, c, ch->algo) : 0;
	if (block) {
		count_tree_blocks(p, cs, f, c, r, ch, block);
	} else {
		int sizes = !census_alike(c, ch->algo);
		int leaf = r->bytes > 0 && c->n > 1 ? ring_leaf_of(f, r, c, ch->algo, &p->q) : 0;
		/* a ring counted on its leaves: over the whole fabric, the rest
		 * are the flows between leaves, one a leaf and ring: where few
		 * for the fabric's links, spread (sparse: a fresh page of each
		 * per-link array a flow costs more than a slot found by id),
		 * else by id; each level is closed from its links' list
		 * (close_two_levels). Else dense where the plan's flows (on one
		 * block, its) number a quarter of the fabric's links, each
		 * crossing several. */
		double flows = plan_flows(c, r->op, ch->algo) / (p->q.copies ? p->q.copies : 1);
		double links = (double)capsim_flownet_n_links(capsim_fabric_net(f));
		double between = leaf ? flows / ((double)leaf * capsim_fabric_gpus_per_node(f)) : 0.0;
		enum census_mode mode = leaf ? (p->q.nodes || 64.0 * between >= links ? CENSUS_BY_ID :
											CENSUS_SPARSE) :
				    4.0 * flows >= links ? CENSUS_DENSE :
							   CENSUS_BY_ID;
		census_init(cs, capsim_fabric_net(f), capsim_fabric_lossy(f), sizes, mode);
		cs->routes = CENSUS_ROUTES_PER_FLOW * s->flow_limit;
		p->cs = cs;
		link_census leafc;
		p->leaf = leaf;
		if (p->leaf) {
			census_init(&leafc, capsim_fabric_net(f), 0, sizes, CENSUS_BY_ID);
			p->leaf_cs = &leafc;
		}
		int rc = build_plan(p, c, s, r, ch, 0, d);
		if (rc == 0 && p->leaf) {
			/* one phase: a ring's */
			CAPSIM_ASSERT(p->n == 1);
			int span = p->q.nodes ? p->q.nodes : c->n / capsim_fabric_gpus_per_node(f);
			close_two_levels(cs, &leafc, &p->ph[0], f, p->leaf, span / p->leaf);
		} else if (rc == 0 && p->n) {
			census_close(cs, &p->ph[p->n - 1], 0);
		}
		if (p->leaf) {
			census_free(&leafc);
			p->leaf_cs = NULL;
			for (size_t j = 0; j < p->n; j++)
				p->ph[j].leaf_cs = NULL;
		}
		if (rc < 0) {
			free_plan(p);
			census_free(cs);
			return -1;
		}
	}
	if (!strict || !cs->mixed)
		return 0;
	quotient q = p->q;
	free_plan(p);
	census_free(cs);
	memset(p, 0, sizeof *p);
	p->q = q;
	capsim_fabric_reset_routing(f);
	return 1;
}

/* What running a plan gave: bandwidth and latency time, the busiest link of
 * a folded run */
typedef struct {
	double total, lat_total;
	int folded; /* phases run folded */
	int over;   /* a phase passed the work budget: the run stopped there */
	busiest fb;
} ran;

/* Whether phase ph runs folded, its classes then in *k: asked for
 * (fold > 0), always where the fabric allows; by default (fold < 0), when
 * its flows fall into at most half as many classes. Each phase of a plan
 * decides for itself: a phase that keeps its symmetry folds beside one that
 * does not. */
static int fold_phase(capsim_fabric *f, const phase *ph, const double *caps,
		      const capsim_coll_req *r, classes *k)
{
	memset(k, 0, sizeof *k);
	if (r->fold == 0 || !can_fold(f))
		return 0;
	if (r->fold > 0) {
		if (fold_classes(f, ph, caps, (size_t)-1, k) < 0)
			CAPSIM_BROKEN("refinement without a limit stopped");
		return 1;
	}
	return ph->n >= FOLD_MIN_FLOWS && fold_classes(f, ph, caps, ph->n / 2, k) == 0;
}

/* What the links a plan crosses carried: the real network's bytes since
 * `before`, plus what its folded phases put on them (`extra`), for the
 * busiest link of the whole plan. used: the distinct link ids, ascending. */
typedef struct {
	int *used;
	size_t n;
	double *before, *extra;
	int *pos; /* link id -> its index in used, where the ids are dense */
	int top;
	capsim_hmap index; /* the same by hash, where they are not */
} link_tally;

static void tally_init(link_tally *t, const plan *p, const capsim_flownet *net)
{
	t->used = plan_links(p, &t->n);
	t->before = capsim_xcalloc(t->n ? t->n : 1, sizeof *t->before);
	t->extra = capsim_xcalloc(t->n ? t->n : 1, sizeof *t->extra);
	for (size_t i = 0; i < t->n; i++)
		t->before[i] = capsim_flownet_link_bytes(net, t->used[i]);
	t->top = t->n ? t->used[t->n - 1] : -1;
	if (t->n && dense_ids(t->top, t->n)) {
		t->pos = capsim_xmalloc(((size_t)t->top + 1) * sizeof *t->pos);
		for (size_t i = 0; i < t->n; i++)
			t->pos[t->used[i]] = (int)i;
	} else {
		for (size_t i = 0; i < t->n; i++)
			capsim_hmap_set(&t->index, (uint64_t)t->used[i], (int32_t)i);
	}
}

static void tally_free(link_tally *t)
{
	free(t->used);
	free(t->before);
	free(t->extra);
	free(t->pos);
	capsim_hmap_free(&t->index);
	memset(t, 0, sizeof *t);
}

/* the index in t->used of link id l, which the plan crosses */
static size_t tally_index(const link_tally *t, int l)
{
	if (t->pos) {
		CAPSIM_ASSERT(l >= 0 && l <= t->top && t->used[t->pos[l]] == l);
		return (size_t)t->pos[l];
	}
	int32_t at = capsim_hmap_get(&t->index, (uint64_t)l);
	/* every link of a phase is one of its plan's */
	CAPSIM_ASSERT(at >= 0 && t->used[at] == l);
	return (size_t)at;
}

/* a folded phase's bytes, by k's dense link numbers, onto the tally */
static void tally_add(link_tally *t, const classes *k, const double *link_bytes)
{
	for (size_t l = 0; l < k->nl; l++)
		t->extra[tally_index(t, k->phys[l])] += link_bytes[l];
}

/* Run one phase folded by k; its bytes onto the tally where there is one
 * (a plan of several phases), else its busiest link into rn->fb. */
static void run_folded(capsim_fabric *f, const phase *ph, const double *caps, const classes *k,
		       double budget, link_tally *t, capsim_coll_result *out, ran *rn)
{
	double *lb = t->used ? capsim_xcalloc(k->nl ? k->nl : 1, sizeof *lb) : NULL;
	busiest fb = { -1, 0.0 };
	rn->total += run_classes(f, ph, caps, k, &out->events, &out->flows, &out->flow_classes,
				 &out->link_classes, &fb, lb, budget, &rn->over);
	if (lb)
		tally_add(t, k, lb);
	else
		rn->fb = fb;
	free(lb);
}

/* A plan in a census: each phase its busiest link's busy time, NCCL's caps
 * giving every flow of a one-phase plan the same least time (nccl_caps),
 * up to the engine's next nanosecond, where a run flow by flow ends a
 * phase whose flows end together (schedule_next) */
static void run_census(const plan *p, const capsim_coll_req *r, const choice *ch, ran *rn)
{
	int capped = ch->nccl_bw_s > 0 && !r->no_nccl_caps && p->n == 1;
	for (size_t j = 0; j < p->n; j++) {
		double busy = p->ph[j].busy_s;
		if (capped && busy < ch->nccl_bw_s)
			busy = ch->nccl_bw_s;
		rn->total += ceil(busy * 1e9) * 1e-9;
		rn->lat_total += p->ph[j].lat_s;
	}
}

/* Run p's phases in turn, each folded into symmetry classes or flow by flow
 * (fold_phase), or counted where it was (run_census). The tally is kept for
 * a plan of several phases and for an unfolded one. Adds to the counters of
 * out. */
static void run_plan(capsim_fabric *f, const plan *p, const capsim_coll_req *r,
		     const choice *ch, double budget, link_tally *t, capsim_coll_result *out,
		     ran *rn)
{
	if (p->cs) {
		run_census(p, r, ch, rn);
		return;
	}
	capsim_flownet *net = capsim_fabric_net(f);
	if (p->n > 1)
		tally_init(t, p, net);
	for (size_t j = 0; j < p->n && !rn->over; j++) {
		const phase *ph = &p->ph[j];
		double *caps = nccl_caps(ph, ch->nccl_bw_s, r, p->n);
		classes k;
		if (fold_phase(f, ph, caps, r, &k)) {
			CAPSIM_ASSERT(k.nf == ph->n && k.nfc <= k.nf && k.nlc <= k.nl);
			run_folded(f, ph, caps, &k, budget, t, out, rn);
			classes_free(&k);
			rn->folded++;
		} else {
			if (!t->used)
				tally_init(t, p, net);
			rn->total += run_phase_within(net, ph, caps, &out->events, &out->flows,
						      budget, &rn->over);
		}
		rn->lat_total += ph->lat_s;
		free(caps);
	}
}

/* The link busy longest (bytes over capacity) of the tally's links: the
 * bottleneck, into out; returns the bytes it carried. */
static double busiest_used(const capsim_flownet *net, const link_tally *t,
			   capsim_coll_result *out)
{
	double best = 0.0, best_bytes = 0.0;
	for (size_t i = 0; i < t->n; i++) {
		double b = capsim_flownet_link_bytes(net, t->used[i]) - t->before[i] + t->extra[i];
		double cap = capsim_flownet_link_cap(net, t->used[i]);
		double busy = b > 0 && cap > 0 ? b / cap : 0.0;
		if (busy > best * (1 + 1e-12)) {
			best = busy;
			best_bytes = b;
			out->busiest_link = t->used[i];
		}
	}
	return best_bytes;
}

/* The run's times and rates into out */
static void finish(capsim_coll_result *out, const capsim_coll_req *r, const choice *ch,
		   const ran *rn, capsim_flownet *net, int n)
{
	out->algo = ch->algo;
	out->proto = ch->proto;
	out->channels = ch->nch;
	out->latency_s = rn->lat_total;
	out->time_s = rn->total + rn->lat_total;
	out->solves = capsim_flownet_solves(net);
	CAPSIM_ASSERT(out->time_s >= 0 && out->latency_s >= 0);
	if (out->time_s > 0) {
		out->algbw_bytes_per_s = r->bytes / out->time_s;
		out->busbw_bytes_per_s = out->algbw_bytes_per_s * capsim_busbw_factor(r->op, n);
	}
}

int capsim_collective_run(capsim_fabric *f, const capsim_scenario *s,
			  const capsim_coll_req *r, capsim_coll_result *out,
			  capsim_diags *d)
{
	memset(out, 0, sizeof *out);
	out->busiest_link = -1;
	out->nccl_time_s = -1.0;
	if (check_request(f, s, r, d) < 0)
		return -1;
	capsim_fabric_reset_routing(f);
	ctx c = ctx_of(f, r);
	choice ch;
	if (choose(s, r, &c, &ch, d) < 0)
		return -1;
	out->nccl_time_s = ch.nccl_time_s;
	c.nch = ch.nch;
	c.eff = proto_eff(ch.proto);

	double S = r->bytes;
	int n = c.n;
	double flows = S > 0 ? plan_flows(&c, r->op, ch.algo) : 0.0;
	int a2a = alltoall_in_classes(f, s, r, &c, flows);
	plan p = { 0 };
	p.q = a2a ? (quotient){ 0, 0, 0 } : quotient_of(f, s, r, &c, ch.algo, 0);
	if (!a2a && !p.q.copies && flows > s->flow_limit && s->routing == CAPSIM_ROUTING_ECMP) {
		p.q = quotient_of(f, s, r, &c, ch.algo, 1);
		if (p.q.copies)
			out->approximation = ECMP_BLOCK;
	}
	if (a2a == A2A_EVEN)
		out->approximation = A2A_EVEN_TEXT;
	if (p.q.copies)
		flows /= p.q.copies; /* the first block's */
	out->flow_estimate = flows;
	capsim_flownet *net = capsim_fabric_net(f);
	link_census cs;
	int past = !a2a && flows > s->flow_limit, lossless = census_lossless(f);
	int exact = census_exact_for(f, &c, ch.algo);
	int tree = past && !p.q.copies && tree_in_classes(f, r, &c, ch.algo);
	/* routed and counted, not simulated: past the limit where nothing
	 * folds the plan, and a tree of alike edges that classes could take
	 * (exact, for about their cost: trees of several ranks a node are
	 * left to the classes, which cost O(nodes) where the census routes
	 * every chain and edge, 0.3-0.7 s and 114-162 MB against 0.01-0.17 s
	 * and 11-28 MB for NVLSTree over 524,288 ranks); below the limit, a
	 * large plan with folding left to capsim (a run flow by flow is the
	 * reference), where the census is exact (census_exact_for) */
	int strict = tree || !past, census = s->routing != CAPSIM_ROUTING_ADAPTIVE;
	if (!a2a && (tree ? lossless && census_alike(&c, ch.algo) :
		     past || (exact && r->fold < 0 && flows >= CENSUS_MIN_FLOWS))) {
		int rc = count_plan(&p, &cs, f, &c, s, r, &ch, strict, d);
		if (rc < 0)
			return -1;
		tree = tree && rc == 1;
	}
	if (p.cs) {
		/* exact where no link carried flows of two sizes, every flow
		 * routed, on a fabric with nothing else running: lossless, or
		 * lossy for alike flows (census_exact_for) */
		if (past && (cs.sampled || cs.mixed || !exact))
			out->approximation = cs.sampled ? CENSUS_SAMPLED_TEXT : CENSUS_TEXT;
		out->flows = (uint64_t)llround(cs.stood_for);
		out->counted = 1;
		out->quotient_blocks = cs.blocks;
	} else {
		if (tree)
			out->approximation = census ? TREE_CENSUS_TEXT : TREE_EVEN_TEXT;
		if (build_plan(&p, &c, s, r, &ch, a2a || tree, d) < 0) {
			free_plan(&p);
			return -1;
		}
	}
	link_tally t = { 0 };
	ran rn = { 0.0, 0.0, 0, 0, { -1, 0.0 } };
	/* the work is bounded where the trees' classes can take over */
	int bounded = !tree && !p.cs && tree_in_classes(f, r, &c, ch.algo);
	run_plan(f, &p, r, &ch, bounded ? WORK_PER_FLOW * s->flow_limit : 0.0, &t, out, &rn);
	if (rn.over) { /* the flow-by-flow run is dropped */
		free_plan(&p);
		tally_free(&t);
		memset(&p, 0, sizeof p);
		memset(&t, 0, sizeof t);
		rn = (ran){ 0.0, 0.0, 0, 0, { -1, 0.0 } };
		out->events = out->flows = 0;
		tree = 1;
		out->approximation = census ? TREE_WORK_CENSUS_TEXT : TREE_WORK_EVEN_TEXT;
	}
	out->folded = rn.folded > 0;
	if (p.q.copies) { /* the flows every block stands for: folded by symmetry */
		out->flows *= (uint64_t)p.q.copies;
		out->quotient_blocks = p.q.copies;
		out->folded = 1;
	}
	if (a2a) {
		rn.total = run_alltoall_classes(f, &c, S / n / c.eff, &out->events, &out->flows,
						&out->flow_classes, &out->link_classes, &rn.fb);
		rn.lat_total = ch.lat_s;
		out->folded = 1;
	}
	if (tree) {
		rn.total = run_tree_classes(f, &c, ch.algo, r, ch.nccl_bw_s, census,
					    &out->events, &out->flows, &out->flow_classes,
					    &out->link_classes, &rn.fb);
		rn.lat_total = ch.lat_s;
		out->folded = 1;
	}
	if (p.cs) {
		out->busiest_link = census_busiest(&cs, &out->busiest_bytes);
		census_free(&cs);
	} else if (t.used) {
		out->busiest_bytes = busiest_used(net, &t, out);
	} else if (out->folded) {
		out->busiest_link = rn.fb.link;
		out->busiest_bytes = rn.fb.bytes;
	}
	if (p.n == 0)
		rn.lat_total = n > 1 && S > 0 ? ch.lat_s : 0.0;
	free_plan(&p);
	tally_free(&t);
	finish(out, r, &ch, &rn, net, n);
	return 0;
}

/* A reduce-scatter and an all-gather build the same plan (build_plan: a
 * ring's edges carry (n - 1)/n S for both, PAT's steps, NVLS's pushes and
 * CollNet's legs take no account of which), so with one NCCL choice they
 * run alike. */
static int same_plan_ops(capsim_coll a, capsim_coll b)
{
	int ra = a == CAPSIM_COLL_REDUCESCATTER || a == CAPSIM_COLL_ALLGATHER;
	int rb = b == CAPSIM_COLL_REDUCESCATTER || b == CAPSIM_COLL_ALLGATHER;
	return a == b || (ra && rb);
}

/* Whether a and b ask alike, but perhaps for their operation */
static int same_request_but_op(const capsim_coll_req *a, const capsim_coll_req *b)
{
	return a->bytes == b->bytes && a->ranks == b->ranks && a->algo == b->algo &&
	       a->proto == b->proto && a->channels == b->channels &&
	       a->no_nccl_caps == b->no_nccl_caps && a->fold == b->fold && a->seed == b->seed;
}

/* NCCL's choices for request a on fa of sa into *x and b on fb of sb into
 * *y: 1, or 0 where either request is invalid */
static int choose_both(capsim_fabric *fa, const capsim_scenario *sa, const capsim_coll_req *a,
		       choice *x, capsim_fabric *fb, const capsim_scenario *sb,
		       const capsim_coll_req *b, choice *y)
{
	capsim_diags d = { 0 };
	int ok = check_request(fa, sa, a, &d) == 0 && check_request(fb, sb, b, &d) == 0;
	if (ok) {
		ctx ca = ctx_of(fa, a), cb = ctx_of(fb, b);
		ok = choose(sa, a, &ca, x, &d) == 0 && choose(sb, b, &cb, y, &d) == 0;
	}
	capsim_diags_free(&d);
	return ok;
}

/* whether two choices run a plan alike: algorithm, protocol, channels,
 * latency and NCCL's bandwidth cap (not its time, which the operation
 * moves) */
static int same_choice(const choice *x, const choice *y)
{
	return x->algo == y->algo && x->proto == y->proto && x->nch == y->nch &&
	       x->lat_s == y->lat_s && x->nccl_bw_s == y->nccl_bw_s;
}

int capsim_collective_same_plan(capsim_fabric *f, const capsim_scenario *s,
				const capsim_coll_req *a, const capsim_coll_req *b,
				double *b_nccl_time_s)
{
	choice x, y;
	if (!same_plan_ops(a->op, b->op) || !same_request_but_op(a, b) ||
	    !choose_both(f, s, a, &x, f, s, b, &y) || !same_choice(&x, &y))
		return 0;
	*b_nccl_time_s = y.nccl_time_s;
	return 1;
}

int capsim_collective_same_run(capsim_fabric *fa, const capsim_scenario *sa,
			       const capsim_coll_req *a, capsim_fabric *fb,
			       const capsim_scenario *sb, const capsim_coll_req *b)
{
	choice x, y;
	if (a->op != b->op || !same_request_but_op(a, b) || sa->routing != sb->routing ||
	    sa->flow_limit != sb->flow_limit || !capsim_fabric_same(fa, fb) ||
	    !choose_both(fa, sa, a, &x, fb, sb, b, &y))
		return 0;
	/* NCCL's time and graphs too (the hierarchical all-reduce tunes its
	 * legs on the graphs), byte for byte: zeroed before they are
	 * searched, equal ones compare equal, and a difference only costs
	 * the reuse */
	return same_choice(&x, &y) && x.nccl_time_s == y.nccl_time_s &&
	       memcmp(&x.topo, &y.topo, sizeof x.topo) == 0;
}

int capsim_collective_run_groups(capsim_fabric *f, const capsim_scenario *s,
				 const capsim_coll_req *r, const int *bases,
				 int n_groups, int stride, capsim_coll_result *out,
				 capsim_diags *d)
{
	memset(out, 0, sizeof *out);
	out->busiest_link = -1;
	out->nccl_time_s = -1.0;
	int n = r->ranks, G = capsim_fabric_gpus_per_node(f);
	if (r->op != CAPSIM_COLL_ALLREDUCE && r->op != CAPSIM_COLL_ALLGATHER &&
	    r->op != CAPSIM_COLL_REDUCESCATTER) {
		capsim_diags_add(d, file_of(s), s->fabric_line,
				 "collective: groups run all-reduce, all-gather or "
				 "reduce-scatter only");
		return -1;
	}
	for (int j = 0; j < n_groups; j++)
		if (bases[j] < 0 || bases[j] + (long)(n - 1) * stride >= capsim_fabric_gpus(f)) {
			capsim_diags_add(d, file_of(s), s->fabric_line,
					 "collective: group %d reaches past the cluster's %d "
					 "GPUs", j, capsim_fabric_gpus(f));
			return -1;
		}
	capsim_fabric_reset_routing(f);
	/* NCCL's ring latency for n ranks over the nodes one group spans */
	capsim_nccl_hw hw;
	capsim_collective_nccl_hw(s, &hw);
	int per_node = stride >= G ? 1 : G / stride;
	if (per_node > n)
		per_node = n;
	hw.gpus_per_node = per_node;
	capsim_nccl_topo topo;
	memset(&topo, 0, sizeof topo);
	int nodes = (n + per_node - 1) / per_node;
	if (capsim_nccl_search(&hw, n, nodes, &topo) < 0) {
		capsim_diags_add(d, file_of(s), s->fabric_line,
				 "collective: no NCCL ring for %d ranks on %d nodes", n, nodes);
		return -1;
	}
	int proto = r->proto >= 0 ? r->proto : CAPSIM_PROTO_SIMPLE;
	int nch = r->channels ? r->channels :
		  (topo.graph[CAPSIM_ALGO_RING].n_channels > 0 ? topo.graph[CAPSIM_ALGO_RING].n_channels : 1);
	double lat[CAPSIM_ALGO__COUNT][CAPSIM_PROTO__COUNT], bw[CAPSIM_ALGO__COUNT][CAPSIM_PROTO__COUNT];
	capsim_nccl_tune(&topo, r->op, lat, bw);
	double eff = proto_eff(proto), S = r->bytes;
	double edge = r->op == CAPSIM_COLL_ALLREDUCE ? 2.0 * (n - 1) / n * S : (double)(n - 1) / n * S;
	plan p = { 0 };
	phase *ph = new_phase(&p, lat[CAPSIM_ALGO_RING][proto] * 1e-6);
	for (int j = 0; j < n_groups; j++)
		for (int i = 0; i < n && n > 1; i++)
			xfer(ph, f, bases[j] + i * stride, bases[j] + ((i + 1) % n) * stride,
			     edge / eff, 1.0, r->seed + (uint64_t)j * 1009 + (uint64_t)i);
	classes k = { 0 };
	int fold = ph->n && fold_phase(f, ph, NULL, r, &k);
	double t = 0.0;
	busiest fb;
	if (fold)
		t = run_classes(f, ph, NULL, &k, &out->events, &out->flows,
				&out->flow_classes, &out->link_classes, &fb, NULL, 0.0, NULL);
	else if (ph->n)
		t = run_phase(capsim_fabric_net(f), ph, NULL, &out->events, &out->flows);
	classes_free(&k);
	out->folded = fold;
	out->latency_s = n > 1 && S > 0 ? ph->lat_s : 0.0;
	free_plan(&p);
	out->algo = CAPSIM_ALGO_RING;
	out->proto = proto;
	out->channels = nch;
	out->time_s = t + out->latency_s;
	if (out->time_s > 0) {
		out->algbw_bytes_per_s = S / out->time_s;
		out->busbw_bytes_per_s = out->algbw_bytes_per_s * capsim_busbw_factor(r->op, n);
	}
	return 0;
}
