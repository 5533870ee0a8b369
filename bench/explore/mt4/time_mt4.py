"""Throwaway: mt4.ima's kernels of 64 rows a block (gen.py) against gptq_gemm (mt4.ima's
`base`, the same code), as CUDA graphs of launches cycling through weight sets larger than
L2 (µs a launch), outputs compared.
    python3 -u time_mt4.py [M,K,N ...]"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import shapes, variants_against  # noqa: E402
import mt4_kernels as mk  # noqa: E402

cases = shapes([(64, 8192, 28672), (128, 8192, 28672), (64, 4096, 28672), (48, 8192, 28672), (64, 14336, 4096),
                (64, 4096, 6144), (100, 4096, 4104), (33, 4096, 4096), (32, 4096, 28672), (16, 8192, 28672)])
variants_against(mk.base, {"mt4l": mk.mt4l, "mt4l1": mk.mt4l1}, cases, mk.QuantWeight)
