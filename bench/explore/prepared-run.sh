#!/usr/bin/env bash
# Runs, on the GPU machine, the prepared calls: bench/explore/prepared-build.sh builds all
# of 1, 2, 14, 16, 17, 20 and 22 here, and bench/explore/prepared-stage.sh N puts in .gpu what
# call N carries (carry [".gpu"]). Session 55 left them in this order: 1, 18, 19, then
# sanitize (prepared-stage.sh sanitize; `bash .gpu/on-device sanitize -v
# 'gpu-a20e|multi_gpu'`), 2, 16, 17 and 14. Session 56 ran 1, 18, 19, sanitize and 2 at
# 2b03e9c on an H100 (bench/RESULTS.md, "The GPU suite at 2b03e9c"). Session 57 changed the
# release entry points (6add24a, 1e04220) and got one short call; session 58 ran 1 and 20 at
# a265363, then 20, 1, sanitize, 2, 16, 17 and 14 at 0c6a4d9 on an H100 (bench/RESULTS.md,
# "The suite and memcheck at session 57's kernels"); session 59 ran 1, sanitize and 20 at
# 6110ed1, landed earlytiles.patch, then ran 1, sanitize, 20 and 22 at its HEAD, and 23
# twice (bench/RESULTS.md, "The suite and memcheck at 6110ed1"); session 60 ran 9, 20, 24
# and 20 at 057e033, landed 9187b5c, ran 9, 1, sanitize, 22, 20 and 20 at 7bb01dc, landed
# 34c97b9 and ran sanitize's gemm_tma, decode and specs binaries there (bench/RESULTS.md,
# "gptq_gemm_wg32's timeline"); session 61 ran 20 and 9 at 34c97b9, landed f18c448 and ran
# 1, 22, the layer's check and sanitize there (bench/RESULTS.md, "O on gptq_gemm_wg32, the
# blocks' spread traced to their runs"), and left .cache/gpu-staged (f18c448's build) with
# decode_layer_slotsmem, _normqkv and _spreadsum (bench/explore/slotsmem, normqkv,
# spreadsum; rebuild each with bench/explore/layer-patched.sh after a new prepared-build.sh)
# for 20, and gemm_tma_wgs31's wheel for 9; session 62 added call 25: the tree's layer
# beside decode_layer_pdllate, _pdlw4, _pdlattn, _pdlattne and _pdlnorm
# (bench/explore/pdllate, pdlwords, pdlattn, pdlnorm), each by IMA_PDL's modes, as 20 runs
# its layers, and ran it once (bench/RESULTS.md, session 62); session 63 ran 25 with the
# tree's, bench/explore/pdlattn2's pdla and pdlb, pdlspread's, bench/explore/pdlpre's
# pdlpre, pdlpre2 and pdlpre3, and session 61's spreadsum (bench/RESULTS.md, session 63),
# and added 26 (the tree's, pdlb, and pdlpre's pdlc and pdlcnc; not yet run);
# and NO_BEFORE=1 for prepared-stage.sh 20, which leaves the previous build's layer out.
# 20 stays the before-and-after check of a kernel change, 22 the layer's whole table.
# Session 36 ran calls 1 and 2 at 738cc26,
# session 38 calls 1 and 3 at bb51e88 (bench/RESULTS.md, "Four quarters' registers"); the
# calls whose explorers have since been run or dropped say so:
#   bash bench/explore/prepared-run.sh 1: the whole GPU suite but the fuzzer and the
#     two-GPU test;
#   bash bench/explore/prepared-run.sh 2: the fuzzer's tests, its binary run by test
#     name (the whole binary outlasted 400 s on a fresh machine; by name session 38's
#     took 149 s and 74 s, session 45's 277 s and 108 s), tests/python/test_gpu.py;
#     carry .gpu/bin and only the wheels test_gpu.py imports (64 MiB);
#   bash bench/explore/prepared-run.sh 3: bench/explore/sets/sets.py (2, 3 and 4 quarters'
#     register sets; session 38 made 4 the default at 16 rows after it);
#   bash bench/explore/prepared-run.sh 4: bench/explore/against.py s6, then
#     bench/explore/pdl2/pdl2.py (their wheels from stages6/build.sh and pdl2/build.sh,
#     after prepared-build.sh; session 44's prepared forms, run by session 45), the DOT into $OUT; the
#     timers need only the wheels: move .gpu/bin aside first, so that the call's carry
#     (the tree and .gpu) stays under 64 MiB;
#   bash bench/explore/prepared-run.sh 5: bench/explore/wgrate (built there with nvcc),
#     then bench/explore/against.py l2o ow (the wheels of l2only/build.sh and
#     onewait/build.sh, after prepared-build.sh; session 45's prepared forms, run by session 46); .gpu/bin
#     aside, as for 4;
#   bash bench/explore/prepared-run.sh 6: session 46's unfinished check, decode_gpu (its
#     B = 32 reference test has not run since QKV went to gptq_gemm_wg32 at 04eac55),
#     then every decode-layer kernel's shared-memory bank conflicts (decode-layer-on-device.sh
#     conflicts); carry .gpu/bin's decode_gpu and decode_layer (run by session 47);
#   bash bench/explore/prepared-run.sh 7: bench/explore/lean/time_lean.py, the tree's
#     paged_attn against lean (measured by session 47) and lean2 (prepared by it), after
#     scripts/python-wheels and bench/explore/lean/build.sh; carry [".gpu/wheels"] (run by
#     session 48: lean2 slower everywhere);
#   bash bench/explore/prepared-run.sh 8: bench/explore/pmajor/time_pmajor.py (paged_attn's
#     blocks in partition-major order against the tree's), bench/explore/ropeattn's
#     rope_cache fused into paged_attn against the two launches, then bench/explore/pstamp's
#     timeline of the tree's kernel (session 48 ran it once, B = 1's rows then stale),
#     after scripts/python-wheels and the three explorers' build.sh; carry the paged,
#     decode, pmajor, ropeattn and pstamp wheels (session 48's prepared forms, run by
#     session 49; paged_attn's body has since moved to ima.cuh's ima_paged_attend, which
#     pmajor.patch and pstamp's and ropeattn's gen.py, edits of paged.ima's text, predate);
#   bash bench/explore/prepared-run.sh 9: bench/explore/wgstamp/time_wgstamp.py,
#     gptq_gemm_wg32's timeline at the layer's four projections, after
#     bench/explore/prepared-build.sh and bench/explore/wgstamp/build.sh (its wheels into
#     .cache/gpu-staged/wheels), prepared-stage.sh 9; sessions 49 and 59 got nothing from
#     it in 300 s: the stamped kernel's first launch hung (a whole-warp shuffle in lane
#     0's branch), which session 59 found and fixed; session 60 ran it twice (before and
#     after 9187b5c) and left it timing each block's run rotated over the SMs too
#     (whether the blocks slow over their units follow their SM or their run), not yet run;
#   bash bench/explore/prepared-run.sh 10: bench/explore/fence (what a gpu-scope release
#     costs while the SM streams; session 51 ran all but its cp.async rows) and
#     bench/explore/mega/mega_chain 34 (forms 42 to 45, the megakernel's ring filled by
#     cp.async, and 46 to 51, forms with a B = 1 GEMV's arithmetic, prepared by session 51
#     after its forms 34 to 41 ran), then mega_chain 52 (forms 52 to 54: the dependencies
#     through a hub a cluster), both built there by nvcc; needs no carry;
#   bash bench/explore/prepared-run.sh 11: bench/explore/relaxattn/time_relax.py, the
#     tree's paged_attn against one whose blocks count their partitions relaxed (not
#     correct: what the count's release costs), after scripts/python-wheels and
#     bench/explore/relaxattn/build.sh; carry the paged and relaxattn wheels;
#   (12 ran in session 53 with gen.py's forms in the tree as specs/gemm_cluster.ima, at
#   51e423d: every cluster form slower than the tree's kernels, its stream-only twins too;
#   bench/RESULTS.md, "W4A16 products whose K is split across a thread-block cluster". 13
#   and 15 are moot since.)
#   bash bench/explore/prepared-run.sh 12: bench/explore/cl/time_cl.py, the cluster
#     split-K W4A16 forms of cl_gemm.cu (built there by nvcc) against the kernels the layer
#     takes on its four projections at 32, 8 and 1 rows, and gen.py's spec forms of the same
#     product (`launch ... cluster(CK)`; session 52's prepared forms); carry the gemm,
#     gemm_tma, decode, quant and cl wheels (scripts/python-wheels with
#     IMA_WHEEL_ARCH=sm_90a, then bench/explore/cl/build.sh);
#   bash bench/explore/prepared-run.sh 13: bench/explore/cl/layer_cl.py, the decode layer
#     from Python at B = 1 and 32 (contexts of 1024) with QKV, O and down on gen.py's spec
#     forms against the tree's kernels (and with clattn's paged_attn_rope_cl where its wheel
#     is carried); carry .gpu/bin/decode_layer (for the dumps) and the decode, paged, gemm,
#     quant, gemm_tma, cl and clattn wheels;
#   bash bench/explore/prepared-run.sh 14: bench/explore/clattn/time_clattn.py, paged_attn
#     whose partitions meet in a thread-block cluster (no workspace, count or fence)
#     against the tree's; carry the paged and clattn wheels (bench/explore/clattn/build.sh);
#   bash bench/explore/prepared-run.sh 15: session 52's work in one call: tests/cluster_gpu.rs,
#     then 12, 13 and 14; carry .gpu with .gpu/bin holding only cluster_gpu-* and
#     decode_layer (the rest moved aside, and .gpu/tests.txt naming cluster_gpu alone) and
#     the wheels 12 to 14 name (about 20 MB in all);
#   bash bench/explore/prepared-run.sh 16: bench/explore/mega/mega_chain 57 (built there by
#     nvcc; no carry): forms 57 to 66 (session 55's), whether the megakernel's consumers
#     decode a B = 1 GEMV at the ring's rate with x loaded ahead of a unit's slot and with
#     16 consumer warps an SM, and whether matrices stored unit by unit (a unit one 16 KB
#     bulk copy) stream faster than strips' boxes, beside forms 17, 46, 19, 47, 52 and 55;
#   bash bench/explore/prepared-run.sh 17: bench/explore/stream/time_stream.py, the access
#     shapes' read rates, now with the t* kernels reading the same matrices as stored strip by
#     strip (session 55's question beside 16's forms 62 to 66: would a layout prepared at
#     load time let the tree's GEMVs stream faster); carry the stream wheel
#     (bench/explore/explorer-wheels.sh bench/explore/stream/stream.ima);
#   bash bench/explore/prepared-run.sh 18: bench/explore/spattn/time_spattn.py, paged_attn
#     whose blocks load a guessed partition's page ids with the sequence's length and issue
#     their first tiles before staging the queries (one round trip fewer before the first
#     tile) against the tree's, then on tables four times as wide (the guess fails); then
#     the decode layers built with session 55's patches (bench/explore/layer-patched.sh:
#     decode_layer_spattn, _gemvload with bench/explore/gemvload/gemvload.patch, _both)
#     checked against the f64 reference; carry the paged and spattn wheels
#     (bench/explore/spattn/build.sh) and .gpu/bin's decode_layer*; run by session 56, and
#     no longer built by prepared-build.sh since session 57 (build its parts by hand);
#   bash bench/explore/prepared-run.sh 19: `decode_layer bench` of the tree's layer and of
#     the three patched ones, one process each (same carry as 18; run it twice for a second
#     pass); run by session 56, and no longer built, as 18;
#   bash bench/explore/prepared-run.sh 20: the layer and the index-reading kernels before and
#     after a kernel change, each layer's `check` first, then in alternating processes:
#     `decode_layer bench` and `bench --only embedding,reshape_and_cache,paged_attn` of
#     .gpu/bin's *_before (the previous staging's bench and decode_layer, which
#     prepared-build.sh keeps in .cache/gpu-before; any other decode_layer_* and bench_*
#     staged by hand as well, e.g. by bench/explore/layer-patched.sh) and of the tree's,
#     twice each; prepared-stage.sh 20 (session 59 left bench/explore/wgpick's two layers
#     in .cache/gpu-staged/bin for it: QKV on gptq_gemm, O on gptq_gemm_wg32);
#   bash bench/explore/prepared-run.sh 22: the layer's whole table on the machine lent:
#     bench/decode-layer-on-device.sh ablate (what each launch adds to a replay), kernels
#     (each kernel of a step timed by ncu, release and deferred, B = 1 and 32) and bench
#     (imac from Rust and from Python beside torch, eager and compiled); prepared-stage.sh 22;
#   bash bench/explore/prepared-run.sh 24: compute-sanitizer's synccheck (barriers and
#     warp-synchronous operations reached by only part of the threads they name: the
#     whole-warp shuffle in one lane's branch that hung wgstamp's kernel) over every GPU
#     test binary but the fuzzer and the two-GPU test, then racecheck (shared-memory
#     hazards) over paged_gpu's; prepared-stage.sh 24 (call 1's binaries; not yet run);
#   bash bench/explore/prepared-run.sh 23: bench/explore/kvpf/time_kvpf.py, the layer from
#     Python with the first sequences' KV pages asked of the L2 on a side stream beside the
#     first norm (or QKV), at B = 32 and 1, contexts of 1024; the kvpf wheel built by hand
#     (bench/explore/explorer-wheels.sh bench/explore/kvpf/kvpf.ima, then copied into
#     .cache/gpu-staged/wheels), prepared-stage.sh 23 (run by session 59: slower);
# then in a call of its own: bash .gpu/on-device sanitize -v 'gpu-a20e|multi_gpu' (the
# fuzzer's binary is gpu-a20e..., whose hash cargo keeps; memcheck leaves it and the two-GPU test out, as before).
set -uo pipefail
cd "$(dirname "$0")/../.."
# For a binary run here directly (under ncu or compute-sanitizer) rather than through
# on-device: on-device's own set-up (the build root's link) with no binary selected, and
# the CUDA libraries on the loader's path.
direct_runs() {
    bash .gpu/on-device test '^$' >/dev/null
    export LD_LIBRARY_PATH=${CUDA_HOME:-/usr/local/cuda}/lib64:${LD_LIBRARY_PATH:-}
}
# The staged layers' modules, compiled for sm_90a by prepared-build.sh, as the runtime's
# cache (IMA_PTX_CACHE): the layers then load without NVRTC. Where they are not staged,
# or not this machine's (another NVRTC, another architecture), the layer compiles as before.
precompiled() {
    [ -f .gpu/ptx.tar.xz ] || return 0
    python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2], filter="data")' \
        .gpu/ptx.tar.xz /tmp/ima-ptx && export IMA_PTX_CACHE=/tmp/ima-ptx/ptx
}
# Checks each layer named against the f64 reference (at once: every configuration counted,
# the one of largest error shown, and any other line, an error's, as it is), then times them,
# two alternating passes; a name NAME:0 is layer NAME with IMA_PROGRAMMATIC_LAUNCH=0 (timed
# only).
check_and_time_layers() {
    local bin run pass vars
    for bin in "$@"; do
        [[ $bin == *:0 ]] && continue
        timeout 200 bash .gpu/on-device run "$bin" check > "/tmp/check-$bin.log" 2>&1 &
    done
    wait
    for bin in "$@"; do
        [[ $bin == *:0 ]] && continue
        echo "== $bin check"
        awk '/out max err/ { n++; split($0, a, "out max err "); if (a[2] + 0 >= m) { m = a[2] + 0; w = $0 }; next }
             { print }
             END { printf "%d configurations; the largest out error: %s\n", n, w }' "/tmp/check-$bin.log"
    done
    for pass in 1 2; do
        for run in "$@"; do
            bin=${run%:0} vars=()
            [ "$run" != "$bin" ] && vars=(IMA_PROGRAMMATIC_LAUNCH=0)
            echo "== $bin ${vars[*]} bench ($pass)"
            # The device's copy rate, then each row: B, variant, median µs, its share of the
            # roofline and the roofline (µs) at that rate.
            env "${vars[@]}" timeout 100 bash .gpu/on-device run "$bin" bench 2>&1 |
                grep -E 'device copy|CUDA graph|kernel by kernel' |
                awk -F'|' '/device copy/ { print; next } { printf "B=%s%s:%s (%s of%s)\n", $2, $6, $7, $8, $5 }' |
                tr -s ' '
        done
    done
}
case "${1:-1}" in
1)
    timeout 560 bash .gpu/on-device test -v 'gpu-a20e|multi_gpu' 2>&1 | grep -E "^=== |test result|FAILED|panicked" | tail -60
    ;;
