"""Throwaway, session 39 (issue 21): where gptq_gemm_wg16's stage goes with its descriptors
in uniform registers (bd08419 on): main's kernel (gemm_tma_kernels) in turn with diag.ima's
d0 (main's body in the diagnostic header), d1 (the MMAs alone), d2 (the decode alone, kept
by a sink) and d3 (neither: the stream, x's pair order and the tile ends), and (session 40)
the tile ends' parts: d4 (d3 without lo's wait and loads), d5 (d3 without tile-end work
but the delegates' arrivals), d6 (main's stage with d4's lo), and (session 41) d7 (main's
stage with d5's tile ends), and (session 42) d8 and d9 (d6 without the slot stores, without
y's), on the same weights;
queued CUDA graphs cycling weight sets past L2 (timing.wg_in_turn), µs a launch, two
passes; main's and d0's outputs against torch's f32 product. Session 38's figures at
204ed40's header (bench/RESULTS.md): idle 35.4, MMAs alone 38.0, decode alone 37.8,
main 42.6. Built by bench/explore/diag/build.sh.
    python3 -u diag.py [M,K,N ...]"""
import os
import sys
import types

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import gptq_weight, same_weight, shapes, weight_sets, wg_in_turn  # noqa: E402
import diag_kernels as dk  # noqa: E402

# DIAG_MAIN=gemm_tma_head_kernels times uni/build.sh's BASE as main, where the tree's
# gemm_tma wheel holds an experiment.
tk = __import__(os.environ.get("DIAG_MAIN", "gemm_tma_kernels"))

dev = "cuda"
for m, k, n in shapes([(16, 8192, 28672), (16, 14336, 4096), (1, 8192, 28672)]):
    ws = [gptq_weight(dk.QuantWeight, k, n) for _ in range(weight_sets(k, n))]
    own = {id(w): same_weight(tk, w) for w in ws}
    x = torch.randn(m, k, device=dev, dtype=torch.float16)
    part = torch.empty(dk.BLOCKS, 3, 2, 128, 4, device=dev, dtype=torch.float32)
    arr = torch.zeros((m + 63) // 64, (n + 63) // 64, device=dev, dtype=torch.int32)
    # d4 to d9 reset a count without waiting for it, which may leave it dirty: their own.
    arr_own = torch.zeros_like(arr)
    names = ["d0_16", "d1_16", "d2_16", "d3_16", "d4_16", "d5_16", "d6_16", "d7_16", "d8_16", "d9_16"]
    kernels = types.SimpleNamespace(**{nm: getattr(dk, nm) for nm in names[:4]},
                                    **{nm: (lambda x, w, p, a, y, f=getattr(dk, nm): f(x, w, p, arr_own, y))
                                       for nm in names[4:]},
                                    main=lambda x, w, p, a, y: tk.gptq_gemm_wg16(x, own[id(w)], p, a, y))
    row = []
    for nm, (ts, err) in wg_in_turn(kernels, ["main"] + names, x, ws, part, arr, 2).items():
        shown = f" ({err:.1e})" if nm in ("main", "d0_16") else ""
        row.append(f"{nm} {ts[0]:.1f} / {ts[1]:.1f}{shown}")
    dirty = "" if int(arr.abs().sum()) == 0 else " ARRIVALS NOT ZERO"
    print(f"M={m} K={k} N={n} ({len(ws)} sets): " + ", ".join(row) + dirty, flush=True)
