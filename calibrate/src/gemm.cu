/* gemm.cu - capsim-calibrate-gemm: GEMM rates through cuBLASLt and the
 * device-memory copy bandwidth of one GPU, as JSON lines (calibrate/README.md).
 *
 * Method (after common GPU benchmarking practice and nccl-tests' habits):
 * inputs are random, never zeros, drawn from a pool larger than the L2 cache
 * and rotated between repetitions so that no repetition reads what the last
 * one left in cache; every CUDA and cuBLASLt call is checked; each shape is
 * warmed up, then timed with CUDA events around batches of back-to-back
 * GEMMs (about 2 ms a batch, so launch gaps do not count); the median time
 * per GEMM is reported with every sample. Each dtype is first checked against a float64 product
 * on the host, on inputs that every format holds exactly (k/8, |k| <= 8).
 *
 * SPDX-License-Identifier: MIT (calibrate/LICENSE) */
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dlfcn.h>
#include <unistd.h>

#include "common.h"

#define CUDA_OK(x) check_cuda((x), #x, __FILE__, __LINE__)
#define LT_OK(x) check_lt((x), #x, __FILE__, __LINE__)

static void check_cuda(cudaError_t e, const char *what, const char *file, int line)
{
	if (e != cudaSuccess) {
		fprintf(stderr, "%s:%d: %s: %s\n", file, line, what, cudaGetErrorString(e));
		exit(1);
	}
}

static void check_lt(cublasStatus_t s, const char *what, const char *file, int line)
{
	if (s != CUBLAS_STATUS_SUCCESS) {
		fprintf(stderr, "%s:%d: %s: cuBLAS status %d\n", file, line, what, (int)s);
		exit(1);
	}
}

/* ---- inputs: k/8 for k in [-8, 8], from a hash of the index ------------- */

__host__ __device__ static inline float value_at(uint64_t i, uint32_t seed)
{
	uint64_t x = i * 0x9E3779B97F4A7C15ull + seed;
	x ^= x >> 31;
	x *= 0xBF58476D1CE4E5B9ull;
	x ^= x >> 29;
	return (float)((int)(x % 17u) - 8) / 8.0f;
}

template <typename T> __device__ static inline T from_float(float v);
template <> __device__ inline float from_float<float>(float v) { return v; }
template <> __device__ inline __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16(v); }
template <> __device__ inline __half from_float<__half>(float v) { return __float2half(v); }
template <> __device__ inline __nv_fp8_e4m3 from_float<__nv_fp8_e4m3>(float v) { return __nv_fp8_e4m3(v); }

template <typename T>
__global__ static void fill(T *p, size_t n, uint32_t seed)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		p[i] = from_float<T>(value_at(i, seed));
}

/* ---- the dtypes --------------------------------------------------------- */

typedef struct dtype_desc {
	const char *name;
	cudaDataType_t ab, cd;
	cublasComputeType_t compute;
	size_t ab_size, cd_size;
	int fp8; /* TN layout, scale pointers, dims multiple of 16 */
} dtype_desc;

static const dtype_desc dtypes[] = {
	{ "fp32", CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 4, 4, 0 },
	{ "tf32", CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 4, 4, 0 },
	{ "bf16", CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 2, 2, 0 },
	{ "fp16", CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, 2, 2, 0 },
	{ "fp8", CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 1, 2, 1 },
};

static void fill_any(const dtype_desc *t, void *p, size_t n, uint32_t seed, int ab)
{
	cudaDataType_t ty = ab ? t->ab : t->cd;
	int blocks = 1024, threads = 256;
	switch (ty) {
	case CUDA_R_32F: fill<float><<<blocks, threads>>>((float *)p, n, seed); break;
	case CUDA_R_16BF: fill<__nv_bfloat16><<<blocks, threads>>>((__nv_bfloat16 *)p, n, seed); break;
	case CUDA_R_16F: fill<__half><<<blocks, threads>>>((__half *)p, n, seed); break;
	case CUDA_R_8F_E4M3: fill<__nv_fp8_e4m3><<<blocks, threads>>>((__nv_fp8_e4m3 *)p, n, seed); break;
	default: fprintf(stderr, "fill: unsupported type\n"); exit(1);
	}
	CUDA_OK(cudaGetLastError());
}

/* ---- one GEMM: D (m x n) = A^T (m x k) B (k x n), column-major, TN -------- */

