"""Throwaway, session 45 (issues 21 and 22): the consumers' pace with the weights' DRAM
stream taken away. In gptq_gemm_wg16 and gptq_gemm_wg32 built from
bench/explore/l2only/l2only.patch (gemm_tma_l2o_kernels, by build.sh) every unit copies the
same words, tile 0's first 256 rows, which stay in L2, while x's tiles and everything else
are as in the tree's kernels; timing only (their outputs are wrong). Against the tree's
kernels in one process, in turn: queued CUDA graphs cycling weight sets past L2 (which the
l2o kernels do not read), three passes, µs a launch, and the roofline's share from the
copy rate measured first.
    python3 -u l2only.py"""
import os
import sys
import types

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import copy_rate, gptq_bytes, gptq_weight, in_turn_row, same_weight, weight_sets, wg_in_turn  # noqa: E402
import gemm_tma_kernels as main  # noqa: E402
import gemm_tma_l2o_kernels as l2o  # noqa: E402

dev = "cuda"
rate = copy_rate()
for kernel, m, k, n in [("gptq_gemm_wg16", 16, 8192, 28672), ("gptq_gemm_wg16", 16, 14336, 4096),
                        ("gptq_gemm_wg16", 1, 8192, 28672), ("gptq_gemm_wg16", 16, 4096, 6144),
                        ("gptq_gemm_wg16", 5, 3200, 1056), ("gptq_gemm_wg32", 32, 8192, 28672),
                        ("gptq_gemm_wg32", 32, 14336, 4096), ("gptq_gemm_wg32", 32, 4096, 28672)]:
    ws = [gptq_weight(main.QuantWeight, k, n, group=128) for _ in range(weight_sets(k, n))]
    own = {id(w): same_weight(l2o, w) for w in ws}
    x = torch.randn(m, k, device=dev, dtype=torch.float16)
    tiles = {"gptq_gemm_wg16": 2, "gptq_gemm_wg32": 4}[kernel]
    part = torch.empty(main.BLOCKS, 3, tiles, 128, 4, device=dev, dtype=torch.float32)
    arr = torch.zeros((m + 63) // 64, (n + 63) // 64, device=dev, dtype=torch.int32)
    ks = types.SimpleNamespace(main=getattr(main, kernel),
                               l2o=lambda x, w, p, a, y: getattr(l2o, kernel)(x, own[id(w)], p, a, y))
    res = wg_in_turn(ks, ["main", "l2o"], x, ws, part, arr, 3)
    roof = gptq_bytes(k, n) / rate / 1e6
    row = in_turn_row(res, roof)
    dirty = "" if int(arr.abs().sum()) == 0 else " ARRIVALS NOT ZERO"
    print(f"{kernel} M={m} K={k} N={n} ({len(ws)} sets): " + ", ".join(row) + dirty, flush=True)
