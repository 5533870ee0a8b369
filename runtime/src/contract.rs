//! A kernel's contract as data.
//!
//! The code generator writes one `static KernelContract` per kernel; the runtime's one
//! checker ([`crate::check()`]) interprets it before every launch. Keeping the contract as
//! data (rather than as generated `if`s) keeps every check in one place, shared by the
//! generated crates, the proc macro and `imac fuzz`.
//!
//! # Kernel parameter order (the ABI between codegen and runtime)
//!
//! [`KernelContract::entry_params`] gives an entry point's parameters in order (each
//! buffer's pointer and strides, the symbols, the params, the violation record where
//! taken); the CUDA back end writes its parameter lists from it, and
//! [`Kernel::launch`](crate::Kernel::launch) pushes a launch's values in the same order.
//!
//! # Readings of a contract
//!
//! `mentions` (the symbols and params an expression names) and `physical` (where a
//! logical dimension is held) serve both the checker and the reports that name a
//! contract's symbols ([`crate::IndexValue`]), so they stand here, below both.

pub use ima_contract::{
    BinOp, Binding, Constraint, DType, EmptyPolicy, EntryParam, EvalError, Expr, Extent,
    KernelContract, Launch, Param, Resident, Role, SHARED_ALIGN, Scalar, SharedArray, Symbol,
    TensorArg, TmaBox, TmaLayout, ValueContract,
};

/// Symbols and params an expression mentions, each once, in first-use order.
pub(crate) fn mentions(e: &Expr, syms: &mut Vec<usize>, params: &mut Vec<usize>) {
    match *e {
        Expr::Const(_) => {}
        Expr::Sym(i) if !syms.contains(&i) => syms.push(i),
        Expr::Param(i) if !params.contains(&i) => params.push(i),
        Expr::Sym(_) | Expr::Param(_) => {}
        Expr::Neg(a) | Expr::Not(a) => mentions(a, syms, params),
        Expr::Bin(_, a, b) => {
            mentions(a, syms, params);
            mentions(b, syms, params);
        }
    }
}

/// The physical position holding logical dimension `dim`.
pub(crate) fn physical(a: &TensorArg, dim: usize) -> usize {
    a.stored.iter().position(|&l| l == dim).unwrap_or(dim)
}
