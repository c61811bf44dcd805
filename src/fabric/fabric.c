/* fabric.c - links and routes of a scenario's cluster; see fabric.h and
 * docs/model.md ("Fabric"). */
#include "fabric.h"

#include <gsl/gsl_rng.h>

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "hmap.h"
#include "mix.h"
#include "xalloc.h"

const char *const capsim_link_kind_names[CAPSIM_LINK__COUNT] = {
	"nvlink-up", "nvlink-down", "pcie-up", "pcie-down", "host",
	"nic-up", "nic-down", "leaf-up", "spine-down", "agg-up", "core-down",
};

/* A divisor the routes use at every hop: its shift where it is a power of
 * two (-1: not), else its reciprocal m = ceil(2^(31 + l) / d), l =
 * ceil(log2 d), so that x / d = x m / 2^(31 + l) for every 0 <= x < 2^31
 * (Granlund and Montgomery, PLDI 1994, theorem 4.2: m d exceeds 2^(31 + l)
 * by less than d <= 2^l); x m < 2^64 */
typedef struct {
	int d, shift, s;
	uint64_t m;
} divisor;

static divisor divisor_of(int d)
{
	divisor v = { d, -1, 0, 0 };
	if (d <= 0)
		return v;
	if ((d & (d - 1)) == 0) {
		v.shift = __builtin_ctz((unsigned)d);
		return v;
	}
	int l = 32 - __builtin_clz((unsigned)d); /* d < 2^l: ceil(log2 d), d not a power of two */
	v.s = 31 + l;
	v.m = ((uint64_t)1 << v.s) / (uint64_t)d + 1;
	return v;
}

static inline int quo(int x, divisor v)
{
	CAPSIM_ASSERT(x >= 0 && v.d > 0);
	int q = v.shift >= 0 ? x >> v.shift : (int)(((uint64_t)x * v.m) >> v.s);
	CAPSIM_ASSERT(q == x / v.d);
	return q;
}

static inline int rem(int x, divisor v)
{
	CAPSIM_ASSERT(x >= 0 && v.d > 0);
	return v.shift >= 0 ? x & (v.d - 1) : x - quo(x, v) * v.d;
}

/* h mod v, for a hash */
static inline int rem64(uint64_t h, divisor v)
{
	CAPSIM_ASSERT(v.d > 0);
	return (int)(v.shift >= 0 ? h & (uint64_t)(v.d - 1) : h % (uint64_t)v.d);
}

/* one contiguous range of link ids per kind */
typedef struct {
	int base, count;
} range;

struct capsim_fabric {
	int nodes, G, domain, rails, nvlink, gdr, routing, tiers, k;
	int down, up;             /* per leaf: node ports, uplinks */
	/* planes of leaves: one a rail (rail-optimised) or one for all rails
	 * (plain: a node's NICs on one leaf); a leaf holds `per_leaf` nodes,
	 * each with `ports` of its ports */
	int planes, per_leaf, ports;
	int leaves_per_rail, leaves; /* leaves_per_rail: of one plane */
	int slots;                /* node positions under the leaves */
	/* three tiers, as simulated: pods of pod_leaves leaves in leaf order,
	 * `aggs` aggregation switches (one a leaf uplink a pod), each with
	 * core_per_agg links to the core */
	int pod_leaves, pods_per_rail, pods, core_per_agg, aggs;
	capsim_fabric_size_in size; /* what the built counts are sized from */
	capsim_fabric_counts counts; /* the fabric as built (capsim_fabric_size) */
	long line; /* of <fabric> in the scenario */
	int lossy; /* links lose capacity under incast (untuned RoCE) */
	double sw_latency_s;
	capsim_flownet *net;
	/* adaptive routing: routes placed on each uplink since the last reset,
	 * in blocks of one switch's uplinks (first link id -> offset in pool),
	 * a block made when the switch is first chosen from; before each block
	 * of 64 links or fewer, its least count and the mask of its links
	 * that have it (BLOCK_HEAD words) */
	capsim_hmap blocks;
	uint32_t *pool;
	size_t npool, cappool;
	int *slot;          /* scattered placement: node -> its position (NULL: contiguous) */
	range r[CAPSIM_LINK__COUNT];
	/* the kinds that have links, in id order, and the first id of each
	 * after the first (capsim_fabric_link_kind) */
	int nkinds;
	capsim_link_kind kind_at[CAPSIM_LINK__COUNT];
	int kind_start[CAPSIM_LINK__COUNT];
	int switch_base; /* the first switch link's id (INT_MAX: none) */
	/* G, domain, per_leaf, pod_leaves, up and core_per_agg as divisors
	 * (capsim_fabric_route) */
	divisor dG, ddomain, dper_leaf, dpod_leaves, dup, dcore;
	char *file;
};

double capsim_pcie_bw(int gen, int lanes)
{
	/* PCI-SIG per-lane rates after line encoding (bytes/s): 2.5 GT/s and
	 * 5 GT/s with 8b/10b, 8/16/32 GT/s with 128b/130b, 64 GT/s PAM4 with
	 * 242/256 FLIT payload (bib: pcisig-pcie-rates) */
	static const double lane[] = { 0, 2.5e9 * 0.8 / 8, 5e9 * 0.8 / 8,
				       8e9 * 128.0 / 130 / 8, 16e9 * 128.0 / 130 / 8,
				       32e9 * 128.0 / 130 / 8, 64e9 * 242.0 / 256 / 8 };
	/* assumption: 256-byte TLP payload with 24 bytes of TLP header, DLLP
	 * and framing per packet (docs/model.md) */
	const double tlp = 256.0 / (256.0 + 24.0);
	if (gen < 1)
		gen = 1;
	if (gen > 6)
		gen = 6;
	return lane[gen] * lanes * tlp;
}

