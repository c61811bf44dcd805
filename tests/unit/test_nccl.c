/* test_nccl.c - NCCL's cost model: worked example, conversions, availability, selection, search.
 *
 * Every expected number is worked out in the comment above it from the
 * tables of NCCL's own source, https://github.com/NVIDIA/nccl at commit
 * 5067397c2676d5aed50042fc39e5c8ee96eb0027 (src/graph/tuning.cc,
 * src/enqueue.cc, src/graph/search.cc; sections numbered as docs/model.md's
 * "ref §n"), not read back from the code. */
#include "testutil.h"

#include <string.h>

#include "nccl.h"

#define TREE CAPSIM_ALGO_TREE
#define RING CAPSIM_ALGO_RING
#define CN_DIRECT CAPSIM_ALGO_COLLNET_DIRECT
#define CN_CHAIN CAPSIM_ALGO_COLLNET_CHAIN
#define NVLS CAPSIM_ALGO_NVLS
#define NVLS_TREE CAPSIM_ALGO_NVLS_TREE
#define PAT CAPSIM_ALGO_PAT
#define LL CAPSIM_PROTO_LL
#define LL128 CAPSIM_PROTO_LL128
#define SIMPLE CAPSIM_PROTO_SIMPLE
#define AR CAPSIM_COLL_ALLREDUCE
#define AG CAPSIM_COLL_ALLGATHER
#define RS CAPSIM_COLL_REDUCESCATTER
#define BCAST CAPSIM_COLL_BROADCAST
#define REDUCE CAPSIM_COLL_REDUCE

static capsim_nccl_graph graph(int n_ch, double bw_intra, double bw_inter, int nvlink)
{
	capsim_nccl_graph g = { 1, n_ch, bw_intra, bw_inter, nvlink };
	return g;
}

/* Reference 1.9: one node, 8 x H100 (Hopper, NVLink, Intel host), ring
 * and tree graphs of 16 channels at 20 GB/s. */
static capsim_nccl_topo worked_example(void)
{
	capsim_nccl_topo t;
	memset(&t, 0, sizeof t);
	t.n_ranks = 8;
	t.n_nodes = 1;
	t.arch = CAPSIM_ARCH_HOPPER;
	t.pat_enable = 1;
	t.ll128_enable = 1;
	t.graph[RING] = graph(16, 20.0, 20.0, 1);
	t.graph[TREE] = graph(16, 20.0, 20.0, 1);
	return t;
}

/* The H100 HGX node of capsim's catalog as NCCL sees it: 18 NVLinks of
 * SM90_NVLINK_BW 20.6 GB/s to NVSwitch, PCIe Gen5 x16 (240 x 16 / 80 = 48),
 * eight 400 Gb/s NICs (400000 / 8000 = 50), GPUDirect RDMA (reference 1.5,
 * link capacities). */
static capsim_nccl_hw h100_node(void)
{
	capsim_nccl_hw hw = { 8, CAPSIM_ARCH_HOPPER, 18 * 20.6, 1, 48.0, 50.0, 8, 1 };
	return hw;
}

static void test_worked_example(void **state)
{
	(void)state;
	capsim_nccl_topo t = worked_example();
	double lat[CAPSIM_ALGO__COUNT][CAPSIM_PROTO__COUNT];
	double bw[CAPSIM_ALGO__COUNT][CAPSIM_PROTO__COUNT];
	capsim_nccl_tune(&t, AR, lat, bw);
	/* ring latency base + nsteps x NVLink hop, nsteps = 2 (8 - 1) = 14
	 * (1.2, 1.3, 1.4): LL 6.6 + 14 x 0.6 = 15.0; LL128 14.0 + 14 x 1.9 =
	 * 40.6; Simple 8.4 + 14 x 3.4 = 56.0 */
	assert_rel(lat[RING][LL], 15.0, 0.005);
	assert_rel(lat[RING][LL128], 40.6, 0.005);
	assert_rel(lat[RING][SIMPLE], 56.0, 0.005);
	/* busBw 16 x 20 = 320 refined (1.5 step 3): LL min(141, 160) = 141;
	 * LL128 min(0.92 x 320, 16 x 36.7) = 294.4; Simple 320; algBw = busBw
	 * x 8/14: 80.6, 168.2, 182.9 (the reference's rounding) */
	assert_rel(bw[RING][LL] * 14.0 / 8.0, 141.0, 0.005);
	assert_rel(bw[RING][LL128] * 14.0 / 8.0, 294.4, 0.005);
	assert_rel(bw[RING][SIMPLE] * 14.0 / 8.0, 320.0, 0.005);
	assert_rel(bw[RING][LL], 80.6, 0.005);
	assert_rel(bw[RING][LL128], 168.2, 0.005);
	assert_rel(bw[RING][SIMPLE], 182.9, 0.005);
	/* 1 MB = 1e6 B: 15.0 + 1e6 / (1000 x 80.6) = 27.4; 40.6 + 5.9 = 46.5;
	 * 56.0 + 5.5 = 61.5 */
	assert_rel(capsim_nccl_time_us(&t, AR, RING, LL, 1e6), 27.4, 0.005);
	assert_rel(capsim_nccl_time_us(&t, AR, RING, LL128, 1e6), 46.5, 0.005);
	assert_rel(capsim_nccl_time_us(&t, AR, RING, SIMPLE, 1e6), 61.5, 0.005);
}

