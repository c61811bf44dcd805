/* test_fabric_size.c - the fabric's sizing (capsim_fabric_size) against
 * published compute fabrics (NVIDIA's DGX SuperPODs, OCP's Open Cluster
 * Designs) and the fat tree's closed forms, and
 * its properties over sweeps of nodes and oversubscription: switches and
 * cables never fall as nodes grow, never rise as oversubscription grows,
 * small clusters buy one switch where one holds every port, and a design
 * past its tiers is refused with the size at which it fails. */
#include "testutil.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "fabric.h"

static capsim_fabric_size_in design(int nodes, int rails, int radix, double o, int tiers,
				    int rail_optimized)
{
	return (capsim_fabric_size_in){ .nodes = nodes, .rails = rails, .radix = radix,
					.oversubscription = o, .tiers = tiers,
					.rail_optimized = rail_optimized };
}

static capsim_fabric_counts size_ok(capsim_fabric_size_in in)
{
	capsim_fabric_counts c;
	char err[256];
	if (capsim_fabric_size(&in, &c, err, sizeof err) != 0)
		fail_msg("%d nodes, %d rails, %d ports, %g:1, %d tiers: %s", in.nodes, in.rails,
			 in.radix, in.oversubscription, in.tiers, err);
	assert_int_equal(c.switches, c.leaves + c.spines + c.cores);
	return c;
}

/* the most nodes the design connects: the last that sizes */
static int most_nodes(capsim_fabric_size_in in)
{
	capsim_fabric_counts c;
	int lo = 0, hi = 1;
	for (in.nodes = hi; capsim_fabric_size(&in, &c, NULL, 0) == 0; in.nodes = hi)
		hi *= 2;
	while (hi - lo > 1) {
		in.nodes = lo + (hi - lo) / 2;
		if (capsim_fabric_size(&in, &c, NULL, 0) == 0)
			lo = in.nodes;
		else
			hi = in.nodes;
	}
	return lo;
}

/* A leaf's split: the fewest uplinks whose down:up is at least the ratio. */
static void test_leaf_split(void **state)
{
	(void)state;
	static const struct { double o; int down, up; } t[] = {
		{ 1.0, 32, 32 }, { 1.5, 39, 25 }, { 2.0, 43, 21 }, { 3.0, 48, 16 }, { 4.0, 52, 12 },
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		int d, u;
		assert_int_equal(capsim_fabric_leaf_split(64, t[i].o, &d, &u), 0);
		assert_int_equal(d, t[i].down);
		assert_int_equal(u, t[i].up);
		assert_true((double)d / u >= t[i].o);
		assert_true((double)(d - 1) / (u + 1) < t[i].o); /* one uplink more falls short */
	}
	int d, u;
	assert_int_equal(capsim_fabric_leaf_split(1, 1.0, &d, &u), -1);
	assert_int_equal(capsim_fabric_leaf_split(64, 0.5, &d, &u), -1);
	assert_int_equal(capsim_fabric_leaf_split(8, 8.0, &d, &u), -1); /* 7:1 falls short */
}

/* NVIDIA's DGX H100 and DGX B200 SuperPOD compute fabrics on QM9700 (64
 * ports of 400G), rail-optimised, 1:1: "Network Fabrics", Table 4, 1-4
 * scalable units of 31 nodes (RA-11333-001 V11, 2023-09-22; the B200
 * architecture's page lists the same), and the larger-SuperPOD tables' 4
 * and 8 full units of 32 nodes (copied in tests/data/reference/
 * superpod_bom.csv). Table 4's node-leaf cables ("Compute and UFM") count
 * the 4 cables of the fabric manager (UFM) beside 31 nodes' 8 a unit, one
 * node's position left to it: 252, 508, 764, 1020, that is 4 at every size.
 * capsim sizes the compute nodes only, and this test adds the UFM's 4. */
