#!/usr/bin/env bash
# Builds ahead.py's wheels, gemm_tma_a6 and gemm_tma_a10: ahead.patch at IMA_AHEAD = 6 and 10.
exec "$(dirname "$0")/../patched-wheels.sh" bench/explore/ahead2/ahead.patch a IMA_AHEAD 6 10
