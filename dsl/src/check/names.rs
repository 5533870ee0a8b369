//! The namespaces of the generated code, and the check that no two names the spec gives or
//! the back ends derive from it (crate::names) are the same identifier in one of them: a
//! kernel `k_args` beside a kernel `k` (both make the Rust struct `KArgs`), an argument
//! `w_scales` beside a quantized `w` (whose scales are `w_scales` in the CUDA and the custom
//! ops), a shared array named as a symbol (two parameters of the body), a param named as
//! its kernel (the custom op calls the kernel's Python function by that name).

use super::{CheckError, KernelChecker};
use crate::ast::{self, Member, Span};
use crate::ir;
use crate::names;
use crate::reserved::reserved;
use std::collections::HashMap;

/// One namespace of the generated code, each name with what claimed it first.
struct Namespace {
    /// Where the names meet: "the generated Rust module's types".
    place: &'static str,
    taken: HashMap<String, (String, Option<Span>)>,
}

impl Namespace {
    /// A namespace holding the generated code's own `fixed` names.
    fn new(place: &'static str, fixed: &[&str]) -> Self {
        let taken = fixed
            .iter()
            .map(|n| (n.to_string(), (format!("the generated code's `{n}`"), None)))
            .collect();
        Namespace { place, taken }
    }

    /// `name`, made by `what` (declared at `span`), unless something claimed it first.
    fn claim(&mut self, name: String, what: String, span: Span, errors: &mut Vec<CheckError>) {
        if let Some((first, first_span)) = self.taken.get(&name) {
            errors.push(CheckError::NameClash {
                name,
                what,
                span,
                first: first.clone(),
                first_span: *first_span,
                place: self.place,
            });
        } else {
            self.taken.insert(name, (what, Some(span)));
        }
    }
}

/// The file's names in the generated modules' top levels: the spec's constants, and each
/// kernel's Rust structs and contract static, Python functions and torch custom ops; and
/// the constants in each kernel's CUDA namespace. Then each Rust stub's fields, which its
/// `let` binds where the module's constants and statics are in scope (a field named as one
/// is read as a constant pattern). `kernels` and `consts` hold each name once (the first
/// declared, where it repeats).
pub(super) fn module_clashes(
    kernels: &[&ast::Kernel],
    consts: &[&ast::Ident],
    errors: &mut Vec<CheckError>,
) {
    let mut rust_types = Namespace::new(
        "the generated Rust module's types",
        names::RUST_MODULE_TYPES,
    );
    let mut rust_values = Namespace::new(
        "the generated Rust module's values",
        names::RUST_MODULE_VALUES,
    );
    let mut python = Namespace::new("the generated Python package", names::PYTHON_PACKAGE_NAMES);
    let mut ops = Namespace::new(
        "the Python package's torch custom ops",
        names::TORCH_OPS_NAMES,
    );
    let mut cuda = Namespace::new(
        "each kernel's namespace in the generated CUDA",
        names::CUDA_NAMESPACE_CALLS,
    );
    // A reserved constant is reported as such (check_reserved).
    for c in consts.iter().filter(|c| reserved(&c.name).is_none()) {
        let what = format!("constant `{}`", c.name);
        rust_values.claim(c.name.clone(), what.clone(), c.span, errors);
        python.claim(c.name.clone(), what.clone(), c.span, errors);
        cuda.claim(c.name.clone(), what, c.span, errors);
    }
    for k in kernels {
        let (name, span) = (&k.name.name, k.name.span);
        let claim = |ns: &mut Namespace, derived: String, what: &str, errors: &mut _| {
            ns.claim(derived, format!("kernel `{name}`'s {what}"), span, errors)
        };
        claim(
            &mut rust_types,
            names::rust_kernel_type(name),
            "Rust struct",
            errors,
        );
        claim(
            &mut rust_types,
            names::rust_args_struct(name),
            "Rust argument struct",
            errors,
        );
        claim(
            &mut rust_values,
            names::rust_contract_static(name),
            "contract static",
            errors,
        );
        claim(&mut python, name.clone(), "Python function", errors);
        claim(
            &mut python,
            names::python_output_shapes(name),
            "shape function",
            errors,
        );
        claim(&mut ops, name.clone(), "custom op", errors);
        claim(
            &mut ops,
            names::torch_out_op(name),
            "out-variant custom op",
            errors,
        );
    }
    for k in kernels {
        for (what, field) in k.members.iter().filter_map(|m| match m {
            Member::Tensor(t) => Some(("argument", &t.name)),
            Member::Param(p) => Some(("param", &p.name)),
            _ => None,
        }) {
            let Some((first, first_span)) = rust_values.taken.get(&field.name) else {
                continue;
            };
            // A constant's name is refused in the kernel's scope (kernel_clashes); of the
            // module's own values the stub's `let` sees only some (the others are
            // `Kernels`' locals, or the crate root's).
            let unseen =
                first_span.is_none() && !names::RUST_STUB_SEES.contains(&field.name.as_str());
            if !unseen && !consts.iter().any(|c| c.name == field.name) {
                errors.push(CheckError::NameClash {
                    name: field.name.clone(),
                    what: format!("kernel `{}`'s {what} `{}`", k.name.name, field.name),
                    span: field.span,
                    first: first.clone(),
                    first_span: *first_span,
                    place: "the generated Rust stub",
                });
            }
        }
    }
}

