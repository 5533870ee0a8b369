"""Throwaway: the decode layer's second norm and gate/up projection at B = 1
(specs/decode.ima's add_rms_norm, then specs/quant.ima's gptq_gemv with SiluAndMul fused)
against ng2.ima's norm_gemv, which does both in one, as CUDA graphs cycling through weight
sets larger than L2 (µs a pair of launches, or a launch); outputs compared. Also an
unfused shape (QKV's), for the form without SiluAndMul."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import gptq_weight, graph_us  # noqa: E402
import decode_kernels as dk
import ng2_kernels as ng
import quant_kernels as qk

dev = "cuda"
eps = 1e-5
for k, n, fused in [(4096, 28672, True), (4096, 6144, False)]:
    ny = n // 2 if fused else n
    nsets = min(64, max(2, int(300e6 // (k * n // 2)) + 1))
    ws = [gptq_weight(qk.QuantWeight, k, n, 128) for _ in range(nsets)]
    x = torch.randn(1, k, device=dev, dtype=torch.float16)
    res0 = torch.randn(1, k, device=dev, dtype=torch.float16)
    nw = (1 + 0.1 * torch.randn(k, device=dev)).half()
    # Correctness: one of each from the same residual.
    res_a = res0.clone()
    xn = torch.empty(1, k, device=dev, dtype=torch.float16)
    y_a = torch.empty(1, ny, device=dev, dtype=torch.float16)
    dk.add_rms_norm(x, res_a, nw, xn, eps)
    qk.gptq_gemv(xn, ws[0], y_a)
    res_b = torch.empty_like(res0)
    y_b = torch.empty_like(y_a)
    ng.norm_gemv(x, res0, res_b, nw, ws[0], y_b, eps)
    torch.cuda.synchronize()
    d_res = (res_a.float() - res_b.float()).abs().max().item()
    d_y = (y_a.float() - y_b.float()).abs().max().item()
    scale = y_a.float().abs().max().item()

    def two(w):
        dk.add_rms_norm(x, res_a, nw, xn, eps)
        qk.gptq_gemv(xn, w, y_a)

    t_two = graph_us(two, [(w,) for w in ws])
    t_norm = graph_us(lambda w: dk.add_rms_norm(x, res_a, nw, xn, eps), [(w,) for w in ws])
    t_gemv = graph_us(lambda w: qk.gptq_gemv(xn, w, y_a), [(w,) for w in ws])
    t_one = graph_us(lambda w: ng.norm_gemv(x, res0, res_b, nw, w, y_b, eps), [(w,) for w in ws])
    print(f"K={k} N={n} fused={fused}: add_rms_norm + gptq_gemv {t_two:.1f} us (alone {t_norm:.1f} and {t_gemv:.1f}), "
          f"norm_gemv {t_one:.1f}; residual diff {d_res:.3g}, y diff {d_y:.3g} of {scale:.3g}", flush=True)
