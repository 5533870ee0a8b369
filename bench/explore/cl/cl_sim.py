"""Throwaway: cl_gemm.cu's index algebra checked on the host (numpy, no GPU): each lane's
words, scales and zeros as cl_gemm loads them, its decode into A fragments, x staged in the
pair order and read as B fragments, mma.sync m16n8k16 as the PTX ISA lays out its
fragments, the warps' sums stored as the epilogue stores them and added up across the
cluster, against x · W computed directly, one tile a cluster. A mutation of the mapping
(two of a lane's A registers swapped) must fail the check. Not simulated: the loop of a
cluster over several tiles (which words load into which registers ahead) and the fused
SiluAndMul epilogue; time_cl.py checks every form's output against torch on the GPU.
    python3 bench/explore/cl/cl_sim.py"""
import numpy as np

G = 128


def pack(q):
    """Nibble i of word (r, n) is q[8 r + i, n] (GPTQ's qweight), or along n for zeros."""
    k, n = q.shape
    w = np.zeros((k // 8, n), dtype=np.uint64)
    for i in range(8):
        w |= q[i::8].astype(np.uint64) << np.uint64(4 * i)
    return w.astype(np.uint32)


def mma(c, a, b):
    """c (lane, 4) += A · B for mma.sync m16n8k16 .row.col: a (lane, 4 regs, 2 halves), b (lane,
    2 regs, 2 halves), in the PTX ISA's fragment layout."""
    A = np.zeros((16, 16))
    B = np.zeros((16, 8))
    for lane in range(32):
        g, t = lane // 4, lane % 4
        for reg, (row, k) in enumerate([(g, 2 * t), (g + 8, 2 * t), (g, 2 * t + 8), (g + 8, 2 * t + 8)]):
            A[row, k], A[row, k + 1] = a[lane][reg]
        for reg, k in enumerate([2 * t, 2 * t + 8]):
            B[k, g], B[k + 1, g] = b[lane][reg]
    C = A @ B
    for lane in range(32):
        g, t = lane // 4, lane % 4
        for e, (row, col) in enumerate([(g, 2 * t), (g, 2 * t + 1), (g + 8, 2 * t), (g + 8, 2 * t + 1)]):
            c[lane][e] += C[row, col]


def run(M, K, N, WN, KW, CK, NT, mutate=False, seed=0):
    rng = np.random.default_rng(seed)
    q = rng.integers(0, 16, (K, N))
    zr = rng.integers(0, 16, (K // G, N))
    s = (rng.random((K // G, N)) * 0.01 + 0.001).astype(np.float16)
    x = rng.standard_normal((M, K)).astype(np.float16)
    qweight = pack(q)
    qzeros = ((pack(zr.T).T.astype(np.int64) - 0x11111111) % 2**32).astype(np.uint32)  # v1
    COLS, ROWS, KS = 32 * WN, 8 * NT, K // CK
    KWARP = KS // KW
    SW = KWARP // 32
    y = np.zeros((M, N))
    for tile in range(N // COLS):
        n0 = tile * COLS
        part = np.zeros((CK, KW, ROWS, COLS))
        for rank in range(CK):
            kb0 = rank * KS
            # x staged: rows past M zero, each 8 elements in the order 0, 4, 1, 5, 2, 6, 3, 7
            xs = np.zeros((ROWS, KS), dtype=np.float16)
            xs[:M] = x[:, kb0:kb0 + KS]
            xs = xs.reshape(ROWS, KS // 8, 8)[:, :, [0, 4, 1, 5, 2, 6, 3, 7]].reshape(ROWS, KS)
            for wn in range(WN):
                for wk in range(KW):
                    kw0 = kb0 + wk * KWARP
                    acc = [[[[0.0] * 4 for _ in range(32)] for _ in range(NT)] for _ in range(2)]
                    for step in range(SW):
                        grp = (kw0 + 32 * step) // G
                        a = [[[[None] * 4 for _ in range(32)] for _ in range(2)] for _ in range(2)]
                        for lane in range(32):
                            g, t = lane // 4, lane % 4
                            nl = n0 + 32 * wn + 4 * g
                            zw = (int(qzeros[grp, nl // 8]) + 0x11111111) % 2**32
                            for c in range(4):
                                w = int(qweight[kw0 // 8 + 4 * step + t, nl + c])
                                z = zw >> (4 * (nl % 8 + c)) & 0xF
                                sc = s[grp, nl + c]
                                for j in range(4):
                                    lo, hi = (w >> (4 * j)) & 0xF, (w >> (4 * j + 16)) & 0xF
                                    v = tuple(float(np.float16(np.float16(1024 + n) - np.float16(1024 + z)) * sc)
                                              for n in (lo, hi))
                                    reg = 2 * (j % 2) + c % 2
                                    if mutate and lane == 5 and c == 1:
                                        reg ^= 2
                                    a[c // 2][j // 2][lane][reg] = tuple(float(np.float16(e)) for e in v)
                        for jn in range(NT):
                            b = [None] * 32
                            for lane in range(32):
                                g, t = lane // 4, lane % 4
                                k = wk * KWARP + 32 * step + 8 * t
                                h = [float(e) for e in xs[8 * jn + g, k:k + 8]]
                                b[lane] = ((h[0], h[1]), (h[2], h[3]), (h[4], h[5]), (h[6], h[7]))
                            for i in range(2):
                                mma(acc[i][jn], a[i][0], [bl[0:2] for bl in b])
                                mma(acc[i][jn], a[i][1], [bl[2:4] for bl in b])
                    pw = part[rank, wk]
                    for lane in range(32):
                        g, t = lane // 4, lane % 4
                        for i in range(2):
                            for jn in range(NT):
                                col, row = 32 * wn + 4 * g + 2 * i, 8 * jn + 2 * t
                                c4 = acc[i][jn][lane]
                                pw[row, col], pw[row + 1, col] = c4[0], c4[1]
                                pw[row, col + 1], pw[row + 1, col + 1] = c4[2], c4[3]
        # Each rank stores its CK-th of the columns; together, all of them.
        y[:, n0:n0 + COLS] = part.sum(axis=(0, 1))[:M]
    w_real = (q - np.repeat(zr, G, axis=0)) * np.repeat(s.astype(np.float64), G, axis=0)
    ref = x.astype(np.float64) @ w_real
    return np.abs(y - ref).max() / np.abs(ref).max()


if __name__ == "__main__":
    for shape in [(32, 256, 64, 2, 1, 2, 4), (20, 512, 64, 1, 2, 2, 4), (9, 256, 32, 1, 1, 1, 2)]:
        err = run(*shape)
        print(f"M K N WN KW CK NT = {shape}: max |y - x W| / max |x W| = {err:.2e}")
        assert err < 2e-3, "the mapping is wrong"
    err = run(32, 256, 64, 2, 1, 2, 4, mutate=True)
    print(f"mutated (a lane's A registers 0 and 2 swapped): {err:.2e}")
    assert err > 1e-2, "the check would not catch a wrong mapping"
    print("ok")
