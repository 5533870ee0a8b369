#!/usr/bin/env bash
# Runs, on the GPU machine, session 31's prepared call (built by
# bench/explore/prepared-build.sh):
# - `interf boxes`: the qweight stream (K = 8192, N = 28672) through 6 (or 3) stages, its
#   stage as one 24 KB box (tma), as gptq_gemm_wg's six 32-word boxes 128-byte swizzled
#   (tma6s) or plain (tma6), with or without the stage's scales and zeros boxes (+sz), idle
#   and with consumers at work (all, SPIN 40): which of them costs the 7 us that session
#   31 found between one box a stage (30.1 us) and session 28's idle pipelines (37.3 to
#   38.1 us). If it is the six boxes, a GPTQ argument's words copied as one unswizzled box
#   (its consumers' tma_wg_frag reads a row's 64 contiguous bytes a warp, so no bank
#   conflicts) is the change to make in the runtime's tensor map and the accessor;
# - the GPU suite (every binary but the two-GPU one) and tests/python/test_gpu.py.
# Memcheck is the next call's: `bash .gpu/on-device sanitize -v 'gpu-a20e|multi_gpu'`.
#   bash bench/explore/prepared-run.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
echo "== commit $(cat .gpu/commit)"
timeout 90 bench/explore/interf/interf boxes
site=$(mktemp -d)
python3 -m pip install -q --no-index --no-deps --target "$site" .gpu/wheels/*.whl &&
    PYTHONPATH=$site timeout 90 python3 tests/python/test_gpu.py 2>&1 | grep -v "^ok "
timeout 380 bash .gpu/on-device test -v 'multi_gpu' 2>&1 | grep -E "^===|test result|panicked|FAILED|binaries failed"
