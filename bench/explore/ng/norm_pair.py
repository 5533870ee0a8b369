"""What time_ng.py and time_ng2.py share: add_rms_norm followed by a GEMV, against one
kernel that does both, at B = 1, as CUDA graphs cycling through weight sets larger than
L2 (µs a pair of launches, or a launch), outputs (the residual and y) compared."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import gptq_weight, graph_us, weight_sets  # noqa: E402

dev = "cuda"
eps = 1e-5


def compare(add_rms_norm, gemv, fused, quant_weight, cases):
    """For each (K, N, NY) of `cases` (NY = N / 2 for SiluAndMul fused), prints the time of
    add_rms_norm(x, residual, nw, xn, eps) then gemv(xn, w, y), of each alone, and of
    fused(x, residual, residual_out, nw, w, y, eps), with the largest differences."""
    for k, n, ny in cases:
        nsets = weight_sets(k, n)
        ws = [gptq_weight(quant_weight, k, n, 128) for _ in range(nsets)]
        x = torch.randn(1, k, device=dev, dtype=torch.float16)
        res0 = torch.randn(1, k, device=dev, dtype=torch.float16)
        nw = (1 + 0.1 * torch.randn(k, device=dev)).half()
        # Correctness: one of each from the same residual.
        res_a = res0.clone()
        xn = torch.empty(1, k, device=dev, dtype=torch.float16)
        y_a = torch.empty(1, ny, device=dev, dtype=torch.float16)
        add_rms_norm(x, res_a, nw, xn, eps)
        gemv(xn, ws[0], y_a)
        res_b = torch.empty_like(res0)
        y_b = torch.empty_like(y_a)
        fused(x, res0, res_b, nw, ws[0], y_b, eps)
        torch.cuda.synchronize()
        d_res = (res_a.float() - res_b.float()).abs().max().item()
        d_y = (y_a.float() - y_b.float()).abs().max().item()
        scale = y_a.float().abs().max().item()

        def two(w):
            add_rms_norm(x, res_a, nw, xn, eps)
            gemv(xn, w, y_a)

        t_two = graph_us(two, [(w,) for w in ws])
        t_norm = graph_us(lambda w: add_rms_norm(x, res_a, nw, xn, eps), [(w,) for w in ws])
        t_gemv = graph_us(lambda w: gemv(xn, w, y_a), [(w,) for w in ws])
        t_one = graph_us(lambda w: fused(x, res0, res_b, nw, w, y_b, eps), [(w,) for w in ws])
        print(f"K={k} N={n} NY={ny}: add_rms_norm + {gemv.__name__} {t_two:.1f} us (alone {t_norm:.1f} and {t_gemv:.1f}), "
              f"{fused.__name__} {t_one:.1f}; residual diff {d_res:.3g}, y diff {d_y:.3g} of {scale:.3g}", flush=True)
