#!/usr/bin/env bash
# Builds, on the build machine, what session 31 left for the next session's first GPU call
# (bench/explore/prepared-run.sh runs it there), from branch one-box-words (821ade8: a GPTQ
# argument's words wider than 32 columns as one plain tensor-map box a tile): bench/
# explore/interf (its `boxes` forms: why one 24 KB tensor-map box a stage streams GPTQ's
# qweight at 3.90 TB/s where gptq_gemm_wg's stage of six swizzled 32-word boxes, scales and
# zeros streamed at about 3.2), the GPU test binaries and the bench, and the wheels of
# bench/explore/rp/rp8.ima (the repacked prototypes) and the specs it is timed beside. Then call the device with carry [".gpu", "bench/explore/interf/interf"]:
# bash bench/explore/prepared-run.sh.
#   bench/explore/prepared-build.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/cuda-env
nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -L"$IMA_CUDA_ROOT/lib" \
    -o bench/explore/interf/interf bench/explore/interf/interf.cu
bench/pack-and-note.sh -j2
# Only the GPU test binaries and the bench travel (the whole pack is over the 64 MiB a call
# carries).
keep='^(attn_gpu|checked_gpu|checkpoint_gpu|decode_gpu|element_types_gpu|gemm_gpu|gemm_tma_gpu|gpu|gpu_fault|gpu_graph_fault|gpu_refuse|gpu_streams|graph_gpu|index_gpu|multi_gpu|paged_gpu|quant_gpu|resident_gpu|specs_gpu)-[0-9a-f]+$'
grep -E "$keep" .gpu/tests.txt > .gpu/tests.keep
echo bench > .gpu/bins.txt
for f in .gpu/bin/*; do grep -qx "$(basename "$f")" .gpu/tests.keep .gpu/bins.txt || rm "$f"; done
mv .gpu/tests.keep .gpu/tests.txt
scripts/python-wheels specs/rmsnorm.ima specs/quant.ima specs/gemm.ima specs/gemm_tma.ima bench/explore/rp/rp8.ima
du -sh .gpu
