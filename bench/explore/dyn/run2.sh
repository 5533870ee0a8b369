#!/usr/bin/env bash
# Session 34's second GPU call: pace.py; ncu of gptq_gemm_wg16's 4th launch (details CSV
# into $OUT); memcheck of the suite but the fuzzer and two GPUs.
set -uo pipefail
cd "$(dirname "$0")/../../.."
site=$(mktemp -d)
python3 -m pip install -q --no-index --no-deps --target "$site" .gpu/wheels/*.whl || exit 1
export PYTHONPATH=$site
(cd bench/explore/dyn && timeout 120 python3 -u pace.py 2>&1 | tail -8)
(cd bench/explore/dyn && python3 prof_wg16.py && timeout 150 ncu --set full --import-source no --clock-control none \
   -k regex:gptq_gemm_wg16 --launch-skip 3 -c 1 -f -o "$OUT/wg16" python3 prof_wg16.py > "$OUT/ncu.log" 2>&1;
 ncu -i "$OUT/wg16.ncu-rep" --page details --csv > "$OUT/details.csv" 2>&1;
 ncu -i "$OUT/wg16.ncu-rep" --page source --csv --print-source sass > "$OUT/sass.csv" 2>&1; rm -f "$OUT/wg16.ncu-rep"; wc -c "$OUT"/*)
bash .gpu/on-device sanitize -v 'gpu-a20e|multi_gpu' 2>&1 | grep -E "^test result|FAILED|ERROR SUMMARY|binaries failed" | sort | uniq -c | tail -20