static int add_links(capsim_fabric *f, capsim_link_kind kind, int count,
		     double cap)
{
	f->r[kind].base = capsim_flownet_add_links(f->net, count, cap, 1.0);
	f->r[kind].count = count;
	/* kinds are added in id order, each once */
	CAPSIM_ASSERT(f->nkinds < CAPSIM_LINK__COUNT &&
		      (f->nkinds == 0 || (f->kind_at[f->nkinds - 1] < kind &&
					  f->r[f->kind_at[f->nkinds - 1]].base +
							  f->r[f->kind_at[f->nkinds - 1]].count ==
						  f->r[kind].base)));
	if (count > 0) {
		f->kind_at[f->nkinds] = kind;
		f->kind_start[f->nkinds] = f->r[kind].base;
		f->nkinds++;
	}
	return f->r[kind].base;
}

static int L(const capsim_fabric *f, capsim_link_kind kind, int i)
{
	/* every index the routes compute lies in the kind's range */
	CAPSIM_ASSERT(i >= 0 && i < f->r[kind].count);
	return f->r[kind].base + i;
}

static capsim_fabric *build(const capsim_scenario *s, capsim_diags *d);

/* The links as simulated: a plane of leaves a rail (rail-optimised) or one
 * plane of whole nodes (plain), `per_leaf` node positions a leaf; at three
 * tiers pods of k/2 leaves in leaf order with an aggregation switch a leaf
 * uplink. Routes depend on this shape; it has at least the links of the
 * fabric as built (capsim_fabric_size), whose counts are reported. */
static void plan_links(capsim_fabric *f, const capsim_scenario *s)
{
	f->planes = f->rails;
	f->per_leaf = f->down;
	f->ports = 1;
	if (!s->rail_optimized && f->tiers >= 2) {
		f->planes = 1;
		f->ports = f->rails;
		f->per_leaf = f->down / f->rails;
	}
	f->leaves_per_rail = (f->slots + f->per_leaf - 1) / f->per_leaf;
	f->leaves = f->leaves_per_rail * f->planes;
	if (f->tiers == 3) {
		/* k-ary fat tree above the leaves (Al-Fares et al. 2008): aggregation
		 * switches of k/2 down and k/2 up ports, one a leaf uplink a pod */
		f->pod_leaves = f->k / 2 > 0 ? f->k / 2 : 1;
		f->pods_per_rail = (f->leaves_per_rail + f->pod_leaves - 1) / f->pod_leaves;
		f->pods = f->pods_per_rail * f->planes;
		f->aggs = f->pods * f->up;
		f->core_per_agg = f->pod_leaves;
	}
}

static int plan(capsim_fabric *f, const capsim_scenario *s, capsim_diags *d)
{
	f->k = s->has_switch ? s->fabric_switch.ports : 0;
	int multi = f->nodes * f->G > f->domain;
	if (!multi) {
		f->tiers = 0;
		return 0;
	}
	if (s->topology == CAPSIM_TOPO_NONE) {
		capsim_diags_add(d, f->file, f->line,
				 "fabric: topology 'none' but the %d GPUs span several "
				 "NVLink domains",
				 f->nodes * f->G);
		return -1;
	}
	if (!f->k) {
		capsim_diags_add(d, f->file, f->line,
				 "fabric: a fabric between %d nodes needs a switch "
				 "(cluster.fabric.switch.ref)",
				 f->nodes);
		return -1;
	}
	capsim_scenario_fabric_size_in(s, &f->size);
	f->tiers = f->size.tiers;
	f->slots = f->size.nodes;
	char why[256];
	if (capsim_fabric_size(&f->size, &f->counts, why, sizeof why) < 0) {
		capsim_diags_add(d, f->file, f->line, "fabric: %s", why);
		return -1;
	}
	/* the attached nodes' cables (scattered: not the empty positions') */
	f->counts.cables_node_leaf = (long)f->nodes * f->rails;
	if (f->tiers == 1) {
		f->down = f->k;
		f->up = 0;
	} else {
		f->down = f->counts.leaf_down; /* the split built */
		f->up = f->counts.leaf_uplinks;
	}
	plan_links(f, s);
	return 0;
}

/* Scattered placement: the nodes take a random set of the positions under
 * the leaves, in random order (a Fisher-Yates shuffle of the positions by
 * GSL's MT19937 from the scenario's seed), as a scheduler that ignores the
 * topology hands them out. */
