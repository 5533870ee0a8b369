#![doc = include_str!("../README.md")]

pub use ima_runtime;

mod runtime;

// The stubs are generated, and kept as generated; their names are the spec's (`Image`,
// `s_N`, `const tile`), whatever Rust's case conventions.
#[rustfmt::skip]
#[allow(non_snake_case, non_upper_case_globals)]
mod stubs;

pub use stubs::*;

/// The imac that generated this crate.
pub const IMAC_VERSION: &str = "{{ version }}";

/// Hash of the spec this crate was generated from, as `imac.stamp` records it.
pub const SPEC_HASH: &str = "{{ spec_hash }}";
