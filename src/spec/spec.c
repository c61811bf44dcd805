/* spec.c - field tables: which attribute fills which struct member, with its
 * dimension, whether it is required, and the range outside which a value is
 * absurd (a typo such as "10 PB" of HBM, not a judgement of taste). */
#include "spec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

#define R CAPSIM_F_REQUIRED
#define P CAPSIM_F_POSITIVE
#define NN CAPSIM_F_NONNEG
#define WHOLE CAPSIM_F_INTEGRAL

#define FDBL(p, st, m, d, fl, lo, hi, doc_) \
	{ .path = p, .type = CAPSIM_FT_DOUBLE, .dim = d, .offset = offsetof(st, m), \
	  .flags = fl, .min = lo, .max = hi, .doc = doc_ }
#define FDBLD(p, st, m, d, fl, lo, hi, dflt, doc_) \
	{ .path = p, .type = CAPSIM_FT_DOUBLE, .dim = d, .offset = offsetof(st, m), \
	  .flags = fl, .min = lo, .max = hi, .def = dflt, .doc = doc_ }
#define FINT(p, st, m, fl, lo, hi, doc_) \
	{ .path = p, .type = CAPSIM_FT_INT, .dim = CAPSIM_DIM_COUNT, \
	  .offset = offsetof(st, m), .flags = fl, .min = lo, .max = hi, .doc = doc_ }
#define FTXT(p, st, m, fl, doc_) \
	{ .path = p, .type = CAPSIM_FT_TEXT, .offset = offsetof(st, m), \
	  .size = sizeof(((st *)0)->m), .flags = fl, .doc = doc_ }
#define FDATE(p, st, m, fl, doc_) \
	{ .path = p, .type = CAPSIM_FT_DATE, .offset = offsetof(st, m), \
	  .size = sizeof(((st *)0)->m), .flags = fl, .doc = doc_ }
#define FREF(p, st, m, kind, fl, doc_) \
	{ .path = p, .type = CAPSIM_FT_REF, .offset = offsetof(st, m), \
	  .size = sizeof(((st *)0)->m), .flags = fl, .ref_kind = kind, .doc = doc_ }
#define FENUM(p, st, m, names, fl, dflt, doc_) \
	{ .path = p, .type = CAPSIM_FT_ENUM, .offset = offsetof(st, m), \
	  .flags = fl, .enums = names, .def = dflt, .doc = doc_ }
#define FFLAG(p, st, m, fl, dflt, doc_) \
	{ .path = p, .type = CAPSIM_FT_FLAG, .offset = offsetof(st, m), \
	  .flags = fl, .def = dflt, .doc = doc_ }

#define ENTRY_FIELDS(st) \
	FTXT("id", st, e.id, R, "catalog id"), \
	FTXT("name", st, e.name, R, "name for people")

#define PRICE_FIELDS(st) \
	FDBL("price.value", st, price_usd, CAPSIM_DIM_USD, P, 1.0, 1e9, "purchase price"), \
	FDATE("price.date", st, price_date, 0, "date of the price")

/* plausible ranges, SI */
#define TFLOPS 1e12
#define GB 1e9
#define GBPS 1e9

static const char *const scaleup_kinds[] = { "none", "nvlink", "infinity-fabric", NULL };
static const char *const directions[] = { "bidirectional", "per-direction", NULL };
static const char *const fp8_layouts[] = { "tn", "any", NULL };
static const char *const transports[] = { "infiniband", "ethernet", "vpi", NULL };
static const char *const storage_kinds[] = { "nvme", "local-raid0", "lustre", "weka", "nfs", "object", "tmpfs", NULL };
static const char *const scopes[] = { "per-device", "aggregate", NULL };
static const char *const node_fabrics[] = { "nvswitch", "nvlink-direct", "pcie", "infinity-fabric", NULL };
static const char *const pricings[] = { "on-demand", "reserved", "spot", NULL };
static const char *const acquires[] = { "buy", "rent", NULL };
static const char *const coolings[] = { "air", "liquid", NULL };
static const char *const activations[] = { "gelu", "swiglu", "relu", NULL };
static const char *const norms[] = { "layernorm", "rmsnorm", NULL };
static const char *const positions[] = { "learned", "rope", "alibi", NULL };
static const char *const qualities[] = { "primary", "secondary", NULL };

static const capsim_field gpu_fields[] = {
	ENTRY_FIELDS(capsim_gpu),
	FDBL("compute.fp64", capsim_gpu, peak_fp64_flop_per_s, CAPSIM_DIM_FLOP_PER_S, P, 0.01 * TFLOPS, 1e5 * TFLOPS, "dense FP64 peak"),
	FDBL("compute.fp32", capsim_gpu, peak_fp32_flop_per_s, CAPSIM_DIM_FLOP_PER_S, R | P, 1 * TFLOPS, 1e5 * TFLOPS, "dense FP32 peak"),
	FDBL("compute.tf32", capsim_gpu, peak_tf32_flop_per_s, CAPSIM_DIM_FLOP_PER_S, P, 1 * TFLOPS, 1e5 * TFLOPS, "dense TF32 peak"),
	FDBL("compute.bf16", capsim_gpu, peak_bf16_flop_per_s, CAPSIM_DIM_FLOP_PER_S, R | P, 1 * TFLOPS, 1e5 * TFLOPS, "dense BF16 peak"),
	FDBL("compute.fp16", capsim_gpu, peak_fp16_flop_per_s, CAPSIM_DIM_FLOP_PER_S, R | P, 1 * TFLOPS, 1e5 * TFLOPS, "dense FP16 peak"),
	FDBL("compute.fp8", capsim_gpu, peak_fp8_flop_per_s, CAPSIM_DIM_FLOP_PER_S, P, 1 * TFLOPS, 1e5 * TFLOPS, "dense FP8 peak"),
	FDBL("compute.fp4", capsim_gpu, peak_fp4_flop_per_s, CAPSIM_DIM_FLOP_PER_S, P, 1 * TFLOPS, 1e5 * TFLOPS, "dense FP4 peak"),
	FDBL("memory.capacity", capsim_gpu, mem_bytes, CAPSIM_DIM_BYTES, R | P, 1 * GB, 4096 * GB, "device memory"),
	FDBL("usable-memory.bytes", capsim_gpu, mem_usable_bytes, CAPSIM_DIM_BYTES, P, 1 * GB, 4096 * GB, "memory the CUDA runtime gives one process (cudaDeviceProp::totalGlobalMem); default: memory.capacity read as decimal bytes, which is less (assumption)"),
	FDBL("memory.bandwidth", capsim_gpu, mem_bw_bytes_per_s, CAPSIM_DIM_BYTES_PER_S, R | P, 50 * GBPS, 100e3 * GBPS, "device memory bandwidth"),
	FTXT("memory.type", capsim_gpu, mem_type, 0, "memory technology"),
	FDBL("power.tdp", capsim_gpu, tdp_w, CAPSIM_DIM_WATTS, R | P, 10.0, 5000.0, "board power limit"),
	FDBL("power.limit", capsim_gpu, power_limit_w, CAPSIM_DIM_WATTS, P, 10.0, 5000.0, "the board power limit the GPU is set to (nvidia-smi -pl), when below power.tdp: compute-bound kernels run at the clock that limit sustains (docs/model.md, \"Power-capped GPUs\"); default: power.tdp"),
	FDBL("clock.max", capsim_gpu, clock_max_hz, CAPSIM_DIM_HERTZ, P, 100e6, 5e9, "maximum boost clock"),
	FINT("sms.count", capsim_gpu, sms, P, 1, 100000, "streaming multiprocessors (compute units), of which a collective's channels take one each from the kernels that run beside it (docs/model.md, \"Training step\", 7); default 132, the H100 SXM's (assumption)"),
	FENUM("scale-up.kind", capsim_gpu, scaleup_kind, scaleup_kinds, 0, NULL, "GPU-to-GPU link"),
	FINT("scale-up.generation", capsim_gpu, scaleup_generation, P, 1, 10, "link generation"),
	FDBL("scale-up.bandwidth", capsim_gpu, scaleup_bw_bytes_per_s, CAPSIM_DIM_BYTES_PER_S, P, 1 * GBPS, 100e3 * GBPS, "per-GPU link bandwidth as the datasheet gives it"),
	FENUM("scale-up.direction", capsim_gpu, scaleup_direction, directions, 0, NULL, "whether that figure sums both directions"),
	FINT("scale-up.links", capsim_gpu, scaleup_links, P, 1, 100, "links per GPU"),
	FINT("pcie.generation", capsim_gpu, pcie_generation, P, 1, 8, "PCIe generation; absent: not attached over PCIe"),
	FINT("pcie.lanes", capsim_gpu, pcie_lanes, P, 1, 32, "PCIe lanes"),
	FENUM("fp8.layouts", capsim_gpu, fp8_layouts, fp8_layouts, 0, "tn", "operand layouts its per-tensor-scaled FP8 GEMMs take: tn (Ada, Hopper: a backward GEMM reads a transposed FP8 copy, which Transformer Engine keeps beside each FP8 weight) or any (Blackwell: one FP8 copy serves both); Transformer Engine's nvte_is_non_tn_fp8_gemm_supported: compute capability 10.x, 11.x, 13.0 and later; default tn, the larger memory (assumption)"),
	FDBL("efficiency.gemm", capsim_gpu, eff_gemm, CAPSIM_DIM_RATIO, P, 0.01, 1.0, "best bf16/fp16 GEMM rate over the dense peak; default: capsim's published table"),
	FDBL("efficiency.gemm-fp8", capsim_gpu, eff_gemm_fp8, CAPSIM_DIM_RATIO, P, 0.01, 1.0, "best fp8 GEMM rate over the dense fp8 peak; default: capsim's published table"),
	FDBL("efficiency.hbm", capsim_gpu, eff_hbm, CAPSIM_DIM_RATIO, P, 0.01, 1.0, "device-memory copy bandwidth over the datasheet's; default: capsim's published table"),
	FDBL("efficiency.attention", capsim_gpu, eff_attention, CAPSIM_DIM_RATIO, P, 0.01, 1.0, "one flat rate for fused attention, forward and backward, over the dense bf16 peak, in place of the kernel's measured curve; default: the curve (docs/model.md, \"Attention\")"),
	FDBL("efficiency.launch", capsim_gpu, launch_eager_s, CAPSIM_DIM_SECONDS, P, 1e-8, 1e-3, "host cost of one bare kernel launch from PyTorch on the host this profile was measured on (calibrate/torch's torch-launch); a node's cpu.launch wins; default 5 us (assumption)"),
	FDBL("efficiency.launch-graph", capsim_gpu, launch_graph_s, CAPSIM_DIM_SECONDS, P, 1e-9, 1e-3, "GPU-side cost of one kernel replayed from a CUDA graph (the gap to the one before); default 0.62 us, measured on an H200 SXM"),
	FDBL("efficiency.kernel-gap", capsim_gpu, kernel_gap_s, CAPSIM_DIM_SECONDS, P, 1e-9, 1e-3, "GPU-side cost of one kernel launched from a stream, eager or compiled (the gap to the one before, the host well ahead); default 3.9 us, measured on an H200 SXM"),
	FDBL("efficiency.dispatch", capsim_gpu, dispatch_s, CAPSIM_DIM_SECONDS, P, 1e-8, 1e-2, "eager host work per kernel beyond the launch (Python, dispatcher, autograd) on the host this profile was measured on; a node's cpu.dispatch wins; default: measured on an H200 SXM machine's host"),
	FDBL("efficiency.dispatch-compiled", capsim_gpu, dispatch_compiled_s, CAPSIM_DIM_SECONDS, P, 1e-8, 1e-2, "the same under torch.compile (its generated wrapper code); a node's cpu.dispatch-compiled wins; default: measured on an H200 SXM machine's host"),
	FDBLD("variability.rate-cv", capsim_gpu, rate_cv, CAPSIM_DIM_RATIO, NN, 0.0, 0.5, "0.015", "coefficient of variation of the sustained kernel rate between GPUs of this model, a property of each GPU that lasts (silicon, power management, cooling): the step waits for the slowest of the ranks that synchronise (docs/model.md, \"Runtime variability\"); 0: none; default 1.5% (assumption: Sinha et al., SC22, arXiv 2208.11035, measured 8% average spread between the fastest and slowest GPUs of one V100 or MI60 model outside the outliers, a box plot's whiskers, about 5.4 standard deviations of a normal)"),
	FDBLD("variability.step-cv", capsim_gpu, step_cv, CAPSIM_DIM_RATIO, NN, 0.0, 0.5, "0", "coefficient of variation of one GPU's kernel rate from step to step, added in quadrature to variability.rate-cv; default 0 (no published per-GPU figure)"),
	PRICE_FIELDS(capsim_gpu),
};

