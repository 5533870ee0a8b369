"""Throwaway, session 32: rp10.ima's s8 (repacked decode) and its pipeline with idle
consumers (i8: the tile ends kept; j8 and k8: lo not waiting, not loading; n8: no tile ends; x8: no x either; gen10.py), CUDA graphs
cycling weight sets larger than L2, µs a launch and the weights' TB/s (qweight, scales,
zeros), each printed as it is measured.
    python3 -u rp10.py [M,K,N ...]"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import graph_us, shapes, weight_sets, wg_workspace  # noqa: E402
import rp10_kernels as rk  # noqa: E402
from repack import weights  # noqa: E402

dev = "cuda"
FORMATS = {"rp": (rk.QuantWeight, True)}
for m, k, n in shapes([(16, 8192, 28672)]):
    ws = [weights(FORMATS, k, n) for _ in range(weight_sets(k, n))]
    x = torch.randn(m, k, device=dev, dtype=torch.float16)
    part, arr = wg_workspace(rk, m, n)
    y = torch.empty(m, n, device=dev, dtype=torch.float16)
    nbytes = k * n // 2 + (k // 128) * n * 2 + (k // 128) * n // 2
    for nm in ("i8", "j8", "k8", "n8", "i8", "j8", "k8", "n8"):
        f = getattr(rk, nm)
        # j8 and k8 leave their counts dirty (lo does not wait for them): their own.
        a = arr if nm not in ("j8", "k8") else torch.zeros_like(arr)
        t = graph_us(lambda w: f(x, w["rp"], part, a, y), [(w,) for w in ws])
        print(f"M={m} K={k} N={n} {nm}: {t:.1f} us ({nbytes / t / 1e6:.2f} TB/s)", flush=True)
