#!/usr/bin/env bash
# Builds the decode layer's example with the given patches applied to the tree for the
# while (the files they touch must have no changes), as .gpu/bin/decode_layer_NAME, so
# that a GPU call checks it against the f64 reference and times it beside the tree's
# (`bash .gpu/on-device run decode_layer_NAME check|bench`). The files are restored after.
#   bench/explore/layer-patched.sh NAME PATCH...
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/cuda-env
name=$1
shift
mapfile -t files < <(for p in "$@"; do git apply --numstat "$p" | cut -f3; done | sort -u)
git diff --quiet -- "${files[@]}" || { echo "layer-patched.sh: ${files[*]} have changes" >&2; exit 1; }
trap 'git checkout -- "${files[@]}"' EXIT
for p in "$@"; do git apply "$p"; done
cargo build -j2 -q --release --example decode_layer
mkdir -p .gpu/bin
cp target/release/examples/decode_layer ".gpu/bin/decode_layer_$name"
echo ".gpu/bin/decode_layer_$name"
