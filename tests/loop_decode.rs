//! The grid-stride loops imac generates visit every element of the launch domain exactly
//! once, whatever the grid: their index decode (division for the first element, then the
//! step's digits added with carries) is compiled for the host from the generated CUDA C
//! and run over random shapes and grids, every thread of every block in turn. What the
//! loops tell the compiler to assume (each launch index below its extent) is checked at
//! every element. No GPU needed: a host C++ compiler (`c++`, or `$CXX`) is.

use ima_dsl::Source;
use std::fmt::Write as _;
use std::process::Command;

const SPEC: &str = "\
kernel walk4 {
    in  x: f32[A, B, C, D]
    out y: f32[A, B, C, D]
    launch over y[a, b, c, d]
    body { y(a, b, c, d) = x(a, b, c, d); }
}

kernel rows where D <= 64 {
    in  x: f32[N, D]
    out y: f32[N, D]
    shared row: f32[D]
    launch blocks over y[n, _]
    body { for (I j = threadIdx.x; j < D; j += blockDim.x) y(n, j) = x(n, j); }
}

kernel planes {
    in  x: f32[P, Q, R]
    out y: f32[P, Q, R]
    launch blocks over y[p, q, _]
    body { for (I r = threadIdx.x; r < R; r += blockDim.x) y(p, q, r) = x(p, q, r); }
}
";

/// The statements of kernel `name`'s generated `ima_run()`, with the call of the body replaced
/// by `record` of its last `rank` arguments (the launch indices), barriers counted, and the
/// shared-memory set-up left out.
fn run_statements(cu: &str, name: &str, rank: usize) -> String {
    let prefix = ima_codegen::cuda::KERNEL_NAMESPACE_PREFIX;
    let ns = cu.find(&format!("namespace {prefix}{name} {{")).unwrap();
    let start = ns + cu[ns..].find("void ima_run(").unwrap();
    let start = start + cu[start..].find(") {\n").unwrap() + 4;
    let end = start + cu[start..].find("\n}\n").unwrap();
    let mut out = String::new();
    for line in cu[start..end].lines() {
        let t = line.trim_start();
        if t.starts_with("extern __shared__")
            || t.starts_with("I ima_smem_off")
            || t.starts_with("ima_smem_off +=")
            || t.starts_with("const ima_accessor_row<")
        {
            continue;
        }
        if let Some(call) = t.strip_prefix("ima_body<I, IMA_CHECKED>(") {
            let args: Vec<&str> = call.trim_end_matches(");").split(", ").collect();
            let indices = args[args.len() - rank..].join(", ");
            writeln!(out, "        record({indices});").unwrap();
        } else if t == "__syncthreads();" {
            writeln!(out, "        ++syncs;").unwrap();
        } else {
            writeln!(out, "{line}").unwrap();
        }
    }
    out
}

/// The prelude's index helpers (`ima_digits`, `ima_add_digits`, `ima_assume_below`), as
/// generated.
fn digit_helpers(cu: &str) -> String {
    let start = cu.find("// v's digits in the mixed radix").unwrap();
    let end = start + cu[start..].find("// A vector access").unwrap();
    cu[start..end].replace("__device__ __forceinline__ ", "")
}

