"""Throwaway: writes wn8.ima, specs/gemm.ima's gptq_gemm with its grid taking blocks of
256 columns (WN = 8: each warp its own 32 columns over all of K, all 8 on the same rows
of K at once) where N has at least 800 strips of 32 and x at most 32 rows. Kernel wn8.
Run once at 713024e: both slower than gptq_gemm (bench/RESULTS.md, "Tried: blocks of 256
columns").
    python3 gen8.py [repo root]"""
import sys

root = sys.argv[1] if len(sys.argv) > 1 else "../../.."
text = open(f"{root}/specs/gemm.ima").read()
i = text.index("kernel gptq_gemm ")
j = text.index("\n}\n", i) + 3
k = text[i:j].replace("kernel gptq_gemm ", "kernel wn8 ", 1)
for old, new in [
    ("+ 3 * min(1, ceil(N / 32) / 800) * min(1, 32 / max(M, 1))", "+ 7 * min(1, ceil(N / 32) / 800) * min(1, 32 / max(M, 1))"),
    ("I(gridDim.y) * 64 >= N ? 2 : 4,", "I(gridDim.y) * 64 >= N ? 2 : I(gridDim.y) * 128 >= N ? 4 : 8,"),
]:
    assert k.count(old) == 1, old
    k = k.replace(old, new)
with open("wn8.ima", "w") as f:
    f.write("/// Throwaway: gptq_gemm with blocks of 256 columns (bench/explore/wn/gen8.py).\n")
    f.write("const GATE_UP_UNIT = 8\n\n" + k)

# r16: blocks of 16 rows of x always (the 16-row path, with its tile ahead), WN = 4 for
# every M where N has at least 800 strips of 32: two or more row blocks share a strip's
# weights through L2 (adjacent in launch order) instead of one block decoding them for
# 32 rows without a tile ahead. Kernel r16.
k = text[i:j].replace("kernel gptq_gemm ", "kernel r16 ", 1)
for old, new in [
    ("launch grid(ceil(M / (16 + 16 * min(1, ceil(M / 16) * ceil(N / 32) / 265))),", "launch grid(ceil(M / 16),"),
    ("+ 3 * min(1, ceil(N / 32) / 800) * min(1, 32 / max(M, 1))", "+ 3 * min(1, ceil(N / 32) / 800)"),
    ("(1 - min(1, ceil(N / 32) / 800) * min(1, 32 / max(M, 1)))", "(1 - min(1, ceil(N / 32) / 800))"),
]:
    assert k.count(old) == 1, old
    k = k.replace(old, new)
with open("wn8.ima", "a") as f:
    f.write("\n" + k)
