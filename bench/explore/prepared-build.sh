#!/usr/bin/env bash
# Builds, on the build machine, what the GPU run prepared in session 29 needs
# (bench/explore/prepared-run.sh runs it there): bench/explore/mega/mega_chain, whose forms
# 25 to 27 ask what a phase's count costs the B = 1 megakernel (session 29 found a
# `red.release.gpu` on a streaming SM visible about 3 us after it was issued). Then call
# the device with carry ["bench/explore/mega/mega_chain"]: bash bench/explore/prepared-run.sh.
#   bench/explore/prepared-build.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/cuda-env
nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -L"$IMA_CUDA_ROOT/lib" \
    -o bench/explore/mega/mega_chain bench/explore/mega/mega_chain.cu
git rev-parse --short HEAD
