#!/usr/bin/env bash
# Adds the wheel pmajor_kernels to .gpu/wheels (beside the tree's paged_kernels, which
# scripts/python-wheels or bench/explore/prepared-build.sh put there): gen.py's spec, from
# specs/paged.ima with pmajor.patch applied for the while (the patch also orders the twin,
# bench/twins/paged.cu, the same way; neither file may have changes). Then, with the
# wheels carried: bash bench/explore/prepared-run.sh 8.
set -euo pipefail
cd "$(dirname "$0")/../../.."
files=(specs/paged.ima bench/twins/paged.cu)
git diff --quiet -- "${files[@]}" || { echo "build.sh: ${files[*]} have changes" >&2; exit 1; }
trap 'git checkout -- "${files[@]}"' EXIT
git apply bench/explore/pmajor/pmajor.patch
bench/explore/generated-wheel.sh pmajor
