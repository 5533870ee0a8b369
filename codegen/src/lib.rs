//! imac's back ends: the checked IR to CUDA C and to Rust launch stubs, through askama
//! templates (`codegen/templates/`), and the generated crate around them.

mod c_expr;
pub mod color;
pub mod cuda;
pub mod explain;
pub mod package;
pub mod ptx;
pub mod python;
mod readme;
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
