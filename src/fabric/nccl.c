/* nccl.c - NCCL 2.30.7's own cost model and a simplified channel search (contract: nccl.h).
 *
 * What NCCL's tuner predicts, rewritten in C from NCCL's own source,
 * https://github.com/NVIDIA/nccl at 2.30.7 (commit
 * 5067397c2676d5aed50042fc39e5c8ee96eb0027; "reference n.m" below numbers
 * the section of capsim's notes on that commit, docs/nccl-notes.md, which
 * docs/model.md cites as "ref §n.m"; the NCCL file and function named with
 * it are the source):
 * src/graph/tuning.cc (ncclTopoTuneModel, ncclTopoGetAlgoTime),
 * src/enqueue.cc (updateCollCostTable, topoGetAlgoInfo), src/graph/search.cc
 * (ncclTopoCompute, ncclTopoDupChannels), src/graph/connect.cc
 * (ncclTopoPostset), src/init.cc and src/transport/nvls.cc. Constants carry
 * their source; the code is ours. docs/model.md explains the model.
 *
 * All-to-all and send/recv are not part of NCCL's tuning model: NCCL runs
 * them as peer-to-peer transfers with no algorithm or protocol choice. Here
 * capsim_nccl_tune marks every pair unavailable for them, capsim_nccl_time_us
 * returns -1 and capsim_nccl_select returns -1; the fabric simulates them as
 * p2p flows.
 *
 * Everything is computed in double precision where NCCL uses float; values
 * agree to about 1e-7 relative. */
#include "nccl.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "check.h"

#define ALGOS CAPSIM_ALGO__COUNT
#define PROTOS CAPSIM_PROTO__COUNT
#define ARCHS 4

/* hardware classes of the latency table (reference 1.1; NCCL_HW_NVLINK,
 * NCCL_HW_PCI, NCCL_HW_NET in src/include/plugin/nccl_tuner.h) */
enum { HW_NVLINK, HW_PCI, HW_NET, HW__COUNT };

/* ---- constants (reference 1.2-1.8; NVIDIA/nccl 5067397c) ---- */

/* Base latency per algorithm and protocol, us: reference 1.2,
 * src/graph/tuning.cc ncclTunerConstantsDefaults.baseLatencies. Rows in
 * capsim_algo order (Tree, Ring, CollNetDirect, CollNetChain, NVLS,
 * NVLSTree, PAT), columns LL, LL128, Simple. */
static const double base_lat_us[ALGOS][PROTOS] = {
	{ 6.8, 14.0, 8.4 },
	{ 6.6, 14.0, 8.4 },
	{ 0.0, 0.0, 0.0 },
	{ 0.0, 0.0, 0.0 },
	{ 0.0, 0.0, 0.0 },
	{ 0.0, 0.0, 0.0 },
	{ 8.0, 8.0, 8.0 },
};

/* Latency added per hop on each link class, us: reference 1.3,
 * src/graph/tuning.cc ncclTunerConstantsDefaults.hwLatencies. (NCCL copies
 * PCI Ring/Simple into PCI Tree/Simple on POWER hosts; capsim models x86
 * and ARM hosts only, so that override is not applied.) */
static const double hw_lat_us[HW__COUNT][ALGOS][PROTOS] = {
	[HW_NVLINK] = {
		{ 0.6, 1.25, 4.0 }, { 0.6, 1.9, 3.4 },
		{ 0.0, 0.0, 3.7 }, { 0.0, 0.0, 2.8 },
		{ 0.0, 0.0, 25.0 }, { 0.0, 0.0, 25.0 },
		{ 0.0, 0.0, 4.0 },
	},
	[HW_PCI] = {
		{ 1.0, 1.9, 4.0 }, { 1.0, 2.5, 5.7 },
		{ 0.0, 0.0, 3.7 }, { 0.0, 0.0, 2.8 },
		{ 0.0, 0.0, 0.0 }, { 0.0, 0.0, 0.0 },
		{ 0.0, 0.0, 4.0 },
	},
	[HW_NET] = {
		{ 5.0, 8.5, 14.0 }, { 2.7, 4.0, 14.0 },
		{ 0.0, 0.0, 31.0 }, { 0.0, 0.0, 30.0 },
		{ 0.0, 0.0, 18.0 }, { 0.0, 0.0, 20.9 },
		{ 0.0, 0.0, 14.0 },
	},
};

/* Caps in GB/s; columns are the tuning scale 1 node / 2 nodes / 3 or more
 * nodes (index2 = nNodes - 1, at most 2). Reference 1.5 "Per-architecture
 * caps", src/graph/tuning.cc ncclTunerConstantsDefaults. */

/* LL bus bandwidth cap. Row by GPU class on one node, by host CPU vendor on
 * more (row 0 Intel, row 1 AMD), so rows 2-3 matter only for column 0. */
static const double ll_max_bw_gbs[ARCHS][3] = {
	{ 39.0, 39.0, 20.4 },
	{ 87.7, 22.5, 19.0 },
	{ 141.0, 45.0, 35.0 },
	{ 282.0, 90.0, 70.0 },
};

/* per-channel cap of Ring/LL128, by GPU class */
static const double per_ch_max_ring_ll128_bw_gbs[ARCHS][3] = {
	{ 20.0, 20.0, 20.0 },
	{ 20.0, 20.0, 20.0 },
	{ 36.7, 36.7, 36.7 },
	{ 40.0, 40.0, 40.0 },
};

/* per-channel cap of Tree/LL128 */
static const double per_ch_max_tree_ll128_bw_gbs[ARCHS][3] = {
	{ 20.0, 20.0, 20.0 },
	{ 20.0, 20.0, 20.0 },
	{ 36.7, 36.7, 29.0 },
	{ 55.6, 31.67, 20.0 },
};

/* per-channel cap of Tree all-reduce, any protocol */
static const double per_ch_max_tree_bw_gbs[ARCHS][3] = {
	{ 26.5, 18.5, 10.0 },
	{ 24.0, 23.6, 17.8 },
	{ 38.7, 41.4, 36.0 },
	{ 70.0, 42.8, 24.0 },
};

/* per-channel cap of NVLSTree */
static const double per_ch_max_nvls_tree_bw_gbs[ARCHS][3] = {
	{ 26.5, 18.5, 10.0 },
	{ 24.0, 23.6, 17.8 },
	{ 0.0, 57.7, 45.5 },
	{ 0.0, 96.0, 80.0 },
};

/* NVLS efficiency by GPU class: reference 1.5, src/graph/tuning.cc
 * nvlsEfficiency */
static const double nvls_efficiency[ARCHS] = { 0.0, 0.0, 0.85, 0.74 };

/* Size-dependent bandwidth factors of Tree all-reduce, indexed by
 * floor(log2(nBytes / 64)), 64 B to 512 MiB: reference 1.6,
 * src/graph/tuning.cc treeCorrectionFactor. */
#define TREE_CORR_SIZES 24
static const double tree_correction[PROTOS][TREE_CORR_SIZES] = {
	{ 1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5,
	  .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0 },
	{ 1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6,
	  .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0 },
	{ .9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5,
	  .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9 },
};

/* Network post overhead, us, when nNodes > 1 (x3 for Simple): reference
 * 1.3, src/graph/tuning.cc getNetOverhead. */
