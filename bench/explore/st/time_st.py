"""Throwaway: st.ima's paged_attn variants (three K/V stages a warp; two at 2 blocks an SM)
against specs/paged.ima's, on the decode layer's heads, as CUDA graphs cycling through
caches larger than L2 (µs a launch), outputs compared."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from paged_cases import batches, compare  # noqa: E402
import paged_kernels as pk
import st_kernels as sk

compare(batches(), {"paged_attn": pk.paged_attn, "st3": sk.st3, "st2b2": sk.st2b2})
