#!/usr/bin/env bash
# Adds the wheel pmajor_kernels to .gpu/wheels (beside the tree's paged_kernels, which
# scripts/python-wheels or bench/explore/prepared-build.sh put there): gen.py's spec, from
# specs/paged.ima with pmajor.patch applied for the while (specs/paged.ima must have no
# changes). Then, with the wheels carried: bash bench/explore/prepared-run.sh 8.
set -euo pipefail
cd "$(dirname "$0")/../../.."
git diff --quiet -- specs/paged.ima || { echo "build.sh: specs/paged.ima has changes" >&2; exit 1; }
trap 'git checkout -- specs/paged.ima' EXIT
git apply bench/explore/pmajor/pmajor.patch
bench/explore/generated-wheel.sh pmajor
