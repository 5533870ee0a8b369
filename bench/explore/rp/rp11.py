"""Throwaway, session 33: rp11.ima's s8 (repacked words), y8 (GPTQ's own words, s8's
scale after the MMA) and w8 (GPTQ's own words, tma_wg_frag's decode; gen11.py), twice in
turn. CUDA graphs cycling weight sets larger than L2, µs a launch; each output against
torch's f32 product of the dequantized weight (max err / max |y|).
    python3 -u rp11.py [M,K,N ...]"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import gptq_reference, graph_us, shapes, weight_sets, wg_workspace  # noqa: E402
import rp11_kernels as rk  # noqa: E402
from repack import weights  # noqa: E402

dev = "cuda"
FORMATS = {"rp": (rk.QuantWeight, True), "gptq": (rk.QuantWeight, False)}
KERNELS = {"s8": "rp", "y8": "gptq", "w8": "gptq"}

for m, k, n in shapes([(16, 8192, 28672), (16, 14336, 4096), (16, 4096, 28672), (8, 8192, 28672)]):
    ws = [weights(FORMATS, k, n) for _ in range(weight_sets(k, n))]
    x = torch.randn(m, k, device=dev, dtype=torch.float16)
    part, arr = wg_workspace(rk, m, n)
    ys = {nm: torch.empty(m, n, device=dev, dtype=torch.float16) for nm in KERNELS}
    ref = gptq_reference(x, ws[0]["gptq"], k, n)
    scale = ref.abs().max().item()
    row = []
    for rnd in range(2):
        for nm, fmt in KERNELS.items():
            f = getattr(rk, nm)
            t = graph_us(lambda w: f(x, w[fmt], part, arr, ys[nm]), [(w,) for w in ws])
            if rnd == 0:
                f(x, ws[0][fmt], part, arr, ys[nm])
                err = (ys[nm].float() - ref).abs().max().item() / scale
                row.append(f"{nm} {t:.1f} ({err:.1e})")
            else:
                row.append(f"{nm} {t:.1f}")
    print(f"M={m} K={k} N={n}: " + ", ".join(row), flush=True)
