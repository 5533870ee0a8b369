#!/usr/bin/env bash
# Adds the wheel spattn_kernels to .gpu/wheels (beside the tree's paged_kernels, which
# scripts/python-wheels or bench/explore/prepared-build.sh put there): gen.py's spec,
# compiled with spattn.patch applied to codegen/include/ima.cuh and specs/paged.ima for
# the while (they must have no changes). Then, with the two wheels carried:
# bash bench/explore/prepared-run.sh 18.
set -euo pipefail
cd "$(dirname "$0")/../../.."
files=(codegen/include/ima.cuh specs/paged.ima)
git diff --quiet -- "${files[@]}" || { echo "build.sh: ${files[*]} have changes" >&2; exit 1; }
trap 'git checkout -- "${files[@]}" && cargo build -j2 -q -p imac --bin imac' EXIT
git apply bench/explore/spattn/spattn.patch
bench/explore/generated-wheel.sh spattn
