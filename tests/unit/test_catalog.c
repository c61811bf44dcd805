/* test_catalog.c - the shipped catalog loads clean, every source resolves,
 * values arrive in SI as the datasheets state them, and the catalog's own
 * checks catch dangling sources and duplicates. */
#include "catalog.h"
#include "testutil.h"

#include <math.h>
#include <string.h>

#include "catalog.h"
#include "spec.h"

TESTUTIL_CATALOG_FIXTURE

static void test_counts(void **state)
{
	(void)state;
	/* the catalog's minimum shipped contents; more may come */
	assert_true(capsim_catalog_count(cat, CAPSIM_KIND_GPU) >= 8);
	assert_true(capsim_catalog_count(cat, CAPSIM_KIND_NIC) >= 4);
	assert_true(capsim_catalog_count(cat, CAPSIM_KIND_SWITCH) >= 3);
	assert_true(capsim_catalog_count(cat, CAPSIM_KIND_NVSWITCH) >= 3);
	assert_true(capsim_catalog_count(cat, CAPSIM_KIND_STORAGE) >= 4);
	assert_true(capsim_catalog_count(cat, CAPSIM_KIND_NODE) >= 4);
	assert_true(capsim_catalog_count(cat, CAPSIM_KIND_CLOUD) >= 6);
	assert_true(capsim_catalog_count(cat, CAPSIM_KIND_FACILITY) >= 1);
	assert_true(capsim_catalog_count(cat, CAPSIM_KIND_MODEL) >= 30);
}

/* every entry names a source or an assumption, and every source resolves to
 * a reference with a title, a place inside it and a date */
static void test_no_dangling_source(void **state)
{
	(void)state;
	for (size_t k = 0; k < CAPSIM_KIND__COUNT; k++) {
		for (size_t i = 0; i < capsim_catalog_count(cat, k); i++) {
			const capsim_entry *e = capsim_catalog_at(cat, k, i);
			if (!e->src[0] && !e->assumption[0])
				fail_msg("%s:%ld: %s '%s' has neither src nor assumption",
					 e->file, e->line, capsim_kinds[k].name, e->id);
			if (e->src[0] && !capsim_catalog_ref(cat, e->src))
				fail_msg("%s '%s': src '%s' dangles", capsim_kinds[k].name,
					 e->id, e->src);
		}
	}
	assert_true(capsim_catalog_n_refs(cat) > 50);
	for (size_t i = 0; i < capsim_catalog_n_refs(cat); i++) {
		const capsim_bibref *r = capsim_catalog_ref_at(cat, i);
		if (strlen(r->title) < 5 || strlen(r->where) < 3 || strlen(r->date) < 4)
			fail_msg("%s:%ld: ref '%s' has an empty title, where or date",
				 r->e.file, r->e.line, r->e.id);
	}
}

static const capsim_gpu *gpu(const char *id)
{
	const capsim_gpu *g = capsim_catalog_find(cat, CAPSIM_KIND_GPU, id);
	if (!g)
		fail_msg("no GPU '%s'", id);
	return g;
}

/* datasheet figures (NVIDIA H100/H200/A100 datasheets, dense) arrive in SI */
static void test_datasheet_values(void **state)
{
	(void)state;
	const capsim_gpu *h100 = gpu("h100-sxm5-80gb");
	assert_rel(h100->peak_bf16_flop_per_s, 989.4e12, 1e-9);
	assert_rel(h100->peak_fp8_flop_per_s, 1978.9e12, 1e-9);
	assert_rel(h100->mem_bytes, 80e9, 1e-12);
	assert_rel(h100->mem_bw_bytes_per_s, 3.35e12, 1e-12);
	assert_rel(h100->tdp_w, 700.0, 1e-12);
	assert_rel(capsim_gpu_scaleup_bw_per_dir(h100), 450e9, 1e-12);
	const capsim_gpu *h200 = gpu("h200-sxm-141gb");
	assert_rel(h200->mem_bytes, 141e9, 1e-12);
	assert_rel(h200->mem_bw_bytes_per_s, 4.8e12, 1e-12);
	const capsim_gpu *a100 = gpu("a100-sxm4-80gb");
	assert_rel(a100->peak_bf16_flop_per_s, 312e12, 1e-12);
	assert_true(a100->peak_fp8_flop_per_s == 0.0); /* Ampere has no FP8 */
	assert_true(gpu("rtx-4090")->scaleup_kind == CAPSIM_SCALEUP_NONE);

	const capsim_node *dgx = capsim_catalog_find(cat, CAPSIM_KIND_NODE, "dgx-h100");
	assert_non_null(dgx);
	assert_int_equal(dgx->gpus, 8);
	assert_int_equal(dgx->nics, 8);
	assert_string_equal(dgx->gpu, "h100-sxm5-80gb");
	const capsim_nic *cx7 = capsim_catalog_find(cat, CAPSIM_KIND_NIC, "cx7-ndr-400");
	assert_rel(cx7->port_speed_bytes_per_s, 50e9, 1e-12);
	const capsim_switch *qm = capsim_catalog_find(cat, CAPSIM_KIND_SWITCH, "qm9700");
	assert_int_equal(qm->ports, 64);
	assert_rel(qm->port_speed_bytes_per_s, 50e9, 1e-12);
	const capsim_cloud *p5 = capsim_catalog_find(cat, CAPSIM_KIND_CLOUD, "aws-p5-capacity-block");
	/* $39.33 per 8-GPU instance-hour = $4.916/GPU-h (reference cost.csv) */
	assert_rel(p5->rate_usd_per_gpu_s * 3600.0, 4.916, 1e-9);
}

