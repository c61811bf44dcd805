/* profile.h - calibrated hardware profiles (hardware/calibrated/NAME.xml):
 * what `capsim fit` fitted to the measurement store for one GPU model, every
 * value with its residuals, its number of points and the database runs it
 * came from, and the machine those runs measured (driver, CUDA, cuBLASLt,
 * NCCL and the NCCL_* settings in force).
 *
 * A profile is read like every input file (src/io/xml.h): no DOCTYPE, size
 * capped, validated against the embedded profile.xsd, then checked for what
 * a schema cannot say (units, positive values, ranges, runs that exist),
 * every problem as "file:line: ...". Applied to a catalog GPU of the model it
 * was measured on, it fills that GPU's <efficiency> values and its
 * calibration (capsim_gpu.cal), which src/plan/ops.h uses.
 *
 * Format and meaning of each value: docs/model.md ("Calibrated profiles").
 * Quantities are in SI in the structs, with units in the file. */
#ifndef CAPSIM_PROFILE_H
#define CAPSIM_PROFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "diag.h"
#include "spec.h"

#define CAPSIM_PROFILE_MAX_RUNS 32   /* run ids behind one value */
#define CAPSIM_PROFILE_MAX_POINTS 256 /* measured GEMMs of one dtype */

/* Ids of the measurement store's runs (table runs) behind one value. */
typedef struct capsim_run_ids {
	size_t n;
	int64_t id[CAPSIM_PROFILE_MAX_RUNS];
} capsim_run_ids;

typedef struct capsim_profile_env {
	char name[CAPSIM_ID_LEN];     /* NCCL_ALGO */
	char value[CAPSIM_TEXT_LEN];  /* Ring */
} capsim_profile_env;

/* One calibrate run the profile rests on: a row of the store's runs table. */
typedef struct capsim_profile_run {
	int64_t id;
	char program[CAPSIM_ID_LEN];
	char date[CAPSIM_ID_LEN];        /* as recorded: 2026-12-02T11:29:31Z */
	char gpu[CAPSIM_TEXT_LEN];       /* NVML's name: NVIDIA H200 */
	char sha256[65];                 /* of the JSON-lines file imported */
	char source[CAPSIM_PATH_LEN];    /* that file, as imported */
	char cc[16];                     /* compute capability, "" unknown */
	long sms;                        /* 0: unknown, as the rest below */
	long cuda_driver, cuda_runtime;  /* CUDA API versions: 13000 is 13.0 */
	long cublaslt;                   /* 130100 is 13.1.0 */
	long nccl;                       /* ncclGetVersion: 22803 is 2.28.3 */
	long ranks, nodes;               /* of an NCCL run */
	char launcher[CAPSIM_ID_LEN];    /* single-process or mpi, "" */
	size_t n_env;
	capsim_profile_env *env;         /* NCCL_* variables set for the run */
} capsim_profile_run;

/* One measured GEMM behind a dtype's fit: the table's rows. */
typedef struct capsim_profile_point {
	double m, n, k;
	double frac;      /* measured rate over the dtype's dense peak */
	double ratio;     /* measured / the smooth model's prediction */
	int64_t run;
} capsim_profile_point;

/* A dtype's calibrated GEMM efficiency: the model (spec.h capsim_gemm_cal;
 * its table comes from the points) and how well it fits them. Residuals
 * are relative errors of the rate, model / measured - 1. cal.params 0: this
 * dtype was not fitted. */
typedef struct capsim_profile_gemm {
	capsim_gemm_cal cal;
	double rms, max_abs;             /* of the smooth model */
	double loo_rms, loo_max_abs;     /* the same, each point left out of its fit */
	double table_rms, table_max_abs; /* of smooth x correction: 0 unless one
					  * shape was measured differently twice */
	size_t n_points;
	capsim_profile_point *points;
	capsim_run_ids runs;
} capsim_profile_gemm;

/* t = latency + bytes / bandwidth over [bytes_min, bytes_max]; residuals
 * are relative errors of the time. */
typedef struct capsim_profile_ab {
	double latency_s, bw_bytes_per_s;
	double bytes_min, bytes_max;
	size_t points;
	double rms, max_abs;
} capsim_profile_ab;

typedef enum { CAPSIM_PCIE_H2D, CAPSIM_PCIE_D2H } capsim_pcie_dir;

typedef struct capsim_profile_pcie {
	capsim_profile_ab ab;            /* ab.points 0: not measured */
	capsim_run_ids runs;
} capsim_profile_pcie;

/* One NCCL collective under one algorithm, protocol and rank count:
 * regimes 1 or 2 (small messages, then large, split where regime[1]
 * begins). bytes are nccl-tests' size; bus_factor turns the algorithm
 * bandwidth into nccl-tests' bus bandwidth. */
typedef struct capsim_profile_coll {
	char op[CAPSIM_ID_LEN];          /* all_reduce */
	char algo[CAPSIM_ID_LEN];        /* default, or the forced NCCL_ALGO */
	char proto[CAPSIM_ID_LEN];       /* default, or the forced NCCL_PROTO */
	int ranks, nodes;
	double bus_factor;
	int regimes;
	capsim_profile_ab regime[2];
	capsim_run_ids runs;
} capsim_profile_coll;

/* Device-memory copy bandwidth (bytes read + written per second). */
typedef struct capsim_profile_hbm {
	double bw_bytes_per_s;           /* median over the points */
	double eff;                      /* over the datasheet bandwidth */
	size_t points;                   /* 0: not measured */
	double rms, max_abs;             /* relative deviations from the median */
	capsim_run_ids runs;
} capsim_profile_hbm;

