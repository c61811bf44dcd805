/* query.h - the store's measurements read back as plain C rows, for the fit
 * (src/fit) and the GPU checks of verify (src/verify). Every read fills an
 * array that the caller owns and frees with the kind's _free function
 * (which also takes a zeroed or already freed one); on failure the array is
 * empty. A table an older database lacks reads as no rows. Units are the
 * store's: bytes, seconds, FLOP, watts, MHz, GB/s (1e9 B/s) where named. */
#ifndef CAPSIM_QUERY_H
#define CAPSIM_QUERY_H

#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "store.h"

/* Which rows a read returns: those of the runs listed (NULL or n_runs 0:
 * every run), of the runs whose GPU (NVML's name, runs.gpu) is gpu (NULL:
 * any) and, for kinds that have one, of the dtype (NULL: any). The strings
 * and the array are the caller's. */
typedef struct capsim_store_sel {
	const int64_t *runs;
	size_t n_runs;
	const char *gpu;
	const char *dtype;
} capsim_store_sel;

/* ---- runs ------------------------------------------------------------------ */

typedef struct capsim_store_env {
	char name[64];                /* NCCL_ALGO */
	char value[256];              /* Ring */
} capsim_store_env;

typedef struct capsim_store_run {
	int64_t id;
	char sha256[65];              /* of the imported file's bytes */
	char source[1024];            /* that file, as imported */
	char program[128];            /* capsim-calibrate-gemm, nccl-tests all_reduce_perf */
	char date[64];                /* as recorded: 2026-12-02T11:29:31Z */
	char gpu[128];                /* NVML's name: NVIDIA H200 */
	char cc[16];                  /* compute capability, "" unknown */
	long sms, cuda_driver, cuda_runtime, cublaslt; /* 0 unknown */
	int64_t memory_bytes;         /* 0 unknown */
	long nccl, ranks, nodes;      /* schema 2 on; 0 unknown */
	char launcher[32];            /* single-process, mpi or "" */
	capsim_store_env *env;        /* the run's NCCL_* settings, owned by the array */
	size_t n_env;
} capsim_store_run;

typedef struct capsim_store_runs {
	capsim_store_run *v;
	size_t n;
} capsim_store_runs;

/* The runs of sel (its dtype is not used), by id. A database without a runs
 * table is no measurement store: -1 after saying so. A run asked for by id
 * that is absent is no fault here: the caller compares. */
int capsim_store_read_runs(capsim_store *s, const capsim_store_sel *sel,
			   capsim_store_runs *out, capsim_diags *d);
void capsim_store_runs_free(capsim_store_runs *r);

/* ---- GEMMs ------------------------------------------------------------------ */

typedef struct capsim_store_gemm {
	int64_t run_id;
	char dtype[16];               /* bf16, fp8, ... */
	int64_t m, n, k;
	double flop;                  /* 2 m n k (x batch) */
	double flop_per_s;            /* the median rate */
	int sustained;                /* 1: a power_sustained row, seconds of the
				       * GEMM back to back under the power cap */
} capsim_store_gemm;

typedef struct capsim_store_gemms {
	capsim_store_gemm *v;
	size_t n;
} capsim_store_gemms;

/* The gemm rows of sel and, with sustained set, the power_sustained rows
 * after them (the same kind of measurement, over seconds). */
int capsim_store_read_gemms(capsim_store *s, const capsim_store_sel *sel, int sustained,
			    capsim_store_gemms *out, capsim_diags *d);
void capsim_store_gemms_free(capsim_store_gemms *r);

/* ---- memory copies and PCIe ------------------------------------------------------ */

typedef struct capsim_store_copy {
	int64_t run_id;
	int64_t bytes, moved_bytes;   /* the buffer, and what a copy reads and writes */
	double median_s, bytes_per_s; /* bytes_per_s = moved_bytes / median_s */
} capsim_store_copy;

typedef struct capsim_store_copies {
	capsim_store_copy *v;
	size_t n;
} capsim_store_copies;

int capsim_store_read_copies(capsim_store *s, const capsim_store_sel *sel,
			     capsim_store_copies *out, capsim_diags *d);
void capsim_store_copies_free(capsim_store_copies *r);

typedef struct capsim_store_pcie {
	int64_t run_id;
	char direction[4];            /* h2d or d2h */
	int pinned;                   /* 1: page-locked host memory */
	int64_t bytes;
	double median_s, bytes_per_s;
} capsim_store_pcie;

typedef struct capsim_store_pcies {
	capsim_store_pcie *v;
	size_t n;
} capsim_store_pcies;

int capsim_store_read_pcie(capsim_store *s, const capsim_store_sel *sel,
			   capsim_store_pcies *out, capsim_diags *d);
void capsim_store_pcies_free(capsim_store_pcies *r);

/* ---- NCCL ------------------------------------------------------------------------ */

typedef struct capsim_store_nccl {
	int64_t run_id;
	char op[32];                  /* all_reduce ... sendrecv */
	char dtype[16], redop[16];
	char algo[32], proto[32];     /* default, or the forced NCCL_ALGO / NCCL_PROTO */
	int64_t ranks, nodes, bytes, count;
	int in_place;
	double median_s, algbw_gb_per_s, busbw_gb_per_s;
	int64_t wrong;                /* nccl-tests' #wrong */
} capsim_store_nccl;

typedef struct capsim_store_nccls {
	capsim_store_nccl *v;
	size_t n;
} capsim_store_nccls;

