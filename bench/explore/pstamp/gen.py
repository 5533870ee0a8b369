"""Throwaway (issue 22): where paged_attn's fixed 13 us at B = 32 goes (bench/RESULTS.md,
session 48: 13 us plus 0.239 us a MB). Writes target/explore/pstamp.ima: the tree's paged_attn as
`paged_attn_stamped`, thread 0 of each block writing %globaltimer at its points into
`stamps` [block, 16] (block = x + X (y + Y z) over the grid): 0 entry, 1 the length read,
2 the pages in shared memory, 3 warp 0's first tile landed, 4 warp 0's tiles done, 5 the
warps met, 6 the arrival counted, 7 the partitions weighed (the last block; else 0); 8 the
SM, 9 the partition (-1 for a block past its sequence's end, which stamps 0 alone).
    python3 gen.py [repo root]   # target/explore/pstamp.ima; build.sh builds its wheel"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from spec_text import constants, edit, kernel, write  # noqa: E402

before, k = kernel("paged.ima", "paged_attn")
# The point p of thread 0: `STAMP(p);`.
S = "if (threadIdx.x == 0) stamp"
stamped = edit(k, [
    ("kernel paged_attn ", "kernel paged_attn_stamped "),
    ("    out   out: f16[B, HQ, D] align(16)\n",
     "    out   out: f16[B, HQ, D] align(16)\n    /// [block, point]: %globaltimer at each point (gen.py's docs).\n"
     "    inout stamps: i64[STAMP_BLOCKS, 16]\n"),
    ("    body {\n", "    body {\n"
     "        const auto now = [] { long long t; asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t)); return t; };\n"
     "        const long long t_entry = now();\n"
     "        const I flat = I(blockIdx.x) + I(gridDim.x) * (I(blockIdx.y) + I(gridDim.y) * I(blockIdx.z));\n"
     "        const auto stamp = [&](int p) { stamps(flat, I(p)) = now(); };\n"
     "        if (threadIdx.x == 0) {\n"
     "            unsigned sm;\n"
     "            asm volatile(\"mov.u32 %0, %%smid;\" : \"=r\"(sm));\n"
     "            stamps(flat, I(0)) = t_entry;\n"
     "            for (int p = 1; p < 16; ++p) stamps(flat, I(p)) = 0;\n"
     "            stamps(flat, I(8)) = sm;\n"
     "            stamps(flat, I(9)) = -1;\n"
     "        }\n"),
    ("        const I len = seq_lens(b);\n", f"        const I len = seq_lens(b);\n        {S}(1);\n"),
    ("        for (I j = threadIdx.x; j < npages; j += 128) pages(j) = int(block_tables(b, first_page + j));\n        __syncthreads();\n",
     "        for (I j = threadIdx.x; j < npages; j += 128) pages(j) = int(block_tables(b, first_page + j));\n        __syncthreads();\n"
     f"        {S}(2);\n        if (threadIdx.x == 0) stamps(flat, I(9)) = I(blockIdx.x);\n"),
    ("                ima_async_wait<ST - 1>();\n                stage_sync();\n",
     f"                ima_async_wait<ST - 1>();\n                stage_sync();\n                if (it == 0) {S}(3);\n"),
    ("            ima_async_wait<0>();\n            l += __shfl_xor_sync", f"            ima_async_wait<0>();\n            {S}(4);\n            l += __shfl_xor_sync"),
    ("            // Pair 0 holds the partition, whose first token it attended: l > 0.\n",
     f"            {S}(5);\n            // Pair 0 holds the partition, whose first token it attended: l > 0.\n"),
    ("            if (!__syncthreads_or(last)) return;\n", f"            {S}(6);\n            if (!__syncthreads_or(last)) return;\n"),
    ("            if (threadIdx.x == 0) arrivals(b, h * G + g0) = 0;\n",
     f"            if (threadIdx.x == 0) arrivals(b, h * G + g0) = 0;\n            {S}(7);\n"),
])
write("pstamp", "/// Throwaway: paged_attn with time stamps (bench/explore/pstamp/gen.py).\n" + constants(before)
      + "\n/// Blocks the stamps hold (the grid's, at most).\nconst STAMP_BLOCKS = 8192\n\n" + stamped)
