#!/usr/bin/env python3
"""ckpt_probe.py - how fast PyTorch saves and loads a training checkpoint to
the machine's local disk, against the disk's raw sequential rate, as JSON
lines: the measurement behind capsim's checkpoint serialisation efficiency
(docs/model.md, "Checkpoints").

A checkpoint here is a state dict as a plain PyTorch training loop saves
one: bf16 or fp32 tensors of `--gib` GiB in all, in tensors of a layer's
size, moved from the GPU and written with torch.save (the default zipfile
serialisation), then fsync'd; the load reads it back with torch.load onto
the GPU. With --dcp, the same state dict is also saved with
torch.distributed.checkpoint (DCP) from the GPU. The raw rate: dd of the same bytes with O_DIRECT and fsync (write),
and a cold read. Page cache is dropped between where the machine lets us
(writing /proc/sys/vm/drop_caches needs root). Progress on stderr.

SPDX-License-Identifier: MIT (calibrate/LICENSE)
"""
import argparse, datetime, json, os, subprocess, sys, time
import torch


def log(m):
    print("ckpt_probe: " + m, file=sys.stderr, flush=True)


def drop_caches():
    try:
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return True
    except OSError:
        return False


def dd(args):
    t0 = time.perf_counter()
    r = subprocess.run(["dd"] + args, capture_output=True, text=True)
    return time.perf_counter() - t0, r.returncode, r.stderr.strip().splitlines()[-1:]


def state_dict(n, dtype):
    """n bytes of dtype tensors on the GPU, in tensors of a layer's size."""
    el = n // torch.tensor([], dtype=dtype).element_size()
    per = 4096 * 4096 * 3  # a layer's worth of elements
    sd, left, i = {}, el, 0
    while left > 0:
        k = min(per, left)
        sd[f"layer{i}"] = torch.randn(k, device="cuda").to(dtype)
        left -= k
        i += 1
    torch.cuda.synchronize()
    return sd


def torch_save(sd, d, dtype):
    """torch.save of sd moved to (pageable) host memory, fsync'd; torch.load back."""
    path = os.path.join(d, "ckpt.pt")
    t0 = time.perf_counter()
    cpu = {k: v.cpu() for k, v in sd.items()}
    t_d2h = time.perf_counter() - t0
    with open(path, "wb") as f:
        torch.save(cpu, f)
        f.flush()
        os.fsync(f.fileno())
    t_save = time.perf_counter() - t0
    size = os.path.getsize(path)
    del cpu
    dropped = drop_caches()
    t0 = time.perf_counter()
    back = torch.load(path, map_location="cuda")
    torch.cuda.synchronize()
    t_load = time.perf_counter() - t0
    ok = all(torch.equal(back[k], sd[k]) for k in sd)
    del back
    os.unlink(path)
    log(f"{dtype}: save {size / t_save / 1e9:.2f} GB/s (d2h {t_d2h:.1f} s of {t_save:.1f}), "
        f"load {size / t_load / 1e9:.2f} GB/s")
    return {"kind": "torch-checkpoint", "dtype": str(dtype).split(".")[-1], "tensors": len(sd),
            "dir": d, "bytes": size, "d2h_s": t_d2h, "save_s": t_save,
            "save_bytes_per_s": size / t_save, "load_s": t_load,
            "load_bytes_per_s": size / t_load, "roundtrip_equal": ok, "caches_dropped": dropped}


def dcp_save(sd, d, dtype, threads):
    """torch.distributed.checkpoint.save of the GPU state dict (one process, no
    process group), FileSystemWriter with `threads` writer threads and fsync."""
    import shutil
    import torch.distributed.checkpoint as dcp
    path = os.path.join(d, "dcp")
    shutil.rmtree(path, ignore_errors=True)
    t0 = time.perf_counter()
    dcp.save(sd, storage_writer=dcp.FileSystemWriter(path, thread_count=threads,
                                                     sync_files=True))
    t_save = time.perf_counter() - t0
    size = sum(os.path.getsize(os.path.join(path, f)) for f in os.listdir(path))
    shutil.rmtree(path, ignore_errors=True)
    log(f"{dtype}: dcp save, {threads} threads: {size / t_save / 1e9:.2f} GB/s")
    return {"kind": "dcp-checkpoint", "dtype": str(dtype).split(".")[-1], "tensors": len(sd),
            "dir": d, "threads": threads, "bytes": size, "save_s": t_save,
            "save_bytes_per_s": size / t_save}


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dir", default="/tmp/ckpt_probe")
    p.add_argument("--gib", type=float, default=8.0)
    p.add_argument("--out", default="-")
    p.add_argument("--dcp", action="store_true",
                   help="also time torch.distributed.checkpoint.save (--threads writer threads)")
    p.add_argument("--threads", default="1,4",
                   help="with --dcp: the writer thread counts to time, comma-separated (1,4)")
    p.add_argument("--repeat", type=int, default=1, help="torch.save and load this many times")
    p.add_argument("--dtypes", default="bfloat16,float32",
                   help="the state dicts' dtypes, comma-separated (bfloat16,float32)")
    a = p.parse_args(argv)
    os.makedirs(a.dir, exist_ok=True)
    out = sys.stdout if a.out == "-" else open(a.out, "w")
    n = int(a.gib * 2**30)
    df = subprocess.run(["df", "-T", a.dir], capture_output=True, text=True).stdout.splitlines()[-1]
    emit = lambda r: (out.write(json.dumps(r, separators=(",", ":")) + "\n"), out.flush())
    emit({"kind": "machine", "program": "ckpt_probe.py", "gpu": torch.cuda.get_device_name(0),
          "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
          "torch": torch.__version__, "dir": a.dir, "df": df, "argv": argv})
    raw = os.path.join(a.dir, "raw.bin")
    mib = n // 2**20
    t, rc, tail = dd(["if=/dev/zero", f"of={raw}", "bs=1M", f"count={mib}", "oflag=direct",
                      "conv=fsync", "status=none"])
    dropped = drop_caches()
    t2, rc2, _ = dd([f"if={raw}", "of=/dev/null", "bs=1M", "iflag=direct", "status=none"])
    emit({"kind": "disk-raw", "bytes": mib * 2**20, "write_s": t, "write_bytes_per_s": mib * 2**20 / t,
          "read_s": t2, "read_bytes_per_s": mib * 2**20 / t2, "dd_rc": [rc, rc2],
          "caches_dropped": dropped})
    log(f"raw write {mib * 2**20 / t / 1e9:.2f} GB/s, read {mib * 2**20 / t2 / 1e9:.2f} GB/s")
    os.unlink(raw)
    for dtype in (getattr(torch, d) for d in a.dtypes.split(",")):
        sd = state_dict(n, dtype)
        for _ in range(a.repeat):
            emit(torch_save(sd, a.dir, dtype))
        if a.dcp:
            for threads in (int(k) for k in a.threads.split(",")):
                emit(dcp_save(sd, a.dir, dtype, threads))
        del sd
        torch.cuda.empty_cache()
    if out is not sys.stdout:
        out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