#define NET_OVERHEAD_INTEL_US 1.0
#define NET_OVERHEAD_AMD_US 2.0

/* Ring/Simple all-reduce plateau, reference 1.1, ncclTopoGetAlgoTime */
#define RING_PLATEAU_BYTES_PER_CH_RANK 64.0
#define RING_PLATEAU_SM80 1.4
#define RING_PLATEAU_SM70 1.9

/* CollNetDirect arity serialization, us per extra local rank (1.4) */
#define COLLNET_ARITY_LAT_US 0.4

/* Channels and threads: reference 1.5 and 1.8; src/include/device.h,
 * src/include/comm.h, src/transport/nvls.cc, src/init.cc. */
#define MAXCHANNELS 64
#define RING_MAX_CHANNELS (MAXCHANNELS / 2) /* init.cc ringGraph->maxChannels */
#define NCCL_MAX_NVLS_ARITY 32
#define NCCL_MAX_DIRECT_ARITY 7
#define NVLS_NCHANNELS_SM90 16
#define NVLS_NCHANNELS_SM100 32     /* multi-node */
#define NVLS_NCHANNELS_SM100_NVL 24 /* one node */
#define NCCL_MAX_NTHREADS 640
#define NCCL_SIMPLE_MAX_NTHREADS 512
#define NCCL_LL_MAX_NTHREADS 512
#define NCCL_LL128_MAX_NTHREADS 640
#define NCCL_LL_THREAD_THRESHOLD 8
#define NCCL_LL128_THREAD_THRESHOLD 8
#define NCCL_SIMPLE_THREAD_THRESHOLD 64
#define COLLNET_SIMPLE_THREAD_THRESHOLD 512
#define PCI_BW_GBS 12.0 /* src/graph/topo.h PCI_BW, "PCI Gen3 x16" */
#define LOC_BW_GBS 5000.0 /* src/graph/topo.h LOC_BW */

/* Per-channel speeds the search tries, highest first, GB/s: reference 1.5,
 * src/graph/search.cc speedArrayIntra/Inter, sm90SpeedArray*,
 * sm100SpeedArray*. */
static const double speed_intra_sm70[] = { 40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0,
					   9.0, 7.0, 6.0, 5.0, 4.0, 3.0 };
static const double speed_inter_sm70[] = { 48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0,
					   12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0,
					   3.0, 2.4, 1.2, 0.24, 0.12 };
static const double speed_intra_sm90[] = { 60.0, 50.0, 40.0, 30.0, 24.0, 20.0,
					   15.0, 12.0, 11.0, 6.0, 3.0 };
static const double speed_inter_sm90[] = { 48.0, 45.0, 42.0, 40.0, 30.0, 24.0,
					   22.0, 20.0, 17.5, 15.0, 12.0, 6.0,
					   3.0, 2.4, 1.2, 0.24, 0.12 };
static const double speed_intra_sm100[] = { 90.0, 80.0, 70.0, 60.0, 50.0, 45.0,
					    40.0, 30.0, 24.0, 20.0, 19.0, 18.0 };
static const double speed_inter_sm100[] = { 96.0, 86.0, 80.0, 48.0, 45.1, 42.0,
					    40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
					    15.0, 12.0, 6.0, 3.0, 2.4, 1.2,
					    0.24, 0.12 };
#define NELEM(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ---- names ---- */

const char *const capsim_coll_names[CAPSIM_COLL__COUNT] = {
	"all-reduce", "all-gather", "reduce-scatter", "broadcast", "reduce",
	"all-to-all", "send-recv",
};

const char *const capsim_coll_perf_names[CAPSIM_COLL__COUNT] = {
	"all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce",
	"alltoall", "sendrecv",
};

const char *const capsim_algo_names[CAPSIM_ALGO__COUNT] = {
	"tree", "ring", "collnet-direct", "collnet-chain", "nvls", "nvls-tree", "pat",
};

const char *const capsim_proto_names[CAPSIM_PROTO__COUNT] = { "LL", "LL128", "Simple" };

/* s equals canon (a name with '-' between words) case-insensitively, with
 * the hyphens written as '-', as '_' or left out, the same way throughout */
static int spelled_as(const char *s, const char *canon)
{
	static const char seps[] = { '-', '_', '\0' };
	char buf[32];
	size_t len = strlen(canon);
	if (len >= sizeof buf)
		return 0;
	for (size_t k = 0; k < sizeof seps; k++) {
		size_t j = 0;
		for (size_t i = 0; i < len; i++) {
			if (canon[i] != '-')
				buf[j++] = canon[i];
			else if (seps[k] != '\0')
				buf[j++] = seps[k];
		}
		buf[j] = '\0';
		if (strcasecmp(s, buf) == 0)
			return 1;
	}
	return 0;
}

int capsim_coll_parse(const char *s)
{
	if (s == NULL)
		return -1;
	for (int c = 0; c < CAPSIM_COLL__COUNT; c++)
		if (spelled_as(s, capsim_coll_names[c]))
			return c;
	return -1;
}

int capsim_algo_parse(const char *s)
{
	if (s == NULL)
		return -1;
	for (int a = 0; a < CAPSIM_ALGO__COUNT; a++)
		if (spelled_as(s, capsim_algo_names[a]))
			return a;
	/* SHARP is the CollNet plugin users know; CollNet alone means Direct */
	if (strcasecmp(s, "collnet") == 0 || strcasecmp(s, "sharp") == 0)
		return CAPSIM_ALGO_COLLNET_DIRECT;
	return -1;
}

int capsim_proto_parse(const char *s)
{
	if (s == NULL)
		return -1;
	for (int p = 0; p < CAPSIM_PROTO__COUNT; p++)
		if (strcasecmp(s, capsim_proto_names[p]) == 0)
			return p;
	return -1;
}

/* ---- helpers ---- */

static int imin(int a, int b) { return a < b ? a : b; }
static int imax(int a, int b) { return a > b ? a : b; }

/* floor(log2(x)) for x >= 1, -1 below: NCCL's log2i of the integer part */
static int log2_floor(double x)
{
	if (!(x >= 1.0))
		return -1;
	if (isinf(x))
		return 1024;
	int e;
	(void)frexp(x, &e); /* x = m 2^e, 0.5 <= m < 1 */
	return e - 1;
}

/* how many times step fits in cap, with NCCL's 1e-3 rounding of link
 * bandwidth bookkeeping (search.cc SUB_ROUND) */
static int fits(double cap, double step)
{
	if (!(step > 0.0) || !(cap > 0.0))
		return 0;
	double n = floor(cap / step + 1e-6);
	return n > MAXCHANNELS * 4 ? MAXCHANNELS * 4 : (int)n;
}

/* the collectives NCCL's tuning model covers (not all-to-all, send/recv) */
static int coll_in_model(capsim_coll c)
{
	return (int)c >= CAPSIM_COLL_ALLREDUCE && (int)c <= CAPSIM_COLL_REDUCE;
}

static int arch_valid(capsim_gpu_arch a)
{
	return (int)a >= CAPSIM_ARCH_VOLTA && (int)a <= CAPSIM_ARCH_BLACKWELL;
}

