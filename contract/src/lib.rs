//! The contract vocabulary of imac, with no dependencies: element types ([`DType`]),
//! contract expressions ([`BinOp`], the static [`Expr`]) and their one evaluator
//! ([`eval`], over any [`ExprView`]), and a kernel's contract in its static form
//! ([`KernelContract`]), with its owned form ([`owned::KernelContract`]), which
//! `ima_dsl::abi::kernel_contract` builds from the IR; and the kernel ABI, the order of an
//! entry point's parameters ([`EntryParam`], [`KernelContract::entry_params`]).
//!
//! The spec language's IR (`ima-dsl`) and the runtime (`ima-runtime`, which re-exports
//! these, so that generated code names them `ima::DType::F16`) use these definitions; the
//! fuzzer uses them through both.

mod abi;
mod dtype;
mod entry_point;
mod expr;
mod kernel;
pub mod owned;

pub use abi::EntryParam;
pub use dtype::DType;
pub use entry_point::{ENTRY_POINTS, EntryPoint};
pub use expr::{
    BinOp, Env, EvalError, ExprView, Node, NotConst, apply, eval, eval_const, eval_peak,
};
pub use kernel::{
    Binding, Constraint, EmptyPolicy, Expr, Extent, KernelContract, Launch, MAX_RANK, Param,
    Resident, Role, SHARED_ALIGN, Scalar, SharedArray, Symbol, TensorArg, TmaBox, TmaLayout,
    ValueContract,
};
