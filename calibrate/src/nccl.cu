/* nccl.cu - capsim-calibrate-nccl: NCCL collectives over a sweep of sizes,
 * timed and checked, as JSON lines in nccl-tests' terms (calibrate/README.md).
 *
 * Two ways to run: one process driving every visible GPU (ncclCommInitAll,
 * one stream a GPU, each iteration one NCCL group over them), the default;
 * or, where built with MPI, one MPI rank a GPU (--mpi: rank 0's
 * ncclGetUniqueId broadcast with MPI_Bcast, ncclCommInitRank), each
 * sample's time the largest over the ranks, and only rank 0 writing.
 *
 * Sizes, counts and bandwidths follow nccl-tests (NVIDIA/nccl-tests,
 * doc/PERFORMANCE.md): a record's bytes is the larger of a rank's input and
 * output buffers (the output for all_gather, the input for reduce_scatter);
 * count is the count NCCL is called with; algbw = bytes / time; busbw =
 * algbw x 2(n-1)/n for all_reduce, (n-1)/n for all_gather, reduce_scatter
 * and alltoall, 1 for broadcast and sendrecv. all_gather, reduce_scatter and
 * alltoall round each rank's share down to a multiple of 4 elements, as
 * nccl-tests does. Each iteration starts at a different offset in the
 * buffers, as nccl-tests rotates them, so that no iteration reads what the
 * last one left in cache.
 *
 * Method: for each operation, size and placement (out of place, and in
 * place where NCCL has a form for it and there is more than one rank), the
 * inputs are filled with values
 * k/8 (|k| <= 8, a different pattern on every rank), the output poisoned
 * with NaN, the operation run once and every output element compared with
 * what it must be on the GPU (sums of such values are exact in float):
 * mismatches are the record's `wrong`. Then warm-up iterations, then
 * samples: CUDA events around a batch of back-to-back iterations on each
 * GPU's stream, the time per iteration the slowest GPU's; the median of the
 * samples is reported with all of them.
 *
 * SPDX-License-Identifier: MIT (calibrate/LICENSE) */
#include <cuda_runtime.h>
#include <nccl.h>
#ifdef CAPSIM_WITH_MPI
#define OMPI_SKIP_MPICXX 1 /* the C API only, from C++ too */
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <unistd.h>

#include "common.h"

extern char **environ;

static int use_mpi; /* --mpi: MPI is initialised; an error aborts every rank */

/* end the run: every rank of it under MPI */
static void die(void)
{
#ifdef CAPSIM_WITH_MPI
	if (use_mpi)
		MPI_Abort(MPI_COMM_WORLD, 1);
#endif
	exit(1);
}

#define CUDA_OK(x) check_cuda((x), #x, __FILE__, __LINE__)
#define NCCL_OK(x) check_nccl((x), #x, __FILE__, __LINE__)

static void check_cuda(cudaError_t e, const char *what, const char *file, int line)
{
	if (e != cudaSuccess) {
		fprintf(stderr, "%s:%d: %s: %s\n", file, line, what, cudaGetErrorString(e));
		die();
	}
}

static void check_nccl(ncclResult_t r, const char *what, const char *file, int line)
{
	if (r != ncclSuccess) {
		const char *last = ncclGetLastError(NULL);
		fprintf(stderr, "%s:%d: %s: %s%s%s\n", file, line, what, ncclGetErrorString(r),
			last && *last ? ": " : "", last ? last : "");
		die();
	}
}

/* ---- the operations ------------------------------------------------------ */

enum { ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER, ALLTOALL, BROADCAST, SENDRECV, NOPS };

/* per_rank: the count is one rank's share (bytes = count x ranks x 4);
 * in_place: NCCL has an in-place form; bus_num: busbw = algbw x bus_num
 * (n-1)/n, or x 1 when 0 */
static const struct {
	const char *name, *redop;
	int per_rank, in_place, bus_num;
} ops[NOPS] = {
	{ "all_reduce", "sum", 0, 1, 2 },     { "all_gather", "none", 1, 1, 1 },
	{ "reduce_scatter", "sum", 1, 1, 1 }, { "alltoall", "none", 1, 0, 1 },
	{ "broadcast", "none", 0, 1, 0 },     { "sendrecv", "none", 0, 0, 0 },
};

