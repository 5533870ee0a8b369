#!/usr/bin/env bash
# Session 34's fourth GPU call: dyn.py at up to 16 rows (s16, p16, gptq_gemm_wg16).
set -uo pipefail
cd "$(dirname "$0")/../../.."
site=$(mktemp -d)
python3 -m pip install -q --no-index --no-deps --target "$site" .gpu/wheels/*.whl || exit 1
export PYTHONPATH=$site
cd bench/explore/dyn && ONLY16=1 timeout 300 python3 -u dyn.py 2>&1 | grep -v "^M=3" | tail -30
