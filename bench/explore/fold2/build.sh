#!/usr/bin/env bash
# Builds fold2.py's wheel, gemm_tma_fold: fold2.patch (gptq_gemm_wg16f, the biases folded
# into f32 corrections; gptq_gemm_wg16g, timing only, the biases by one more MMA a half).
exec "$(dirname "$0")/../patched-wheels.sh" bench/explore/fold2/fold2.patch fold
