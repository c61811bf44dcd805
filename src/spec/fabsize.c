/* fabsize.c - fat-tree sizing; see fabsize.h and docs/model.md ("Fabric"). */
#include "fabsize.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "xalloc.h"

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
 * spread over evenly: the next divisor of up (1, 2, 3, 4, 6, 8 ... 72 for 72
 * uplinks). */
static long next_divisor(int up, long s)
{
	for (long t = s + 1; t < up; t++)
		if (up % t == 0)
			return t;
	return up;
}

/* The fewest upper switches of `cap` down ports that every leaf of m reaches
 * with as many links each (at least its need, at most its `up` ports), as
 * NVIDIA's SuperPODs spread a leaf's uplinks over their spines (72 uplinks
 * over 18 or 36 Quantum-X800 spines); *cables gets the links built. The
 * count is a divisor of up, the fewest that holds the links: as nodes grow
 * it may move to one that spreads a partial leaf with fewer links, so cables
 * may fall where the switches rise. -1 when none can (more leaves than cap). */
static int spread(const leafmix *m, int up, int cap, long *cables)
{
	long need = m->n[0] * m->u[0] + m->n[1] * m->u[1];
	*cables = 0;
	if (need <= 0)
		return 0;
	long lo = (need + cap - 1) / cap;
	for (long s = 1; s <= up; s = next_divisor(up, s)) {
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

void capsim_fabric_size_groups(const capsim_fabric_size_in *in, const capsim_fabric_counts *c,
			       int *groups, int *planes)
{
	*groups = *planes = 0;
	if (in->tiers < 2 || c->leaves < 1)
		return;
	sizing z;
	built_leaves(in, c, &z);
	*groups = z.groups;
	*planes = z.planes;
}

void capsim_fabric_size_leaf_cables(const capsim_fabric_size_in *in, const capsim_fabric_counts *c,
				    long *cables, int n)
{
	for (int i = 0; i < n; i++)
		cables[i] = 0;
	if (in->tiers < 2 || c->leaves <= 1)
		return;
	sizing z;
	built_leaves(in, c, &z);
	long pods = in->tiers == 3 ? (z.leaves + z.pod - 1) / z.pod : 0;
	/* each pod's aggregation switches, sized when first asked for */
	int *upper = pods ? capsim_xmalloc((size_t)pods * sizeof *upper) : NULL;
	for (long p = 0; p < pods; p++)
		upper[p] = -2;
	for (int i = 0; i < n && i < z.groups; i++) {
		for (int q = 0; q < z.planes; q++) {
			long leaf = (long)q * z.groups + i;
			int last = lasts_before(&z, leaf + 1) > lasts_before(&z, leaf);
			int need = uplinks_for(&z, last ? z.last_ports : z.full_ports);
			int up = c->spines;
			if (pods) {
				long p = leaf / z.pod, pod_cables;
				if (upper[p] == -2)
					upper[p] = pod_aggs(&z, p, &pod_cables);
				up = upper[p];
			}
			cables[i] += (long)(need + up - 1) / up * up;
		}
	}
	free(upper);
}
