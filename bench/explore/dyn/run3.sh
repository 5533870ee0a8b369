#!/usr/bin/env bash
# Session 34's third GPU call: pace.py (with the streaming forms) and waits.py.
set -uo pipefail
cd "$(dirname "$0")/../../.."
site=$(mktemp -d)
python3 -m pip install -q --no-index --no-deps --target "$site" .gpu/wheels/*.whl || exit 1
export PYTHONPATH=$site
cd bench/explore/dyn && timeout 200 python3 -u pace.py 2>&1 | tail -10; timeout 150 python3 -u waits.py 2>&1 | tail -4
