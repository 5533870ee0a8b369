"""Throwaway (issue 22): paged_attn with the guessed prologue (spattn.ima, gen.py) against
the tree's, on the partition timers' batches (CUDA graphs cycling caches past L2, µs a
launch; DIFF marks an output off the tree's), then again on tables four times as wide as
the batch's longest sequence (a graph captured for a larger batch: the guess fails, what
that costs); last paged_attn_rope, the decode layer's kernel, on the layer's batches.
    python3 -u time_spattn.py"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import torch  # noqa: E402
import paged_cases  # noqa: E402
from paged_cases import compare, partition_batches  # noqa: E402
import paged_kernels as pk  # noqa: E402
import spattn_kernels as sp  # noqa: E402

kernels = {"tree": pk.paged_attn, "guessed prologue": sp.paged_attn_sp}
compare(partition_batches(), kernels)
compare({"B=32 ctx 1024 again": [1024] * 32, "B=1 ctx 1024 again": [1024]}, kernels)

# Tables of 4096 tokens under sequences of 1024: every block's guess is another partition.
plain_case = paged_cases.case


def wide_case(lens, seed):
    c = plain_case(lens + [4 * max(lens)], seed)
    b = len(lens)
    return {k: (v[:b] if k in ("q", "tables", "lens", "part_o", "part_lse", "arrivals", "out") else v) for k, v in c.items()}


paged_cases.case = wide_case
compare({"B=32 ctx 1024, tables of 4096": [1024] * 32, "B=1 ctx 1024, tables of 4096": [1024]}, kernels)

# paged_attn_rope (RoPE and the new token's write in front), the decode layer's kernel,
# on the batches the layer's bench takes: positions at each sequence's last token, its
# slot the one the tables give it.
paged_cases.case = plain_case


def rope_args(c, lens):
    b = len(lens)
    qkv = torch.randn(b, (paged_cases.HQ + 2 * paged_cases.HKV) * paged_cases.D, device="cuda", dtype=torch.float16)
    pos = torch.tensor([l - 1 for l in lens], dtype=torch.int64, device="cuda")
    cos_sin = torch.randn(4096, paged_cases.D, device="cuda", dtype=torch.float32)
    tables = c["tables"].cpu()
    slots = torch.tensor([int(tables[s, (l - 1) // paged_cases.BS]) * paged_cases.BS + (l - 1) % paged_cases.BS
                          for s, l in enumerate(lens)], dtype=torch.int64, device="cuda")
    return (qkv, pos, cos_sin, slots, c["k"], c["v"], c["tables"], c["lens"], c["part_o"], c["part_lse"], c["arrivals"],
            c["out"], paged_cases.D ** -0.5)


print("paged_attn_rope: case | tree | guessed prologue (µs a launch)")
for name, lens in {"B=1 ctx 1024": [1024], "B=32 ctx 1024": [1024] * 32, "B=8 ctx 512": [512] * 8}.items():
    sets = [paged_cases.case(lens, i) for i in range(paged_cases.cache_sets(lens))]
    args = [rope_args(c, lens) for c in sets]
    row, ref = [], None
    for f in (pk.paged_attn_rope, sp.paged_attn_rope_sp):
        t = paged_cases.graph_us(lambda *a: f(*a), args)
        f(*args[0])
        o = args[0][11].float().clone()
        ref = o if ref is None else ref
        err = (o - ref).abs().max().item()
        row.append(f"{t:.1f}" + ("" if err < 2e-3 else f" (DIFF {err:.2g})"))
    print(f"{name} | " + " | ".join(row), flush=True)
