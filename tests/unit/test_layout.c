/* test_layout.c - the floor layout and cables by reach against hand counts:
 * the reach classes' bounds (NVIDIA LinkX), 8 and 64 DGX H100 in one row of
 * racks, the same 64 over rows of 4 racks, top-of-rack leaves, GB200 NVL72
 * trays a whole NVLink domain a rack, two node groups whose racks and leaf
 * groups do not line up, and the counts adding up to the
 * fabric's cables. */
#include "catalog.h"
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "eval.h"
#include "layout.h"
#include "scenario.h"

TESTUTIL_CATALOG_FIXTURE

static void test_reach_classes(void **state)
{
	(void)state;
	assert_int_equal(capsim_cable_class_of(3.0), CAPSIM_CABLE_DAC);
	assert_int_equal(capsim_cable_class_of(3.01), CAPSIM_CABLE_ACC);
	assert_int_equal(capsim_cable_class_of(5.0), CAPSIM_CABLE_ACC);
	assert_int_equal(capsim_cable_class_of(50.0), CAPSIM_CABLE_MMF);
	assert_int_equal(capsim_cable_class_of(50.5), CAPSIM_CABLE_SMF);
	assert_int_equal(capsim_cable_class_of(500.0), CAPSIM_CABLE_SMF);
	assert_int_equal(capsim_cable_class_of(600.0), CAPSIM_CABLE_SMF_2KM);
}

/* the scenario `text` with the sets, evaluated without the reference */
static capsim_result eval_text(const char *text, const capsim_set *more, size_t n)
{
	capsim_scenario *s = malloc(sizeof *s);
	capsim_diags d = { 0 };
	capsim_result r;
	memset(&r, 0, sizeof r);
	if (capsim_scenario_load_memory(text, strlen(text), "l.xml", cat, more, n, s, &d) < 0 ||
	    capsim_eval(s, &(capsim_eval_opts){ .no_reference = 1 }, &r, &d) < 0) {
		capsim_diags_print(&d, stderr);
		fail_msg("scenario does not run");
	}
	capsim_diags_free(&d);
	free(s);
	return r;
}

/* DGX H100 (10.2 kW) under us-colocation's 40.8 kW racks: 4 a rack; rows
 * of 20 racks 0.6 m apart, 2.4 m between rows, 4 m of slack a cable */
static capsim_result eval_nodes(int nodes, const capsim_set *more, size_t n)
{
	char text[1024];
	snprintf(text, sizeof text,
		 "<scenario name=\"l\"><cluster nodes=\"%d\"><node ref=\"dgx-h100\"/>"
		 "<fabric topology=\"fat-tree\" transport=\"infiniband\" routing=\"adaptive\">"
		 "<switch ref=\"qm9700\"/></fabric></cluster>"
		 "<workload seq-len=\"4096\" global-batch=\"%d\" tokens=\"1T\" dtype=\"bf16\">"
		 "<model ref=\"llama-2-7b\"/><parallelism tp=\"8\"/></workload>"
		 "<facility ref=\"us-colocation\"/></scenario>",
		 nodes, nodes * 4);
	return eval_text(text, more, n);
}

static long sum(const long *v)
{
	long t = 0;
	for (int k = 0; k < CAPSIM_CABLE__COUNT; k++)
		t += v[k];
	return t;
}

static void test_one_row(void **state)
{
	(void)state;
	/* 8 nodes in 2 racks; the 8 leaves (one a rail) in a network rack
	 * between them, 0.3 m from each: 4.3 m a node cable (active copper);
	 * the spine at the middle of the hall, 0 + 4 m away */
	capsim_result r = eval_nodes(8, NULL, 0);
	assert_true(r.layout.has_layout);
	assert_int_equal(r.layout.node_racks, 2);
	assert_int_equal(r.layout.cables[0][CAPSIM_CABLE_ACC], 64);
	assert_int_equal(r.layout.cables[1][CAPSIM_CABLE_ACC], 64);
	assert_rel(r.layout.longest_m[0], 4.3, 1e-12);
	assert_int_equal(r.layout.optical_ends, 0);
	capsim_result_free(&r);

	/* 64 nodes in 16 racks: two leaf groups of 32 nodes (8 racks), each at
	 * its racks' middle (2.1 m, 6.9 m); a rack k of group 0 is |0.6 k - 2.1|
	 * + 4 m away: racks 0, 1, 6, 7 past 5 m (multimode), 2-5 active copper;
	 * the spines at the hall's middle (4.5 m), 2.4 + 4 m from both groups */
	r = eval_nodes(64, NULL, 0);
	assert_int_equal(r.layout.node_racks, 16);
	assert_int_equal(r.layout.rows, 1);
	assert_int_equal(r.layout.cables[0][CAPSIM_CABLE_ACC], 256);
	assert_int_equal(r.layout.cables[0][CAPSIM_CABLE_MMF], 256);
	assert_int_equal(r.layout.cables[1][CAPSIM_CABLE_MMF], 512);
	assert_rel(r.layout.longest_m[1], 6.4, 1e-12);
	assert_int_equal(sum(r.layout.cables[0]), r.fabric.cables_node_leaf);
	assert_int_equal(sum(r.layout.cables[1]), r.fabric.cables_leaf_spine);
	assert_int_equal(r.layout.optical_ends, 2 * (256 + 512));
	capsim_result_free(&r);
}

