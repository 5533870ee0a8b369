"""Throwaway: writes sk.ima, specs/gemm.ima's gptq_gemm with K split between KS blocks (grid
z) and its warps WN ways across columns, for the projections whose few columns leave too
few blocks to split warps across columns (the decode layer's O and down at B = 32, N =
4096: 256 blocks of 32 columns, each reading its 16 rows of x for all of K from L2, 4 times
the weights' bytes for down). Each block adds its part of the sums into the f32 workspace
`kparts` (atomics), and the last of a tile's KS blocks to arrive (counted in `arrivals`)
stores y from it and leaves both zero, as specs/gemm_tma.ima's gptq_gemm_wg does. Kernels
sk{WN}{KS}: the grid's y is ceil(N / (32 WN)), its z KS.
sk47 is for the widest W (N = 28672, 224 blocks of 128 columns at WN = 4): 224 blocks on
264 slots leave 92 SMs two tiles and 40 one, and if an SM's own rate sets the pace (DRAM
runs at 2.35 TB/s there), the SMs with two set it. In 7 K-parts, 1568 blocks give a slot
at most 6 of them: an SM at most 12/7 of a tile instead of 2.
Prepared in session 22, run in session 23 (time_sk.py with its wheel and gemm's): every
split slower than gptq_gemm, sk47 98.4 against 52.0 µs at M = 16 (bench/RESULTS.md,
"Stall profiles, and one persistent kernel a layer").
    python3 gen.py [repo root]"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from spec_text import edit, kernel  # noqa: E402

_, body = kernel("gemm.ima", "gptq_gemm")

EPILOGUE_OLD = body[body.index("        const bool fused = NY != N;\n        for (int i = threadIdx.x;"):body.rindex("    }\n}")]
EPILOGUE_NEW = r"""        const bool fused = NY != N;
        const I KS = gridDim.z;
        // The block's sums of row r, columns c0 .. c0 + 7 of warp column c0 / 32's strip.
        auto sums = [&](int r, int c0, float (&out)[8]) {
            #pragma unroll
            for (int j = 0; j < 8; ++j) out[j] = 0.f;
            for (int s = 0; s < KW; ++s)
                #pragma unroll
                for (int h = 0; h < 2; ++h) {
                    const ImaVec<float, 4>& q = part.at4(c0 / 32 + WN * s, r, c0 % 32 + 4 * h);
                    #pragma unroll
                    for (int e = 0; e < 4; ++e) out[4 * h + e] += q.v[e];
                }
        };
        // Row r's 8 outputs from gate's (and up's) sums, stored.
        auto emit = [&](int r, int c8, float (&sum)[8], const float (&up)[8]) {
            if (fused) {
                #pragma unroll
                for (int j = 0; j < 8; ++j) sum[j] = sum[j] / (1.f + __expf(-sum[j])) * up[j];
            }
            ImaVec<__half, 8> v;
            #pragma unroll
            for (int j = 0; j < 8; ++j) v.v[j] = __float2half_rn(sum[j]);
            y.store8(m0 + r, fused ? (nb + c8) / 2 : nb + c8, v);
        };
        for (int i = threadIdx.x; i < rows * 4 * WN; i += 256) {
            const int r = i / (4 * WN), c8 = i % (4 * WN) * 8;
            if (m0 + r >= M || nb + c8 >= N) continue;
            float sum[8], up[8] = {};
            sums(r, c8, sum);
            if (KS > 1) {
                #pragma unroll
                for (int j = 0; j < 8; ++j) atomicAdd(&kparts(m0 + r, nb + c8 + j), sum[j]);
                continue;
            }
            if (fused && c8 % 16 != 0) continue;
            if (fused) sums(r, c8 + 8, up);
            emit(r, c8, sum, up);
        }
        if (KS > 1) {
            __threadfence();
            __syncthreads();
            if (threadIdx.x == 0) last(0) = atomicAdd(&arrivals(I(blockIdx.x), I(blockIdx.y)), 1) == int(KS) - 1;
            __syncthreads();
            if (last(0)) {
                __threadfence();
                for (int i = threadIdx.x; i < rows * 4 * WN; i += 256) {
                    const int r = i / (4 * WN), c8 = i % (4 * WN) * 8;
                    if (m0 + r >= M || nb + c8 >= N || (fused && c8 % 16 != 0)) continue;
                    auto take = [&](int c0, float (&out)[8]) {
                        #pragma unroll
                        for (int j = 0; j < 8; ++j) {
                            out[j] = __ldcg(&kparts(m0 + r, nb + c0 + j));
                            kparts(m0 + r, nb + c0 + j) = 0.f;
                        }
                    };
                    float sum[8], up[8] = {};
                    take(c8, sum);
                    if (fused) take(c8 + 8, up);
                    emit(r, c8, sum, up);
                }
                if (threadIdx.x == 0) arrivals(I(blockIdx.x), I(blockIdx.y)) = 0;
            }
        }
"""


def variant(wn, ks):
    launch = body[body.index("    launch grid("):body.index(" block(256)")]
    return edit(body, [
        ("kernel gptq_gemm ", f"kernel sk{wn}{ks} "),
        (launch, "    launch grid(ceil(M / (16 + 16 * min(1, ceil(M / 16) * ceil(N / 32) / 265))), "
                  f"ceil(N / {32 * wn}), {ks})"),
        ("    out y: f16[M, NY] align(16)\n",
         "    /// Workspace: the K-parts' sums, zero before a launch and after it.\n"
         "    inout kparts: f32[M, N]\n"
         "    /// Workspace: K-parts done a block's tile; zero before a launch and after it.\n"
         "    inout arrivals: i32[ceil(M / 16), ceil(N / 32)]\n"
         "    out y: f16[M, NY] align(16)\n"),
        ("    shared part: f32[8, 32, 32]\n", "    shared part: f32[8, 32, 32]\n    shared last: i32[1]\n"),
        ("            I s = wk;\n", "            I s = s_lo + wk;\n"),
        ("const I whole_steps = w.whole_tiles(n, ImaConst<4>{}, ImaConst<R>{}, ImaConst<S>{}) / 4;",
         "// Block z's steps of K: [s_lo, s_hi).\n"
         "            const I nsteps = (K + 32 * R - 1) / (32 * R), kz = blockIdx.z;\n"
         "            const I s_lo = kz * nsteps / I(gridDim.z), s_hi = (kz + 1) * nsteps / I(gridDim.z);\n"
         "            const I whole_steps = min(w.whole_tiles(n, ImaConst<4>{}, ImaConst<R>{}, ImaConst<S>{}) / 4, s_hi);"),
        ("for (; 32 * R * s < K; s += KW) {", "for (; s < s_hi; s += KW) {"),
        (EPILOGUE_OLD, EPILOGUE_NEW),
    ])


with open("sk.ima", "w") as f:
    f.write("/// Throwaway: gptq_gemm with K split between blocks (bench/explore/sk/gen.py).\n")
    f.write("const GATE_UP_UNIT = 8\n\n")
    f.write("\n".join(variant(wn, ks) for wn, ks in [(1, 1), (2, 2), (4, 4), (2, 4), (4, 2), (1, 2), (4, 7)]))