/* the topology NCCL's model can be applied to at all */
static int topo_valid(const capsim_nccl_topo *t)
{
	return t != NULL && t->n_nodes >= 1 && t->n_ranks >= t->n_nodes &&
	       arch_valid(t->arch);
}

/* Algorithms ncclTopoTuneModel considers per collective (reference 1.7,
 * tuning.cc): Broadcast/Reduce ring only; AllGather/ReduceScatter ring,
 * PAT, NVLS, CollNetDirect; AllReduce everything but PAT. */
static int algo_considered(capsim_coll c, capsim_algo a)
{
	switch (c) {
	case CAPSIM_COLL_BROADCAST:
	case CAPSIM_COLL_REDUCE:
		return a == CAPSIM_ALGO_RING;
	case CAPSIM_COLL_ALLGATHER:
	case CAPSIM_COLL_REDUCESCATTER:
		return a == CAPSIM_ALGO_RING || a == CAPSIM_ALGO_PAT ||
		       a == CAPSIM_ALGO_NVLS || a == CAPSIM_ALGO_COLLNET_DIRECT;
	case CAPSIM_COLL_ALLREDUCE:
		return a != CAPSIM_ALGO_PAT;
	default:
		return 0;
	}
}

/* ncclPatEnable (tuning.cc): NCCL_PAT_ENABLE auto means one GPU per node
 * (SM >= 60 always holds for capsim's classes; the network is host-driven) */
static int pat_enabled(const capsim_nccl_topo *t)
{
	return t->pat_enable && t->n_nodes == t->n_ranks;
}

/* comm->nChannels after ncclTopoPostset (connect.cc; reference 1.5
 * "Channel count adjustments"): ring and tree share the smaller channel
 * count (init.cc), which is doubled, capped at MAXCHANNELS; CollNet adds
 * half when the chain graph's intra bandwidth beats its inter bandwidth and
 * a node holds several ranks; Hopper+ multi-node rings with bwIntra > 45
 * and fewer than 16 channels double again. NCCL_MIN/MAX_NCHANNELS and CTA
 * limits are left at their defaults. */
static int comm_channels(const capsim_nccl_topo *t)
{
	const capsim_nccl_graph *ring = &t->graph[CAPSIM_ALGO_RING];
	const capsim_nccl_graph *tree = &t->graph[CAPSIM_ALGO_TREE];
	const capsim_nccl_graph *chain = &t->graph[CAPSIM_ALGO_COLLNET_CHAIN];
	int nc = ring->available ? ring->n_channels : 0;
	if (tree->available && tree->n_channels > 0)
		nc = nc > 0 ? imin(nc, tree->n_channels) : tree->n_channels;
	nc = imax(nc, 1);
	nc = imin(MAXCHANNELS, nc * 2);
	if (t->collnet_enable && chain->available && chain->bw_intra > chain->bw_inter &&
	    t->n_ranks > t->n_nodes)
		nc = imin(MAXCHANNELS, nc + nc / 2);
	if (t->arch >= CAPSIM_ARCH_HOPPER && t->n_nodes > 1 && ring->bw_intra > 45.0 && nc < 16)
		nc *= 2;
	return nc;
}

/* comm->nvlsChannels (nvls.cc ncclNvlsTuning, defaults only: the SM100
 * multi-node refinement by NIC speed is not modelled) */
static int nvls_channels(const capsim_nccl_topo *t)
{
	if (t->arch >= CAPSIM_ARCH_BLACKWELL)
		return t->n_nodes > 1 ? NVLS_NCHANNELS_SM100 : NVLS_NCHANNELS_SM100_NVL;
	return NVLS_NCHANNELS_SM90;
}

/* comm->maxThreads[a][p] as ncclTopoTuneModel sets it (no NCCL_NTHREADS);
 * PAT's entry is never set there and stays 0 */
static int max_threads(const capsim_nccl_topo *t, capsim_algo a, capsim_proto p)
{
	const capsim_nccl_graph *ring = &t->graph[CAPSIM_ALGO_RING];
	switch (p) {
	case CAPSIM_PROTO_SIMPLE:
		if (a == CAPSIM_ALGO_RING)
			return ring->bw_intra * ring->n_channels <= PCI_BW_GBS ?
				       256 : NCCL_SIMPLE_MAX_NTHREADS;
		if (a == CAPSIM_ALGO_TREE)
			return NCCL_SIMPLE_MAX_NTHREADS;
		if (a == CAPSIM_ALGO_PAT)
			return 0;
		return NCCL_MAX_NTHREADS;
	case CAPSIM_PROTO_LL:
		return a == CAPSIM_ALGO_RING || a == CAPSIM_ALGO_TREE ? NCCL_LL_MAX_NTHREADS : 0;
	case CAPSIM_PROTO_LL128:
		return a == CAPSIM_ALGO_RING || a == CAPSIM_ALGO_TREE ? NCCL_LL128_MAX_NTHREADS : 0;
	default:
		return 0;
	}
}

/* comm->threadThresholds[a][p] (tuning.cc, no NCCL_THREAD_THRESHOLDS) */
static double thread_threshold(const capsim_nccl_topo *t, capsim_algo a, capsim_proto p)
{
	switch (p) {
	case CAPSIM_PROTO_LL:
		return NCCL_LL_THREAD_THRESHOLD * (a == CAPSIM_ALGO_RING ? t->n_ranks : 1);
	case CAPSIM_PROTO_LL128:
		return NCCL_LL128_THREAD_THRESHOLD;
	default:
		if (a == CAPSIM_ALGO_COLLNET_DIRECT || a == CAPSIM_ALGO_COLLNET_CHAIN)
			return COLLNET_SIMPLE_THREAD_THRESHOLD;
		return NCCL_SIMPLE_THREAD_THRESHOLD;
	}
}

/* ---- the model: ncclTopoTuneModel for one (collective, algorithm,
 * protocol) ---- */

/* One (collective, algorithm, protocol) pair and what the model derives
 * from the topology for it before any figure. */
typedef struct {
	const capsim_nccl_topo *t;
	const capsim_nccl_graph *g; /* the algorithm's graph */
	capsim_coll c;
	capsim_algo a;
	capsim_proto p;
	int n_ranks, n_nodes;
	int ppn_i;  /* NCCL's integer nRanks/nNodes */
	double ppn; /* NCCL's float ppn */
	int cc;     /* the architecture's row of the per-channel tables */
	int idx1, idx2;
	int nsteps; /* ring steps of the collective */
	int ag_rs, nvls, collnet;
	int n_ch;
} tune_ctx;

