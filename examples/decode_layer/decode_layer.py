"""The decoder layer of examples/decode_layer from Python: the same seven kernels, through
the Python packages `imac compile --python` writes for specs/decode.ima, quant.ima,
paged.ima, gemm.ima and, on a device of compute capability 9.0, gemm_tma.ima
(scripts/python-wheels builds them), on torch tensors. Each call is checked
against its spec by the same checker as the Rust stubs, on torch's current stream, so
the step can be captured with `torch.cuda.graph` like any torch code.

    layer = DecodeLayer(config, weights)      # weights: torch tensors on the GPU, by name
    out, residual = layer(hidden, residual, positions, slot_mapping, block_tables,
                          seq_lens, k_cache, v_cache)   # k_cache, v_cache written in place

bench/decode_layer_torch.py runs it on the data `decode_layer dump` writes and compares
it with the PyTorch reference.
"""

import functools
import math

import torch

import decode_kernels as dk
import gemm_kernels as gk
import paged_kernels as pk
import quant_kernels as qk

PROJECTIONS = ("qkv", "o", "gate_up", "down")

# The weights' elements (K N) from which gptq_gemm_wg32 takes a projection of 17 to 32 rows
# (examples/decode_layer/layer.rs's WARPGROUP_MIN_WEIGHTS, which says why).
WARPGROUP_MIN_WEIGHTS = 1 << 24


