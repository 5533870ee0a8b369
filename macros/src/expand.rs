//! `mod NAME {}` filled with the module body `imac compile` writes into a generated crate.

use crate::{diagnostics, spec};
use ima_codegen::rust::{CudaSource, RustOptions};
use proc_macro2::TokenStream;
use quote::quote;

pub fn expand(literal: &syn::LitStr, mut module: syn::ItemMod) -> syn::Result<TokenStream> {
    let brace = match &module.content {
        Some((brace, items)) if items.is_empty() => *brace,
        _ => {
            return Err(syn::Error::new_spanned(
                &module,
                "#[ima_kernel] fills an empty module: write `mod NAME {}`",
            ));
        }
    };
    let spec = spec::read(literal)?;
    let ir = ima_dsl::compile(&spec.source)
        .map_err(|d| diagnostics::to_error(&spec.source, &d, literal.span()))?;
    let cu_file = format!("{}.cu", module.ident);
    let cuda = ima_codegen::cuda::generate(&ir, &cu_file);
    let body = ima_codegen::rust::generate(
        &ir,
        RustOptions {
            cuda: CudaSource::Inline(&cuda),
            runtime: "::ima",
        },
    );
    let body: TokenStream = body.parse().map_err(|e| {
        syn::Error::new(
            literal.span(),
            format!("imac generated Rust that does not lex (a bug in imac): {e}"),
        )
    })?;
    let rebuild = spec.file.map(|path| {
        let path = path.display().to_string();
        quote! { const _: &[u8] = include_bytes!(#path); }
    });
    let items = syn::parse2::<syn::File>(quote! { #rebuild #body })?.items;
    module.content = Some((brace, items));
    // The user wrote none of it, so what the crate leaves unused is not the user's warning,
    // nor are the spec's names (`Image`, `s_N`) in Rust's case conventions.
    module.attrs.push(syn::parse_quote!(#[allow(
        dead_code,
        non_snake_case,
        non_upper_case_globals
    )]));
    Ok(quote! { #module })
}
