"""Throwaway: xs.ima's kernels against gptq_gemm (whose 16-row path loads x from L2 each
step), as CUDA graphs of launches cycling through weight sets larger than L2 (µs a
launch), each output compared with gptq_gemm's.
    python3 time_xs.py [M,K,N ...]"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import gptq_weight, graph_us  # noqa: E402
import gemm_kernels as gk
import xs_kernels as xk

dev = "cuda"
VARIANTS = [n for n in dir(xk) if n.startswith("xs_") and not n.endswith("_shapes") and not n.endswith("_out")]
cases = [(16, 8192, 28672), (16, 4096, 28672), (16, 4096, 6144), (32, 4096, 4096), (32, 14336, 4096), (9, 4096, 28672), (16, 14336, 4096)]
if len(sys.argv) > 1:
    cases = [tuple(int(a) for a in c.split(",")) for c in sys.argv[1:]]
print("M K N | gptq_gemm | " + " | ".join(VARIANTS))
for m, k, n in cases:
    nsets = min(64, max(2, int(300e6 // (k * n // 2)) + 1))
    ws = [gptq_weight(gk.QuantWeight, k, n, 128) for _ in range(nsets)]
    x = torch.randn(m, k, device=dev, dtype=torch.float16)
    ref = torch.empty(m, n, device=dev, dtype=torch.float16)
    t_ref = graph_us(lambda w: gk.gptq_gemm(x, w, ref), [(w,) for w in ws])
    gk.gptq_gemm(x, ws[0], ref)
    row = [f"{t_ref:.1f}"]
    for v in VARIANTS:
        y = torch.empty_like(ref)
        f = getattr(xk, v)
        t = graph_us(lambda w: f(x, w, y), [(w,) for w in ws])
        f(x, ws[0], y)
        err = (y.float() - ref.float()).abs().max().item()
        row.append(f"{t:.1f}" + ("" if err < 2e-2 * max(1.0, ref.float().abs().max().item()) else f" (DIFF {err:.3g})"))
    print(f"{m} {k} {n} | " + " | ".join(row), flush=True)