static const capsim_field nic_fields[] = {
	ENTRY_FIELDS(capsim_nic),
	FENUM("transport", capsim_nic, transport, transports, R, NULL, "link layer"),
	FDBL("port.speed", capsim_nic, port_speed_bytes_per_s, CAPSIM_DIM_BYTES_PER_S, R | P, 1 * GBPS, 1e4 * GBPS, "speed of one port"),
	FINT("port.count", capsim_nic, ports, R | P, 1, 16, "ports"),
	FINT("pcie.generation", capsim_nic, pcie_generation, R | P, 1, 8, "PCIe generation"),
	FINT("pcie.lanes", capsim_nic, pcie_lanes, R | P, 1, 32, "PCIe lanes"),
	FFLAG("features.rdma", capsim_nic, rdma, 0, NULL, "RDMA (InfiniBand verbs or RoCE)"),
	FFLAG("features.gpudirect", capsim_nic, gpudirect, 0, NULL, "GPUDirect RDMA"),
	FDBL("power.typical", capsim_nic, power_typical_w, CAPSIM_DIM_WATTS, P, 1.0, 500.0, "typical power"),
	FDBL("power.max", capsim_nic, power_max_w, CAPSIM_DIM_WATTS, P, 1.0, 500.0, "maximum power"),
	PRICE_FIELDS(capsim_nic),
};

static const capsim_field switch_fields[] = {
	ENTRY_FIELDS(capsim_switch),
	FENUM("transport", capsim_switch, transport, transports, R, NULL, "link layer"),
	FINT("ports.count", capsim_switch, ports, R | P, 2, 1024, "ports at that speed (the radix)"),
	FDBL("ports.speed", capsim_switch, port_speed_bytes_per_s, CAPSIM_DIM_BYTES_PER_S, R | P, 1 * GBPS, 1e4 * GBPS, "speed of one port"),
	FDBL("latency.port-to-port", capsim_switch, latency_s, CAPSIM_DIM_SECONDS, P, 1e-9, 1e-4, "port-to-port latency"),
	FFLAG("features.sharp", capsim_switch, sharp, 0, NULL, "in-network reduction (SHARP)"),
	FFLAG("features.adaptive-routing", capsim_switch, adaptive_routing, 0, NULL, "adaptive routing"),
	FDBL("power.typical", capsim_switch, power_typical_w, CAPSIM_DIM_WATTS, P, 10.0, 1e5, "typical power"),
	FDBL("power.max", capsim_switch, power_max_w, CAPSIM_DIM_WATTS, P, 10.0, 1e5, "maximum power"),
	PRICE_FIELDS(capsim_switch),
};

static const capsim_field nvswitch_fields[] = {
	ENTRY_FIELDS(capsim_nvswitch),
	FINT("generation", capsim_nvswitch, generation, R | P, 1, 10, "NVSwitch generation"),
	FINT("ports.nvlink-ports", capsim_nvswitch, nvlink_ports, R | P, 1, 1024, "NVLink ports per chip"),
	FDBL("ports.bandwidth", capsim_nvswitch, bw_bytes_per_s, CAPSIM_DIM_BYTES_PER_S, R | P, 10 * GBPS, 1e6 * GBPS, "switching bandwidth of one chip"),
	FENUM("ports.direction", capsim_nvswitch, direction, directions, R, NULL, "whether that figure sums both directions"),
	FFLAG("features.nvls", capsim_nvswitch, nvls, 0, NULL, "in-switch reduction (NVLS)"),
};

static const capsim_field storage_fields[] = {
	ENTRY_FIELDS(capsim_storage),
	FENUM("kind", capsim_storage, kind, storage_kinds, R, NULL, "kind of storage"),
	FENUM("scope", capsim_storage, scope, scopes, R, NULL, "whether figures are per device or for the system"),
	FDBL("bandwidth.read", capsim_storage, read_bytes_per_s, CAPSIM_DIM_BYTES_PER_S, R | P, 1e6, 1e15, "sequential read"),
	FDBL("bandwidth.write", capsim_storage, write_bytes_per_s, CAPSIM_DIM_BYTES_PER_S, R | P, 1e6, 1e15, "sequential write"),
	FDBL("bandwidth.per-client-read", capsim_storage, client_read_bytes_per_s, CAPSIM_DIM_BYTES_PER_S, P, 1e6, 1e13, "read of one client"),
	FDBL("bandwidth.per-client-write", capsim_storage, client_write_bytes_per_s, CAPSIM_DIM_BYTES_PER_S, P, 1e6, 1e13, "write of one client"),
	FDBL("iops.read", capsim_storage, read_iops, CAPSIM_DIM_OPS_PER_S, P, 1.0, 1e11, "random read IOPS"),
	FDBL("iops.write", capsim_storage, write_iops, CAPSIM_DIM_OPS_PER_S, P, 1.0, 1e11, "random write IOPS"),
	FDBL("metadata.rate", capsim_storage, metadata_ops_per_s, CAPSIM_DIM_OPS_PER_S, P, 1.0, 1e10, "metadata operations"),
	FDBL("power.typical", capsim_storage, power_typical_w, CAPSIM_DIM_WATTS, P, 1.0, 1e7, "the shared system's typical power (in the IT load)"),
	FDBL("capacity.value", capsim_storage, capacity_bytes, CAPSIM_DIM_BYTES, P, 1e9, 1e19, "capacity"),
	PRICE_FIELDS(capsim_storage),
};

static const capsim_field node_fields[] = {
	ENTRY_FIELDS(capsim_node),
	FREF("gpus.ref", capsim_node, gpu, "gpu", R, "GPU"),
	FINT("gpus.count", capsim_node, gpus, R | P, 1, 128, "GPUs per node"),
	FENUM("scale-up.fabric", capsim_node, scaleup_fabric, node_fabrics, R, NULL, "how the node's GPUs are connected"),
	FREF("scale-up.switch", capsim_node, nvswitch, "nvswitch", 0, "NVSwitch chip"),
	FINT("scale-up.switches", capsim_node, nvswitches, P, 1, 1024, "NVSwitch chips per node"),
	FINT("scale-up.domain-gpus", capsim_node, domain_gpus, P, 1, 1e5, "GPUs in one NVLink domain"),
	FREF("nics.ref", capsim_node, nic, "nic", R, "compute-fabric NIC"),
	FINT("nics.count", capsim_node, nics, R | P, 1, 64, "compute-fabric NICs per node"),
	FTXT("cpu.model", capsim_node, cpu_model, 0, "CPU"),
	FINT("cpu.sockets", capsim_node, cpu_sockets, P, 1, 16, "CPU sockets"),
	FINT("cpu.cores", capsim_node, cpu_cores, P, 1, 4096, "CPU cores in all"),
	FDBL("cpu.launch", capsim_node, host_launch_s, CAPSIM_DIM_SECONDS, P, 1e-8, 1e-3, "the host's cost of one bare kernel launch from PyTorch (calibrate/torch/host_probe.py measures it on the machine); default: the GPU's calibrated profile's, else 5 us (pytorch/pytorch issue 82793, an assumption for any other host)"),
	FDBL("cpu.dispatch", capsim_node, host_dispatch_s, CAPSIM_DIM_SECONDS, P, 1e-8, 1e-2, "the host's eager work per kernel beyond the launch (Python, the dispatcher, autograd); it differs between hosts and runs (21.5 to 63.9 us a kernel, launch included, over the measured H200's runs; docs/validation.md); default: the GPU's calibrated profile's, else 38.5 us (with the 5 us launch, the median of 54 measured steps on one H200 machine's host)"),
	FDBL("cpu.dispatch-compiled", capsim_node, host_dispatch_compiled_s, CAPSIM_DIM_SECONDS, P, 1e-8, 1e-2, "the same under torch.compile (its generated wrapper code); default: the GPU's calibrated profile's, else 32.1 us (with the 5 us launch, the median of the compiled steps on one H200 machine's host)"),
	FDBL("host-memory.capacity", capsim_node, host_mem_bytes, CAPSIM_DIM_BYTES, P, 1e9, 1e14, "host memory"),
	FDBL("local-storage.capacity", capsim_node, local_storage_bytes, CAPSIM_DIM_BYTES, P, 1e9, 1e16, "local data storage"),
	FDBL("power.max", capsim_node, power_max_w, CAPSIM_DIM_WATTS, R | P, 100.0, 2e5, "maximum system power"),
	FDBL("power.overhead", capsim_node, power_overhead_w, CAPSIM_DIM_WATTS, NN, 0.0, 1e5, "power beside the GPUs (CPUs, NICs, NVMe, NVSwitches, fans, PSU losses); default: power.max less the GPUs' TDP, the datasheet's allowance at full load (an upper bound)"),
	FDBL("power.host", capsim_node, power_host_w, CAPSIM_DIM_WATTS, NN, 0.0, 1e5, "the host's fixed draw at full load, whatever the GPU count: CPUs, memory, drives, fans, board and BMC (docs/model.md, \"Power and energy\"); with power.per-gpu, the overhead is power.host + gpus x power.per-gpu + nics x the NIC's power, so that an edit of gpus.count or nics.count scales it; default: power.max less the GPUs' TDP as one sum"),
	FDBL("power.per-gpu", capsim_node, power_per_gpu_w, CAPSIM_DIM_WATTS, NN, 0.0, 1e4, "what each GPU adds beside its own TDP at full load: its share of the NVSwitch baseboard and of the power supplies' loss (with power.host)"),
	FINT("switch-trays.count", capsim_node, switch_trays, NN, 0, 64, "NVLink switch trays in the rack of one NVLink domain of a rack-scale system (domain-gpus past the node's GPUs): the rack holds the domain's compute trays and these, whole"),
	FDBL("switch-trays.power", capsim_node, switch_tray_w, CAPSIM_DIM_WATTS, NN, 0.0, 1e5, "one NVLink switch tray's power, counted in its rack's power and in the IT load"),
	FINT("size.rack-units", capsim_node, rack_units, P, 1, 60, "height in rack units"),
	PRICE_FIELDS(capsim_node),
};

static const capsim_field cloud_fields[] = {
	ENTRY_FIELDS(capsim_cloud),
	FTXT("provider", capsim_cloud, provider, R, "provider"),
	FENUM("pricing", capsim_cloud, pricing, pricings, R, NULL, "pricing model"),
	FTXT("instance.type", capsim_cloud, instance_type, R, "instance type"),
	FREF("instance.gpu", capsim_cloud, gpu, "gpu", R, "GPU of the instance"),
	FINT("instance.gpus", capsim_cloud, gpus_per_instance, R | P, 1, 128, "GPUs per instance"),
	{ .path = "rate.value", .type = CAPSIM_FT_DOUBLE, .dim = CAPSIM_DIM_USD_PER_S,
	  .offset = offsetof(capsim_cloud, rate_usd_per_gpu_s), .flags = R | P,
	  .min = 0.01 / 3600.0, .max = 1000.0 / 3600.0, .hw = "GPU",
	  .doc = "price per GPU-hour" },
	FDATE("rate.date", capsim_cloud, rate_date, R, "date the price was read"),
	FDBL("rate.commitment", capsim_cloud, commitment_s, CAPSIM_DIM_SECONDS, P, 3600.0, 20 * 3.15576e7, "commitment the rate needs"),
	FDBL("interruptions.per-month", capsim_cloud, reclaimed_per_month, CAPSIM_DIM_RATIO, NN, 0.0, 1.0, "share of instances the provider reclaims in a month (spot; AWS Spot Advisor's frequency of interruption)"),
	FDBL("storage.price", capsim_cloud, storage_usd_per_byte_s, CAPSIM_DIM_USD_PER_BYTE_S, P, 1e-18, 1e-6, "object storage for the dataset and a checkpoint while the run lasts"),
	FDBL("egress.price", capsim_cloud, egress_usd_per_byte, CAPSIM_DIM_USD_PER_BYTE, P, 1e-15, 1e-6, "data transfer out to the internet, for the trained weights"),
};

