"""Throwaway, prepared for the session after 27: rp2.ima's kernels (gen2.py) beside
gptq_gemm_wg and gptq_gemm, CUDA graphs cycling weight sets larger than L2, µs a launch;
outputs against gptq_gemm_wg's (s5_nodec's and s5_nomma's are not meaningful); at M = 32
wg_s4_32 alone beside them.
    python3 -u rp2.py [M,K,N ...]"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import graph_us, shapes, weight_sets, wg_workspace  # noqa: E402
import gemm_kernels as gk  # noqa: E402
import gemm_tma_kernels as tk  # noqa: E402
import rp2_kernels as rk  # noqa: E402
from repack import weights  # noqa: E402

dev = "cuda"
FORMATS = {"tk": (tk.QuantWeight, False), "gk": (gk.QuantWeight, False), "rp": (rk.QuantWeight, True),
           "rk": (rk.QuantWeight, False)}


for m, k, n in shapes([(16, 8192, 28672), (16, 14336, 4096), (16, 4096, 4096), (8, 8192, 28672),
                       (32, 4096, 4096), (32, 4096, 6144), (32, 14336, 4096), (32, 4096, 28672),
                       (32, 8192, 28672)]):
    nsets = weight_sets(k, n)
    ws = [weights(FORMATS, k, n) for _ in range(nsets)]
    x = torch.randn(m, k, device=dev, dtype=torch.float16)
    part, arr = wg_workspace(tk, m, n)
    names = ({"s5": "rp", "s5_nodec": "rp", "s5_nomma": "rp", "s5_acc4": "rp", "wg_s5": "rk", "wg_s5_acc2": "rk"}
             if m <= 16 else {"wg_s4_32": "rk"})
    ys = {nm: torch.empty(m, n, device=dev, dtype=torch.float16) for nm in ["wg", "gemm", *names]}
    calls = {
        "gptq_gemm_wg": lambda w: tk.gptq_gemm_wg(x, w["tk"], part, arr, ys["wg"]),
        "gptq_gemm": lambda w: gk.gptq_gemm(x, w["gk"], ys["gemm"]),
    }
    for nm, fmt in names.items():
        calls[nm] = (lambda f, y, fmt: lambda w: f(x, w[fmt], part, arr, y))(getattr(rk, nm), ys[nm], fmt)
    row = [f"{nm} {graph_us(f, [(w,) for w in ws]):.1f}" for nm, f in calls.items()]
    for f in calls.values():
        f(ws[0])
    ref = ys["wg"].float()
    bound = max(1.0, ref.abs().max().item())
    errs = ", ".join(f"{nm} {((ys[nm].float() - ref).abs().max().item() / bound):.1e}"
                     for nm in ("gemm", "s5", "s5_acc4", "wg_s5", "wg_s5_acc2", "wg_s4_32") if nm in ys)
    print(f"M={m} K={k} N={n}: " + ", ".join(row) + f" | max err / max |y|: {errs}", flush=True)
