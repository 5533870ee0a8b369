#!/usr/bin/env bash
# Puts in .gpu what the prepared call N carries (bench/explore/prepared-run.sh's header
# says what each does), from what bench/explore/prepared-build.sh left in
# .cache/gpu-staged, hard-linked, and fails if it would pass the 64 MiB a call carries
# with the tree. `sanitize` stages what call 1 carries. Then: carry [".gpu"], and
# `bash bench/explore/prepared-run.sh N` (or `bash .gpu/on-device sanitize -v
# 'gpu-a20e|multi_gpu'`).
#   bench/explore/prepared-stage.sh N|sanitize
set -euo pipefail
cd "$(dirname "$0")/../.."
staged=.cache/gpu-staged
[ -d "$staged" ] || { echo "prepared-stage.sh: no $staged (bench/explore/prepared-build.sh)" >&2; exit 1; }
rm -rf .gpu
cp -al "$staged" .gpu
# The layers' precompiled modules: only the calls that run the layer carry them.
case "${1:-}" in 20 | 22 | 23 | 25 | 26) ;; *) rm -f .gpu/ptx.tar.xz ;; esac
wheels() { # keeps only the wheels named (NAME_kernels)
    for w in .gpu/wheels/*.whl; do
        local n keep=
        n=$(basename "$w")
        for k in "$@"; do [[ $n == "${k}"_kernels-* ]] && keep=1; done
        [ -n "$keep" ] || rm -f "$w"
    done
}
bins() { # keeps only the binaries named (the test binaries by regex), and lists them
    local regex=$1
    for f in .gpu/bin/*; do [[ $(basename "$f") =~ $regex ]] || rm -f "$f"; done
    # A new file, not the staged one it is hard-linked to.
    rm -f .gpu/tests.txt
    ls .gpu/bin | grep -E '^(.*_gpu|gpu|gpu_[a-z_]+)-[0-9a-f]+$' > .gpu/tests.txt || true
}
case "${1:?prepared-stage.sh N|sanitize}" in
1 | sanitize | 24)
    rm -rf .gpu/wheels .gpu/bin/decode_layer_*
    ;;
2)
    # The fuzzer's binary and the wheels tests/python/test_gpu.py imports.
    bins '^gpu-a20e'
    wheels attn clusters gemm_tma index planted_bugs quant rmsnorm strided
    ;;
9)
    # The tree's gemm_tma wheel and bench/explore/wgstamp/build.sh's, copied into the
    # staging's wheels by hand.
    rm -rf .gpu/bin
    wheels gemm_tma gemm_tma_wgs31
    ;;
14)
    rm -rf .gpu/bin
    wheels paged clattn
    ;;
16)
    rm -rf .gpu/bin .gpu/wheels
    ;;
17)
    rm -rf .gpu/bin
    wheels stream
    ;;
20)
    bins '^(decode_layer.*|bench)$'
    rm -f .gpu/bin/decode_layer_pdl*
    rm -rf .gpu/wheels
    # NO_BEFORE=1 leaves the previous build's layer out (when its code is the tree's, or
    # the call's time is wanted for the patched layers).
    if [ -z "${NO_BEFORE:-}" ]; then
        before=.cache/gpu-before
        [ -d "$before" ] || { echo "prepared-stage.sh: no $before (prepared-build.sh keeps it)" >&2; exit 1; }
        ln "$before/bin/bench" .gpu/bin/bench_before
        ln "$before/bin/decode_layer" .gpu/bin/decode_layer_before
        cp "$before/commit" .gpu/before-commit
    fi
    ;;
25)
    # The tree's layer and the programmatic-launch ones (bench/explore/pdlattn2,
    # pdlspread, pdlpre) beside session 61's spreadsum, run as call 20 runs its layers
    # (session 62 ran pdllate's, pdlw4's, pdlattn's and pdlnorm's; session 63 ran these;
    # pdlw4x is built, and left out for the 64 MB a call carries).
    bins '^decode_layer(_pdl(a|b|spread|pre|pre2|pre3)|_spreadsum)?$'
    rm -rf .gpu/wheels
    ;;
26)
    # The tree's layer, pdlb and bench/explore/pdlpre's pdlc and pdlcnc (session 63).
    bins '^decode_layer(_pdl(b|c|cnc))?$'
    rm -rf .gpu/wheels
    ;;
18 | 19)
    bins '^decode_layer'
    wheels paged spattn
    ;;
22)
    # The layer, and the wheels its Python door imports (bench/decode-layer-on-device.sh).
    bins '^decode_layer$'
    wheels decode paged gemm quant gemm_tma
    ;;
23)
    # The layer (for its dumps), the wheels DecodeLayer imports and kvpf's.
    bins '^decode_layer$'
    wheels decode paged gemm quant gemm_tma kvpf
    ;;
*)
    echo "prepared-stage.sh: no call $1 (1, 2, 9, 14, 16 to 20, 22 to 26, sanitize)" >&2
    exit 1
    ;;
esac
# The tree travels too (about 12 MB; its ignored paths do not).
size=$(du -sm .gpu | cut -f1)
echo "prepared-stage.sh: .gpu is $size MB for call $1"
[ "$size" -le 52 ] || { echo "prepared-stage.sh: over the 64 MiB a call carries with the tree" >&2; exit 1; }
