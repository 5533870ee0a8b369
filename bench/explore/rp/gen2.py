"""Throwaway, prepared for the session after 27: where rp16b_s5's consumers spend a stage,
and whether its 5-stage pipeline alone (no repacked weights) carries gptq_gemm_wg.
rp.ima's rp16b_s5 took 52.5 µs at M = 16, K = 8192, N = 28672, where its pipeline with
idle consumers (stream.ima's e5) took 38.0 (bench/RESULTS.md, "What paces gptq_gemm_wg at
16 rows"). Kernels of rp2.ima, all M <= 16 and G = 128:
  s5        rp16b_s5 (repacked weights);
  s5_nodec  its MMAs on constant registers (no loads, no decode);
  s5_nomma  its decode, no MMA (the decoded words folded into a sink);
  s5_acc4   its MMAs into two accumulators a group, alternating steps, so that no MMA
            waits for the one before it (the chain of 8 a group halved);
  wg_s5     gptq_gemm_wg's own decode (GPTQ's words as they are) in s5's pipeline;
  wg_s5_acc2  wg_s5 with its MMAs into two accumulators, alternating steps, added up at
            the end of each stage;
  wg_s4_32  (M <= 32) gptq_gemm_wg's 32-row path alone in 4 stages of 32 rows of x (x's
            box 32 rows): the layer's projections at B = 32.
    python3 gen2.py [repo root]"""
from gen import NEW_B, NODEC, NOMMA, S5, consts, edit, original, variant

STEP = [("const unsigned step = unsigned((kk / 64) * 64 * 128 + (kk % 64) * 2) / 16;",
         "const unsigned step = unsigned((kk / 64) * 16 * 128 + (kk % 64) * 2) / 16;")]
ACC4 = edit(NEW_B, [
    ("                    ImaWgAcc<16> T[2];\n", "                    ImaWgAcc<16> T[2][2];\n"),
    ("                        if (j % 8 == 0)\n", "                        if (j % 8 < 2)\n"),
    ("                            mma(T[h / 2].c, a[h % 2][j % 4], j);\n",
     "                            mma(T[h / 2][j % 2].c, a[h % 2][j % 4], j);\n"),
    ("acc.c[jt].x[e] = fmaf(sc[gi][e / 2], T[gi].c[jt].x[e], acc.c[jt].x[e]);",
     "acc.c[jt].x[e] = fmaf(sc[gi][e / 2], T[gi][0].c[jt].x[e] + T[gi][1].c[jt].x[e], acc.c[jt].x[e]);"),
])
WG = "                if constexpr (true) {\n" + original + "                } else {\n"
WG_ACC2 = "                if constexpr (true) {\n" + edit(original, [
    ("for (int j = 4 * h; j < 4 * h + 4; ++j) acc.mma_regs(a[h % 2][j % 4], xt, 16 * j);",
     "for (int j = 4 * h; j < 4 * h + 4; ++j) (j % 2 ? acc2 : acc).mma_regs(a[h % 2][j % 4], xt, 16 * j);"),
    ("                acc.template wait<0>();\n",
     "                acc.template wait<0>();\n"
     "                #pragma unroll\n"
     "                for (int jt = 0; jt < NX / 8; ++jt)\n"
     "                    #pragma unroll\n"
     "                    for (int e = 0; e < 4; ++e) acc.c[jt].x[e] += acc2.c[jt].x[e];\n"
     "                acc2 = ImaWgAcc<NX>{};\n"),
]) + "                } else {\n"
variants = [
    ("s5", NEW_B, S5 + STEP),
    ("s5_nodec", NODEC, S5 + STEP),
    ("s5_nomma", NOMMA, S5 + STEP),
    ("s5_acc4", ACC4, S5 + STEP),
    ("wg_s5", WG, S5),
    ("wg_s5_acc2", WG_ACC2, S5 + [("            ImaWgAcc<NX> acc;\n", "            ImaWgAcc<NX> acc, acc2;\n")]),
]
# wg_s4_32's pipeline: 4 stages, x's box (and its tile) 32 rows, the 32-row path only.
S4_32 = [
    ("    in    x: f16[M, K] align(16) tma(64, 64)\n", "    in    x: f16[M, K] align(16) tma(32, 64)\n"),
    ("    shared ws: i32[3, 40, 192] align(1024)\n", "    shared ws: i32[4, 40, 192] align(1024)\n"),
    ("    shared xs: f16[3, 64, 256] align(1024)\n", "    shared xs: f16[4, 32, 256] align(1024)\n"),
    ("        const ImaTmaPipeline<3, 3> pipe;\n", "        const ImaTmaPipeline<4, 3> pipe;\n"),
    ("x.tma_load(xs.tma_tile(ImaConst<64>{}, ImaConst<256>{}, st), bar, tile / NS * 64, 256 * kc);",
     "x.tma_load(xs.tma_tile(ImaConst<32>{}, ImaConst<256>{}, st), bar, tile / NS * 64, 256 * kc);"),
    ("                const auto xt = xs.tma_tile(ImaConst<64>{}, ImaConst<256>{}, st);\n",
     "                const auto xt = xs.tma_tile(ImaConst<32>{}, ImaConst<256>{}, st);\n"),
    ("        if (M <= 16) run(ImaConst<16>{});\n        else if (M <= 32) run(ImaConst<32>{});\n        else run(ImaConst<64>{});\n",
     "        run(ImaConst<32>{});\n"),
    ("kernel wg_s4_32 where M <= 16,", "kernel wg_s4_32 where M <= 32,"),
]
if __name__ == "__main__":
    kernels = [variant(*v) for v in variants]
    # variant() names the kernel and asks M <= 16 before its edits: the 32-row one's edits
    # come after.
    kernels.append(edit(variant("wg_s4_32", WG, []), S4_32))
    with open("rp2.ima", "w") as f:
        f.write("/// Throwaway: rp16b_s5's stage taken apart, and gptq_gemm_wg in its pipeline (bench/explore/rp/gen2.py).\n")
        f.write(consts)
        f.write("\n" + "\n".join(kernels))
