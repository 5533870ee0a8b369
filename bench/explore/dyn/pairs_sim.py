"""Throwaway, session 34: checks on the host, with numpy, that the pair order's reorder of x
(ima.cuh's ima_wg_pairs_order, as written: byte permutes 0x5410 / 0x7632 of 32-bit words)
and the pair decode (the accessor's tma_wg_pairs_unscaled: lane (g, t) reads packed row
4 b + t, nibbles (0,4) (1,5) (2,6) (3,7) into registers a0[e], a0[2+e], a1[e], a1[2+e])
give x . W for one stage (256 rows of K), with warpgroup MMA's register A fragment read as
the PTX ISA lays it out (register 0: row g, k 2t, 2t+1; 1: row g+8; 2: row g, k 2t+8,
2t+9; 3: row g+8, k 2t+8, 2t+9) and B as the reordered tile's k steps of 16.
    python3 pairs_sim.py"""
import numpy as np

rng = np.random.default_rng(1)
K, COLS, M = 256, 16, 16  # one stage; 16 columns = one warp's rows g and g + 8 pairs
q = rng.integers(0, 16, size=(K, COLS))  # the weights' nibbles, natural k
z = rng.integers(0, 16, size=COLS)
x = rng.standard_normal((M, K)).astype(np.float32)
ref = x @ (q - z[None, :])  # [M, COLS]
# GPTQ words: word row r, column n holds k = 8 r + i in nibble i.
words = np.zeros((K // 8, COLS), dtype=np.uint64)
for i in range(8):
    words |= (q[i::8, :].astype(np.uint64) << np.uint64(4 * i))

# ima_wg_pairs_order on x's rows: in[m] = the pair (2m, 2m+1) of a block of 32;
# out[4 (2 s + h) + t] = half h of in[4 t + s] (low) and of in[4 t + 2 + s] (high).
xp = np.empty_like(x)
for b in range(K // 32):
    blk = x[:, 32 * b:32 * b + 32]
    pairs = blk.reshape(M, 16, 2)
    out = np.empty((M, 16, 2), dtype=np.float32)
    for t in range(4):
        for s in range(2):
            for h in range(2):
                out[:, 4 * (2 * s + h) + t, 0] = pairs[:, 4 * t + s, h]
                out[:, 4 * (2 * s + h) + t, 1] = pairs[:, 4 * t + 2 + s, h]
    xp[:, 32 * b:32 * b + 32] = out.reshape(M, 32)


def nib(w, i):
    return int((int(w) >> (4 * i)) & 15)


# The warp's A operand over 16 steps: A[step][row 0..15][k 0..15], rows g (column 2 g) and
# g + 8 (column 2 g + 1), as lanes (g, t) fill it.
A = np.zeros((K // 16, 16, 16), dtype=np.float32)
for g in range(8):
    for t in range(4):
        for b in range(K // 32):
            r = 4 * b + t
            a0 = [None] * 4
            a1 = [None] * 4
            for e in range(2):
                w = words[r, 2 * g + e]
                d = [(nib(w, 0), nib(w, 4)), (nib(w, 1), nib(w, 5)), (nib(w, 2), nib(w, 6)), (nib(w, 3), nib(w, 7))]
                zz = z[2 * g + e]
                d = [(lo - zz, hi - zz) for lo, hi in d]
                a0[e], a0[2 + e], a1[e], a1[2 + e] = d
            for step, a in ((2 * b, a0), (2 * b + 1, a1)):
                for reg in range(4):
                    row = g + 8 * (reg % 2)
                    k0 = 2 * t + 8 * (reg // 2)
                    A[step, row, k0], A[step, row, k0 + 1] = a[reg]
# Rows g and g + 8 are columns 2 g and 2 g + 1.
col_of_row = [2 * g for g in range(8)] + [2 * g + 1 for g in range(8)]
y = np.zeros((M, COLS), dtype=np.float32)
for step in range(K // 16):
    B = xp[:, 16 * step:16 * step + 16]  # [M, 16 k]
    prod = B @ A[step].T  # [M, 16 rows]
    for row in range(16):
        y[:, col_of_row[row]] += prod[:, row]
err = np.abs(y - ref).max() / np.abs(ref).max()
print(f"max error / max |y|: {err:.2e}", "OK" if err < 1e-5 else "WRONG")
