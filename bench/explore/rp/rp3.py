"""Throwaway, prepared for the session after 27: rp3.ima's s5_ph and wg_s5_ph (gen3.py),
µs a launch (CUDA graphs cycling weight sets larger than L2), then from the last launch's
`phases` the cycles a stage spends waiting, working and in its tail (medians over the
blocks' consumer warpgroups of each sum over its stages), and the stages.
    python3 -u rp3.py [M,K,N ...]"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import graph_us, shapes, weight_sets, wg_workspace  # noqa: E402
import rp3_kernels as rk  # noqa: E402
from repack import weights  # noqa: E402

dev = "cuda"
FORMATS = {"rp": (rk.QuantWeight, True), "rk": (rk.QuantWeight, False)}

for m, k, n in shapes([(16, 8192, 28672), (16, 14336, 4096), (16, 4096, 4096)]):
    nsets = weight_sets(k, n)
    ws = [weights(FORMATS, k, n) for _ in range(nsets)]
    x = torch.randn(m, k, device=dev, dtype=torch.float16)
    part, arr = wg_workspace(rk, m, n)
    y = torch.empty(m, n, device=dev, dtype=torch.float16)
    ph = torch.zeros(rk.BLOCKS, 3, 4, device=dev, dtype=torch.int64)
    for name, fmt in (("s5_ph", "rp"), ("wg_s5_ph", "rk")):
        f = getattr(rk, name)
        us = graph_us(lambda w: f(x, w[fmt], part, arr, y, ph), [(w,) for w in ws])
        p = ph.cpu().reshape(-1, 4)
        p = p[p[:, 3] > 0]
        per = (p[:, :3].double() / p[:, 3:4].double()).median(dim=0).values.tolist()
        print(f"M={m} K={k} N={n} {name}: {us:.1f} us; cycles a stage (median): wait {per[0]:.0f}, "
              f"work {per[1]:.0f}, tail {per[2]:.0f}; stages a warpgroup {p[:, 3].median().item()}", flush=True)
