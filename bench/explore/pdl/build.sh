#!/usr/bin/env bash
# Builds pdl.py's wheel into .gpu/wheels: specs/gemm_tma.ima as gemm_tma_pdl, with
# pdl.patch applied to the header and the runtime (imac rebuilt; the tree restored after).
# Add it to the .gpu of bench/explore/prepared-build.sh (its gemm_tma wheel is pdl.py's main).
set -euo pipefail
cd "$(dirname "$0")/../../.."
source scripts/cuda-env
git diff --quiet -- codegen/include/ima.cuh runtime/src/kernel.rs || { echo "build.sh: header or runtime have changes" >&2; exit 1; }
trap 'git checkout -- codegen/include/ima.cuh runtime/src/kernel.rs && cargo build -j2 -q -p imac --bin imac' EXIT
git apply bench/explore/pdl/pdl.patch
cargo build -j2 -q -p imac --bin imac
mkdir -p target/pdl
cp specs/gemm_tma.ima target/pdl/gemm_tma_pdl.ima
bench/explore/explorer-wheels.sh target/pdl/gemm_tma_pdl.ima
du -sh .gpu
