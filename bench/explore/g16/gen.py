"""Throwaway: writes g16.ima, variants of specs/gemm.ima's gptq_gemm for blocks of 16 rows
of x (its MT = 1 path, packed rows spread by 4, G a multiple of 128; whole steps only, so
K a multiple of 128 and N of 32), to see what its loop's instructions cost:
  s: (q - z) unscaled into a step's own accumulators (a step lies in one group), scaled
     in f32 once a step (16 FFMA) instead of an HMUL2 a weight pair (64 a step);
  x: x's two rows as pointers formed once, loads predicated by row, instead of
     load8_or_zero's index arithmetic and tests at each load;
  p: the next step's weights loaded before this step's products (registers);
  c: raw pointers (release only) formed once and advanced each step, instead of the
     accessors' index arithmetic at every load (what a cursor in the accessor would give).
Kernel g16_{flags}."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from gptq16 import EPILOGUE  # noqa: E402

VARIANTS = ["b", "s", "sp"]
CURSOR = ["c", "sc", "scp", "cp"]

# A step's products for packed row r (x's fragments from xv, the weights' from bf) and,
# with SCALE, the step's f32 scaling: the same in both templates.
PRODUCTS = r"""                const ImaFrag4 lo = ima_row_pairs(xv[0][r]);
                const ImaFrag4 hi = ima_row_pairs(xv[1][r]);
                const unsigned a0[4] = {{lo.x[0], hi.x[0], lo.x[1], hi.x[1]}};
                const unsigned a1[4] = {{lo.x[2], hi.x[2], lo.x[3], hi.x[3]}};
                #pragma unroll
                for (int c = 0; c < 4; ++c) {{
                    ImaAcc4& a = {SCALE} ? tmp[c] : acc[c];
                    a = ima_mma_m16n8k16_f16(a0, bf[c][0], bf[c][1], a);
                    a = ima_mma_m16n8k16_f16(a1, bf[c][2], bf[c][3], a);
                }}
            }}
            if constexpr ({SCALE}) {{
                #pragma unroll
                for (int c = 0; c < 4; ++c) {{
                    const float s0 = __half2float(sc.v[c]), s1 = __half2float(sc.v[c + 4]);
                    acc[c].x[0] += tmp[c].x[0] * s0;
                    acc[c].x[1] += tmp[c].x[1] * s1;
                    acc[c].x[2] += tmp[c].x[2] * s0;
                    acc[c].x[3] += tmp[c].x[3] * s1;
                }}
"""

BODY = r"""
kernel g16_{NAME} where K % 128 == 0, N % 32 == 0 {{
    in  x: f16[M, K] align(16)
    in  w: q4[K, N] align(16) gptq(group = G)
    out y: f16[M, N] align(16)
    shared part: f32[8, 16, 32]
    launch grid(ceil(M / 16), ceil(N / 32)) block(256) min_blocks 2
    body {{
        constexpr int R = 4, S = 4;
        const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t4 = lane % 4;
        const I m0 = I(blockIdx.x) * 16, n0 = I(blockIdx.y) * 32;
        const I n = n0 + 4 * g;
        ImaAcc4 acc[4];
        #pragma unroll
        for (int c = 0; c < 4; ++c) acc[c] = ImaAcc4{{{{0.f, 0.f, 0.f, 0.f}}}};
        const bool ok0 = m0 + g < M, ok1 = m0 + g + 8 < M;
        const __half* x0 = x.p + (ok0 ? (m0 + g) * x.s0 : I(0));
        const __half* x1 = x.p + (ok1 ? (m0 + g + 8) * x.s0 : I(0));
        auto xload = [&](int hh, I k) {{
            if constexpr ({XPTR}) {{
                const bool ok = hh ? ok1 : ok0;
                const __half* p = hh ? x1 : x0;
                uint4 u = make_uint4(0u, 0u, 0u, 0u);
                if (ok) u = *reinterpret_cast<const uint4*>(p + k);
                ImaVec<__half, 8> v;
                memcpy(&v, &u, 16);
                return v;
            }} else {{
                return x.load8_or_zero(m0 + g + 8 * hh, k);
            }}
        }};
        const I col0 = n % 8;
        auto step = [&](const auto& t, I k) {{
            ImaVec<__half, 8> xv[2][R];
            #pragma unroll
            for (int hh = 0; hh < 2; ++hh)
                #pragma unroll
                for (int r = 0; r < R; ++r) xv[hh][r] = xload(hh, k + 32 * r);
            ImaAcc4 tmp[4];
            #pragma unroll
            for (int c = 0; c < 4; ++c) tmp[c] = ImaAcc4{{{{0.f, 0.f, 0.f, 0.f}}}};
            ImaVec<__half, 8> sc;
            if constexpr ({SCALE}) sc = *reinterpret_cast<const ImaVec<__half, 8>*>(&w.scales[(k / G) * w.scales_s0 + n0 + 8 * t4]);
            __half2 zlo[4], zhi[4];
            #pragma unroll
            for (int c = 0; c < 4; ++c) {{
                zlo[c] = w.ima_as_half2(w.ima_biased_zero(unsigned(w.ima_zero_in(t.zw, col0 + c))));
                zhi[c] = __hsub2(__float2half2_rn(960.f), zlo[c]);
            }}
            #pragma unroll
            for (int r = 0; r < R; ++r) {{
                unsigned bf[4][4];
                if constexpr ({SCALE}) {{
                    const __half2 sixteenth = __float2half2_rn(0.0625f);
                    #pragma unroll
                    for (int c = 0; c < 4; ++c) {{
                        const __half2 lo = zlo[c], hi = zhi[c];
                        const unsigned int wd = t.w[r][c], w8 = wd >> 8;
                        const __half2 v[4] = {{__hsub2(w.template ima_nibbles<0x000F000Fu>(wd), lo), __hfma2(w.template ima_nibbles<0x00F000F0u>(wd), sixteenth, hi),
                                              __hsub2(w.template ima_nibbles<0x000F000Fu>(w8), lo), __hfma2(w.template ima_nibbles<0x00F000F0u>(w8), sixteenth, hi)}};
                        memcpy(bf[c], v, 16);
                    }}
                }} else {{
                    w.dequant_frag(t, r, bf);
                }}
""" + PRODUCTS + r"""            }}
        }};
        const I steps = K / (32 * R);
        auto load = [&](I s) {{ return w.load_whole_tile(4 * s + t4, n, ImaConst<4>{{}}, ImaConst<R>{{}}, ImaConst<S>{{}}); }};
        I s = warp;
        if constexpr ({PF}) {{
            if (s < steps) {{
                auto t = load(s);
                for (; s + 8 < steps; s += 8) {{
                    const auto next = load(s + 8);
                    step(t, 32 * R * s + 8 * t4);
                    t = next;
                }}
                step(t, 32 * R * s + 8 * t4);
            }}
        }} else {{
            for (; s < steps; s += 8) step(load(s), 32 * R * s + 8 * t4);
        }}
""" + EPILOGUE

BODY_C = r"""
kernel g16_{NAME} where K % 128 == 0, N % 32 == 0, G % 128 == 0 {{
    in  x: f16[M, K] align(16)
    in  w: q4[K, N] align(16) gptq(group = G)
    out y: f16[M, N] align(16)
    shared part: f32[8, 16, 32]
    launch grid(ceil(M / 16), ceil(N / 32)) block(256) min_blocks 2
    body {{
        constexpr int R = 4;
        const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t4 = lane % 4;
        const I m0 = I(blockIdx.x) * 16, n0 = I(blockIdx.y) * 32;
        const I n = n0 + 4 * g;
        ImaAcc4 acc[4];
        #pragma unroll
        for (int c = 0; c < 4; ++c) acc[c] = ImaAcc4{{{{0.f, 0.f, 0.f, 0.f}}}};
        const bool ok0 = m0 + g < M, ok1 = m0 + g + 8 < M;
        // Step s: packed rows 16 s + t4 + 4 r, rows of x 128 s + 8 t4 + 32 r, group 128 s / G.
        const I s0 = warp, steps = K / 128;
        // Rows past M read the last row instead: an MMA's rows are independent, and the
        // epilogue stores only rows below M.
        const __half* xp0 = x.p + min(m0 + g, M - 1) * x.s0 + 128 * s0 + 8 * t4;
        const __half* xp1 = x.p + min(m0 + g + 8, M - 1) * x.s0 + 128 * s0 + 8 * t4;
        const int* qp = w.qweight + (16 * s0 + t4) * w.qweight_s0 + n;
        const I qrow = 4 * w.qweight_s0, qstep = 128 * w.qweight_s0;
        I k0 = 128 * s0;
        const I col0 = n % 8;
        struct T {{ uint4 w[R]; uint2 s; unsigned zw; }};
        auto load = [&](const int* q, I k) {{
            T t;
            #pragma unroll
            for (int r = 0; r < R; ++r) t.w[r] = *reinterpret_cast<const uint4*>(q + r * qrow);
            const I grp = k / G;
            t.s = *reinterpret_cast<const uint2*>(w.scales + grp * w.scales_s0 + n);
            t.zw = unsigned(w.qzeros[grp * w.qzeros_s0 + n / 8]);
            return t;
        }};
        auto step = [&](const T& t, I k) {{
            ImaVec<__half, 8> xv[2][R];
            #pragma unroll
            for (int r = 0; r < R; ++r) {{
                xv[0][r] = *reinterpret_cast<const ImaVec<__half, 8>*>(xp0 + 32 * r);
                xv[1][r] = *reinterpret_cast<const ImaVec<__half, 8>*>(xp1 + 32 * r);
            }}
            __half2 zlo[4], zhi[4], sc2[4];
            __half sh[4];
            memcpy(sh, &t.s, 8);
            #pragma unroll
            for (int c = 0; c < 4; ++c) {{
                zlo[c] = w.ima_as_half2(w.ima_biased_zero(unsigned(w.ima_zero_in(t.zw, col0 + c))));
                zhi[c] = __hsub2(__float2half2_rn(960.f), zlo[c]);
                sc2[c] = __half2half2(sh[c]);
            }}
            ImaAcc4 tmp[4];
            #pragma unroll
            for (int c = 0; c < 4; ++c) tmp[c] = ImaAcc4{{{{0.f, 0.f, 0.f, 0.f}}}};
            ImaVec<__half, 8> sc;
            if constexpr ({SCALE}) sc = *reinterpret_cast<const ImaVec<__half, 8>*>(&w.scales[(k / G) * w.scales_s0 + n0 + 8 * t4]);
            const __half2 sixteenth = __float2half2_rn(0.0625f);
            #pragma unroll
            for (int r = 0; r < R; ++r) {{
                unsigned bf[4][4];
                unsigned wr[4];
                memcpy(wr, &t.w[r], 16);
                #pragma unroll
                for (int c = 0; c < 4; ++c) {{
                    const unsigned int wd = wr[c], w8 = wd >> 8;
                    __half2 v[4] = {{__hsub2(w.template ima_nibbles<0x000F000Fu>(wd), zlo[c]), __hfma2(w.template ima_nibbles<0x00F000F0u>(wd), sixteenth, zhi[c]),
                                    __hsub2(w.template ima_nibbles<0x000F000Fu>(w8), zlo[c]), __hfma2(w.template ima_nibbles<0x00F000F0u>(w8), sixteenth, zhi[c])}};
                    if constexpr (!{SCALE}) {{
                        #pragma unroll
                        for (int j = 0; j < 4; ++j) v[j] = __hmul2(v[j], sc2[c]);
                    }}
                    memcpy(bf[c], v, 16);
                }}
""" + PRODUCTS + r"""            }}
        }};
        if constexpr ({PF}) {{
            if (s0 < steps) {{
                T t = load(qp, k0);
                I s = s0;
                for (; s + 8 < steps; s += 8) {{
                    const T next = load(qp + qstep, k0 + 1024);
                    step(t, k0);
                    t = next;
                    qp += qstep;
                    xp0 += 1024;
                    xp1 += 1024;
                    k0 += 1024;
                }}
                step(t, k0);
            }}
        }} else {{
            for (I s = s0; s < steps; s += 8) {{
                step(load(qp, k0), k0);
                qp += qstep;
                xp0 += 1024;
                xp1 += 1024;
                k0 += 1024;
            }}
        }}
""" + EPILOGUE

with open("g16.ima", "w") as f:
    f.write("/// Throwaway variants of gptq_gemm's 16-row path (bench/explore/g16/gen.py).\n")
    for v in VARIANTS:
        f.write(BODY.format(NAME=v, SCALE="true" if "s" in v else "false", XPTR="true" if "x" in v else "false", PF="true" if "p" in v else "false"))
    for v in CURSOR:
        f.write(BODY_C.format(NAME=v, SCALE="true" if "s" in v else "false", PF="true" if "p" in v else "false"))
