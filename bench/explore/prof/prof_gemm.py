"""Throwaway: a few launches of gptq_gemm at one shape, for ncu to profile one of them:
    python3 prof_gemm.py M K N [fused]
(fused: y half as wide as W, the gate/up projection with SiluAndMul)."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import gptq_weight  # noqa: E402
import gemm_kernels as gk

m, k, n = (int(a) for a in sys.argv[1:4])
fused = len(sys.argv) > 4
ws = [gptq_weight(gk.QuantWeight, k, n, 128) for _ in range(4)]
x = torch.randn(m, k, device="cuda", dtype=torch.float16)
y = torch.empty(m, n // 2 if fused else n, device="cuda", dtype=torch.float16)
for w in ws:
    gk.gptq_gemm(x, w, y)
torch.cuda.synchronize()