/* Power and clocks: idle, under back-to-back GEMMs, and against
 * utilisation u (the fraction of time spent in GEMMs: 0 idle, 1 sustained,
 * the power-duty rows between). */
typedef struct capsim_profile_power {
	int present;
	double limit_w;
	double idle_w, idle_clock_hz;
	double sustained_w, sustained_clock_hz; /* medians under load */
	double sustained_flop_per_s;     /* median batch rate under load; 0 unknown */
	size_t points;                   /* (u, P) points of the curves */
	double lin_a_w, lin_b_w;         /* P = a + b u, least squares */
	double lin_rms_w, lin_max_w;
	double gamma;                    /* P = idle + (sustained - idle) u^gamma; 0: no duty rows */
	double gamma_rms_w, gamma_max_w;
	capsim_run_ids runs;
} capsim_profile_power;

/* One fused attention kernel's measured curve (calibrate/torch/attn_probe.py):
 * one point per (seq, head dim, mask), its rates the medians over the
 * records that measured it; curve.peak_bf16_flop_per_s is the datasheet
 * dense bf16 peak of the GPU measured. curve.n 0: not measured. */
typedef struct capsim_profile_attn {
	capsim_attn_curve curve;
	capsim_run_ids runs;
} capsim_profile_attn;

typedef struct capsim_profile {
	char name[CAPSIM_ID_LEN];
	char gpu[CAPSIM_ID_LEN];         /* catalog id it was measured on */
	char gpu_name[CAPSIM_TEXT_LEN];  /* as the runs name it */
	char date[CAPSIM_DATE_LEN];      /* of the newest run, YYYY-MM-DD */
	char created[CAPSIM_ID_LEN];     /* when fitted, UTC */
	char capsim[CAPSIM_TEXT_LEN];    /* capsim version that fitted it, or "" */
	char database[CAPSIM_PATH_LEN];  /* the store it was fitted from */
	char file[CAPSIM_PATH_LEN];      /* where it was loaded from, or "" */
	size_t n_runs;
	capsim_profile_run *runs;
	/* <efficiency>: the values capsim_gpu already knows; 0 where not measured */
	double eff_gemm, eff_gemm_fp8, eff_hbm;
	double eff_launch_s;             /* PyTorch eager's host cost per kernel (torch-launch) */
	/* the host stream (docs/model.md): host work per kernel beyond the
	 * launch, eager and compiled, and the GPU's cost per kernel from a
	 * stream and from a graph (torch-step records); 0 where not measured */
	double eff_dispatch_s, eff_dispatch_compiled_s;
	double eff_kernel_gap_s, eff_launch_graph_s;
	capsim_run_ids eff_runs;
	/* <kernels>: an eager plain-PyTorch block's kernels, forward and
	 * backward, by norm family (0 LayerNorm, 1 RMSNorm; torch-host
	 * records); 0 where not measured */
	double block_kernels[2][2];
	capsim_run_ids kernel_runs;
	capsim_profile_gemm gemm[CAPSIM_CAL_DTYPES]; /* by capsim_dtype */
	capsim_profile_hbm hbm;
	capsim_profile_pcie pcie[2];     /* by capsim_pcie_dir */
	size_t n_coll;
	capsim_profile_coll *coll;
	capsim_profile_power power;
	capsim_profile_attn attn[CAPSIM_ATTN__KERNELS]; /* by capsim_attn_kernel */
	size_t n_notes;
	char **notes;                    /* what the fit refused, held or assumed */
} capsim_profile;

/* Read and check the profile at path into *out (zeroed first). Returns 0,
 * or -1 after adding every problem to d; *out then holds nothing to free. */
int capsim_profile_load(const char *path, capsim_profile *out,
			capsim_diags *d);

/* The same for a file's text in memory; name is used in messages. */
int capsim_profile_load_memory(const char *buf, size_t len, const char *name,
			       capsim_profile *out, capsim_diags *d);

/* Give g (a GPU of the catalog model p->gpu) what p measured: the
 * <efficiency> values it holds (the rest of g's stay), every fitted dtype's
 * GEMM model, the power figures and every measured attention curve into
 * g->cal. A profile measured on another GPU model is refused, naming both,
 * and g is left as it was.
 * Returns 0, or -1 after adding the reason to d. */
int capsim_profile_apply(const capsim_profile *p, capsim_gpu *g,
			 capsim_diags *d);

/* Write p as XML that capsim_profile_load reads back to the same values
 * (to 12 significant digits). Returns 0, or -1 on a write error. */
int capsim_profile_write(const capsim_profile *p, FILE *f);

/* Write p to path atomically: a temporary file in the same directory,
 * flushed to disk, read back and checked with capsim_profile_load, then
 * renamed over path; never a half-written file. An existing path is
 * refused unless force. Returns 0, or -1 after adding the reason to d. */
int capsim_profile_save(const capsim_profile *p, const char *path, int force,
			capsim_diags *d);

/* Fill g->cal's table (square sizes) and shapes from g->points' ratios,
 * the ratios of one shape combined by their geometric mean, with their
 * least and greatest (shape_lo, shape_hi). Returns the
 * number of shapes or square sizes beyond CAPSIM_CAL_SHAPES or
 * CAPSIM_CAL_TABLE, left out of the lookup (0 normally). */
int capsim_profile_gemm_tables(capsim_profile_gemm *g);

/* Add id to r unless it is there; ids beyond CAPSIM_PROFILE_MAX_RUNS are
 * dropped. */
void capsim_run_ids_add(capsim_run_ids *r, int64_t id);

/* Add a note (printf format) to p, kept in the file as <note>. */
void capsim_profile_note(capsim_profile *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Release what p holds (not p itself); p is zeroed. */
void capsim_profile_free(capsim_profile *p);

#endif
