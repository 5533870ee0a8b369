//! Spec diagnostics as Rust compile errors, one per diagnostic, at the attribute's literal.

use ima_dsl::{Diagnostic, Source};
use proc_macro2::Span;

/// `file:line:col: message`, then the diagnostic rendered as the CLI renders it.
pub fn to_error(source: &Source, diagnostics: &[Diagnostic], span: Span) -> syn::Error {
    let mut errors = diagnostics.iter().map(|d| {
        let (line, col) = source.line_col(d.span.start);
        let rendered = source.render(std::slice::from_ref(d));
        // The rendering's first line repeats the message, which the header already says.
        let body = rendered.split_once('\n').map_or("", |(_, rest)| rest);
        let message = format!(
            "{}:{line}:{col}: {}\n{}",
            source.name,
            d.message,
            body.trim_end()
        );
        syn::Error::new(span, message)
    });
    let mut first = errors
        .next()
        .unwrap_or_else(|| syn::Error::new(span, format!("{} has errors", source.name)));
    first.extend(errors);
    first
}