2)
    fuzz=$(grep -m1 '^gpu-a20e' .gpu/tests.txt) || exit 1
    first=every_example_spec_fuzzes_clean::
    timeout 330 bash .gpu/on-device run "$fuzz" --include-ignored --test-threads=1 "$first" 2>&1 | grep -E "^test |test result"
    timeout 130 bash .gpu/on-device run "$fuzz" --include-ignored --test-threads=1 --skip "$first" 2>&1 | grep -E "^test |test result"
    site=$(mktemp -d)
    python3 -m pip install -q --no-index --no-deps --target "$site" .gpu/wheels/*.whl || exit 1
    PYTHONPATH=$site timeout 120 python3 tests/python/test_gpu.py 2>&1 | tail -3
    ;;
3)
    site=$(mktemp -d)
    python3 -m pip install -q --no-index --no-deps --target "$site" .gpu/wheels/*.whl || exit 1
    (cd bench/explore/sets && PYTHONPATH=$site timeout 300 python3 -u sets.py 2>&1 | tail -8)
    ;;
4)
    site=$(mktemp -d)
    python3 -m pip install -q --no-index --no-deps --target "$site" .gpu/wheels/*.whl || exit 1
    PYTHONPATH=$site timeout 250 python3 -u bench/explore/against.py s6 2>&1 | tail -12
    PYTHONPATH=$site timeout 300 python3 -u bench/explore/pdl2/pdl2.py 2>&1 | tail -20
    ;;
5)
    nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -o /tmp/wgrate bench/explore/wgrate/wgrate.cu && /tmp/wgrate
    site=$(mktemp -d)
    python3 -m pip install -q --no-index --no-deps --target "$site" .gpu/wheels/*.whl || exit 1
    PYTHONPATH=$site timeout 300 python3 -u bench/explore/against.py l2o ow 2>&1 | tail -12
    ;;
6)
    timeout 300 bash .gpu/on-device test 'decode_gpu' 2>&1 | grep -E "^=== |^test |test result"
    timeout 240 bash bench/decode-layer-on-device.sh conflicts
    ;;
7)
    site=$(mktemp -d)
    python3 -m pip install -q --no-index --no-deps --target "$site" .gpu/wheels/paged_kernels-*.whl .gpu/wheels/lean*_kernels-*.whl || exit 1
    (cd bench/explore/lean && PYTHONPATH=$site timeout 300 python3 -u time_lean.py 2>&1 | tail -14)
    ;;
8)
    site=$(mktemp -d)
    python3 -m pip install -q --no-index --no-deps --target "$site" .gpu/wheels/paged_kernels-*.whl .gpu/wheels/decode_kernels-*.whl \
        .gpu/wheels/pmajor_kernels-*.whl .gpu/wheels/ropeattn_kernels-*.whl .gpu/wheels/pstamp_kernels-*.whl || exit 1
    (cd bench/explore/pmajor && PYTHONPATH=$site timeout 200 python3 -u time_pmajor.py 2>&1 | tail -16)
    (cd bench/explore/ropeattn && PYTHONPATH=$site timeout 150 python3 -u time_ropeattn.py 2>&1 | tail -8)
    (cd bench/explore/pstamp && PYTHONPATH=$site timeout 150 python3 -u time_pstamp.py 2>&1 | tail -45)
    ;;
9)
    site=$(mktemp -d)
    python3 -m pip install -q --no-index --no-deps --target "$site" .gpu/wheels/gemm_tma_kernels-*.whl .gpu/wheels/gemm_tma_wgs*_kernels-*.whl || exit 1
    (cd bench/explore/wgstamp && PYTHONPATH=$site timeout 400 python3 -u time_wgstamp.py 2>&1 | tail -150)
    ;;
10)
    for f in fence/fence mega/mega_chain; do
        "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -o "/tmp/${f#*/}" "bench/explore/$f.cu" 2>/dev/null || exit 1
    done
    timeout 60 /tmp/fence
    stdbuf -oL timeout 170 /tmp/mega_chain 34
    stdbuf -oL timeout 170 /tmp/mega_chain 52
    ;;