typedef struct gemm_plan {
	cublasLtMatmulDesc_t desc;
	cublasLtMatrixLayout_t a, b, d;
	cublasLtMatmulAlgo_t algo;
	size_t workspace;
	float alpha, beta;
	float *scale; /* device scales for fp8 (1.0) */
} gemm_plan;

static int plan_gemm(cublasLtHandle_t lt, const dtype_desc *t, int m, int n, int k,
		     size_t work_size, gemm_plan *p)
{
	memset(p, 0, sizeof *p);
	p->alpha = 1.0f;
	p->beta = 0.0f;
	LT_OK(cublasLtMatmulDescCreate(&p->desc, t->compute, CUDA_R_32F));
	cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
	LT_OK(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
	LT_OK(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
	if (t->fp8) {
		CUDA_OK(cudaMalloc(&p->scale, sizeof(float)));
		float one = 1.0f;
		CUDA_OK(cudaMemcpy(p->scale, &one, sizeof one, cudaMemcpyHostToDevice));
		LT_OK(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
						     &p->scale, sizeof p->scale));
		LT_OK(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
						     &p->scale, sizeof p->scale));
	}
	LT_OK(cublasLtMatrixLayoutCreate(&p->a, t->ab, k, m, k));
	LT_OK(cublasLtMatrixLayoutCreate(&p->b, t->ab, k, n, k));
	LT_OK(cublasLtMatrixLayoutCreate(&p->d, t->cd, m, n, m));
	cublasLtMatmulPreference_t pref;
	LT_OK(cublasLtMatmulPreferenceCreate(&pref));
	LT_OK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
						   &work_size, sizeof work_size));
	cublasLtMatmulHeuristicResult_t h;
	int found = 0;
	cublasStatus_t s = cublasLtMatmulAlgoGetHeuristic(lt, p->desc, p->a, p->b, p->d, p->d,
							  pref, 1, &h, &found);
	cublasLtMatmulPreferenceDestroy(pref);
	if (s != CUBLAS_STATUS_SUCCESS || found == 0)
		return -1;
	p->algo = h.algo;
	p->workspace = h.workspaceSize;
	return 0;
}

static void unplan_gemm(gemm_plan *p)
{
	cublasLtMatrixLayoutDestroy(p->a);
	cublasLtMatrixLayoutDestroy(p->b);
	cublasLtMatrixLayoutDestroy(p->d);
	cublasLtMatmulDescDestroy(p->desc);
	if (p->scale)
		cudaFree(p->scale);
}

static void run_gemm(cublasLtHandle_t lt, gemm_plan *p, const void *a, const void *b,
		     void *d, void *work)
{
	LT_OK(cublasLtMatmul(lt, p->desc, &p->alpha, a, p->a, b, p->b, &p->beta, d, p->d,
			     d, p->d, &p->algo, work, p->workspace, 0));
}

/* ---- helpers ------------------------------------------------------------ */




static float to_float(const dtype_desc *t, const void *d, size_t i)
{
	if (t->cd == CUDA_R_32F)
		return ((const float *)d)[i];
	uint16_t bits = ((const uint16_t *)d)[i];
	if (t->cd == CUDA_R_16BF) {
		uint32_t u = (uint32_t)bits << 16;
		float f;
		memcpy(&f, &u, sizeof f);
		return f;
	}
	__half_raw r;
	r.x = bits;
	return __half2float(__half(r));
}

/* ||D - A^T B|| / ||A^T B|| against a float64 product of the same inputs */
static double check_dtype(cublasLtHandle_t lt, const dtype_desc *t, void *work,
			  size_t work_size)
{
	const int m = 256, n = 192, k = 320;
	void *a, *b, *d;
	CUDA_OK(cudaMalloc(&a, (size_t)m * k * t->ab_size));
	CUDA_OK(cudaMalloc(&b, (size_t)k * n * t->ab_size));
	CUDA_OK(cudaMalloc(&d, (size_t)m * n * t->cd_size));
	fill_any(t, a, (size_t)m * k, 11, 1);
	fill_any(t, b, (size_t)k * n, 12, 1);
	CUDA_OK(cudaMemset(d, 0xff, (size_t)m * n * t->cd_size)); /* poison: NaN */
	gemm_plan p;
	if (plan_gemm(lt, t, m, n, k, work_size, &p) < 0) {
		unplan_gemm(&p);
		cudaFree(a);
		cudaFree(b);
		cudaFree(d);
		return -1.0;
	}
	run_gemm(lt, &p, a, b, d, work);
	CUDA_OK(cudaDeviceSynchronize());
	void *host = malloc((size_t)m * n * t->cd_size);
	CUDA_OK(cudaMemcpy(host, d, (size_t)m * n * t->cd_size, cudaMemcpyDeviceToHost));
	double num = 0, den = 0;
	for (int j = 0; j < n; j++)
		for (int i = 0; i < m; i++) {
			double ref = 0;
			for (int l = 0; l < k; l++) /* A is k x m (column-major), B k x n */
				ref += (double)value_at((uint64_t)i * k + l, 11) *
				       (double)value_at((uint64_t)j * k + l, 12);
			double got = to_float(t, host, (size_t)j * m + i);
			if (isnan(got))
				num = INFINITY;
			num += (got - ref) * (got - ref);
			den += ref * ref;
		}
	free(host);
	unplan_gemm(&p);
	cudaFree(a);
	cudaFree(b);
	cudaFree(d);
	return sqrt(num / den);
}

