"""Throwaway (issue 22): paged_attn with each block's count relaxed (relaxattn.ima, gen.py;
not a correct kernel) against the tree's, on the partition timers' batches (CUDA graphs
cycling caches past L2, µs a launch; DIFF marks an output off the tree's): what the count's
release and acquire cost a launch.
    python3 -u time_relax.py"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from paged_cases import compare, partition_batches  # noqa: E402
import paged_kernels as pk  # noqa: E402
import relaxattn_kernels as rx  # noqa: E402

kernels = {"tree": pk.paged_attn, "relaxed count": rx.paged_attn_rx}
compare(partition_batches(), kernels)
compare({"B=32 ctx 1024 again": [1024] * 32, "B=1 ctx 1024 again": [1024]}, kernels)
