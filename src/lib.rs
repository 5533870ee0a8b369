//! imac: kernel specs compiled to guarded CUDA C and checking Rust launch stubs.
//!
//! This package re-exports the runtime, which generated stubs and user code use.

pub use ima_runtime::*;
