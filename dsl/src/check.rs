//! Syntax tree to IR: resolves names, binds symbols, folds constants, and reports every
//! error in the file as a [`CheckError`], rendered into a [`Diagnostic`] with a span and a
//! help line.
//!
//! One concern per file: `error.rs` (the errors and their rendering), `scope.rs` (names and
//! expressions), `args.rs` (tensor arguments, params, element types, quantization,
//! `stored`, `align`, `tma`, `early`), `values.rs` (value contracts), `constraints.rs`
//! (what the `where` clauses prove: contradictions, vector alignment), `shared.rs` (shared
//! arrays and their size), `launch.rs` (the launch form, block and `min_blocks`),
//! `names.rs` (names that would meet in the generated code). This file walks the file and
//! each kernel.

use crate::ast::{self, ExprKind, Member, Role, Span};
use crate::body_code::{Directives, code_only, mentions_word};
use crate::diag::{Diagnostic, Source};
use crate::ir;
use crate::reserved::reserved;
use std::cell::Cell;
use std::collections::HashMap;

mod args;
mod constraints;
mod error;
mod launch;
mod names;
mod scope;
mod shared;
mod values;

pub use error::{CheckError, Conflict};
pub use scope::Ty;
use scope::{Scope, eval_const};

/// Threads per block when the spec does not say `threads N`.
const DEFAULT_BLOCK: u32 = 256;

pub fn check(file: &ast::File, source: &Source) -> Result<ir::Module, Vec<Diagnostic>> {
    let mut errors = Vec::new();
    let mut consts: HashMap<String, (i64, Span)> = HashMap::new();
    let mut kernel_names: HashMap<String, Span> = HashMap::new();
    let mut kernels = Vec::new();
    let mut const_order = Vec::new();
    // Each kernel and constant once (the first where a name repeats), for names.rs.
    let mut kernel_decls: Vec<&ast::Kernel> = Vec::new();
    let mut const_idents: Vec<&ast::Ident> = Vec::new();
    // The constants first, each over those before it: the generated modules declare every
    // one for every kernel, so a kernel sees those declared after it too.
    let declared: HashMap<&str, Span> = file
        .items
        .iter()
        .rev()
        .filter_map(|item| match item {
            ast::Item::Const(c) => Some((c.name.name.as_str(), c.name.span)),
            ast::Item::Kernel(_) => None,
        })
        .collect();
    for item in &file.items {
        if let ast::Item::Const(c) = item {
            let scope = Scope::consts_only(&consts, &declared, c.name.span.start);
            // int_expr refuses a value that cannot be evaluated, so one it gives folds.
            let value = scope
                .int_expr(&c.value, &mut errors)
                .and_then(|e| eval_const(&e));
            if let Some(prev) = consts.get(&c.name.name) {
                errors.push(duplicate("constant", &c.name, prev.1));
            } else if let Some(v) = value {
                check_reserved(&c.name, &mut errors);
                const_idents.push(&c.name);
                consts.insert(c.name.name.clone(), (v, c.name.span));
                const_order.push((c.name.name.clone(), v));
            }
        }
    }
    for item in &file.items {
        if let ast::Item::Kernel(k) = item {
            if let Some(&prev) = kernel_names.get(&k.name.name) {
                errors.push(duplicate("kernel", &k.name, prev));
            } else {
                kernel_names.insert(k.name.name.clone(), k.name.span);
                kernel_decls.push(k);
            }
            if let Some(kernel) = KernelChecker::new(k, &consts, source, &mut errors).run() {
                kernels.push(kernel);
            }
        }
    }
    names::module_clashes(&kernel_decls, &const_idents, &mut errors);
    if errors.is_empty() {
        Ok(ir::Module {
            file: source.name.clone(),
            consts: const_order,
            kernels,
        })
    } else {
        Err(errors.iter().map(CheckError::to_diagnostic).collect())
    }
}

fn duplicate(what: &'static str, name: &ast::Ident, first: Span) -> CheckError {
    CheckError::Duplicate {
        what,
        name: name.name.clone(),
        span: name.span,
        first,
    }
}

fn check_reserved(name: &ast::Ident, errors: &mut Vec<CheckError>) {
    if let Some(why) = reserved(&name.name) {
        errors.push(CheckError::Reserved {
            name: name.name.clone(),
            span: name.span,
            why,
        });
    }
}

struct KernelChecker<'a> {
    k: &'a ast::Kernel,
    consts: &'a HashMap<String, (i64, Span)>,
    source: &'a Source,
    errors: &'a mut Vec<CheckError>,
}

impl<'a> KernelChecker<'a> {
    fn new(
        k: &'a ast::Kernel,
        consts: &'a HashMap<String, (i64, Span)>,
        source: &'a Source,
        errors: &'a mut Vec<CheckError>,
    ) -> Self {
        KernelChecker {
            k,
            consts,
            source,
            errors,
        }
    }

