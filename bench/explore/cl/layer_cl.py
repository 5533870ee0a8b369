"""Throwaway (issue 22): the decode layer from Python (examples/decode_layer/decode_layer.py)
with its projections on gen.py's cluster split-K spec forms (cl_kernels, `launch ...
cluster(CK)`) against the tree's kernels (GEMVs at B = 1, gptq_gemm_wg32 and gptq_gemm at
B = 32), CUDA graphs, alternating, two passes (layer_ab.alternate), and each plan's output
against the tree's. The last two plans also fuse each add_rms_norm into the projection after
it (gptq_gemm_cl_qkv_norm, gptq_gemm_cl_gate_up_norm: the cluster normalises its rows of x
as it stages them), the residual stream passing through a second buffer between the two;
the last also takes bench/explore/clattn's paged_attn_rope_cl, whose partitions meet in a
cluster (clattn_kernels, where its wheel is installed). Reads dumps of `decode_layer dump`.
    python3 -u layer_cl.py DIR..."""
import math
import os
import sys

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", ".."))
sys.path.insert(0, os.path.join(here, ".."))
sys.path.insert(0, os.path.join(here, "..", "..", "..", "examples", "decode_layer"))
import decode_layer  # noqa: E402
from decode_layer_torch import load, weights  # noqa: E402
from layer_ab import alternate  # noqa: E402
import cl_kernels as ck  # noqa: E402
import paged_kernels as pk  # noqa: E402
try:
    import clattn_kernels as ca  # bench/explore/clattn/build.sh
except ImportError:
    ca = None

# The spec form of each projection (its K and N: QKV 4096 x 6144, O 4096 x 4096, gate/up
# 4096 x 28672 with SiluAndMul fused, down 14336 x 4096).
FORMS = {"qkv": ck.gptq_gemm_cl_qkv, "o": ck.gptq_gemm_cl_o, "gate_up": ck.gptq_gemm_cl_gate_up,
         "down": ck.gptq_gemm_cl_down}
PLANS = {"tree": (), "cl: o": ("o",), "cl: qkv, o, down": ("qkv", "o", "down"),
         "cl: all four": ("qkv", "o", "gate_up", "down"),
         "cl: all four, norms fused": ("qkv", "o", "gate_up", "down", "norms")}
if ca is not None:
    PLANS["cl: all four, norms fused, attention's partitions in a cluster"] = (
        "qkv", "o", "gate_up", "down", "norms", "attention")


class Layer(decode_layer.DecodeLayer):
    def __init__(self, config, w):
        super().__init__(config, w)
        self.cl = {n: ck.QuantWeight("gptq", qweight=self.w[n].qweight, qzeros=self.w[n].qzeros,
                                     scales=self.w[n].scales, group_size=config["group"])
                   for n in FORMS}
        self.plan = ()

    def __call__(self, hidden, residual, positions, slot_mapping, block_tables, seq_lens, k_cache, v_cache):
        if "norms" not in self.plan:
            return super().__call__(hidden, residual, positions, slot_mapping, block_tables, seq_lens, k_cache,
                                    v_cache)
        # decode_layer.DecodeLayer.__call__'s launches, each add_rms_norm fused into the
        # projection after it: the residual stream goes to `mid` (hidden + residual), then
        # back to `residual` (mid + o), as the tree leaves it.
        c = self.c
        b = hidden.shape[0]
        s = self._workspace(b, block_tables.shape[1], hidden.device)
        if "mid" not in s:
            s["mid"] = torch.empty_like(residual)
        mid = s["mid"]
        out = torch.empty_like(hidden)
        ck.gptq_gemm_cl_qkv_norm(hidden, residual, mid, self.norm1, self.cl["qkv"], s["qkv"], c["eps"])
        attention = ca.paged_attn_rope_cl if "attention" in self.plan else pk.paged_attn_rope
        attention(
            s["qkv"], positions, self.cos_sin, slot_mapping, k_cache, v_cache, block_tables, seq_lens,
            s["part_o"], s["part_lse"], s["arrivals"], s["attn"], 1.0 / math.sqrt(c["head_dim"]),
        )
        self._project("o", s["attn"].view(b, -1), s["o"], s)
        ck.gptq_gemm_cl_gate_up_norm(s["o"], mid, residual, self.norm2, self.cl["gate_up"], s["act"], c["eps"])
        self._project("down", s["act"], out, s)
        return out, residual

    def _project(self, name, x, y, s):
        if name in self.plan and x.shape[0] <= 32:
            FORMS[name](x, self.cl[name], y)
        else:
            super()._project(name, x, y, s)


for d in sys.argv[1:]:
    c, t = load(d)
    layer = Layer(c, weights(t))
    alternate(layer, t, PLANS, lambda plan: setattr(layer, "plan", plan))