11)
    site=$(mktemp -d)
    python3 -m pip install -q --no-index --no-deps --target "$site" .gpu/wheels/paged_kernels-*.whl .gpu/wheels/relaxattn_kernels-*.whl || exit 1
    (cd bench/explore/relaxattn && PYTHONPATH=$site timeout 250 python3 -u time_relax.py 2>&1 | tail -16)
    ;;
12)
    "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -shared -Xcompiler -fPIC \
        -o bench/explore/cl/libcl.so bench/explore/cl/cl_gemm.cu || exit 1
    site=$(mktemp -d)
    python3 -m pip install -q --no-index --no-deps --target "$site" .gpu/wheels/gemm_kernels-*.whl .gpu/wheels/gemm_tma_kernels-*.whl \
        .gpu/wheels/decode_kernels-*.whl .gpu/wheels/quant_kernels-*.whl .gpu/wheels/cl_kernels-*.whl || exit 1
    (cd bench/explore/cl && PYTHONPATH=$site timeout 400 python3 -u time_cl.py 2>&1 | tail -40)
    ;;
13)
    site=$(mktemp -d)
    python3 -m pip install -q --no-index --no-deps --target "$site" .gpu/wheels/decode_kernels-*.whl .gpu/wheels/paged_kernels-*.whl \
        .gpu/wheels/gemm_kernels-*.whl .gpu/wheels/quant_kernels-*.whl .gpu/wheels/gemm_tma_kernels-*.whl .gpu/wheels/cl_kernels-*.whl || exit 1
    ls .gpu/wheels/clattn_kernels-*.whl >/dev/null 2>&1 && python3 -m pip install -q --no-index --no-deps --target "$site" .gpu/wheels/clattn_kernels-*.whl
    tmp=$(mktemp -d)
    timeout 90 bash .gpu/on-device run decode_layer dump "$tmp/b1" 1024 >/dev/null 2>&1 || exit 1
    # shellcheck disable=SC2046
    timeout 90 bash .gpu/on-device run decode_layer dump "$tmp/b32" $(printf '1024 %.0s' $(seq 32)) >/dev/null 2>&1 || exit 1
    PYTHONPATH=$site timeout 300 python3 -u bench/explore/cl/layer_cl.py "$tmp/b1" "$tmp/b32" 2>&1 | tail -20
    ;;