static const capsim_field facility_fields[] = {
	ENTRY_FIELDS(capsim_facility),
	FDBL("efficiency.pue", capsim_facility, pue, CAPSIM_DIM_RATIO, R | P, 1.0, 3.0, "power usage effectiveness"),
	FDBL("energy.price", capsim_facility, energy_usd_per_j, CAPSIM_DIM_USD_PER_J, R | P, 0.001 / 3.6e6, 2.0 / 3.6e6, "electricity price"),
	FDBL("rack.power", capsim_facility, rack_power_w, CAPSIM_DIM_WATTS, R | P, 1e3, 1e6, "power one rack may draw"),
	FDBL("circuit.voltage", capsim_facility, circuit_v, CAPSIM_DIM_VOLTS, P, 100.0, 1000.0, "branch circuit voltage"),
	FDBL("circuit.current", capsim_facility, circuit_a, CAPSIM_DIM_AMPERES, P, 1.0, 1000.0, "branch circuit breaker rating"),
	FINT("circuit.phases", capsim_facility, circuit_phases, P, 1, 3, "phases"),
	FDBL("colocation.price", capsim_facility, colo_usd_per_w_s, CAPSIM_DIM_USD_PER_W_S, P, 1.0 / (1e3 * 2.6298e6), 2000.0 / (1e3 * 2.6298e6), "colocation price per kW-month"),
	FDBL("cooling.per-rack", capsim_facility, cooling_w, CAPSIM_DIM_WATTS, P, 1e3, 1e6, "heat one rack's cooling removes: a rack whose nodes give off more at the step's load runs its GPUs at the power limit that fits (docs/model.md, \"Cooling\")"),
	FENUM("cooling.kind", capsim_facility, cooling_kind, coolings, 0, "air", "air or liquid cooling"),
	FINT("rack.nodes", capsim_facility, rack_nodes, P, 1, 1000, "nodes a rack, the planner's density; default: as many as rack.power and cooling.per-rack allow at the nodes' power.max"),
	FINT("layout.racks-per-row", capsim_facility, racks_per_row, P, 1, 1000, "racks in a row of the floor"),
	FDBL("layout.rack-pitch", capsim_facility, rack_pitch_m, CAPSIM_DIM_METERS, P, 0.1, 10.0, "from one rack to the next along a row"),
	FDBL("layout.row-pitch", capsim_facility, row_pitch_m, CAPSIM_DIM_METERS, P, 0.5, 50.0, "from one row to the next"),
	FDBL("layout.slack", capsim_facility, slack_m, CAPSIM_DIM_METERS, NN, 0.0, 100.0, "what each cable adds to its run along the floor: up and down to the trays, service loops"),
};

#define MINT(p, m, fl, lo, hi, doc_) FINT(p, capsim_model, m, fl, lo, hi, doc_)
static const capsim_field model_fields[] = {
	ENTRY_FIELDS(capsim_model),
	FTXT("family", capsim_model, family, 0, "model family"),
	MINT("architecture.layers", layers, R | P, 1, 10000, "transformer layers"),
	MINT("architecture.hidden", hidden, R | P, 1, 1e6, "hidden size"),
	MINT("architecture.heads", heads, R | P, 1, 10000, "attention heads"),
	MINT("architecture.kv-heads", kv_heads, P, 1, 10000, "key/value heads (GQA); default: heads"),
	MINT("architecture.head-dim", head_dim, P, 1, 100000, "head dimension; default: hidden/heads"),
	MINT("architecture.ffn", ffn, R | P, 1, 1e7, "FFN inner size"),
	FENUM("architecture.activation", capsim_model, activation, activations, R, NULL, "MLP activation"),
	MINT("architecture.vocab", vocab, R | P, 1, 1e8, "vocabulary size"),
	MINT("architecture.max-seq-len", max_seq_len, R | P, 1, 1e9, "longest sequence supported"),
	FENUM("architecture.norm", capsim_model, norm, norms, 0, "layernorm", "normalisation"),
	FENUM("architecture.position", capsim_model, position, positions, 0, "learned", "position encoding"),
	FFLAG("architecture.tied-embeddings", capsim_model, tied_embeddings, 0, "false", "input and output embeddings shared"),
	MINT("architecture.sliding-window", sliding_window, NN, 0, 1e9, "sliding-window attention: the tokens each query attends to (0: none)"),
	MINT("architecture.global-every", global_every, NN, 0, 1e4, "with a sliding window, every Nth layer attends to the whole sequence (0: none does)"),
	MINT("moe.experts", moe_experts, P, 1, 1e5, "routed experts per MoE layer"),
	MINT("moe.top-k", moe_top_k, P, 1, 1e4, "experts per token"),
	MINT("moe.shared-experts", moe_shared_experts, NN, 0, 1e4, "always-active experts"),
	MINT("moe.expert-ffn", moe_expert_ffn, P, 1, 1e7, "FFN size of one expert"),
	MINT("moe.dense-layers", moe_dense_layers, NN, 0, 1e4, "leading dense layers"),
	MINT("mla.q-lora-rank", mla_q_lora_rank, P, 1, 1e6, "MLA query compression rank"),
	MINT("mla.kv-lora-rank", mla_kv_lora_rank, P, 1, 1e6, "MLA key/value compression rank"),
	MINT("mla.qk-nope-head-dim", mla_qk_nope_head_dim, P, 1, 1e5, "MLA non-rotary head dim"),
	MINT("mla.qk-rope-head-dim", mla_qk_rope_head_dim, P, 1, 1e5, "MLA rotary head dim"),
	MINT("mla.v-head-dim", mla_v_head_dim, P, 1, 1e5, "MLA value head dim"),
	FDBL("published.parameters", capsim_model, published_params, CAPSIM_DIM_COUNT, P, 1e6, 1e15, "parameters as published"),
	FDBL("published.active-parameters", capsim_model, published_active_params, CAPSIM_DIM_COUNT, P, 1e6, 1e15, "active parameters as published"),
};

static const capsim_field bibref_fields[] = {
	FTXT("id", capsim_bibref, e.id, R, "reference id"),
	FTXT("title", capsim_bibref, title, R, "document"),
	FTXT("where", capsim_bibref, where, R, "table, page or section"),
	FDATE("date", capsim_bibref, date, R, "date published or read"),
	FTXT("url", capsim_bibref, url, 0, "address"),
	FENUM("quality", capsim_bibref, quality, qualities, 0, "primary", "primary or secondary source"),
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const char *const gpu_cols[] = { "compute.bf16", "compute.fp8", "memory.capacity", "memory.bandwidth", "power.tdp", "scale-up.bandwidth", "price.value", NULL };
static const char *const nic_cols[] = { "transport", "port.speed", "port.count", "pcie.generation", NULL };
static const char *const switch_cols[] = { "transport", "ports.count", "ports.speed", "latency.port-to-port", "power.typical", NULL };
static const char *const nvswitch_cols[] = { "generation", "ports.nvlink-ports", "ports.bandwidth", "features.nvls", NULL };
static const char *const storage_cols[] = { "kind", "scope", "bandwidth.read", "bandwidth.write", "iops.read", "capacity.value", NULL };
static const char *const node_cols[] = { "gpus.ref", "gpus.count", "nics.ref", "nics.count", "power.max", "price.value", NULL };
static const char *const cloud_cols[] = { "provider", "pricing", "instance.gpu", "rate.value", "rate.date", NULL };
static const char *const facility_cols[] = { "efficiency.pue", "energy.price", "rack.power", "colocation.price", NULL };
static const char *const model_cols[] = { "architecture.layers", "architecture.hidden", "architecture.heads", "architecture.kv-heads", "architecture.ffn", "architecture.vocab", "moe.experts", "published.parameters", NULL };

const capsim_kind capsim_kinds[CAPSIM_KIND__COUNT] = {
	[CAPSIM_KIND_GPU] = { "gpu", "gpus", "hardware", sizeof(capsim_gpu), gpu_fields, N(gpu_fields), gpu_cols },
	[CAPSIM_KIND_NIC] = { "nic", "nics", "hardware", sizeof(capsim_nic), nic_fields, N(nic_fields), nic_cols },
	[CAPSIM_KIND_SWITCH] = { "switch", "switches", "hardware", sizeof(capsim_switch), switch_fields, N(switch_fields), switch_cols },
	[CAPSIM_KIND_NVSWITCH] = { "nvswitch", "nvswitches", "hardware", sizeof(capsim_nvswitch), nvswitch_fields, N(nvswitch_fields), nvswitch_cols },
	[CAPSIM_KIND_STORAGE] = { "storage", "storage", "hardware", sizeof(capsim_storage), storage_fields, N(storage_fields), storage_cols },
	[CAPSIM_KIND_NODE] = { "node", "nodes", "hardware", sizeof(capsim_node), node_fields, N(node_fields), node_cols },
	[CAPSIM_KIND_CLOUD] = { "cloud", "clouds", "hardware", sizeof(capsim_cloud), cloud_fields, N(cloud_fields), cloud_cols },
	[CAPSIM_KIND_FACILITY] = { "facility", "facilities", "hardware", sizeof(capsim_facility), facility_fields, N(facility_fields), facility_cols },
	[CAPSIM_KIND_MODEL] = { "model", "models", "model", sizeof(capsim_model), model_fields, N(model_fields), model_cols },
};

const capsim_kind capsim_bibref_kind = {
	"ref", "refs", "bibliography", sizeof(capsim_bibref), bibref_fields, N(bibref_fields), NULL
};

const capsim_kind *capsim_kind_by_name(const char *s)
{
	for (size_t i = 0; i < CAPSIM_KIND__COUNT; i++)
		if (strcmp(capsim_kinds[i].name, s) == 0 ||
		    strcmp(capsim_kinds[i].plural, s) == 0)
			return &capsim_kinds[i];
	return NULL;
}

const capsim_field *capsim_field_find(const capsim_field *f, size_t n,
				      const char *path)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(f[i].path, path) == 0)
			return &f[i];
	return NULL;
}

/* ---- scenario ------------------------------------------------------------ */

static const char *const topologies[] = { "fat-tree", "single-switch", "none", NULL };
static const char *const net_transports[] = { "infiniband", "roce", "tcp", NULL };
static const char *const routings[] = { "ecmp", "adaptive", "deterministic", "auto", NULL };
static const char *const congestions[] = { "tuned", "untuned", NULL };
const char *const capsim_dtype_names[] = { "fp32", "tf32", "bf16", "fp16", "fp8", NULL };

const char *const capsim_attn_kernel_names[] = { "flash2", "flash3", "cudnn", NULL };
static const char *const schedules[] = { "gpipe", "1f1b", "1f1b-interleaved", NULL };
static const char *const zeros[] = { "0", "1", "2", "3", NULL };
static const char *const recomputes[] = { "none", "selective", "full", NULL };
static const char *const attentions[] = { "fused", "unfused", "flash2", "flash3", "cudnn", NULL };
const char *const capsim_execution_names[] = { "eager", "compiled", "graphs", NULL };
static const char *const tp_asyncs[] = { "auto", "on", "off", NULL };
/* workload.parallelism.tp-overlap-method, in capsim_tp_overlap's order */
static const char *const tp_overlap_methods[] = { "framework", "userbuffers", "async-tp", "flat",
						   NULL };
/* cluster.storage.checkpoint-mode: index 0 is "the framework's save path" */
const char *const capsim_checkpoint_mode_names[] = { "framework", "sync", "async", "memory",
							     NULL };
