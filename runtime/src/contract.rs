//! A kernel's contract as data.
//!
//! The code generator writes one `static KernelContract` per kernel; the runtime's one
//! checker ([`crate::check()`]) interprets it before every launch. Keeping the contract as
//! data (rather than as generated `if`s) keeps every check in one place, shared by the
//! generated crates, the proc macro and `imac fuzz`.
//!
//! # Kernel parameter order (the ABI between codegen and runtime)
//!
//! Every generated entry point takes, in this order:
//! 1. for each tensor argument, in declaration order: its data pointer (already offset to
//!    the view's first element), then one stride per *logical* dimension, in elements;
//! 2. the value of each symbol, in [`KernelContract::symbols`] order;
//! 3. each scalar param, in declaration order, with its own C type.
//!
//! Strides and symbol values have the entry point's index type: `int` for the 32-bit entry
//! point, `long long` for the 64-bit one.

pub use ima_contract::{
    BinOp, Binding, Constraint, DType, EmptyPolicy, EvalError, Expr, Extent, KernelContract,
    Launch, Param, Role, SHARED_ALIGN, Scalar, SharedArray, Symbol, TensorArg, ValueContract,
};