15)
    timeout 150 bash .gpu/on-device test 'cluster_gpu' 2>&1 | grep -E "^test |test result|FAILED|panicked" | tail -8
    for n in 12 13 14; do
        echo "== prepared-run.sh $n"
        bash "$0" "$n"
    done
    ;;
14)
    site=$(mktemp -d)
    python3 -m pip install -q --no-index --no-deps --target "$site" .gpu/wheels/paged_kernels-*.whl .gpu/wheels/clattn_kernels-*.whl || exit 1
    (cd bench/explore/clattn && PYTHONPATH=$site timeout 300 python3 -u time_clattn.py 2>&1 | tail -16)
    ;;
18)
    site=$(mktemp -d)
    python3 -m pip install -q --no-index --no-deps --target "$site" .gpu/wheels/paged_kernels-*.whl .gpu/wheels/spattn_kernels-*.whl || exit 1
    (cd bench/explore/spattn && PYTHONPATH=$site timeout 300 python3 -u time_spattn.py 2>&1 | tail -18)
    for bin in decode_layer_spattn decode_layer_gemvload decode_layer_both; do
        echo "== $bin check"
        timeout 100 bash .gpu/on-device run "$bin" check 2>&1 | tail -6
    done
    ;;
19)
    for bin in decode_layer decode_layer_spattn decode_layer_gemvload decode_layer_both; do
        echo "== $bin bench"
        timeout 140 bash .gpu/on-device run "$bin" bench 2>&1 | tail -12
    done
    ;;
