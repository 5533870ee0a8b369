"""Throwaway, session 29 for the next: rp8.ima's s5 (rp16b_s5) and s8 (its shared tiles'
arrivals delegated to warps of the producer's warpgroup, lo always summing; gen8.py), CUDA
graphs cycling weight sets larger than L2, µs a launch, and s8's output against s5's (the
same products, summed in another order).
    python3 -u rp8.py [M,K,N ...]"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import graph_us, shapes, weight_sets, wg_workspace  # noqa: E402
import rp8_kernels as rk  # noqa: E402
from repack import weights  # noqa: E402

dev = "cuda"
FORMATS = {"rp": (rk.QuantWeight, True)}

for m, k, n in shapes([(16, 8192, 28672), (16, 14336, 4096), (16, 4096, 4096), (8, 8192, 28672)]):
    ws = [weights(FORMATS, k, n) for _ in range(weight_sets(k, n))]
    x = torch.randn(m, k, device=dev, dtype=torch.float16)
    part, arr = wg_workspace(rk, m, n)
    ys = {nm: torch.empty(m, n, device=dev, dtype=torch.float16) for nm in ("s5", "s8")}
    calls = {nm: (lambda f, y: lambda w: f(x, w["rp"], part, arr, y))(getattr(rk, nm), ys[nm]) for nm in ys}
    row = [f"{nm} {graph_us(f, [(w,) for w in ws]):.1f}" for nm, f in calls.items()]
    for f in calls.values():
        f(ws[0])
    ref = ys["s5"].float()
    err = (ys["s8"].float() - ref).abs().max().item() / max(1.0, ref.abs().max().item())
    print(f"M={m} K={k} N={n}: " + ", ".join(row) + f" | s8 against s5, max err / max |y|: {err:.1e}", flush=True)
