/* test_eval.c - the evaluation face called in process: a scenario edited
 * with capsim_scenario_set and evaluated with capsim_eval, point after
 * point, agrees with a fresh load of the file with the same --set and with
 * `capsim run --set ... --json`, key for key; memory stays flat; the result
 * table and the user guide's key list agree. */
#include "testutil.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#if defined(__SANITIZE_ADDRESS__)
#define HEAP_FROM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HEAP_FROM_ASAN 1
#endif
#endif
#ifdef HEAP_FROM_ASAN
#include <sanitizer/allocator_interface.h>
#else
#include <malloc.h>
#endif

#include "eval.h"
#include "results.h"
#include "scenario.h"
#include "xalloc.h"

static const char *base_file = CAPSIM_SOURCE_DIR "/scenarios/h100-8node-ndr.xml";

/* the axes: 4 x 4 x 2 x 4 x 2 x 2 = 512 points */
static const char *const nodes_v[] = { "1", "2", "4", "8" };
static const char *const tp_v[] = { "1", "2", "4", "8" };
static const char *const mb_v[] = { "1", "2" };
static const char *const zero_v[] = { "0", "1", "2", "3" };
static const char *const over_v[] = { "1:1", "2:1" };
static const char *const rec_v[] = { "none", "selective" };
#define N_POINTS (4 * 4 * 2 * 4 * 2 * 2)
#define N_EDITS 6

static void point(int i, capsim_set *e)
{
	e[0] = (capsim_set){ "cluster.nodes", nodes_v[i % 4] };
	e[1] = (capsim_set){ "workload.parallelism.tp", tp_v[i / 4 % 4] };
	e[2] = (capsim_set){ "workload.micro-batch", mb_v[i / 16 % 2] };
	e[3] = (capsim_set){ "workload.parallelism.zero", zero_v[i / 32 % 4] };
	e[4] = (capsim_set){ "cluster.fabric.oversubscription", over_v[i / 128 % 2] };
	e[5] = (capsim_set){ "workload.parallelism.recompute", rec_v[i / 256 % 2] };
}

static capsim_catalog *catalog(void)
{
	capsim_catalog *cat = capsim_catalog_create();
	capsim_diags d = { 0 };
	assert_int_equal(capsim_catalog_load_root(cat, CAPSIM_SOURCE_DIR, NULL, &d), 0);
	capsim_diags_free(&d);
	return cat;
}

/* every key of the result table, as JSON, for comparing */
static json_t *result_of(const capsim_scenario *s)
{
	capsim_result r;
	capsim_diags d = { 0 };
	capsim_eval_opts o = { 0 };
	if (capsim_eval(s, &o, &r, &d) < 0) {
		capsim_diags_print(&d, stderr);
		capsim_diags_free(&d);
		return NULL;
	}
	json_t *j = json_object();
	capsim_result_json(&r, j);
	capsim_result_free(&r);
	capsim_diags_free(&d);
	return j;
}

/* Bytes the heap holds live: the allocator's own count (ASan's, or glibc's
 * mallinfo2), not RSS, which moves with the load of the machine, ASan's
 * quarantine and pages the allocator keeps. */
static double heap_bytes(void)
{
#ifdef HEAP_FROM_ASAN
	return (double)__sanitizer_get_current_allocated_bytes();
#else
	struct mallinfo2 mi = mallinfo2();
	return (double)mi.uordblks + (double)mi.hblkhd;
#endif
}

/* Edit one scenario in place through 512 points; every 16th is compared
 * key for key with a fresh load of the file given the same sets. Points
 * the checks refuse are refused the same way by the fresh load. */
