"""What the throwaway paged_attn timers (span/time_span.py, st/time_st.py) share: the
decode layer's heads (32 query, 8 KV, D = 128, pages of 16), a batch's arguments with its
pages in random order, one call of a paged_attn-shaped kernel on them, and a table of
such kernels side by side."""
import random

import torch
from timing import graph_us

dev = "cuda"
HQ, HKV, D, BS = 32, 8, 128, 16


def case(lens, seed):
    rnd = random.Random(seed)
    b = len(lens)
    pages = [(l + BS - 1) // BS for l in lens]
    p = max(1, max(pages))
    nb = max(1, sum(pages))
    order = list(range(nb))
    rnd.shuffle(order)
    tables = torch.zeros(b, p, dtype=torch.int32)
    nxt = 0
    for s, n in enumerate(pages):
        for j in range(n):
            tables[s, j] = order[nxt]
            nxt += 1
    k = torch.randn(nb, BS, HKV, D, device=dev, dtype=torch.float16)
    v = torch.randn(nb, BS, HKV, D, device=dev, dtype=torch.float16)
    q = torch.randn(b, HQ, D, device=dev, dtype=torch.float16)
    parts = (p * BS + 127) // 128
    return dict(q=q, k=k, v=v, tables=tables.to(dev), lens=torch.tensor(lens, dtype=torch.int32, device=dev),
                part_o=torch.zeros(b, HQ, parts, D, device=dev), part_lse=torch.zeros(b, HQ, parts, device=dev),
                arrivals=torch.zeros(b, HQ, dtype=torch.int32, device=dev), out=torch.empty(b, HQ, D, device=dev, dtype=torch.float16))

def batches():
    """The batches the stage timers (st/time_st.py, pt8/time_pt8.py) compare on: the decode
    layer's B = 32 at three contexts, and smaller ones (name -> the sequences' lengths)."""
    rnd = random.Random(1)
    return {
        "B=32 ctx 1024": [1024] * 32,
        "B=32 ctx 4096": [4096] * 32,
        "B=32 ragged 1..4096": [rnd.randint(1, 4096) for _ in range(32)],
        "B=8 ctx 1024": [1024] * 8,
        "B=1 ctx 1024": [1024],
        "B=1 ctx 4096": [4096],
    }


def partition_batches():
    """The batches the partition timers (span/time_span.py, lean/time_lean.py) compare on:
    B = 32 at four contexts and ragged, and smaller and larger batches (name -> the
    sequences' lengths)."""
    rnd = random.Random(1)
    return {
        "B=32 ctx 1024": [1024] * 32,
        "B=32 ctx 512": [512] * 32,
        "B=32 ctx 2048": [2048] * 32,
        "B=32 ctx 4096": [4096] * 32,
        "B=32 ragged 1..4096": [rnd.randint(1, 4096) for _ in range(32)],
        "B=8 ctx 1024": [1024] * 8,
        "B=16 ctx 1024": [1024] * 16,
        "B=64 ctx 1024": [1024] * 64,
        "B=1 ctx 1024": [1024],
        "B=1 ctx 4096": [4096],
    }


def call(f, c):
    f(c["q"], c["k"], c["v"], c["tables"], c["lens"], c["part_o"], c["part_lse"], c["arrivals"], c["out"], D ** -0.5)


def cache_mb(lens):
    """MB of K and V a batch of these sequences' lengths reads."""
    return sum(lens) * HKV * D * 2 * 2 / 1e6


def cache_sets(lens):
    """How many argument sets a timer's graph cycles for a batch: enough for at least 300
    MB of caches in all (past L2), at most 16."""
    return max(1, min(16, int(300 // max(cache_mb(lens), 1)) + 1))


def compare(cases, kernels):
    """Prints, for each batch of `cases` (name -> its sequences' lengths), the µs a launch
    of each kernel of `kernels` (name -> a function of paged_attn's arguments), as CUDA
    graphs cycling through caches of at least 300 MB in all; an output that differs from
    the first kernel's by 2e-3 or more is marked DIFF."""
    print("case | MB | " + " | ".join(kernels))
    for name, lens in cases.items():
        mb = cache_mb(lens)
        sets = [case(lens, i) for i in range(cache_sets(lens))]
        ref = None
        row = []
        for f in kernels.values():
            t = graph_us(lambda c: call(f, c), [(c,) for c in sets])
            call(f, sets[0])
            o = sets[0]["out"].float().clone()
            if ref is None:
                ref = o
            err = (o - ref).abs().max().item()
            row.append(f"{t:.1f}" + ("" if err < 2e-3 else f" (DIFF {err:.2g})"))
        print(f"{name} | {mb:.0f} | " + " | ".join(row), flush=True)
