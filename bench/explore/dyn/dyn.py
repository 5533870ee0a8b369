"""Throwaway, session 34 (issues 21 and 22): at up to 16 rows dyn.ima's s16 (gptq_gemm_wg16 as
main has it, stamped) and p16 (x in the pair order, the nibble-pair decode; gen.py) beside
gemm_tma's gptq_gemm_wg16; at more than 16 rows d32 (tickets) and p32 (p16 for 32 rows)
beside gemm's gptq_gemm, gemm_tma's gptq_gemm_wg and (session 35) gemm_tma's
gptq_gemm_wg32, p32 in the spec. (The first call, at 64ca1a3, ran the
ticket kernels d16 and d16u1 in p16's place.) CUDA graphs cycling weight sets past L2, µs a
launch, twice in turn; each output against torch's f32 product of the dequantized weight
(max err / max |y|); then, from one launch of each stamped kernel, the blocks' spread: each
block's last consumer end after the first block's start (min / median / max µs) and the
latest block start; DIRTY when the ticket kernels' workspaces do not come back zero.
ONLY16=1 skips the shapes of more than 16 rows.
    python3 -u dyn.py [M,K,N ...]"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import gptq_reference, gptq_weight, graph_us, same_weight, shapes, weight_sets  # noqa: E402
import dyn_kernels as dk  # noqa: E402
import gemm_kernels as gk  # noqa: E402
import gemm_tma_kernels as tk  # noqa: E402

dev = "cuda"
for m, k, n in shapes([(16, 8192, 28672), (16, 4096, 28672), (16, 14336, 4096), (16, 4096, 6144),
                       (16, 4096, 4096), (1, 8192, 28672), (32, 4096, 28672), (32, 14336, 4096),
                       (32, 4096, 6144), (32, 4096, 4096), (30, 8192, 28672), (7, 4104, 4104), (16, 4104, 28672)]):
    if os.environ.get("ONLY16") and m > 16:
        continue
    ws = [gptq_weight(dk.QuantWeight, k, n) for _ in range(weight_sets(k, n))]
    tws = [same_weight(tk, w) for w in ws]
    gws = [same_weight(gk, w) for w in ws]
    x = torch.randn(m, k, device=dev, dtype=torch.float16)
    stamps = torch.zeros(dk.BLOCKS, 4, device=dev, dtype=torch.int64)
    part16 = torch.empty(dk.BLOCKS, 3, 2, 128, 4, device=dev, dtype=torch.float32)
    part32 = torch.empty(dk.BLOCKS, 3, 4, 128, 4, device=dev, dtype=torch.float32)
    part64 = torch.empty(dk.BLOCKS, 3, 8, 128, 4, device=dev, dtype=torch.float32)
    arr = torch.zeros((m + 63) // 64, (n + 63) // 64, device=dev, dtype=torch.int32)
    nx = 16 if m <= 16 else 32
    sums = torch.zeros((n + 1) // 2, 2 * nx, device=dev, dtype=torch.float32)
    counts = torch.zeros((n + 63) // 64, device=dev, dtype=torch.int32)
    sched = torch.zeros(2, device=dev, dtype=torch.int32)
    y = {}
    if m <= 16:
        run = {
            "s16": (ws, lambda w: dk.s16(x, w, part16, arr, stamps, y["s16"])),
            "p16": (ws, lambda w: dk.p16(x, w, part16, arr, stamps, y["p16"])),
            "p16g": (ws, lambda w: dk.p16g(x, w, part16, arr, stamps, y["p16g"])),
            "e16": (ws, lambda w: dk.e16(x, w, part16, arr, stamps, y["e16"])),
            "wg16": (tws, lambda w: tk.gptq_gemm_wg16(x, w, part16, arr, y["wg16"])),
        }
    else:
        run = {
            "d32": (ws, lambda w: dk.d32(x, w, sums, counts, sched, stamps, y["d32"])),
            "p32": (ws, lambda w: dk.p32(x, w, part32, arr, stamps, y["p32"])),
            "gptq_gemm": (gws, lambda w: gk.gptq_gemm(x, w, y["gptq_gemm"])),
            "gptq_gemm_wg": (tws, lambda w: tk.gptq_gemm_wg(x, w, part64, arr, y["gptq_gemm_wg"])),
            "wg32": (tws, lambda w: tk.gptq_gemm_wg32(x, w, part32, arr, y["wg32"])),
        }
    for nm in run:
        y[nm] = torch.empty(m, n, device=dev, dtype=torch.float16)
    ref = gptq_reference(x, ws[0], k, n)
    scale = ref.abs().max().item()
    row, spread = [], []
    for rnd in range(2):
        for nm, (wsets, f) in run.items():
            t = graph_us(f, [(w,) for w in wsets])
            if rnd == 1:
                row.append(f"{nm} {t:.1f}")
                continue
            stamps.zero_()
            f(wsets[0])
            torch.cuda.synchronize()
            err = (y[nm].float() - ref).abs().max().item() / scale
            clean = sums.abs().max().item() == 0 and counts.abs().max().item() == 0 and sched.abs().max().item() == 0
            row.append(f"{nm} {t:.1f} ({err:.1e}{'' if clean else ', DIRTY'})")
            if nm in ("s16", "p16", "p16g", "d32", "p32"):
                st = stamps.cpu().double()
                t0 = st[:, 0].min()
                ends = ((st[:, 1:].max(1).values - t0) / 1e3).sort().values
                spread.append(f"{nm} ends {ends[0]:.1f}/{ends[len(ends) // 2]:.1f}/{ends[-1]:.1f}"
                              f" starts <= {(st[:, 0].max() - t0) / 1e3:.1f}")
    print(f"M={m} K={k} N={n}: " + ", ".join(row), flush=True)
    print("    " + "; ".join(spread), flush=True)
