#!/usr/bin/env bash
# Builds, on the build machine, what the GPU run prepared in session 27 needs
# (bench/explore/prepared-run.sh runs it there): the wheels of gemm.ima, gemm_tma.ima and
# bench/explore/rp/rp2.ima (gen2.py) and rp3.ima (gen3.py). Then call the device with carry [".gpu"]:
# bash bench/explore/prepared-run.sh.
#   bench/explore/prepared-build.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
(cd bench/explore/rp && python3 gen2.py && python3 gen3.py)
bench/pack-and-note.sh -j2 --example bench
# scripts/python-wheels builds into .gpu/wheels (after pack, which empties .gpu); it
# checks rmsnorm's and quant's wheels on the CPU, so it gets those too.
scripts/python-wheels specs/rmsnorm.ima specs/quant.ima specs/gemm.ima specs/gemm_tma.ima bench/explore/rp/rp2.ima \
    bench/explore/rp/rp3.ima
du -sh .gpu
