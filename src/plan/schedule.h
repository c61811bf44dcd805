/* schedule.h - one training step's pipeline schedule (GPipe, 1F1B, interleaved
 * 1F1B) simulated: each stage is one compute stream that runs its forward and
 * backward tasks in the schedule's order, a task starting when the stream is
 * free and its input has arrived.
 *
 * Dependencies. Chunk c of stage k is virtual stage j = c p + k (Megatron's
 * layer assignment: chunk 0 of every stage, then chunk 1, ...). Forward (i, j)
 * needs forward (i, j - 1) plus the transfer; backward (i, j) needs backward
 * (i, j + 1) plus the transfer; backward (i, v p - 1) needs its own forward
 * (i, v p - 1). A transfer between two different stages is a fixed delay (the
 * fabric's contention is the caller's business) that never occupies a stream;
 * between chunks on the same stage (p = 1) it costs nothing.
 *
 * Orders per stage k (i: micro-batch):
 *   GPipe:  F0 .. F(m-1), then B0 .. B(m-1).
 *   1F1B:   w = min(p - k - 1, m) forwards, then m - w pairs (one forward, one
 *           backward), then w backwards (PipeDream-Flush as in Megatron-LM).
 *   interleaved: Megatron-LM's forward_backward_pipelining_with_interleaving;
 *           needs m to be a multiple of p.
 *
 * The closed forms the tests check and the sources: docs/model.md ("Pipeline
 * schedules"). All times are integer nanoseconds. */
#ifndef CAPSIM_SCHEDULE_H
#define CAPSIM_SCHEDULE_H

#include <stddef.h>
#include <stdint.h>

#include "core.h"
#include "spec.h"

/* Return codes; the message of a failed call is in the result's errmsg. */
enum {
	CAPSIM_PIPELINE_OK = 0,
	CAPSIM_PIPELINE_EINVAL = -1,  /* a count, kind, duration or pointer is invalid */
	CAPSIM_PIPELINE_EDIVIDE = -2, /* interleaved: m is not a multiple of p */
	CAPSIM_PIPELINE_ERANGE = -3   /* too many tasks, or times overflow int64 ns */
};

/* Duration in ns (>= 0) of one task: micro-batch `microbatch` of chunk `chunk`
 * on stage `stage`, forward (backward = 0) or backward (1, including any
 * recomputation). */
typedef capsim_time_ns (*capsim_pipeline_task_fn)(void *ctx, int stage, int chunk,
						 int microbatch, int backward);

typedef struct capsim_pipeline_spec {
	int stages;       /* p >= 1 */
	int microbatches; /* m >= 1, per step and data-parallel replica */
	int chunks;       /* v >= 1 model chunks per stage; > 1 only interleaved */
	int schedule;     /* CAPSIM_SCHED_GPIPE, _1F1B or _1F1B_INTERLEAVED (spec.h) */
	/* Uniform durations per (stage, chunk), index stage * chunks + chunk, ns
	 * >= 0. Read only when task_ns is NULL; then both are required. */
	const capsim_time_ns *fwd_ns, *bwd_ns;
	/* Per-task durations: when not NULL, called once for every task before
	 * the simulation, in the order (stage, chunk, micro-batch, forward then
	 * backward), and fwd_ns/bwd_ns are ignored. */
	capsim_pipeline_task_fn task_ns;
	void *task_ctx;
	/* Transfer of one micro-batch's activations (forward) or their gradients
	 * (backward) between consecutive stages, ns >= 0. p2p_link_ns, when not
	 * NULL, has p entries and overrides p2p_ns: entry k is the link between
	 * stage k and stage (k + 1) mod p, in both directions (entry p - 1 is the
	 * interleaved schedule's wrap from the last stage to the first). */
	capsim_time_ns p2p_ns;
	const capsim_time_ns *p2p_link_ns;
	/* Optional, p entries, ns >= 0: time a stage spends after its last
	 * backward (exposed gradient reduction, optimizer step). NULL: none. */
	const capsim_time_ns *tail_ns;
} capsim_pipeline_spec;

