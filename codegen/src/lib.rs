//! imac's back ends: the checked IR to CUDA C and to Rust launch stubs, through askama
//! templates (`codegen/templates/`), and the generated crate around them. Generation
//! only: the `imac` binary (cli/) adds NVRTC, the fuzzer and the command line, so that
//! `#[ima_kernel]` builds without cudarc or clap.

mod c_expr;
pub mod cuda;
pub mod explain;
pub mod package;
pub mod python;
#[cfg(test)]
mod random_exprs;
mod readme;
pub mod runtime_dep;
pub mod rust;
pub mod stamp;
pub mod vendored;

/// The version stamped into generated files.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// File stem of a spec path: `specs/attn.ima` → `attn`.
pub fn stem(spec: &str) -> &str {
    let name = spec.rsplit(['/', '\\']).next().unwrap_or(spec);
    name.strip_suffix(".ima").unwrap_or(name)
}
