#!/usr/bin/env bash
# On the GPU machine: ncu --set full of one kernel launch of the decode layer's step at
# B = 32 (contexts of 1024, `decode_layer dump`, one step), its details and SASS-level
# samples and shared-memory wavefronts as CSV into $OUT (read them with a SASS table such
# as session 46's). KERNEL is a regex on the kernel's name, SKIP the launches of it to pass
# over: gptq_gemm_wg32 1 is the gate/up projection (QKV is 0, down 2).
#     bash bench/explore/prof/prof_layer.sh gptq_gemm_wg32 1
set -uo pipefail
cd "$(dirname "$0")/../../.."
kernel=$1 skip=${2:-0} name=${3:-$1-$2}
tmp=${TMPDIR:-/tmp}/prof-layer
mkdir -p "$tmp"
# shellcheck disable=SC2046
timeout 300 ncu --set full --import-source no --clock-control none --cache-control none -k "regex:$kernel" --launch-skip "$skip" -c 1 -f -o "$OUT/$name" \
  .gpu/bin/decode_layer dump "$tmp/k" $(printf '1024 %.0s' $(seq 32)) > "$OUT/ncu_$name.log" 2>&1
ncu -i "$OUT/$name.ncu-rep" --page source --csv --print-source sass > "$OUT/sass_$name.csv" 2>&1
ncu -i "$OUT/$name.ncu-rep" --page details --csv > "$OUT/details_$name.csv" 2>&1
rm -rf "$OUT/$name.ncu-rep" "$tmp"
wc -c "$OUT"/*"$name"*
