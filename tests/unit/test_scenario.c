/* test_scenario.c - scenarios resolve against the catalog; overrides in the
 * file and by --set change exactly what they name; a resolved scenario written
 * out loads back identical; consistency errors name file, line and numbers. */
#include "catalog.h"
#include "testutil.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "ioint.h"
#include "scenario.h"

TESTUTIL_CATALOG_FIXTURE

static int load(const char *text, const capsim_set *sets, size_t n,
		capsim_scenario *s, capsim_diags *d)
{
	return capsim_scenario_load_memory(text, strlen(text), "t.xml", cat, sets,
					   n, s, d);
}

static const char base[] =
	"<scenario name=\"t\">\n"
	"  <cluster nodes=\"4\">\n"
	"    <node ref=\"dgx-h100\"/>\n"
	"    <fabric topology=\"fat-tree\" transport=\"infiniband\">\n"
	"      <switch ref=\"qm9700\"/>\n"
	"    </fabric>\n"
	"  </cluster>\n"
	"  <workload seq-len=\"4096\" global-batch=\"256\" tokens=\"2T\" dtype=\"bf16\">\n"
	"    <model ref=\"llama-2-70b\"/>\n"
	"    <parallelism tp=\"8\" pp=\"2\"/>\n"
	"  </workload>\n"
	"</scenario>\n";

static void test_every_shipped_scenario_loads(void **state)
{
	(void)state;
	DIR *dp = opendir(CAPSIM_SOURCE_DIR "/scenarios");
	assert_non_null(dp);
	struct dirent *de;
	size_t n = 0;
	int have_default = 0;
	capsim_scenario *s = malloc(sizeof *s);
	while ((de = readdir(dp))) {
		size_t len = strlen(de->d_name);
		if (len < 5 || strcmp(de->d_name + len - 4, ".xml") != 0)
			continue;
		char path[1024];
		snprintf(path, sizeof path, "%s/scenarios/%s", CAPSIM_SOURCE_DIR, de->d_name);
		capsim_diags d = { 0 };
		if (capsim_scenario_load(path, cat, NULL, 0, s, &d) != 0) {
			capsim_diags_print(&d, stderr);
			fail_msg("%s does not load", path);
		}
		capsim_diags_free(&d);
		assert_true(s->dp >= 1);
		assert_int_equal(capsim_scenario_gpus(s), (long)s->tp * s->pp * s->cp * s->dp);
		if (strcmp(de->d_name, "default.xml") == 0)
			have_default = 1;
		n++;
	}
	closedir(dp);
	free(s);
	assert_true(have_default);
	assert_true(n >= 9);
}

static void test_resolution_and_defaults(void **state)
{
	(void)state;
	capsim_scenario s;
	capsim_diags d = { 0 };
	assert_int_equal(load(base, NULL, 0, &s, &d), 0);
	assert_int_equal(capsim_scenario_gpus(&s), 32);
	assert_int_equal(s.dp, 2); /* 32 / (8 x 2) */
	assert_string_equal(s.gpu.e.id, "h100-sxm5-80gb"); /* the node's GPU */
	assert_string_equal(s.nic.e.id, "cx7-ndr-400");
	assert_int_equal(s.rails, 8);                      /* default: every NIC */
	assert_int_equal(s.tiers, 2);
	assert_rel(s.oversubscription, 1.0, 0);
	assert_int_equal(s.micro_batch, 1);
	assert_rel(s.tokens, 2e12, 0);
	assert_int_equal(s.model.layers, 80);
	assert_true(s.has_switch);
	assert_true(s.has_nvswitch);
	assert_false(s.has_cloud);
	assert_rel(s.horizon_s, 3 * 365.25 * 86400, 1e-12);
	capsim_diags_free(&d);
}

static void test_set_overrides(void **state)
{
	(void)state;
	capsim_scenario s;
	capsim_diags d = { 0 };
	const capsim_set sets[] = {
		{ "cluster.nodes", "16" },
		{ "workload.parallelism.tp", "4" },
		{ "cluster.gpu.memory.bandwidth", "4.8 TB/s" },
		{ "cluster.fabric.oversubscription", "2:1" },
	};
	assert_int_equal(load(base, sets, 4, &s, &d), 0);
	assert_int_equal(capsim_scenario_gpus(&s), 128);
	assert_int_equal(s.dp, 16);
	assert_rel(s.gpu.mem_bw_bytes_per_s, 4.8e12, 1e-12);
	assert_rel(s.gpu.mem_bytes, 80e9, 1e-12); /* the rest of the GPU stays */
	assert_rel(s.oversubscription, 2.0, 0);
	/* the catalog itself is untouched */
	const capsim_gpu *g = capsim_catalog_find(cat, CAPSIM_KIND_GPU, "h100-sxm5-80gb");
	assert_rel(g->mem_bw_bytes_per_s, 3.35e12, 1e-12);
	capsim_diags_free(&d);
}

