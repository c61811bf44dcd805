/* knobs.h - the model's global knobs: the few numbers that no datasheet or
 * microbenchmark gives and that are fitted to published training runs
 * instead. Each says what it stands for, what it was fitted on and how well;
 * docs/validation.md scores the fit on a table it was not fitted on. */
#ifndef CAPSIM_KNOBS_H
#define CAPSIM_KNOBS_H

typedef struct capsim_knobs {
	/* Time of a layer's kernels in a training framework over the op
	 * model's time (ops.h), which rests on the best GEMM rates measured
	 * alone. Covers what the op model leaves out: kernels slowed by other
	 * kernels and by the framework between them, memory fragmentation,
	 * imperfect fusion. Fitted on the Megatron-LM README's H100 table. */
	double compute_scale;
} capsim_knobs;

/* The fitted values (knobs.c says on what, and the residual). */
extern const capsim_knobs capsim_knobs_fitted;

#endif
