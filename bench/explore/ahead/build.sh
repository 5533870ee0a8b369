#!/usr/bin/env bash
# Builds, on the build machine, the wheels that bench/explore/ahead/run.sh needs on the
# GPU machine into .gpu/wheels, with nothing else staged; then call the device with carry
# [".gpu"]: bash bench/explore/ahead/run.sh. The reference packages (gemm, gemm_tma for
# ahead.py's MAIN=1, dyn for queued.py) are built with this tree's header; ahead.ima's
# kernels need ahead.patch's, 390da57's codegen/include/ima.cuh patched, which is put in
# place for ahead's wheel alone and restored after it (with imac rebuilt each time).
set -euo pipefail
cd "$(dirname "$0")/../../.."
source scripts/cuda-env
git diff --quiet -- codegen/include/ima.cuh || { echo "build.sh: codegen/include/ima.cuh has changes" >&2; exit 1; }
rm -rf .gpu && mkdir -p .gpu/wheels
CARGO_BUILD_JOBS=2 scripts/python-wheels specs/rmsnorm.ima specs/quant.ima specs/gemm.ima specs/gemm_tma.ima >/dev/null
bench/explore/explorer-wheels.sh bench/explore/dyn/dyn.ima
trap 'git checkout -- codegen/include/ima.cuh && cargo build -j2 -q -p imac --bin imac' EXIT
git show 390da57:codegen/include/ima.cuh > codegen/include/ima.cuh
git apply bench/explore/ahead/ahead.patch
cargo build -j2 -q -p imac --bin imac
bench/explore/explorer-wheels.sh bench/explore/ahead/ahead.ima
du -sh .gpu
