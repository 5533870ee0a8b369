#!/usr/bin/env bash
# Runs on the GPU machine (built by bench/explore/ahead/build.sh, .gpu/ carried): ahead.py,
# then queued.py with its fourth timer (runs of 10 launches between one pair of events).
set -uo pipefail
cd "$(dirname "$0")/../../.."
site=$(mktemp -d)
python3 -m pip install -q --no-index --no-deps --target "$site" .gpu/wheels/*.whl || exit 1
(cd bench/explore/ahead && PYTHONPATH=$site timeout 330 python3 -u ahead.py 2>&1 | tail -20)
(cd bench/explore/queued && PYTHONPATH=$site:../dyn timeout 200 python3 -u queued.py 2>&1 | tail -20)
