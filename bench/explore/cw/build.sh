#!/usr/bin/env bash
# Builds the wheels gemm_tma_cw48 and gemm_tma_cw16: cw.patch (a GPTQ argument's words
# wider than 32 copied in boxes 48 or 16 words wide, row after row within each box, so
# that the 4 rows a warp's LDS.64 reads in tma_wg_pairs_unscaled lie 192 or 64 bytes
# apart rather than 768 and meet no bank conflicts; ncu found them 4-way, 8 wavefronts
# where 2 do). Timed by bench/explore/against.py cw48 cw16. The patch is against 8da968e's
# tree: c036039 landed its boxes of 48 (dsl/src/abi.rs, plain_box_words).
set -euo pipefail
cd "$(dirname "$0")/../../.."
files=(codegen/include/ima.cuh codegen/templates/module.cu runtime/src/tensor_map.rs)
git diff --quiet -- "${files[@]}" || { echo "cw/build.sh: ${files[*]} have changes" >&2; exit 1; }
trap 'git checkout -- "${files[@]}" && cargo build -j2 -q -p imac --bin imac' EXIT
git apply bench/explore/cw/cw.patch
source scripts/cuda-env
mkdir -p target/patched
for v in 48 16; do
    sed -i "s/^#define IMA_PLAIN_BOX_COLS .*/#define IMA_PLAIN_BOX_COLS $v/" codegen/include/ima.cuh
    sed -i "s/const PLAIN_BOX_COLS: u32 = .*/const PLAIN_BOX_COLS: u32 = $v;/" runtime/src/tensor_map.rs
    cargo build -j2 -q -p imac --bin imac
    cp specs/gemm_tma.ima "target/patched/gemm_tma_cw$v.ima"
    bench/explore/explorer-wheels.sh "target/patched/gemm_tma_cw$v.ima"
done