static void test_bus_to_alg_per_collective(void **state)
{
	(void)state;
	capsim_nccl_topo t = worked_example();
	double lat[CAPSIM_ALGO__COUNT][CAPSIM_PROTO__COUNT];
	double bw[CAPSIM_ALGO__COUNT][CAPSIM_PROTO__COUNT];

	/* all-gather, reduce-scatter: ring busBw 320 x n/(n-1) = 320 x 8/7 =
	 * 365.714; latency 8.4 + 7 x 3.4 = 32.2 (nsteps n-1) */
	capsim_nccl_tune(&t, AG, lat, bw);
	assert_rel(bw[RING][SIMPLE], 320.0 * 8.0 / 7.0, 1e-6);
	assert_rel(lat[RING][SIMPLE], 8.4 + 7 * 3.4, 1e-6);
	capsim_nccl_tune(&t, RS, lat, bw);
	assert_rel(bw[RING][SIMPLE], 320.0 * 8.0 / 7.0, 1e-6);

	/* broadcast, reduce: nsteps = n, ratio 8/8 = 1, busBw 320; latency with
	 * sameChannels: 8.4 + 3.4 = 11.8 */
	capsim_nccl_tune(&t, BCAST, lat, bw);
	assert_rel(bw[RING][SIMPLE], 320.0, 1e-6);
	assert_rel(lat[RING][SIMPLE], 8.4 + 3.4, 1e-6);
	capsim_nccl_tune(&t, REDUCE, lat, bw);
	assert_rel(bw[RING][SIMPLE], 320.0, 1e-6);

	/* tree all-reduce: min(0.92 x 320, 16 x 38.7) = 294.4, x 0.5 = 147.2;
	 * latency 8.4 + 2 (7 x 4.0 + 0) = 64.4. Tree LL: 294.4 / 3.8 = 77.47
	 * (< llMaxBw 141), x 0.5 = 38.74; tree LL128 on one node: min(294.4 x
	 * 7/9, 16 x 36.7) = 228.98, x 0.5 = 114.49 */
	capsim_nccl_tune(&t, AR, lat, bw);
	assert_rel(bw[TREE][SIMPLE], 147.2, 1e-6);
	assert_rel(lat[TREE][SIMPLE], 64.4, 1e-6);
	assert_rel(bw[TREE][LL], 294.4 / 3.8 * 0.5, 1e-6);
	assert_rel(bw[TREE][LL128], 294.4 * 7.0 / 9.0 * 0.5, 1e-6);

	/* NVLS, 8 channels, bwIntra 40, bwInter 60: intra 40 x 0.85 x 7/8 =
	 * 29.75 per channel; all-reduce x 2 = 59.5 = min(59.5, 60); busBw 8 x
	 * 59.5 = 476; algBw x 8/14 = 272; latency is the NVLink NVLS hop, 25.
	 * All-gather: 29.75 x 7/8 = 26.03125, busBw 208.25, not converted. */
	t.nvls_enable = 1;
	t.graph[NVLS] = graph(8, 40.0, 60.0, 1);
	capsim_nccl_tune(&t, AR, lat, bw);
	assert_rel(bw[NVLS][SIMPLE], 272.0, 1e-6);
	assert_rel(lat[NVLS][SIMPLE], 25.0, 1e-6);
	assert_rel(bw[NVLS][LL], 0.0, 0.0);
	capsim_nccl_tune(&t, AG, lat, bw);
	assert_rel(bw[NVLS][SIMPLE], 8 * 26.03125, 1e-6);

	/* PAT all-gather, 16 nodes of one GPU, tree graph 2 channels at
	 * 48/24: bw = bwInter 24 (more than 2 nodes), busBw 48 x 0.75 = 36, not
	 * converted; latency 8.0 + log2(16) x 14/3.5 + 16 x 2.8 = 8 + 16 +
	 * 44.8 = 68.8 (one rank per node: Tree's NET row, 14) */
	capsim_nccl_topo p = worked_example();
	p.n_ranks = p.n_nodes = 16;
	p.graph[RING] = graph(2, 24.0, 24.0, 0);
	p.graph[TREE] = p.graph[PAT] = graph(2, 48.0, 24.0, 0);
	capsim_nccl_tune(&p, AG, lat, bw);
	assert_rel(bw[PAT][SIMPLE], 36.0, 1e-6);
	assert_rel(lat[PAT][SIMPLE], 68.8, 1e-6);

	/* CollNetDirect all-gather, 2 nodes of 8 ranks, graph 8 channels at
	 * 48/48: ppn x min(48, 0.9 x 48) = 8 x 43.2 = 345.6, not converted.
	 * All-reduce: 8 x 48 = 384 / (1 - 0/2) x 0.85 (SM90) = 326.4, x 0.5 =
	 * 163.2; latency 2 (1 x 3.7 + 7 x 0.4) + 31 = 44.0 */
	capsim_nccl_topo c = worked_example();
	c.n_ranks = 16;
	c.n_nodes = 2;
	c.collnet_enable = 1;
	c.graph[CN_DIRECT] = graph(8, 48.0, 48.0, 1);
	capsim_nccl_tune(&c, AG, lat, bw);
	assert_rel(bw[CN_DIRECT][SIMPLE], 345.6, 1e-6);
	capsim_nccl_tune(&c, AR, lat, bw);
	assert_rel(bw[CN_DIRECT][SIMPLE], 163.2, 1e-6);
	assert_rel(lat[CN_DIRECT][SIMPLE], 44.0, 1e-6);
}