17)
    site=$(mktemp -d)
    python3 -m pip install -q --no-index --no-deps --target "$site" .gpu/wheels/stream_kernels-*.whl || exit 1
    (cd bench/explore/stream && PYTHONPATH=$site timeout 300 python3 -u time_stream.py 2>&1 | tail -8)
    ;;
20 | 25 | 26)
    cat .gpu/before-commit .gpu/commit 2>/dev/null | paste -sd' ' | sed 's/^/before, after: /'
    precompiled
    # Every baseline staged (decode_layer_before, and any other decode_layer_*), then the tree's.
    layers=$(cd .gpu/bin && ls decode_layer_* 2>/dev/null) benches=$(cd .gpu/bin && ls bench_* 2>/dev/null)
    # Each layer's check first: against the f64 reference, and its first run on a fresh
    # machine compiles whatever modules were not precompiled with NVRTC (session 57's call
    # spent 45 to 70 s a binary there, and printed nothing before its timeout), which the
    # benches then find in the cache. The checks run at once: NVRTC takes a core a module,
    # five a binary, and the machine has 16; what they time is the benches'.
    declare -A pids programmatic
    for bin in $layers decode_layer; do
        timeout 200 bash .gpu/on-device run "$bin" check > "/tmp/check-$bin.log" 2>&1 &
        pids[$bin]=$!
    done
    for bin in $layers decode_layer; do
        rc=0
        wait "${pids[$bin]}" || rc=$?
        echo "== $bin check (rc=$rc)"
        tail -4 "/tmp/check-$bin.log"
        # A programmatic-launch layer whose graphs failed with every kernel node on a
        # programmatic edge (IMA_PDL unset: 1) is checked and timed with no node
        # cooperative instead (nocoop), in case the driver refuses a programmatic edge
        # into a cooperative node.
        programmatic[$bin]=1
        if [ "$rc" != 0 ] && [[ $bin == decode_layer_pdl* ]]; then
            rc=0
            IMA_PDL=nocoop timeout 200 bash .gpu/on-device run "$bin" check > "/tmp/check-$bin.log" 2>&1 || rc=$?
            echo "== $bin check, IMA_PDL=nocoop (rc=$rc)"
            tail -4 "/tmp/check-$bin.log"
            programmatic[$bin]=nocoop
        fi
    done
    for pass in 1 2; do
        for bin in $layers decode_layer; do
            # The programmatic-launch layers (bench/explore/pdllate, pdlwords, pdlattn) by
            # IMA_PDL: programmatic edges into every kernel (1, or nocoop as the check
            # chose), into all but the cooperative ones (plain), none (0: the entry points'
            # waits and triggers alone).
            one=${programmatic[$bin]}
            case $bin in
            decode_layer_pdllate) modes="$one 0" ;;
            decode_layer_pdlw4) modes="$one plain" ;;
            decode_layer_pdlpre2 | decode_layer_pdlc) modes="$one 0" ;;
            # Its peel's loads are the tree's (.nc), which ptxas may move above the wait:
            # timed with ordinary edges only (bench/explore/pdlpre's README).
            decode_layer_pdlcnc) modes=0 ;;
            decode_layer_pdl*) modes=$one ;;
            *) modes=- ;;
            esac
            for mode in $modes; do
                vars=()
                [ "$mode" = - ] || vars=("IMA_PDL=$mode")
                echo "== $bin ${vars[*]} bench ($pass)"
                # Each timing row as B, variant and median: five layers' full tables passed
                # the 12,000 characters a call returns (session 61).
                env "${vars[@]}" timeout 100 bash .gpu/on-device run "$bin" bench 2>&1 |
                    grep -E 'CUDA graph|kernel by kernel' |
                    awk -F'|' '{ printf "B=%s%s:%s\n", $2, $6, $7 }' | tr -s ' '
            done
        done
    done
    [ -x .gpu/bin/bench ] || exit 0
    for pass in 1 2; do
        for bin in $benches bench; do
            echo "== $bin ($pass)"
            OUT= timeout 60 bash .gpu/on-device run "$bin" --only embedding,reshape_and_cache,paged_attn \
                --variants release,twin 2>&1 | grep -E 'imac release|CUDA twin' |
                awk -F'|' '{ printf "%s%s:%s\n", $2, $4, $5 }' | tr -s ' '
        done
    done
    ;;
