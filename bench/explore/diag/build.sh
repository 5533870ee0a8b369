#!/usr/bin/env bash
# Builds diag.py's wheels into .gpu/wheels: gemm_tma (main's gptq_gemm_wg16) with this
# tree's header, and diag (diag.ima) with the header as diag.patch has it, put in place
# for its wheel alone and restored after (imac rebuilt each time). KEEP=1 adds diag's
# wheel to the .gpu that bench/explore/prepared-build.sh made (gemm_tma's among its
# wheels); otherwise nothing else is staged. Then call the device with carry [".gpu"]:
# install the wheels and run diag.py.
set -euo pipefail
cd "$(dirname "$0")/../../.."
source scripts/cuda-env
git diff --quiet -- codegen/include/ima.cuh || { echo "build.sh: codegen/include/ima.cuh has changes" >&2; exit 1; }
if [ -z "${KEEP:-}" ]; then
    rm -rf .gpu && mkdir -p .gpu/wheels
    CARGO_BUILD_JOBS=2 scripts/python-wheels specs/gemm_tma.ima >/dev/null
fi
trap 'git checkout -- codegen/include/ima.cuh && cargo build -j2 -q -p imac --bin imac' EXIT
git apply bench/explore/diag/diag.patch
cargo build -j2 -q -p imac --bin imac
bench/explore/explorer-wheels.sh bench/explore/diag/diag.ima
du -sh .gpu
