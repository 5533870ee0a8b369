#!/usr/bin/env bash
# Builds the Python wheel of each explorer spec given (bench/explore/*/*.ima) into
# .gpu/wheels, with target/debug/imac (built first) and the maturin of .cache/py-venv
# (scripts/python-wheels makes it): what prepared-build.sh and ahead/build.sh share.
#   bench/explore/explorer-wheels.sh SPEC...
set -euo pipefail
cd "$(dirname "$0")/../.."
ws=$(pwd)
mkdir -p .gpu/wheels
for spec in "$@"; do
    name=$(basename "$spec" .ima)
    target/debug/imac compile "$spec" --python -o "target/pypkg/$name" --runtime-path "$ws/runtime" >/dev/null
    (cd "target/pypkg/$name" && CARGO_TARGET_DIR=$ws/target/python CARGO_BUILD_JOBS=2 "$ws/.cache/py-venv/bin/maturin" build --release --quiet -o "$ws/.gpu/wheels")
done