static void test_superpod_reference(void **state)
{
	(void)state;
	testutil_table t;
	testutil_csv_load(CAPSIM_SOURCE_DIR "/tests/data/reference/superpod_bom.csv", &t);
	int checked = 0;
	for (size_t i = 0; i < t.n_rows; i++) {
		if (!*testutil_csv_get(&t, i, "spine"))
			continue; /* the bill-of-materials rows count other parts */
		int su = (int)testutil_csv_num(&t, i, "su_count");
		int nodes = (int)testutil_csv_num(&t, i, "nodes");
		assert_true(su <= 8);
		capsim_fabric_counts c = size_ok(design(nodes, 8, 64, 1.0, 2, 1));
		long ufm = nodes == 32 * su - 1 ? 4 : 0;
		assert_int_equal(c.leaves, (int)testutil_csv_num(&t, i, "leaf"));
		assert_int_equal(c.spines, (int)testutil_csv_num(&t, i, "spine"));
		assert_int_equal(c.cores, 0);
		assert_int_equal(c.cables_node_leaf + ufm,
				 (long)testutil_csv_num(&t, i, "cables_node_leaf"));
		assert_int_equal(c.cables_leaf_spine,
				 (long)testutil_csv_num(&t, i, "cables_leaf_spine"));
		checked++;
	}
	assert_int_equal(checked, 13);
	testutil_csv_free(&t);
}

/* Published compute fabrics past the DGX H100 and B200 SuperPOD: each sized
 * from its nodes, rails (NICs of the link speed a node attaches at) and the
 * switch's ports at that speed, rail-optimised, 1:1, two tiers, and compared
 * with the leaves, spines and cables its source lists. Where one published
 * cable carries two of the model's links (an 800G cable as 2 x 400G), capsim's
 * links are halved for the comparison (per_cable 2).
 *
 * - DGX B300 SuperPOD, Quantum-X800 InfiniBand (Q3400: 144 ports of 800G),
 *   SUs of 72 nodes, 8 rails of 800G: "NVIDIA SuperPOD with DGX B300 Systems,
 *   NVIDIA Quantum-X800 InfiniBand switching and AC Power Reference
 *   Architecture", RA-11339-001 V01 (2025-07-23), "DGX SuperPOD
 *   Architecture", Table 3 "Example Compute Fabric Components for DGX
 *   SuperPOD Counts" (docs.nvidia.com/dgx-superpod/reference-architecture/
 *   scalable-infrastructure-b300-xdr/latest/dgx-superpod-architecture.html).
 * - DGX B300 SuperPOD, Spectrum-X Ethernet, SUs of 64 nodes, twin-planar:
 *   every GPU has 2 x 400GbE through two planes ("Network Fabrics"), so 16
 *   rails of 400G on switches of 64 ports of 800G, each port as 2 x 400G (128
 *   ports); the table lists one node-leaf cable a GPU and half the 400G
 *   uplinks as leaf-spine cables, so each cable carries two 400G links:
 *   "NVIDIA SuperPOD DGX B300 Systems, Spectrum-4 Ethernet and DC Busbar
 *   Power Reference Architecture", RA-11337-001 V01 (2025-05-29), "DGX
 *   SuperPOD Architecture", Table 3 "Larger DGX SuperPOD component counts"
 *   (docs.nvidia.com/dgx-superpod/reference-architecture/
 *   scalable-infrastructure-b300/latest/dgx-superpod-architecture.html).
 * - OCP Open Cluster Designs AI training fabric (Hedgehog and Celestica,
 *   github.com/opencomputeproject/OCP-OCDAI-training-fabric, commit de057e8,
 *   2026-06-06): Celestica DS5000 (64 ports of 800G) leaves whose 32 node
 *   ports run as 64 x 400G and whose 32 uplinks run at 800G, so 128 ports of
 *   400G split 64:64; servers of 8 ConnectX-7 400G (clos-ro) or 8 ConnectX-8
 *   2 x 400G on two planes (dual-plane, 16 rails). Counts are the backend
 *   rows of each composition's bom.csv and connectivity-map.csv: OPG-128,
 *   OPG-256, OPG-512 and XOC-1024 (2 x OPG-512) clos-ro; OPG-256, OPG-512
 *   and XOC-1024 dual-plane. Leaf-spine cables are 800G (two 400G links). */
typedef struct {
	const char *what;
	int nodes, rails, radix;
	int leaves, spines;
	long node_leaf, leaf_spine; /* published cables */
	int node_per_cable, spine_per_cable; /* model links a published cable carries */
} published_fabric;

