/* report.c - what capsim fit prints, and the catalog GPU that a run's NVML
 * name denotes; see fit.h. */
#include "fit.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "xalloc.h"

/* ---- the GPU of the runs ------------------------------------------------------ */

#define MAX_TOKENS 16

/* lower-case words of s split at blanks, '-', '_', '/', '(', ')', ','; returns
 * how many (at most MAX_TOKENS, each up to 31 characters) */
static size_t tokens(const char *s, char out[MAX_TOKENS][32])
{
	size_t n = 0, len = 0;
	for (const char *c = s;; c++) {
		int sep = !*c || strchr(" -_/(),", *c);
		if (!sep && len < 31 && n < MAX_TOKENS)
			out[n][len++] = (char)tolower((unsigned char)*c);
		if (sep && len) {
			out[n++][len] = '\0';
			len = 0;
		}
		if (!*c || n == MAX_TOKENS)
			break;
	}
	return n;
}

static int has_token(char t[MAX_TOKENS][32], size_t n, const char *w)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(t[i], w) == 0)
			return 1;
	return 0;
}

/* the id's and name's words */
static size_t gpu_tokens(const capsim_gpu *g, char t[MAX_TOKENS][32])
{
	char both[CAPSIM_ID_LEN + CAPSIM_TEXT_LEN + 2];
	snprintf(both, sizeof both, "%s %s", g->e.id, g->e.name);
	return tokens(both, t);
}

int capsim_fit_infer_gpu(const capsim_catalog *cat, const char *nvml_name,
			 double mem_bytes, char *id, size_t len,
			 capsim_diags *d)
{
	char nt[MAX_TOKENS][32], gt[MAX_TOKENS][32];
	size_t nn = tokens(nvml_name, nt);
	const char *model = NULL;
	for (size_t i = 0; i < nn && !model; i++)
		if (strpbrk(nt[i], "0123456789"))
			model = nt[i];
	if (!model) {
		capsim_diags_add(d, NULL, 0, "GPU '%s': no model number in the name; give --gpu",
				 nvml_name);
		return -1;
	}
	static const char *const forms[] = { "pcie", "nvl" };
	const capsim_gpu *best = NULL;
	double best_gap = HUGE_VAL;
	int ties = 0;
	char seen[512] = "";
	for (size_t i = 0; i < capsim_catalog_count(cat, CAPSIM_KIND_GPU); i++) {
		const capsim_gpu *g = capsim_catalog_at(cat, CAPSIM_KIND_GPU, i);
		size_t gn = gpu_tokens(g, gt);
		int ok = has_token(gt, gn, model);
		for (size_t f = 0; ok && f < sizeof forms / sizeof forms[0]; f++)
			ok = has_token(gt, gn, forms[f]) == has_token(nt, nn, forms[f]);
		if (!ok)
			continue;
		size_t used = strlen(seen);
		snprintf(seen + used, sizeof seen - used, "%s%s", used ? ", " : "", g->e.id);
		double gap = mem_bytes > 0 ? fabs(g->mem_bytes - mem_bytes) : 0.0;
		if (gap < best_gap) {
			best = g;
			best_gap = gap;
			ties = 0;
		} else if (gap == best_gap) {
			ties++;
		}
	}
	if (!best) {
		capsim_diags_add(d, NULL, 0, "GPU '%s': no catalog GPU matches '%s'; give --gpu",
				 nvml_name, model);
		return -1;
	}
	if (ties) {
		capsim_diags_add(d, NULL, 0, "GPU '%s' could be any of %s; give --gpu", nvml_name,
				 seen);
		return -1;
	}
	capsim_strlcpy(id, best->e.id, len);
	return 0;
}

/* ---- the report ------------------------------------------------------------------ */

static void runs_text(const capsim_run_ids *r, char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < r->n && n + 1 < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%lld", i ? "," : "", (long long)r->id[i]);
}

static void report_points(const capsim_profile_gemm *pg, int dtype,
			  const capsim_gpu *g, FILE *out)
{
	double peak = g ? capsim_gpu_peak(g, dtype) / 1e12 : 0.0;
	fprintf(out, "    m x n x k                 run  measured  smooth  +table   (TFLOP/s)\n");
	for (size_t i = 0; i < pg->n_points; i++) {
		const capsim_profile_point *pt = &pg->points[i];
		double F = 2.0 * pt->m * pt->n * pt->k;
		double sm = capsim_gemm_cal_smooth(&pg->cal, F,
						   capsim_gemm_intensity(dtype, pt->m, pt->n, pt->k));
		double tb = capsim_gemm_cal_eff(&pg->cal, dtype, pt->m, pt->n, pt->k, NULL);
		fprintf(out, "    %5.0f x %5.0f x %5.0f  %5lld  %8.1f  %+5.1f%%  %+5.1f%%\n", pt->m,
			pt->n, pt->k, (long long)pt->run, pt->frac * peak, 100 * (sm / pt->frac - 1),
			100 * (tb / pt->frac - 1));
	}
}

