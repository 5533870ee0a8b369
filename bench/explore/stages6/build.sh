#!/usr/bin/env bash
# Builds the wheel gemm_tma_s6: stages6.patch (codegen, header, spec). Timed by
# bench/explore/against.py s6.
exec "$(dirname "$0")/../patched-wheels.sh" bench/explore/stages6/stages6.patch s6