static double bus_factor(int op, int n)
{
	return ops[op].bus_num ? ops[op].bus_num * (double)(n - 1) / n : 1.0;
}

/* elements in a rank's input and output buffers for NCCL count c */
static void buffer_counts(int op, size_t c, int n, size_t *in, size_t *out)
{
	*in = *out = c;
	if (op == ALL_GATHER)
		*out = c * n;
	else if (op == REDUCE_SCATTER)
		*in = c * n;
	else if (op == ALLTOALL)
		*in = *out = c * n;
}

/* ---- values and the check, on the GPU ----------------------------------- */

/* rank r's input element i: k/8 with |k| <= 8, from a hash (sums of up to
 * 2^20 of them are exact in float) */
__host__ __device__ static inline float value_at(uint64_t i, int r)
{
	uint64_t x = i * 0x9E3779B97F4A7C15ull + (uint64_t)r * 0xD1B54A32D192ED03ull + 1;
	x ^= x >> 31;
	x *= 0xBF58476D1CE4E5B9ull;
	x ^= x >> 29;
	return (float)((int)(x % 17u) - 8) / 8.0f;
}

__global__ static void fill(float *p, size_t n, int r)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		p[i] = value_at(i, r);
}

/* what output element i of rank r must hold after op with count c over n
 * ranks (broadcast's root is rank 0; sendrecv receives from rank r - 1) */
__device__ static float expected(int op, size_t i, size_t c, int r, int n)
{
	float s = 0;
	switch (op) {
	case ALL_REDUCE:
		for (int q = 0; q < n; q++)
			s += value_at(i, q);
		return s;
	case ALL_GATHER: return value_at(i % c, (int)(i / c));
	case REDUCE_SCATTER:
		for (int q = 0; q < n; q++)
			s += value_at((size_t)r * c + i, q);
		return s;
	case ALLTOALL: return value_at((size_t)r * c + i % c, (int)(i / c));
	case BROADCAST: return value_at(i, 0);
	default: return value_at(i, (r + n - 1) % n);
	}
}

/* adds to *wrong the elements of out[0, len) that differ from expected */
__global__ static void check(const float *out, size_t len, int op, size_t c, int r, int n,
			     unsigned long long *wrong)
{
	unsigned long long bad = 0;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < len;
	     i += (size_t)gridDim.x * blockDim.x)
		bad += !(out[i] == expected(op, i, c, r, n)); /* NaN counts */
	if (bad)
		atomicAdd(wrong, bad);
}

/* ---- the GPUs this process drives --------------------------------------- */

typedef struct gpu {
	int dev, rank;
	ncclComm_t comm;
	cudaStream_t stream;
	cudaEvent_t e0, e1;
	float *send, *recv;	    /* cap elements each */
	unsigned long long *wrong; /* device counter for the check */
} gpu;

typedef struct world {
	gpu *g;
	int ng;		   /* GPUs in this process */
	int ranks, nodes;  /* in the whole run */
	int writer;	   /* this process writes the output */
	size_t cap;	   /* elements in each buffer */
	const char *launcher;
} world;

/* One operation on one GPU, inside the caller's NCCL group. shift: the
 * offset (elements) of this iteration in the buffers. */
