//! imac: kernel specs compiled to guarded CUDA C and checking Rust launch stubs.
//!
//! This package re-exports the runtime, which generated stubs and user code use, and the
//! `#[ima_kernel]` attribute, which expands a spec into such stubs inside the user's crate.

pub use ima_macros::ima_kernel;
pub use ima_runtime::*;
