#!/usr/bin/env bash
# Builds, on the build machine, what the GPU run prepared in session 28 needs
# (bench/explore/prepared-run.sh runs it there): the wheels of bench/explore/rp/rp5.ima
# (gen5.py: rp16b_s5 and its idle pipeline, each with its producer's stamps). Then call the
# device with carry [".gpu"]: bash bench/explore/prepared-run.sh.
#   bench/explore/prepared-build.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
(cd bench/explore/rp && python3 gen5.py)
bench/pack-and-note.sh -j2 --example bench
# scripts/python-wheels builds into .gpu/wheels (after pack, which empties .gpu); it
# checks rmsnorm's and quant's wheels on the CPU, so it gets those too.
scripts/python-wheels specs/rmsnorm.ima specs/quant.ima bench/explore/rp/rp5.ima
du -sh .gpu