    fn error(&mut self, e: CheckError) {
        self.errors.push(e);
    }

    /// Refuses a body's directives the generated code around it cannot stand: an `#if` no
    /// `#endif` closes, or an `#endif` that closes no `#if` (the code after the body would
    /// be cut off or closed early, and NVRTC's error land in imac's code); an `#undef` of a
    /// macro defined before the body (later kernels would lose it, and the generated code
    /// has no `push_macro` to restore it); a `#define` of imac's names (`ima_`, `IMA_`).
    fn body_directives(&mut self, kernel: &str, b: &ast::Body) {
        let d = Directives::of(&b.text);
        let unclosed = (d.unclosed.iter()).map(|&l| (l, "an `#if` that no `#endif` closes".into()));
        let unopened = (d.unopened.iter()).map(|&l| (l, "an `#endif` that closes no `#if`".into()));
        let not_own = (d.undefined_not_own.iter()).map(|(l, name)| {
            let what = format!(
                "an `#undef` of `{name}`, which it did not define: later kernels would lose it"
            );
            (*l, what)
        });
        let imacs = (d.defined_imacs.iter()).map(|(l, name)| {
            (
                *l,
                format!("a `#define` of `{name}`: names starting `ima_` or `IMA_` are imac's"),
            )
        });
        for (line, what) in unclosed.chain(unopened).chain(not_own).chain(imacs) {
            let before: usize = b.text.split_inclusive('\n').take(line).map(str::len).sum();
            let text = b.text[before..].lines().next().unwrap_or("");
            let indent = text.len() - text.trim_start().len();
            let start = b.span.start + before + indent;
            self.error(CheckError::BodyDirective {
                kernel: kernel.to_string(),
                what,
                span: Span::new(start, start + text.trim().len()),
            });
        }
    }

    fn run(mut self) -> Option<ir::Kernel> {
        let k = self.k;
        let errors_before = self.errors.len();
        check_reserved(&k.name, self.errors);

        let tensors: Vec<&ast::TensorArg> = self.all(|m| match m {
            Member::Tensor(t) => Some(&**t),
            _ => None,
        });
        let params: Vec<&ast::Param> = self.all(|m| match m {
            Member::Param(p) => Some(p),
            _ => None,
        });
        let launch = self.single(
            |m| {
                if let Member::Launch(l) = m {
                    Some(l)
                } else {
                    None
                }
            },
            "launch",
        );
        let body = self.single(
            |m| {
                if let Member::Body(b) = m {
                    Some(b)
                } else {
                    None
                }
            },
            "body",
        );

        // Argument and param names share one namespace: the stub's parameter list.
        let mut names: HashMap<&'a str, Span> = HashMap::new();
        for ident in tensors
            .iter()
            .map(|t| &t.name)
            .chain(params.iter().map(|p| &p.name))
        {
            check_reserved(ident, self.errors);
            if let Some(&first) = names.get(ident.name.as_str()) {
                self.error(duplicate("argument", ident, first));
            } else {
                names.insert(&ident.name, ident.span);
            }
        }

        let ir_params = self.params(&params);
        let scope_params = params
            .iter()
            .zip(&ir_params)
            .enumerate()
            .filter_map(|(i, (p, ir))| Some((p.name.name.as_str(), (i, ir.as_ref()?.dtype))))
            .collect();

        // Each symbol is bound from the first place that carries it bare, in this order: an
        // input's dimension; a quantized argument's group size (its logical shape is
        // [K, N] with the group as a third extent); then, for a symbol no input carries,
        // an output's dimension: the caller's output fixes it, and the checker holds every
        // other use to that value (a launch cannot infer an output's shape, but it can
        // check one).
        let bare = |e: &'a ast::Expr| match &e.kind {
            ExprKind::Name(n) => Some((n, e.span)),
            _ => None,
        };
        let dims_of = |out: bool| {
            tensors
                .iter()
                .enumerate()
                .filter(move |(_, t)| (t.role == Role::Out) == out)
                .flat_map(move |(a, t)| {
                    t.extents
                        .iter()
                        .enumerate()
                        .filter_map(move |(d, e)| Some((bare(e)?, a, d)))
                })
        };
        let groups = tensors.iter().enumerate().filter_map(|(a, t)| {
            let group = t
                .quant
                .iter()
                .flat_map(|q| &q.options)
                .find(|o| o.name.name == "group")?;
            Some((bare(group.value.as_ref()?)?, a, 2))
        });
        let mut symbols: Vec<ir::Symbol> = Vec::new();
        let mut symbol_spans: HashMap<&str, Span> = HashMap::new();
        let mut symbol_ids: HashMap<&str, usize> = HashMap::new();
        for ((n, span), arg, dim) in dims_of(false).chain(groups).chain(dims_of(true)) {
            if self.consts.contains_key(n)
                || names.contains_key(n.as_str())
                || symbol_ids.contains_key(n.as_str())
            {
                continue;
            }
            symbol_ids.insert(n, symbols.len());
            symbol_spans.insert(n, span);
            symbols.push(ir::Symbol {
                name: n.clone(),
                arg,
                dim,
            });
        }
        for s in &symbols {
            let ident = ast::Ident {
                name: s.name.clone(),
                span: symbol_spans[s.name.as_str()],
            };
            check_reserved(&ident, self.errors);
        }
        let scope = Scope {
            consts: self.consts,
            symbols: symbol_ids,
            params: scope_params,
            declared: None,
            guarded: Cell::new(0),
        };

