#!/usr/bin/env bash
# Builds ahead.py's two wheels into .gpu/wheels: specs/gemm_tma.ima as gemm_tma_a6 and
# gemm_tma_a10, with ahead.patch applied to the header and templates and IMA_AHEAD set to
# 6 and 10 (imac rebuilt for each; the tree restored after). Add them to the .gpu of
# bench/explore/prepared-build.sh (its gemm_tma wheel is the tree's: ahead.py's main).
set -euo pipefail
cd "$(dirname "$0")/../../.."
source scripts/cuda-env
git diff --quiet -- codegen/include/ima.cuh codegen/templates/module.cu || { echo "build.sh: header or templates have changes" >&2; exit 1; }
trap 'git checkout -- codegen/include/ima.cuh codegen/templates/module.cu && cargo build -j2 -q -p imac --bin imac' EXIT
git apply bench/explore/ahead2/ahead.patch
mkdir -p target/ahead2
for a in 6 10; do
    sed -i "s/^#define IMA_AHEAD .*/#define IMA_AHEAD $a/" codegen/include/ima.cuh
    cargo build -j2 -q -p imac --bin imac
    cp specs/gemm_tma.ima "target/ahead2/gemm_tma_a$a.ima"
    bench/explore/explorer-wheels.sh "target/ahead2/gemm_tma_a$a.ima"
done
du -sh .gpu
