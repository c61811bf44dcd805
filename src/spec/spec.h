/* spec.h - the plain C structs that input files become, with every quantity in
 * SI (bytes, bytes/s, FLOP/s, seconds, watts, joules, US dollars), and the field
 * tables that say which XML attribute fills which member.
 *
 * A numeric member of 0 (or an empty string) means "not given" for optional
 * fields; required fields are always set once a file has loaded. Flags hold 0
 * or 1. Enums hold the index of their name in the field's enum list.
 */
#ifndef CAPSIM_SPEC_H
#define CAPSIM_SPEC_H

#include <stddef.h>
#include <stdint.h>

#include "fabsize.h"
#include "units.h"

#define CAPSIM_ID_LEN 64
#define CAPSIM_TEXT_LEN 256
#define CAPSIM_DATE_LEN 16
#define CAPSIM_PATH_LEN 1024

/* ---- field tables ------------------------------------------------------- */

typedef enum capsim_ftype {
	CAPSIM_FT_DOUBLE, /* double, parsed by dim */
	CAPSIM_FT_INT,    /* int, parsed by dim (COUNT), must be integral */
	CAPSIM_FT_TEXT,   /* char[size] */
	CAPSIM_FT_ENUM,   /* int index into enums */
	CAPSIM_FT_FLAG,   /* int 0/1 from true/false/on/off/yes/no */
	CAPSIM_FT_DATE,   /* char[size], YYYY[-MM[-DD]] */
	CAPSIM_FT_REF     /* char[size], id of a catalog entry of ref_kind */
} capsim_ftype;

#define CAPSIM_F_REQUIRED 0x1u /* must be given (in the catalog entry) */
#define CAPSIM_F_POSITIVE 0x2u /* > 0 when given */
#define CAPSIM_F_NONNEG 0x4u   /* >= 0 when given */
#define CAPSIM_F_INTEGRAL 0x8u /* DOUBLE that must be a whole number (too large for int) */
#define CAPSIM_F_ID 0x10u      /* TEXT that the schemas type as an id ([a-z0-9][a-z0-9._-]*) */
#define CAPSIM_F_GROUP 0x20u   /* a node group's field (cluster.group.ID.*): read and edited per
				* group by the scenario's group code, never by a table walk */

typedef struct capsim_field {
	const char *path;  /* "memory.bandwidth": elements below the entry, then the attribute */
	capsim_ftype type;
	capsim_dim dim;    /* DOUBLE and INT */
	size_t offset;     /* into the struct */
	size_t size;       /* TEXT, DATE, REF: buffer size */
	unsigned flags;
	double min, max;   /* plausible range in SI when given; min == max: no check */
	const char *const *enums; /* ENUM: NULL-terminated */
	const char *hw;    /* USD_PER_S: hardware unit of the rate ("GPU") */
	const char *ref_kind; /* REF: kind name ("gpu") */
	const char *def;   /* default as it would be written in a file, or NULL */
	const char *doc;   /* one line for people */
} capsim_field;

/* Common head of every catalog entry. */
typedef struct capsim_entry {
	char id[CAPSIM_ID_LEN];
	char name[CAPSIM_TEXT_LEN];
	char src[CAPSIM_ID_LEN];         /* bibliography id of the entry, or "" */
	char assumption[CAPSIM_TEXT_LEN]; /* why, where no source; or "" */
	char file[CAPSIM_PATH_LEN];       /* where it was defined */
	long line;
} capsim_entry;

/* ---- catalog kinds ------------------------------------------------------- */

typedef enum { CAPSIM_SCALEUP_NONE, CAPSIM_SCALEUP_NVLINK, CAPSIM_SCALEUP_INFINITY_FABRIC } capsim_scaleup_kind;
typedef enum { CAPSIM_DIR_BIDIRECTIONAL, CAPSIM_DIR_PER_DIRECTION } capsim_direction;
/* The operand layouts a GPU's per-tensor-scaled FP8 GEMMs take: TN only
 * (Ada, Hopper), so a backward GEMM reads a transposed FP8 copy of its
 * operand; or any (Blackwell), so one FP8 copy serves both */
typedef enum { CAPSIM_FP8_LAYOUTS_TN, CAPSIM_FP8_LAYOUTS_ANY } capsim_fp8_layouts;

/* ---- calibration: what `capsim fit` measured on one GPU model ----------- */

#define CAPSIM_CAL_DTYPES 5 /* one per capsim_dtype: fp32, tf32, bf16, fp16, fp8 */
#define CAPSIM_CAL_TABLE 16 /* square GEMM sizes in one dtype's table */
#define CAPSIM_CAL_SHAPES 32 /* measured shapes in one dtype's table */

/* GEMM efficiency of one dtype, fitted to cuBLASLt runs on this GPU model:
 * the fraction of the dtype's dense peak that a GEMM of F = 2mnk FLOP and
 * arithmetic intensity I = F / bytes(A + B + C) reaches,
 *   eff = sat x T(F) / T(flop_max) x U(I) / U(ai_max) x c(m, n, k),
 *   T(F) = 1 / (1 + (f0/F)^p),  U(I) = 1 / (1 + (i0/I)^q),
 * with F and I clamped to the measured range. The correction c is
 * measured / smooth: at a measured shape its own ratio; for a square GEMM
 * (m = n = k) a Steffen interpolation in log10 F over the measured square
 * sizes (held at its ends); 1 elsewhere. A shape measured more than once
 * keeps the range of its ratios, so that the op model can take, of the
 * values measured there, the one nearest its uncalibrated prediction
 * (capsim_gemm_efficiency_mnk). Evaluated by capsim_gemm_cal_eff
 * (src/plan/ops.h); docs/model.md, "Calibrated GEMM efficiency". */
typedef struct capsim_gemm_cal {
	int params;                  /* 0: not calibrated; 1 (sat), 3 (+ f0, p) or 5 (+ i0, q) */
	double sat;                  /* model fraction at (flop_max, ai_max) */
	double f0_flop, p;           /* params >= 3 */
	double i0_flop_per_byte, q;  /* params == 5 */
	double flop_min, flop_max;   /* measured range of F */
	double ai_min, ai_max;       /* measured range of I, FLOP per byte */
	int n_table;                 /* square sizes, 0: none */
	double table_flop[CAPSIM_CAL_TABLE];  /* ascending F of the square GEMMs */
	double table_ratio[CAPSIM_CAL_TABLE]; /* measured / smooth there */
	int n_shapes;                /* measured shapes (squares included) */
	double shape_m[CAPSIM_CAL_SHAPES], shape_n[CAPSIM_CAL_SHAPES];
	double shape_k[CAPSIM_CAL_SHAPES], shape_ratio[CAPSIM_CAL_SHAPES];
	/* the least and the greatest ratio measured at each shape (equal to
	 * shape_ratio where it was measured once) */
	double shape_lo[CAPSIM_CAL_SHAPES], shape_hi[CAPSIM_CAL_SHAPES];
	/* measured / smooth of the GEMMs with a dimension that is no multiple of
	 * 16 bytes' elements (capsim_gemm_aligned), their median; applied to
	 * such shapes that were not measured. 0: none measured */
	double misaligned;
} capsim_gemm_cal;

