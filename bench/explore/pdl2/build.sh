#!/usr/bin/env bash
# Builds pdl2.py's three wheels into .gpu/wheels: specs/gemm_tma.ima as gemm_tma_f1,
# gemm_tma_f2 and gemm_tma_f3, with pdl2.patch applied to the header and the runtime and
# IMA_PDL_FORM set to 1, 2 and 3 (imac rebuilt for each; the tree restored after). Add them
# to the .gpu of bench/explore/prepared-build.sh (its gemm_tma wheel is pdl2.py's main).
set -euo pipefail
cd "$(dirname "$0")/../../.."
source scripts/cuda-env
git diff --quiet -- codegen/include/ima.cuh runtime/src/kernel.rs || { echo "build.sh: header or runtime have changes" >&2; exit 1; }
trap 'git checkout -- codegen/include/ima.cuh runtime/src/kernel.rs && cargo build -j2 -q -p imac --bin imac' EXIT
git apply bench/explore/pdl2/pdl2.patch
mkdir -p target/pdl2
for f in 1 2 3; do
    sed -i "s/^#define IMA_PDL_FORM .*/#define IMA_PDL_FORM $f/" codegen/include/ima.cuh
    cargo build -j2 -q -p imac --bin imac
    cp specs/gemm_tma.ima "target/pdl2/gemm_tma_f$f.ima"
    bench/explore/explorer-wheels.sh "target/pdl2/gemm_tma_f$f.ima"
done
du -sh .gpu
