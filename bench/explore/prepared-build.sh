#!/usr/bin/env bash
# Builds, on the build machine, what the experiments prepared in session 24 need on the GPU
# machine (bench/explore/prepared-run.sh runs them there), into .gpu/ and beside their
# sources: the bench and gemm_gpu (pack), the wheels of specs/gemm.ima, specs/paged.ima,
# bench/explore/pt8/pt8.ima and bench/explore/wgnf/wgnf.ima, mega_chain and libmarlin.so.
# Then call the device with carry [".gpu", "bench/explore/mega/mega_chain",
# "bench/explore/marlin/libmarlin.so"].
#   bench/explore/prepared-build.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
bench/pack-and-note.sh -j2 --example bench
(cd bench/explore/pt8 && python3 gen.py "$repo")
(cd bench/explore/wgnf && python3 gen.py "$repo")
# scripts/python-wheels builds into .gpu/wheels (after pack, which empties .gpu); it
# checks rmsnorm's and quant's wheels on the CPU, so it gets those too.
scripts/python-wheels specs/rmsnorm.ima specs/quant.ima specs/gemm.ima specs/paged.ima \
    bench/explore/pt8/pt8.ima bench/explore/wgnf/wgnf.ima
source scripts/cuda-env
nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -L"$IMA_CUDA_ROOT/lib" \
    -o bench/explore/mega/mega_chain bench/explore/mega/mega_chain.cu
nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -shared -Xcompiler -fPIC --expt-relaxed-constexpr \
    -L"$IMA_CUDA_ROOT/lib" -o bench/explore/marlin/libmarlin.so bench/explore/marlin/marlin_lib.cu
du -sh .gpu bench/explore/mega/mega_chain bench/explore/marlin/libmarlin.so