static const char *const placements[] = { "contiguous", "scattered", NULL };
static const char *const finetunes[] = { "full", "lora", NULL };
static const char *const lora_targets[] = { "all", "attention", NULL };
const char *const capsim_framework_names[] = { "megatron", "torch-amp", "fsdp2", "deepspeed", NULL };
/* workload.fp8-recipe, in capsim_fp8_recipe's order */
static const char *const fp8_recipe_names[] = { "framework", "delayed", "current", NULL };
/* workload.precision: index 0 is "the framework's choice" */
static const char *const prec_params_names[] = { "framework", "fp32", "bf16", "fp16", "fp8", NULL };
static const char *const prec_grads_names[] = { "framework", "fp32", "bf16", NULL };
static const char *const prec_master_names[] = { "framework", "none", "fp32", NULL };
static const char *const prec_states_names[] = { "framework", "fp32", "bf16", NULL };

#define S capsim_scenario
#define SINT(p, m, fl, lo, hi, dflt, doc_) \
	{ .path = p, .type = CAPSIM_FT_INT, .dim = CAPSIM_DIM_COUNT, \
	  .offset = offsetof(S, m), .flags = fl, .min = lo, .max = hi, .def = dflt, .doc = doc_ }
#define SDBL(p, m, d, fl, lo, hi, dflt, doc_) \
	{ .path = p, .type = CAPSIM_FT_DOUBLE, .dim = d, .offset = offsetof(S, m), \
	  .flags = fl, .min = lo, .max = hi, .def = dflt, .doc = doc_ }

