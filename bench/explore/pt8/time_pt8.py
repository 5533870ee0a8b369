"""Throwaway: pt8.ima's paged_attn variants (tiles of 8 tokens; gen.py) against
specs/paged.ima's, on the decode layer's heads, as CUDA graphs cycling through caches
larger than L2 (µs a launch), outputs compared. Needs the wheels of specs/paged.ima and of
pt8.ima.
    python3 -u time_pt8.py"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from paged_cases import batches, compare  # noqa: E402
import paged_kernels as pk  # noqa: E402
import pt8_kernels as p8  # noqa: E402

# A ragged batch whose sequences end inside a tile of 8 and inside a page.
cases = {**batches(), "B=3 ragged 1..40": [1, 17, 40]}
compare(cases, {"paged_attn": pk.paged_attn, "pt8s4": p8.pt8s4, "pt8s3": p8.pt8s3, "pt8s2": p8.pt8s2})
