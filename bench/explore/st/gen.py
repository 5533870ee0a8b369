"""Throwaway: writes st.ima, specs/paged.ima's paged_attn with ST (the K/V tiles a warp
keeps in shared memory: one computed, the rest in flight) raised from 2 to 3. Under ncu at
B = 32, context 1024 (45.8 µs, DRAM 63% of peak), 28.5% of the stall samples were warps
waiting at the cp.async wait for their next tile (bench/RESULTS.md): a third stage keeps
two tiles in flight a warp. Its shared memory (96 KB of tiles a block) allows 2 blocks an
SM instead of 3, so min_blocks 2; st2b2 is the unchanged kernel at min_blocks 2, to tell
the two effects apart. Kernels st3 and st2b2.
Prepared in session 21 and compiled; not yet run: build its wheel with paged's and run
time_st.py there."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from spec_text import constants, edit, kernel  # noqa: E402

before, body = kernel("paged.ima", "paged_attn")
consts = constants(before)


def variant(name, st, min_blocks):
    return edit(body, [("kernel paged_attn ", f"kernel {name} "),
                       ("shared kv: f16[4, 2, 2, 16, D]", f"shared kv: f16[4, {st}, 2, 16, D]"),
                       ("constexpr int ST = 2;", f"constexpr int ST = {st};"),
                       ("block(128) min_blocks 3", f"block(128) min_blocks {min_blocks}")])


with open("st.ima", "w") as f:
    f.write("/// Throwaway: specs/paged.ima's paged_attn with three K/V stages a warp (bench/explore/st/gen.py).\n")
    f.write(consts)
    f.write("\n" + variant("st3", 3, 2) + "\n" + variant("st2b2", 2, 2))
