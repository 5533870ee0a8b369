#!/usr/bin/env bash
# Builds wg4.py's wheel, gemm_tma_x4: wg4.patch (ima_wg_w4_pairs_gemm's consumer
# warpgroups a template parameter; three 4-warpgroup kernels in specs/gemm_tma.ima).
exec "$(dirname "$0")/../patched-wheels.sh" bench/explore/wg4/wg4.patch x4
