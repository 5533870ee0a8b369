#!/usr/bin/env bash
# Adds the wheel ropeattn_kernels to .gpu/wheels (beside the tree's paged_kernels and
# decode_kernels, which scripts/python-wheels or bench/explore/prepared-build.sh put
# there): gen.py's spec, from the tree's specs/paged.ima. Then, with the wheels carried:
# bash bench/explore/prepared-run.sh 8.
exec "$(dirname "$0")/../generated-wheel.sh" ropeattn
