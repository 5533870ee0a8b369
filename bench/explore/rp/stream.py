"""Throwaway: stream.ima's idle-consumer pipelines (gen_stream.py), CUDA graphs cycling
weight sets larger than L2, µs a launch and the weights' TB/s (qweight, scales, zeros).
    python3 -u stream.py [M,K,N ...]"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import gptq_weight, graph_us, shapes, weight_sets, wg_workspace  # noqa: E402
import stream_kernels as sk  # noqa: E402

dev = "cuda"
for m, k, n in shapes([(16, 8192, 28672), (16, 14336, 4096), (16, 4096, 4096)]):
    nsets = weight_sets(k, n)
    ws = [gptq_weight(sk.QuantWeight, k, n) for _ in range(nsets)]
    x = torch.randn(m, k, device=dev, dtype=torch.float16)
    part, arr = wg_workspace(sk, m, n)
    y = torch.empty(m, n, device=dev, dtype=torch.float16)
    nbytes = k * n // 2 + (k // 128) * n * 2 + (k // 128) * n // 2
    row = []
    for name in ("e3", "e5", "e3w", "e6w"):
        f = getattr(sk, name)
        t = graph_us(lambda w: f(x, w, part, arr, y), [(w,) for w in ws])
        row.append(f"{name} {t:.1f} ({nbytes / t / 1e6:.2f} TB/s)")
    print(f"M={m} K={k} N={n}: " + ", ".join(row), flush=True)
