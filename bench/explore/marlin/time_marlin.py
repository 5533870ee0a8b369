"""Throwaway reference for issue 21: Marlin (IST-DASLab/marlin, marlin_cuda_kernel.cu
beside this file, through libmarlin.so; see marlin_lib.cu) against gptq_gemm and cuBLAS's
dense f16 product on the same shapes, each as CUDA graphs cycling weight sets larger than
L2 (timing.py's graph_us), µs a launch.

Marlin's weight copies here carry no L2 evict_first policy (see marlin_cuda_kernel.cu's
`imac:` note). Its format is symmetric (q - 8, no zero points) and permuted into its tiles, so it
does a little less than gptq_gemm a weight (no zero point to subtract). Its weights here
are random 4-bit values packed in Marlin's own order (a transcription of its
`Layer.pack`), and its output is checked against an f32 product of the same weights
dequantised by torch; a mismatch prints DIFF.
    python3 -u time_marlin.py [M,K,N ...]
On the H200 (session of 1cd6769) the shape after M = 64 hung twice (not investigated);
M = 32 and 128 alone ran in 27 s, start included."""
import ctypes
import os
import sys
import time

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(here))
from timing import gptq_weight, graph_us, shapes  # noqa: E402
import gemm_kernels as gk  # noqa: E402

dev = "cuda"
G = 128
lib = ctypes.CDLL(os.path.join(here, "libmarlin.so"))
lib.marlin_mul.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_int] * 3 + [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]


def marlin_perms():
    """Marlin's `_get_perms`: the order of a 16 x 64 tile's weights, and of a row of 64 scales."""
    perm = []
    for i in range(32):
        perm1 = []
        col = i // 4
        for block in (0, 1):
            for row in (2 * (i % 4), 2 * (i % 4) + 1, 2 * (i % 4 + 4), 2 * (i % 4 + 4) + 1):
                perm1.append(16 * row + col + 8 * block)
        for j in range(4):
            perm.extend(p + 256 * j for p in perm1)
    perm = torch.tensor(perm).reshape(-1, 8)[:, [0, 2, 4, 6, 1, 3, 5, 7]].reshape(-1)
    scale_perm = [i + 8 * j for i in range(8) for j in range(8)]
    return perm.to(dev), torch.tensor(scale_perm, device=dev)


PERM, SCALE_PERM = marlin_perms()


def marlin_weight(k, n):
    """Random 4-bit weights (k x n, values 0..15) and scales, in Marlin's layout, with the
    dense f16 weights they stand for: (packed, scales, dense)."""
    q = torch.randint(0, 16, (k, n), device=dev, dtype=torch.int64)
    s = (torch.rand(k // G, n, device=dev) * 0.01 + 0.001).half()
    dense = ((q - 8).half() * s.repeat_interleave(G, dim=0))
    sp = s.reshape(-1, 64)[:, SCALE_PERM].reshape(-1, n).contiguous()
    w = q.reshape(k // 16, 16, n // 16, 16).permute(0, 2, 1, 3).reshape(k // 16, n * 16)
    w = w.reshape(-1, PERM.numel())[:, PERM].reshape(k // 16, n * 16)
    packed = torch.zeros(k // 16, n * 2, device=dev, dtype=torch.int64)
    for i in range(8):
        packed |= w[:, i::8] << (4 * i)
    packed = torch.where(packed >= 2**31, packed - 2**32, packed).to(torch.int32)
    return packed, sp, dense


def marlin_mul(x, b, s, y, ws):
    m, k = x.shape
    n = y.shape[1]
    err = lib.marlin_mul(x.data_ptr(), b.data_ptr(), y.data_ptr(), s.data_ptr(), m, n, k,
                         ws.data_ptr(), G, torch.cuda.current_stream().cuda_stream)
    if err:
        raise RuntimeError(f"marlin_mul: error {err} at M={m} K={k} N={n}")


def main():
    cases = shapes([(16, 8192, 28672), (64, 8192, 28672), (128, 8192, 28672), (1, 8192, 28672),
                    (1, 4096, 6144), (1, 4096, 4096), (1, 4096, 28672), (1, 14336, 4096),
                    (32, 4096, 6144), (32, 4096, 4096), (32, 4096, 28672), (32, 14336, 4096)])
    start = time.time()
    for m, k, n in cases:
        nsets = max(2, int(300e6 // (k * n // 2)) + 1)
        x = torch.randn(m, k, device=dev, dtype=torch.float16)
        mw = [marlin_weight(k, n) for _ in range(nsets)]
        ws = torch.zeros(n // 128 * 16, device=dev, dtype=torch.int32)
        y = torch.empty(m, n, device=dev, dtype=torch.float16)
        t_marlin = graph_us(lambda b, s: marlin_mul(x, b, s, y, ws), [(b, s) for b, s, _ in mw])
        marlin_mul(x, mw[0][0], mw[0][1], y, ws)
        ref = x.float() @ mw[0][2].float()
        err = (y.float() - ref).abs().max().item()
        ok = err <= 2e-2 * max(1.0, ref.abs().max().item())
        dense = [d for _, _, d in mw[:2]]
        del mw
        t_cublas = graph_us(lambda d: torch.matmul(x, d, out=y), [(d,) for d in dense])
        del dense
        gw = [gptq_weight(gk.QuantWeight, k, n, G) for _ in range(nsets)]
        t_imac = graph_us(lambda w: gk.gptq_gemm(x, w, y), [(w,) for w in gw])
        del gw
        roof = (k * n / 2 + k // G * n * 2.5) / 4.26e6
        print(f"M={m} K={k} N={n}: marlin {t_marlin:.1f}" + ("" if ok else f" (DIFF {err:.3g})")
              + f", gptq_gemm {t_imac:.1f}, cuBLAS f16 {t_cublas:.1f}, weights' roofline {roof:.1f}"
              + f" ({time.time() - start:.0f} s since the start)", flush=True)


if __name__ == "__main__":
    main()
