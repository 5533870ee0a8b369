#!/usr/bin/env bash
# Adds ab.py's wheels to the .gpu that bench/explore/prepared-build.sh made (whose
# paged_kernels is this tree's specs/paged.ima): pold (specs/paged.ima at 3402a6c, the
# partitions' rule from the grid), pl (the rule from the length, the grid as before), pz
# (the same with the partitions the grid's slowest dimension) and pzc (1946357's capped
# grid, its blocks partition-major where the pairs are few). Then call the device with
# carry [".gpu"] and run ab.py with the wheels installed.
set -euo pipefail
cd "$(dirname "$0")/../../.."
mkdir -p target/empty && git show 3402a6c:specs/paged.ima > target/empty/pold.ima
bench/explore/explorer-wheels.sh target/empty/pold.ima bench/explore/empty/pl.ima bench/explore/empty/pz.ima bench/explore/empty/pzc.ima