/* ---- the run ------------------------------------------------------------ */

typedef struct shape {
	int m, n, k;
	const char *what;
} shape;

/* square sweeps and the GEMMs of transformer layers: Llama-class layers at
 * TP 8 with 8192 tokens a micro-batch (QKV, attention output, MLP up and
 * down), and GPT-3 175B at TP 8 with 2048 tokens; then GPT-2's LM head for
 * 8192 tokens with its vocabulary of 50257, which no alignment divides, and
 * padded to 50304 (= 393 x 128): the logits (D = 50257 x 8192, its leading
 * dimension misaligned) and the GEMM with the vocabulary inside (K = 50257:
 * A's and B's leading dimensions misaligned). fp8 needs every dimension a
 * multiple of 16 and skips the misaligned ones. */
static const shape shapes[] = {
	{ 1024, 1024, 1024, "square" },   { 2048, 2048, 2048, "square" },
	{ 4096, 4096, 4096, "square" },   { 8192, 8192, 8192, "square" },
	{ 16384, 16384, 16384, "square" },
	{ 8192, 1280, 8192, "llama70b-tp8-qkv" },
	{ 8192, 8192, 1024, "llama70b-tp8-proj" },
	{ 8192, 7168, 8192, "llama70b-tp8-fc1" },
	{ 8192, 8192, 3584, "llama70b-tp8-fc2" },
	{ 2048, 4608, 12288, "gpt3-tp8-qkv" },
	{ 2048, 12288, 1536, "gpt3-tp8-proj" },
	{ 2048, 6144, 12288, "gpt3-tp8-fc1" },
	{ 2048, 12288, 6144, "gpt3-tp8-fc2" },
	{ 50257, 8192, 768, "gpt2-lmhead-v50257" },
	{ 50304, 8192, 768, "gpt2-lmhead-v50304" },
	{ 768, 8192, 50257, "gpt2-lmhead-k-v50257" },
	{ 768, 8192, 50304, "gpt2-lmhead-k-v50304" },
};

static void copy_bandwidth(FILE *out, int reps)
{
	const size_t bytes = (size_t)4 << 30;
	void *src, *dst;
	CUDA_OK(cudaMalloc(&src, bytes));
	CUDA_OK(cudaMalloc(&dst, bytes));
	fill<float><<<1024, 256>>>((float *)src, bytes / 4, 5);
	CUDA_OK(cudaGetLastError());
	cudaEvent_t e0, e1;
	CUDA_OK(cudaEventCreate(&e0));
	CUDA_OK(cudaEventCreate(&e1));
	for (int w = 0; w < 3; w++)
		CUDA_OK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, 0));
	double *s = (double *)malloc(sizeof(double) * reps);
	for (int r = 0; r < reps; r++) {
		CUDA_OK(cudaEventRecord(e0, 0));
		CUDA_OK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, 0));
		CUDA_OK(cudaEventRecord(e1, 0));
		CUDA_OK(cudaEventSynchronize(e1));
		float ms;
		CUDA_OK(cudaEventElapsedTime(&ms, e0, e1));
		s[r] = ms * 1e-3;
	}
	fprintf(out, "{\"kind\":\"hbm-copy\",\"bytes\":%zu,\"moved_bytes\":%zu,\"samples_s\":",
		bytes, 2 * bytes);
	print_samples(out, s, reps);
	double med = median(s, reps);
	fprintf(out, ",\"median_s\":%.9g,\"bytes_per_s\":%.6g}\n", med, 2.0 * bytes / med);
	fflush(out);
	free(s);
	cudaEventDestroy(e0);
	cudaEventDestroy(e1);
	cudaFree(src);
	cudaFree(dst);
}

