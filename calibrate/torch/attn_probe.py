#!/usr/bin/env python3
"""attn_probe.py - how fast fused attention runs on one GPU, forward and
backward, per kernel backend, as JSON lines: the measurements behind capsim's
attention efficiency curve (docs/model.md, "Attention").

Kernels: PyTorch's scaled_dot_product_attention held to one backend with
torch.nn.attention.sdpa_kernel: `flash` (PyTorch's build of FlashAttention-2),
`cudnn` (cuDNN's fused attention) and `efficient` (the memory-efficient
kernel); `default` leaves the choice to PyTorch, and its kernel's name is
recorded from one profiled call. A backend that refuses a shape is recorded with its error; nothing
falls back silently.

Shapes follow the FlashAttention-2 and -3 papers' benchmarks (Dao 2023,
arXiv:2307.08691 section 4.1; Shah et al. 2024, arXiv:2407.08608 section 4.1):
a hidden size of 2048 (so head dim 64 -> 32 heads, 128 -> 16, 192 -> ~10),
16K tokens per batch (batch = 16384 / seq, at least 1), sequence 512 to 128K,
causal and not. A GQA variant keeps 8 key/value heads under the query heads.

FLOPs, as the papers count them: forward 4 * b * s^2 * h * d, halved when
causal; backward 2.5x the forward. Each time is the median over `--reps`
CUDA-event samples after `--warmup` calls (3 after 1 beyond 16K tokens a
sequence, where one call takes up to a second); the backward is timed as
forward+backward minus the forward. Progress on stderr.

SPDX-License-Identifier: MIT (calibrate/LICENSE)
"""

import argparse
import datetime
import json
import platform
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

BACKENDS = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION,
            "efficient": SDPBackend.EFFICIENT_ATTENTION, "default": None}
HIDDEN = 2048
TOKENS = 16384


def log(msg):
    print("attn_probe: " + msg, file=sys.stderr, flush=True)


def timed(fn, reps, warmup):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        samples.append(a.elapsed_time(b) / 1e3)
    return statistics.median(samples), samples


def kernel_names(fn):
    """Names of the GPU kernels one call of fn runs (torch.profiler)."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    names = sorted({e.key for e in prof.key_averages() if e.device_time_total > 0})
    return [n[:120] for n in names if "elementwise" not in n and "fill" not in n.lower()][:8]


def point(backend, seq, hd, causal, kv_heads, reps, warmup):
    heads = max(1, HIDDEN // hd)
    batch = max(1, TOKENS // seq)
    kvh = kv_heads or heads
    q = torch.randn(batch, heads, seq, hd, device="cuda", dtype=torch.bfloat16,
                    requires_grad=True)
    k = torch.randn(batch, kvh, seq, hd, device="cuda", dtype=torch.bfloat16,
                    requires_grad=True)
    v = torch.randn(batch, kvh, seq, hd, device="cuda", dtype=torch.bfloat16,
                    requires_grad=True)
    gqa = kvh != heads
    dout = torch.randn(batch, heads, seq, hd, device="cuda", dtype=torch.bfloat16)

    def fwd():
        if BACKENDS[backend] is None:   # PyTorch's own choice
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa)
        with sdpa_kernel(BACKENDS[backend]):
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa)

    def fwd_bwd():
        o = fwd()
        torch.autograd.grad(o, (q, k, v), dout)

    flop_fwd = 4.0 * batch * seq * seq * heads * hd * (0.5 if causal else 1.0)
    rec = {"kind": "attention", "backend": backend, "dtype": "bf16", "batch": batch,
           "seq": seq, "heads": heads, "kv_heads": kvh, "head_dim": hd, "causal": causal,
           "flop_fwd": flop_fwd, "flop_bwd": 2.5 * flop_fwd}
    if seq > 16384:   # seconds a call: fewer samples, as the papers' long rows
        reps, warmup = min(reps, 3), min(warmup, 1)
    rec["reps"] = reps
    with torch.no_grad():
        t_f, s_f = timed(fwd, reps, warmup)
    t_fb, s_fb = timed(fwd_bwd, reps, warmup)
    t_b = max(t_fb - t_f, 1e-9)
    rec["kernels"] = kernel_names(fwd_bwd)
    rec.update({"fwd_median_s": t_f, "fwd_samples_s": s_f, "fwd_bwd_median_s": t_fb,
                "fwd_bwd_samples_s": s_fb, "bwd_median_s": t_b,
                "fwd_flop_per_s": flop_fwd / t_f, "bwd_flop_per_s": 2.5 * flop_fwd / t_b,
                "fwd_bwd_flop_per_s": 3.5 * flop_fwd / t_fb})
    return rec


def grid(quick):
    seqs = (512, 2048, 8192) if quick else (512, 1024, 2048, 4096, 8192, 16384, 32768,
                                            65536, 131072)
    pts = []
    for backend in ("flash", "cudnn", "efficient"):
        for hd in ((128,) if quick else (64, 128, 192)):
            for causal in (True, False):
                for seq in seqs:
                    pts.append((backend, seq, hd, causal, 0))
        if not quick:
            for seq in seqs:
                pts.append((backend, seq, 128, True, 8))   # GQA, 16 query heads on 8 kv
    for seq in seqs:
        pts.append(("default", seq, 128, True, 0))
    return pts


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="-")
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--backends", default="flash,cudnn,efficient,default")
    p.add_argument("--max-seq", type=int, default=131072)
    a = p.parse_args(argv)
    if a.reps < 1 or a.warmup < 0:
        log("error: --reps must be at least 1 and --warmup at least 0")
        return 2
    want = a.backends.split(",")
    if any(b not in BACKENDS for b in want):
        log(f"error: --backends takes {','.join(BACKENDS)}, not {a.backends}")
        return 2
    if not torch.cuda.is_available():
        log("error: no CUDA device")
        return 2
    out = sys.stdout if a.out == "-" else open(a.out, "w")
    props = torch.cuda.get_device_properties(0)

    def emit(r):
        out.write(json.dumps(r, separators=(",", ":")) + "\n")
        out.flush()

    emit({"kind": "machine", "program": "attn_probe.py",
          "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
          "gpu": torch.cuda.get_device_name(0), "cc": f"{props.major}.{props.minor}",
          "sms": props.multi_processor_count, "torch": torch.__version__,
          "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(),
          "python": platform.python_version(), "argv": argv})
    t0 = time.perf_counter()
    pts = [x for x in grid(a.quick) if x[0] in want and x[1] <= a.max_seq]
    try:
        for i, (backend, seq, hd, causal, kvh) in enumerate(pts):
            try:
                r = point(backend, seq, hd, causal, kvh, a.reps, a.warmup)
                log(f"[{i + 1}/{len(pts)}] {backend} s={seq} d={hd} causal={int(causal)} "
                    f"kv={kvh or 'all'}: fwd {r['fwd_flop_per_s'] / 1e12:.0f}, bwd "
                    f"{r['bwd_flop_per_s'] / 1e12:.0f} TFLOP/s")
            except (RuntimeError, ValueError) as e:
                r = {"kind": "attention", "backend": backend, "seq": seq, "head_dim": hd,
                     "causal": causal, "kv_heads": kvh, "error": str(e).splitlines()[0][:300]}
                log(f"[{i + 1}/{len(pts)}] {backend} s={seq} d={hd}: {r['error'][:120]}")
            emit(r)
            torch.cuda.empty_cache()
    finally:
        if out is not sys.stdout:
            out.close()
    log(f"done in {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