static void test_edit_and_evaluate(void **state)
{
	(void)state;
	capsim_catalog *cat = catalog();
	capsim_scenario *s = calloc(1, sizeof *s), *fresh = calloc(1, sizeof *fresh);
	capsim_diags d = { 0 };
	assert_int_equal(capsim_scenario_load(base_file, cat, NULL, 0, s, &d), 0);
	int ok = 0, refused = 0, compared = 0;
	double heap100 = 0.0;
	for (int i = 0; i < N_POINTS; i++) {
		capsim_set e[N_EDITS];
		point(i, e);
		capsim_diags de = { 0 };
		int rc = capsim_scenario_set_many(s, cat, e, N_EDITS, &de);
		json_t *a = rc == 0 ? result_of(s) : NULL;
		if (rc == 0) {
			assert_non_null(a);
			ok++;
			/* the reference is this job on one node: beaten only where
			 * its gradient sync over NVLink runs on more channels, so
			 * takes more SMs from the compute, than the job's across
			 * nodes (24 against 16 on DGX H100s): by at most 0.2% */
			json_t *eff = json_object_get(a, "scaling_efficiency");
			assert_non_null(eff);
			if (json_real_value(eff) > 1.002)
				fail_msg("point %d: scaling efficiency %.17g above 1", i,
					 json_real_value(eff));
		} else {
			refused++;
			/* an edit's error names the edit */
			assert_true(de.n > 0);
			assert_non_null(strstr(de.v[0].where, "--set "));
		}
		if (i % 16 == 0) {
			capsim_diags df = { 0 };
			int frc = capsim_scenario_load(base_file, cat, e, N_EDITS, fresh, &df);
			assert_int_equal(frc, rc);
			if (rc == 0) {
				json_t *b = result_of(fresh);
				assert_non_null(b);
				if (!json_equal(a, b)) {
					char *x = json_dumps(a, JSON_SORT_KEYS), *y = json_dumps(b, JSON_SORT_KEYS);
					fail_msg("point %d: edited and fresh results differ:\n%s\n%s", i, x, y);
				}
				json_decref(b);
				compared++;
			}
			capsim_diags_free(&df);
		}
		json_decref(a);
		capsim_diags_free(&de);
		if (i == 100)
			heap100 = heap_bytes();
	}
	/* flat: the last 400 points leave nothing live behind them */
	double growth = heap_bytes() - heap100;
	print_message("test_eval: %d points evaluated, %d refused by the checks, %d compared "
		      "with a fresh load; live heap growth over the last 400: %.0f bytes\n",
		      ok, refused, compared, growth);
	assert_true(ok >= 300);
	assert_true(compared >= 20);
	assert_true(growth < 64.0 * 1024.0);
	capsim_diags_free(&d);
	free(s);
	free(fresh);
	capsim_catalog_free(cat);
}

/* run "capsim run BASE --set ... --json" and parse its output */
static json_t *run_binary(const capsim_set *e, size_t n)
{
	char cmd[4096];
	int len = snprintf(cmd, sizeof cmd, "'%s' run '%s' --json", CAPSIM_BIN, base_file);
	for (size_t i = 0; i < n; i++)
		len += snprintf(cmd + len, sizeof cmd - (size_t)len, " --set '%s=%s'", e[i].path,
				e[i].value);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	json_error_t err;
	json_t *j = json_loadf(p, 0, &err);
	int st = pclose(p);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_non_null(j);
	return j;
}

/* The same points as the command line gives them: every result key equal
 * (the command adds only its head: versions, inputs, profile, seed). */
