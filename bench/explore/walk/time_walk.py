"""Throwaway: the W4A16 kernels of the working tree (gemm_kernels, decode_kernels,
quant_kernels) against those of an earlier commit built under other names (gemm0_kernels,
decode0_kernels, quant0_kernels: its specs/gemm.ima, decode.ima and quant.ima copied to
gemm0.ima, ... and built by `imac compile --python` and maturin), as CUDA graphs of
launches cycling through weight sets larger than L2 (µs a launch); outputs compared.
    python3 time_walk.py [release|deferred]
Run once, against 5e6d67e, on a tree whose GEMVs' one-row loops went through
for_whole_tiles too (8 to 11% slower; reverted): as committed, the GEMV rows compare the
same code. Run again against 13a5da8 for the warps split across columns (gptq_gemm) and
the weights' loads that skip L1 (all of them)."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import gptq_weight, graph_us, weight_sets  # noqa: E402
import decode0_kernels as d0
import decode_kernels as dk
import gemm0_kernels as g0
import gemm_kernels as gk
import quant0_kernels as q0
import quant_kernels as qk

mode = sys.argv[1] if len(sys.argv) > 1 else "release"
if mode == "deferred":
    for mod in (gk, g0, dk, d0, qk, q0):
        mod.set_checked("deferred")
dev = "cuda"
# (label, kernel name, M, K, N, fused): the decode layer's projections at B = 1 (its GEMVs)
# and gptq_gemm's 16-row blocks.
cases = [("QKV", "gptq_gemv_narrow", 1, 4096, 6144, 0), ("O", "gptq_gemv_narrow", 1, 4096, 4096, 0),
         ("down", "gptq_gemv_narrow", 1, 14336, 4096, 0), ("gate/up", "gptq_gemv", 1, 4096, 28672, 1),
         ("", "gptq_gemm", 16, 8192, 28672, 0), ("O", "gptq_gemm", 32, 4096, 4096, 0),
         ("down", "gptq_gemm", 32, 14336, 4096, 0), ("", "gptq_gemm", 16, 4096, 28672, 0),
         ("QKV", "gptq_gemm", 32, 4096, 6144, 0), ("gate/up", "gptq_gemm", 32, 4096, 28672, 1),
         ("", "gptq_gemm", 64, 8192, 28672, 0), ("", "gptq_gemm", 128, 8192, 28672, 0)]
modules = {"gptq_gemv_narrow": (d0, dk), "gptq_gemv": (q0, qk), "gptq_gemm": (g0, gk)}
print(f"{mode}: kernel M K N fused | before | tree | tree / before")
for label, name, m, k, n, fused in cases:
    nsets = weight_sets(k, n)
    ws = [gptq_weight(gk.QuantWeight, k, n, 128) for _ in range(nsets)]
    x = torch.randn(m, k, device=dev, dtype=torch.float16)
    ny = n // 2 if fused else n
    y0 = torch.empty(m, ny, device=dev, dtype=torch.float16)
    y1 = torch.empty_like(y0)
    f0, f1 = (getattr(mod, name) for mod in modules[name])
    t0 = graph_us(lambda w: f0(x, w, y0), [(w,) for w in ws])
    t1 = graph_us(lambda w: f1(x, w, y1), [(w,) for w in ws])
    f0(x, ws[0], y0)
    f1(x, ws[0], y1)
    torch.cuda.synchronize()
    err = (y0.float() - y1.float()).abs().max().item()
    print(f"{name} {label} {m} {k} {n} {fused} | {t0:.1f} | {t1:.1f} | {t1 / t0:.3f} (max diff {err:.3g})", flush=True)