/* A switch given more ports at its model's speed loads, with a warning that
 * it switches more than the model and how to split its ports; the split
 * (more ports, slower), fewer ports, and a speed of one's own do not warn.
 * Once a process: the first that does is the one said. */
static void test_switch_beyond_its_model(void **state)
{
	(void)state;
	char *text = NULL;
	size_t len = 0;
	FILE *w = open_memstream(&text, &len);
	capsim_scenario_warnings_to(w);
	static const capsim_set quiet[][2] = {
		{ { "cluster.fabric.switch.ports.count", "128" },
		  { "cluster.fabric.switch.ports.speed", "200 Gb/s" } },
		{ { "cluster.fabric.switch.ports.count", "32" },
		  { "cluster.fabric.switch.ports.speed", "400 Gb/s" } },
		{ { "cluster.fabric.switch.ports.count", "128" }, /* a speed of one's own */
		  { "cluster.fabric.switch.ports.speed", "800 Gb/s" } },
	};
	capsim_scenario s;
	capsim_diags d = { 0 };
	for (int k = 0; k < 3; k++)
		assert_int_equal(load(base, quiet[k], 2, &s, &d), 0);
	fflush(w);
	assert_int_equal(len, 0);
	const capsim_set loud[] = { { "cluster.fabric.switch.ports.count", "128" } };
	assert_int_equal(load(base, loud, 1, &s, &d), 0);
	assert_int_equal(s.fabric_switch.ports, 128); /* taken as given */
	assert_rel(s.fabric_switch.port_speed_bytes_per_s, 50e9, 1e-12);
	fflush(w);
	assert_string_equal(text, "t.xml: warning: cluster.fabric.switch: 128 ports at 400 Gb/s "
				  "make a 51.2 Tb/s switch, 2x the 'qm9700' of the catalog (64 "
				  "ports at 400 Gb/s); for its ports split, give "
				  "cluster.fabric.switch.ports.speed too (128 ports at 200 Gb/s)\n");
	const capsim_set more[] = { { "cluster.fabric.switch.ports.count", "256" } };
	assert_int_equal(load(base, more, 1, &s, &d), 0);
	capsim_scenario_warnings_to(NULL);
	fclose(w);
	assert_null(strstr(text + 1, "t.xml: warning")); /* once */
	assert_int_equal(d.n, 0);
	free(text);
}

static void test_inline_override(void **state)
{
	(void)state;
	static const char text[] =
		"<scenario name=\"t\">\n"
		"  <cluster nodes=\"2\">\n"
		"    <node ref=\"dgx-h100\"><power max=\"11 kW\"/></node>\n"
		"    <gpu><power tdp=\"500 W\"/></gpu>\n"
		"    <fabric topology=\"fat-tree\" transport=\"infiniband\"/>\n"
		"  </cluster>\n"
		"  <workload seq-len=\"2048\" global-batch=\"64\" tokens=\"10B\" dtype=\"fp8\">\n"
		"    <model ref=\"llama-3.1-8b\"><architecture layers=\"16\"/></model>\n"
		"  </workload>\n"
		"</scenario>\n";
	capsim_scenario s;
	capsim_diags d = { 0 };
	int rc = load(text, NULL, 0, &s, &d);
	capsim_diags_print(&d, stderr);
	assert_int_equal(rc, 0);
	assert_rel(s.node.power_max_w, 11e3, 1e-12);
	assert_rel(s.gpu.tdp_w, 500.0, 1e-12);
	assert_int_equal(s.model.layers, 16);
	assert_int_equal(s.model.hidden, 4096);
	capsim_diags_free(&d);
}

static void test_set_errors(void **state)
{
	(void)state;
	capsim_scenario s;
	capsim_diags d = { 0 };
	const capsim_set bad_path[] = { { "workload.parallelism.tpp", "2" } };
	assert_int_equal(load(base, bad_path, 1, &s, &d), -1);
	assert_true(capsim_diags_contains(&d, "--set workload.parallelism.tpp=2"));
	assert_true(capsim_diags_contains(&d, "nearest valid: workload.parallelism.tp"));
	capsim_diags_free(&d);

	const capsim_set bad_value[] = { { "cluster.fabric.transport", "ethernet" } };
	assert_int_equal(load(base, bad_value, 1, &s, &d), -1);
	assert_true(capsim_diags_contains(&d, "expected one of 'infiniband', 'roce', 'tcp', found 'ethernet'"));
	capsim_diags_free(&d);

	const capsim_set bad_unit[] = { { "cluster.gpu.memory.capacity", "80 GQ" } };
	assert_int_equal(load(base, bad_unit, 1, &s, &d), -1);
	assert_true(capsim_diags_contains(&d, "--set cluster.gpu.memory.capacity=80 GQ"));
	assert_true(capsim_diags_contains(&d, "unknown unit 'GQ'"));
	capsim_diags_free(&d);

	char buf[64];
	capsim_set one;
	assert_int_equal(capsim_set_parse("cluster.nodes=8", buf, &one, &d), 0);
	assert_string_equal(one.path, "cluster.nodes");
	assert_string_equal(one.value, "8");
	assert_int_equal(capsim_set_parse("cluster.nodes", buf, &one, &d), -1);
	assert_true(capsim_diags_contains(&d, "expected PATH=VALUE"));
	capsim_diags_free(&d);
}