static void test_matches_run(void **state)
{
	(void)state;
	capsim_catalog *cat = catalog();
	capsim_scenario *s = calloc(1, sizeof *s);
	capsim_diags d = { 0 };
	assert_int_equal(capsim_scenario_load(base_file, cat, NULL, 0, s, &d), 0);
	int compared = 0;
	for (int i = 0; i < N_POINTS && compared < 12; i += 37) {
		capsim_set e[N_EDITS];
		point(i, e);
		if (capsim_scenario_set_many(s, cat, e, N_EDITS, &d) < 0) {
			capsim_diags_free(&d);
			continue;
		}
		json_t *a = result_of(s), *b = run_binary(e, N_EDITS);
		const char *key;
		json_t *v;
		json_object_foreach(a, key, v)
		{
			json_t *w = json_object_get(b, key);
			assert_non_null(w);
			/* the command prints 10 significant digits */
			if (json_is_real(v) && json_is_number(w)) {
				double x = json_real_value(v), y = json_number_value(w);
				if (fabs(x - y) > 1e-9 * fabs(x))
					fail_msg("point %d: %s is %.17g in process, %.17g from capsim run",
						 i, key, x, y);
			} else if (!json_is_real(v)) {
				char *x = json_dumps(v, JSON_ENCODE_ANY | JSON_REAL_PRECISION(10));
				char *y = json_dumps(w, JSON_ENCODE_ANY | JSON_REAL_PRECISION(10));
				if (strcmp(x, y) != 0)
					fail_msg("point %d: %s is %s in process, %s from capsim run", i, key,
						 x, y);
				free(x);
				free(y);
			}
		}
		json_decref(a);
		json_decref(b);
		compared++;
	}
	assert_true(compared >= 8);
	free(s);
	capsim_catalog_free(cat);
}

/* An edit that breaks the scenario leaves it as it was, and its message
 * names the --set, not a line of the file. */
static void test_refused_edit(void **state)
{
	(void)state;
	capsim_catalog *cat = catalog();
	capsim_scenario *s = calloc(1, sizeof *s), *before = calloc(1, sizeof *before);
	capsim_diags d = { 0 };
	assert_int_equal(capsim_scenario_load(base_file, cat, NULL, 0, s, &d), 0);
	*before = *s;
	assert_int_equal(capsim_scenario_set(s, cat, "workload.parallelism.tp", "3", &d), -1);
	assert_true(capsim_diags_contains(&d, "tp=3 does not divide 32 attention heads"));
	assert_string_equal(d.v[0].where, "--set workload.parallelism.tp=3");
	assert_memory_equal(s, before, sizeof *s);
	capsim_diags_free(&d);
	/* an edit meets the facets the schema would check in a file */
	assert_int_equal(capsim_scenario_set(s, cat, "name", "x\" evil=\"1", &d), -1);
	assert_true(capsim_diags_contains(&d, "name: expected an id"));
	assert_int_equal(capsim_scenario_set(s, cat, "cluster.node.ref", "DGX H100", &d), -1);
	assert_int_equal(capsim_scenario_set(s, cat, "cluster.node.profile", "a\nb.xml", &d), -1);
	assert_true(capsim_diags_contains(&d, "control character (byte 0x0a)"));
	assert_memory_equal(s, before, sizeof *s);
	capsim_diags_free(&d);
	/* a part's field: re-resolved from the catalog, the override applied */
	assert_int_equal(capsim_scenario_set(s, cat, "cluster.gpu.memory.capacity", "141 GB", &d), 0);
	assert_true(fabs(s->gpu.mem_bytes - 141e9) < 1.0);
	assert_int_equal(capsim_scenario_set(s, cat, "cluster.node.ref", "dgx-h200", &d), 0);
	assert_string_equal(s->gpu.e.id, "h200-sxm-141gb");
	assert_true(fabs(s->gpu.mem_bytes - 141e9) < 1.0);
	/* dp follows the cluster unless it was given */
	assert_int_equal(capsim_scenario_set(s, cat, "cluster.nodes", "4", &d), 0);
	assert_int_equal(s->dp, 16);
	assert_int_equal(capsim_scenario_set(s, cat, "cluster.nodes", "not-a-number", &d), -1);
	assert_int_equal(s->nodes, 4);
	capsim_diags_free(&d);
	free(s);
	free(before);
	capsim_catalog_free(cat);
}

/* Three node groups: each its own GPU's memory and peak; MFU over the sum
 * of the groups' peaks; a group given without the one before it refused. */
