"""Throwaway: cj.ima's variants against gptq_gemm (and gptq_gemv_narrow at M <= 8), as CUDA
graphs of launches cycling through weight sets larger than L2 (µs a launch), with the
outputs compared with gptq_gemm's."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import shapes, variants_against  # noqa: E402
import decode_kernels as dk
import gemm_kernels as gk
import cj_kernels as cj

cases = shapes([(16, 8192, 28672), (32, 8192, 28672), (64, 8192, 28672),
                (16, 4096, 6144), (16, 4096, 4096), (16, 4096, 28672), (16, 14336, 4096),
                (32, 4096, 6144), (32, 4096, 4096), (32, 4096, 28672), (32, 14336, 4096),
                (1, 4096, 6144), (1, 4096, 4096), (1, 4096, 28672), (1, 14336, 4096), (5, 4096, 28672)])
VARIANTS = {n: getattr(cj, n) for n in dir(cj) if n.startswith("cj") and not n.endswith(("_shapes", "_out"))}
variants_against(gk.gptq_gemm, lambda m: {**VARIANTS, **({"gemv_narrow": dk.gptq_gemv_narrow} if m <= 8 else {})},
                 cases, dk.QuantWeight, tolerance=1e-2)
