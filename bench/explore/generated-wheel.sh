#!/usr/bin/env bash
# Builds the wheel of an explorer whose spec a gen.py writes: runs bench/explore/NAME/gen.py,
# which writes target/explore/NAME.ima from the tree's specs, then explorer-wheels.sh on
# it (NAME_kernels in .gpu/wheels). What pstamp's, ropeattn's and pmajor's build.sh share.
#   bench/explore/generated-wheel.sh NAME
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/cuda-env
(cd "bench/explore/$1" && python3 gen.py ../../..)
cargo build -j2 -q -p imac --bin imac
bench/explore/explorer-wheels.sh "target/explore/$1.ima"
