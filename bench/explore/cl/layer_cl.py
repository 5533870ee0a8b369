"""Throwaway (issue 22): the decode layer from Python (examples/decode_layer/decode_layer.py)
with its projections on gen.py's cluster split-K spec forms (cl_kernels, `launch ...
cluster(CK)`) against the tree's kernels (GEMVs at B = 1, gptq_gemm_wg32 and gptq_gemm at
B = 32), CUDA graphs, alternating, two passes (layer_ab.alternate), and each plan's output
against the tree's. Reads dumps of `decode_layer dump`.
    python3 -u layer_cl.py DIR..."""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", ".."))
sys.path.insert(0, os.path.join(here, ".."))
sys.path.insert(0, os.path.join(here, "..", "..", "..", "examples", "decode_layer"))
import decode_layer  # noqa: E402
from decode_layer_torch import load, weights  # noqa: E402
from layer_ab import alternate  # noqa: E402
import cl_kernels as ck  # noqa: E402

# The spec form of each projection (its K and N: QKV 4096 x 6144, O 4096 x 4096, gate/up
# 4096 x 28672 with SiluAndMul fused, down 14336 x 4096).
FORMS = {"qkv": ck.gptq_gemm_cl_qkv, "o": ck.gptq_gemm_cl_o, "gate_up": ck.gptq_gemm_cl_gate_up,
         "down": ck.gptq_gemm_cl_down}
PLANS = {"tree": (), "cl: o": ("o",), "cl: qkv, o, down": ("qkv", "o", "down"),
         "cl: all four": ("qkv", "o", "gate_up", "down")}


class Layer(decode_layer.DecodeLayer):
    def __init__(self, config, w):
        super().__init__(config, w)
        self.cl = {n: ck.QuantWeight("gptq", qweight=self.w[n].qweight, qzeros=self.w[n].qzeros,
                                     scales=self.w[n].scales, group_size=config["group"])
                   for n in FORMS}
        self.plan = ()

    def _project(self, name, x, y, s):
        if name in self.plan and x.shape[0] <= 32:
            FORMS[name](x, self.cl[name], y)
        else:
            super()._project(name, x, y, s)


for d in sys.argv[1:]:
    c, t = load(d)
    layer = Layer(c, weights(t))
    alternate(layer, t, PLANS, lambda plan: setattr(layer, "plan", plan))
