"""Throwaway: gptq_gemm_wg's 16-row path with the weights repacked and the zeros and
scales folded out of the decode (issue 21: fewer instructions a weight).

`rp16` (M <= 16) reads a repacked qweight (repack.py's `repack`: same shape, each lane's 8
nibbles of a k step of 16 in one word, where gptq_gemm_wg takes a byte of each of four
words), turns a word into its 4 register pairs (1024 + q) by a shift and a LOP3 each (no
PRMT, no HFMA2, no HMUL2), multiplies them as they are, and keeps per group of 128 rows
(G = 128 only) both T = sum (1024 + q) x and, by one more MMA a step whose A is all ones,
O = sum x; at the group's end acc += s (T - (1024 + z) O) in f32.
    python3 gen.py [repo root]"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from spec_text import constants, edit, kernel  # noqa: E402

before, k = kernel("gemm_tma.ima", "gptq_gemm_wg")
consts = constants(before)
start = k.index("                // The stage's 16 steps in quarters")
end_marker = "                acc.template wait<0>();\n"
end = k.index(end_marker, start) + len(end_marker)
original = k[start:end]

NEW = r'''                if constexpr (NX == 16) {
                    // Repacked (repack.py): lane 4 g + t's word of step j lies at packed row
                    // 2 j + t / 2, column c0 + t % 2; nibble s and 4 + s are A pair s.
                    const int t4 = lane % 4;
                    const unsigned col_byte = unsigned((c0 % 192 + (t4 & 1)) * 4);
                    float sc[2][2], zb[2][2];
                    #pragma unroll
                    for (int gi = 0; gi < 2; ++gi) {
                        __half s2[2];
                        const unsigned zw = w.ima_tma_group_words(wt, 128 * gi, c0 % 192, s2);
                        #pragma unroll
                        for (int e = 0; e < 2; ++e) {
                            sc[gi][e] = __half2float(s2[e]);
                            zb[gi][e] = 1024.f + float(w.ima_zero_in(zw, c0 % 192 + e));
                        }
                    }
                    ImaWgAcc<16> T[2], O[2];
                    const unsigned ones[4] = {0x3C003C00u, 0x3C003C00u, 0x3C003C00u, 0x3C003C00u};
                    const unsigned long long dx = ima_wgmma_desc(xt.addr, 16, 1024);
                    const auto mma = [&](ImaAcc4 (&c)[2], const unsigned (&a)[4], int j) {
                        const int kk = 16 * j;
                        const unsigned step = unsigned((kk / 64) * 64 * 128 + (kk % 64) * 2) / 16;
                        const unsigned lo = unsigned(dx) + step, hi = unsigned(dx >> 32);
                        if (j % 8 == 0)
                            asm volatile("{\n.reg .b64 d;\nmov.b64 d, {%12, %13};\n"
                                         "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7}, "
                                         "{%8, %9, %10, %11}, d, 0, 1, 1, 0;\n}"
                                         : "+f"(c[0].x[0]), "+f"(c[0].x[1]), "+f"(c[0].x[2]), "+f"(c[0].x[3]),
                                           "+f"(c[1].x[0]), "+f"(c[1].x[1]), "+f"(c[1].x[2]), "+f"(c[1].x[3])
                                         : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(lo), "r"(hi));
                        else
                            ImaWgmmaRegA<16>::mma(c, a, lo, hi);
                    };
                    const auto fold = [&](int gi) {
                        #pragma unroll
                        for (int jt = 0; jt < 2; ++jt)
                            #pragma unroll
                            for (int e = 0; e < 4; ++e)
                                acc.c[jt].x[e] += sc[gi][e / 2] * fmaf(-zb[gi][e / 2], O[gi].c[jt].x[e], T[gi].c[jt].x[e]);
                    };
                    unsigned a[2][4][4];
                    #pragma unroll
                    for (int h = 0; h < 4; ++h) {
                        if (h >= 2) acc.template wait<1>();
                        if (h == 3) fold(0);
                        #pragma unroll
                        for (int j = 4 * h; j < 4 * h + 4; ++j) {
                            unsigned wv[1];
                            ima_ld_shared(ima_swizzled(wt.addr, 32, 2 * j + (t4 >> 1), col_byte), wv);
                            #pragma unroll
                            for (int s = 0; s < 4; ++s)
                                asm("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(a[h % 2][j % 4][s]) : "r"(wv[0] >> (4 * s)), "n"(0x000F000Fu), "r"(0x64006400u));
                        }
                        acc.fence();
                        #pragma unroll
                        for (int j = 4 * h; j < 4 * h + 4; ++j) {
                            mma(T[h / 2].c, a[h % 2][j % 4], j);
                            mma(O[h / 2].c, ones, j);
                        }
                        acc.commit();
                    }
                    acc.template wait<0>();
                    fold(1);
                } else {
'''
# rp16b: the zero subtracted in the decode (HSUB2 of 1024 + z, exact), no ones MMA; only
# the scale per group in f32: acc += s T.
LOP = ('asm("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(a[h % 2][j % 4][s]) '
       ': "r"(wv[0] >> (4 * s)), "n"(0x000F000Fu), "r"(0x64006400u));')
LOP_B = ('{\n                                unsigned v;\n'
         '                                asm("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(v) '
         ': "r"(wv[0] >> (4 * s)), "n"(0x000F000Fu), "r"(0x64006400u));\n'
         '                                const __half2 d = __hsub2(w.ima_as_half2(v), zb2[h / 2][s % 2]);\n'
         '                                memcpy(&a[h % 2][j % 4][s], &d, 4);\n'
         '                            }')
NEW_B = edit(NEW, [
    ("                    ImaWgAcc<16> T[2], O[2];\n", "                    ImaWgAcc<16> T[2];\n"),
    ("                    float sc[2][2], zb[2][2];\n", "                    float sc[2][2];\n                    __half2 zb2[2][2];\n"),
    ("                            zb[gi][e] = 1024.f + float(w.ima_zero_in(zw, c0 % 192 + e));\n",
     "                            const unsigned zh = 0x64006400u | unsigned(w.ima_zero_in(zw, c0 % 192 + e)) * 0x10001u;\n"
     "                            memcpy(&zb2[gi][e], &zh, 4);\n"),
    ("acc.c[jt].x[e] += sc[gi][e / 2] * fmaf(-zb[gi][e / 2], O[gi].c[jt].x[e], T[gi].c[jt].x[e]);",
     "acc.c[jt].x[e] = fmaf(sc[gi][e / 2], T[gi].c[jt].x[e], acc.c[jt].x[e]);"),
    (LOP, LOP_B),
    ("                            mma(O[h / 2].c, ones, j);\n", ""),
    ("                    const unsigned ones[4] = {0x3C003C00u, 0x3C003C00u, 0x3C003C00u, 0x3C003C00u};\n", ""),
])
# Diagnostics of rp16b (outputs wrong where they skip work): `nomma` decodes and multiplies
# nothing (the decoded words folded into a sink); `nodec` multiplies constant registers
# (no loads, no decode); `empty` only waits for each stage and frees it (the pipeline's
# stream alone); `s5` is rp16b with 5 stages of 16 rows of x (x's box 16 rows), so that
# more of W is in flight.
MMA = "                            mma(T[h / 2].c, a[h % 2][j % 4], j);\n"
NOMMA = edit(NEW_B, [
    ("                    unsigned a[2][4][4];\n", "                    unsigned a[2][4][4], sink = 0;\n"),
    (MMA, "                            sink ^= a[h % 2][j % 4][0] ^ a[h % 2][j % 4][1] ^ a[h % 2][j % 4][2] ^ a[h % 2][j % 4][3];\n"),
    ("                    fold(1);\n", "                    fold(1);\n                    if (sink == 0x12345678u) acc.c[0].x[0] += 1.f;\n"),
])
NODEC = edit(NEW_B, [
    ("                            ima_ld_shared(ima_swizzled(wt.addr, 32, 2 * j + (t4 >> 1), col_byte), wv);\n",
     "                            wv[0] = 0x01234567u;\n"),
])
EMPTY = "                if constexpr (NX == 16) {\n                } else {\n"
# rp16b_s5's pipeline: 5 stages, x's box (and its tile) 16 rows, the 16-row path only.
S5 = [
    ("    in    x: f16[M, K] align(16) tma(64, 64)\n", "    in    x: f16[M, K] align(16) tma(16, 64)\n"),
    ("    shared ws: i32[3, 40, 192] align(1024)\n", "    shared ws: i32[5, 40, 192] align(1024)\n"),
    ("    shared xs: f16[3, 64, 256] align(1024)\n", "    shared xs: f16[5, 16, 256] align(1024)\n"),
    ("        const ImaTmaPipeline<3, 3> pipe;\n", "        const ImaTmaPipeline<5, 3> pipe;\n"),
    ("x.tma_load(xs.tma_tile(ImaConst<64>{}, ImaConst<256>{}, st), bar, tile / NS * 64, 256 * kc);",
     "x.tma_load(xs.tma_tile(ImaConst<16>{}, ImaConst<256>{}, st), bar, tile / NS * 64, 256 * kc);"),
    ("                const auto xt = xs.tma_tile(ImaConst<64>{}, ImaConst<256>{}, st);\n",
     "                const auto xt = xs.tma_tile(ImaConst<16>{}, ImaConst<256>{}, st);\n"),
    ("        if (M <= 16) run(ImaConst<16>{});\n        else if (M <= 32) run(ImaConst<32>{});\n        else run(ImaConst<64>{});\n",
     "        run(ImaConst<16>{});\n"),
]
variants = [("rp16", NEW, []), ("rp16b", NEW_B, []), ("rp16b_nomma", NOMMA, []), ("rp16b_nodec", NODEC, []),
            ("rp16b_empty", EMPTY, []),
            ("rp16b_s5", NEW_B, S5 + [
                ("const unsigned step = unsigned((kk / 64) * 64 * 128 + (kk % 64) * 2) / 16;",
                 "const unsigned step = unsigned((kk / 64) * 16 * 128 + (kk % 64) * 2) / 16;"),
            ])]


def variant(name, body, kernel_edits):
    """Kernel `name`: gptq_gemm_wg with `body` for its 16-row path's stage (the original
    stage for the other paths), and `kernel_edits` applied to the whole kernel."""
    v = k[:start] + body + original + "                }\n" + k[end:]
    return edit(v, [("kernel gptq_gemm_wg where M <= 128,", f"kernel {name} where M <= 16, G == 128,")] + kernel_edits)


if __name__ == "__main__":
    with open("rp.ima", "w") as f:
        f.write("/// Throwaway: gptq_gemm_wg's 16-row path on repacked weights, zeros and scales folded (bench/explore/rp/gen.py).\n")
        f.write(consts)
        f.write("\n" + "\n".join(variant(*v) for v in variants))