fn harness(cu: &str) -> String {
    let helpers = digit_helpers(cu);
    let walk4 = run_statements(cu, "walk4", 4);
    let rows = run_statements(cu, "rows", 1);
    let planes = run_statements(cu, "planes", 2);
    format!(
        r#"#include <cstdio>
#include <cstdlib>
#include <vector>
struct Dim3 {{ unsigned x, y, z; }};
static Dim3 blockIdx, threadIdx, gridDim, blockDim;
static std::vector<int> seen;
static long long outside, syncs, broken;
// What the loops assume, counted where it fails.
#define __builtin_assume(x) do {{ if (!(x)) ++broken; }} while (0)
static bool ima_below(long long i, long long e) {{ return (unsigned long long)i < (unsigned long long)e; }}

{helpers}
template <typename I>
void walk4(const I A, const I B, const I C, const I D) {{
    auto record = [&](I a, I b, I c, I d) {{
        if (a < 0 || a >= A || b < 0 || b >= B || c < 0 || c >= C || d < 0 || d >= D) ++outside;
        else ++seen[((a * B + b) * C + c) * D + d];
    }};
{walk4}}}

template <typename I>
void rows(const I N, const I D) {{
    auto record = [&](I n) {{ if (n < 0 || n >= N) ++outside; else ++seen[n]; }};
{rows}}}

template <typename I>
void planes(const I P, const I Q, const I R) {{
    auto record = [&](I p, I q) {{ if (p < 0 || p >= P || q < 0 || q >= Q) ++outside; else ++seen[p * Q + q]; }};
{planes}}}

// Every thread of every block of a grid of `blocks` x `threads`, in turn.
template <typename F>
void launch(unsigned blocks, unsigned threads, F kernel) {{
    gridDim = {{blocks, 1, 1}};
    blockDim = {{threads, 1, 1}};
    for (unsigned b = 0; b < blocks; ++b)
        for (unsigned t = 0; t < threads; ++t) {{
            blockIdx = {{b, 0, 0}};
            threadIdx = {{t, 0, 0}};
            kernel();
        }}
}}

static int check(const char* what, long long n, long long expected_syncs, int trial) {{
    for (long long i = 0; i < n; ++i)
        if (seen[i] != 1) {{
            printf("%s (trial %d): element %lld visited %d times\n", what, trial, i, seen[i]);
            return 1;
        }}
    if (outside) {{ printf("%s (trial %d): %lld indices outside\n", what, trial, outside); return 1; }}
    if (broken) {{ printf("%s (trial %d): %lld broken assumptions\n", what, trial, broken); return 1; }}
    if (expected_syncs >= 0 && syncs != expected_syncs) {{
        printf("%s (trial %d): %lld barriers, expected %lld\n", what, trial, syncs, expected_syncs);
        return 1;
    }}
    return 0;
}}

int main() {{
    srand(7);
    long long visits = 0;
    for (int trial = 0; trial < 2000; ++trial) {{
        const unsigned blocks = 1 + rand() % 13, threads = 1 + rand() % 300;
        const int A = 1 + rand() % 3, B = 1 + rand() % 5, C = 1 + rand() % 9, D = 1 + rand() % 17;
        const long long n4 = (long long)A * B * C * D;
        seen.assign(n4, 0); outside = syncs = broken = 0;
        if (trial % 2) launch(blocks, threads, [&] {{ walk4<int>(A, B, C, D); }});
        else launch(blocks, threads, [&] {{ walk4<long long>(A, B, C, D); }});
        if (check("walk4", n4, -1, trial)) return 1;
        visits += n4;

        // A block per row: each thread of a block takes every row its block takes, and
        // between two rows the block meets at a barrier.
        const int N = 1 + rand() % 40;
        seen.assign(N, 0); outside = syncs = broken = 0;
        launch(blocks, 1, [&] {{ rows<int>(N, 16); }});
        long long barriers = 0;
        for (unsigned b = 0; b < blocks; ++b) {{
            const long long mine = b < (unsigned)N ? (N - 1 - b) / blocks + 1 : 0;
            if (mine > 1) barriers += mine - 1;
        }}
        if (check("rows", N, barriers, trial)) return 1;

        const int P = 1 + rand() % 6, Q = 1 + rand() % 7;
        seen.assign(P * Q, 0); outside = syncs = broken = 0;
        launch(blocks, 1, [&] {{ planes<long long>(P, Q, 3); }});
        if (check("planes", P * Q, 0, trial)) return 1;
    }}
    printf("ok: %lld elements of 4-d domains, each visited once\n", visits);
    return 0;
}}
"#
    )
}

#[test]
fn generated_grid_stride_loops_visit_every_element_once() {
    let source = Source::new("loop_decode.ima", SPEC.to_string());
    let module = ima_dsl::compile(&source).unwrap_or_else(|e| panic!("{e:?}"));
    let cu = ima_codegen::cuda::generate(&module, "loop_decode.cu");
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("loop_decode.cpp");
    std::fs::write(&src, harness(&cu)).unwrap();
    let exe = dir.path().join("loop_decode");
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    let built = Command::new(&cxx)
        .args([
            "-std=c++17",
            "-O1",
            "-Wall",
            "-Wno-unknown-pragmas",
            "-Werror",
            "-o",
        ])
        .arg(&exe)
        .arg(&src)
        .output()
        .unwrap_or_else(|e| panic!("this test needs a host C++ compiler (`{cxx}`): {e}"));
    assert!(
        built.status.success(),
        "{cxx} failed on the generated loops:\n{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let ran = Command::new(&exe).output().unwrap();
    let out = String::from_utf8_lossy(&ran.stdout);
    assert!(ran.status.success(), "{out}");
    assert!(out.starts_with("ok:"), "{out}");
}
