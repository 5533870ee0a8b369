"""Throwaway: writes cj.ima, variants of specs/gemm.ima's gptq_gemm for blocks of 16 rows of
x in which a lane decodes CJ tiles of 4 columns (32 CJ columns a warp) against the same
registers of x, so that x's loads (two-thirds of gptq_gemm's L1 wavefronts at M = 16)
serve CJ times the weights. Kernel cj{CJ}_r{R}_b{MINB}."""
VARIANTS = [(1, 4, 2, 1), (1, 2, 3, 1), (1, 4, 3, 1), (1, 2, 4, 1), (1, 1, 4, 1), (2, 2, 3, 1), (1, 2, 2, 2), (1, 1, 3, 2), (1, 2, 3, 2), (2, 1, 2, 2)]

BODY = r"""
kernel cj{CJ}_r{R}_b{B}_m{MT} where K % 8 == 0, N % 8 == 0 {{
    in  x: f16[M, K] align(16)
    in  w: q4[K, N] align(16) gptq(group = G)
    out y: f16[M, N] align(16)
    shared part: f32[8, {ROWS}, {COLS}]
    launch grid(ceil(M / {ROWS}), ceil(N / {COLS})) block(256) min_blocks {B}
    body {{
        constexpr int CJ = {CJ}, R = {R}, S = 4, MT = {MT};
        const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t4 = lane % 4;
        const I m0 = I(blockIdx.x) * (16 * MT), n0 = I(blockIdx.y) * (32 * CJ);
        I n[CJ];
        #pragma unroll
        for (int j = 0; j < CJ; ++j) n[j] = min(n0 + 32 * j + 4 * g, N - 4);
        ImaAcc4 acc[MT][CJ][4];
        #pragma unroll
        for (int i = 0; i < MT; ++i)
            #pragma unroll
            for (int j = 0; j < CJ; ++j)
                #pragma unroll
                for (int c = 0; c < 4; ++c) acc[i][j][c] = ImaAcc4{{{{0.f, 0.f, 0.f, 0.f}}}};
        auto step = [&](const auto (&t)[CJ], I k) {{
            ImaVec<__half, 8> xv[MT][2][R];
            #pragma unroll
            for (int i = 0; i < MT; ++i)
                #pragma unroll
                for (int hh = 0; hh < 2; ++hh)
                    #pragma unroll
                    for (int r = 0; r < R; ++r) xv[i][hh][r] = x.load8_or_zero(m0 + 16 * i + g + 8 * hh, k + 32 * r);
            #pragma unroll
            for (int r = 0; r < R; ++r) {{
                #pragma unroll
                for (int j = 0; j < CJ; ++j) {{
                    unsigned bf[4][4];
                    w.dequant_frag(t[j], r, bf);
                    #pragma unroll
                    for (int i = 0; i < MT; ++i) {{
                        const ImaFrag4 lo = ima_row_pairs(xv[i][0][r]);
                        const ImaFrag4 hi = ima_row_pairs(xv[i][1][r]);
                        const unsigned a0[4] = {{lo.x[0], hi.x[0], lo.x[1], hi.x[1]}};
                        const unsigned a1[4] = {{lo.x[2], hi.x[2], lo.x[3], hi.x[3]}};
                        #pragma unroll
                        for (int c = 0; c < 4; ++c) {{
                            acc[i][j][c] = ima_mma_m16n8k16_f16(a0, bf[c][0], bf[c][1], acc[i][j][c]);
                            acc[i][j][c] = ima_mma_m16n8k16_f16(a1, bf[c][2], bf[c][3], acc[i][j][c]);
                        }}
                    }}
                }}
            }}
        }};
        const I whole_steps = w.whole_tiles(n[0], ImaConst<4>{{}}, ImaConst<R>{{}}, ImaConst<S>{{}}) / 4;
        I s = warp;
        for (; s < whole_steps; s += 8) {{
            decltype(w.load_whole_tile(0, n[0], ImaConst<4>{{}}, ImaConst<R>{{}}, ImaConst<S>{{}})) t[CJ];
            #pragma unroll
            for (int j = 0; j < CJ; ++j) t[j] = w.load_whole_tile(4 * s + t4, n[j], ImaConst<4>{{}}, ImaConst<R>{{}}, ImaConst<S>{{}});
            step(t, 32 * R * s + 8 * t4);
        }}
        for (; 32 * R * s < K; s += 8) {{
            const I k = 32 * R * s + 8 * t4;
            decltype(w.load_tile(0, n[0], ImaConst<4>{{}}, ImaConst<R>{{}}, ImaConst<S>{{}})) t[CJ];
            #pragma unroll
            for (int j = 0; j < CJ; ++j) t[j] = w.load_tile(min(k, K - 8), n[j], ImaConst<4>{{}}, ImaConst<R>{{}}, ImaConst<S>{{}});
            step(t, k);
        }}
        #pragma unroll
        for (int i = 0; i < MT; ++i)
            #pragma unroll
            for (int j = 0; j < CJ; ++j)
                #pragma unroll
                for (int hh = 0; hh < 2; ++hh)
                    #pragma unroll
                    for (int jj = 0; jj < 8; ++jj) part(warp, 16 * i + g + 8 * hh, 32 * j + 8 * t4 + jj) = acc[i][j][jj % 4].x[2 * hh + jj / 4];
        __syncthreads();
        for (int o = threadIdx.x; o < 16 * MT * 4 * CJ; o += 256) {{
            const int r = o / (4 * CJ), c8 = o % (4 * CJ) * 8;
            if (m0 + r < M && n0 + c8 < N) {{
                float sum[8];
                #pragma unroll
                for (int jj = 0; jj < 8; ++jj) sum[jj] = 0.f;
                #pragma unroll
                for (int s8 = 0; s8 < 8; ++s8)
                    #pragma unroll
                    for (int h = 0; h < 2; ++h) {{
                        const ImaVec<float, 4>& q = part.at4(s8, r, c8 + 4 * h);
                        #pragma unroll
                        for (int e = 0; e < 4; ++e) sum[4 * h + e] += q.v[e];
                    }}
                ImaVec<__half, 8> v;
                #pragma unroll
                for (int jj = 0; jj < 8; ++jj) v.v[jj] = __float2half_rn(sum[jj]);
                y.store8(m0 + r, n0 + c8, v);
            }}
        }}
    }}
}}
"""

with open("cj.ima", "w") as f:
    f.write("/// Throwaway variants of gptq_gemm (bench/explore/cj/gen.py).\n")
    for cj, r, b, mt in VARIANTS:
        f.write(BODY.format(CJ=cj, R=r, B=b, MT=mt, ROWS=16 * mt, COLS=32 * cj))
