#!/usr/bin/env bash
# Runs, on the GPU machine, session 33's prepared call (built by
# bench/explore/prepared-build.sh on branch wg-after): gemm_tma_gpu's tests (gptq_gemm_wg's
# 30-row shapes with groups of 128 take the new path), gptq_gemm_wg's bench rows from main,
# the branch and the branch at 16 rows only, alternated twice, then bench/explore/wg32.py
# (the layer's projections at 32 rows, gptq_gemm_wg against gptq_gemm). Merge the branch
# only if the tests pass and it is faster; without the 32-row path if that alone pays
# (the ptxas report refuses its spill).
#   bash bench/explore/prepared-run.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
bash .gpu/on-device test gemm_tma_gpu 2>&1 | grep -E "test result|FAILED|panicked" | tail -5
for i in 1 2; do
    for b in bench_main bench bench_after16; do
        echo "== $b"
        bash .gpu/on-device run $b --only gptq_gemm_wg --variants release 2>&1 | grep -E "^\| gptq" | cut -d'|' -f3-6
    done
done
site=$(mktemp -d)
python3 -m pip install -q --no-index --no-deps --target "$site" .gpu/wheels/*.whl || exit 1
(cd bench/explore && PYTHONPATH=$site timeout 150 python3 -u wg32.py 2>&1 | tail -5)
