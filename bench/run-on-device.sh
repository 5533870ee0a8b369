#!/usr/bin/env bash
# The whole benchmark suite, on the GPU machine, from the repo root, over what
# bench/pack-and-note.sh staged in .gpu/ here:
#
#     bash bench/run-on-device.sh
#
# 1. the Rust bench (examples/bench.rs): imac release, imac checked and hand-written CUDA
#    twins of every example kernel, and a chain of 10 launches against one replay of a
#    CUDA graph of them, with the cost of a node update (case graph_replay);
# 2. the release gptq_dequant (K=28672, N=8192) once more under compute-sanitizer memcheck,
#    timed by the bench's own CUDA events and by the wall clock of the whole process;
# 3. bench/torch_triton.py: the PyTorch and Triton equivalents;
# 4. runtime/examples/launch_overhead.rs (200000 launches): the launch rate through the
#    runtime's checking `Kernel::launch` against raw cudarc launches of the same kernel,
#    with every launch checked in full and with the plan memo (the same buffer again).
#
# Writes $OUT/RESULTS.md (OUT defaults to /tmp/ima-bench), plus each step's table and log.
# Every step has a time limit; together they stay under 8 minutes.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/ima-bench}
mkdir -p "$out"
out=$(cd "$out" && pwd)
export OUT=$out
g=$PWD/.gpu
[ -x "$g/bin/bench" ] || { echo "no .gpu/bin/bench: run bench/pack-and-note.sh on the build machine first" >&2; exit 2; }
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export LD_LIBRARY_PATH=$CUDA_HOME/lib64:${LD_LIBRARY_PATH:-}
export PATH=$CUDA_HOME/bin:$PATH

commit=$(cat "$g/commit" 2>/dev/null || git rev-parse --short HEAD 2>/dev/null || echo unknown)
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)
date=$(date -u '+%Y-%m-%d %H:%M:%S UTC')
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# 1. The Rust bench (on-device sets the environment and maps the build checkout's paths).
echo "== bench" >&2
t0=$(now)
timeout 200 bash "$g/on-device" run bench --out "$out/bench.md" --tsv "$out/bench.tsv" \
    > "$out/bench.log" 2>&1
rc_bench=$?
t_bench=$(secs "$t0" "$(now)")
tail -5 "$out/bench.log" >&2

# 2. The release dequant under memcheck: 1 warm-up and 3 timed launches, only the release
#    variant, no twin, no launch-rate run.
echo "== compute-sanitizer memcheck" >&2
t0=$(now)
(cd "$(cat "$g/build-root")" && timeout 120 compute-sanitizer --tool memcheck --error-exitcode 86 \
    --print-limit 20 "$g/bin/bench" --only gptq_dequant --variants release --warmup 1 --iters 3 \
    --out "$out/sanitized.md" --tsv "$out/sanitized.tsv") > "$out/sanitizer.log" 2>&1
rc_san=$?
t_san=$(secs "$t0" "$(now)")
tail -3 "$out/sanitizer.log" >&2

# 3. PyTorch and Triton.
echo "== torch_triton.py" >&2
t0=$(now)
timeout 150 python3 bench/torch_triton.py --out "$out/torch_triton.md" > "$out/torch_triton.log" 2>&1
rc_py=$?
t_py=$(secs "$t0" "$(now)")
tail -3 "$out/torch_triton.log" >&2

# 4. The launch rate: the runtime's launch-overhead example.
rc_lo=-
if grep -qx launch_overhead "$g/bins.txt" 2>/dev/null; then
    echo "== launch_overhead" >&2
    timeout 60 bash "$g/on-device" run launch_overhead 200000 > "$out/launch_overhead.log" 2>&1
    rc_lo=$?
fi

# The plain and sanitized release times of gptq_dequant, from the two TSVs.
pick() { # FILE VARIANT -> median µs of the big gptq_dequant row
    awk -F'\t' -v v="$2" '$1 == "gptq_dequant" && $2 ~ /^K=28672 / && $3 == v { printf "%.1f", $4; exit }' "$1" 2>/dev/null
}
plain=$(pick "$out/bench.tsv" "imac release")
twin=$(pick "$out/bench.tsv" "CUDA twin")
sanitized=$(pick "$out/sanitized.tsv" "imac release")
errors=$(grep -o 'ERROR SUMMARY: [0-9]* errors*' "$out/sanitizer.log" | tail -1)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.1f", a / b; else print "-" }'; }

{
    echo "# imac benchmark results"
    echo
    echo "- Date: $date"
    echo "- GPU: $gpu (name, driver)"
    echo "- Commit: $commit"
    echo "- Command: \`bench/pack-and-note.sh\` on the build machine, then \`bash bench/run-on-device.sh\` on the GPU machine (from the repo root, with \`.gpu/\` beside it)"
    echo "- Steps: bench ${t_bench} s (exit $rc_bench), memcheck ${t_san} s (exit $rc_san), torch_triton.py ${t_py} s (exit $rc_py), launch_overhead exit $rc_lo"
    echo
    echo "## imac"
    echo
    if [ -s "$out/bench.md" ]; then cat "$out/bench.md"; else echo "The bench wrote no table (exit $rc_bench); the end of its log:"; echo; echo '```'; tail -30 "$out/bench.log"; echo '```'; fi
    echo
    echo "### Cost of compute-sanitizer memcheck"
    echo
    echo "gptq_dequant K=28672 N=8192 G=128, imac release entry point. \"Kernel\" times are the bench's own CUDA-event medians (under memcheck: of 3 launches after 1 warm-up); the wall clock is the whole sanitized process (start-up, NVRTC, the fills and 5 launches)."
    echo
    echo "| run | kernel µs (median) | x plain | wall s | memcheck |"
    echo "|---|---:|---:|---:|---|"
    echo "| CUDA twin, plain | ${twin:--} | $(ratio "$twin" "$plain") | - | - |"
    echo "| imac release, plain | ${plain:--} | 1.0 | - | - |"
    echo "| imac release, under memcheck | ${sanitized:--} | $(ratio "$sanitized" "$plain") | $t_san | ${errors:-no summary} (exit $rc_san) |"
    echo
    echo "## PyTorch and Triton"
    echo
    if [ -s "$out/torch_triton.md" ]; then cat "$out/torch_triton.md"; else echo "torch_triton.py wrote no table (exit $rc_py); the end of its log:"; echo; echo '```'; tail -30 "$out/torch_triton.log"; echo '```'; fi
    if [ "$rc_lo" != - ]; then
        echo
        echo "## Launch rate (runtime/examples/launch_overhead.rs, 200000 launches)"
        echo
        cat "$out/launch_overhead.log"
    fi
} > "$out/RESULTS.md"
echo "wrote $out/RESULTS.md" >&2
[ "$rc_bench" = 0 ] && [ "$rc_san" = 0 ] && [ "$rc_py" = 0 ] && { [ "$rc_lo" = - ] || [ "$rc_lo" = 0 ]; }
