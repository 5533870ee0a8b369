"""Throwaway, session 45 (issue 21): gptq_gemm_wg16 with the zeros' biases folded out of the
decode (bench/explore/fold2/fold2.patch, built by build.sh as gemm_tma_fold_kernels): the
words decode to 1024 + q and 64 + q by one LOP3 a register, and the transforming warps sum
x's even and odd columns of each row and half stage (C = 1024 E + 64 O, S = E + O). wg16f
takes C + z S off the MMA's sums in f32 (three FP operations an accumulator and half);
wg16g, timing only (its outputs are wrong), does it by one more MMA a half stage; wg16h
is wg16g with no sums in the transform, wg16s the tree's consumers with the transform's
sums, wg16r the raw decode with no correction at all (h and r wrong too, timing only).
Against the tree's kernel in one process, in turn on the same weights: queued CUDA graphs
cycling weight sets past L2, three passes, µs a launch (in brackets max |y - torch's f32
product| / max |y|, and the share of the roofline from the copy rate measured first).
    python3 -u fold2.py"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from timing import copy_rate, same_weight, shape_in_turn  # noqa: E402
import gemm_tma_kernels as main  # noqa: E402
import gemm_tma_fold_kernels as fx  # noqa: E402

rate = copy_rate()
names = ["gptq_gemm_wg16f", "gptq_gemm_wg16g", "gptq_gemm_wg16h", "gptq_gemm_wg16s", "gptq_gemm_wg16r"]
only = os.environ.get("ONLY")


def others(ws):
    own = {id(w): same_weight(fx, w) for w in ws}
    return {nm: lambda x, w, p, a, y, f=getattr(fx, nm): f(x, own[id(w)], p, a, y)
            for nm in names if not only or nm in only.split(",")}


for shape in [(16, 8192, 28672), (16, 14336, 4096), (16, 8192, 28672)]:
    print(shape_in_turn(main, "gptq_gemm_wg16", shape, rate, others,
                        lambda m, k, n, sets: f"M={m} K={k} N={n} ({sets} sets)",
                        name=lambda nm: nm.replace('gptq_gemm_wg16', '')), flush=True)
