//! The attribute's argument: a spec file named from the crate root, or the spec inline.

use ima_dsl::Source;
use std::path::PathBuf;

/// A spec as the attribute names it, read into a [`Source`].
pub struct Spec {
    pub source: Source,
    /// The file's absolute path, for `include_bytes!` (so that editing it rebuilds the
    /// crate); `None` for an inline spec.
    pub file: Option<PathBuf>,
}

/// The name inline specs carry in messages and in the generated code.
pub const INLINE_NAME: &str = "<inline>";

/// Reads the spec `literal` names: a literal ending in `.ima` is a path from the crate root
/// (`CARGO_MANIFEST_DIR`); anything else is the spec itself.
pub fn read(literal: &syn::LitStr) -> syn::Result<Spec> {
    let value = literal.value();
    if !value.trim_end().ends_with(".ima") {
        return Ok(Spec {
            source: Source::new(INLINE_NAME, value),
            file: None,
        });
    }
    let error = |message: String| syn::Error::new(literal.span(), message);
    // The generated CUDA names the spec in its `#line`s, which the runtime compiles.
    ima_codegen::cuda::check_line_path(&value).map_err(error)?;
    let root = std::env::var_os("CARGO_MANIFEST_DIR")
        .ok_or_else(|| error("CARGO_MANIFEST_DIR is not set: build with cargo".into()))?;
    let path = PathBuf::from(root).join(&value);
    let text = std::fs::read_to_string(&path).map_err(|e| {
        error(format!(
            "cannot read the spec `{value}` (a path from the crate root, CARGO_MANIFEST_DIR): {e}"
        ))
    })?;
    let file = path.canonicalize().unwrap_or(path);
    Ok(Spec {
        source: Source::new(value, text),
        file: Some(file),
    })
}
