#!/usr/bin/env bash
# Builds, on the build machine, the next session's first GPU calls (bench/explore/
# prepared-run.sh runs them there): every GPU test binary (the whole suite has not run
# since session 36; session 37 changed ima.cuh's ima_wg_w4_stage, which only
# gptq_gemm_wg16's code takes, and ran gemm_tma_gpu and tests/python/test_gpu.py), the
# bench and decode_layer, every Python wheel, bench/explore/dyn's (queued.py's e16) and
# bench/explore/sets' (gptq_gemm_wg16 with 2, 3 and 4 quarters' register sets). The staged
# binaries are trimmed to the GPU tests and the two examples, to fit the 64 MiB a call
# carries. Then call the device with carry [".gpu"]: bash bench/explore/prepared-run.sh 1,
# then 2, then 3 (its header says what each does).
#   bench/explore/prepared-build.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/cuda-env
../shared/gpu/pack -j2 >/dev/null
scripts/gpu-trim bench decode_layer >/dev/null
git rev-parse --short HEAD > .gpu/commit
CARGO_BUILD_JOBS=2 IMA_WHEEL_ARCH=sm_90a scripts/python-wheels >/dev/null
cargo build -j2 -q -p imac --bin imac  # explorer-wheels.sh runs it
bench/explore/explorer-wheels.sh bench/explore/dyn/dyn.ima bench/explore/sets/sets.ima
du -sh .gpu
cat .gpu/tests.txt
