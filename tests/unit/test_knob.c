/* test_knob.c - the explorer's model (src/ui/knob.h): every knob reads a
 * value from the default scenario; steps as each kind says (counts halve
 * and double, shares move 5 points, choices cycle through the catalog or
 * the field's names and stop at the ends); a change is the scenario's own
 * edit (refused with its reason, the state kept) and undo goes back; the
 * fabric presets are the catalog's parts, move transport, NIC and switch
 * together to what capsim_eval gives for the three edits, and a step
 * passes over the values the scenario refuses, keeping the first and why. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "catalog.h"
#include "eval.h"
#include "knob.h"
#include "scenario.h"
#include "testutil.h"

TESTUTIL_CATALOG_FIXTURE

static capsim_scenario *default_scenario(void)
{
	capsim_scenario *s = calloc(1, sizeof *s);
	capsim_diags d = { 0 };
	if (capsim_scenario_load(CAPSIM_SOURCE_DIR "/scenarios/default.xml", cat, NULL, 0, s, &d) < 0)
		fail_msg("default.xml does not load");
	return s;
}

static const capsim_ui_knob *knob(const char *path)
{
	for (size_t i = 0; i < capsim_ui_n_knobs; i++)
		if (strcmp(capsim_ui_knobs[i].path, path) == 0)
			return &capsim_ui_knobs[i];
	fail_msg("no knob %s", path);
	return NULL;
}

static void test_every_knob_reads(void **state)
{
	(void)state;
	capsim_scenario *s = default_scenario();
	for (size_t i = 0; i < capsim_ui_n_knobs; i++) {
		const capsim_ui_knob *k = &capsim_ui_knobs[i];
		assert_true(k->kind == CAPSIM_KNOB_FABRIC || capsim_scenario_path_known(k->path));
		char v[96];
		capsim_ui_knob_text(s, k, v, sizeof v);
		assert_true(v[0] != '\0');
	}
	char v[96];
	capsim_ui_knob_text(s, knob("cluster.nodes"), v, sizeof v);
	assert_string_equal(v, "32");
	capsim_ui_knob_text(s, knob("cost.utilization"), v, sizeof v);
	assert_string_equal(v, "70%");
	capsim_ui_knob_text(s, knob("cluster.fabric.oversubscription"), v, sizeof v);
	assert_string_equal(v, "1:1");
	capsim_ui_knob_text(s, knob("cluster.gpu.ref"), v, sizeof v);
	assert_string_equal(v, "-"); /* no override: the node's GPU */
	free(s);
}

