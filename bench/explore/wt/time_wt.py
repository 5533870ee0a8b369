"""Throwaway: gptq_gemm_wg's timeline, from wt.ima's `stamped` and `stamped_ra` (gen.py),
after a CUDA graph of launches cycling weight sets larger than L2: for each point, over
the blocks that reach it, the global time since the earliest block's entry (ns: min /
median / max) and the block's own cycles since its entry (median); the slowest blocks'
rows; then the graph's µs a launch for gptq_gemm_wg, relacq and gptq_gemm. The stamps go to
$OUT/stamps.txt (a header line a kernel and shape, then a line a block and role,
32 values).
    python3 -u time_wt.py [M,K,N ...]"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import graph_us, gptq_weight, shapes, wg_workspace  # noqa: E402
import gemm_kernels as gk  # noqa: E402
import gemm_tma_kernels as tk  # noqa: E402
import wt_kernels as wk  # noqa: E402
from stamping import timeline  # noqa: E402

dev = "cuda"
out = os.environ.get("OUT", "/tmp")
consumer = ["entry", "set up", "first stage landed", "its MMAs done", "slot store", "arrival counted",
            "shared tile done", "end", "last: fenced", "last: blocks found", "last: summed", "last: y stored"]
for m, k, n in shapes([(16, 512, 4096), (32, 4096, 4096), (32, 4096, 6144), (32, 14336, 4096), (32, 4096, 28672)]):
    nsets = min(64, max(2, int(200e6 // (k * n // 2)) + 1))
    ws = [gptq_weight(wk.QuantWeight, k, n) for _ in range(nsets)]
    x = torch.randn(m, k, device=dev, dtype=torch.float16)
    part, arr = wg_workspace(tk, m, n)
    units = -(-m // 64) * -(-n // 192) * -(-k // 256)
    print(f"M={m} K={k} N={n}: units {units} ({units / 132:.1f} a block)")
    ys = {}
    for name, f in [("gptq_gemm_wg", tk.gptq_gemm_wg), ("relacq", wk.relacq), ("gptq_gemm", None),
                    ("stamped", wk.stamped), ("stamped_ra", wk.stamped_ra)]:
        y = torch.empty(m, n, device=dev, dtype=torch.float16)
        if name.startswith("stamped"):
            st = torch.zeros(tk.BLOCKS, 4, 32, device=dev, dtype=torch.int64)
            t = graph_us(lambda w: f(x, w, part, arr, y, st), [(w,) for w in ws])
        elif f is None:
            t = graph_us(lambda w: gk.gptq_gemm(x, w, y), [(w,) for w in ws])
            gk.gptq_gemm(x, ws[0], y)
        else:
            t = graph_us(lambda w: f(x, w, part, arr, y), [(w,) for w in ws])
            f(x, ws[0], part, arr, y)
        assert arr.abs().sum().item() == 0, f"{name} left arrivals non-zero"
        if name.startswith("stamped"):
            print(f"  {name} {t:.1f} us", flush=True)
            s = st.cpu()
            with open(f"{out}/stamps.txt", "a") as fo:
                fo.write(f"# {name} {m} {k} {n}\n")
                fo.write("\n".join(" ".join(str(v) for v in s[b, r].tolist()) for b in range(s.shape[0]) for r in range(4)) + "\n")
            timeline(s, consumer, 12)
        else:
            ys[name] = y
            err = (y.float() - ys["gptq_gemm_wg"].float()).abs().max().item()
            print(f"  {name} {t:.1f} us (max diff to gptq_gemm_wg {err:.3g})", flush=True)
