"""Throwaway: rp.ima's rp16, rp16b and rp16b's diagnostics (gen.py) on repacked weights against gptq_gemm_wg
and gptq_gemm on the same weights as GPTQ packs them, CUDA graphs cycling weight sets
larger than L2, µs a launch; outputs against gptq_gemm_wg's.
    python3 -u rp.py [M,K,N ...]"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import graph_us, shapes, weight_sets, wg_workspace  # noqa: E402
import gemm_kernels as gk  # noqa: E402
import gemm_tma_kernels as tk  # noqa: E402
import rp_kernels as rk  # noqa: E402
from repack import weights  # noqa: E402

dev = "cuda"
FORMATS = {"tk": (tk.QuantWeight, False), "gk": (gk.QuantWeight, False), "rp": (rk.QuantWeight, True)}


for m, k, n in shapes([(16, 8192, 28672), (16, 4096, 28672), (16, 14336, 4096), (16, 4096, 6144),
                       (16, 4096, 4096), (8, 8192, 28672), (1, 8192, 28672)]):
    nsets = weight_sets(k, n)
    ws = [weights(FORMATS, k, n) for _ in range(nsets)]
    x = torch.randn(m, k, device=dev, dtype=torch.float16)
    part, arr = wg_workspace(tk, m, n)
    names = ["rp16", "rp16b", "rp16b_s5", "rp16b_nomma", "rp16b_nodec", "rp16b_empty"]
    ys = {name: torch.empty(m, n, device=dev, dtype=torch.float16) for name in ["wg", "gemm"] + names}
    calls = {
        "gptq_gemm_wg": lambda w: tk.gptq_gemm_wg(x, w["tk"], part, arr, ys["wg"]),
        "gptq_gemm": lambda w: gk.gptq_gemm(x, w["gk"], ys["gemm"]),
    }
    for name in names:
        calls[name] = (lambda f, y: lambda w: f(x, w["rp"], part, arr, y))(getattr(rk, name), ys[name])
    row = []
    for name, f in calls.items():
        t = graph_us(f, [(w,) for w in ws])
        row.append(f"{name} {t:.1f}")
    for f in calls.values():
        f(ws[0])
    ref = ys["wg"].float()
    bound = max(1.0, ref.abs().max().item())
    errs = ", ".join(f"{nm} {((ys[nm].float() - ref).abs().max().item() / bound):.1e}" for nm in ("gemm", "rp16", "rp16b", "rp16b_s5"))
    print(f"M={m} K={k} N={n}: " + ", ".join(row) + f" | max err / max |y|: {errs}", flush=True)