impl KernelChecker<'_> {
    /// The kernel's names in its two scopes. Its CUDA: the entry points' parameters (each
    /// buffer, a quantized argument's as `w_qweight`, `w_scales`, ..., the symbols and
    /// params) and the body's (the arguments, symbols, params, shared arrays and launch
    /// indices), with the file's constants, which its namespace declares. Its Python
    /// functions' parameters (the arguments, a quantized one's buffers, group size and K
    /// flattened for the custom ops, the params, the symbols only outputs carry), beside
    /// the kernel's function and shape function, which the custom ops call by name. Run
    /// once the kernel has no other error: those checks report the plain duplicates.
    pub(super) fn kernel_clashes(
        &mut self,
        args: &[ir::TensorArg],
        symbols: &[ir::Symbol],
        symbol_spans: &HashMap<&str, Span>,
    ) {
        let k = self.k;
        let mut cuda = Namespace::new("the kernel's CUDA", &[]);
        let mut python = Namespace::new("the kernel's Python functions", &[]);
        // A clash of both scopes (`w_scales` beside a quantized `w`) is reported once.
        let mut found = Vec::new();
        let mut consts: Vec<(&String, Span)> = self
            .consts
            .iter()
            .map(|(name, (_, span))| (name, *span))
            .collect();
        consts.sort_by_key(|(_, span)| span.start);
        for (name, span) in consts {
            cuda.claim(name.clone(), format!("constant `{name}`"), span, &mut found);
        }
        let kernel = &k.name.name;
        python.claim(
            kernel.clone(),
            format!("kernel `{kernel}`'s Python function"),
            k.name.span,
            &mut found,
        );
        python.claim(
            names::python_output_shapes(kernel),
            format!("kernel `{kernel}`'s shape function"),
            k.name.span,
            &mut found,
        );
        let tensors = k.members.iter().filter_map(|m| match m {
            Member::Tensor(t) => Some(&**t),
            _ => None,
        });
        for (t, a) in tensors.zip(args) {
            let what = format!("argument `{}`", a.name);
            cuda.claim(a.name.clone(), what.clone(), t.name.span, &mut found);
            python.claim(a.name.clone(), what, t.name.span, &mut found);
            let Some(q) = &a.quant else { continue };
            let what = |part: &str| format!("quantized argument `{}`'s {part}", a.name);
            for b in q.buffers(&a.dims[0], &a.dims[1], a.dtype) {
                let name = names::quant_buffer(&a.name, b.part);
                cuda.claim(name.clone(), what(b.part), t.name.span, &mut found);
                python.claim(name, what(b.part), t.name.span, &mut found);
            }
            let group_size = names::quant_group_size(&a.name);
            python.claim(group_size, what("group size"), t.name.span, &mut found);
            python.claim(names::quant_k(&a.name), what("K"), t.name.span, &mut found);
        }
        for m in &k.members {
            match m {
                Member::Param(p) => {
                    let what = format!("param `{}`", p.name.name);
                    let name = &p.name.name;
                    cuda.claim(name.clone(), what.clone(), p.name.span, &mut found);
                    python.claim(name.clone(), what, p.name.span, &mut found);
                }
                Member::Shared(sh) => {
                    let what = format!("shared array `{}`", sh.name.name);
                    cuda.claim(sh.name.name.clone(), what, sh.name.span, &mut found);
                }
                _ => {}
            }
        }
        for s in symbols {
            let what = format!("symbol `{}`", s.name);
            let span = symbol_spans[s.name.as_str()];
            cuda.claim(s.name.clone(), what.clone(), span, &mut found);
            if args[s.arg].role == ir::Role::Out {
                python.claim(s.name.clone(), what, span, &mut found);
            }
        }
        let launch_indices = k.members.iter().flat_map(|m| match m {
            Member::Launch(ast::Launch {
                kind: ast::LaunchKind::Over { indices, .. },
                ..
            }) => indices.iter().flatten().collect(),
            _ => Vec::new(),
        });
        for i in launch_indices {
            let what = format!("launch index `{}`", i.name);
            cuda.claim(i.name.clone(), what, i.span, &mut found);
        }
        for e in found {
            if !self.errors.iter().any(|f| same_clash(f, &e)) {
                self.errors.push(e);
            }
        }
    }
}

/// Two reports of one name at one place (from the kernel's two scopes).
fn same_clash(a: &CheckError, b: &CheckError) -> bool {
    matches!(
        (a, b),
        (
            CheckError::NameClash { name: n, span: s, .. },
            CheckError::NameClash { name: m, span: t, .. },
        ) if n == m && s == t
    )
}