#define CAPSIM_CAL_COLLS 8 /* collectives one GPU's calibration carries */

/* One NCCL collective measured inside one node at `ranks` GPUs under NCCL's
 * own choice of algorithm and protocol: t = latency + bytes / bandwidth in
 * each regime, bytes as nccl-tests counts them (the whole tensor of an
 * all-gather or reduce-scatter). Used only over [bytes_min, bytes_max];
 * src/train/step.c. */
typedef struct capsim_coll_cal {
	char op[24];                     /* all_reduce, all_gather, ... (the store's names) */
	int ranks;
	int regimes;                     /* 1 or 2 */
	double split_bytes;              /* regime 1 from here */
	double latency_s[2], bw_bytes_per_s[2];
	double bytes_min, bytes_max;
} capsim_coll_cal;

/* workload.attention: the framework's fused kernel, none (unfused), or one named */
typedef enum {
	CAPSIM_ATTENTION_FUSED,
	CAPSIM_ATTENTION_UNFUSED,
	CAPSIM_ATTENTION_FLASH2,
	CAPSIM_ATTENTION_FLASH3,
	CAPSIM_ATTENTION_CUDNN
} capsim_attention;

/* Fused attention kernels whose rates capsim keeps apart (workload.attention
 * picks one, or the framework's). */
typedef enum {
	CAPSIM_ATTN_FLASH2, /* FlashAttention-2 (flash-attn 2.x, PyTorch SDPA's flash backend) */
	CAPSIM_ATTN_FLASH3, /* FlashAttention-3 (Hopper) */
	CAPSIM_ATTN_CUDNN,  /* cuDNN fused attention (Transformer Engine's FusedAttention,
			     * PyTorch SDPA's cudnn backend) */
	CAPSIM_ATTN__KERNELS
} capsim_attn_kernel;

extern const char *const capsim_attn_kernel_names[]; /* "flash2", "flash3", "cudnn" */

#define CAPSIM_ATTN_POINTS 40 /* measured points one kernel's curve holds */

/* One measured attention shape: achieved rates in FLOP/s as FlashAttention's
 * benchmarks count them (forward 4 b s^2 heads d, halved when causal;
 * backward 2.5x the forward). Single precision: every GPU of a scenario
 * (its groups' too) carries three curves, and a measured rate has no seven
 * significant digits to lose. */
typedef struct capsim_attn_point {
	float seq;       /* keys each query row sees (the sequence, or a CP chunk) */
	float head_dim;
	int causal;      /* 1: causal mask */
	float fwd_flop_per_s, bwd_flop_per_s;
} capsim_attn_point;

/* A kernel's rate curve on one GPU. Rates are used as fractions of peak_bf16
 * (the dense bf16 peak of the GPU they were measured on), so a curve carries
 * over to a GPU of the same design at its own peak. n = 0: not measured. */
typedef struct capsim_attn_curve {
	int n;
	double peak_bf16_flop_per_s;
	capsim_attn_point pt[CAPSIM_ATTN_POINTS];
} capsim_attn_curve;

/* What a calibrated profile (src/io/profile.h) gives a GPU beyond its
 * <efficiency> values. Zero: not calibrated. */
typedef struct capsim_gpu_cal {
	char profile[CAPSIM_ID_LEN];     /* the profile's name, or "" */
	capsim_gemm_cal gemm[CAPSIM_CAL_DTYPES]; /* by capsim_dtype */
	int n_coll;
	capsim_coll_cal coll[CAPSIM_CAL_COLLS]; /* single-node, NCCL's own choice */
	double power_idle_w;             /* 0: not measured */
	double power_sustained_w;        /* under back-to-back GEMMs */
	double clock_sustained_hz;       /* median SM clock under that load */
	double power_gamma;              /* P = idle + (sustained - idle) u^gamma over GEMM duty u; 0: not fitted */
	capsim_attn_curve attn[CAPSIM_ATTN__KERNELS]; /* measured attention, by capsim_attn_kernel */
} capsim_gpu_cal;

typedef struct capsim_gpu {
	capsim_entry e;
	double peak_fp64_flop_per_s, peak_fp32_flop_per_s, peak_tf32_flop_per_s;
	double peak_bf16_flop_per_s, peak_fp16_flop_per_s, peak_fp8_flop_per_s;
	double peak_fp4_flop_per_s; /* dense; 0: not supported */
	double mem_bytes, mem_bw_bytes_per_s;
	double mem_usable_bytes;     /* totalGlobalMem; 0: not given (capsim_gpu_usable_bytes) */
	double power_limit_w;        /* power.limit: the board limit it runs at; 0: power.tdp */
	char mem_type[CAPSIM_ID_LEN];
	double tdp_w;
	double clock_max_hz;
	int sms;                   /* streaming multiprocessors; 0: not given (capsim_gpu_sms) */
	int scaleup_kind;          /* capsim_scaleup_kind */
	int scaleup_generation, scaleup_links;
	double scaleup_bw_bytes_per_s; /* as the datasheet gives it */
	int scaleup_direction;     /* capsim_direction of that figure */
	int pcie_generation, pcie_lanes;
	int fp8_layouts;           /* capsim_fp8_layouts */
	/* measured efficiencies (a calibrated profile, or --set); 0: capsim's
	 * published defaults (capsim_gpu_perf_default) */
	double eff_gemm, eff_gemm_fp8;  /* best GEMM fraction of the dense peak */
	double eff_hbm;                 /* copy bandwidth over the datasheet's */
	double eff_attention;           /* fused attention fraction of the bf16 peak */
	/* per kernel: the host's bare launch, a graph node's (and a queued
	 * kernel's) cost on the GPU, and the framework's host work per kernel
	 * beyond the launch, eager and compiled (docs/model.md, "The host
	 * stream") */
	double launch_eager_s, launch_graph_s, kernel_gap_s;
	double dispatch_s, dispatch_compiled_s;
	/* runtime variability: the coefficient of variation of the sustained
	 * kernel rate between GPUs of this model (persistent), and of one GPU
	 * from step to step; 0: none (docs/model.md, "Runtime variability") */
	double rate_cv, step_cv;
	/* an eager plain-PyTorch block's kernels, [LayerNorm, RMSNorm family]
	 * [forward, backward], from a profile; 0: capsim's measured defaults */
	double block_kernels[2][2];
	capsim_gpu_cal cal;             /* a calibrated profile's fits (capsim_profile_apply) */
	double price_usd;
	char price_date[CAPSIM_DATE_LEN];
} capsim_gpu;