static void launch(const world *w, const gpu *g, int op, size_t c, int in_place, size_t shift)
{
	int n = w->ranks, r = g->rank;
	float *s = g->send + shift, *d = g->recv + shift;
	switch (op) {
	case ALL_REDUCE:
		NCCL_OK(ncclAllReduce(in_place ? d : s, d, c, ncclFloat, ncclSum, g->comm,
				      g->stream));
		break;
	case ALL_GATHER:
		NCCL_OK(ncclAllGather(in_place ? d + (size_t)r * c : s, d, c, ncclFloat, g->comm,
				      g->stream));
		break;
	case REDUCE_SCATTER:
		if (in_place)
			NCCL_OK(ncclReduceScatter(d, d + (size_t)r * c, c, ncclFloat, ncclSum,
						  g->comm, g->stream));
		else
			NCCL_OK(ncclReduceScatter(s, d, c, ncclFloat, ncclSum, g->comm,
						  g->stream));
		break;
	case ALLTOALL:
		NCCL_OK(ncclGroupStart());
		for (int p = 0; p < n; p++) {
			NCCL_OK(ncclSend(s + (size_t)p * c, c, ncclFloat, p, g->comm, g->stream));
			NCCL_OK(ncclRecv(d + (size_t)p * c, c, ncclFloat, p, g->comm, g->stream));
		}
		NCCL_OK(ncclGroupEnd());
		break;
	case BROADCAST:
		NCCL_OK(ncclBroadcast(in_place ? d : s, d, c, ncclFloat, 0, g->comm, g->stream));
		break;
	default: /* sendrecv: to the next rank, from the previous (to self when alone) */
		NCCL_OK(ncclGroupStart());
		NCCL_OK(ncclSend(s, c, ncclFloat, (r + 1) % n, g->comm, g->stream));
		NCCL_OK(ncclRecv(d, c, ncclFloat, (r + n - 1) % n, g->comm, g->stream));
		NCCL_OK(ncclGroupEnd());
	}
}

/* one iteration: the operation on every GPU of this process, one group */
static void iteration(const world *w, int op, size_t c, int in_place, size_t shift)
{
	NCCL_OK(ncclGroupStart());
	for (int i = 0; i < w->ng; i++)
		launch(w, &w->g[i], op, c, in_place, shift);
	NCCL_OK(ncclGroupEnd());
}

/* The check: fill, poison, run once, compare. Returns the mismatched
 * elements over every rank. */
