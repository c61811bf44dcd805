#!/usr/bin/env python3
"""gemm_shapes.py - the GEMMs of one transformer layer as a framework runs them,
in bf16 and in fp8 with and without fast accumulation, on one GPU, as JSON lines:
the measurement behind capsim's FP8 GEMM rate per pass (docs/model.md, "FP8
GEMMs: fast accumulation in the forward pass").

For each layer shape (hidden, FFN, heads, key/value heads, head dim, TP, tokens
per micro-batch) the four linear layers of a Llama-style block (QKV, output
projection, gate+up, down), each in its three passes: fprop (tokens x in ->
out), dgrad (tokens x out -> in) and wgrad (in x tokens -> out). Sequence
parallelism gathers the full tokens before the column-parallel GEMMs and
reduce-scatters after the row-parallel ones, so every GEMM has all the
micro-batch's tokens and a 1/TP share of the weight.

Modes: bf16 (torch.matmul), fp8 (torch._scaled_mm, e4m3 x e4m3 -> bf16, unit
scales) with use_fast_accum False (cuBLASLt's split accumulator, promoted to
fp32 at intervals: what Transformer Engine and torchao use for dgrad and
wgrad) and True (what both use for fprop: Transformer Engine's
_2X_ACC_FPROP = False, github:NVIDIA/TransformerEngine
transformer_engine/pytorch/module/base.py; torchao's Float8LinearConfig
gemm_config_output, github:pytorch/ao torchao/float8/config.py).

Each GEMM: `--warmup` calls, then `--reps` calls timed with CUDA events, the
median. Square GEMMs (`--square`) are measured too, to set the shapes against
the square cuBLASLt benchmark capsim's curve was fitted on.

SPDX-License-Identifier: MIT (calibrate/LICENSE)
"""

import argparse
import datetime
import json
import platform
import statistics
import sys

import torch

# name: hidden, ffn, heads, kv heads, head dim (models/llama.xml, Llama 3.1)
MODELS = {
    "llama-3.1-8b": (4096, 14336, 32, 8, 128),
    "llama-3.1-70b": (8192, 28672, 64, 8, 128),
    "llama-3.1-405b": (16384, 53248, 128, 8, 128),
}


def log(msg):
    print("gemm_shapes: " + msg, file=sys.stderr, flush=True)


def layer_gemms(model, tp, tokens):
    """[(name, m, k, n)] for fprop, dgrad and wgrad of the block's four linears."""
    h, f, heads, kv, hd = MODELS[model]
    qkv = (heads + 2 * kv) * hd // tp
    lin = [("qkv", h, qkv), ("proj", heads * hd // tp, h), ("fc1", h, 2 * f // tp),
           ("fc2", f // tp, h)]
    out = []
    for name, fin, fout in lin:
        out.append((name + ".fprop", tokens, fin, fout))
        out.append((name + ".dgrad", tokens, fout, fin))
        out.append((name + ".wgrad", fin, tokens, fout))
    return out


def timed(fn, reps, warmup):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b) / 1e3)
    return statistics.median(ts)


def measure(m, k, n, mode, reps, warmup):
    """Seconds for one m x k x n GEMM in mode."""
    if mode == "bf16":
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
        return timed(lambda: torch.matmul(a, b), reps, warmup)
    fast = mode == "fp8-fast"
    a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
    b = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn).t()
    one = torch.ones((), device="cuda")
    return timed(lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one,
                                          out_dtype=torch.bfloat16, use_fast_accum=fast),
                 reps, warmup)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--layers", default="llama-3.1-8b:1:4096,llama-3.1-70b:4:4096,"
                   "llama-3.1-70b:4:8192,llama-3.1-405b:8:4096",
                   help="MODEL:TP:TOKENS,... (tokens of one micro-batch after CP)")
    p.add_argument("--square", default="4096,8192,16384")
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    args = p.parse_args()
    meta = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
            "cuda": torch.version.cuda, "host": platform.node(),
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat()}
    shapes = []
    for spec in args.layers.split(","):
        model, tp, tokens = spec.split(":")
        for name, m, k, n in layer_gemms(model, int(tp), int(tokens)):
            shapes.append({"model": model, "tp": int(tp), "tokens": int(tokens),
                           "gemm": name, "m": m, "k": k, "n": n})
    for s in [int(x) for x in args.square.split(",") if x]:
        shapes.append({"model": "square", "tp": 1, "tokens": s, "gemm": "square",
                       "m": s, "k": s, "n": s})
    with open(args.out, "w") as f:
        for i, s in enumerate(shapes):
            row = dict(meta, **s)
            for mode in ("bf16", "fp8-split", "fp8-fast"):
                t = measure(s["m"], s["k"], s["n"], mode, args.reps, args.warmup)
                row[mode + "_s"] = t
                row[mode + "_tflops"] = 2.0 * s["m"] * s["k"] * s["n"] / t / 1e12
            f.write(json.dumps(row) + "\n")
            f.flush()
            log("%d/%d %s %s %dx%dx%d bf16 %.0f fp8 split %.0f fast %.0f TFLOP/s" % (
                i + 1, len(shapes), s["model"], s["gemm"], s["m"], s["k"], s["n"],
                row["bf16_tflops"], row["fp8-split_tflops"], row["fp8-fast_tflops"]))
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