static void test_availability(void **state)
{
	(void)state;
	double lat[CAPSIM_ALGO__COUNT][CAPSIM_PROTO__COUNT];
	double bw[CAPSIM_ALGO__COUNT][CAPSIM_PROTO__COUNT];
	capsim_nccl_topo t = worked_example();
	t.nvls_enable = 1;
	t.collnet_enable = 1;
	t.graph[NVLS] = t.graph[NVLS_TREE] = graph(8, 40.0, 60.0, 1);
	t.graph[PAT] = t.graph[TREE];
	t.graph[CN_DIRECT] = t.graph[CN_CHAIN] = graph(8, 48.0, 48.0, 1);

	/* broadcast and reduce: ring only, every protocol */
	for (int c = BCAST; c <= REDUCE; c++) {
		capsim_nccl_tune(&t, (capsim_coll)c, lat, bw);
		for (int a = 0; a < CAPSIM_ALGO__COUNT; a++)
			for (int p = 0; p < CAPSIM_PROTO__COUNT; p++)
				if ((a == RING) != (bw[a][p] > 0.0))
					fail_msg("coll %d algo %d proto %d: bw %g", c, a, p, bw[a][p]);
	}
	/* all-reduce never PAT; one node: NVLSTree off, NVLS on (Simple only) */
	capsim_nccl_tune(&t, AR, lat, bw);
	assert_true(bw[PAT][SIMPLE] == 0.0);
	assert_true(bw[NVLS_TREE][SIMPLE] == 0.0);
	assert_true(bw[NVLS][SIMPLE] > 0.0);
	assert_true(bw[NVLS][LL128] == 0.0);
	/* PAT needs one GPU per node: 8 ranks on one node have none */
	capsim_nccl_tune(&t, AG, lat, bw);
	assert_true(bw[PAT][SIMPLE] == 0.0);
	assert_true(bw[TREE][SIMPLE] == 0.0); /* no tree for all-gather */
	/* CollNet: Simple only; LL128 only where the platform allows it */
	capsim_nccl_tune(&t, AR, lat, bw);
	assert_true(bw[CN_DIRECT][LL] == 0.0);
	assert_true(bw[RING][LL128] > 0.0);
	t.ll128_enable = 0;
	capsim_nccl_tune(&t, AR, lat, bw);
	assert_true(bw[RING][LL128] == 0.0);
	assert_true(bw[TREE][LL128] == 0.0);

	/* 16 nodes of one GPU: PAT for AG and RS, Simple only */
	capsim_nccl_topo p = worked_example();
	p.n_ranks = p.n_nodes = 16;
	p.graph[PAT] = p.graph[TREE];
	capsim_nccl_tune(&p, RS, lat, bw);
	assert_true(bw[PAT][SIMPLE] > 0.0);
	assert_true(bw[PAT][LL] == 0.0);
	p.pat_enable = 0;
	capsim_nccl_tune(&p, RS, lat, bw);
	assert_true(bw[PAT][SIMPLE] == 0.0);
	/* ... and 32 ranks on the same 16 nodes (two per node): no PAT */
	p.pat_enable = 1;
	p.n_ranks = 32;
	capsim_nccl_tune(&p, AG, lat, bw);
	assert_true(bw[PAT][SIMPLE] == 0.0);

	/* two nodes: NVLSTree on; NVLS only with CollNet */
	capsim_nccl_topo m = t;
	m.n_ranks = 16;
	m.n_nodes = 2;
	m.ll128_enable = 1;
	capsim_nccl_tune(&m, AR, lat, bw);
	assert_true(bw[NVLS_TREE][SIMPLE] > 0.0);
	assert_true(bw[NVLS][SIMPLE] > 0.0);
	m.collnet_enable = 0;
	capsim_nccl_tune(&m, AR, lat, bw);
	assert_true(bw[NVLS_TREE][SIMPLE] > 0.0);
	assert_true(bw[NVLS][SIMPLE] == 0.0);
	assert_true(bw[CN_DIRECT][SIMPLE] == 0.0);
	assert_true(bw[CN_CHAIN][SIMPLE] == 0.0);
	m.nvls_enable = 0;
	capsim_nccl_tune(&m, AR, lat, bw);
	assert_true(bw[NVLS_TREE][SIMPLE] == 0.0);

	/* one rank: nothing in the table; Ring/Simple answers in no time */
	capsim_nccl_topo one = worked_example();
	one.n_ranks = 1;
	capsim_nccl_tune(&one, AR, lat, bw);
	assert_true(bw[RING][SIMPLE] == 0.0);
	assert_rel(capsim_nccl_time_us(&one, AR, RING, SIMPLE, 2.385e6), 0.0, 0.0);
	assert_rel(capsim_nccl_time_us(&one, AR, TREE, SIMPLE, 2.385e6), -1.0, 0.0);
	capsim_nccl_choice ch;
	assert_int_equal(capsim_nccl_select(&one, AR, 2.385e6, ~0u, ~0u, &ch), 0);
	assert_int_equal(ch.algo, RING);
	assert_int_equal(ch.proto, SIMPLE);
	assert_rel(ch.time_us, 0.0, 0.0);

	/* all-to-all and send/recv are p2p, outside the model */
	for (int c = CAPSIM_COLL_ALLTOALL; c <= CAPSIM_COLL_SENDRECV; c++) {
		capsim_nccl_tune(&t, (capsim_coll)c, lat, bw);
		for (int a = 0; a < CAPSIM_ALGO__COUNT; a++)
			for (int p2 = 0; p2 < CAPSIM_PROTO__COUNT; p2++)
				assert_true(bw[a][p2] == 0.0);
		assert_rel(capsim_nccl_time_us(&t, (capsim_coll)c, RING, SIMPLE, 1e6), -1.0, 0.0);
		assert_int_equal(capsim_nccl_select(&t, (capsim_coll)c, 1e6, ~0u, ~0u, &ch), -1);
	}
}

