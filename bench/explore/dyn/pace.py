"""Throwaway, session 34 (issue 21): pace.ima's stage bodies (pace_gen.py) on one resident
stage, 400 reps a consumer warpgroup, 132 blocks: cycles a stage (median and max over the
blocks' warpgroups, clock64) and µs a launch (events, median of 5).
    python3 -u pace.py"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import gptq_weight  # noqa: E402
import pace_kernels as pk  # noqa: E402

dev = "cuda"
m, k, n = 16, 8192, 28672
w = gptq_weight(pk.QuantWeight, k, n)
x = torch.randn(m, k, device=dev, dtype=torch.float16)
cycles = torch.zeros(pk.BLOCKS, 4, device=dev, dtype=torch.int64)
y = torch.empty(pk.BLOCKS, 3, 128, device=dev, dtype=torch.float16)
for name in ("full", "mma", "dec", "acc4", "nowait", "full_s", "mma_s", "dec_s", "ilv", "ilv_s"):
    f = getattr(pk, "pace_" + name)
    f(x, w, cycles, y)
    ts = []
    for _ in range(5):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        f(x, w, cycles, y)
        e1.record()
        torch.cuda.synchronize()
        ts.append(e0.elapsed_time(e1) * 1e3)
    c = cycles[:, 1:].flatten().double() / 400
    print(f"{name}: {c.median().item():.0f} cycles a stage (max {c.max().item():.0f}), "
          f"{sorted(ts)[2]:.1f} µs a launch", flush=True)
