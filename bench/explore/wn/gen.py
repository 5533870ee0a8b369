"""Throwaway: writes wn.ima, specs/gemm.ima's gptq_gemm with a block's 8 warps split WN
ways across columns and 8 / WN ways along K (the kernel: 1 way and 8), so that a block
covers 32 WN columns. Each block reads all of x's rows for its columns from L2: at
M = 16, K = 8192, N = 28672 that is 896 blocks x 256 KB = 235 MB of L2 reads of x against
118 MB of weights, and at the layer's gate/up (M = 32, K = 4096) 235 MB against 59 MB;
the kernels run at 5.6 to 5.9 TB/s of the two together, near L2's rate. With WN warps on
the same rows of K at once, x's lines come from L1 for all but one of them. Kernels wn{WN}.
Run once against 13a5da8 (bench/RESULTS.md). The kernel now does this with WN from the
grid, so these edits match only that commit's spec: `python3 gen.py ROOT` with ROOT a
checkout of 13a5da8 (whose for_whole_tiles took its stride as a constant).
    python3 gen.py [repo root]"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from spec_text import edit, kernel  # noqa: E402

_, body = kernel("gemm.ima", "gptq_gemm")

EPILOGUE_OLD = body[body.index("        static_assert(GATE_UP_UNIT"):body.rindex("    }\n}")]
EPILOGUE_NEW = r"""        const bool fused = NY != N;
        for (int it = threadIdx.x; it < rows * 4 * WN; it += 256) {
            const int r = it / (4 * WN), c8 = it % (4 * WN) * 8, cw = c8 / 32, c = c8 % 32;
            if (!(m0 + r < M && nb + c8 < N && (!fused || c8 % 16 == 0))) continue;
            auto sums = [&](int c0, float (&out)[8]) {
                #pragma unroll
                for (int j = 0; j < 8; ++j) out[j] = 0.f;
                #pragma unroll
                for (int s = 0; s < 8 / WN; ++s)
                    #pragma unroll
                    for (int h = 0; h < 2; ++h) {
                        const ImaVec<float, 4>& q = part.at4(cw + WN * s, r, c0 + 4 * h);
                        #pragma unroll
                        for (int e = 0; e < 4; ++e) out[4 * h + e] += q.v[e];
                    }
            };
            float sum[8];
            sums(c, sum);
            if (fused) {
                float up[8];
                sums(c + 8, up);
                #pragma unroll
                for (int j = 0; j < 8; ++j) sum[j] = sum[j] / (1.f + __expf(-sum[j])) * up[j];
            }
            ImaVec<__half, 8> v;
            #pragma unroll
            for (int j = 0; j < 8; ++j) v.v[j] = __float2half_rn(sum[j]);
            y.store8(m0 + r, fused ? (nb + c8) / 2 : nb + c8, v);
        }
"""


def variant(wn):
    return edit(body, [
        ("kernel gptq_gemm ", f"kernel wn{wn} "),
        ("ceil(N / 32) / 265))), ceil(N / 32))", f"ceil(N / {32 * wn}) / 265))), ceil(N / {32 * wn}))"),
        ("const int warp = threadIdx.x / 32,",
         f"constexpr int WN = {wn};\n        const int warp = threadIdx.x / 32, wn = warp % WN, wk = warp / WN,"),
        ("n0 = I(blockIdx.y) * 32;", "nb = I(blockIdx.y) * 32 * WN, n0 = nb + 32 * wn;"),
        ("I s = warp;", "I s = wk;"),
        ("ImaConst<32>{}, n,", "ImaConst<32 / WN>{}, n,"),
        ("s += (max(whole_steps - s, I(0)) + 7) / 8 * 8;", "s += (max(whole_steps - s, I(0)) + 8 / WN - 1) / (8 / WN) * (8 / WN);"),
        ("for (; s < whole_steps; s += 8)", "for (; s < whole_steps; s += 8 / WN)"),
        ("for (; 32 * R * s < K; s += 8)", "for (; 32 * R * s < K; s += 8 / WN)"),
        (EPILOGUE_OLD, EPILOGUE_NEW),
    ])


with open("wn.ima", "w") as f:
    f.write("/// Throwaway: gptq_gemm with its warps split across columns (bench/explore/wn/gen.py).\n")
    f.write("const GATE_UP_UNIT = 8\n\n")
    f.write("\n".join(variant(wn) for wn in (1, 2, 4)))
