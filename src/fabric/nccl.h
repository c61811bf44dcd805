/* nccl.h - NCCL's own cost model: how NCCL 2.30 (NVIDIA/nccl 5067397c, see
 * docs/model.md) predicts the time of a collective for each algorithm and
 * protocol, and picks the cheapest. capsim uses it to choose the algorithm,
 * protocol and channel count the way NCCL would, then simulates the time on
 * its own fabric (fabric.h), where contention and oversubscription show.
 *
 * Units follow NCCL's internals where noted (microseconds, GB/s = 1e9 B/s);
 * everything capsim exposes elsewhere is SI. This module has no state. */
#ifndef CAPSIM_NCCL_H
#define CAPSIM_NCCL_H

#include <stddef.h>

typedef enum capsim_coll {
	CAPSIM_COLL_ALLREDUCE,
	CAPSIM_COLL_ALLGATHER,
	CAPSIM_COLL_REDUCESCATTER,
	CAPSIM_COLL_BROADCAST,
	CAPSIM_COLL_REDUCE,
	CAPSIM_COLL_ALLTOALL,
	CAPSIM_COLL_SENDRECV,
	CAPSIM_COLL__COUNT
} capsim_coll;

/* NCCL's order (ncclAlgoStr) */
typedef enum capsim_algo {
	CAPSIM_ALGO_TREE,
	CAPSIM_ALGO_RING,
	CAPSIM_ALGO_COLLNET_DIRECT,
	CAPSIM_ALGO_COLLNET_CHAIN,
	CAPSIM_ALGO_NVLS,
	CAPSIM_ALGO_NVLS_TREE,
	CAPSIM_ALGO_PAT,
	CAPSIM_ALGO__COUNT
} capsim_algo;

typedef enum capsim_proto {
	CAPSIM_PROTO_LL,
	CAPSIM_PROTO_LL128,
	CAPSIM_PROTO_SIMPLE,
	CAPSIM_PROTO__COUNT
} capsim_proto;

/* compute-capability class, NCCL's index */
typedef enum capsim_gpu_arch {
	CAPSIM_ARCH_VOLTA,     /* SM < 80 */
	CAPSIM_ARCH_AMPERE,    /* SM 80-89 */
	CAPSIM_ARCH_HOPPER,    /* SM 90-99 */
	CAPSIM_ARCH_BLACKWELL  /* SM >= 100 */
} capsim_gpu_arch;

extern const char *const capsim_coll_names[CAPSIM_COLL__COUNT];  /* "all-reduce" ... */
/* nccl-tests' names (its programs are NAME_perf), as the measurement store
 * and calibrated profiles spell them: "all_reduce" ... "sendrecv" */
extern const char *const capsim_coll_perf_names[CAPSIM_COLL__COUNT];
extern const char *const capsim_algo_names[CAPSIM_ALGO__COUNT];  /* "ring", "tree", "nvls" ... */
extern const char *const capsim_proto_names[CAPSIM_PROTO__COUNT]; /* "LL", "LL128", "Simple" */

/* Parse names as users type them (case-insensitive: "allreduce", "all-reduce",
 * "all_reduce"; "ring", "collnet", "sharp" for CollNetDirect, "nvls", ...).
 * Return the index or -1. */
int capsim_coll_parse(const char *s);
int capsim_algo_parse(const char *s);
int capsim_proto_parse(const char *s);

/* What NCCL's topology search found for one algorithm's channel graph. */
typedef struct capsim_nccl_graph {
	int available;      /* 0: the algorithm cannot run here */
	int n_channels;     /* graph->nChannels */
	double bw_intra;    /* GB/s per channel inside a node */
	double bw_inter;    /* GB/s per channel between nodes */
	int intra_nvlink;   /* typeIntra is NVLink (else PCI) */
} capsim_nccl_graph;

