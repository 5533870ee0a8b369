"""Throwaway, session 41 (issue 22): paged_attn's partitions on tables of 4096 tokens
(P = 256 pages of 16, the decode layer's bench: a CUDA graph's capacity), built once
outside the timed graphs. 3402a6c's rule from the grid (pold, also on tables as wide as
the longest sequence: "tight"); the rule from each sequence's length with the grid as
before (pl.patch); the same with the partitions the grid's slowest dimension (pz.patch);
specs/paged.ima, the rule from the length with the grid capped at BLOCKS blocks over the
pairs; and (prepared in session 41, not run) pzc.patch, the capped grid with its blocks'
order partition-major where the pairs are fewer than 128. build.sh makes their wheels.
Graphs cycling caches, µs a launch; outputs against the first's.
    python3 -u ab.py"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import paged_cases as pc  # noqa: E402
import paged_kernels  # noqa: E402
import pl_kernels  # noqa: E402
import pold_kernels  # noqa: E402
import pz_kernels  # noqa: E402
import pzc_kernels  # noqa: E402
from timing import graph_us  # noqa: E402


def wide(c, p=256):
    """Case c with its block tables widened to p pages (zeros past a sequence's own, which
    are not read) and its workspace sized for them."""
    b, w = c["tables"].shape
    t = torch.zeros(b, p, dtype=torch.int32, device=pc.dev)
    t[:, :w] = c["tables"]
    parts = (p * pc.BS + 127) // 128
    return dict(c, tables=t, part_o=torch.zeros(b, pc.HQ, parts, pc.D, device=pc.dev),
                part_lse=torch.zeros(b, pc.HQ, parts, device=pc.dev))


kernels = {"old tight": (pold_kernels, False), "old": (pold_kernels, True), "len": (pl_kernels, True),
           "len, z": (pz_kernels, True), "len, capped": (paged_kernels, True), "capped, order": (pzc_kernels, True)}
cases = pc.batches()
cases["B=32 ctx 512"] = [512] * 32
cases["B=4 ctx 1024"] = [1024] * 4
print("case | MB | " + " | ".join(kernels))
for name, lens in cases.items():
    mb = pc.cache_mb(lens)
    tight = [pc.case(lens, i) for i in range(pc.cache_sets(lens))]
    wides = [wide(c) for c in tight]
    ref, row = None, []
    for mod, is_wide in kernels.values():
        sets = wides if is_wide else tight
        f = mod.paged_attn
        t = graph_us(lambda c: pc.call(f, c), [(c,) for c in sets])
        pc.call(f, sets[0])
        o = sets[0]["out"].float().clone()
        ref = o if ref is None else ref
        err = (o - ref).abs().max().item()
        row.append(f"{t:.1f}" + ("" if err < 2e-3 else f" (DIFF {err:.2g})"))
    print(f"{name} | {mb:.0f} | " + " | ".join(row), flush=True)
