/* reliab.c - checkpoints, failures and goodput; see reliab.h. */
#include "reliab.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_statistics_double.h>

#include "fabric.h"
#include "memory.h"
#include "units.h"
#include "xalloc.h"

const char *const capsim_fail_part_names[CAPSIM_PART__COUNT] = {
	"gpu", "hbm", "nvlink", "nic", "link", "host", "software", "other", "switch",
};

/* The mean of fault_end - fault_start per class in StepFun's fault trace of
 * 400 GPU servers over 348 days (github.com/stepfun-ai/InfiniteHBD-Trace,
 * fault_trace.json, commit 7aacdc8; Zhang et al., SIGCOMM 2025): GPU 6.48
 * days (158 faults: the chip, its memory and its peer-to-peer links alike),
 * NIC 10.68 (30), link 4.86 (44: parameter-plane cables down, Y-cables and
 * an optical module), host 11.43 (70: power supplies, fans, motherboards,
 * CPUs, RAID and riser cards), software 2.04 (24), other 3.20 (258: unknown
 * errors, failed stress tests, machines taken offline while
 * troubleshooting). docs/model.md has the counts. */
const double capsim_part_repair_s[CAPSIM_PART__COUNT] = {
	6.48 * 86400, 6.48 * 86400, 6.48 * 86400, 10.68 * 86400, 4.86 * 86400,
	11.43 * 86400, 2.04 * 86400, 3.20 * 86400, 0.0,
};

/* the framework's own save path: Megatron-LM's --async-save (torch_dist
 * checkpoints) and PyTorch DCP's async_save under FSDP2 run in the
 * background; torch.save and DeepSpeed's save_checkpoint block */
static int framework_async(const capsim_scenario *s)
{
	return s->framework == CAPSIM_FW_MEGATRON || s->framework == CAPSIM_FW_FSDP2;
}

int capsim_checkpoint_async(const capsim_scenario *s)
{
	if (s->checkpoint_mode != CAPSIM_CKPT_FRAMEWORK)
		return s->checkpoint_mode == CAPSIM_CKPT_ASYNC;
	return framework_async(s);
}

int capsim_checkpoint_in_memory(const capsim_scenario *s)
{
	return s->checkpoint_mode == CAPSIM_CKPT_MEMORY;
}

/* the parts a GPU has (its chip and memory), counted GPUs x nodes; the
 * others are a node's */
static int per_gpu_part(int p)
{
	return p == CAPSIM_PART_GPU || p == CAPSIM_PART_HBM;
}