/* One task as it ran. */
typedef struct capsim_pipeline_task {
	int32_t stage, chunk, microbatch;
	int32_t backward; /* 0 forward, 1 backward */
	capsim_time_ns start_ns, end_ns;
	/* what it waited for: the position (stage * tasks_per_stage + n) of the
	 * task whose end released it, or -1 when it could start at time 0;
	 * via_transfer: 1 when that was its input arriving from another task
	 * (after the link's delay), 0 when it was the stream coming free
	 * (the stage's previous task). On a tie the stream is named. */
	int32_t pred;
	int32_t via_transfer;
} capsim_pipeline_task;

/* One stage's account: busy_ns + tail_ns + idle_ns = the step's makespan. */
typedef struct capsim_pipeline_stage {
	capsim_time_ns busy_ns;     /* sum of its forward and backward durations */
	capsim_time_ns tail_ns;     /* the spec's tail (0 without) */
	capsim_time_ns idle_ns;     /* bubble: waiting for inputs, and for the
				     * slowest stage at the end of the step */
	capsim_time_ns last_end_ns; /* end of its last backward */
	capsim_time_ns finish_ns;   /* last_end_ns + tail_ns */
} capsim_pipeline_stage;

/* Owns tasks and stage (capsim_pipeline_result_free). */
typedef struct capsim_pipeline_result {
	capsim_time_ns makespan_ns;   /* the latest finish_ns: one step */
	int stages;
	size_t tasks_per_stage;       /* 2 m v */
	capsim_pipeline_task *tasks;  /* stages x tasks_per_stage: stage k's tasks in
				       * the order it ran them from k * tasks_per_stage */
	capsim_pipeline_stage *stage; /* [stages] */
	uint64_t events;              /* the step's events: task ends, input
				       * arrivals and stages' tails */
	char errmsg[192];             /* why the call failed ("" on success) */
} capsim_pipeline_result;

/* Simulate one step of in's schedule and fill *out (overwritten; it need not
 * be initialised). Returns CAPSIM_PIPELINE_OK, or an error code with
 * out->errmsg set and nothing allocated. The same input gives the same
 * output, bit for bit. Cost: O(T) time and memory for T = 2 p v m tasks
 * (each task is timed once, in dependency order: schedule.c). */
int capsim_pipeline_simulate(const capsim_pipeline_spec *in,
			     capsim_pipeline_result *out);

/* Free what a result owns and zero it; safe on a failed or zeroed result. */
void capsim_pipeline_result_free(capsim_pipeline_result *r);

/* The n-th task stage k ran (0 <= n < tasks_per_stage). */
static inline const capsim_pipeline_task *
capsim_pipeline_task_at(const capsim_pipeline_result *r, int k, size_t n)
{
	return &r->tasks[(size_t)k * r->tasks_per_stage + n];
}

/* One piece of a critical path: a run of tasks back to back on one stage's
 * stream, a transfer between stages, or a stage's tail. */
typedef enum capsim_path_kind {
	CAPSIM_PATH_COMPUTE,  /* tasks of `stage`, forwards and backwards of them */
	CAPSIM_PATH_TRANSFER, /* from `stage` to `to_stage` */
	CAPSIM_PATH_TAIL      /* `stage`'s tail (gradient sync, optimizer) */
} capsim_path_kind;

typedef struct capsim_path_segment {
	int kind;             /* capsim_path_kind */
	int stage, to_stage;
	int forwards, backwards;
	int first_microbatch, last_microbatch; /* compute: of its first and last task */
	capsim_time_ns start_ns, end_ns;
} capsim_path_segment;

/* The step's critical path: from the stage that finishes last, back through
 * what each task waited for (capsim_pipeline_task.pred) to time 0, then
 * forward in time as segments that tile [0, makespan] with no gap. Fills
 * *out with a malloc'd array (the caller frees it) and returns its length,
 * or 0 for an empty result. */
size_t capsim_pipeline_critical_path(const capsim_pipeline_result *r,
				     capsim_path_segment **out);

/* The message of a return code ("success", "invalid argument", ...). */
const char *capsim_pipeline_strerror(int code);

#endif