27)
    # Session 64's landing of programmatic launch by spec (docs/programmatic-launch.md),
    # staged by bench/explore/landing-stage.sh (27 suite: the test binaries; 27 layers:
    # the three layers and their precompiled modules, the two over the 64 MiB a call
    # carries together). The suite (graph_gpu's chains of kernels that start early among
    # it); then each layer checked against the f64 reference and timed, two passes:
    # f18c448's (decode_layer_before), pdlb's patch on it (bench/explore/pdlattn2) and the
    # tree's, with and without programmatic edges.
    cat .gpu/commit
    if [ "${2:-}" = suite ]; then
        timeout 420 bash .gpu/on-device test 2>&1 | grep -E "^=== |test result|FAILED|panicked" | tail -60
        exit 0
    fi
    precompiled
    echo "== decode_layer check, IMA_PROGRAMMATIC_LAUNCH=0"
    IMA_PROGRAMMATIC_LAUNCH=0 timeout 100 bash .gpu/on-device run decode_layer check 2>&1 | tail -2
    check_and_time_layers decode_layer_before decode_layer_pdlb decode_layer decode_layer:0
    ;;
22)
    precompiled
    # The short parts first: torch.compile's first build in bench may take minutes.
    for part in ablate:80 kernels:180 bench:320; do
        echo "== decode-layer-on-device.sh ${part%:*}"
        timeout "${part#*:}" bash bench/decode-layer-on-device.sh "${part%:*}" 2>&1 | grep -v '^\s*$' | tail -45
    done
    ;;
