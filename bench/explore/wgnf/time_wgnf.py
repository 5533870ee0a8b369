"""Throwaway: wgnf.ima's gptq_gemm_wg without its fused epilogue (gen.py) against the kernel
itself (`base`), as CUDA graphs of launches cycling through weight sets larger than L2
(µs a launch), outputs compared. If wgnf runs at the twin's pace (bench's
`--only gptq_gemm_wg --variants twin` in the same call), the fused code's size is the gap.
    python3 -u time_wgnf.py [M,K,N ...]"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import shapes, variants_against  # noqa: E402
import wgnf_kernels as wk  # noqa: E402


def with_workspace(kernel):
    """kernel as f(x, w, y) for timing.py, its workspace (zero, and left zero by each
    launch) allocated once a shape."""
    spaces = {}

    def f(x, w, y):
        m, n = x.shape[0], y.shape[1]
        if (m, n) not in spaces:
            spaces[(m, n)] = (torch.zeros(m, n, device="cuda", dtype=torch.float32),
                              torch.zeros((m + 63) // 64, (n + 63) // 64, device="cuda", dtype=torch.int32))
        part, arrivals = spaces[(m, n)]
        kernel(x, w, part, arrivals, y)
    return f


cases = shapes([(16, 8192, 28672), (32, 8192, 28672), (64, 8192, 28672), (128, 8192, 28672)])
variants_against(with_workspace(wk.base), {"wgnf": with_workspace(wk.wgnf)}, cases, wk.QuantWeight)