/* ordered by op, algo, proto, ranks, nodes, bytes (a group's rows together) */
int capsim_store_read_nccl(capsim_store *s, const capsim_store_sel *sel,
			   capsim_store_nccls *out, capsim_diags *d);
void capsim_store_nccls_free(capsim_store_nccls *r);

/* ---- power ------------------------------------------------------------------------ */

typedef struct capsim_store_power_idle {
	int64_t run_id;
	double power_limit_w, power_w, sm_mhz;
	int has_throttle;             /* 0: NVML gave no clock-event reasons */
	int64_t throttle_reasons;     /* NVML's bits: 1 GpuIdle, 4 SwPowerCap, ... */
} capsim_store_power_idle;

typedef struct capsim_store_power_idles {
	capsim_store_power_idle *v;
	size_t n;
} capsim_store_power_idles;

int capsim_store_read_power_idle(capsim_store *s, const capsim_store_sel *sel,
				 capsim_store_power_idles *out, capsim_diags *d);
void capsim_store_power_idles_free(capsim_store_power_idles *r);

/* one sustained phase (duty 1) or a duty phase: GEMMs for a fraction of
 * each 100 ms window; the medians of NVML's readings and the rate achieved */
typedef struct capsim_store_power_load {
	int64_t run_id;
	double duty;                  /* (0, 1]; 1 for a sustained phase */
	char dtype[16];
	int64_t m, n, k;              /* 0 where a duty row did not say */
	double median_power_w, median_sm_mhz;
	double flop_per_s;            /* sustained: median batch rate; duty: achieved */
	int sustained;                /* 1: from power_sustained, 0: power_duty */
} capsim_store_power_load;

typedef struct capsim_store_power_loads {
	capsim_store_power_load *v;
	size_t n;
} capsim_store_power_loads;

/* The power_sustained rows of sel with sustained set, else the power_duty ones. */
int capsim_store_read_power_load(capsim_store *s, const capsim_store_sel *sel, int sustained,
				 capsim_store_power_loads *out, capsim_diags *d);
void capsim_store_power_loads_free(capsim_store_power_loads *r);

/* ---- PyTorch (calibrate/torch/gpt2_step.py) --------------------------------------- */

typedef struct capsim_store_torch_launch {
	int64_t run_id;
	char op[64];
	int64_t elements, kernels;
	double host_median_s, total_median_s; /* per kernel */
} capsim_store_torch_launch;

typedef struct capsim_store_torch_launches {
	capsim_store_torch_launch *v;
	size_t n;
} capsim_store_torch_launches;

int capsim_store_read_torch_launch(capsim_store *s, const capsim_store_sel *sel,
				   capsim_store_torch_launches *out, capsim_diags *d);
void capsim_store_torch_launches_free(capsim_store_torch_launches *r);

typedef struct capsim_store_torch_step {
	int64_t run_id;
	char model[64], dtype[16], mode[32];
	int64_t micro_batch, seq, vocab; /* vocab 0: not stated */
	int ok;                       /* 0: error holds what stopped it (out of memory) */
	double median_s, tokens_per_s;
	int64_t peak_allocated_bytes, peak_reserved_bytes;
	char error[256];
	/* the host's view, where the record had it: issue time, one profiled
	 * step's kernels and their summed durations (-1, 0, -1: absent) */
	double issue_median_s, kernel_s;
	int64_t kernels;
} capsim_store_torch_step;

typedef struct capsim_store_torch_steps {
	capsim_store_torch_step *v;
	size_t n;
} capsim_store_torch_steps;

int capsim_store_read_torch_step(capsim_store *s, const capsim_store_sel *sel,
				 capsim_store_torch_steps *out, capsim_diags *d);
void capsim_store_torch_steps_free(capsim_store_torch_steps *r);

/* calibrate/torch/host_probe.py's block counts (ok rows only) */
typedef struct capsim_store_torch_host {
	int64_t run_id;
	char arch[16], mode[32];
	int64_t layers;
	int64_t kernels_fwd, kernels_bwd; /* eager, compile; 0 for graphs */
	double host_fwd_s, host_bwd_s;
} capsim_store_torch_host;

typedef struct capsim_store_torch_hosts {
	capsim_store_torch_host *v;
	size_t n;
} capsim_store_torch_hosts;

int capsim_store_read_torch_host(capsim_store *s, const capsim_store_sel *sel,
				 capsim_store_torch_hosts *out, capsim_diags *d);
void capsim_store_torch_hosts_free(capsim_store_torch_hosts *r);

/* ---- fused attention (calibrate/torch/attn_probe.py) ------------------------------ */

/* one timed shape (the shapes a backend refused are not read) */
typedef struct capsim_store_attention {
	int64_t run_id;
	char backend[16];             /* flash, cudnn, efficient or default */
	int64_t seq, heads, kv_heads, head_dim;
	int causal;
	double fwd_flop_per_s, bwd_flop_per_s; /* the medians' rates */
} capsim_store_attention;

typedef struct capsim_store_attentions {
	capsim_store_attention *v;
	size_t n;
} capsim_store_attentions;

/* in the order imported; a store older than version 6 has none */
int capsim_store_read_attention(capsim_store *s, const capsim_store_sel *sel,
				capsim_store_attentions *out, capsim_diags *d);
void capsim_store_attentions_free(capsim_store_attentions *r);

#endif
