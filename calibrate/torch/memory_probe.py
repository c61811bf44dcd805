#!/usr/bin/env python3
"""memory_probe.py - peak GPU memory of training steps in plain PyTorch on one
GPU, phase by phase, as JSON lines: the measurements that capsim's memory
model (docs/model.md, "Memory per GPU") is checked against.

Two decoder families are written here, from the architectures of capsim's
models/ (no transformers library):
  llama: RMSNorm, RoPE, grouped-query attention, SwiGLU MLP, no biases,
         untied input and output embeddings (models/llama.xml);
  gpt:   LayerNorm, learned positions, multi-head attention, GELU (tanh) MLP
         of ffn, biases, tied embeddings (models/gpt.xml, models/megatron.xml).
Attention is F.scaled_dot_product_attention(is_causal=True) held to the flash
backend. Training runs as PyTorch's automatic mixed precision does it:
torch.autocast(bf16) around the forward and the loss, fp32 parameters (the
only copy of the weights), fp32 gradients and fused AdamW with two fp32
moments: 16 bytes a parameter of model states.

Recomputation: "none", or "full" (torch.utils.checkpoint around each block,
use_reentrant=False: a block keeps only its input for the backward).

For each point, on an emptied allocator with its peak reset:
  states_bytes            allocated after the model, optimizer states and one
                          step (weights, gradients, moments; token buffers)
  fwd_held_bytes          allocated after the forward and loss, less what was
                          allocated before it: what the forward keeps for the
                          backward (activations, logits and the loss's saved
                          tensors)
  peak_allocated_bytes    torch.cuda.max_memory_allocated over the measured
                          steps (the step's peak: states + held activations +
                          the backward's transients)
  peak_reserved_bytes     torch.cuda.max_memory_reserved (what the caching
                          allocator took from the device)
  device_used_bytes       device total less free after the steps (the CUDA
                          context, library workspaces, the allocator's pool)
The machine line records the device's memory as the CUDA runtime reports it:
total_memory, and free after the context was made (mem_get_info).

An out-of-memory point is recorded as such ("error") and the grid goes on:
that a configuration does not run is a measurement too. Progress on stderr.

SPDX-License-Identifier: MIT (calibrate/LICENSE)
"""

import argparse
import datetime
import gc
import json
import platform
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint


def log(msg):
    print("memory_probe: " + msg, file=sys.stderr, flush=True)


def first_line(e):
    s = str(e).strip()
    return s.splitlines()[0] if s else type(e).__name__


# ---- the models -------------------------------------------------------------


class RMSNorm(nn.Module):
    def __init__(self, h, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(h))

    def forward(self, x):
        return F.rms_norm(x, (x.shape[-1],), self.weight, self.eps)


def rope_tables(seq, head_dim, device, theta=500000.0):
    inv = 1.0 / (theta ** (torch.arange(0, head_dim, 2, device=device).float() / head_dim))
    t = torch.arange(seq, device=device).float()
    f = torch.outer(t, inv)
    return torch.cos(f), torch.sin(f)


def rope(x, cos, sin):
    # x: (b, heads, t, d); rotate pairs (even, odd halves)
    d = x.shape[-1] // 2
    x1, x2 = x[..., :d], x[..., d:]
    return torch.cat((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)


class LlamaBlock(nn.Module):
    def __init__(self, h, heads, kv_heads, ffn):
        super().__init__()
        self.heads, self.kv_heads, self.hd = heads, kv_heads, h // heads
        self.norm1 = RMSNorm(h)
        self.wq = nn.Linear(h, heads * self.hd, bias=False)
        self.wk = nn.Linear(h, kv_heads * self.hd, bias=False)
        self.wv = nn.Linear(h, kv_heads * self.hd, bias=False)
        self.wo = nn.Linear(heads * self.hd, h, bias=False)
        self.norm2 = RMSNorm(h)
        self.w1 = nn.Linear(h, ffn, bias=False)
        self.w3 = nn.Linear(h, ffn, bias=False)
        self.w2 = nn.Linear(ffn, h, bias=False)

    def forward(self, x, cos, sin):
        b, t, h = x.shape
        a = self.norm1(x)
        q = self.wq(a).view(b, t, self.heads, self.hd).transpose(1, 2)
        k = self.wk(a).view(b, t, self.kv_heads, self.hd).transpose(1, 2)
        v = self.wv(a).view(b, t, self.kv_heads, self.hd).transpose(1, 2)
        q, k = rope(q, cos, sin), rope(k, cos, sin)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                           enable_gqa=self.kv_heads != self.heads)
        x = x + self.wo(y.transpose(1, 2).reshape(b, t, h))
        m = self.norm2(x)
        return x + self.w2(F.silu(self.w1(m)) * self.w3(m))


