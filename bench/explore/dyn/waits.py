"""Throwaway, session 34 (issue 21): d16w (gen.py) once a shape: cycles a stage (median over
the blocks) of the producer's waits for a free stage, each consumer warpgroup's waits for a
full one, and its stage bodies.
    python3 -u waits.py [M,K,N ...]"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import gptq_weight, graph_us, shapes, weight_sets  # noqa: E402
import dyn_kernels as dk  # noqa: E402

dev = "cuda"
for m, k, n in shapes([(16, 8192, 28672), (16, 4096, 28672)]):
    ws = [gptq_weight(dk.QuantWeight, k, n) for _ in range(weight_sets(k, n))]
    x = torch.randn(m, k, device=dev, dtype=torch.float16)
    stamps = torch.zeros(dk.BLOCKS, 4, device=dev, dtype=torch.int64)
    waits = torch.zeros(dk.BLOCKS, 8, device=dev, dtype=torch.int64)
    sums = torch.zeros((n + 1) // 2, 32, device=dev, dtype=torch.float32)
    counts = torch.zeros((n + 63) // 64, device=dev, dtype=torch.int32)
    sched = torch.zeros(2, device=dev, dtype=torch.int32)
    y = torch.empty(m, n, device=dev, dtype=torch.float16)
    t = graph_us(lambda w: dk.d16w(x, w, sums, counts, sched, stamps, waits, y), [(w,) for w in ws])
    for w in ws:
        dk.d16w(x, w, sums, counts, sched, stamps, waits, y)
    torch.cuda.synchronize()
    wv = waits.cpu().double()
    st = wv[:, 7]
    per = lambda c: (wv[:, c] / st).median().item()  # noqa: E731
    print(f"M={m} K={k} N={n}: d16w {t:.1f} µs, {st.median().item():.0f} stages a block (median); cycles a stage: "
          f"producer waits {per(0):.0f}; consumer waits {per(1):.0f} / {per(3):.0f} / {per(5):.0f}, "
          f"bodies {per(2):.0f} / {per(4):.0f} / {per(6):.0f}", flush=True)