static void report_gemm(const capsim_profile *p, const capsim_gpu *g, int verbose,
			FILE *out)
{
	int any = 0;
	for (int i = 0; i < CAPSIM_CAL_DTYPES; i++)
		any |= p->gemm[i].cal.params > 0;
	if (!any) /* a run of other kinds alone (attention, PCIe, NCCL) */
		return;
	fprintf(out, "GEMM efficiency (fraction of the dtype's dense peak; errors are model / "
		     "measured - 1):\n"
		     "  dtype points params   sat   smooth rms  max  left-out rms  max   "
		     "held outside F (FLOP) and I (FLOP/B)\n");
	for (int i = 0; i < CAPSIM_CAL_DTYPES; i++) {
		const capsim_profile_gemm *pg = &p->gemm[i];
		const capsim_gemm_cal *c = &pg->cal;
		if (!c->params)
			continue;
		fprintf(out, "  %-5s %6zu %6d %6.3f %9.1f%% %4.1f%% %11.1f%% %4.1f%%   "
			     "[%.3g, %.3g] and [%.0f, %.0f]\n",
			capsim_dtype_names[i], pg->n_points, c->params, c->sat, 100 * pg->rms,
			100 * pg->max_abs, 100 * pg->loo_rms, 100 * pg->loo_max_abs, c->flop_min,
			c->flop_max, c->ai_min, c->ai_max);
		if (verbose) {
			fprintf(out, "    f0 %.4g FLOP, p %.3g, i0 %.4g FLOP/B, q %.3g; table of %d "
				     "shapes, %d square sizes: rms %.1f%%, max %.1f%%\n",
				c->f0_flop, c->p, c->i0_flop_per_byte, c->q, c->n_shapes, c->n_table,
				100 * pg->table_rms, 100 * pg->table_max_abs);
			report_points(pg, i, g, out);
		}
	}
	fprintf(out, "  (smooth: the model of F and I alone, what an unmeasured shape gets; left-out: "
		     "each point the others bracket,\n   predicted by the model fitted without it. "
		     "With the table, measured shapes are reproduced.)\n");
}

static void report_ab(const capsim_profile_ab *ab, FILE *out)
{
	fprintf(out, "latency %.3g us, bandwidth %.4g GB/s over %.0f to %.0f bytes (%zu points; "
		     "rms %.1f%%, max %.1f%%)",
		1e6 * ab->latency_s, ab->bw_bytes_per_s / 1e9, ab->bytes_min, ab->bytes_max,
		ab->points, 100 * ab->rms, 100 * ab->max_abs);
}

static void report_links(const capsim_profile *p, FILE *out)
{
	for (int i = 0; i < 2; i++) {
		if (!p->pcie[i].ab.points)
			continue;
		fprintf(out, "PCIe %s: ", i == CAPSIM_PCIE_H2D ? "host to device" : "device to host");
		report_ab(&p->pcie[i].ab, out);
		fputc('\n', out);
	}
	for (size_t i = 0; i < p->n_coll; i++) {
		const capsim_profile_coll *c = &p->coll[i];
		fprintf(out, "%s, algo %s, proto %s, %d ranks on %d nodes (bus factor %.3g):\n",
			c->op, c->algo, c->proto, c->ranks, c->nodes, c->bus_factor);
		for (int r = 0; r < c->regimes; r++) {
			fprintf(out, "  %s: ", c->regimes == 1 ? "all sizes" :
					       r == 0 ? "small messages" : "large messages");
			report_ab(&c->regime[r], out);
			fputc('\n', out);
		}
	}
}