class GptBlock(nn.Module):
    def __init__(self, h, heads, ffn):
        super().__init__()
        self.heads = heads
        self.ln_1 = nn.LayerNorm(h)
        self.c_attn = nn.Linear(h, 3 * h)
        self.c_proj = nn.Linear(h, h)
        self.ln_2 = nn.LayerNorm(h)
        self.c_fc = nn.Linear(h, ffn)
        self.mlp_proj = nn.Linear(ffn, h)

    def forward(self, x, cos=None, sin=None):
        b, t, h = x.shape
        hd = h // self.heads
        q, k, v = self.c_attn(self.ln_1(x)).split(h, dim=2)
        q = q.view(b, t, self.heads, hd).transpose(1, 2)
        k = k.view(b, t, self.heads, hd).transpose(1, 2)
        v = v.view(b, t, self.heads, hd).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.c_proj(y.transpose(1, 2).reshape(b, t, h))
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class Decoder(nn.Module):
    def __init__(self, c, seq):
        super().__init__()
        self.c = c
        h = c["hidden"]
        self.tok = nn.Embedding(c["vocab"], h)
        if c["arch"] == "llama":
            self.blocks = nn.ModuleList(LlamaBlock(h, c["heads"], c["kv_heads"], c["ffn"])
                                        for _ in range(c["layers"]))
            self.norm = RMSNorm(h)
            self.head = nn.Linear(h, c["vocab"], bias=False)
            self.pos = None
        else:
            self.blocks = nn.ModuleList(GptBlock(h, c["heads"], c["ffn"])
                                        for _ in range(c["layers"]))
            self.norm = nn.LayerNorm(h)
            self.head = None  # tied
            self.pos = nn.Embedding(seq, h)
        self.recompute = False
        self.cos = self.sin = None

    def forward(self, idx, targets):
        b, t = idx.shape
        x = self.tok(idx)
        if self.pos is not None:
            x = x + self.pos(torch.arange(t, device=idx.device))
        cos = sin = None
        if self.c["arch"] == "llama":
            if self.cos is None or self.cos.shape[0] != t:
                self.cos, self.sin = rope_tables(t, self.c["hidden"] // self.c["heads"],
                                                 idx.device)
            cos, sin = self.cos, self.sin
        for blk in self.blocks:
            if self.recompute:
                x = checkpoint(blk, x, cos, sin, use_reentrant=False)
            else:
                x = blk(x, cos, sin)
        x = self.norm(x)
        w = self.head.weight if self.head is not None else self.tok.weight
        logits = F.linear(x, w)
        return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), targets.view(-1))


# ---- a point --------------------------------------------------------------------


def free_gpu():
    gc.collect()
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()


def parameters(m):
    return sum(p.numel() for p in m.parameters())


