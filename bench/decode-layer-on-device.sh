#!/usr/bin/env bash
# On the GPU machine, after bench/pack-and-note.sh (with .gpu carried): the decode layer
# of examples/decode_layer against the PyTorch reference, and its speed beside torch's.
#   bash bench/decode-layer-on-device.sh check   # B = 1, 8, 32, contexts 1 .. 4096: imac vs torch
#   bash bench/decode-layer-on-device.sh bench   # B = 1 and 32 at 1024: imac (graph, kernel by kernel), torch
#   bash bench/decode-layer-on-device.sh ablate  # the graph with each launch left out in turn: what each adds to a replay
#   bash bench/decode-layer-on-device.sh kernels # the same steps' kernels, each timed by ncu, release and deferred
#   bash bench/decode-layer-on-device.sh conflicts # the same steps' kernels' shared-memory wavefronts and bank conflicts (ncu)
# Dumps go to $TMPDIR (about 2 GB for check); output to stdout and, when set, $OUT.
# With the wheels of scripts/python-wheels in .gpu/wheels, the layer also runs from Python
# (examples/decode_layer/decode_layer.py) beside torch.
set -euo pipefail
cd "$(dirname "$0")/.."
if ls .gpu/wheels/decode_kernels-*.whl >/dev/null 2>&1; then
    site=${TMPDIR:-/tmp}/decode-layer-site
    rm -rf "$site"
    python3 -m pip install -q --no-index --no-deps --target "$site" .gpu/wheels/decode_kernels-*.whl .gpu/wheels/paged_kernels-*.whl .gpu/wheels/gemm_kernels-*.whl .gpu/wheels/quant_kernels-*.whl .gpu/wheels/gemm_tma_kernels-*.whl
    export PYTHONPATH=$site${PYTHONPATH:+:$PYTHONPATH}
fi
tmp=${TMPDIR:-/tmp}/decode-layer
rm -rf "$tmp"
run() { bash .gpu/on-device run decode_layer "$@"; }
b32=$(python3 -c 'import random; r = random.Random(11); print(" ".join(str(r.randint(1, 4096)) for _ in range(29)), 1, 4096, 0)')
case ${1:-check} in
  check)
    run dump "$tmp/b1-1" 1
    run dump "$tmp/b1-4096" 4096
    run dump "$tmp/b8" 1 17 4096 513 1000 16 2048 0
    # shellcheck disable=SC2086
    run dump "$tmp/b32" $b32
    python3 bench/decode_layer_torch.py check "$tmp"/b1-1 "$tmp"/b1-4096 "$tmp"/b8 "$tmp"/b32
    ;;
  bench)
    run bench
    run dump "$tmp/b1-1024" 1024
    # shellcheck disable=SC2086
    run dump "$tmp/b32-1024" $(printf '1024 %.0s' $(seq 32))
    python3 bench/decode_layer_torch.py bench "$tmp"/b1-1024 "$tmp"/b32-1024
    ;;
  ablate)
    run ablate
    ;;
  kernels)
    # One step each (a dump runs it once), every kernel timed alone: clocks and caches as
    # the graph replay leaves them, not ncu's defaults (locked base clock, flushed caches).
    mkdir -p "$tmp"
    for b in 1 32; do
      for mode in off deferred; do
        # shellcheck disable=SC2046
        IMA_CHECKED=$mode ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv \
          .gpu/bin/decode_layer dump "$tmp/k" $(printf '1024 %.0s' $(seq "$b")) > "$tmp/ncu-b$b-$mode.csv" 2>/dev/null
        python3 bench/ncu_kernel_times.py "B = $b, $mode" "$tmp/ncu-b$b-$mode.csv"
      done
    done
    ;;
  conflicts)
    # Release, one step each: what each kernel's shared loads and stores take in wavefronts,
    # and how much of that bank conflicts add (gptq_gemm_wg16's word loads took 8 where 2
    # do until session 46: bench/RESULTS.md, "The pair decode's bank conflicts").
    mkdir -p "$tmp"
    m=$(python3 bench/ncu_shared_conflicts.py --metrics)
    for b in 1 32; do
      # shellcheck disable=SC2046
      ncu --clock-control none --cache-control none --metrics "$m" --csv \
        .gpu/bin/decode_layer dump "$tmp/k" $(printf '1024 %.0s' $(seq "$b")) > "$tmp/ncu-b$b-shared.csv" 2>/dev/null
      python3 bench/ncu_shared_conflicts.py "B = $b" "$tmp/ncu-b$b-shared.csv"
    done
    ;;
esac
rm -rf "$tmp"
