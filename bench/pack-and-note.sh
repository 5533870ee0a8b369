#!/usr/bin/env bash
# Builds and stages everything for the GPU machine (../shared/gpu/pack: test binaries,
# examples, bins into .gpu/) and notes the commit in .gpu/commit, since the copy of the
# working tree on the GPU machine has no git history. Then, there: bash bench/run-on-device.sh
#   bench/pack-and-note.sh [extra cargo args]
set -euo pipefail
cd "$(dirname "$0")/.."
../shared/gpu/pack "$@"
commit=$(git rev-parse --short HEAD)
# Uncommitted changes (tracked or not) make the numbers those of a dirty tree: say so.
[ -z "$(git status --porcelain --untracked-files=normal)" ] || commit="$commit (dirty working tree)"
echo "$commit" > .gpu/commit
echo "noted commit $commit in .gpu/commit"
