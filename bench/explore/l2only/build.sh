#!/usr/bin/env bash
# Builds the wheel gemm_tma_l2o: l2only.patch (every unit's words the same tile,
# read from L2; timing only). Timed by bench/explore/against.py l2o.
exec "$(dirname "$0")/../patched-wheels.sh" bench/explore/l2only/l2only.patch l2o
