#!/usr/bin/env bash
# Adds the wheel relaxattn_kernels to .gpu/wheels (beside the tree's paged_kernels, which
# scripts/python-wheels or bench/explore/prepared-build.sh put there): gen.py's spec,
# compiled with relax.patch applied to codegen/include/ima.cuh for the while (it must have
# no changes). Then, with the two wheels carried: bash bench/explore/prepared-run.sh 11.
set -euo pipefail
cd "$(dirname "$0")/../../.."
files=(codegen/include/ima.cuh)
git diff --quiet -- "${files[@]}" || { echo "build.sh: ${files[*]} have changes" >&2; exit 1; }
trap 'git checkout -- "${files[@]}" && cargo build -j2 -q -p imac --bin imac' EXIT
git apply bench/explore/relaxattn/relax.patch
bench/explore/generated-wheel.sh relaxattn
