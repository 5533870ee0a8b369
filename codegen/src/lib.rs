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
mod rustdoc;
pub mod stamp;
pub mod vendored;

/// The version stamped into generated files.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Refuses a spec path that cannot name what `imac compile` writes: its stem names the
/// crate (`rmsnorm-kernels`), the CUDA file and the Python package (`rmsnorm_kernels`),
/// so it takes ASCII letters, digits, `_` and `-` and starts with a letter (a `_` would
/// start the crate's name with a `-`, which Cargo refuses); and the
/// path is quoted in Rust, C and TOML strings, so it holds no `"`, `\` or control
/// character.
pub fn check_spec_path(spec: &str) -> Result<(), String> {
    let name = stem(spec);
    let name_ok = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && name.starts_with(|c: char| c.is_ascii_alphabetic());
    if !name_ok {
        return Err(format!(
            "the spec's file name `{name}` cannot name the generated crate (`{name}-kernels`) \
             and Python package: name the file with ASCII letters, digits, `_` and `-`, \
             starting with a letter"
        ));
    }
    if spec.contains(['"', '\\']) || spec.contains(char::is_control) {
        return Err(format!(
            "the spec's path {spec:?} holds a `\"`, `\\` or control character, which the \
             generated files' strings cannot hold as written: move or rename the spec"
        ));
    }
    Ok(())
}

/// The name of the CUDA file generated from a spec: `specs/attn.ima` → `attn.cu`, under
/// the crate's src/ and as NVRTC names the generated lines in its messages.
pub fn cu_file(spec: &str) -> String {
    format!("{}.cu", stem(spec))
}

/// File stem of a spec path: `specs/attn.ima` → `attn`.
pub fn stem(spec: &str) -> &str {
    let name = spec.rsplit(['/', '\\']).next().unwrap_or(spec);
    name.strip_suffix(".ima").unwrap_or(name)
}