static void gemm_sweep(FILE *out, cublasLtHandle_t lt, const dtype_desc *t, int reps,
		       void *work, size_t work_size, size_t l2)
{
	double err = check_dtype(lt, t, work, work_size);
	fprintf(out, "{\"kind\":\"gemm-check\",\"dtype\":\"%s\",\"rel_err\":%.3g}\n", t->name, err);
	fflush(out);
	cudaEvent_t e0, e1;
	CUDA_OK(cudaEventCreate(&e0));
	CUDA_OK(cudaEventCreate(&e1));
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
		const shape *sh = &shapes[i];
		if (t->fp8 && (sh->m % 16 || sh->n % 16 || sh->k % 16))
			continue;
		size_t a_bytes = (size_t)sh->m * sh->k * t->ab_size;
		size_t b_bytes = (size_t)sh->k * sh->n * t->ab_size;
		/* enough input sets that the rotation outruns the L2 cache */
		int sets = (int)((4 * l2) / (a_bytes + b_bytes)) + 1;
		if (sets > 8)
			sets = 8;
		if ((a_bytes + b_bytes) * sets > ((size_t)24 << 30))
			sets = 1;
		void *a, *b, *d;
		CUDA_OK(cudaMalloc(&a, a_bytes * sets));
		CUDA_OK(cudaMalloc(&b, b_bytes * sets));
		CUDA_OK(cudaMalloc(&d, (size_t)sh->m * sh->n * t->cd_size));
		fill_any(t, a, (size_t)sh->m * sh->k * sets, 21 + (uint32_t)i, 1);
		fill_any(t, b, (size_t)sh->k * sh->n * sets, 41 + (uint32_t)i, 1);
		gemm_plan p;
		if (plan_gemm(lt, t, sh->m, sh->n, sh->k, work_size, &p) < 0) {
			fprintf(out, "{\"kind\":\"gemm\",\"dtype\":\"%s\",\"m\":%d,\"n\":%d,\"k\":%d,"
				"\"shape\":\"%s\",\"error\":\"no cuBLASLt algorithm\"}\n",
				t->name, sh->m, sh->n, sh->k, sh->what);
			unplan_gemm(&p);
		} else {
			/* warm-up, which also sizes the batch: each sample times
			 * `batch` back-to-back GEMMs (about 2 ms of them), so
			 * that the host's launch cost never shows between the
			 * events, as nccl-tests times its iterations */
			float ms = 0;
			for (int w = 0; w < 5; w++)
				run_gemm(lt, &p, (char *)a + a_bytes * (w % sets),
					 (char *)b + b_bytes * (w % sets), d, work);
			CUDA_OK(cudaEventRecord(e0, 0));
			for (int w = 0; w < 20; w++)
				run_gemm(lt, &p, (char *)a + a_bytes * (w % sets),
					 (char *)b + b_bytes * (w % sets), d, work);
			CUDA_OK(cudaEventRecord(e1, 0));
			CUDA_OK(cudaEventSynchronize(e1));
			CUDA_OK(cudaEventElapsedTime(&ms, e0, e1));
			double one = ms * 1e-3 / 20;
			int batch = (int)(2e-3 / one) + 1;
			if (batch > 1000)
				batch = 1000;
			double *s = (double *)malloc(sizeof(double) * reps);
			for (int r = 0; r < reps; r++) {
				CUDA_OK(cudaEventRecord(e0, 0));
				for (int j = 0; j < batch; j++) {
					int q = (r * batch + j) % sets;
					run_gemm(lt, &p, (char *)a + a_bytes * q,
						 (char *)b + b_bytes * q, d, work);
				}
				CUDA_OK(cudaEventRecord(e1, 0));
				CUDA_OK(cudaEventSynchronize(e1));
				CUDA_OK(cudaEventElapsedTime(&ms, e0, e1));
				s[r] = ms * 1e-3 / batch;
			}
			double flop = 2.0 * sh->m * sh->n * sh->k;
			fprintf(out, "{\"kind\":\"gemm\",\"dtype\":\"%s\",\"m\":%d,\"n\":%d,\"k\":%d,"
				"\"shape\":\"%s\",\"layout\":\"TN\",\"input_sets\":%d,\"batch\":%d,"
				"\"flop\":%.6g,\"samples_s\":", t->name, sh->m, sh->n, sh->k, sh->what,
				sets, batch, flop);
			print_samples(out, s, reps);
			double med = median(s, reps);
			fprintf(out, ",\"median_s\":%.9g,\"flop_per_s\":%.6g}\n", med, flop / med);
			fflush(out);
			free(s);
			unplan_gemm(&p);
		}
		cudaFree(a);
		cudaFree(b);
		cudaFree(d);
		fprintf(stderr, "  %s %s %dx%dx%d done\n", t->name, sh->what, sh->m, sh->n, sh->k);
	}
	cudaEventDestroy(e0);
	cudaEventDestroy(e1);
}

