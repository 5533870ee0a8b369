#!/usr/bin/env bash
# Runs, on the GPU machine, session 32's call (built by bench/explore/prepared-build.sh):
# tests/python/test_gpu.py on branch one-box-words (the last check before it lands), then
# bench/explore/rp/rp9.py: s8 and w8 (3 consumer warpgroups) against s9 and w9 (4), on
# repacked words and on GPTQ's own, against torch's product.
#   bash bench/explore/prepared-run.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
echo "== commit $(cat .gpu/commit)"
site=$(mktemp -d)
python3 -m pip install -q --no-index --no-deps --target "$site" .gpu/wheels/*.whl || exit 1
(cd bench/explore/rp && PYTHONPATH=$site timeout 150 python3 -u rp9.py)
PYTHONPATH=$site timeout 300 python3 tests/python/test_gpu.py 2>&1 | tail -8