static void test_steps(void **state)
{
	(void)state;
	capsim_scenario *s = default_scenario();
	char v[128];
	assert_int_equal(capsim_ui_knob_step(s, cat, knob("cluster.nodes"), 1, v, sizeof v), 0);
	assert_string_equal(v, "64");
	assert_int_equal(capsim_ui_knob_step(s, cat, knob("cluster.nodes"), -1, v, sizeof v), 0);
	assert_string_equal(v, "16");
	/* a micro-batch of 1 has none below */
	assert_int_equal(capsim_ui_knob_step(s, cat, knob("workload.micro-batch"), -1, v, sizeof v),
			 -1);
	assert_int_equal(capsim_ui_knob_step(s, cat, knob("cost.utilization"), 1, v, sizeof v), 0);
	assert_string_equal(v, "0.75");
	/* the field's own names: ZeRO 1 -> 2, recompute selective -> full -> none of above */
	assert_int_equal(capsim_ui_knob_step(s, cat, knob("workload.parallelism.zero"), 1, v,
					     sizeof v), 0);
	assert_string_equal(v, "2");
	assert_int_equal(capsim_ui_knob_step(s, cat, knob("workload.parallelism.recompute"), 1, v,
					     sizeof v), 0);
	assert_string_equal(v, "full");
	/* on/off: off steps to on and no further */
	assert_int_equal(capsim_ui_knob_step(s, cat, knob("cluster.fabric.sharp"), 1, v, sizeof v), 0);
	assert_string_equal(v, "on");
	assert_int_equal(capsim_ui_knob_step(s, cat, knob("cluster.fabric.sharp"), -1, v, sizeof v),
			 -1);
	/* the catalog's nodes, in catalog order: dgx-h100's neighbours */
	size_t n = capsim_catalog_count(cat, CAPSIM_KIND_NODE), at = n;
	for (size_t i = 0; i < n; i++)
		if (strcmp(((const capsim_entry *)capsim_catalog_at(cat, CAPSIM_KIND_NODE, i))->id,
			   "dgx-h100") == 0)
			at = i;
	assert_true(at < n);
	int up = capsim_ui_knob_step(s, cat, knob("cluster.node.ref"), 1, v, sizeof v);
	if (at + 1 < n) {
		assert_int_equal(up, 0);
		assert_string_equal(v, ((const capsim_entry *)capsim_catalog_at(cat, CAPSIM_KIND_NODE,
										 at + 1))->id);
	} else {
		assert_int_equal(up, -1);
	}
	/* the energy price 10% up, as a value its field reads back */
	assert_int_equal(capsim_ui_knob_step(s, cat, knob("facility.energy.price"), 1, v, sizeof v), 0);
	capsim_path_value pv, now;
	char err[256];
	assert_int_equal(capsim_scenario_path_value(s, "facility.energy.price", v, &pv, err,
						    sizeof err), 0);
	assert_int_equal(capsim_scenario_path_value(s, "facility.energy.price", NULL, &now, err,
						    sizeof err), 0);
	assert_rel(pv.num, now.num * 1.1, 1e-12);
	free(s);
}

static void test_change_and_undo(void **state)
{
	(void)state;
	capsim_explore x;
	capsim_explore_init(&x, cat, default_scenario());
	char err[512];
	assert_int_equal(capsim_explore_set(&x, "cluster.nodes", "64", err, sizeof err), 0);
	assert_int_equal(x.s->nodes, 64);
	assert_int_equal(x.s->dp, 16);
	/* refused with the scenario's reason; the state kept, no undo step made */
	assert_int_equal(capsim_explore_set(&x, "workload.parallelism.tp", "3", err, sizeof err), -1);
	assert_non_null(strstr(err, "tp=3 does not divide"));
	assert_int_equal(x.s->tp, 8);
	assert_int_equal(x.n_undo, 1);
	assert_int_equal(capsim_explore_set(&x, "cost.utilization", "0.9", err, sizeof err), 0);
	assert_int_equal(capsim_explore_undo(&x), 0);
	assert_rel(x.s->utilization, 0.7, 1e-12);
	assert_int_equal(capsim_explore_undo(&x), 0);
	assert_int_equal(x.s->nodes, 32);
	assert_int_equal(capsim_explore_undo(&x), -1);
	/* the explorer's numbers are capsim_eval's of the same edit */
	assert_int_equal(capsim_explore_set(&x, "cluster.nodes", "64", err, sizeof err), 0);
	capsim_scenario *t = default_scenario();
	capsim_diags d = { 0 };
	assert_int_equal(capsim_scenario_set(t, cat, "cluster.nodes", "64", &d), 0);
	capsim_result a, b;
	assert_int_equal(capsim_eval(x.s, NULL, &a, &d), 0);
	assert_int_equal(capsim_eval(t, NULL, &b, &d), 0);
	assert_memory_equal(&a.step.step_time_s, &b.step.step_time_s, sizeof(double));
	capsim_result_free(&a);
	capsim_result_free(&b);
	free(t);
	capsim_explore_free(&x);
}

/* a scenario file of the source tree, loaded */
static capsim_scenario *scenario(const char *name)
{
	char path[512];
	snprintf(path, sizeof path, CAPSIM_SOURCE_DIR "/scenarios/%s.xml", name);
	capsim_scenario *s = calloc(1, sizeof *s);
	capsim_diags d = { 0 };
	if (capsim_scenario_load(path, cat, NULL, 0, s, &d) < 0)
		fail_msg("%s does not load", path);
	return s;
}

