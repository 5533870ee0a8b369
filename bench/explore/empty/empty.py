"""Throwaway, session 41 (issue 22): what paged_attn's blocks without work cost. The decode
layer's bench holds block tables of a capacity of 4096 tokens (P = 256 pages of 16), so
that its grid has ceil(P * BS / PART) = 32 runs a (KV head, sequence) pair, of which a
context of 1024 gives 3 blocks work (runs of 3) and 29 return at once. Here the same
batches with tables of 64, 128 and 256 pages (the same partitions at B = 32: runs of 3 in
each), as graphs cycling caches (paged_cases.compare), µs a launch.
    python3 -u empty.py"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import paged_cases as pc  # noqa: E402
import paged_kernels as pk  # noqa: E402


def padded(p):
    """paged_attn with its block tables widened to p pages (zeros past a sequence's own, which
    it does not read) and its workspace sized for them."""
    def f(q, k, v, tables, lens, part_o, part_lse, arrivals, out, scale):
        b, w = tables.shape
        t = torch.zeros(b, p, dtype=torch.int32, device=tables.device)
        t[:, :w] = tables
        parts = (p * pc.BS + 127) // 128
        po = torch.empty(b, pc.HQ, parts, pc.D, device=q.device)
        pl = torch.empty(b, pc.HQ, parts, device=q.device)
        pk.paged_attn(q, k, v, t, lens, po, pl, arrivals, out, scale)
    return f


for name, lens in [("B=32 ctx 1024", [1024] * 32), ("B=32 ctx 512", [512] * 32), ("B=1 ctx 1024", [1024])]:
    pc.compare({name: lens}, {f"P={p}": padded(p) for p in (64, 128, 256)})
