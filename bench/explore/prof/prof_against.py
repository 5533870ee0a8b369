"""Throwaway (issue 21): a few launches of gptq_gemm_wg16 at M = 16, K = 8192, N = 28672 on
four weight sets, from the tree's gemm_tma wheel (main) or a patched one (gemm_tma_NAME,
bench/explore/patched-wheels.sh), for ncu to profile the fourth (prof_against.sh):
    python3 prof_against.py main|NAME"""
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import gptq_weight, same_weight  # noqa: E402
import gemm_tma_kernels as tk  # noqa: E402

m, k, n = 16, 8192, 28672
name = sys.argv[1]
pkg = tk if name == "main" else importlib.import_module(f"gemm_tma_{name}_kernels")
ws = [same_weight(pkg, gptq_weight(tk.QuantWeight, k, n)) for _ in range(4)]
x = torch.randn(m, k, device="cuda", dtype=torch.float16)
part = torch.empty(tk.BLOCKS, 3, 2, 128, 4, device="cuda", dtype=torch.float32)
arrivals = torch.zeros((m + 63) // 64, (n + 63) // 64, device="cuda", dtype=torch.int32)
y = torch.empty(m, n, device="cuda", dtype=torch.float16)
for w in ws:
    pkg.gptq_gemm_wg16(x, w, part, arrivals, y)
torch.cuda.synchronize()
