"""Throwaway: sk.ima's kernels (gptq_gemm with K split between blocks through an f32
workspace, warps WN ways across columns: sk{WN}{KS}) against gptq_gemm, as CUDA graphs of
launches cycling through weight sets larger than L2 (µs a launch), each output compared
with gptq_gemm's. A wrong workspace protocol shows as DIFF (each launch must leave the
workspace zero for the next). Shapes: the decode layer's projections at B = 32 (down, O,
QKV; gate/up unfused), down at 16 rows, and the widest W at 16 rows.
    python3 time_sk.py [M,K,N ...]"""
import functools
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import shapes, variants_against  # noqa: E402
import gemm_kernels as gk
import sk_kernels as sk

cases = shapes([(32, 14336, 4096), (32, 4096, 4096), (32, 4096, 6144), (16, 14336, 4096), (32, 4096, 28672), (8, 14336, 4096),
                (16, 8192, 28672), (16, 4096, 28672)])


@functools.cache
def workspace(m, n):
    return (torch.zeros(m, n, device="cuda", dtype=torch.float32),
            torch.zeros((m + 15) // 16, (n + 31) // 32, device="cuda", dtype=torch.int32))


def with_workspace(f):
    return lambda x, w, y: f(x, w, *workspace(x.shape[0], y.shape[1]), y)


names = [n for n in dir(sk) if n.startswith("sk") and n[2:].isdigit()]
variants_against(gk.gptq_gemm, {n: with_workspace(getattr(sk, n)) for n in sorted(names)}, cases, gk.QuantWeight)