24)
    # Each binary as on-device runs them, under the tool.
    direct_runs
    root=$(cat .gpu/build-root) bin=$(pwd)/.gpu/bin
    export IMA_GPU=1
    check() { # TOOL BINARY SECONDS
        echo "=== $1 $2"
        (cd "$root" && timeout "$3" compute-sanitizer --tool "$1" --error-exitcode 86 --require-cuda-init no \
            --print-limit 10 "$bin/$2" --include-ignored --test-threads=1) 2>&1 | grep -E "test result|ERROR SUMMARY|RACECHECK SUMMARY|Barrier|divergent|=========" | tail -6
        echo "rc=${PIPESTATUS[0]}"
    }
    for t in $(grep -Ev '^(gpu-a20e|multi_gpu)' .gpu/tests.txt); do check synccheck "$t" 120; done
    check racecheck "$(grep -m1 '^paged_gpu' .gpu/tests.txt)" 200
    ;;
23)
    precompiled
    site=$(mktemp -d) tmp=$(mktemp -d)
    python3 -m pip install -q --no-index --no-deps --target "$site" .gpu/wheels/*.whl || exit 1
    timeout 90 bash .gpu/on-device run decode_layer dump "$tmp/b1" 1024 >/dev/null 2>&1 || exit 1
    # shellcheck disable=SC2046
    timeout 90 bash .gpu/on-device run decode_layer dump "$tmp/b32" $(printf '1024 %.0s' $(seq 32)) >/dev/null 2>&1 || exit 1
    (cd bench/explore/kvpf && PYTHONPATH=$site timeout 400 python3 -u time_kvpf.py "$tmp/b32" "$tmp/b1" 2>&1 | tail -40)
    ;;
16)
    "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -o /tmp/mega_chain \
        bench/explore/mega/mega_chain.cu 2>/dev/null || exit 1
    stdbuf -oL timeout 240 /tmp/mega_chain 57
    ;;
28)
    # Session 65's B = 1 GEMVs with early weights (bench/explore/gemvpf): the tree's layer
    # beside decode_layer_A (weights `early`, triggers at the start, each thread's first
    # whole tile asked of L2 before the wait), and A with gptq_gemm_wg32 asking L2 for its
    # first 4 units' tiles before its wait (_AW, by the tensor map; _AL, by a warp's line
    # requests), each checked against the f64 reference, then timed, two passes, with the
    # tree's by IMA_PROGRAMMATIC_LAUNCH=0 too. First the test binaries staged beside them
    # (graph_gpu, checked_gpu, paged_gpu, decode_gpu, gemm_tma_gpu: the tree's early
    # kernels and programmatic edges; C and AW8 are built by the same script, not staged).
    cat .gpu/commit
    timeout 240 bash .gpu/on-device test 2>&1 | grep -E "^=== |test result|FAILED|panicked" | tail -30
    precompiled
    check_and_time_layers decode_layer decode_layer_A decode_layer_AW decode_layer_AL decode_layer:0
    ;;
layers)
    # What bench/explore/stage-layers.sh staged: its test binaries, then the tree's layer
    # beside each patched one (.gpu/layers.txt), checked and timed, the tree's by
    # IMA_PROGRAMMATIC_LAUNCH=0 too, then what each launch adds to a replay (`ablate`) in
    # each, two alternating passes (session 66 read a kernel's change there that the
    # whole graph's time hid).
    cat .gpu/commit
    [ -s .gpu/tests.txt ] && timeout 300 bash .gpu/on-device test 2>&1 | grep -E "^=== |test result|FAILED|panicked" | tail -40
    precompiled
    mapfile -t patched < .gpu/layers.txt
    check_and_time_layers decode_layer "${patched[@]}" decode_layer:0
    for pass in 1 2; do
        for bin in decode_layer "${patched[@]}"; do
            echo "== $bin ablate ($pass)"
            timeout 120 bash .gpu/on-device run "$bin" ablate 2>&1 | grep -E '^\| (B|1|32) '
        done
    done
    ;;
wg32ncu)
    # ncu over each staged layer's four gptq_gemm_wg32 launches of a step at B = 32 (QKV,
    # O, gate/up, down, in that order), clocks and caches as a replay leaves them: time,
    # the bytes read from DRAM and through L2, and the L2's, DRAM's and the SMs' share of
    # their peaks (session 67: is x's tile, copied from L2 for every unit, a
    # second stream beside W's?).
    precompiled
    direct_runs
    mapfile -t patched < .gpu/layers.txt
    m=gpu__time_duration.sum,dram__bytes_read.sum,lts__t_bytes.sum,lts__t_sectors_srcunit_tex.sum
    m=$m,lts__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed
    m=$m,sm__throughput.avg.pct_of_peak_sustained_elapsed,smsp__issue_active.avg.pct_of_peak_sustained_elapsed
    for bin in decode_layer "${patched[@]}"; do
        echo "== $bin"
        # shellcheck disable=SC2046
        timeout 200 ncu --clock-control none --cache-control none -k regex:gptq_gemm_wg32 -c 4 --metrics "$m" \
            ".gpu/bin/$bin" dump /tmp/wg32ncu $(printf '1024 %.0s' $(seq 32)) 2>&1 | grep -E "gptq_gemm_wg32|__|ERR" | sed 's/  */ /g'
    done
    ;;
wg32src)
    # ncu's warp-state samples of the tree's gate/up launch at B = 32 (the step's third
    # gptq_gemm_wg32), by SASS instruction, as CSV in $OUT (session 67: what a consumer
    # warp waits on, instruction by instruction). bench/explore/wg32src/stalls.py reads it.
    precompiled
    direct_runs
    # shellcheck disable=SC2046
    timeout 300 ncu --clock-control none --cache-control none -k regex:gptq_gemm_wg32 --launch-skip 2 -c 1 \
        --section SourceCounters --section WarpStateStats -f -o /tmp/wg32src \
        .gpu/bin/decode_layer dump /tmp/wg32ncu $(printf '1024 %.0s' $(seq 32)) 2>&1 | grep -E "PROF|ERR" | tail -3
    ncu --import /tmp/wg32src.ncu-rep --page source --csv --print-source sass > "${OUT:-/tmp}/wg32src.csv" 2>&1
    ncu --import /tmp/wg32src.ncu-rep --page details --section WarpStateStats 2>&1 | grep -E "Stall|Warp Cycles|Active" | head -30
    ;;
esac
