#!/usr/bin/env bash
# Runs, on the GPU machine, session 34's prepared calls (built by
# bench/explore/prepared-build.sh on branch pairs), most important first.
#   bash bench/explore/prepared-run.sh 1: dyn.py at up to 16 rows (s16, main's
#     gptq_gemm_wg16 stamped; p16, the prototype; wg16, the branch's gptq_gemm_wg16 in the
#     pair order: µs, error against torch, the blocks' ends), the same at 32 rows (p32, the
#     pair order at 32 rows for issue 22's B = 32, beside gptq_gemm and gptq_gemm_wg),
#     gemm_tma_gpu's tests;
#   bash bench/explore/prepared-run.sh 2: tests/python/test_gpu.py, the bench's
#     gptq_gemm_wg16 rows (release, deferred, twin);
# then in a call of its own: bash .gpu/on-device sanitize gemm_tma_gpu. Merge the branch
# only if the tests pass (memcheck too) and it is faster.
set -uo pipefail
cd "$(dirname "$0")/../.."
site=$(mktemp -d)
python3 -m pip install -q --no-index --no-deps --target "$site" .gpu/wheels/*.whl || exit 1
export PYTHONPATH=$site
case "${1:-1}" in
1)
    (cd bench/explore/dyn && ONLY16=1 timeout 170 python3 -u dyn.py 16,8192,28672 7,4104,4104 1,8192,28672 16,14336,4096 16,4096,4096 2>&1 | tail -12)
    (cd bench/explore/dyn && timeout 150 python3 -u dyn.py 32,4096,28672 32,14336,4096 32,4096,6144 32,4096,4096 30,8192,28672 2>&1 | tail -10)
    timeout 200 bash .gpu/on-device test gemm_tma_gpu 2>&1 | grep -E "^test |test result|FAILED|panicked" | tail -20
    ;;
2)
    timeout 300 python3 tests/python/test_gpu.py 2>&1 | tail -4
    timeout 200 bash .gpu/on-device run bench --only gptq_gemm_wg16 --variants release,deferred,twin 2>&1 | grep -E "^\| gptq|DIFF|mismatch" | head -8
    ;;
esac
