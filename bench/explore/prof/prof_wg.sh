#!/usr/bin/env bash
# Throwaway, on the GPU machine: ncu --set full of gptq_gemm_wg's 4th launch at M = 16,
# K = 8192, N = 28672, its SASS-level stall samples as CSV into $OUT.
set -uo pipefail
cd "$(dirname "$0")"
site=$(mktemp -d)
python3 -m pip install -q --no-index --no-deps --target "$site" ../../../.gpu/wheels/gemm_tma_kernels-*.whl && export PYTHONPATH=$site
python3 prof_wg.py 16 8192 28672 # compile the module once (PTX cache)
for shape in "16 8192 28672" "32 4096 28672"; do
  tag=$(echo $shape | tr ' ' _)
  timeout 200 ncu --set full --import-source no --clock-control none -k regex:gptq_gemm_wg --launch-skip 3 -c 1 -f -o "$OUT/wg_$tag" python3 prof_wg.py $shape > "$OUT/ncu_$tag.log" 2>&1
  ncu -i "$OUT/wg_$tag.ncu-rep" --page source --csv --print-source sass > "$OUT/sass_$tag.csv" 2>&1
  ncu -i "$OUT/wg_$tag.ncu-rep" --page details --csv > "$OUT/details_$tag.csv" 2>&1
  rm -f "$OUT/wg_$tag.ncu-rep"
  wc -c "$OUT"/*"$tag"*
done