static void test_three_groups(void **state)
{
	(void)state;
	capsim_catalog *cat = catalog();
	capsim_scenario *s = calloc(1, sizeof *s);
	capsim_diags d = { 0 };
	const capsim_set three[] = { { "cluster.mix.nodes", "4" },
				     { "cluster.mix2.ref", "dgx-a100" },
				     { "cluster.mix2.nodes", "4" } };
	assert_int_equal(capsim_scenario_load(CAPSIM_SOURCE_DIR "/scenarios/mixed-h100-h200.xml",
					      cat, three, 3, s, &d), 0);
	assert_int_equal(s->n_groups, 3);
	capsim_group_view v;
	capsim_scenario_group(s, 2, &v);
	assert_int_equal(v.first_node, 28);
	assert_int_equal(capsim_scenario_group_of_node(s, 27), 1);
	assert_int_equal(capsim_scenario_group_of_node(s, 28), 2);
	capsim_result r;
	assert_int_equal(capsim_eval(s, NULL, &r, &d), 0);
	assert_int_equal(r.n_groups, 3);
	assert_int_equal(r.group[0].gpus, 192);
	assert_string_equal(r.group[2].gpu, "a100-sxm4-80gb");
	/* the H200's usable memory (hardware/gpus.xml, measured) */
	assert_true(fabs(r.group[1].mem_capacity_bytes - 150109880320.0) < 1.0);
	double peak = 0;
	for (int g = 0; g < 3; g++)
		peak += r.group[g].peak_flop_per_s * (double)r.group[g].gpus;
	assert_true(fabs(r.mfu - r.step.model_flops_per_step / (peak * r.step.step_time_s)) <
		    1e-12 * r.mfu);
	/* the slowest kind (A100) holds the critical stage */
	assert_int_equal(r.step.critical_group, 2);
	assert_true(r.has_scaling && r.scaling_efficiency < 1.0);
	capsim_result_free(&r);
	assert_int_equal(capsim_scenario_set(s, cat, "cluster.mix3.nodes", "2", &d), -1);
	assert_true(capsim_diags_contains(&d, "no <mix3 ref="));
	capsim_diags_free(&d);
	free(s);
	capsim_catalog_free(cat);
}

/* A result goes into the store's results tables from the same table: every
 * scalar key comes back with its value and unit. */
static void test_store_rows(void **state)
{
	(void)state;
	capsim_catalog *cat = catalog();
	capsim_scenario *s = calloc(1, sizeof *s);
	capsim_diags d = { 0 };
	assert_int_equal(capsim_scenario_load(base_file, cat, NULL, 0, s, &d), 0);
	capsim_result r;
	assert_int_equal(capsim_eval(s, NULL, &r, &d), 0);
	capsim_result_value *v = calloc(capsim_result_n_keys, sizeof *v);
	size_t n = capsim_result_values(&r, v, capsim_result_n_keys);
	assert_true(n >= 25);
	char db[64];
	snprintf(db, sizeof db, "/tmp/capsim-test-eval-%ld.sqlite", (long)getpid());
	remove(db);
	capsim_store *st;
	assert_int_equal(capsim_store_open(db, CAPSIM_STORE_WRITE, &st, &d), 0);
	/* the inputs: the scenario and every catalog file, with their digests */
	size_t n_in = capsim_catalog_n_files(cat) + 1;
	capsim_sweep_input *in = calloc(n_in, sizeof *in);
	in[0] = (capsim_sweep_input){ s->file, s->sha256 };
	for (size_t i = 1; i < n_in; i++)
		in[i].file = capsim_catalog_file(cat, i - 1, &in[i].sha256);
	capsim_sweep_info info = { "test", "test", s->sha256, in, n_in };
	int64_t sweep;
	assert_int_equal(capsim_results_create_sweep(st, &info, &sweep, &d), 0);
	capsim_result_param par = { "cluster.nodes", "8" };
	capsim_result_point p = { .index = 0, .scenario_sha256 = s->sha256,
				  .capsim_version = "test", .params = &par, .n_params = 1,
				  .results = v, .n_results = n };
	assert_int_equal(capsim_results_write_point(st, sweep, &p, NULL, &d), 0);
	capsim_sweep_input_record *back;
	size_t n_back;
	assert_int_equal(capsim_results_read_inputs(st, sweep, &back, &n_back, &d), 0);
	assert_int_equal(n_back, n_in);
	for (size_t i = 0; i < n_in; i++) {
		assert_string_equal(back[i].file, in[i].file);
		assert_string_equal(back[i].sha256, in[i].sha256);
	}
	capsim_sweep_inputs_free(back, n_back);
	/* an input given twice: no sweep is created */
	capsim_sweep_input twice[] = { in[0], in[0] };
	capsim_sweep_info bad = { "bad", "test", s->sha256, twice, 2 };
	int64_t none;
	assert_int_equal(capsim_results_create_sweep(st, &bad, &none, &d), -1);
	assert_true(capsim_diags_contains(&d, "given twice"));
	capsim_diags_free(&d);
	free(in);
	capsim_point_record rec;
	assert_int_equal(capsim_results_read_point(st, sweep, 0, &rec, &d), 0);
	assert_int_equal(rec.n_results, n);
	for (size_t i = 0; i < n; i++) {
		const capsim_point_value *got = NULL;
		for (size_t j = 0; j < rec.n_results; j++)
			if (strcmp(rec.results[j].key, v[i].key) == 0)
				got = &rec.results[j];
		assert_non_null(got);
		assert_string_equal(got->unit, v[i].unit);
		if (v[i].text)
			assert_string_equal(got->text, v[i].text);
		else
			assert_true(got->num == v[i].num);
	}
	const capsim_result_key *k = capsim_result_key_find("step_time_s");
	int found = 0;
	for (size_t j = 0; j < rec.n_results; j++)
		if (strcmp(rec.results[j].key, "step_time_s") == 0) {
			assert_true(rec.results[j].num == capsim_result_number(&r, k));
			assert_string_equal(rec.results[j].unit, "s");
			found = 1;
		}
	assert_true(found);
	capsim_point_record_free(&rec);
	capsim_store_close(st);
	remove(db);
	free(v);
	capsim_result_free(&r);
	capsim_diags_free(&d);
	free(s);
	capsim_catalog_free(cat);
}

