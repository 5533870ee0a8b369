#!/usr/bin/env bash
# The second call of session 26's prepared runs (after prepared-run.sh; built by
# prepared-build.sh): decode_gpu under compute-sanitizer memcheck, then gptq_gemm_wg's
# timeline after b1cbb7b at the layer's 32-row shapes (bench/explore/wt/time_wt3.py: what is
# left of its fixed cost on O and QKV).
#   bash bench/explore/prepared-run-2.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
site=$(mktemp -d)
python3 -m pip install -q --no-index --no-deps --target "$site" .gpu/wheels/*.whl && export PYTHONPATH=$site
echo "== sanitize decode_gpu"
timeout 330 bash .gpu/on-device sanitize decode_gpu 2>&1 | grep -E "^test |test result|ERROR SUMMARY"
echo "== time_wt3"
(cd bench/explore/wt && timeout 200 python3 -u time_wt3.py 2>&1)