static void scatter(capsim_fabric *f, const capsim_scenario *s)
{
	int slots = f->leaves_per_rail * f->per_leaf;
	int *pos = capsim_xmalloc((size_t)slots * sizeof *pos);
	for (int i = 0; i < slots; i++)
		pos[i] = i;
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(rng, (unsigned long)s->seed ^ 0x706c6163UL /* "plac" */);
	for (int i = slots - 1; i > 0; i--) {
		int j = (int)gsl_rng_uniform_int(rng, (unsigned long)i + 1);
		int x = pos[i];
		pos[i] = pos[j];
		pos[j] = x;
	}
	gsl_rng_free(rng);
	f->slot = capsim_xmalloc((size_t)f->nodes * sizeof *f->slot);
	memcpy(f->slot, pos, (size_t)f->nodes * sizeof *f->slot);
	free(pos);
}

/* the position of node n under the leaves */
static int slot_of(const capsim_fabric *f, int n)
{
	return f->slot ? f->slot[n] : n;
}

int capsim_fabric_scattered(const capsim_fabric *f)
{
	return f->slot != NULL;
}

capsim_fabric *capsim_fabric_build(const capsim_scenario *s, capsim_diags *d)
{
	capsim_diags scratch = { 0 };
	if (!d)
		d = &scratch;
	capsim_fabric *f = build(s, d);
	capsim_diags_free(&scratch);
	return f;
}

static capsim_fabric *build(const capsim_scenario *s, capsim_diags *d)
{
	capsim_fabric *f = capsim_xcalloc(1, sizeof *f);
	f->file = capsim_xstrdup(s->file[0] ? s->file : "scenario");
	f->line = s->fabric_line;
	f->nodes = s->nodes;
	f->G = s->node.gpus;
	f->domain = s->node.domain_gpus ? s->node.domain_gpus : f->G;
	f->rails = s->rails ? s->rails : s->node.nics;
	f->nvlink = s->node.scaleup_fabric == CAPSIM_NODE_NVSWITCH ||
		    s->node.scaleup_fabric == CAPSIM_NODE_NVLINK_DIRECT ||
		    s->node.scaleup_fabric == CAPSIM_NODE_INFINITY_FABRIC;
	/* NCCL's socket transport copies through host memory like GPUDirect off */
	f->gdr = s->gpudirect && s->transport != CAPSIM_NET_TCP;
	f->routing = s->routing;
	f->sw_latency_s = s->has_switch ? s->fabric_switch.latency_s : 0.0;
	if (plan(f, s, d) < 0) {
		capsim_fabric_destroy(f);
		return NULL;
	}
	f->net = capsim_flownet_create();
	int gpus = f->nodes * f->G;
	double nvl = capsim_gpu_scaleup_bw_per_dir(&s->gpu);
	double pcie = capsim_pcie_bw(s->gpu.pcie_generation ? s->gpu.pcie_generation : 5,
				     s->gpu.pcie_lanes ? s->gpu.pcie_lanes : 16);
	/* the GPU-NIC path is limited by the slower end's PCIe */
	double nic_pcie = capsim_pcie_bw(s->nic.pcie_generation, s->nic.pcie_lanes);
	double port = s->nic.port_speed_bytes_per_s;
	if (s->transport == CAPSIM_NET_TCP)
		port *= s->tcp_efficiency; /* what NCCL's sockets reach */
	if (f->nvlink && nvl > 0) {
		add_links(f, CAPSIM_LINK_NVLINK_UP, gpus, nvl);
		add_links(f, CAPSIM_LINK_NVLINK_DOWN, gpus, nvl);
	}
	add_links(f, CAPSIM_LINK_PCIE_UP, gpus, fmin(pcie, nic_pcie));
	add_links(f, CAPSIM_LINK_PCIE_DOWN, gpus, fmin(pcie, nic_pcie));
	if (f->tiers) {
		if (!f->gdr)
			add_links(f, CAPSIM_LINK_HOST, 2 * f->nodes * f->rails, nic_pcie);
		add_links(f, CAPSIM_LINK_NIC_UP, f->nodes * f->rails, port);
		add_links(f, CAPSIM_LINK_NIC_DOWN, f->nodes * f->rails, port);
		double sw = s->fabric_switch.port_speed_bytes_per_s;
		if (f->tiers >= 2) {
			add_links(f, CAPSIM_LINK_LEAF_UP, f->leaves * f->up, sw);
			add_links(f, CAPSIM_LINK_SPINE_DOWN, f->leaves * f->up, sw);
		}
		if (f->tiers == 3) {
			add_links(f, CAPSIM_LINK_AGG_UP, f->aggs * f->core_per_agg, sw);
			add_links(f, CAPSIM_LINK_CORE_DOWN, f->aggs * f->core_per_agg, sw);
		}
	}
	f->dG = divisor_of(f->G);
	f->ddomain = divisor_of(f->domain);
	f->dper_leaf = divisor_of(f->per_leaf);
	f->dpod_leaves = divisor_of(f->pod_leaves);
	f->dup = divisor_of(f->up);
	f->dcore = divisor_of(f->core_per_agg);
	f->switch_base = INT_MAX;
	for (int k = CAPSIM_LINK_LEAF_UP; k < CAPSIM_LINK__COUNT; k++)
		if (f->r[k].count && f->r[k].base < f->switch_base)
			f->switch_base = f->r[k].base;
	if (s->placement == CAPSIM_PLACE_SCATTERED && f->tiers >= 2)
		scatter(f, s);
	if (s->transport == CAPSIM_NET_ROCE && s->congestion_control == CAPSIM_CC_UNTUNED) {
		/* lossy Ethernet under incast: the links where flows from
		 * several NICs converge */
		static const capsim_link_kind lossy[] = {
			CAPSIM_LINK_NIC_DOWN, CAPSIM_LINK_LEAF_UP, CAPSIM_LINK_SPINE_DOWN,
			CAPSIM_LINK_AGG_UP, CAPSIM_LINK_CORE_DOWN,
		};
		for (size_t k = 0; k < sizeof lossy / sizeof lossy[0]; k++)
			capsim_flownet_set_incast_links(f->net, f->r[lossy[k]].base,
							f->r[lossy[k]].count,
							s->congestion_efficiency);
		f->lossy = 1;
	}
	return f;
}