const capsim_field capsim_scenario_fields[] = {
	FTXT("name", S, name, R | CAPSIM_F_ID, "scenario name"),
	SDBL("seed", seed, CAPSIM_DIM_COUNT, NN | WHOLE, 0, 9007199254740991.0, "1", "random seed"),
	SINT("cluster.nodes", nodes, P, 1, 1e6, NULL, "nodes: of the one node type (with <node>), or the sum of the groups' (with <group>: optional, and equal to it when given)"),
	FREF("cluster.node.ref", S, node_ref, "node", 0, "node type (the one-group form; with groups, the first group's)"),
	FREF("cluster.gpu.ref", S, gpu_ref, "gpu", 0, "GPU, if not the node's"),
	FREF("cluster.nic.ref", S, nic_ref, "nic", 0, "NIC, if not the node's"),
	FTXT("cluster.node.profile", S, gpu_profile, 0, "calibrated profile of the node's GPU (capsim fit's output; a path, relative to the scenario or the catalog root)"),
	FTXT("cluster.gpu.profile", S, gpu_profile, 0, "calibrated profile of the GPU, as cluster.node.profile"),
	FREF("cluster.group.ID.ref", S, groups[0].node_ref, "node", CAPSIM_F_GROUP, "node type of the group whose id (or index, from 0) is ID"),
	SINT("cluster.group.ID.nodes", groups[0].nodes, P | CAPSIM_F_GROUP, 1, 1e6, NULL, "nodes of the group, after the groups before it in rank order"),
	FTXT("cluster.group.ID.profile", S, groups[0].profile, CAPSIM_F_GROUP, "calibrated profile of the group's GPU"),
	FREF("cluster.group.ID.gpu.ref", S, groups[0].gpu_ref, "gpu", CAPSIM_F_GROUP, "the group's GPU, if not its node's"),
	FREF("cluster.group.ID.nic.ref", S, groups[0].nic_ref, "nic", CAPSIM_F_GROUP, "the group's NIC, if not its node's"),
	FENUM("cluster.fabric.topology", S, topology, topologies, R, NULL, "topology between nodes"),
	SINT("cluster.fabric.tiers", tiers, P, 1, 3, "2", "switch tiers of the fat tree"),
	FENUM("cluster.fabric.transport", S, transport, net_transports, R, NULL, "transport"),
	SINT("cluster.fabric.rails", rails_given, P, 1, 64, NULL, "NICs per node used (rails); default: all"),
	SDBL("cluster.fabric.oversubscription", oversubscription, CAPSIM_DIM_RATIO, P, 1.0, 64.0, "1:1", "leaf downlink to uplink ratio asked: a leaf is built with the fewest uplinks whose ratio is at least this one, or with more (down to 1:1) where that takes fewer switches; result keys leaf_node_ports and leaf_uplinks give the split built"),
	FFLAG("cluster.fabric.sharp", S, sharp, 0, "off", "SHARP in-network reduction"),
	FFLAG("cluster.fabric.rail-optimized", S, rail_optimized, 0, "on", "rail-optimised fat tree: each NIC of a node on its rail's leaf, so same-rail traffic of up to a leaf's node ports stays in one switch (NVIDIA's SuperPOD); off: a plain fat tree, all of a node's NICs on one leaf"),
	FENUM("cluster.fabric.placement", S, placement, placements, 0, "contiguous", "where the job's nodes sit under the leaves: contiguous (node i under leaf i / node ports, so small groups share a leaf), or scattered by the scheduler (a shuffle from the scenario's seed), so groups cross leaves and oversubscription matters"),
	FENUM("cluster.fabric.routing", S, routing_given, routings, 0, "auto", "routing: ecmp (hashed), adaptive (least-loaded uplink), deterministic (the subnet manager's destination-based fat-tree routing, D-mod-K); auto: deterministic on InfiniBand, ECMP on RoCE and TCP"),
	FFLAG("cluster.fabric.gpudirect", S, gpudirect, 0, "on", "GPUDirect RDMA"),
	FENUM("cluster.fabric.congestion-control", S, congestion_control, congestions, 0, "tuned", "PFC/ECN tuning (RoCE)"),
	/* assumptions, overridable; sources in docs/model.md ("Transports") */
	SDBL("cluster.fabric.tcp-efficiency", tcp_efficiency, CAPSIM_DIM_RATIO, P, 0.01, 1.0, "40%", "share of line rate NCCL reaches over TCP sockets (assumption: NVIDIA/nccl #450, #398)"),
	SDBL("cluster.fabric.tcp-latency", tcp_latency_s, CAPSIM_DIM_SECONDS, NN, 0.0, 1e-2, "25 us", "extra latency per network step over TCP sockets (assumption: nccl-tests #82 vs NVIDIA/nccl #1291)"),
	SDBL("cluster.fabric.congestion-efficiency", congestion_efficiency, CAPSIM_DIM_RATIO, P, 0.01, 1.0, "60%", "share of a congested link's capacity with untuned PFC/ECN (assumption: NVIDIA, 2024-10-28)"),
	FREF("cluster.fabric.switch.ref", S, switch_ref, "switch", 0, "fabric switch"),
	FREF("cluster.storage.local.ref", S, local_storage_ref, "storage", 0, "node-local storage"),
	FREF("cluster.storage.shared.ref", S, shared_storage_ref, "storage", 0, "shared file system"),
	SDBL("cluster.storage.dataset", dataset_bytes, CAPSIM_DIM_BYTES, P, 1e3, 1e19, NULL, "training data size"),
	SDBL("cluster.storage.checkpoint-interval", checkpoint_interval_s, CAPSIM_DIM_SECONDS, P, 1.0, 3.15576e7, NULL, "time between checkpoints; default: Young's optimum, sqrt(2 x write time x the job's MTTF)"),
	FENUM("cluster.storage.checkpoint-mode", S, checkpoint_mode, capsim_checkpoint_mode_names, 0, "framework", "framework: the workload framework's own save path (async for megatron, whose --async-save writes its torch_dist checkpoints in the background, and for fsdp2, whose PyTorch DCP offers async_save; sync for torch-amp's torch.save and for deepspeed's save_checkpoint); sync: training waits for the save; async: it waits only for the copy of its shard to host memory over PCIe, the write drains in the background before the next save, and a failure while it drains loses that save too; memory: it waits for the same copy, then each node's shard is copied over the scale-out network to the host memory of checkpoint-replicas peers in the background, and a failure restores from a peer's host memory over the network (GEMINI, SOSP 2023; NVIDIA Resiliency Extension's local checkpoints, Megatron-LM's --non-persistent-ckpt-type local)"),
	SDBL("cluster.storage.checkpoint-efficiency", checkpoint_eff, CAPSIM_DIM_RATIO, P, 0.01, 1.0, NULL, "a whole save's rate over the storage's raw write rate, given in place of the save's parts (the flat figure of old, 38.4%: torch.save of 8 GiB from an H200 SXM machine to its local disk at 0.534 GB/s against dd's 1.389 GB/s, calibrate/results/h200-2026-12-04-checkpoint.jsonl); default: none, the parts (checkpoint-host-copy, -serialise, -writers and the storage's raw rate)"),
	SDBL("cluster.storage.checkpoint-host-copy", checkpoint_host_copy, CAPSIM_DIM_BYTES_PER_S, P, 1e6, 1e13, "1.372 GB/s", "the machine's copy of a GPU's shard into pageable host memory, each rank's, before a synchronous save serialises it (and back onto the GPU on a restore: an assumption); measured with torch's tensor.cpu(): 1.372 GB/s on an H200 SXM machine (8 GiB of bf16 in 6.26 s, calibrate/results/h200-2026-12-04-checkpoint.jsonl, 2026-12-04), 1.178 GB/s on an H100 SXM machine (2 GiB in 1.82 s, calibrate/results/h100-2026-12-05-checkpoint.jsonl, 2026-12-05); a host's page-fault rate bounds it, not PCIe"),
	SDBL("cluster.storage.checkpoint-serialise", checkpoint_serialise, CAPSIM_DIM_BYTES_PER_S, P, 1e6, 1e13, "2.35 GB/s", "the machine's serialisation of host-memory tensors into the file system's buffers, one writer thread's rate: 2.35 GB/s, what remains of torch.save's 16.10 s for 8 GiB of bf16 on an H200 SXM machine once its copy off the GPU (6.26 s) and dd's raw write of the same bytes (6.18 s) are taken out (calibrate/results/h200-2026-12-04-checkpoint.jsonl, 2026-12-04)"),
	SINT("cluster.storage.checkpoint-writers", checkpoint_writers, P, 1, 256, "1", "writer threads a rank serialises with: torch.save 1; PyTorch DCP's FileSystemWriter thread_count (default 1) and Megatron-LM's torch_dist TorchDistSaveShardedStrategy thread_count (default 1; 2 in its earlier releases); each adds a thread's serialisation until the storage's raw write rate binds"),
	SDBL("cluster.storage.checkpoint-drain-slowdown", checkpoint_drain_slowdown, CAPSIM_DIM_RATIO, NN, 0.0, 10.0, "0.5%", "how much slower steps run while an async save drains or an in-memory one replicates (measured: GPT-2 355M on an H200 SXM, steps 0.2-0.4% slower by median and 0-1.9% by mean during 4-17 s drains; calibrate/results/h200-2026-12-04-async-drain.jsonl); a CPU-bound step may lose more"),
	SINT("cluster.storage.checkpoint-replicas", checkpoint_replicas, P, 1, 16, "1", "checkpoint-mode=memory: the peers whose host memory holds a copy of each node's shard, on nodes of other leaf switches (GEMINI, SOSP 2023; NVIDIA Resiliency Extension's --replication-factor); each node's host memory holds its own shard and these copies"),
	SDBL("cluster.storage.persistent-interval", persistent_interval_s, CAPSIM_DIM_SECONDS, P, 60.0, 3.15576e7, NULL, "checkpoint-mode=memory: time between checkpoints written to the storage tier as well (Megatron-LM's --save-interval beside --non-persistent-save-interval; each costing what the framework's own save costs, sync or async, amortised over the in-memory saves), the copy a loss of a node with all its replicas restarts from; default: none (such a loss restarts the run)"),
	SDBL("cluster.storage.bytes-per-token", data_bytes_per_token, CAPSIM_DIM_BYTES, P, 1.0, 1e9, NULL, "stored bytes a trained token reads; default: 2 where the vocabulary fits uint16, else 4 (Megatron-LM's indexed datasets, DType.optimal_dtype)"),
	SDBL("cluster.storage.shard-size", data_shard_bytes, CAPSIM_DIM_BYTES, P, 1.0, 1e15, NULL, "bytes of one data file (a WebDataset tar or MDS shard, or one sample a file), each opened and read whole; default: none, one memory-mapped file a corpus opened once (Megatron-LM)"),
	SDBL("cluster.storage.read-size", data_read_size, CAPSIM_DIM_BYTES, P, 512.0, 1e10, "128 KiB", "one read request of the loader (Linux's default readahead window, VM_READAHEAD_PAGES in include/linux/mm.h)"),
	SDBL("cluster.storage.metadata-ops-per-file", data_md_ops_per_file, CAPSIM_DIM_COUNT, NN, 0.0, 1e3, "1", "metadata operations of the tier's rate a file opened costs: the catalog's rates are IO500 mdtest-hard-read files a second (each opened, read and closed), so one"),
	SINT("cluster.storage.loader-workers", loader_workers, NN, 0, 1024, "2", "data-loader worker processes a rank (Megatron-LM's --num-workers default); 0: the training process reads each batch between steps"),
	SINT("cluster.storage.prefetch", loader_prefetch, P, 1, 1024, "2", "batches each worker fetches ahead (PyTorch DataLoader's prefetch_factor default)"),
	SDBL("reliability.gpu-mtbf", gpu_mtbf_s, CAPSIM_DIM_SECONDS, P, 3600.0, 3.15576e10, "6483.66 d", "one GPU's mean time between faults of its chip that take its node out (Xid errors, lost or unknown devices, PCIe width low, nvidia-smi timeouts, temperature, SDC): 94 of the GPU class in StepFun's fault trace of 400 GPU servers over 348 days (InfiniteHBD-Trace, SIGCOMM 2025, fault_statistics.json: 139,200 node-days), x 1.8272: the trace's faults without a part (144 unknown errors, a crash and 12 unknown software errors over all 313 named faults, 97 failed stress tests and a hardware unknown over the 301 named hardware faults) shared in proportion, the servers taken as 8-GPU (an assumption): 139,200 x 8 / 171.75"),
	SDBL("reliability.hbm-mtbf", hbm_mtbf_s, CAPSIM_DIM_SECONDS, P, 3600.0, 3.15576e10, "9991.22 d", "one GPU's memory (HBM): double- and single-bit ECC errors over the retirement threshold, 61 of the GPU class in StepFun's fault trace of 400 GPU servers over 348 days (InfiniteHBD-Trace, SIGCOMM 2025, fault_statistics.json: 139,200 node-days), x 1.8272: the trace's faults without a part (144 unknown errors, a crash and 12 unknown software errors over all 313 named faults, 97 failed stress tests and a hardware unknown over the 301 named hardware faults) shared in proportion, 8 GPUs a server (an assumption): 139,200 x 8 / 111.46"),
	SDBL("reliability.nvlink-mtbf", nvlink_mtbf_s, CAPSIM_DIM_SECONDS, P, 3600.0, 3.15576e10, "25394.3 d", "a node's NVLink and NVSwitch together: 3 GPU peer-to-peer bandwidth faults in StepFun's fault trace of 400 GPU servers over 348 days (InfiniteHBD-Trace, SIGCOMM 2025, fault_statistics.json: 139,200 node-days), x 1.8272: the trace's faults without a part (144 unknown errors, a crash and 12 unknown software errors over all 313 named faults, 97 failed stress tests and a hardware unknown over the 301 named hardware faults) shared in proportion: 139,200 / 5.48"),
	SDBL("reliability.nic-mtbf", nic_mtbf_s, CAPSIM_DIM_SECONDS, P, 3600.0, 3.15576e10, "2539.43 d", "a node's NICs together (link speed low, lost, PCIe width, RoCE GID errors): 30 in StepFun's fault trace of 400 GPU servers over 348 days (InfiniteHBD-Trace, SIGCOMM 2025, fault_statistics.json: 139,200 node-days), x 1.8272: the trace's faults without a part (144 unknown errors, a crash and 12 unknown software errors over all 313 named faults, 97 failed stress tests and a hardware unknown over the 301 named hardware faults) shared in proportion: 139,200 / 54.82"),
	SDBL("reliability.link-mtbf", link_mtbf_s, CAPSIM_DIM_SECONDS, P, 3600.0, 3.15576e10, "1731.43 d", "a node's fabric cables and optics together: 40 parameter-plane cables down, 3 Y-cables and an optical module taken offline, 44 in StepFun's fault trace of 400 GPU servers over 348 days (InfiniteHBD-Trace, SIGCOMM 2025, fault_statistics.json: 139,200 node-days), x 1.8272: the trace's faults without a part (144 unknown errors, a crash and 12 unknown software errors over all 313 named faults, 97 failed stress tests and a hardware unknown over the 301 named hardware faults) shared in proportion: 139,200 / 80.40"),
	SDBL("reliability.host-mtbf", host_mtbf_s, CAPSIM_DIM_SECONDS, P, 3600.0, 3.15576e10, "1104.10 d", "the rest of a node's hardware together (power supplies 26, fans 33, motherboards and their battery 5, CPUs 3, RAID and riser cards 2): 69 in StepFun's fault trace of 400 GPU servers over 348 days (InfiniteHBD-Trace, SIGCOMM 2025, fault_statistics.json: 139,200 node-days), x 1.8272: the trace's faults without a part (144 unknown errors, a crash and 12 unknown software errors over all 313 named faults, 97 failed stress tests and a hardware unknown over the 301 named hardware faults) shared in proportion: 139,200 / 126.08"),
	SDBL("reliability.software-mtbf", software_mtbf_s, CAPSIM_DIM_SECONDS, P, 3600.0, 3.15576e10, "7725.11 d", "a node's software (node agent 7, file systems 3, a kernel panic, a firmware mismatch): 12 named in StepFun's fault trace of 400 GPU servers over 348 days (InfiniteHBD-Trace, SIGCOMM 2025, fault_statistics.json: 139,200 node-days), x 1.5016 for the faults without a part shared over all named ones: 139,200 / 18.02"),
	SDBL("reliability.other-mtbf", other_mtbf_s, CAPSIM_DIM_SECONDS, P, 3600.0, 3.15576e10, NULL, "a node's faults of no part above; default: none (the trace's faults without a part are shared over the parts, and the 16 machines it took offline to troubleshoot a job or to test are not faults: docs/model.md)"),
	SDBL("reliability.switch-mtbf", switch_mtbf_s, CAPSIM_DIM_SECONDS, P, 3600.0, 3.15576e10, "59700 d", "one leaf switch's mean time between crashes, which stop every node under it: 0.051% of ToR switches a month (Alibaba HPN, Qian et al., SIGCOMM 2024, section 2.3; read through a transcription)"),
	SDBL("reliability.node-mtbf", node_mtbf_s, CAPSIM_DIM_SECONDS, P, 3600.0, 3.15576e9, NULL, "a node's parts together; given, it scales the part rates above to it (e.g. 153.85 d: Meta RSC-1's 6.5 hardware failures per 1000 node-days, Kokolis et al., HPCA 2025, read through a summary); default: the parts' (245.07 d for 8 GPUs: 568 faults in 139,200 node-days)"),
	SINT("reliability.runs", reliability_runs, NN, 0, 1e6, "1000", "Monte Carlo runs of the whole training run (its interruptions drawn from the scenario's seed); 0: none"),
	SDBL("reliability.repair", repair_s, CAPSIM_DIM_SECONDS, P, 60.0, 3.15576e7, NULL, "how long a failed node is out of service before it is back; sizes the spares; default: each part's mean in StepFun's trace (GPU, HBM and NVLink 6.48 d, NIC 10.68 d, link 4.86 d, host 11.43 d, software 2.04 d, other 3.20 d)"),
	SDBL("reliability.restart", restart_s, CAPSIM_DIM_SECONDS, NN, 0.0, 86400.0, "11 min", "detection, requeue and start-up after a failure, before the checkpoint is read back: the median interval of automatic retries after a failure on a 504-GPU B200 cluster, 11 min (interquartile range 10-11, 12 retry chains; Lablup, arXiv:2605.09370, abstract)"),
	SINT("workload.seq-len", seq_len, R | P, 1, 1e8, NULL, "tokens per sequence"),
	SDBL("workload.global-batch", global_batch, CAPSIM_DIM_COUNT, R | P | WHOLE, 1, 1e9, NULL, "sequences per step"),
	SINT("workload.micro-batch", micro_batch, P, 1, 1e6, "1", "sequences per micro-batch"),
	SDBL("workload.tokens", tokens, CAPSIM_DIM_COUNT, R | P | WHOLE, 1e3, 1e16, NULL, "token budget"),
	FENUM("workload.dtype", S, dtype, capsim_dtype_names, R, NULL, "training data type"),
	FREF("workload.model.ref", S, model_ref, "model", 0, "model; without it, the <model> element defines one by its own fields"),
	SINT("workload.parallelism.tp", tp, P, 1, 1e5, "1", "tensor-parallel degree"),
	SINT("workload.parallelism.pp", pp, P, 1, 1e5, "1", "pipeline-parallel degree"),
	SINT("workload.parallelism.dp", dp_given, P, 1, 1e7, NULL, "data-parallel degree; default: the rest"),
	SINT("workload.parallelism.cp", cp, P, 1, 1e5, "1", "context-parallel degree"),
	SINT("workload.parallelism.ep", ep, P, 1, 1e5, "1", "expert-parallel degree"),
	FENUM("workload.parallelism.schedule", S, schedule, schedules, 0, "1f1b", "pipeline schedule"),
	SINT("workload.parallelism.first-stage-layers", first_stage_layers, P, 1, 1e5, NULL, "layers of the first pipeline stage; default: an even split"),
	SINT("workload.parallelism.last-stage-layers", last_stage_layers, P, 1, 1e5, NULL, "layers of the last pipeline stage; default: an even split"),
	SINT("workload.parallelism.virtual-stages", virtual_stages, P, 1, 1000, "1", "model chunks per stage (interleaved)"),
	FENUM("workload.parallelism.zero", S, zero, zeros, 0, "0", "ZeRO stage"),
	FENUM("workload.parallelism.recompute", S, recompute, recomputes, 0, "none", "activation recomputation"),
	FFLAG("workload.parallelism.sequence-parallel", S, sequence_parallel, 0, "off", "Megatron sequence parallelism"),
	FENUM("workload.attention", S, attention, attentions, 0, "fused", "attention kernel, rated by its measured curve (docs/model.md, \"Attention\"): fused (the framework's: cuDNN's from Hopper on for megatron (Transformer Engine) and for torch-amp and fsdp2 (PyTorch SDPA), FlashAttention-2 on Ampere and for deepspeed), flash2, flash3 (Hopper only; cudnn elsewhere) or cudnn; or unfused (QK^T and AV GEMMs, softmax, dropout, as before FlashAttention)"),
	FENUM("workload.execution", S, execution, capsim_execution_names, 0, "eager", "how the host issues the kernels: eager (each op through Python, the dispatcher and autograd), compiled (torch.compile), graphs (the step replayed from CUDA graphs: no host work per kernel); the host and the GPU are two streams and the step is the critical path of both"),
	SDBL("workload.kernels-per-op", kernels_per_op, CAPSIM_DIM_RATIO, P, 1.0, 20.0, NULL, "kernels the framework launches for each of capsim's fused ops; default: 1 for megatron and deepspeed (fused modules), measured for torch-amp and fsdp2 (plain PyTorch modules, forward and backward: GPT-2-style blocks 2.10 and 2.57 eager, Llama-style 4.00 and 5.60; compiled 0.865 of those)"),
	SDBL("workload.tp-overlap-efficiency", tp_overlap_eff, CAPSIM_DIM_RATIO, P, 0.01, 1.0, "78%", "share of a tensor-parallel collective that the flat overlap (tp-overlap-method=flat, and tp-async) hides behind the GEMMs it can hide behind (Flux's H800 measurements, TP 8: 75% for all-gather + GEMM, 81% for GEMM + reduce-scatter; bytedance/flux docs/performance_report.md)"),
	FFLAG("workload.parallelism.ep-overlap", S, ep_overlap, 0, "off", "hide each micro-batch's expert all-to-alls behind the computation of the micro-batch whose pass is paired with it in 1F1B's steady state (DeepSeek-V3's DualPipe, arXiv 2412.19437 sec. 3.2.1; Megatron-Core's 1F1B all-to-all overlap); the warm-up forwards and cool-down backwards have no partner"),
	SDBL("workload.parallelism.dp-bucket", dp_bucket, CAPSIM_DIM_COUNT, P | WHOLE, 1e3, 1e13, NULL, "parameters a data-parallel gradient bucket holds: each bucket's reduction starts once its gradients are ready, the last one (the embedding's, or one bucket) only after the backward, and the weights' all-gather waits for that one before the next forward (docs/model.md, \"Training step\", 7); default: the framework's: megatron max(40M, 1M x dp x cp) (Megatron-Core DistributedDataParallelConfig.bucket_size), torch-amp 25 MiB of gradients (PyTorch DistributedDataParallel bucket_cap_mb), deepspeed 5e8 (ZeRO reduce_bucket_size)"),
	FFLAG("workload.parallelism.tp-comm-overlap", S, tp_comm_overlap, 0, "off", "overlap tensor-parallel collectives with GEMMs (Megatron-Core --tp-comm-overlap)"),
	FENUM("workload.parallelism.tp-overlap-method", S, tp_overlap_method, tp_overlap_methods, 0, "framework", "how tp-comm-overlap hides the tensor-parallel collectives: userbuffers (Transformer Engine, Megatron-Core's --tp-comm-overlap: all-gathers by ring exchange in tp chunks on the copy engine, reduce-scatters pipelined in 4 chunks and in bulk on 16 of the GPU's 132 SMs, transformer_engine/pytorch/module/base.py initialize_ub), async-tp (PyTorch's AsyncTP, torch.compile's micro-pipelining over symmetric memory: tp chunks, copy-engine transfers, a reduction kernel after each reduce-scatter), flat (a share tp-overlap-efficiency of what the GEMMs can cover, slowed by comm-slowdown); framework: userbuffers for megatron, async-tp for torch-amp and fsdp2, flat for deepspeed"),
	FENUM("workload.parallelism.tp-async", S, tp_async, tp_asyncs, 0, "auto", "run each layer's backward tensor-parallel collective (the input gradient's all-reduce; with sequence parallelism the input's all-gather for the wgrad) beside the weight-gradient GEMMs, as Megatron-LM does since 2022 (--async-tensor-model-parallel-allreduce, on by default; Korthikanti et al. 2022, sec. 6.2); auto: on for megatron and deepspeed, off for torch-amp and fsdp2"),
	SDBL("workload.comm-slowdown", comm_slowdown, CAPSIM_DIM_RATIO, P, 1.0, 3.0, "1.1", "compute slows by this factor while a collective runs beside it, in the flat overlap, tp-async and the experts' overlap (assumption, between Transformer Engine's SM split, 132/116 = 1.14 for its pipelined and bulk overlaps and about 1 for ring exchange, and the 18.9% mean slowdown measured in arXiv 2507.03114)"),
	SDBL("workload.moe-capacity-factor", moe_capacity_factor, CAPSIM_DIM_RATIO, P, 0.01, 64.0, NULL, "expert capacity over the even share of tokens, buffers padded to it (GShard, Switch); default: dropless, even routing"),
	SDBL("workload.straggler", straggler, CAPSIM_DIM_RATIO, P, 1.0, 100.0, "1", "one GPU's kernels run this many times slower (throttled or faulty); the step waits for it; placed on workload.straggler-stage"),
	SINT("workload.straggler-stage", straggler_stage, 0, -1, 1e5, "-1", "pipeline stage of the straggler, from 0; -1: the stage with the most compute (the worst case)"),
	SINT("workload.straggler-replica", straggler_replica, 0, 0, 1e6, "0", "data-parallel replica of the straggler, from 0"),
	SDBL("workload.jitter", jitter, CAPSIM_DIM_RATIO, NN, 0.0, 1.0, "0", "coefficient of variation of each GPU's kernel time per layer and micro-batch (lognormal, from the scenario's seed); every replica is then simulated (assumption: no default from measurement)"),
	FFLAG("workload.variability", S, variability, 0, "off", "the step waits for the expected slowest of the ranks that synchronise (the job's GPUs), each GPU's kernel rate drawn from its model's spread (cluster.gpu.variability.rate-cv, step-cv): the mean step grows by variability_s and spreads by step_time_sd_s (docs/model.md, \"Runtime variability\")"),
	SDBL("workload.task-limit", task_limit, CAPSIM_DIM_COUNT, P | WHOLE, 1e3, 1e11, "2e6", "most pipeline tasks (a forward and a backward per micro-batch, stage and chunk, for each replica simulated) one step may simulate; a larger step is refused before it runs (measured: about 130 bytes and 1.4 us a task, so the default bounds a step near 0.3 GB and 3 s; raise it for longer schedules)"),
	SDBL("workload.flow-limit", flow_limit, CAPSIM_DIM_COUNT, P | WHOLE, 1e3, 1e10, "2e6", "most flows one collective may simulate (an all-to-all over n ranks is n(n-1), a ring all-reduce n per distinct ring); past it, a collective that no symmetry folds is not simulated but approximated, as its result says (measured: about 0.37 KB and 1.8 us a flow simulated, so the default bounds a collective near 0.75 GB and 3.6 s; past it, about 80 ns a flow routed and counted, at most 64 routes a flow of the limit; raise it to simulate more)"),
	FENUM("workload.fp8-recipe", S, fp8_recipe, fp8_recipe_names, 0, "framework", "scaling of Transformer Engine's fp8 tensors (dtype fp8, megatron and deepspeed): delayed (the scale from the amax history, one pass a cast: Megatron-LM's --fp8-recipe default) or current (the scale from the tensor's own amax, --fp8-recipe tensorwise: an amax pass before each cast, 6 bytes an element against 4, as TransformerEngine docs/examples/gemm_profiling/gemm_profiling.rst times it); framework: delayed; torch-amp and fsdp2 run torchao's dynamic tensorwise casts whatever this says"),
	FENUM("workload.framework", S, framework, capsim_framework_names, 0, "megatron", "training framework, by the copies of the model it keeps: megatron (Megatron-LM/NeMo, 18 bytes a parameter), torch-amp (PyTorch autocast: fp32 weights are the only copy, 16 bytes, plus bf16 casts held to the backward), fsdp2 (16 bytes, sharded as zero says, bf16 all-gathers), deepspeed (ZeRO paper: 16 bytes)"),
	FENUM("workload.finetune.method", S, finetune, finetunes, 0, "full", "full: every weight trained; lora: the base frozen (16-bit weights, no gradients, no optimizer state, no weight-gradient GEMMs), rank-r adapters trained beside each target matrix"),
	SINT("workload.finetune.rank", lora_rank, P, 1, 65536, "16", "LoRA rank r: each adapted din x dout matrix trains r(din + dout) parameters"),
	FENUM("workload.finetune.targets", S, lora_targets, lora_targets, 0, "all", "matrices LoRA adapts: all (every linear layer of the blocks) or attention (Q, K, V and the output projection)"),
	FENUM("workload.precision.params", S, prec_params, prec_params_names, 0, "framework", "dtype of the weights the framework keeps between steps (fp32, bf16, fp16; fp8: Transformer Engine's FP8 primary weights, Megatron-LM's --fp8-param-gather: the GEMM weights kept in FP8 alone, with no 16-bit copy; the rest 16-bit; needs dtype fp8 and framework megatron)"),
	FENUM("workload.precision.grads", S, prec_grads, prec_grads_names, 0, "framework", "dtype of the gradients accumulated and kept until the optimizer step (fp32, bf16)"),
	FENUM("workload.precision.master", S, prec_master, prec_master_names, 0, "framework", "a separate fp32 master copy of the weights (none, fp32)"),
	FENUM("workload.precision.states", S, prec_states, prec_states_names, 0, "framework", "dtype of Adam's two moments (fp32, bf16)"),
	SDBL("workload.memory-reserve", memory_reserve_bytes, CAPSIM_DIM_BYTES, NN, 0, 1e12, NULL, "memory per GPU outside the model, given whole: it replaces the modelled CUDA context, NCCL buffers and allocator slack (workload.memory-context, nccl-buffer, nccl-channels, allocator-slack); 0 or not given: modelled"),
	SDBL("workload.memory-context", memory_context_bytes, CAPSIM_DIM_BYTES, P, 1e6, 1e11, NULL, "the CUDA context and library workspaces of one process; default: 787,283,968 bytes (0.733 GiB) measured (device used less the allocator's reserve on an H200 SXM, PyTorch 2.11, CUDA 13.0: calibrate/results/h200-2026-12-03-memory.jsonl, the same at all 35 points), and for megatron also Transformer Engine's cuBLAS workspaces, 32 MiB on Hopper and later for each of its 4 streams (transformer_engine/pytorch/cpp_extensions/gemm.py, get_cublas_workspace_size_bytes)"),
	SDBL("workload.nccl-buffer", nccl_buffer_bytes, CAPSIM_DIM_BYTES, P, 65536, 1e10, "4 MiB", "NCCL's buffer for each channel of each peer of a communicator (NCCL_BUFFSIZE, default 4194304: NCCL documentation, Environment Variables)"),
	SINT("workload.nccl-channels", nccl_channels, P, 1, 64, "16", "channels of each NCCL communicator, each with buffers for its two ring peers (assumption: NCCL logs 16 channels on 8 H100 SXM, NVIDIA/nccl issue 1453)"),
	SDBL("workload.allocator-slack", allocator_slack, CAPSIM_DIM_RATIO, NN, 0.0, 1.0, "1.4%", "memory the caching allocator reserves beyond its peak allocation, a share of it: the least seen on an H200 SXM (GPT-3 6.7B at micro-batch 4, the measured point nearest the capacity: 127.69 GiB allocated, 129.44 reserved; calibrate/results/h200-2026-12-03-memory.jsonl); PyTorch frees its cached blocks and retries before it reports out of memory, so the larger shares seen with memory to spare (to 22%) are cache, not need; expandable_segments (PYTORCH_CUDA_ALLOC_CONF, PyTorch's CUDA semantics notes) fragments less (assumption: the same share, an upper bound)"),
	FREF("facility.ref", S, facility_ref, "facility", 0, "facility defaults"),
	SDBL("cost.horizon", horizon_s, CAPSIM_DIM_SECONDS, P, 86400.0, 20 * 3.15576e7, "3 y", "planning horizon: the TCO, the residual value, the break-even utilisation and the payback are all over it"),
	SDBL("cost.utilization", utilization, CAPSIM_DIM_RATIO, P, 0.001, 1.0, "60%", "share of time the cluster is busy"),
	SDBL("cost.resale", resale, CAPSIM_DIM_RATIO, NN, 0.0, 1.0, "72%", "what a used node or switch resells for, a share of a new one's price of the same age (SpotWire's GPU valuator, 2026-06-04, CC-BY-4.0: a used, working card at 0.72 of its age's price; a reseller's market figure); cables, optics and storage resell for nothing (an assumption)"),
	SDBL("cost.resale-decline", resale_decline, CAPSIM_DIM_RATIO, NN, 0.0, 0.99, "23%", "the share of its price a part's generation loses a year, so that at age t a year the residual is resale x (1 - decline)^t of the price (SpotWire's H100 vintage curve, 2026-06-04: 0.78, 0.60, 0.46, 0.35 of the price at 1 to 4 years, 23% a year)"),
	SDBL("cost.cabling", cabling_usd_per_gpu, CAPSIM_DIM_USD, NN, 0.0, 1e6, "$2560", "cables and optics of the fabric, per GPU (a 2-tier 1,024-GPU NDR H100 cluster's, Tech-Talk-CTO's cost spreadsheet, 2024-08: an assumption elsewhere)"),
	SDBL("cost.cable-dac", cable_usd[0], CAPSIM_DIM_USD, P, 0.01, 1e6, NULL, "one passive copper cable (to 3 m); no public dated price was found: give the quote's"),
	SDBL("cost.cable-acc", cable_usd[1], CAPSIM_DIM_USD, P, 0.01, 1e6, NULL, "one active copper cable (to 5 m)"),
	SDBL("cost.cable-multimode", cable_usd[2], CAPSIM_DIM_USD, P, 0.01, 1e6, NULL, "one multimode optical cable (to 50 m) with its two transceivers"),
	SDBL("cost.cable-singlemode", cable_usd[3], CAPSIM_DIM_USD, P, 0.01, 1e6, NULL, "one single-mode optical cable (to 500 m) with its two transceivers"),
	SDBL("cost.cable-singlemode-2km", cable_usd[4], CAPSIM_DIM_USD, P, 0.01, 1e6, NULL, "one single-mode optical cable past 500 m (FR4, 2 km) with its two transceivers; with a price for every class the layout uses, capex counts the cables instead of cost.cabling"),
	SDBL("cost.discount-rate", discount_rate, CAPSIM_DIM_RATIO, NN, 0.0, 1.0, "0", "discount rate a year for the TCO's present value (tco_npv_usd): the capex up front, the opex monthly, the residual at the horizon; 0: none"),
	SDBL("cost.network-penalty", cloud_network_penalty, CAPSIM_DIM_RATIO, NN, 0.0, 0.99, "0%", "throughput the cloud offer's shared network loses against the scenario's own fabric (an assumption: none unless given; set it from a measurement of the offer)"),
	SDBL("cost.support-servers", support_share[CAPSIM_SUPPORT_SERVERS], CAPSIM_DIM_RATIO, NN, 0.0, 1.0, "10%", "the nodes' support and maintenance a year, a share of their price (hardware maintenance contracts: 10-12% of the purchase price a year, Library Technology Guides; 10-15%, P. Crewe, 2013-05-27; NVIDIA's own DGX support is quoted, not published: one blog gives 20% of a DGX H100's base price for its first year, supercluster.blog, undated)"),
	SDBL("cost.support-switches", support_share[CAPSIM_SUPPORT_SWITCHES], CAPSIM_DIM_RATIO, NN, 0.0, 1.0, "10%", "the fabric switches' support a year, a share of their price (the same hardware-maintenance figure as the servers'; no public NVIDIA networking support price was found: an assumption)"),
	SDBL("cost.support-cables", support_share[CAPSIM_SUPPORT_CABLES], CAPSIM_DIM_RATIO, NN, 0.0, 1.0, "0%", "cables' and optics' support a year, a share of their price (none: failed ones are replaced from spares, an assumption; give a maintenance contract's share)"),
	SDBL("cost.support-storage", support_share[CAPSIM_SUPPORT_STORAGE], CAPSIM_DIM_RATIO, NN, 0.0, 1.0, "10%", "the shared file system's support a year, a share of its price (the same hardware-maintenance figure; storage vendors quote theirs: an assumption)"),
	SDBL("cost.insurance", insurance_share, CAPSIM_DIM_RATIO, NN, 0.0, 0.2, "0%", "property insurance a year, a share of the capex (none unless given: no public figure for GPU clusters was found; give the insurer's)"),
	SDBL("cost.staff", staff_usd_per_s, CAPSIM_DIM_USD_PER_S, NN, 0.0, 1e4, "$0/y", "people who run the owned cluster, a year (e.g. $300k/y; none unless given): in the opex"),
	FREF("cost.cloud.ref", S, cloud_ref, "cloud", 0, "cloud offer to compare with"),
	FENUM("cost.acquire", S, acquire, acquires, 0, "buy", "how the design gets its GPUs, which decides what cost_to_train_usd counts: buy (own the cluster: its busy GPU-hours at the TCO's rate) or rent (the cloud offer's GPUs for the run)"),
	FREF("cost.burst.cloud", S, burst_cloud, "cloud", 0, "cloud offer to burst into"),
	SINT("cost.burst.max-gpus", burst_max_gpus, P, 1, 1e7, NULL, "most GPUs rented at once"),
};
const size_t capsim_scenario_n_fields = N(capsim_scenario_fields);

