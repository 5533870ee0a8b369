"""Throwaway, session 28: rp16b's decode (repacked weights, the zero subtracted by HSUB2,
the scale per group in f32) on gptq_gemm_wg's 16- and 32-row paths, for the decode
layer's B = 32 shapes (issue 22). In gptq_gemm_wg the weights are wgmma's register
operand and x's rows its N, so a stage's decode is the same at 32 rows as at 16: a cheaper
decode should pay at least as much there. Kernels of rp4.ima, G = 128:
  rp32      M <= 32: the 16- and 32-row paths on rp16b's decode, gptq_gemm_wg's pipeline
            (3 stages, x's box 64 rows);
  rp32_s4   M <= 32: the 32-row path alone in 4 stages of 32 rows of x (x's box 32 rows,
            gen2.py's wg_s4_32 pipeline).
    python3 gen4.py"""
from gen import NEW_B, consts, edit, variant
from gen2 import S4_32

# rp16b's stage for NX of 16 or 32: accumulators of NX columns, zeroed at declaration (so
# no first MMA without accumulate), the fold over NX / 8 tiles.
RP_NX = edit(NEW_B, [
    ("                if constexpr (NX == 16) {\n", "                if constexpr (NX <= 32) {\n"),
    ("                    ImaWgAcc<16> T[2];\n", "                    ImaWgAcc<NX> T[2];\n"),
    ("                    const auto mma = [&](ImaAcc4 (&c)[2], const unsigned (&a)[4], int j) {\n",
     "                    const auto mma = [&](ImaAcc4 (&c)[NX / 8], const unsigned (&a)[4], int j) {\n"),
    ("                        for (int jt = 0; jt < 2; ++jt)\n", "                        for (int jt = 0; jt < NX / 8; ++jt)\n"),
])
a = RP_NX.index("                        if (j % 8 == 0)\n")
b = RP_NX.index("                            ImaWgmmaRegA<16>::mma(c, a, lo, hi);\n")
RP_NX = (RP_NX[:a] + "                        ImaWgmmaRegA<NX>::mma(c, a, lo, hi);\n"
         + RP_NX[b + len("                            ImaWgmmaRegA<16>::mma(c, a, lo, hi);\n"):])
# x's k offset within a stage's tile follows x's box height (64 rows here, 32 in rp32_s4).
STEP32 = [("const unsigned step = unsigned((kk / 64) * 64 * 128 + (kk % 64) * 2) / 16;",
           "const unsigned step = unsigned((kk / 64) * 32 * 128 + (kk % 64) * 2) / 16;")]
M32 = [("kernel rp32 where M <= 16,", "kernel rp32 where M <= 32,"),
       ("        if (M <= 16) run(ImaConst<16>{});\n        else if (M <= 32) run(ImaConst<32>{});\n        else run(ImaConst<64>{});\n",
        "        if (M <= 16) run(ImaConst<16>{});\n        else run(ImaConst<32>{});\n")]
kernels = [edit(variant("rp32", RP_NX, []), M32),
           edit(variant("rp32_s4", RP_NX, []), S4_32[:-1] + STEP32 + [("kernel rp32_s4 where M <= 16,", "kernel rp32_s4 where M <= 32,")])]
with open("rp4.ima", "w") as f:
    f.write("/// Throwaway: rp16b's decode on gptq_gemm_wg's 16- and 32-row paths (bench/explore/rp/gen4.py).\n")
    f.write(consts)
    f.write("\n" + "\n".join(kernels))