void capsim_fabric_reset_routing(capsim_fabric *f)
{
	capsim_hmap_clear(&f->blocks);
	f->npool = 0;
}

void capsim_fabric_destroy(capsim_fabric *f)
{
	if (!f)
		return;
	capsim_flownet_destroy(f->net);
	capsim_hmap_free(&f->blocks);
	free(f->pool);
	free(f->slot);
	free(f->file);
	free(f);
}

capsim_flownet *capsim_fabric_net(capsim_fabric *f)
{
	return f->net;
}

int capsim_fabric_gpus(const capsim_fabric *f)
{
	return f->nodes * f->G;
}

int capsim_fabric_gpus_per_node(const capsim_fabric *f)
{
	return f->G;
}

int capsim_fabric_nodes(const capsim_fabric *f)
{
	return f->nodes;
}

int capsim_fabric_rails(const capsim_fabric *f)
{
	return f->rails;
}

int capsim_fabric_domain_gpus(const capsim_fabric *f)
{
	return f->domain;
}

int capsim_fabric_lossy(const capsim_fabric *f)
{
	return f->lossy;
}

int capsim_fabric_origin(const capsim_fabric *f, const int *links, size_t n)
{
	const range *nic = &f->r[CAPSIM_LINK_NIC_UP];
	for (size_t i = 0; i < n; i++)
		if ((unsigned)(links[i] - nic->base) < (unsigned)nic->count)
			return links[i];
	return -1;
}

int capsim_fabric_node_of(const capsim_fabric *f, int gpu)
{
	return gpu / f->G;
}

int capsim_fabric_same_domain(const capsim_fabric *f, int a, int b)
{
	return a / f->domain == b / f->domain;
}

/* rail of a GPU's NIC: GPUs share NICs evenly, in order */
static int rail_of(const capsim_fabric *f, int local)
{
	return quo(local * f->rails, f->dG);
}

/* first local GPU on rail r */
static int gpu_on_rail(const capsim_fabric *f, int r)
{
	for (int g = 0; g < f->G; g++)
		if (rail_of(f, g) == r)
			return g;
	return 0;
}

/* a block's head: its least count, then the mask of its links at it, low
 * and high words (blocks of up to 64 links) */
#define BLOCK_HEAD 3
#define MASKED_MAX 64

static uint64_t block_mask(const uint32_t *counts)
{
	return (uint64_t)counts[-2] | (uint64_t)counts[-1] << 32;
}

static void set_block_mask(uint32_t *counts, uint64_t m)
{
	counts[-2] = (uint32_t)m;
	counts[-1] = (uint32_t)(m >> 32);
}

/* the least of a block's n counts and the mask of those at it, into its head */
static void block_least(uint32_t *counts, int n)
{
	uint32_t least = UINT32_MAX;
	uint64_t m = 0;
	for (int j = 0; j < n; j++) {
		if (counts[j] < least) {
			least = counts[j];
			m = 0;
		}
		if (counts[j] == least)
			m |= (uint64_t)1 << j;
	}
	counts[-3] = least;
	set_block_mask(counts, m);
}

/* the offset in f->pool of the route counts of links [first, first + n),
 * zeroed when first asked for, its head (BLOCK_HEAD) before it */
static size_t block(capsim_fabric *f, int first, int n)
{
	int32_t v = capsim_hmap_get(&f->blocks, (uint64_t)first);
	if (v >= 0)
		return (size_t)v;
	size_t need = (size_t)n + BLOCK_HEAD;
	if (f->npool + need > f->cappool) {
		f->cappool = 2 * (f->npool + need);
		f->pool = capsim_xrealloc(f->pool, f->cappool * sizeof *f->pool);
	}
	size_t at = f->npool + BLOCK_HEAD;
	memset(f->pool + at, 0, (size_t)n * sizeof *f->pool);
	if (n <= MASKED_MAX)
		block_least(f->pool + at, n);
	f->npool += need;
	capsim_hmap_set(&f->blocks, (uint64_t)first, (int32_t)at);
	return at;
}

/* one more route on link j of a block of n */
static void block_bump(uint32_t *counts, int n, int j)
{
	counts[j]++;
	if (n > MASKED_MAX)
		return;
	uint64_t m = block_mask(counts) & ~((uint64_t)1 << j);
	if (m)
		set_block_mask(counts, m);
	else
		block_least(counts, n); /* every link at the least has one more */
}

/* pick one of n choices: ECMP by hash; adaptive by the fewest routes on
 * the pair of links the choice uses (placed since the last reset, plus the
 * flows running on them), ties to the lowest index. With no flows running
 * and blocks of 64 links or fewer, a link at the least count of both
 * blocks has the least sum, and the lowest of them is the choice: found
 * from the blocks' masks, else by a scan. */
