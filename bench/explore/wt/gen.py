"""Throwaway: where gptq_gemm_wg's fixed cost goes (about 25,000 cycles a launch however
small the work; bench/RESULTS.md, "gptq_gemm_wg's shared tiles from slots"). `stamped` is
gptq_gemm_wg with one thread of each warpgroup writing %globaltimer and its own clock64
(since the block's entry) at each point of its life into `stamps` [block, role, 16]:
role 0..2 the consumer warpgroups, 3 the producer; [k] the global time of point k, [8 + k]
the SM cycles since entry. Points: 0 entry, 1 pipeline set up; the producer's 2 its last
copy issued; a consumer's 2 its first stage landed, 3 its first stage's MMAs done, 4 its
shared tile's slot about to be stored, 5 its arrival counted, 6 its shared tile's path
done, 7 the end of its units.
    python3 gen.py [repo root]"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from spec_text import constants, edit, kernel  # noqa: E402
from stamping import S, STAMPED  # noqa: E402

before, k = kernel("gemm_tma.ima", "gptq_gemm_wg")
consts = constants(before)
stamped = edit(k, STAMPED)
# The last arriver's path, point by point: 8 after its fence, 9 its blocks found, 10 the
# slots summed, 11 y stored; and the occurrence's tile, its block count, its unit t and
# the block's units (12 to 15, plain values).
stamped = edit(stamped, [
    ("                        if (last(wg)) {\n                            __threadfence();\n",
     f"                        if (last(wg)) {{\n                            __threadfence();\n                            {S}(wg, 8);\n"),
    ("                            ImaAcc4 sum[NX / 8] = {};\n",
     f"                            {S}(wg, 9);\n"
     "                            if (stamper) {\n"
     "                                stamps(I(blockIdx.x), I(wg), I(12)) = tile;\n"
     "                                stamps(I(blockIdx.x), I(wg), I(13)) = hi - lo + 1;\n"
     "                                stamps(I(blockIdx.x), I(wg), I(14)) = t;\n"
     "                                stamps(I(blockIdx.x), I(wg), I(15)) = u1 - u0;\n"
     "                            }\n"
     "                            ImaAcc4 sum[NX / 8] = {};\n"),
    ("                            emit(sum, m0, n0);\n",
     f"                            {S}(wg, 10);\n                            emit(sum, m0, n0);\n                            {S}(wg, 11);\n"),
])
# The arrival counted by an acq_rel atomic (CUTLASS's stream-K barrier: a warpgroup barrier,
# then one thread's release of the slot the warpgroup stored, which the last arriver
# acquires), in place of the two __threadfence()s (MEMBAR.SC.GPU each).
RA = [
    ("                        __threadfence();\n                        ima_warpgroup_sync();\n",
     "                        ima_warpgroup_sync();\n"),
    ("atomicAdd(&arrivals(m0 / 64, n0 / 64 + wg), int(mine))",
     "[&] { int old; asm volatile(\"atom.add.acq_rel.gpu.global.s32 %0, [%1], %2;\" : \"=r\"(old) : \"l\"(&arrivals(m0 / 64, n0 / 64 + wg)), \"r\"(int(mine)) : \"memory\"); return old; }()"),
    ("                        if (last(wg)) {\n                            __threadfence();\n",
     "                        if (last(wg)) {\n"),
]
stamped_ra = edit(stamped.replace("kernel stamped ", "kernel stamped_ra "), RA)
relacq = edit(k.replace("kernel gptq_gemm_wg ", "kernel relacq "), RA)
with open("wt.ima", "w") as f:
    f.write("/// Throwaway: gptq_gemm_wg with time stamps (bench/explore/wt/gen.py).\n")
    f.write(consts)
    for text in (stamped, stamped_ra, relacq):
        f.write("\n" + text)