/* every preset's NIC and switch are catalog parts with sources, the switch
 * carries the transport and the NIC is not of the other one; the default
 * scenario takes each; the shipped scenarios read as their presets */
static void test_fabric_presets(void **state)
{
	(void)state;
	assert_true(capsim_ui_n_fabrics >= 4);
	int ib = 0, roce = 0;
	capsim_scenario *s = default_scenario();
	for (size_t i = 0; i < capsim_ui_n_fabrics; i++) {
		const capsim_ui_fabric *f = &capsim_ui_fabrics[i];
		const capsim_nic *nic = capsim_catalog_find(cat, CAPSIM_KIND_NIC, f->nic);
		const capsim_switch *sw = capsim_catalog_find(cat, CAPSIM_KIND_SWITCH, f->sw);
		if (!nic || !sw)
			fail_msg("preset %s: %s or %s is not in the catalog", f->name, f->nic, f->sw);
		assert_true(nic->e.src[0] && sw->e.src[0]);
		int is_ib = strcmp(f->transport, "infiniband") == 0;
		ib += is_ib;
		roce += strcmp(f->transport, "roce") == 0;
		assert_int_equal(sw->transport, is_ib ? CAPSIM_TRANSPORT_INFINIBAND :
							CAPSIM_TRANSPORT_ETHERNET);
		assert_int_not_equal(nic->transport, is_ib ? CAPSIM_TRANSPORT_ETHERNET :
							     CAPSIM_TRANSPORT_INFINIBAND);
		capsim_scenario *t = default_scenario();
		capsim_set sets[] = { { "cluster.fabric.transport", f->transport },
				      { "cluster.nic.ref", f->nic },
				      { "cluster.fabric.switch.ref", f->sw } };
		capsim_diags d = { 0 };
		if (capsim_scenario_set_many(t, cat, sets, 3, &d) < 0)
			fail_msg("preset %s refused on default.xml: %s", f->name, d.v[0].msg);
		assert_int_equal(capsim_ui_fabric_of(t), (int)i);
		free(t);
	}
	assert_true(ib >= 2 && roce >= 2);
	char v[128];
	capsim_ui_knob_text(s, knob("cluster.fabric"), v, sizeof v);
	assert_string_equal(v, "InfiniBand NDR");
	free(s);
	s = scenario("h100-64node-roce200");
	capsim_ui_knob_text(s, knob("cluster.fabric"), v, sizeof v);
	assert_string_equal(v, "RoCE 200GbE");
	free(s);
}

/* one step of the fabric knob: InfiniBand NDR to RoCE, three edits, the
 * result capsim_eval gives for the same three --set edits; at the last
 * preset there is none above */
