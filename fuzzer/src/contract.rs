//! A kernel's [`KernelContract`], built from the IR at run time: the owned contract
//! `ima_dsl::abi::kernel_contract` builds (the one the Rust back end prints into generated
//! stubs as a `static`), leaked to `'static` (once per kernel per fuzzing run, a few
//! hundred bytes).

use ima_dsl::abi::kernel_contract;
use ima_dsl::ir;
use ima_runtime::{Expr, KernelContract};

/// An IR expression as a runtime one, its subexpressions leaked.
pub fn expr(e: &ir::Expr) -> Expr {
    e.leak()
}

pub use ima_dsl::abi::contract_index;

/// The contract of kernel `k` of module `m`, as the generated stub holds it.
pub fn build(m: &ir::Module, k: &ir::Kernel) -> &'static KernelContract {
    kernel_contract(m, k).leak()
}

/// Every kernel's contract, in declaration order.
pub fn build_all(m: &ir::Module) -> Vec<&'static KernelContract> {
    m.kernels.iter().map(|k| build(m, k)).collect()
}

/// Parses and checks a spec's text, naming it `file` (as `imac` names it on the command line).
pub fn load(file: &str, text: &str) -> Result<ir::Module, String> {
    let source = ima_dsl::Source::new(file, text);
    ima_dsl::compile(&source).map_err(|diags| source.render(&diags))
}
