"""Throwaway (issue 22): ima.cuh's ima_cluster_w4a16 (specs/gemm_cluster.ima), its index
algebra simulated on the host (numpy, no GPU) line by line as the header writes it: the
load cursor over (tile, group) steps two ahead of the multiplies, across a cluster's tiles;
the GPTQ accessor's whole tile b = 4 q + t of 4 packed rows, every 4th, decoded by
dequant_frag into b[c][j] = (row j, row j + 4) of the packed row; x staged with each 8
elements in the order (0, 4, 1, 5, 2, 6, 3, 7); mma.sync m16n8k16 as the PTX ISA lays out
its fragments, with W as A; x's tiles past M skipped; each tile's sums to `part` (two
buffers) and each block's CK-th of the columns added over the cluster; SiluAndMul fused
where y is half as wide. Checked against x · W (and silu(gate) · up) in f64, and a
mutation of the mapping (two of a lane's A registers swapped) must fail. The weights are
floats here: dequant_frag's own decode is gptq_gemm's, which tests/gemm_gpu.rs checks.
    python3 bench/explore/cl/sim_spec.py"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cl_sim import mma  # noqa: E402  (mma.sync m16n8k16's fragments, as the PTX ISA lays them out)


def run(M, K, N, WN, KW, CK, clusters, fused, mutate=False, seed=0):
    rng = np.random.default_rng(seed)
    W = rng.standard_normal((K, N))
    x = rng.standard_normal((M, K))
    COLS = 32 * WN
    tiles, stride = N // COLS, clusters
    ks = K // CK
    kwarp = ks // KW
    groups = kwarp // 128
    assert K % (CK * KW * 256) == 0 and N % COLS == 0 and M <= 32
    NY = N // 2 if fused else N
    y = np.full((M, NY), np.nan)
    for cluster in range(clusters):
        tile0 = cluster
        steps = (tiles - 1 - tile0) // stride * groups + groups if tile0 < tiles else 0
        # Every block of the cluster: its staged x, its warps' sums of each tile.
        part = {}  # (tile, rank) -> [KW, 32, COLS]
        for rank in range(CK):
            kb = rank * ks
            xs = np.zeros((32, ks))
            xs[:M] = x[:, kb:kb + ks]
            xs = xs.reshape(32, ks // 8, 8)[:, :, [0, 4, 1, 5, 2, 6, 3, 7]].reshape(32, ks)
            for warp in range(WN * KW):
                wn, wk = warp % WN, warp // WN
                k0 = kb + wk * kwarp
                q0 = k0 // 128
                # The cursor: load k returns step min(k, steps - 1) as (tile, group).
                cur = {"lt": tile0, "lq": 0, "left": steps}

                def load():
                    tl = (cur["lt"], cur["lq"])
                    if cur["left"] > 1:
                        cur["left"] -= 1
                        cur["lq"] += 1
                        if cur["lq"] == groups:
                            cur["lq"] = 0
                            cur["lt"] += stride
                    return tl

                def tile_rows(tl, t):
                    """Lane t's packed rows of whole tile 4 (q0 + lq) + t, R = S = 4: k0, then
                    the 4 rows' first K rows."""
                    b = 4 * (q0 + tl[1]) + t
                    first = 8 * (b // 4 * 16 + b % 4)
                    return first, [first + 32 * r for r in range(4)]

                a_ld, b_ld = load(), load()
                if steps == 0:
                    break
                acc = [[[[0.0] * 4 for _ in range(32)] for _ in range(4)] for _ in range(2)]
                done, ft = 0, tile0

                def multiply(tl):
                    for r in range(4):
                        regs = []
                        for lane in range(32):
                            g, t = lane // 4, lane % 4
                            n = tl[0] * COLS + 32 * wn + 4 * g
                            k0r, rows = tile_rows(tl, t)
                            kr = rows[r]
                            bf = [[(W[kr + j, n + c], W[kr + j + 4, n + c]) for j in range(4)] for c in range(4)]
                            regs.append((bf, kr - kb))
                        for j in range(4):
                            if 8 * j >= M:
                                break
                            b0, b1 = [], []
                            for lane in range(32):
                                g = lane // 4
                                kx = regs[lane][1]
                                e = xs[8 * j + g, kx:kx + 8]
                                b0.append(((e[0], e[1]), (e[2], e[3])))
                                b1.append(((e[4], e[5]), (e[6], e[7])))
                            for i in range(2):
                                a0, a1 = [], []
                                for lane in range(32):
                                    bf = regs[lane][0]
                                    r0 = [bf[2 * i][0], bf[2 * i + 1][0], bf[2 * i][1], bf[2 * i + 1][1]]
                                    r1 = [bf[2 * i][2], bf[2 * i + 1][2], bf[2 * i][3], bf[2 * i + 1][3]]
                                    if mutate and lane == 5:
                                        r0[0], r0[2] = r0[2], r0[0]
                                    a0.append(r0)
                                    a1.append(r1)
                                mma(acc[i][j], a0, b0)
                                mma(acc[i][j], a1, b1)

                for _ in range(0, steps, 2):
                    c2 = load()
                    multiply(a_ld)
                    d2 = load()
                    multiply(b_ld)
                    a_ld, b_ld = c2, d2
                    done += 2
                    if done == groups:
                        p = part.setdefault((ft, rank), np.zeros((KW, 32, COLS)))
                        for lane in range(32):
                            g, t = lane // 4, lane % 4
                            for i in range(2):
                                for j in range(4):
                                    for e in range(4):
                                        p[wk, 8 * j + 2 * t + e % 2, 32 * wn + 4 * g + 2 * i + e // 2] = acc[i][j][lane][e]
                        ft += stride
                        done = 0
                        acc = [[[[0.0] * 4 for _ in range(32)] for _ in range(4)] for _ in range(2)]
        # finish: each rank's CK-th of each tile's columns, in units of 8 (16 fused).
        unit = 16 if fused else 8
        units = COLS // CK // unit
        for tile in range(tile0, tiles, stride):
            for rank in range(CK):
                for i in range(32 * units):
                    r, col = i // units, (rank * units + i % units) * unit
                    if r >= M:
                        continue
                    s = sum(part[(tile, q)][k, r, col:col + unit] for q in range(CK) for k in range(KW))
                    if fused:
                        o = s[:8] / (1 + np.exp(-s[:8])) * s[8:]
                        y[r, (tile * COLS + col) // 2:(tile * COLS + col) // 2 + 8] = o
                    else:
                        y[r, tile * COLS + col:tile * COLS + col + 8] = s
    ref = x @ W
    if fused:
        gate = ref.reshape(M, N // 16, 2, 8)[:, :, 0].reshape(M, NY)
        up = ref.reshape(M, N // 16, 2, 8)[:, :, 1].reshape(M, NY)
        ref = gate / (1 + np.exp(-gate)) * up
    assert not np.isnan(y).any(), "an element of y was not written"
    return np.abs(y - ref).max() / np.abs(ref).max()


if __name__ == "__main__":
    # (M, K, N, WN, KW, CK, clusters, fused): the kernels' shapes made small; more tiles
    # than clusters (a cluster's loads running on into its next tile); M past 8, at 1, at 32.
    for shape in [(32, 2048, 256, 4, 2, 4, 2, False), (9, 2048, 384, 6, 2, 4, 1, False),
                  (5, 2048, 768, 8, 1, 8, 2, True), (1, 1024, 512, 4, 2, 2, 2, True),
                  (17, 1024, 384, 4, 2, 2, 2, False)]:
        err = run(*shape)
        print(f"M K N WN KW CK clusters fused = {shape}: max |y - ref| / max |ref| = {err:.1e}")
        assert err < 1e-9, "the mapping is wrong"
    err = run(9, 1024, 128, 4, 2, 2, 1, False, mutate=True)
    print(f"mutated (a lane's A registers 0 and 2 swapped): {err:.1e}")
    assert err > 1e-3, "the check would not catch a wrong mapping"
    print("ok")