static void test_tree_correction(void **state)
{
	(void)state;
	capsim_nccl_topo t = worked_example();
	/* tree all-reduce Simple: latency 64.4, bw 147.2 (see above); factor
	 * index floor(log2(bytes / 64)) (1.6):
	 * 1e6 B: 15625 -> 13 -> Simple .5: 64.4 + 1e6 / (1000 x 73.6) = 77.987 */
	assert_rel(capsim_nccl_time_us(&t, AR, TREE, SIMPLE, 1e6), 64.4 + 1e6 / 73600.0, 1e-9);
	/* 65536 B: 1024 -> 10 -> .6: 64.4 + 65536 / 88320 = 65.142 */
	assert_rel(capsim_nccl_time_us(&t, AR, TREE, SIMPLE, 65536.0), 64.4 + 65536.0 / 88320.0,
		   1e-9);
	/* 256 MiB: 2^22 -> 22, the last index used -> .9 */
	assert_rel(capsim_nccl_time_us(&t, AR, TREE, SIMPLE, 268435456.0),
		   64.4 + 268435456.0 / (147200.0 * 0.9), 1e-9);
	/* 512 MiB: index 23, not < 23 -> factor 1; 32 B: below 64 -> 1 */
	assert_rel(capsim_nccl_time_us(&t, AR, TREE, SIMPLE, 536870912.0),
		   64.4 + 536870912.0 / 147200.0, 1e-9);
	assert_rel(capsim_nccl_time_us(&t, AR, TREE, SIMPLE, 32.0), 64.4 + 32.0 / 147200.0, 1e-9);
	/* LL at 1e6 B: index 13 -> .4; tree LL latency 6.8 + 2 x 7 x 0.6 =
	 * 15.2, bw 38.74 (see above) */
	double bw_ll = 294.4 / 3.8 * 0.5;
	assert_rel(capsim_nccl_time_us(&t, AR, TREE, LL, 1e6), 15.2 + 1e6 / (1000.0 * bw_ll * 0.4),
		   1e-9);
	/* the ring is never corrected: 56.0 + 1e6 / (1000 x 182.857) */
	assert_rel(capsim_nccl_time_us(&t, AR, RING, SIMPLE, 1e6),
		   56.0 + 1e6 / (1000.0 * 320.0 * 8.0 / 14.0), 1e-9);
}

static void test_ring_plateau(void **state)
{
	(void)state;
	/* 2 nodes x 8 H100 ranks, ring and tree graphs 8 x 45 GB/s: the
	 * communicator has 2 x 8 = 16 channels (45 is not > 45, no Hopper
	 * doubling). Ring all-reduce Simple: bw = bwIntra (2 nodes) -> busBw
	 * 360, algBw 360 x 16/30 = 192; latency 8.4 + (30 - 2) max(3.4, 3 x 1.0)
	 * + 2 x 14.0 = 131.6. The plateau starts at 64 x 16 ch x 16 ranks =
	 * 16384 B, where latency becomes 1.4 x 131.6 = 184.24. */
	capsim_nccl_topo t = worked_example();
	t.n_ranks = 16;
	t.n_nodes = 2;
	t.graph[RING] = t.graph[TREE] = graph(8, 45.0, 45.0, 1);
	assert_rel(capsim_nccl_time_us(&t, AR, RING, SIMPLE, 16383.0), 131.6 + 16383.0 / 192000.0,
		   1e-9);
	assert_rel(capsim_nccl_time_us(&t, AR, RING, SIMPLE, 16384.0),
		   131.6 * 1.4 + 16384.0 / 192000.0, 1e-9);
	/* LL is never on the plateau: 6.6 + 28 x max(0.6, 1.0) + 2 x 2.7 = 40.0;
	 * busBw min(llMaxBw Intel N2 39.0, 180) = 39 -> x 16/30 = 20.8 */
	assert_rel(capsim_nccl_time_us(&t, AR, RING, LL, 16384.0), 40.0 + 16384.0 / 20800.0, 1e-9);
	/* Volta: factor 1.9 */
	t.arch = CAPSIM_ARCH_VOLTA;
	assert_rel(capsim_nccl_time_us(&t, AR, RING, SIMPLE, 1e6), 131.6 * 1.9 + 1e6 / 192000.0,
		   1e-9);
	/* one node: no plateau (worked example, 1e6 B) */
	capsim_nccl_topo one = worked_example();
	assert_rel(capsim_nccl_time_us(&one, AR, RING, SIMPLE, 1e6), 56.0 + 1e6 / (320e3 * 8 / 14),
		   1e-9);
}

