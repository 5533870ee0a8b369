#!/usr/bin/env bash
# Throwaway, session 42 (issue 21), on the GPU machine: ncu --set full of main's
# gptq_gemm_wg16 and of diag's d6 and d7 (bench/explore/diag: main's stage with lo not
# waiting, with and without the tile ends' stores) at M = 16, K = 8192, N = 28672, the 4th
# launch each, their SASS-level stall samples and details as CSV into $OUT: which of the
# tile ends' instructions (or the stage's, after them) hold the consumers 2.3 µs in d6
# that d7 does not. Wheels: bash bench/explore/diag/build.sh (gemm_tma's and diag's).
set -uo pipefail
cd "$(dirname "$0")"
site=$(mktemp -d)
python3 -m pip install -q --no-index --no-deps --target "$site" ../../../.gpu/wheels/*.whl && export PYTHONPATH=$site
for name in main d6_16 d7_16; do
  python3 prof_d67.py "$name"  # the module's PTX compiled once, outside ncu
  timeout 150 ncu --set full --import-source no --clock-control none -k "regex:^(gptq_gemm_wg16|$name)" --launch-skip 3 -c 1 -f -o "$OUT/$name" python3 prof_d67.py "$name" > "$OUT/ncu_$name.log" 2>&1
  ncu -i "$OUT/$name.ncu-rep" --page source --csv --print-source sass > "$OUT/sass_$name.csv" 2>&1
  ncu -i "$OUT/$name.ncu-rep" --page details --csv > "$OUT/details_$name.csv" 2>&1
  rm -f "$OUT/$name.ncu-rep"
  wc -c "$OUT"/*"$name"*
done
