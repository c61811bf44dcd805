/* pcie.cu - capsim-calibrate-pcie: copy bandwidth between pinned host memory
 * and one GPU, each way, over a sweep of sizes, as JSON lines
 * (calibrate/README.md).
 *
 * Method, as capsim-calibrate-gemm times its GEMMs: each size is warmed up,
 * then timed with CUDA events around batches of back-to-back
 * cudaMemcpyAsync calls on one stream (about 2 ms a batch, so that the
 * host's launch cost does not show between the events); each sample is the
 * time per copy, and the median of the samples is reported with all of them.
 * The host buffer is pinned (cudaHostAlloc) and touched before timing.
 *
 * SPDX-License-Identifier: MIT (calibrate/LICENSE) */
#include <cuda_runtime.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common.h"

#define CUDA_OK(x) check_cuda((x), #x, __FILE__, __LINE__)

static void check_cuda(cudaError_t e, const char *what, const char *file, int line)
{
	if (e != cudaSuccess) {
		fprintf(stderr, "%s:%d: %s: %s\n", file, line, what, cudaGetErrorString(e));
		exit(1);
	}
}




/* "4K", "16M", "1G" (binary multiples) or plain bytes; 0 when malformed */
static size_t parse_bytes(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (end == s)
		return 0;
	switch (*end) {
	case 'K': case 'k': v <<= 10; end++; break;
	case 'M': case 'm': v <<= 20; end++; break;
	case 'G': case 'g': v <<= 30; end++; break;
	default: break;
	}
	return *end ? 0 : (size_t)v;
}


static void machine(FILE *out)
{
	int dev;
	cudaDeviceProp prop;
	CUDA_OK(cudaGetDevice(&dev));
	CUDA_OK(cudaGetDeviceProperties(&prop, dev));
	CUDA_OK(machine_head(out, "capsim-calibrate-pcie", dev));
	fprintf(out, ",\"pci_bus_id\":\"%04x:%02x:%02x.0\"}\n", prop.pciDomainID, prop.pciBusID,
		prop.pciDeviceID);
	fflush(out);
}

/* One size one way: `reps` samples of the time per copy, each from a batch
 * of back-to-back copies sized to about 2 ms. */
static void one_size(FILE *out, int h2d, void *host, void *dev, size_t bytes, int reps,
		     cudaStream_t s, cudaEvent_t e0, cudaEvent_t e1)
{
	void *dst = h2d ? dev : host;
	const void *src = h2d ? host : dev;
	cudaMemcpyKind kind = h2d ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
	float ms = 0;
	for (int w = 0; w < 3; w++)
		CUDA_OK(cudaMemcpyAsync(dst, src, bytes, kind, s));
	CUDA_OK(cudaEventRecord(e0, s));
	for (int w = 0; w < 5; w++)
		CUDA_OK(cudaMemcpyAsync(dst, src, bytes, kind, s));
	CUDA_OK(cudaEventRecord(e1, s));
	CUDA_OK(cudaEventSynchronize(e1));
	CUDA_OK(cudaEventElapsedTime(&ms, e0, e1));
	int batch = (int)(2e-3 / (ms * 1e-3 / 5)) + 1;
	if (batch > 1000)
		batch = 1000;
	double *v = (double *)malloc(sizeof(double) * reps);
	for (int r = 0; r < reps; r++) {
		CUDA_OK(cudaEventRecord(e0, s));
		for (int j = 0; j < batch; j++)
			CUDA_OK(cudaMemcpyAsync(dst, src, bytes, kind, s));
		CUDA_OK(cudaEventRecord(e1, s));
		CUDA_OK(cudaEventSynchronize(e1));
		CUDA_OK(cudaEventElapsedTime(&ms, e0, e1));
		v[r] = ms * 1e-3 / batch;
	}
	fprintf(out, "{\"kind\":\"pcie\",\"direction\":\"%s\",\"pinned\":1,\"bytes\":%zu,"
		"\"batch\":%d,\"samples_s\":", h2d ? "h2d" : "d2h", bytes, batch);
	print_samples(out, v, reps);
	double med = median(v, reps);
	fprintf(out, ",\"median_s\":%.9g,\"bytes_per_s\":%.9g}\n", med, (double)bytes / med);
	fflush(out);
	fprintf(stderr, "  %s %zu B: %.3g GB/s\n", h2d ? "h2d" : "d2h", bytes,
		(double)bytes / med / 1e9);
	free(v);
}

static void usage(void)
{
	fprintf(stderr, "usage: capsim-calibrate-pcie [--min-bytes 4K] [--max-bytes 1G] "
			"[--factor 4] [--reps N] [--out FILE.jsonl]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	size_t lo = 4 << 10, hi = (size_t)1 << 30;
	int factor = 4, reps = 20;
	const char *path = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--min-bytes") && i + 1 < argc)
			lo = parse_bytes(argv[++i]);
		else if (!strcmp(argv[i], "--max-bytes") && i + 1 < argc)
			hi = parse_bytes(argv[++i]);
		else if (!strcmp(argv[i], "--factor") && i + 1 < argc)
			factor = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--out") && i + 1 < argc)
			path = argv[++i];
		else
			usage();
	}
	if (lo == 0 || hi < lo || hi > ((size_t)64 << 30)) {
		fprintf(stderr, "--min-bytes, --max-bytes: expected 1 <= min <= max <= 64G\n");
		return 2;
	}
	if (factor < 2 || reps < 3 || reps > 10000) {
		fprintf(stderr, "--factor: expected 2 or more; --reps: expected 3 to 10000\n");
		return 2;
	}
	need_gpu("capsim-calibrate-pcie");
	FILE *out = path ? fopen(path, "w") : stdout;
	if (!out) {
		perror(path);
		return 1;
	}
	machine(out);
	void *host, *dev;
	CUDA_OK(cudaHostAlloc(&host, hi, cudaHostAllocDefault));
	CUDA_OK(cudaMalloc(&dev, hi));
	memset(host, 0x5a, hi); /* touch every page */
	CUDA_OK(cudaMemset(dev, 0xa5, hi));
	cudaStream_t s;
	cudaEvent_t e0, e1;
	CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CUDA_OK(cudaEventCreate(&e0));
	CUDA_OK(cudaEventCreate(&e1));
	for (int h2d = 1; h2d >= 0; h2d--)
		for (size_t b = lo; b <= hi; b *= (size_t)factor) {
			one_size(out, h2d, host, dev, b, reps, s, e0, e1);
			if (b > hi / (size_t)factor)
				break;
		}
	cudaEventDestroy(e0);
	cudaEventDestroy(e1);
	cudaStreamDestroy(s);
	cudaFree(dev);
	cudaFreeHost(host);
	if (path && fclose(out) != 0) {
		perror(path);
		return 1;
	}
	return 0;
}