/* Each model's architecture must yield the parameter count its source
 * publishes: catches a wrong layer count, FFN size or vocabulary. */
static void test_models_match_published_parameters(void **state)
{
	(void)state;
	size_t checked = 0;
	for (size_t i = 0; i < capsim_catalog_count(cat, CAPSIM_KIND_MODEL); i++) {
		const capsim_model *m = capsim_catalog_at(cat, CAPSIM_KIND_MODEL, i);
		if (!m->published_params)
			continue;
		double p = capsim_model_params(m, 0);
		/* published counts are rounded ("70B", "1.5B") and some leave out
		 * biases or rounding embeddings: 5% */
		double err = fabs(p - m->published_params) / m->published_params;
		if (err > 0.05)
			fail_msg("model '%s': architecture gives %.4g parameters, "
				 "published %.4g (%.1f%% off)",
				 m->e.id, p, m->published_params, 100 * err);
		if (m->published_active_params) {
			double a = capsim_model_params(m, 1);
			double ea = fabs(a - m->published_active_params) /
				    m->published_active_params;
			if (ea > 0.05)
				fail_msg("model '%s': %.4g active parameters, published "
					 "%.4g", m->e.id, a, m->published_active_params);
		}
		checked++;
	}
	assert_true(checked >= 30);
}

/* closed form for one model: Llama 2 7B, no GQA, SwiGLU, untied embeddings:
 * 32 x (4 x 4096^2 + 3 x 4096 x 11008 + 2 x 4096) + 2 x 32000 x 4096 + 4096 */
static void test_params_closed_form(void **state)
{
	(void)state;
	const capsim_model *m = capsim_catalog_find(cat, CAPSIM_KIND_MODEL, "llama-2-7b");
	assert_non_null(m);
	double h = 4096, want = 32 * (4 * h * h + 3 * h * 11008 + 2 * h) + 2 * 32000 * h + h;
	assert_rel(capsim_model_params(m, 0), want, 1e-15);
}

static const char bib[] =
	"<bibliography><ref id=\"ds\" title=\"A datasheet\" where=\"Table 1\" date=\"2024\"/></bibliography>";

static const char gpu_entry[] =
	"<catalog>\n"
	"<gpu id=\"%s\" name=\"Test GPU\" src=\"%s\">\n"
	"  <compute fp32=\"60 TFLOP/s\" bf16=\"900 TFLOP/s\" fp16=\"900 TFLOP/s\"/>\n"
	"  <memory capacity=\"80 GB\" bandwidth=\"3 TB/s\"/>\n"
	"  <power tdp=\"700 W\"/>\n"
	"  <pcie generation=\"5\" lanes=\"16\"/>\n"
	"</gpu>\n"
	"</catalog>\n";

static int load_gpu(capsim_catalog *c, const char *id, const char *src,
		    capsim_diags *d)
{
	char buf[1024];
	snprintf(buf, sizeof buf, gpu_entry, id, src);
	return capsim_catalog_load_memory(c, buf, strlen(buf), "mem.xml", d);
}

static void test_dangling_source_is_an_error(void **state)
{
	(void)state;
	capsim_diags d = { 0 };
	capsim_catalog *c = capsim_catalog_create();
	assert_int_equal(capsim_catalog_load_memory(c, bib, strlen(bib), "bib.xml", &d), 0);
	assert_int_equal(load_gpu(c, "test-gpu", "nowhere", &d), -1);
	assert_true(capsim_diags_contains(&d, "mem.xml:2"));
	assert_true(capsim_diags_contains(&d, "src 'nowhere' is not in the bibliography"));
	assert_null(capsim_catalog_find(c, CAPSIM_KIND_GPU, "test-gpu"));
	capsim_diags_free(&d);
	assert_int_equal(load_gpu(c, "test-gpu", "ds", &d), 0);
	assert_non_null(capsim_catalog_find(c, CAPSIM_KIND_GPU, "test-gpu"));
	/* the same id again is a duplicate, placed at its first definition */
	assert_int_equal(load_gpu(c, "test-gpu", "ds", &d), -1);
	assert_true(capsim_diags_contains(&d, "duplicate id; first defined at mem.xml:2"));
	assert_int_equal(capsim_catalog_count(c, CAPSIM_KIND_GPU), 1);
	capsim_diags_free(&d);
	capsim_catalog_free(c);
}