typedef enum { CAPSIM_TRANSPORT_INFINIBAND, CAPSIM_TRANSPORT_ETHERNET, CAPSIM_TRANSPORT_VPI } capsim_nic_transport;

typedef struct capsim_nic {
	capsim_entry e;
	int transport; /* capsim_nic_transport */
	double port_speed_bytes_per_s;
	int ports;
	int pcie_generation, pcie_lanes;
	int rdma, gpudirect;
	double power_typical_w, power_max_w;
	double price_usd;
	char price_date[CAPSIM_DATE_LEN];
} capsim_nic;

typedef struct capsim_switch {
	capsim_entry e;
	int transport;
	int ports;
	double port_speed_bytes_per_s;
	double latency_s;
	int sharp, adaptive_routing;
	double power_typical_w, power_max_w;
	double price_usd;
	char price_date[CAPSIM_DATE_LEN];
} capsim_switch;

typedef struct capsim_nvswitch {
	capsim_entry e;
	int generation;
	int nvlink_ports;
	double bw_bytes_per_s;
	int direction;
	int nvls;
} capsim_nvswitch;

typedef enum { CAPSIM_STORAGE_NVME, CAPSIM_STORAGE_LOCAL_RAID0, CAPSIM_STORAGE_LUSTRE, CAPSIM_STORAGE_WEKA, CAPSIM_STORAGE_NFS, CAPSIM_STORAGE_OBJECT, CAPSIM_STORAGE_TMPFS } capsim_storage_kind;

typedef struct capsim_storage {
	capsim_entry e;
	int kind;  /* capsim_storage_kind */
	int scope; /* 0 per-device, 1 aggregate */
	double read_bytes_per_s, write_bytes_per_s;
	double client_read_bytes_per_s, client_write_bytes_per_s;
	double read_iops, write_iops;
	double metadata_ops_per_s;
	double power_typical_w;   /* the system's (aggregate scope); 0: not given */
	double capacity_bytes;
	double price_usd;
	char price_date[CAPSIM_DATE_LEN];
} capsim_storage;

typedef enum { CAPSIM_NODE_NVSWITCH, CAPSIM_NODE_NVLINK_DIRECT, CAPSIM_NODE_PCIE, CAPSIM_NODE_INFINITY_FABRIC } capsim_node_fabric;

typedef struct capsim_node {
	capsim_entry e;
	char gpu[CAPSIM_ID_LEN];
	int gpus;
	int scaleup_fabric; /* capsim_node_fabric */
	char nvswitch[CAPSIM_ID_LEN];
	int nvswitches;
	int domain_gpus;    /* GPUs in one NVLink domain; 0: the node's GPUs */
	char nic[CAPSIM_ID_LEN];
	int nics;
	char cpu_model[CAPSIM_TEXT_LEN];
	int cpu_sockets, cpu_cores;
	/* the host's cost per kernel a framework issues (docs/model.md, "The host
	 * stream"): a bare launch, and the framework's work beyond it eager and
	 * under torch.compile; 0: the GPU's calibrated profile's, else capsim's
	 * measured defaults */
	double host_launch_s, host_dispatch_s, host_dispatch_compiled_s;
	double host_mem_bytes, local_storage_bytes;
	double power_max_w;
	double power_overhead_w;  /* CPUs, NICs, NVMe, NVSwitches, fans, PSU losses; 0: max less the GPUs' TDP */
	/* what is not GPUs, by what the node holds (docs/model.md, "Power and
	 * energy"): the host's fixed draw (CPUs, memory, drives, fans, board) and
	 * each GPU's share beside its own TDP (NVSwitch and baseboard, PSU loss);
	 * the NICs' own power comes from the NIC. 0 and 0: power.max less the
	 * GPUs' TDP, as one sum that does not scale */
	double power_host_w, power_per_gpu_w;
	/* a rack-scale system's compute tray (domain-gpus a whole number of its
	 * GPUs past them): the NVLink switch trays one domain's rack holds beside
	 * its compute trays, and the power of each; 0: not rack-scale */
	int switch_trays;
	double switch_tray_w;
	int rack_units;
	double price_usd;
	char price_date[CAPSIM_DATE_LEN];
} capsim_node;

typedef enum { CAPSIM_PRICING_ON_DEMAND, CAPSIM_PRICING_RESERVED, CAPSIM_PRICING_SPOT } capsim_pricing;

typedef struct capsim_cloud {
	capsim_entry e;
	char provider[CAPSIM_TEXT_LEN];
	int pricing;
	char instance_type[CAPSIM_TEXT_LEN];
	char gpu[CAPSIM_ID_LEN];
	int gpus_per_instance;
	double rate_usd_per_gpu_s;
	char rate_date[CAPSIM_DATE_LEN];
	double commitment_s;
	double reclaimed_per_month; /* spot: share of instances reclaimed in a month; 0: none given */
	double storage_usd_per_byte_s; /* the data and checkpoints kept there; 0: not given */
	double egress_usd_per_byte;    /* the trained weights taken out; 0: not given */
} capsim_cloud;

typedef struct capsim_facility {
	capsim_entry e;
	double pue;
	double energy_usd_per_j;
	double rack_power_w;
	double circuit_v, circuit_a;
	int circuit_phases;
	double colo_usd_per_w_s;
	/* cooling: what a rack's cooling removes (0: not given), air or liquid;
	 * the nodes a rack the planner chose (0: as many as power and cooling
	 * allow at the nodes' maximum) */
	double cooling_w;
	int cooling_kind;          /* 0 air, 1 liquid */
	int rack_nodes;
	/* the floor (layout.h): racks a row, pitches, each cable's slack */
	int racks_per_row;
	double rack_pitch_m, row_pitch_m, slack_m;
} capsim_facility;

typedef enum { CAPSIM_ACT_GELU, CAPSIM_ACT_SWIGLU, CAPSIM_ACT_RELU } capsim_activation;