static void test_search_h100(void **state)
{
	(void)state;
	capsim_nccl_hw hw = h100_node();
	capsim_nccl_topo t;
	memset(&t, 0, sizeof t);
	assert_int_equal(capsim_nccl_search(&hw, 8, 1, &t), 0);
	assert_int_equal(t.n_ranks, 8);
	assert_int_equal(t.n_nodes, 1);
	assert_int_equal(t.arch, CAPSIM_ARCH_HOPPER);
	/* ring, one node, SM90 intra speeds 60, 50, 40, 30, 24...: a GPU has
	 * 18 x 20.6 = 370.8 GB/s. 60 -> 6 channels (360); 50 -> 7 (350), 40
	 * -> 9 (360), 30 -> 12 (360) are no better; 24/60 < .49 stops. Dup
	 * (60 >= 50): 12 channels at 30. Pass 2: 40 x 12 > 370.8, no. */
	assert_int_equal(t.graph[RING].n_channels, 12);
	assert_rel(t.graph[RING].bw_intra, 30.0, 1e-9);
	assert_true(t.graph[RING].intra_nvlink);
	/* tree: exactly 12 channels; the first speed with 12 x s <= 370.8 x
	 * 8/7 is 30, which fits; 40 does not */
	assert_int_equal(t.graph[TREE].n_channels, 12);
	assert_rel(t.graph[TREE].bw_intra, 30.0, 1e-9);
	/* NVLS: 8 channels (one per GPU), the head carries twice: 9 x s <=
	 * 370.8 -> 40; pass 2 raises bwInter (free on one node) to 60 */
	assert_true(t.graph[NVLS].available);
	assert_int_equal(t.graph[NVLS].n_channels, 8);
	assert_rel(t.graph[NVLS].bw_intra, 40.0, 1e-9);
	assert_rel(t.graph[NVLS].bw_inter, 60.0, 1e-9);
	assert_false(t.graph[PAT].available);
	assert_false(t.graph[CN_DIRECT].available);

	/* 2 nodes: SM90 inter speeds 48, 45, 42...; NIC path min(48, 50) =
	 * 48. 48 -> NVLink allows 7 (336); 45 -> 8 (NVLink 8, NICs 8 x 1):
	 * 360; 42, 40, 30, 24 no better; 22/45 < .49 stops; no dup (45 < 50,
	 * 8 > 4). NVLS: 40 -> 8 heads, bwInter raised to 48. */
	memset(&t, 0, sizeof t);
	assert_int_equal(capsim_nccl_search(&hw, 16, 2, &t), 0);
	assert_int_equal(t.graph[RING].n_channels, 8);
	assert_rel(t.graph[RING].bw_intra, 45.0, 1e-9);
	assert_rel(t.graph[RING].bw_inter, 45.0, 1e-9);
	assert_int_equal(t.graph[NVLS].n_channels, 8);
	assert_rel(t.graph[NVLS].bw_intra, 40.0, 1e-9);
	assert_rel(t.graph[NVLS].bw_inter, 48.0, 1e-9);
	assert_true(t.graph[NVLS_TREE].available);
	assert_true(t.graph[CN_DIRECT].available);

	/* 16 nodes of one GPU: the GPU's PCIe link takes one channel at 48,
	 * dup (n = 1 <= 4) gives 2 x 24; PAT is on, over the tree graph */
	memset(&t, 0, sizeof t);
	assert_int_equal(capsim_nccl_search(&hw, 16, 16, &t), 0);
	assert_int_equal(t.graph[RING].n_channels, 2);
	assert_rel(t.graph[RING].bw_inter, 24.0, 1e-9);
	assert_true(t.graph[PAT].available);
	assert_false(t.graph[RING].intra_nvlink);
	assert_false(t.graph[NVLS].available);

	/* a GPU's NVSwitch budget does not depend on how many GPUs share the
	 * switch: 4 ranks of one node also get 12 x 30, hence 2 x 12 = 24
	 * communicator channels (NCCL logs "Channel 00/24" for 4 ranks on a
	 * Hopper node, pytorch/torchtitan#1570); 3 nodes of 8 get 8 x 45, hence
	 * 16 ("Channel 00/16", NVIDIA/nccl#1453). A large ring all-reduce keeps
	 * them all. */
	capsim_nccl_choice ch;
	memset(&t, 0, sizeof t);
	assert_int_equal(capsim_nccl_search(&hw, 4, 1, &t), 0);
	assert_int_equal(t.graph[RING].n_channels, 12);
	assert_int_equal(capsim_nccl_select(&t, AR, 1e9, 1u << RING, ~0u, &ch), 0);
	assert_int_equal(ch.n_channels, 24);
	memset(&t, 0, sizeof t);
	assert_int_equal(capsim_nccl_search(&hw, 24, 3, &t), 0);
	assert_int_equal(t.graph[RING].n_channels, 8);
	assert_int_equal(capsim_nccl_select(&t, AR, 1e9, 1u << RING, ~0u, &ch), 0);
	assert_int_equal(ch.n_channels, 16);

	/* PCIe only, Gen4 x16 = 24, Ampere intra speeds: 20 -> 1 channel,
	 * 12 -> 2 (24), 6 -> 4 (24) no better: 2 x 12 */
	capsim_nccl_hw pcie = { 8, CAPSIM_ARCH_AMPERE, 0.0, 0, 24.0, 25.0, 2, 1 };
	memset(&t, 0, sizeof t);
	assert_int_equal(capsim_nccl_search(&pcie, 8, 1, &t), 0);
	assert_int_equal(t.graph[RING].n_channels, 2);
	assert_rel(t.graph[RING].bw_intra, 12.0, 1e-9);
	assert_false(t.graph[RING].intra_nvlink);
	assert_false(t.graph[NVLS].available);

	/* inconsistent inputs */
	capsim_nccl_topo keep = t;
	assert_int_equal(capsim_nccl_search(&hw, 0, 1, &t), -1);
	assert_int_equal(capsim_nccl_search(&hw, 18, 2, &t), -1); /* 9 per node > 8 */
	assert_int_equal(capsim_nccl_search(&hw, 2, 4, &t), -1);  /* empty nodes */
	assert_int_equal(capsim_nccl_search(NULL, 8, 1, &t), -1);
	capsim_nccl_hw nonic = hw;
	nonic.nics_per_node = 0;
	assert_int_equal(capsim_nccl_search(&nonic, 16, 2, &t), -1);
	assert_int_equal(t.n_ranks, keep.n_ranks);
	assert_int_equal(t.graph[RING].n_channels, keep.graph[RING].n_channels);
}