static const capsim_retired_path retired_paths[] = {
	{ "cost.support", "support is priced by part class, each a share of its class's capex a "
			  "year: cost.support-servers, cost.support-switches, cost.support-cables "
			  "and cost.support-storage (give the same share to each for the old "
			  "meaning)" },
	{ "cost.depreciation", "the capex is no longer charged pro rata over a depreciation "
			       "period: the TCO subtracts what the nodes and switches resell for "
			       "at cost.horizon (cost.resale, cost.resale-decline)" },
};

const capsim_retired_path *capsim_scenario_retired(const char *path)
{
	for (size_t i = 0; i < N(retired_paths); i++)
		if (strcmp(retired_paths[i].path, path) == 0)
			return &retired_paths[i];
	return NULL;
}

#define NO_HAS ((size_t)-1)
const capsim_part_slot capsim_part_slots[] = {
	{ "cluster.node", CAPSIM_KIND_NODE, offsetof(S, node_ref), offsetof(S, node), NO_HAS, 1 },
	{ "cluster.gpu", CAPSIM_KIND_GPU, offsetof(S, gpu_ref), offsetof(S, gpu), NO_HAS, 1 },
	{ "cluster.nic", CAPSIM_KIND_NIC, offsetof(S, nic_ref), offsetof(S, nic), NO_HAS, 1 },
	{ "cluster.group.ID", CAPSIM_KIND_NODE, offsetof(S, groups[0].node_ref), offsetof(S, groups[0].node), NO_HAS, 1 },
	{ "cluster.group.ID.gpu", CAPSIM_KIND_GPU, offsetof(S, groups[0].gpu_ref), offsetof(S, groups[0].gpu), NO_HAS, 1 },
	{ "cluster.group.ID.nic", CAPSIM_KIND_NIC, offsetof(S, groups[0].nic_ref), offsetof(S, groups[0].nic), NO_HAS, 1 },
	{ "cluster.fabric.switch", CAPSIM_KIND_SWITCH, offsetof(S, switch_ref), offsetof(S, fabric_switch), offsetof(S, has_switch), 0 },
	{ "cluster.storage.local", CAPSIM_KIND_STORAGE, offsetof(S, local_storage_ref), offsetof(S, local_storage), offsetof(S, has_local_storage), 0 },
	{ "cluster.storage.shared", CAPSIM_KIND_STORAGE, offsetof(S, shared_storage_ref), offsetof(S, shared_storage), offsetof(S, has_shared_storage), 0 },
	{ "workload.model", CAPSIM_KIND_MODEL, offsetof(S, model_ref), offsetof(S, model), NO_HAS, 0 },
	{ "facility", CAPSIM_KIND_FACILITY, offsetof(S, facility_ref), offsetof(S, facility), offsetof(S, has_facility), 0 },
	{ "cost.cloud", CAPSIM_KIND_CLOUD, offsetof(S, cloud_ref), offsetof(S, cloud), offsetof(S, has_cloud), 0 },
};
const size_t capsim_n_part_slots = N(capsim_part_slots);

