#!/usr/bin/env bash
# Builds, on the build machine, session 32's GPU call (bench/explore/prepared-run.sh runs it
# there), from branch one-box-words: the GPU test binaries and the bench, every wheel
# tests/python/test_gpu.py imports, and bench/explore/rp/rp9.ima's (gen9.py: 4 consumer
# warpgroups). Then call the device with carry [".gpu"]: bash bench/explore/prepared-run.sh.
#   bench/explore/prepared-build.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/cuda-env
bench/pack-and-note.sh -j2
# Only the GPU test binaries and the bench travel (the whole pack is over the 64 MiB a call
# carries).
keep='^(attn_gpu|checked_gpu|checkpoint_gpu|decode_gpu|element_types_gpu|gemm_gpu|gemm_tma_gpu|gpu|gpu_fault|gpu_graph_fault|gpu_refuse|gpu_streams|graph_gpu|index_gpu|multi_gpu|paged_gpu|quant_gpu|resident_gpu|specs_gpu)-[0-9a-f]+$'
grep -E "$keep" .gpu/tests.txt > .gpu/tests.keep
echo bench > .gpu/bins.txt
for f in .gpu/bin/*; do grep -qx "$(basename "$f")" .gpu/tests.keep .gpu/bins.txt || rm "$f"; done
mv .gpu/tests.keep .gpu/tests.txt
scripts/python-wheels specs/rmsnorm.ima specs/attn.ima specs/strided.ima specs/quant.ima specs/index.ima \
    tests/in/planted_bugs.ima specs/decode.ima specs/paged.ima specs/gemm.ima specs/gemm_tma.ima bench/explore/rp/rp9.ima
du -sh .gpu
