#!/usr/bin/env bash
# Builds, on the build machine, what the GPU runs prepared in session 26 need
# (bench/explore/prepared-run.sh runs them there): decode_gpu, the decode_layer example and
# the bench (pack), and the wheels of the Python layer (decode, paged, gemm, quant and
# gemm_tma), of test_gpu.py and of bench/explore/wt/wt3.ima (gen3.py). Then call the device
# with carry [".gpu"]: bench/explore/prepared-run.sh, prepared-run-2.sh and prepared-run-3.sh,
# a call each.
#   bench/explore/prepared-build.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
bench/pack-and-note.sh -j2 --test decode_gpu --example decode_layer --example bench
# scripts/python-wheels builds into .gpu/wheels (after pack, which empties .gpu); it
# checks rmsnorm's and quant's wheels on the CPU, so it gets those too.
scripts/python-wheels specs/rmsnorm.ima specs/quant.ima specs/attn.ima specs/strided.ima specs/index.ima \
    tests/in/planted_bugs.ima specs/gemm.ima specs/decode.ima specs/paged.ima specs/gemm_tma.ima \
    bench/explore/wt/wt3.ima
du -sh .gpu
