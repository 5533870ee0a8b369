"""Throwaway, session 45 (issue 21): the MMAs of each half stage of ima_wg_w4_stage dealt
out over 2 or 4 accumulators (bench/explore/chains/chains.patch, IMA_CHAINS; built by
build.sh as gemm_tma_ch2_kernels and gemm_tma_ch4_kernels), so that each accumulator's
chain of dependent MMAs is 4 or 2 long instead of 8: bench/explore/fold2 found one more MMA
a half stage costs about 1.9 µs at K = 8192, N = 28672. Against the tree's kernels in one
process, in turn on the same weights: queued CUDA graphs cycling weight sets past L2, three
passes, µs a launch (in brackets max |y - torch's f32 product| / max |y|, and the share of
the roofline from the copy rate measured first).
    python3 -u chains.py"""
import os
import sys
import types

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import copy_rate, gptq_bytes, gptq_weight, in_turn_row, same_weight, weight_sets, wg_in_turn  # noqa: E402
import gemm_tma_kernels as main  # noqa: E402
import gemm_tma_ch2_kernels as ch2  # noqa: E402
import gemm_tma_ch4_kernels as ch4  # noqa: E402

dev = "cuda"
rate = copy_rate()
pkgs = {"ch2": ch2, "ch4": ch4}
for kernel, m, k, n in [("gptq_gemm_wg16", 16, 8192, 28672), ("gptq_gemm_wg16", 16, 14336, 4096),
                        ("gptq_gemm_wg32", 32, 8192, 28672), ("gptq_gemm_wg16", 16, 8192, 28672)]:
    ws = [gptq_weight(main.QuantWeight, k, n, group=128) for _ in range(weight_sets(k, n))]
    own = {nm: {id(w): same_weight(p, w) for w in ws} for nm, p in pkgs.items()}
    x = torch.randn(m, k, device=dev, dtype=torch.float16)
    part = torch.empty(main.BLOCKS, 3, m // 8, 128, 4, device=dev, dtype=torch.float32)
    arr = torch.zeros((m + 63) // 64, (n + 63) // 64, device=dev, dtype=torch.int32)
    ks = {"main": getattr(main, kernel)}
    for nm, pkg in pkgs.items():
        ks[nm] = lambda x, w, p, a, y, f=getattr(pkg, kernel), o=own[nm]: f(x, o[id(w)], p, a, y)
    res = wg_in_turn(types.SimpleNamespace(**ks), list(ks), x, ws, part, arr, 3)
    roof = gptq_bytes(k, n) / rate / 1e6
    row = in_turn_row(res, roof)
    dirty = "" if int(arr.abs().sum()) == 0 else " ARRIVALS NOT ZERO"
    print(f"{kernel} M={m} K={k} N={n} ({len(ws)} sets): " + ", ".join(row) + dirty, flush=True)