typedef struct capsim_model {
	capsim_entry e;
	char family[CAPSIM_TEXT_LEN];
	int layers, hidden, heads, kv_heads, head_dim, ffn;
	int activation; /* capsim_activation */
	int vocab, max_seq_len;
	int norm, position, tied_embeddings;
	int moe_experts, moe_top_k, moe_shared_experts, moe_expert_ffn, moe_dense_layers;
	int mla_q_lora_rank, mla_kv_lora_rank, mla_qk_nope_head_dim, mla_qk_rope_head_dim, mla_v_head_dim;
	/* sliding-window attention: the window in tokens (0: none), and every
	 * global_every-th layer attending to the whole sequence instead (0:
	 * every layer has the window) */
	int sliding_window, global_every;
	double published_params, published_active_params;
} capsim_model;

typedef struct capsim_bibref {
	capsim_entry e; /* name unused; e.id is the reference id */
	char title[CAPSIM_TEXT_LEN];
	char where[CAPSIM_TEXT_LEN];
	char date[CAPSIM_DATE_LEN];
	char url[CAPSIM_TEXT_LEN];
	int quality;
} capsim_bibref;

/* A kind of catalog entry: its element name, struct and fields. */
typedef struct capsim_kind {
	const char *name;     /* XML element and --set name: "gpu" */
	const char *plural;   /* `capsim catalog gpus` */
	const char *file_kind; /* "hardware" or "model" */
	size_t size;
	const capsim_field *fields;
	size_t n_fields;
	const char *const *columns; /* field paths shown by `capsim catalog` */
} capsim_kind;

typedef enum {
	CAPSIM_KIND_GPU, CAPSIM_KIND_NIC, CAPSIM_KIND_SWITCH, CAPSIM_KIND_NVSWITCH,
	CAPSIM_KIND_STORAGE, CAPSIM_KIND_NODE, CAPSIM_KIND_CLOUD,
	CAPSIM_KIND_FACILITY, CAPSIM_KIND_MODEL, CAPSIM_KIND__COUNT
} capsim_kind_id;

extern const capsim_kind capsim_kinds[CAPSIM_KIND__COUNT];
extern const capsim_kind capsim_bibref_kind;

/* The kind whose element name or plural is s, or NULL. */
const capsim_kind *capsim_kind_by_name(const char *s);

/* The field of kind k at path, or NULL. */
const capsim_field *capsim_field_find(const capsim_field *f, size_t n,
				      const char *path);

/* ---- scenarios ----------------------------------------------------------- */

typedef enum { CAPSIM_TOPO_FAT_TREE, CAPSIM_TOPO_SINGLE_SWITCH, CAPSIM_TOPO_NONE } capsim_topology;
typedef enum { CAPSIM_NET_INFINIBAND, CAPSIM_NET_ROCE, CAPSIM_NET_TCP } capsim_net_transport;
/* Routing through the fabric's switches. ECMP hashes each flow onto an
 * equal-cost uplink (Ethernet's way, with collisions); adaptive picks the
 * least-loaded uplink at flow start (Quantum-2's adaptive routing, Spectrum-X);
 * deterministic is the subnet manager's destination-based up*-down* routing
 * of a fat tree (D-mod-K: OpenSM's ftree engine; Zahavi et al. 2010). auto is
 * deterministic on InfiniBand, ECMP on RoCE and TCP. */
typedef enum {
	CAPSIM_ROUTING_ECMP,
	CAPSIM_ROUTING_ADAPTIVE,
	CAPSIM_ROUTING_DETERMINISTIC,
	CAPSIM_ROUTING_AUTO
} capsim_routing;
typedef enum { CAPSIM_CC_TUNED, CAPSIM_CC_UNTUNED } capsim_congestion;
typedef enum { CAPSIM_DTYPE_FP32, CAPSIM_DTYPE_TF32, CAPSIM_DTYPE_BF16, CAPSIM_DTYPE_FP16, CAPSIM_DTYPE_FP8 } capsim_dtype;
typedef enum { CAPSIM_SCHED_GPIPE, CAPSIM_SCHED_1F1B, CAPSIM_SCHED_1F1B_INTERLEAVED } capsim_schedule;
typedef enum { CAPSIM_RECOMPUTE_NONE, CAPSIM_RECOMPUTE_SELECTIVE, CAPSIM_RECOMPUTE_FULL } capsim_recompute;

/* How the host issues a step's kernels (docs/model.md, "The host stream"):
 * eager (each op through Python, the dispatcher and autograd), compiled
 * (torch.compile's generated code), graphs (one CUDA graph replayed). */
typedef enum { CAPSIM_EXEC_EAGER, CAPSIM_EXEC_COMPILED, CAPSIM_EXEC_GRAPHS } capsim_execution;
extern const char *const capsim_execution_names[];

/* Where the job's nodes sit: contiguous (node i in leaf i / down, as one
 * job on a cluster of its own, or a topology-aware scheduler), or scattered
 * over the node positions by the scheduler (a seeded shuffle). */
typedef enum { CAPSIM_PLACE_CONTIGUOUS, CAPSIM_PLACE_SCATTERED } capsim_placement;

/* Training frameworks, by the copies of the model they keep (docs/model.md,
 * "Memory per framework"). */
typedef enum {
	CAPSIM_FW_MEGATRON, /* Megatron-LM / NeMo: 16-bit weights, fp32 main grads, fp32 master */
	CAPSIM_FW_TORCH_AMP, /* PyTorch autocast: fp32 weights only, bf16 casts per step */
	CAPSIM_FW_FSDP2,    /* FSDP2 mixed precision: fp32 sharded params, bf16 gathers */
	CAPSIM_FW_DEEPSPEED /* DeepSpeed ZeRO: 16-bit weights and grads, fp32 master */
} capsim_framework;

extern const char *const capsim_framework_names[];

/* workload.fp8-recipe: Transformer Engine's scaling of its fp8 tensors;
 * framework: delayed for megatron and deepspeed (Megatron-LM's --fp8-recipe
 * default), torchao's dynamic tensorwise for torch-amp and fsdp2 */
typedef enum {
	CAPSIM_FP8_FRAMEWORK,
	CAPSIM_FP8_DELAYED,  /* the scale from the amax history: one pass a cast */
	CAPSIM_FP8_CURRENT   /* the scale from this tensor's amax: an amax pass first */
} capsim_fp8_recipe;

