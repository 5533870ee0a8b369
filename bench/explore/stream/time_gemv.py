"""Throwaway: gptq_gemv (128-column blocks, tiles of 8 packed rows) against
gptq_gemv_narrow (16-column blocks) at M = 1 on the decode layer's projection shapes
(CUDA graphs cycling through weight sets larger than L2; µs a launch, TB/s of qweight)."""
import torch
import decode_kernels as dk
import quant_kernels as qk
import gemm_kernels as gk
import sys

dev = "cuda"
G = 128


def weight(k, n):
    qweight = torch.randint(-2**31, 2**31 - 1, (k // 8, n), device=dev, dtype=torch.int32)
    qzeros = torch.randint(-2**31, 2**31 - 1, (k // G, n // 8), device=dev, dtype=torch.int32)
    scales = (torch.rand(k // G, n, device=dev) * 0.01).half()
    return dk.QuantWeight("gptq", qweight=qweight, qzeros=qzeros, scales=scales, group_size=G)


def timed(fn, sets, reps=20):
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        for a in sets:
            fn(*a)
        torch.cuda.synchronize()
        with torch.cuda.graph(g):
            for a in sets:
                fn(*a)
    ts = []
    for _ in range(reps):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        g.replay()
        e1.record()
        torch.cuda.synchronize()
        ts.append(e0.elapsed_time(e1) * 1e3 / len(sets))
    ts.sort()
    return ts[len(ts) // 2]


ms = [int(a) for a in sys.argv[1:]] or [1]
for k, n in [(4096, 6144), (4096, 4096), (4096, 28672), (14336, 4096), (8192, 28672)]:
    mb = k * n / 2 / 1e6
    ws = [weight(k, n) for _ in range(max(2, int(300 // mb) + 1))]
    for m in ms:
        x = torch.randn(m, k, device=dev, dtype=torch.float16)
        ys = [torch.empty(m, n, device=dev, dtype=torch.float16) for _ in range(3)]
        fs = [dk.gptq_gemv_narrow, qk.gptq_gemv, gk.gptq_gemm]
        ts = [timed(lambda w: f(x, w, y), [(w,) for w in ws]) for f, y in zip(fs, ys)]
        d = max((y.float() - ys[2].float()).abs().max().item() for y in ys)
        print(f"M={m} K={k} N={n} ({mb:.1f} MB): narrow {ts[0]:.1f} us ({mb / ts[0]:.2f} TB/s), gptq_gemv {ts[1]:.1f} ({mb / ts[1]:.2f}), gptq_gemm {ts[2]:.1f} ({mb / ts[2]:.2f}), max diff {d:.3g}", flush=True)
