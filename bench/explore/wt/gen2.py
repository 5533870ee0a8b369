"""Throwaway: how many blocks' slots the last block of a shared tile should load at once
(specs/gemm_tma.ima's gptq_gemm_wg unrolls its sum by 2): `u1` and `u4` unroll it by 1 and 4.
    python3 gen2.py [repo root]"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from spec_text import constants, edit, kernel  # noqa: E402

before, k = kernel("gemm_tma.ima", "gptq_gemm_wg")
consts = constants(before)
with open("wt2.ima", "w") as f:
    f.write("/// Throwaway: gptq_gemm_wg's sum unrolled by 1 and 4 (bench/explore/wt/gen2.py).\n")
    f.write(consts)
    for u in (1, 4):
        f.write("\n" + edit(k, [("kernel gptq_gemm_wg ", f"kernel u{u} "),
                                ("#pragma unroll 2\n", f"#pragma unroll {u}\n")]))
