"""Throwaway (issue 22): writes target/explore/pmajor.ima, specs/paged.ima's paged_attn as
the working tree has it, renamed paged_attn_pm: build.sh runs it with pmajor.patch applied,
which puts paged_attn's blocks in partition-major order (the launch's linear block index
runs over every (sequence, head block) pair's partition 0, then every pair's partition 1,
and so on, so that the blocks the GPU starts last are the sequences' last, shorter
partitions and the slots past their ends, which return at once). The grid's own order
(partitions fastest) ends a launch on a mix: at B = 32 and 1024 its last fifth ran at 9 to
53% of the SMs' slots (bench/explore/pstamp; bench/RESULTS.md, session 48). If
time_pmajor.py finds it faster, the patch is the change to land.
    python3 gen.py [repo root]"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from spec_text import constants, edit, kernel, write  # noqa: E402

before, k = kernel("paged.ima", "paged_attn")
write("pmajor", "/// Throwaway: paged_attn with bench/explore/pmajor/pmajor.patch (gen.py).\n" + constants(before)
      + "\n" + edit(k, [("kernel paged_attn ", "kernel paged_attn_pm ")]))
