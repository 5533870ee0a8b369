"""Throwaway: GPTQ's words repacked for rp.ima's and rp2.ima's kernels (gen.py, gen2.py),
the weight sets their timers (rp.py, rp2.py) cycle, and the stamped kernels' runs (rp3.py,
rp5.py, rp6.py)."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import graph_us, shapes, weight_sets, wg_workspace  # noqa: E402

dev = "cuda"


def repack(qw):
    """GPTQ's [K/8, N] words (word (p, n) holds rows 8 p + i at bits 4 i) repacked: of each
    k step j of 16 rows and column pair (2 c, 2 c + 1), lane t's word (t < 4) holds, at
    nibble s + 4 i, row 16 j + 8 h + 2 t + i of column 2 c + e, s = 2 h + e; it lies at
    packed row 2 j + t // 2, column 2 c + t % 2."""
    k8, n = qw.shape
    k = 8 * k8
    w = qw.to(torch.int64) & 0xFFFFFFFF
    q = torch.stack([(w >> (4 * i)) & 15 for i in range(8)], dim=1).reshape(k, n)  # q[k, n]
    q = q.reshape(k // 16, 2, 4, 2, n // 2, 2)  # [j, h, t, i, c, e]
    word = torch.zeros(k // 16, 4, n // 2, dtype=torch.int64, device=qw.device)
    for h in range(2):
        for i in range(2):
            for e in range(2):
                word |= q[:, h, :, i, :, e] << (4 * (2 * h + e) + 16 * i)
    word = word.reshape(k // 16, 2, 2, n // 2).permute(0, 1, 3, 2).reshape(k8, n)
    return torch.where(word >= 2**31, word - 2**32, word).to(torch.int32)


def weights(formats, k, n, group=128):
    """One random GPTQ weight, K x N, as each of `formats` (name -> (a package's
    QuantWeight class, whether its words are repacked)) makes it."""
    qweight = torch.randint(-2**31, 2**31 - 1, (k // 8, n), device=dev, dtype=torch.int32)
    qzeros = torch.randint(-2**31, 2**31 - 1, (k // group, n // 8), device=dev, dtype=torch.int32)
    scales = (torch.rand(k // group, n, device=dev) * 0.01).half()
    repacked = repack(qweight)
    return {name: cls("gptq", qweight=repacked if rp else qweight, qzeros=qzeros, scales=scales, group_size=group)
            for name, (cls, rp) in formats.items()}


def stamped_runs(package, formats, default, phases):
    """For each shape (M, K, N: the command line's, else `default`), yields (m, k, n, run):
    run(name, fmt) times `package`'s kernel `name` on the weights as format `fmt` (CUDA
    graphs cycling weight sets larger than L2) and returns the µs a launch and the last
    launch's stamps, an i64 tensor [BLOCKS, *phases] on the host. The kernels take x, W,
    gptq_gemm_wg's workspace, y and the stamps."""
    for m, k, n in shapes(default):
        ws = [weights(formats, k, n) for _ in range(weight_sets(k, n))]
        x = torch.randn(m, k, device=dev, dtype=torch.float16)
        part, arr = wg_workspace(package, m, n)
        y = torch.empty(m, n, device=dev, dtype=torch.float16)
        ph = torch.zeros(package.BLOCKS, *phases, device=dev, dtype=torch.int64)

        def run(name, fmt):
            f = getattr(package, name)
            us = graph_us(lambda w: f(x, w[fmt], part, arr, y, ph), [(w,) for w in ws])
            return us, ph.cpu()

        yield m, k, n, run
