#!/usr/bin/env bash
# Builds the wheel gemm_tma_wgs: wgstamp.patch gives gptq_gemm_wg32 an `inout stamps:
# i64[BLOCKS, 4, 16]` and ima.cuh's ima_wg_w4_pairs_gemm a stamp at each of its points
# (time_wgstamp.py's docs). Then, with it and the tree's gemm_tma wheel carried:
# python3 -u bench/explore/wgstamp/time_wgstamp.py there (bench/explore/prepared-run.sh 9).
exec "$(dirname "$0")/../patched-wheels.sh" bench/explore/wgstamp/wgstamp.patch wgs
