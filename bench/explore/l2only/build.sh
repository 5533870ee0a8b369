#!/usr/bin/env bash
# Builds l2only.py's wheel, gemm_tma_l2o: l2only.patch (every unit's words the same tile,
# read from L2; timing only).
exec "$(dirname "$0")/../patched-wheels.sh" bench/explore/l2only/l2only.patch l2o
