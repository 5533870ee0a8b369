"""Throwaway, session 34 (issue 21): dyn.ima's s16 (gptq_gemm_wg16, stamped), d16 and d16u1
(the same stages handed out by ticket; gen.py), beside gemm_tma's gptq_gemm_wg16 when its
wheel is there; CUDA graphs cycling weight sets past L2, µs a launch, twice in turn; each
output against torch's f32 product of the dequantized weight (max err / max |y|); then,
from one launch of each, the blocks' spread: each block's last consumer end after the
first block's start (min / median / max µs) and the latest block start; and whether the
workspaces came back zero.
    python3 -u dyn.py [M,K,N ...]"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import gptq_reference, gptq_weight, graph_us, shapes, weight_sets  # noqa: E402
import dyn_kernels as dk  # noqa: E402

try:
    import gemm_tma_kernels as tk
except ImportError:
    tk = None

dev = "cuda"
for m, k, n in shapes([(16, 8192, 28672), (16, 4096, 28672), (16, 14336, 4096), (16, 4096, 6144),
                       (16, 4096, 4096), (1, 8192, 28672)]):
    ws = [gptq_weight(dk.QuantWeight, k, n) for _ in range(weight_sets(k, n))]
    x = torch.randn(m, k, device=dev, dtype=torch.float16)
    stamps = torch.zeros(dk.BLOCKS, 4, device=dev, dtype=torch.int64)
    part = torch.empty(dk.BLOCKS, 3, 2, 128, 4, device=dev, dtype=torch.float32)
    arr = torch.zeros((m + 63) // 64, (n + 63) // 64, device=dev, dtype=torch.int32)
    sums = torch.zeros((n + 1) // 2, 32, device=dev, dtype=torch.float32)
    counts = torch.zeros((n + 63) // 64, device=dev, dtype=torch.int32)
    sched = torch.zeros(2, device=dev, dtype=torch.int32)
    names = ["s16", "d16", "d16u1"] + (["wg16"] if tk else [])
    ys = {nm: torch.empty(m, n, device=dev, dtype=torch.float16) for nm in names}
    run = {
        "s16": lambda w: dk.s16(x, w, part, arr, stamps, ys["s16"]),
        "d16": lambda w: dk.d16(x, w, sums, counts, sched, stamps, ys["d16"]),
        "d16u1": lambda w: dk.d16u1(x, w, sums, counts, sched, stamps, ys["d16u1"]),
    }
    if tk:
        tws = [tk.QuantWeight("gptq", qweight=w.qweight, qzeros=w.qzeros, scales=w.scales, group_size=128) for w in ws]
        run["wg16"] = lambda w: tk.gptq_gemm_wg16(x, w, part, arr, ys["wg16"])
    ref = gptq_reference(x, ws[0], k, n)
    scale = ref.abs().max().item()
    row, spread = [], []
    for rnd in range(2):
        for nm, f in run.items():
            wsets = tws if nm == "wg16" else ws
            t = graph_us(f, [(w,) for w in wsets])
            if rnd == 0:
                stamps.zero_()
                f(wsets[0])
                torch.cuda.synchronize()
                err = (ys[nm].float() - ref).abs().max().item() / scale
                clean = sums.abs().max().item() == 0 and counts.abs().max().item() == 0 and sched.abs().max().item() == 0
                row.append(f"{nm} {t:.1f} ({err:.1e}{'' if clean else ', DIRTY'})")
                if nm != "wg16":
                    st = stamps.cpu().double()
                    t0 = st[:, 0].min()
                    ends = ((st[:, 1:].max(1).values - t0) / 1e3).sort().values
                    spread.append(f"{nm} ends {ends[0]:.1f}/{ends[len(ends) // 2]:.1f}/{ends[-1]:.1f}"
                                  f" starts <= {(st[:, 0].max() - t0) / 1e3:.1f}")
            else:
                row.append(f"{nm} {t:.1f}")
    print(f"M={m} K={k} N={n}: " + ", ".join(row), flush=True)
    print("    " + "; ".join(spread), flush=True)
