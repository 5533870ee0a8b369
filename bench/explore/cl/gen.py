"""Throwaway (issue 22): writes target/explore/cl.ima, cl_gemm.cu's cluster split-K W4A16
product as a spec (`launch ... cluster(CK)`), in three forms for the decode layer's
projections at up to 32 rows: gptq_gemm_cl_o (128 columns a cluster of 4, K = 4096),
gptq_gemm_cl_qkv (192 columns, cluster of 4) and gptq_gemm_cl_down (256 columns, cluster
of 8, K = 14336), each 128 blocks on the layer's shapes. Where cl_gemm.cu reads raw words,
these go through the gptq accessor as specs/gemm.ima's gptq_gemm does: x as the A
operand (its rows g and g + 8 from the block's staged rows, `ima_row_pairs`), W as B
(`load_whole_tile` of 4 packed rows, every 4th: lane t's rows of a group, then
`dequant_frag`), two tiles (groups) loaded ahead of the one multiplied. The warps' sums go
to `part`, and after `ima_cluster_sync()` each block adds a CK-th of the columns from every
block of its cluster (`part.in_block(q)`). Checked entry points check every access,
`in_block`'s rank included. build.sh builds the wheel (cl_kernels); time_cl.py times it.
    python3 gen.py [repo root]"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from spec_text import write  # noqa: E402

KERNEL = """
/// Throwaway: y = x · W for up to 32 rows of x, W in GPTQ int4 with groups of 128, K split
/// across the CK blocks of a thread-block cluster ({cols} columns a cluster; {wn} warps across
/// them, {kw} along the block's K). bench/explore/cl/gen.py.
kernel gptq_gemm_cl_{name} where M <= 32, G == 128, K % 8 == 0, K % ({ck} * {kw} * 256) == 0, K <= {kmax}, N % {cols} == 0 {{
    in  x: f16[M, K] align(16)
    in  w: q4[K, N] align(16) gptq(group = G)
    out y: f16[M, N] align(16)
    /// The block's 32 rows of x (zeros past M) for its K / {ck} rows of K, each row 32
    /// elements longer than that, so that the 8 rows a warp reads at once fall in
    /// different banks.
    shared xs: f16[32, K / {ck} + 32]
    /// Each warp's sums, [warp along K, row of x, column of the cluster's].
    shared part: f32[{kw}, 32, {cols}]
    launch grid(N / {cols} * {ck}) block({threads}) cluster({ck})
    body {{
        constexpr int WN = {wn}, KW = {kw}, CK = {ck}, COLS = {cols};
        const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
        const int wn = warp % WN, wk = warp / WN;
        const I rank = ima_cluster_rank(), n0 = I(blockIdx.x) / CK * COLS;
        const I ks = K / CK, kwarp = ks / KW, kb = rank * ks, k0 = kb + wk * kwarp;
        // Lane (g, t): columns n .. n + 3 of W, B's column g of n-tiles 0 .. 3.
        const I n = n0 + 32 * wn + 4 * g;
        // Group q's tile of this lane: packed rows 16 q + t + 4 r, r < 4 (its rows of K
        // 128 q + 8 t + 32 r ..), whole tile 4 q + t of 4 rows, every 4th.
        auto tile = [&](I q) {{ return w.load_whole_tile(4 * q + t, n, ImaConst<4>{{}}, ImaConst<4>{{}}, ImaConst<4>{{}}); }};
        const I q0 = k0 / 128, groups = kwarp / 128;
        auto a = tile(q0), b = tile(q0 + 1);
        // x's rows for this block's K, staged while the first tiles load.
        for (I i = threadIdx.x; i < 32 * (ks / 8); i += blockDim.x) {{
            const I r = i / (ks / 8), c = i % (ks / 8) * 8;
            if (r < M) {{
                x.load8_async(xs.at8(r, c), r, kb + c);
            }} else {{
                xs.at8(r, c) = ImaVec<__half, 8>{{}};
            }}
        }}
        ima_async_commit();
        ima_async_wait<0>();
        __syncthreads();
        ImaAcc4 acc[2][4];
        #pragma unroll
        for (int m = 0; m < 2; ++m)
            #pragma unroll
            for (int c = 0; c < 4; ++c) acc[m][c] = ImaAcc4{{{{0.f, 0.f, 0.f, 0.f}}}};
        // Group q's products: its 4 packed rows, each 32 rows of K against x's two row tiles.
        auto multiply = [&](const decltype(a)& tl, I q) {{
            #pragma unroll
            for (int r = 0; r < 4; ++r) {{
                unsigned bf[4][4];
                w.dequant_frag(tl, r, bf);
                const I kx = 128 * q + 8 * t + 32 * r - kb;
                #pragma unroll
                for (int m = 0; m < 2; ++m) {{
                    const ImaFrag4 lo = ima_row_pairs(xs.at8(16 * m + g, kx));
                    const ImaFrag4 hi = ima_row_pairs(xs.at8(16 * m + g + 8, kx));
                    const unsigned a0[4] = {{lo.x[0], hi.x[0], lo.x[1], hi.x[1]}};
                    const unsigned a1[4] = {{lo.x[2], hi.x[2], lo.x[3], hi.x[3]}};
                    #pragma unroll
                    for (int c = 0; c < 4; ++c) {{
                        acc[m][c] = ima_mma_m16n8k16_f16(a0, bf[c][0], bf[c][1], acc[m][c]);
                        acc[m][c] = ima_mma_m16n8k16_f16(a1, bf[c][2], bf[c][3], acc[m][c]);
                    }}
                }}
            }}
        }};
        // Two groups ahead: `groups` is even (the constraint on K).
        for (I i = 0; i < groups; i += 2) {{
            const auto c2 = tile(q0 + (i + 2 < groups ? i + 2 : i));
            multiply(a, q0 + i);
            const auto d2 = tile(q0 + (i + 3 < groups ? i + 3 : i + 1));
            multiply(b, q0 + i + 1);
            a = c2;
            b = d2;
        }}
        // Lane (g, t) holds rows 16 m + g (+ 8: registers 2, 3) of x and columns 8 t + c
        // (+ 4: registers 1, 3) of the warp's 32.
        #pragma unroll
        for (int m = 0; m < 2; ++m)
            #pragma unroll
            for (int c = 0; c < 4; ++c)
                #pragma unroll
                for (int e = 0; e < 4; ++e) part(wk, 16 * m + g + 8 * (e / 2), 32 * wn + 8 * t + c + 4 * (e % 2)) = acc[m][c].x[e];
        ima_cluster_sync();
        // This block's CK-th of the cluster's columns, 8 a thread: every block's and warp's sums.
        constexpr int CHUNKS = COLS / CK / 8;
        for (int i = threadIdx.x; i < 32 * CHUNKS; i += blockDim.x) {{
            const int r = i / CHUNKS, col = (int(rank) * CHUNKS + i % CHUNKS) * 8;
            if (r >= M) continue;
            float s[8] = {{}};
            #pragma unroll
            for (int q = 0; q < CK; ++q)
                #pragma unroll
                for (int k = 0; k < KW; ++k) {{
                    const auto other = part.in_block(unsigned(q));
                    const ImaVec<float, 4> lo = other.at4(k, r, col), hi = other.at4(k, r, col + 4);
                    #pragma unroll
                    for (int e = 0; e < 4; ++e) {{
                        s[e] += lo.v[e];
                        s[4 + e] += hi.v[e];
                    }}
                }}
            ImaVec<__half, 8> o;
            #pragma unroll
            for (int e = 0; e < 8; ++e) o.v[e] = __float2half(s[e]);
            y.store8(r, n0 + col, o);
        }}
        ima_cluster_sync();
    }}
}}
"""

FORMS = [("o", 4, 2, 4), ("qkv", 6, 2, 4), ("down", 8, 1, 8)]
text = "// Throwaway: bench/explore/cl/gen.py's cluster split-K W4A16 forms.\n"
for name, wn, kw, ck in FORMS:
    text += KERNEL.format(name=name, wn=wn, kw=kw, ck=ck, cols=32 * wn, threads=32 * wn * kw, kmax=ck * 2048)
write("cl", text)