void capsim_part_rates(const capsim_scenario *s, int leaves, double rate[CAPSIM_PART__COUNT])
{
	const double mtbf[CAPSIM_PART__COUNT] = {
		s->gpu_mtbf_s, s->hbm_mtbf_s, s->nvlink_mtbf_s, s->nic_mtbf_s, s->link_mtbf_s,
		s->host_mtbf_s, s->software_mtbf_s, s->other_mtbf_s, s->switch_mtbf_s,
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
			if (per_gpu_part(p))
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

#define POISSON_QUANTILE_MAX 10000000

/* The CDF rises with k, so the least k that reaches p is found by halving
 * between a k below it and one at or past it: O(log k) evaluations, where
 * stepping from 0 took k of them (a 524,288-GPU cluster keeps hundreds of
 * nodes in repair). At most POISSON_QUANTILE_MAX. */
int capsim_poisson_quantile(double mean, double p)
{
	if (!(mean > 0) || gsl_cdf_poisson_P(0, mean) >= p)
		return 0;
	int lo = 0, hi = 1; /* P(lo) < p throughout */
	while (hi < POISSON_QUANTILE_MAX && gsl_cdf_poisson_P((unsigned)hi, mean) < p) {
		lo = hi;
		hi = hi < POISSON_QUANTILE_MAX / 2 ? 2 * hi : POISSON_QUANTILE_MAX;
	}
	if (gsl_cdf_poisson_P((unsigned)hi, mean) < p)
		return POISSON_QUANTILE_MAX;
	while (hi - lo > 1) { /* P(lo) < p <= P(hi) */
		int mid = lo + (hi - lo) / 2;
		if (gsl_cdf_poisson_P((unsigned)mid, mean) < p)
			lo = mid;
		else
			hi = mid;
	}
	return hi;
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

/* work split into whole segments of tau and the rest */
static void split_work(double work, double tau, double *whole, double *rest)
{
	*whole = floor(work / tau);
	*rest = work - *whole * tau;
	if (*rest < 0)
		*rest = 0;
}

double capsim_expected_wall(double work, double tau, double delta, double restart_s,
			    double mttf_s)
{
	if (!(work > 0) || !(tau > 0) || !(mttf_s > 0))
		return 0.0;
	double full, rest;
	split_work(work, tau, &full, &rest);
	double e = full > 0 ? full * segment_expected(tau + delta, restart_s, mttf_s) : 0.0;
	if (rest > 0)
		e += segment_expected(rest + delta, restart_s, mttf_s);
	return e;
}

double capsim_expected_failures(double work, double tau, double delta, double mttf_s)
{
	if (!(work > 0) || !(tau > 0) || !(mttf_s > 0))
		return 0.0;
	double full, rest;
	split_work(work, tau, &full, &rest);
	double k = full > 0 ? full * expm1((tau + delta) / mttf_s) : 0.0;
	if (rest > 0)
		k += expm1((rest + delta) / mttf_s);
	return k;
}

void capsim_truncated_exp_moments(double L, double mttf_s, double *mean, double *var)
{
	double x = L / mttf_s;
	if (x < 0.01) {
		/* the series of the forms below: their terms cancel to x^2 */
		*mean = L * (0.5 - x / 12.0 + x * x * x / 720.0);
		*var = L * L * (1.0 / 12.0 - x * x / 240.0);
		return;
	}
	double em1 = expm1(x);
	*mean = mttf_s - L / em1;
	/* e^x / (e^x - 1)^2, without overflow where e^x is large */
	double w = x > 40 ? exp(-x) : (em1 + 1.0) / (em1 * em1);
	*var = mttf_s * mttf_s - L * L * w;
	if (*var < 0)
		*var = 0;
}

/* A segment of L seconds between checkpoints under failures of mean time m:
 * what every run's draws for it need, computed once */
typedef struct {
	double L;
	double odds;     /* (1 - p) / p = e^(L/m) - 1, p the chance it survives */
	double d;        /* 1 - e^(-L/m): the truncated exponential's inverse CDF scale */
	double mu, var;  /* the truncated exponential's mean and variance */
} segment;

static segment segment_of(double L, double m)
{
	segment g = { L, expm1(L / m), -expm1(-L / m), 0.0, 0.0 };
	capsim_truncated_exp_moments(L, m, &g.mu, &g.var);
	return g;
}

/* Failed attempts before n segments g all succeed, each surviving with
 * p = e^(-L/m): a negative binomial, drawn as a Poisson of a gamma of shape
 * n and scale (1 - p)/p = e^(L/m) - 1 (GSL's own construction), the
 * Poisson as a normal of its moments past a mean of 1e7 (its skewness
 * then below 3.2e-4; GSL's Poisson returns an unsigned int) */
static double draw_failed_attempts(gsl_rng *rng, double n, const segment *g)
{
	if (!(n > 0) || !(g->odds > 0))
		return 0.0;
	double lambda = gsl_ran_gamma(rng, n, g->odds);
	if (lambda < 1e7)
		return (double)gsl_ran_poisson(rng, lambda);
	double k = floor(lambda + gsl_ran_gaussian(rng, sqrt(lambda)) + 0.5);
	return k > 0 ? k : 0.0;
}

/* The time k failed attempts at segment g ran before their failures: one
 * by one (an exponential of mean m truncated to [0, L], by its inverse
 * CDF) up to CAPSIM_MC_EXACT_ATTEMPTS; past that a gamma of the sum's exact
 * mean and variance (the mean exact, the shape off by at most the sum's
 * skewness, 2 / sqrt(k) < 0.25) */
static double draw_lost_time(gsl_rng *rng, double k, const segment *g, double m)
{
	if (!(k > 0))
		return 0.0;
	if (k <= CAPSIM_MC_EXACT_ATTEMPTS) {
		double t = 0.0;
		for (int i = 0; i < (int)k; i++)
			t += -m * log1p(-gsl_rng_uniform(rng) * g->d);
		return t;
	}
	if (!(g->var > 0))
		return k * g->mu;
	return gsl_ran_gamma(rng, k * g->mu * g->mu / g->var, g->var / g->mu);
}

/* one run of `full` segments g and, if rest is not NULL, one of rest: its
 * wall time, interruptions and lost work */
static double draw_run(gsl_rng *rng, double full, const segment *g, const segment *rest,
		       double r, double m, double *fails, double *lost)
{
	double k = draw_failed_attempts(rng, full, g);
	double t = draw_lost_time(rng, k, g, m);
	double wall = full * g->L;
	if (rest) {
		double kr = draw_failed_attempts(rng, 1.0, rest);
		t += draw_lost_time(rng, kr, rest, m);
		k += kr;
		wall += rest->L;
	}
	*fails += k;
	*lost += t;
	return wall + t + k * r;
}

static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;
	return a < b ? -1 : a > b;
}

/* the mean, its 95% half-width, median and 95th percentile of the runs'
 * walls (sorted in place) */
static void summarise_runs(double *wall, int runs, capsim_reliab *out)
{
	out->mc_wall_mean_s = gsl_stats_mean(wall, 1, (size_t)runs);
	double sd = runs > 1 ? gsl_stats_sd_m(wall, 1, (size_t)runs, out->mc_wall_mean_s) : 0.0;
	out->mc_wall_ci_s = 1.96 * sd / sqrt((double)runs);
	qsort(wall, (size_t)runs, sizeof *wall, cmp_double); /* finite: no NaN to order */
	out->mc_wall_p50_s = gsl_stats_quantile_from_sorted_data(wall, 1, (size_t)runs, 0.5);
	out->mc_wall_p95_s = gsl_stats_quantile_from_sorted_data(wall, 1, (size_t)runs, 0.95);
}

void capsim_reliab_monte_carlo(double work, double tau, double delta, double restart_s,
			       double mttf_s, int runs, unsigned long seed, capsim_reliab *out)
{
	out->runs = 0;
	if (runs <= 0 || !(work > 0) || !(tau > 0) || !(mttf_s > 0) ||
	    !isfinite(capsim_expected_wall(work, tau, delta, restart_s, mttf_s)))
		return;
	double full, rest;
	split_work(work, tau, &full, &rest);
	segment g = segment_of(tau + delta, mttf_s), last = segment_of(rest + delta, mttf_s);
	double *wall = capsim_xcalloc((size_t)runs, sizeof *wall);
	double fails = 0.0, lost = 0.0;
	/* L'Ecuyer's taus2 (maximally equidistributed, period 2^88): seeding
	 * it costs three words, where MT19937's 624 cost more than the draws */
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_taus2);
	for (int i = 0; i < runs; i++) {
		/* run i's own stream */
		gsl_rng_set(rng, seed * 1000003ul + (unsigned long)i + 1ul);
		wall[i] = draw_run(rng, full, &g, rest > 0 ? &last : NULL, restart_s, mttf_s,
				   &fails, &lost);
	}
	gsl_rng_free(rng);
	out->runs = runs;
	summarise_runs(wall, runs, out);
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

/* one checkpoint of the job: the trained weights in their dtype, the
 * master copy and the optimizer's moments, once for the job (its
 * data-parallel replicas hold the same weights; a distributed save writes
 * each shard once) */
static double checkpoint_bytes(const capsim_scenario *s)
{
	capsim_mem_recipe rc;
	capsim_memory_recipe(s, &rc);
	return trained_params(s) * (rc.param_bytes + rc.master_bytes + rc.state_bytes);
}

double capsim_drain_time(const capsim_scenario *s, const capsim_reliab *r)
{
	if (r->in_memory)
		return r->replicate_s;
	return capsim_checkpoint_async(s) ? r->write_s : 0.0;
}

double capsim_save_cost(const capsim_scenario *s, const capsim_reliab *r)
{
	/* while the drain runs, steps run 1 + sigma slower: of its drain_s of
	 * wall time, drain_s sigma / (1 + sigma) does no work */
	double sigma = s->checkpoint_drain_slowdown;
	return r->blocking_s + capsim_drain_time(s, r) * sigma / (1.0 + sigma);
}

double capsim_save_delta(const capsim_scenario *s, const capsim_reliab *r, double tau)
{
	double d = capsim_save_cost(s, r);
	if (r->in_memory && r->persistent_interval_s > 0 && tau > 0)
		d += r->persistent_cost_s * tau / r->persistent_interval_s;
	return d;
}

/* the share of the job's interruptions that are a node's (a switch's crash
 * stops its nodes but loses no host memory) */
static double node_share(const capsim_reliab *r)
{
	double job = 0.0;
	for (int p = 0; p < CAPSIM_PART__COUNT; p++)
		job += r->part_rate_per_s[p];
	return job > 0 ? (job - r->part_rate_per_s[CAPSIM_PART_SWITCH]) / job : 0.0;
}

double capsim_replica_loss_chance(const capsim_scenario *s, const capsim_reliab *r, double tau)
{
	if (!r->in_memory || !(r->node_mtbf_s > 0))
		return 0.0;
	double w = s->restart_s + r->restore_s + tau + r->replicate_s;
	double one = -expm1(-2.0 * w / r->node_mtbf_s);
	return node_share(r) * pow(one, s->checkpoint_replicas);
}

/* what a loss of a node with its replicas costs beyond a restore from a
 * peer: the storage's restore and half a persistent interval of work, or
 * without persistent saves half the run's work */
static double replica_loss_cost(const capsim_reliab *r)
{
	if (r->persistent_interval_s > 0 && r->storage_restore_s > 0)
		return r->storage_restore_s - r->restore_s + r->persistent_interval_s / 2.0;
	return r->work_s / 2.0;
}

double capsim_restart_cost(const capsim_scenario *s, const capsim_reliab *r, double tau)
{
	double c = s->restart_s + r->restore_s + capsim_drain_time(s, r);
	if (r->in_memory)
		c += capsim_replica_loss_chance(s, r, tau) * replica_loss_cost(r);
	return c;
}

/* s's interval, or Young's on the save's cost, no shorter than the drain */
static double checkpoint_interval(const capsim_scenario *s, const capsim_reliab *r,
				  double mttf_s)
{
	if (s->checkpoint_interval_s > 0)
		return s->checkpoint_interval_s;
	if (!(r->has_storage || r->in_memory) || !(mttf_s > 0))
		return 0.0;
	double tau = capsim_young_interval(capsim_save_cost(s, r), mttf_s);
	/* a background save must drain before the next one starts */
	double drain = capsim_drain_time(s, r);
	return tau < drain ? drain : tau;
}

double capsim_reliab_goodput_under(const capsim_scenario *s, const capsim_reliab *r,
				   double mttf_s, double *interval_s)
{
	double tau = checkpoint_interval(s, r, mttf_s);
	*interval_s = tau;
	if (!(mttf_s > 0) || !(tau > 0))
		return 0.0;
	/* the restart counts the draining save a failure loses too, a drain's
	 * time beyond the last complete one (an upper bound) */
	double delta = capsim_save_delta(s, r, tau), restart = capsim_restart_cost(s, r, tau);
	double work = r->work_s > 0 ? r->work_s : tau;
	double wall = r->work_s > 0 ? capsim_expected_wall(work, tau, delta, restart, mttf_s) :
				      segment_expected(tau + delta, restart, mttf_s);
	return isfinite(wall) && wall > 0 ? work / wall : 0.0;
}

/* the failure rates, the job's MTTF, a node's MTBF and the nodes in repair */
static void estimate_failures(const capsim_scenario *s, int leaves, capsim_reliab *out)
{
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
}

/* each GPU copies its shard to pinned host memory over its PCIe link: the
 * slowest group's link holds the job */
static double pinned_copy_s(const capsim_scenario *s, const capsim_reliab *r)
{
	return r->checkpoint_bytes / (double)capsim_scenario_gpus(s) / slowest_pcie_bw(s);
}

void capsim_ckpt_path_of(const capsim_scenario *s, capsim_ckpt_path *out)
{
	out->host_copy_bytes_per_s = s->checkpoint_host_copy;
	out->serialise_bytes_per_s = s->checkpoint_serialise;
	out->writers = s->checkpoint_writers > 0 ? s->checkpoint_writers : 1;
	out->flat_eff = s->checkpoint_eff;
}

double capsim_ckpt_copy_s(const capsim_ckpt_path *p, double shard)
{
	if (p->flat_eff > 0 || !(p->host_copy_bytes_per_s > 0))
		return 0.0;
	return shard / p->host_copy_bytes_per_s;
}

double capsim_ckpt_write_s(const capsim_ckpt_path *p, double shard, double store_s)
{
	if (p->flat_eff > 0)
		return store_s / p->flat_eff;
	double ser = p->serialise_bytes_per_s > 0 ? shard / p->serialise_bytes_per_s : 0.0;
	double threads = (ser + store_s) / (p->writers > 0 ? p->writers : 1);
	return threads > store_s ? threads : store_s;
}

double capsim_ckpt_restore_s(const capsim_ckpt_path *p, double shard, double read_s)
{
	double copy = p->host_copy_bytes_per_s > 0 ? shard / p->host_copy_bytes_per_s : 0.0;
	return copy > read_s ? copy : read_s;
}

/* the storage tier's raw write and read of a checkpoint, every node its
 * share: to shared storage the longer of the system's aggregate rate and
 * each node's client rate, to local drives each node's rate; 0 without a
 * tier */
static int storage_times(const capsim_scenario *s, double bytes, double *w, double *r)
{
	const capsim_storage *t = s->has_shared_storage ? &s->shared_storage :
				  s->has_local_storage ? &s->local_storage : NULL;
	if (!t || !(t->write_bytes_per_s > 0) || !(t->read_bytes_per_s > 0))
		return 0;
	double per_node = bytes / s->nodes;
	if (t == &s->shared_storage) {
		*w = bytes / t->write_bytes_per_s;
		*r = bytes / t->read_bytes_per_s;
		if (t->client_write_bytes_per_s > 0 && per_node / t->client_write_bytes_per_s > *w)
			*w = per_node / t->client_write_bytes_per_s;
		if (t->client_read_bytes_per_s > 0 && per_node / t->client_read_bytes_per_s > *r)
			*r = per_node / t->client_read_bytes_per_s;
	} else {
		*w = per_node / t->write_bytes_per_s;
		*r = per_node / t->read_bytes_per_s;
	}
	return 1;
}

/* a checkpoint's copy, write, restore and blocking times on s's storage
 * tier: each rank's shard through its save path, the storage's raw rates
 * shared by the ranks that write to it */
static void estimate_checkpoint_times(const capsim_scenario *s, capsim_reliab *out)
{
	double store_s, read_s;
	if (!storage_times(s, out->checkpoint_bytes, &store_s, &read_s))
		return;
	out->has_storage = 1;
	capsim_ckpt_path p;
	capsim_ckpt_path_of(s, &p);
	double shard = out->checkpoint_bytes / (double)capsim_scenario_gpus(s);
	out->copy_s = capsim_ckpt_copy_s(&p, shard);
	out->write_s = capsim_ckpt_write_s(&p, shard, store_s);
	out->restore_s = capsim_ckpt_restore_s(&p, shard, read_s);
	out->blocking_s = capsim_checkpoint_async(s) ? pinned_copy_s(s, out) :
						       out->copy_s + out->write_s;
}

/* a node's NICs together at their port speed */
static double node_nic_bw(const capsim_group_view *v)
{
	return v->node->nics * v->nic->port_speed_bytes_per_s;
}

/* in memory: the copy to host memory, the replication to peers and the
 * restore from one over the slowest group's NICs, and the persistent saves
 * to s's storage tier (their cost the framework's save path's) */
static void estimate_memory_times(const capsim_scenario *s, capsim_reliab *out)
{
	double shard_gpu = out->checkpoint_bytes / (double)capsim_scenario_gpus(s);
	out->in_memory = 1;
	out->storage_restore_s = out->has_storage ? out->restore_s : 0.0;
	out->restore_s = 0.0;
	int groups = s->n_groups > 0 ? s->n_groups : 1;
	for (int g = 0; g < groups; g++) {
		capsim_group_view v;
		capsim_scenario_group(s, g, &v);
		double shard = shard_gpu * v.node->gpus, bw = node_nic_bw(&v);
		if (shard > out->shard_node_bytes)
			out->shard_node_bytes = shard;
		if (bw > 0 && shard / bw > out->restore_s)
			out->restore_s = shard / bw;
	}
	out->replicate_s = out->restore_s * s->checkpoint_replicas;
	out->blocking_s = pinned_copy_s(s, out);
	if (!out->has_storage || !(s->persistent_interval_s > 0))
		return;
	out->persistent_interval_s = s->persistent_interval_s;
	double sigma = s->checkpoint_drain_slowdown;
	out->persistent_cost_s = framework_async(s) ?
		out->blocking_s + out->write_s * sigma / (1.0 + sigma) :
		out->copy_s + out->write_s;
}

/* "2 TB" into buf */
static const char *bytes_text(double b, char *buf, size_t n)
{
	capsim_units_format(b, CAPSIM_DIM_BYTES, buf, n);
	return buf;
}

/* the peers a node's shard is copied to: 1 + replicas nodes at least */
static int check_peers(const capsim_scenario *s, capsim_diags *d)
{
	int need = 1 + s->checkpoint_replicas;
	if (s->nodes >= need)
		return 0;
	capsim_diags_add(d, s->file, capsim_scenario_line(s, "cluster.storage"),
			 "cluster.storage.checkpoint-mode=memory: no peer to replicate to: "
			 "checkpoint-replicas %d needs cluster.nodes of at least %d (a node and "
			 "its peers); found %d",
			 s->checkpoint_replicas, need, s->nodes);
	return -1;
}

/* each group's node holds its GPUs' shards and replicas' copies of as much */
static int check_host_memory(const capsim_scenario *s, capsim_diags *d)
{
	double shard_gpu = checkpoint_bytes(s) / (double)capsim_scenario_gpus(s);
	int rc = 0, groups = s->n_groups > 0 ? s->n_groups : 1;
	for (int g = 0; g < groups; g++) {
		capsim_group_view v;
		capsim_scenario_group(s, g, &v);
		double shard = shard_gpu * v.node->gpus;
		double need = shard * (1 + s->checkpoint_replicas), cap = v.node->host_mem_bytes;
		if (cap > 0 && need <= cap)
			continue;
		char a[32], b[32], c[32];
		bytes_text(shard, a, sizeof a);
		bytes_text(need, b, sizeof b);
		capsim_diags_add(d, s->file, capsim_scenario_line(s, "cluster.storage"),
				 "cluster.storage.checkpoint-mode=memory: node '%s' holds its %d "
				 "GPUs' shards of %s x (1 + checkpoint-replicas %d) = %s in host "
				 "memory; expected host-memory.capacity of at least %s, found %s",
				 v.node->e.id, v.node->gpus, a, s->checkpoint_replicas, b, b,
				 cap > 0 ? bytes_text(cap, c, sizeof c) : "none in the catalog");
		rc = -1;
	}
	return rc;
}

int capsim_reliab_check(const capsim_scenario *s, capsim_diags *d)
{
	if (!capsim_checkpoint_in_memory(s))
		return 0;
	int rc = check_peers(s, d);
	if (check_host_memory(s, d) < 0)
		rc = -1;
	if (s->persistent_interval_s > 0 && !s->has_shared_storage && !s->has_local_storage) {
		capsim_diags_add(d, s->file, capsim_scenario_line(s, "cluster.storage"),
				 "cluster.storage.persistent-interval: persistent checkpoints "
				 "need a storage tier; expected cluster.storage.shared or "
				 ".local, found none");
		rc = -1;
	}
	return rc;
}

void capsim_reliab_estimate(const capsim_scenario *s, const capsim_step *st, int leaves,
			    capsim_reliab *out)
{
	memset(out, 0, sizeof *out);
	capsim_mem_recipe rc;
	capsim_memory_recipe(s, &rc);
	out->checkpoint_bytes = checkpoint_bytes(s);
	out->weights_bytes = trained_params(s) * rc.param_bytes;
	out->work_s = st->time_to_train_s;
	estimate_failures(s, leaves, out);
	estimate_checkpoint_times(s, out);
	if (capsim_checkpoint_in_memory(s))
		estimate_memory_times(s, out);
	if (out->job_mttf_s > 0) {
		out->goodput = capsim_reliab_goodput_under(s, out, out->job_mttf_s,
							   &out->interval_s);
		out->interval_given = s->checkpoint_interval_s > 0;
	}
	if (!(out->job_mttf_s > 0) || !(out->interval_s > 0))
		return;
	/* the exact expectation of the run, whose ratio the goodput is */
	double ttt = out->work_s, m = out->job_mttf_s, tau = out->interval_s;
	double delta = capsim_save_delta(s, out, tau), r = capsim_restart_cost(s, out, tau);
	out->wall_to_train_s = capsim_expected_wall(ttt, tau, delta, r, m);
	out->interruptions = capsim_expected_failures(ttt, tau, delta, m);
	out->barely_progresses = tau + delta > m;
	capsim_reliab_monte_carlo(ttt, tau, delta, r, m, s->reliability_runs,
				  (unsigned long)s->seed, out);
}
