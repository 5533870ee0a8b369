#!/usr/bin/env bash
# The second of session 26's prepared calls (after prepared-run.sh): decode_gpu under
# compute-sanitizer memcheck, and the layer against torch at B = 1, 8 and 32
# (bench/decode-layer-on-device.sh check), 540 s of limits.
#   bash bench/explore/prepared-run-2.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
echo "== sanitize decode_gpu"
timeout 300 bash .gpu/on-device sanitize decode_gpu 2>&1 | grep -E "^test |test result|ERROR SUMMARY"
echo "== decode layer check"
timeout 240 bash bench/decode-layer-on-device.sh check 2>&1 | tail -12
