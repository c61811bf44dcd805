#!/usr/bin/env python3
"""async_probe.py - how much an asynchronous checkpoint save slows GPT-2
training steps on one GPU while it drains to local disk, as JSON lines: the
measurement behind the cost capsim charges an async save.

The job is gpt2_step.py's (its model, fused AdamW, bf16 autocast and flash
attention, imported, not copied) at a micro-batch that makes the step
GPU-bound. First `--steps` steps without a save (the baseline). Then, for
each variant, a save in the style of Megatron's --async-save and PyTorch DCP's
async_save: at a step boundary the model and optimizer state dict is copied
from the GPU to host buffers allocated once beforehand (the blocking part),
then a background worker writes it with torch.save to a file on local disk
and fsyncs it, while training goes on. Every step's time is recorded, during
the drain and for `--after-steps` steps after it, with the drain's length,
bytes and rate. Variants:
  thread        pinned staging, written by a Python thread in this process
  process       staging written by a child forked at the step boundary
                (pinned where a forked child can read pinned memory, which
                the machine line's fork_pinned says; pageable otherwise)
  dcp           torch.distributed.checkpoint.async_save (its default stager
                and thread executor) in a one-process gloo group
  thread-extra, process-extra  as thread and process, with `--extra-gib` GiB
                of CPU tensors (already on the host, not copied) added to
                the saved dict, so that the drain overlaps many steps
First, dd writes `--raw-gib` GiB with O_DIRECT and fsync: the disk's raw
rate, as ckpt_probe.py measures it. The page cache is dropped before each
variant where the machine lets us (root). `--cpu-smoke` runs the same logic
on the CPU with a small stand-in model, to test the script without a GPU;
its numbers mean nothing. Progress on stderr.

SPDX-License-Identifier: MIT (calibrate/LICENSE)
"""

import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import threading
import time

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpt2_step as g2  # noqa: E402
from ckpt_probe import dd, drop_caches  # noqa: E402

VARIANTS = ("thread", "process", "dcp", "thread-extra", "process-extra")
DEFAULT_VARIANTS = ["thread", "process", "dcp", "thread", "process",
                    "thread-extra", "process-extra"]


def log(msg):
    print("async_probe: " + msg, file=sys.stderr, flush=True)


def now_utc():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def stats(xs):
    """median, p10, p90, mean, min, max and count of a list of seconds."""
    if not xs:
        return {"n": 0}
    q = statistics.quantiles(xs, n=10, method="inclusive") if len(xs) > 1 else [xs[0]] * 9
    return {"n": len(xs), "median_s": statistics.median(xs), "p10_s": q[0], "p90_s": q[8],
            "mean_s": statistics.fmean(xs), "min_s": min(xs), "max_s": max(xs)}


# ---- the training job ----------------------------------------------------------


