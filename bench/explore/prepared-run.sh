#!/usr/bin/env bash
# Runs, on the GPU machine, the experiments prepared in session 24 (built by
# bench/explore/prepared-build.sh), each under its own time limit (550 s in all, below a
# call's 600), in one call:
# 1. mega_chain's forms 14 to 17 (the ring, its units by bulk copies or by tensor map);
# 2. bench/explore/wgnf beside the bench's gptq_gemm_wg release and twin rows;
# 3. bench/explore/pt8 (paged_attn with tiles of 8 tokens);
# 4. Marlin at the decode layer's 32-row shapes, one process a shape (the timer hung
#    after M = 64 twice when shapes shared a process).
#   bash bench/explore/prepared-run.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
site=$(mktemp -d)
python3 -m pip install -q --no-index --no-deps --target "$site" .gpu/wheels/*.whl && export PYTHONPATH=$site
echo "== commit $(cat .gpu/commit)"
echo "== mega_chain"; timeout 60 bench/explore/mega/mega_chain
echo "== bench gptq_gemm_wg"
timeout 90 bash .gpu/on-device run bench --only gptq_gemm_wg --variants release,twin | grep -E "^\| gptq_gemm_wg"
echo "== wgnf"; (cd bench/explore/wgnf && timeout 120 python3 -u time_wgnf.py)
echo "== pt8"; (cd bench/explore/pt8 && timeout 120 python3 -u time_pt8.py)
echo "== marlin at 32 rows"
for s in 32,4096,6144 32,4096,4096 32,4096,28672 32,14336,4096; do
    (cd bench/explore/marlin && timeout 40 python3 -u time_marlin.py "$s")
done
