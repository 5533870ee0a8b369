//! The contract codegen emits for `attn_scores` (with `k` stored `[B, T, H, D]`), by hand:
//! shared by the checker tests, the GPU tests and the launch-overhead benchmark.

use ima_runtime::{
    BinOp, Binding, Constraint, DType, EmptyPolicy, Expr, Extent, KernelContract, Launch, Param,
    Role, Symbol, TensorArg,
};

const fn ext(text: &'static str, expr: Expr) -> Extent {
    Extent { text, expr }
}

const B: Expr = Expr::Sym(0);
const H: Expr = Expr::Sym(1);
const S: Expr = Expr::Sym(2);
const D: Expr = Expr::Sym(3);
const T: Expr = Expr::Sym(4);

pub static ATTN: KernelContract = KernelContract {
    name: "attn_scores",
    signature: "attn_scores(q: f16[B,H,S,D], k: f16[B,H,T,D], o: f32[B,H,S,T], scale: f32)",
    location: "specs/attn.ima:3",
    symbols: &[
        Symbol {
            name: "B",
            bound_by: Binding { arg: 0, dim: 0 },
        },
        Symbol {
            name: "H",
            bound_by: Binding { arg: 0, dim: 1 },
        },
        Symbol {
            name: "S",
            bound_by: Binding { arg: 0, dim: 2 },
        },
        Symbol {
            name: "D",
            bound_by: Binding { arg: 0, dim: 3 },
        },
        Symbol {
            name: "T",
            bound_by: Binding { arg: 1, dim: 2 },
        },
    ],
    args: &[
        TensorArg {
            name: "q",
            role: Role::In,
            dtype: DType::F16,
            dims: &[ext("B", B), ext("H", H), ext("S", S), ext("D", D)],
            stored: &[0, 1, 2, 3],
            strided: false,
            early: false,
            align: 16,
            values: None,
            tma: None,
        },
        TensorArg {
            name: "k",
            role: Role::In,
            dtype: DType::F16,
            dims: &[ext("B", B), ext("H", H), ext("T", T), ext("D", D)],
            stored: &[0, 2, 1, 3],
            strided: false,
            early: false,
            align: 16,
            values: None,
            tma: None,
        },
        TensorArg {
            name: "o",
            role: Role::Out,
            dtype: DType::F32,
            dims: &[ext("B", B), ext("H", H), ext("S", S), ext("T", T)],
            stored: &[0, 1, 2, 3],
            strided: false,
            early: false,
            align: 4,
            values: None,
            tma: None,
        },
    ],
    params: &[Param {
        name: "scale",
        dtype: DType::F32,
    }],
    constraints: &[
        Constraint {
            text: "D % 8 == 0",
            expr: Expr::Bin(
                BinOp::Eq,
                &Expr::Bin(BinOp::Rem, &D, &Expr::Const(8)),
                &Expr::Const(0),
            ),
        },
        Constraint {
            text: "D <= 256",
            expr: Expr::Bin(BinOp::Le, &D, &Expr::Const(256)),
        },
    ],
    shared: &[],
    launch: Launch::Threads { arg: 2 },
    empty: EmptyPolicy::Skip,
    block: [256, 1, 1],
    block_from_occupancy: false,
    entry_i32: "attn_scores_i32",
    entry_i64: "attn_scores_i64",
};
