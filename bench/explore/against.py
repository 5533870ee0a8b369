"""The tree's gptq_gemm_wg16 and gptq_gemm_wg32 (gemm_tma_kernels) against the same kernels
of patched wheels (gemm_tma_NAME_kernels, built by bench/explore/patched-wheels.sh), in one
process, in turn on the same weights: queued CUDA graphs cycling weight sets past L2, three
passes, µs a launch (in brackets max |y - torch's f32 product| / max |y|, and the share of
the roofline from the copy rate measured first).
    python3 -u against.py NAME..."""
import importlib
import os
import sys
import types

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import copy_rate, gptq_bytes, gptq_weight, in_turn_line, same_weight, weight_sets, wg_in_turn  # noqa: E402
import gemm_tma_kernels as main  # noqa: E402

dev = "cuda"
patched = {name: importlib.import_module(f"gemm_tma_{name}_kernels") for name in sys.argv[1:]}
rate = copy_rate()
for kernel, m, k, n in [("gptq_gemm_wg16", 16, 8192, 28672), ("gptq_gemm_wg16", 16, 14336, 4096),
                        ("gptq_gemm_wg16", 1, 8192, 28672), ("gptq_gemm_wg16", 16, 4096, 6144),
                        ("gptq_gemm_wg16", 5, 3200, 1056), ("gptq_gemm_wg32", 32, 8192, 28672),
                        ("gptq_gemm_wg32", 32, 14336, 4096), ("gptq_gemm_wg32", 32, 4096, 28672)]:
    ws = [gptq_weight(main.QuantWeight, k, n, group=128) for _ in range(weight_sets(k, n))]
    x = torch.randn(m, k, device=dev, dtype=torch.float16)
    tiles = {"gptq_gemm_wg16": 2, "gptq_gemm_wg32": 4}[kernel]
    part = torch.empty(main.BLOCKS, 3, tiles, 128, 4, device=dev, dtype=torch.float32)
    arr = torch.zeros((m + 63) // 64, (n + 63) // 64, device=dev, dtype=torch.int32)
    ks = {"main": getattr(main, kernel)}
    for name, pkg in patched.items():
        own = {id(w): same_weight(pkg, w) for w in ws}
        ks[name] = lambda x, w, p, a, y, f=getattr(pkg, kernel), own=own: f(x, own[id(w)], p, a, y)
    res = wg_in_turn(types.SimpleNamespace(**ks), list(ks), x, ws, part, arr, 3)
    print(in_turn_line(f"{kernel} M={m} K={k} N={n} ({len(ws)} sets)", res, gptq_bytes(k, n) / rate / 1e6, arr),
          flush=True)
