#!/usr/bin/env bash
# Session 34's fifth GPU call (branch pairs): gemm_tma_gpu's tests on gptq_gemm_wg16 in the
# pair order, then dyn.py at up to 16 rows: s16 (gptq_gemm_wg16 as main has it, stamped),
# p16 (the prototype) and gemm_tma's gptq_gemm_wg16 (the branch's).
set -uo pipefail
cd "$(dirname "$0")/../../.."
bash .gpu/on-device test gemm_tma_gpu 2>&1 | grep -E "^test |test result|FAILED|panicked" | tail -20
site=$(mktemp -d)
python3 -m pip install -q --no-index --no-deps --target "$site" .gpu/wheels/*.whl || exit 1
export PYTHONPATH=$site
bash .gpu/on-device run bench --only gptq_gemm_wg16 --variants release,deferred,twin 2>&1 | grep -E "^\| gptq|DIFF|mismatch" | head -12
cd bench/explore/dyn && ONLY16=1 timeout 200 python3 -u dyn.py 16,8192,28672 16,14336,4096 16,4096,4096 1,8192,28672 7,4104,4104 2>&1 | grep -v "^M=3" | tail -30
