"""Throwaway: gptq_gemm of the working tree (gemm_kernels) against the committed one
(gemm0_kernels, specs/gemm.ima of HEAD built under another name), as CUDA graphs of
launches cycling through weight sets larger than L2 (µs a launch); outputs compared.
    python3 time_new.py [release|deferred]"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import gptq_weight, graph_us, weight_sets  # noqa: E402
import gemm_kernels as gk
import gemm0_kernels as g0

mode = sys.argv[1] if len(sys.argv) > 1 else "release"
if mode == "deferred":
    for mod in (gk, g0):
        mod.set_checked("deferred")
dev = "cuda"
# (M, K, N, fused): the layer's projections at B = 32 and issue 21's shapes.
cases = [(16, 8192, 28672, 0), (32, 8192, 28672, 0), (64, 8192, 28672, 0), (128, 8192, 28672, 0),
         (32, 4096, 6144, 0), (32, 4096, 4096, 0), (32, 4096, 28672, 1), (32, 14336, 4096, 0),
         (16, 4096, 28672, 0), (9, 4096, 28672, 1), (2, 4096, 6144, 0)]
print(f"{mode}: M K N fused | HEAD | tree | tree / HEAD")
for m, k, n, fused in cases:
    nsets = weight_sets(k, n)
    g = 20 if n == 20 else 128
    ws = [gptq_weight(gk.QuantWeight, k, n, g) for _ in range(nsets)]
    x = torch.randn(m, k, device=dev, dtype=torch.float16)
    ny = n // 2 if fused else n
    y0 = torch.empty(m, ny, device=dev, dtype=torch.float16)
    y1 = torch.empty_like(y0)
    t0 = graph_us(lambda w: g0.gptq_gemm(x, w, y0), [(w,) for w in ws])
    t1 = graph_us(lambda w: gk.gptq_gemm(x, w, y1), [(w,) for w in ws])
    g0.gptq_gemm(x, ws[0], y0)
    gk.gptq_gemm(x, ws[0], y1)
    torch.cuda.synchronize()
    if mode == "deferred":
        gk.check_deferred()
    err = (y0.float() - y1.float()).abs().max().item()
    print(f"{m} {k} {n} {fused} | {t0:.1f} | {t1:.1f} | {t1 / t0:.3f} (max diff {err:.3g})", flush=True)
