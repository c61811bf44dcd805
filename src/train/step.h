/* step.h - one training step of a scenario's workload on its cluster: the
 * layers' kernels timed by the GPU op model (ops.h), tensor-, context- and
 * expert-parallel collectives and data-parallel gradient reduction simulated
 * on the fabric (collective.h), the pipeline schedule run on the event engine
 * (schedule.h), memory from memory.h. Ranks are folded: tensor-parallel
 * groups and data-parallel replicas behave alike, so one replica's pipeline is
 * simulated; pipeline stages never fold together. Mixed node types, a
 * straggler and jitter unfold the replicas into classes that differ (all of
 * them with jitter); the slowest sets the step. With workload.variability
 * the step then waits for the expected slowest of its ranks (vary.h).
 *
 * All times in seconds. Equations and what is left out: docs/model.md
 * ("Training step"). */
#ifndef CAPSIM_STEP_H
#define CAPSIM_STEP_H

#include <stdio.h>

#include "diag.h"
#include "fabric.h"
#include "knobs.h"
#include "loader.h"
#include "memory.h"
#include "schedule.h"
#include "spec.h"

/* The most loaded link of one collective: its kind and what one physical
 * link of that kind carries. */
typedef struct capsim_step_link {
	const char *kind; /* a capsim_link_kind_names entry; NULL: no collective */
	double bytes;
	/* a collective of these ran as an approximation past the flow limit:
	 * the first one's statement (capsim_coll_result.approximation); NULL: none */
	const char *approximation;
} capsim_step_link;

typedef struct capsim_step {
	double step_time_s;
	double tokens_per_step, tokens_per_s;
	double mfu;                    /* model FLOPs / (bf16 dense peak x GPUs x step) */
	double model_flops_per_step;
	double compute_s;              /* kernels on the busiest stage, per step */
	double compute_tensor_flop;    /* their FLOP on one GPU of that stage, recomputation included */
	double exposed_comm_s;         /* sum of the kinds below */
	double exposed_comm_tp_s, exposed_comm_cp_s, exposed_comm_pp_s;
	double exposed_comm_dp_s, exposed_comm_ep_s;
	double bubble_s;               /* pipeline idle on the busiest stage */
	double data_read_s;            /* reading one step's tokens from storage */
	double data_stall_s;           /* what of it the loader's prefetch does not hide */
	capsim_loader loader;          /* how: bytes, files, the tier's limits (loader.h) */
	double optimizer_s;
	char attention_kernel[64];     /* the fused attention kernel whose curve rated the
					* first GPU's attention, and whose curve ("flash2",
					* "cudnn (H100's curve)"); "" when unfused or a flat
					* efficiency.attention */
	double host_s;                 /* what the host stream adds to the critical stage's
					* kernels (issuing them more slowly than they run) */
	/* runtime variability (workload.variability, vary.h): the kernel time on
	 * the critical path it scales (compute and bubble), the ranks that
	 * synchronise, the coefficient of variation of their kernel rate, what
	 * their expected slowest adds to the step (in step_time_s) and the
	 * step's standard deviation from it; all 0 when it is off */
	double variability_kernel_s, variability_cv;
	long variability_ranks;
	double variability_s, step_time_sd_s;
	double steps, time_to_train_s; /* to the token budget */
	int microbatches;
	int critical_stage;
	int straggler_stage;           /* where the straggler was put; -1: none */
	/* replicas: classes of alike ones simulated (1 unless GPUs are mixed,
	 * a straggler is set or jitter unfolds them all), the replica whose
	 * step was the slowest and the kind of GPU of its critical stage (0:
	 * the cluster's node, g: node group g) */
	int replica_classes, critical_replica, critical_group;
	/* the critical path of that replica's step (schedule.h); owned by the
	 * step: capsim_step_free */
	capsim_path_segment *path;
	size_t path_len;
	/* per micro-batch, per layer (first stage's layers) */
	double layer_fwd_s, layer_bwd_s, tp_fwd_s, tp_bwd_s;
	double p2p_s, dp_sync_s;
	/* busiest link of one tensor-parallel collective (per layer, per
	 * direction) and of one data-parallel gradient sync (the larger of
	 * its reduce-scatter and all-gather with ZeRO) */
	capsim_step_link busiest_tp, busiest_dp;
	uint64_t events;
	int n_groups;
	capsim_memory memory[CAPSIM_MAX_GROUPS]; /* per GPU of each node group */
	/* the schedule's tasks, kept when asked (capsim_step_simulate_ex);
	 * owned by the step: capsim_step_free */
	struct capsim_pipeline_result *pipeline;
} capsim_step;

/* Simulate one step. f is the scenario's fabric (capsim_fabric_build); its
 * flow network must be idle. The step owns what it allocates: release it with
 * capsim_step_free, after success or failure. Returns 0, or -1 after adding the reason to d
 * (a collective that cannot run on this fabric, a schedule that does not
 * apply). */
int capsim_step_simulate(const capsim_scenario *s, capsim_fabric *f,
			 capsim_step *out, capsim_diags *d);

/* The same with other global knobs (for fitting them), keeping the
 * schedule's tasks for a trace when keep is set. */
int capsim_step_simulate_ex(const capsim_scenario *s, capsim_fabric *f,
			    const capsim_knobs *kn, int keep, capsim_step *out,
			    capsim_diags *d);

/* Write the step as Chrome trace-event JSON (opens in Perfetto): one process
 * per pipeline stage, its compute stream (forward and backward of each
 * micro-batch and chunk, with their tensor-parallel collectives) and its
 * tail (exposed gradient reduction and the optimizer step). Needs a step
 * simulated with keep. Writes at most max_bytes: returns 0, -1 on a write
 * error, or -2 without writing when capsim_step_trace_bound exceeds
 * max_bytes (and, should the bound be wrong, as soon as the text passes it). */
int capsim_step_trace(const capsim_step *r, FILE *out, double max_bytes);

/* An upper bound on the bytes of the step's trace (0 without one). */
double capsim_step_trace_bound(const capsim_step *r);

void capsim_step_free(capsim_step *r);

/* Model FLOPs utilisation: flops over the sum of every node group's GPUs x
 * their bf16 dense peak (DESIGN: bf16 for bf16 and fp8 runs alike), x the
 * step time. */
double capsim_step_mfu(const capsim_scenario *s, double flops_per_step, double step_time_s);

/* A lower bound on the step time capsim_step_simulate gives s: the busiest
 * pipeline stage's micro-batches one after another, each its forward and
 * backward kernels (recomputation counted) with every collective taken as
 * free, no host gaps and no bubble; with several node types, each stage on
 * the group whose GPUs run it fastest. A stage's GPU runs all its tasks in
 * turn and no task is shorter than its kernels, so no simulated step is
 * shorter. Cheap: no fabric, no schedule. 0 when it does not apply
 * (jitter). knobs NULL: the fitted ones. */
double capsim_step_compute_bound(const capsim_scenario *s, const capsim_knobs *knobs);

/* The plane on which one data-parallel group's gradient synchronisation is
 * simulated: the group's GPUs (dp x cp of them, as many a node as Megatron's
 * rank order puts there), one rail's NICs each, and the same switches. The
 * groups of a step run at once on different rails; unit/test_step checks
 * this folding against all groups on the whole fabric. */
void capsim_step_dp_plane(const capsim_scenario *s, capsim_scenario *plane);

/* The same with other global knobs (for fitting them). */
int capsim_step_simulate_knobs(const capsim_scenario *s, capsim_fabric *f,
			       const capsim_knobs *kn, capsim_step *out,
			       capsim_diags *d);

#endif
