"""Throwaway, session 37 (issues 21 and 22): does decoding the next stage's first quarter
while a stage's last MMAs run (ahead.ima's v1) speed gptq_gemm_wg16 and gptq_gemm_wg32
up, and where does a stage's time go (v2: every MMA on one descriptor; v3: no MMAs;
v4: no decode; v6: v4 with a stage's MMAs one group; their outputs are wrong by design;
v5: the tile's end a call; v7: stages in halves; v8, v9: the consumer warpgroups
skewed by a third of a stage or less; v11: the decode up to two quarters ahead; session
38: v12 neither decode nor MMA, v13 four quarters' registers, main's since; after its
call v14, v4's MMAs with the whole decode beside them into registers no MMA reads, and
v3's decode folded into a sink that ptxas keeps: before, it dropped most of v3's decode;
v15, v13 without the pair decode's bias adds, wrong by design)? CUDA graphs cycling weight sets past
L2, replays queued behind a hold (timing.queued_graph_us: the device's time), µs a
launch, two passes (ONLY=v0,v11 times those alone; MAIN=1 adds main's own
gptq_gemm_wg16 from gemm_tma_kernels, its weights the same tensors, in turn with them);
v0 and v1 against torch's f32 product (max err / max |y|).
    python3 -u ahead.py [M,K,N ...]"""
import os
import sys
import types

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import gptq_weight, same_weight, shapes, weight_sets, wg_in_turn  # noqa: E402
import ahead_kernels as ak  # noqa: E402

dev = "cuda"
for m, k, n in shapes([(16, 8192, 28672), (1, 8192, 28672), (16, 4096, 28672), (16, 14336, 4096), (16, 4096, 6144),
                       (32, 8192, 28672), (32, 4096, 28672), (32, 14336, 4096)]):
    ws = [gptq_weight(ak.QuantWeight, k, n) for _ in range(weight_sets(k, n))]
    x = torch.randn(m, k, device=dev, dtype=torch.float16)
    r = 16 if m <= 16 else 32
    part = torch.empty(ak.BLOCKS, 3, r // 8, 128, 4, device=dev, dtype=torch.float32)
    arr = torch.zeros((m + 63) // 64, (n + 63) // 64, device=dev, dtype=torch.int32)
    only = os.environ.get("ONLY")
    names = [f"v{v}_{r}" for v in ((0, 11, 13, 15, 12, 14, 2, 3, 4, 6, 7, 8, 9) if r == 16 else range(2))]
    if only:
        names = [nm for nm in names if nm.split("_")[0] in only.split(",")]
    kernels = ak
    if os.environ.get("MAIN") and r == 16:
        import gemm_tma_kernels as tk
        own = {id(w): same_weight(tk, w) for w in ws}
        kernels = types.SimpleNamespace(**{nm: getattr(ak, nm) for nm in names},
                                        main=lambda x, w, p, a, y: tk.gptq_gemm_wg16(x, own[id(w)], p, a, y))
        names = ["main"] + names
    row = []
    for nm, (ts, err) in wg_in_turn(kernels, names, x, ws, part, arr, 2).items():
        # The diagnostics' outputs are wrong by design.
        correct = ("main", "v0", "v1", "v5", "v7", "v8", "v9", "v11", "v13")
        shown = f" ({err:.1e})" if nm.split("_")[0] in correct else ""
        row.append(f"{nm} {ts[0]:.1f} / {ts[1]:.1f}{shown}")
    dirty = "" if int(arr.abs().sum()) == 0 else " ARRIVALS NOT ZERO"
    print(f"M={m} K={k} N={n} ({len(ws)} sets): " + ", ".join(row) + dirty, flush=True)
