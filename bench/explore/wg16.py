"""Throwaway, session 33 (issue 21): specs/gemm_tma.ima's gptq_gemm_wg16 (5 stages of x's
16 rows, the scale after the MMA) against gptq_gemm_wg and specs/gemm.ima's gptq_gemm, on
GPTQ's own words, and cuBLAS's dense f16 product of the same shape (torch's x @ W); CUDA
graphs cycling weight sets larger than L2, µs a launch, twice in turn; each output against
torch's f32 product of the dequantized weight (max err / max |y|).
    python3 -u wg16.py [M,K,N ...]"""
import torch
import gemm_kernels as gk
import gemm_tma_kernels as tk
from timing import gptq_reference, gptq_weight, graph_us, shapes, weight_sets

dev = "cuda"

for m, k, n in shapes([(16, 8192, 28672), (16, 4096, 28672), (16, 14336, 4096), (16, 4096, 6144),
                       (16, 4096, 4096), (8, 8192, 28672), (1, 8192, 28672)]):
    ws = [gptq_weight(tk.QuantWeight, k, n) for _ in range(weight_sets(k, n))]
    x = torch.randn(m, k, device=dev, dtype=torch.float16)
    arr = torch.zeros((m + 63) // 64, (n + 63) // 64, device=dev, dtype=torch.int32)
    part16 = torch.empty(tk.BLOCKS, 3, 2, 128, 4, device=dev, dtype=torch.float32)
    part64 = torch.empty(tk.BLOCKS, 3, 8, 128, 4, device=dev, dtype=torch.float32)
    ys = {nm: torch.empty(m, n, device=dev, dtype=torch.float16) for nm in ("wg16", "wg", "gptq_gemm")}
    run = {
        "wg16": lambda w: tk.gptq_gemm_wg16(x, w, part16, arr, ys["wg16"]),
        "wg": lambda w: tk.gptq_gemm_wg(x, w, part64, arr, ys["wg"]),
        "gptq_gemm": lambda w: gk.gptq_gemm(x, w, ys["gptq_gemm"]),
    }
    dense = [torch.randn(k, n, device=dev, dtype=torch.float16) for _ in range(max(2, int(600e6 // (k * n * 2)) + 1))]
    y_dense = torch.empty(m, n, device=dev, dtype=torch.float16)
    ref = gptq_reference(x, ws[0], k, n)
    scale = ref.abs().max().item()
    row = []
    for rnd in range(2):
        for nm, f in run.items():
            t = graph_us(f, [(w,) for w in ws])
            if rnd == 0:
                f(ws[0])
                err = (ys[nm].float() - ref).abs().max().item() / scale
                row.append(f"{nm} {t:.1f} ({err:.1e})")
            else:
                row.append(f"{nm} {t:.1f}")
        t = graph_us(lambda d: torch.matmul(x, d, out=y_dense), [(d,) for d in dense])
        row.append(f"cuBLAS f16 {t:.1f}")
    print(f"M={m} K={k} N={n}: " + ", ".join(row), flush=True)
