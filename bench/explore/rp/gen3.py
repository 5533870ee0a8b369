"""Throwaway, prepared for the session after 27: where a consumer warpgroup's time goes,
stage by stage, in rp16b_s5 (`s5_ph`, repacked weights) and in gptq_gemm_wg's own decode
in the same 5-stage pipeline (`wg_s5_ph`). Lane 0 of each consumer warpgroup adds up, in
clock64 cycles over its stages: `wait`, from the end of its last stage's work to the start
of this one's (freeing the stage, waiting for the next to land, and at a tile's end its
sums' store); `work`, from the start to its last MMAs' commit (the decode and issuing the
MMAs, and the waits for the older quarters' MMAs); `tail`, the wait for the last MMAs and
the fold. They land in `phases` [block, consumer warpgroup, 4] (the three sums and the
stage count).
    python3 gen3.py [repo root]"""
from gen import NEW_B, S5, consts, edit, original, variant

STEP = [("const unsigned step = unsigned((kk / 64) * 64 * 128 + (kk % 64) * 2) / 16;",
         "const unsigned step = unsigned((kk / 64) * 16 * 128 + (kk % 64) * 2) / 16;")]
PH_IN = "                    const long long ph_in = clock64();\n                    ph_wait += ph_in - ph_last;\n"
PH_MID = "                    const long long ph_mid = clock64();\n                    ph_work += ph_mid - ph_in;\n"
PH_OUT = "                    ph_last = clock64();\n                    ph_tail += ph_last - ph_mid;\n                    ++ph_n;\n"
# Kernel-wide: the sums, and their store when the warpgroup's units are done.
PHASES = [
    ("    out   y: f16[M, NY] align(16)\n", "    out   y: f16[M, NY] align(16)\n    inout phases: i64[BLOCKS, 3, 4]\n"),
    ("            I next_kc = u0 % KS, next_tile = u0 / KS;\n",
     "            I next_kc = u0 % KS, next_tile = u0 / KS;\n"
     "            long long ph_wait = 0, ph_work = 0, ph_tail = 0, ph_last = clock64(), ph_n = 0;\n"),
    ("            });\n        };\n        run(ImaConst<16>{});\n",
     "            });\n"
     "            if (threadIdx.x % 128 == 0) {\n"
     "                phases(I(blockIdx.x), I(wg), I(0)) = ph_wait;\n"
     "                phases(I(blockIdx.x), I(wg), I(1)) = ph_work;\n"
     "                phases(I(blockIdx.x), I(wg), I(2)) = ph_tail;\n"
     "                phases(I(blockIdx.x), I(wg), I(3)) = ph_n;\n"
     "            }\n"
     "        };\n        run(ImaConst<16>{});\n"),
]
S5_PH = edit(NEW_B, [
    ("                if constexpr (NX == 16) {\n", "                if constexpr (NX == 16) {\n" + PH_IN),
    ("                    acc.template wait<0>();\n                    fold(1);\n",
     PH_MID + "                    acc.template wait<0>();\n                    fold(1);\n" + PH_OUT),
])
WG_PH = ("                if constexpr (true) {\n" + PH_IN
         + edit(original, [("                acc.template wait<0>();\n",
                            PH_MID + "                acc.template wait<0>();\n" + PH_OUT)])
         + "                } else {\n")
if __name__ == "__main__":
    kernels = [variant("s5_ph", S5_PH, S5 + STEP + PHASES), variant("wg_s5_ph", WG_PH, S5 + PHASES)]
    with open("rp3.ima", "w") as f:
        f.write("/// Throwaway: where a consumer's stage goes, in cycles (bench/explore/rp/gen3.py).\n")
        f.write(consts)
        f.write("\n" + "\n".join(kernels))
