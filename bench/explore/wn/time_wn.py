"""Throwaway: wn.ima's kernels (gptq_gemm's warps split WN ways across columns, blocks of
32 WN columns) against gptq_gemm, as CUDA graphs of launches cycling through weight sets
larger than L2 (µs a launch), each output compared with gptq_gemm's. Shapes: issue 21's
M = 16, 64, 128 at K = 8192, N = 28672, and the decode layer's projections at B = 32
(gate/up unfused here).
    python3 time_wn.py [M,K,N ...]"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import shapes, variants_against  # noqa: E402
import gemm_kernels as gk
import wn_kernels as wk

try:  # the same kernels built with the weights' loads not allocating in L1
    import wna_kernels as wka
except ImportError:
    wka = None

cases = shapes([(16, 8192, 28672), (64, 8192, 28672), (128, 8192, 28672), (32, 4096, 28672), (32, 14336, 4096), (32, 4096, 6144), (32, 4096, 4096), (16, 4096, 28672), (48, 8192, 28672), (8, 4096, 28672), (16, 4096, 6144)])
variants = {n: getattr(wk, n) for n in ("wn1", "wn2", "wn4")}
if wka:
    variants.update({n: getattr(wka, n) for n in ("wna1", "wna2", "wna4")})
variants_against(gk.gptq_gemm, variants, cases, gk.QuantWeight)
