#!/usr/bin/env bash
# Builds, on the build machine, everything the prepared GPU calls need (bench/explore/
# prepared-run.sh runs them there, its header says what each does) into .cache/gpu-staged:
# every GPU test binary and the bench, decode_layer and first_load examples
# (../shared/gpu/pack, scripts/gpu-trim), the sm_90a wheels of every example spec
# (scripts/python-wheels) and the explorers' wheels (clattn, stream), and the staged
# layers' modules compiled for sm_90a (.gpu/ptx.tar.xz, for calls 20 and 22). A patched
# layer to time beside the tree's is built by bench/explore/layer-patched.sh into .gpu/bin
# before the staging moves (session 57's earlytiles.patch was, until session 59 landed it).
# Then, before each call,
# bench/explore/prepared-stage.sh N puts in .gpu what call N carries (under the 64 MiB a
# call takes), and the call is made with carry [".gpu"] and
# `bash bench/explore/prepared-run.sh N`. About 8 minutes on 2 cores with target/ already
# built by scripts/test (session 58, 922bf4d), longer from a cold target/; nothing else
# may build or edit the tree meanwhile. The staged calls carry 50 MB (1, sanitize), 12 (2),
# about 25 (20, 22), 4 (14) and 1 (16, 17) beside the tree's 11.
#   bench/explore/prepared-build.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/cuda-env
set -euo pipefail
../shared/gpu/pack -j2 >/dev/null
scripts/gpu-trim bench decode_layer first_load >/dev/null
git rev-parse --short HEAD > .gpu/commit
CARGO_BUILD_JOBS=2 IMA_WHEEL_ARCH=sm_90a scripts/python-wheels >/dev/null
cargo build -j2 -q -p imac --bin imac # the explorers' wheels run it
bench/explore/clattn/build.sh
bench/explore/explorer-wheels.sh bench/explore/stream/stream.ima
# The previous staging's layer and bench stay as the next call 20's baseline.
if [ -d .cache/gpu-staged ]; then
    rm -rf .cache/gpu-before
    mkdir -p .cache/gpu-before/bin
    mv .cache/gpu-staged/bin/bench .cache/gpu-staged/bin/decode_layer .cache/gpu-before/bin/
    mv .cache/gpu-staged/commit .cache/gpu-before/commit
fi
# Every staged layer's modules compiled here for the H100 and H200 (compute capability 9.0),
# so that calls 20 and 22 find them in the cache (IMA_PTX_CACHE) and spend no device time
# in NVRTC on them (a minute a binary on a fresh machine; the benches' modules still compile
# there): about 40 MB a layer, 4 packed with xz, 2 minutes here. A baseline built before
# the layer had `precompile` (0c6a4d9 and older) compiles there as before.
ptx=.cache/ptx-stage
rm -rf "$ptx"
mkdir -p "$ptx/ptx"
for bin in .gpu/bin/decode_layer* .cache/gpu-before/bin/decode_layer; do
    "$bin" precompile "$ptx/ptx" 9.0 >/dev/null || echo "prepared-build.sh: $bin did not precompile" >&2
done
tar cf - -C "$ptx" ptx | xz -T2 -6 > .gpu/ptx.tar.xz
rm -rf .cache/gpu-staged
mv .gpu .cache/gpu-staged
du -sh .cache/gpu-staged/bin .cache/gpu-staged/wheels