def measure(c, seq, mb, recompute, steps):
    with torch.device("cuda"):  # built on the GPU: a 7B model's CPU init takes minutes
        model = Decoder(c, seq)
    model.recompute = recompute == "full"
    n = parameters(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    x = torch.randint(0, c["vocab"], (mb, seq), device="cuda")
    y = torch.randint(0, c["vocab"], (mb, seq), device="cuda")
    fwd_held = []
    times = []

    def step(record):
        opt.zero_grad(set_to_none=True)
        before = torch.cuda.memory_allocated()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(x, y)
        if record:
            torch.cuda.synchronize()
            fwd_held.append(torch.cuda.memory_allocated() - before)
        loss.backward()
        opt.step()
        return loss

    with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.FLASH_ATTENTION):
        step(False)  # optimizer states exist from here on
        torch.cuda.synchronize()
        opt.zero_grad(set_to_none=True)
        states = torch.cuda.memory_allocated()  # weights + moments (+ tokens)
        torch.cuda.reset_peak_memory_stats()
        for _ in range(steps):
            t0 = time.perf_counter()
            loss = step(True)
            torch.cuda.synchronize()
            times.append(time.perf_counter() - t0)
        peak_alloc = torch.cuda.max_memory_allocated()
        peak_resv = torch.cuda.max_memory_reserved()
        free_b, total_b = torch.cuda.mem_get_info()
        last = loss.item()
    del model, opt, x, y
    return {
        "parameters": n,
        "states_bytes": states,
        "fwd_held_bytes": max(fwd_held),
        "peak_allocated_bytes": peak_alloc,
        "peak_reserved_bytes": peak_resv,
        "device_used_bytes": total_b - free_b,
        "step_s": sorted(times)[len(times) // 2],
        "loss_last": last,
    }


def run_point(c, seq, mb, recompute, steps):
    base = {"kind": "torch-memory", **c, "seq": seq, "micro_batch": mb,
            "recompute": recompute, "dtype": "bf16", "recipe": "torch-amp",
            "optimizer": "adamw-fused", "steps": steps}
    free_gpu()
    try:
        rec = dict(base, **measure(c, seq, mb, recompute, steps))
    except torch.cuda.OutOfMemoryError as e:
        rec = dict(base, error="out of memory", message=first_line(e),
                   peak_allocated_bytes=torch.cuda.max_memory_allocated(),
                   peak_reserved_bytes=torch.cuda.max_memory_reserved())
    free_gpu()
    return rec


# ---- the grid ----------------------------------------------------------------------

# Architectures from capsim's models/ (their sources there). `layers` is cut
# where a whole model would not fit one GPU: memory per layer is what is
# checked, and the model states follow from the parameters.
LLAMA3_8B = {"arch": "llama", "hidden": 4096, "heads": 32, "kv_heads": 8, "ffn": 14336,
             "vocab": 128256}
LLAMA2_7B = {"arch": "llama", "hidden": 4096, "heads": 32, "kv_heads": 32, "ffn": 11008,
             "vocab": 32000}
GPT3_6B7 = {"arch": "gpt", "hidden": 4096, "heads": 32, "kv_heads": 32, "ffn": 16384,
            "vocab": 50257}
GPT2_355M = {"arch": "gpt", "hidden": 1024, "heads": 16, "kv_heads": 16, "ffn": 4096,
             "vocab": 50257}


def grid(quick, edge=False, device_bytes=0):
    g = []
    def add(name, c, layers, seq, mb, rc):
        g.append((dict(c, model=name, layers=layers), seq, mb, rc))
    if edge and device_bytes < 100 * 2**30:
        # at and past the edge of an 80 GB H100: Llama 2 7B cut to 16-20
        # layers holds about 15 GiB of states and 1.2 GiB of activations a
        # layer at 4096 tokens (the whole model's 75.4 and 37.7 GiB on the
        # H200), so 16 layers lands near the capacity and 18, 20 or a
        # second micro-batch past it
        for layers in (16, 18, 20):
            add("llama-2-7b", LLAMA2_7B, layers, 4096, 1, "none")
        add("llama-2-7b", LLAMA2_7B, 16, 4096, 2, "none")
        add("llama-2-7b", LLAMA2_7B, 32, 4096, 1, "full")
        return g
    if edge:
        # past the edge of a 141 GB H200: the 6.7B GPT's activations grow
        # about 10 GiB a micro-batch from 107 GiB at 2 to 128 GiB at 4, so 5
        # lands at the capacity and 6 past it; the whole Llama 2 7B held
        # 37.7 GiB of activations at 4096 tokens, so twice that cannot fit
        for mb in (5, 6):
            add("gpt3-6.7b", GPT3_6B7, 32, 2048, mb, "none")
        add("llama-2-7b", LLAMA2_7B, 32, 4096, 2, "none")
        add("llama-2-7b", LLAMA2_7B, 32, 8192, 1, "none")
        add("llama-3-8b", LLAMA3_8B, 32, 8192, 1, "full")
        return g
    if quick:
        add("gpt2-355m", GPT2_355M, 24, 1024, 4, "none")
        add("llama-3-8b", LLAMA3_8B, 2, 2048, 1, "none")
        return g
    # activations per layer: layers 2 and 4 (the difference is one layer's)
    for layers in (2, 4):
        for seq, mb in ((2048, 1), (4096, 1), (8192, 1), (4096, 2)):
            for rc in ("none", "full"):
                add("llama-3-8b", LLAMA3_8B, layers, seq, mb, rc)
    for seq, mb in ((4096, 1), (4096, 4)):
        for rc in ("none", "full"):
            add("llama-2-7b", LLAMA2_7B, 4, seq, mb, rc)
    # whole models near the device's capacity
    for mb in (1, 2, 4):
        for rc in ("none", "full"):
            add("gpt3-6.7b", GPT3_6B7, 32, 2048, mb, rc)
    for mb in (1, 2):
        add("llama-2-7b", LLAMA2_7B, 32, 4096, mb, "full")
    for mb in (4, 8, 16):
        add("gpt2-355m", GPT2_355M, 24, 1024, mb, "none")
    # whole 7B and 8B Llamas at the edge of the device (points 32-35)
    for seq in (2048, 4096):
        add("llama-3-8b", LLAMA3_8B, 32, seq, 1, "full")
    for seq in (2048, 4096):
        add("llama-2-7b", LLAMA2_7B, 32, seq, 1, "none")
    return g


def machine_record(argv):
    props = torch.cuda.get_device_properties(0)
    torch.cuda.init()
    torch.zeros(1, device="cuda")  # make the context
    free_b, total_b = torch.cuda.mem_get_info()
    return {
        "kind": "machine", "program": "memory_probe.py",
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "gpu": torch.cuda.get_device_name(0), "cc": f"{props.major}.{props.minor}",
        "sms": props.multi_processor_count, "memory_bytes": props.total_memory,
        "mem_get_info_total_bytes": total_b, "free_after_context_bytes": free_b,
        "torch": torch.__version__, "cuda": torch.version.cuda,
        "python": platform.python_version(), "argv": argv,
    }


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="-")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--edge", action="store_true",
                   help="points at and past the device's capacity (out-of-memory expected)")
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--points", default="",
                   help="FIRST:LAST, 1-based and inclusive: a part of the grid (default: all)")
    a = p.parse_args(argv)
    if not torch.cuda.is_available():
        log("error: no CUDA device")
        return 2
    out = sys.stdout if a.out == "-" else open(a.out, "w")
    t0 = time.perf_counter()
    try:
        def emit(r):
            out.write(json.dumps(r, separators=(",", ":")) + "\n")
            out.flush()
        emit(machine_record(argv))
        points = grid(a.quick, a.edge, torch.cuda.get_device_properties(0).total_memory)
        lo, hi = 1, len(points)
        if a.points:
            lo, hi = (int(x) for x in a.points.split(":"))
        for i, (c, seq, mb, rc) in enumerate(points):
            if not lo <= i + 1 <= hi:
                continue
            log(f"[{i + 1}/{len(points)}] {c['model']} x{c['layers']} seq {seq} mb {mb} "
                f"recompute {rc}")
            r = run_point(c, seq, mb, rc, a.steps)
            emit(r)
            if "error" in r:
                log(f"  {r['error']}")
            else:
                log(f"  peak {r['peak_allocated_bytes'] / 2**30:.2f} GiB allocated, "
                    f"{r['peak_reserved_bytes'] / 2**30:.2f} reserved, "
                    f"states {r['states_bytes'] / 2**30:.2f}, "
                    f"forward holds {r['fwd_held_bytes'] / 2**30:.2f}")
    finally:
        if out is not sys.stdout:
            out.close()
    log(f"done in {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
