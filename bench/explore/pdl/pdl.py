"""Throwaway, session 44 (issues 21 and 22): gptq_gemm_wg16 and wg32 launched with
programmatic dependent launch (PDL). pdl.patch makes the kernel trigger its dependents at
entry, copy the weights of its first stages before griddepcontrol.wait and everything
else after it, and makes the runtime launch with programmatic stream serialization when
IMA_PDL=1; build.sh builds that as gemm_tma_pdl_kernels. In one process, on the same
weights: the tree's kernel (main), the patched one launched plainly (pdl0) and with PDL
(pdl1), µs a launch on queued CUDA graphs of SETS launches cycling weight sets past L2,
three passes; then each weight set's output of a PDL graph against torch's f32 product,
and the copy rate for the roofline (as uni/roof.py).
    python3 -u pdl.py"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import capture, copy_rate, gptq_bytes, gptq_reference, gptq_weight, queued_graph_us, same_weight  # noqa: E402
import gemm_tma_kernels as main  # noqa: E402
import gemm_tma_pdl_kernels as pdl  # noqa: E402

dev = "cuda"
rate = copy_rate()

for kernel, m, k, n, sets in [("gptq_gemm_wg16", 16, 8192, 28672, 8), ("gptq_gemm_wg16", 16, 14336, 4096, 24),
                              ("gptq_gemm_wg16", 1, 8192, 28672, 8), ("gptq_gemm_wg32", 32, 8192, 28672, 8)]:
    ws = [gptq_weight(main.QuantWeight, k, n) for _ in range(sets)]
    own = {id(w): same_weight(pdl, w) for w in ws}
    x = torch.randn(m, k, device=dev, dtype=torch.float16)
    tiles = {"gptq_gemm_wg16": 2, "gptq_gemm_wg32": 4}[kernel]
    part = torch.empty(main.BLOCKS, 3, tiles, 128, 4, device=dev, dtype=torch.float32)
    arr = torch.zeros((m + 63) // 64, (n + 63) // 64, device=dev, dtype=torch.int32)
    y = torch.empty(m, n, device=dev, dtype=torch.float16)
    fm, fp = getattr(main, kernel), getattr(pdl, kernel)
    variants = {"main": (lambda w: fm(x, w, part, arr, y), "0"),
                "pdl0": (lambda w: fp(x, own[id(w)], part, arr, y), "0"),
                "pdl1": (lambda w: fp(x, own[id(w)], part, arr, y), "1")}
    times = {nm: [] for nm in variants}
    for _ in range(3):
        for nm, (f, env) in variants.items():
            os.environ["IMA_PDL"] = env
            times[nm].append(queued_graph_us(f, [(w,) for w in ws]))
    roof = gptq_bytes(k, n) / rate / 1e6
    # Each set's own output from one PDL graph (launches chained on part and arrivals).
    os.environ["IMA_PDL"] = "1"
    ys = [torch.full((m, n), float("nan"), device=dev, dtype=torch.float16) for _ in ws]
    g = capture(lambda w, yi: fp(x, own[id(w)], part, arr, yi), list(zip(ws, ys)))
    for yi in ys:
        yi.fill_(float("nan"))
    g.replay()
    torch.cuda.synchronize()
    errs = []
    for w, yi in zip(ws, ys):
        ref = gptq_reference(x, w, k, n)
        errs.append((yi.float() - ref).abs().max().item() / ref.abs().max().item())
    os.environ["IMA_PDL"] = "0"
    dirty = "" if int(arr.abs().sum()) == 0 else " ARRIVALS NOT ZERO"
    row = ", ".join(f"{nm} {' / '.join(f'{t:.1f}' for t in ts)} ({100 * roof / min(ts):.1f}%)"
                    for nm, ts in times.items())
    print(f"{kernel} M={m} K={k} N={n} ({sets} sets, roofline {roof:.1f} µs): {row}; "
          f"PDL graph max err {max(errs):.1e}{dirty}", flush=True)