static int choose(capsim_fabric *f, divisor nd, uint64_t h, int dest, int la_kind, int la_base,
		  int lb_kind, int lb_base)
{
	int n = nd.d;
	if (f->routing == CAPSIM_ROUTING_ECMP)
		return rem64(h, nd);
	if (f->routing == CAPSIM_ROUTING_DETERMINISTIC)
		return rem(dest, nd);
	size_t oa = block(f, L(f, la_kind, la_base), n), ob = block(f, L(f, lb_kind, lb_base), n);
	uint32_t *pa = f->pool + oa, *pb = f->pool + ob;
	int running = capsim_flownet_active(f->net) > 0; /* hoisted: else no flows to count */
	uint64_t both = !running && n <= MASKED_MAX ? block_mask(pa) & block_mask(pb) : 0;
	int best = 0;
	if (both) {
		best = __builtin_ctzll(both);
	} else {
		size_t bl = (size_t)-1;
		for (int j = 0; j < n; j++) {
			size_t load = (size_t)pa[j] + pb[j];
			if (running)
				load += capsim_flownet_link_flows(f->net,
								  L(f, la_kind, la_base + j)) +
					capsim_flownet_link_flows(f->net,
								  L(f, lb_kind, lb_base + j));
			if (load < bl) {
				bl = load;
				best = j;
			}
		}
	}
	block_bump(pa, n, best);
	block_bump(pb, n, best);
	return best;
}

/* The switches' links of a route from GPU a (node na) to GPU b (node nb)
 * on rail r, after the n links pushed so far into links[0 .. max): the
 * uplink chosen at each tier (ECMP by hash, D-mod-K by the destination,
 * adaptive by the routes placed), the switch latency added to *latency_s;
 * returns n with them */
static size_t switch_hops(capsim_fabric *f, int a, int b, int na, int nb, int r, uint64_t hash,
			  int *links, size_t n, size_t max, double *latency_s)
{
#define PUSH(x) do { if (n < max) links[n] = (x); n++; } while (0)
	int sa = slot_of(f, na), sb = slot_of(f, nb);
	int plane = f->planes > 1 ? r : 0;
	int la = plane * f->leaves_per_rail + quo(sa, f->dper_leaf);
	int lb = plane * f->leaves_per_rail + quo(sb, f->dper_leaf);
	*latency_s += f->sw_latency_s;
	if (la != lb) {
		uint64_t h = capsim_mix64(hash ^ capsim_mix64((uint64_t)a << 32 | (uint64_t)b));
		/* deterministic: the destination node's index picks the uplink at
		 * each tier, D mod the tier's uplinks, then D / those mod the next's */
		int j = choose(f, f->dup, h, sb, CAPSIM_LINK_LEAF_UP, la * f->up,
			       CAPSIM_LINK_SPINE_DOWN, lb * f->up);
		PUSH(L(f, CAPSIM_LINK_LEAF_UP, la * f->up + j));
		*latency_s += 2 * f->sw_latency_s;
		if (f->tiers == 3) {
			int pa = quo(la, f->dpod_leaves), pb = quo(lb, f->dpod_leaves);
			if (pa != pb) {
				int agg_a = pa * f->up + j, agg_b = pb * f->up + j;
				int c = choose(f, f->dcore, capsim_mix64(h), quo(sb, f->dup),
					       CAPSIM_LINK_AGG_UP,
					       agg_a * f->core_per_agg, CAPSIM_LINK_CORE_DOWN,
					       agg_b * f->core_per_agg);
				PUSH(L(f, CAPSIM_LINK_AGG_UP, agg_a * f->core_per_agg + c));
				PUSH(L(f, CAPSIM_LINK_CORE_DOWN, agg_b * f->core_per_agg + c));
				*latency_s += 2 * f->sw_latency_s;
			}
		}
		PUSH(L(f, CAPSIM_LINK_SPINE_DOWN, lb * f->up + j));
	}
#undef PUSH
	return n;
}

