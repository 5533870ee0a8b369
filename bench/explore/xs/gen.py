"""Throwaway: writes xs.ima, gptq_gemm's 16-row path (blocks of 16 rows of x by 32
columns, 8 warps splitting K, a lane's tile 4 packed rows spread by 4, G a multiple of
128) with x staged in shared memory: each round of 8 steps (1024 rows of K), the block's
256 threads copy the round's x (16 rows x 1024, 32 KB) by cp.async one round ahead, two
stages, so that a step reads x from shared memory instead of waiting on L2; the weights of
the next round's step load under this one's products. K a multiple of 1024, N of 32.
Kernels xs_b{MINB}.
Prepared in session 21 and compiled (116 registers, no spills in release); not yet run:
build its wheel (`imac compile bench/explore/xs/xs.ima --python`, maturin) with gemm's and
run time_xs.py there."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from gptq16 import EPILOGUE  # noqa: E402

VARIANTS = [2]

BODY = r"""
kernel xs_b{B} where K % 1024 == 0, N % 32 == 0, G % 128 == 0 {{
    in  x: f16[M, K] align(16)
    in  w: q4[K, N] align(16) gptq(group = G)
    out y: f16[M, N] align(16)
    /// x's rounds: [stage, row, 1024 columns of K], rows padded by 32 so that the 8 lanes of
    /// a quarter warp (2 rows by 4 chunks) fall in distinct banks.
    shared xs: f16[2, 16, 1056]
    shared part: f32[8, 16, 32]
    launch grid(ceil(M / 16), ceil(N / 32)) block(256) min_blocks {B}
    body {{
        constexpr int R = 4, S = 4;
        const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t4 = lane % 4;
        const I m0 = I(blockIdx.x) * 16, n0 = I(blockIdx.y) * 32;
        const I n = n0 + 4 * g;
        const I rounds = K / 1024;
        ImaAcc4 acc[4];
        #pragma unroll
        for (int c = 0; c < 4; ++c) acc[c] = ImaAcc4{{{{0.f, 0.f, 0.f, 0.f}}}};
        // Round j's x into stage j % 2: 2048 chunks of 16 bytes, 8 a thread; rows past M
        // copy row M - 1 (the epilogue stores only rows below M).
        auto copy = [&](I j) {{
            #pragma unroll
            for (int i = 0; i < 8; ++i) {{
                const int c = threadIdx.x + 256 * i, r = c / 128, col = c % 128 * 8;
                x.load8_async(xs.at8(int(j % 2), r, col), min(m0 + r, M - 1), 1024 * j + col);
            }}
            ima_async_commit();
        }};
        auto tile = [&](I j) {{ return w.load_whole_tile(4 * (8 * j + warp) + t4, n, ImaConst<4>{{}}, ImaConst<R>{{}}, ImaConst<S>{{}}); }};
        copy(0);
        auto t = tile(0);
        for (I j = 0; j < rounds; ++j) {{
            if (j + 1 < rounds) copy(j + 1);
            else ima_async_commit();
            ima_async_wait<1>();
            __syncthreads();
            const auto ahead = tile(min(j + 1, rounds - 1));
            const int st = int(j % 2);
            #pragma unroll
            for (int r = 0; r < R; ++r) {{
                unsigned bf[4][4];
                w.dequant_frag(t, r, bf);
                const int col = 128 * warp + 8 * t4 + 32 * r;
                const ImaFrag4 lo = ima_row_pairs(xs.at8(st, g, col));
                const ImaFrag4 hi = ima_row_pairs(xs.at8(st, g + 8, col));
                const unsigned a0[4] = {{lo.x[0], hi.x[0], lo.x[1], hi.x[1]}};
                const unsigned a1[4] = {{lo.x[2], hi.x[2], lo.x[3], hi.x[3]}};
                #pragma unroll
                for (int c = 0; c < 4; ++c) {{
                    acc[c] = ima_mma_m16n8k16_f16(a0, bf[c][0], bf[c][1], acc[c]);
                    acc[c] = ima_mma_m16n8k16_f16(a1, bf[c][2], bf[c][3], acc[c]);
                }}
            }}
            t = ahead;
            // Stage st is copied into again at round j + 2.
            __syncthreads();
        }}
""" + EPILOGUE

with open("xs.ima", "w") as f:
    f.write("/// Throwaway: gptq_gemm's 16-row path with x staged in shared memory (bench/explore/xs/gen.py).\n")
    for b in VARIANTS:
        f.write(BODY.format(B=b))