static unsigned long long check_once(const world *w, int op, size_t c, int in_place)
{
	int n = w->ranks;
	size_t nin, nout;
	buffer_counts(op, c, n, &nin, &nout);
	for (int i = 0; i < w->ng; i++) {
		const gpu *g = &w->g[i];
		CUDA_OK(cudaSetDevice(g->dev));
		CUDA_OK(cudaMemsetAsync(g->recv, 0xff, nout * sizeof(float), g->stream));
		CUDA_OK(cudaMemsetAsync(g->wrong, 0, sizeof *g->wrong, g->stream));
		float *in = g->send;
		if (in_place && op == ALL_GATHER)
			in = g->recv + (size_t)g->rank * c;
		else if (in_place)
			in = g->recv;
		/* in-place broadcast: only the root's buffer holds an input */
		if (!(in_place && op == BROADCAST && g->rank != 0))
			fill<<<1024, 256, 0, g->stream>>>(in, nin, g->rank);
		CUDA_OK(cudaGetLastError());
	}
	iteration(w, op, c, in_place, 0);
	unsigned long long wrong = 0;
	for (int i = 0; i < w->ng; i++) {
		const gpu *g = &w->g[i];
		CUDA_OK(cudaSetDevice(g->dev));
		const float *out = g->recv;
		size_t len = nout;
		if (op == REDUCE_SCATTER && in_place)
			out = g->recv + (size_t)g->rank * c;
		check<<<1024, 256, 0, g->stream>>>(out, len, op, c, g->rank, n, g->wrong);
		CUDA_OK(cudaGetLastError());
		unsigned long long here = 0;
		CUDA_OK(cudaMemcpyAsync(&here, g->wrong, sizeof here, cudaMemcpyDeviceToHost,
					g->stream));
		CUDA_OK(cudaStreamSynchronize(g->stream));
		wrong += here;
	}
#ifdef CAPSIM_WITH_MPI
	if (use_mpi) {
		unsigned long long all = 0;
		MPI_Allreduce(&wrong, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
		wrong = all;
	}
#endif
	return wrong;
}

/* the largest of each process's value, over the run */
static double max_over_ranks(double v)
{
#ifdef CAPSIM_WITH_MPI
	if (use_mpi) {
		double m = v;
		MPI_Allreduce(&v, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
		return m;
	}
#endif
	return v;
}

/* ---- output -------------------------------------------------------------- */




/* s as a JSON string, quotes included */

/* NCCL_ALGO or NCCL_PROTO as set, or "default" */
static const char *forced(const char *var)
{
	const char *v = getenv(var);
	return v && *v ? v : "default";
}

static void machine(FILE *out, const world *w)
{
	int version;
	NCCL_OK(ncclGetVersion(&version));
	CUDA_OK(machine_head(out, "capsim-calibrate-nccl", w->g[0].dev));
	fprintf(out, ",\"nccl\":%d,\"ranks\":%d,\"nodes\":%d,\"launcher\":\"%s\",\"env\":{",
		version, w->ranks, w->nodes, w->launcher);
	int first = 1;
	for (char **e = environ; *e; e++) {
		const char *eq = strchr(*e, '=');
		if (strncmp(*e, "NCCL_", 5) || !eq)
			continue;
		char name[256];
		snprintf(name, sizeof name, "%.*s", (int)(eq - *e), *e);
		if (!first)
			fputc(',', out);
		print_json_string(out, name);
		fputc(':', out);
		print_json_string(out, eq + 1);
		first = 0;
	}
	fputs("}}\n", out);
	fflush(out);
}

/* ---- the sweep ----------------------------------------------------------- */

typedef struct sweep {
	size_t lo, hi;
	int factor, iters, warmup, samples;
} sweep;

/* One operation at one NCCL count and placement: checked, warmed up,
 * timed; one record from the writer. Returns the mismatched elements. */
static unsigned long long one_size(FILE *out, const world *w, const sweep *sw, int op, size_t c,
				   int in_place, double *busbw)
{
	int n = w->ranks;
	size_t nin, nout;
	buffer_counts(op, c, n, &nin, &nout);
	size_t span = nin > nout ? nin : nout, steps = w->cap / span;
	if (steps == 0)
		steps = 1;
	unsigned long long wrong = check_once(w, op, c, in_place);
	for (int i = 0; i < sw->warmup; i++)
		iteration(w, op, c, in_place, span * (i % steps));
	double *v = (double *)malloc(sizeof(double) * sw->samples);
	for (int s = 0; s < sw->samples; s++) {
		for (int i = 0; i < w->ng; i++) {
			CUDA_OK(cudaSetDevice(w->g[i].dev));
			CUDA_OK(cudaEventRecord(w->g[i].e0, w->g[i].stream));
		}
		for (int it = 0; it < sw->iters; it++)
			iteration(w, op, c, in_place, span * ((size_t)(s * sw->iters + it) % steps));
		for (int i = 0; i < w->ng; i++) { /* every end event queued before any wait */
			CUDA_OK(cudaSetDevice(w->g[i].dev));
			CUDA_OK(cudaEventRecord(w->g[i].e1, w->g[i].stream));
		}
		double slowest = 0;
		for (int i = 0; i < w->ng; i++) {
			float ms;
			CUDA_OK(cudaEventSynchronize(w->g[i].e1));
			CUDA_OK(cudaEventElapsedTime(&ms, w->g[i].e0, w->g[i].e1));
			if (ms * 1e-3 > slowest)
				slowest = ms * 1e-3;
		}
		v[s] = max_over_ranks(slowest) / sw->iters;
	}
	size_t bytes = span * sizeof(float);
	if (w->writer) {
		fprintf(out, "{\"kind\":\"nccl\",\"op\":\"%s\",\"dtype\":\"float\",\"redop\":\"%s\","
			"\"ranks\":%d,\"nodes\":%d,\"bytes\":%zu,\"count\":%zu,\"algo\":",
			ops[op].name, ops[op].redop, n, w->nodes, bytes, c);
		print_json_string(out, forced("NCCL_ALGO"));
		fputs(",\"proto\":", out);
		print_json_string(out, forced("NCCL_PROTO"));
		fprintf(out, ",\"in_place\":%d,\"samples_s\":", in_place);
		print_samples(out, v, sw->samples);
		double med = median(v, sw->samples), algbw = (double)bytes / med / 1e9;
		*busbw = algbw * bus_factor(op, n);
		fprintf(out, ",\"median_s\":%.9g,\"algbw_gb_per_s\":%.9g,\"busbw_gb_per_s\":%.9g,"
			"\"wrong\":%llu}\n", med, algbw, *busbw, wrong);
		fflush(out);
	}
	free(v);
	return wrong;
}

/* the NCCL count for nominal size b bytes: b / 4 floats, or for the
 * per-rank operations each rank's share rounded down to 4 elements */
static size_t count_for(int op, size_t b, int n)
{
	if (!ops[op].per_rank)
		return b / sizeof(float);
	return b / sizeof(float) / (size_t)n / 4 * 4;
}

/* Every size of one operation and placement; returns the mismatches. */
static unsigned long long sweep_op(FILE *out, const world *w, const sweep *sw, int op,
				   int in_place)
{
	unsigned long long wrong = 0;
	size_t last = 0, sizes = 0, top = 0;
	double busbw = 0;
	for (size_t b = sw->lo; b <= sw->hi; b *= (size_t)sw->factor) {
		size_t c = count_for(op, b, w->ranks);
		if (c > 0 && c != last) {
			wrong += one_size(out, w, sw, op, c, in_place, &busbw);
			last = c;
			sizes++;
			top = b;
		}
		if (b > sw->hi / (size_t)sw->factor)
			break;
	}
	if (w->writer)
		fprintf(stderr, "  %s %s: %zu sizes, busbw %.4g GB/s at %zu B%s\n", ops[op].name,
			in_place ? "in place" : "out of place", sizes, busbw, top,
			wrong ? ", WRONG RESULTS" : "");
	return wrong;
}

/* ---- set-up ---------------------------------------------------------------- */

/* "8", "4K", "128M", "4G" (binary multiples); 0 when malformed */
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

/* every GPU's buffers, stream, events and counter, for max_bytes sweeps */
static void gpu_setup(gpu *g, size_t cap)
{
	CUDA_OK(cudaSetDevice(g->dev));
	CUDA_OK(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking));
	CUDA_OK(cudaEventCreate(&g->e0));
	CUDA_OK(cudaEventCreate(&g->e1));
	CUDA_OK(cudaMalloc(&g->send, cap * sizeof(float)));
	CUDA_OK(cudaMalloc(&g->recv, cap * sizeof(float)));
	CUDA_OK(cudaMalloc(&g->wrong, sizeof *g->wrong));
}

static void gpu_free(gpu *g)
{
	cudaSetDevice(g->dev);
	ncclCommDestroy(g->comm);
	cudaFree(g->send);
	cudaFree(g->recv);
	cudaFree(g->wrong);
	cudaEventDestroy(g->e0);
	cudaEventDestroy(g->e1);
	cudaStreamDestroy(g->stream);
}

/* one process, ngpus GPUs (0 or fewer: every visible one) */
static void world_single(world *w, int ngpus)
{
	int nd = 0;
	CUDA_OK(cudaGetDeviceCount(&nd));
	if (ngpus > nd) {
		fprintf(stderr, "--gpus: %d asked, %d visible\n", ngpus, nd);
		exit(2);
	}
	w->ng = w->ranks = ngpus > 0 ? ngpus : nd;
	w->nodes = 1;
	w->writer = 1;
	w->launcher = "single-process";
	w->g = (gpu *)calloc((size_t)w->ng, sizeof *w->g);
	ncclComm_t *comms = (ncclComm_t *)calloc((size_t)w->ng, sizeof *comms);
	int *devs = (int *)calloc((size_t)w->ng, sizeof *devs);
	for (int i = 0; i < w->ng; i++)
		devs[i] = i;
	NCCL_OK(ncclCommInitAll(comms, w->ng, devs));
	for (int i = 0; i < w->ng; i++) {
		w->g[i].dev = i;
		w->g[i].rank = i;
		w->g[i].comm = comms[i];
	}
	free(comms);
	free(devs);
}

#ifdef CAPSIM_WITH_MPI
/* one MPI rank a GPU: the node-local rank picks the GPU */
static void world_mpi(world *w)
{
	int rank, size, lrank, lsize, leader, nd = 0;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm local;
	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local);
	MPI_Comm_rank(local, &lrank);
	MPI_Comm_size(local, &lsize);
	MPI_Comm_free(&local);
	leader = lrank == 0;
	MPI_Allreduce(&leader, &w->nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	CUDA_OK(cudaGetDeviceCount(&nd));
	if (nd > 1 && lsize > nd) {
		fprintf(stderr, "rank %d: %d ranks on this node, %d GPUs visible: one rank a GPU\n",
			rank, lsize, nd);
		die();
	}
	int dev = nd == 1 ? 0 : lrank; /* one GPU visible: the launcher bound it */
	w->ng = 1;
	w->ranks = size;
	w->writer = rank == 0;
	w->launcher = "mpi";
	w->g = (gpu *)calloc(1, sizeof *w->g);
	w->g[0].dev = dev;
	w->g[0].rank = rank;
	ncclUniqueId id;
	if (rank == 0)
		NCCL_OK(ncclGetUniqueId(&id));
	MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
	CUDA_OK(cudaSetDevice(dev));
	NCCL_OK(ncclCommInitRank(&w->g[0].comm, size, id, rank));
}
#endif

static void usage(void)
{
	fprintf(stderr,
		"usage: capsim-calibrate-nccl [--ops all_reduce,all_gather,reduce_scatter,"
		"alltoall,broadcast,sendrecv]\n"
		"       [--min-bytes 8] [--max-bytes 4G] [--factor 2] [--iters 20] [--warmup 5]\n"
		"       [--samples 10] [--gpus N] [--mpi] [--out FILE.jsonl]\n");
	exit(2);
}

/* 1 if op's name is in the comma-separated list */
static int listed(const char *list, const char *name)
{
	size_t len = strlen(name);
	for (const char *p = list; *p;) {
		size_t l = strcspn(p, ",");
		if (l == len && !strncmp(p, name, len))
			return 1;
		p += l + (p[l] == ',');
	}
	return 0;
}

/* every name of the list is an operation's; else a message and exit 2 */
static void check_ops(const char *list)
{
	for (const char *p = list; *p;) {
		size_t l = strcspn(p, ","), i = 0;
		while (i < NOPS && !(strlen(ops[i].name) == l && !strncmp(p, ops[i].name, l)))
			i++;
		if (i == NOPS) {
			fprintf(stderr, "--ops: expected all_reduce, all_gather, reduce_scatter, "
					"alltoall, broadcast or sendrecv, found '%.*s'\n", (int)l, p);
			exit(2);
		}
		p += l + (p[l] == ',');
	}
}

/* the command line's choices */
typedef struct options {
	const char *list; /* the operations, comma-separated */
	const char *path; /* --out, or NULL: standard output */
	sweep sw;
	int ngpus;        /* --gpus, 0: every visible one */
} options;

/* argv into o, checked; 0, or 2 (the exit status) after a message */
static int parse_options(int argc, char **argv, options *o)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--ops") && i + 1 < argc)
			o->list = argv[++i];
		else if (!strcmp(argv[i], "--min-bytes") && i + 1 < argc)
			o->sw.lo = parse_bytes(argv[++i]);
		else if (!strcmp(argv[i], "--max-bytes") && i + 1 < argc)
			o->sw.hi = parse_bytes(argv[++i]);
		else if (!strcmp(argv[i], "--factor") && i + 1 < argc)
			o->sw.factor = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
			o->sw.iters = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--warmup") && i + 1 < argc)
			o->sw.warmup = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--samples") && i + 1 < argc)
			o->sw.samples = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--gpus") && i + 1 < argc)
			o->ngpus = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--out") && i + 1 < argc)
			o->path = argv[++i];
		else if (!strcmp(argv[i], "--mpi"))
			use_mpi = 1;
		else
			usage();
	}
	check_ops(o->list);
	const sweep *sw = &o->sw;
	if (sw->lo < 4 || sw->hi < sw->lo || sw->hi > ((size_t)64 << 30)) {
		fprintf(stderr, "--min-bytes, --max-bytes: expected 4 <= min <= max <= 64G\n");
		return 2;
	}
	if (sw->factor < 2 || sw->iters < 1 || sw->iters > 100000 || sw->warmup < 0 ||
	    sw->samples < 1 || sw->samples > 10000) {
		fprintf(stderr, "--factor: expected 2 or more; --iters: 1 to 100000; --warmup: 0 "
				"or more; --samples: 1 to 10000\n");
		return 2;
	}
	return 0;
}

