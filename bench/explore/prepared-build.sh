#!/usr/bin/env bash
# Builds, on the build machine, what the GPU run prepared in session 29 needs
# (bench/explore/prepared-run.sh runs it there). Session 29 found a `red.release.gpu` on an
# SM that streams through its ring visible about 3 us after it was issued; two questions
# follow from it:
# - bench/explore/mega/mega_chain: forms 25 to 27, what a phase's count costs the B = 1
#   megakernel with a shallower ring, and with relaxed counts;
# - the wheel of bench/explore/rp/rp7.ima (gen7.py): what the shared tiles' arrivals
#   (an acq_rel atomic that the warpgroup waits for) cost rp16b_s5's consumers at M = 16;
# - the wheel of bench/explore/rp/rp8.ima (gen8.py): rp16b_s5 with those arrivals handed
#   to warps of the producer's warpgroup (s8), beside rp16b_s5 (s5).
# Then call the device with carry [".gpu", "bench/explore/mega/mega_chain"]:
# bash bench/explore/prepared-run.sh.
#   bench/explore/prepared-build.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/cuda-env
nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -L"$IMA_CUDA_ROOT/lib" \
    -o bench/explore/mega/mega_chain bench/explore/mega/mega_chain.cu
(cd bench/explore/rp && python3 gen7.py && python3 gen8.py)
rm -rf .gpu && mkdir -p .gpu
git rev-parse --short HEAD > .gpu/commit
# scripts/python-wheels checks rmsnorm's and quant's wheels on the CPU, so it gets those too.
scripts/python-wheels specs/rmsnorm.ima specs/quant.ima bench/explore/rp/rp7.ima bench/explore/rp/rp8.ima
du -sh .gpu
