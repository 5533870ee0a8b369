#!/usr/bin/env bash
# Adds the wheel ropeattn_kernels to .gpu/wheels (beside the tree's paged_kernels and
# decode_kernels, which scripts/python-wheels or bench/explore/prepared-build.sh put
# there): gen.py's spec, from the tree's specs/paged.ima. Then, with the wheels carried:
# bash bench/explore/prepared-run.sh 8.
set -euo pipefail
cd "$(dirname "$0")/../../.."
source scripts/cuda-env
(cd bench/explore/ropeattn && python3 gen.py ../../..)
cargo build -j2 -q -p imac --bin imac
bench/explore/explorer-wheels.sh target/explore/ropeattn.ima
