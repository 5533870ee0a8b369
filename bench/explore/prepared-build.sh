#!/usr/bin/env bash
# Builds, on the build machine, what session 32 left for the next session's first GPU call
# (bench/explore/prepared-run.sh runs it there): the wheel of bench/explore/rp/rp10.ima
# (gen10.py: s8's pipeline with idle consumers, the tile ends taken apart, and stamped).
# Then call the device with carry [".gpu"]: bash bench/explore/prepared-run.sh.
#   bench/explore/prepared-build.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
rm -rf .gpu && mkdir -p .gpu
git rev-parse --short HEAD > .gpu/commit
scripts/python-wheels specs/rmsnorm.ima specs/quant.ima bench/explore/rp/rp10.ima
du -sh .gpu
