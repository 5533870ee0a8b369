"""Throwaway, session 32 (issue 21): do more consumer warps pace the 16-row stage faster?
Session 27's ncu profile of gptq_gemm_wg at M = 16 found its consumers latency bound (3.2
warps a scheduler, 0.96 eligible, issue slots 50% busy, the top stall a fixed-latency
dependency). rp8.ima's s8 (rp16b_s5 with delegated arrivals: 3 consumer warpgroups of 64
columns, tiles of 192, 5 stages of 16-row x boxes) is the base; here
  s8   as rp8.ima has it (the repacked words' decode);
  s9   4 consumer warpgroups, tiles of 256 columns (N = 28672 is 112 of them), 4 stages
       (48 KB a stage), 640 threads: consumer warpgroup 3's count goes to warp 1 of the
       producer's warpgroup after consumer 0's (named barriers 6 to 9);
  w8   s8 on GPTQ's own words, decoded by the accessor's tma_wg_frag (gptq_gemm_wg's decode);
  w9   s9 the same.
Needs ima.cuh's ImaTmaPipeline to allow 4 consumer warpgroups (its consumers then get 112
registers).
    python3 gen9.py"""

with open("rp8.ima") as f:
    src = f.read()
head = src[: src.index("kernel s5 where")]
s8 = src[src.index("kernel s8 where"):]


def edit(text, pairs):
    for old, new in pairs:
        assert old in text, old
        text = text.replace(old, new)
    return text


FOUR = [
    ("kernel s8 where", "kernel s9 where"),
    ("tma(256, 192)", "tma(256, 256)"),
    ("part: f32[BLOCKS, 2, 3, 8, 128, 4]", "part: f32[BLOCKS, 2, 4, 8, 128, 4]"),
    ("shared ws: i32[5, 40, 192]", "shared ws: i32[4, 40, 256]"),
    ("shared xs: f16[5, 16, 256]", "shared xs: f16[4, 16, 256]"),
    ("shared last: i32[3]", "shared last: i32[4]"),
    ("launch grid(BLOCKS) block(512)", "launch grid(BLOCKS) block(640)"),
    ("ima_ceil_div(N, I(192))", "ima_ceil_div(N, I(256))"),
    ("ImaTmaPipeline<5, 3>", "ImaTmaPipeline<4, 4>"),
    ("ImaConst<192>{}", "ImaConst<256>{}"),
    ("tile % NS * 192", "tile % NS * 256"),
    ("c0 % 192", "c0 % 256"),
    ("            const int dw = int(threadIdx.x / 32) - 1;\n            if (dw >= 0 && u0 % KS != 0) {\n",
     "            for (int dw = int(threadIdx.x / 32) - 1; dw >= 0 && dw < 4 && u0 % KS != 0; dw += 3) {\n"),
]
NATURAL = [("if constexpr (NX == 16) {", "if constexpr (NX == 0) {")]

s9 = edit(s8, FOUR)
w8 = edit(s8, [("kernel s8 where", "kernel w8 where")] + NATURAL)
w9 = edit(s9, [("kernel s9 where", "kernel w9 where")] + NATURAL)
with open("rp9.ima", "w") as f:
    f.write("/// Throwaway: s8 with 4 consumer warpgroups (bench/explore/rp/gen9.py).\n")
    f.write(head[head.index("\n") + 1:])
    f.write("\n".join([s8, s9, w8, w9]))
