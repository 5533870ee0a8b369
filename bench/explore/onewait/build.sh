#!/usr/bin/env bash
# Builds the wheel gemm_tma_ow: onewait.patch (ima_wg_w4_stage at 3 or 4 register sets
# folds both halves after the stage's one wait for its MMAs, none in its middle). Timed
# by bench/explore/against.py ow.
exec "$(dirname "$0")/../patched-wheels.sh" bench/explore/onewait/onewait.patch ow
