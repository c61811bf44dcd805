/* test_groups.c - node groups: a cluster of six groups of four GPU types loads
 * (ids, defaults, a group's own override), is edited by group id and index,
 * counts every group in power, failures and the bill of materials, and lists
 * each group's knobs; the old <mix> form loads with its warning to the same
 * scenario as <group> elements, and so does its --resolved form. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "bom.h"
#include "catalog.h"
#include "eval.h"
#include "knob.h"
#include "power.h"
#include "reliab.h"
#include "optimize.h"
#include "scenario.h"
#include "sweep.h"
#include "testutil.h"

TESTUTIL_CATALOG_FIXTURE

#define DATA CAPSIM_SOURCE_DIR "/tests/data/groups/"

static capsim_scenario *load(const char *path, const capsim_set *sets, size_t n)
{
	capsim_scenario *s = calloc(1, sizeof *s);
	capsim_diags d = { 0 };
	if (capsim_scenario_load(path, cat, sets, n, s, &d) < 0) {
		capsim_diags_print(&d, stderr);
		fail_msg("%s does not load", path);
	}
	capsim_diags_free(&d);
	return s;
}

static void test_six_groups_load(void **state)
{
	(void)state;
	capsim_scenario *s = load(DATA "six-groups.xml", NULL, 0);
	static const char *const ids[] = { "h100-a", "h100-b", "h200", "a100", "dgx-b200",
					   "dgx-b200-2" };
	assert_int_equal(s->n_groups, 6);
	assert_int_equal(s->nodes, 24);
	for (int g = 0; g < 6; g++) {
		assert_string_equal(s->groups[g].id, ids[g]);
		assert_int_equal(s->groups[g].nodes, 4);
		capsim_group_view v;
		capsim_scenario_group(s, g, &v);
		assert_int_equal(v.first_node, 4 * g);
		assert_int_equal(capsim_scenario_group_of_node(s, 4 * g + 3), g);
	}
	assert_string_equal(s->groups[3].gpu.e.id, "a100-sxm4-80gb");
	/* the override reaches its own group only */
	assert_rel(s->groups[5].gpu.mem_bw_bytes_per_s, 7e12, 1e-12);
	assert_true(s->groups[4].gpu.mem_bw_bytes_per_s != 7e12);
	/* the one-group view of group 3 */
	capsim_scenario *v = malloc(sizeof *v);
	capsim_scenario_as_group(s, 3, v);
	assert_int_equal(v->n_groups, 1);
	assert_string_equal(v->gpu.e.id, "a100-sxm4-80gb");
	assert_int_equal(v->groups[0].nodes, 24);
	free(v);
	free(s);
}

static void test_set_by_id_and_index(void **state)
{
	(void)state;
	capsim_scenario *s = load(DATA "six-groups.xml", NULL, 0);
	capsim_diags d = { 0 };
	assert_int_equal(capsim_scenario_set(s, cat, "cluster.group.h200.nodes", "8", &d), 0);
	assert_int_equal(s->groups[2].nodes, 8);
	assert_int_equal(s->nodes, 28);
	assert_int_equal(capsim_scenario_set(s, cat, "cluster.group.3.gpu.memory.bandwidth",
					     "1.5 TB/s", &d), 0);
	assert_rel(s->groups[3].gpu.mem_bw_bytes_per_s, 1.5e12, 1e-12);
	assert_int_equal(capsim_scenario_set(s, cat, "cluster.group.1.ref", "dgx-h200", &d), 0);
	assert_string_equal(s->groups[1].gpu.e.id, "h200-sxm-141gb");
	capsim_path_value pv;
	char err[256];
	assert_int_equal(capsim_scenario_path_value(s, "cluster.group.h200.nodes", NULL, &pv, err,
						    sizeof err), 0);
	assert_rel(pv.num, 8, 0);
	assert_true(capsim_scenario_path_known("cluster.group.h200.gpu.memory.bandwidth"));
	/* an unknown group: the ids listed, the scenario unchanged */
	assert_int_equal(capsim_scenario_set(s, cat, "cluster.group.h300.nodes", "2", &d), -1);
	assert_true(capsim_diags_contains(&d, "cluster.group.h300.nodes: no node group has that id "
					  "or index; the groups: h100-a, h100-b, h200, a100, "
					  "dgx-b200, dgx-b200-2 (0 to 5)"));
	assert_int_equal(s->groups[2].nodes, 8);
	capsim_diags_free(&d);
	free(s);
}

