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
	 * a block made when the switch is first chosen from */
	capsim_hmap blocks;
	uint32_t *pool;
	size_t npool, cappool;
	int *slot;          /* scattered placement: node -> its position (NULL: contiguous) */
	range r[CAPSIM_LINK__COUNT];
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
	return f->r[kind].base;
}

static int L(const capsim_fabric *f, capsim_link_kind kind, int i)
{
	/* every index the routes compute lies in the kind's range */
	CAPSIM_ASSERT(i >= 0 && i < f->r[kind].count);
	return f->r[kind].base + i;
}

static capsim_fabric *build(const capsim_scenario *s, capsim_diags *d);

int capsim_fabric_leaf_split(int radix, double o, int *down, int *up)
{
	*down = *up = 0;
	if (radix < 2 || !(o >= 1.0))
		return -1;
	/* the fewest uplinks with down/up >= o: down = ceil(k o / (1 + o)),
	 * less a rounding margin so that 1:1 on 64 ports stays 32:32 */
	int d = (int)ceil((double)radix * o / (1.0 + o) - 1e-9);
	if (d >= radix)
		return -1;
	*down = d;
	*up = radix - d;
	return 0;
}

/* A fabric being sized: its leaves in the simulated order, plane by plane
 * (leaf i is group i mod groups of plane i / groups), and which of them is
 * a group's last, the one that may hold fewer node ports. */
typedef struct {
	capsim_fabric_size_in in;
	int down, up;       /* a leaf's split (2, 3 tiers) */
	int groups;         /* leaf groups: node positions that share leaves */
	int per_group;      /* node positions of a full group */
	int planes;         /* leaves a group */
	int rpl;            /* rails a leaf (rail-optimised) */
	long leaves;
	int pod;            /* 3 tiers: leaves a pod (an aggregation switch's k/2 down ports) */
	int full_ports, last_ports; /* node ports of a full leaf and of a last one */
} sizing;

/* the uplinks a leaf of `ports` node ports needs at the leaf's split */
static int uplinks_for(const sizing *z, int ports)
{
	return (int)(((long)ports * z->up + z->down - 1) / z->down);
}

/* how many of leaves [0, x) are a last one: the last group of each plane
 * (rails on leaves one a leaf, or plain), or the last plane (rails shared) */
static long lasts_before(const sizing *z, long x)
{
	if (z->rpl > 1)
		return x >= z->planes ? 1 : 0;
	return x / z->groups;
}

/* Lay out the leaves of z->in at tiers >= 2: a rail's nodes over leaves of
 * `down` node ports (rail-optimised; a few rails share a leaf where a rail
 * fills at most half of one), or whole nodes on a leaf (plain). 0, or -1
 * when a plain leaf cannot hold a node. */
static int lay_leaves(sizing *z)
{
	int slots = z->in.nodes, rails = z->in.rails;
	if (!z->in.rail_optimized) {
		z->per_group = z->down / rails;
		if (z->per_group < 1)
			return -1;
		z->groups = (int)(((long)slots + z->per_group - 1) / z->per_group);
		z->planes = 1;
		z->rpl = 1;
		z->full_ports = z->per_group * rails;
		z->last_ports = (slots - (z->groups - 1) * z->per_group) * rails;
	} else if ((long)slots * 2 <= z->down && rails > 1) {
		z->rpl = z->down / slots < rails ? z->down / slots : rails;
		z->groups = 1;
		z->per_group = slots;
		z->planes = (rails + z->rpl - 1) / z->rpl;
		z->full_ports = z->rpl * slots;
		z->last_ports = (rails - (z->planes - 1) * z->rpl) * slots;
	} else {
		z->rpl = 1;
		z->per_group = z->down;
		z->groups = (int)(((long)slots + z->down - 1) / z->down);
		z->planes = rails;
		z->full_ports = z->down;
		z->last_ports = slots - (z->groups - 1) * z->down;
	}
	z->leaves = (long)z->groups * z->planes;
	z->pod = z->in.radix / 2;
	return 0;
}

