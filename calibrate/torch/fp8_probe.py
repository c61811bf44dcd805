#!/usr/bin/env python3
"""fp8_probe.py - a training step in bf16 and in float8 under torch.compile on
one GPU, as JSON lines: the measurement behind capsim's FP8 path for the plain
PyTorch frameworks (docs/model.md, "FP8 casts").

The model is memory_probe.py's Llama 3 8B decoder (models/llama.xml widths,
hidden 4096, 32 heads on 8 key/value heads, SwiGLU of 14336), cut to a few
layers so that it fits one GPU, trained with fused AdamW on fp32 master
weights under bf16 autocast.

float8: every linear layer of the blocks (not the LM head, as torchao's and
torchtitan's float8 conversions leave it) runs its three GEMMs through
torch._scaled_mm with dynamic tensorwise scaling, the recipe of torchao's
Float8Linear "tensorwise" (github:pytorch/ao torchao/float8/README.md):
inputs and weights cast to e4m3, output gradients to e5m2, each with one
scale from its amax, the transposed copies the backward GEMMs need made by the
cast. The whole model is compiled, so Inductor may fuse the casts, amaxes and
transposes into neighbouring kernels, which is the point of the measurement.

Each point: `--warmup` steps (compilation among them), then `--steps` steps
each timed with CUDA events around it, the GPU idle before; the median. One
profiled step gives the GEMM kernels' share. Progress on stderr.

SPDX-License-Identifier: MIT (calibrate/LICENSE)
"""

import argparse
import datetime
import json
import os
import platform
import statistics
import sys
import time

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import memory_probe as mp  # noqa: E402

E4M3 = torch.float8_e4m3fn
E5M2 = torch.float8_e5m2


def log(msg):
    print("fp8_probe: " + msg, file=sys.stderr, flush=True)


def to_fp8(t, dtype):
    """t cast to dtype with one tensorwise scale; returns (fp8, inverse scale)."""
    amax = t.abs().max().float().clamp(min=1e-12)
    scale = torch.finfo(dtype).max / amax
    return (t.float() * scale).clamp(-torch.finfo(dtype).max, torch.finfo(dtype).max) \
        .to(dtype), scale.reciprocal()


# Fast accumulation (no periodic promotion to fp32) in the forward GEMM only,
# as torchao's Float8LinearConfig sets it (gemm_config_output use_fast_accum
# True, the gradients' GEMMs False: github:pytorch/ao torchao/float8/config.py)
# and Transformer Engine does (_2X_ACC_FPROP = False); --fast-accum none
# splits every GEMM's accumulator.
FAST_FPROP = True


def mm(a, ia, b, ib, fast=False):
    """a (row-major) @ b (column-major), fp8 in, bf16 out."""
    return torch._scaled_mm(a, b, scale_a=ia, scale_b=ib, out_dtype=torch.bfloat16,
                            use_fast_accum=fast)


