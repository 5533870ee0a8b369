"""Throwaway: gptq_gemm_wg's timeline after b1cbb7b, from wt3.ima's `stamped` (gen3.py),
as time_wt.py read b74cd2e's: after a CUDA graph of launches cycling weight sets larger
than L2, for each point, over the blocks that reach it, the global time since the
earliest block's entry (ns: min / median / max) and the block's own cycles since its entry
(median); the slowest blocks' rows; and the graph's µs a launch of stamped, gptq_gemm_wg
and gptq_gemm.
    python3 -u time_wt3.py [M,K,N ...]"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import graph_us, gptq_weight, shapes, wg_workspace  # noqa: E402
import gemm_kernels as gk  # noqa: E402
import gemm_tma_kernels as tk  # noqa: E402
import wt3_kernels as wk  # noqa: E402
from stamping import timeline  # noqa: E402

dev = "cuda"
consumer = ["entry", "set up", "first stage landed", "its MMAs done", "slot store", "arrival counted",
            "shared tile done", "end", "last: summed", "last: y stored"]
for m, k, n in shapes([(32, 4096, 4096), (32, 4096, 6144), (32, 14336, 4096), (32, 4096, 28672), (16, 512, 4096)]):
    nsets = min(64, max(2, int(200e6 // (k * n // 2)) + 1))
    ws = [gptq_weight(wk.QuantWeight, k, n) for _ in range(nsets)]
    x = torch.randn(m, k, device=dev, dtype=torch.float16)
    part, arr = wg_workspace(tk, m, n)
    st = torch.zeros(tk.BLOCKS, 4, 32, device=dev, dtype=torch.int64)
    y = torch.empty(m, n, device=dev, dtype=torch.float16)
    t_st = graph_us(lambda w: wk.stamped(x, w, part, arr, y, st), [(w,) for w in ws])
    s = st.cpu()
    t_wg = graph_us(lambda w: tk.gptq_gemm_wg(x, w, part, arr, y), [(w,) for w in ws])
    t_g = graph_us(lambda w: gk.gptq_gemm(x, w, y), [(w,) for w in ws])
    units = -(-m // 64) * -(-n // 192) * -(-k // 256)
    print(f"M={m} K={k} N={n}: units {units} ({units / 132:.1f} a block); stamped {t_st:.1f} us, "
          f"gptq_gemm_wg {t_wg:.1f}, gptq_gemm {t_g:.1f}", flush=True)
    timeline(s, consumer, 10)
