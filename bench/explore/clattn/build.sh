#!/usr/bin/env bash
# Adds the wheel clattn_kernels (gen.py's spec: paged_attn whose partitions meet in a
# thread-block cluster) to .gpu/wheels, beside the tree's paged_kernels, for time_clattn.py.
set -euo pipefail
cd "$(dirname "$0")/../../.."
bench/explore/generated-wheel.sh clattn
