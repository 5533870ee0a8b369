#!/usr/bin/env bash
# Throwaway (issue 21), on the GPU machine: ncu --set full of gptq_gemm_wg16 at M = 16,
# K = 8192, N = 28672 (the 4th launch) from the tree's wheel and from patched wheels, its
# details and SASS-level stall samples as CSV into $OUT:
#     bash bench/explore/prof/prof_against.sh main l2o
set -uo pipefail
cd "$(dirname "$0")"
site=$(mktemp -d)
python3 -m pip install -q --no-index --no-deps --target "$site" ../../../.gpu/wheels/*.whl && export PYTHONPATH=$site
for name in "$@"; do
  python3 prof_against.py "$name"  # the module's PTX compiled once, outside ncu
  timeout 200 ncu --set full --import-source no --clock-control none -k regex:gptq_gemm_wg16 --launch-skip 3 -c 1 -f -o "$OUT/$name" python3 prof_against.py "$name" > "$OUT/ncu_$name.log" 2>&1
  ncu -i "$OUT/$name.ncu-rep" --page source --csv --print-source sass > "$OUT/sass_$name.csv" 2>&1
  ncu -i "$OUT/$name.ncu-rep" --page details --csv > "$OUT/details_$name.csv" 2>&1
  ncu -i "$OUT/$name.ncu-rep" --page raw --csv > "$OUT/raw_$name.csv" 2>&1
  rm -f "$OUT/$name.ncu-rep"
  wc -c "$OUT"/*"$name"*
done
