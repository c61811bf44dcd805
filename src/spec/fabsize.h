/* fabsize.h - a fat tree as bought: the fewest switches of a radix that give
 * the nodes' rails their leaves at the asked oversubscription and tiers, and
 * the cables as built (docs/model.md, "Fabric"). A pure function of a small
 * plain struct, so that the loader refuses a design the asked tiers cannot
 * build before any model runs, and the fabric, bill of materials, power,
 * cost and floor layout count the same switches. */
#ifndef CAPSIM_FABSIZE_H
#define CAPSIM_FABSIZE_H

#include <stddef.h>

/* The fabric as built, for bills of materials, power, cost and the floor
 * layout: switches and cables a tier, from capsim_fabric_size. Spines are
 * the aggregation switches at three tiers. */
typedef struct capsim_fabric_counts {
	int leaves, spines, cores;          /* in all */
	int switches;                       /* leaves + spines + cores */
	int pods;                           /* 3 tiers: leaves under one set of aggregation switches */
	int nodes_per_leaf;                 /* node positions a leaf (of one rail, rail-optimised) */
	int rails_per_leaf;                 /* rail-optimised: rails that share a leaf (small clusters) */
	int leaf_down, leaf_uplinks;        /* a leaf's split of its ports (2, 3 tiers) */
	long cables_node_leaf, cables_leaf_spine, cables_spine_core;
} capsim_fabric_counts;

/* What the sizing needs: a small plain struct, so that callers and tests can
 * size fabrics without building links. */
typedef struct capsim_fabric_size_in {
	int nodes;               /* node positions under the leaves */
	int rails;               /* fabric ports (NICs) a node */
	int radix;               /* ports a switch */
	double oversubscription; /* a leaf's node ports : uplinks, >= 1 */
	int tiers;               /* 1, 2 or 3 */
	int rail_optimized;      /* 2, 3 tiers: NIC r of every node on a leaf of rail r */
} capsim_fabric_size_in;

/* A leaf of radix ports at oversubscription o (>= 1): *down node ports and
 * *up uplinks, the fewest uplinks whose ratio down/up is at least o with
 * whole ports (64 ports: 32:32 at 1:1, 43:21 at 2:1, 48:16 at 3:1). Returns
 * -1 when no uplink remains (or radix < 2, o < 1). */
int capsim_fabric_leaf_split(int radix, double o, int *down, int *up);

/* Size a fabric: the fewest switches of the radix that give every leaf its
 * uplinks at the oversubscription and keep the rails apart at the leaves,
 * and the cables as built (docs/model.md, "Fabric"). Two tiers: every leaf
 * reaches every spine with as many links. Three tiers: pods of radix/2
 * leaves, each pod's leaves reaching each of its aggregation switches with
 * as many links; cores join the pods. A design that cannot be built at the
 * asked tiers (or nonsense) is refused: returns -1 with a message in err
 * (naming the size at which it fails), *c zeroed. Returns 0 otherwise. */
int capsim_fabric_size(const capsim_fabric_size_in *in, capsim_fabric_counts *c, char *err,
		       size_t errlen);

/* The leaves of a design sized at 2 or 3 tiers (c from capsim_fabric_size
 * of in): *groups leaf groups (node positions that share leaves) of *planes
 * leaves each (one a rail, a few rails a leaf, or one plain). Both 0 at one
 * tier or without leaves. */
void capsim_fabric_size_groups(const capsim_fabric_size_in *in, const capsim_fabric_counts *c,
			       int *groups, int *planes);

/* The leaf-spine (2 tiers) or leaf-aggregation (3 tiers) cables of each
 * leaf group over its planes, as built, into cables[0 .. n) (groups from n
 * on: 0): their sum over the groups is c->cables_leaf_spine. All 0 at one
 * tier or with one leaf. Each pod's aggregation switches are sized once. */
void capsim_fabric_size_leaf_cables(const capsim_fabric_size_in *in, const capsim_fabric_counts *c,
				    long *cables, int n);

#endif
