/* verify.h - acceptance checks of a cluster: measured nccl-tests bus
 * bandwidths set against what capsim's collective model predicts for the
 * claimed cluster (the scenario), size by size, and a likely cause for a
 * shortfall. The cause comes from the same model run on the scenario's own
 * hardware degraded one way at a time (intra-node traffic over PCIe instead
 * of NVLink, k of the node's N NICs, TCP sockets instead of RDMA, GPUDirect
 * RDMA off): the degraded path whose busbw is nearest the measured one,
 * within a factor, names the cause. A measurements database (`capsim
 * calibrate import`) adds GPU checks: GEMM rates and copy bandwidth against
 * capsim's op model for the scenario's GPU, which catch throttled or
 * virtualised GPUs.
 *
 * Bandwidths are bytes/s; sizes are nccl-tests' sizes in bytes. */
#ifndef CAPSIM_VERIFY_H
#define CAPSIM_VERIFY_H

#include <stddef.h>

#include "catalog.h"
#include "diag.h"
#include "eval.h"
#include "nccltests.h"
#include "scenario.h"

typedef enum capsim_verify_cause {
	CAPSIM_CAUSE_NONE,        /* no shortfall */
	CAPSIM_CAUSE_PCIE,        /* GPUs of a node talk over PCIe, not NVLink */
	CAPSIM_CAUSE_FEWER_NICS,  /* k of the node's N NICs carry the traffic */
	CAPSIM_CAUSE_TCP,         /* NCCL's sockets instead of RDMA */
	CAPSIM_CAUSE_NO_GDR,      /* NIC traffic bounces through host memory */
	CAPSIM_CAUSE_GPU,         /* GPUs slower than the model: throttled or virtualised */
	CAPSIM_CAUSE_UNEXPLAINED, /* no single degraded path comes near */
	CAPSIM_CAUSE__COUNT
} capsim_verify_cause;

/* "none", "pcie-instead-of-nvlink", "fewer-nics", "tcp-fallback",
 * "no-gpudirect-rdma", "gpu-throttled-or-virtualised", "unexplained" */
extern const char *const capsim_verify_cause_names[CAPSIM_CAUSE__COUNT];

/* One degraded path and the busbw capsim predicts on it. */
typedef struct capsim_verify_path {
	int cause;                /* capsim_verify_cause */
	int k, of;                /* fewer NICs: k of `of` per node */
	double busbw_bytes_per_s;
	int algo, proto;          /* what the model chose on that path */
} capsim_verify_path;

typedef struct capsim_verify_diagnosis {
	int cause;
	int k, of;
	double bytes;             /* the size the diagnosis rests on */
	long line;                /* its row in the log */
	double measured_bytes_per_s, predicted_bytes_per_s, path_bytes_per_s;
	char text[160];           /* "fewer NICs than claimed (2 of 8 per node)" */
	char evidence[1024];      /* the numbers it rests on */
} capsim_verify_diagnosis;

/* Name the cause of a shortfall: among the n paths, the one whose busbw is
 * nearest `measured` by ratio, if within a factor `band` (> 1) either way;
 * otherwise CAPSIM_CAUSE_UNEXPLAINED, naming the nearest. Sets cause, k,
 * of, measured, predicted and path busbw and text; leaves evidence, bytes
 * and line to the caller. No model runs here. */
void capsim_verify_classify(double measured, double predicted,
			    const capsim_verify_path *paths, size_t n, double band,
			    capsim_verify_diagnosis *out);

/* The scenario under test and how to load it again with one more --set. */
typedef struct capsim_verify_ctx {
	const capsim_catalog *cat; /* for the degraded copies' edits */
	const capsim_scenario *s; /* the scenario as loaded, --set applied */
	capsim_cluster *cl;       /* s's cluster (capsim_cluster_open) */
} capsim_verify_ctx;

