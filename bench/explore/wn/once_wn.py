"""Throwaway: one launch each of gptq_gemm, wn1, wn2 and wn4 at M = 16, K = 8192,
N = 28672, for ncu to count their L2 and DRAM bytes."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import gptq_weight  # noqa: E402
import gemm_kernels as gk
import wn_kernels as wk

m, k, n = (int(a) for a in (sys.argv[1:] or ["16", "8192", "28672"]))
w = gptq_weight(gk.QuantWeight, k, n)
x = torch.randn(m, k, device="cuda", dtype=torch.float16)
y = torch.empty(m, n, device="cuda", dtype=torch.float16)
for f in (gk.gptq_gemm, wk.wn1, wk.wn2, wk.wn4):
    f(x, w, y)
torch.cuda.synchronize()
