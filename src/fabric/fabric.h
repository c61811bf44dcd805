/* fabric.h - the cluster as links: GPUs on NVSwitch (or PCIe) inside a node or
 * an NVLink domain, PCIe to one NIC per rail, and a fat tree of 1, 2 or 3
 * tiers between nodes, rail-optimised (a plane of leaves a rail) or plain
 * (a node's NICs on one leaf), with the leaf oversubscription and the
 * switch radix of the scenario. Paths between GPUs are routed by ECMP hashing
 * (with its collisions) or adaptively (least-loaded uplink at flow start).
 *
 * The fabric owns a capsim_flownet whose links are the physical links, each
 * direction its own link. Build once per scenario; paths are computed on
 * demand. What is bought (switches, cables) is sized by capsim_fabric_size,
 * the fewest switches of the radix for the nodes, ratio and tiers; the
 * simulated links have at least those links. */
#ifndef CAPSIM_FABRIC_H
#define CAPSIM_FABRIC_H

#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "fabsize.h"
#include "flow.h"
#include "spec.h"

typedef struct capsim_fabric capsim_fabric;

typedef enum capsim_link_kind {
	CAPSIM_LINK_NVLINK_UP,   /* GPU -> NVSwitch */
	CAPSIM_LINK_NVLINK_DOWN, /* NVSwitch -> GPU */
	CAPSIM_LINK_PCIE_UP,     /* GPU -> PCIe switch (towards NIC or peer) */
	CAPSIM_LINK_PCIE_DOWN,   /* PCIe switch -> GPU */
	CAPSIM_LINK_HOST,        /* through host memory (GPUDirect off), per node and rail */
	CAPSIM_LINK_NIC_UP,      /* NIC -> leaf */
	CAPSIM_LINK_NIC_DOWN,    /* leaf -> NIC */
	CAPSIM_LINK_LEAF_UP,     /* leaf -> spine (or aggregation) */
	CAPSIM_LINK_SPINE_DOWN,  /* spine -> leaf */
	CAPSIM_LINK_AGG_UP,      /* aggregation -> core (3 tiers) */
	CAPSIM_LINK_CORE_DOWN,   /* core -> aggregation */
	CAPSIM_LINK__COUNT
} capsim_link_kind;

extern const char *const capsim_link_kind_names[CAPSIM_LINK__COUNT];

/* Build the fabric of a loaded scenario. Topologies that cannot be built (a
 * radix too small for the nodes) are reported to d with the scenario's file
 * and return NULL. */
capsim_fabric *capsim_fabric_build(const capsim_scenario *s, capsim_diags *d);
void capsim_fabric_destroy(capsim_fabric *f);

capsim_flownet *capsim_fabric_net(capsim_fabric *f);
int capsim_fabric_gpus(const capsim_fabric *f);
int capsim_fabric_gpus_per_node(const capsim_fabric *f);
int capsim_fabric_nodes(const capsim_fabric *f);
int capsim_fabric_rails(const capsim_fabric *f);
/* GPUs of one NVLink domain: the node's, or a rack-scale system's (NVL72) */
int capsim_fabric_domain_gpus(const capsim_fabric *f);

/* 1 if links lose capacity under incast (RoCE with untuned PFC/ECN). */
int capsim_fabric_lossy(const capsim_fabric *f);

/* The origin of a routed path for incast accounting: its NIC uplink, or -1
 * for a path that stays inside a node. */
int capsim_fabric_origin(const capsim_fabric *f, const int *links, size_t n);

/* Node and NVLink domain of a GPU (global index: node x gpus_per_node +
 * local). Two GPUs of one domain talk over NVLink. */
int capsim_fabric_node_of(const capsim_fabric *f, int gpu);
int capsim_fabric_same_domain(const capsim_fabric *f, int a, int b);

/* The most links a route crosses: NVLink to the rail's GPU and back down
 * (2), PCIe up, the host bounce without GPUDirect (2), the NIC, leaf,
 * aggregation and core uplinks, their way down (3), the NIC, the host
 * bounce (2) and PCIe down. */
#define CAPSIM_FABRIC_ROUTE_MAX 14

/* Route one flow from GPU a to GPU b: writes up to max link ids to links and
 * returns how many (at most CAPSIM_FABRIC_ROUTE_MAX); hash picks among
 * equal-cost uplinks under ECMP (adaptive routing picks the least-loaded one
 * now). *latency_s gets the path's
 * propagation and switching latency. Returns 0 for a == b. */
size_t capsim_fabric_route(capsim_fabric *f, int a, int b, uint64_t hash,
			   int *links, size_t max, double *latency_s);

/* Forget the routes adaptive routing has placed (call before routing the
 * flows of a new collective). */
void capsim_fabric_reset_routing(capsim_fabric *f);

/* 1 when the nodes sit scattered under the leaves (cluster.fabric.placement):
 * flows then lose the symmetry that folding relies on. */
int capsim_fabric_scattered(const capsim_fabric *f);

