#!/usr/bin/env bash
# Runs, on the GPU machine, the prepared calls (built by bench/explore/prepared-build.sh),
# most important first; session 36 ran them at 738cc26 (call 3 was then dyn.py's e16;
# bench/RESULTS.md, "The whole GPU suite at session 35's code"):
#   bash bench/explore/prepared-run.sh 1: the whole GPU suite but the fuzzer and the
#     two-GPU test;
#   bash bench/explore/prepared-run.sh 2: the fuzzer's tests (on a fresh machine the
#     400 s end in the second of its four), tests/python/test_gpu.py;
#   bash bench/explore/prepared-run.sh 3: bench/explore/queued/queued.py (session 36: how
#     much of a launch's time each timer counts; its fourth column, runs of 10 launches
#     between one pair of events, has not run yet and decides the bench's timer);
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
    (cd bench/explore/queued && PYTHONPATH=$site:../dyn timeout 300 python3 -u queued.py 2>&1 | tail -20)
    ;;
esac