/* workload.precision.params, in the names' order (spec.c) */
typedef enum {
	CAPSIM_PREC_PARAMS_FRAMEWORK,
	CAPSIM_PREC_PARAMS_FP32,
	CAPSIM_PREC_PARAMS_BF16,
	CAPSIM_PREC_PARAMS_FP16,
	CAPSIM_PREC_PARAMS_FP8 /* Transformer Engine's FP8 primary weights (the GEMMs'):
				* Megatron-LM's --fp8-param-gather */
} capsim_prec_params;

/* How a checkpoint is saved (cluster.storage.checkpoint-mode): the
 * framework's own save path, or synchronous or asynchronous as given. */
typedef enum {
	CAPSIM_CKPT_FRAMEWORK, CAPSIM_CKPT_SYNC, CAPSIM_CKPT_ASYNC, CAPSIM_CKPT_MEMORY
} capsim_checkpoint_mode;

extern const char *const capsim_checkpoint_mode_names[];

/* Fine-tuning: full (every weight trained) or LoRA (Hu et al., "LoRA:
 * Low-Rank Adaptation of Large Language Models", ICLR 2022): the base
 * weights frozen, a rank-r pair A (din x r), B (r x dout) trained beside each
 * adapted matrix. Targets: every linear layer of the blocks (QLoRA,
 * Dettmers et al. 2023, found all of them needed to match full fine-tuning),
 * or the attention projections only. */
typedef enum { CAPSIM_FT_FULL, CAPSIM_FT_LORA } capsim_finetune;
typedef enum { CAPSIM_LORA_ALL, CAPSIM_LORA_ATTENTION } capsim_lora_targets;

#define CAPSIM_MAX_GROUPS 16 /* node groups in one cluster */
#define CAPSIM_MAX_OVERRIDES 256/* part fields overridden in one scenario */
/* element paths whose lines a scenario keeps: every element path a scenario
 * file can have (103 today: the settable paths' elements, the root and
 * <description>; test_groups checks the bound), with room to grow; past it
 * a load is refused, naming the number */
#define CAPSIM_MAX_LINES 128
/* distinct paths a scenario's edits remember, so that an error names the
 * --set that caused it: an explorer session's knobs on 16 node groups (59),
 * the optimiser's layout (16), the throttle (16) and the scaling reference
 * (5) fit, as do a sweep's 32 axes; past it an edit is refused, naming the
 * number (test_groups) */
#define CAPSIM_MAX_EDITS 128
#define CAPSIM_VALUE_LEN 128    /* longest value of an override or edit */

/* A catalog part's field given in the scenario (<gpu ref="..."><memory
 * bandwidth="..."/></gpu>) or by --set: reapplied whenever the part is
 * resolved again. */
typedef struct capsim_override {
	char path[128];            /* "cluster.gpu.memory.bandwidth" */
	char value[CAPSIM_VALUE_LEN];
	long line;                 /* in the scenario file; 0: from an edit */
} capsim_override;

/* Where an element of the scenario file was, for messages. */
typedef struct capsim_elem_line {
	char path[64];             /* "workload.parallelism" */
	long line;
} capsim_elem_line;

/* One edit applied after the file (--set PATH=VALUE or capsim_scenario_set):
 * an error that it causes names it. */
typedef struct capsim_edit {
	char path[128];
	char value[CAPSIM_VALUE_LEN];
} capsim_edit;

/* One node group of a cluster: nodes of one node type, with that type's GPU,
 * NIC and NVSwitch (or the GPU and NIC the group names instead), resolved
 * from the catalog with the group's overrides applied, and a calibrated
 * profile. Its fields are addressed as cluster.group.ID.* (ID the group's id
 * or its index), its overrides kept under that path with the id. */
typedef struct capsim_node_group {
	char id[CAPSIM_ID_LEN];        /* unique in the cluster; no dots, not all digits */
	char node_ref[CAPSIM_ID_LEN];  /* the node type */
	char gpu_ref[CAPSIM_ID_LEN], nic_ref[CAPSIM_ID_LEN]; /* "": the node's own */
	int nodes;
	char profile[CAPSIM_PATH_LEN]; /* "" none */
	long line;                     /* of its element in the file; 0: none */
	int shorthand;                 /* written as the one-group form's <node>: its parts'
					* paths are cluster.node, cluster.gpu, cluster.nic */
	capsim_node node;              /* resolved, overrides applied */
	capsim_gpu gpu;
	capsim_nic nic;
	int has_nvswitch;
	capsim_nvswitch nvswitch;
} capsim_node_group;

/* The part classes whose support and maintenance the opex prices apart
 * (cost.support-servers, -switches, -cables, -storage). */
enum {
	CAPSIM_SUPPORT_SERVERS,
	CAPSIM_SUPPORT_SWITCHES,
	CAPSIM_SUPPORT_CABLES,
	CAPSIM_SUPPORT_STORAGE,
	CAPSIM_SUPPORT__COUNT
};

