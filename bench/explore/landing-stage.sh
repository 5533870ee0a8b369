#!/usr/bin/env bash
# Stages session 64's call 27 (bench/explore/prepared-run.sh 27) in .gpu from a fresh
# ../shared/gpu/pack of the tree: the GPU test binaries and the tree's decode_layer, beside
# f18c448's layer and pdlb's (linked from DIR, which holds decode_layer_before and
# decode_layer_pdlb from .cache/gpu-staged), with every layer's modules precompiled for
# compute capability 9.0 (the staged ones' from .cache/gpu-staged/ptx.tar.xz). Then:
# carry [".gpu"], `bash bench/explore/prepared-run.sh 27`.
#   bench/explore/landing-stage.sh DIR
set -euo pipefail
cd "$(dirname "$0")/../.."
keep=${1:?landing-stage.sh DIR}
scripts/gpu-trim decode_layer >/dev/null
# Not the fuzzer's binary (call 2's), nor the two-GPU one.
rm -f .gpu/bin/gpu-a20e* .gpu/bin/multi_gpu*
ls .gpu/bin | grep -E '^(.*_gpu|gpu|gpu_[a-z_]+)-[0-9a-f]+$' > .gpu/tests.txt
git rev-parse --short HEAD > .gpu/commit
ln -f "$keep/decode_layer_before" "$keep/decode_layer_pdlb" .gpu/bin/
ptx=.cache/ptx-stage
rm -rf "$ptx"
mkdir -p "$ptx"
tar xJf .cache/gpu-staged/ptx.tar.xz -C "$ptx"
.gpu/bin/decode_layer precompile "$ptx/ptx" 9.0 >/dev/null
tar cf - -C "$ptx" ptx | xz -T2 -6 > .gpu/ptx.tar.xz
du -sh .gpu
# What each of the two calls carries, hard-linked from the staging: 27 suite, 27 layers.
rm -rf .cache/gpu-landing
mv .gpu .cache/gpu-landing