/* Node symmetry, for collectives generated in classes (collective.c).
 * capsim_fabric_symmetric: 1 when the first `nodes` nodes (at least two)
 * all see the same fabric: contiguous, no NVLink domain across nodes, whole
 * leaves in use (or part of one), at three tiers whole pods in use (or part
 * of one) and pods that do not straddle rail planes. dmodk: also ask that
 * D-mod-K spreads each leaf's destinations evenly over its uplinks (a
 * leaf's nodes a multiple of its uplinks; at three tiers a pod's, over the
 * cores), so that every uplink of a class carries as many routes. */
int capsim_fabric_symmetric(const capsim_fabric *f, int nodes, int dmodk);
/* capsim_fabric_in_order: 1 when the first `nodes` nodes (at least two) fill
 * the leaves in order, as capsim_fabric_symmetric asks but for whole leaves
 * and pods (contiguous, no NVLink domain across nodes, pods that do not
 * straddle rail planes): their all-to-all's classes then stand for its
 * pairs as an expected load (collective.c). */
int capsim_fabric_in_order(const capsim_fabric *f, int nodes);
/* The class of a link under that symmetry: its kind, and the GPU's local
 * index (NVLink and PCIe links), the rail (NIC and host links) or the rail
 * plane (switch links). */
int capsim_fabric_link_class(const capsim_fabric *f, int link);
/* The links of class cls that the first `nodes` nodes use. */
long capsim_fabric_class_links(const capsim_fabric *f, int cls, int nodes);

/* Translation symmetry, for collectives simulated on a quotient
 * (collective.c, "On one block"). capsim_fabric_translation_block: the
 * fewest nodes B such that moving every one of the first `nodes` nodes B
 * places along (the last back to the first) maps the fabric they use onto
 * itself, and the routes with it: one node on a single switch or inside one
 * leaf, a leaf's nodes at two tiers (or within one pod), a pod's at three.
 * It asks what capsim_fabric_symmetric does of the nodes (dmodk: D-mod-K's
 * choices must move with them too) and that they fill blocks; 0 when they
 * do not, the nodes are fewer than two blocks, or the fabric is not
 * switched. capsim_fabric_link_orbit: the link of the first block that a
 * link is moved onto by whole blocks (its representative): a node's links
 * by its index modulo B, a leaf's by its leaf in the plane modulo the
 * block's leaves, an aggregation switch's by its pod modulo the block's
 * pods. */
int capsim_fabric_translation_block(const capsim_fabric *f, int nodes, int dmodk);
int capsim_fabric_link_orbit(const capsim_fabric *f, int link, int block);

/* The switches' links of capsim_fabric_route(f, a, b, hash, ...) alone,
 * chosen as it chooses them (the same routing state after), into links[0 ..
 * max), and the NIC link the route leaves a's node by into *origin (-1:
 * none, a and b in one node or NVLink domain); returns how many. */
size_t capsim_fabric_route_switches(capsim_fabric *f, int a, int b, uint64_t hash, int *links,
				    size_t max, int *origin);
/* Of a path's n links, those of switches and of the first node (its GPUs'
 * NVLink and PCIe links, its NICs' and their host bounces) kept, in order,
 * the other nodes' dropped; returns how many are kept. */
size_t capsim_fabric_keep_first_node(const capsim_fabric *f, int *links, size_t n);

void capsim_fabric_get_counts(const capsim_fabric *f, capsim_fabric_counts *c);

/* Which nodes each switch serves, for the floor layout (layout.h). Leaf
 * group i serves node positions [i per_leaf, (i + 1) per_leaf) with `planes`
 * leaves (one a rail, or a few rails a leaf, rail-optimised; one plain); at
 * three tiers a pod spans pod_leaves groups. One tier: one group for all. */
typedef struct capsim_fabric_shape {
	int tiers;                /* 0: no switched fabric */
	int planes;               /* leaves a group */
	int per_leaf;             /* node positions a group */
	int leaves_per_plane;     /* leaf groups */
	int pod_leaves;           /* three tiers: groups a pod spans, for placing it */
	int cores;                /* three tiers: core switches (0: one pod) */
	int slots;                /* node positions under the leaves */
} capsim_fabric_shape;

void capsim_fabric_get_shape(const capsim_fabric *f, capsim_fabric_shape *sh);

/* The leaf-spine (leaf-aggregation) cables of each leaf group, all its
 * leaves together, into cables[0 .. n) (their sum over the groups is
 * cables_leaf_spine; at three tiers with cores, each also climbs to a core,
 * so the sum is cables_spine_core too). */
void capsim_fabric_leaf_cables(const capsim_fabric *f, long *cables, int n);

/* Whether two fabrics are the same network: the same shape, links (ids,
 * capacities, incast), placement, routing and switch latency, so that the
 * same collective routes and runs alike on both; both idle. */
int capsim_fabric_same(const capsim_fabric *a, const capsim_fabric *b);

/* What a link is, for reports: kind and a readable name ("node3/nic2 up"). */
capsim_link_kind capsim_fabric_link_kind(const capsim_fabric *f, int link);
void capsim_fabric_link_name(const capsim_fabric *f, int link, char *buf,
			     size_t len);

/* PCIe bandwidth of one direction of a link of generation gen and lanes,
 * bytes/s (PCI-SIG rates after line encoding; see docs/model.md). */
double capsim_pcie_bw(int gen, int lanes);

#endif
