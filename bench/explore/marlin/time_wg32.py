"""Session 73 (issue 22): the decode layer's four projections at B = 32 on gptq_gemm_wg32
(the layer's kernel) beside Marlin (libmarlin.so, time_marlin.py's build and weights) and
cuBLAS's dense f16 product, each as CUDA graphs cycling weight sets larger than L2
(timing.py's graph_us), µs a launch, with the weights' roofline at this device's copy rate.
gate/up runs twice on gptq_gemm_wg32: plain (y as wide as W, as Marlin's product) and
with SiluAndMul fused (y half as wide, as the layer runs it). Each product is checked
against an f32 product of its weights dequantised by torch (gptq_gemm_wg32's by
bench/decode_layer_torch.py's `dequant_gptq`); a mismatch prints DIFF. (Session 73's run,
with a dequant of its own that read the zero words without their carries, printed DIFF
for every gptq_gemm_wg32 row; session 74's, with this one, agreed on every row. On a
fresh machine the four shapes take more than 200 s: give the call 400.)
    python3 -u time_wg32.py [M,K,N ...]"""
import os
import sys

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.path.insert(0, os.path.dirname(here))
sys.path.insert(0, os.path.dirname(os.path.dirname(here)))
from decode_layer_torch import dequant_gptq  # noqa: E402
from time_marlin import G, marlin_mul, marlin_weight  # noqa: E402
from timing import copy_rate, gptq_bytes, gptq_weight, graph_us, shapes, weight_sets  # noqa: E402
import gemm_tma_kernels as tk  # noqa: E402

dev = "cuda"


def check(y, ref):
    err = (y.float() - ref).abs().max().item()
    return "" if err <= 2e-2 * max(1.0, ref.abs().max().item()) else f" (DIFF {err:.3g})"


def main():
    rate = copy_rate()
    cases = shapes([(32, 4096, 6144), (32, 4096, 4096), (32, 4096, 28672), (32, 14336, 4096)])
    for m, k, n in cases:
        sets = weight_sets(k, n)
        x = torch.randn(m, k, device=dev, dtype=torch.float16)
        y = torch.empty(m, n, device=dev, dtype=torch.float16)
        roof = gptq_bytes(k, n) / rate / 1e6
        line = f"M={m} K={k} N={n}: roofline {roof:.1f}"

        gw = [gptq_weight(tk.QuantWeight, k, n, G) for _ in range(sets)]
        part = torch.empty(tk.BLOCKS, 3, 4, 128, 4, device=dev, dtype=torch.float32)
        arrivals = torch.zeros((m + 63) // 64, (n + 63) // 64, device=dev, dtype=torch.int32)
        t = graph_us(lambda w: tk.gptq_gemm_wg32(x, w, part, arrivals, y), [(w,) for w in gw])
        tk.gptq_gemm_wg32(x, gw[0], part, arrivals, y)
        ref = x.float() @ dequant_gptq(gw[0].qweight, gw[0].qzeros, gw[0].scales, G).float()
        line += f", gptq_gemm_wg32 {t:.1f} ({100 * roof / t:.0f}%)" + check(y, ref)
        if n % 16 == 0 and n >= 16384:
            yh = torch.empty(m, n // 2, device=dev, dtype=torch.float16)
            t = graph_us(lambda w: tk.gptq_gemm_wg32(x, w, part, arrivals, yh), [(w,) for w in gw])
            tk.gptq_gemm_wg32(x, gw[0], part, arrivals, yh)
            unit = tk.GATE_UP_UNIT
            r = ref.reshape(m, n // (2 * unit), 2, unit)
            fused = (torch.nn.functional.silu(r[:, :, 0]) * r[:, :, 1]).reshape(m, n // 2)
            line += f", fused SiluAndMul {t:.1f} ({100 * roof / t:.0f}%)" + check(yh, fused)
        del gw
        if int(arrivals.abs().sum()) != 0:
            line += " ARRIVALS NOT ZERO"

        mw = [marlin_weight(k, n) for _ in range(sets)]
        ws = torch.zeros(n // 128 * 16, device=dev, dtype=torch.int32)
        t = graph_us(lambda b, s: marlin_mul(x, b, s, y, ws), [(b, s) for b, s, _ in mw])
        marlin_mul(x, mw[0][0], mw[0][1], y, ws)
        line += f", Marlin {t:.1f} ({100 * roof / t:.0f}%)" + check(y, x.float() @ mw[0][2].float())
        dense = [d for _, _, d in mw[:2]]
        del mw
        t = graph_us(lambda d: torch.matmul(x, d, out=y), [(d,) for d in dense])
        line += f", cuBLAS dense f16 {t:.1f}"
        del dense
        print(line, flush=True)


main()
