"""Throwaway, session 39 (issue 21): a header against the one before it, kernel by kernel.
First ima.cuh's consumer() broadcast from lane 0 (ptxas then keeps what a role computes
from uniform values in uniform registers) and warpgroup MMA's register-A descriptor one
64-bit operand (one UIADD3.64 an MMA), against 204ed40's; then the zeros folded into the
MMA (gptq_gemm_wg16 and wg32) against bd08419's. gemm_tma_head: specs/gemm_tma.ima at the
base, built with the base's header and templates by build.sh (BASE=...). Kernels in turn,
each on queued graphs (timing.queued_graph_us), two passes; the W4A16 ones cycling weight
sets past L2, their outputs against torch's f32 product.
    python3 -u uni.py
UNI_ONLY=wg (session 43) times gptq_gemm_wg16's and wg32's rows alone."""
import os
import sys
import types

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import gptq_weight, queued_graph_us, same_weight, weight_sets, wg_in_turn  # noqa: E402
import gemm_tma_head_kernels as old  # noqa: E402
import gemm_tma_kernels as new  # noqa: E402

dev = "cuda"
for kernel, m, k, n in [("gptq_gemm_wg16", 16, 8192, 28672), ("gptq_gemm_wg16", 16, 14336, 4096),
                        ("gptq_gemm_wg16", 16, 4096, 28672), ("gptq_gemm_wg16", 1, 8192, 28672),
                        ("gptq_gemm_wg32", 32, 8192, 28672), ("gptq_gemm_wg32", 32, 14336, 4096),
                        ("gptq_gemm_wg", 64, 8192, 28672), ("gptq_gemm_wg", 128, 8192, 28672)]:
    if os.environ.get("UNI_ONLY") == "wg" and kernel == "gptq_gemm_wg":
        continue
    ws = [gptq_weight(new.QuantWeight, k, n) for _ in range(weight_sets(k, n))]
    own = {id(w): same_weight(old, w) for w in ws}
    x = torch.randn(m, k, device=dev, dtype=torch.float16)
    tiles = {"gptq_gemm_wg16": 2, "gptq_gemm_wg32": 4}.get(kernel, 8)
    part = torch.empty(new.BLOCKS, 3, tiles, 128, 4, device=dev, dtype=torch.float32)
    arr = torch.zeros((m + 63) // 64, (n + 63) // 64, device=dev, dtype=torch.int32)
    both = types.SimpleNamespace(head=lambda x, w, p, a, y: getattr(old, kernel)(x, own[id(w)], p, a, y),
                                 new=getattr(new, kernel))
    row = [f"{nm} {ts[0]:.1f} / {ts[1]:.1f} ({err:.1e})"
           for nm, (ts, err) in wg_in_turn(both, ["head", "new"], x, ws, part, arr, 2).items()]
    dirty = "" if int(arr.abs().sum()) == 0 else " ARRIVALS NOT ZERO"
    print(f"{kernel} M={m} K={k} N={n} ({len(ws)} sets): " + ", ".join(row) + dirty, flush=True)

if os.environ.get("UNI_ONLY") == "wg":
    sys.exit(0)
a = torch.randn(8192, 8192, device=dev, dtype=torch.float16) / 64
b = torch.randn(8192, 8192, device=dev, dtype=torch.float16) / 64
q = torch.randn(8, 16, 512, 64, device=dev, dtype=torch.float16)
kk = torch.randn(8, 16, 512, 64, device=dev, dtype=torch.float16)
for name, args, out in [("gemm_tma_f16", (a, b), torch.empty(8192, 8192, device=dev, dtype=torch.float16)),
                        ("attn_scores_tma", (q, kk), torch.empty(8, 16, 512, 512, device=dev, dtype=torch.float16))]:
    extra = (0.125,) if name == "attn_scores_tma" else ()
    times = {"head": [], "new": []}
    outs = {}
    for _ in range(2):
        for nm, pkg in (("head", old), ("new", new)):
            f = getattr(pkg, name)
            times[nm].append(queued_graph_us(lambda f=f: f(*args, out, *extra), [()]))
            outs[nm] = out.clone()
    same = torch.equal(outs["head"], outs["new"])
    print(f"{name}: " + ", ".join(f"{nm} {t[0]:.1f} / {t[1]:.1f}" for nm, t in times.items())
          + ("" if same else " OUTPUTS DIFFER"), flush=True)