size_t capsim_fabric_route(capsim_fabric *f, int a, int b, uint64_t hash,
			   int *links, size_t max, double *latency_s)
{
	size_t n = 0;
	*latency_s = 0.0;
	CAPSIM_ASSERT(a >= 0 && b >= 0 && a < capsim_fabric_gpus(f) && b < capsim_fabric_gpus(f));
#define PUSH(x) do { if (n < max) links[n] = (x); n++; } while (0)
	if (a == b)
		return 0;
	int na = quo(a, f->dG), nb = quo(b, f->dG);
	if (quo(a, f->ddomain) == quo(b, f->ddomain)) { /* capsim_fabric_same_domain */
		if (f->r[CAPSIM_LINK_NVLINK_UP].count) {
			PUSH(L(f, CAPSIM_LINK_NVLINK_UP, a));
			PUSH(L(f, CAPSIM_LINK_NVLINK_DOWN, b));
		} else {
			PUSH(L(f, CAPSIM_LINK_PCIE_UP, a));
			PUSH(L(f, CAPSIM_LINK_PCIE_DOWN, b));
		}
		return n;
	}
	/* PXN: leave the node on the destination GPU's rail, moving first over
	 * NVLink to the local GPU on that rail */
	int r = rail_of(f, rem(b, f->dG));
	int a2 = na * f->G + (rail_of(f, rem(a, f->dG)) == r ? rem(a, f->dG) : gpu_on_rail(f, r));
	if (a2 != a && f->r[CAPSIM_LINK_NVLINK_UP].count) {
		PUSH(L(f, CAPSIM_LINK_NVLINK_UP, a));
		PUSH(L(f, CAPSIM_LINK_NVLINK_DOWN, a2));
	} else {
		a2 = a;
	}
	PUSH(L(f, CAPSIM_LINK_PCIE_UP, a2));
	if (!f->gdr) {
		/* bounce through host memory: up and down the node's PCIe path */
		PUSH(L(f, CAPSIM_LINK_HOST, 2 * (na * f->rails + r)));
		PUSH(L(f, CAPSIM_LINK_HOST, 2 * (na * f->rails + r) + 1));
	}
	PUSH(L(f, CAPSIM_LINK_NIC_UP, na * f->rails + r));
	n = switch_hops(f, a, b, na, nb, r, hash, links, n, max, latency_s);
	PUSH(L(f, CAPSIM_LINK_NIC_DOWN, nb * f->rails + r));
	if (!f->gdr) {
		PUSH(L(f, CAPSIM_LINK_HOST, 2 * (nb * f->rails + r)));
		PUSH(L(f, CAPSIM_LINK_HOST, 2 * (nb * f->rails + r) + 1));
	}
	PUSH(L(f, CAPSIM_LINK_PCIE_DOWN, b));
#undef PUSH
	CAPSIM_ASSERT(n <= CAPSIM_FABRIC_ROUTE_MAX);
	return n;
}

size_t capsim_fabric_route_switches(capsim_fabric *f, int a, int b, uint64_t hash, int *links,
				    size_t max, int *origin)
{
	CAPSIM_ASSERT(a >= 0 && b >= 0 && a < capsim_fabric_gpus(f) && b < capsim_fabric_gpus(f));
	*origin = -1;
	if (a == b || quo(a, f->ddomain) == quo(b, f->ddomain))
		return 0; /* inside a node or NVLink domain: no NIC, no switch */
	int na = quo(a, f->dG), nb = quo(b, f->dG);
	int r = rail_of(f, rem(b, f->dG)); /* as capsim_fabric_route */
	*origin = L(f, CAPSIM_LINK_NIC_UP, na * f->rails + r);
	double lat = 0.0;
	return switch_hops(f, a, b, na, nb, r, hash, links, 0, max, &lat);
}

int capsim_fabric_in_order(const capsim_fabric *f, int nodes)
{
	if (nodes < 2 || nodes > f->nodes || f->slot || f->domain != f->G || f->tiers < 1)
		return 0;
	if (f->tiers < 3 || nodes <= f->per_leaf) /* a leaf a plane: no pod is crossed */
		return 1;
	return f->planes == 1 || f->leaves_per_rail % f->pod_leaves == 0;
}

int capsim_fabric_symmetric(const capsim_fabric *f, int nodes, int dmodk)
{
	/* contiguous, a node a domain, and a plane's leaves in use sharing
	 * one pod at three tiers (capsim_fabric_in_order) */
	if (!capsim_fabric_in_order(f, nodes))
		return 0;
	if (f->tiers == 1 || nodes <= f->per_leaf)
		return 1; /* one leaf a plane: every pair of nodes meets there */
	int leaves = nodes / f->per_leaf;
	if (nodes % f->per_leaf || (dmodk && f->per_leaf % f->up))
		return 0;
	if (f->tiers == 2 || leaves <= f->pod_leaves)
		return 1;
	if (leaves % f->pod_leaves)
		return 0;
	long pod_nodes = (long)f->pod_leaves * f->per_leaf;
	return !dmodk || (pod_nodes / f->up) % f->core_per_agg == 0;
}

int capsim_fabric_translation_block(const capsim_fabric *f, int nodes, int dmodk)
{
	if (f->tiers < 1 || !capsim_fabric_symmetric(f, nodes, dmodk))
		return 0;
	int block = 1;
	if (f->tiers >= 2 && nodes > f->per_leaf)
		block = f->per_leaf;
	if (f->tiers == 3 && nodes > f->pod_leaves * f->per_leaf)
		block = f->pod_leaves * f->per_leaf;
	/* D-mod-K picks an uplink by the destination's position: moving by a
	 * block must not change the pick (a leaf's uplinks, a pod's cores) */
	if (dmodk && block > 1 && block % f->up)
		return 0;
	if (dmodk && block == f->pod_leaves * f->per_leaf && f->tiers == 3 &&
	    (block / f->up) % f->core_per_agg)
		return 0;
	return nodes % block == 0 && nodes / block >= 2 ? block : 0;
}

