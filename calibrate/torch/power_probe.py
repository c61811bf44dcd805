#!/usr/bin/env python3
"""power_probe.py - a GPU's board power through real training steps in plain
PyTorch, as JSON lines: the measurement behind capsim's energy per step
(docs/model.md, "Power and energy").

For each point (a model, its sizes, the execution), after warm-up, training
steps run back to back for `--seconds` while a thread samples the board's
power and SM clock through NVML (nvidia-smi's query, every `--interval`
seconds). One profiled step gives the kernels' summed durations, so the
GPU's busy share of a step is kernel_s / step_s. The record holds the
median step, the power samples, their mean and median, and the energy per
step (mean power x median step).

The models are memory_probe.py's. Progress on stderr.

SPDX-License-Identifier: MIT (calibrate/LICENSE)
"""

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import threading
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import host_probe as hp  # noqa: E402
import memory_probe as mp  # noqa: E402


def log(msg):
    print("power_probe: " + msg, file=sys.stderr, flush=True)


def sample(stop, interval, out):
    cmd = ["nvidia-smi", "--query-gpu=power.draw,clocks.sm,power.limit",
           "--format=csv,noheader,nounits", "-i", "0"]
    while not stop.is_set():
        try:
            line = subprocess.run(cmd, capture_output=True, text=True, timeout=5).stdout
            w, mhz, limit = (float(x) for x in line.strip().split(","))
            out.append((time.perf_counter(), w, mhz, limit))
        except (ValueError, subprocess.SubprocessError, OSError):
            pass
        stop.wait(interval)


def point(name, seq, mb, mode, layers, seconds, interval):
    c = hp.MODELS[name]
    L = layers or c["layers"]
    model, opt, fwd, x, y = hp.build(c, L, seq, mb, mode)
    rec = {"kind": "torch-power", "model": name, "layers": L, "seq": seq, "micro_batch": mb,
           "mode": mode, "dtype": "bf16", "hidden": c["hidden"], "ffn": c["ffn"],
           "heads": c["heads"], "kv_heads": c["kv_heads"], "vocab": c["vocab"],
           "arch": c["arch"]}
    with torch.nn.attention.sdpa_kernel(hp.SDPA):
        if mode == "graphs":
            g, _ = hp.capture(opt, model, x, y)
            run = g.replay
        else:
            def run():
                hp.eager_step(opt, fwd, x, y)
        for _ in range(5):
            run()
        torch.cuda.synchronize()
        samples, stop = [], threading.Event()
        th = threading.Thread(target=sample, args=(stop, interval, samples), daemon=True)
        steps = []
        th.start()
        t_end = time.perf_counter() + seconds
        while time.perf_counter() < t_end:
            a = torch.cuda.Event(enable_timing=True)
            b = torch.cuda.Event(enable_timing=True)
            a.record()
            run()
            b.record()
            b.synchronize()
            steps.append(a.elapsed_time(b) * 1e-3)
        stop.set()
        th.join()
        ks = hp.kernels_of(hp.trace_events(run))
    # the first second holds the ramp from the warm-up's pause: leave it out
    t0 = samples[0][0] if samples else 0.0
    steady = [s for s in samples if s[0] - t0 >= 1.0] or samples
    watts = [s[1] for s in steady]
    step = statistics.median(steps)
    kernel_s = sum(k.get("dur", 0) for k in ks) * 1e-6
    rec.update({"steps": len(steps), "median_s": step, "kernels": len(ks),
                "kernel_s": kernel_s, "busy_share": min(kernel_s / step, 1.0),
                "power_samples_w": watts, "sm_mhz_samples": [s[2] for s in steady],
                "power_limit_w": steady[-1][3] if steady else None,
                "power_mean_w": statistics.fmean(watts) if watts else None,
                "power_median_w": statistics.median(watts) if watts else None,
                "energy_per_step_j": statistics.fmean(watts) * step if watts else None})
    return rec


# (model, seq, micro-batch, execution, layers or None for all)
BASE = [("gpt2-124m", 1024, 1, "eager", None), ("gpt2-124m", 1024, 4, "eager", None),
        ("gpt2-124m", 1024, 8, "eager", None), ("gpt2-124m", 1024, 32, "eager", None),
        ("gpt2-124m", 1024, 4, "graphs", None), ("gpt2-355m", 1024, 16, "eager", None),
        ("llama-3-8b", 4096, 2, "eager", 4), ("gpt3-6.7b", 2048, 4, "eager", 8)]