static void test_unsourced_child_is_an_error(void **state)
{
	(void)state;
	static const char doc[] =
		"<catalog>\n"
		"<gpu id=\"g\" name=\"G\">\n"
		"  <compute fp32=\"60 TFLOP/s\" bf16=\"900 TFLOP/s\" fp16=\"900 TFLOP/s\" src=\"ds\"/>\n"
		"  <memory capacity=\"80 GB\" bandwidth=\"3 TB/s\"/>\n"
		"  <power tdp=\"700 W\" assumption=\"a planner's guess\"/>\n"
		"</gpu>\n"
		"</catalog>\n";
	capsim_diags d = { 0 };
	capsim_catalog *c = capsim_catalog_create();
	capsim_catalog_load_memory(c, bib, strlen(bib), "bib.xml", &d);
	assert_int_equal(capsim_catalog_load_memory(c, doc, strlen(doc), "g.xml", &d), -1);
	assert_int_equal(d.n, 1);
	assert_true(capsim_diags_contains(&d, "g.xml:4"));
	assert_true(capsim_diags_contains(&d, "memory has no source"));
	capsim_diags_free(&d);
	capsim_catalog_free(c);
}

/* A calibrated profile carries measured efficiencies, in human units, with
 * their source; a fraction above 1 is refused at its line. */
static void test_efficiency_profile(void **state)
{
	(void)state;
	static const char doc[] =
		"<catalog>\n"
		"<gpu id=\"g\" name=\"G\" src=\"ds\">\n"
		"  <compute fp32=\"60 TFLOP/s\" bf16=\"900 TFLOP/s\" fp16=\"900 TFLOP/s\" src=\"ds\"/>\n"
		"  <memory capacity=\"80 GB\" bandwidth=\"3 TB/s\" src=\"ds\"/>\n"
		"  <power tdp=\"700 W\" src=\"ds\"/>\n"
		"  <efficiency gemm=\"81.5%\" hbm=\"0.86\" launch=\"4.2 us\" src=\"ds\"/>\n"
		"</gpu>\n"
		"</catalog>\n";
	char buf[1024];
	capsim_diags d = { 0 };
	capsim_catalog *c = capsim_catalog_create();
	capsim_catalog_load_memory(c, bib, strlen(bib), "bib.xml", &d);
	snprintf(buf, sizeof buf, "%s", doc);
	assert_int_equal(capsim_catalog_load_memory(c, buf, strlen(buf), "g.xml", &d), 0);
	const capsim_gpu *g = capsim_catalog_find(c, CAPSIM_KIND_GPU, "g");
	assert_non_null(g);
	assert_true(fabs(g->eff_gemm - 0.815) < 1e-12);
	assert_true(fabs(g->eff_hbm - 0.86) < 1e-12);
	assert_true(fabs(g->launch_eager_s - 4.2e-6) < 1e-18);
	assert_true(g->eff_attention == 0.0); /* not measured: the default */
	capsim_catalog_free(c);
	capsim_diags_free(&d);

	c = capsim_catalog_create();
	capsim_catalog_load_memory(c, bib, strlen(bib), "bib.xml", &d);
	char *at = strstr(buf, "81.5%");
	memcpy(at, "181.%", 5);
	assert_int_equal(capsim_catalog_load_memory(c, buf, strlen(buf), "g.xml", &d), -1);
	assert_true(capsim_diags_contains(&d, "g.xml:6"));
	assert_true(capsim_diags_contains(&d, "efficiency.gemm"));
	capsim_diags_free(&d);
	capsim_catalog_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts),
		cmocka_unit_test(test_no_dangling_source),
		cmocka_unit_test(test_datasheet_values),
		cmocka_unit_test(test_models_match_published_parameters),
		cmocka_unit_test(test_params_closed_form),
		cmocka_unit_test(test_dangling_source_is_an_error),
		cmocka_unit_test(test_unsourced_child_is_an_error),
		cmocka_unit_test(test_efficiency_profile),
	};
	return testutil_run_group_name("catalog", tests, setup, teardown);
}
