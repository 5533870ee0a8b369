"""Throwaway, session 42 (issue 21): a few launches of one of diag.ima's kernels (or main's
gptq_gemm_wg16) at M = 16, K = 8192, N = 28672 on four weight sets, for ncu to profile the
fourth (bench/explore/prof/prof_d67.sh):
    python3 prof_d67.py main|d6_16|d7_16"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import gptq_weight, same_weight  # noqa: E402
import diag_kernels as dk  # noqa: E402
import gemm_tma_kernels as tk  # noqa: E402

m, k, n = 16, 8192, 28672
name = sys.argv[1]
ws = [gptq_weight(dk.QuantWeight, k, n) for _ in range(4)]
x = torch.randn(m, k, device="cuda", dtype=torch.float16)
part = torch.empty(dk.BLOCKS, 3, 2, 128, 4, device="cuda", dtype=torch.float32)
arrivals = torch.zeros((m + 63) // 64, (n + 63) // 64, device="cuda", dtype=torch.int32)
y = torch.empty(m, n, device="cuda", dtype=torch.float16)
for w in ws:
    if name == "main":
        tk.gptq_gemm_wg16(x, same_weight(tk, w), part, arrivals, y)
    else:
        getattr(dk, name)(x, w, part, arrivals, y)
torch.cuda.synchronize()