/* ---- NVML, loaded at run time (no nvml.h needed to build) --------------- */

typedef struct nvml {
	void *lib, *dev;
	int (*power)(void *dev, unsigned *mw);
	int (*clock)(void *dev, int type, unsigned *mhz);
	int (*temp)(void *dev, int sensor, unsigned *c);
	int (*limit)(void *dev, unsigned *mw);
	int (*reasons)(void *dev, unsigned long long *r);
} nvml;

/* 0 when NVML answers for GPU 0 (one GPU visible: the same as CUDA's 0) */
static int nvml_open(nvml *n)
{
	memset(n, 0, sizeof *n);
	n->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW);
	if (!n->lib)
		return -1;
	int (*init)(void) = (int (*)(void))dlsym(n->lib, "nvmlInit_v2");
	int (*handle)(unsigned, void **) =
		(int (*)(unsigned, void **))dlsym(n->lib, "nvmlDeviceGetHandleByIndex_v2");
	n->power = (int (*)(void *, unsigned *))dlsym(n->lib, "nvmlDeviceGetPowerUsage");
	n->clock = (int (*)(void *, int, unsigned *))dlsym(n->lib, "nvmlDeviceGetClockInfo");
	n->temp = (int (*)(void *, int, unsigned *))dlsym(n->lib, "nvmlDeviceGetTemperature");
	n->limit = (int (*)(void *, unsigned *))dlsym(n->lib, "nvmlDeviceGetEnforcedPowerLimit");
	n->reasons = (int (*)(void *, unsigned long long *))dlsym(
		n->lib, "nvmlDeviceGetCurrentClocksThrottleReasons");
	if (!init || !handle || !n->power || !n->clock || !n->temp || !n->limit ||
	    init() != 0 || handle(0, &n->dev) != 0) {
		dlclose(n->lib);
		n->lib = NULL;
		return -1;
	}
	return 0;
}

/* one NVML reading at t_s seconds into a phase */
typedef struct reading {
	double t_s;
	unsigned mw, mhz, temp_c;
	unsigned long long reasons;
} reading;

/* power (mW), SM clock (MHz), temperature (C), throttle bits, now */
static reading nvml_get(const nvml *n, double t)
{
	reading r;
	memset(&r, 0, sizeof r);
	r.t_s = t;
	n->power(n->dev, &r.mw);
	n->clock(n->dev, 1 /* NVML_CLOCK_SM */, &r.mhz);
	n->temp(n->dev, 0 /* NVML_TEMPERATURE_GPU */, &r.temp_c);
	if (n->reasons)
		n->reasons(n->dev, &r.reasons);
	return r;
}

static void print_reading(FILE *out, const reading *r)
{
	fprintf(out, "{\"t_s\":%.3f,\"power_w\":%.3f,\"sm_mhz\":%u,\"temp_c\":%u,"
		"\"throttle_reasons\":%llu}", r->t_s, r->mw / 1000.0, r->mhz, r->temp_c,
		r->reasons);
}

