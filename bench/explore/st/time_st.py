"""Throwaway: st.ima's paged_attn variants (three K/V stages a warp; two at 2 blocks an SM)
against specs/paged.ima's, on the decode layer's heads, as CUDA graphs cycling through
caches larger than L2 (µs a launch), outputs compared."""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from paged_cases import compare  # noqa: E402
import paged_kernels as pk
import st_kernels as sk

rnd = random.Random(1)
cases = {
    "B=32 ctx 1024": [1024] * 32,
    "B=32 ctx 4096": [4096] * 32,
    "B=32 ragged 1..4096": [rnd.randint(1, 4096) for _ in range(32)],
    "B=8 ctx 1024": [1024] * 8,
    "B=1 ctx 1024": [1024],
    "B=1 ctx 4096": [4096],
}
compare(cases, {"paged_attn": pk.paged_attn, "st3": sk.st3, "st2b2": sk.st2b2})