        let args: Vec<Option<ir::TensorArg>> =
            tensors.iter().map(|t| self.tensor(t, &scope)).collect();
        let constraints: Vec<Option<ir::Constraint>> = k
            .constraints
            .iter()
            .map(|c| {
                let expr = scope.bool_expr(c, self.errors)?;
                Some(ir::Constraint {
                    text: c.to_string(),
                    expr,
                })
            })
            .collect();
        let threads_given = launch.is_some_and(|l| l.threads.is_some());
        let launch = launch.and_then(|l| self.launch(l, &tensors, &scope, &names));
        if let Some(b) = body {
            self.body_directives(&k.name.name, b);
        }
        let body = body.map(|b| ir::Body {
            text: b.text.clone(),
            line: self.source.line_col(b.span.start).0,
        });
        // An early argument makes the body's wait the one before the others are read; a
        // body that never names it would read them while the grids ahead still write.
        let early = tensors.iter().find_map(|t| t.early);
        if let (Some(span), Some(b)) = (early, &body)
            && !mentions_word(&code_only(&b.text), "ima_wait_for_inputs")
        {
            self.error(CheckError::EarlyWithoutWait {
                kernel: k.name.name.clone(),
                span,
            });
        }

        let shared = self.shared_arrays(&scope, &mut names);
        let empty = match self
            .all(|m| {
                if let Member::Empty(p, sp) = m {
                    Some((*p, *sp))
                } else {
                    None
                }
            })
            .as_slice()
        {
            [] => ir::EmptyPolicy::Skip,
            [(p, _)] => *p,
            [_, (_, span), ..] => {
                self.error(CheckError::SecondEmptyPolicy { span: *span });
                ir::EmptyPolicy::Skip
            }
        };

        if self.errors.len() > errors_before {
            return None;
        }
        let launch = launch?;
        let mut constraints: Vec<ir::Constraint> =
            constraints.into_iter().collect::<Option<_>>()?;
        let args: Vec<ir::TensorArg> = args.into_iter().collect::<Option<_>>()?;
        constraints.extend(args.iter().flat_map(crate::abi::quant_tma_constraints));
        let shared: Vec<ir::SharedArray> = shared.into_iter().collect::<Option<_>>()?;
        let knowledge = self.constraint_facts(&constraints, symbols.len(), params.len(), &symbols);
        self.vector_alignment(&tensors, &args, &knowledge, &symbols);
        self.shared_fits(&shared, &knowledge, &symbols);
        if self.errors.len() > errors_before {
            return None;
        }
        self.kernel_clashes(&args, &symbols, &symbol_spans);
        if self.errors.len() > errors_before {
            return None;
        }
        let block_from_occupancy =
            matches!(launch.0, ir::Launch::Threads { .. }) && !threads_given && shared.is_empty();
        Some(ir::Kernel {
            name: k.name.name.clone(),
            docs: k.docs.clone(),
            line: self.source.line_col(k.name.span.start).0,
            symbols,
            args,
            params: ir_params.into_iter().collect::<Option<_>>()?,
            constraints,
            shared,
            empty,
            launch: launch.0,
            block: launch.1,
            block_from_occupancy,
            min_blocks: launch.2,
            body: body?,
        })
    }

    /// The members of one kind, in source order.
    fn all<T>(&self, pick: impl Fn(&'a Member) -> Option<T>) -> Vec<T> {
        self.k.members.iter().filter_map(pick).collect()
    }

    /// The one member of a kind that a kernel must have exactly once.
    fn single<T>(
        &mut self,
        pick: impl Fn(&'a Member) -> Option<&'a T>,
        what: &'static str,
    ) -> Option<&'a T> {
        let k = self.k;
        let found: Vec<&T> = k.members.iter().filter_map(pick).collect();
        match found.as_slice() {
            [one] => Some(one),
            [] => {
                self.error(CheckError::MissingMember {
                    kernel: k.name.name.clone(),
                    member: what,
                    span: k.name.span,
                });
                None
            }
            [_, ..] => {
                self.error(CheckError::RepeatedMember {
                    kernel: k.name.name.clone(),
                    member: what,
                    count: found.len(),
                    span: k.name.span,
                });
                None
            }
        }
    }
}
