/* reliab.c - checkpoints, failures and goodput; see reliab.h. */
#include "reliab.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "fabric.h"
#include "memory.h"
#include "xalloc.h"

const char *const capsim_fail_part_names[CAPSIM_PART__COUNT] = {
	"gpu", "nic", "link", "host", "software", "other", "switch",
};

/* The mean of fault_end - fault_start per part in StepFun's fault trace of
 * 400 GPU servers over 348 days (github.com/stepfun-ai/InfiniteHBD-Trace,
 * fault_trace.json, commit 7aacdc8; Zhang et al., SIGCOMM 2025): GPU 6.48
 * days (158 faults), NIC 10.68 (30), link 4.86 (44: parameter-plane cables
 * down, Y-cables and an optical module), host 11.43 (70: power supplies,
 * fans, motherboards, CPUs, RAID and riser cards), software 2.04 (24),
 * other 3.20 (258: unknown errors, failed stress tests, machines taken
 * offline while troubleshooting). docs/model.md has the counts. */
const double capsim_part_repair_s[CAPSIM_PART__COUNT] = {
	6.48 * 86400, 10.68 * 86400, 4.86 * 86400, 11.43 * 86400,
	2.04 * 86400, 3.20 * 86400, 0.0,
};

void capsim_part_rates(const capsim_scenario *s, int leaves, double rate[CAPSIM_PART__COUNT])
{
	const double mtbf[CAPSIM_PART__COUNT] = {
		s->gpu_mtbf_s, s->nic_mtbf_s, s->link_mtbf_s, s->host_mtbf_s,
		s->software_mtbf_s, s->other_mtbf_s, s->switch_mtbf_s,
	};
	for (int p = 0; p < CAPSIM_PART__COUNT; p++)
		rate[p] = p == CAPSIM_PART_SWITCH && mtbf[p] > 0 ? 1.0 / mtbf[p] * leaves : 0.0;
	/* each node group's nodes, a node's GPUs its own type's count */
	int groups = s->n_groups > 0 ? s->n_groups : 1;
	for (int g = 0; g < groups; g++) {
		capsim_group_view v;
		capsim_scenario_group(s, g, &v);
		double per[CAPSIM_PART__COUNT], node = 0.0;
		for (int p = 0; p < CAPSIM_PART__COUNT; p++) {
			per[p] = mtbf[p] > 0 ? 1.0 / mtbf[p] : 0.0;
			if (p == CAPSIM_PART_GPU)
				per[p] *= v.node->gpus;
			if (p != CAPSIM_PART_SWITCH)
				node += per[p];
		}
		/* a node MTBF given: the node's parts in the same proportions */
		double scale = s->node_mtbf_s > 0 && node > 0 ? 1.0 / s->node_mtbf_s / node : 1.0;
		for (int p = 0; p < CAPSIM_PART__COUNT; p++)
			if (p != CAPSIM_PART_SWITCH)
				rate[p] += per[p] * (scale * v.nodes);
	}
}

/* the slowest host link of the node groups' GPUs (PCIe 4 x16 where the
 * catalog gives none) */
static double slowest_pcie_bw(const capsim_scenario *s)
{
	double bw = INFINITY;
	int groups = s->n_groups > 0 ? s->n_groups : 1;
	for (int g = 0; g < groups; g++) {
		capsim_group_view v;
		capsim_scenario_group(s, g, &v);
		double b = capsim_pcie_bw(v.gpu->pcie_generation ? v.gpu->pcie_generation : 4,
					  v.gpu->pcie_lanes ? v.gpu->pcie_lanes : 16);
		if (b < bw)
			bw = b;
	}
	return bw;
}

int capsim_poisson_quantile(double mean, double p)
{
	if (!(mean > 0))
		return 0;
	int k = 0;
	while (gsl_cdf_poisson_P((unsigned)k, mean) < p && k < 10000000)
		k++;
	return k;
}

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

/* one segment of length L: (e^(L/m) - 1)(m + r) on average */
static double segment_expected(double L, double r, double m)
{
	return expm1(L / m) * (m + r);
}

double capsim_expected_wall(double work, double tau, double delta, double restart_s,
			    double mttf_s)
{
	if (!(work > 0) || !(tau > 0) || !(mttf_s > 0))
		return 0.0;
	double full = floor(work / tau);
	double rest = work - full * tau;
	double e = full * segment_expected(tau + delta, restart_s, mttf_s);
	if (rest > 0)
		e += segment_expected(rest + delta, restart_s, mttf_s);
	return e;
}

