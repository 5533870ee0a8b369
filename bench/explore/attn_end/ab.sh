#!/usr/bin/env bash
# On the GPU machine: paged_attn's end (its warps' meeting in the fragment layout, the
# acquire-release count, the one-pass weighing) against the kernel before it, as the
# decode layer runs them: .gpu/bin/decode_layer_before is the layer built from the commit
# before (git stash; cargo build --release --example decode_layer), .gpu/bin/decode_layer
# the tree's. Each kernel timed alone by ncu (clocks and caches as a replay leaves them),
# then the layer's bench (CUDA graph replays), alternating, twice. Other staged builds of
# the layer can be named instead (decode_layer_p64: paged_attn's runs of 64 tokens).
#   bash bench/explore/attn_end/ab.sh [BIN...]
set -uo pipefail
cd "$(dirname "$0")/../../.."
tmp=${TMPDIR:-/tmp}/attn-end
mkdir -p "$tmp"
bins=("$@")
[ ${#bins[@]} -gt 0 ] || bins=(decode_layer_before decode_layer)
for pass in 1 2; do
  for bin in "${bins[@]}"; do
    for b in 1 32; do
      # shellcheck disable=SC2046
      ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv \
        .gpu/bin/$bin dump "$tmp/k" $(printf '1024 %.0s' $(seq "$b")) > "$tmp/ncu.csv" 2>/dev/null
      python3 bench/ncu_kernel_times.py "pass $pass, $bin, B = $b" "$tmp/ncu.csv"
    done
  done
done
for pass in 1 2; do
  for bin in "${bins[@]}"; do
    echo "== pass $pass, $bin"
    bash .gpu/on-device run "$bin" bench 2>&1 | grep -vE "^\s*$" | tail -12
  done
done
rm -rf "$tmp"
