"""Throwaway (issue 22): decode.ima's rope_cache then paged.ima's paged_attn (two launches,
the layer's steps 3 and 4) against paged_attn_rope (gen.py: the two fused), on the decode
layer's heads and batches, as CUDA graphs cycling caches past L2 (µs a step). First each
batch's outputs and caches from both, which must agree: the same f16 roundings, so the
outputs should be equal but for the order of nothing (max |diff| printed), the caches
equal exactly.
    python3 -u time_ropeattn.py"""
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from paged_cases import BS, D, HKV, HQ, cache_mb, cache_sets, case  # noqa: E402
from timing import graph_us  # noqa: E402
import decode_kernels as dk  # noqa: E402
import paged_kernels as pk  # noqa: E402
import ropeattn_kernels as ra  # noqa: E402

dev = "cuda"
MAXPOS = 8192
inv = 1.0 / (500000.0 ** (torch.arange(0, D, 2, dtype=torch.float64) / D))
ang = torch.arange(MAXPOS, dtype=torch.float64)[:, None] * inv[None, :]
COS_SIN = torch.cat([ang.cos(), ang.sin()], dim=1).float().to(dev)


def step_case(lens, seed):
    c = case(lens, seed)
    b = len(lens)
    g = torch.Generator().manual_seed(seed)
    c["qkv"] = torch.randn(b, (HQ + 2 * HKV) * D, generator=g).half().to(dev)
    c["positions"] = torch.tensor([max(0, l - 1) for l in lens], dtype=torch.int64, device=dev)
    tables = c["tables"].cpu()
    c["slots"] = torch.tensor([int(tables[s, (l - 1) // BS]) * BS + (l - 1) % BS if l > 0 else -1
                               for s, l in enumerate(lens)], dtype=torch.int64, device=dev)
    return c


def unfused(c):
    dk.rope_cache(c["qkv"], c["positions"], COS_SIN, c["slots"], c["q"], c["k"], c["v"])
    pk.paged_attn(c["q"], c["k"], c["v"], c["tables"], c["lens"], c["part_o"], c["part_lse"], c["arrivals"], c["out"],
                  D ** -0.5)


def fused(c):
    ra.paged_attn_rope(c["qkv"], c["positions"], COS_SIN, c["slots"], c["k"], c["v"], c["tables"], c["lens"],
                       c["part_o"], c["part_lse"], c["arrivals"], c["out"], D ** -0.5)


print("case | MB | rope_cache + paged_attn | paged_attn_rope | out max |diff| | caches equal")
for name, lens in [("B=1 ctx 1024", [1024]), ("B=8 ctx 1024", [1024] * 8), ("B=32 ctx 1024", [1024] * 32),
                   ("B=32 ragged, a padding row", [1 + (i * 977) % 4096 for i in range(31)] + [0])]:
    mb = cache_mb(lens)
    c = step_case(lens, 0)
    k0, v0 = c["k"].clone(), c["v"].clone()
    unfused(c)
    out_u, k_u, v_u = c["out"].float().clone(), c["k"].clone(), c["v"].clone()
    c["k"].copy_(k0)
    c["v"].copy_(v0)
    fused(c)
    torch.cuda.synchronize()
    diff = (c["out"].float() - out_u).abs().max().item()
    same = torch.equal(c["k"], k_u) and torch.equal(c["v"], v_u)
    sets = [step_case(lens, i) for i in range(cache_sets(lens))]
    tu = graph_us(unfused, [(s,) for s in sets])
    tf = graph_us(fused, [(s,) for s in sets])
    assert not math.isnan(diff)
    print(f"{name} | {mb:.0f} | {tu:.1f} | {tf:.1f} | {diff:.1e} | {same}", flush=True)
