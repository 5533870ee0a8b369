#!/usr/bin/env bash
# Runs, on the GPU machine, session 30's prepared call (built by
# bench/explore/prepared-build.sh), about nine minutes on a fresh machine:
# - gemm_tma_gpu and resident_gpu: d4fe738's gptq_gemm_wg (a dirty `arrivals` makes y
#   wrong, never the launch hang; its new test launches on counters of -1, 1, 5 and
#   i32::MAX) and the `resident` and `persistent` launches (f037ba6's gather_all, a grid
#   barrier clamped to what the device holds, has not run either);
# - the fuzzer (`gpu-a20e`), which did not finish in 420 s on b4af8a2 (244 s before);
# - tests/python/test_gpu.py;
# - `mega_chain 28`: forms 17, 19, 28 (relaxed counts) and 29 (a count released once a
#   phase), all unstamped, twice: what a relaxed count and a count a phase cost the B = 1
#   megakernel's layer (session 30 found forms 24 to 27's graph runs stamped, 19's not).
# The rest of the suite, memcheck and the two-GPU tests are the next calls'.
#   bash bench/explore/prepared-run.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
echo "== commit $(cat .gpu/commit)"
timeout 180 bash .gpu/on-device test 'gemm_tma_gpu|resident_gpu' 2>&1 | grep -E "^===|^test |test result|panicked|binaries failed"
timeout 45 bench/explore/mega/mega_chain 28
site=$(mktemp -d)
python3 -m pip install -q --no-index --no-deps --target "$site" .gpu/wheels/*.whl &&
    PYTHONPATH=$site timeout 90 python3 tests/python/test_gpu.py 2>&1 | grep -v "^ok "
# Last, as the longest (244 s at c91eb40): the timeouts add up to under a call's 600 s.
timeout 270 bash .gpu/on-device test 'gpu-a20e' 2>&1 | grep -E "^===|^test |test result|panicked|binaries failed"
