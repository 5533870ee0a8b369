#!/usr/bin/env bash
# Runs, on the GPU machine, the prepared calls (built by bench/explore/prepared-build.sh),
# most important first; session 36 ran calls 1 and 2 at 738cc26 (bench/RESULTS.md, "The
# whole GPU suite at session 35's code"):
#   bash bench/explore/prepared-run.sh 1: the whole GPU suite but the fuzzer and the
#     two-GPU test;
#   bash bench/explore/prepared-run.sh 2: the fuzzer's tests (on a fresh machine the
#     400 s end in the second of its four), tests/python/test_gpu.py;
#   bash bench/explore/prepared-run.sh 3: bench/explore/sets/sets.py (session 37: four
#     quarters' register sets were 1% faster than three in one call; if they stay ahead,
#     ima_wg_w4_pairs_gemm's SETS default at 16 rows becomes 4, after its tests);
# then in a call of its own: bash .gpu/on-device sanitize -v 'gpu-a20e|multi_gpu' (the
# fuzzer's binary is gpu-a20e..., whose hash cargo keeps; memcheck leaves it and the two-GPU test out, as before).
set -uo pipefail
cd "$(dirname "$0")/../.."
case "${1:-1}" in
1)
    timeout 560 bash .gpu/on-device test -v 'gpu-a20e|multi_gpu' 2>&1 | grep -E "^=== |test result|FAILED|panicked" | tail -60
    ;;
2)
    timeout 400 bash .gpu/on-device test 'gpu-a20e' 2>&1 | grep -E "^=== |test result|FAILED|panicked" | tail -12
    site=$(mktemp -d)
    python3 -m pip install -q --no-index --no-deps --target "$site" .gpu/wheels/*.whl || exit 1
    PYTHONPATH=$site timeout 150 python3 tests/python/test_gpu.py 2>&1 | tail -3
    ;;
3)
    site=$(mktemp -d)
    python3 -m pip install -q --no-index --no-deps --target "$site" .gpu/wheels/*.whl || exit 1
    (cd bench/explore/sets && PYTHONPATH=$site timeout 300 python3 -u sets.py 2>&1 | tail -8)
    ;;
esac
