/* common.h - what calibrate/'s programs share: medians of samples, JSON
 * output, the machine line's first keys, and a clear exit without a GPU.
 * Header-only (each program is one translation unit). MIT, see LICENSE. */
#ifndef CAPSIM_CALIBRATE_COMMON_H
#define CAPSIM_CALIBRATE_COMMON_H

#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a < b ? -1 : a > b;
}

/* the median of v (sorted in place) */
static inline double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* a JSON array of seconds */
static inline void print_samples(FILE *out, const double *v, int n)
{
	fputc('[', out);
	for (int i = 0; i < n; i++)
		fprintf(out, "%s%.9g", i ? "," : "", v[i]);
	fputc(']', out);
}

/* s as a JSON string, quoted and escaped */
static inline void print_json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			fprintf(out, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(out, "\\u%04x", ch);
		else
			fputc(ch, out);
	}
	fputc('"', out);
}

/* a clear message and exit 1 where no GPU can be used */
static inline void need_gpu(const char *program)
{
	int n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);
	if (e != cudaSuccess || n == 0) {
		fprintf(stderr, "%s: no CUDA GPU visible (%s)\n", program,
			e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
		exit(1);
	}
}

/* The machine line up to its program's own keys: kind, program, date (UTC),
 * the GPU of device dev (name, compute capability, SMs, memory, L2) and the
 * CUDA driver and runtime versions, without the closing brace. Returns the
 * first CUDA error, having written nothing. */
static inline cudaError_t machine_head(FILE *out, const char *program, int dev)
{
	cudaDeviceProp prop;
	int driver, runtime;
	cudaError_t e;
	if ((e = cudaGetDeviceProperties(&prop, dev)) != cudaSuccess ||
	    (e = cudaDriverGetVersion(&driver)) != cudaSuccess ||
	    (e = cudaRuntimeGetVersion(&runtime)) != cudaSuccess)
		return e;
	char date[32];
	time_t now = time(NULL);
	strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	fprintf(out, "{\"kind\":\"machine\",\"program\":\"%s\",\"date\":\"%s\",\"gpu\":", program,
		date);
	print_json_string(out, prop.name);
	fprintf(out, ",\"cc\":\"%d.%d\",\"sms\":%d,\"memory_bytes\":%zu,\"l2_bytes\":%d,"
		"\"cuda_driver\":%d,\"cuda_runtime\":%d", prop.major, prop.minor,
		prop.multiProcessorCount, prop.totalGlobalMem, prop.l2CacheSize, driver, runtime);
	return cudaSuccess;
}

#endif
