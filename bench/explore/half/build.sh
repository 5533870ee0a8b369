#!/usr/bin/env bash
# Builds half.py's wheel, gemm_tma_half: half.patch.
exec "$(dirname "$0")/../patched-wheels.sh" bench/explore/half/half.patch half