/* nodes of unequal rank counts (20 ranks on 3 nodes of 8: 8, 8, 4): the
 * graph of a full node and that of the last, combined as NCCL's init does
 * after gathering every rank's graph: the least channels, the lowest
 * bandwidths, the worse path (it was refused before) */
static void test_search_uneven(void **state)
{
	(void)state;
	capsim_nccl_hw hw = h100_node();
	capsim_nccl_topo u, full, last;
	assert_int_equal(capsim_nccl_search(&hw, 20, 3, &u), 0);
	assert_int_equal(capsim_nccl_search(&hw, 24, 3, &full), 0);
	assert_int_equal(capsim_nccl_search(&hw, 12, 3, &last), 0);
	assert_int_equal(u.n_ranks, 20);
	assert_int_equal(u.n_nodes, 3);
	for (int k = 0; k < CAPSIM_ALGO__COUNT; k++) {
		const capsim_nccl_graph *g = &u.graph[k], *a = &full.graph[k], *b = &last.graph[k];
		assert_int_equal(g->available, a->available && b->available);
		if (!g->available)
			continue;
		assert_int_equal(g->n_channels, a->n_channels < b->n_channels ? a->n_channels :
					       b->n_channels);
		assert_rel(g->bw_intra, a->bw_intra < b->bw_intra ? a->bw_intra : b->bw_intra, 0);
		assert_rel(g->bw_inter, a->bw_inter < b->bw_inter ? a->bw_inter : b->bw_inter, 0);
	}
	/* 15 on 2 (8, 7) as well; 18 on 2 would need 10 on the last */
	assert_int_equal(capsim_nccl_search(&hw, 15, 2, &u), 0);
	assert_int_equal(capsim_nccl_search(&hw, 18, 2, &u), -1);

	/* what the caller set beside the graphs stays, as with even nodes: the
	 * uneven search once returned a copy of its own uninitialised
	 * network latency, and a ring's LL latency of 10^147 s */
	capsim_nccl_topo even, odd;
	memset(&even, 0, sizeof even);
	memset(&odd, 0, sizeof odd);
	even.net_latency_us = odd.net_latency_us = 3.5;
	even.cpu_amd = odd.cpu_amd = 1;
	even.pat_enable = odd.pat_enable = 1;
	assert_int_equal(capsim_nccl_search(&hw, 24, 3, &even), 0);
	assert_int_equal(capsim_nccl_search(&hw, 20, 3, &odd), 0);
	assert_rel(odd.net_latency_us, 3.5, 0);
	assert_int_equal(odd.cpu_amd, 1);
	assert_int_equal(odd.pat_enable, 1);
	assert_rel(even.net_latency_us, 3.5, 0);
	/* and the latencies are finite and alike: the same ring steps */
	double lat_e[CAPSIM_ALGO__COUNT][CAPSIM_PROTO__COUNT], bw_e[CAPSIM_ALGO__COUNT][CAPSIM_PROTO__COUNT];
	double lat_o[CAPSIM_ALGO__COUNT][CAPSIM_PROTO__COUNT], bw_o[CAPSIM_ALGO__COUNT][CAPSIM_PROTO__COUNT];
	capsim_nccl_tune(&even, AR, lat_e, bw_e);
	capsim_nccl_tune(&odd, AR, lat_o, bw_o);
	for (int p = 0; p < CAPSIM_PROTO__COUNT; p++) {
		assert_true(isfinite(lat_o[RING][p]) && lat_o[RING][p] < 1e3);
		assert_true(lat_o[RING][p] <= lat_e[RING][p] * 1.5);
	}
}

