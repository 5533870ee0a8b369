#!/usr/bin/env bash
# Runs, on the GPU machine, the first of session 26's prepared calls (built by
# bench/explore/prepared-build.sh), each step under its own time limit (510 s in all,
# below a call's 600): the first GPU run of the decode layer with gemm_tma.ima's
# gptq_gemm_wg for its down and gate/up projections from 17 rows on
# (examples/decode_layer/layer.rs's `projection_of`, decode_layer.py's `_project`).
# Loading the layer's kernels now compiles gemm_tma.ima's module with NVRTC too (about a
# minute on the build machine's nvcc), once a machine since the runtime's PTX cache
# (runtime/src/ptx_cache.rs; the first GPU run of that cache too), hence the limits.
# 1. decode_gpu (the layer against its f64 reference at B = 1, 8 and 32, every mode);
# 2. the layer's speed at B = 1 and 32, context 1024, beside torch's
#    (bench/decode-layer-on-device.sh bench).
# Then prepared-run-2.sh and prepared-run-3.sh, a call each.
#   bash bench/explore/prepared-run.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
echo "== commit $(cat .gpu/commit)"
echo "== decode_gpu"
timeout 240 bash .gpu/on-device test decode_gpu 2>&1 | grep -E "^test |test result|panicked"
echo "== decode layer bench"
timeout 270 bash bench/decode-layer-on-device.sh bench 2>&1 | tail -30
