#!/usr/bin/env bash
# Runs, on the GPU machine, session 27's prepared call (built by
# bench/explore/prepared-build.sh): bench/explore/rp/rp2.py, where rp16b_s5's consumers
# spend a stage (its decode alone, its MMAs alone, its MMAs on two accumulators a group)
# and gptq_gemm_wg's own decode in its 5-stage pipeline (with one accumulator, and with two),
# at M = 16 and 8; and at M = 32 (the layer's B = 32 shapes) gptq_gemm_wg's 32-row path in
# 4 stages of 32 rows of x (wg_s4_32). Then rp3.py: a consumer's stage in cycles. Each process
# compiles three modules with NVRTC at first load (gemm_tma's and rp2's take a minute or
# more), hence the limit.
#   bash bench/explore/prepared-run.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
echo "== commit $(cat .gpu/commit)"
site=$(mktemp -d)
python3 -m pip install -q --no-index --no-deps --target "$site" .gpu/wheels/gemm_kernels-*.whl \
    .gpu/wheels/gemm_tma_kernels-*.whl .gpu/wheels/rp2_kernels-*.whl .gpu/wheels/rp3_kernels-*.whl &&
    export PYTHONPATH=$site
(cd bench/explore/rp && timeout 380 python3 -u rp2.py 2>&1)
# Then the cycles a consumer's stage spends waiting, working and draining its MMAs
# (rp3.py), in what is left of the call; if cut off, in a call of its own.
(cd bench/explore/rp && timeout 180 python3 -u rp3.py 2>&1)
