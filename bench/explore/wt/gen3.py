"""Throwaway: gptq_gemm_wg's timeline after b1cbb7b (its shared tiles' sum two blocks at
a time, with no division): `stamped` is the kernel with one thread of each warpgroup
writing %globaltimer and its own clock64 (since the block's entry) into `stamps`
[block, role, 32] (role 0..2 the consumer warpgroups, 3 the producer; [p] the global time
of point p, [16 + p] the cycles). Points: 0 entry, 1 pipeline set up; the producer's 2
its last copy issued; a consumer's 2 its first stage landed, 3 its first stage's MMAs
done, 4 its shared tile's slot about to be stored, 5 its arrival counted, 6 its shared
tile's path done, 7 the end of its units, 8 (the last block) the slots summed, 9 (the
last block) y stored; 12 to 15 the last occurrence's tile, its blocks, its unit t and the
block's units (plain values). bench/explore/wt/gen.py did the same at b74cd2e.
    python3 gen3.py [repo root]"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from spec_text import edit, kernel  # noqa: E402

before, k = kernel("gemm_tma.ima", "gptq_gemm_wg")
consts = "".join(line + "\n" for line in before.splitlines() if line.startswith("const "))
S = "if (stamper) stamp"
stamped = edit(k, [
    ("kernel gptq_gemm_wg ", "kernel stamped "),
    ("    out   y: f16[M, NY] align(16)\n", "    out   y: f16[M, NY] align(16)\n    inout stamps: i64[BLOCKS, 4, 32]\n"),
    ("    body {\n", "    body {\n"
     "        const auto now = [] { long long t; asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t)); return t; };\n"
     "        const long long t_entry = now(), c_entry = clock64();\n"
     "        const auto stamp = [&](int role, int p) {\n"
     "            stamps(I(blockIdx.x), I(role), I(p)) = now();\n"
     "            stamps(I(blockIdx.x), I(role), I(16 + p)) = clock64() - c_entry;\n"
     "        };\n"),
    ("        const ImaTmaPipeline<3, 3> pipe;\n", "        const ImaTmaPipeline<3, 3> pipe;\n"
     "        const int role = pipe.consumer() < 0 ? 3 : pipe.consumer();\n"
     "        const bool stamper = threadIdx.x % 128 == 0;\n"
     "        if (stamper) {\n"
     "            stamps(I(blockIdx.x), I(role), I(0)) = t_entry;\n"
     "            stamps(I(blockIdx.x), I(role), I(16)) = 0;\n"
     "            stamp(role, 1);\n"
     "            for (int p = 2; p < 16; ++p) stamps(I(blockIdx.x), I(role), I(p)) = 0;\n"
     "        }\n"),
    ("            });\n            return;\n        }\n", f"            }});\n            {S}(3, 2);\n            return;\n        }}\n"),
    ("                const I kc = next_kc, tile = next_tile;\n",
     f"                const I kc = next_kc, tile = next_tile;\n                if (t == 0) {S}(wg, 2);\n"),
    ("                acc.template wait<0>();\n", f"                acc.template wait<0>();\n                if (t == 0) {S}(wg, 3);\n"),
    ("                        #pragma unroll\n                        for (int j = 0; j < NX / 8; ++j) part.store4",
     f"                        {S}(wg, 4);\n                        #pragma unroll\n                        for (int j = 0; j < NX / 8; ++j) part.store4"),
    ("                        ima_warpgroup_sync();\n                        if (last(wg)) {\n",
     f"                        ima_warpgroup_sync();\n                        {S}(wg, 5);\n                        if (last(wg)) {{\n"
     "                            if (stamper) {\n"
     "                                stamps(I(blockIdx.x), I(wg), I(12)) = tile;\n"
     "                                stamps(I(blockIdx.x), I(wg), I(13)) = hi - lo + 1;\n"
     "                                stamps(I(blockIdx.x), I(wg), I(14)) = t;\n"
     "                                stamps(I(blockIdx.x), I(wg), I(15)) = u1 - u0;\n"
     "                            }\n"),
    ("                            emit(sum, m0, n0);\n",
     f"                            {S}(wg, 8);\n                            emit(sum, m0, n0);\n                            {S}(wg, 9);\n"),
    ("                        ima_warpgroup_sync();\n                    }\n",
     f"                        ima_warpgroup_sync();\n                        {S}(wg, 6);\n                    }}\n"),
    ("            });\n        };\n        if (M <= 16)", f"            }});\n            {S}(wg, 7);\n        }};\n        if (M <= 16)"),
])
with open("wt3.ima", "w") as f:
    f.write("/// Throwaway: gptq_gemm_wg after b1cbb7b with time stamps (bench/explore/wt/gen3.py).\n")
    f.write(consts)
    f.write("\n" + stamped)
