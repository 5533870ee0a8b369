"""Throwaway: the decode layer from Python (examples/decode_layer/decode_layer.py's
kernels), captured with torch.cuda.graph, with L2 prefetches of the weights issued on a
side stream at chosen points of the step. µs a replay.

    python3 l2_layer.py DUMP_DIR
"""
import math
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "examples", "decode_layer"))
from decode_layer_torch import load, inputs, weights, median_us  # noqa: E402
from decode_layer import DecodeLayer  # noqa: E402
import decode_kernels as dk  # noqa: E402
import paged_kernels as pk  # noqa: E402
import l2_prefetch_kernels as pf  # noqa: E402


def run(layer, plan, args, side):
    """The layer's step, the side stream prefetching plan[i] after main step i."""
    hidden, residual, positions, slot_mapping, block_tables, seq_lens, k_cache, v_cache = args
    main = torch.cuda.current_stream()
    c = layer.c
    b = hidden.shape[0]
    s = layer._workspace(b, block_tables.shape[1], hidden.device)
    out = torch.empty_like(hidden)
    # The side stream forks from main here (inside a capture, it joins the capture).
    side.wait_stream(main)

    def at(i):
        if i not in plan:
            return
        side.wait_stream(main)
        with torch.cuda.stream(side):
            for name, lo, hi in plan[i]:
                q = layer.w[name].qweight.view(-1)
                n = q.numel()
                a, z = int(n * lo) // 4 * 4, int(n * hi) // 4 * 4
                if z > a:
                    pf.l2_prefetch(q[a:z])

    steps = [
        lambda: dk.add_rms_norm(hidden, residual, layer.norm1, s["normed"], c["eps"]),
        lambda: layer._project("qkv", s["normed"], s["qkv"]),
        lambda: dk.rope_cache(s["qkv"], positions, layer.cos_sin, slot_mapping, s["q"], k_cache, v_cache),
        lambda: pk.paged_attn(s["q"], k_cache, v_cache, block_tables, seq_lens, s["part_o"], s["part_lse"],
                              s["arrivals"], s["attn"], 1.0 / math.sqrt(c["head_dim"])),
        lambda: layer._project("o", s["attn"].view(b, -1), s["o"]),
        lambda: dk.add_rms_norm(s["o"], residual, layer.norm2, s["normed"], c["eps"]),
        lambda: layer._project("gate_up", s["normed"], s["act"]),
        lambda: layer._project("down", s["act"], out),
    ]
    for i, f in enumerate(steps):
        at(i)
        f()
    main.wait_stream(side)
    return out


def captured(f):
    graph = torch.cuda.CUDAGraph()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            f()
        with torch.cuda.graph(graph, stream=stream):
            f()
    torch.cuda.current_stream().wait_stream(stream)
    return graph.replay


PLANS = {
    "none": {},
    "qkv+o at 0": {0: [("qkv", 0, 1), ("o", 0, 1)]},
    "qkv at 0, o at 1": {0: [("qkv", 0, 1)], 1: [("o", 0, 1)]},
    "qkv+o at 0, gate_up 0-.4 at 2": {0: [("qkv", 0, 1), ("o", 0, 1)], 2: [("gate_up", 0, .4)]},
    "qkv+o at 0, gate_up 0-.4 at 2, .4-.7 at 5": {0: [("qkv", 0, 1), ("o", 0, 1)], 2: [("gate_up", 0, .4)], 5: [("gate_up", .4, .7)]},
    "qkv+o+gate_up 0-.4 at 0": {0: [("qkv", 0, 1), ("o", 0, 1), ("gate_up", 0, .4)]},
    "qkv+o at 0, gate_up 0-.5 at 3": {0: [("qkv", 0, 1), ("o", 0, 1)], 3: [("gate_up", 0, .5)]},
    "qkv+o at 0, gate_up 0-.4 at 2, down 0-.5 at 6": {0: [("qkv", 0, 1), ("o", 0, 1)], 2: [("gate_up", 0, .4)], 6: [("down", 0, .5)]},
    "qkv+o at 0, gate_up 0-.4 at 2, down 0-1 at 6": {0: [("qkv", 0, 1), ("o", 0, 1)], 2: [("gate_up", 0, .4)], 6: [("down", 0, 1)]},
}

for d in sys.argv[1:]:
    c, t = load(d)
    layer = DecodeLayer(c, weights(t))
    args = inputs(t)
    side = torch.cuda.Stream()
    ref = run(layer, {}, inputs(t), side).clone()
    for name, plan in PLANS.items():
        a = inputs(t)
        out = run(layer, plan, a, side)
        assert torch.equal(out, ref), name
        us = median_us(captured(lambda: run(layer, plan, a, side)), 200)
        print(f"{os.path.basename(d)}: {name}: {us:.1f} us", flush=True)