class Float8MM(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        xq, ix = to_fp8(x, E4M3)
        wq, iw = to_fp8(w, E4M3)
        ctx.save_for_backward(xq, ix, wq, iw)
        return mm(xq, ix, wq.t(), iw, FAST_FPROP)

    @staticmethod
    def backward(ctx, g):
        xq, ix, wq, iw = ctx.saved_tensors
        gq, ig = to_fp8(g, E5M2)
        gx = mm(gq, ig, wq.t().contiguous().t(), iw)
        gw = mm(gq.t().contiguous(), ig, xq.t().contiguous().t(), ix)
        return gx, gw.float()


class Float8Linear(nn.Linear):
    def forward(self, x):
        shape = x.shape
        y = Float8MM.apply(x.reshape(-1, shape[-1]).to(torch.bfloat16), self.weight)
        return y.reshape(*shape[:-1], y.shape[-1])


def convert(model):
    for blk in model.blocks:
        for name, mod in list(blk.named_children()):
            if type(mod) is nn.Linear:
                mod.__class__ = Float8Linear
    return model


def timed_steps(step, steps, warmup):
    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    samples = []
    for _ in range(steps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        step()
        b.record()
        b.synchronize()
        samples.append(a.elapsed_time(b) / 1e3)
    return statistics.median(samples), samples


def gemm_time(step):
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        step()
        torch.cuda.synchronize()
    gemm = total = 0.0
    for e in prof.key_averages():
        t = e.device_time_total / 1e6
        total += t
        n = e.key.lower()
        if any(s in n for s in ("gemm", "nvjet", "cutlass", "scaled_mm", "sm90_xmma")):
            gemm += t
    return gemm, total


def point(layers, seq, mb, precision, steps, warmup, mode="compile"):
    c = dict(mp.LLAMA3_8B, layers=layers)
    torch.manual_seed(1234)
    with torch.device("cuda"):
        model = mp.Decoder(c, seq)
    if precision == "fp8":
        convert(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    fwd = torch.compile(model) if mode == "compile" else model
    x = torch.randint(0, c["vocab"], (mb, seq), device="cuda")
    y = torch.randint(0, c["vocab"], (mb, seq), device="cuda")

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = fwd(x, y)
        loss.backward()
        opt.step()
        return loss

    t0 = time.perf_counter()
    med, samples = timed_steps(step, steps, warmup)
    gemm, total = gemm_time(step)
    loss = float(step().item())
    return {"kind": "torch-fp8-step", "model": "llama-3-8b", "layers": layers, "seq": seq,
            "micro_batch": mb, "precision": precision, "mode": mode,
            "recipe": ("tensorwise dynamic (e4m3 fwd, e5m2 grads)"
                       + (", fast accumulation in fprop" if FAST_FPROP else ", split accumulation"))
            if precision == "fp8" else "bf16 autocast", "median_s": med, "samples_s": samples,
            "tokens_per_s": mb * seq / med, "profile_kernel_s": total,
            "profile_gemm_s": gemm, "loss_last": loss,
            "peak_allocated_bytes": torch.cuda.max_memory_allocated(),
            "wall_point_s": time.perf_counter() - t0}


def run_point(a, mode, seq, mb, prec, emit):
    """One point's record emitted; 1 if it failed."""
    rc = 0
    try:
        r = point(a.layers, seq, mb, prec, a.steps, a.warmup, mode)
        log(f"{mode} seq {seq} mb {mb} {prec}: {r['median_s'] * 1e3:.2f} ms, gemm "
            f"{r['profile_gemm_s'] * 1e3:.2f} of {r['profile_kernel_s'] * 1e3:.2f} ms")
    except (RuntimeError, torch.OutOfMemoryError) as e:
        r = {"kind": "torch-fp8-step", "seq": seq, "micro_batch": mb, "mode": mode,
             "precision": prec, "error": str(e).splitlines()[0][:400]}
        log(f"{mode} seq {seq} mb {mb} {prec}: {r['error']}")
        rc = 1
    emit(r)
    torch._dynamo.reset()
    mp.free_gpu()
    return rc


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="-")
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--modes", default="compile",
                   help="compile, eager or both, comma-separated (default compile)")
    p.add_argument("--points", default="4096x2,8192x1",
                   help="SEQxMICROBATCH,... (default 4096x2,8192x1)")
    p.add_argument("--fast-accum", default="fprop", choices=("fprop", "none"),
                   help="fast accumulation in the forward GEMM (torchao's default) or none")
    a = p.parse_args(argv)
    global FAST_FPROP
    FAST_FPROP = a.fast_accum == "fprop"
    if a.steps < 1 or a.warmup < 1 or a.layers < 1:
        log("error: --steps, --warmup and --layers must be at least 1")
        return 2
    try:
        pts = [tuple(int(v) for v in s.split("x")) for s in a.points.split(",")]
    except ValueError:
        log(f"error: --points takes SEQxMICROBATCH,..., not {a.points}")
        return 2
    modes = a.modes.split(",")
    if any(m not in ("compile", "eager") for m in modes):
        log(f"error: --modes takes compile and/or eager, not {a.modes}")
        return 2
    if not torch.cuda.is_available():
        log("error: no CUDA device")
        return 2
    out = sys.stdout if a.out == "-" else open(a.out, "w")
    props = torch.cuda.get_device_properties(0)

    def emit(r):
        out.write(json.dumps(r, separators=(",", ":")) + "\n")
        out.flush()

    emit({"kind": "machine", "program": "fp8_probe.py",
          "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
          "gpu": torch.cuda.get_device_name(0), "cc": f"{props.major}.{props.minor}",
          "sms": props.multi_processor_count, "torch": torch.__version__,
          "cuda": torch.version.cuda, "python": platform.python_version(), "argv": argv})
    rc = 0
    try:
        for mode in modes:
            for seq, mb in pts:
                for prec in ("bf16", "fp8"):
                    rc |= run_point(a, mode, seq, mb, prec, emit)
    finally:
        if out is not sys.stdout:
            out.close()
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
