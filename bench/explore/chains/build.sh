#!/usr/bin/env bash
# Builds the wheels gemm_tma_ch2 and gemm_tma_ch4: chains.patch with IMA_CHAINS 2 and 4
# (each half stage's MMAs dealt out over that many accumulators). Timed by
# bench/explore/against.py ch2 ch4 (session 45's run: chains.py, the same timer on four
# of its shapes).
exec "$(dirname "$0")/../patched-wheels.sh" bench/explore/chains/chains.patch ch IMA_CHAINS 2 4
