"""Throwaway, session 28: rp4.ima's kernels (gen4.py: rp16b's decode on gptq_gemm_wg's 16-
and 32-row paths) beside gptq_gemm_wg and gptq_gemm, on the decode layer's B = 32 shapes;
CUDA graphs cycling weight sets larger than L2, µs a launch; outputs against
gptq_gemm_wg's. `f` after a shape: y half as wide (the fused SiluAndMul of gate/up).
    python3 -u rp4.py [M,K,N[,f] ...]"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import graph_us, weight_sets, wg_workspace  # noqa: E402
import gemm_kernels as gk  # noqa: E402
import gemm_tma_kernels as tk  # noqa: E402
import rp4_kernels as rk  # noqa: E402
from repack import weights  # noqa: E402

dev = "cuda"
FORMATS = {"tk": (tk.QuantWeight, False), "gk": (gk.QuantWeight, False), "rp": (rk.QuantWeight, True)}
CASES = sys.argv[1:] or ["32,4096,4096", "32,4096,6144", "32,14336,4096", "32,4096,28672", "32,4096,28672,f",
                         "32,8192,28672", "16,8192,28672", "16,4096,28672"]

for case in CASES:
    parts = case.split(",")
    m, k, n = (int(p) for p in parts[:3])
    ny = n // 2 if parts[3:] == ["f"] else n
    nsets = weight_sets(k, n)
    ws = [weights(FORMATS, k, n) for _ in range(nsets)]
    x = torch.randn(m, k, device=dev, dtype=torch.float16)
    part, arr = wg_workspace(tk, m, n)
    names = ["rp32", "rp32_s4"] if m > 16 else ["rp32"]
    ys = {nm: torch.empty(m, ny, device=dev, dtype=torch.float16) for nm in ["wg", "gemm", *names]}
    calls = {
        "gptq_gemm_wg": lambda w: tk.gptq_gemm_wg(x, w["tk"], part, arr, ys["wg"]),
        "gptq_gemm": lambda w: gk.gptq_gemm(x, w["gk"], ys["gemm"]),
    }
    for nm in names:
        calls[nm] = (lambda f, y: lambda w: f(x, w["rp"], part, arr, y))(getattr(rk, nm), ys[nm])
    row = [f"{nm} {graph_us(f, [(w,) for w in ws]):.1f}" for nm, f in calls.items()]
    for f in calls.values():
        f(ws[0])
    ref = ys["wg"].float()
    bound = max(1.0, ref.abs().max().item())
    errs = ", ".join(f"{nm} {((ys[nm].float() - ref).abs().max().item() / bound):.1e}" for nm in ["gemm", *names])
    print(f"M={m} K={k} N={n} NY={ny}: " + ", ".join(row) + f" | max err / max |y|: {errs}", flush=True)
