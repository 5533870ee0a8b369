#!/usr/bin/env bash
# Builds pdl.py's wheel, gemm_tma_pdl: pdl.patch (header and runtime).
exec "$(dirname "$0")/../patched-wheels.sh" bench/explore/pdl/pdl.patch pdl