def projection_kernel(rows, k, n, sms, warpgroup):
    """The kernel for `rows` rows of x and weights of k x n on a device of `sms` SMs, where
    gptq_gemm_wg32 loads (`warpgroup`) or not: examples/decode_layer/layer.rs's
    `ProjectionKernel::pick`, which tests/decode_contract.rs holds this to. One row takes a
    GEMV: quant's gptq_gemv (blocks of qk.GEMV_COLUMNS, 128) when it has a block for every
    SM, gptq_gemv_narrow (dk.NARROW_COLUMNS, 16) otherwise, in blocks of 12 warps
    (gptq_gemv_narrow12) where those fill at most one wave of dk.NARROW12_BLOCKS_AN_SM (2) an
    SM; more rows take gptq_gemm_wg32 for 17 to 32 rows of the larger weights where it
    loads, else gptq_gemm."""
    if rows > 1:
        if warpgroup and 17 <= rows <= 32 and k * n >= WARPGROUP_MIN_WEIGHTS:
            return "gptq_gemm_wg32"
        return "gptq_gemm"
    if -(-n // qk.GEMV_COLUMNS) >= sms:
        return "gptq_gemv"
    if -(-n // dk.NARROW_COLUMNS) <= dk.NARROW12_BLOCKS_AN_SM * sms:
        return "gptq_gemv_narrow12"
    return "gptq_gemv_narrow"


# The projection kernels whose arguments are x, the weight and y alone.
PLAIN_PROJECTIONS = {
    "gptq_gemm": gk.gptq_gemm,
    "gptq_gemv": qk.gptq_gemv,
    "gptq_gemv_narrow": dk.gptq_gemv_narrow,
    "gptq_gemv_narrow12": dk.gptq_gemv_narrow12,
}


@functools.lru_cache(maxsize=None)
def sm_count(device):
    """The device's SMs (read once: the projections ask at every call)."""
    return torch.cuda.get_device_properties(device).multi_processor_count


@functools.lru_cache(maxsize=None)
def warpgroup_kernels(device):
    """gemm_tma.ima's package on a device of compute capability 9.0, the only one its
    module loads on; else None."""
    if torch.cuda.get_device_capability(device) != (9, 0):
        return None
    import gemm_tma_kernels

    assert gemm_tma_kernels.GATE_UP_UNIT == dk.GATE_UP_UNIT
    return gemm_tma_kernels


class DecodeLayer:
    def __init__(self, config, weights):
        """`config`: hidden, heads, kv_heads, head_dim, intermediate, group, block_size, eps.
        `weights`: NAME.qweight, NAME.qzeros, NAME.scales for NAME in PROJECTIONS (GPTQ v1,
        as GPTQModel writes them), norm1, norm2, cos_sin."""
        self.c = config
        # The W4A16 kernels read the gate/up weights interleaved by the same unit.
        assert dk.GATE_UP_UNIT == gk.GATE_UP_UNIT == qk.GATE_UP_UNIT
        self.w = {
            n: dk.QuantWeight(
                "gptq",
                qweight=weights[n + ".qweight"],
                qzeros=weights[n + ".qzeros"],
                scales=weights[n + ".scales"],
                group_size=config["group"],
            )
            for n in PROJECTIONS
        }
        # Each projection's rows and columns (K, N: the weights').
        self.shape = {n: (8 * weights[n + ".qweight"].shape[0], weights[n + ".qweight"].shape[1])
                      for n in PROJECTIONS}
        self.norm1, self.norm2, self.cos_sin = weights["norm1"], weights["norm2"], weights["cos_sin"]
        self.scratch = {}

    def _workspace(self, b, pages, device):
        """Activations and workspaces for a batch of b with tables of `pages` entries, made
        once: the counters are left zero by each launch; the partial sums are scratch,
        written before they are read."""
        key = (b, pages)
        if key not in self.scratch:
            c = self.c
            heads, hd = c["heads"], c["head_dim"]
            f16 = dict(dtype=torch.float16, device=device)
            parts = math.ceil(pages * c["block_size"] / pk.PART)
            tk = warpgroup_kernels(device)
            self.scratch[key] = dict(
                normed=torch.empty(b, c["hidden"], **f16),
                qkv=torch.empty(b, self.w["qkv"].n, **f16),
                part_o=torch.zeros(b, heads, parts, hd, dtype=torch.float32, device=device),
                part_lse=torch.zeros(b, heads, parts, dtype=torch.float32, device=device),
                arrivals=torch.zeros(b, heads, dtype=torch.int32, device=device),
                attn=torch.empty(b, heads, hd, **f16),
                o=torch.empty(b, c["hidden"], **f16),
                act=torch.empty(b, c["intermediate"], **f16),
                # gptq_gemm_wg32's slots (scratch, shared by its launches) and each
                # projection's counters (zero, and left zero by each launch).
                wg_part=None if tk is None else torch.empty(
                    tk.BLOCKS, 3, 4, 128, 4, dtype=torch.float32, device=device),
                wg_arrivals={
                    n: torch.zeros((b + 63) // 64, (self.shape[n][1] + 63) // 64,
                                   dtype=torch.int32, device=device)
                    for n in PROJECTIONS
                },
            )
        return self.scratch[key]

    def _project(self, name, x, y, s):
        # s: the workspaces.
        w, (k, n) = self.w[name], self.shape[name]
        tk = warpgroup_kernels(x.device)
        kernel = projection_kernel(x.shape[0], k, n, sm_count(x.device), tk is not None)
        if kernel == "gptq_gemm_wg32":
            tk.gptq_gemm_wg32(x, w, s["wg_part"], s["wg_arrivals"][name], y)
        else:
            PLAIN_PROJECTIONS[kernel](x, w, y)

    def __call__(self, hidden, residual, positions, slot_mapping, block_tables, seq_lens, k_cache, v_cache):
        """Returns the layer's output (a new tensor) and the residual stream (`residual`,
        updated in place)."""
        c = self.c
        b = hidden.shape[0]
        s = self._workspace(b, block_tables.shape[1], hidden.device)
        out = torch.empty_like(hidden)
        dk.add_rms_norm(hidden, residual, self.norm1, s["normed"], c["eps"])
        self._project("qkv", s["normed"], s["qkv"], s)
        # RoPE, the KV-cache write and attention in one launch.
        pk.paged_attn_rope(
            s["qkv"], positions, self.cos_sin, slot_mapping, k_cache, v_cache, block_tables, seq_lens,
            s["part_o"], s["part_lse"], s["arrivals"], s["attn"], 1.0 / math.sqrt(c["head_dim"]),
        )
        self._project("o", s["attn"].view(b, -1), s["o"], s)
        dk.add_rms_norm(s["o"], residual, self.norm2, s["normed"], c["eps"])
        # y half as wide as the weights: the kernel fuses SiluAndMul (gate's and up's columns
        # interleaved in units of dk.GATE_UP_UNIT).
        self._project("gate_up", s["normed"], s["act"], s)
        self._project("down", s["act"], out, s)
        return out, residual
