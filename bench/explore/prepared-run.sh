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
# - branch one-box-words (821ade8), where that change is made: gemm_tma_gpu's tests
#   (gptq_gemm_wg and gptq_gemm_tma on ragged shapes against f64, fused, dirty counters),
#   then `run bench --only gptq_gemm_wg --variants release,deferred,twin`, against main's
#   59.2, 62.8, 80.1 and 147.8 us at M = 16, 32, 64 and 128 (c820cbb, session 31);
# - `python3 -u rp8.py` (bench/explore/rp): the repacked-weights prototypes s5 and s8 on
#   the one-box stream, against session 30's 52.1 and 49.3 us at M = 16, K = 8192,
#   N = 28672 on the six-box one (their words read through `w.tma_word`).
# The rest of the suite, tests/python/test_gpu.py and memcheck are the next calls':
# `bash .gpu/on-device test -v 'multi_gpu|gemm_tma_gpu'`, then
# `bash .gpu/on-device sanitize -v 'gpu-a20e|multi_gpu'`; the branch lands on main only
# once they pass and the bench says it is no slower.
#   bash bench/explore/prepared-run.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
echo "== commit $(cat .gpu/commit)"
timeout 60 bench/explore/interf/interf boxes
timeout 150 bash .gpu/on-device test gemm_tma_gpu 2>&1 | grep -E "^===|^test |test result|panicked|binaries failed"
timeout 100 bash .gpu/on-device run bench --only gptq_gemm_wg --variants release,deferred,twin 2>&1 | grep "^| gptq"
site=$(mktemp -d)
python3 -m pip install -q --no-index --no-deps --target "$site" .gpu/wheels/*.whl &&
    (cd bench/explore/rp && PYTHONPATH=$site timeout 120 python3 -u rp8.py)
