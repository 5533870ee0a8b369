#!/usr/bin/env bash
# Builds, on the build machine, what session 33 left for the next session's first GPU call
# (bench/explore/prepared-run.sh runs it there), from branch wg-after (gptq_gemm_wg taking
# each group's scale after the MMA at 16 and 32 rows, through ima.cuh's ima_wg_w4_stage):
# gemm_tma_gpu's test binary; the bench as the branch has it (`bench`), as main has it
# (`bench_main`) and with the scale after the MMA at 16 rows only (`bench_after16`: the
# 32-row path spills 4 bytes in the i32 release entry point, which scripts/ptxas-report
# refuses); the wheels of specs/gemm.ima and specs/gemm_tma.ima for bench/explore/wg32.py.
# Then call the device with carry [".gpu"]: bash bench/explore/prepared-run.sh.
#   bench/explore/prepared-build.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
[ "$(git rev-parse --abbrev-ref HEAD)" = wg-after ] || { echo "run this on branch wg-after (git checkout wg-after)" >&2; exit 1; }
source scripts/cuda-env
rm -rf .gpu && mkdir -p .gpu/bin .gpu/wheels
cp ../shared/gpu/on-device .gpu/on-device
ws=$(pwd); echo "$ws" > .gpu/build-root; echo "" > .gpu/build-rel
bin=$(cargo test --release --no-run -j2 --test gemm_tma_gpu --message-format=json 2>/dev/null | jq -r 'select(.reason=="compiler-artifact" and .executable != null) | .executable')
cp "$bin" .gpu/bin/ && basename "$bin" > .gpu/tests.txt
cargo build --release -j2 -q --example bench && cp target/release/examples/bench .gpu/bin/bench
branch=$(git rev-parse --abbrev-ref HEAD)
git stash -q -u 2>/dev/null || true
git checkout -q main && cargo build --release -j2 -q --example bench && cp target/release/examples/bench .gpu/bin/bench_main
git checkout -q "$branch"
sed -i 's/^        else if (M <= 32 \&\& after) run(ImaConst<32>{}, ImaConst<1>{});$//' specs/gemm_tma.ima
IMA_BLESS=1 cargo test -j2 -q --test golden >/dev/null
cargo build --release -j2 -q --example bench && cp target/release/examples/bench .gpu/bin/bench_after16
git checkout -q specs/gemm_tma.ima tests/out
git stash pop -q 2>/dev/null || true
cargo build --release -j2 -q --example bench
strip .gpu/bin/*
printf "bench\nbench_main\nbench_after16\n" > .gpu/bins.txt
cargo build -j2 -q -p imac --bin imac
for nm in gemm_tma gemm; do
    target/debug/imac compile specs/$nm.ima --python -o target/pypkg/$nm --runtime-path "$ws/runtime" >/dev/null
    (cd target/pypkg/$nm && CARGO_TARGET_DIR=$ws/target/python CARGO_BUILD_JOBS=2 "$ws/.cache/py-venv/bin/maturin" build --release --quiet -o "$ws/.gpu/wheels")
done
du -sh .gpu
