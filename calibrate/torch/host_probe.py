#!/usr/bin/env python3
"""host_probe.py - what the host costs a training step in plain PyTorch on one
GPU, per execution mode, as JSON lines: the measurements behind capsim's host
stream (docs/model.md, "The host stream").

Execution modes:
  eager    every op issued by Python through the dispatcher and autograd;
  compile  torch.compile (Inductor, default mode) of the model's forward, its
           backward compiled by AOTAutograd; the optimizer eager (fused AdamW);
  graphs   the whole step (forward, loss, backward, fused AdamW with
           capturable=True) captured once in a CUDA graph and replayed
           (torch.cuda.graphs' "whole-network capture").

Two kinds of record:
  torch-host  one decoder at a tiny size (micro-batch 1, 128 tokens, so the
              GPU never sets the pace) with `layers` blocks: the kernels that
              the forward, the backward and the optimizer step launch (counted
              with torch.profiler: each kernel attributed to the phase whose
              host interval holds its launch call) and the host time each
              phase takes to issue them (median of `steps`). Two layer counts
              per architecture: their difference is one block's.
              graphs: the replay's host time, its GPU time and the kernels'
              summed durations (the gap between them is the graph's
              per-node cost).
  torch-step  a whole step at a real size: the median time from its first
              kernel being issued to its last one ending (CUDA events, the GPU
              synchronised and idle before each step), the host's issue time,
              and (eager, compile) one profiled step's kernel count and summed
              kernel durations.

--node measures only what capsim's node takes as its host's costs (a bare
launch, GPT-2 blocks eager at 6 and compiled at 2; under a minute) and prints
them as --set lines for cluster.node.cpu.launch, .dispatch and
.dispatch-compiled, with a host-costs record.

The models are memory_probe.py's (llama and gpt decoders written from
capsim's models/). Attention is held to the flash backend. Progress on
stderr. Nothing is downloaded.

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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import memory_probe as mp  # noqa: E402
from gpt2_step import launch_record, trace_events  # noqa: E402

SDPA = torch.nn.attention.SDPBackend.FLASH_ATTENTION

# Widths from capsim's models/: GPT-2 124M (models/gpt.xml) and a Llama 3
# block (models/llama.xml: llama-3.1-8b's heads, GQA and vocabulary; its
# width halved for the tiny probe, which counts kernels, not time).
ARCH = {
    "gpt2": {"arch": "gpt", "hidden": 768, "heads": 12, "kv_heads": 12, "ffn": 3072,
             "vocab": 50257},
    "llama3": {"arch": "llama", "hidden": 2048, "heads": 32, "kv_heads": 8, "ffn": 7168,
               "vocab": 128256},
}
MODELS = {
    "gpt2-124m": dict(ARCH["gpt2"], layers=12),
    "gpt2-355m": {"arch": "gpt", "hidden": 1024, "heads": 16, "kv_heads": 16, "ffn": 4096,
                  "vocab": 50257, "layers": 24},
    "llama-3-8b": dict(mp.LLAMA3_8B),
    "gpt3-6.7b": dict(mp.GPT3_6B7),
}


def log(msg):
    print("host_probe: " + msg, file=sys.stderr, flush=True)


def build(c, layers, seq, mb, mode):
    torch.manual_seed(1234)
    with torch.device("cuda"):
        model = mp.Decoder(dict(c, layers=layers), seq)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True,
                            capturable=(mode == "graphs"))
    fwd = torch.compile(model) if mode == "compile" else model
    x = torch.randint(0, c["vocab"], (mb, seq), device="cuda")
    y = torch.randint(0, c["vocab"], (mb, seq), device="cuda")
    return model, opt, fwd, x, y


def eager_step(opt, fwd, x, y, marks=None):
    """One step; marks (a list) gets the host clock at each phase boundary."""
    if marks is not None:
        marks.append(time.perf_counter())
    opt.zero_grad(set_to_none=True)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = fwd(x, y)
    if marks is not None:
        marks.append(time.perf_counter())
    loss.backward()
    if marks is not None:
        marks.append(time.perf_counter())
    opt.step()
    if marks is not None:
        marks.append(time.perf_counter())
    return loss


def capture(opt, model, x, y):
    """Warm up on a side stream, then capture the whole step in a graph."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            eager_step(opt, model, x, y)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(g):
        with torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=False):
            loss = model(x, y)
        loss.backward()
        opt.step()
    return g, loss