/* IT power is the sum over groups of nodes x that group's node power (each
 * group's at the same load, as its one-group view computes it) */
static void test_power_counts_every_group(void **state)
{
	(void)state;
	capsim_scenario *s = load(DATA "six-groups.xml", NULL, 0);
	capsim_step st;
	memset(&st, 0, sizeof st);
	st.step_time_s = 2.385;
	st.compute_s = 1.7;
	st.steps = 10;
	capsim_power all, one;
	capsim_diags d = { 0 };
	assert_int_equal(capsim_power_estimate(s, &st, 0, &all, &d), 0);
	capsim_scenario *v = malloc(sizeof *v);
	double sum = 0, a100 = 0, b200 = 0;
	for (int g = 0; g < s->n_groups; g++) {
		capsim_scenario_as_group(s, g, v);
		assert_int_equal(capsim_power_estimate(v, &st, 0, &one, &d), 0);
		sum += s->groups[g].nodes * one.node_w;
		if (g == 3)
			a100 = one.node_w;
		if (g == 4)
			b200 = one.node_w;
	}
	assert_true(b200 > a100 * 1.2);
	assert_rel(all.it_w, sum, 1e-12);
	free(v);
	free(s);
}

/* the failure rates of every group's nodes and GPUs */
static void test_failures_count_every_group(void **state)
{
	(void)state;
	capsim_scenario *s = load(DATA "six-groups.xml", NULL, 0);
	double rate[CAPSIM_PART__COUNT];
	capsim_part_rates(s, 0, rate);
	assert_rel(rate[CAPSIM_PART_GPU], 24.0 * 8 / (50000 * 3600.0), 1e-12);
	assert_rel(rate[CAPSIM_PART_HOST], 24.0 / (200000 * 3600.0), 1e-12);
	free(s);
}

/* one node line a group, with its count, in the groups' order */
static void test_bom_lists_every_group(void **state)
{
	(void)state;
	capsim_scenario *s = load(DATA "six-groups.xml", NULL, 0);
	capsim_result r;
	capsim_diags d = { 0 };
	capsim_eval_opts o = { 0 };
	assert_int_equal(capsim_eval(s, &o, &r, &d), 0);
	assert_int_equal(r.n_groups, 6);
	capsim_bom_line v[CAPSIM_BOM_MAX];
	int n = capsim_result_bom(s, &r, v), nodes = 0;
	for (int i = 0; i < n; i++) {
		if (strcmp(v[i].part, "node") != 0)
			continue;
		assert_string_equal(v[i].id, s->groups[nodes].node_ref);
		assert_rel(v[i].count, 4, 0);
		nodes++;
	}
	assert_int_equal(nodes, 6);
	capsim_result_free(&r);
	free(s);
}

/* Each group's nodes in racks of their own kind: 10 DGX H100 (10.2 kW) and 12
 * DGX A100 (6.5 kW) under the colocation hall's 40.8 kW racks, 208 V 3-phase
 * 60 A circuits. By hand: floor(40.8 / 10.2) = 4 H100 a rack, ceil(10 / 4) = 3
 * racks, ceil(4 x 10.2 / 17.29) = 3 circuits each; floor(40.8 / 6.5) = 6 A100
 * a rack, ceil(12 / 6) = 2 racks, ceil(6 x 6.5 / 17.29) = 3 circuits each. One
 * rack kind for both (the H100's 4) would need ceil(22 / 4) = 6 racks. */