int capsim_fabric_link_orbit(const capsim_fabric *f, int link, int block)
{
	capsim_link_kind kind = capsim_fabric_link_kind(f, link);
	CAPSIM_ASSERT(kind < CAPSIM_LINK__COUNT && block >= 1);
	int i = link - f->r[kind].base;
	switch (kind) {
	case CAPSIM_LINK_NVLINK_UP:
	case CAPSIM_LINK_NVLINK_DOWN:
	case CAPSIM_LINK_PCIE_UP:
	case CAPSIM_LINK_PCIE_DOWN: /* a GPU's: node x G + local */
		i = i / f->G % block * f->G + i % f->G;
		break;
	case CAPSIM_LINK_HOST: { /* 2 (node x rails + rail) + direction */
		int q = i / 2;
		i = 2 * (q / f->rails % block * f->rails + q % f->rails) + i % 2;
		break;
	}
	case CAPSIM_LINK_NIC_UP:
	case CAPSIM_LINK_NIC_DOWN: /* node x rails + rail */
		i = i / f->rails % block * f->rails + i % f->rails;
		break;
	case CAPSIM_LINK_LEAF_UP:
	case CAPSIM_LINK_SPINE_DOWN: { /* leaf x up + port; leaf = plane x lpr + leaf in plane */
		int leaves = block / f->per_leaf > 0 ? block / f->per_leaf : 1;
		int leaf = i / f->up, plane = leaf / f->leaves_per_rail;
		leaf = plane * f->leaves_per_rail + leaf % f->leaves_per_rail % leaves;
		i = leaf * f->up + i % f->up;
		break;
	}
	default: { /* aggregation-core: (pod x up + j) x core_per_agg + c */
		int pods = block / (f->pod_leaves * f->per_leaf) > 0 ?
				   block / (f->pod_leaves * f->per_leaf) : 1;
		int agg = i / f->core_per_agg, pod = agg / f->up, plane = pod / f->pods_per_rail;
		pod = plane * f->pods_per_rail + pod % f->pods_per_rail % pods;
		i = (pod * f->up + agg % f->up) * f->core_per_agg + i % f->core_per_agg;
		break;
	}
	}
	return L(f, kind, i);
}

size_t capsim_fabric_keep_first_node(const capsim_fabric *f, int *links, size_t n)
{
	/* a node's own kinds come first in id order, then the switches' */
	static const capsim_link_kind own[] = {
		CAPSIM_LINK_NVLINK_UP, CAPSIM_LINK_NVLINK_DOWN, CAPSIM_LINK_PCIE_UP,
		CAPSIM_LINK_PCIE_DOWN, CAPSIM_LINK_HOST,	CAPSIM_LINK_NIC_UP,
		CAPSIM_LINK_NIC_DOWN,
	};
	/* the first node's links of each kind: the first G, 2 x rails or rails */
	const int first[] = { f->G, f->G, f->G, f->G, 2 * f->rails, f->rails, f->rails };
	size_t kept = 0;
	for (size_t j = 0; j < n; j++) {
		int l = links[j], keep = l >= f->switch_base;
		for (size_t i = 0; !keep && i < sizeof own / sizeof own[0]; i++)
			keep = f->r[own[i]].count &&
			       (unsigned)(l - f->r[own[i]].base) < (unsigned)first[i];
		if (keep)
			links[kept++] = l;
	}
	return kept;
}

int capsim_fabric_link_class(const capsim_fabric *f, int link)
{
	capsim_link_kind kind = capsim_fabric_link_kind(f, link);
	int i = link - f->r[kind].base, sub = 0;
	switch (kind) {
	case CAPSIM_LINK_NVLINK_UP:
	case CAPSIM_LINK_NVLINK_DOWN:
	case CAPSIM_LINK_PCIE_UP:
	case CAPSIM_LINK_PCIE_DOWN:
		sub = i % f->G;
		break;
	case CAPSIM_LINK_HOST:
		sub = i % (2 * f->rails);
		break;
	case CAPSIM_LINK_NIC_UP:
	case CAPSIM_LINK_NIC_DOWN:
		sub = i % f->rails;
		break;
	case CAPSIM_LINK_LEAF_UP:
	case CAPSIM_LINK_SPINE_DOWN:
		sub = i / f->up / f->leaves_per_rail;
		break;
	default: /* aggregation-core: agg = pod x up + j, pods plane by plane */
		sub = i / f->core_per_agg / f->up / f->pods_per_rail;
		break;
	}
	return (int)kind * 4096 + sub;
}

long capsim_fabric_class_links(const capsim_fabric *f, int cls, int nodes)
{
	switch ((capsim_link_kind)(cls / 4096)) {
	case CAPSIM_LINK_LEAF_UP:
	case CAPSIM_LINK_SPINE_DOWN:
		return (long)((nodes + f->per_leaf - 1) / f->per_leaf) * f->up;
	case CAPSIM_LINK_AGG_UP:
	case CAPSIM_LINK_CORE_DOWN: {
		long pod_nodes = (long)f->pod_leaves * f->per_leaf;
		return (nodes + pod_nodes - 1) / pod_nodes * f->up * f->core_per_agg;
	}
	default:
		return nodes; /* one a node (and GPU, rail or bounce direction) */
	}
}

void capsim_fabric_get_counts(const capsim_fabric *f, capsim_fabric_counts *c)
{
	memset(c, 0, sizeof *c);
	if (f->tiers)
		*c = f->counts;
}

void capsim_fabric_get_shape(const capsim_fabric *f, capsim_fabric_shape *sh)
{
	memset(sh, 0, sizeof *sh);
	sh->tiers = f->tiers;
	if (!f->tiers)
		return;
	sh->slots = f->slots;
	if (f->tiers == 1) {
		sh->planes = f->counts.leaves;
		sh->per_leaf = f->slots;
		sh->leaves_per_plane = 1;
		return;
	}
	capsim_fabric_size_groups(&f->size, &f->counts, &sh->leaves_per_plane, &sh->planes);
	sh->per_leaf = f->per_leaf;
	sh->pod_leaves = f->tiers == 3 ? f->pod_leaves : 0;
	sh->cores = f->counts.cores;
}

