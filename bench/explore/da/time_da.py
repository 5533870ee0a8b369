"""Throwaway: da.ima's variants (gen.py) against gptq_gemm, as CUDA graphs of launches
cycling through weight sets larger than L2 (µs a launch), outputs compared.
    python3 time_da.py [M,K,N ...]"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import shapes, variants_against  # noqa: E402
import da_kernels as da
import gemm_kernels as gk

cases = shapes([(16, 8192, 28672), (16, 4096, 28672), (32, 4096, 28672), (32, 4096, 4096), (32, 14336, 4096), (32, 4096, 6144),
                (64, 8192, 28672), (128, 8192, 28672)])
names = sorted(n for n in dir(da) if n.startswith("da") and n[2].isdigit() and not n.endswith("_output_shapes"))
if os.environ.get("DA_ONLY"):
    names = [n for n in names if n.startswith(os.environ["DA_ONLY"])]
variants_against(gk.gptq_gemm, {n: getattr(da, n) for n in names}, cases, gk.QuantWeight)
