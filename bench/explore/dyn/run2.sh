#!/usr/bin/env bash
# Session 34's second GPU call: pace.py; ncu of gptq_gemm_wg16's 4th launch (details CSV
# into $OUT); memcheck of the suite but the fuzzer and two GPUs.
set -uo pipefail
cd "$(dirname "$0")/../../.."
site=$(mktemp -d)
python3 -m pip install -q --no-index --no-deps --target "$site" .gpu/wheels/*.whl || exit 1
export PYTHONPATH=$site
(cd bench/explore/dyn && timeout 120 python3 -u pace.py 2>&1 | tail -8)
# (The ncu step is now bench/explore/prof/prof_against.sh main, whose launcher replaced
# this folder's prof_wg16.py.)
bash bench/explore/prof/prof_against.sh main
bash .gpu/on-device sanitize -v 'gpu-a20e|multi_gpu' 2>&1 | grep -E "^test result|FAILED|ERROR SUMMARY|binaries failed" | sort | uniq -c | tail -20
