#!/usr/bin/env python3
"""gpt2_step.py - time GPT-2 training steps in plain PyTorch on one GPU, as
JSON lines, to check capsim's single-GPU step prediction (calibrate/torch/README.md).

The model is written here from the architecture in models/gpt.xml (no
transformers library): learned positions, pre-LN blocks, GELU (tanh) MLP of
4h, LayerNorm, tied input and output embeddings, vocabulary 50257, biases on
every linear layer, no dropout. Attention is
torch.nn.functional.scaled_dot_product_attention(is_causal=True), held to one
backend (flash by default) with torch.nn.attention.sdpa_kernel, so a step
fails rather than silently falls back to another kernel. Training runs under
bf16 autocast with fp32 weights, gradients and AdamW states (fused=True).
The data are random tokens drawn on the GPU before each step, outside its
timing: no data loader.

For each (mode, model, micro-batch) point: build the model, warm up, then time
each step on its own (zero_grad, forward, loss, backward, optimizer step),
between CUDA events recorded on the idle GPU and a synchronisation after the
step, so a step's time includes whatever the GPU waits for the CPU to issue
kernels (eager launch overhead), as in a loop that reads its loss each step.
The CPU time to issue the step (until its last kernel is queued) is kept too.
One more step runs under torch.profiler to count the kernels and their GPU
time by class. An out-of-memory point is recorded as such and the grid goes
on. Progress goes to stderr.

SPDX-License-Identifier: MIT (calibrate/LICENSE)
"""

import argparse
import datetime
import gc
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

# Architectures of models/gpt.xml (its sources: the Hugging Face GPT-2
# configs and openai/gpt-2 src/model.py). ffn is 4 x hidden for all of them.
MODELS = {
    "gpt2-124m": {"layers": 12, "hidden": 768, "heads": 12},
    "gpt2-355m": {"layers": 24, "hidden": 1024, "heads": 16},
    "gpt2-774m": {"layers": 36, "hidden": 1280, "heads": 20},
    "gpt2-1.5b": {"layers": 48, "hidden": 1600, "heads": 25},
}
VOCAB = 50257
SEQ = 1024  # max-seq-len of every GPT-2 in models/gpt.xml

# The default grid: micro-batches per model.
DEFAULT_GRID = {
    "gpt2-124m": [1, 4, 8, 16, 32],
    "gpt2-355m": [1, 4, 8, 16],
}

SDPA_BACKENDS = ("flash", "cudnn", "efficient", "math", "default")
TOP_KERNELS = 15  # kernels by GPU time kept from the profiled step


def log(msg):
    """Write one progress line to stderr."""
    print("gpt2_step: " + msg, file=sys.stderr, flush=True)


def first_line(e):
    """The first line of an exception's message, or its type's name."""
    s = str(e).strip()
    return s.splitlines()[0] if s else type(e).__name__


def vocab_rows(args):
    """Rows of the embedding and logits: 50257, or --pad-vocab."""
    return max(VOCAB, args.pad_vocab or VOCAB)


# ---- the model --------------------------------------------------------------


class Block(nn.Module):
    """One pre-LN GPT-2 transformer block: x + attn(ln_1(x)), then
    x + mlp(ln_2(x)); fused QKV projection, causal SDPA, GELU (tanh)."""

    def __init__(self, hidden, heads):
        super().__init__()
        self.heads = heads
        self.ln_1 = nn.LayerNorm(hidden)
        self.c_attn = nn.Linear(hidden, 3 * hidden)
        self.c_proj = nn.Linear(hidden, hidden)
        self.ln_2 = nn.LayerNorm(hidden)
        self.c_fc = nn.Linear(hidden, 4 * hidden)
        self.gelu = nn.GELU(approximate="tanh")
        self.mlp_proj = nn.Linear(4 * hidden, hidden)

    def forward(self, x):
        b, t, h = x.shape
        hd = h // self.heads
        q, k, v = self.c_attn(self.ln_1(x)).split(h, dim=2)
        q = q.view(b, t, self.heads, hd).transpose(1, 2)
        k = k.view(b, t, self.heads, hd).transpose(1, 2)
        v = v.view(b, t, self.heads, hd).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        y = y.transpose(1, 2).contiguous().view(b, t, h)
        x = x + self.c_proj(y)
        x = x + self.mlp_proj(self.gelu(self.c_fc(self.ln_2(x))))
        return x