typedef struct capsim_verify_opts {
	double tolerance;         /* pass: measured >= (1 - tolerance) predicted */
	double min_bytes;         /* sizes from here count (the large-message
				   * regime); capped at the log's largest size */
	int algo, proto;          /* as the run forced them (NCCL_ALGO,
				   * NCCL_PROTO); -1: NCCL's choice */
	double band;              /* diagnosis: a path within this factor */
} capsim_verify_opts;

/* 15%, 1 GiB, NCCL's choice, a factor 1.25 */
void capsim_verify_opts_default(capsim_verify_opts *o);

/* The busbw of every degraded path that applies to op at bytes on ranks:
 * PCIe (when the node has NVLink and a node holds more than one rank), and
 * for several nodes k = 1..N-1 of the N NICs per node, TCP sockets (unless
 * the fabric is TCP already) and GPUDirect RDMA off (unless it is off). A
 * copy of the scenario that does not load, or where a forced algorithm does
 * not apply, is left out. Writes up to max paths; returns how many. */
size_t capsim_verify_paths(const capsim_verify_ctx *c, int op, double bytes,
			   int ranks, int algo, int proto, capsim_verify_path *out,
			   size_t max);

typedef struct capsim_verify_check {
	double bytes;
	long line;
	double measured_bytes_per_s;  /* out-of-place busbw */
	double predicted_bytes_per_s;
	int algo, proto;              /* as capsim predicts them */
	int checked;                  /* in the large-message regime: counts */
	int pass;
} capsim_verify_check;

#define CAPSIM_VERIFY_NOTES 4

typedef struct capsim_verify_result {
	char file[1024];
	char sha256[65];              /* of the log's bytes ("" if unread) */
	int op, ranks, hosts, nodes;  /* nodes: as capsim fills them */
	char device[CAPSIM_NCCLTESTS_NAME_LEN];
	capsim_verify_check *checks;
	size_t n_checks, n_checked, n_failed;
	double min_checked_bytes;
	int pass;
	int diagnosed;                /* diag holds a cause (the log failed) */
	capsim_verify_diagnosis diag;
	char notes[CAPSIM_VERIFY_NOTES][256]; /* placement or GPU mismatches */
	int n_notes;
} capsim_verify_result;

/* Check every row of log against the model on c's scenario and, where a
 * checked row fails, diagnose the largest failing size. Errors (more ranks
 * than the scenario has GPUs, a variant that does not load) go to d;
 * returns 0 or -1. Free out with capsim_verify_result_free. */
int capsim_verify_log(const capsim_verify_ctx *c, const capsim_nccltests_log *log,
		      const capsim_verify_opts *o, capsim_verify_result *out,
		      capsim_diags *d);
void capsim_verify_result_free(capsim_verify_result *r);

/* GPU checks from a measurements database: the median ratio of measured to
 * predicted rate over GEMMs of at least 1e11 FLOP, and the best copy
 * bandwidth against the scenario GPU's HBM bandwidth x capsim's efficiency. */
typedef struct capsim_verify_gpu {
	char db_gpu[CAPSIM_NCCLTESTS_NAME_LEN]; /* runs.gpu of the first run */
	size_t gemms;                 /* large GEMMs compared */
	double gemm_ratio;            /* median measured / predicted; 0 if none */
	double copy_bytes_per_s, copy_predicted_bytes_per_s; /* 0 if none */
	double sm_mhz, clock_max_mhz; /* sustained median, datasheet; 0 if none */
	int pass;
	capsim_verify_diagnosis diag; /* cause NONE or GPU */
} capsim_verify_gpu;

/* Read db_path (read-only, through the store's query.h) and check the
 * scenario's GPU. A missing file or table, or no GEMM or copy rows, goes to
 * d: returns -1; else 0 with out filled. */
int capsim_verify_gpu_db(const char *db_path, const capsim_scenario *s,
			 double tolerance, capsim_verify_gpu *out, capsim_diags *d);

/* bytes as sizes are usually written: whole TiB, GiB, MiB or KiB where
 * exact ("128 MiB"), else bytes ("1000000 B"). */
void capsim_verify_format_size(double bytes, char *buf, size_t len);

#endif