static const published_fabric published[] = {
	{ "DGX B300 Quantum-X800, 1 SU", 72, 8, 144, 8, 4, 576, 576, 1, 1 },
	{ "DGX B300 Quantum-X800, 2 SU", 144, 8, 144, 16, 8, 1152, 1152, 1, 1 },
	{ "DGX B300 Quantum-X800, 4 SU", 288, 8, 144, 32, 18, 2304, 2304, 1, 1 },
	{ "DGX B300 Quantum-X800, 8 SU", 576, 8, 144, 64, 36, 4608, 4608, 1, 1 },
	{ "DGX B300 Spectrum-X, 1 SU", 64, 16, 128, 16, 8, 512, 512, 2, 2 },
	{ "DGX B300 Spectrum-X, 2 SU", 128, 16, 128, 32, 16, 1024, 1024, 2, 2 },
	{ "DGX B300 Spectrum-X, 4 SU", 256, 16, 128, 64, 32, 2048, 2048, 2, 2 },
	{ "DGX B300 Spectrum-X, 8 SU", 512, 16, 128, 128, 64, 4096, 4096, 2, 2 },
	{ "OCP OPG-128 clos-ro", 16, 8, 128, 2, 1, 128, 64, 1, 2 },
	{ "OCP OPG-256 clos-ro", 32, 8, 128, 4, 2, 256, 128, 1, 2 },
	{ "OCP OPG-512 clos-ro", 64, 8, 128, 8, 4, 512, 256, 1, 2 },
	{ "OCP XOC-1024 clos-ro", 128, 8, 128, 16, 8, 1024, 512, 1, 2 },
	{ "OCP OPG-256 dual-plane", 32, 16, 128, 8, 4, 512, 256, 1, 2 },
	{ "OCP OPG-512 dual-plane", 64, 16, 128, 16, 8, 1024, 512, 1, 2 },
	{ "OCP XOC-1024 dual-plane", 128, 16, 128, 32, 16, 2048, 1024, 1, 2 },
};

static void test_published_fabrics(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof published / sizeof published[0]; i++) {
		const published_fabric *p = &published[i];
		capsim_fabric_counts c = size_ok(design(p->nodes, p->rails, p->radix, 1.0, 2, 1));
		if (c.leaves != p->leaves || c.spines != p->spines || c.cores != 0 ||
		    c.cables_node_leaf != p->node_leaf * p->node_per_cable ||
		    c.cables_leaf_spine != p->leaf_spine * p->spine_per_cable)
			fail_msg("%s: %d leaves, %d spines, %ld/%ld links; published %d, %d, "
				 "%ld/%ld cables of %d/%d links",
				 p->what, c.leaves, c.spines, c.cables_node_leaf,
				 c.cables_leaf_spine, p->leaves, p->spines, p->node_leaf,
				 p->leaf_spine, p->node_per_cable, p->spine_per_cable);
	}
}

/* A published fabric that capsim builds otherwise, for a stated reason
 * (docs/validation.md, "Fabric construction"): OCP's OPG-64 clos-ro (8
 * servers) fills one DS5000 leaf with its 64 node ports, and its bill of
 * materials keeps one spine on the leaf's 32 uplinks (32 cables of 800G)
 * for the XOC that joins OPGs; capsim builds nothing above a leaf that holds
 * every port. The DGX B300 Quantum-X800's 4 and 8 SU spread a leaf's 72
 * uplinks evenly over 18 and 36 spines (4 and 2 links each): the fewest
 * divisors of 72 that hold the links, where the divisors that each divide
 * the next (1, 2, 4, 8, 24, 72) would take 24 and 72. */
static void test_published_differences(void **state)
{
	(void)state;
	capsim_fabric_counts c = size_ok(design(8, 8, 128, 1.0, 2, 1));
	assert_int_equal(c.leaves, 1);
	assert_int_equal(c.spines, 0); /* published 1 */
	assert_int_equal(c.cables_node_leaf, 64);
	assert_int_equal(c.cables_leaf_spine, 0); /* published 32 of 800G */
}

/* At full size the fat tree's closed forms (Al-Fares, Loukissas and Vahdat,
 * SIGCOMM 2008): three tiers of k-port switches connect k^3/4 hosts with
 * 5k^2/4 switches (k^2/2 leaves and aggregation switches, k^2/4 cores) and
 * k^3/4 cables a tier; two at 1:1 connect k^2/2 with k leaves and k/2
 * spines. One fabric (plane) for all: with 8 rails, a node takes 8 hosts'
 * ports. One node more is refused. */
