#!/usr/bin/env bash
# Adds ab.py's wheels to the .gpu that bench/explore/prepared-build.sh made (whose
# paged_kernels is this tree's specs/paged.ima), each a form of specs/paged.ima written to
# target/empty: pold (at 3402a6c, the partitions' rule from the grid); pl.patch on it (the
# rule from the length, the grid as before); pz.patch on it (the same with the partition
# the grid's slowest dimension); pzc.patch on 1946357's (the capped grid, its blocks
# partition-major where the pairs are few). Then call the device with carry [".gpu"] and
# run ab.py with the wheels installed.
set -euo pipefail
cd "$(dirname "$0")/../../.."
out=target/empty
mkdir -p "$out"
git show 3402a6c:specs/paged.ima > "$out/pold.ima"
git show 1946357:specs/paged.ima > "$out/paged_1946357.ima"
patch -s -o "$out/pl.ima" "$out/pold.ima" bench/explore/empty/pl.patch
patch -s -o "$out/pz.ima" "$out/pold.ima" bench/explore/empty/pz.patch
patch -s -o "$out/pzc.ima" "$out/paged_1946357.ima" bench/explore/empty/pzc.patch
bench/explore/explorer-wheels.sh "$out/pold.ima" "$out/pl.ima" "$out/pz.ima" "$out/pzc.ima"
