#!/usr/bin/env bash
# Builds, on the build machine, what session 34 left for the next session's first GPU call
# (bench/explore/prepared-run.sh runs it there): gptq_gemm_wg16 in the pair order (branch
# `pairs`; if a fresh checkout lost the branch, it is remade from
# bench/explore/dyn/pairs.patch (sources and docs), its goldens blessed): gemm_tma_gpu's test binary, the
# bench, every Python wheel (tests/python/test_gpu.py) and bench/explore/dyn's wheel
# (dyn.py: s16, main's gptq_gemm_wg16 stamped, beside p16, the prototype, and gemm_tma's
# gptq_gemm_wg16, the branch's). Then call the device with carry [".gpu"]:
# bash bench/explore/prepared-run.sh 1, then 2 (and sanitize, its header says).
#   bench/explore/prepared-build.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ "$(git rev-parse --abbrev-ref HEAD)" != pairs ]; then
    if git rev-parse -q --verify pairs >/dev/null; then
        git checkout -q pairs
    else
        git checkout -q -b pairs
        git apply bench/explore/dyn/pairs.patch
        cargo build -j2 -q -p imac --bin imac
        IMA_BLESS=1 cargo test -j2 -q --test golden --test front_doors_drift >/dev/null
        (source scripts/cuda-env && IMA_BLESS=1 scripts/ptxas-report >/dev/null)
        git add -A && git commit -q -m "gptq_gemm_wg16 in the pair order, from bench/explore/dyn/pairs.patch"
    fi
fi
source scripts/cuda-env
rm -rf .gpu && mkdir -p .gpu/bin .gpu/wheels
cp ../shared/gpu/on-device .gpu/on-device
ws=$(pwd); echo "$ws" > .gpu/build-root; echo "" > .gpu/build-rel
git rev-parse --short HEAD > .gpu/commit
bin=$(cargo test --release --no-run -j2 --test gemm_tma_gpu --message-format=json 2>/dev/null | jq -r 'select(.reason=="compiler-artifact" and .executable != null) | .executable')
cp "$bin" .gpu/bin/ && basename "$bin" > .gpu/tests.txt
cargo build --release -j2 -q --example bench && cp target/release/examples/bench .gpu/bin/bench
echo bench > .gpu/bins.txt
strip .gpu/bin/*
CARGO_BUILD_JOBS=2 scripts/python-wheels >/dev/null
target/debug/imac compile bench/explore/dyn/dyn.ima --python -o target/pypkg/dyn --runtime-path "$ws/runtime" >/dev/null
(cd target/pypkg/dyn && CARGO_TARGET_DIR=$ws/target/python CARGO_BUILD_JOBS=2 "$ws/.cache/py-venv/bin/maturin" build --release --quiet -o "$ws/.gpu/wheels")
du -sh .gpu
