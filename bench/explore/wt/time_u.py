"""Throwaway: gptq_gemm_wg (its shared tiles' sum unrolled by 2) against wt2.ima's u1 and u4
(gen2.py) and gptq_gemm, as CUDA graphs of launches cycling weight sets larger than L2 (µs a
launch), outputs compared with gptq_gemm_wg's.
    python3 -u time_u.py [M,K,N ...]"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import shapes, variants_against, wg_workspace  # noqa: E402
import gemm_kernels as gk  # noqa: E402
import gemm_tma_kernels as tk  # noqa: E402
import wt2_kernels as wk  # noqa: E402


def with_workspace(kernel):
    """kernel as f(x, w, y): its slots (scratch) and counters (zero, left zero) allocated
    once a shape."""
    spaces = {}

    def f(x, w, y):
        m, n = x.shape[0], y.shape[1]
        if (m, n) not in spaces:
            spaces[(m, n)] = wg_workspace(tk, m, n)
        part, arrivals = spaces[(m, n)]
        kernel(x, w, part, arrivals, y)
    return f


cases = shapes([(16, 512, 4096), (32, 4096, 4096), (32, 4096, 6144), (32, 14336, 4096), (32, 4096, 28672),
                (16, 8192, 28672), (32, 8192, 28672), (64, 8192, 28672), (128, 8192, 28672)])
variants_against(with_workspace(tk.gptq_gemm_wg),
                 {"u1": with_workspace(wk.u1), "u4": with_workspace(wk.u4), "gptq_gemm": gk.gptq_gemm},
                 cases, wk.QuantWeight)
