#!/usr/bin/env bash
# Builds stages6.py's wheel, gemm_tma_s6: stages6.patch (codegen, header, spec).
exec "$(dirname "$0")/../patched-wheels.sh" bench/explore/stages6/stages6.patch s6
