"""Throwaway, session 32: rp9.ima's s8 and w8 (3 consumer warpgroups, tiles of 192
columns) against s9 and w9 (4 warpgroups, tiles of 256; gen9.py), on repacked words (s) and
GPTQ's own (w). CUDA graphs cycling weight sets larger than L2, µs a launch; each output
against torch's f32 product of the dequantized weight (max err / max |y|).
    python3 -u rp9.py [M,K,N ...]"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import gptq_reference, graph_us, shapes, weight_sets  # noqa: E402
import rp9_kernels as rk  # noqa: E402
from repack import weights  # noqa: E402

dev = "cuda"
FORMATS = {"rp": (rk.QuantWeight, True), "gptq": (rk.QuantWeight, False)}
KERNELS = {"s8": ("rp", 3), "s9": ("rp", 4), "w8": ("gptq", 3), "w9": ("gptq", 4)}

for m, k, n in shapes([(16, 8192, 28672), (16, 14336, 4096), (16, 4096, 4096), (8, 8192, 28672)]):
    ws = [weights(FORMATS, k, n) for _ in range(weight_sets(k, n))]
    x = torch.randn(m, k, device=dev, dtype=torch.float16)
    arr = torch.zeros((m + 63) // 64, (n + 63) // 64, device=dev, dtype=torch.int32)
    parts = {c: torch.empty(rk.BLOCKS, 2, c, 8, 128, 4, device=dev, dtype=torch.float32) for c in (3, 4)}
    ys = {nm: torch.empty(m, n, device=dev, dtype=torch.float16) for nm in KERNELS}
    row = []
    ref = gptq_reference(x, ws[0]["gptq"], k, n)
    scale = ref.abs().max().item()
    for nm, (fmt, c) in KERNELS.items():
        f = getattr(rk, nm)
        t = graph_us(lambda w: f(x, w[fmt], parts[c], arr, ys[nm]), [(w,) for w in ws])
        f(x, ws[0][fmt], parts[c], arr, ys[nm])
        err = (ys[nm].float() - ref).abs().max().item() / scale
        row.append(f"{nm} {t:.1f} ({err:.1e})")
    print(f"M={m} K={k} N={n}: " + ", ".join(row), flush=True)