/* one reading, printed: power (W), SM clock (MHz), temperature (C), throttle bits */
static void nvml_read(const nvml *n, FILE *out, double t)
{
	reading r = nvml_get(n, t);
	print_reading(out, &r);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Power and clocks idle: read before any GPU work of this program, after
 * 2 s with nothing running, since NVML's power is a 1 s average on Ampere
 * and later (NVML API reference, nvmlDeviceGetPowerUsage). Read after the
 * GEMM sweep instead, it gave 693 W on the H200 (2026-12-02). */
static void idle_power(FILE *out)
{
	nvml n;
	if (nvml_open(&n) < 0) {
		fprintf(stderr, "NVML not available: no power or clock readings\n");
		return;
	}
	struct timespec settle = { 2, 0 };
	nanosleep(&settle, NULL);
	unsigned lim = 0;
	n.limit(n.dev, &lim);
	fprintf(out, "{\"kind\":\"power-idle\",\"power_limit_w\":%.3f,\"reading\":", lim / 1000.0);
	nvml_read(&n, out, 0.0);
	fputs("}\n", out);
}

/* The load of the power phases: bf16 8192^3 GEMMs on one set of inputs,
 * planned once. */
typedef struct gemm_load {
	const dtype_desc *t;
	int m;
	void *a, *b, *d;
	gemm_plan p;
} gemm_load;

static void load_open(gemm_load *l, cublasLtHandle_t lt, size_t work_size, uint32_t seed,
		      const char *phase)
{
	l->t = &dtypes[2]; /* bf16 */
	l->m = 8192;
	size_t elems = (size_t)l->m * l->m;
	CUDA_OK(cudaMalloc(&l->a, elems * l->t->ab_size));
	CUDA_OK(cudaMalloc(&l->b, elems * l->t->ab_size));
	CUDA_OK(cudaMalloc(&l->d, elems * l->t->cd_size));
	fill_any(l->t, l->a, elems, seed, 1);
	fill_any(l->t, l->b, elems, seed + 1, 1);
	if (plan_gemm(lt, l->t, l->m, l->m, l->m, work_size, &l->p) < 0) {
		fprintf(stderr, "%s: no cuBLASLt algorithm\n", phase);
		exit(1);
	}
}

static void load_close(gemm_load *l)
{
	unplan_gemm(&l->p);
	cudaFree(l->a);
	cudaFree(l->b);
	cudaFree(l->d);
}

/* Power and clocks under `seconds` of back-to-back bf16 8192^3 GEMMs: NVML
 * read every 100 ms while batches of 50 run, each batch's rate from CUDA
 * events. */
static void sustained(FILE *out, cublasLtHandle_t lt, void *work, size_t work_size,
		      double seconds)
{
	nvml n;
	if (nvml_open(&n) < 0) {
		fprintf(stderr, "NVML not available: no power or clock readings\n");
		return;
	}
	gemm_load l;
	load_open(&l, lt, work_size, 71, "sustained");
	const int m = l.m, batch = 50;
	cudaEvent_t e0, e1;
	CUDA_OK(cudaEventCreate(&e0));
	CUDA_OK(cudaEventCreate(&e1));
	fprintf(out, "{\"kind\":\"power-sustained\",\"dtype\":\"bf16\",\"m\":%d,\"n\":%d,\"k\":%d,"
		"\"batch\":%d,\"readings\":[", m, m, m, batch);
	double flop = 2.0 * m * m * m * batch, start = now_s(), next = start;
	int first = 1;
	size_t nb = 0, cap = 1024;
	double *rates = (double *)malloc(cap * sizeof *rates);
	while (now_s() - start < seconds) {
		CUDA_OK(cudaEventRecord(e0, 0));
		for (int j = 0; j < batch; j++)
			run_gemm(lt, &l.p, l.a, l.b, l.d, work);
		CUDA_OK(cudaEventRecord(e1, 0));
		cudaError_t q;
		while ((q = cudaEventQuery(e1)) == cudaErrorNotReady) {
			double t_now = now_s();
			if (t_now >= next) {
				if (!first)
					fputc(',', out);
				nvml_read(&n, out, t_now - start);
				first = 0;
				next += 0.1;
			}
			usleep(2000);
		}
		CUDA_OK(q);
		float ms;
		CUDA_OK(cudaEventElapsedTime(&ms, e0, e1));
		if (nb == cap)
			rates = (double *)realloc(rates, (cap *= 2) * sizeof *rates);
		rates[nb++] = flop / (ms * 1e-3);
	}
	fputs("],\"batch_flop_per_s\":", out);
	print_samples(out, rates, (int)nb);
	fputs("}\n", out);
	fflush(out);
	free(rates);
	load_close(&l);
	cudaEventDestroy(e0);
	cudaEventDestroy(e1);
	dlclose(n.lib);
}

/* Power against utilisation: for each duty d, bf16 8192^3 GEMMs for d of
 * every 100 ms window and no GPU work for the rest, for one settling second
 * and then `seconds` more, NVML read every 20 ms of the latter. Each window
 * runs as many GEMMs as the last window's time per GEMM says fill d x 100 ms
 * (at least one). achieved_flop_per_s is the GEMMs' FLOP over the whole
 * measured phase, busy and idle; busy_fraction their CUDA-event time over
 * it. On Ampere (but GA100) and later GPUs, NVML's power reading is an
 * average over 1 s (NVML API reference, nvmlDeviceGetPowerUsage), hence the
 * settling second; the readings give the pattern's mean power, not each
 * window's swing. */
static void duty_cycle(FILE *out, cublasLtHandle_t lt, void *work, size_t work_size,
		       const double *duties, int nduty, double seconds)
{
	nvml n;
	if (nvml_open(&n) < 0) {
		fprintf(stderr, "NVML not available: no power-duty readings\n");
		return;
	}
	gemm_load l;
	load_open(&l, lt, work_size, 81, "duty");
	const int m = l.m, settle = 10, windows = (int)(seconds * 10 + 0.5);
	const double window_s = 0.1, every_s = 0.02, flop = 2.0 * m * m * m;
	cudaEvent_t e0, e1;
	CUDA_OK(cudaEventCreate(&e0));
	CUDA_OK(cudaEventCreate(&e1));
	float ms;
	CUDA_OK(cudaEventRecord(e0, 0));
	for (int j = 0; j < 10; j++)
		run_gemm(lt, &l.p, l.a, l.b, l.d, work);
	CUDA_OK(cudaEventRecord(e1, 0));
	CUDA_OK(cudaEventSynchronize(e1));
	CUDA_OK(cudaEventElapsedTime(&ms, e0, e1));
	double one = ms * 1e-3 / 10; /* seconds per GEMM, updated every window */
	size_t cap = (size_t)(seconds / every_s) + 64;
	reading *rs = (reading *)malloc(cap * sizeof *rs);
	double *pw = (double *)malloc(cap * sizeof *pw), *mhz = (double *)malloc(cap * sizeof *mhz);
	for (int u = 0; u < nduty; u++) {
		double duty = duties[u], w0 = now_s(), start = 0, next = 0, busy = 0, done = 0;
		size_t nr = 0;
		for (int win = 0; win < settle + windows; win++) {
			int measuring = win >= settle;
			if (win == settle)
				next = start = w0;
			int count = (int)(duty * window_s / one + 0.5);
			if (count < 1)
				count = 1;
			CUDA_OK(cudaEventRecord(e0, 0));
			for (int j = 0; j < count; j++)
				run_gemm(lt, &l.p, l.a, l.b, l.d, work);
			CUDA_OK(cudaEventRecord(e1, 0));
			/* wait for the GEMMs, then idle to the window's end; read NVML
			 * every 20 ms all along */
			for (int phase = 0; phase < 2; phase++) {
				for (;;) {
					double t_now = now_s();
					if (phase == 0) {
						cudaError_t q = cudaEventQuery(e1);
						if (q != cudaErrorNotReady) {
							CUDA_OK(q);
							break;
						}
					} else if (t_now >= w0 + window_s) {
						break;
					}
					if (measuring && t_now >= next && nr < cap) {
						rs[nr++] = nvml_get(&n, t_now - start);
						next += every_s;
						if (next < t_now) /* late: no burst to catch up */
							next = t_now + every_s;
					}
					usleep(500);
				}
			}
			CUDA_OK(cudaEventElapsedTime(&ms, e0, e1));
			one = ms * 1e-3 / count;
			if (measuring) {
				busy += ms * 1e-3;
				done += flop * count;
			}
			double t_end = now_s();
			w0 += window_s;
			if (t_end > w0 + 2e-3) /* the GEMMs overran the window */
				w0 = t_end;
		}
		double elapsed = now_s() - start;
		fprintf(out, "{\"kind\":\"power-duty\",\"duty\":%g,\"dtype\":\"bf16\",\"m\":%d,"
			"\"n\":%d,\"k\":%d,\"window_s\":%g,\"windows\":%d,\"readings\":[", duty, m, m,
			m, window_s, windows);
		for (size_t i = 0; i < nr; i++) {
			if (i)
				fputc(',', out);
			print_reading(out, &rs[i]);
			pw[i] = rs[i].mw / 1000.0;
			mhz[i] = rs[i].mhz;
		}
		double pmed = nr ? median(pw, (int)nr) : 0, fmed = nr ? median(mhz, (int)nr) : 0;
		fprintf(out, "],\"median_power_w\":%.9g,\"median_sm_mhz\":%.9g,"
			"\"achieved_flop_per_s\":%.6g,\"busy_fraction\":%.4f}\n", pmed, fmed,
			done / elapsed, busy / elapsed);
		fflush(out);
		fprintf(stderr, "  duty %g: %.0f W, %.0f MHz, %.3g FLOP/s, busy %.2f\n", duty, pmed,
			fmed, done / elapsed, busy / elapsed);
	}
	free(rs);
	free(pw);
	free(mhz);
	load_close(&l);
	cudaEventDestroy(e0);
	cudaEventDestroy(e1);
	dlclose(n.lib);
}


/* --duty's list: "none", or fractions in (0, 1]; returns how many, or -1 */
static int parse_duties(const char *list, double *v, int max)
{
	if (!strcmp(list, "none"))
		return 0;
	int n = 0;
	for (const char *p = list; *p;) {
		char *end;
		double x = strtod(p, &end);
		if (end == p || !(x > 0 && x <= 1) || n == max || (*end && *end != ','))
			return -1;
		v[n++] = x;
		p = *end ? end + 1 : end;
	}
	return n;
}

static void machine(FILE *out)
{
	int dev;
	CUDA_OK(cudaGetDevice(&dev));
	CUDA_OK(machine_head(out, "capsim-calibrate-gemm", dev));
	fprintf(out, ",\"cublaslt\":%zu}\n", cublasLtGetVersion());
	fflush(out);
}

static void usage(void)
{
	fprintf(stderr, "usage: capsim-calibrate-gemm [--dtypes fp32,tf32,bf16,fp16,fp8] "
			"[--reps N] [--sustain SECONDS]\n"
			"       [--duty 0.25,0.5,0.75|none] [--duty-seconds SECONDS] "
			"[--out FILE.jsonl]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *list = "fp32,tf32,bf16,fp16,fp8", *path = NULL;
	int reps = 30;
	double sustain_s = 10.0, duty_s = 5.0, duties[16];
	int nduty = parse_duties("0.25,0.5,0.75", duties, 16);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--dtypes") && i + 1 < argc)
			list = argv[++i];
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--out") && i + 1 < argc)
			path = argv[++i];
		else if (!strcmp(argv[i], "--sustain") && i + 1 < argc)
			sustain_s = atof(argv[++i]);
		else if (!strcmp(argv[i], "--duty") && i + 1 < argc)
			nduty = parse_duties(argv[++i], duties, 16);
		else if (!strcmp(argv[i], "--duty-seconds") && i + 1 < argc)
			duty_s = atof(argv[++i]);
		else
			usage();
	}
	if (nduty < 0) {
		fprintf(stderr, "--duty: expected 'none' or up to 16 fractions in (0, 1], "
				"comma-separated\n");
		return 2;
	}
	if (!(duty_s >= 0.1 && duty_s <= 3600)) {
		fprintf(stderr, "--duty-seconds: expected 0.1 to 3600, found %g\n", duty_s);
		return 2;
	}
	if (reps < 3 || reps > 10000) {
		fprintf(stderr, "--reps: expected 3 to 10000, found %d\n", reps);
		return 2;
	}
	need_gpu("capsim-calibrate-gemm");
	FILE *out = path ? fopen(path, "w") : stdout;
	if (!out) {
		perror(path);
		return 1;
	}
	machine(out);
	if (sustain_s > 0 || nduty > 0)
		idle_power(out);
	copy_bandwidth(out, reps);
	cublasLtHandle_t lt;
	LT_OK(cublasLtCreate(&lt));
	size_t work_size = (size_t)64 << 20;
	void *work;
	CUDA_OK(cudaMalloc(&work, work_size));
	cudaDeviceProp prop;
	CUDA_OK(cudaGetDeviceProperties(&prop, 0));
	for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++) {
		const dtype_desc *t = &dtypes[i];
		char buf[128];
		snprintf(buf, sizeof buf, ",%s,", list);
		char key[16];
		snprintf(key, sizeof key, ",%s,", t->name);
		if (!strstr(buf, key))
			continue;
		if (t->fp8 && prop.major < 9) {
			fprintf(stderr, "fp8 needs compute capability 8.9 or later; skipped\n");
			continue;
		}
		fprintf(stderr, "%s:\n", t->name);
		gemm_sweep(out, lt, t, reps, work, work_size, (size_t)prop.l2CacheSize);
	}
	if (sustain_s > 0)
		sustained(out, lt, work, work_size, sustain_s);
	if (nduty > 0)
		duty_cycle(out, lt, work, work_size, duties, nduty, duty_s);
	cudaFree(work);
	cublasLtDestroy(lt);
	if (path && fclose(out) != 0) {
		perror(path);
		return 1;
	}
	return 0;
}
