#!/usr/bin/env bash
# Stages in .gpu one GPU call that checks the tree's decode layer and one layer a patch set
# against the f64 reference and times them side by side (`bash bench/explore/prepared-run.sh
# layers`, carry [".gpu"]), after the GPU test binaries whose names match REGEX (none
# without -t): ../shared/gpu/pack, then bench/explore/layer-patched.sh for each NAME, then
# every layer's modules precompiled for compute capability 9.0 into one cache
# (.gpu/ptx.tar.xz), so that the device runs no NVRTC. A patch set is NAME=PATCH[,PATCH...].
#   bench/explore/stage-layers.sh [-t REGEX] NAME=PATCH[,PATCH...]...
set -euo pipefail
cd "$(dirname "$0")/../.."
tests='^$'
if [ "${1:-}" = -t ]; then
    tests=${2:?-t REGEX}
    shift 2
fi
../shared/gpu/pack -j2 >/dev/null
IMA_GPU_TESTS=$tests scripts/gpu-trim decode_layer >/dev/null
layers=(decode_layer)
for set in "$@"; do
    name=${set%%=*}
    IFS=, read -ra patches <<< "${set#*=}"
    bash bench/explore/layer-patched.sh "$name" "${patches[@]}" >/dev/null
    layers+=("decode_layer_$name")
done
source scripts/cuda-env
cache=$(mktemp -d)
for layer in "${layers[@]}"; do
    ".gpu/bin/$layer" precompile "$cache/ptx" 9.0 >/dev/null
done
tar cf - -C "$cache" ptx | xz -T2 -6 > .gpu/ptx.tar.xz
rm -rf "$cache"
printf '%s\n' "${layers[@]:1}" > .gpu/layers.txt
git rev-parse --short HEAD > .gpu/commit
# What the call carries: the tree's tracked and untracked files, and .gpu.
tree=$(git ls-files -z --cached --others --exclude-standard | xargs -0 du -cb 2>/dev/null | tail -1 | cut -f1)
gpu=$(du -sb .gpu | cut -f1)
echo "staged: ${layers[*]}; tests: $(wc -l < .gpu/tests.txt); $(((tree + gpu) >> 20)) MiB with the tree (64 at most)"
