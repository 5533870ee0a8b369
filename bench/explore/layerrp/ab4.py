"""Throwaway, session 28: the decode layer from Python (examples/decode_layer/decode_layer.py)
at B = 32 with its projections on gptq_gemm (as it is) and with some of them on
bench/explore/rp's rp32_s4 (rp16b's decode, 4 stages of 32 rows of x; weights repacked by
repack.py), CUDA graphs, alternating, two passes; then each projection alone at the
layer's rows. Reads a dump of `decode_layer dump`.
    python3 -u ab4.py DIR"""
import os
import sys

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", ".."))
sys.path.insert(0, os.path.join(here, ".."))
sys.path.insert(0, os.path.join(here, "..", "rp"))
sys.path.insert(0, os.path.join(here, "..", "..", "..", "examples", "decode_layer"))
import decode_layer  # noqa: E402
from decode_layer_torch import captured, inputs, load, median_us, weights  # noqa: E402
from layer_ab import alternate  # noqa: E402
import rp4_kernels as rk  # noqa: E402
from repack import repack  # noqa: E402

PLANS = {"gptq_gemm": (), "rp: down": ("down",), "rp: gate_up, down": ("gate_up", "down"),
         "rp: qkv, gate_up, down": ("qkv", "gate_up", "down")}


class Layer(decode_layer.DecodeLayer):
    def __init__(self, config, w):
        super().__init__(config, w)
        self.rp = {n: rk.QuantWeight("gptq", qweight=repack(w[n + ".qweight"]), qzeros=w[n + ".qzeros"],
                                     scales=w[n + ".scales"], group_size=config["group"])
                   for n in decode_layer.PROJECTIONS}
        self.plan = ()
        self.ws = {}

    def _project(self, name, x, y):
        if name in self.plan and 16 < x.shape[0] <= 32:
            n = self.cols[name]
            if name not in self.ws:
                self.ws[name] = (torch.empty(rk.BLOCKS, 2, 3, 8, 128, 4, device=x.device, dtype=torch.float32),
                                 torch.zeros(1, (n + 63) // 64, device=x.device, dtype=torch.int32))
            part, arr = self.ws[name]
            rk.rp32_s4(x, self.rp[name], part, arr, y)
        else:
            super()._project(name, x, y)


c, t = load(sys.argv[1])
args = inputs(t)
b = t["seq_lens"].shape[0]
layer = Layer(c, weights(t))
alternate(layer, t, PLANS, lambda plan: setattr(layer, "plan", plan))
s = layer._workspace(b, t["block_tables"].shape[1], args[0].device)
x_of = {"qkv": s["normed"], "o": s["attn"].view(b, -1), "gate_up": s["normed"], "down": s["act"]}
y_of = {"qkv": s["qkv"], "o": s["o"], "gate_up": s["act"], "down": torch.empty_like(args[0])}
for name in decode_layer.PROJECTIONS:
    row = []
    for plan in ((), (name,)):
        layer.plan = plan
        row.append(median_us(captured(lambda: layer._project(name, x_of[name], y_of[name]), ()), 500))
    print(f"B={b} {name} alone (weights in L2 between replays): gptq_gemm {row[0]:.1f} us, rp32_s4 {row[1]:.1f} us", flush=True)