/* docs/user-guide.md lists every key of the result table, and no other
 * `run --json` key between its markers. */
static void test_user_guide_keys(void **state)
{
	(void)state;
	FILE *f = fopen(CAPSIM_SOURCE_DIR "/docs/user-guide.md", "r");
	assert_non_null(f);
	char line[1024];
	int in = 0, listed = 0;
	char seen[160][64];
	while (fgets(line, sizeof line, f)) {
		if (strstr(line, "<!-- result-keys:begin -->")) {
			in = 1;
			continue;
		}
		if (strstr(line, "<!-- result-keys:end -->"))
			break;
		if (!in || strncmp(line, "| `", 3) != 0)
			continue;
		char *end = strchr(line + 3, '`');
		assert_non_null(end);
		*end = '\0';
		if (!capsim_result_key_find(line + 3))
			fail_msg("docs/user-guide.md lists '%s', which is not a result key", line + 3);
		assert_true(listed < 160);
		capsim_strlcpy(seen[listed++], line + 3, sizeof seen[0]);
	}
	/* the scenario's own --set paths, as `capsim validate --paths` lists them */
	rewind(f);
	size_t paths = 0;
	while (fgets(line, sizeof line, f))
		for (size_t i = 0; i < capsim_scenario_n_fields; i++) {
			size_t n = strlen(capsim_scenario_fields[i].path);
			if (strncmp(line, capsim_scenario_fields[i].path, n) == 0 && line[n] == ' ')
				paths++;
		}
	assert_int_equal(paths, capsim_scenario_n_fields);
	fclose(f);
	for (size_t i = 0; i < capsim_result_n_keys; i++) {
		int found = 0;
		for (int j = 0; j < listed; j++)
			found |= strcmp(seen[j], capsim_result_keys[i].key) == 0;
		if (!found)
			fail_msg("result key '%s' is missing from docs/user-guide.md",
				 capsim_result_keys[i].key);
	}
}

/* capsim_eval from several threads at once: each thread's results are the
 * serial ones, bit for bit. */
#define THREADS 4
#define PER_THREAD 6

