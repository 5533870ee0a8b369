"""Throwaway: a few launches of gptq_gemm_wg at one shape, for ncu to profile one of them:
    python3 prof_wg.py M K N"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import gptq_weight, wg_workspace  # noqa: E402
import gemm_tma_kernels as tk

m, k, n = (int(a) for a in sys.argv[1:4])
ws = [gptq_weight(tk.QuantWeight, k, n, 128) for _ in range(4)]
x = torch.randn(m, k, device="cuda", dtype=torch.float16)
part, arrivals = wg_workspace(tk, m, n)
y = torch.empty(m, n, device="cuda", dtype=torch.float16)
for w in ws:
    tk.gptq_gemm_wg(x, w, part, arrivals, y)
torch.cuda.synchronize()
