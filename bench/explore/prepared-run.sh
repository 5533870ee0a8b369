#!/usr/bin/env bash
# Runs, on the GPU machine, session 29's prepared call (built by
# bench/explore/prepared-build.sh), three to four minutes on a fresh machine (rp7's and
# rp8's modules compile with NVRTC at first load):
# - `mega_chain 23`: forms 17 and 19 as graphs, then one stamped launch each of forms 23 to
#   27 (24 to 27 also as graphs): 25, a count released once a phase with a ring of 4 slots
#   (does the release's latency follow the copies in flight?); 26 and 27, relaxed counts
#   (what a signal costs that waits for nothing before it, as a flag stored with its data
#   would);
# - rp7.py: the cycles rp16b_s5's consumer warpgroups spend on their shared tiles'
#   arrivals, against their stages';
# - rp8.py: rp16b_s5 against s8, the same with those arrivals delegated (its output
#   against rp16b_s5's). s8's lo waits for the others' arrivals: a hang would be a bug.
#   bash bench/explore/prepared-run.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
echo "== commit $(cat .gpu/commit)"
timeout 200 bench/explore/mega/mega_chain 23
site=$(mktemp -d)
python3 -m pip install -q --no-index --no-deps --target "$site" .gpu/wheels/rp7_kernels-*.whl \
    .gpu/wheels/rp8_kernels-*.whl &&
    export PYTHONPATH=$site
(cd bench/explore/rp && timeout 200 python3 -u rp7.py 2>&1)
(cd bench/explore/rp && timeout 200 python3 -u rp8.py 2>&1)
