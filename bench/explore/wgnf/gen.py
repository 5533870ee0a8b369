"""Throwaway: is gptq_gemm_wg's gap to its twin (release 1.06, 1.10 and 1.05 x the twin at
M = 32, 64 and 128 at 1cd6769, bench/RESULTS.md) the code of its fused SiluAndMul? The twin
has none, and release's loop body, its epilogue inside, is twice the twin's size
(cuobjdump: 2872 and 1683 instructions against 1413, 1141 and 1011). Kernels:
- base: gptq_gemm_wg itself (the reference of the timer);
- wgnf: the same with `fused` a compile-time false (y as wide as W only), so that ptxas
  drops the fused paths of both of its epilogues.
    python3 gen.py [repo root]"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from spec_text import constants, edit, kernel  # noqa: E402

before, k = kernel("gemm_tma.ima", "gptq_gemm_wg")
consts = constants(before)
with open("wgnf.ima", "w") as f:
    f.write("/// Throwaway: gptq_gemm_wg without its fused epilogue (bench/explore/wgnf/gen.py).\n")
    f.write(consts)
    f.write("\n" + edit(k, [("kernel gptq_gemm_wg ", "kernel base ")]))
    f.write("\n" + edit(k, [("kernel gptq_gemm_wg ", "kernel wgnf "),
                            ("const bool fused = NY != N;", "constexpr bool fused = false;  // wgnf: y as wide as W only")]))
