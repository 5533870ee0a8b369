"""Throwaway (issue 22): paged_attn's timeline from pstamp.ima (gen.py), on the decode
layer's heads, for a few batches: each block's points (gen.py's docs) relative to the
launch's first entry, as percentiles over the blocks that attend, and what the SMs' three
slots do over the launch. The stamped kernel's time beside the tree's first (CUDA graphs
cycling caches past L2, µs a launch), for what the stamps cost.
    python3 -u time_pstamp.py"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from paged_cases import D, cache_mb, cache_sets, call, case  # noqa: E402
from timing import graph_us, spread  # noqa: E402
import paged_kernels as pk  # noqa: E402
import pstamp_kernels as ps  # noqa: E402

STAMPS = torch.zeros(8192, 16, dtype=torch.int64, device="cuda")


def stamped(c):
    ps.paged_attn_stamped(c["q"], c["k"], c["v"], c["tables"], c["lens"], c["part_o"], c["part_lse"], c["arrivals"],
                          c["out"], STAMPS, D ** -0.5)


for name, lens in [("B=32 ctx 1024", [1024] * 32), ("B=32 ctx 4096", [4096] * 32), ("B=1 ctx 1024", [1024])]:
    mb = cache_mb(lens)
    STAMPS.zero_()
    sets = [case(lens, i) for i in range(cache_sets(lens))]
    tree = graph_us(lambda c: call(pk.paged_attn, c), [(c,) for c in sets])
    st = graph_us(stamped, [(c,) for c in sets])
    ref = sets[0]["out"].float().clone()
    for c in sets[1:] + sets[:1]:
        stamped(c)
    torch.cuda.synchronize()
    err = (sets[0]["out"].float() - ref).abs().max().item()
    s = STAMPS.cpu().tolist()
    blocks = [r for r in s if r[0] != 0]
    work = [r for r in blocks if r[9] >= 0]
    t0 = min(r[0] for r in blocks)
    us = lambda t: (t - t0) / 1e3
    end = max(max(r[6], r[7]) for r in work)
    print(f"== {name} ({mb:.0f} MB): tree {tree:.1f} us a launch, stamped {st:.1f} (out diff {err:.1e}); "
          f"{len(blocks)} blocks, {len(work)} attend; the last point {us(end):.2f} us after the first entry", flush=True)
    print("  point (us; min p10 p50 p90 max over the attending blocks)")
    print(f"  entry after the first        {spread([us(r[0]) for r in work])}")
    for p, what in [(1, "length read"), (2, "pages in shared memory"), (3, "first tile landed"), (4, "tiles done"),
                    (5, "warps met"), (6, "arrival counted")]:
        print(f"  {p - 1} -> {p} {what:26s}{spread([(r[p] - r[p - 1]) / 1e3 for r in work])}")
    last = [r for r in work if r[7]]
    print(f"  6 -> 7 weighed (last blocks)  {spread([(r[7] - r[6]) / 1e3 for r in last])}")
    print(f"  end (6 or 7) after the first  {spread([us(max(r[6], r[7])) for r in work])}")
    # Slots an SM: the blocks' busy spans; how full each SM is over [0, end].
    sms = {}
    for r in work:
        sms.setdefault(r[8], []).append((us(r[0]), us(max(r[6], r[7]))))
    span = us(end)
    steps = 200
    busy = [0] * steps
    for spans in sms.values():
        for a, b in spans:
            for i in range(steps):
                t = span * (i + 0.5) / steps
                if a <= t < b:
                    busy[i] += 1
    slots = 3 * len(sms)
    print(f"  {len(sms)} SMs; blocks busy over the launch, % of {slots} slots by tenth: "
          + " ".join(f"{100 * sum(busy[i * steps // 10:(i + 1) * steps // 10]) / (steps // 10) / slots:3.0f}" for i in range(10)))
    waves = sorted(us(r[0]) for r in work)
    late = [w for w in waves if w > 1.0]
    print(f"  entries after 1 us: {len(late)}, first at {late[0] if late else 0:.2f} us, median {late[len(late) // 2] if late else 0:.2f}")
