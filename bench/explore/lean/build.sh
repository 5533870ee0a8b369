#!/usr/bin/env bash
# Adds time_lean.py's wheels to .gpu/wheels (where scripts/python-wheels or
# bench/explore/prepared-build.sh put the tree's paged_kernels): lean and lean2, written
# by gen.py from the tree's specs/paged.ima. Then, with carry [".gpu/wheels"]:
# bash bench/explore/prepared-run.sh 7.
set -euo pipefail
cd "$(dirname "$0")/../../.."
source scripts/cuda-env
python3 bench/explore/lean/gen.py >/dev/null
cargo build -j2 -q -p imac --bin imac
bench/explore/explorer-wheels.sh target/lean/lean.ima target/lean/lean2.ima
