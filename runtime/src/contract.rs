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
//! buffer's pointer and strides (and a `tma` argument's tensor map), the symbols, the
//! params, the violation record where taken); the CUDA back end writes its parameter lists
//! from it, and [`Kernel::launch`](crate::Kernel::launch) pushes a launch's values in the
//! same order.
//!
//! # Readings of a contract
//!
//! `physical` (where a logical dimension is held) serves both the checker and the reports
//! that name a contract's symbols ([`crate::IndexValue`]), so it stands here, below both;
//! `Expr::mentions` (the symbols and params an expression names) is the contract crate's,
//! which the fuzzer reads too.

pub use ima_contract::{
    BinOp, Binding, Constraint, DType, EmptyPolicy, EntryParam, EvalError, Expr, Extent,
    KernelContract, Launch, Param, Resident, Role, SHARED_ALIGN, Scalar, SharedArray, Symbol,
    TensorArg, TmaBox, TmaLayout, ValueContract,
};

/// The physical position holding logical dimension `dim`.
pub(crate) fn physical(a: &TensorArg, dim: usize) -> usize {
    a.stored.iter().position(|&l| l == dim).unwrap_or(dim)
}