static void test_closed_forms(void **state)
{
	(void)state;
	for (int k = 4; k <= 128; k *= 2) {
		for (int rails = 1; rails <= 8; rails *= 8) {
			long k3 = (long)k * k * k / 4;
			int hosts = (int)(k3 / rails);
			capsim_fabric_counts c = size_ok(design(hosts, rails, k, 1, 3, 1));
			assert_int_equal(c.leaves, k * k / 2);
			assert_int_equal(c.spines, k * k / 2);
			assert_int_equal(c.cores, k * k / 4);
			assert_int_equal(c.switches, 5 * k * k / 4);
			assert_int_equal(c.pods, k);
			assert_int_equal(c.cables_node_leaf, k3);
			assert_int_equal(c.cables_leaf_spine, k3);
			assert_int_equal(c.cables_spine_core, k3);
			assert_int_equal(most_nodes(design(1, rails, k, 1, 3, 1)), k3 / rails);
			long k2 = (long)k * k / 2;
			c = size_ok(design((int)(k2 / rails), rails, k, 1, 2, 1));
			assert_int_equal(c.leaves, k);
			assert_int_equal(c.spines, k / 2);
			assert_int_equal(c.cables_leaf_spine, k2);
			assert_int_equal(most_nodes(design(1, rails, k, 1, 2, 1)), k2 / rails);
		}
	}
}

/* b has at least a's switches, and at least its cables unless it has more
 * switches (cables_too: at least its cables all the same) */
static void check_grows(const capsim_fabric_counts *a, const capsim_fabric_counts *b,
			const char *what, int at, int cables_too)
{
	int cables = (cables_too || b->switches == a->switches) &&
		     (b->cables_node_leaf < a->cables_node_leaf ||
		      b->cables_leaf_spine < a->cables_leaf_spine ||
		      b->cables_spine_core < a->cables_spine_core);
	if (b->switches < a->switches || cables)
		fail_msg("%s, at %d: %d+%d+%d switches, %ld/%ld cables after %d+%d+%d, %ld/%ld",
			 what, at, b->leaves, b->spines, b->cores, b->cables_leaf_spine,
			 b->cables_spine_core, a->leaves, a->spines, a->cores,
			 a->cables_leaf_spine, a->cables_spine_core);
}

static const int sweep_radix[] = { 32, 40, 64, 128 };

static void describe(char *buf, size_t len, const capsim_fabric_size_in *in)
{
	snprintf(buf, len, "%d ports, %d tiers, %s, %g:1", in->radix, in->tiers,
		 in->rail_optimized ? "rail-optimised" : "plain", in->oversubscription);
}

/* the node count after n in a sweep to most: every one to 8,192, then every
 * 5th, and most itself last */
static int next_count(int n, int most)
{
	int step = n > 8192 ? 5 : 1;
	return n < most && n + step > most ? most : n + step;
}

/* one design from 1 node to the most it connects (every 5th past 8,192, and
 * the most, to keep the sanitizer build's run short); returns the sizes done */
static int sweep_nodes(capsim_fabric_size_in in)
{
	char what[96];
	describe(what, sizeof what, &in);
	int most = most_nodes(in), done = 0;
	capsim_fabric_counts prev;
	for (int n = 1; n <= most; n = next_count(n, most)) {
		in.nodes = n;
		capsim_fabric_counts c = size_ok(in);
		if (done++)
			check_grows(&prev, &c, what, n, in.oversubscription == 1.0);
		prev = c;
		if (n == most)
			break;
	}
	capsim_fabric_counts c;
	in.nodes = most + 1;
	assert_int_equal(capsim_fabric_size(&in, &c, NULL, 0), -1);
	return done;
}

/* Property: switches never fall as nodes grow, from 1 node to the most the
 * tiers connect, for 2 and 3 tiers, rail-optimised and plain, at several
 * radices and ratios, and cables never fall while the switches hold; at
 * 1:1 these designs' cables never fall at all. Past the most, the size is
 * refused. Cables may fall where the switches rise: the spines move to a
 * divisor of the uplinks that spreads a partial leaf with fewer links (16
 * plain nodes of 16 rails on 48-port switches at 1:1 take 6 spines and 288
 * leaf-spine cables, 17 take 8 and 272), or the cheapest split changes. */