def kernels_of(events):
    return [e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"]


def phase_kernels(events, names):
    """Kernels per phase: a kernel's launch call (by correlation id) lies in
    the host interval of the user annotation of that name."""
    spans = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") == "user_annotation" and e["name"] in names:
            spans[e["name"]] = (e["ts"], e["ts"] + e.get("dur", 0))
    launch_ts = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver"):
            corr = e.get("args", {}).get("correlation")
            if corr is not None:
                launch_ts[corr] = e["ts"]
    counts = {n: 0 for n in names}
    dur = {n: 0.0 for n in names}
    unplaced = 0
    for k in kernels_of(events):
        t = launch_ts.get(k.get("args", {}).get("correlation"))
        where = None
        if t is not None:
            for n, (a, b) in spans.items():
                if a <= t <= b:
                    where = n
        if where is None:
            unplaced += 1
            continue
        counts[where] += 1
        dur[where] += k.get("dur", 0) * 1e-6
    return counts, dur, unplaced


def host_point(arch, layers, mode, steps):
    c = ARCH[arch]
    seq, mb = 128, 1
    model, opt, fwd, x, y = build(c, layers, seq, mb, mode)
    rec = {"kind": "torch-host", "arch": arch, **c, "layers": layers, "seq": seq,
           "micro_batch": mb, "mode": mode, "steps": steps}
    from torch.profiler import record_function
    with torch.nn.attention.sdpa_kernel(SDPA):
        if mode == "graphs":
            g, _ = capture(opt, model, x, y)
            for _ in range(5):
                g.replay()
            torch.cuda.synchronize()
            host, gpu = [], []
            for _ in range(steps):
                a = torch.cuda.Event(enable_timing=True)
                b = torch.cuda.Event(enable_timing=True)
                torch.cuda.synchronize()
                a.record()
                t0 = time.perf_counter()
                g.replay()
                host.append(time.perf_counter() - t0)
                b.record()
                b.synchronize()
                gpu.append(a.elapsed_time(b) * 1e-3)
            ks = kernels_of(trace_events(g.replay))
            rec.update({"kernels": len(ks),
                        "kernel_s": sum(k.get("dur", 0) for k in ks) * 1e-6,
                        "replay_host_s": statistics.median(host),
                        "replay_gpu_s": statistics.median(gpu)})
            return rec
        for _ in range(5):
            eager_step(opt, fwd, x, y)
        torch.cuda.synchronize()
        ph = {"fwd": [], "bwd": [], "opt": []}
        total = []
        for _ in range(steps):
            marks = []
            torch.cuda.synchronize()
            eager_step(opt, fwd, x, y, marks)
            torch.cuda.synchronize()
            total.append(time.perf_counter() - marks[0])
            ph["fwd"].append(marks[1] - marks[0])
            ph["bwd"].append(marks[2] - marks[1])
            ph["opt"].append(marks[3] - marks[2])

        def annotated():
            with record_function("fwd"):
                opt.zero_grad(set_to_none=True)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    loss = fwd(x, y)
            with record_function("bwd"):
                loss.backward()
            with record_function("opt"):
                opt.step()

        counts, dur, unplaced = phase_kernels(trace_events(annotated), ("fwd", "bwd", "opt"))
    rec.update({
        "host_fwd_s": statistics.median(ph["fwd"]),
        "host_bwd_s": statistics.median(ph["bwd"]),
        "host_opt_s": statistics.median(ph["opt"]),
        "step_wall_s": statistics.median(total),
        "kernels_fwd": counts["fwd"], "kernels_bwd": counts["bwd"],
        "kernels_opt": counts["opt"], "kernels_unplaced": unplaced,
        "kernel_s_fwd": dur["fwd"], "kernel_s_bwd": dur["bwd"], "kernel_s_opt": dur["opt"],
    })
    return rec


def step_point(name, seq, mb, mode, steps, warmup, layers=None):
    c = MODELS[name]
    L = layers or c["layers"]
    model, opt, fwd, x, y = build(c, L, seq, mb, mode)
    rec = {"kind": "torch-step", "model": name, **{k: v for k, v in c.items() if k != "layers"},
           "layers": L, "seq": seq, "micro_batch": mb, "mode": mode, "dtype": "bf16",
           "sdpa": "flash", "optimizer": "adamw-fused", "steps": steps, "warmup": warmup,
           "parameters": mp.parameters(model)}
    with torch.nn.attention.sdpa_kernel(SDPA):
        if mode == "graphs":
            g, _ = capture(opt, model, x, y)
            run = g.replay
        else:
            def run():
                eager_step(opt, fwd, x, y)
        for _ in range(warmup):
            run()
        torch.cuda.synchronize()
        samples, issue = [], []
        for _ in range(steps):
            x.random_(0, c["vocab"])
            y.random_(0, c["vocab"])
            a = torch.cuda.Event(enable_timing=True)
            b = torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            a.record()
            run()
            b.record()
            issue.append(time.perf_counter() - t0)
            b.synchronize()
            samples.append(a.elapsed_time(b) * 1e-3)
        ks = kernels_of(trace_events(run))
    median = statistics.median(samples)
    rec.update({"samples_s": samples, "median_s": median,
                "min_s": min(samples), "issue_median_s": statistics.median(issue),
                "tokens_per_s": mb * seq / median,
                "kernels": len(ks), "kernel_s": sum(k.get("dur", 0) for k in ks) * 1e-6,
                "peak_allocated_bytes": torch.cuda.max_memory_allocated(),
                "peak_reserved_bytes": torch.cuda.max_memory_reserved()})
    return rec


def guarded(fn, base, *a):
    mp.free_gpu()
    try:
        r = fn(*a)
    except torch.cuda.OutOfMemoryError as e:
        r = dict(base, error="out of memory", message=mp.first_line(e))
    except RuntimeError as e:
        r = dict(base, error="runtime error", message=mp.first_line(e))
    torch._dynamo.reset()
    mp.free_gpu()
    return r


def grid(quick):
    host, steps = [], []
    modes = ("eager", "compile", "graphs")
    for arch in ("gpt2", "llama3"):
        for mode in modes:
            for layers in ((2,) if quick else (2, 6)):
                host.append((arch, layers, mode))
    if quick:
        steps.append(("gpt2-124m", 1024, 4, "eager", None))
        steps.append(("gpt2-124m", 1024, 4, "graphs", None))
        return host, steps
    for mb in (1, 2, 4, 8, 16, 32):
        for mode in ("eager", "graphs"):
            steps.append(("gpt2-124m", 1024, mb, mode, None))
    for mb in (1, 4, 16):
        steps.append(("gpt2-124m", 1024, mb, "compile", None))
    for mb in (1, 4, 8, 16):
        for mode in ("eager", "graphs"):
            steps.append(("gpt2-355m", 1024, mb, mode, None))
    # GPU-bound steps of large layers (layers cut to fit one GPU)
    for seq, mb in ((2048, 1), (2048, 4), (4096, 1), (4096, 2), (8192, 1)):
        steps.append(("llama-3-8b", seq, mb, "eager", 4))
    for mb in (1, 2, 4):
        steps.append(("gpt3-6.7b", 2048, mb, "eager", 8))
    return host, steps


def per_kernel_s(r):
    """The host's issue time of a torch-host record's step over its kernels."""
    k = r["kernels_fwd"] + r["kernels_bwd"] + r["kernels_opt"]
    return (r["host_fwd_s"] + r["host_bwd_s"] + r["host_opt_s"]) / k


def node_costs(steps, emit):
    """This host's per-kernel costs, as capsim's node takes them (cpu.launch,
    cpu.dispatch, cpu.dispatch-compiled): a bare launch (torch-launch), and
    the issue time per kernel of GPT-2 blocks at the tiny size, eager at 6
    blocks and compiled at 2, less that launch. Emits the records it ran on
    and a host-costs record; prints the --set lines on stderr."""
    launch = launch_record()
    emit(launch)
    eager = host_point("gpt2", 6, "eager", steps)
    emit(eager)
    comp = host_point("gpt2", 2, "compile", steps)
    emit(comp)
    lo = launch["host_median_s"]
    e, c = per_kernel_s(eager), per_kernel_s(comp)
    rec = {"kind": "host-costs", "launch_s": lo, "eager_per_kernel_s": e,
           "compiled_per_kernel_s": c, "dispatch_s": max(e - lo, 1e-8),
           "dispatch_compiled_s": max(c - lo, 1e-8)}
    emit(rec)
    log("this host, for capsim (docs/model.md, \"The host stream\"):")
    for key, name in (("launch_s", "launch"), ("dispatch_s", "dispatch"),
                      ("dispatch_compiled_s", "dispatch-compiled")):
        print(f"  --set cluster.node.cpu.{name}={rec[key] * 1e6:.1f}us", file=sys.stderr)
    return rec


def machine_record(argv):
    props = torch.cuda.get_device_properties(0)
    return {
        "kind": "machine", "program": "host_probe.py",
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "gpu": torch.cuda.get_device_name(0), "cc": f"{props.major}.{props.minor}",
        "sms": props.multi_processor_count, "cpu": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(), "torch": torch.__version__, "cuda": torch.version.cuda,
        "python": platform.python_version(), "argv": argv,
    }


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="-")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=8)
    p.add_argument("--only", choices=("host", "step", "all"), default="all")
    p.add_argument("--node", action="store_true",
                   help="only this host's per-kernel costs as capsim's node takes them "
                        "(under a minute); prints the --set lines")
    a = p.parse_args(argv)
    if a.steps < 1 or a.warmup < 0:
        log("error: --steps must be at least 1 and --warmup at least 0")
        return 2
    if not torch.cuda.is_available():
        log("error: no CUDA device")
        return 2
    try:
        cpu = open("/proc/cpuinfo").read().split("model name")[1].split("\n")[0].strip(": \t")
    except (OSError, IndexError):
        cpu = ""
    out = sys.stdout if a.out == "-" else open(a.out, "w")
    t0 = time.perf_counter()
    try:
        def emit(r):
            out.write(json.dumps(r, separators=(",", ":")) + "\n")
            out.flush()
        emit(dict(machine_record(argv), cpu_model=cpu))
        if a.node:
            node_costs(a.steps, emit)
            log(f"done in {time.perf_counter() - t0:.0f} s")
            return 0
        host, steps = grid(a.quick)
        if a.only in ("host", "all"):
            for i, (arch, layers, mode) in enumerate(host):
                log(f"[host {i + 1}/{len(host)}] {arch} x{layers} {mode}")
                base = {"kind": "torch-host", "arch": arch, "layers": layers, "mode": mode}
                r = guarded(host_point, base, arch, layers, mode, a.steps)
                emit(r)
                log("  " + (r.get("error", "") or
                            f"kernels {r.get('kernels', '')}{r.get('kernels_fwd', '')}"
                            f"/{r.get('kernels_bwd', '')}/{r.get('kernels_opt', '')}"))
        if a.only in ("step", "all"):
            for i, (name, seq, mb, mode, layers) in enumerate(steps):
                log(f"[step {i + 1}/{len(steps)}] {name} x{layers or 'all'} seq {seq} "
                    f"mb {mb} {mode}")
                base = {"kind": "torch-step", "model": name, "seq": seq, "micro_batch": mb,
                        "mode": mode, "layers": layers or MODELS[name]["layers"]}
                r = guarded(step_point, base, name, seq, mb, mode, a.steps, a.warmup, layers)
                emit(r)
                log("  " + (r.get("error", "") or
                            f"{r['median_s'] * 1e3:.2f} ms, issue {r['issue_median_s'] * 1e3:.2f}"
                            f" ms, {r['kernels']} kernels {r['kernel_s'] * 1e3:.2f} ms"))
    finally:
        if out is not sys.stdout:
            out.close()
    log(f"done in {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
