"""Throwaway: writes wn8.ima, specs/gemm.ima's gptq_gemm with its grid taking blocks of
256 columns (WN = 8: each warp its own 32 columns over all of K, all 8 on the same rows
of K at once) where N has at least 800 strips of 32 and x at most 32 rows. Kernel wn8.
Run once at 713024e, whose grid wrote WN as 1 + (1 - [widest]) [64-column blocks] + 3
[widest] (9dbcbcb writes the same grids as a max, which these edits now follow): both
slower than gptq_gemm (bench/RESULTS.md, "Tried: blocks of 256
columns").
    python3 gen8.py [repo root]"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from spec_text import edit, kernel  # noqa: E402

_, body = kernel("gemm.ima", "gptq_gemm")
# The grid's WN, max(1 + [64-column blocks >= 224], 4 [widest W, at most 32 rows]).
WIDEST = "4 * min(1, ceil(N / 32) / 800) * min(1, 32 / max(M, 1))"
k = edit(body, [("kernel gptq_gemm ", "kernel wn8 "),
                (WIDEST, "8 * min(1, ceil(N / 32) / 800) * min(1, 32 / max(M, 1))"),
                ("I(gridDim.y) * 64 >= N ? 2 : 4,", "I(gridDim.y) * 64 >= N ? 2 : I(gridDim.y) * 128 >= N ? 4 : 8,")])
with open("wn8.ima", "w") as f:
    f.write("/// Throwaway: gptq_gemm with blocks of 256 columns (bench/explore/wn/gen8.py).\n")
    f.write("const GATE_UP_UNIT = 8\n\n" + k)

# r16: blocks of 16 rows of x always (the 16-row path, with its tile ahead), WN = 4 for
# every M where N has at least 800 strips of 32: two or more row blocks share a strip's
# weights through L2 (adjacent in launch order) instead of one block decoding them for
# 32 rows without a tile ahead. Kernel r16.
k = edit(body, [("kernel gptq_gemm ", "kernel r16 "),
                ("launch grid(ceil(M / (16 + 16 * min(1, ceil(M / 16) * ceil(N / 32) / 265))),", "launch grid(ceil(M / 16),"),
                (WIDEST, "4 * min(1, ceil(N / 32) / 800)")])
with open("wn8.ima", "a") as f:
    f.write("\n" + k)