class GPT2(nn.Module):
    """GPT-2: token and learned position embeddings, `layers` blocks, a final
    LayerNorm and logits against the token embedding (tied). forward(idx,
    targets) returns the mean cross-entropy loss."""

    def __init__(self, layers, hidden, heads, vocab=VOCAB, seq=SEQ):
        super().__init__()
        self.wte = nn.Embedding(vocab, hidden)
        self.wpe = nn.Embedding(seq, hidden)
        self.blocks = nn.ModuleList(Block(hidden, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(hidden)
        self.register_buffer("pos", torch.arange(seq), persistent=False)
        self.reset_parameters(layers)

    def reset_parameters(self, layers):
        """GPT-2's initialisation: N(0, 0.02) weights and embeddings, zero
        biases, residual projections at 0.02 / sqrt(2 layers)."""
        resid_std = 0.02 / math.sqrt(2 * layers)
        with torch.no_grad():
            for name, p in self.named_parameters():
                if name.endswith(".bias"):
                    p.zero_()
                elif "ln_" in name:
                    p.fill_(1.0)
                elif name.endswith("c_proj.weight") or name.endswith("mlp_proj.weight"):
                    p.normal_(0.0, resid_std)
                else:
                    p.normal_(0.0, 0.02)

    def forward(self, idx, targets):
        t = idx.shape[1]
        x = self.wte(idx) + self.wpe(self.pos[:t])
        for block in self.blocks:
            x = block(x)
        x = self.ln_f(x)
        logits = F.linear(x, self.wte.weight)
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))


def parameter_count(model):
    """Parameters of the model, the tied embedding counted once."""
    return sum(p.numel() for p in model.parameters())


def model_flop_per_token(cfg, seq, vocab):
    """Training FLOP per token as capsim's mfu counts them (docs/model.md,
    "Model FLOPs"): 6 N + 3 s (q_dim + o_dim) L, N the parameters a token
    touches (every block, the final norm and the LM head vocab x h; not the
    embedding lookups), q_dim = o_dim = h."""
    h, layers = cfg["hidden"], cfg["layers"]
    per_block = 2 * 2 * h + (h * 3 * h + 3 * h) + (h * h + h) \
        + (h * 4 * h + 4 * h) + (4 * h * h + h)
    n = layers * per_block + 2 * h + vocab * h
    return 6 * n + 3 * seq * (h + h) * layers


def make_optimizer(model):
    """Fused AdamW over the fp32 weights; weight decay on matrices and
    embeddings only, as GPT-2-style training loops do."""
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": 0.1},
              {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=6e-4, betas=(0.9, 0.95), eps=1e-8,
                             fused=True)


# ---- SDPA backend -------------------------------------------------------------


def sdpa_context(name):
    """A context manager that allows only the named SDPA backend (none for
    "default": PyTorch's own choice)."""
    if name == "default":
        import contextlib
        return contextlib.nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel
    backend = {
        "flash": SDPBackend.FLASH_ATTENTION,
        "cudnn": SDPBackend.CUDNN_ATTENTION,
        "efficient": SDPBackend.EFFICIENT_ATTENTION,
        "math": SDPBackend.MATH,
    }[name]
    return sdpa_kernel([backend])


def sdpa_probe(name, heads, hidden):
    """Run one causal bf16 SDPA forward and backward of GPT-2's shape under
    the chosen backend. Returns "ok" or the error's first line."""
    hd = hidden // heads
    try:
        q, k, v = (torch.randn(1, heads, SEQ, hd, device="cuda", dtype=torch.bfloat16,
                               requires_grad=True) for _ in range(3))
        with sdpa_context(name):
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        y.sum().backward()
        torch.cuda.synchronize()
        return "ok"
    except RuntimeError as e:
        return first_line(e)


def kernel_backend(names):
    """Which SDPA backend a step's attention kernels belong to, by name."""
    joined = " ".join(names).lower()
    if "flash" in joined:
        return "flash"
    if "cudnn" in joined or "sdpa" in joined:
        return "cudnn"
    if "fmha" in joined or "attention" in joined:
        return "efficient"
    return "none found (math?)"


# ---- the measurement ----------------------------------------------------------


def kernel_class(name):
    """Class of a CUDA kernel by its name: attention, optimizer, gemm or other."""
    n = name.lower()
    if any(s in n for s in ("flash", "fmha", "sdpa", "attention")):
        return "attention"
    if "adam" in n or "multi_tensor" in n:
        return "optimizer"
    if any(s in n for s in ("gemm", "nvjet", "cutlass", "xmma", "cublas", "sm90_")):
        return "gemm"
    return "other"


def trace_events(fn):
    """Run fn() once under torch.profiler; return the Chrome trace's events."""
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    fd, path = tempfile.mkstemp(suffix=".json", prefix="capsim_trace_")
    os.close(fd)
    try:
        prof.export_chrome_trace(path)
        with open(path) as f:
            trace = json.load(f)
    finally:
        os.unlink(path)
    return trace["traceEvents"] if isinstance(trace, dict) else trace


