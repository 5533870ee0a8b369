"""Throwaway (issue 22): paged_attn as a lean grid (lean.ima, bench/explore/lean/gen.py:
396 blocks sharing out every pair's runs evenly; lean2 the same without its walk's loads)
against specs/paged.ima's, on the decode layer's heads (32 query, 8 KV, D = 128, pages of
16 in random order), as CUDA graphs cycling through caches larger than L2 (µs a launch;
DIFF marks an output off the tree's).
    python3 -u time_lean.py"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from paged_cases import compare, partition_batches  # noqa: E402
import lean2_kernels as lk2  # noqa: E402
import lean_kernels as lk  # noqa: E402
import paged_kernels as pk  # noqa: E402

cases = {**partition_batches(), "B=5 with 0": [700, 129, 1, 768, 0]}
compare(cases, {"tree": pk.paged_attn, "lean": lk.paged_attn_lean, "lean2": lk2.paged_attn_lean2})