# more of the same models, spread over sizes and the three executions
WIDE = [("gpt2-124m", 1024, 2, "eager", None), ("gpt2-124m", 1024, 16, "eager", None),
        ("gpt2-124m", 1024, 64, "eager", None), ("gpt2-124m", 512, 16, "eager", None),
        ("gpt2-124m", 2048, 8, "eager", None), ("gpt2-124m", 1024, 8, "graphs", None),
        ("gpt2-124m", 1024, 16, "graphs", None), ("gpt2-124m", 1024, 16, "compile", None),
        ("gpt2-355m", 1024, 2, "eager", None), ("gpt2-355m", 1024, 4, "eager", None),
        ("gpt2-355m", 1024, 8, "eager", None), ("gpt2-355m", 1024, 32, "eager", None),
        ("gpt2-355m", 2048, 4, "eager", None), ("gpt2-355m", 1024, 8, "graphs", None),
        ("llama-3-8b", 2048, 1, "eager", 4), ("llama-3-8b", 2048, 2, "eager", 4),
        ("llama-3-8b", 2048, 4, "eager", 4), ("llama-3-8b", 4096, 1, "eager", 4),
        ("llama-3-8b", 8192, 1, "eager", 2), ("llama-3-8b", 2048, 8, "eager", 2),
        ("llama-3-8b", 4096, 2, "compile", 4), ("gpt3-6.7b", 2048, 1, "eager", 8),
        ("gpt3-6.7b", 2048, 2, "eager", 8), ("gpt3-6.7b", 2048, 8, "eager", 4),
        ("gpt3-6.7b", 1024, 4, "eager", 8), ("gpt3-6.7b", 2048, 4, "compile", 8),
        ("gpt3-6.7b", 4096, 2, "eager", 4), ("gpt2-355m", 1024, 16, "compile", None)]


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="-")
    p.add_argument("--seconds", type=float, default=12.0)
    p.add_argument("--interval", type=float, default=0.1)
    p.add_argument("--grid", choices=("base", "wide"), default="base",
                   help="base: the 8 points of the first runs; wide: 28 more across models, "
                        "sizes and executions")
    p.add_argument("--slice", default=None, metavar="A:B",
                   help="only the grid's points A to B-1 (to split a run)")
    a = p.parse_args(argv)
    if not a.seconds > 2 or not a.interval > 0:
        log("error: --seconds must exceed 2 and --interval be positive")
        return 2
    if not torch.cuda.is_available():
        log("error: no CUDA device")
        return 2
    out = sys.stdout if a.out == "-" else open(a.out, "w")
    idle = []
    stop = threading.Event()
    th = threading.Thread(target=sample, args=(stop, a.interval, idle), daemon=True)
    torch.cuda.synchronize()
    time.sleep(2.0)
    th.start()
    time.sleep(3.0)
    stop.set()
    th.join()
    grid = BASE if a.grid == "base" else WIDE
    if a.slice:
        lo, _, hi = a.slice.partition(":")
        grid = grid[int(lo or 0):int(hi) if hi else None]
    try:
        def emit(r):
            out.write(json.dumps(r, separators=(",", ":")) + "\n")
            out.flush()
        emit(dict(hp.machine_record(argv), program="power_probe.py",
                  idle_power_samples_w=[s[1] for s in idle],
                  idle_power_median_w=statistics.median([s[1] for s in idle]) if idle else None,
                  date=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")))
        for i, (name, seq, mb, mode, layers) in enumerate(grid):
            log(f"[{i + 1}/{len(grid)}] {name} x{layers or 'all'} seq {seq} mb {mb} {mode}")
            base = {"kind": "torch-power", "model": name, "seq": seq, "micro_batch": mb,
                    "mode": mode}
            r = hp.guarded(point, base, name, seq, mb, mode, layers, a.seconds, a.interval)
            emit(r)
            if "error" in r:
                log("  " + r["error"])
            else:
                log(f"  step {r['median_s'] * 1e3:.1f} ms, busy {r['busy_share']:.2f}, "
                    f"power {r['power_mean_w']:.0f} W mean, {r['energy_per_step_j']:.1f} J a step")
    finally:
        if out is not sys.stdout:
            out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
