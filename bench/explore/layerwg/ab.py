"""Throwaway: the decode layer from Python (examples/decode_layer/decode_layer.py) with and
without gptq_gemm_wg for its projections, CUDA graphs, one call; then each projection
alone at the layer's rows, both kernels. Reads the dumps of `decode_layer dump`. Ran
against 5ee7996's decode_layer.py, whose WARPGROUP_MIN_WEIGHTS rule this sets; the rule
went with the revert of 6ffa763 (bench/RESULTS.md, "gptq_gemm_wg in the decode layer"),
and came back in session 35 for gptq_gemm_wg32 (17 to 32 rows), which "wg" means since.

    python3 -u ab.py DIR...
"""

import os
import sys

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", ".."))
sys.path.insert(0, os.path.join(here, ".."))
sys.path.insert(0, os.path.join(here, "..", "..", "..", "examples", "decode_layer"))
import decode_layer  # noqa: E402
from decode_layer_torch import captured, inputs, load, median_us, weights  # noqa: E402
from layer_ab import alternate  # noqa: E402

RULES = {"no wg": 1 << 62, "wg from 2^25 weights": 1 << 25, "wg from 3 x 2^23 (QKV too)": 3 << 23, "wg everywhere": 0}

for d in sys.argv[1:]:
    c, t = load(d)
    args = inputs(t)
    b = t["seq_lens"].shape[0]
    layer = decode_layer.DecodeLayer(c, weights(t))
    alternate(layer, t, RULES, lambda rule: setattr(decode_layer, "WARPGROUP_MIN_WEIGHTS", rule))
    s = layer._workspace(b, t["block_tables"].shape[1], args[0].device)
    x_of = {"qkv": s["normed"], "o": s["attn"].view(b, -1), "gate_up": s["normed"], "down": s["act"]}
    y_of = {"qkv": s["qkv"], "o": s["o"], "gate_up": s["act"], "down": s["out"] if "out" in s else torch.empty_like(args[0])}
    for name in decode_layer.PROJECTIONS:
        row = []
        for rule in (1 << 62, 0):
            decode_layer.WARPGROUP_MIN_WEIGHTS = rule
            f = lambda: layer._project(name, x_of[name], y_of[name], s)  # noqa: E731
            row.append(median_us(captured(f, ()), 500))
        print(f"B={b} {name}: gptq_gemm {row[0]:.1f} us, gptq_gemm_wg32 {row[1]:.1f} us", flush=True)
