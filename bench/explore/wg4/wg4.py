"""Throwaway, session 45 (issue 21): gptq_gemm_wg16 with four consumer warpgroups (tiles of
256 columns, 4 stages, 640 threads; bench/explore/wg4/wg4.patch, built by build.sh as
gemm_tma_x4_kernels) with 3, 2 and 4 quarters' register sets, against the tree's kernel
(three warpgroups, tiles of 192 columns, 5 stages) in one process, in turn on the same
weights: queued CUDA graphs cycling weight sets past L2, three passes, µs a launch (in
brackets max |y - torch's f32 product| / max |y|, and the share of the roofline from the
copy rate measured first).
    python3 -u wg4.py"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import copy_rate, same_weight, shape_in_turn  # noqa: E402
import gemm_tma_kernels as main  # noqa: E402
import gemm_tma_x4_kernels as x4  # noqa: E402

rate = copy_rate()
names = ["gptq_gemm_wg16x4", "gptq_gemm_wg16x4s2", "gptq_gemm_wg16x4s4"]
only = os.environ.get("ONLY")
# The four warpgroups' slots: main's part has room for three.
part4 = torch.empty(x4.BLOCKS, 4, 2, 128, 4, device="cuda", dtype=torch.float32)


def others(ws):
    own = {id(w): same_weight(x4, w) for w in ws}
    return {nm: lambda x, w, p, a, y, f=getattr(x4, nm): f(x, own[id(w)], part4, a, y)
            for nm in names if not only or nm in only.split(",")}


for shape in [(16, 8192, 28672), (16, 14336, 4096), (1, 8192, 28672), (16, 4096, 28672), (16, 4096, 6144),
              (5, 3200, 1056), (16, 8192, 28672)]:
    print(shape_in_turn(main, "gptq_gemm_wg16", shape, rate, others,
                        lambda m, k, n, sets: f"M={m} K={k} N={n} ({sets} sets)",
                        name=lambda nm: nm.replace('gptq_gemm_wg16', '')), flush=True)