static void test_consistency_errors_all_reported(void **state)
{
	(void)state;
	capsim_scenario s;
	capsim_diags d = { 0 };
	const capsim_set sets[] = {
		{ "workload.parallelism.tp", "3" },
		{ "workload.parallelism.pp", "3" },
		{ "cluster.fabric.sharp", "on" },
		{ "cluster.fabric.transport", "roce" },
	};
	assert_int_equal(load(base, sets, 4, &s, &d), -1);
	/* all of them at once, each naming the --set that caused it */
	for (size_t i = 0; i < d.n; i++)
		assert_non_null(strstr(d.v[i].where, "--set "));
	assert_true(capsim_diags_contains(&d, "tp x pp x cp = 3 x 3 x 1 = 9 does not divide"));
	assert_true(capsim_diags_contains(&d, "tp x pp x cp = 3 x 3 x 1 = 9 does not divide the cluster's 32 GPUs"));
	assert_true(capsim_diags_contains(&d, "tp=3 does not divide 64 attention heads"));
	assert_true(capsim_diags_contains(&d, "pp x virtual-stages = 3 x 1 = 3 does not divide 80 layers"));
	assert_true(capsim_diags_contains(&d, "sharp=on needs transport 'infiniband'"));
	assert_true(capsim_diags_contains(&d, "switch 'qm9700' does not carry transport 'roce'"));
	capsim_diags_free(&d);
}

/* compare two resolved scenarios through the field tables */
static void assert_same_fields(const capsim_field *f, size_t n, const void *a,
			       const void *b, const char *what)
{
	char x[512], y[512];
	for (size_t i = 0; i < n; i++) {
		int ra = capsim_field_format(&f[i], a, x, sizeof x);
		int rb = capsim_field_format(&f[i], b, y, sizeof y);
		if (ra != rb || (ra == 0 && strcmp(x, y) != 0))
			fail_msg("%s.%s: '%s' became '%s'", what, f[i].path,
				 ra ? "(absent)" : x, rb ? "(absent)" : y);
	}
}

static void test_round_trip(void **state)
{
	(void)state;
	static const char *const files[] = { "default.xml", "onprem-burst.xml",
					     "h100-64node-roce200.xml" };
	capsim_scenario *a = malloc(sizeof *a), *b = malloc(sizeof *b);
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		char path[1024];
		snprintf(path, sizeof path, "%s/scenarios/%s", CAPSIM_SOURCE_DIR, files[i]);
		capsim_diags d = { 0 };
		const capsim_set set = { "cluster.gpu.memory.bandwidth", "3.1 TB/s" };
		assert_int_equal(capsim_scenario_load(path, cat, &set, 1, a, &d), 0);
		char *text = NULL;
		size_t len = 0;
		FILE *mem = open_memstream(&text, &len);
		assert_int_equal(capsim_scenario_write_xml(a, mem), 0);
		fclose(mem);
		int rc = capsim_scenario_load_memory(text, len, "resolved.xml", cat, NULL, 0, b, &d);
		if (rc != 0) {
			capsim_diags_print(&d, stderr);
			fprintf(stderr, "%s", text);
		}
		assert_int_equal(rc, 0);
		free(text);
		assert_same_fields(capsim_scenario_fields, capsim_scenario_n_fields, a, b, "scenario");
		for (size_t k = 0; k < capsim_n_part_slots; k++) {
			const capsim_part_slot *slot = &capsim_part_slots[k];
			const capsim_kind *kind = &capsim_kinds[slot->kind];
			assert_same_fields(kind->fields, kind->n_fields,
					   (const char *)a + slot->obj_offset,
					   (const char *)b + slot->obj_offset, slot->path);
		}
		assert_rel(b->gpu.mem_bw_bytes_per_s, 3.1e12, 0);
		assert_string_equal(a->description, b->description);
		capsim_diags_free(&d);
	}
	free(a);
	free(b);
}