static void tune_ctx_init(tune_ctx *q, const capsim_nccl_topo *t, capsim_coll c,
			  capsim_algo a, capsim_proto p)
{
	q->t = t;
	q->g = &t->graph[a];
	q->c = c;
	q->a = a;
	q->p = p;
	q->n_ranks = t->n_ranks;
	q->n_nodes = t->n_nodes;
	q->ppn_i = q->n_ranks / q->n_nodes;
	q->ppn = (double)q->n_ranks / q->n_nodes;
	q->cc = (int)t->arch;
	q->idx2 = q->n_nodes <= 2 ? q->n_nodes - 1 : 2;
	q->idx1 = q->n_nodes == 1 ? q->cc : (t->cpu_amd ? 1 : 0);
	q->nsteps = c == CAPSIM_COLL_ALLREDUCE ? 2 * (q->n_ranks - 1) :
		    c == CAPSIM_COLL_ALLGATHER || c == CAPSIM_COLL_REDUCESCATTER ?
						 q->n_ranks - 1 :
						 q->n_ranks;
	q->ag_rs = c == CAPSIM_COLL_ALLGATHER || c == CAPSIM_COLL_REDUCESCATTER;
	q->nvls = a == CAPSIM_ALGO_NVLS || a == CAPSIM_ALGO_NVLS_TREE;
	q->collnet = a == CAPSIM_ALGO_COLLNET_DIRECT || a == CAPSIM_ALGO_COLLNET_CHAIN;
	q->n_ch = q->g->n_channels;
	/* the callers' promise: topo_valid(t) and 2 <= n_ranks */
	CAPSIM_ASSERT(topo_valid(t) && q->n_ranks >= 2);
	CAPSIM_ASSERT(q->idx2 >= 0 && q->idx2 <= 2 && q->nsteps >= 1);
}

/* 0 for the pairs NCCL's model never fills in (their entries stay 0) */
static int pair_modelled(const tune_ctx *q)
{
	if (!algo_considered(q->c, q->a))
		return 0;
	if (q->nvls && q->p != CAPSIM_PROTO_SIMPLE)
		return 0;
	if (q->a == CAPSIM_ALGO_PAT && (q->p != CAPSIM_PROTO_SIMPLE || !pat_enabled(q->t)))
		return 0;
	if (q->nvls && q->n_ch < 2) /* NVLS needs two channels */
		return 0;
	return 1;
}

/* 1.5 steps 1 and 2: the bandwidth of one channel */
static double channel_bw(const tune_ctx *q)
{
	const capsim_nccl_graph *g = q->g;
	double bw = q->n_nodes <= 2 || q->collnet ? g->bw_intra : g->bw_inter;
	if (q->nvls) {
		/* 1.5 step 2: NVLS bus bandwidth per channel */
		double intra_bw = g->bw_intra * nvls_efficiency[q->cc] * (q->n_ch - 1) / q->n_ch;
		intra_bw *= q->c == CAPSIM_COLL_ALLREDUCE ? 2.0 : (q->ppn - 1.0) / q->ppn;
		double inter_bw = g->bw_inter *
				  (q->n_nodes <= 2 && q->a == CAPSIM_ALGO_NVLS_TREE ? 2.0 : 1.0);
		bw = fmin(intra_bw, inter_bw);
		if (q->a == CAPSIM_ALGO_NVLS_TREE)
			bw = fmin(bw, per_ch_max_nvls_tree_bw_gbs[q->cc][q->idx2]);
	}
	return bw;
}

/* 1.5 step 3 for CollNet and for AG/RS across nodes: bus bandwidth from
 * bus, NCCL's refinements of those algorithms */
static double collnet_bus_bw(const tune_ctx *q, double bus)
{
	const capsim_nccl_graph *g = q->g;
	if (q->collnet && q->p != CAPSIM_PROTO_SIMPLE)
		bus = 0.0;
	if (q->a == CAPSIM_ALGO_COLLNET_DIRECT && q->p == CAPSIM_PROTO_SIMPLE) {
		if (q->ag_rs) {
			bus = q->ppn * fmin(g->bw_intra, g->bw_inter * 0.9);
		} else if (q->n_ch > 0) {
			double f = q->ppn / q->n_ch; /* GPUs per NIC */
			f -= (f - 1.0) / 2.0;
			bus /= f;
			if (q->t->arch >= CAPSIM_ARCH_HOPPER)
				bus *= 0.85;
		}
	}
	/* AG/RS over NVLS or CollNetDirect across nodes: only with a CollNet
	 * plugin implementing iallgather/ireducescatter (capsim assumes
	 * collnet_enable means it does) and no more local ranks than heads
	 * (the CollNetDirect graph's channels) */
	if ((q->a == CAPSIM_ALGO_NVLS || q->a == CAPSIM_ALGO_COLLNET_DIRECT) && q->ag_rs &&
	    q->n_nodes > 1) {
		int heads = q->t->graph[CAPSIM_ALGO_COLLNET_DIRECT].available ?
				    q->t->graph[CAPSIM_ALGO_COLLNET_DIRECT].n_channels :
				    0;
		if (!q->t->collnet_enable || q->ppn_i > heads)
			bus = 0.0;
	}
	return bus;
}

/* 1.5 steps 3 and 4: the algorithm bandwidth of the pair (before what is
 * enabled) */