class Job:
    """The model, optimizer and one timed step. GPU: gpt2_step's GPT-2 under
    bf16 autocast with fused AdamW, fresh random tokens each step outside its
    timing, attention held to one SDPA backend. CPU smoke: a small MLP."""

    def __init__(self, args):
        self.cuda = not args.cpu_smoke
        torch.manual_seed(1234)
        if self.cuda:
            cfg = g2.MODELS[args.model]
            with torch.device("cuda"):
                self.model = g2.GPT2(cfg["layers"], cfg["hidden"], cfg["heads"])
            self.opt = g2.make_optimizer(self.model)
            self.x = torch.empty((args.micro_batch, g2.SEQ), dtype=torch.long, device="cuda")
            self.y = torch.empty_like(self.x)
            self.sdpa = g2.sdpa_context(args.sdpa)
        else:
            self.model = nn.Sequential(nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 1024))
            self.opt = torch.optim.AdamW(self.model.parameters(), lr=1e-4)
            self.x = torch.empty((args.micro_batch * 4, 1024))
            self.y = torch.empty_like(self.x)
            import contextlib
            self.sdpa = contextlib.nullcontext()
        self.parameters = g2.parameter_count(self.model)
        self.loss = None
        self.last_end = None  # host clock at the end of the last timed step

    def new_batch(self):
        if self.cuda:
            self.x.random_(0, g2.VOCAB)
            self.y.random_(0, g2.VOCAB)
        else:
            self.x.normal_()
            self.y.normal_()

    def step(self):
        self.opt.zero_grad(set_to_none=True)
        if self.cuda:
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = self.model(self.x, self.y)
        else:
            loss = torch.nn.functional.mse_loss(self.model(self.x), self.y)
        loss.backward()
        self.opt.step()
        self.loss = loss

    def timed(self):
        """One step as gpt2_step times it: the GPU synchronised and idle, an
        event, the step issued, an event, synchronise. Returns (start on the
        host clock, GPU seconds, wall seconds, issue seconds, loop seconds);
        loop seconds run from the end of the last timed step (self.last_end)
        to the end of this one, the batch drawn and any wait for the GIL
        included (None without a last end)."""
        self.new_batch()
        if not self.cuda:
            w0 = time.perf_counter()
            self.step()
            w1 = time.perf_counter()
            gpu_s, wall_s, issue_s, end = w1 - w0, w1 - w0, w1 - w0, w1
        else:
            a = torch.cuda.Event(enable_timing=True)
            b = torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize()
            w0 = time.perf_counter()
            a.record()
            self.step()
            b.record()
            w1 = time.perf_counter()
            b.synchronize()
            end = time.perf_counter()
            gpu_s, wall_s, issue_s = a.elapsed_time(b) * 1e-3, end - w0, w1 - w0
        loop_s = end - self.last_end if self.last_end is not None else None
        self.last_end = end
        return w0, gpu_s, wall_s, issue_s, loop_s

    def sync(self):
        if self.cuda:
            torch.cuda.synchronize()


# ---- staging: host buffers the GPU state is copied into --------------------------


