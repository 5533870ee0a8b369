#!/usr/bin/env bash
# Builds, on the build machine, the wheels that bench/explore/ahead/run.sh needs on the
# GPU machine (ahead.ima's, and queued.py's: gemm, gemm_tma, dyn) into .gpu/wheels, with
# nothing else staged; then call the device with carry [".gpu"]: bash bench/explore/ahead/run.sh.
# ahead.ima's kernels need ahead.patch's header: on 390da57, `git apply
# bench/explore/ahead/ahead.patch` first (session 37 ran it so).
set -euo pipefail
cd "$(dirname "$0")/../../.."
source scripts/cuda-env
rm -rf .gpu && mkdir -p .gpu/wheels
CARGO_BUILD_JOBS=2 scripts/python-wheels specs/rmsnorm.ima specs/quant.ima specs/gemm.ima specs/gemm_tma.ima >/dev/null
bench/explore/explorer-wheels.sh bench/explore/dyn/dyn.ima bench/explore/ahead/ahead.ima
du -sh .gpu
