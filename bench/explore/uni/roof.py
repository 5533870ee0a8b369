"""Throwaway, session 43 (issue 21): gptq_gemm_wg16 at M = 16, K = 8192, N = 28672 against
its weights' roofline measured in the same process: the device copy rate (1 GiB read
and written, the faster of an eager copy_ and an elementwise kernel in a graph), then the kernel of this
tree (gemm_tma_kernels) and of uni/build.sh's BASE (gemm_tma_head_kernels) in turn, four
passes, cycling weight sets past L2 (timing.wg_in_turn).
    python3 -u roof.py"""
import os
import sys
import types

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import gptq_weight, queued_graph_us, same_weight, weight_sets, wg_in_turn  # noqa: E402
import gemm_tma_head_kernels as old  # noqa: E402
import gemm_tma_kernels as new  # noqa: E402

dev = "cuda"
src = torch.empty(1 << 29, device=dev, dtype=torch.float16)
dst = torch.empty_like(src)
moved = 2 * src.numel() * 2


def eager_us(fn, reps=20):
    """Median µs of fn() between a pair of events, after two warm-up calls."""
    fn(), fn()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b) * 1e3)
    return sorted(ts)[reps // 2]


# Session 43's first call timed copy_ in a graph: 2.71 TB/s, a graph's memcpy node (the
# copy engines, it seems), not the SMs' copy that the bench's device-copy rows time. So: a
# memcpy outside a graph (what the bench's rows do) and an elementwise kernel in one.
rates = {"copy_ eager": moved / eager_us(lambda: dst.copy_(src)) / 1e6,
         "mul out= graph": moved / queued_graph_us(lambda: torch.mul(src, 1.0, out=dst), [()]) / 1e6}
rate = max(rates.values()) * 1e12
m, k, n = 16, 8192, 28672
weights = k // 8 * n * 4 + k // 128 * n * 2 + k // 128 * n // 8 * 4
roof = weights / rate * 1e6
print(f"copy 1 GiB: {', '.join(f'{nm} {r:.2f}' for nm, r in rates.items())} TB/s; "
      f"weights {weights / 1e6:.1f} MB, roofline {roof:.1f} µs, 75%: {roof / 0.75:.1f} µs", flush=True)
ws = [gptq_weight(new.QuantWeight, k, n) for _ in range(weight_sets(k, n))]
own = {id(w): same_weight(old, w) for w in ws}
x = torch.randn(m, k, device=dev, dtype=torch.float16)
part = torch.empty(new.BLOCKS, 3, 2, 128, 4, device=dev, dtype=torch.float32)
arr = torch.zeros(1, (n + 63) // 64, device=dev, dtype=torch.int32)
both = types.SimpleNamespace(head=lambda x, w, p, a, y: old.gptq_gemm_wg16(x, own[id(w)], p, a, y),
                             new=new.gptq_gemm_wg16)
for nm, (ts, err) in wg_in_turn(both, ["head", "new"], x, ws, part, arr, 4).items():
    print(f"{nm}: {' / '.join(f'{t:.1f}' for t in ts)} µs ({err:.1e}); of the roofline "
          f"{' / '.join(f'{100 * roof / t:.1f}%' for t in ts)}", flush=True)