/* the leaves of a design that capsim_fabric_size sized at 2 or 3 tiers */
static void built_leaves(const capsim_fabric_size_in *in, const capsim_fabric_counts *c,
			 sizing *z)
{
	*z = (sizing){ .in = *in, .down = c->leaf_down, .up = c->leaf_uplinks };
	int rc = lay_leaves(z);
	CAPSIM_ASSERT(rc == 0);
	(void)rc;
}

/* leaves of at most two kinds (full and last) under one set of upper switches */
typedef struct {
	long n[2];
	int u[2]; /* uplinks each needs */
} leafmix;

static leafmix mix_of(const sizing *z, long first, long end)
{
	leafmix m;
	m.n[1] = lasts_before(z, end) - lasts_before(z, first);
	m.n[0] = end - first - m.n[1];
	m.u[0] = uplinks_for(z, z->full_ports);
	m.u[1] = uplinks_for(z, z->last_ports);
	return m;
}

/* The next count of upper switches after s that a leaf of `up` uplinks may
 * spread over: s times the smallest prime factor of up / s, so that each
 * count divides up and the next (1, 2, 4 ... 32 for 32 uplinks). */
static long chain_next(int up, long s)
{
	long rest = up / s;
	for (long p = 2; p * p <= rest; p++)
		if (rest % p == 0)
			return s * p;
	return s * rest;
}

/* The fewest upper switches of `cap` down ports that every leaf of m reaches
 * with as many links each (at least its need, at most its `up` ports), as
 * NVIDIA's SuperPOD spreads a leaf's uplinks over its spines; *cables gets
 * the links built. The count is taken from chain_next's divisors of up, so
 * that more nodes never build fewer links. -1 when none can (more leaves
 * than cap). */
static int spread(const leafmix *m, int up, int cap, long *cables)
{
	long need = m->n[0] * m->u[0] + m->n[1] * m->u[1];
	*cables = 0;
	if (need <= 0)
		return 0;
	long lo = (need + cap - 1) / cap;
	for (long s = 1; s <= up; s = chain_next(up, s)) {
		if (s < lo)
			continue;
		long per = 0, built = 0;
		int ok = 1;
		for (int j = 0; j < 2; j++) {
			if (!m->n[j])
				continue;
			long links = (m->u[j] + s - 1) / s; /* to each switch */
			ok &= links * s <= up;
			per += m->n[j] * links;
			built += m->n[j] * links * s;
		}
		if (ok && per <= cap) {
			*cables = built;
			return (int)s;
		}
	}
	return -1;
}

/* The aggregation switches of pod p (leaves [p pod, (p + 1) pod)) and its
 * leaf-aggregation cables; -1 when it cannot be built. */
static int pod_aggs(const sizing *z, long p, long *cables)
{
	long first = p * z->pod, end = first + z->pod < z->leaves ? first + z->pod : z->leaves;
	leafmix m = mix_of(z, first, end);
	return spread(&m, z->up, z->pod, cables);
}

