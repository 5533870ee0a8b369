"""Throwaway: a few launches of gptq_gemm_wg16 at M = 16, K = 8192, N = 28672, for ncu."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import gptq_weight  # noqa: E402
import gemm_tma_kernels as tk  # noqa: E402

m, k, n = 16, 8192, 28672
ws = [gptq_weight(tk.QuantWeight, k, n, 128) for _ in range(4)]
x = torch.randn(m, k, device="cuda", dtype=torch.float16)
part = torch.empty(tk.BLOCKS, 3, 2, 128, 4, device="cuda", dtype=torch.float32)
arr = torch.zeros((m + 63) // 64, (n + 63) // 64, device="cuda", dtype=torch.int32)
y = torch.empty(m, n, device="cuda", dtype=torch.float16)
for w in ws:
    tk.gptq_gemm_wg16(x, w, part, arr, y)
torch.cuda.synchronize()