static void test_racks_of_each_group(void **state)
{
	(void)state;
	capsim_scenario *s = load(DATA "racks-h100-a100.xml", NULL, 0);
	capsim_result r;
	capsim_diags d = { 0 };
	capsim_eval_opts o = { .no_reference = 1 };
	assert_int_equal(capsim_eval(s, &o, &r, &d), 0);
	const capsim_power *p = &r.power;
	double circuit = 0.8 * 208 * 60 * sqrt(3.0);
	assert_rel(p->circuit_w, circuit, 1e-12);
	assert_int_equal(p->n_groups, 2);
	assert_int_equal(p->group[0].nodes_per_rack, 4);
	assert_int_equal(p->group[0].racks, 3);
	assert_int_equal(p->group[0].circuits_per_rack, (int)ceil(4 * 10200 / circuit));
	assert_int_equal(p->group[0].circuits_per_rack, 3);
	assert_int_equal(p->group[1].nodes_per_rack, 6);
	assert_int_equal(p->group[1].racks, 2);
	assert_int_equal(p->group[1].circuits_per_rack, 3);
	assert_rel(p->group[0].rack_heat_w, 4 * p->group[0].node_w, 1e-12);
	assert_rel(p->group[1].rack_heat_w, 6 * p->group[1].node_w, 1e-12);
	/* the totals: racks the sum, the fewest nodes and the hottest rack */
	assert_rel(capsim_result_get(&r, "racks", 0), 5, 0);
	assert_rel(capsim_result_get(&r, "nodes_per_rack", 0), 4, 0);
	assert_rel(capsim_result_get(&r, "rack_heat_w", 0),
		   fmax(p->group[0].rack_heat_w, p->group[1].rack_heat_w), 0);
	assert_true(r.layout.has_layout);
	assert_true(r.layout.node_racks >= 5);
	/* the bill of materials: every group's racks and their circuits */
	capsim_bom_line v[CAPSIM_BOM_MAX];
	int n = capsim_result_bom(s, &r, v), seen = 0;
	for (int i = 0; i < n; i++) {
		if (strcmp(v[i].part, "rack") == 0) {
			assert_rel(v[i].count, 5, 0);
			seen++;
		}
		if (strcmp(v[i].part, "branch circuit") == 0) {
			assert_rel(v[i].count, 3 * 3 + 2 * 3, 0);
			seen++;
		}
	}
	assert_int_equal(seen, 2);
	capsim_result_free(&r);
	free(s);
}

/* A rack holds one group's nodes, so only the group whose racks overheat is
 * throttled: four of each a rack under 30 kW of cooling, the H100s' racks give
 * off more, the A100s' less (4 x about 5.9 kW) */
static void test_cooling_of_each_group(void **state)
{
	(void)state;
	const capsim_set sets[] = { { "facility.cooling.per-rack", "30 kW" },
				    { "facility.rack.nodes", "4" } };
	capsim_scenario *s = load(DATA "racks-h100-a100.xml", sets, 2);
	capsim_result r;
	capsim_diags d = { 0 };
	capsim_eval_opts o = { .no_reference = 1 };
	assert_int_equal(capsim_eval(s, &o, &r, &d), 0);
	const capsim_power *p = &r.power;
	assert_true(p->group_throttle_w[0] > p->group[0].gpu_idle_w);
	assert_true(p->group_throttle_w[0] < 700);
	assert_rel(p->group_throttle_w[1], 0, 0);
	assert_rel(p->throttle_limit_w, p->group_throttle_w[0], 0);
	assert_rel(p->clock_scale, capsim_power_clock_scale(700, p->group_throttle_w[0]), 1e-12);
	/* both groups' racks now fit their cooling; the A100s at their full draw */
	assert_true(p->group[0].rack_heat_w <= 30e3 * (1 + 1e-3));
	assert_true(p->group[1].rack_heat_w < 30e3);
	assert_true(p->group[1].gpu_sustained_w > 0.9 * 400);
	/* each group's entry of the JSON says its own */
	json_t *all = json_object();
	capsim_result_json(&r, all);
	json_t *g = json_object_get(all, "groups");
	assert_non_null(g);
	assert_rel(json_real_value(json_object_get(json_array_get(g, 0), "gpu_throttle_limit_w")),
		   p->group_throttle_w[0], 0);
	assert_null(json_object_get(json_array_get(g, 1), "gpu_throttle_limit_w"));
	assert_int_equal(json_integer_value(json_object_get(json_array_get(g, 1), "racks")), 3);
	json_decref(all);
	capsim_result_free(&r);
	free(s);
}

