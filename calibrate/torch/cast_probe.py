#!/usr/bin/env python3
"""cast_probe.py - how fast one GPU casts bf16 tensors to fp8 the way an FP8
training recipe does, against a plain copy, as JSON lines: the measurement
behind capsim's FP8 cast rate (docs/model.md, "FP8 casts").

For each shape (rows x cols of a GEMM operand), on the GPU:
  copy        y = x.clone(): read 2 bytes, write 2 an element
  cast        delayed scaling as Transformer Engine runs it: one pass that
              scales x by a given scale, writes the fp8 (e4m3) copy and its
              transpose, and takes the amax of x (read 2, write 1 + 1),
              compiled by torch.compile into fused kernels
  cast_eager  the same in eager PyTorch (separate kernels)
Each is the median of `--iters` timed runs (CUDA events, after warm-up);
bytes_per_s counts the bytes each must move (copy 4, cast 4 an element), so
cast's over copy's is the cast's efficiency against the copy bandwidth that
capsim charges elementwise kernels at.

Needs PyTorch with float8 dtypes (2.1 or later). Progress on stderr.

SPDX-License-Identifier: MIT (calibrate/LICENSE)
"""

import argparse
import datetime
import json
import platform
import statistics
import sys

import torch

FP8 = torch.float8_e4m3fn
FP8_MAX = 448.0


def log(msg):
    print("cast_probe: " + msg, file=sys.stderr, flush=True)


def cast_transpose(x, scale):
    y = (x.float() * scale).clamp(-FP8_MAX, FP8_MAX).to(FP8)
    return y, y.t().contiguous(), x.abs().amax()


def timed(fn, iters, warmup):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(iters):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        out.append(a.elapsed_time(b) * 1e-3)
    return statistics.median(out), out


SHAPES = [(8192, 4096), (8192, 14336), (15872, 4096), (15872, 16384), (32768, 8192),
          (4096, 4096)]


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="-")
    p.add_argument("--iters", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    a = p.parse_args(argv)
    if a.iters < 1 or a.warmup < 0:
        log("error: --iters must be at least 1 and --warmup at least 0")
        return 2
    if not torch.cuda.is_available():
        log("error: no CUDA device")
        return 2
    out = sys.stdout if a.out == "-" else open(a.out, "w")
    props = torch.cuda.get_device_properties(0)

    def emit(r):
        out.write(json.dumps(r, separators=(",", ":")) + "\n")
        out.flush()

    emit({"kind": "machine", "program": "cast_probe.py",
          "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
          "gpu": torch.cuda.get_device_name(0), "cc": f"{props.major}.{props.minor}",
          "sms": props.multi_processor_count, "torch": torch.__version__,
          "cuda": torch.version.cuda, "python": platform.python_version(), "argv": argv})
    fused = torch.compile(cast_transpose)
    scale = torch.tensor(1.0, device="cuda")
    try:
        for rows, cols in SHAPES:
            x = torch.randn(rows, cols, device="cuda", dtype=torch.bfloat16)
            n = rows * cols
            rec = {"kind": "fp8-cast", "rows": rows, "cols": cols, "dtype_in": "bf16",
                   "dtype_out": "float8_e4m3fn", "iters": a.iters}
            for name, fn, moved in (("copy", lambda: x.clone(), 4),
                                    ("cast", lambda: fused(x, scale), 4),
                                    ("cast_eager", lambda: cast_transpose(x, scale), 4)):
                med, samples = timed(fn, a.iters, a.warmup)
                rec[name + "_median_s"] = med
                rec[name + "_samples_s"] = samples
                rec[name + "_bytes_per_s"] = moved * n / med
            rec["cast_over_copy"] = rec["cast_bytes_per_s"] / rec["copy_bytes_per_s"]
            emit(rec)
            log(f"{rows} x {cols}: copy {rec['copy_bytes_per_s'] / 1e12:.2f} TB/s, cast "
                f"{rec['cast_bytes_per_s'] / 1e12:.2f} TB/s ({rec['cast_over_copy']:.2f}), "
                f"eager {rec['cast_eager_bytes_per_s'] / 1e12:.2f} TB/s")
            del x
    finally:
        if out is not sys.stdout:
            out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