typedef struct capsim_scenario {
	char name[CAPSIM_ID_LEN];
	char file[CAPSIM_PATH_LEN];
	char sha256[65];          /* of the file's bytes, before --set */
	/* the catalog the parts were resolved from (borrowed: it must outlive
	 * the scenario and every copy of it); an edit given no catalog
	 * (capsim_scenario_set) resolves parts again from it */
	const struct capsim_catalog *catalog;
	long fabric_line;         /* line of <fabric>, for messages about it */
	double seed;              /* integral, < 2^53 */
	char description[CAPSIM_TEXT_LEN];
	/* what the load kept, so that the scenario can be edited and checked
	 * again without its file (src/io/scenario.h, capsim_scenario_set) */
	int n_overrides, n_lines, n_edits;
	capsim_override overrides[CAPSIM_MAX_OVERRIDES];
	capsim_elem_line lines[CAPSIM_MAX_LINES];
	capsim_edit edits[CAPSIM_MAX_EDITS];

	/* cluster: groups[0 .. n_groups - 1], in rank order (group g's nodes
	 * after group g - 1's); nodes is their sum */
	int nodes;
	int n_groups;
	capsim_node_group groups[CAPSIM_MAX_GROUPS];
	/* the one-group view: the parts that the per-group models (memory, ops,
	 * the fabric of one replica, the step of one GPU type) read. After a
	 * load or an edit they are the first group's, which is the whole
	 * cluster's when it has one group; capsim_scenario_as_group puts group
	 * g's here. Code that means the cluster iterates groups instead. */
	char node_ref[CAPSIM_ID_LEN], gpu_ref[CAPSIM_ID_LEN], nic_ref[CAPSIM_ID_LEN];
	capsim_node node;
	capsim_gpu gpu;
	capsim_nic nic;
	int has_nvswitch;
	capsim_nvswitch nvswitch;
	char gpu_profile[CAPSIM_PATH_LEN]; /* the calibrated profile of that GPU; "" none */

	/* fabric between nodes */
	int topology, tiers, transport;
	int rails;                /* derived: rails_given, else the node's NICs */
	int rails_given;          /* cluster.fabric.rails, 0: not given */
	double oversubscription;  /* 1.0 is non-blocking; "2:1" is 2.0 */
	int sharp, routing, gpudirect, congestion_control;
	int rail_optimized;       /* cluster.fabric.rail-optimized: a leaf plane a rail */
	int routing_given;        /* cluster.fabric.routing; routing is it with auto resolved */
	int placement;            /* capsim_placement: where the job's nodes sit under the leaves */
	int placement_slots;      /* not an input: node positions to scatter over (0: nodes);
				   * a data-parallel plane (capsim_step_dp_plane) keeps its
				   * cluster's */
	double tcp_efficiency;      /* share of line rate NCCL's sockets reach */
	double tcp_latency_s;       /* extra latency a network step pays over sockets */
	double congestion_efficiency; /* share of a congested link's capacity, untuned RoCE */
	char switch_ref[CAPSIM_ID_LEN];
	int has_switch;
	capsim_switch fabric_switch;

	/* storage */
	char local_storage_ref[CAPSIM_ID_LEN], shared_storage_ref[CAPSIM_ID_LEN];
	int has_local_storage, has_shared_storage;
	capsim_storage local_storage, shared_storage;
	double dataset_bytes, checkpoint_interval_s;
	double checkpoint_eff;    /* given: a save's rate over the storage's raw write rate,
				   * in place of the parts below; 0: the parts */
	double checkpoint_host_copy; /* the machine's copy of a GPU's shard to pageable host
				      * memory (and back onto the GPU), bytes/s a rank */
	double checkpoint_serialise; /* the machine's serialisation, bytes/s a writer thread */
	int checkpoint_writers;   /* writer threads a rank (torch.save: 1) */
	int checkpoint_mode;      /* cluster.storage.checkpoint-mode: CAPSIM_CKPT_* */
	double checkpoint_drain_slowdown; /* steps slower by this share while an async save drains */
	int checkpoint_replicas;  /* memory mode: peers holding a copy of each node's shard */
	double persistent_interval_s; /* memory mode: between saves to storage; 0: none */
	/* the data loader (loader.h) */
	double data_bytes_per_token; /* 0: by the vocabulary */
	double data_shard_bytes;     /* one file's; 0: memory-mapped, opened once */
	double data_read_size;       /* one read request */
	double data_md_ops_per_file; /* metadata operations a file opened */
	int loader_workers, loader_prefetch;
	double node_mtbf_s;       /* reliability.node-mtbf: a node's parts together; 0: theirs */
	double gpu_mtbf_s;        /* reliability.gpu-mtbf: one GPU's chip */
	double hbm_mtbf_s;        /* reliability.hbm-mtbf: one GPU's memory */
	double nvlink_mtbf_s;     /* reliability.nvlink-mtbf: a node's NVLink and NVSwitch */
	double nic_mtbf_s, link_mtbf_s, host_mtbf_s, software_mtbf_s, other_mtbf_s; /* a node's */
	double switch_mtbf_s;     /* reliability.switch-mtbf: one leaf switch's */
	double restart_s;         /* reliability.restart: detection and requeue, before the reload */
	int reliability_runs;     /* reliability.runs: Monte Carlo runs of the training run */
	double repair_s;          /* reliability.repair: a failed node out of service; 0: each part's */

	/* workload */
	int seq_len;
	double global_batch;      /* sequences */
	int micro_batch;          /* sequences */
	double tokens;            /* token budget */
	int dtype;
	char model_ref[CAPSIM_ID_LEN];
	int model_inline;         /* the scenario's <model> has no ref: it is defined there */
	capsim_model model;
	int tp, pp, dp, cp, ep;   /* dp: derived (dp_given, or the GPUs left) */
	int dp_given;             /* workload.parallelism.dp, 0: not given */
	int optimizer_shard;      /* not an input: GPUs one optimizer state is
				   * sharded over with ZeRO; 0: dp x cp. Set only
				   * by capsim_eval's scaling reference, which is
				   * one replica of the job doing its own share */
	int schedule, virtual_stages, zero, recompute, sequence_parallel;
	int first_stage_layers, last_stage_layers; /* 0: an even split */
	double memory_reserve_bytes; /* outside the model, given whole; 0: modelled */
	double memory_context_bytes; /* CUDA context and workspaces; 0: the framework's */
	double nccl_buffer_bytes;    /* NCCL_BUFFSIZE: a channel's buffer for one peer */
	int nccl_channels;           /* channels of a communicator */
	double allocator_slack;      /* the caching allocator's reserve over its peak, a share */
	int framework;               /* capsim_framework: whose memory recipe */
	int fp8_recipe;              /* capsim_fp8_recipe: how fp8 scales its tensors */
	int finetune;                /* capsim_finetune */
	int lora_rank, lora_targets; /* LoRA: rank r; capsim_lora_targets */
	/* workload.precision: 0 = the framework's, else the name's index */
	int prec_params, prec_grads, prec_master, prec_states;
	int tp_comm_overlap;         /* tensor-parallel collectives hidden behind GEMMs */
	int tp_async;                /* 0 auto (on for megatron, deepspeed), 1 on, 2 off: the
				      * backward's TP collective beside the wgrad GEMMs */
	int tp_overlap_method;       /* capsim_tp_overlap (train/overlap.h): how tp-comm-overlap
				      * hides them; 0: the framework's */
	int ep_overlap;              /* expert all-to-alls hidden behind another micro-batch */
	double dp_bucket;            /* parameters a gradient bucket holds; 0: the framework's */
	int attention;               /* capsim_attention: fused (the framework's kernel),
				      * unfused (GEMMs, softmax, dropout) or a named kernel */
	int execution;               /* capsim_execution: how the host issues the kernels */
	double kernels_per_op;       /* kernels the framework launches per capsim op; 0: its default */
	double tp_overlap_eff;       /* share of an overlapped TP collective that hides */
	double comm_slowdown;        /* compute slows by this factor while comm runs beside it */
	double moe_capacity_factor;  /* expert buffers, x the even share; 0: dropless */
	double straggler;            /* one GPU's kernels this much slower; 1: none */
	int straggler_stage;         /* its pipeline stage; -1: the busiest */
	int straggler_replica;       /* its data-parallel replica */
	double task_limit;           /* most pipeline tasks one step may simulate */
	double flow_limit;           /* most flows one collective may simulate */
	double jitter;               /* coefficient of variation of a GPU's kernel
				      * time per layer and micro-batch; 0: none */
	int variability;             /* the step waits for the expected slowest of its
				      * ranks under the GPUs' rate spread (gpu.variability) */

	/* facility and cost */
	char facility_ref[CAPSIM_ID_LEN];
	int has_facility;
	capsim_facility facility;
	double horizon_s, utilization;
	double cabling_usd_per_gpu;  /* cost.cabling: cables and optics, per GPU */
	double cable_usd[5];         /* cost.cable-*: one cable of each reach class (layout.h), its
				      * transceivers included; 0: none given */
	/* cost.support-*: support and maintenance a year, a share of each part
	 * class's capex (CAPSIM_SUPPORT_*) */
	double support_share[CAPSIM_SUPPORT__COUNT];
	double insurance_share;      /* cost.insurance: a share of the capex a year */
	double resale;               /* cost.resale: what a used part fetches, a share of a new
				      * one's price of the same age */
	double resale_decline;       /* cost.resale-decline: the share of its price a part's
				      * generation loses a year */
	double staff_usd_per_s;      /* cost.staff: people who run the cluster, a second */
	double discount_rate;        /* cost.discount-rate: a year; 0: undiscounted */
	double cloud_network_penalty; /* cost.network-penalty: throughput lost on the cloud's network */
	int acquire;              /* cost.acquire: 0 buy (own the cluster), 1 rent (the cloud offer) */
	char cloud_ref[CAPSIM_ID_LEN];
	int has_cloud;
	capsim_cloud cloud;
	char burst_cloud[CAPSIM_ID_LEN];
	int burst_max_gpus;
	int has_burst;            /* burst_cloud resolved into burst */
	capsim_cloud burst;
} capsim_scenario;