void capsim_fabric_leaf_cables(const capsim_fabric *f, long *cables, int n)
{
	if (f->tiers < 2) {
		for (int i = 0; i < n; i++)
			cables[i] = 0;
		return;
	}
	capsim_fabric_size_leaf_cables(&f->size, &f->counts, cables, n);
}

int capsim_fabric_same(const capsim_fabric *a, const capsim_fabric *b)
{
	/* what routes and capacities read: the shape as simulated */
	const int ia[] = { a->nodes, a->G, a->domain, a->rails, a->nvlink, a->gdr, a->routing,
			   a->tiers, a->k, a->down, a->up, a->planes, a->per_leaf, a->ports,
			   a->leaves_per_rail, a->leaves, a->slots, a->pod_leaves,
			   a->pods_per_rail, a->pods, a->core_per_agg, a->aggs, a->lossy,
			   a->switch_base, a->slot != NULL };
	const int ib[] = { b->nodes, b->G, b->domain, b->rails, b->nvlink, b->gdr, b->routing,
			   b->tiers, b->k, b->down, b->up, b->planes, b->per_leaf, b->ports,
			   b->leaves_per_rail, b->leaves, b->slots, b->pod_leaves,
			   b->pods_per_rail, b->pods, b->core_per_agg, b->aggs, b->lossy,
			   b->switch_base, b->slot != NULL };
	for (size_t i = 0; i < sizeof ia / sizeof ia[0]; i++)
		if (ia[i] != ib[i])
			return 0;
	if (a->sw_latency_s != b->sw_latency_s)
		return 0;
	for (int k = 0; k < CAPSIM_LINK__COUNT; k++)
		if (a->r[k].base != b->r[k].base || a->r[k].count != b->r[k].count)
			return 0;
	/* the switches' sizing, which the census's shapes read too */
	capsim_fabric_shape sa, sb;
	capsim_fabric_get_shape(a, &sa);
	capsim_fabric_get_shape(b, &sb);
	if (sa.tiers != sb.tiers || sa.planes != sb.planes || sa.per_leaf != sb.per_leaf ||
	    sa.leaves_per_plane != sb.leaves_per_plane || sa.pod_leaves != sb.pod_leaves ||
	    sa.cores != sb.cores || sa.slots != sb.slots)
		return 0;
	if (a->slot && memcmp(a->slot, b->slot, (size_t)a->nodes * sizeof *a->slot) != 0)
		return 0;
	return capsim_flownet_same_links(a->net, b->net);
}

capsim_link_kind capsim_fabric_link_kind(const capsim_fabric *f, int link)
{
	if (f->nkinds == 0 || link < f->kind_start[0])
		return CAPSIM_LINK__COUNT;
	/* the kinds' ranges are contiguous in id order: the kind is the last
	 * whose first id is at most link (counted without branches) */
	int i = 0;
	for (int k = 1; k < f->nkinds; k++)
		i += link >= f->kind_start[k];
	capsim_link_kind kind = f->kind_at[i];
	return link < f->r[kind].base + f->r[kind].count ? kind : CAPSIM_LINK__COUNT;
}

void capsim_fabric_link_name(const capsim_fabric *f, int link, char *buf,
			     size_t len)
{
	capsim_link_kind k = capsim_fabric_link_kind(f, link);
	if (k == CAPSIM_LINK__COUNT) {
		snprintf(buf, len, "link %d", link);
		return;
	}
	int i = link - f->r[k].base;
	switch (k) {
	case CAPSIM_LINK_NVLINK_UP:
	case CAPSIM_LINK_NVLINK_DOWN:
	case CAPSIM_LINK_PCIE_UP:
	case CAPSIM_LINK_PCIE_DOWN:
		snprintf(buf, len, "node%d/gpu%d %s", i / f->G, i % f->G,
			 capsim_link_kind_names[k]);
		return;
	case CAPSIM_LINK_HOST:
		snprintf(buf, len, "node%d/rail%d host-%s", i / 2 / f->rails,
			 i / 2 % f->rails, i % 2 ? "down" : "up");
		return;
	case CAPSIM_LINK_NIC_UP:
	case CAPSIM_LINK_NIC_DOWN:
		snprintf(buf, len, "node%d/nic%d %s", i / f->rails, i % f->rails,
			 capsim_link_kind_names[k]);
		return;
	case CAPSIM_LINK_LEAF_UP:
	case CAPSIM_LINK_SPINE_DOWN:
		snprintf(buf, len, "%s%d/leaf%d uplink%d %s", f->planes > 1 ? "rail" : "plane",
			 i / f->up / f->leaves_per_rail, i / f->up % f->leaves_per_rail,
			 i % f->up, k == CAPSIM_LINK_LEAF_UP ? "up" : "down");
		return;
	default:
		snprintf(buf, len, "agg%d/core%d %s", i / f->core_per_agg,
			 i % f->core_per_agg, capsim_link_kind_names[k]);
		return;
	}
}
