//! The `.ima` kernel-spec language: grammar, syntax tree with spans, checker, IR and
//! diagnostics. It knows nothing of CUDA or Rust output; `ima-codegen` reads the IR.

pub mod abi;
pub mod ast;
pub mod body_code;
mod check;
pub mod diag;
pub mod facts;
pub mod fmt;
pub mod ir;
pub mod names;
mod reserved;
pub mod syntax;

pub use check::{CheckError, Conflict, Ty as ExprType};
pub use diag::{Diagnostic, Source};
pub use reserved::reserved;

/// Parses and checks one spec file.
pub fn compile(source: &Source) -> Result<ir::Module, Vec<Diagnostic>> {
    let file = syntax::parse(&source.text)?;
    check::check(&file, source)
}
