"""Throwaway, session 30: ab.ima's s5 and s8 (gen.py), CUDA graphs cycling GPTQ weight
sets larger than L2, µs a launch (median of 20 replays), each shape's two kernels in turn
three times; s8's output against s5's (the same products, added in the same order).
    python3 -u ab.py [M,K,N ...]"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import gptq_weight, graph_us, shapes, weight_sets  # noqa: E402
import ab_kernels as ak  # noqa: E402

dev = "cuda"
cases = [(m, k, n) for m in (16, 32, 64, 128) for k, n in ((8192, 28672), (14336, 4096), (4096, 4096))]
for m, k, n in shapes(cases):
    ws = [gptq_weight(ak.QuantWeight, k, n) for _ in range(weight_sets(k, n))]
    x = torch.randn(m, k, device=dev, dtype=torch.float16)
    arr = torch.zeros((m + 63) // 64, (n + 63) // 64, device=dev, dtype=torch.int32)
    parts = {"s5": torch.empty(ak.BLOCKS, 2, 3, 8, 128, 4, device=dev),
             "s8": torch.empty(ak.BLOCKS, 3, 8, 128, 4, device=dev)}
    ys = {nm: torch.empty(m, n, device=dev, dtype=torch.float16) for nm in parts}
    calls = {nm: (lambda f, p, y: lambda w: f(x, w, p, arr, y))(getattr(ak, nm), parts[nm], ys[nm]) for nm in parts}
    times = {nm: [] for nm in calls}
    for _ in range(3):
        for nm, f in calls.items():
            times[nm].append(graph_us(f, [(w,) for w in ws]))
    for f in calls.values():
        f(ws[0])
    ref = ys["s5"].float()
    err = (ys["s8"].float() - ref).abs().max().item() / max(1.0, ref.abs().max().item())
    med = {nm: sorted(t)[1] for nm, t in times.items()}
    row = ", ".join(f"{nm} {med[nm]:.1f} ({' '.join(f'{v:.1f}' for v in t)})" for nm, t in times.items())
    print(f"M={m} K={k} N={n}: {row}; s8 / s5 {med['s8'] / med['s5']:.3f}; s8 against s5 {err:.1e}", flush=True)
    assert not arr.any(), "counters left zero"
