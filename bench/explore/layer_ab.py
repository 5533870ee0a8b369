"""What the throwaway layer A/B timers (layerwg/ab.py, layerrp/ab4.py) share: the decode
layer from Python (examples/decode_layer/decode_layer.py) replayed as a CUDA graph under
each of several plans, alternating, and its outputs against the first plan's."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "decode_layer"))
from decode_layer_torch import captured, inputs, median_us  # noqa: E402


def alternate(layer, t, plans, apply, passes=2):
    """For `passes` rounds, each plan of `plans` (name -> plan) in turn: `apply(plan)`, then
    the layer on the dump `t`'s inputs, median of 200 graph replays, printed. Then each
    plan's output against the first plan's. Returns the outputs by plan name."""
    args = inputs(t)
    b = t["seq_lens"].shape[0]
    outs = {}
    for _ in range(passes):
        for name, plan in plans.items():
            apply(plan)
            us = median_us(captured(layer, args), 200)
            out, _ = layer(*inputs(t))
            outs.setdefault(name, out.clone())
            print(f"B={b} layer, {name}: {us:.1f} us", flush=True)
    first = next(iter(plans))
    base = outs[first].float()
    for name, o in outs.items():
        print(f"  {name}: max |out - {first}'s| {(o.float() - base).abs().max().item():.3e}"
              f" (max |out| {base.abs().max().item():.3e})")
    return outs