static void test_knobs_of_each_group(void **state)
{
	(void)state;
	capsim_scenario *s = load(DATA "six-groups.xml", NULL, 0);
	capsim_ui_knob_list *k = malloc(sizeof *k);
	capsim_ui_knobs_of(s, k);
	assert_int_equal(k->n, capsim_ui_n_knobs + 12);
	int found = 0;
	for (size_t i = 0; i < k->n; i++) {
		if (strcmp(k->v[i].path, "cluster.group.dgx-b200-2.nodes") != 0)
			continue;
		found = 1;
		assert_string_equal(k->v[i].label, "nodes of dgx-b200-2");
		char text[64], up[64];
		capsim_ui_knob_text(s, &k->v[i], text, sizeof text);
		assert_string_equal(text, "4");
		assert_int_equal(capsim_ui_knob_step(s, cat, &k->v[i], 1, up, sizeof up), 0);
		assert_string_equal(up, "8");
	}
	assert_true(found);
	free(k);
	free(s);
}

/* The explorer's model, what its screen lists: the six groups' nodes knobs
 * (by id), after the fixed ones' node type, and still after an edit and an
 * undo; a one-group scenario has the fixed knobs alone. */
static void test_explorer_lists_each_group(void **state)
{
	(void)state;
	static const char *const ids[] = { "h100-a", "h100-b", "h200", "a100", "dgx-b200",
					   "dgx-b200-2" };
	capsim_explore x;
	capsim_explore_init(&x, cat, load(DATA "six-groups.xml", NULL, 0));
	char err[256];
	for (int round = 0; round < 3; round++) {
		if (round == 1)
			assert_int_equal(capsim_explore_set(&x, "cluster.group.a100.nodes", "8", err,
							    sizeof err), 0);
		if (round == 2)
			assert_int_equal(capsim_explore_undo(&x), 0);
		assert_int_equal(x.knobs->n, capsim_ui_n_knobs + 12);
		for (int g = 0; g < 6; g++) {
			char path[96], label[96];
			snprintf(path, sizeof path, "cluster.group.%s.nodes", ids[g]);
			snprintf(label, sizeof label, "nodes of %s", ids[g]);
			size_t at = 1 + 2 * (size_t)g + 1;
			assert_string_equal(x.knobs->v[at].path, path);
			assert_string_equal(x.knobs->v[at].label, label);
			char text[32];
			capsim_ui_knob_text(x.s, &x.knobs->v[at], text, sizeof text);
			assert_string_equal(text, round == 1 && g == 3 ? "8" : "4");
		}
	}
	capsim_explore_free(&x);
	capsim_explore_init(&x, cat, load(DATA "racks-h100-a100.xml", NULL, 0));
	assert_int_equal(x.knobs->n, capsim_ui_n_knobs + 4);
	capsim_explore_free(&x);
	capsim_explore_init(&x, cat, load(CAPSIM_SOURCE_DIR "/scenarios/default.xml", NULL, 0));
	assert_int_equal(x.knobs->n, capsim_ui_n_knobs);
	for (size_t i = 0; i < x.knobs->n; i++)
		assert_string_equal(x.knobs->v[i].path, capsim_ui_knobs[i].path);
	capsim_explore_free(&x);
}

/* The element paths a scenario file can have: every proper prefix of a
 * settable path (a group's without its id, as the file writes it), the root
 * and <description>. A scenario keeps the line of each; they must fit. */
