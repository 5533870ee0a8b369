#!/usr/bin/env bash
# Runs, on the GPU machine, session 32's prepared call (built by
# bench/explore/prepared-build.sh): bench/explore/rp/rp10.py at K = 8192, N = 28672,
# M = 16. Session 32 found s8's pipeline with idle consumers 31.6 to 31.9 us without its
# shared tiles' ends (n8) and 35.4 to 37.6 with them (i8); this call says which part:
# j8 (lo does not wait for the others' counts), k8 (nor load their slots), and the stamps
# of t8 (i8) and u8 (s8, at work): when lo's stream ends, how long it waits, and how long
# after the others' `red.release` its count arrives; and f8 and g8, s8 and i8 with the
# slots as flagged records (no counts, no fences), against s8's 46.8 to 47.0 us.
# Branch flagged-slots has this call and more (gptq_gemm_wg with flagged records, its tests
# and its bench rows against main's): prefer its prepared-build.sh and prepared-run.sh.
#   bash bench/explore/prepared-run.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
echo "== commit $(cat .gpu/commit)"
site=$(mktemp -d)
python3 -m pip install -q --no-index --no-deps --target "$site" .gpu/wheels/*.whl || exit 1
(cd bench/explore/rp && PYTHONPATH=$site timeout 200 python3 -u rp10.py 2>&1 | tail -30)
