//! A generated crate's README, also its crate-level rustdoc: how to call the stubs, and
//! each kernel's signature and `where` constraints (the stubs' own rustdoc details each
//! argument).

use askama::Template;
use ima_dsl::ir::{self, Role};

#[derive(Template)]
#[template(path = "crate/README.md", escape = "none")]
struct Readme<'a> {
    name: &'a str,
    crate_ident: String,
    spec: &'a str,
    version: &'static str,
    archs: &'a [String],
    kernels: Vec<KernelDoc>,
}

struct KernelDoc {
    name: String,
    docs: Vec<String>,
    signature: String,
    location: String,
    constraints: Vec<String>,
    /// The stub's named arguments after the stream, as a caller writes them:
    /// `AttnScoresArgs { q: &q, k: &k, o: &mut o, scale }`.
    call_args: String,
}

/// The README of the crate `name`, generated from `m` with PTX and SASS for `archs`.
pub fn generate(m: &ir::Module, name: &str, archs: &[String]) -> String {
    Readme {
        name,
        crate_ident: name.replace('-', "_"),
        spec: &m.file,
        version: crate::VERSION,
        archs,
        kernels: m.kernels.iter().map(|k| kernel(m, k)).collect(),
    }
    .render()
    .expect("the README template renders from plain strings")
}

fn kernel(m: &ir::Module, k: &ir::Kernel) -> KernelDoc {
    let call_args = k
        .args
        .iter()
        .map(|a| match a.role {
            Role::In => format!("{0}: &{0}", a.name),
            Role::Out | Role::InOut => format!("{0}: &mut {0}", a.name),
        })
        .chain(k.params.iter().map(|p| p.name.clone()));
    KernelDoc {
        name: k.name.clone(),
        docs: crate::rustdoc::doc_lines(&k.docs),
        signature: k.signature(),
        location: format!("{}:{}", m.file, k.line),
        constraints: k
            .constraints
            .iter()
            .map(|c| format!("`{}`", c.text))
            .collect(),
        call_args: format!(
            "{} {{ {} }}",
            ima_dsl::names::rust_args_struct(&k.name),
            call_args.collect::<Vec<_>>().join(", ")
        ),
    }
}
