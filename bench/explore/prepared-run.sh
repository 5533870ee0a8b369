#!/usr/bin/env bash
# Runs, on the GPU machine, session 28's prepared call (built by
# bench/explore/prepared-build.sh): bench/explore/rp/rp5.py, where rp16b_s5's producer
# spends a stage (waiting for a free stage, issuing its copies) beside its consumers'
# stamps, with the consumers at work (s5_pp) and idle (e5_pp), and the SM clock over the
# producer's loop: whether the stages land late because the ring is full or because the
# stream itself slows beside working consumers. rp5's module compiles with NVRTC at first
# load (about a minute on a fresh machine), hence the limit.
#   bash bench/explore/prepared-run.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
echo "== commit $(cat .gpu/commit)"
site=$(mktemp -d)
python3 -m pip install -q --no-index --no-deps --target "$site" .gpu/wheels/rp5_kernels-*.whl &&
    export PYTHONPATH=$site
(cd bench/explore/rp && timeout 300 python3 -u rp5.py 2>&1)