static double algo_bw(const tune_ctx *q)
{
	capsim_algo a = q->a;
	capsim_proto p = q->p;
	int cc = q->cc, idx2 = q->idx2, n_ch = q->n_ch;
	double bus = n_ch * channel_bw(q);
	const double ll_max = ll_max_bw_gbs[q->idx1][idx2];
	if (a == CAPSIM_ALGO_RING && p == CAPSIM_PROTO_LL)
		bus = fmin(ll_max, bus * 0.5);
	if (a == CAPSIM_ALGO_RING && p == CAPSIM_PROTO_LL128)
		bus = fmin(bus * 0.92, n_ch * per_ch_max_ring_ll128_bw_gbs[cc][idx2]);
	if (a == CAPSIM_ALGO_TREE && q->c == CAPSIM_COLL_ALLREDUCE)
		bus = fmin(bus * 0.92, n_ch * per_ch_max_tree_bw_gbs[cc][idx2]);
	if (a == CAPSIM_ALGO_TREE && p == CAPSIM_PROTO_LL)
		bus = fmin(bus / 3.8, ll_max);
	if (a == CAPSIM_ALGO_TREE && p == CAPSIM_PROTO_LL128)
		bus = fmin(bus * (q->n_nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
			   n_ch * per_ch_max_tree_ll128_bw_gbs[cc][idx2]);
	/* NCCL's search gives the tree graph the unbalanced TREE pattern when a
	 * node holds one GPU (search.cc); comm->maxTreePattern is then TREE */
	if (a == CAPSIM_ALGO_TREE && q->ppn_i == 1)
		bus *= 0.85;
	if (a == CAPSIM_ALGO_PAT)
		bus *= 0.75;
	bus = collnet_bus_bw(q, bus);

	/* 1.5 step 4: bus to algorithm bandwidth; none for the non-ring
	 * algorithms of AllGather/ReduceScatter */
	if (!(a != CAPSIM_ALGO_RING && q->ag_rs)) {
		if (a == CAPSIM_ALGO_RING || q->nvls)
			bus *= (double)q->n_ranks / q->nsteps;
		else
			bus *= 0.5;
	}
	return bus;
}

/* 1.4: the latency of the ring algorithms */
static double ring_latency(const tune_ctx *q, int hw, double intra_lat, double inter_lat)
{
	if (q->c == CAPSIM_COLL_BROADCAST || q->c == CAPSIM_COLL_REDUCE) {
		/* capsim's symmetric searches keep sameChannels = 1 */
		return hw_lat_us[hw][CAPSIM_ALGO_RING][q->p];
	}
	double net_overhead = 0.0;
	if (q->n_nodes > 1) {
		net_overhead = q->t->cpu_amd ? NET_OVERHEAD_AMD_US : NET_OVERHEAD_INTEL_US;
		if (q->p == CAPSIM_PROTO_SIMPLE)
			net_overhead *= 3.0;
	}
	intra_lat = fmax(intra_lat, net_overhead);
	int n_inter = q->n_nodes == 1 ? 0 :
		      q->c == CAPSIM_COLL_ALLREDUCE ? 2 * (q->n_nodes - 1) :
						       q->n_nodes - 1;
	CAPSIM_ASSERT(n_inter <= q->nsteps);
	return (q->nsteps - n_inter) * intra_lat + n_inter * inter_lat;
}

/* 1.4: the latency of the pair, in us */
static double pair_latency(const tune_ctx *q)
{
	capsim_proto p = q->p;
	const int intra_hw = q->g->intra_nvlink ? HW_NVLINK : HW_PCI;
	const int hw = q->n_nodes == 1 ? intra_hw : HW_NET;
	const int ppn_i = q->ppn_i;
	double lat = base_lat_us[q->a][p];
	double intra_lat = hw_lat_us[intra_hw][q->a][p];
	/* one rank per node exposes the whole network latency: Tree's row */
	double inter_lat = q->ppn == 1.0 ? hw_lat_us[HW_NET][CAPSIM_ALGO_TREE][p] :
					   hw_lat_us[HW_NET][q->a][p];
	inter_lat += q->t->net_latency_us;
	if (p == CAPSIM_PROTO_SIMPLE)
		inter_lat += q->t->net_latency_us; /* flush */
	const int log_nodes = log2_floor(q->n_nodes);

	switch (q->a) {
	case CAPSIM_ALGO_RING:
		lat += ring_latency(q, hw, intra_lat, inter_lat);
		break;
	case CAPSIM_ALGO_TREE:
		if (q->c == CAPSIM_COLL_ALLREDUCE)
			lat += 2.0 * ((ppn_i - 1) * intra_lat + log_nodes * inter_lat);
		break;
	case CAPSIM_ALGO_COLLNET_DIRECT:
		lat += 2.0 * (imin(1, ppn_i - 1) * intra_lat + (ppn_i - 1) * COLLNET_ARITY_LAT_US) +
		       inter_lat;
		break;
	case CAPSIM_ALGO_COLLNET_CHAIN:
		lat += 2.0 * (ppn_i - 1) * intra_lat + inter_lat;
		break;
	case CAPSIM_ALGO_NVLS:
		lat = intra_lat + (q->n_nodes > 1 ? inter_lat : 0.0);
		break;
	case CAPSIM_ALGO_NVLS_TREE:
		lat += intra_lat + 2.0 * log_nodes * inter_lat;
		break;
	case CAPSIM_ALGO_PAT:
		lat += log_nodes * (inter_lat / 3.5) + q->n_ranks * 2.8;
		break;
	default:
		break;
	}
	return lat;
}

/* 1.7: 1 when the pair is disabled (tuning.cc after the model; enqueue.cc
 * updateCollCostTable) */
static int pair_off(const tune_ctx *q)
{
	const capsim_nccl_topo *t = q->t;
	int off = !q->g->available || q->n_ch < 1;
	if (q->a == CAPSIM_ALGO_NVLS_TREE && q->n_nodes == 1)
		off = 1;
	if (!t->collnet_enable && (q->collnet || (q->a == CAPSIM_ALGO_NVLS && q->n_nodes > 1)))
		off = 1;
	if (!t->nvls_enable && q->nvls)
		off = 1;
	if (q->p == CAPSIM_PROTO_LL128 && !t->ll128_enable)
		off = 1;
	if (q->collnet && q->ppn_i > NCCL_MAX_DIRECT_ARITY + 1)
		off = 1;
	if (q->nvls && q->c != CAPSIM_COLL_ALLREDUCE && q->ppn_i > NCCL_MAX_NVLS_ARITY)
		off = 1;
	return off;
}

/* Sets *lat_us and *bw_gbs (algorithm bandwidth) for one pair; both stay 0
 * for pairs NCCL's model skips, and *bw_gbs is 0 for pairs it disables.
 * topo_valid(t) and 2 <= n_ranks hold. Reference 1.3-1.7. */
static void tune_pair(const capsim_nccl_topo *t, capsim_coll c, capsim_algo a,
		      capsim_proto p, double *lat_us, double *bw_gbs)
{
	*lat_us = 0.0;
	*bw_gbs = 0.0;
	tune_ctx q;
	tune_ctx_init(&q, t, c, a, p);
	if (!pair_modelled(&q))
		return;
	double bus = algo_bw(&q);
	*lat_us = pair_latency(&q);
	*bw_gbs = pair_off(&q) ? 0.0 : bus;
}

void capsim_nccl_tune(const capsim_nccl_topo *topo, capsim_coll c,
		      double lat_us[CAPSIM_ALGO__COUNT][CAPSIM_PROTO__COUNT],
		      double bw_gbs[CAPSIM_ALGO__COUNT][CAPSIM_PROTO__COUNT])
{
	for (int a = 0; a < ALGOS; a++)
		for (int p = 0; p < PROTOS; p++)
			lat_us[a][p] = bw_gbs[a][p] = 0.0;
	/* one rank: NCCL's model fills nothing (the select path answers
	 * Ring/Simple in no time); p2p collectives are not modelled */
	if (!topo_valid(topo) || !coll_in_model(c) || topo->n_ranks < 2)
		return;
	for (int a = 0; a < ALGOS; a++)
		for (int p = 0; p < PROTOS; p++)
			tune_pair(topo, c, (capsim_algo)a, (capsim_proto)p, &lat_us[a][p],
				  &bw_gbs[a][p]);
}

double capsim_nccl_bytes(capsim_coll c, double bytes, int n_ranks)
{
	/* nccl-tests' size is max(send, recv) bytes per rank: for
	 * all-gather/reduce-scatter (and all-to-all) that is already the whole
	 * buffer, count x n_ranks x type size, which is NCCL's nBytes; for the
	 * others it is count x type size. So the two agree. */
	(void)n_ranks;
	if ((int)c < 0 || (int)c >= CAPSIM_COLL__COUNT)
		return -1.0;
	return bytes;
}

/* ncclTopoGetAlgoTime with numPipeOps = 1. Returns the time in us, or -1;
 * *lat_eff_us and *bw_eff_gbs get the latency and bandwidth after the
 * size-dependent corrections. */
static double algo_time(const capsim_nccl_topo *t, capsim_coll c, capsim_algo a,
			capsim_proto p, double nb, double *lat_eff_us, double *bw_eff_gbs)
{
	*lat_eff_us = *bw_eff_gbs = 0.0;
	if (!topo_valid(t) || !coll_in_model(c) || (int)a < 0 || (int)a >= ALGOS ||
	    (int)p < 0 || (int)p >= PROTOS || !(nb >= 0.0))
		return -1.0;
	if (t->n_ranks == 1) /* updateCollCostTable: Ring/Simple, free */
		return a == CAPSIM_ALGO_RING && p == CAPSIM_PROTO_SIMPLE ? 0.0 : -1.0;
	double lat, bw;
	tune_pair(t, c, a, p, &lat, &bw);
	if (bw == 0.0)
		return -1.0;
	int log_size = log2_floor(nb / 64.0);
	if (a == CAPSIM_ALGO_TREE && c == CAPSIM_COLL_ALLREDUCE && log_size >= 0 &&
	    log_size < 23)
		bw *= tree_correction[p][log_size];
	/* NCCL applies this on x86 hosts only; capsim's hosts are x86 */
	if (a == CAPSIM_ALGO_NVLS_TREE && c == CAPSIM_COLL_ALLREDUCE && log_size >= 0 &&
	    log_size < TREE_CORR_SIZES && t->arch >= CAPSIM_ARCH_BLACKWELL)
		bw *= tree_correction[p][log_size];
	if (a == CAPSIM_ALGO_RING && p == CAPSIM_PROTO_SIMPLE && t->n_nodes > 1 &&
	    c == CAPSIM_COLL_ALLREDUCE &&
	    floor(nb / ((double)comm_channels(t) * t->n_ranks)) >= RING_PLATEAU_BYTES_PER_CH_RANK)
		lat *= t->arch < CAPSIM_ARCH_AMPERE ? RING_PLATEAU_SM70 : RING_PLATEAU_SM80;
	*lat_eff_us = lat;
	*bw_eff_gbs = bw;
	return lat + nb / (1000.0 * bw);
}

double capsim_nccl_time_us(const capsim_nccl_topo *topo, capsim_coll c,
			   capsim_algo a, capsim_proto p, double nccl_bytes)
{
	double lat, bw;
	return algo_time(topo, c, a, p, nccl_bytes, &lat, &bw);
}

/* topoGetAlgoInfo's channel count for the chosen pair (reference 1.8 step
 * 4; enqueue.cc) */
static int choose_channels(const capsim_nccl_topo *t, capsim_algo a, capsim_proto p, double nb)
{
	int nc = comm_channels(t);
	double nt = max_threads(t, a, p);
	double thr = thread_threshold(t, a, p);
	if (t->n_ranks == 1)
		return nc; /* thresholds are never set for one rank */
	if (a == CAPSIM_ALGO_COLLNET_DIRECT) {
		/* stepped loop: 16, 8, 4, 2, 1; the threshold halves once the
		 * count passes 1.5 x the step */
		const capsim_nccl_graph *d = &t->graph[CAPSIM_ALGO_COLLNET_DIRECT];
		double heads = d->n_channels > 0 ? d->n_channels : 1;
		int sw = 16, more = 1;
		while (sw >= 1 && more) {
			while ((more = nb < nc * nt * heads * thr) && nc > sw) {
				if (nc == sw + sw / 2)
					thr /= 2.0;
				nc--;
			}
			sw /= 2;
		}
	} else if (a == CAPSIM_ALGO_NVLS || a == CAPSIM_ALGO_NVLS_TREE) {
		nc = a == CAPSIM_ALGO_NVLS && t->n_nodes > 1 ? imin(nvls_channels(t), nc) :
							       nvls_channels(t);
	} else {
		while (nb < nc * nt * thr && nc >= 2)
			nc--;
	}
	return nc;
}

int capsim_nccl_select(const capsim_nccl_topo *topo, capsim_coll c,
		       double bytes, unsigned algo_mask, unsigned proto_mask,
		       capsim_nccl_choice *out)
{
	if (out == NULL || !topo_valid(topo) || !coll_in_model(c) || !(bytes >= 0.0))
		return -1;
	double nb = capsim_nccl_bytes(c, bytes, topo->n_ranks);
	int best_a = -1, best_p = -1;
	double best_t = 0.0, best_lat = 0.0, best_bw = 0.0;
	if (topo->n_ranks == 1) {
		/* updateCollCostTable answers Ring/Simple before NCCL_ALGO and
		 * NCCL_PROTO are consulted, so the masks do not apply */
		best_a = CAPSIM_ALGO_RING;
		best_p = CAPSIM_PROTO_SIMPLE;
	} else {
		for (int a = 0; a < ALGOS; a++) {
			if (!(algo_mask & (1u << a)))
				continue;
			for (int p = 0; p < PROTOS; p++) {
				if (!(proto_mask & (1u << p)))
					continue;
				double lat, bw;
				double tm = algo_time(topo, c, (capsim_algo)a, (capsim_proto)p, nb,
						      &lat, &bw);
				if (tm >= 0.0 && (best_a < 0 || tm < best_t)) {
					best_a = a;
					best_p = p;
					best_t = tm;
					best_lat = lat;
					best_bw = bw;
				}
			}
		}
		if (best_a < 0)
			return -1;
	}
	out->algo = (capsim_algo)best_a;
	out->proto = (capsim_proto)best_p;
	out->n_channels = choose_channels(topo, out->algo, out->proto, nb);
	out->time_us = best_t;
	out->lat_us = best_lat;
	out->bw_gbs = best_bw;
	return 0;
}

/* ---- the channel search: a simplified ncclTopoCompute ----
 *
 * NCCL's search (src/graph/search.cc) walks the real PCIe/NVLink/NIC graph
 * of each node, trying channel after channel at a per-channel speed taken
 * from a fixed array (highest first), and subtracting each channel's
 * bandwidth from every link its path crosses. capsim keeps NCCL's control
 * flow and replaces the graph walk by a closed-form count of the channels
 * that fit on the few links capsim's nodes have:
 *
 *  - Control flow kept: the speed arrays per GPU class and single/multi
 *    node; the start at the first speed within maxBw (one path's
 *    bandwidth) and within totalBw for minChannels (scaled by
 *    ngpus/(ngpus-1) for non-ring patterns); pass 1 stepping down while the
 *    next speed is more than 0.49 of the best found, stopping at a perfect
 *    graph (maxChannels channels) or when channels x bwInter reaches
 *    totalBw; NCCL's comparison (more channels x bwIntra; NVLS: more
 *    channels or more channels x bwInter); ncclTopoDupChannels; pass 2
 *    raising the speed of rings, bwIntra of trees up to twice bwInter, and
 *    bwInter of NVLS; the fallback of one channel at 0.1 GB/s; ring/tree
 *    alignment to the smaller channel count (init.cc). Channel limits:
 *    rings 1..MAXCHANNELS/2 = 32 (init.cc), trees and CollNet chains
 *    exactly the ring's count, NVLS up to min(32, ngpus) (all of them on
 *    one node), CollNet direct up to min(8, ngpus).
 *  - Links: a GPU has one NVLink budget per direction (nvlink_bw_per_gpu),
 *    reached through NVSwitch or, without one, as a full mesh whose links
 *    are shared evenly among its ngpus-1 peers; one PCIe link per GPU
 *    (pcie_bw); nics_per_node NICs of nic_bw each, each behind a PCIe path
 *    of pcie_bw. A ring or tree channel crosses each GPU's NVLink budget
 *    once per direction (on PCIe-only nodes, each GPU's PCIe link),
 *    enters and leaves the node through one NIC (NCCL_CROSS_NIC's rail
 *    rule) and through GPUs' PCIe links. An NVLS channel has one head GPU
 *    that carries twice the channel's bandwidth; across nodes each NVLS or
 *    CollNet direct head owns one NIC. A CollNet direct head exchanges
 *    bwIntra/(ngpus-1) with every other GPU.
 *  - GPUDirect RDMA: with it, a NIC carries floor(min(pcie, nic) / bw)
 *    channels. Without it NCCL routes NIC traffic through the CPU
 *    (paths.cc), so each channel crosses the PCIe switch's uplink twice per
 *    direction; capsim halves the PCIe part of the NIC path for that. Its
 *    other effects (path type PHB, which turns LL128 off on the real system,
 *    and the extra copy latency) are the caller's to set in the topology.
 *
 * Not modelled: PCIe switch trees and CPU sockets (GPUs reach each other
 * and their NIC at full pcie_bw, no QPI/UPI hop, no Intel P2P overhead of
 * 6/5); path types (typeIntra is NVLink or PCI, nothing in between; LL128
 * eligibility by path type is left to topo->ll128_enable); PXN's extra
 * NVLink hop; the sameChannels, cross-NIC and path-type retries of pass 1
 * and the "simpler tree" retry on Hopper (trees keep the balanced pattern
 * except with one GPU per node); the search timeouts; NCCL_GRAPH_FILE;
 * NCCL_MIN/MAX_NCHANNELS; network plugin latencies (net_latency_us is the
 * caller's); the SM100 multi-node NVLS channel tuning by NIC speed; and
 * GA10x's 12 GB/s NVLink (capsim's Ampere class is A100). */

typedef enum {
	PATTERN_BALANCED_TREE,
	PATTERN_TREE,
	PATTERN_RING,
	PATTERN_NVLS,
	PATTERN_COLLNET_DIRECT
} pattern;

typedef struct {
	int n_channels;
	double bw_intra, bw_inter;
} graph_bw;

typedef struct {
	const capsim_nccl_hw *hw;
	int ngpus;          /* ranks of the job on one node */
	int inter;          /* more than one node */
	int nvlink;         /* the node's GPUs talk over NVLink */
	double max_bw;      /* system->maxBw: the best single path, GB/s */
	double total_bw;    /* system->totalBw: a GPU's widest budget, GB/s */
	double nic_path_bw; /* what one NIC can carry per direction, GB/s */
} node_view;

/* channels that fit at per-channel speeds bi (intra) and be (inter) */
static int channels_fit(const node_view *v, pattern pat, double bi, double be, int max_ch)
{
	const capsim_nccl_hw *hw = v->hw;
	int n = max_ch;
	double gpu_bw = v->nvlink ? hw->nvlink_bw_per_gpu : hw->pcie_bw;
	if (v->ngpus > 1) {
		if (pat == PATTERN_NVLS) {
			n = imin(n, fits(gpu_bw, bi) - 1); /* the head carries 2 bi */
		} else if (pat == PATTERN_COLLNET_DIRECT) {
			/* head: bi, plus bi/(ngpus-1) for each other channel */
			n = gpu_bw < bi ? 0 :
					  imin(n, 1 + fits(gpu_bw - bi, bi / (v->ngpus - 1)));
		} else if (v->nvlink && !hw->nvswitch) {
			n = imin(n, (v->ngpus - 1) * fits(gpu_bw / (v->ngpus - 1), bi));
		} else {
			n = imin(n, fits(gpu_bw, bi));
		}
	}
	if (v->inter) {
		int per_nic = fits(v->nic_path_bw, be);
		if (pat == PATTERN_NVLS || pat == PATTERN_COLLNET_DIRECT) {
			n = imin(n, per_nic >= 1 ? imin(hw->nics_per_node, v->ngpus) : 0);
		} else {
			n = imin(n, hw->nics_per_node * per_nic);
			n = imin(n, v->ngpus * fits(hw->pcie_bw, be));
		}
	}
	return imax(n, 0);
}

/* NCCL's ncclTopoCompareGraphs: would (n, bi, be) replace best? */
static int better(const node_view *v, pattern pat, int n, double bi, double be,
		  const graph_bw *best)
{
	if (pat == PATTERN_NVLS)
		return (n > best->n_channels && n <= v->ngpus) ||
		       n * be > best->n_channels * best->bw_inter;
	return n * bi > best->n_channels * best->bw_intra;
}

/* one search: try (bi, be) with at least min_ch channels; keep it if better */
static void try_speed(const node_view *v, pattern pat, double bi, double be, int min_ch,
		      int max_ch, graph_bw *best)
{
	int n = channels_fit(v, pat, bi, be, max_ch);
	if (n >= min_ch && n >= 1 && better(v, pat, n, bi, be, best)) {
		best->n_channels = n;
		best->bw_intra = bi;
		best->bw_inter = be;
	}
}

static graph_bw search_graph(const node_view *v, pattern pat, int min_ch, int max_ch)
{
	const capsim_nccl_hw *hw = v->hw;
	const double *speeds;
	int n_speeds;
	if (hw->arch >= CAPSIM_ARCH_BLACKWELL) {
		speeds = v->inter ? speed_inter_sm100 : speed_intra_sm100;
		n_speeds = v->inter ? NELEM(speed_inter_sm100) : NELEM(speed_intra_sm100);
	} else if (hw->arch >= CAPSIM_ARCH_HOPPER) {
		speeds = v->inter ? speed_inter_sm90 : speed_intra_sm90;
		n_speeds = v->inter ? NELEM(speed_inter_sm90) : NELEM(speed_intra_sm90);
	} else {
		speeds = v->inter ? speed_inter_sm70 : speed_intra_sm70;
		n_speeds = v->inter ? NELEM(speed_inter_sm70) : NELEM(speed_intra_sm70);
	}
	graph_bw best = { 0, 0.0, 0.0 };
	if (pat == PATTERN_NVLS && !v->inter)
		min_ch = max_ch; /* one node: every GPU pulls */
	double total = v->total_bw;
	if (v->ngpus > 1 && pat != PATTERN_RING)
		total *= (double)v->ngpus / (v->ngpus - 1);

	int i = 0;
	while ((speeds[i] > v->max_bw || speeds[i] * min_ch > total) && i < n_speeds - 1)
		i++;

	/* pass 1: step down until a graph is found and the next speed is no
	 * better than half of it */
	for (;;) {
		int had = best.n_channels;
		try_speed(v, pat, speeds[i], speeds[i], min_ch, max_ch, &best);
		if (best.n_channels != had && best.n_channels == max_ch)
			break; /* perfect */
		if (best.n_channels > 0 && best.n_channels * best.bw_inter >= v->total_bw)
			break;
		if (i < n_speeds - 1 &&
		    (best.n_channels == 0 || speeds[i + 1] / best.bw_inter > .49)) {
			i++;
			continue;
		}
		break;
	}
	if (best.n_channels == 0) {
		if (pat == PATTERN_NVLS || pat == PATTERN_COLLNET_DIRECT)
			return best; /* no graph: not available */
		best.n_channels = 1; /* NCCL's simple-order fallback */
		best.bw_intra = 0.1;
		best.bw_inter = v->inter ? 0.1 : 0.0;
		return best;
	}

	/* ncclTopoDupChannels; ccMin > 80 is taken as Hopper and later */
	if (pat != PATTERN_NVLS && best.bw_intra >= 25.0 &&
	    !(hw->arch >= CAPSIM_ARCH_HOPPER && best.bw_intra < 50.0 && best.n_channels > 4)) {
		int dup = imin(best.n_channels * 2, max_ch);
		int div = (dup + best.n_channels - 1) / best.n_channels;
		best.bw_intra /= div;
		best.bw_inter /= div;
		best.n_channels = dup;
	}

	/* pass 2: try to raise the speed with the channels found */
	i = 0;
	while (speeds[i] > best.bw_inter && i < n_speeds - 1)
		i++;
	double bi = speeds[i], be = speeds[i];
	min_ch = best.n_channels;
	while (i > 0) {
		if (pat == PATTERN_RING) {
			bi = be = speeds[--i];
		} else if (pat == PATTERN_NVLS && be == best.bw_inter && be < bi * 2.0) {
			min_ch = max_ch = best.n_channels;
			be = speeds[--i];
		} else if (bi == best.bw_intra && bi < be * 2.0) {
			bi = speeds[--i];
		} else {
			break;
		}
		try_speed(v, pat, bi, be, min_ch, max_ch, &best);
	}
	return best;
}

static void set_graph(capsim_nccl_graph *g, int available, graph_bw b, int nvlink)
{
	g->available = available && b.n_channels > 0;
	g->n_channels = g->available ? b.n_channels : 0;
	g->bw_intra = g->available ? b.bw_intra : 0.0;
	g->bw_inter = g->available ? b.bw_inter : 0.0;
	g->intra_nvlink = nvlink;
}

/* the search for nodes that all hold n_ranks / n_nodes ranks */
static int search_even(const capsim_nccl_hw *hw, int n_ranks, int n_nodes,
		       capsim_nccl_topo *topo)
{
	if (hw == NULL || topo == NULL || n_ranks < 1 || n_nodes < 1 ||
	    n_ranks % n_nodes != 0 || hw->gpus_per_node < 1 ||
	    n_ranks / n_nodes > hw->gpus_per_node || !arch_valid(hw->arch) ||
	    !(hw->pcie_bw > 0.0) || !(hw->nvlink_bw_per_gpu >= 0.0))
		return -1;
	if (n_nodes > 1 && (hw->nics_per_node < 1 || !(hw->nic_bw > 0.0)))
		return -1;

	node_view v = { 0 };
	v.hw = hw;
	v.ngpus = n_ranks / n_nodes;
	v.inter = n_nodes > 1;
	v.nvlink = hw->nvlink_bw_per_gpu > 0.0 && v.ngpus > 1;
	double nic_path = fmin(hw->pcie_bw, hw->nic_bw);
	v.nic_path_bw = hw->gdr ? nic_path : fmin(hw->pcie_bw / 2.0, hw->nic_bw);
	if (v.inter)
		v.max_bw = nic_path;
	else if (v.ngpus == 1)
		v.max_bw = LOC_BW_GBS;
	else if (v.nvlink)
		v.max_bw = hw->nvswitch ? hw->nvlink_bw_per_gpu :
					  hw->nvlink_bw_per_gpu / (v.ngpus - 1);
	else
		v.max_bw = hw->pcie_bw;
	v.total_bw = !v.inter && v.ngpus == 1 ? LOC_BW_GBS :
						 fmax(hw->pcie_bw, hw->nvlink_bw_per_gpu);

	graph_bw ring = search_graph(&v, PATTERN_RING, 1, RING_MAX_CHANNELS);
	graph_bw tree = search_graph(&v, v.ngpus == 1 ? PATTERN_TREE : PATTERN_BALANCED_TREE,
				     ring.n_channels, ring.n_channels);
	int aligned = imin(ring.n_channels, tree.n_channels); /* init.cc */
	ring.n_channels = tree.n_channels = aligned;

	graph_bw none = { 0, 0.0, 0.0 };
	int nvswitch = v.nvlink && hw->nvswitch;
	graph_bw chain = v.inter ? search_graph(&v, PATTERN_TREE, aligned, aligned) : none;
	graph_bw direct = v.inter && nvswitch ?
				  search_graph(&v, PATTERN_COLLNET_DIRECT, 1,
					       imin(NCCL_MAX_DIRECT_ARITY + 1, v.ngpus)) :
				  none;
	graph_bw nvls = nvswitch && hw->arch >= CAPSIM_ARCH_HOPPER ?
				search_graph(&v, PATTERN_NVLS, 1, imin(NCCL_MAX_NVLS_ARITY, v.ngpus)) :
				none;

	topo->n_ranks = n_ranks;
	topo->n_nodes = n_nodes;
	topo->arch = hw->arch;
	set_graph(&topo->graph[CAPSIM_ALGO_RING], 1, ring, v.nvlink);
	set_graph(&topo->graph[CAPSIM_ALGO_TREE], 1, tree, v.nvlink);
	set_graph(&topo->graph[CAPSIM_ALGO_COLLNET_CHAIN], v.inter, chain, v.nvlink);
	set_graph(&topo->graph[CAPSIM_ALGO_COLLNET_DIRECT], v.inter && nvswitch, direct, v.nvlink);
	set_graph(&topo->graph[CAPSIM_ALGO_NVLS], 1, nvls, 1);
	/* NVLSTree runs on the NVLS graph, PAT on the tree graph (init.cc) */
	set_graph(&topo->graph[CAPSIM_ALGO_NVLS_TREE], v.inter, nvls, 1);
	set_graph(&topo->graph[CAPSIM_ALGO_PAT], v.ngpus == 1 && v.inter, tree, v.nvlink);
	return 0;
}

int capsim_nccl_search(const capsim_nccl_hw *hw, int n_ranks, int n_nodes,
		       capsim_nccl_topo *topo)
{
	if (hw == NULL || topo == NULL || n_nodes < 2 || n_ranks < 1 || n_ranks % n_nodes == 0)
		return search_even(hw, n_ranks, n_nodes, topo);
	/* Nodes of unequal rank counts (ranks fill nodes in order: every node
	 * full but the last). NCCL searches each rank's own node and then, in
	 * init.cc's AllGather of the graphs, keeps the least channels and the
	 * lowest bandwidths of all ranks and the worst path type; so the
	 * graph of a full node and that of the last, combined so. */
	int full = hw->gpus_per_node, last = n_ranks - (n_nodes - 1) * full;
	if (full < 1 || last < 1 || last > full)
		return -1;
	/* the searches set the graphs, ranks, nodes and arch; what the caller
	 * set beside them (the network's latency, the enables) stays */
	capsim_nccl_topo a = *topo, b = *topo;
	if (search_even(hw, full * n_nodes, n_nodes, &a) < 0 ||
	    search_even(hw, last * n_nodes, n_nodes, &b) < 0)
		return -1;
	*topo = a;
	topo->n_ranks = n_ranks;
	for (int k = 0; k < CAPSIM_ALGO__COUNT; k++) {
		capsim_nccl_graph *g = &topo->graph[k];
		const capsim_nccl_graph *h = &b.graph[k];
		g->available = g->available && h->available;
		g->n_channels = g->available ? imin(g->n_channels, h->n_channels) : 0;
		g->bw_intra = g->available ? fmin(g->bw_intra, h->bw_intra) : 0.0;
		g->bw_inter = g->available ? fmin(g->bw_inter, h->bw_inter) : 0.0;
		g->intra_nvlink = g->intra_nvlink && h->intra_nvlink;
	}
	return 0;
}