static void test_element_lines_fit(void **state)
{
	(void)state;
	size_t n;
	const char *const *p = capsim_scenario_set_paths(&n);
	char (*seen)[128] = calloc(n * 8 + 2, sizeof *seen);
	size_t k = 0, longest = 0;
	strcpy(seen[k++], "");
	strcpy(seen[k++], "description");
	for (size_t i = 0; i < n; i++) {
		char path[256];
		snprintf(path, sizeof path, "%s", p[i]);
		if (strncmp(path, "cluster.group.ID.", 17) == 0)
			memmove(path + 14, path + 17, strlen(path + 17) + 1);
		for (char *dot = strchr(path, '.'); dot; dot = strchr(dot + 1, '.')) {
			char elem[128];
			snprintf(elem, sizeof elem, "%.*s", (int)(dot - path), path);
			size_t j = 0;
			while (j < k && strcmp(seen[j], elem) != 0)
				j++;
			if (j == k)
				strcpy(seen[k++], elem);
			if (strlen(elem) > longest)
				longest = strlen(elem);
		}
	}
	print_message("%zu element paths, the longest %zu characters\n", k, longest);
	assert_true(k >= 100);
	assert_true(k <= CAPSIM_MAX_LINES);
	capsim_scenario *s = calloc(1, sizeof *s);
	assert_true(longest < sizeof s->lines[0].path);
	free(seen);
	/* six groups with a part override, the old <mix> forms and notes: one
	 * path an element, under cluster.group */
	capsim_scenario *six = load(DATA "six-groups.xml", NULL, 0);
	assert_true(six->n_lines < 20);
	assert_true(capsim_scenario_line(six, "cluster.group.dgx-b200-2.gpu.memory") > 0);
	free(six);
	free(s);
}

/* What an explorer session or a sweep can edit fits the edits a scenario
 * remembers: the knobs of 16 node groups, the optimiser's layout, the
 * throttle of every group and the scaling reference's 5; a sweep's axes
 * with the same. Past the cap an edit is refused, naming the number, and
 * the scenario is left as it was; the first edit is still named. */
static void test_edits_remembered(void **state)
{
	(void)state;
	int explorer = (int)capsim_ui_n_knobs + 2 * CAPSIM_MAX_GROUPS + CAPSIM_OPT_MAX_SETS +
		       CAPSIM_MAX_GROUPS + 5;
	int sweep = CAPSIM_SWEEP_MAX_AXES + CAPSIM_MAX_GROUPS + 5;
	assert_true(explorer <= CAPSIM_MAX_EDITS);
	assert_true(sweep <= CAPSIM_MAX_EDITS);
	capsim_diags d = { 0 };
	capsim_scenario *s = load(CAPSIM_SOURCE_DIR "/scenarios/default.xml", NULL, 0);
	assert_int_equal(capsim_scenario_set(s, cat, "workload.micro-batch", "2", &d), 0);
	/* fill the rest with paths the scenario never looks at */
	while (s->n_edits < CAPSIM_MAX_EDITS) {
		capsim_edit *e = &s->edits[s->n_edits++];
		snprintf(e->path, sizeof e->path, "test.filler.%d", s->n_edits);
		snprintf(e->value, sizeof e->value, "1");
	}
	capsim_scenario *before = malloc(sizeof *before);
	*before = *s;
	assert_int_equal(capsim_scenario_set(s, cat, "workload.global-batch", "1024", &d), -1);
	char want[128];
	snprintf(want, sizeof want, "expected at most %d distinct paths edited in one scenario",
		 CAPSIM_MAX_EDITS);
	assert_non_null(strstr(d.v[0].msg, want));
	assert_string_equal(d.v[0].where, "--set workload.global-batch=1024");
	assert_memory_equal(s, before, sizeof *s);
	capsim_diags_free(&d);
	/* a path already remembered is edited again, and the first edit is
	 * still remembered (it used to be forgotten for the newest) */
	assert_int_equal(capsim_scenario_set(s, cat, "workload.micro-batch", "1", &d), 0);
	assert_int_equal(s->n_edits, CAPSIM_MAX_EDITS);
	assert_string_equal(s->edits[0].path, "workload.micro-batch");
	assert_string_equal(s->edits[0].value, "1");
	free(before);
	free(s);
	capsim_diags_free(&d);
}