static void test_every_set_path_is_settable(void **state)
{
	(void)state;
	/* each path --set lists must lead to a field: setting it to garbage
	 * gives a message about that path, never "unknown path" */
	size_t n;
	const char *const *paths = capsim_scenario_set_paths(&n);
	assert_true(n > 150);
	capsim_scenario *s = malloc(sizeof *s);
	for (size_t i = 0; i < n; i++) {
		capsim_diags d = { 0 };
		const capsim_set set = { paths[i], "\x01garbage" };
		load(base, &set, 1, s, &d);
		if (capsim_diags_contains(&d, "unknown path"))
			fail_msg("--set %s is listed but unknown", paths[i]);
		capsim_diags_free(&d);
	}
	free(s);
}

/* A calibrated profile named on the node (or GPU) reaches the scenario's
 * GPU: found beside the scenario or under the catalog root, applied to its
 * own GPU model, refused on another, and a missing file named. */
static void test_profile(void **state)
{
	(void)state;
	capsim_scenario *s = malloc(sizeof *s);
	capsim_diags d = { 0 };
	const capsim_set h200[] = { { "cluster.node.ref", "dgx-h200" },
				    { "cluster.node.profile", "hardware/calibrated/h200-sxm-141gb-2026-12-02.xml" } };
	assert_int_equal(load(base, h200, 2, s, &d), 0);
	capsim_diags_print(&d, stderr);
	assert_true(s->gpu.cal.gemm[CAPSIM_DTYPE_BF16].params > 0);
	assert_true(s->gpu.cal.gemm[CAPSIM_DTYPE_BF16].sat > 0.5);
	assert_true(s->gpu.cal.gemm[CAPSIM_DTYPE_BF16].sat < 0.85);
	assert_true(s->gpu.eff_hbm > 0.85 && s->gpu.eff_hbm < 0.9); /* 4.27 of 4.8 TB/s */
	capsim_diags_free(&d);

	/* the same profile on the GPU element */
	const capsim_set on_gpu[] = { { "cluster.node.ref", "dgx-h200" },
				      { "cluster.gpu.profile", "hardware/calibrated/h200-sxm-141gb-2026-12-02.xml" } };
	assert_int_equal(load(base, on_gpu, 2, s, &d), 0);
	assert_true(s->gpu.cal.gemm[CAPSIM_DTYPE_FP8].params > 0);
	capsim_diags_free(&d);

	/* without it: no calibration */
	const capsim_set plain[] = { { "cluster.node.ref", "dgx-h200" } };
	assert_int_equal(load(base, plain, 1, s, &d), 0);
	assert_int_equal(s->gpu.cal.gemm[CAPSIM_DTYPE_BF16].params, 0);
	capsim_diags_free(&d);

	/* an H200 profile on an H100 is refused, naming both */
	const capsim_set wrong[] = { { "cluster.node.profile", "hardware/calibrated/h200-sxm-141gb-2026-12-02.xml" } };
	assert_int_equal(load(base, wrong, 1, s, &d), -1);
	assert_true(capsim_diags_contains(&d, "h200-sxm-141gb"));
	assert_true(capsim_diags_contains(&d, "h100-sxm5-80gb"));
	assert_true(capsim_diags_contains(&d, "cluster.node.profile: 'hardware/calibrated/h200-sxm-141gb-2026-12-02.xml' cannot be used"));
	capsim_diags_free(&d);

	/* a missing file */
	const capsim_set missing[] = { { "cluster.node.profile", "hardware/calibrated/none.xml" } };
	assert_int_equal(load(base, missing, 1, s, &d), -1);
	assert_true(capsim_diags_contains(&d, "cluster.node.profile: no readable profile 'hardware/calibrated/none.xml'"));
	capsim_diags_free(&d);

	/* the old mix paths: a second group with its own profile */
	const capsim_set mix[] = { { "cluster.mix.ref", "dgx-h200" }, { "cluster.mix.nodes", "2" },
				   { "cluster.mix.profile", "hardware/calibrated/h200-sxm-141gb-2026-12-02.xml" } };
	assert_int_equal(load(base, mix, 3, s, &d), 0);
	assert_int_equal(s->n_groups, 2);
	assert_true(s->groups[1].gpu.cal.gemm[CAPSIM_DTYPE_BF16].params > 0);
	assert_int_equal(s->gpu.cal.gemm[CAPSIM_DTYPE_BF16].params, 0);
	capsim_diags_free(&d);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_shipped_scenario_loads),
		cmocka_unit_test(test_resolution_and_defaults),
		cmocka_unit_test(test_set_overrides),
		cmocka_unit_test(test_switch_beyond_its_model),
		cmocka_unit_test(test_inline_override),
		cmocka_unit_test(test_set_errors),
		cmocka_unit_test(test_consistency_errors_all_reported),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_every_set_path_is_settable),
		cmocka_unit_test(test_profile),
	};
	return testutil_run_group_name("scenario", tests, setup, teardown);
}
