//! `#[ima_kernel]`: a `.ima` kernel spec expanded into launch stubs inside the user's crate.
//!
//! ```ignore
//! #[ima_kernel("specs/attn.ima")]          // a path from the crate root (CARGO_MANIFEST_DIR)
//! pub mod attn {}
//!
//! #[ima_kernel(r#"kernel scale { ... }"#)] // or the spec itself
//! pub mod scale {}
//! ```
//!
//! The module is filled with what `imac compile` writes into a generated crate's
//! `src/stubs.rs` (which its `lib.rs` re-exports):
//! the same compiler and the same runtime checker, the CUDA C embedded as a string. An
//! error in the spec is a Rust compile error carrying the spec's `file:line:col` and the
//! rendered diagnostic.

mod diagnostics;
mod expand;
mod spec;

use proc_macro::TokenStream;

/// Fills an empty `mod NAME {}` with the launch stubs of a kernel spec, given as a path
/// from the crate root (a literal ending in `.ima`) or as the spec's text.
#[proc_macro_attribute]
pub fn ima_kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    let literal = syn::parse_macro_input!(attr as syn::LitStr);
    let module = syn::parse_macro_input!(item as syn::ItemMod);
    expand::expand(&literal, module)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
