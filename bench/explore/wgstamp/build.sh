#!/usr/bin/env bash
# Builds the wheels gemm_tma_wgs<MASK>: wgstamp.patch gives gptq_gemm_wg32 an `inout stamps:
# i64[BLOCKS, 4, 16]` and ima.cuh's ima_wg_w4_pairs_gemm a stamp at each of its points
# (time_wgstamp.py's docs), those of the groups in IMA_WGSTAMP_MASK (the patch's ima.cuh
# says which bit is which; 31, all of them). Then, with it and the tree's gemm_tma wheel carried:
# python3 -u bench/explore/wgstamp/time_wgstamp.py there (bench/explore/prepared-run.sh 9).
exec "$(dirname "$0")/../patched-wheels.sh" bench/explore/wgstamp/wgstamp.patch wgs IMA_WGSTAMP_MASK 31
