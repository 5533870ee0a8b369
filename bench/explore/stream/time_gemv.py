"""Throwaway: gptq_gemv (128-column blocks, tiles of 8 packed rows) against
gptq_gemv_narrow (16-column blocks) and gptq_gemm, at the rows of x given (1 by default),
on the decode layer's projection shapes (CUDA graphs cycling through weight sets larger
than L2; µs a launch, TB/s of qweight)."""
import os
import sys
import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import gptq_weight, graph_us  # noqa: E402
import decode_kernels as dk
import quant_kernels as qk
import gemm_kernels as gk

dev = "cuda"
G = 128


ms = [int(a) for a in sys.argv[1:]] or [1]
for k, n in [(4096, 6144), (4096, 4096), (4096, 28672), (14336, 4096), (8192, 28672)]:
    mb = k * n / 2 / 1e6
    ws = [gptq_weight(dk.QuantWeight, k, n, G) for _ in range(max(2, int(300 // mb) + 1))]
    for m in ms:
        x = torch.randn(m, k, device=dev, dtype=torch.float16)
        ys = [torch.empty(m, n, device=dev, dtype=torch.float16) for _ in range(3)]
        fs = [dk.gptq_gemv_narrow, qk.gptq_gemv, gk.gptq_gemm]
        ts = [graph_us(lambda w: f(x, w, y), [(w,) for w in ws]) for f, y in zip(fs, ys)]
        d = max((y.float() - ys[2].float()).abs().max().item() for y in ys)
        print(f"M={m} K={k} N={n} ({mb:.1f} MB): narrow {ts[0]:.1f} us ({mb / ts[0]:.2f} TB/s), gptq_gemv {ts[1]:.1f} ({mb / ts[1]:.2f}), gptq_gemm {ts[2]:.1f} ({mb / ts[2]:.2f}), max diff {d:.3g}", flush=True)
