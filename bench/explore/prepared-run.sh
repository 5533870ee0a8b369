#!/usr/bin/env bash
# Runs, on the GPU machine, session 29's prepared call (built by
# bench/explore/prepared-build.sh): `mega_chain 23` times forms 17 and 19 as graphs, then
# stamps one launch each of forms 23 to 27 (24 to 27 also timed as graphs): 25, a count
# released once a phase with a ring of 4 slots (does the release's latency follow the
# copies in flight?); 26 and 27, relaxed counts (what a signal costs that waits for
# nothing, as a flag stored with its data would). About a minute.
#   bash bench/explore/prepared-run.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
timeout 200 bench/explore/mega/mega_chain 23
