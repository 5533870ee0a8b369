#!/usr/bin/env bash
# Session 34's first GPU call: dyn.py (bench/explore/dyn), then the GPU suite but two GPUs.
set -uo pipefail
cd "$(dirname "$0")/../../.."
site=$(mktemp -d)
python3 -m pip install -q --no-index --no-deps --target "$site" .gpu/wheels/*.whl || exit 1
(cd bench/explore/dyn && PYTHONPATH=$site timeout 240 python3 -u dyn.py 2>&1 | tail -40)
bash .gpu/on-device test -v multi_gpu 2>&1 | grep -E "^test result|FAILED|panicked|^Running|failed|error" | tail -60
