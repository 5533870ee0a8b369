#!/usr/bin/env bash
# Builds uni.py's wheels into .gpu/wheels: gemm_tma with this tree's header, and
# gemm_tma_head (specs/gemm_tma.ima at BASE, default 204ed40) with BASE's header, put in
# place for its wheel alone and restored after (imac rebuilt each time). KEEP=1 adds
# gemm_tma_head to the .gpu that bench/explore/prepared-build.sh made (whose wheels
# include gemm_tma's); otherwise nothing else is staged. Then call the device with carry
# [".gpu"] and run uni.py there with the wheels installed.
set -euo pipefail
cd "$(dirname "$0")/../../.."
source scripts/cuda-env
base=${BASE:-204ed40}
if [ -z "${KEEP:-}" ]; then
    rm -rf .gpu && mkdir -p .gpu/wheels
    CARGO_BUILD_JOBS=2 scripts/python-wheels specs/gemm_tma.ima >/dev/null
fi
cp codegen/include/ima.cuh target/ima.cuh.tree
cp codegen/templates/module.cu target/module.cu.tree
trap 'cp target/ima.cuh.tree codegen/include/ima.cuh && cp target/module.cu.tree codegen/templates/module.cu && cargo build -j2 -q -p imac --bin imac' EXIT
git show "$base":codegen/include/ima.cuh > codegen/include/ima.cuh
git show "$base":codegen/templates/module.cu > codegen/templates/module.cu
mkdir -p target/uni && git show "$base":specs/gemm_tma.ima > target/uni/gemm_tma_head.ima
cargo build -j2 -q -p imac --bin imac
bench/explore/explorer-wheels.sh target/uni/gemm_tma_head.ima
du -sh .gpu