/* The machine as NCCL's model sees it. */
typedef struct capsim_nccl_topo {
	int n_ranks, n_nodes;     /* ranks fill nodes in order */
	capsim_gpu_arch arch;
	int cpu_amd;              /* host CPUs are AMD (net overhead 2 us, llMaxBw row) */
	double net_latency_us;    /* the network plugin's latencyInter, usually 0 */
	int nvls_enable;          /* NCCL_NVLS_ENABLE and NVSwitch present */
	int collnet_enable;       /* NCCL_COLLNET_ENABLE with a SHARP plugin */
	int pat_enable;           /* NCCL_PAT_ENABLE (default auto = on) */
	int ll128_enable;         /* LL128 allowed on this platform */
	capsim_nccl_graph graph[CAPSIM_ALGO__COUNT];
} capsim_nccl_topo;

/* Inputs to the channel search (a simplified ncclTopoCompute: see
 * capsim_nccl_search). Bandwidths in GB/s as NCCL counts them. */
typedef struct capsim_nccl_hw {
	int gpus_per_node;
	capsim_gpu_arch arch;
	double nvlink_bw_per_gpu; /* links x per-link bw (SM90: 18 x 20.6); 0: no NVLink */
	int nvswitch;             /* GPUs reach each other through NVSwitch */
	double pcie_bw;           /* GPU <-> NIC path, width x speed / 80 (Gen5 x16: 48) */
	double nic_bw;            /* per NIC, speed_Mbps / 8000 (400 Gb/s: 50) */
	int nics_per_node;
	int gdr;                  /* GPUDirect RDMA usable */
} capsim_nccl_hw;

/* Fill topo->graph[] from hw the way NCCL's search does (speed arrays
 * highest first, channel duplication), for a job of n_ranks ranks on n_nodes
 * nodes. Ranks fill nodes in order: when they do not split evenly, every
 * node holds hw->gpus_per_node but the last, and the graphs are those of a
 * full node and of the last combined as NCCL's init does (the least
 * channels, the lowest bandwidths, the worse path). Also sets n_ranks,
 * n_nodes, arch; the other fields (the network's latency, the enables) are
 * the caller's and stay as they were. Returns 0, or -1 if the input is
 * inconsistent (no ranks, more ranks than the nodes hold). */
int capsim_nccl_search(const capsim_nccl_hw *hw, int n_ranks, int n_nodes,
		       capsim_nccl_topo *topo);

/* NCCL's per-(algorithm, protocol) latency (us) and algorithm bandwidth
 * (GB/s) for collective c (ncclTopoTuneModel). bw 0 means not available. */
void capsim_nccl_tune(const capsim_nccl_topo *topo, capsim_coll c,
		      double lat_us[CAPSIM_ALGO__COUNT][CAPSIM_PROTO__COUNT],
		      double bw_gbs[CAPSIM_ALGO__COUNT][CAPSIM_PROTO__COUNT]);

/* nBytes as NCCL counts it for collective c: bytes per rank for all-reduce,
 * broadcast, reduce; the whole gathered buffer (bytes per rank x n_ranks) for
 * all-gather and reduce-scatter. bytes is the user's buffer as nccl-tests
 * sizes it (see capsim_coll_bytes_convention in docs/model.md). */
double capsim_nccl_bytes(capsim_coll c, double bytes, int n_ranks);

/* Predicted time (us) of one algorithm/protocol (ncclTopoGetAlgoTime, with
 * the tree correction factors and the ring plateau); -1 if not available. */
double capsim_nccl_time_us(const capsim_nccl_topo *topo, capsim_coll c,
			   capsim_algo a, capsim_proto p, double nccl_bytes);

typedef struct capsim_nccl_choice {
	capsim_algo algo;
	capsim_proto proto;
	int n_channels;     /* channels NCCL would use for this size */
	double time_us;     /* NCCL's own prediction */
	double lat_us, bw_gbs;
} capsim_nccl_choice;

/* Pick the cheapest allowed pair (argmin of capsim_nccl_time_us), as
 * topoGetAlgoInfo does; algo_mask/proto_mask are bit sets (1u << algo) of
 * what is allowed (NCCL_ALGO / NCCL_PROTO), ~0u for all. Returns 0, or -1
 * when nothing is available (then *out is untouched). */
int capsim_nccl_select(const capsim_nccl_topo *topo, capsim_coll c,
		       double bytes, unsigned algo_mask, unsigned proto_mask,
		       capsim_nccl_choice *out);

#endif