/* Tokens an expert's buffers hold, over its share under even routing: the
 * capacity factor (GShard, Switch Transformer: dispatch padded to capacity),
 * or 1 for dropless routing, where capsim assumes even routing. */
static inline double capsim_moe_capacity(const capsim_scenario *s)
{
	return s->moe_capacity_factor > 0 ? s->moe_capacity_factor : 1.0;
}

/* Fields of the scenario's own elements (paths from below <scenario>). */
extern const capsim_field capsim_scenario_fields[];
extern const size_t capsim_scenario_n_fields;

/* A scenario path that is no longer read, and what says the same now: a
 * file or --set that gives it is refused with that text. */
typedef struct capsim_retired_path {
	const char *path;
	const char *instead;
} capsim_retired_path;

/* The retired path equal to path, or NULL. */
const capsim_retired_path *capsim_scenario_retired(const char *path);

/* Places in a scenario where a catalog part is named by ref and may be
 * overridden: "cluster.gpu" holds a gpu. */
typedef struct capsim_part_slot {
	const char *path;         /* element path below <scenario> */
	capsim_kind_id kind;
	size_t ref_offset;        /* char[CAPSIM_ID_LEN] in capsim_scenario */
	size_t obj_offset;        /* the resolved struct in capsim_scenario */
	size_t has_offset;        /* int flag, or (size_t)-1 when always present */
	int group;                /* 1: a node group's part ("cluster.group.ID.gpu"; offsets
				   * those of groups[0]), or the one-group shorthand's
				   * ("cluster.gpu"), resolved per group, not by a slot walk */
} capsim_part_slot;

extern const capsim_part_slot capsim_part_slots[];
extern const size_t capsim_n_part_slots;

/* Layers of pipeline stage k: first and last from the scenario when given
 * (Megatron's --decoder-first/last-pipeline-num-layers), the rest split
 * evenly. Writes the first layer's index to *first. */
int capsim_stage_layers(const capsim_scenario *s, int k, int *first);

/* Rows of the job's learned position table: the model's max-seq-len, or the
 * job's seq-len when that is longer (a model trained from scratch at that
 * length has a row for each position; a longer sequence than the table is
 * never looked up). 0 for RoPE and ALiBi, which have no table. */
double capsim_position_rows(const capsim_scenario *s);

/* Trained adapter parameters of layer l, all of them (divide by TP, EP as
 * the base); 0 unless LoRA. MLA's low-rank projections are adapted as if
 * they were plain q and kv projections of their head dimensions (an
 * approximation: adapters are a fraction of a percent of such a model). */
double capsim_lora_layer_params(const capsim_scenario *s, int layer);

/* 1 when the job's seq-len is past the model's max-seq-len: for learned
 * positions the table grows to seq-len rows (capsim_position_rows); for RoPE
 * and ALiBi it is a context extension, as Llama 3.1's from 8K to 128K
 * (arXiv 2407.21783, sec. 3.4.2). Neither is refused; the result says so. */
int capsim_seq_past_positions(const capsim_scenario *s);

/* One node group as the models see it: borrowed pointers into s. */
typedef struct capsim_group_view {
	int nodes, first_node;
	const capsim_node *node;
	const capsim_gpu *gpu;
	const capsim_nic *nic;
	const capsim_nvswitch *nvswitch; /* NULL: none */
	const char *profile;             /* "" none */
} capsim_group_view;

/* Group g (0 .. n_groups - 1) of s: its nodes, the first of them in rank
 * order, its parts. */
void capsim_scenario_group(const capsim_scenario *s, int g, capsim_group_view *v);

/* The scenario as group g's GPUs see it: g's node, GPU, NIC, NVSwitch and
 * profile in the one-group view, a single group (g's, its id and overrides
 * kept) of the cluster's size. */
void capsim_scenario_as_group(const capsim_scenario *s, int g, capsim_scenario *out);

/* plane: s as one data-parallel group sees the fabric, gpus_per_node of
 * its ranks a node (the data-parallel step of src/train/step.c): each node
 * holding those GPUs and as many rails (their share of the node's, at
 * least one), the nodes the group spans, a scattered placement's positions
 * kept among the whole cluster's. A model's private view, as
 * capsim_scenario_as_group is, not a scenario a user could write: it is
 * neither checked nor remembered as an edit. */
void capsim_scenario_dp_plane(const capsim_scenario *s, int gpus_per_node,
			      capsim_scenario *plane);

/* Put group g's parts in s's one-group view (a load and an edit put the
 * first group's there). */
void capsim_scenario_view_group(capsim_scenario *s, int g);

/* The group that holds node n (0 .. nodes - 1). */
int capsim_scenario_group_of_node(const capsim_scenario *s, long n);