/* every result key of two evaluations equal */
static void assert_same_results(const capsim_scenario *a, const capsim_scenario *b)
{
	capsim_result ra, rb;
	capsim_diags d = { 0 };
	capsim_eval_opts o = { 0 };
	assert_int_equal(capsim_eval(a, &o, &ra, &d), 0);
	assert_int_equal(capsim_eval(b, &o, &rb, &d), 0);
	for (size_t i = 0; i < capsim_result_n_keys; i++) {
		const capsim_result_key *k = &capsim_result_keys[i];
		assert_int_equal(capsim_result_has(&ra, k), capsim_result_has(&rb, k));
		if (k->kind != CAPSIM_RK_TEXT && k->kind != CAPSIM_RK_JSON &&
		    capsim_result_has(&ra, k))
			assert_rel(capsim_result_number(&ra, k), capsim_result_number(&rb, k), 0);
	}
	capsim_result_free(&ra);
	capsim_result_free(&rb);
}

static void test_old_mix_loads_as_groups(void **state)
{
	(void)state;
	char *text = NULL;
	size_t len = 0;
	FILE *w = open_memstream(&text, &len);
	capsim_scenario_warnings_to(w);
	capsim_scenario *old = load(DATA "old-mix.xml", NULL, 0);
	capsim_scenario_warnings_to(NULL);
	fclose(w);
	assert_non_null(strstr(text, "old-mix.xml:7: warning: <mix> is the old form of a node "
				     "group: write <group id=\"dgx-h200\" ref=\"dgx-h200\" "
				     "nodes=\"4\"/>"));
	assert_non_null(strstr(text, "old-mix.xml:8: warning: <mix2> is the old form"));
	free(text);
	capsim_scenario *now = load(DATA "new-mix.xml", NULL, 0);
	assert_int_equal(old->n_groups, 3);
	for (int g = 0; g < 3; g++) {
		assert_string_equal(old->groups[g].id, now->groups[g].id);
		assert_int_equal(old->groups[g].nodes, now->groups[g].nodes);
	}
	assert_rel(old->groups[2].node.power_max_w, 7000, 0);
	assert_same_results(old, now);
	/* the resolved form, written as groups, loads to the same scenario */
	len = 0;
	w = open_memstream(&text, &len);
	assert_int_equal(capsim_scenario_write_xml(old, w), 0);
	fclose(w);
	assert_non_null(strstr(text, "<group ref=\"dgx-h200\" id=\"dgx-h200\" nodes=\"4\""));
	assert_null(strstr(text, "<mix"));
	capsim_scenario *up = calloc(1, sizeof *up);
	capsim_diags d = { 0 };
	assert_int_equal(capsim_scenario_load_memory(text, len, "up.xml", cat, NULL, 0, up, &d), 0);
	assert_same_results(old, up);
	free(text);
	/* the old --set paths still edit the groups */
	const capsim_set sets[] = { { "cluster.mix.nodes", "2" } };
	capsim_scenario *edited = load(DATA "old-mix.xml", sets, 1);
	assert_int_equal(edited->groups[0].nodes, 14);
	assert_int_equal(edited->groups[1].nodes, 2);
	assert_int_equal(edited->nodes, 20);
	free(edited);
	free(up);
	free(old);
	free(now);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_six_groups_load),
		cmocka_unit_test(test_racks_of_each_group),
		cmocka_unit_test(test_cooling_of_each_group),
		cmocka_unit_test(test_set_by_id_and_index),
		cmocka_unit_test(test_power_counts_every_group),
		cmocka_unit_test(test_failures_count_every_group),
		cmocka_unit_test(test_bom_lists_every_group),
		cmocka_unit_test(test_knobs_of_each_group),
		cmocka_unit_test(test_explorer_lists_each_group),
		cmocka_unit_test(test_element_lines_fit),
		cmocka_unit_test(test_edits_remembered),
		cmocka_unit_test(test_old_mix_loads_as_groups),
	};
	return testutil_run_group(tests, setup, teardown);
}