static void test_rows_and_top_of_rack(void **state)
{
	(void)state;
	/* rows of 4 racks, 10 m apart: each leaf group's 8 racks fill two rows
	 * (y 0 and 10, or 20 and 30), its switches at their middle (x 0.9,
	 * y 5 or 25); the spines at the hall's (x 0.9, y 15). A node is
	 * |x - 0.9| + 5 + 4 m from its leaves (9.3 or 9.9 m); a leaf 10 + 4 m
	 * from the spines: all multimode */
	const capsim_set rows[] = { { "facility.layout.racks-per-row", "4" },
				    { "facility.layout.row-pitch", "10 m" } };
	capsim_result r = eval_nodes(64, rows, 2);
	assert_int_equal(r.layout.rows, 4);
	assert_int_equal(r.layout.cables[0][CAPSIM_CABLE_MMF], 512);
	assert_int_equal(r.layout.cables[1][CAPSIM_CABLE_MMF], 512);
	assert_rel(r.layout.longest_m[0], 0.9 + 5 + 4, 1e-12);
	assert_rel(r.layout.longest_m[1], 10 + 4, 1e-12);
	capsim_result_free(&r);
	/* 4 nodes fill one rack: its leaves are at the top of it, 2 m cables */
	r = eval_nodes(4, NULL, 0);
	assert_int_equal(r.layout.node_racks, 1);
	assert_int_equal(r.layout.cables[0][CAPSIM_CABLE_DAC], 32);
	assert_rel(r.layout.longest_m[0], 2.0, 1e-12);
	capsim_result_free(&r);
}

/* Two node groups, racks part full and leaf groups across racks and
 * groups: 7 DGX H100 in racks 0 (nodes 0-3) and 1 (4-6), 5 DGX H200 in racks
 * 2 (7-10) and 3 (11), a rack a row 50 m apart, leaves of 6 nodes (12-port
 * switches, 1 rail). Leaf group 0 (nodes 0-5, racks 0 and 1) sits at y 25:
 * its nodes are 25 + 4 m away (multimode); leaf group 1 (nodes 6-11, racks
 * 1 to 3) at y 100: node 6 (y 50) and node 11 (y 150) 54 m (single-mode),
 * nodes 7-10 beside it, 4 m (active copper). */
static void test_groups_across_racks(void **state)
{
	(void)state;
	static const char text[] =
		"<scenario name=\"g\"><cluster>"
		"<group id=\"a\" ref=\"dgx-h100\" nodes=\"7\"/><group id=\"b\" ref=\"dgx-h200\" "
		"nodes=\"5\"/>"
		"<fabric topology=\"fat-tree\" tiers=\"2\" transport=\"infiniband\" rails=\"1\" "
		"routing=\"adaptive\"><switch ref=\"qm9700\"/></fabric></cluster>"
		"<workload seq-len=\"4096\" global-batch=\"48\" tokens=\"1T\" dtype=\"bf16\">"
		"<model ref=\"llama-2-7b\"/><parallelism tp=\"8\"/></workload>"
		"<facility ref=\"us-colocation\"/></scenario>";
	const capsim_set sets[] = { { "cluster.fabric.switch.ports.count", "12" },
				    { "facility.layout.racks-per-row", "1" },
				    { "facility.layout.row-pitch", "50 m" } };
	capsim_result r = eval_text(text, sets, 3);
	assert_int_equal(r.power.n_groups, 2);
	assert_int_equal(r.power.group[0].nodes_per_rack, 4);
	assert_int_equal(r.power.group[1].nodes_per_rack, 4);
	assert_true(r.layout.has_layout);
	assert_int_equal(r.layout.node_racks, 4);
	static const int rack[12] = { 0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 2, 3 };
	for (int n = 0; n < 12; n++)
		assert_int_equal(capsim_layout_rack_of(&r.power, n), rack[n]);
	assert_int_equal(r.layout.cables[0][CAPSIM_CABLE_MMF], 6);
	assert_int_equal(r.layout.cables[0][CAPSIM_CABLE_SMF], 2);
	assert_int_equal(r.layout.cables[0][CAPSIM_CABLE_ACC], 4);
	assert_int_equal(sum(r.layout.cables[0]), 12);
	assert_rel(r.layout.longest_m[0], 54.0, 1e-12);
	capsim_result_free(&r);
}

/* GB200 NVL72 trays on the floor (the hyperscale hall's 132 kW racks): a
 * rack a whole 72-GPU domain, 18 trays, so 54 trays fill 3 racks in a row;
 * every node cable is counted once */
static void test_rack_scale_racks(void **state)
{
	(void)state;
	static const char text[] =
		"<scenario name=\"nvl\"><cluster nodes=\"54\"><node ref=\"gb200-nvl72-tray\"/>"
		"<fabric topology=\"fat-tree\" transport=\"infiniband\" routing=\"adaptive\">"
		"<switch ref=\"qm9700\"/></fabric></cluster>"
		"<workload seq-len=\"4096\" global-batch=\"216\" tokens=\"1T\" dtype=\"bf16\">"
		"<model ref=\"llama-2-7b\"/><parallelism tp=\"2\"/></workload>"
		"<facility ref=\"hyperscale-liquid-cooled\"/></scenario>";
	capsim_result r = eval_text(text, NULL, 0);
	assert_int_equal(r.power.nodes_per_rack, 18);
	assert_true(r.layout.has_layout);
	assert_int_equal(r.layout.node_racks, 3);
	assert_int_equal(r.layout.rows, 1);
	for (int n = 0; n < 54; n++)
		assert_int_equal(capsim_layout_rack_of(&r.power, n), n / 18);
	assert_int_equal(sum(r.layout.cables[0]), r.fabric.cables_node_leaf);
	capsim_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reach_classes),
		cmocka_unit_test(test_one_row),
		cmocka_unit_test(test_rows_and_top_of_rack),
		cmocka_unit_test(test_groups_across_racks),
		cmocka_unit_test(test_rack_scale_racks),
	};
	capsim_init();
	return testutil_run_group(tests, setup, teardown);
}
