#!/usr/bin/env bash
# Session 34's sixth GPU call (branch pairs): dyn.py (s16 = main's gptq_gemm_wg16, p16 the prototype, wg16 the branch's), then gemm_tma_gpu's tests, then the bench.
set -uo pipefail
cd "$(dirname "$0")/../../.."
site=$(mktemp -d)
python3 -m pip install -q --no-index --no-deps --target "$site" .gpu/wheels/*.whl || exit 1
export PYTHONPATH=$site
(cd bench/explore/dyn && ONLY16=1 timeout 120 python3 -u dyn.py 16,8192,28672 7,4104,4104 1,8192,28672 16,14336,4096 2>&1 | tail -12)
timeout 100 bash .gpu/on-device test gemm_tma_gpu 2>&1 | grep -E "^test |test result|FAILED|panicked" | tail -20
timeout 60 bash .gpu/on-device run bench --only gptq_gemm_wg16 --variants release,deferred,twin 2>&1 | grep -E "^\| gptq|DIFF|mismatch" | head -8
