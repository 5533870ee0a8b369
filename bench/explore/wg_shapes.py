"""Throwaway: gptq_gemm_wg against gptq_gemm on the decode layer's projection shapes, as
CUDA graphs of launches cycling through weight sets larger than L2 (µs a launch)."""
import sys
import torch
import decode_kernels as dk
import gemm_kernels as gk
import gemm_tma_kernels as tk
from timing import gptq_weight, graph_us, wg_workspace

dev = "cuda"
G = 128


shapes = [(4096, 6144), (4096, 4096), (4096, 28672), (14336, 4096), (8192, 28672),
          (4096 * 4, 4096), (4096, 4096 * 4), (1024, 4096), (512, 4096)]
# With M K N: that shape alone (for ncu).
cases = [(m, k, n) for m in (16, 32) for k, n in shapes]
if len(sys.argv) == 4:
    cases = [tuple(int(a) for a in sys.argv[1:])]
for m, k, n in cases:
    nsets = min(64, max(2, int(200e6 // (k * n // 2)) + 1))
    ws = [gptq_weight(dk.QuantWeight, k, n, G) for _ in range(nsets)]
    x = torch.randn(m, k, device=dev, dtype=torch.float16)
    y = torch.empty(m, n, device=dev, dtype=torch.float16)
    part, arr = wg_workspace(tk, m, n)
    t_wg = graph_us(lambda w: tk.gptq_gemm_wg(x, w, part, arr, y), [(w,) for w in ws])
    y2 = torch.empty_like(y)
    t_mma = graph_us(lambda w: gk.gptq_gemm(x, w, y2), [(w,) for w in ws])
    tk.gptq_gemm_wg(x, ws[0], part, arr, y)
    gk.gptq_gemm(x, ws[0], y2)
    err = (y.float() - y2.float()).abs().max().item()
    units = -(-m // 64) * -(-n // 192) * -(-k // 256)
    print(f"M={m} K={k} N={n}: units {units} ({units / 132:.1f} a block), wg {t_wg:.1f} us, gptq_gemm {t_mma:.1f} us, max diff {err:.3g}", flush=True)