static void set_err(char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void set_err(char *err, size_t len, const char *fmt, ...)
{
	if (!err || !len)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

/* 1 when z's leaves fit the asked tiers: every leaf under every spine (two
 * tiers), or every pod under the cores, a core reaching each (three) */
static int fits_tiers(const sizing *z)
{
	if (z->leaves <= 1)
		return 1;
	if (z->in.tiers == 2)
		return z->leaves <= z->in.radix;
	long pods = (z->leaves + z->pod - 1) / z->pod;
	return pods <= z->in.radix && z->pod >= 1;
}

/* 1 when `nodes` positions of the design in fit its tiers (and its leaves) */
static int fits_nodes(const capsim_fabric_size_in *in, int down, int up, int nodes)
{
	sizing z = { .in = *in, .down = down, .up = up };
	z.in.nodes = nodes;
	if (in->tiers == 1)
		return nodes <= in->radix;
	if ((long)nodes > (long)in->radix * in->radix * in->radix)
		return 0; /* past k^3/4 ports at any rails */
	return lay_leaves(&z) == 0 && fits_tiers(&z);
}

/* the most node positions the design fits (nodes never shrink it: more
 * nodes never take fewer leaves or pods) */
static int most_nodes(const capsim_fabric_size_in *in, int down, int up)
{
	long lo = 0, hi = 1;
	while (hi < INT_MAX / 2 && fits_nodes(in, down, up, (int)hi))
		hi *= 2;
	while (hi - lo > 1) {
		long mid = lo + (hi - lo) / 2;
		if (fits_nodes(in, down, up, (int)mid))
			lo = mid;
		else
			hi = mid;
	}
	return (int)lo;
}

/* one tier: whole rails on as few switches as hold every node port */
static int size_one_tier(const capsim_fabric_size_in *in, capsim_fabric_counts *c, char *err,
			 size_t len)
{
	if (in->nodes > in->radix) {
		set_err(err, len,
			"%d nodes on one switch layer, but %d-port switches connect at most %d",
			in->nodes, in->radix, in->radix);
		return -1;
	}
	int rails_per_switch = in->radix / in->nodes;
	if (rails_per_switch > in->rails)
		rails_per_switch = in->rails;
	c->leaves = (in->rails + rails_per_switch - 1) / rails_per_switch;
	c->nodes_per_leaf = in->radix;
	c->rails_per_leaf = rails_per_switch;
	return 0;
}

/* two tiers: one set of spines over every leaf (of every rail) */
static void size_two_tiers(const sizing *z, capsim_fabric_counts *c)
{
	if (z->leaves <= 1)
		return; /* one leaf holds every node port: nothing to climb to */
	leafmix m = mix_of(z, 0, z->leaves);
	c->spines = spread(&m, z->up, z->in.radix, &c->cables_leaf_spine);
}

/* the pod of the next leaf after pod p that is a last one (or the final
 * pod): the pods between are whole pods of full leaves */
static long next_odd_pod(const sizing *z, long p, long pods)
{
	long first_leaf = (p + 1) * z->pod; /* leaves from here on */
	long lasts = lasts_before(z, first_leaf);
	long leaf;
	if (z->rpl > 1)
		leaf = lasts ? z->leaves : z->planes - 1;
	else
		leaf = lasts * z->groups + z->groups - 1; /* the next plane's last */
	long q = leaf / z->pod;
	return q < pods - 1 ? q : pods - 1;
}

/* three tiers: pods of k/2 leaves in leaf order, each with the aggregation
 * switches its leaves' uplinks need; the cores carry every aggregation
 * uplink (as many as its links down: non-blocking above the leaf) once
 * there are two pods to join, k links a core. Whole pods of full leaves
 * are sized once; the pods holding a last leaf, and the final one, each. */
static void size_three_tiers(const sizing *z, capsim_fabric_counts *c)
{
	if (z->leaves <= 1)
		return;
	long pods = (z->leaves + z->pod - 1) / z->pod;
	leafmix whole = { { z->pod, 0 }, { uplinks_for(z, z->full_ports), 0 } };
	long whole_cab = 0;
	int whole_aggs = spread(&whole, z->up, z->pod, &whole_cab);
	for (long p = next_odd_pod(z, -1, pods), done = -1; p < pods;) {
		long between = p - done - 1; /* whole pods of full leaves */
		c->spines += (int)(between * whole_aggs);
		c->cables_leaf_spine += between * whole_cab;
		long cab;
		c->spines += pod_aggs(z, p, &cab);
		c->cables_leaf_spine += cab;
		done = p;
		if (p == pods - 1)
			break;
		p = next_odd_pod(z, p, pods);
	}
	c->pods = (int)pods;
	if (pods >= 2) {
		c->cables_spine_core = c->cables_leaf_spine;
		c->cores = (int)((c->cables_spine_core + z->in.radix - 1) / z->in.radix);
	}
}

static const char *design_name(const capsim_fabric_size_in *in)
{
	return in->rail_optimized ? "rail-optimised" : "plain";
}

/* Size the design at one split of the leaf (down node ports, up uplinks):
 * 0, or -1 when its leaves do not fit the tiers. */
static int size_split(const capsim_fabric_size_in *in, int down, int up, capsim_fabric_counts *c)
{
	sizing z = { .in = *in, .down = down, .up = up };
	memset(c, 0, sizeof *c);
	if (lay_leaves(&z) < 0 || !fits_tiers(&z))
		return -1;
	c->leaves = (int)z.leaves; /* at most k^2/2: the tiers fit */
	c->nodes_per_leaf = z.per_group;
	c->rails_per_leaf = in->rail_optimized ? z.rpl : in->rails;
	c->leaf_down = z.down;
	c->leaf_uplinks = z.up;
	if (in->tiers == 2)
		size_two_tiers(&z, c);
	else
		size_three_tiers(&z, c);
	c->switches = c->leaves + c->spines + c->cores;
	return 0;
}

/* 1 when a is cheaper than b: fewer switches, then fewer cables */
static int cheaper(const capsim_fabric_counts *a, const capsim_fabric_counts *b)
{
	if (a->switches != b->switches)
		return a->switches < b->switches;
	return a->cables_leaf_spine + a->cables_spine_core <
	       b->cables_leaf_spine + b->cables_spine_core;
}

/* Two or three tiers: refuse what the asked split cannot build (no uplink,
 * a plain leaf smaller than a node, more leaves or pods than the tiers
 * connect: naming the most nodes they do), else the cheapest design among
 * the asked split and those with more uplinks, down to 1:1 (a split with
 * more uplinks is at least as good a fabric; one may need fewer switches
 * where the asked uplinks spread badly over the spines). */
static int size_upper(const capsim_fabric_size_in *in, capsim_fabric_counts *c, char *err,
		      size_t len)
{
	sizing z = { .in = *in };
	if (capsim_fabric_leaf_split(in->radix, in->oversubscription, &z.down, &z.up) < 0) {
		set_err(err, len, "oversubscription %.3g:1 leaves no uplink on %d-port switches",
			in->oversubscription, in->radix);
		return -1;
	}
	if (lay_leaves(&z) < 0) {
		set_err(err, len,
			"a plain fat tree puts a node's %d NICs on one leaf, but its leaves have "
			"%d node ports",
			in->rails, z.down);
		return -1;
	}
	if (!fits_tiers(&z)) {
		int most = most_nodes(in, z.down, z.up);
		set_err(err, len,
			"%d tiers of %d-port switches connect at most %d nodes of %d rails %s at "
			"%.3g:1, not %d%s",
			in->tiers, in->radix, most, in->rails, design_name(in),
			in->oversubscription, in->nodes, in->tiers == 2 ? "; use 3 tiers" : "");
		return -1;
	}
	size_split(in, z.down, z.up, c);
	for (int d = z.down - 1; d >= in->radix - d; d--) {
		capsim_fabric_counts alt;
		if (size_split(in, d, in->radix - d, &alt) == 0 && cheaper(&alt, c))
			*c = alt;
	}
	return 0;
}

int capsim_fabric_size(const capsim_fabric_size_in *in, capsim_fabric_counts *c, char *err,
		       size_t errlen)
{
	memset(c, 0, sizeof *c);
	if (in->radix < 2 || in->nodes < 1 || in->rails < 1 || in->tiers < 1 || in->tiers > 3) {
		set_err(err, errlen,
			"cannot size a fabric of %d nodes, %d rails, %d-port switches and %d tiers "
			"(expected at least 1 node, 1 rail, 2 ports and 1 to 3 tiers)",
			in->nodes, in->rails, in->radix, in->tiers);
		return -1;
	}
	int rc = in->tiers == 1 ? size_one_tier(in, c, err, errlen) :
				  size_upper(in, c, err, errlen);
	if (rc < 0) {
		memset(c, 0, sizeof *c);
		return -1;
	}
	c->cables_node_leaf = (long)in->nodes * in->rails;
	c->switches = c->leaves + c->spines + c->cores;
	return 0;
}
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
	f->tiers = s->topology == CAPSIM_TOPO_SINGLE_SWITCH ? 1 : s->tiers;
	/* scattered, the nodes take positions among all of the cluster's */
	f->slots = f->nodes;
	if (s->placement == CAPSIM_PLACE_SCATTERED && s->placement_slots > f->slots)
		f->slots = s->placement_slots;
	f->size = (capsim_fabric_size_in){
		.nodes = f->slots,
		.rails = f->rails,
		.radix = f->k,
		.oversubscription = s->oversubscription,
		.tiers = f->tiers,
		.rail_optimized = s->rail_optimized,
	};
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

int capsim_fabric_lossy(const capsim_fabric *f)
{
	return f->lossy;
}

int capsim_fabric_origin(const capsim_fabric *f, const int *links, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (capsim_fabric_link_kind(f, links[i]) == CAPSIM_LINK_NIC_UP)
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
	return local * f->rails / f->G;
}

/* first local GPU on rail r */
static int gpu_on_rail(const capsim_fabric *f, int r)
{
	for (int g = 0; g < f->G; g++)
		if (rail_of(f, g) == r)
			return g;
	return 0;
}

/* the offset in f->pool of the route counts of links [first, first + n),
 * zeroed when first asked for */
static size_t block(capsim_fabric *f, int first, int n)
{
	int32_t v = capsim_hmap_get(&f->blocks, (uint64_t)first);
	if (v >= 0)
		return (size_t)v;
	if (f->npool + (size_t)n > f->cappool) {
		f->cappool = 2 * (f->npool + (size_t)n);
		f->pool = capsim_xrealloc(f->pool, f->cappool * sizeof *f->pool);
	}
	size_t at = f->npool;
	memset(f->pool + at, 0, (size_t)n * sizeof *f->pool);
	f->npool += (size_t)n;
	capsim_hmap_set(&f->blocks, (uint64_t)first, (int32_t)at);
	return at;
}

/* pick one of n choices: ECMP by hash; adaptive by the fewest routes on
 * the pair of links the choice uses (placed since the last reset, plus the
 * flows running on them), ties to the lowest index */
static int choose(capsim_fabric *f, int n, uint64_t h, long dest, int la_kind, int la_base,
		  int lb_kind, int lb_base)
{
	if (f->routing == CAPSIM_ROUTING_ECMP)
		return (int)(h % (uint64_t)n);
	if (f->routing == CAPSIM_ROUTING_DETERMINISTIC)
		return (int)(dest % n);
	int best = 0;
	size_t bl = (size_t)-1;
	size_t oa = block(f, L(f, la_kind, la_base), n), ob = block(f, L(f, lb_kind, lb_base), n);
	const uint32_t *pa = f->pool + oa, *pb = f->pool + ob;
	int running = capsim_flownet_active(f->net) > 0; /* hoisted: else no flows to count */
	for (int j = 0; j < n; j++) {
		size_t load = (size_t)pa[j] + pb[j];
		if (running)
			load += capsim_flownet_link_flows(f->net, L(f, la_kind, la_base + j)) +
				capsim_flownet_link_flows(f->net, L(f, lb_kind, lb_base + j));
		if (load < bl) {
			bl = load;
			best = j;
		}
	}
	f->pool[oa + (size_t)best]++;
	f->pool[ob + (size_t)best]++;
	return best;
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
	int na = a / f->G, nb = b / f->G;
	if (capsim_fabric_same_domain(f, a, b)) {
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
	int r = rail_of(f, b % f->G);
	int a2 = na * f->G + (rail_of(f, a % f->G) == r ? a % f->G : gpu_on_rail(f, r));
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
	int sa = slot_of(f, na), sb = slot_of(f, nb);
	int plane = f->planes > 1 ? r : 0;
	int la = plane * f->leaves_per_rail + sa / f->per_leaf;
	int lb = plane * f->leaves_per_rail + sb / f->per_leaf;
	*latency_s += f->sw_latency_s;
	if (la != lb) {
		uint64_t h = capsim_mix64(hash ^ capsim_mix64((uint64_t)a << 32 | (uint64_t)b));
		/* deterministic: the destination node's index picks the uplink at
		 * each tier, D mod the tier's uplinks, then D / those mod the next's */
		int j = choose(f, f->up, h, sb, CAPSIM_LINK_LEAF_UP, la * f->up,
			       CAPSIM_LINK_SPINE_DOWN, lb * f->up);
		PUSH(L(f, CAPSIM_LINK_LEAF_UP, la * f->up + j));
		*latency_s += 2 * f->sw_latency_s;
		if (f->tiers == 3) {
			int pa = la / f->pod_leaves, pb = lb / f->pod_leaves;
			if (pa != pb) {
				int agg_a = pa * f->up + j, agg_b = pb * f->up + j;
				int c = choose(f, f->core_per_agg, capsim_mix64(h), sb / f->up,
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

int capsim_fabric_symmetric(const capsim_fabric *f, int nodes, int dmodk)
{
	if (nodes < 2 || nodes > f->nodes || f->slot || f->domain != f->G || f->tiers < 1)
		return 0;
	if (f->tiers == 1 || nodes <= f->per_leaf)
		return 1; /* one leaf a plane: every pair of nodes meets there */
	int leaves = nodes / f->per_leaf;
	if (nodes % f->per_leaf || (dmodk && f->per_leaf % f->up))
		return 0;
	if (f->tiers == 2 || leaves <= f->pod_leaves) {
		/* a plane's leaves in use must share one pod at three tiers */
		return f->tiers == 2 || f->planes == 1 || f->leaves_per_rail % f->pod_leaves == 0;
	}
	if (leaves % f->pod_leaves || (f->planes > 1 && f->leaves_per_rail % f->pod_leaves))
		return 0;
	long pod_nodes = (long)f->pod_leaves * f->per_leaf;
	return !dmodk || (pod_nodes / f->up) % f->core_per_agg == 0;
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
	sizing z;
	built_leaves(&f->size, &f->counts, &z);
	sh->planes = z.planes;
	sh->per_leaf = f->per_leaf;
	sh->leaves_per_plane = z.groups;
	sh->pod_leaves = f->tiers == 3 ? f->pod_leaves : 0;
	sh->cores = f->counts.cores;
}

long capsim_fabric_leaf_cables(const capsim_fabric *f, int i)
{
	if (f->tiers < 2 || f->counts.leaves <= 1)
		return 0;
	sizing z;
	built_leaves(&f->size, &f->counts, &z);
	if (i < 0 || i >= z.groups)
		return 0;
	long cables = 0;
	for (int q = 0; q < z.planes; q++) {
		long leaf = (long)q * z.groups + i;
		int last = lasts_before(&z, leaf + 1) > lasts_before(&z, leaf);
		int need = uplinks_for(&z, last ? z.last_ports : z.full_ports);
		long pod_cables;
		int upper = f->tiers == 2 ? f->counts.spines :
					    pod_aggs(&z, leaf / z.pod, &pod_cables);
		cables += (long)(need + upper - 1) / upper * upper;
	}
	return cables;
}

capsim_link_kind capsim_fabric_link_kind(const capsim_fabric *f, int link)
{
	for (int k = 0; k < CAPSIM_LINK__COUNT; k++)
		if (f->r[k].count && link >= f->r[k].base &&
		    link < f->r[k].base + f->r[k].count)
			return (capsim_link_kind)k;
	return CAPSIM_LINK__COUNT;
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
