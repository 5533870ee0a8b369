"""The tree's gptq_gemm_wg16 and gptq_gemm_wg32 (gemm_tma_kernels) against the same kernels
of patched wheels (gemm_tma_NAME_kernels, built by bench/explore/patched-wheels.sh), in one
process, in turn on the same weights: queued CUDA graphs cycling weight sets past L2, three
passes, µs a launch (in brackets max |y - torch's f32 product| / max |y|, and the share of
the roofline from the copy rate measured first).
    python3 -u against.py NAME...
KERNELS=gptq_gemm_wg32 (a comma-separated list) times only those kernels' shapes."""
import importlib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import copy_rate, same_weight, shape_in_turn  # noqa: E402
import gemm_tma_kernels as main  # noqa: E402

patched = {name: importlib.import_module(f"gemm_tma_{name}_kernels") for name in sys.argv[1:]}
rate = copy_rate()
for kernel, m, k, n in [("gptq_gemm_wg16", 16, 8192, 28672), ("gptq_gemm_wg16", 16, 14336, 4096),
                        ("gptq_gemm_wg16", 1, 8192, 28672), ("gptq_gemm_wg16", 16, 4096, 6144),
                        ("gptq_gemm_wg16", 5, 3200, 1056), ("gptq_gemm_wg32", 32, 8192, 28672),
                        ("gptq_gemm_wg32", 32, 14336, 4096), ("gptq_gemm_wg32", 32, 4096, 28672)]:
    if kernel not in os.environ.get("KERNELS", kernel):
        continue

    def others(ws, kernel=kernel):
        ks = {}
        for name, pkg in patched.items():
            own = {id(w): same_weight(pkg, w) for w in ws}
            ks[name] = lambda x, w, p, a, y, f=getattr(pkg, kernel), own=own: f(x, own[id(w)], p, a, y)
        return ks

    tiles = {"gptq_gemm_wg16": 2, "gptq_gemm_wg32": 4}[kernel]
    print(shape_in_turn(main, kernel, (m, k, n), rate, others,
                        lambda m, k, n, sets, kernel=kernel: f"{kernel} M={m} K={k} N={n} ({sets} sets)", tiles),
          flush=True)
