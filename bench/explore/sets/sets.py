"""Throwaway, session 37 (issue 21): gptq_gemm_wg16's body with 2, 3 and 4 quarters'
register sets (sets.ima), side by side: CUDA graphs cycling weight sets past L2, replays
queued behind a hold (timing.queued_graph_us), µs a launch, three passes in turn; each
output against torch's f32 product (max err / max |y|). Its wheel: `imac compile
bench/explore/sets/sets.ima --python`, then maturin, as bench/explore/ahead/build.sh builds
ahead.ima's.
    python3 -u sets.py [M,K,N ...]"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import gptq_weight, shapes, weight_sets, wg_in_turn  # noqa: E402
import sets_kernels as sk  # noqa: E402

dev = "cuda"
for m, k, n in shapes([(16, 8192, 28672), (1, 8192, 28672), (16, 4096, 28672), (16, 14336, 4096), (16, 4096, 6144)]):
    ws = [gptq_weight(sk.QuantWeight, k, n) for _ in range(weight_sets(k, n))]
    x = torch.randn(m, k, device=dev, dtype=torch.float16)
    part = torch.empty(sk.BLOCKS, 3, 2, 128, 4, device=dev, dtype=torch.float32)
    arr = torch.zeros((m + 63) // 64, (n + 63) // 64, device=dev, dtype=torch.int32)
    names = ["s2_16", "s3_16", "s4_16"]
    row = [f"{nm} " + " / ".join(f"{t:.1f}" for t in ts) + f" ({err:.1e})"
           for nm, (ts, err) in wg_in_turn(sk, names, x, ws, part, arr, 3).items()]
    dirty = "" if int(arr.abs().sum()) == 0 else " ARRIVALS NOT ZERO"
    print(f"M={m} K={k} N={n} ({len(ws)} sets): " + ", ".join(row) + dirty, flush=True)
