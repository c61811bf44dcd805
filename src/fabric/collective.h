/* collective.h - NCCL collectives simulated on the fabric: the algorithm,
 * protocol and channel count are chosen with NCCL's cost model (nccl.h) or
 * forced; the data then moves as long-lived flows over the fabric's links
 * (max-min fair, so contention and oversubscription show), with each phase's
 * latency added in closed form from NCCL's latency model.
 *
 * Sizes follow nccl-tests: `bytes` is what nccl-tests prints as size, the
 * per-rank buffer for all-reduce, broadcast, reduce and send/recv, the whole
 * gathered buffer (per rank x ranks) for all-gather, reduce-scatter and
 * all-to-all; algbw = bytes / time and busbw = algbw x nccl-tests' factor. */
#ifndef CAPSIM_COLLECTIVE_H
#define CAPSIM_COLLECTIVE_H

#include <stdint.h>

#include "diag.h"
#include "fabric.h"
#include "nccl.h"
#include "spec.h"

/* capsim's algorithms beyond NCCL's: intra-node reduce-scatter, inter-node
 * all-reduce per local rank, intra-node all-gather, one after the other */
#define CAPSIM_ALGO_HIERARCHICAL ((int)CAPSIM_ALGO__COUNT)
/* all-to-all and send/recv run as point-to-point transfers */
#define CAPSIM_ALGO_P2P ((int)CAPSIM_ALGO__COUNT + 1)

typedef struct capsim_coll_req {
	capsim_coll op;
	double bytes;   /* nccl-tests size, bytes */
	int ranks;      /* the first `ranks` GPUs, filling nodes in order */
	int algo;       /* -1: as NCCL would choose; else a capsim_algo or the above */
	int proto;      /* -1: as NCCL would choose */
	int channels;   /* 0: as NCCL would choose */
	int no_nccl_caps; /* 1: only the links limit bandwidth (for closed-form checks) */
	int fold;       /* 1: fold flows into symmetry classes (colour
			 * refinement: an equitable partition of links and
			 * flows, exact for max-min rates); 0: simulate every
			 * flow; -1: fold each phase whose flows fall into
			 * at most half as many classes (ECMP's collisions
			 * break the symmetry: such phases run unfolded),
			 * and count a large plan rather than simulate it
			 * where that is exact (counted, below) */
	uint64_t seed;  /* ECMP hashing */
} capsim_coll_req;

typedef struct capsim_coll_result {
	int algo, proto, channels;
	double time_s;
	double algbw_bytes_per_s, busbw_bytes_per_s;
	double nccl_time_s;   /* NCCL's own closed-form prediction (-1: none) */
	double latency_s;     /* the closed-form latency part of time_s */
	uint64_t events, flows, solves;
	int folded;           /* the run was folded */
	size_t flow_classes, link_classes; /* when folded */
	int busiest_link;     /* the link busy longest (bytes / capacity) over
			       * the whole plan, folded or not; -1 if none */
	double busiest_bytes; /* what that link carried */
	double flow_estimate; /* flows the plan was bounded by before it was built,
			       * checked against workload.flow-limit (on one block:
			       * the first block's) */
	const char *approximation; /* NULL: as simulated, exact; else what was taken
				    * for what, and why (a static string) */
	int quotient_blocks;  /* simulated (or counted, for NCCL's trees, with the
			       * edges between blocks apart) on the first of this
			       * many alike blocks of nodes (collective.c, "On one
			       * block"); 0: not */
	int counted;          /* routed and counted onto the links, not simulated
			       * (collective.c, "the census"): exact below
			       * workload.flow-limit, where it is used only where
			       * it is; past it, approximation says where it is
			       * not exact */
} capsim_coll_result;

/* Name of an algorithm, including capsim's own. */
const char *capsim_collective_algo_name(int algo);
/* Parse as capsim_algo_parse, plus "hierarchical" and "p2p". */
int capsim_collective_algo_parse(const char *s);

/* Latency of one NCCL point-to-point transfer: NCCL's ring step for Simple,
 * 8.4 us base plus 3.4 us over NVLink (intra) or 14 us over the network. */
double capsim_p2p_latency_s(int intra);

/* The parent of node `node` (0 .. nodes - 1) in tree `tree` (0, 1) of NCCL's
 * double binary tree over `nodes` nodes (ncclGetDtree, src/graph/trees.cc
 * of NVIDIA/nccl), as the tree algorithm's flows join them; -1 for the
 * tree's root (node 0 in tree 0; in tree 1 node nodes - 1 over an even
 * count, node 1 over an odd one). */
int capsim_collective_dtree_parent(int nodes, int tree, int node);

/* nccl-tests' bus bandwidth factor for op on n ranks. */
double capsim_busbw_factor(capsim_coll op, int n);

/* NCCL's view of this scenario's hardware (capsim_nccl_search's input). */
void capsim_collective_nccl_hw(const capsim_scenario *s, capsim_nccl_hw *hw);

/* Simulate one collective on a fabric built from s. The fabric's flow
 * network must be idle. Errors (a forced algorithm that does not apply,
 * more ranks than GPUs) go to d with the scenario file; returns 0 or -1. */
int capsim_collective_run(capsim_fabric *f, const capsim_scenario *s,
			  const capsim_coll_req *r, capsim_coll_result *out,
			  capsim_diags *d);

/* Whether request b on fabric fb of scenario sb runs exactly as request a
 * on fa of sa: the same request, the same network (capsim_fabric_same),
 * routing and flow limit, and the same NCCL choice in full (algorithm,
 * protocol, channels, latency, bandwidth and time), which is all of the
 * scenario a run reads: then b's result is a's. 1, else 0 (an invalid
 * request: 0). Two node groups' data-parallel planes (GPUs of one
 * generation, the same NICs and switches) are such a pair. */
int capsim_collective_same_run(capsim_fabric *fa, const capsim_scenario *sa,
			       const capsim_coll_req *a, capsim_fabric *fb,
			       const capsim_scenario *sb, const capsim_coll_req *b);

/* Whether request b would run the very plan request a runs on f: the
 * same request but for the operation, a reduce-scatter and an all-gather
 * (or one operation twice), whose NCCL choice (algorithm, protocol,
 * channels, latency and bandwidth caps) agrees, move the same bytes over
 * the same links. Then b's result is a's with b's own NCCL time, which
 * *b_nccl_time_s gets; 1. Else 0 (and an invalid request: 0). */
int capsim_collective_same_plan(capsim_fabric *f, const capsim_scenario *s,
				const capsim_coll_req *a, const capsim_coll_req *b,
				double *b_nccl_time_s);

/* Many groups at once, each a ring over strided GPUs (Megatron's data-
 * parallel groups: member i of group j is GPU base_j + i x stride, base_j
 * running over the other parallel dimensions). n_groups bases are given;
 * r->ranks members each; ring algorithm, r->proto (Simple if -1),
 * r->channels (NCCL's ring channels if 0); all-reduce, all-gather or
 * reduce-scatter; links only limit (no NCCL caps). The unfolded check of
 * simulating one group on a plane of its own. Returns 0 or -1. */
int capsim_collective_run_groups(capsim_fabric *f, const capsim_scenario *s,
				 const capsim_coll_req *r, const int *bases,
				 int n_groups, int stride, capsim_coll_result *out,
				 capsim_diags *d);

#endif
