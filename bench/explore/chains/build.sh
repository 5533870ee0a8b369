#!/usr/bin/env bash
# Builds chains.py's wheels, gemm_tma_ch2 and gemm_tma_ch4: chains.patch with IMA_CHAINS
# 2 and 4 (each half stage's MMAs dealt out over that many accumulators).
exec "$(dirname "$0")/../patched-wheels.sh" bench/explore/chains/chains.patch ch IMA_CHAINS 2 4