static void test_select_h100(void **state)
{
	(void)state;
	capsim_nccl_hw hw = h100_node();
	capsim_nccl_topo t;
	memset(&t, 0, sizeof t);
	assert_int_equal(capsim_nccl_search(&hw, 8, 1, &t), 0);
	t.ll128_enable = 1;
	t.pat_enable = 1;
	capsim_nccl_choice ch;

	/* ring 12 x 30 = busBw 360: LL min(141, 180) = 141 -> alg 80.57, lat
	 * 15.0; tree LL: min(0.92 x 360, 12 x 38.7) / 3.8 = 87.16 -> 43.58,
	 * lat 6.8 + 2 x 7 x 0.6 = 15.2. At 1024 B ring LL: 15.0 + 0.0127. */
	assert_int_equal(capsim_nccl_select(&t, AR, 1024.0, ~0u, ~0u, &ch), 0);
	assert_int_equal(ch.algo, RING);
	assert_int_equal(ch.proto, LL);
	assert_rel(ch.time_us, 15.0 + 1024.0 / (1000.0 * 141.0 * 8.0 / 14.0), 1e-9);
	/* channels: 24 for the communicator; Ring LL threads 512, threshold 8 x
	 * 8 ranks = 64: 1024 < nc x 32768 until nc = 1 */
	assert_int_equal(ch.n_channels, 1);

	/* 1e9 B: ring Simple 56.0 + 1e9 / (1000 x 360 x 8/14) = 4917.1 beats
	 * LL128 40.6 + 1e9 / (1000 x 331.2 x 8/14) = 5324.5 and tree Simple
	 * 64.4 + 1e9 / (1000 x 165.6) = 6103.0 */
	assert_int_equal(capsim_nccl_select(&t, AR, 1e9, ~0u, ~0u, &ch), 0);
	assert_int_equal(ch.algo, RING);
	assert_int_equal(ch.proto, SIMPLE);
	assert_rel(ch.time_us, 56.0 + 1e9 / (1000.0 * 360.0 * 8.0 / 14.0), 1e-9);
	assert_rel(ch.lat_us, 56.0, 1e-9);
	assert_int_equal(ch.n_channels, 24);

	/* with NVLS: 8 x min(40 x .85 x 7/8 x 2, 60) = 476 -> 272 GB/s, lat 25:
	 * 25 + 1e9 / 272000 = 3701.5; NVLS uses nvlsChannels = 16 on SM90 */
	t.nvls_enable = 1;
	assert_int_equal(capsim_nccl_select(&t, AR, 1e9, ~0u, ~0u, &ch), 0);
	assert_int_equal(ch.algo, NVLS);
	assert_int_equal(ch.proto, SIMPLE);
	assert_rel(ch.time_us, 25.0 + 1e9 / 272000.0, 1e-9);
	assert_int_equal(ch.n_channels, 16);
	/* still LL on the ring for tiny messages (25 > 15.0) */
	assert_int_equal(capsim_nccl_select(&t, AR, 1024.0, ~0u, ~0u, &ch), 0);
	assert_int_equal(ch.algo, RING);
	assert_int_equal(ch.proto, LL);
}

static void test_masks(void **state)
{
	(void)state;
	capsim_nccl_topo t = worked_example();
	capsim_nccl_choice ch;
	/* forcing the tree: at 1e6 B, tree LL 15.2 + 1e6 / (1000 x 38.74 x .4)
	 * = 79.7, LL128 31.5 + 1e6 / (1000 x 114.49 x .6) = 46.1, Simple 77.99:
	 * LL128 */
	assert_int_equal(capsim_nccl_select(&t, AR, 1e6, 1u << TREE, ~0u, &ch), 0);
	assert_int_equal(ch.algo, TREE);
	assert_int_equal(ch.proto, LL128);
	assert_rel(ch.time_us, 14.0 + 2 * 7 * 1.25 + 1e6 / (1000.0 * 294.4 * 7 / 9 * 0.5 * 0.6),
		   1e-9);
	/* channels: the communicator's 2 x 16 = 32 stay, as 1e6 B is not
	 * below 32 ch x 640 threads (LL128) x 8 = 163840 */
	assert_int_equal(ch.n_channels, 32);
	assert_int_equal(capsim_nccl_select(&t, AR, 1e6, 1u << TREE, 1u << SIMPLE, &ch), 0);
	assert_int_equal(ch.algo, TREE);
	assert_int_equal(ch.proto, SIMPLE);
	/* impossible: PAT for all-reduce, no protocol, NVLS switched off */
	capsim_nccl_choice keep = { CAPSIM_ALGO_PAT, CAPSIM_PROTO_LL128, 77, 2.385, 1.0, 2.0 };
	ch = keep;
	assert_int_equal(capsim_nccl_select(&t, AR, 1e6, 1u << PAT, ~0u, &ch), -1);
	assert_int_equal(capsim_nccl_select(&t, AR, 1e6, ~0u, 0u, &ch), -1);
	assert_int_equal(capsim_nccl_select(&t, AR, 1e6, 1u << NVLS, ~0u, &ch), -1);
	assert_int_equal(capsim_nccl_select(&t, AR, -1.0, ~0u, ~0u, &ch), -1);
	assert_int_equal(capsim_nccl_select(NULL, AR, 1e6, ~0u, ~0u, &ch), -1);
	assert_int_equal(ch.n_channels, 77);
	assert_rel(ch.time_us, 2.385, 0.0);
}

