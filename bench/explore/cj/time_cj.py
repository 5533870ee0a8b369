"""Throwaway: cj.ima's variants against gptq_gemm (and gptq_gemv_narrow at M <= 8), as CUDA
graphs of launches cycling through weight sets larger than L2 (µs a launch), with the
outputs compared with gptq_gemm's."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import gptq_weight, graph_us  # noqa: E402
import decode_kernels as dk
import gemm_kernels as gk
import cj_kernels as cj

dev = "cuda"
G = 128
VARIANTS = [n for n in dir(cj) if n.startswith("cj") and not n.endswith("_shapes")]


cases = [(16, 8192, 28672), (32, 8192, 28672), (64, 8192, 28672),
         (16, 4096, 6144), (16, 4096, 4096), (16, 4096, 28672), (16, 14336, 4096),
         (32, 4096, 6144), (32, 4096, 4096), (32, 4096, 28672), (32, 14336, 4096),
         (1, 4096, 6144), (1, 4096, 4096), (1, 4096, 28672), (1, 14336, 4096), (5, 4096, 28672)]
if len(sys.argv) > 1:
    cases = [tuple(int(a) for a in c.split(",")) for c in sys.argv[1:]]
print("M K N | gptq_gemm | " + " | ".join(VARIANTS) + " | gemv_narrow")
for m, k, n in cases:
    nsets = min(64, max(2, int(300e6 // (k * n // 2)) + 1))
    ws = [gptq_weight(dk.QuantWeight, k, n, G) for _ in range(nsets)]
    x = torch.randn(m, k, device=dev, dtype=torch.float16)
    ref = torch.empty(m, n, device=dev, dtype=torch.float16)
    t_ref = graph_us(lambda w: gk.gptq_gemm(x, w, ref), [(w,) for w in ws])
    gk.gptq_gemm(x, ws[0], ref)
    row = [f"{t_ref:.1f}"]
    for v in VARIANTS:
        y = torch.empty_like(ref)
        f = getattr(cj, v)
        t = graph_us(lambda w: f(x, w, y), [(w,) for w in ws])
        f(x, ws[0], y)
        err = (y.float() - ref.float()).abs().max().item()
        row.append(f"{t:.1f}" + ("" if err < 1e-2 * max(1.0, ref.float().abs().max().item()) else f" (DIFF {err:.3g})"))
    if m <= 8:
        y = torch.empty_like(ref)
        t = graph_us(lambda w: dk.gptq_gemv_narrow(x, w, y), [(w,) for w in ws])
        row.append(f"{t:.1f}")
    else:
        row.append("-")
    print(f"{m} {k} {n} | " + " | ".join(row), flush=True)
