//! `fault(x: f32[N])`, a kernel that faults on purpose, and `fill(x: f32[N])`, one that
//! does not: for the sync-mode tests (tests/gpu_fault.rs, tests/gpu_graph_fault.rs).

// Each test binary uses part of it.
#![allow(dead_code)]

use ima_runtime::{
    Binding, DType, EmptyPolicy, Expr, Extent, KernelContract, Launch, Role, Symbol, TensorArg,
};

const X: TensorArg = TensorArg {
    name: "x",
    role: Role::Out,
    dtype: DType::F32,
    dims: &[Extent {
        text: "N",
        expr: Expr::Sym(0),
    }],
    stored: &[0],
    strided: false,
    early: false,
    align: 4,
    values: None,
    tma: None,
};

const fn contract(
    name: &'static str,
    signature: &'static str,
    entries: [&'static str; 2],
) -> KernelContract {
    KernelContract {
        name,
        signature,
        location: "tests/common/fault.rs:1",
        symbols: &[Symbol {
            name: "N",
            bound_by: Binding { arg: 0, dim: 0 },
        }],
        args: &[X],
        params: &[],
        constraints: &[],
        shared: &[],
        launch: Launch::Threads { arg: 0 },
        empty: EmptyPolicy::Skip,
        block: [32, 1, 1],
        block_from_occupancy: false,
        entry_i32: entries[0],
        entry_i64: entries[1],
    }
}

/// `fault(x: f32[N])`, whose body writes through a null pointer.
pub static FAULT: KernelContract =
    contract("fault", "fault(x: f32[N])", ["fault_i32", "fault_i64"]);

/// `fill(x: f32[N])`, which sets every element to 1.
pub static FILL: KernelContract = contract("fill", "fill(x: f32[N])", ["fill_i32", "fill_i64"]);

/// The address `fault` writes is `x[0]` (zero) as a pointer: null at run time, which the
/// compiler cannot fold away.
pub const SOURCE: &str = r#"
template <typename I>
__device__ void fault(float* x, I x0, I N) {
    volatile float* p = reinterpret_cast<volatile float*>((unsigned long long)x[0]);
    if ((I)threadIdx.x < N) *p = 1.0f;
}
extern "C" __global__ void __launch_bounds__(32) fault_i32(float* x, int x0, int N) {
    fault<int>(x, x0, N);
}
extern "C" __global__ void __launch_bounds__(32)
fault_i64(float* x, long long x0, long long N) {
    fault<long long>(x, x0, N);
}

template <typename I>
__device__ void fill(float* x, I x0, I N) {
    for (I i = threadIdx.x; i < N; i += 32) x[i * x0] = 1.0f;
}
extern "C" __global__ void __launch_bounds__(32) fill_i32(float* x, int x0, int N) {
    fill<int>(x, x0, N);
}
extern "C" __global__ void __launch_bounds__(32)
fill_i64(float* x, long long x0, long long N) {
    fill<long long>(x, x0, N);
}
"#;

/// compute-sanitizer injects its libraries into the process (by the time a context
/// exists); a fault provoked on purpose would be (rightly) reported as a memcheck error.
pub fn under_sanitizer() -> bool {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    maps.contains("sanitizer")
}