static void test_monotonic_in_nodes(void **state)
{
	(void)state;
	static const double over[] = { 1.0, 3.0 };
	long sized = 0;
	for (size_t r = 0; r < sizeof sweep_radix / sizeof sweep_radix[0]; r++)
		for (int tiers = 2; tiers <= 3; tiers++)
			for (int ro = 0; ro <= 1; ro++)
				for (size_t o = 0; o < sizeof over / sizeof over[0]; o++)
					sized += sweep_nodes(design(1, 8, sweep_radix[r], over[o],
								    tiers, ro));
	assert_true(sized > 90000);
	capsim_fabric_counts a = size_ok(design(16, 16, 48, 1.0, 2, 0));
	capsim_fabric_counts b = size_ok(design(17, 16, 48, 1.0, 2, 0));
	assert_int_equal(a.spines, 6);
	assert_int_equal(a.cables_leaf_spine, 288);
	assert_int_equal(b.spines, 8);
	assert_int_equal(b.cables_leaf_spine, 272);
}

/* at n nodes, the ratio from 1:1 to 4:1 never adds switches nor cables */
static void sweep_ratios(capsim_fabric_size_in in)
{
	static const double over[] = { 1.0, 1.5, 2.0, 3.0, 4.0 };
	capsim_fabric_counts prev = size_ok(in);
	for (size_t o = 1; o < sizeof over / sizeof over[0]; o++) {
		in.oversubscription = over[o];
		capsim_fabric_counts c = size_ok(in);
		char what[96];
		describe(what, sizeof what, &in);
		check_grows(&c, &prev, what, in.nodes, 1);
		prev = c;
	}
}

/* Property: at fixed nodes, switches and cables never rise as the
 * oversubscription grows (1:1, 1.5, 2, 3, 4): an oversubscribed fabric never
 * costs more than a non-blocking one of the same radix. Every node count to
 * the most 1:1 connects (every 7th past 4,000). */
static void test_monotonic_in_oversubscription(void **state)
{
	(void)state;
	for (size_t r = 0; r < sizeof sweep_radix / sizeof sweep_radix[0]; r++)
		for (int tiers = 2; tiers <= 3; tiers++)
			for (int ro = 0; ro <= 1; ro++) {
				int k = sweep_radix[r];
				capsim_fabric_size_in in = design(1, 8, k, 1.0, tiers, ro);
				int most = most_nodes(in);
				for (; in.nodes <= most; in.nodes += in.nodes > 4000 ? 7 : 1)
					sweep_ratios(in);
			}
	/* 32 DGX on 64 ports, two tiers: 4 spines at 1:1, then 3 (37:27, 9 links
	 * a leaf to each), 3 (43:21: 16 uplinks a leaf need 2 spines, but 21
	 * uplinks spread over 1, 3, 7 or 21), 2 (48:16) and 1 (52:12) */
	static const double over[] = { 1.0, 1.5, 2.0, 3.0, 4.0 };
	static const int spines[] = { 4, 3, 3, 2, 1 };
	for (size_t o = 0; o < sizeof over / sizeof over[0]; o++) {
		capsim_fabric_counts c = size_ok(design(32, 8, 64, over[o], 2, 1));
		assert_int_equal(c.leaves, 8);
		assert_int_equal(c.spines, spines[o]);
	}
}

/* Small clusters: 4 nodes of 8 rails fill 32 ports, one 64-port switch at
 * one tier and a single leaf (nothing above it) at two or three; 8 nodes at
 * two tiers share 4 rails a leaf: 64 node cables and 64 uplinks to one
 * spine. Three tiers over one pod build no core. */
