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
	/* The same knob for a GPU whose GEMMs come from a calibrated profile
	 * (capsim_gpu.cal): refitted on the same table with the calibrated
	 * curve in place of the datasheet one, so that what calibration
	 * measures (the power-capped clock, the real kernels' rates at each
	 * shape) is not counted again by a knob fitted to make up for it. */
	double compute_scale_calibrated;
} capsim_knobs;

/* The fitted values (knobs.c says on what, and the residual). */
extern const capsim_knobs capsim_knobs_fitted;

struct capsim_gpu;
/* The compute_scale that belongs to g's GEMM curve: compute_scale_calibrated
 * when g carries a calibrated bf16 GEMM model, else compute_scale. */
double capsim_knobs_scale(const capsim_knobs *kn, const struct capsim_gpu *g);

#endif
