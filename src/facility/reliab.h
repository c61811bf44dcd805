/* reliab.h - checkpoints, failures and goodput: how big a checkpoint is
 * (the framework's recipe), how long it takes to write and to read back
 * (the copy off the GPU, the writers' serialisation, the storage tier's raw
 * rates), how often the job is
 * interrupted (nodes x their failure rate), the checkpoint interval (Young's
 * optimum unless given) and the share of wall time that is useful work.
 * Equations and sources: docs/model.md ("Checkpoints, failures and
 * goodput"). Seconds and bytes. */
#ifndef CAPSIM_RELIAB_H
#define CAPSIM_RELIAB_H

#include "diag.h"
#include "spec.h"
#include "step.h"

/* The parts whose faults interrupt a job: a GPU's chip and its memory
 * (HBM), a node's NVLink and NVSwitch, its NICs, its fabric cables and
 * optics (link), the rest of its hardware (host: power, fans, motherboard,
 * CPUs, cards), its software and driver stack, faults of no part above
 * (other, none by default), and the leaf switches the nodes hang from. */
typedef enum {
	CAPSIM_PART_GPU, CAPSIM_PART_HBM, CAPSIM_PART_NVLINK, CAPSIM_PART_NIC, CAPSIM_PART_LINK,
	CAPSIM_PART_HOST, CAPSIM_PART_SOFTWARE, CAPSIM_PART_OTHER, CAPSIM_PART_SWITCH,
	CAPSIM_PART__COUNT
} capsim_fail_part;

extern const char *const capsim_fail_part_names[CAPSIM_PART__COUNT];

/* How long a node was out after a fault of each part, on average: StepFun's
 * fault trace (reliab.c); 0 for the switch (its nodes are not repaired). */
extern const double capsim_part_repair_s[CAPSIM_PART__COUNT];

/* 1 if s's checkpoints are saved asynchronously: as given, or by its
 * framework's own save path (Megatron-LM and FSDP2 async, torch-amp and
 * DeepSpeed sync). */
int capsim_checkpoint_async(const capsim_scenario *s);

/* 1 if s checkpoints to host memory (cluster.storage.checkpoint-mode=memory):
 * each GPU's shard copied to its host, each node's shard replicated to
 * cluster.storage.checkpoint-replicas peers over the scale-out network. */
int capsim_checkpoint_in_memory(const capsim_scenario *s);

/* Refuses (adds to d, returns -1) an in-memory checkpoint that s's nodes
 * cannot hold: no peer to replicate to (fewer nodes than 1 + replicas), a
 * node type without host-memory.capacity, or a node's GPUs' shards x (1 +
 * replicas) over it. 0 where s does not checkpoint to memory or fits. */
int capsim_reliab_check(const capsim_scenario *s, capsim_diags *d);

/* A checkpoint's save path, its parts' rates (docs/model.md, "Checkpoints,
 * failures and goodput"): the machine's copy of a GPU's shard into pageable
 * host memory (and back onto the GPU) and its serialisation a writer
 * thread, the writer threads a rank, and the flat efficiency of old where
 * one is given (0: none, the parts). The storage's raw rates are its own. */
typedef struct capsim_ckpt_path {
	double host_copy_bytes_per_s;
	double serialise_bytes_per_s;
	int writers;
	double flat_eff;
} capsim_ckpt_path;

/* s's save path: cluster.storage.checkpoint-host-copy, -serialise,
 * -writers and -efficiency. */
void capsim_ckpt_path_of(const capsim_scenario *s, capsim_ckpt_path *out);

/* A rank's copy of its shard of `shard` bytes into pageable host memory,
 * which a synchronous save starts with: shard / host copy; 0 under a flat
 * efficiency (its rate holds the copy). */
double capsim_ckpt_copy_s(const capsim_ckpt_path *p, double shard);

/* The writers' part of a save of a rank's shard of `shard` bytes from host
 * memory, the storage taking store_s to write what it is given at its raw
 * rate: each of N writer threads serialises its part and writes it in turn,
 * N together no faster than the storage, max((shard / serialise + store_s)
 * / N, store_s); store_s / the flat efficiency where one is given. What a
 * synchronous save adds to its copy, and what an asynchronous one drains. */
double capsim_ckpt_write_s(const capsim_ckpt_path *p, double shard, double store_s);

/* A restore of a rank's shard of `shard` bytes that the storage reads in
 * read_s at its raw rate: torch.load's read and its copy onto the GPU
 * overlap (the kernel reads ahead while it copies), so the slower of the
 * two, max(read_s, shard / host copy). */