void capsim_scenario_group(const capsim_scenario *s, int g, capsim_group_view *v)
{
	int first = 0;
	for (int i = 0; i < g; i++)
		first += s->groups[i].nodes;
	const capsim_node_group *m = &s->groups[g];
	*v = (capsim_group_view){ .nodes = m->nodes, .first_node = first, .node = &m->node,
				  .gpu = &m->gpu, .nic = &m->nic,
				  .nvswitch = m->has_nvswitch ? &m->nvswitch : NULL,
				  .profile = m->profile };
}

int capsim_scenario_group_find(const capsim_scenario *s, const char *key, size_t len)
{
	for (int g = 0; g < s->n_groups; g++)
		if (strlen(s->groups[g].id) == len && strncmp(s->groups[g].id, key, len) == 0)
			return g;
	if (len == 0 || len > 4 || strspn(key, "0123456789") < len)
		return -1;
	int g = atoi(key);
	return g < s->n_groups ? g : -1;
}

int capsim_scenario_group_path(const capsim_scenario *s, const char *path, char *tmpl,
			       size_t len)
{
	static const char head[] = "cluster.group.";
	size_t h = sizeof head - 1;
	if (strncmp(path, head, h) != 0)
		return -1;
	const char *key = path + h, *dot = strchr(key, '.');
	if (!dot)
		return -1;
	snprintf(tmpl, len, "%sID%s", head, dot);
	int g = capsim_scenario_group_find(s, key, (size_t)(dot - key));
	return g < 0 ? -2 : g;
}

void capsim_scenario_group_ids(const capsim_scenario *s, char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = '\0';
	for (int g = 0; g < s->n_groups && at + 1 < len; g++) {
		int w = snprintf(buf + at, len - at, "%s%s", g ? ", " : "", s->groups[g].id);
		if (w < 0)
			break;
		at += (size_t)w;
	}
}

/* 1 when path is below prefix ("cluster.node" holds "cluster.node.x") */
static int below(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);
	return strncmp(path, prefix, n) == 0 && path[n] == '.';
}

/* keep the overrides of group g's parts and of parts that are no group's */
static void overrides_as_group(capsim_scenario *out, const capsim_scenario *s, int g)
{
	const capsim_node_group *m = &s->groups[g];
	char mine[CAPSIM_ID_LEN + 16];
	snprintf(mine, sizeof mine, "cluster.group.%s", m->id);
	int n = 0;
	for (int i = 0; i < out->n_overrides; i++) {
		const char *p = out->overrides[i].path;
		int shorthand = below(p, "cluster.node") || below(p, "cluster.gpu") ||
				below(p, "cluster.nic");
		if ((shorthand && !m->shorthand) || (below(p, "cluster.group") && !below(p, mine)))
			continue;
		out->overrides[n++] = out->overrides[i];
	}
	out->n_overrides = n;
}

/* the one-group view of s: group g's parts */
static void view_of_group(capsim_scenario *out, const capsim_node_group *m)
{
	out->node = m->node;
	out->gpu = m->gpu;
	out->nic = m->nic;
	out->has_nvswitch = m->has_nvswitch;
	out->nvswitch = m->nvswitch;
	capsim_strlcpy(out->node_ref, m->node_ref, sizeof out->node_ref);
	capsim_strlcpy(out->gpu_ref, m->gpu_ref, sizeof out->gpu_ref);
	capsim_strlcpy(out->nic_ref, m->nic_ref, sizeof out->nic_ref);
	capsim_strlcpy(out->gpu_profile, m->profile, sizeof out->gpu_profile);
}

void capsim_scenario_view_group(capsim_scenario *s, int g)
{
	view_of_group(s, &s->groups[g]);
}

void capsim_scenario_as_group(const capsim_scenario *s, int g, capsim_scenario *out)
{
	if (out != s)
		*out = *s;
	if (g > 0) {
		out->groups[0] = s->groups[g];
		view_of_group(out, &out->groups[0]);
		out->rails = out->rails_given ? out->rails_given : out->node.nics;
		if (out->rails > out->node.nics)
			out->rails = out->node.nics;
	}
	overrides_as_group(out, s, g);
	out->groups[0].nodes = s->nodes;
	for (int i = 1; i < out->n_groups; i++)
		memset(&out->groups[i], 0, sizeof out->groups[i]);
	out->n_groups = 1;
}

void capsim_scenario_dp_plane(const capsim_scenario *s, int gpus_per_node,
			      capsim_scenario *plane)
{
	int group = s->dp * s->cp;
	int per = gpus_per_node;
	int G = s->node.gpus;
	*plane = *s;
	plane->node.gpus = per;
	/* the group's members in one NVLink domain: per a node, or, where a
	 * tensor-parallel group spans nodes (TP 8 on 4-GPU trays), one a
	 * tensor-parallel group of the domain */
	int members = s->tp > G ? s->node.domain_gpus / s->tp : per * (s->node.domain_gpus / G);
	plane->node.domain_gpus = s->node.domain_gpus > G ? (members > 0 ? members : 1) : per;
	plane->nodes = (group + per - 1) / per;
	int rails = s->rails >= G ? per : (s->rails * per + G - 1) / G;
	plane->rails = rails > 0 ? rails : 1;
	plane->node.nics = plane->rails;
	/* scattered, the group's nodes take positions among the whole cluster's */
	if (!plane->placement_slots)
		plane->placement_slots = s->nodes;
}

long capsim_scenario_line(const capsim_scenario *s, const char *path)
{
	char buf[128];
	char tmpl[128];
	int g = capsim_scenario_group_path(s, path, tmpl, sizeof tmpl);
	if (g < -1 || (g < 0 && strncmp(path, "cluster.group.", 14) == 0)) {
		const char *key = path + 14;
		g = capsim_scenario_group_find(s, key, strlen(key));
	}
	if (g >= 0 && s->groups[g].line > 0)
		return s->groups[g].line;
	capsim_strlcpy(buf, path, sizeof buf);
	for (;;) {
		for (int i = 0; i < s->n_lines; i++)
			if (strcmp(s->lines[i].path, buf) == 0)
				return s->lines[i].line;
		char *dot = strrchr(buf, '.');
		if (!dot)
			break;
		*dot = '\0';
	}
	for (int i = 0; i < s->n_lines; i++)
		if (!s->lines[i].path[0])
			return s->lines[i].line;
	return 0;
}

