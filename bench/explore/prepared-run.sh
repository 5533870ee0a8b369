#!/usr/bin/env bash
# Runs, on the GPU machine, what session 25 prepared (built by
# bench/explore/prepared-build.sh), each step under its own time limit (540 s in all,
# below a call's 600), in one call:
# 1. gemm_tma_gpu and test_gpu.py, the first GPU run since specs/gemm_tma.ima's
#    `const BLOCKS` (ab2227e) sized gptq_gemm_wg's slots from it;
# 2. mega_chain with forms 19 (a signalling warp counts the units) and 20 (O and down
#    waiting only for the strips that make their rows);
# 3. ncu with source counters of gptq_gemm_wg on a shape of a third of a unit a block,
#    where about 25,000 cycles stay fixed inside the kernel (RESULTS, "gptq_gemm_wg's
#    shared tiles from slots"): the report and its SASS page land in $OUT.
#   bash bench/explore/prepared-run.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
site=$(mktemp -d)
python3 -m pip install -q --no-index --no-deps --target "$site" .gpu/wheels/*.whl && export PYTHONPATH=$site
echo "== commit $(cat .gpu/commit)"
echo "== gemm_tma_gpu"
timeout 200 bash .gpu/on-device test gemm_tma_gpu 2>&1 | grep -E "^test |test result|panicked"
echo "== test_gpu.py"
timeout 150 python3 -u tests/python/test_gpu.py 2>&1 | tail -4
echo "== mega_chain"; timeout 70 bench/explore/mega/mega_chain
echo "== ncu gptq_gemm_wg, M=16 K=512 N=4096"
out=${OUT:-/tmp}
(cd bench/explore && timeout 120 ncu --set full --import-source no --kernel-name regex:gptq_gemm_wg_i32 \
    --launch-skip 5 --launch-count 1 -o "$out/wg_small" python3 -u wg_shapes.py 16 512 4096 > "$out/wg_small.log" 2>&1)
ncu --import "$out/wg_small.ncu-rep" --page details > "$out/wg_small.txt" 2>&1
ncu --import "$out/wg_small.ncu-rep" --page source --print-source sass --csv > "$out/wg_small.sass.csv" 2>&1
grep -E "Duration|Elapsed Cycles|SM Active Cycles" "$out/wg_small.txt"
