"""Throwaway: xs.ima's kernels against gptq_gemm (whose 16-row path loads x from L2 each
step), as CUDA graphs of launches cycling through weight sets larger than L2 (µs a
launch), each output compared with gptq_gemm's.
    python3 time_xs.py [M,K,N ...]"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import shapes, variants_against  # noqa: E402
import gemm_kernels as gk
import xs_kernels as xk

cases = shapes([(16, 8192, 28672), (16, 4096, 28672), (16, 4096, 6144), (32, 4096, 4096), (32, 14336, 4096), (9, 4096, 28672), (16, 14336, 4096)])
variants = {n: getattr(xk, n) for n in dir(xk) if n.startswith("xs_") and not n.endswith(("_shapes", "_out"))}
variants_against(gk.gptq_gemm, variants, cases, gk.QuantWeight)
