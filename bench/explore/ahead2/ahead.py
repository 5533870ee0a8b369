"""Throwaway, session 43 (issue 21): gptq_gemm_wg16 and wg32 with the producer asking the L2
for the words of the unit IMA_AHEAD units ahead of the one it copies (bench/explore/ahead2/
ahead.patch), at IMA_AHEAD = 6 and 10 (gemm_tma_a6_kernels, gemm_tma_a10_kernels, built
by build.sh), against the tree's kernel (gemm_tma_kernels) in one process, in turn on the
same weights: queued CUDA graphs cycling weight sets past L2, two passes, µs a launch (in
brackets max |y - torch's f32 product| / max |y|).
    python3 -u ahead.py"""
import os
import sys
import types

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import gptq_weight, same_weight, weight_sets, wg_in_turn  # noqa: E402
import gemm_tma_kernels as main  # noqa: E402
import gemm_tma_a6_kernels as a6  # noqa: E402
import gemm_tma_a10_kernels as a10  # noqa: E402

dev = "cuda"
for kernel, m, k, n in [("gptq_gemm_wg16", 16, 8192, 28672), ("gptq_gemm_wg16", 16, 14336, 4096),
                        ("gptq_gemm_wg16", 1, 8192, 28672), ("gptq_gemm_wg32", 32, 8192, 28672)]:
    ws = [gptq_weight(main.QuantWeight, k, n) for _ in range(weight_sets(k, n))]
    own = {nm: {id(w): same_weight(pkg, w) for w in ws} for nm, pkg in (("a6", a6), ("a10", a10))}
    x = torch.randn(m, k, device=dev, dtype=torch.float16)
    tiles = {"gptq_gemm_wg16": 2, "gptq_gemm_wg32": 4}[kernel]
    part = torch.empty(main.BLOCKS, 3, tiles, 128, 4, device=dev, dtype=torch.float32)
    arr = torch.zeros((m + 63) // 64, (n + 63) // 64, device=dev, dtype=torch.int32)
    ks = types.SimpleNamespace(
        main=getattr(main, kernel),
        a6=lambda x, w, p, a, y: getattr(a6, kernel)(x, own["a6"][id(w)], p, a, y),
        a10=lambda x, w, p, a, y: getattr(a10, kernel)(x, own["a10"][id(w)], p, a, y))
    row = [f"{nm} {ts[0]:.1f} / {ts[1]:.1f} ({err:.1e})"
           for nm, (ts, err) in wg_in_turn(ks, ["main", "a6", "a10"], x, ws, part, arr, 2).items()]
    dirty = "" if int(arr.abs().sum()) == 0 else " ARRIVALS NOT ZERO"
    print(f"{kernel} M={m} K={k} N={n} ({len(ws)} sets): " + ", ".join(row) + dirty, flush=True)
