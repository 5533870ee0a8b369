//! What a generated crate's `Cargo.toml` says of the runtime: read by the crate writer
//! (package.rs) and recorded in the stamp (stamp.rs).

/// Where the generated crate finds the runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuntimeDep {
    /// A version requirement, resolved on crates.io: a crate that builds wherever it is
    /// copied.
    Version(String),
    /// A checkout of the runtime, written as given (a relative path is relative to the
    /// generated crate or Python package). The dependency also names
    /// [`RuntimeDep::released`]'s version, as Cargo asks of a path dependency, so a checkout
    /// of another release is refused.
    Path(String),
}

impl RuntimeDep {
    /// The runtime released with this imac, whose API the generated stubs call: its version
    /// as a caret requirement (`"0.1.0"` accepts any later 0.1 release).
    pub fn released() -> Self {
        RuntimeDep::Version(crate::VERSION.into())
    }

    /// The dependency's value in the generated `Cargo.toml`.
    pub(crate) fn toml(&self) -> String {
        match self {
            RuntimeDep::Path(p) => format!("{{ path = {p:?}, version = {:?} }}", crate::VERSION),
            RuntimeDep::Version(v) => format!("{v:?}"),
        }
    }
}
