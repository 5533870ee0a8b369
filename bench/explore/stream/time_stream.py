"""Throwaway: stream.ima's access shapes, TB/s reading int32 matrices of the W4A16 shapes
(CUDA graphs cycling through sets larger than L2); the t* kernels read the same buffers as
stored strip by strip."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import graph_us  # noqa: E402
import stream_kernels as sk

dev = "cuda"
VARIANTS = [n for n in dir(sk) if n[0] in "st" and n[1].isdigit() and not n.endswith("_shapes")]


print("KP N MB | " + " | ".join(VARIANTS) + " (TB/s)")
for kp, n in [(1024, 28672), (512, 28672), (1792, 4096), (512, 6144), (512, 4096)]:
    mb = kp * n * 4 / 1e6
    nsets = max(2, int(300 // mb) + 1)
    ws = [torch.randint(-2**31, 2**31 - 1, (kp, n), device=dev, dtype=torch.int32) for _ in range(nsets)]
    row = []
    for v in VARIANTS:
        f = getattr(sk, v)
        cols = 4 * int(v[1:].split("_")[0])
        o = torch.empty((n + cols - 1) // cols, 256, device=dev, dtype=torch.int32)
        # t*: the same bytes read as stored strip by strip ([S, KP, COLS], gen.py's TILED).
        args = [(w.view(n // cols, kp, cols),) if v[0] == "t" else (w,) for w in ws]
        t = graph_us(lambda w: f(w, o), args, warm=1)
        row.append(f"{mb / t:.2f}")
    print(f"{kp} {n} {mb:.0f} | " + " | ".join(row), flush=True)