typedef struct {
	const capsim_scenario *s;
	double step[PER_THREAD];
	int rc;
} thread_job;

static void *eval_thread(void *arg)
{
	thread_job *j = arg;
	for (int i = 0; i < PER_THREAD; i++) {
		capsim_result r;
		capsim_diags d = { 0 };
		capsim_eval_opts o = { 0 };
		if (capsim_eval(&j->s[i], &o, &r, &d) < 0)
			j->rc = -1;
		j->step[i] = r.step.step_time_s * r.scaling_efficiency;
		capsim_result_free(&r);
		capsim_diags_free(&d);
	}
	return NULL;
}

/* The face never writes to the scenario it is given: a scenario with a burst
 * plan, one whose racks throttle their GPUs, and one of two node groups
 * (a scaling reference a group) are each evaluated twice from one const
 * value; the scenario's bytes are unchanged after each evaluation and the
 * two results equal key for key. The derived runs happened: the burst plan,
 * the throttle and the scaling reference are in the results. */
static void test_const_input(void **state)
{
	(void)state;
	capsim_catalog *cat = catalog();
	static const capsim_set hall[] = { { "facility.ref", "enterprise-air-cooled" },
					   { "facility.rack.nodes", "2" },
					   { "facility.cooling.per-rack", "16 kW" } };
	static const capsim_set groups[] = { { "cluster.group.h200.nodes", "4" },
					     { "cluster.group.h100.nodes", "28" } };
	const struct {
		const char *file;
		const capsim_set *sets;
		size_t n;
		const char *derived; /* a key only the derived run gives */
	} c[] = {
		{ "onprem-burst.xml", NULL, 0, "burst_plan_cost_usd" },
		{ "default.xml", hall, 3, "gpu_throttle_limit_w" },
		{ "mixed-h100-h200.xml", groups, 2, "scaling_efficiency" },
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		char path[512];
		snprintf(path, sizeof path, CAPSIM_SOURCE_DIR "/scenarios/%s", c[i].file);
		capsim_scenario *s = capsim_xmalloc(sizeof *s);
		capsim_diags d = { 0 };
		assert_int_equal(capsim_scenario_load(path, cat, c[i].sets, c[i].n, s, &d), 0);
		capsim_scenario *before = capsim_xmalloc(sizeof *before);
		memcpy(before, s, sizeof *s);
		const capsim_scenario *in = s;
		json_t *a = result_of(in);
		assert_non_null(a);
		assert_memory_equal(in, before, sizeof *in);
		json_t *b = result_of(in);
		assert_non_null(b);
		assert_memory_equal(in, before, sizeof *in);
		assert_non_null(json_object_get(a, c[i].derived));
		assert_true(json_equal(a, b));
		json_decref(a);
		json_decref(b);
		free(before);
		free(s);
		capsim_diags_free(&d);
	}
	capsim_catalog_free(cat);
}

/* No cost line vanishes without a word: a design whose fabric switch or
 * nodes have no price names every such part and the path that prices it
 * (cost_unpriced) and has no capex; priced through those paths, the key
 * goes and the capex comes. The QM8700 has no public price; the
 * Quantum-X800 and the GB200 NVL72 tray neither. */
