# One call after b1cbb7b: gemm_tma_gpu, test_gpu.py, time_u.py and the bench's wg rows.
set -uo pipefail
site=$(mktemp -d)
python3 -m pip install -q --no-index --no-deps --target "$site" .gpu/wheels/*.whl && export PYTHONPATH=$site
echo "== gemm_tma_gpu"
timeout 150 bash .gpu/on-device test gemm_tma_gpu 2>&1 | grep -E "^test |test result|panicked"
echo "== bench"
timeout 90 bash .gpu/on-device run bench --only gptq_gemm_wg --variants release,deferred,twin 2>&1 | tail -8
echo "== time_u"
(cd bench/explore/wt && timeout 150 python3 -u time_u.py 2>&1)
echo "== test_gpu.py"
timeout 100 python3 -u tests/python/test_gpu.py 2>&1 | grep -E "wg|failed|Error" | tail -4
