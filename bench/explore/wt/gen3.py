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
from spec_text import constants, edit, kernel  # noqa: E402
from stamping import S, STAMPED  # noqa: E402

before, k = kernel("gemm_tma.ima", "gptq_gemm_wg")
consts = constants(before)
# The last block's path: 8 the slots summed, 9 y stored; and the occurrence's tile, its
# block count, its unit t and the block's units (12 to 15, plain values).
stamped = edit(edit(k, STAMPED), [
    (f"                        {S}(wg, 5);\n                        if (last(wg)) {{\n",
     f"                        {S}(wg, 5);\n                        if (last(wg)) {{\n"
     "                            if (stamper) {\n"
     "                                stamps(I(blockIdx.x), I(wg), I(12)) = tile;\n"
     "                                stamps(I(blockIdx.x), I(wg), I(13)) = hi - lo + 1;\n"
     "                                stamps(I(blockIdx.x), I(wg), I(14)) = t;\n"
     "                                stamps(I(blockIdx.x), I(wg), I(15)) = u1 - u0;\n"
     "                            }\n"),
    ("                            emit(sum, m0, n0);\n",
     f"                            {S}(wg, 8);\n                            emit(sum, m0, n0);\n                            {S}(wg, 9);\n"),
])
with open("wt3.ima", "w") as f:
    f.write("/// Throwaway: gptq_gemm_wg after b1cbb7b with time stamps (bench/explore/wt/gen3.py).\n")
    f.write(consts)
    f.write("\n" + stamped)