static void test_unpriced_named(void **state)
{
	(void)state;
	capsim_catalog *cat = catalog();
	static const capsim_set switch_price[] = {
		{ "cluster.fabric.switch.price.value", "$30000" } };
	static const capsim_set q3400[] = { { "cluster.fabric.switch.ref", "q3400" } };
	static const capsim_set gb200[] = { { "cluster.fabric.switch.ref", "q3400" },
					    { "cluster.node.ref", "gb200-nvl72-tray" },
					    { "cluster.fabric.rails", "4" },
					    { "cluster.nodes", "36" },
					    { "workload.global-batch", "288" },
					    { "facility.ref", "hyperscale-liquid-cooled" } };
	static const capsim_set both_prices[] = {
		{ "cluster.node.price.value", "$3M" },
		{ "cluster.fabric.switch.price.value", "$20000" } };
	const struct {
		const char *file, *want;
		const capsim_set *edits, *prices;
		size_t n_edits, n;
	} c[] = {
		{ "h100-8node-ndr.xml",
		  "fabric switch 'q3400' (cluster.fabric.switch.price.value) has no price", q3400,
		  switch_price, 1, 1 },
		{ "a100-4node-fattree.xml",
		  "fabric switch 'qm8700' (cluster.fabric.switch.price.value) has no price", NULL,
		  switch_price, 0, 1 },
		{ "h100-8node-ndr.xml",
		  "node 'gb200-nvl72-tray' (cluster.node.price.value) and fabric switch 'q3400' "
		  "(cluster.fabric.switch.price.value) have no price", gb200, both_prices, 6, 2 },
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		char path[512];
		snprintf(path, sizeof path, CAPSIM_SOURCE_DIR "/scenarios/%s", c[i].file);
		capsim_scenario *s = capsim_xmalloc(sizeof *s);
		capsim_diags d = { 0 };
		assert_int_equal(capsim_scenario_load(path, cat, c[i].edits, c[i].n_edits, s, &d), 0);
		capsim_eval_opts o = { .no_reference = 1 };
		capsim_result r;
		assert_int_equal(capsim_eval(s, &o, &r, &d), 0);
		const char *why = capsim_result_string(&r, "cost_unpriced");
		assert_non_null(why);
		assert_string_equal(why, c[i].want);
		assert_true(isnan(capsim_result_get(&r, "capex_usd", NAN)));
		assert_true(isnan(capsim_result_get(&r, "tco_usd", NAN)));
		capsim_result_free(&r);
		assert_int_equal(capsim_scenario_set_many(s, cat, c[i].prices, c[i].n, &d), 0);
		assert_int_equal(capsim_eval(s, &o, &r, &d), 0);
		assert_null(capsim_result_string(&r, "cost_unpriced"));
		assert_true(capsim_result_get(&r, "capex_usd", NAN) > 0);
		capsim_result_free(&r);
		free(s);
		capsim_diags_free(&d);
	}
	capsim_catalog_free(cat);
}

static void test_threads(void **state)
{
	(void)state;
	capsim_catalog *cat = catalog();
	capsim_scenario *s = calloc(PER_THREAD, sizeof *s);
	capsim_diags d = { 0 };
	double serial[PER_THREAD];
	for (int i = 0; i < PER_THREAD; i++) {
		capsim_set e[N_EDITS];
		point(i * 41 % N_POINTS, e);
		assert_int_equal(capsim_scenario_load(base_file, cat, e, N_EDITS, &s[i], &d), 0);
		capsim_result r;
		assert_int_equal(capsim_eval(&s[i], NULL, &r, &d), 0);
		serial[i] = r.step.step_time_s * r.scaling_efficiency;
		capsim_result_free(&r);
	}
	pthread_t th[THREADS];
	thread_job jobs[THREADS];
	for (int t = 0; t < THREADS; t++) {
		jobs[t] = (thread_job){ .s = s, .rc = 0 };
		assert_int_equal(pthread_create(&th[t], NULL, eval_thread, &jobs[t]), 0);
	}
	for (int t = 0; t < THREADS; t++) {
		pthread_join(th[t], NULL);
		assert_int_equal(jobs[t].rc, 0);
		for (int i = 0; i < PER_THREAD; i++)
			assert_true(jobs[t].step[i] == serial[i]);
	}
	capsim_diags_free(&d);
	free(s);
	capsim_catalog_free(cat);
}

int main(void)
{
	capsim_init();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refused_edit),
		cmocka_unit_test(test_user_guide_keys),
		cmocka_unit_test(test_three_groups),
		cmocka_unit_test(test_store_rows),
		cmocka_unit_test(test_matches_run),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_const_input),
		cmocka_unit_test(test_unpriced_named),
		cmocka_unit_test(test_edit_and_evaluate),
	};
	return testutil_run_group(tests, NULL, NULL);
}
