#!/usr/bin/env bash
# Runs, on the GPU machine, what session 26 prepared (built by
# bench/explore/prepared-build.sh), each step under its own time limit (540 s in all,
# below a call's 600), in one call: the first GPU run of the decode layer with
# gemm_tma.ima's gptq_gemm_wg for its down and gate/up projections from 17 rows on
# (examples/decode_layer/layer.rs's `projection_of`, decode_layer.py's `_project`):
# 1. decode_gpu (the layer against its f64 reference at B = 1, 8 and 32, every mode);
# 2. the layer's speed at B = 1 and 32, context 1024, beside torch's
#    (bench/decode-layer-on-device.sh bench), and against torch (... check);
# 3. gptq_gemm_wg and gptq_gemm's bench rows, release and twin.
# Then, in a call of its own, bench/explore/prepared-run-2.sh.
#   bash bench/explore/prepared-run.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
echo "== commit $(cat .gpu/commit)"
echo "== decode_gpu"
timeout 200 bash .gpu/on-device test decode_gpu 2>&1 | grep -E "^test |test result|panicked"
echo "== decode layer bench"
timeout 150 bash bench/decode-layer-on-device.sh bench 2>&1 | tail -30
echo "== decode layer check"
timeout 120 bash bench/decode-layer-on-device.sh check 2>&1 | tail -12
echo "== bench"
timeout 60 bash .gpu/on-device run bench --only gptq_gemm_wg,gptq_gemm --variants release,twin 2>&1 | grep -E "^\| gptq"