/* The group named by key, its id or its index ("h200", "1"); -1 when none. */
int capsim_scenario_group_find(const capsim_scenario *s, const char *key, size_t len);

/* Where a path of a node group ("cluster.group.KEY.REST") names group g:
 * the group by its id or index, and the path with the key written as "ID"
 * (the form capsim_scenario_fields and capsim_part_slots hold) into tmpl.
 * Returns g; -1 when path is no group's path; -2 when KEY names no group. */
int capsim_scenario_group_path(const capsim_scenario *s, const char *path, char *tmpl,
			       size_t len);

/* "the ids: h100, h200" of s's groups, for messages, into buf. */
void capsim_scenario_group_ids(const capsim_scenario *s, char *buf, size_t len);

/* The line of the scenario file's element at path ("facility"), or of its
 * deepest recorded ancestor; 0 when none is recorded. */
long capsim_scenario_line(const capsim_scenario *s, const char *path);

/* Whether the cloud cost model prices s's cloud offer: an offer of the
 * cluster's GPU (one node type), with a rate, and for spot the share of
 * instances reclaimed a month. */
int capsim_scenario_cloud_priced(const capsim_scenario *s);

/* The paths of the sections s gives that no model reads (a colocation
 * price without node prices, a cloud or burst offer of another GPU), at
 * most max into out; returns how many. run and
 * validate say them, so that nothing given is silently ignored. */
int capsim_scenario_not_modelled(const capsim_scenario *s, const char **out, int max);

/* Steps to the token budget: the last one may be partial, so rounded up
 * (run and validate both count this way). */
double capsim_scenario_steps(const capsim_scenario *s);

/* Total GPUs of a scenario (every group's nodes have the same GPUs a node). */
static inline long capsim_scenario_gpus(const capsim_scenario *s)
{
	return (long)s->nodes * s->node.gpus;
}

/* Per-direction scale-up bandwidth of one GPU, from the datasheet figure. */
double capsim_gpu_scaleup_bw_per_dir(const capsim_gpu *g);

/* What node n holds beside its GPUs' own draw (CPUs, memory, drives, fans,
 * NICs, NVSwitches, power supplies' loss), at full load: power.overhead
 * where given; else, with power.host or power.per-gpu, host + gpus x per-gpu +
 * nics x the NIC's power (its power.max where peak and given, else its
 * power.typical), so that it follows an edit of the node's GPU or NIC
 * count; else power.max less gpus x gpu's TDP (at least 0). Watts. */
double capsim_node_overhead(const capsim_node *n, const capsim_gpu *gpu, const capsim_nic *nic,
			    int peak);

/* What node n draws at its peak, what racks and circuits are provisioned
 * for: its GPUs at their power limit (TDP unless capped) and the overhead at
 * full load where the node has a breakdown (power.host, power.per-gpu) or a
 * power.overhead; else its power.max less what GPUs capped below their TDP
 * cannot draw. 0 when the node gives none of these. Watts. */
double capsim_node_peak_w(const capsim_node *n, const capsim_gpu *gpu, const capsim_nic *nic);

/* What the scenario's fat tree is sized from (fabsize.h): its node
 * positions (scattered placement: every position the nodes are drawn from),
 * rails, the switch's radix, the leaf oversubscription, its tiers (a single
 * switch: 1) and rail optimisation. Returns 0 where there is no fabric to
 * size (every GPU in one NVLink domain, topology 'none' or no switch), 1
 * after filling *in. */
int capsim_scenario_fabric_size_in(const capsim_scenario *s, capsim_fabric_size_in *in);

/* Dense peak of a dtype (capsim_dtype), 0 when the GPU lacks it. */
double capsim_gpu_peak(const capsim_gpu *g, int dtype);

/* Memory a training process can use: usable-memory where the catalog has
 * it, else the datasheet's capacity as decimal bytes (a lower bound: HBM
 * stacks hold binary sizes, and 141 GB H200s give 139.8 GiB). */
double capsim_gpu_usable_bytes(const capsim_gpu *g);

/* The GPU's architecture generation by its catalog id: "ampere" (A100,
 * A10), "hopper" (H100, H200, GH200, H800), "blackwell" (B200, B300, GB200,
 * GB300), or "" for any other. Never NULL. */
const char *capsim_gpu_generation(const capsim_gpu *g);

/* Streaming multiprocessors: the catalog's count, else 132 (the H100 SXM's,
 * an assumption for a GPU that gives none). Promises > 0. */
int capsim_gpu_sms(const capsim_gpu *g);

/* Sustained clock of a GPU at board limit `limit_w` over that at its TDP,
 * for compute-bound work: dynamic power goes as f V^2 and V with f in the
 * DVFS range, so P(f) = P_idle + (P_tdp - P_idle) (f / f_tdp)^3 (an
 * assumption), with P_idle = 11.5% of the TDP (the measured H200: 80 W idle of
 * 700 W, calibrate/results/h200-2026-12-02-power-b.jsonl) and the TDP reached
 * under sustained GEMMs (687 W at 1695 MHz there). 1 at or above the TDP. */
double capsim_power_clock_scale(double tdp_w, double limit_w);

/* A GPU's idle draw over its TDP where nothing measured it: 0.115, the measured
 * H200's 80 W of 700 W (an assumption for any other GPU). */
#define CAPSIM_IDLE_SHARE_OF_TDP 0.115

extern const char *const capsim_dtype_names[];

/* Parameters of a model from its architecture: embeddings (twice unless
 * tied), attention (GQA or MLA), MLP or experts, norms; biases are left out.
 * active: count top-k routed experts instead of all (MoE). */
double capsim_model_params(const capsim_model *m, int active);

/* Parameters of one transformer layer (0-based): attention (GQA or MLA), the
 * dense MLP, or for an MoE layer one expert, the shared experts and the
 * router; norms. Biases are left out. */
typedef struct capsim_layer_params {
	double attention, mlp, norms;
	int moe;
	double expert, shared, router;
} capsim_layer_params;

void capsim_model_layer_params(const capsim_model *m, int layer,
			       capsim_layer_params *out);

/* Head dimension: head-dim if given, else hidden / heads. */
int capsim_model_head_dim(const capsim_model *m);

/* The keys a query of layer (0-based) scores on average in causal attention
 * over seq tokens: seq/2, or with a sliding window w < seq on that layer
 * (every layer but each global_every-th, counted from 1) the mean over
 * positions i = 1..seq of min(i, w), w - w^2/(2 seq) (to within the
 * convention's (seq+1)/2 ~ seq/2). */
double capsim_model_attn_keys(const capsim_model *m, int layer, double seq);

#endif
