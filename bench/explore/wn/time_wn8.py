"""Throwaway: wn8.ima's kernel (gptq_gemm with blocks of 256 columns where the tree's takes
128) and r16 (blocks of 16 rows at every M) against gptq_gemm, as CUDA graphs over weight
sets larger than L2 (µs a launch)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import variants_against  # noqa: E402
import gemm_kernels as gk
import wn8_kernels as w8

cases = [(16, 8192, 28672), (16, 4096, 28672), (32, 4096, 28672), (8, 4096, 28672), (32, 8192, 28672), (64, 8192, 28672), (128, 8192, 28672), (32, 14336, 4096)]
variants_against(gk.gptq_gemm, {"wn8": w8.wn8, "r16": w8.r16}, cases, gk.QuantWeight)
