#!/usr/bin/env bash
# Session 35's GPU calls for gptq_gemm_wg32 (issue 22's B = 32), with .gpu/ carried (built
# by hand: gemm_tma_gpu and decode_gpu's test binaries, bench and decode_layer, every
# wheel and bench/explore/dyn's):
#   bash bench/explore/wg32-run.sh 1: gemm_tma_gpu and decode_gpu's tests; dyn.py at 32
#     rows (p32, wg32, gptq_gemm, gptq_gemm_wg on the layer's shapes) and at 16 (wg16
#     with its tensor maps prefetched, against the first call's figures); the bench's
#     gptq_gemm_wg32 rows; the layer from Python with and without wg32 (ab.py, one dump
#     of 32 sequences of 1024);
#   bash bench/explore/wg32-run.sh 2: the layer's bench (Rust and Python, beside torch);
#     tests/python/test_gpu.py;
# then in a call of its own: bash .gpu/on-device sanitize 'gemm_tma_gpu|decode_gpu';
#   bash bench/explore/wg32-run.sh 3: what the cooperative launch costs (dyn.py's p16g).
set -uo pipefail
cd "$(dirname "$0")/../.."
site=$(mktemp -d)
python3 -m pip install -q --no-index --no-deps --target "$site" .gpu/wheels/*.whl || exit 1
export PYTHONPATH=$site
case "${1:-1}" in
1)
    timeout 150 bash .gpu/on-device test 'gemm_tma_gpu|decode_gpu' 2>&1 | grep -E "^test |test result|FAILED|panicked" | tail -24
    (cd bench/explore/dyn && timeout 120 python3 -u dyn.py 32,4096,28672 32,14336,4096 32,4096,6144 32,4096,4096 24,4096,28672 2>&1 | grep -v "ends" | tail -6)
    (cd bench/explore/dyn && ONLY16=1 timeout 70 python3 -u dyn.py 16,8192,28672 16,4096,4096 16,4096,6144 2>&1 | grep -v "ends" | tail -4)
    timeout 100 bash .gpu/on-device run bench --only gptq_gemm_wg32 --variants release,deferred 2>&1 | grep -E "^\| gptq|DIFF|mismatch" | head -6
    tmp=$(mktemp -d)
    # shellcheck disable=SC2046
    timeout 60 bash .gpu/on-device run decode_layer dump "$tmp/b32" $(printf '1024 %.0s' $(seq 32)) >/dev/null 2>&1
    timeout 120 python3 -u bench/explore/layerwg/ab.py "$tmp/b32" 2>&1 | tail -12
    ;;
2)
    timeout 300 bash bench/decode-layer-on-device.sh bench 2>&1 | tail -30
    timeout 200 python3 tests/python/test_gpu.py 2>&1 | tail -3
    ;;
3)
    # p16 launched cooperatively (persistent) and as a plain grid (p16g), beside wg16.
    (cd bench/explore/dyn && ONLY16=1 timeout 150 python3 -u dyn.py 16,8192,28672 1,8192,28672 16,4096,4096 16,14336,4096 2>&1 | tail -8)
    ;;
esac
