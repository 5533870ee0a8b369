#!/usr/bin/env bash
# Builds pdl2.py's wheels, gemm_tma_f1, f2 and f3: pdl2.patch (header and runtime) at IMA_PDL_FORM = 1, 2 and 3.
exec "$(dirname "$0")/../patched-wheels.sh" bench/explore/pdl2/pdl2.patch f IMA_PDL_FORM 1 2 3
