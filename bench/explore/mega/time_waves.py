"""Throwaway: gptq_gemm at M = 16, K = 8192 over widths N that make 224 (the widest W of
issue 21), 264, 330 and 396 blocks of 128 columns (WN = 4: N >= 25600 at 16 rows), as CUDA graphs cycling
weight sets larger than L2 (µs a launch, and the weights' TB/s). If an SM with two blocks
sets the pace, 224 blocks (40 SMs with one) take as long as 264.
    python3 time_waves.py"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import gptq_weight, graph_us  # noqa: E402
import gemm_kernels as gk

m, k = 16, 8192
for blocks in (224, 264, 330, 396):
    n = blocks * 128
    nsets = max(2, int(300e6 // (k * n // 2)) + 1)
    ws = [gptq_weight(gk.QuantWeight, k, n) for _ in range(nsets)]
    x = torch.randn(m, k, device="cuda", dtype=torch.float16)
    y = torch.empty(m, n, device="cuda", dtype=torch.float16)
    t = graph_us(lambda w: gk.gptq_gemm(x, w, y), [(w,) for w in ws])
    print(f"N={n} ({blocks} blocks): {t:.1f} us, {k * n / 2 / t / 1e6:.2f} TB/s of qweight", flush=True)
