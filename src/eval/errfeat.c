/* errfeat.c - what drives the error of a result's predictions, as the error
 * model's groups name it (err.h, docs/model.md "Error bands"). */
#include <stdio.h>
#include <string.h>

#include "eval.h"

/* The software stack and execution mode: Megatron-LM and NeMo are
 * "megatron"; plain PyTorch (autocast, FSDP2) "torch-" and its execution;
 * DeepSpeed its own name, which no table holds yet. */
static const char *stack_of(const capsim_scenario *s)
{
	static const char *const torch[] = { "torch-eager", "torch-compiled", "torch-graphs" };
	switch (s->framework) {
	case CAPSIM_FW_MEGATRON:
		return "megatron";
	case CAPSIM_FW_DEEPSPEED:
		return "deepspeed";
	default:
		return s->execution >= 0 && s->execution <= CAPSIM_EXEC_GRAPHS ?
			       torch[s->execution] :
			       "";
	}
}

void capsim_result_err_features(const capsim_scenario *s, const capsim_result *r,
				capsim_err_features *f)
{
	memset(f, 0, sizeof *f);
	snprintf(f->gen, sizeof f->gen, "%s", capsim_gpu_generation(&s->gpu));
	snprintf(f->stack, sizeof f->stack, "%s", stack_of(s));
	f->host_bound = r->step.host_s >= 0.25 * r->step.step_time_s;
	snprintf(f->profile, sizeof f->profile, "%s",
		 s->gpu.cal.profile[0] ? "calibrated" : "datasheet");
	f->gpus = r->gpus > 0x7fffffffL ? 0x7fffffff : (int)r->gpus;
}
