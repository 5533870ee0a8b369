"""Throwaway (issue 22): paged_attn in partition-major block order (pmajor.ima, gen.py)
against the paged_kernels wheel of the commit before it, on the partition timers' batches
(CUDA graphs cycling caches past L2, µs a launch; DIFF marks an output off the first's).
    python3 -u time_pmajor.py"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from paged_cases import compare, partition_batches  # noqa: E402
import paged_kernels as pk  # noqa: E402
import pmajor_kernels as pm  # noqa: E402

cases = {**partition_batches(), "B=5 with 0": [700, 129, 1, 768, 0]}
kernels = {"before": pk.paged_attn, "pmajor": pm.paged_attn_pm}
compare(cases, kernels)
compare({"B=32 ctx 1024 again": [1024] * 32}, kernels)
