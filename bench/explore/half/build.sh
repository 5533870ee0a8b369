#!/usr/bin/env bash
# Builds half.py's wheel into .gpu/wheels: specs/gemm_tma.ima as gemm_tma_half, with
# half.patch applied to the header and templates (imac rebuilt; the tree restored after).
# Add it to the .gpu of bench/explore/prepared-build.sh (its gemm_tma wheel is half.py's main).
set -euo pipefail
cd "$(dirname "$0")/../../.."
source scripts/cuda-env
git diff --quiet -- codegen/include/ima.cuh codegen/templates/module.cu || { echo "build.sh: header or templates have changes" >&2; exit 1; }
trap 'git checkout -- codegen/include/ima.cuh codegen/templates/module.cu && cargo build -j2 -q -p imac --bin imac' EXIT
git apply bench/explore/half/half.patch
cargo build -j2 -q -p imac --bin imac
mkdir -p target/half
cp specs/gemm_tma.ima target/half/gemm_tma_half.ima
bench/explore/explorer-wheels.sh target/half/gemm_tma_half.ima
du -sh .gpu
