"""Throwaway (issue 22): writes target/explore/relaxattn.ima, specs/paged.ima's paged_attn
as the working tree has it, renamed paged_attn_rx: build.sh runs it with relax.patch
applied to codegen/include/ima.cuh, which makes each block's count of its partition
relaxed (`atom.add.relaxed.gpu`) where the tree's is an acquire-release
(`ima_atomic_add_acq_rel`: a MEMBAR.ALL.GPU before the atomic, a CCTL.IVALL after). Not a
correct kernel (nothing orders a partition's writes before its count); it says what the
release costs a launch. Session 51 found that a gpu-scope release waits for the bulk copies
its SM has in flight (bench/explore/fence), and session 48's stamps put this count at 1.06
us at the median and 7.46 at most (bench/explore/pstamp) where an idle SM's release takes
0.36: the SM's other blocks stream their K and V meanwhile.
    python3 gen.py [repo root]"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from spec_text import constants, edit, kernel, write  # noqa: E402

before, k = kernel("paged.ima", "paged_attn")
write("relaxattn", "/// Throwaway: paged_attn with bench/explore/relaxattn/relax.patch (gen.py).\n" + constants(before)
      + "\n" + edit(k, [("kernel paged_attn ", "kernel paged_attn_rx ")]))