static void test_fabric_step(void **state)
{
	(void)state;
	capsim_explore x;
	capsim_explore_init(&x, cat, default_scenario());
	capsim_ui_step st;
	assert_int_equal(capsim_ui_knob_next(x.s, cat, knob("cluster.fabric"), -1, &st), 0);
	assert_int_equal(st.n, 3);
	assert_string_equal(st.shown, "RoCE 200GbE");
	assert_string_equal(st.sets[0].path, "cluster.fabric.transport");
	assert_string_equal(st.sets[0].value, "roce");
	assert_string_equal(st.sets[1].value, "cx7-200gbe");
	assert_string_equal(st.sets[2].value, "sn5600");
	assert_int_equal(st.skipped, 0);
	char err[512];
	assert_int_equal(capsim_explore_set_many(&x, st.sets, st.n, err, sizeof err), 0);
	assert_int_equal(x.s->transport, CAPSIM_NET_ROCE);
	capsim_scenario *t = default_scenario();
	capsim_set sets[] = { { "cluster.fabric.transport", "roce" },
			      { "cluster.nic.ref", "cx7-200gbe" },
			      { "cluster.fabric.switch.ref", "sn5600" } };
	capsim_diags d = { 0 };
	assert_int_equal(capsim_scenario_set_many(t, cat, sets, 3, &d), 0);
	capsim_result a, b, base;
	capsim_scenario *u = default_scenario();
	assert_int_equal(capsim_eval(x.s, NULL, &a, &d), 0);
	assert_int_equal(capsim_eval(t, NULL, &b, &d), 0);
	assert_int_equal(capsim_eval(u, NULL, &base, &d), 0);
	assert_memory_equal(&a.step.step_time_s, &b.step.step_time_s, sizeof(double));
	/* a 200 Gb/s NIC against 400: the step moves */
	assert_true(a.step.step_time_s > base.step.step_time_s);
	capsim_result_free(&a);
	capsim_result_free(&b);
	capsim_result_free(&base);
	free(t);
	free(u);
	assert_int_equal(capsim_explore_undo(&x), 0);
	/* up from NDR: RoCE at the same 400 Gb/s, then XDR, then none */
	assert_int_equal(capsim_ui_knob_next(x.s, cat, knob("cluster.fabric"), 1, &st), 0);
	assert_string_equal(st.shown, "RoCE 400GbE");
	assert_int_equal(capsim_explore_set_many(&x, st.sets, st.n, err, sizeof err), 0);
	assert_int_equal(capsim_ui_knob_next(x.s, cat, knob("cluster.fabric"), 1, &st), 0);
	assert_string_equal(st.shown, "InfiniBand XDR");
	assert_int_equal(capsim_explore_set_many(&x, st.sets, st.n, err, sizeof err), 0);
	assert_int_equal(capsim_ui_knob_next(x.s, cat, knob("cluster.fabric"), 1, &st), -1);
	capsim_explore_free(&x);
}

/* a step passes over what the scenario refuses: the transport under the
 * QM9700 skips roce for tcp, the first refused value and its reason kept;
 * SHARP on refuses every RoCE preset and a switch without it, so the fabric
 * knob skips them, and says so where nothing that way is taken */
static void test_step_skips_refused(void **state)
{
	(void)state;
	capsim_scenario *s = default_scenario();
	capsim_ui_step st;
	assert_int_equal(capsim_ui_knob_next(s, cat, knob("cluster.fabric.transport"), 1, &st), 0);
	assert_string_equal(st.sets[0].value, "tcp");
	assert_int_equal(st.skipped, 1);
	assert_string_equal(st.skipped_value, "roce");
	assert_non_null(strstr(st.why, "does not carry transport 'roce'"));
	/* nothing refused: nothing said */
	assert_int_equal(capsim_ui_knob_next(s, cat, knob("cluster.nodes"), 1, &st), 0);
	assert_string_equal(st.sets[0].value, "64");
	assert_int_equal(st.skipped, 0);
	capsim_diags d = { 0 };
	assert_int_equal(capsim_scenario_set(s, cat, "cluster.fabric.sharp", "on", &d), 0);
	/* up: RoCE 400GbE and the Q3400 (no SHARP in the catalog) both refused */
	assert_int_equal(capsim_ui_knob_next(s, cat, knob("cluster.fabric"), 1, &st), -1);
	assert_int_equal(st.skipped, 2);
	assert_string_equal(st.skipped_value, "RoCE 400GbE");
	assert_non_null(strstr(st.why, "sharp"));
	assert_int_equal(capsim_ui_knob_next(s, cat, knob("cluster.fabric"), -1, &st), 0);
	assert_string_equal(st.shown, "InfiniBand HDR");
	assert_int_equal(st.skipped, 1); /* RoCE 200GbE */
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_knob_reads),
		cmocka_unit_test(test_steps),
		cmocka_unit_test(test_change_and_undo),
		cmocka_unit_test(test_fabric_presets),
		cmocka_unit_test(test_fabric_step),
		cmocka_unit_test(test_step_skips_refused),
	};
	capsim_init();
	return testutil_run_group(tests, setup, teardown);
}