double capsim_ckpt_restore_s(const capsim_ckpt_path *p, double shard, double read_s);

typedef struct capsim_reliab {
	double checkpoint_bytes;  /* the job's: trained weights, master copy, optimizer state */
	double weights_bytes;     /* the trained weights alone, in their dtype */
	int has_storage;          /* a tier to write to: the times below are set */
	double copy_s;            /* a synchronous save's copy of a GPU's shard to pageable
				   * host memory (0 under a flat efficiency) */
	double write_s;           /* its serialisation and write, every node writing its
				   * share (what an async save drains) */
	double restore_s;         /* one checkpoint read back onto the GPUs */
	double blocking_s;        /* what training waits for each save: copy_s + write_s, or
				   * (async, memory) the copy of a GPU's shard to pinned
				   * host memory over PCIe */
	/* in memory (checkpoint-mode=memory): restore_s is a node's shard read
	 * from a peer over its NICs, and the storage tier's own restore, the
	 * persistent saves and the loss of a node with its replicas are below */
	int in_memory;
	double replicate_s;       /* a node's shard x replicas over its NICs, in the background */
	double shard_node_bytes;  /* the largest node's GPUs' shards */
	double storage_restore_s; /* the storage tier's restore (0: no tier) */
	double persistent_interval_s; /* between saves to storage; 0: none */
	double persistent_cost_s; /* one save to storage, as the framework's save path costs it */
	/* the job's interruptions a second from each part: a node's parts x
	 * nodes (GPUs x GPUs), switches x leaves */
	double part_rate_per_s[CAPSIM_PART__COUNT];
	double node_mtbf_s;       /* one node's parts together */
	double job_mttf_s;        /* 1 / the sum of part_rate_per_s */
	double interval_s;        /* between checkpoints: given, or Young's optimum */
	int interval_given;
	double work_s;            /* the training time the goodput is of (time_to_train_s) */
	double goodput;           /* work_s / wall_to_train_s */
	double interruptions;     /* expected over the training run */
	double wall_to_train_s;   /* the expected wall time (capsim_expected_wall); infinite
				   * where it overflows a double */
	int barely_progresses;    /* an interval and its save outlast the job's MTTF */
	/* Monte Carlo over the whole run (runs > 0): wall time to train, its
	 * mean with a 95% confidence half-width, median and 95th percentile;
	 * interruptions and lost work per run, mean */
	int runs;
	double mc_wall_mean_s, mc_wall_ci_s, mc_wall_p50_s, mc_wall_p95_s;
	double mc_interruptions, mc_lost_s;
	/* spares: nodes in repair at a time (each part's failures x its repair,
	 * or reliability.repair), their mean and the spares that cover them 99%
	 * of the time (Poisson) */
	double nodes_in_repair;
	int spare_nodes;
} capsim_reliab;

/* The smallest k with P(Poisson(mean) <= k) >= p. */
int capsim_poisson_quantile(double mean, double p);

/* The expected wall time of `work` seconds of training, checkpointed every
 * tau of work (each save delta), under interruptions at rate 1/mttf, each
 * costing restart_s before the work resumes from the last checkpoint:
 * n = work / tau segments of tau + delta (the last one shorter), each taking
 * (e^(L/mttf) - 1)(mttf + restart_s) on average (exponential failures,
 * none during a restart). Exact under that model; infinite where it
 * overflows a double (L/mttf past about 709); 0 without work, interval or
 * MTTF. */
double capsim_expected_wall(double work, double tau, double delta, double restart_s,
			    double mttf_s);

/* The expected interruptions of that run: the segments' failed attempts,
 * sum of e^(L/mttf) - 1. */
double capsim_expected_failures(double work, double tau, double delta, double mttf_s);

/* The mean and variance of the time one failed attempt at a segment of L
 * runs before its failure: an exponential of mean mttf truncated to
 * [0, L], m - L / (e^(L/m) - 1) and m^2 - L^2 e^(L/m) / (e^(L/m) - 1)^2
 * (series below L/m = 0.01, where those cancel). */
void capsim_truncated_exp_moments(double L, double mttf_s, double *mean, double *var);

