#!/usr/bin/env bash
# Builds the wheels gemm_tma_s32_3 and gemm_tma_s32_4: sets32.patch makes the quarters'
# register sets of ima_wg_w4_pairs_gemm at 32 rows (gptq_gemm_wg32) a macro, IMA_SETS32,
# 2 in the tree. Timed by bench/explore/against.py s32_3 s32_4.
exec "$(dirname "$0")/../patched-wheels.sh" bench/explore/sets32/sets32.patch s32_ IMA_SETS32 3 4