static void test_bytes(void **state)
{
	(void)state;
	/* nccl-tests' size is already NCCL's nBytes for every collective */
	assert_rel(capsim_nccl_bytes(AR, 2.385e6, 8), 2.385e6, 0.0);
	assert_rel(capsim_nccl_bytes(AG, 2.385e6, 8), 2.385e6, 0.0);
	assert_rel(capsim_nccl_bytes(RS, 2.385e6, 8), 2.385e6, 0.0);
	assert_rel(capsim_nccl_bytes(BCAST, 2.385e6, 8), 2.385e6, 0.0);
}

static void test_parsers(void **state)
{
	(void)state;
	assert_int_equal(capsim_coll_parse("allreduce"), AR);
	assert_int_equal(capsim_coll_parse("all-reduce"), AR);
	assert_int_equal(capsim_coll_parse("all_reduce"), AR);
	assert_int_equal(capsim_coll_parse("AllReduce"), AR);
	assert_int_equal(capsim_coll_parse("All-Gather"), AG);
	assert_int_equal(capsim_coll_parse("reduce_scatter"), RS);
	assert_int_equal(capsim_coll_parse("broadcast"), BCAST);
	assert_int_equal(capsim_coll_parse("reduce"), REDUCE);
	assert_int_equal(capsim_coll_parse("alltoall"), CAPSIM_COLL_ALLTOALL);
	assert_int_equal(capsim_coll_parse("all-to-all"), CAPSIM_COLL_ALLTOALL);
	assert_int_equal(capsim_coll_parse("send_recv"), CAPSIM_COLL_SENDRECV);
	assert_int_equal(capsim_coll_parse("ar"), -1);
	assert_int_equal(capsim_coll_parse("all-reduce_"), -1);
	assert_int_equal(capsim_coll_parse("all-_reduce"), -1);
	assert_int_equal(capsim_coll_parse(""), -1);
	assert_int_equal(capsim_coll_parse(NULL), -1);

	assert_int_equal(capsim_algo_parse("tree"), TREE);
	assert_int_equal(capsim_algo_parse("Ring"), RING);
	assert_int_equal(capsim_algo_parse("collnet"), CN_DIRECT);
	assert_int_equal(capsim_algo_parse("collnet-direct"), CN_DIRECT);
	assert_int_equal(capsim_algo_parse("CollnetDirect"), CN_DIRECT);
	assert_int_equal(capsim_algo_parse("SHARP"), CN_DIRECT);
	assert_int_equal(capsim_algo_parse("collnet-chain"), CN_CHAIN);
	assert_int_equal(capsim_algo_parse("collnetchain"), CN_CHAIN);
	assert_int_equal(capsim_algo_parse("NVLS"), NVLS);
	assert_int_equal(capsim_algo_parse("nvls-tree"), NVLS_TREE);
	assert_int_equal(capsim_algo_parse("NVLSTree"), NVLS_TREE);
	assert_int_equal(capsim_algo_parse("pat"), PAT);
	assert_int_equal(capsim_algo_parse("hierarchical"), -1);

	assert_int_equal(capsim_proto_parse("ll"), LL);
	assert_int_equal(capsim_proto_parse("LL128"), LL128);
	assert_int_equal(capsim_proto_parse("simple"), SIMPLE);
	assert_int_equal(capsim_proto_parse("ll64"), -1);

	assert_string_equal(capsim_coll_names[AR], "all-reduce");
	assert_string_equal(capsim_algo_names[NVLS_TREE], "nvls-tree");
	assert_string_equal(capsim_proto_names[SIMPLE], "Simple");
	for (int c = 0; c < CAPSIM_COLL__COUNT; c++)
		assert_int_equal(capsim_coll_parse(capsim_coll_names[c]), c);
	for (int a = 0; a < CAPSIM_ALGO__COUNT; a++)
		assert_int_equal(capsim_algo_parse(capsim_algo_names[a]), a);
	for (int p = 0; p < CAPSIM_PROTO__COUNT; p++)
		assert_int_equal(capsim_proto_parse(capsim_proto_names[p]), p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_worked_example),
		cmocka_unit_test(test_bus_to_alg_per_collective),
		cmocka_unit_test(test_availability),
		cmocka_unit_test(test_tree_correction),
		cmocka_unit_test(test_ring_plateau),
		cmocka_unit_test(test_search_h100),
		cmocka_unit_test(test_select_h100),
		cmocka_unit_test(test_search_uneven),
		cmocka_unit_test(test_masks),
		cmocka_unit_test(test_bytes),
		cmocka_unit_test(test_parsers),
	};
	return testutil_run_group(tests, NULL, NULL);
}
