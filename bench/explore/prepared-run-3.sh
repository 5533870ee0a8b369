#!/usr/bin/env bash
# The third of session 26's prepared calls: gptq_gemm_wg's and gptq_gemm's bench rows,
# then gptq_gemm_wg's timeline after b1cbb7b at the layer's 32-row shapes
# (bench/explore/wt/time_wt3.py: what is left of its fixed cost on O and QKV).
#   bash bench/explore/prepared-run-3.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
site=$(mktemp -d)
python3 -m pip install -q --no-index --no-deps --target "$site" .gpu/wheels/*.whl && export PYTHONPATH=$site
echo "== bench"
timeout 90 bash .gpu/on-device run bench --only gptq_gemm_wg,gptq_gemm --variants release,twin 2>&1 | grep -E "^\| gptq"
echo "== time_wt3"
(cd bench/explore/wt && timeout 240 python3 -u time_wt3.py 2>&1)