int capsim_scenario_cloud_priced(const capsim_scenario *s)
{
	return s->has_cloud && s->n_groups <= 1 && strcmp(s->cloud.gpu, s->gpu.e.id) == 0 &&
	       s->cloud.rate_usd_per_gpu_s > 0 &&
	       (s->cloud.pricing != CAPSIM_PRICING_SPOT || s->cloud.reclaimed_per_month > 0);
}

int capsim_scenario_not_modelled(const capsim_scenario *s, const char **out, int max)
{
	const char *v[6];
	int n = 0;
	/* the power model reads the facility's PUE, rack and circuit; its
	 * prices wait for the cost model */
	/* energy is priced by capsim_eval; colocation, a cloud offer of
	 * another GPU and bursts wait for the cost model */
	if (s->has_facility && s->facility.colo_usd_per_w_s > 0 && !(s->node.price_usd > 0))
		v[n++] = "facility.colocation.price"; /* priced only with the nodes' capex */
	if (s->has_cloud && !capsim_scenario_cloud_priced(s))
		v[n++] = "cost.cloud"; /* another GPU, or spot without its reclaim rate */
	if (s->burst_cloud[0] && !(s->has_burst && s->n_groups <= 1 &&
				   strcmp(s->burst.gpu, s->gpu.e.id) == 0))
		v[n++] = "cost.burst"; /* priced only for an offer of the cluster's GPU */
	if (n > max)
		n = max;
	memcpy(out, v, (size_t)n * sizeof v[0]);
	return n;
}

double capsim_scenario_steps(const capsim_scenario *s)
{
	return ceil(s->tokens / (s->global_batch * s->seq_len));
}

int capsim_scenario_group_of_node(const capsim_scenario *s, long n)
{
	long end = 0;
	for (int g = 0; g < s->n_groups; g++) {
		end += s->groups[g].nodes;
		if (n < end)
			return g;
	}
	return s->n_groups > 0 ? s->n_groups - 1 : 0;
}

double capsim_gpu_scaleup_bw_per_dir(const capsim_gpu *g)
{
	if (g->scaleup_direction == CAPSIM_DIR_BIDIRECTIONAL)
		return g->scaleup_bw_bytes_per_s / 2.0;
	return g->scaleup_bw_bytes_per_s;
}

double capsim_node_overhead(const capsim_node *n, const capsim_gpu *gpu, const capsim_nic *nic,
			    int peak)
{
	if (n->power_overhead_w > 0)
		return n->power_overhead_w;
	if (n->power_host_w > 0 || n->power_per_gpu_w > 0) {
		double nic_w = peak && nic->power_max_w > 0 ? nic->power_max_w : nic->power_typical_w;
		return n->power_host_w + n->gpus * n->power_per_gpu_w + n->nics * nic_w;
	}
	double o = n->power_max_w - n->gpus * gpu->tdp_w;
	return o > 0 ? o : 0;
}

double capsim_node_peak_w(const capsim_node *n, const capsim_gpu *gpu, const capsim_nic *nic)
{
	int capped = gpu->power_limit_w > 0 && gpu->power_limit_w < gpu->tdp_w;
	double limit = capped ? gpu->power_limit_w : gpu->tdp_w;
	if (n->power_overhead_w <= 0 && (n->power_host_w > 0 || n->power_per_gpu_w > 0))
		return n->gpus * limit + capsim_node_overhead(n, gpu, nic, 1);
	if (n->power_max_w > 0)
		return n->power_max_w - (capped ? n->gpus * (gpu->tdp_w - limit) : 0);
	return 0;
}

int capsim_scenario_fabric_size_in(const capsim_scenario *s, capsim_fabric_size_in *in)
{
	memset(in, 0, sizeof *in);
	int domain = s->node.domain_gpus ? s->node.domain_gpus : s->node.gpus;
	if ((long)s->nodes * s->node.gpus <= domain || s->topology == CAPSIM_TOPO_NONE ||
	    !s->has_switch)
		return 0;
	int slots = s->nodes;
	if (s->placement == CAPSIM_PLACE_SCATTERED && s->placement_slots > slots)
		slots = s->placement_slots;
	*in = (capsim_fabric_size_in){
		.nodes = slots,
		.rails = s->rails ? s->rails : s->node.nics,
		.radix = s->fabric_switch.ports,
		.oversubscription = s->oversubscription,
		.tiers = s->topology == CAPSIM_TOPO_SINGLE_SWITCH ? 1 : s->tiers,
		.rail_optimized = s->rail_optimized,
	};
	return 1;
}

#define IDLE_SHARE_OF_TDP CAPSIM_IDLE_SHARE_OF_TDP

double capsim_power_clock_scale(double tdp_w, double limit_w)
{
	if (!(limit_w > 0.0) || !(tdp_w > 0.0) || limit_w >= tdp_w)
		return 1.0;
	double idle = IDLE_SHARE_OF_TDP * tdp_w;
	if (limit_w <= idle)
		return 0.0; /* below idle nothing runs; the range check keeps limits above */
	return cbrt((limit_w - idle) / (tdp_w - idle));
}

double capsim_gpu_usable_bytes(const capsim_gpu *g)
{
	return g->mem_usable_bytes > 0 ? g->mem_usable_bytes : g->mem_bytes;
}

const char *capsim_gpu_generation(const capsim_gpu *g)
{
	static const struct {
		const char *prefix, *gen;
	} gens[] = {
		{ "a10", "ampere" },     { "h100", "hopper" },    { "h200", "hopper" },
		{ "gh200", "hopper" },   { "h800", "hopper" },    { "b200", "blackwell" },
		{ "b300", "blackwell" }, { "gb200", "blackwell" }, { "gb300", "blackwell" },
	};
	for (size_t i = 0; i < sizeof gens / sizeof gens[0]; i++)
		if (strncmp(g->e.id, gens[i].prefix, strlen(gens[i].prefix)) == 0)
			return gens[i].gen;
	return "";
}

int capsim_gpu_sms(const capsim_gpu *g)
{
	return g->sms > 0 ? g->sms : 132;
}

double capsim_gpu_peak(const capsim_gpu *g, int dtype)
{
	switch (dtype) {
	case CAPSIM_DTYPE_FP32: return g->peak_fp32_flop_per_s;
	case CAPSIM_DTYPE_TF32: return g->peak_tf32_flop_per_s;
	case CAPSIM_DTYPE_BF16: return g->peak_bf16_flop_per_s;
	case CAPSIM_DTYPE_FP16: return g->peak_fp16_flop_per_s;
	case CAPSIM_DTYPE_FP8: return g->peak_fp8_flop_per_s;
	default: return 0.0;
	}
}

int capsim_model_head_dim(const capsim_model *m)
{
	return m->head_dim ? m->head_dim : m->hidden / m->heads;
}

double capsim_model_attn_keys(const capsim_model *m, int layer, double seq)
{
	double w = m->sliding_window;
	int global = m->global_every > 0 && (layer + 1) % m->global_every == 0;
	if (!(w > 0.0) || global || w >= seq)
		return seq / 2.0;
	return w - w * w / (2.0 * seq);
}

void capsim_model_layer_params(const capsim_model *m, int layer,
			       capsim_layer_params *out)
{
	double h = m->hidden, hd = capsim_model_head_dim(m);
	double heads = m->heads, kv = m->kv_heads ? m->kv_heads : m->heads;

	if (m->mla_kv_lora_rank) {
		/* multi-head latent attention (DeepSeek-V2/V3): low-rank query and
		 * joint key/value compression, decoupled rotary key */
		double qk = m->mla_qk_nope_head_dim + m->mla_qk_rope_head_dim;
		double q = m->mla_q_lora_rank ?
			h * m->mla_q_lora_rank + m->mla_q_lora_rank * heads * qk +
				m->mla_q_lora_rank /* q norm */ :
			h * heads * qk;
		double kvp = h * (m->mla_kv_lora_rank + m->mla_qk_rope_head_dim) +
			     m->mla_kv_lora_rank * heads *
				     (m->mla_qk_nope_head_dim + m->mla_v_head_dim) +
			     m->mla_kv_lora_rank /* kv norm */;
		out->attention = q + kvp + heads * m->mla_v_head_dim * h;
	} else {
		out->attention = h * heads * hd + 2.0 * h * kv * hd + heads * hd * h;
	}
	double mats = m->activation == CAPSIM_ACT_SWIGLU ? 3.0 : 2.0;
	out->norms = 2.0 * h;
	out->moe = m->moe_experts && layer >= m->moe_dense_layers;
	if (out->moe) {
		out->mlp = 0.0;
		out->expert = mats * h * m->moe_expert_ffn;
		out->shared = m->moe_shared_experts * out->expert;
		out->router = h * m->moe_experts;
	} else {
		out->mlp = mats * h * m->ffn;
		out->expert = out->shared = out->router = 0.0;
	}
}

double capsim_model_params(const capsim_model *m, int active)
{
	double h = m->hidden, total = 0.0;
	for (int l = 0; l < m->layers; l++) {
		capsim_layer_params p;
		capsim_model_layer_params(m, l, &p);
		double routed = active ? m->moe_top_k : m->moe_experts;
		total += p.attention + p.mlp + p.norms + p.shared + p.router +
			 (p.moe ? routed * p.expert : 0.0);
	}
	double emb = (double)m->vocab * h;
	total += m->tied_embeddings ? emb : 2.0 * emb;
	if (m->position == 0 /* learned */)
		total += (double)m->max_seq_len * h;
	total += h; /* final norm */
	return total;
}

double capsim_lora_layer_params(const capsim_scenario *s, int layer)
{
	if (s->finetune != CAPSIM_FT_LORA)
		return 0.0;
	const capsim_model *m = &s->model;
	double r = s->lora_rank, h = m->hidden, hd = capsim_model_head_dim(m);
	double q = m->heads * hd, kv = (m->kv_heads ? m->kv_heads : m->heads) * hd;
	if (m->mla_kv_lora_rank) { /* MLA's projections: the same shapes as its base */
		double qk = m->mla_qk_nope_head_dim + m->mla_qk_rope_head_dim;
		q = m->heads * qk;
		kv = m->heads * (double)m->mla_v_head_dim;
	}
	/* Q, K, V: h -> q, kv, kv; output: q -> h */
	double p = r * ((h + q) + 2.0 * (h + kv) + (q + h));
	if (s->lora_targets == CAPSIM_LORA_ATTENTION)
		return p;
	capsim_layer_params lp;
	capsim_model_layer_params(m, layer, &lp);
	double mats = m->activation == CAPSIM_ACT_SWIGLU ? 3.0 : 2.0;
	if (lp.moe)
		p += mats * r * (h + m->moe_expert_ffn) * (m->moe_experts + m->moe_shared_experts);
	else
		p += mats * r * (h + m->ffn);
	return p;
}

double capsim_position_rows(const capsim_scenario *s)
{
	const capsim_model *m = &s->model;
	if (m->position != 0 /* learned */)
		return 0.0;
	return s->seq_len > m->max_seq_len ? s->seq_len : m->max_seq_len;
}

int capsim_seq_past_positions(const capsim_scenario *s)
{
	return s->seq_len > s->model.max_seq_len;
}

int capsim_stage_layers(const capsim_scenario *s, int k, int *first)
{
	int L = s->model.layers, p = s->pp;
	int f = s->first_stage_layers, l = s->last_stage_layers;
	if (p <= 1 || (!f && !l)) {
		*first = k * (L / p);
		return L / p;
	}
	int ends = (f ? 1 : 0) + (l ? 1 : 0);
	int rest = L - f - l;
	int mid = p - ends > 0 ? rest / (p - ends) : 0;
	int fl = f ? f : mid, ll = l ? l : mid;
	if (k == 0) {
		*first = 0;
		return fl;
	}
	*first = fl + (k - 1) * mid;
	return k == p - 1 ? ll : mid;
}
