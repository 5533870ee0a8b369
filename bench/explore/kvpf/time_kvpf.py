"""Throwaway (bench/explore/kvpf): the decode layer from Python (examples/decode_layer's
DecodeLayer, the tree's kernels), captured with torch.cuda.graph, with kvpf.ima's
kv_prefetch asking the L2 for the KV pages of the first sequences on a side stream forked
at a chosen step: do pages brought into L2 while the 32-row QKV projection leaves DRAM
mostly idle make paged attention, which streams its pages at about 76% of the copy rate,
faster? µs a replay (median of 300), plans in turn, two passes.

    python3 time_kvpf.py DUMP_DIR...
"""
import math
import os
import sys

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", ".."))
sys.path.insert(0, os.path.join(here, "..", "..", "..", "examples", "decode_layer"))
from decode_layer_torch import captured, load, inputs, weights, median_us  # noqa: E402
from decode_layer import DecodeLayer  # noqa: E402
import decode_kernels as dk  # noqa: E402
import kvpf_kernels as pf  # noqa: E402
import paged_kernels as pk  # noqa: E402


class Prefetching:
    """DecodeLayer's step with kv_prefetch(s0, s1) on `side`, forked after main's step `at`
    (0: before the first norm, 1: after it, beside QKV)."""

    def __init__(self, layer, at, s0, s1, lines=False):
        self.layer, self.at, self.s0, self.s1 = layer, at, s0, s1
        self.prefetch = pf.kv_prefetch_lines if lines else pf.kv_prefetch
        self.side = torch.cuda.Stream()

    def __call__(self, hidden, residual, positions, slot_mapping, block_tables, seq_lens, k_cache, v_cache):
        # DecodeLayer.__call__'s steps, the fork placed among them.
        main = torch.cuda.current_stream()
        layer, c = self.layer, self.layer.c
        b = hidden.shape[0]
        s = layer._workspace(b, block_tables.shape[1], hidden.device)
        out = torch.empty_like(hidden)

        def fork(at):
            if at != self.at:
                return
            self.side.wait_stream(main)
            with torch.cuda.stream(self.side):
                self.prefetch(k_cache, v_cache, block_tables, seq_lens, self.s0, self.s1)

        fork(0)
        dk.add_rms_norm(hidden, residual, layer.norm1, s["normed"], c["eps"])
        fork(1)
        layer._project("qkv", s["normed"], s["qkv"], s)
        pk.paged_attn_rope(
            s["qkv"], positions, layer.cos_sin, slot_mapping, k_cache, v_cache, block_tables, seq_lens,
            s["part_o"], s["part_lse"], s["arrivals"], s["attn"], 1.0 / math.sqrt(c["head_dim"]),
        )
        layer._project("o", s["attn"].view(b, -1), s["o"], s)
        dk.add_rms_norm(s["o"], residual, layer.norm2, s["normed"], c["eps"])
        layer._project("gate_up", s["normed"], s["act"], s)
        layer._project("down", s["act"], out, s)
        main.wait_stream(self.side)
        return out, residual


for d in sys.argv[1:]:
    c, t = load(d)
    layer = DecodeLayer(c, weights(t))
    b = t["seq_lens"].numel()
    ref, _ = layer(*inputs(t))
    ref = ref.clone()
    plans = [("none", None)]
    for s in [1, 4, 8]:
        if s <= b:
            plans.append((f"seqs 0..{s} at 0", (0, 0, s)))
    for s in [0, 1, 2, 4, 6, 8, 12]:
        if s <= b:
            plans.append((f"seqs 0..{s} at 0, by lines", (0, 0, s, True)))
    for s in [4, 8]:
        if s <= b:
            plans.append((f"seqs 0..{s} at 1, by lines", (1, 0, s, True)))
    mb = 2 * t["k_cache"][0].numel() * 2 / 1e6  # a page's K and V
    lens = t["seq_lens"].tolist()
    for p in range(2):
        for name, plan in plans:
            args = inputs(t)
            f = layer if plan is None else Prefetching(layer, *plan)
            out, _ = f(*args)
            assert torch.equal(out, ref), name
            us = median_us(captured(f, args), 300)
            pages = 0 if plan is None else sum(-(-n // c["block_size"]) for n in lens[plan[1]:plan[2]])
            print(f"{os.path.basename(d)} pass {p}: {name} ({pages * mb:.1f} MB asked): {us:.1f} us", flush=True)
