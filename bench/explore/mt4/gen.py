"""Throwaway: variants of specs/gemm.ima's gptq_gemm whose blocks take 64 rows of x (four
row tiles of 16) where M > 32, so that each weight is decoded once for up to 64 rows. Today
gptq_gemm takes 32 rows a block at most: at M = 64 two blocks decode every weight, at
M = 128 four. Marlin, decoding once for 64 rows (x's tiles in shared memory), took 87.4 µs
at M = 64, K = 8192, N = 28672 against gptq_gemm's 136.8 in one run (bench/RESULTS.md,
"gptq_gemm_wg's groups by a shift, and Marlin beside gptq_gemm").
- base: gptq_gemm itself, the reference of the timer (so that one module of three kernels
  compiles on the GPU machine, not gemm.ima's five);
- mt4l (128 registers, 36 bytes of spills): x's two rows of a row tile loaded just before
  that tile's products, for the registers that 64 accumulators leave (with all four
  tiles' rows loaded before the step's first product, as the other paths do, ptxas
  spilled 392 bytes: not kept);
- mt4l1 (190 registers, no spills): mt4l at one block an SM (8 warps an SM).
The paths for M <= 32 are gptq_gemm's; `part` doubles to 64 KB for the 64 rows.
Run in session 24 (time_mt4.py): both 20 to 130% slower than gptq_gemm at every M > 32
(bench/RESULTS.md, "Tried: gptq_gemm with blocks of 64 rows").
    python3 gen.py [repo root]"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from spec_text import kernel, edit  # noqa: E402

_, k = kernel("gemm.ima", "gptq_gemm")

# M > 32: blocks of 64 rows (M / 33 is 1 from M = 33 on).
ROWS_64 = [
    ("shared part: f32[8, 32, 32]", "shared part: f32[8, 64, 32]"),
    ("launch grid(ceil(M / (16 + 16 * min(1, ceil(M / 16) * ceil(N / 32) / 265))),",
     "launch grid(ceil(M / (16 + 16 * max(min(1, ceil(M / 16) * ceil(N / 32) / 265), min(1, M / 33)) + 32 * min(1, M / 33))),"),
    ("const I rows = I(gridDim.x) * 16 >= M ? 16 : 32;",
     "const I rows = I(gridDim.x) * 16 >= M ? 16 : I(gridDim.x) * 32 >= M ? 32 : 64;"),
    ("        if (M - m0 > 16 && rows == 32) {",
     "        if (rows == 64) {\n            run(ImaConst<4>{}, ImaConst<0>{});\n        } else if (M - m0 > 16 && rows == 32) {"),
]

# x's rows of row tile i loaded just before its products (the step's one packed row, R = 1).
LAZY_OLD = """                ImaVec<__half, 8> xv[MT][2][R];
                #pragma unroll
                for (int i = 0; i < MT; ++i)
                    #pragma unroll
                    for (int hh = 0; hh < 2; ++hh)
                        #pragma unroll
                        for (int r = 0; r < R; ++r)
                            xv[i][hh][r] = decltype(whole)::value && !IMA_CHECKED ? x.load8(min(m0 + 16 * i + g + 8 * hh, M - 1), k + 32 * r)
                                                                                  : x.load8_or_zero(m0 + 16 * i + g + 8 * hh, k + 32 * r);
                #pragma unroll
                for (int r = 0; r < R; ++r) {
                    unsigned bf[4][4];
                    w.dequant_frag(t, r, bf);
                    #pragma unroll
                    for (int i = 0; i < MT; ++i) {
                        const ImaFrag4 lo = ima_row_pairs(xv[i][0][r]);
                        const ImaFrag4 hi = ima_row_pairs(xv[i][1][r]);"""
LAZY_NEW = """                const auto load_x = [&](int i, int hh, int r) {
                    return decltype(whole)::value && !IMA_CHECKED ? x.load8(min(m0 + 16 * i + g + 8 * hh, M - 1), k + 32 * r)
                                                                  : x.load8_or_zero(m0 + 16 * i + g + 8 * hh, k + 32 * r);
                };
                #pragma unroll
                for (int r = 0; r < R; ++r) {
                    unsigned bf[4][4];
                    w.dequant_frag(t, r, bf);
                    #pragma unroll
                    for (int i = 0; i < MT; ++i) {
                        const ImaFrag4 lo = ima_row_pairs(load_x(i, 0, r));
                        const ImaFrag4 hi = ima_row_pairs(load_x(i, 1, r));"""

out = ["/// Throwaway: gptq_gemm with blocks of 64 rows of x (bench/explore/mt4/gen.py).\nconst GATE_UP_UNIT = 8\n"]
out.append(edit(k, [("kernel gptq_gemm ", "kernel base ")]))
out.append(edit(k, [("kernel gptq_gemm ", "kernel mt4l ")] + ROWS_64 + [(LAZY_OLD, LAZY_NEW)]))
out.append(edit(k, [("kernel gptq_gemm ", "kernel mt4l1 "), ("block(256) min_blocks 2", "block(256) min_blocks 1")]
               + ROWS_64 + [(LAZY_OLD, LAZY_NEW)]))
open("mt4.ima", "w").write("\n".join(out))
