#!/usr/bin/env bash
# Builds, on the build machine, what the experiments prepared in session 25 need on the GPU
# machine (bench/explore/prepared-run.sh runs them there), into .gpu/ and beside their
# sources: gemm_tma_gpu and the bench (pack), the wheels test_gpu.py and wg_shapes.py
# import, and mega_chain. Then call the device with carry
# [".gpu", "bench/explore/mega/mega_chain"].
#   bench/explore/prepared-build.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
bench/pack-and-note.sh -j2 --test gemm_tma_gpu --example bench
# scripts/python-wheels builds into .gpu/wheels (after pack, which empties .gpu); it
# checks rmsnorm's and quant's wheels on the CPU, so it gets those too.
scripts/python-wheels specs/rmsnorm.ima specs/quant.ima specs/attn.ima specs/strided.ima specs/index.ima \
    tests/in/planted_bugs.ima specs/gemm.ima specs/decode.ima specs/gemm_tma.ima
source scripts/cuda-env
nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -L"$IMA_CUDA_ROOT/lib" \
    -o bench/explore/mega/mega_chain bench/explore/mega/mega_chain.cu
du -sh .gpu bench/explore/mega/mega_chain
