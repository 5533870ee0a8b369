"""Throwaway (issue 22, B = 1): paged_attn whose partitions meet through distributed shared
memory in clusters of 8 and of 4 (clattn.ima, gen.py) against the tree's, whose partitions
meet through a workspace and a count, on the partition timers' batches (CUDA graphs
cycling caches past L2, µs a launch; DIFF marks an output off the tree's). Clusters of 4
take tables of at most 2048 tokens.
    python3 -u time_clattn.py"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from paged_cases import compare, partition_batches  # noqa: E402
import clattn_kernels as ca  # noqa: E402
import paged_kernels as pk  # noqa: E402

cases = partition_batches()
cases["B=1 ctx 1"] = [1]
cases["B=1 ctx 200"] = [200]
cases["B=4 ragged"] = [1, 700, 4096, 0]
compare(cases, {"tree": pk.paged_attn, "clusters of 8": ca.paged_attn_cl})
short = {name: lens for name, lens in cases.items() if max(lens) <= 2048}
compare(short, {"tree": pk.paged_attn, "clusters of 4": ca.paged_attn_cl4})