def profile_step(step):
    """Run step() once under torch.profiler and summarise its GPU work from
    the Chrome trace: kernel count, their summed time, the span from the first
    kernel's start to the last one's end, memcpy/memset count, per-class
    counts and times, the TOP_KERNELS kernels by GPU time (same name summed)
    and the attention kernels' names."""
    events = trace_events(step)
    kernels = [e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"]
    copies = [e for e in events if e.get("ph") == "X"
              and e.get("cat") in ("gpu_memcpy", "gpu_memset")]
    by_class = {c: {"kernels": 0, "s": 0.0} for c in ("gemm", "attention", "optimizer", "other")}
    attention = set()
    by_name = {}
    for e in kernels:
        c = kernel_class(e["name"])
        by_class[c]["kernels"] += 1
        by_class[c]["s"] += e.get("dur", 0) * 1e-6
        if c == "attention":
            attention.add(e["name"][:160])
        k = by_name.setdefault(e["name"], {"name": e["name"][:160], "class": c,
                                           "count": 0, "s": 0.0})
        k["count"] += 1
        k["s"] += e.get("dur", 0) * 1e-6
    out = {"kernels": len(kernels), "memcpy_memset": len(copies),
           "kernel_s": sum(e.get("dur", 0) for e in kernels) * 1e-6}
    if kernels:
        first = min(e["ts"] for e in kernels)
        last = max(e["ts"] + e.get("dur", 0) for e in kernels)
        out["kernel_span_s"] = (last - first) * 1e-6
    out["by_class"] = by_class
    out["top_kernels"] = sorted(by_name.values(), key=lambda k: -k["s"])[:TOP_KERNELS]
    out["attention_kernels"] = sorted(attention)
    out["sdpa_kernel_backend"] = kernel_backend(attention)
    return out


def measure(model_id, micro_batch, mode, args):
    """Build model_id, warm up, time args.steps steps at micro_batch
    sequences of SEQ tokens; return the torch-step record (without error)."""
    cfg = MODELS[model_id]
    vocab = vocab_rows(args)
    torch.manual_seed(1234)
    with torch.device("cuda"):
        model = GPT2(cfg["layers"], cfg["hidden"], cfg["heads"], vocab=vocab)
    n_params = parameter_count(model)
    opt = make_optimizer(model)
    fwd = torch.compile(model) if mode == "compile" else model
    x = torch.empty((micro_batch, SEQ), dtype=torch.long, device="cuda")
    y = torch.empty((micro_batch, SEQ), dtype=torch.long, device="cuda")

    def new_batch():
        # Fresh tokens each step, so the loss stays near ln(VOCAB) instead
        # of falling as the model learns one batch by heart.
        x.random_(0, VOCAB)
        y.random_(0, VOCAB)

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = fwd(x, y)
        loss.backward()
        opt.step()
        return loss

    with sdpa_context(args.sdpa):
        t0 = time.perf_counter()
        for _ in range(args.warmup):
            new_batch()
            step()
        torch.cuda.synchronize()
        log(f"  warm-up {args.warmup} steps: {time.perf_counter() - t0:.1f} s")
        samples, wall, issue = [], [], []
        loss = None
        for _ in range(args.steps):
            new_batch()
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize()
            w0 = time.perf_counter()
            start.record()
            loss = step()
            end.record()
            w1 = time.perf_counter()
            end.synchronize()
            issue.append(w1 - w0)
            wall.append(time.perf_counter() - w0)
            samples.append(start.elapsed_time(end) * 1e-3)
        between = torch.cuda.memory_allocated()
        peak_alloc = torch.cuda.max_memory_allocated()
        peak_resv = torch.cuda.max_memory_reserved()
        # The whole device in use: the CUDA context, library workspaces and
        # everything the allocator holds (it keeps its peak until emptied).
        free_b, total_b = torch.cuda.mem_get_info()
        last_loss = loss.item() if loss is not None else None
        if last_loss is not None and not math.isfinite(last_loss):
            last_loss = str(last_loss)  # JSON has no NaN or infinity
        prof = None
        if args.profile:
            new_batch()
            try:
                prof = profile_step(step)
            except (RuntimeError, OSError, ValueError, KeyError) as e:
                prof = {"error": first_line(e)}

    median = statistics.median(samples)
    rec = {
        "kind": "torch-step", "model": model_id, "parameters": n_params,
        "layers": cfg["layers"], "hidden": cfg["hidden"], "heads": cfg["heads"],
        "vocab": vocab, "micro_batch": micro_batch, "seq": SEQ, "dtype": "bf16",
        "mode": mode, "sdpa": args.sdpa, "optimizer": "adamw-fused", "warmup": args.warmup,
        "steps": args.steps, "sync": "per-step",
        "samples_s": samples, "median_s": median,
        "min_s": min(samples), "max_s": max(samples),
        "wall_samples_s": wall, "wall_median_s": statistics.median(wall),
        "issue_samples_s": issue, "issue_median_s": statistics.median(issue),
        "tokens_per_s": micro_batch * SEQ / median,
        "model_flop_per_token": model_flop_per_token(cfg, SEQ, vocab),
        "peak_allocated_bytes": peak_alloc, "peak_reserved_bytes": peak_resv,
        "allocated_between_steps_bytes": between,
        "device_used_bytes": total_b - free_b,
        "loss_last": last_loss,
    }
    if prof is not None:
        rec["profile"] = prof
    return rec


def free_gpu():
    """Drop what the last point left and reset the peak counters."""
    gc.collect()
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()


def run_point(model_id, micro_batch, mode, args):
    """measure() one point; an out-of-memory or other runtime error becomes a
    record with "error". Returns (record, failed) where failed is True for
    an error other than out of memory."""
    base = {"kind": "torch-step", "model": model_id,
            "vocab": vocab_rows(args), "micro_batch": micro_batch,
            "seq": SEQ, "dtype": "bf16", "mode": mode, "sdpa": args.sdpa}
    rec, failed = None, False
    try:
        rec = measure(model_id, micro_batch, mode, args)
    except torch.cuda.OutOfMemoryError as e:
        rec = dict(base, error="out of memory", message=first_line(e))
    except RuntimeError as e:
        # A failed compile or an SDPA backend that refuses the shape.
        rec = dict(base, error="runtime error", message=first_line(e))
        failed = True
    if "error" in rec:
        rec["peak_allocated_bytes"] = torch.cuda.max_memory_allocated()
        rec["peak_reserved_bytes"] = torch.cuda.max_memory_reserved()
    if mode == "compile":
        torch._dynamo.reset()
    free_gpu()
    return rec, failed


# ---- the machine line -----------------------------------------------------------


def driver_version():
    """The NVIDIA driver version from nvidia-smi, or None."""
    try:
        r = subprocess.run(["nvidia-smi", "--query-gpu=driver_version",
                            "--format=csv,noheader", "-i", "0"],
                           capture_output=True, text=True, timeout=20)
        v = r.stdout.strip().splitlines()
        return v[0].strip() if r.returncode == 0 and v else None
    except (OSError, subprocess.SubprocessError):
        return None


def machine_record(args, models):
    """The first line: GPU, software versions, and the SDPA backend with a
    probe of it at the first model's attention shape."""
    props = torch.cuda.get_device_properties(0)
    cfg = MODELS[models[0]]
    return {
        "kind": "machine", "program": "gpt2_step.py",
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "gpu": torch.cuda.get_device_name(0),
        "cc": f"{props.major}.{props.minor}",
        "sms": props.multi_processor_count,
        "memory_bytes": props.total_memory,
        "driver": driver_version(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "python": platform.python_version(),
        "sdpa_backend": args.sdpa,
        "sdpa_probe": sdpa_probe(args.sdpa, cfg["heads"], cfg["hidden"]),
        "autocast": "bf16", "master_weights": "fp32",
        "argv": sys.argv[1:],
    }


def launch_record(reps=7, n=2000):
    """Eager PyTorch's cost per kernel on the host: issue n tiny element-wise
    kernels (torch.add on 1024 floats, out= a preallocated tensor) back to
    back without synchronising, timed with perf_counter around the issuing
    (host) and until the GPU has run them (host + drain); the median of
    `reps`. A kernel this small runs in a few microseconds on the GPU, so the
    issue rate is the host's: what capsim's eager launch overhead
    (docs/model.md, "GPU compute") stands for."""
    x = torch.randn(1024, device="cuda")
    y = torch.empty_like(x)
    for _ in range(200):
        torch.add(x, 1.0, out=y)
    torch.cuda.synchronize()
    host, total = [], []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(n):
            torch.add(x, 1.0, out=y)
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        t2 = time.perf_counter()
        host.append((t1 - t0) / n)
        total.append((t2 - t0) / n)
    return {"kind": "torch-launch", "op": "add", "elements": 1024, "kernels": n,
            "host_samples_s": host, "host_median_s": statistics.median(host),
            "total_samples_s": total, "total_median_s": statistics.median(total)}


# ---- command line ---------------------------------------------------------------


def int_list(s):
    """argparse type: positive integers separated by commas."""
    try:
        v = [int(x) for x in s.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected integers separated by commas, found '{s}'")
    if not v or any(x < 1 for x in v):
        raise argparse.ArgumentTypeError(f"expected positive integers, found '{s}'")
    return v


def name_list(choices):
    """argparse type: some of `choices`, separated by commas."""
    def parse(s):
        v = [x.strip() for x in s.split(",") if x.strip()]
        bad = [x for x in v if x not in choices]
        if not v or bad:
            raise argparse.ArgumentTypeError(
                f"expected some of {', '.join(choices)}, found '{s}'")
        return v
    return parse


def parse_args(argv):
    """The command line; bad values exit with status 2 (argparse)."""
    p = argparse.ArgumentParser(
        description="Time GPT-2 training steps in plain PyTorch on one GPU "
                    "(JSON lines; calibrate/torch/README.md).")
    p.add_argument("--out", default="-", help="output file (default: stdout)")
    p.add_argument("--models", type=name_list(list(MODELS)),
                   default=list(DEFAULT_GRID),
                   help="models, comma-separated (default: gpt2-124m,gpt2-355m)")
    p.add_argument("--micro-batches", type=int_list, default=None,
                   help="micro-batches for every model (default: 124m 1,4,8,16,32; "
                        "355m 1,4,8,16; others 1,4,8)")
    p.add_argument("--steps", type=int, default=30, help="timed steps (default 30)")
    p.add_argument("--warmup", type=int, default=10, help="warm-up steps (default 10)")
    p.add_argument("--modes", type=name_list(["eager", "compile"]), default=["eager"],
                   help="eager and/or compile (torch.compile of the model), "
                        "comma-separated (default: eager)")
    p.add_argument("--sdpa", choices=SDPA_BACKENDS, default="flash",
                   help="SDPA backend allowed (default: flash)")
    p.add_argument("--no-profile", dest="profile", action="store_false",
                   help="skip the profiled step")
    p.add_argument("--no-launch", dest="launch", action="store_false",
                   help="skip the launch-overhead microbenchmark (torch-launch record)")
    p.add_argument("--pad-vocab", type=int, default=0, metavar="N",
                   help="pad the embedding and logits to N rows (50304 = 393 x 128, "
                        "as GPT-2 reproductions do); targets stay below 50257 "
                        "(default: no padding, 50257 as in models/gpt.xml)")
    a = p.parse_args(argv)
    if a.pad_vocab and a.pad_vocab < VOCAB:
        p.error(f"--pad-vocab must be at least {VOCAB}, found {a.pad_vocab}")
    if a.steps < 1 or a.warmup < 0:
        p.error(f"--steps must be >= 1 and --warmup >= 0, found {a.steps} and {a.warmup}")
    return a


def main(argv):
    """Run the grid. Returns 0, 1 if a point failed other than out of
    memory, 2 without a CUDA device."""
    args = parse_args(argv)
    if not torch.cuda.is_available():
        log("error: no CUDA device")
        return 2
    out = sys.stdout if args.out == "-" else open(args.out, "w")
    t_start = time.perf_counter()
    failed = False
    try:
        def emit(rec):
            out.write(json.dumps(rec, separators=(",", ":")) + "\n")
            out.flush()

        machine = machine_record(args, args.models)
        emit(machine)
        log(f"{machine['gpu']}, torch {machine['torch']}, CUDA {machine['cuda']}, "
            f"sdpa {args.sdpa}: {machine['sdpa_probe']}")
        if args.launch:
            rec = launch_record()
            emit(rec)
            log(f"eager launch: {rec['host_median_s'] * 1e6:.2f} us a kernel on the host, "
                f"{rec['total_median_s'] * 1e6:.2f} us until done")
        for mode in args.modes:
            for model_id in args.models:
                mbs = args.micro_batches or DEFAULT_GRID.get(model_id, [1, 4, 8])
                for mb in mbs:
                    log(f"{mode} {model_id} micro-batch {mb}")
                    rec, bad = run_point(model_id, mb, mode, args)
                    failed = failed or bad
                    emit(rec)
                    if "error" in rec:
                        log(f"  {rec['error']}: {rec['message']}")
                    else:
                        log(f"  median {rec['median_s'] * 1e3:.2f} ms, "
                            f"{rec['tokens_per_s']:.0f} tokens/s, "
                            f"peak {rec['peak_allocated_bytes'] / 2**30:.2f} GiB allocated")
    finally:
        if out is not sys.stdout:
            out.close()
    log(f"done in {time.perf_counter() - t_start:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