static void test_small_clusters(void **state)
{
	(void)state;
	for (int tiers = 1; tiers <= 3; tiers++) {
		capsim_fabric_counts c = size_ok(design(4, 8, 64, 1.0, tiers, 1));
		assert_int_equal(c.switches, 1);
		assert_int_equal(c.cables_node_leaf, 32);
		assert_int_equal(c.cables_leaf_spine, 0);
	}
	capsim_fabric_counts c = size_ok(design(8, 8, 64, 1.0, 2, 1));
	assert_int_equal(c.cables_node_leaf, 64);
	assert_int_equal(c.leaves, 2);
	assert_int_equal(c.rails_per_leaf, 4);
	assert_int_equal(c.spines, 1);
	assert_int_equal(c.cables_leaf_spine, 64);
	/* 32 nodes at three tiers: 8 leaves in one pod, 8 aggregation switches
	 * of 32 links down, no core */
	c = size_ok(design(32, 8, 64, 1.0, 3, 1));
	assert_int_equal(c.leaves, 8);
	assert_int_equal(c.spines, 8);
	assert_int_equal(c.cores, 0);
	assert_int_equal(c.pods, 1);
	assert_int_equal(c.cables_spine_core, 0);
	/* a second pod brings the cores: 264 nodes are 72 leaves in 3 pods */
	c = size_ok(design(264, 8, 64, 1.0, 3, 1));
	assert_int_equal(c.leaves, 72);
	assert_int_equal(c.pods, 3);
	assert_true(c.cores > 0);
	assert_int_equal(c.cables_spine_core, c.cables_leaf_spine);
	assert_int_equal(c.cores, (int)((c.cables_spine_core + 63) / 64));
}

/* Refusals name the size at which the design fails. */
static void test_refusals(void **state)
{
	(void)state;
	capsim_fabric_counts c;
	char err[256];
	capsim_fabric_size_in in = design(512, 8, 64, 1.0, 2, 1);
	assert_int_equal(capsim_fabric_size(&in, &c, err, sizeof err), -1);
	assert_string_equal(err, "2 tiers of 64-port switches connect at most 256 nodes of 8 rails "
				 "rail-optimised at 1:1, not 512; use 3 tiers");
	assert_int_equal(c.switches, 0);
	in = design(8193, 8, 64, 1.0, 3, 1);
	assert_int_equal(capsim_fabric_size(&in, &c, err, sizeof err), -1);
	assert_non_null(strstr(err, "3 tiers of 64-port switches connect at most 8192 nodes"));
	in = design(INT_MAX, 8, 64, 1.0, 3, 1); /* no overflow on the way */
	assert_int_equal(capsim_fabric_size(&in, &c, err, sizeof err), -1);
	assert_non_null(strstr(err, "at most 8192 nodes"));
	in = design(65, 8, 64, 1.0, 1, 1);
	assert_int_equal(capsim_fabric_size(&in, &c, err, sizeof err), -1);
	assert_string_equal(err, "65 nodes on one switch layer, but 64-port switches connect at "
				 "most 64");
	in = design(4, 8, 1, 1.0, 2, 1);
	assert_int_equal(capsim_fabric_size(&in, &c, err, sizeof err), -1);
	assert_non_null(strstr(err, "expected at least 1 node, 1 rail, 2 ports and 1 to 3 tiers"));
	in = design(4, 8, 64, 1.0, 4, 1);
	assert_int_equal(capsim_fabric_size(&in, &c, err, sizeof err), -1);
	in = design(0, 8, 64, 1.0, 2, 1);
	assert_int_equal(capsim_fabric_size(&in, &c, err, sizeof err), -1);
	in = design(4, 8, 8, 8.0, 2, 1);
	assert_int_equal(capsim_fabric_size(&in, &c, err, sizeof err), -1);
	assert_string_equal(err, "oversubscription 8:1 leaves no uplink on 8-port switches");
	in = design(4, 16, 16, 1.0, 2, 0);
	assert_int_equal(capsim_fabric_size(&in, &c, err, sizeof err), -1);
	assert_non_null(strstr(err, "a node's 16 NICs on one leaf, but its leaves have 8 node "
				    "ports"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_leaf_split),
		cmocka_unit_test(test_superpod_reference),
		cmocka_unit_test(test_published_fabrics),
		cmocka_unit_test(test_published_differences),
		cmocka_unit_test(test_closed_forms),
		cmocka_unit_test(test_monotonic_in_nodes),
		cmocka_unit_test(test_monotonic_in_oversubscription),
		cmocka_unit_test(test_small_clusters),
		cmocka_unit_test(test_refusals),
	};
	return testutil_run_group(tests, NULL, NULL);
}
