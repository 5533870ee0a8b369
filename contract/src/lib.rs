//! The contract vocabulary of imac, with no dependencies: element types ([`DType`]) and
//! the operators of contract expressions ([`BinOp`]).
//!
//! The spec language's IR (`ima-dsl`) and the runtime (`ima-runtime`, which re-exports
//! these, so that generated code names them `ima::DType::F16`) use these definitions; the
//! fuzzer uses them through both.

mod dtype;
mod expr;

pub use dtype::DType;
pub use expr::BinOp;