/* The same run simulated `runs` times, each from its own GSL random stream
 * seeded by seed and the run's index (so the result does not depend on how
 * runs are spread over threads); fills the mc_* fields of out. A run costs
 * O(1) draws whatever its interruptions: the failed attempts of its n whole
 * segments are one negative binomial draw (n successes at e^(-L/mttf)), the
 * time they lost a sum of truncated exponentials, drawn one by one up to
 * CAPSIM_MC_EXACT_ATTEMPTS and past that as a gamma of the sum's exact mean
 * and variance. Nothing is drawn (runs = 0) where the expected wall time is
 * not finite. */
void capsim_reliab_monte_carlo(double work, double tau, double delta, double restart_s,
			       double mttf_s, int runs, unsigned long seed, capsim_reliab *out);

/* Failed attempts up to which their lost times are drawn one by one. */
#define CAPSIM_MC_EXACT_ATTEMPTS 64

/* Young's optimum checkpoint interval: sqrt(2 write mttf) (Young 1974). */
double capsim_young_interval(double write_s, double mttf_s);

/* The first-order goodput (Young, Daly) with interval tau, write time
 * delta, restart cost r (requeue and reload) and mean time to interruption
 * m: each cycle of tau + delta does tau of work, and an interruption, 1/m of
 * the time, costs r and half a cycle's lost work:
 * tau / ((tau + delta)(1 + (r + (tau + delta)/2) / m)). Within 1% of the
 * exact one (capsim_expected_wall) while (tau + delta) / m is below about
 * 0.2; capsim's results use the exact one. */
double capsim_goodput(double tau, double delta, double restart_s, double mttf_s);

/* What runs in the background after a save's blocking copy: the write
 * (async), the replication to peers (memory), nothing (sync). */
double capsim_drain_time(const capsim_scenario *s, const capsim_reliab *r);

/* What one save costs the training, in seconds of its time: the blocking
 * part, and with async or in-memory saves the work the slower steps lose
 * while the drain runs (cluster.storage.checkpoint-drain-slowdown). */
double capsim_save_cost(const capsim_scenario *s, const capsim_reliab *r);

/* What a save costs the training with the checkpoint interval tau: its
 * cost above and, in memory, the persistent saves' cost amortised over
 * the in-memory ones (persistent_cost_s x tau / persistent_interval_s). */
double capsim_save_delta(const capsim_scenario *s, const capsim_reliab *r, double tau);

/* The chance that an interruption with the checkpoint interval tau loses a
 * node together with every peer holding its shard (memory mode; 0
 * otherwise): the interruption is a node's (not a switch's), and each of
 * its replicas' nodes fails within the window w = restart + restore + tau
 * + drain before or after it, before the next save copies the shard
 * again: node share x (1 - e^(-2 w / node MTBF))^replicas. */
double capsim_replica_loss_chance(const capsim_scenario *s, const capsim_reliab *r, double tau);

/* What an interruption costs before the work resumes, with the checkpoint
 * interval tau: s's restart (reliability.restart), r's restore and, with
 * async or in-memory saves, the drain of the save that was running (lost
 * with it); in memory, also the loss chance above x what such a loss costs
 * more: the storage's restore in place of the peer's and half a persistent
 * interval of work (without persistent saves, half the run's work). */
double capsim_restart_cost(const capsim_scenario *s, const capsim_reliab *r, double tau);

/* The goodput of r's checkpoints (its write, blocking and restore times)
 * under interruptions every mttf_s: exact, r->work_s over its expected wall
 * time (capsim_expected_wall; without work_s, over a run of many intervals,
 * tau / ((e^(L/m) - 1)(m + restart)), L = tau + capsim_save_delta), at s's
 * checkpoint interval, or Young's on the save's cost (async and memory: no
 * shorter than the drain), which *interval_s gets; the restart is
 * capsim_restart_cost. 0 without an interval, and where the expected time
 * of an interval overflows. */
double capsim_reliab_goodput_under(const capsim_scenario *s, const capsim_reliab *r,
				   double mttf_s, double *interval_s);

/* The job's interruption rate from each part (reliability.*-mtbf: GPU and
 * HBM a GPU, the others a node; a given reliability.node-mtbf scales the
 * node's parts to it), on `leaves` leaf switches. */
void capsim_part_rates(const capsim_scenario *s, int leaves, double rate[CAPSIM_PART__COUNT]);

/* Checkpoints, failures and goodput of scenario s's step st, its nodes on
 * `leaves` leaf switches. */
void capsim_reliab_estimate(const capsim_scenario *s, const capsim_step *st, int leaves,
			    capsim_reliab *out);

#endif
