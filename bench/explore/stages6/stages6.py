"""Throwaway, session 44 (issues 21 and 22): gptq_gemm_wg16 with 6 stages and gptq_gemm_wg32
with 5, their W tiles holding only the groups the specs' `G >= 128` allows
(bench/explore/stages6/stages6.patch, built by build.sh as gemm_tma_s6_kernels), against
the tree's 5 and 4 (gemm_tma_kernels) in one process, in turn on the same weights: queued
CUDA graphs cycling weight sets past L2, three passes, µs a launch (in brackets max
|y - torch's f32 product| / max |y|), and the roofline from the copy rate measured first.
    python3 -u stages6.py"""
import os
import sys
import types

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import copy_rate, gptq_bytes, gptq_weight, in_turn_row, same_weight, weight_sets, wg_in_turn  # noqa: E402
import gemm_tma_kernels as main  # noqa: E402
import gemm_tma_s6_kernels as s6  # noqa: E402

dev = "cuda"
rate = copy_rate()
for kernel, m, k, n in [("gptq_gemm_wg16", 16, 8192, 28672), ("gptq_gemm_wg16", 16, 14336, 4096),
                        ("gptq_gemm_wg16", 1, 8192, 28672), ("gptq_gemm_wg16", 16, 4096, 6144),
                        ("gptq_gemm_wg16", 5, 3200, 1056), ("gptq_gemm_wg32", 32, 8192, 28672),
                        ("gptq_gemm_wg32", 32, 14336, 4096), ("gptq_gemm_wg32", 32, 4096, 28672)]:
    ws = [gptq_weight(main.QuantWeight, k, n, group=128) for _ in range(weight_sets(k, n))]
    own = {id(w): same_weight(s6, w) for w in ws}
    x = torch.randn(m, k, device=dev, dtype=torch.float16)
    tiles = {"gptq_gemm_wg16": 2, "gptq_gemm_wg32": 4}[kernel]
    part = torch.empty(main.BLOCKS, 3, tiles, 128, 4, device=dev, dtype=torch.float32)
    arr = torch.zeros((m + 63) // 64, (n + 63) // 64, device=dev, dtype=torch.int32)
    ks = types.SimpleNamespace(main=getattr(main, kernel),
                               s6=lambda x, w, p, a, y: getattr(s6, kernel)(x, own[id(w)], p, a, y))
    res = wg_in_turn(ks, ["main", "s6"], x, ws, part, arr, 3)
    roof = gptq_bytes(k, n) / rate / 1e6
    row = in_turn_row(res, roof)
    dirty = "" if int(arr.abs().sum()) == 0 else " ARRIVALS NOT ZERO"
    print(f"{kernel} M={m} K={k} N={n} ({len(ws)} sets): " + ", ".join(row) + dirty, flush=True)
