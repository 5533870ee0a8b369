//! `touch(y: f32[N])`, `y[i] = 1`: the smallest contract, shared by the launch-overhead
//! benchmark and the checker's cost test.

use ima_runtime::{
    Binding, DType, EmptyPolicy, Expr, Extent, KernelContract, Launch, Role, Symbol, TensorArg,
};

pub static TOUCH: KernelContract = KernelContract {
    name: "touch",
    signature: "touch(y: f32[N])",
    location: "runtime/tests/common/touch.rs",
    symbols: &[Symbol {
        name: "N",
        bound_by: Binding { arg: 0, dim: 0 },
    }],
    args: &[TensorArg {
        name: "y",
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
    }],
    params: &[],
    constraints: &[],
    shared: &[],
    launch: Launch::Threads { arg: 0 },
    empty: EmptyPolicy::Skip,
    block: [256, 1, 1],
    block_from_occupancy: false,
    entry_i32: "touch_i32",
    entry_i64: "touch_i64",
};
