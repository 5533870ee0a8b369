#!/usr/bin/env bash
# Builds uni.py's wheels into .gpu/wheels (nothing else staged): gemm_tma with this tree's
# header, and gemm_tma_head (specs/gemm_tma.ima at 204ed40) with 204ed40's header, put in
# place for its wheel alone and restored after (imac rebuilt each time). Then call the
# device with carry [".gpu"] and run uni.py there with the wheels installed.
set -euo pipefail
cd "$(dirname "$0")/../../.."
source scripts/cuda-env
rm -rf .gpu && mkdir -p .gpu/wheels
CARGO_BUILD_JOBS=2 scripts/python-wheels specs/gemm_tma.ima >/dev/null
cp codegen/include/ima.cuh target/ima.cuh.tree
trap 'cp target/ima.cuh.tree codegen/include/ima.cuh && cargo build -j2 -q -p imac --bin imac' EXIT
git show 204ed40:codegen/include/ima.cuh > codegen/include/ima.cuh
mkdir -p target/uni && git show 204ed40:specs/gemm_tma.ima > target/uni/gemm_tma_head.ima
cargo build -j2 -q -p imac --bin imac
bench/explore/explorer-wheels.sh target/uni/gemm_tma_head.ima
du -sh .gpu