static void report_power(const capsim_profile_power *w, FILE *out)
{
	if (!w->present)
		return;
	fprintf(out, "Power: idle %.1f W at %.0f MHz", w->idle_w, w->idle_clock_hz / 1e6);
	if (w->sustained_w > 0)
		fprintf(out, "; under back-to-back GEMMs %.1f W at a median %.0f MHz (%.1f TFLOP/s)",
			w->sustained_w, w->sustained_clock_hz / 1e6, w->sustained_flop_per_s / 1e12);
	if (w->limit_w > 0)
		fprintf(out, "; power limit %.0f W", w->limit_w);
	fputc('\n', out);
	if (w->points)
		fprintf(out, "  against utilisation u: P = %.1f W + %.1f W x u (%zu points; rms %.1f W, "
			     "max %.1f W)\n",
			w->lin_a_w, w->lin_b_w, w->points, w->lin_rms_w, w->lin_max_w);
	if (w->gamma > 0)
		fprintf(out, "  P = idle + (sustained - idle) x u^%.3g (rms %.1f W, max %.1f W)\n",
			w->gamma, w->gamma_rms_w, w->gamma_max_w);
}

static void report_attention(const capsim_profile *p, int verbose, FILE *out)
{
	for (int k = 0; k < CAPSIM_ATTN__KERNELS; k++) {
		const capsim_profile_attn *a = &p->attn[k];
		if (!a->curve.n)
			continue;
		char runs[256];
		runs_text(&a->runs, runs, sizeof runs);
		fprintf(out, "Attention %s: %d points (median rates over runs %s; peak bf16 %.1f "
			     "TFLOP/s)\n", capsim_attn_kernel_names[k], a->curve.n, runs,
			a->curve.peak_bf16_flop_per_s / 1e12);
		if (!verbose)
			continue;
		fprintf(out, "    seq     head dim  causal  forward  backward (TFLOP/s)\n");
		for (int i = 0; i < a->curve.n; i++) {
			const capsim_attn_point *pt = &a->curve.pt[i];
			fprintf(out, "    %7.0f %8.0f  %-6s %8.1f %9.1f\n", pt->seq, pt->head_dim,
				pt->causal ? "yes" : "no", pt->fwd_flop_per_s / 1e12,
				pt->bwd_flop_per_s / 1e12);
		}
	}
}

void capsim_fit_report(const capsim_profile *p, const capsim_gpu *g,
		       int verbose, FILE *out)
{
	capsim_run_ids all = { 0 };
	for (size_t i = 0; i < p->n_runs && i < CAPSIM_PROFILE_MAX_RUNS; i++)
		all.id[all.n++] = p->runs[i].id;
	char runs[256];
	runs_text(&all, runs, sizeof runs);
	fprintf(out, "profile '%s' for %s (%s), runs %s of %s\n\n", p->name, p->gpu, p->gpu_name,
		runs, p->database[0] ? p->database : "?");
	report_gemm(p, g, verbose, out);
	if (p->hbm.points)
		fprintf(out, "Copy bandwidth: %.3f TB/s, %.3f of the datasheet's (%zu points; rms "
			     "%.1f%%, max %.1f%%)\n",
			p->hbm.bw_bytes_per_s / 1e12, p->hbm.eff, p->hbm.points, 100 * p->hbm.rms,
			100 * p->hbm.max_abs);
	if (p->eff_launch_s > 0)
		fprintf(out, "Eager launch (PyTorch, a bare kernel's host issue): %.2f us\n",
			p->eff_launch_s * 1e6);
	if (p->eff_dispatch_s > 0 || p->eff_dispatch_compiled_s > 0)
		fprintf(out, "Host work per kernel beyond the launch: eager %.1f us, compiled %.1f us\n",
			p->eff_dispatch_s * 1e6, p->eff_dispatch_compiled_s * 1e6);
	if (p->eff_kernel_gap_s > 0 || p->eff_launch_graph_s > 0)
		fprintf(out, "GPU cost per kernel: from a stream %.2f us, from a graph %.2f us\n",
			p->eff_kernel_gap_s * 1e6, p->eff_launch_graph_s * 1e6);
	if (p->block_kernels[0][0] > 0 || p->block_kernels[1][0] > 0)
		fprintf(out, "Eager block kernels, forward / backward: LayerNorm %.0f / %.0f, "
			     "RMSNorm %.0f / %.0f\n", p->block_kernels[0][0], p->block_kernels[0][1],
			p->block_kernels[1][0], p->block_kernels[1][1]);
	report_links(p, out);
	report_power(&p->power, out);
	report_attention(p, verbose, out);
	if (p->n_notes)
		fprintf(out, "\nNotes:\n");
	for (size_t i = 0; i < p->n_notes; i++)
		fprintf(out, "  - %s\n", p->notes[i]);
}
