"""Throwaway: sk2.ima's stream-K form of gptq_gemm's 16-row WN = 4 path against gptq_gemm,
as CUDA graphs of launches cycling through weight sets larger than L2 (µs a launch),
outputs compared (DIFF if not). N = 33792 makes gptq_gemm 264 blocks, already even.
    python3 time_sk2.py"""
import functools
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import variants_against  # noqa: E402
import gemm_kernels as gk
import sk2_kernels as sk


@functools.cache
def workspace(n):
    return (torch.zeros(264, 2, 16, 128, device="cuda", dtype=torch.float32),
            torch.zeros(n // 128, device="cuda", dtype=torch.int32))


cases = [(16, 8192, 28672), (16, 4096, 28672), (8, 8192, 28672), (1, 8192, 28672), (16, 8192, 33792), (16, 14336, 4096),
         (16, 4096, 6144)]
variants_against(gk.gptq_gemm, {"sk2": lambda x, w, y: sk.sk2(x, w, *workspace(y.shape[1]), y)}, cases, gk.QuantWeight)
