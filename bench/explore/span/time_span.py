"""Throwaway: paged_attn with 1, 2, 3 or 4 runs of 128 tokens a partition (span.ima) against
specs/paged.ima's rule, on the decode layer's heads (32 query, 8 KV, D = 128, pages of 16
in random order), as CUDA graphs cycling through caches larger than L2 (µs a launch)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from paged_cases import compare, partition_batches  # noqa: E402
import paged_kernels as pk
import span_kernels as sk

compare(partition_batches(), {"rule": pk.paged_attn, **{f"span{r}": getattr(sk, f"span{r}") for r in (1, 2, 3, 4)}})
