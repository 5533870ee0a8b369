"""Throwaway, session 29 for the next: what the shared tiles' arrivals cost rp16b_s5's
consumers. bench/explore/mega's forms 23 and 24 found a `red.release.gpu` on an SM that
streams through its ring visible about 3 us after it was issued. rp16b_s5 (like
gptq_gemm_wg) stores a shared tile's sums in its slot and counts them with an acq_rel
atomic, its warpgroup waiting for the result, at the end of each tile it shares with
another block: for the block's first tile, in the middle of its stream. rp7.ima's kernels
are rp6's with, per consumer warpgroup, the cycles from the slot's store to the warpgroup
past the atomic (`arrive`, summed over its shared tiles) and the count of those tiles, at
[block, wg, 6] and [block, wg, 7].
  s7_pp     gen6.py's s6_pp with the arrivals' cycles;
  e7_pp     gen6.py's e6_pp with them (idle consumers).
    python3 gen7.py"""
from gen import EMPTY, S5, consts, variant
from gen3 import PHASES, S5_PH, STEP
from gen5 import PRODUCER
from gen6 import STAMPS

ARRIVALS = [
    ("    inout phases: i64[BLOCKS, 4, 6]\n", "    inout phases: i64[BLOCKS, 4, 8]\n"),
    ("            long long ph_wait = 0, ph_work = 0, ph_tail = 0, ph_last = clock64(), ph_n = 0;\n",
     "            long long ph_wait = 0, ph_work = 0, ph_tail = 0, ph_last = clock64(), ph_n = 0;\n"
     "            long long ar_cycles = 0, ar_n = 0;\n"),
    ("                        #pragma unroll\n"
     "                        for (int j = 0; j < NX / 8; ++j) part.store4(me, slot(me), wg, j, tid, 0, own(j));\n",
     "                        const long long ar_in = clock64();\n"
     "                        #pragma unroll\n"
     "                        for (int j = 0; j < NX / 8; ++j) part.store4(me, slot(me), wg, j, tid, 0, own(j));\n"),
    ("                        }\n                        ima_warpgroup_sync();\n                        if (last(wg)) {\n",
     "                        }\n                        ima_warpgroup_sync();\n"
     "                        ar_cycles += clock64() - ar_in;\n"
     "                        ++ar_n;\n"
     "                        if (last(wg)) {\n"),
    ("                phases(I(blockIdx.x), I(wg), I(5)) = t_body;\n",
     "                phases(I(blockIdx.x), I(wg), I(5)) = t_body;\n"
     "                phases(I(blockIdx.x), I(wg), I(6)) = ar_cycles;\n"
     "                phases(I(blockIdx.x), I(wg), I(7)) = ar_n;\n"),
]
if __name__ == "__main__":
    kernels = [variant("s7_pp", S5_PH, S5 + STEP + PHASES + PRODUCER + STAMPS + ARRIVALS),
               variant("e7_pp", EMPTY, S5 + PHASES + PRODUCER + STAMPS + ARRIVALS)]
    with open("rp7.ima", "w") as f:
        f.write("/// Throwaway: rp6's kernels with their shared tiles' arrivals in cycles (bench/explore/rp/gen7.py).\n")
        f.write(consts)
        f.write("\n" + "\n".join(kernels))