def tensor_bytes(obj):
    if isinstance(obj, torch.Tensor):
        return obj.numel() * obj.element_size()
    if isinstance(obj, dict):
        return sum(tensor_bytes(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return sum(tensor_bytes(v) for v in obj)
    return 0


def make_staging(obj, pin):
    """Host buffers shaped like every tensor in obj (nested dicts, lists);
    other leaves are copied as they are. Pageable buffers are touched once so
    that page faults stay out of the timed copy."""
    if isinstance(obj, torch.Tensor):
        t = torch.empty(obj.shape, dtype=obj.dtype, device="cpu", pin_memory=pin)
        if not pin:
            t.zero_()
        return t
    if isinstance(obj, dict):
        return {k: make_staging(v, pin) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(make_staging(v, pin) for v in obj)
    return obj


def copy_into(dst, src):
    """Copy every tensor of src into dst's buffer (non_blocking; synchronise
    after). Returns dst with src's non-tensor leaves (the param groups)."""
    if isinstance(src, torch.Tensor):
        dst.copy_(src, non_blocking=True)
        return dst
    if isinstance(src, dict):
        return {k: copy_into(dst[k], v) for k, v in src.items()}
    if isinstance(src, (list, tuple)):
        return type(src)(copy_into(d, v) for d, v in zip(dst, src))
    return src


def job_state(job):
    return {"model": job.model.state_dict(), "optimizer": job.opt.state_dict()}


def save_and_fsync(obj, path):
    """torch.save to a path (PyTorch's own file writer), then fsync the file
    and its folder. Returns (serialise seconds, fsync seconds)."""
    t0 = time.perf_counter()
    torch.save(obj, path)
    t1 = time.perf_counter()
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    dfd = os.open(os.path.dirname(path), os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)
    return t1 - t0, time.perf_counter() - t1


def fork_sees_pinned():
    """Whether a child forked now can read pinned host memory (the CUDA
    driver may mark it MADV_DONTFORK). Returns (bool or None, detail)."""
    if not torch.cuda.is_available():
        return None, "no CUDA"
    t = torch.arange(1 << 20, dtype=torch.int32).pin_memory()
    want = int(t.sum().item())
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            # numpy reads the buffer in this thread; no torch op after fork
            os.write(w, str(int(t.numpy().sum(dtype="int64"))).encode())
        finally:
            os._exit(0)
    os.close(w)
    got = b""
    while True:
        chunk = os.read(r, 4096)
        if not chunk:
            break
        got += chunk
    os.close(r)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return False, f"child killed by signal {os.WTERMSIG(status)}"
    ok = got.decode() == str(want)
    return ok, "read back" if ok else f"read {got.decode()!r}, expected {want}"


# ---- drains ------------------------------------------------------------------------


class ThreadDrain:
    def __init__(self, obj, path):
        self.res = {}

        def run():
            try:
                s, f = save_and_fsync(obj, path)
                self.res.update(ok=True, serialize_s=s, fsync_s=f)
            except BaseException as e:  # noqa: BLE001 - recorded, not raised
                self.res.update(ok=False, error=g2.first_line(e))
            self.res["end"] = time.perf_counter()

        self.th = threading.Thread(target=run, name="async_probe-drain", daemon=True)
        self.th.start()

    def done(self):
        return not self.th.is_alive()

    def abandon(self):
        return "thread left running"


class ProcessDrain:
    """A child forked at the step boundary writes the staged dict and sends
    its timings back through a pipe; perf_counter is CLOCK_MONOTONIC on Linux,
    the same clock in both processes."""

    def __init__(self, obj, path):
        self.res = {}
        self.r, w = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            code = 0
            try:
                os.close(self.r)
                torch.set_num_threads(1)  # as DataLoader workers do after fork
                try:
                    s, f = save_and_fsync(obj, path)
                    msg = {"ok": True, "serialize_s": s, "fsync_s": f}
                except BaseException as e:  # noqa: BLE001
                    msg = {"ok": False, "error": g2.first_line(e)}
                    code = 1
                msg["end"] = time.perf_counter()
                os.write(w, json.dumps(msg).encode())
            finally:
                os._exit(code)
        os.close(w)
        self.status = None

    def done(self):
        if self.status is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid == 0:
                return False
            self.status = status
            self.finish()
        return True

    def finish(self):
        got = b""
        while True:
            chunk = os.read(self.r, 65536)
            if not chunk:
                break
            got += chunk
        os.close(self.r)
        try:
            self.res.update(json.loads(got.decode()))
        except ValueError:
            self.res.update(ok=False, end=time.perf_counter())
        if os.WIFSIGNALED(self.status):
            self.res.update(ok=False, error=f"child killed by signal {os.WTERMSIG(self.status)}")
        elif os.WEXITSTATUS(self.status) != 0 and "error" not in self.res:
            self.res.update(ok=False, error=f"child exit status {os.WEXITSTATUS(self.status)}")

    def abandon(self):
        os.kill(self.pid, 9)
        os.waitpid(self.pid, 0)
        self.status = 9
        return "child killed"


class DcpDrain:
    """torch.distributed.checkpoint.async_save: staging inside the call, the
    write in DCP's executor; done when its upload future is."""

    def __init__(self, fut):
        self.res = {}
        self.fut = fut

        def cb(f):
            self.res["end"] = time.perf_counter()
            e = f.exception()
            self.res.update(ok=e is None)
            if e is not None:
                self.res["error"] = g2.first_line(e)

        fut.add_done_callback(cb)

    def done(self):
        return self.fut.done() and "end" in self.res

    def abandon(self):
        return "DCP future left running"


def dcp_setup(dirpath):
    """A one-process gloo group for DCP. Returns None or the error."""
    try:
        import torch.distributed as dist
        import torch.distributed.checkpoint as dcp
        if not hasattr(dcp, "async_save"):
            return f"torch {torch.__version__} has no torch.distributed.checkpoint.async_save"
        # One rank needs no network, but gloo binds to an interface: loopback.
        os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
        if not dist.is_initialized():
            store = os.path.join(dirpath, "gloo-store")
            if os.path.exists(store):
                os.unlink(store)
            dist.init_process_group("gloo", init_method="file://" + store, rank=0,
                                    world_size=1)
        return None
    except Exception as e:  # noqa: BLE001 - recorded
        return f"{type(e).__name__}: {g2.first_line(e)}"


def path_bytes(p):
    if os.path.isdir(p):
        return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(p) for f in fs)
    return os.path.getsize(p) if os.path.exists(p) else 0


def remove(p):
    if os.path.isdir(p):
        shutil.rmtree(p, ignore_errors=True)
    elif os.path.exists(p):
        os.unlink(p)


# ---- one variant -----------------------------------------------------------------------


def run_variant(name, index, job, args, ctx, emit, base):
    """Stage, start the drain, step through it and `--after-steps` past it.
    Emits one drain-step record a step and returns the drain-summary."""
    writer = name.split("-")[0]
    extra = ctx["extra"] if name.endswith("-extra") else None
    pin = job.cuda and (writer == "thread" or (writer == "process" and ctx["fork_pinned"]))
    rec = {"kind": "drain-summary", "variant": name, "save": index, "writer": writer,
           "model": args.model if job.cuda else "cpu-smoke-mlp",
           "micro_batch": args.micro_batch, "seq": g2.SEQ, "dtype": "bf16",
           "parameters": job.parameters,
           "staging": "dcp-default" if writer == "dcp" else ("pinned" if pin else "pageable"),
           "extra_bytes": tensor_bytes(extra) if extra is not None else 0}
    dropped = drop_caches()
    rec["caches_dropped"] = dropped
    path = os.path.join(args.dir, f"ckpt-{index}-{name}" + ("" if writer == "dcp" else ".pt"))
    remove(path)
    job.sync()
    t0 = time.perf_counter()
    state = job_state(job)
    if writer == "dcp":
        err = ctx.get("dcp_error")
        if err is None:
            try:
                import torch.distributed.checkpoint as dcp
                from torch.distributed.checkpoint.state_dict import get_state_dict
                try:
                    msd, osd = get_state_dict(job.model, job.opt)
                    state = {"model": msd, "optimizer": osd}
                    rec["dcp_state_dict"] = "get_state_dict"
                except Exception as e:  # noqa: BLE001 - fall back, say so
                    rec["dcp_state_dict"] = f"plain state_dict ({g2.first_line(e)})"
                t1 = time.perf_counter()
                resp = dcp.async_save(state, checkpoint_id=path)
                fut = getattr(resp, "upload_completion", resp)
                staging = getattr(resp, "staging_completion", None)
                if staging is not None:
                    staging.result()
                t2 = time.perf_counter()
                drain = DcpDrain(fut)
            except Exception as e:  # noqa: BLE001 - recorded
                err = f"{type(e).__name__}: {g2.first_line(e)}"
        if err is not None:
            rec.update(ok=False, error=err)
            log(f"  {name}: not measured: {err}")
            return rec
        rec["state_bytes"] = tensor_bytes(state)
        rec["blocking"] = {"state_dict_s": t1 - t0, "async_save_call_s": t2 - t1,
                           "total_s": t2 - t0}
        t3 = t2
    else:
        key = "pinned" if pin else "pageable"
        if key not in ctx["staging"]:
            # Allocated once, as Megatron and DCP cache their staging buffers;
            # the first save of each kind of staging pays for it, untimed.
            a0 = time.perf_counter()
            ctx["staging"][key] = make_staging(state, pin)
            rec["staging_alloc_s"] = time.perf_counter() - a0
            t0 = time.perf_counter()
            state = job_state(job)
        t1 = time.perf_counter()
        staged = copy_into(ctx["staging"][key], state)
        job.sync()
        t2 = time.perf_counter()
        obj = {"model": staged["model"], "optimizer": staged["optimizer"]}
        if extra is not None:
            obj["extra"] = extra
        drain = ThreadDrain(obj, path) if writer == "thread" else ProcessDrain(obj, path)
        t3 = time.perf_counter()
        rec["state_bytes"] = tensor_bytes(state)
        rec["blocking"] = {"state_dict_s": t1 - t0, "copy_s": t2 - t1,
                           "copy_bytes_per_s": tensor_bytes(state) / (t2 - t1),
                           "start_s": t3 - t2, "total_s": t3 - t0}
    # The drain runs from the worker's launch (t2; DCP: async_save's return,
    # its write having started inside the call after the staging).
    t_start = t2
    job.last_end = t3
    steps = []
    rec["resume_after_drain_start_s"] = t3 - t2
    deadline = t_start + args.max_drain_s
    timed_out = False
    after = 0
    while True:
        done = drain.done()
        if done:
            if after >= args.after_steps:
                break
            after += 1
        elif time.perf_counter() > deadline:
            timed_out = True
            rec["abandoned"] = drain.abandon()
            break
        steps.append(job.timed())
    res = drain.res
    end = res.get("end", time.perf_counter())
    during, after_s, during_issue, after_issue, during_loop, after_loop = [], [], [], [], [], []
    for i, (w0, gpu_s, wall_s, issue_s, loop_s) in enumerate(steps):
        if timed_out or w0 + wall_s <= end:
            phase = "during"
            during.append(gpu_s)
            during_issue.append(issue_s)
            during_loop.append(loop_s)
        elif w0 < end:
            phase = "straddle"
        else:
            phase = "after"
            after_s.append(gpu_s)
            after_issue.append(issue_s)
            after_loop.append(loop_s)
        emit({"kind": "drain-step", "variant": name, "save": index, "step": i,
              "phase": phase, "t_s": w0 - t_start, "step_s": gpu_s, "wall_s": wall_s,
              "issue_s": issue_s, "loop_s": loop_s})
    size = path_bytes(path)
    drain_s = end - t_start
    ds, as_ = stats(during), stats(after_s)
    rec.update({
        "ok": bool(res.get("ok")) and not timed_out, "timed_out": timed_out,
        "bytes": size, "drain_s": drain_s,
        "drain_bytes_per_s": size / drain_s if drain_s > 0 and size else None,
        "serialize_s": res.get("serialize_s"), "fsync_s": res.get("fsync_s"),
        "steps_during": len(during), "during": ds, "after": as_,
        "during_samples_s": during, "after_samples_s": after_s,
        "during_issue_median_s": statistics.median(during_issue) if during_issue else None,
        "after_issue_median_s": statistics.median(after_issue) if after_issue else None,
        "during_loop": stats(during_loop), "after_loop": stats(after_loop),
        "during_loop_samples_s": during_loop,
        "baseline_median_s": base["median_s"], "baseline_loop_median_s": base["loop_median_s"],
    })
    if "error" in res:
        rec["error"] = res["error"]
    bm, blm = base["median_s"], base["loop_median_s"]
    if during:
        rec["slowdown"] = ds["median_s"] / bm
        rec["slowdown_mean"] = ds["mean_s"] / bm
        rec["slowdown_loop_mean"] = statistics.fmean(during_loop) / blm
        # Training time the drain cost beyond the blocking part: the steps
        # that ran during it, less as many baseline steps; by the steps' CUDA
        # events (lost_s) and by the loop's host clock (lost_loop_s, which
        # also holds waits outside the events, for the GIL say).
        rec["lost_s"] = sum(during) - len(during) * bm
        rec["lost_loop_s"] = sum(during_loop) - len(during_loop) * blm
        rec["cost_s"] = rec["lost_loop_s"] + rec["blocking"]["total_s"]
    if after_s:
        rec["after_over_baseline"] = as_["median_s"] / bm
    remove(path)
    if writer == "process" and not timed_out and not rec["ok"] and job.cuda and pin:
        rec["note"] = "forked child failed with pinned staging"
    b = rec["blocking"]
    log(f"  {name}: blocking {b['total_s'] * 1e3:.0f} ms, drain {drain_s:.2f} s, "
        f"{size / 1e9:.2f} GB at {size / drain_s / 1e9 if size else 0:.2f} GB/s, "
        f"{len(during)} steps during, median "
        f"{ds.get('median_s', float('nan')) * 1e3:.1f} ms "
        f"(x{rec.get('slowdown', float('nan')):.3f}, mean x"
        f"{rec.get('slowdown_mean', float('nan')):.3f}), lost "
        f"{rec.get('lost_loop_s', float('nan')):.2f} s, after "
        f"{as_.get('median_s', float('nan')) * 1e3:.1f} ms"
        + (f", error: {rec['error']}" if "error" in rec else ""))
    return rec


# ---- the machine line and the command line ----------------------------------------


def machine_record(args, fork_pinned, detail):
    rec = {"kind": "machine", "program": "async_probe.py", "date": now_utc(),
           "torch": torch.__version__, "python": platform.python_version(),
           "cpus": os.cpu_count(), "torch_threads": torch.get_num_threads(),
           "dir": args.dir, "argv": sys.argv[1:],
           "fork_pinned": fork_pinned, "fork_pinned_detail": detail,
           "smoke": args.cpu_smoke}
    try:
        with open("/proc/meminfo") as f:
            rec["host_memtotal_bytes"] = int(f.readline().split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        rec["df"] = subprocess.run(["df", "-T", args.dir], capture_output=True,
                                   text=True).stdout.splitlines()[-1]
    except (OSError, IndexError):
        pass
    if not args.cpu_smoke:
        props = torch.cuda.get_device_properties(0)
        rec.update({"gpu": torch.cuda.get_device_name(0), "cc": f"{props.major}.{props.minor}",
                    "sms": props.multi_processor_count, "memory_bytes": props.total_memory,
                    "driver": g2.driver_version(), "cuda": torch.version.cuda,
                    "sdpa_backend": args.sdpa, "autocast": "bf16", "master_weights": "fp32"})
    return rec


def parse_args(argv):
    p = argparse.ArgumentParser(
        description="Time GPT-2 training steps while an asynchronous checkpoint "
                    "drains to local disk (JSON lines; calibrate/torch/README.md).")
    p.add_argument("--out", default="-", help="output file (default: stdout)")
    p.add_argument("--dir", default="/tmp/async_probe", help="where checkpoints are written")
    p.add_argument("--model", choices=list(g2.MODELS), default="gpt2-355m")
    p.add_argument("--micro-batch", type=int, default=16)
    p.add_argument("--steps", type=int, default=30, help="baseline steps (default 30)")
    p.add_argument("--warmup", type=int, default=10, help="warm-up steps (default 10)")
    p.add_argument("--after-steps", type=int, default=20,
                   help="steps timed after each drain ends (default 20)")
    p.add_argument("--variants", type=g2.name_list(list(VARIANTS)), default=DEFAULT_VARIANTS,
                   help="saves to run in turn, comma-separated, repeats allowed (default: "
                        + ",".join(DEFAULT_VARIANTS) + ")")
    p.add_argument("--extra-gib", type=float, default=8.0,
                   help="GiB of CPU tensors the -extra variants add (default 8)")
    p.add_argument("--max-drain-s", type=float, default=90.0,
                   help="give a drain up this long after its start (default 90)")
    p.add_argument("--budget-s", type=float, default=300.0,
                   help="start no variant after this many seconds (default 300)")
    p.add_argument("--raw-gib", type=float, default=2.0,
                   help="GiB that dd writes first with O_DIRECT and fsync, the disk's raw "
                        "rate (default 2; 0 skips)")
    p.add_argument("--sdpa", choices=g2.SDPA_BACKENDS, default="flash")
    p.add_argument("--cpu-smoke", action="store_true",
                   help="test the logic on the CPU with a small stand-in model (no measurement)")
    a = p.parse_args(argv)
    if a.micro_batch < 1 or a.steps < 2 or a.warmup < 0 or a.after_steps < 0:
        p.error("--micro-batch must be >= 1, --steps >= 2, --warmup and --after-steps >= 0")
    if a.extra_gib < 0 or a.raw_gib < 0 or a.max_drain_s <= 0 or a.budget_s <= 0:
        p.error("--extra-gib must be >= 0, --max-drain-s and --budget-s > 0")
    return a


def make_extra(gib):
    """`gib` GiB of fp32 CPU tensors of 256 MiB (the last one smaller), filled
    from one random block: state that is on the host already."""
    n = int(gib * 2**30) // 4
    per = 64 * 2**20
    block = torch.randn(min(per, max(n, 1)))
    out, left = [], n
    while left > 0:
        k = min(per, left)
        t = torch.empty(k)
        t.copy_(block[:k])
        out.append(t)
        left -= k
    return out


def main(argv):
    """Returns 0, 1 if a variant failed, 2 on bad options or no CUDA device."""
    args = parse_args(argv)
    if not args.cpu_smoke and not torch.cuda.is_available():
        log("error: no CUDA device (use --cpu-smoke to test the logic on the CPU)")
        return 2
    os.makedirs(args.dir, exist_ok=True)
    out = sys.stdout if args.out == "-" else open(args.out, "w")
    t_begin = time.perf_counter()
    failed = False

    def emit(r):
        out.write(json.dumps(r, separators=(",", ":")) + "\n")
        out.flush()

    try:
        fork_pinned, detail = fork_sees_pinned() if not args.cpu_smoke else (None, "cpu smoke")
        machine = machine_record(args, fork_pinned, detail)
        emit(machine)
        log(f"{machine.get('gpu', 'CPU smoke')}, torch {machine['torch']}, "
            f"driver {machine.get('driver')}; forked child reads pinned memory: {fork_pinned} "
            f"({detail})")
        if args.raw_gib > 0:
            raw = os.path.join(args.dir, "raw.bin")
            mib = max(1, int(args.raw_gib * 1024))
            t, rc, tail = dd(["if=/dev/zero", f"of={raw}", "bs=1M", f"count={mib}",
                              "oflag=direct", "conv=fsync", "status=none"])
            remove(raw)
            emit({"kind": "disk-raw", "bytes": mib * 2**20, "write_s": t,
                  "write_bytes_per_s": mib * 2**20 / t, "dd_rc": rc, "dd_tail": tail})
            log(f"disk raw write (dd, O_DIRECT, fsync): {mib * 2**20 / t / 1e9:.2f} GB/s")
        job = Job(args)
        ctx = {"extra": None, "staging": {}, "fork_pinned": bool(fork_pinned),
               "dcp_error": dcp_setup(args.dir) if "dcp" in args.variants else None}
        if ctx["dcp_error"]:
            log(f"dcp: {ctx['dcp_error']}")
        with job.sdpa:
            t0 = time.perf_counter()
            for _ in range(args.warmup):
                job.new_batch()
                job.step()
            job.sync()
            log(f"{args.model if job.cuda else 'cpu-smoke'} micro-batch {args.micro_batch}: "
                f"warm-up {args.warmup} steps in {time.perf_counter() - t0:.1f} s")
            job.last_end = None
            samples = [job.timed() for _ in range(args.steps + 1)][1:]  # +1: a loop time each
            base = [s[1] for s in samples]
            bs = stats(base)
            bs["loop_median_s"] = statistics.median(s[4] for s in samples)
            state_bytes = tensor_bytes(job_state(job))
            emit({"kind": "baseline", "model": args.model if job.cuda else "cpu-smoke-mlp",
                  "parameters": job.parameters, "micro_batch": args.micro_batch,
                  "seq": g2.SEQ, "dtype": "bf16", "optimizer": "adamw-fused",
                  "sdpa": args.sdpa, "warmup": args.warmup, "steps": args.steps,
                  "sync": "per-step", "samples_s": base,
                  "wall_samples_s": [s[2] for s in samples],
                  "issue_samples_s": [s[3] for s in samples],
                  "loop_samples_s": [s[4] for s in samples],
                  "issue_median_s": statistics.median(s[3] for s in samples),
                  **bs, "state_bytes": state_bytes,
                  "loss_last": float(job.loss.item()) if job.loss is not None else None})
            log(f"baseline: median {bs['median_s'] * 1e3:.2f} ms (p10 {bs['p10_s'] * 1e3:.2f}, "
                f"p90 {bs['p90_s'] * 1e3:.2f}), state {state_bytes / 1e9:.2f} GB")
            summaries = []
            for i, name in enumerate(args.variants):
                if time.perf_counter() - t_begin > args.budget_s:
                    rec = {"kind": "drain-summary", "variant": name, "save": i, "ok": False,
                           "error": f"skipped: past --budget-s {args.budget_s:g}"}
                    emit(rec)
                    log(f"  {name}: skipped (budget)")
                    continue
                if name.endswith("-extra") and ctx["extra"] is None:
                    need = state_bytes + args.extra_gib * 2**30
                    free = shutil.disk_usage(args.dir).free
                    if free < 1.5 * need:
                        rec = {"kind": "drain-summary", "variant": name, "save": i, "ok": False,
                               "error": f"skipped: {free} bytes free on disk, need {need:.0f}"}
                        emit(rec)
                        failed = True
                        continue
                    a0 = time.perf_counter()
                    ctx["extra"] = make_extra(args.extra_gib)
                    log(f"extra state: {tensor_bytes(ctx['extra']) / 2**30:.2f} GiB on the host "
                        f"in {time.perf_counter() - a0:.1f} s")
                rec = run_variant(name, i, job, args, ctx, emit, bs)
                emit(rec)
                summaries.append(rec)
                # DCP's absence or refusal is recorded, not a failure of the probe.
                failed = failed or (not rec.get("ok") and not name.startswith("dcp"))
        log(f"{'variant':14} {'block ms':>8} {'drain s':>8} {'GB':>6} {'GB/s':>5} "
            f"{'steps':>5} {'med ms':>7} {'slow':>6} {'mean':>6} {'loop':>6} {'after':>6} "
            f"{'cost s':>6}")
        log(f"{'baseline':14} {'':8} {'':8} {'':6} {'':5} {args.steps:5d} "
            f"{bs['median_s'] * 1e3:7.1f}")
        for r in summaries:
            if "drain_s" not in r:
                log(f"{r['variant']:14} {r.get('error', '')}")
                continue
            log(f"{r['variant']:14} {r['blocking']['total_s'] * 1e3:8.0f} {r['drain_s']:8.2f} "
                f"{r['bytes'] / 1e9:6.2f} {(r['drain_bytes_per_s'] or 0) / 1e9:5.2f} "
                f"{r['steps_during']:5d} {r['during'].get('median_s', float('nan')) * 1e3:7.1f} "
                f"{r.get('slowdown', float('nan')):6.3f} "
                f"{r.get('slowdown_mean', float('nan')):6.3f} "
                f"{r.get('slowdown_loop_mean', float('nan')):6.3f} "
                f"{r.get('after_over_baseline', float('nan')):6.3f} "
                f"{r.get('cost_s', float('nan')):6.2f}")
    finally:
        if out is not sys.stdout:
            out.close()
    log(f"done in {time.perf_counter() - t_begin:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    rc = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    # A drain thread or DCP executor left running must not hold the exit.
    os._exit(rc)