/* 0 when this process may drive the GPUs as launched, else 2 after a
 * message: --mpi needs MPI built in, and MPI ranks need --mpi */
static int check_launch(void)
{
#ifndef CAPSIM_WITH_MPI
	if (use_mpi) {
		fprintf(stderr, "--mpi: this capsim-calibrate-nccl was built without MPI\n");
		return 2;
	}
#endif
	const char *launched = getenv("OMPI_COMM_WORLD_SIZE");
	if (!launched)
		launched = getenv("PMI_SIZE");
	if (!use_mpi && launched && atoi(launched) > 1) {
		fprintf(stderr, "started as %s MPI ranks without --mpi: each would drive every GPU; "
				"add --mpi, or run one process\n", launched);
		return 2;
	}
	return 0;
}

int main(int argc, char **argv)
{
	options o = { "all_reduce,all_gather,reduce_scatter,alltoall,broadcast,sendrecv", NULL,
		      { 8, (size_t)4 << 30, 2, 20, 5, 10 }, 0 };
	if (parse_options(argc, argv, &o) != 0 || check_launch() != 0)
		return 2;
	const char *list = o.list, *path = o.path;
	const sweep sw = o.sw;
	int ngpus = o.ngpus;
	/* NVLink SHARP (NVLS) stays off unless the environment sets
	 * NCCL_NVLS_ENABLE itself: the machines this was written for need it
	 * off. The value used goes into the machine line's env. */
	setenv("NCCL_NVLS_ENABLE", "0", 0);
	world w;
	memset(&w, 0, sizeof w);
#ifdef CAPSIM_WITH_MPI
	if (use_mpi)
		MPI_Init(&argc, &argv);
#endif
	int nd = 0;
	cudaError_t e = cudaGetDeviceCount(&nd);
	if (e != cudaSuccess || nd == 0) {
		fprintf(stderr, "capsim-calibrate-nccl: no CUDA GPU visible (%s)\n",
			e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
		die();
	}
#ifdef CAPSIM_WITH_MPI
	if (use_mpi)
		world_mpi(&w);
	else
#endif
		world_single(&w, ngpus);
	FILE *out = NULL;
	if (w.writer) {
		out = path ? fopen(path, "w") : stdout;
		if (!out) {
			perror(path);
			die();
		}
		machine(out, &w);
		fprintf(stderr, "capsim-calibrate-nccl: %d ranks on %d nodes (%s), %zu B to %zu B\n",
			w.ranks, w.nodes, w.launcher, sw.lo, sw.hi);
	}
	w.cap = (sw.hi + sizeof(float) - 1) / sizeof(float);
	for (int i = 0; i < w.ng; i++)
		gpu_setup(&w.g[i], w.cap);
	unsigned long long wrong = 0;
	for (int op = 0; op < NOPS; op++) {
		if (!listed(list, ops[op].name))
			continue;
		wrong += sweep_op(out, &w, &sw, op, 0);
		/* at one rank NCCL does no GPU work in place: nothing to time */
		if (ops[op].in_place && w.ranks > 1)
			wrong += sweep_op(out, &w, &sw, op, 1);
	}
	if (w.writer && w.ranks == 1)
		fprintf(stderr, "one rank: in-place forms skipped (NCCL does no work for them)\n");
	for (int i = 0; i < w.ng; i++)
		gpu_free(&w.g[i]);
	free(w.g);
	int status = 0;
	if (w.writer && path && fclose(out) != 0) {
		perror(path);
		status = 1;
	}
	if (wrong) {
		if (w.writer)
			fprintf(stderr, "capsim-calibrate-nccl: %llu wrong elements (see the records' "
					"\"wrong\")\n", wrong);
		status = 1;
	}
#ifdef CAPSIM_WITH_MPI
	if (use_mpi)
		MPI_Finalize();
#endif
	return status;
}
