#!/usr/bin/env bash
# Puts in .gpu, hard-linked from what bench/explore/landing-stage.sh left in
# .cache/gpu-landing, what `bash bench/explore/prepared-run.sh 27 suite` (the test
# binaries) or `... 27 layers` (the layers and their modules) carries.
#   bench/explore/landing-pick.sh suite|layers
set -euo pipefail
cd "$(dirname "$0")/../.."
rm -rf .gpu
cp -al .cache/gpu-landing .gpu
case "${1:?landing-pick.sh suite|layers}" in
suite) rm -f .gpu/bin/decode_layer* .gpu/ptx.tar.xz ;;
layers)
    find .gpu/bin -type f ! -name 'decode_layer*' -delete
    # A new file, not the staged one it is hard-linked to.
    rm -f .gpu/tests.txt
    : > .gpu/tests.txt
    ;;
esac
du -sh .gpu
