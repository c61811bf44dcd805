/* reliab.c - checkpoints, failures and goodput; see reliab.h. */
#include "reliab.h"

#include <math.h>
#include <string.h>

#include "memory.h"

double capsim_young_interval(double write_s, double mttf_s)
{
	return sqrt(2.0 * write_s * mttf_s);
}

double capsim_goodput(double tau, double delta, double restart_s, double mttf_s)
{
	if (!(tau > 0) || !(mttf_s > 0))
		return 0.0;
	double cycle = tau + delta;
	return tau / (cycle * (1.0 + (restart_s + cycle / 2.0) / mttf_s));
}

/* the trained parameters of the whole model (LoRA: its adapters) */
static double trained_params(const capsim_scenario *s)
{
	if (s->finetune == CAPSIM_FT_LORA) {
		double a = 0.0;
		for (int l = 0; l < s->model.layers; l++)
			a += capsim_lora_layer_params(s, l);
		return a;
	}
	return capsim_model_params(&s->model, 0);
}

void capsim_reliab_estimate(const capsim_scenario *s, const capsim_step *st, capsim_reliab *out)
{
	memset(out, 0, sizeof *out);
	/* what a checkpoint holds: the trained weights in their dtype, the
	 * master copy and the optimizer's moments, once for the job (its
	 * data-parallel replicas hold the same weights; a distributed save
	 * writes each shard once) */
	capsim_mem_recipe rc;
	capsim_memory_recipe(s, &rc);
	out->checkpoint_bytes = trained_params(s) *
				(rc.param_bytes + rc.master_bytes + rc.state_bytes);
	out->job_mttf_s = s->node_mtbf_s > 0 ? s->node_mtbf_s / s->nodes : 0.0;
	const capsim_storage *t = s->has_shared_storage ? &s->shared_storage :
				  s->has_local_storage ? &s->local_storage : NULL;
	double eff = s->checkpoint_eff > 0 ? s->checkpoint_eff : 1.0;
	if (t && t->write_bytes_per_s > 0 && t->read_bytes_per_s > 0) {
		out->has_storage = 1;
		double per_node = out->checkpoint_bytes / s->nodes;
		double w, r;
		if (t == &s->shared_storage) {
			/* the system's aggregate rate, and each node's client rate */
			w = out->checkpoint_bytes / t->write_bytes_per_s;
			r = out->checkpoint_bytes / t->read_bytes_per_s;
			if (t->client_write_bytes_per_s > 0 && per_node / t->client_write_bytes_per_s > w)
				w = per_node / t->client_write_bytes_per_s;
			if (t->client_read_bytes_per_s > 0 && per_node / t->client_read_bytes_per_s > r)
				r = per_node / t->client_read_bytes_per_s;
		} else {
			/* each node to its own drives */
			w = per_node / t->write_bytes_per_s;
			r = per_node / t->read_bytes_per_s;
		}
		out->write_s = w / eff;
		out->restore_s = r; /* torch.load read back at the raw rate (docs/validation.md) */
	}
	if (s->checkpoint_interval_s > 0) {
		out->interval_s = s->checkpoint_interval_s;
		out->interval_given = 1;
	} else if (out->has_storage && out->job_mttf_s > 0) {
		out->interval_s = capsim_young_interval(out->write_s, out->job_mttf_s);
	}
	if (out->job_mttf_s > 0 && out->interval_s > 0) {
		out->goodput = capsim_goodput(out->interval_s, out->write_s,
					      s->restart_s + out->restore_s, out->job_mttf_s);
		out->wall_to_train_s = out->goodput > 0 ? st->time_to_train_s / out->goodput : 0.0;
		out->interruptions = out->wall_to_train_s / out->job_mttf_s;
	}
}
