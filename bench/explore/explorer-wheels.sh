#!/usr/bin/env bash
# Builds the Python wheel of each explorer spec given (bench/explore/*/*.ima) into
# .gpu/wheels, with target/debug/imac (built first) and the maturin of .cache/py-venv
# (scripts/python-wheels makes it): what prepared-build.sh and the explorers' build.sh
# share. Each ships its SASS and PTX for sm_90a (NVRTC here, source scripts/cuda-env
# first), so that the GPU machine compiles nothing: a fresh machine's NVRTC took about a
# minute for specs/gemm_tma.ima's module (this machine's 39 s of NVRTC, 18 of ptxas), and
# the driver's JIT of its PTX minutes more.
#   bench/explore/explorer-wheels.sh SPEC...
set -euo pipefail
cd "$(dirname "$0")/../.."
ws=$(pwd)
mkdir -p .gpu/wheels
for spec in "$@"; do
    name=$(basename "$spec" .ima)
    target/debug/imac compile "$spec" --python --arch sm_90a -o "target/pypkg/$name" --runtime-path "$ws/runtime" >/dev/null
    (cd "target/pypkg/$name" && CARGO_TARGET_DIR=$ws/target/python CARGO_BUILD_JOBS=2 "$ws/.cache/py-venv/bin/maturin" build --release --quiet -o "$ws/.gpu/wheels")
done
