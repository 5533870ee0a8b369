#!/usr/bin/env bash
# Builds specs/gemm_tma.ima's wheel with PATCH applied to the tree into .gpu/wheels, as
# gemm_tma_NAME; given a MACRO and values, one wheel a value, gemm_tma_NAME<value>, with
# ima.cuh's `#define MACRO` set to it. imac is rebuilt for each, and the files the patch
# touches are restored after (they must have no changes before). What the explorers'
# build.sh share; add the wheels to the .gpu of bench/explore/prepared-build.sh, whose
# gemm_tma wheel is the tree's.
#   bench/explore/patched-wheels.sh PATCH NAME [MACRO VALUE...]
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/cuda-env
patch=$1 name=$2
shift 2
mapfile -t files < <(git apply --numstat "$patch" | cut -f3)
git diff --quiet -- "${files[@]}" || { echo "patched-wheels.sh: ${files[*]} have changes" >&2; exit 1; }
trap 'git checkout -- "${files[@]}" && cargo build -j2 -q -p imac --bin imac' EXIT
git apply "$patch"
mkdir -p target/patched
wheel() {
    cargo build -j2 -q -p imac --bin imac
    cp specs/gemm_tma.ima "target/patched/gemm_tma_$1.ima"
    bench/explore/explorer-wheels.sh "target/patched/gemm_tma_$1.ima"
}
if [ $# -eq 0 ]; then
    wheel "$name"
else
    macro=$1
    shift
    for v in "$@"; do
        sed -i "s/^#define $macro .*/#define $macro $v/" codegen/include/ima.cuh
        wheel "$name$v"
    done
fi
du -sh .gpu