void capsim_reliab_monte_carlo(double work, double tau, double delta, double restart_s,
			       double mttf_s, int runs, unsigned long seed, capsim_reliab *out)
{
	out->runs = 0;
	if (runs <= 0 || !(work > 0) || !(tau > 0) || !(mttf_s > 0))
		return;
	double *wall = capsim_xcalloc((size_t)runs, sizeof *wall);
	double fails = 0.0, lost = 0.0;
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	for (int i = 0; i < runs; i++) {
		/* run i's own stream */
		gsl_rng_set(rng, seed * 1000003ul + (unsigned long)i + 1ul);
		double t = 0.0, done = 0.0;
		double next_fail = gsl_ran_exponential(rng, mttf_s);
		while (done < work) {
			/* the whole segments that end before the next failure, at
			 * once: a run costs its failures, not its segments */
			double whole = floor((work - done) / tau);
			double k = floor((next_fail - t) / (tau + delta));
			if (k > whole)
				k = whole;
			if (k >= 2.0) {
				k -= 1.0; /* the last by the test below, in case of rounding */
				t += k * (tau + delta);
				done += k * tau;
				continue;
			}
			double seg = work - done < tau ? work - done : tau;
			double L = seg + delta;
			if (t + L <= next_fail) {
				t += L;
				done += seg;
				continue;
			}
			/* interrupted: the segment's time so far is lost, then the
			 * restart; the next failure is drawn from the resumption */
			lost += next_fail - t;
			fails += 1.0;
			t = next_fail + restart_s;
			next_fail = t + gsl_ran_exponential(rng, mttf_s);
		}
		wall[i] = t;
	}
	gsl_rng_free(rng);
	out->runs = runs;
	out->mc_wall_mean_s = gsl_stats_mean(wall, 1, (size_t)runs);
	double sd = runs > 1 ? gsl_stats_sd_m(wall, 1, (size_t)runs, out->mc_wall_mean_s) : 0.0;
	out->mc_wall_ci_s = 1.96 * sd / sqrt((double)runs);
	gsl_sort(wall, 1, (size_t)runs);
	out->mc_wall_p50_s = gsl_stats_quantile_from_sorted_data(wall, 1, (size_t)runs, 0.5);
	out->mc_wall_p95_s = gsl_stats_quantile_from_sorted_data(wall, 1, (size_t)runs, 0.95);
	out->mc_interruptions = fails / runs;
	out->mc_lost_s = lost / runs;
	free(wall);
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

double capsim_save_cost(const capsim_scenario *s, const capsim_reliab *r)
{
	if (!s->checkpoint_async)
		return r->blocking_s;
	/* while the write drains, steps run 1 + sigma slower: of its write_s of
	 * wall time, write_s sigma / (1 + sigma) does no work */
	double sigma = s->checkpoint_drain_slowdown;
	return r->blocking_s + r->write_s * sigma / (1.0 + sigma);
}

double capsim_reliab_goodput_under(const capsim_scenario *s, const capsim_reliab *r,
				   double mttf_s, double *interval_s)
{
	double tau = 0.0;
	if (s->checkpoint_interval_s > 0) {
		tau = s->checkpoint_interval_s;
	} else if (r->has_storage && mttf_s > 0) {
		tau = capsim_young_interval(capsim_save_cost(s, r), mttf_s);
		/* a background save must drain before the next one starts */
		if (s->checkpoint_async && tau < r->write_s)
			tau = r->write_s;
	}
	*interval_s = tau;
	if (!(mttf_s > 0) || !(tau > 0))
		return 0.0;
	/* async: a failure while a save drains loses it too, half a write on
	 * average beyond the last durable one */
	double lost_extra = s->checkpoint_async ? r->write_s : 0.0;
	return capsim_goodput(tau, capsim_save_cost(s, r), s->restart_s + r->restore_s + lost_extra,
			      mttf_s);
}

void capsim_reliab_estimate(const capsim_scenario *s, const capsim_step *st, int leaves,
			    capsim_reliab *out)
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
	out->weights_bytes = trained_params(s) * rc.param_bytes;
	capsim_part_rates(s, leaves, out->part_rate_per_s);
	double job = 0.0, node = 0.0, repair = 0.0;
	for (int p = 0; p < CAPSIM_PART__COUNT; p++) {
		double r = out->part_rate_per_s[p];
		job += r;
		if (p == CAPSIM_PART_SWITCH)
			continue;
		node += r / s->nodes;
		repair += r * (s->repair_s > 0 ? s->repair_s : capsim_part_repair_s[p]);
	}
	out->job_mttf_s = job > 0 ? 1.0 / job : 0.0;
	out->node_mtbf_s = node > 0 ? 1.0 / node : 0.0;
	/* Little's law: failures a second x how long each is out */
	out->nodes_in_repair = repair;
	if (repair > 0)
		out->spare_nodes = capsim_poisson_quantile(repair, 0.99);
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
		out->blocking_s = out->write_s;
		if (s->checkpoint_async) {
			/* each GPU copies its shard to host memory over its PCIe link:
			 * the slowest group's link holds the job */
			double gpus = (double)capsim_scenario_gpus(s);
			out->blocking_s = out->checkpoint_bytes / gpus / slowest_pcie_bw(s);
		}
	}
	if (out->job_mttf_s > 0) {
		out->goodput = capsim_reliab_goodput_under(s, out, out->job_mttf_s, &out->interval_s);
		out->interval_given = s->checkpoint_interval_s > 0;
	}
	if (out->job_mttf_s > 0 && out->interval_s > 0) {
		out->wall_to_train_s = out->goodput > 0 ? st->time_to_train_s / out->goodput : 0.0;
		out->interruptions = out->wall_to_train_s / out->job_mttf_s;
		double lost_extra = s->checkpoint_async ? out->write_s : 0.0;
		/* at most about 2e7 segments simulated in all (some 0.2 s): a run
		 * of many short segments gets fewer runs, at least 64 */
		double segments = st->time_to_train_s / out->interval_s + 1.0;
		int runs = s->reliability_runs;
		if (runs > 0 && runs * segments > 2e7)
			runs = 2e7 / segments > 64 ? (int)(2e7 / segments) : 64;
		capsim_reliab_monte_carlo(st->time_to_train_s, out->interval_s, capsim_save_cost(s, out),
					  s->restart_s + out->restore_s + lost_extra, out->job_mttf_s,
					  runs, (unsigned long)s->seed, out);
	}
}
