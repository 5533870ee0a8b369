"""Throwaway: paged_attn with 1, 2, 3 or 4 runs of 128 tokens a partition (span.ima) against
specs/paged.ima's rule, on the decode layer's heads (32 query, 8 KV, D = 128, pages of 16
in random order), as CUDA graphs cycling through caches larger than L2 (µs a launch)."""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from paged_cases import compare  # noqa: E402
import paged_kernels as pk
import span_kernels as sk

rnd = random.Random(1)
cases = {
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
compare(cases, {"rule": pk.paged_attn, **{f"span{r}": getattr(sk, f"span{r}") for r in (1, 2, 3, 4)}})
