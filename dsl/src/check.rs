//! Syntax tree to IR: resolves names, binds symbols, folds constants, and reports every
//! error in the file with a span and a help line.

use crate::ast::{self, ExprKind, Member, Role, Span};
use crate::diag::{Diagnostic, Source};
use crate::dtype::DType;
use crate::facts::{Knowledge, Var};
use crate::ir;
use crate::reserved::reserved;
use std::collections::HashMap;

mod values;

/// The most dynamic shared memory one block may use on sm_90 (H100, H200): 227 KiB.
const MAX_SHARED_BYTES: u64 = 227 * 1024;

fn symbols_in(e: &ir::Expr) -> Vec<usize> {
    match e {
        ir::Expr::Sym(s) => vec![*s],
        ir::Expr::Const(_) | ir::Expr::Param(_) => Vec::new(),
        ir::Expr::Neg(a) | ir::Expr::Not(a) => symbols_in(a),
        ir::Expr::Bin(_, a, b) => {
            let mut v = symbols_in(a);
            v.extend(symbols_in(b));
            v
        }
    }
}

/// Threads per block when the spec does not say `threads N`.
const DEFAULT_BLOCK: u32 = 256;

pub fn check(file: &ast::File, source: &Source) -> Result<ir::Module, Vec<Diagnostic>> {
    let mut diags = Vec::new();
    let mut consts: HashMap<String, (i64, Span)> = HashMap::new();
    let mut kernel_names: HashMap<String, Span> = HashMap::new();
    let mut kernels = Vec::new();
    let mut const_order = Vec::new();
    for item in &file.items {
        match item {
            ast::Item::Const(c) => {
                let scope = Scope::consts_only(&consts);
                let value = scope
                    .int_expr(&c.value, &mut diags)
                    .and_then(|e| fold(&e, &c.value, &mut diags));
                if let Some(prev) = consts.get(&c.name.name) {
                    diags.push(duplicate("constant", &c.name, prev.1));
                } else if let Some(v) = value {
                    check_reserved(&c.name, &mut diags);
                    consts.insert(c.name.name.clone(), (v, c.name.span));
                    const_order.push((c.name.name.clone(), v));
                }
            }
            ast::Item::Kernel(k) => {
                if let Some(&prev) = kernel_names.get(&k.name.name) {
                    diags.push(duplicate("kernel", &k.name, prev));
                } else {
                    kernel_names.insert(k.name.name.clone(), k.name.span);
                }
                if let Some(kernel) = KernelChecker::new(k, &consts, source, &mut diags).run() {
                    kernels.push(kernel);
                }
            }
        }
    }
    if diags.is_empty() {
        Ok(ir::Module {
            file: source.name.clone(),
            consts: const_order,
            kernels,
        })
    } else {
        Err(diags)
    }
}

fn duplicate(what: &str, name: &ast::Ident, first: Span) -> Diagnostic {
    Diagnostic::error(
        format!("duplicate {what} `{}`", name.name),
        name.span,
        "declared again here",
    )
    .with_related(first, "first declared here")
    .with_help(format!("rename one of the two `{}`", name.name))
}

fn check_reserved(name: &ast::Ident, diags: &mut Vec<Diagnostic>) {
    if let Some(why) = reserved(&name.name) {
        diags.push(
            Diagnostic::error(
                format!("`{}` is a reserved name", name.name),
                name.span,
                "reserved",
            )
            .with_help(format!("rename it: {why}")),
        );
    }
}

/// Evaluates a constant expression (one with no symbols or params).
fn fold(e: &ir::Expr, at: &ast::Expr, diags: &mut Vec<Diagnostic>) -> Option<i64> {
    let v = eval_const(e);
    if v.is_none() {
        diags.push(Diagnostic::error(
            "constant expression overflows or divides by zero",
            at.span,
            "cannot be evaluated",
        ));
    }
    v
}

fn eval_const(e: &ir::Expr) -> Option<i64> {
    use ir::BinOp::*;
    Some(match e {
        ir::Expr::Const(v) => *v,
        ir::Expr::Sym(_) | ir::Expr::Param(_) => return None,
        ir::Expr::Neg(a) => eval_const(a)?.checked_neg()?,
        ir::Expr::Not(a) => (eval_const(a)? == 0) as i64,
        ir::Expr::Bin(op, a, b) => {
            let (a, b) = (eval_const(a)?, eval_const(b)?);
            match op {
                Add => a.checked_add(b)?,
                Sub => a.checked_sub(b)?,
                Mul => a.checked_mul(b)?,
                Div => a.checked_div(b)?,
                Rem => a.checked_rem(b)?,
                CeilDiv if b > 0 => a.checked_add(b - 1)?.div_euclid(b),
                CeilDiv => return None,
                Min => a.min(b),
                Max => a.max(b),
                Eq => (a == b) as i64,
                Ne => (a != b) as i64,
                Lt => (a < b) as i64,
                Le => (a <= b) as i64,
                Gt => (a > b) as i64,
                Ge => (a >= b) as i64,
                And => (a != 0 && b != 0) as i64,
                Or => (a != 0 || b != 0) as i64,
            }
        }
    })
}

/// Whether an expression is a number or a truth value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ty {
    Int,
    Bool,
}

impl Ty {
    fn name(self) -> &'static str {
        match self {
            Ty::Int => "an integer",
            Ty::Bool => "a condition",
        }
    }
}

/// What a name in an expression can refer to.
struct Scope<'a> {
    consts: &'a HashMap<String, (i64, Span)>,
    symbols: HashMap<&'a str, usize>,
    params: HashMap<&'a str, (usize, DType)>,
}

impl<'a> Scope<'a> {
    fn consts_only(consts: &'a HashMap<String, (i64, Span)>) -> Self {
        Scope {
            consts,
            symbols: HashMap::new(),
            params: HashMap::new(),
        }
    }

    /// Resolves an expression that must be an integer.
    fn int_expr(&self, e: &ast::Expr, diags: &mut Vec<Diagnostic>) -> Option<ir::Expr> {
        self.typed(e, Ty::Int, diags)
    }

    /// Resolves an expression that must be a condition.
    fn bool_expr(&self, e: &ast::Expr, diags: &mut Vec<Diagnostic>) -> Option<ir::Expr> {
        self.typed(e, Ty::Bool, diags)
    }

    fn typed(&self, e: &ast::Expr, want: Ty, diags: &mut Vec<Diagnostic>) -> Option<ir::Expr> {
        let (ir, ty) = self.resolve(e, diags)?;
        if ty == want {
            Some(ir)
        } else {
            let help = match want {
                Ty::Bool => "write a comparison, e.g. `D % 8 == 0`",
                Ty::Int => "a comparison yields a truth value, not a number",
            };
            diags.push(
                Diagnostic::error(
                    format!(
                        "type mismatch: expected {}, found {}",
                        want.name(),
                        ty.name()
                    ),
                    e.span,
                    format!("this is {}", ty.name()),
                )
                .with_help(help),
            );
            None
        }
    }

    fn resolve(&self, e: &ast::Expr, diags: &mut Vec<Diagnostic>) -> Option<(ir::Expr, Ty)> {
        use ast::BinOp as A;
        use ir::BinOp as B;
        match &e.kind {
            ExprKind::Int(v) => Some((ir::Expr::Const(*v), Ty::Int)),
            ExprKind::Name(n) => self.name(n, e.span, diags).map(|x| (x, Ty::Int)),
            ExprKind::Neg(a) => Some((ir::Expr::Neg(Box::new(self.int_expr(a, diags)?)), Ty::Int)),
            ExprKind::Not(a) => {
                Some((ir::Expr::Not(Box::new(self.bool_expr(a, diags)?)), Ty::Bool))
            }
            ExprKind::Bin(op, a, b) => {
                let (op, operand, result) = match op {
                    A::Add => (B::Add, Ty::Int, Ty::Int),
                    A::Sub => (B::Sub, Ty::Int, Ty::Int),
                    A::Mul => (B::Mul, Ty::Int, Ty::Int),
                    A::Div => (B::Div, Ty::Int, Ty::Int),
                    A::Rem => (B::Rem, Ty::Int, Ty::Int),
                    A::Eq => (B::Eq, Ty::Int, Ty::Bool),
                    A::Ne => (B::Ne, Ty::Int, Ty::Bool),
                    A::Lt => (B::Lt, Ty::Int, Ty::Bool),
                    A::Le => (B::Le, Ty::Int, Ty::Bool),
                    A::Gt => (B::Gt, Ty::Int, Ty::Bool),
                    A::Ge => (B::Ge, Ty::Int, Ty::Bool),
                    A::And => (B::And, Ty::Bool, Ty::Bool),
                    A::Or => (B::Or, Ty::Bool, Ty::Bool),
                };
                // Resolve both sides before giving up, so both sides' errors are reported.
                let a = self.typed(a, operand, diags);
                let b = self.typed(b, operand, diags);
                Some((ir::Expr::Bin(op, Box::new(a?), Box::new(b?)), result))
            }
            ExprKind::Call(f, args) => self.call(f, args, e.span, diags).map(|x| (x, Ty::Int)),
        }
    }

    fn call(
        &self,
        f: &ast::Ident,
        args: &[ast::Expr],
        span: Span,
        diags: &mut Vec<Diagnostic>,
    ) -> Option<ir::Expr> {
        match (f.name.as_str(), args) {
            ("ceil", [arg]) => match &arg.kind {
                ExprKind::Bin(ast::BinOp::Div, a, b) => Some(ir::Expr::Bin(
                    ir::BinOp::CeilDiv,
                    Box::new(self.int_expr(a, diags)?),
                    Box::new(self.int_expr(b, diags)?),
                )),
                _ => {
                    diags.push(
                        Diagnostic::error("`ceil` takes a division", arg.span, "not a division")
                            .with_help("write `ceil(K / G)`: extents are integers, rounded up"),
                    );
                    None
                }
            },
            ("min" | "max", [a, b]) => {
                let op = if f.name == "min" {
                    ir::BinOp::Min
                } else {
                    ir::BinOp::Max
                };
                let a = self.int_expr(a, diags);
                let b = self.int_expr(b, diags);
                Some(ir::Expr::Bin(op, Box::new(a?), Box::new(b?)))
            }
            ("ceil" | "min" | "max", _) => {
                let want = if f.name == "ceil" { 1 } else { 2 };
                diags.push(Diagnostic::error(
                    format!(
                        "`{}` takes {want} argument(s), found {}",
                        f.name,
                        args.len()
                    ),
                    span,
                    "wrong number of arguments",
                ));
                None
            }
            _ => {
                diags.push(
                    Diagnostic::error(format!("unknown function `{}`", f.name), f.span, "unknown")
                        .with_help("extents and constraints may call `ceil(a / b)`, `min(a, b)` and `max(a, b)`"),
                );
                None
            }
        }
    }

    fn name(&self, n: &str, span: Span, diags: &mut Vec<Diagnostic>) -> Option<ir::Expr> {
        if let Some(&(v, _)) = self.consts.get(n) {
            return Some(ir::Expr::Const(v));
        }
        if let Some(&s) = self.symbols.get(n) {
            return Some(ir::Expr::Sym(s));
        }
        if let Some(&(p, dtype)) = self.params.get(n) {
            if dtype.is_integer() {
                return Some(ir::Expr::Param(p));
            }
            diags.push(
                Diagnostic::error(
                    format!(
                        "type mismatch: param `{n}` is {}, not an integer",
                        dtype.name()
                    ),
                    span,
                    "not an integer",
                )
                .with_help("only integer params may appear in extents and constraints"),
            );
            return None;
        }
        let d = Diagnostic::error(format!("unknown symbol `{n}`"), span, "not declared")
            .with_help(format!(
                "bind `{n}` by using it as a dimension of an input or an output, or declare `const {n} = ...` or `param {n}: i32`"
            ));
        diags.push(d);
        None
    }
}

struct KernelChecker<'a> {
    k: &'a ast::Kernel,
    consts: &'a HashMap<String, (i64, Span)>,
    source: &'a Source,
    diags: &'a mut Vec<Diagnostic>,
}

impl<'a> KernelChecker<'a> {
    fn new(
        k: &'a ast::Kernel,
        consts: &'a HashMap<String, (i64, Span)>,
        source: &'a Source,
        diags: &'a mut Vec<Diagnostic>,
    ) -> Self {
        KernelChecker {
            k,
            consts,
            source,
            diags,
        }
    }

    fn error(&mut self, d: Diagnostic) {
        self.diags.push(d);
    }

    fn run(mut self) -> Option<ir::Kernel> {
        let k = self.k;
        let errors_before = self.diags.len();
        check_reserved(&k.name, self.diags);

        let tensors: Vec<&ast::TensorArg> = self.all(|m| match m {
            Member::Tensor(t) => Some(t),
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
            check_reserved(ident, self.diags);
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

        // Bind each symbol from the first input dimension that is exactly that symbol.
        let mut symbols: Vec<ir::Symbol> = Vec::new();
        let mut symbol_spans: HashMap<&str, Span> = HashMap::new();
        let mut symbol_ids: HashMap<&str, usize> = HashMap::new();
        for (a, t) in tensors.iter().enumerate() {
            for (d, e) in t.extents.iter().enumerate() {
                let ExprKind::Name(n) = &e.kind else { continue };
                if self.consts.contains_key(n) || names.contains_key(n.as_str()) {
                    continue;
                }
                if t.role != Role::Out && !symbol_ids.contains_key(n.as_str()) {
                    symbol_ids.insert(n, symbols.len());
                    symbol_spans.insert(n, e.span);
                    symbols.push(ir::Symbol {
                        name: n.clone(),
                        arg: a,
                        dim: d,
                    });
                }
            }
        }
        // A quantized argument's group size, when a bare symbol, is bound from it too: its
        // logical shape is [K, N] with the group as a third extent.
        for (a, t) in tensors.iter().enumerate() {
            let group = t
                .quant
                .iter()
                .flat_map(|q| &q.options)
                .find(|o| o.name.name == "group");
            let Some(ast::Expr {
                kind: ExprKind::Name(n),
                span,
            }) = group.and_then(|o| o.value.as_ref())
            else {
                continue;
            };
            if !self.consts.contains_key(n)
                && !names.contains_key(n.as_str())
                && !symbol_ids.contains_key(n.as_str())
            {
                symbol_ids.insert(n, symbols.len());
                symbol_spans.insert(n, *span);
                symbols.push(ir::Symbol {
                    name: n.clone(),
                    arg: a,
                    dim: 2,
                });
            }
        }
        // A symbol no input carries bare is bound by the first output dimension that is
        // exactly it: the caller's output fixes it, and the checker holds every other use
        // to that value (a launch cannot infer an output's shape, but it can check one).
        for (a, t) in tensors.iter().enumerate() {
            for (d, e) in t.extents.iter().enumerate() {
                let ExprKind::Name(n) = &e.kind else { continue };
                if t.role == Role::Out
                    && !self.consts.contains_key(n)
                    && !names.contains_key(n.as_str())
                    && !symbol_ids.contains_key(n.as_str())
                {
                    symbol_ids.insert(n, symbols.len());
                    symbol_spans.insert(n, e.span);
                    symbols.push(ir::Symbol {
                        name: n.clone(),
                        arg: a,
                        dim: d,
                    });
                }
            }
        }
        for s in &symbols {
            let ident = ast::Ident {
                name: s.name.clone(),
                span: symbol_spans[s.name.as_str()],
            };
            check_reserved(&ident, self.diags);
        }
        let scope = Scope {
            consts: self.consts,
            symbols: symbol_ids,
            params: scope_params,
        };

        let args: Vec<Option<ir::TensorArg>> =
            tensors.iter().map(|t| self.tensor(t, &scope)).collect();
        let constraints: Vec<Option<ir::Constraint>> = k
            .constraints
            .iter()
            .map(|c| {
                let expr = scope.bool_expr(c, self.diags)?;
                Some(ir::Constraint {
                    text: c.to_string(),
                    expr,
                })
            })
            .collect();
        let threads_given = launch.is_some_and(|l| l.threads.is_some());
        let launch = launch.and_then(|l| self.launch(l, &tensors, &scope, &names));
        let body = body.map(|b| ir::Body {
            text: b.text.clone(),
            line: self.source.line_col(b.span.start).0,
        });

        let shared_decls: Vec<&ast::Shared> = self.all(|m| match m {
            Member::Shared(sh) => Some(sh),
            _ => None,
        });
        let shared: Vec<Option<ir::SharedArray>> = shared_decls
            .into_iter()
            .map(|sh| {
                check_reserved(&sh.name, self.diags);
                if let Some(&first) = names.get(sh.name.name.as_str()) {
                    self.error(duplicate("name", &sh.name, first));
                }
                names.insert(&sh.name.name, sh.name.span);
                let dtype = self.dtype(&sh.dtype);
                let dims: Vec<Option<ir::Extent>> = sh
                    .extents
                    .iter()
                    .map(|e| {
                        Some(ir::Extent {
                            text: e.to_string(),
                            expr: scope.int_expr(e, self.diags)?,
                        })
                    })
                    .collect();
                Some(ir::SharedArray {
                    name: sh.name.name.clone(),
                    docs: sh.docs.clone(),
                    dtype: dtype?,
                    dims: dims.into_iter().collect::<Option<_>>()?,
                })
            })
            .collect();
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
                self.error(
                    Diagnostic::error("a second `empty` policy", *span, "given twice")
                        .with_help("keep one"),
                );
                ir::EmptyPolicy::Skip
            }
        };

        if self.diags.len() > errors_before {
            return None;
        }
        let launch = launch?;
        let constraints: Vec<ir::Constraint> = constraints.into_iter().collect::<Option<_>>()?;
        let args: Vec<ir::TensorArg> = args.into_iter().collect::<Option<_>>()?;
        let shared: Vec<ir::SharedArray> = shared.into_iter().collect::<Option<_>>()?;
        let knowledge = self.constraint_facts(&constraints, symbols.len(), params.len(), &symbols);
        self.vector_alignment(&tensors, &args, &knowledge, &symbols);
        self.shared_fits(&shared, &knowledge, &symbols);
        if self.diags.len() > errors_before {
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

    /// Learns the constraints one by one, reporting each that can never hold: constant
    /// and false, or contradicting the ones before it.
    fn constraint_facts(
        &mut self,
        constraints: &[ir::Constraint],
        symbols: usize,
        params: usize,
        symbol_names: &[ir::Symbol],
    ) -> Knowledge {
        let mut learned: Vec<&ir::Expr> = Vec::new();
        for (c, ast) in constraints.iter().zip(&self.k.constraints) {
            learned.push(&c.expr);
            if let Some(v) = eval_const(&c.expr) {
                if v == 0 {
                    self.error(
                        Diagnostic::error(
                            format!("constraint `{}` never holds", c.text),
                            ast.span,
                            "always false",
                        )
                        .with_help("remove it, or fix the constant"),
                    );
                }
                continue;
            }
            let k = Knowledge::from_constraints(symbols, params, &learned);
            let vars = (0..symbols)
                .map(Var::Sym)
                .chain((0..params).map(Var::Param));
            for v in vars {
                let f = k.facts(v);
                let name = match v {
                    Var::Sym(s) => symbol_names[s].name.as_str(),
                    Var::Param(p) => self.param_name(p),
                };
                let empty_range = matches!((f.lo, f.hi), (Some(lo), Some(hi)) if lo > hi);
                let bad_multiple = match (f.lo, f.hi) {
                    (Some(lo), Some(hi)) if lo == hi => {
                        f.multiple_of.iter().find(|&&m| lo % m != 0).copied()
                    }
                    _ => None,
                };
                if empty_range || bad_multiple.is_some() {
                    let why = if let Some(m) = bad_multiple {
                        format!(
                            "`{name}` = {} is no multiple of {m}",
                            f.lo.unwrap_or_default()
                        )
                    } else {
                        format!(
                            "no `{name}` is at least {} and at most {}",
                            f.lo.unwrap_or_default(),
                            f.hi.unwrap_or_default()
                        )
                    };
                    self.error(
                        Diagnostic::error(format!("constraints on `{name}` can never hold together"), ast.span, why)
                            .with_help("every launch would be refused: loosen or remove one of the constraints"),
                    );
                    break;
                }
            }
        }
        Knowledge::from_constraints(symbols, params, &learned)
    }

    fn param_name(&self, index: usize) -> &'a str {
        let params = self.all(|m| match m {
            Member::Param(p) => Some(p.name.name.as_str()),
            _ => None,
        });
        params[index]
    }

    /// `align(16)` on f16 data promises 8-element vector access along the innermost
    /// physical dimension, which holds only if its extent is a multiple of 8.
    fn vector_alignment(
        &mut self,
        tensors: &[&ast::TensorArg],
        args: &[ir::TensorArg],
        k: &Knowledge,
        symbols: &[ir::Symbol],
    ) {
        for (t, a) in tensors.iter().zip(args) {
            let Some((_, span)) = t.align else { continue };
            let width = (a.align / a.dtype.size()) as i64;
            if width <= 1 {
                continue;
            }
            let Some(inner) = a.physical_dims().last() else {
                continue;
            };
            let ok = match &inner.expr {
                ir::Expr::Const(c) => c % width == 0,
                ir::Expr::Sym(s) => k.facts(Var::Sym(*s)).is_multiple_of(width),
                ir::Expr::Param(p) => k.facts(Var::Param(*p)).is_multiple_of(width),
                _ => false,
            };
            if !ok {
                let help = match &inner.expr {
                    ir::Expr::Sym(s) => format!("add `where {} % {width} == 0`", symbols[*s].name),
                    _ => format!(
                        "make the innermost extent a symbol constrained to a multiple of {width}"
                    ),
                };
                self.error(
                    Diagnostic::error(
                        format!(
                            "`align({})` on `{}` promises {width}-element vectors, but its inner extent `{}` is not constrained to a multiple of {width}",
                            a.align, a.name, inner.text
                        ),
                        span,
                        format!("{width} × {} = {} bytes", a.dtype.name(), a.align),
                    )
                    .with_help(help),
                );
            }
        }
    }

    /// Shared memory must fit the device at the largest sizes the constraints allow.
    fn shared_fits(&mut self, shared: &[ir::SharedArray], k: &Knowledge, symbols: &[ir::Symbol]) {
        let decls: Vec<&ast::Shared> = self.all(|m| {
            if let Member::Shared(sh) = m {
                Some(sh)
            } else {
                None
            }
        });
        let mut total: u64 = 0;
        for (a, decl) in shared.iter().zip(decls) {
            let mut elems: u64 = 1;
            for d in &a.dims {
                match k.upper(&d.expr) {
                    Some(hi) => elems = elems.saturating_mul(hi.max(0) as u64),
                    None => {
                        let unbounded: Vec<String> = symbols_in(&d.expr)
                            .into_iter()
                            .filter(|&s| k.facts(Var::Sym(s)).hi.is_none())
                            .map(|s| symbols[s].name.clone())
                            .collect();
                        let help = match unbounded.first() {
                            Some(n) => format!("bound it: add e.g. `where {n} <= 256`"),
                            None => "use extents the constraints bound from above".to_string(),
                        };
                        self.error(
                            Diagnostic::error(
                                format!("nothing bounds the size of shared `{}`: extent `{}` has no upper limit", a.name, d.text),
                                decl.span,
                                "unbounded shared memory",
                            )
                            .with_help(help),
                        );
                        return;
                    }
                }
            }
            let bytes = elems.saturating_mul(a.dtype.size());
            total = total.saturating_add(bytes.div_ceil(16).saturating_mul(16));
            if total > MAX_SHARED_BYTES {
                self.error(
                    Diagnostic::error(
                        format!("shared memory can reach {total} bytes, past the {MAX_SHARED_BYTES} bytes a block may use"),
                        decl.span,
                        format!("`{}` alone can take {bytes} bytes", a.name),
                    )
                    .with_help("tighten the `where` bounds on its extents, or tile the work"),
                );
                return;
            }
        }
    }

    /// The members of one kind, in source order.
    fn all<T>(&self, pick: impl Fn(&'a Member) -> Option<T>) -> Vec<T> {
        self.k.members.iter().filter_map(pick).collect()
    }

    /// The one member of a kind that a kernel must have exactly once.
    fn single<T>(
        &mut self,
        pick: impl Fn(&'a Member) -> Option<&'a T>,
        what: &str,
    ) -> Option<&'a T> {
        let k = self.k;
        let found: Vec<&T> = k.members.iter().filter_map(pick).collect();
        match found.as_slice() {
            [one] => Some(one),
            [] => {
                let example = match what {
                    "launch" => {
                        "add `launch over OUT[i, j]`, naming an output and one index per dimension"
                    }
                    _ => "add `body { ... }` with the kernel's CUDA C",
                };
                self.error(
                    Diagnostic::error(
                        format!("kernel `{}` has no `{what}`", k.name.name),
                        k.name.span,
                        format!("needs a `{what}`"),
                    )
                    .with_help(example),
                );
                None
            }
            [_, ..] => {
                self.error(
                    Diagnostic::error(
                        format!("kernel `{}` has {} `{what}`s", k.name.name, found.len()),
                        k.name.span,
                        format!("needs exactly one `{what}`"),
                    )
                    .with_help(format!("keep one `{what}`")),
                );
                None
            }
        }
    }

    fn dtype(&mut self, ident: &ast::Ident) -> Option<DType> {
        let d = DType::parse(&ident.name);
        if d.is_none() {
            let all: Vec<&str> = DType::ALL.iter().map(|d| d.name()).collect();
            self.error(
                Diagnostic::error(
                    format!("unknown element type `{}`", ident.name),
                    ident.span,
                    "unknown type",
                )
                .with_help(format!("use one of {}", all.join(", "))),
            );
        }
        d
    }

    fn params(&mut self, params: &[&ast::Param]) -> Vec<Option<ir::Param>> {
        params
            .iter()
            .map(|p| {
                let dtype = self.dtype(&p.dtype)?;
                if matches!(dtype, DType::F16 | DType::BF16 | DType::E4M3 | DType::E5M2 | DType::I8 | DType::U8 | DType::I16 | DType::U16) {
                    self.error(
                        Diagnostic::error(
                            format!("param `{}` cannot be {}", p.name.name, dtype.name()),
                            p.dtype.span,
                            "not a scalar param type",
                        )
                        .with_help("pass scalars as f32, f64, i32, u32, i64 or u64 and convert in the body"),
                    );
                    return None;
                }
                Some(ir::Param {
                    name: p.name.name.clone(),
                    docs: p.docs.clone(),
                    dtype,
                })
            })
            .collect()
    }

    fn tensor(&mut self, t: &ast::TensorArg, scope: &Scope) -> Option<ir::TensorArg> {
        let bits = match t.dtype.name.as_str() {
            "q4" => Some(4),
            "q8" => Some(8),
            _ => None,
        };
        let (dtype, quant) = match (bits, &t.quant) {
            (None, None) => (self.dtype(&t.dtype), None),
            (Some(bits), Some(q)) => match self.quant(t, bits, q, scope) {
                Some((quant, scales)) => (Some(scales), Some(quant)),
                None => (None, None),
            },
            (Some(_), None) => {
                self.error(
                    Diagnostic::error(format!("`{}` needs a quantization format", t.dtype.name), t.dtype.span, "no format")
                        .with_help("add one, e.g. `gptq(group = 128)`, `awq(group = 128)` or, for q8, `int8(group = 128)`"),
                );
                (None, None)
            }
            (None, Some(q)) => {
                self.error(
                    Diagnostic::error(
                        format!("`{}(...)` on a `{}` tensor", q.kind.name, t.dtype.name),
                        q.kind.span,
                        "not a quantized type",
                    )
                    .with_help(
                        "quantization formats apply to `q4` (gptq, awq) and `q8` (int8) tensors",
                    ),
                );
                (None, None)
            }
        };
        if t.extents.is_empty() {
            self.error(
                Diagnostic::error(
                    format!("argument `{}` has no dimensions", t.name.name),
                    t.name.span,
                    "rank 0",
                )
                .with_help("use a `param` for a scalar"),
            );
        }
        let dims: Vec<Option<ir::Extent>> = t
            .extents
            .iter()
            .map(|e| {
                Some(ir::Extent {
                    text: e.to_string(),
                    expr: scope.int_expr(e, self.diags)?,
                })
            })
            .collect();
        let stored = match &t.stored {
            None => Some((0..t.extents.len()).collect()),
            Some(order) => self.stored(t, order),
        };
        let align = match (t.align, dtype) {
            (None, Some(d)) => Some(d.size()),
            (Some((n, span)), Some(d)) => {
                if !n.is_power_of_two() {
                    self.error(
                        Diagnostic::error(
                            format!("`align({n})` is not a power of two"),
                            span,
                            "not a power of two",
                        )
                        .with_help(format!("use align({})", n.next_power_of_two())),
                    );
                    None
                } else if n < d.size() {
                    self.error(
                        Diagnostic::error(
                            format!("`align({n})` is below the size of {} ({} bytes)", d.name(), d.size()),
                            span,
                            "smaller than one element",
                        )
                        .with_help(format!("every {} pointer is already {}-byte aligned: use align({}) or more, or drop it", d.name(), d.size(), d.size())),
                    );
                    None
                } else {
                    Some(n)
                }
            }
            (_, None) => None,
        };
        let values = self.values(t, dtype, scope);
        Some(ir::TensorArg {
            name: t.name.name.clone(),
            docs: t.docs.clone(),
            role: t.role,
            dtype: dtype?,
            dims: dims.into_iter().collect::<Option<_>>()?,
            stored: stored?,
            strided: t.strided.is_some(),
            align: align?,
            quant,
            values: values?,
        })
    }

    /// Reads a quantization format's options; returns it with the scales' type.
    fn quant(
        &mut self,
        t: &ast::TensorArg,
        bits: u32,
        q: &ast::Quant,
        scope: &Scope,
    ) -> Option<(ir::Quant, DType)> {
        let errors_before = self.diags.len();
        let format_bits = if q.kind.name == "int8" { 8 } else { 4 };
        if bits != format_bits {
            self.error(
                Diagnostic::error(
                    format!(
                        "`{}` stores {format_bits}-bit values, but `{}` is `q{bits}`",
                        q.kind.name, t.name.name
                    ),
                    q.kind.span,
                    "wrong width",
                )
                .with_help(if bits == 4 {
                    "use `gptq(...)` or `awq(...)` for q4"
                } else {
                    "use `int8(...)` for q8"
                }),
            );
        }
        if t.extents.len() != 2 {
            self.error(
                Diagnostic::error(
                    format!(
                        "quantized `{}` has {} dimensions",
                        t.name.name,
                        t.extents.len()
                    ),
                    t.name.span,
                    "must be [K, N]",
                )
                .with_help("quantized weights are matrices: `q4[K, N]`, grouped along K"),
            );
        }
        if t.role != Role::In {
            self.error(
                Diagnostic::error(
                    format!("quantized `{}` is not `in`", t.name.name),
                    t.name.span,
                    "read-only",
                )
                .with_help(
                    "kernels read quantized weights; write dequantized values to a plain output",
                ),
            );
        }
        // align(16) is the one layout promise a 4-bit format can use: its tiles then read
        // qweight and scales in 16-byte vectors.
        let align_span = t
            .align
            .filter(|&(n, _)| !(n == 16 && format_bits == 4))
            .map(|a| a.1);
        if let Some(span) = align_span {
            self.error(
                Diagnostic::error(
                    format!("`align` on quantized `{}` other than align(16) on a 4-bit format", t.name.name),
                    span,
                    "not allowed here",
                )
                .with_help("align(16) on a q4 `gptq` or `awq` argument (with N a multiple of 8) makes its tiles load 16 bytes at a time; no other alignment applies"),
            );
        }
        if let Some(span) = t.stored.as_ref().map(|s| s[0].span).or(t.strided) {
            self.error(
                Diagnostic::error(
                    "layout attributes on a quantized tensor",
                    span,
                    "not allowed here",
                )
                .with_help("the format fixes every buffer's layout"),
            );
        }
        let mut group = None;
        let mut zeros = ir::Zeros::MinusOne;
        let mut g_idx = false;
        let mut scales = DType::F16;
        let allowed: &[&str] = match q.kind.name.as_str() {
            "gptq" => &["group", "zeros", "sym", "g_idx", "scales"],
            _ => &["group", "scales"],
        };
        for opt in &q.options {
            let name = opt.name.name.as_str();
            if !allowed.contains(&name) {
                self.error(
                    Diagnostic::error(
                        format!("`{}` has no option `{name}`", q.kind.name),
                        opt.name.span,
                        "unknown option",
                    )
                    .with_help(format!(
                        "options of `{}`: {}",
                        q.kind.name,
                        allowed.join(", ")
                    )),
                );
                continue;
            }
            let word = match &opt.value {
                Some(ast::Expr {
                    kind: ExprKind::Name(w),
                    ..
                }) => Some(w.as_str()),
                _ => None,
            };
            match (name, &opt.value) {
                ("group", Some(e)) => {
                    group = scope.int_expr(e, self.diags).map(|expr| ir::Extent {
                        text: e.to_string(),
                        expr,
                    });
                }
                ("zeros", Some(_)) if word == Some("plain") => zeros = ir::Zeros::Plain,
                ("zeros", Some(_)) if word == Some("minus_one") => zeros = ir::Zeros::MinusOne,
                ("scales", Some(_)) if word == Some("f16") => scales = DType::F16,
                ("scales", Some(_)) if word == Some("bf16") => scales = DType::BF16,
                ("sym", None) => zeros = ir::Zeros::Symmetric,
                ("g_idx", None) => g_idx = true,
                _ => {
                    let expected = match name {
                        "group" => "`group = 128` (a constant, a symbol, or K)",
                        "zeros" => "`zeros = plain` or `zeros = minus_one`",
                        "scales" => "`scales = f16` or `scales = bf16`",
                        _ => "a flag without a value",
                    };
                    self.error(
                        Diagnostic::error(
                            format!("bad value for `{name}`"),
                            opt.name.span,
                            "unexpected value",
                        )
                        .with_help(format!("write {expected}")),
                    );
                }
            }
        }
        if group.is_none() && self.diags.len() == errors_before {
            self.error(
                Diagnostic::error(
                    format!("`{}` needs a group size", q.kind.name),
                    q.span,
                    "no `group`",
                )
                .with_help(format!(
                    "add `group = 128` (or a symbol, or `{}` for one group)",
                    t.extents.first().map_or("K".into(), |e| e.to_string())
                )),
            );
        }
        if self.diags.len() > errors_before {
            return None;
        }
        let format = match q.kind.name.as_str() {
            "gptq" => ir::QuantFormat::Gptq { zeros, g_idx },
            "awq" => ir::QuantFormat::Awq,
            _ => ir::QuantFormat::Int8,
        };
        Some((
            ir::Quant {
                format,
                group: group?,
            },
            scales,
        ))
    }

    /// `stored [B, S, H, D]` names the logical dimensions in memory order.
    fn stored(&mut self, t: &ast::TensorArg, order: &[ast::Ident]) -> Option<Vec<usize>> {
        let logical: Vec<String> = t.extents.iter().map(|e| e.to_string()).collect();
        let span = Span::new(order[0].span.start, order[order.len() - 1].span.end);
        let mut perm = Vec::new();
        for ident in order {
            let Some(l) = logical.iter().position(|n| *n == ident.name) else {
                self.error(
                    Diagnostic::error(
                        format!(
                            "`stored` names `{}`, which is no dimension of `{}`",
                            ident.name, t.name.name
                        ),
                        ident.span,
                        "not a logical dimension",
                    )
                    .with_help(format!(
                        "list the logical dimensions [{}] in memory order",
                        logical.join(", ")
                    )),
                );
                return None;
            };
            if perm.contains(&l) {
                self.error(
                    Diagnostic::error(
                        format!("`stored` names `{}` twice", ident.name),
                        ident.span,
                        "repeated",
                    )
                    .with_help("`stored` is a permutation of the logical dimensions"),
                );
                return None;
            }
            perm.push(l);
        }
        if perm.len() != logical.len() {
            self.error(
                Diagnostic::error(
                    format!(
                        "`stored` has {} dimensions, `{}` has {}",
                        perm.len(),
                        t.name.name,
                        logical.len()
                    ),
                    span,
                    "not a permutation",
                )
                .with_help(format!(
                    "list all of [{}] in memory order",
                    logical.join(", ")
                )),
            );
            return None;
        }
        let mut seen_dup = logical.clone();
        seen_dup.sort();
        seen_dup.dedup();
        if seen_dup.len() != logical.len() {
            self.error(
                Diagnostic::error(
                    format!(
                        "`stored` is ambiguous: `{}` has repeated dimensions",
                        t.name.name
                    ),
                    span,
                    "ambiguous",
                )
                .with_help("give repeated dimensions their own symbols and constrain them equal"),
            );
            return None;
        }
        Some(perm)
    }

    /// The launch's shape, block and `min_blocks`.
    fn launch(
        &mut self,
        l: &ast::Launch,
        tensors: &[&ast::TensorArg],
        scope: &Scope,
        names: &HashMap<&str, Span>,
    ) -> Option<(ir::Launch, [u32; 3], u32)> {
        let (launch, block) = self.launch_shape(l, tensors, scope, names)?;
        let Some((n, span)) = l.min_blocks else {
            return Some((launch, block, 1));
        };
        // sm_90 holds at most 2048 threads and 32 blocks per SM.
        let threads: u64 = block.iter().map(|&b| u64::from(b)).product();
        if n == 0 || n > 32 || n * threads > 2048 {
            self.error(
                Diagnostic::error(
                    format!("`min_blocks {n}` with blocks of {threads} threads"),
                    span,
                    if n == 0 {
                        "at least 1"
                    } else {
                        "no SM holds that many"
                    },
                )
                .with_help(format!(
                    "an SM holds at most 32 blocks and 2048 threads: use 1 to {}",
                    (2048 / threads).min(32)
                )),
            );
            return None;
        }
        Some((launch, block, n as u32))
    }

    fn launch_shape(
        &mut self,
        l: &ast::Launch,
        tensors: &[&ast::TensorArg],
        scope: &Scope,
        names: &HashMap<&str, Span>,
    ) -> Option<(ir::Launch, [u32; 3])> {
        let threads = match l.threads {
            None => None,
            Some((n, span)) if (1..=1024).contains(&n) => Some((n as u32, span)),
            Some((n, span)) => {
                self.error(
                    Diagnostic::error(format!("{n} threads per block"), span, "must be 1 to 1024")
                        .with_help(
                            "CUDA blocks hold at most 1024 threads; 128 or 256 suit most kernels",
                        ),
                );
                return None;
            }
        };
        match &l.kind {
            ast::LaunchKind::Over {
                blocks,
                arg,
                indices,
            } => {
                let block = [threads.map_or(DEFAULT_BLOCK, |t| t.0), 1, 1];
                let (arg, indices) =
                    self.launch_over(*blocks, arg, indices, l.span, tensors, scope, names)?;
                let launch = if *blocks {
                    ir::Launch::Blocks { arg, indices }
                } else {
                    ir::Launch::Threads { arg, indices }
                };
                Some((launch, block))
            }
            ast::LaunchKind::Grid { grid, block } => {
                if let Some((_, span)) = threads {
                    self.error(
                        Diagnostic::error(
                            "`threads` with a raw `grid`",
                            span,
                            "the block is already given",
                        )
                        .with_help("set the block's size in `block(...)`"),
                    );
                    return None;
                }
                let grid: Vec<ir::Expr> = grid
                    .iter()
                    .map(|e| scope.int_expr(e, self.diags))
                    .collect::<Vec<_>>()
                    .into_iter()
                    .collect::<Option<_>>()?;
                let mut dims = [1u32; 3];
                for (d, &(n, span)) in block.iter().enumerate() {
                    if !(1..=1024).contains(&n) {
                        self.error(Diagnostic::error(
                            format!("block dimension {n}"),
                            span,
                            "must be 1 to 1024",
                        ));
                        return None;
                    }
                    dims[d] = n as u32;
                }
                let total: u64 = dims.iter().map(|&d| u64::from(d)).product();
                if total > 1024 {
                    let span = Span::new(block[0].1.start, block[block.len() - 1].1.end);
                    self.error(
                        Diagnostic::error(
                            format!("a block of {total} threads"),
                            span,
                            "more than 1024 threads",
                        )
                        .with_help("CUDA blocks hold at most 1024 threads"),
                    );
                    return None;
                }
                Some((ir::Launch::Grid { grid }, dims))
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn launch_over(
        &mut self,
        blocks: bool,
        arg_name: &ast::Ident,
        indices: &[Option<ast::Ident>],
        span: Span,
        tensors: &[&ast::TensorArg],
        scope: &Scope,
        names: &HashMap<&str, Span>,
    ) -> Option<(usize, Vec<String>)> {
        let Some(arg) = tensors.iter().position(|t| t.name.name == arg_name.name) else {
            self.error(
                Diagnostic::error(
                    format!(
                        "`launch over` names `{}`, which is no argument",
                        arg_name.name
                    ),
                    arg_name.span,
                    "unknown argument",
                )
                .with_help("name an `out` or `inout` tensor of this kernel"),
            );
            return None;
        };
        let t = tensors[arg];
        if t.role == Role::In {
            self.error(
                Diagnostic::error(
                    format!("`launch over` an input: `{}` is `in`", arg_name.name),
                    arg_name.span,
                    "an input",
                )
                .with_related(t.name.span, "declared `in` here")
                .with_help("launch over the output each thread writes, or declare it `inout`"),
            );
            return None;
        }
        if indices.len() != t.extents.len() {
            self.error(
                Diagnostic::error(
                    format!(
                        "`launch over {}` gives {} indices; `{}` has {} dimensions",
                        arg_name.name,
                        indices.len(),
                        arg_name.name,
                        t.extents.len()
                    ),
                    span,
                    "wrong number of indices",
                )
                .with_help("name one index per dimension"),
            );
            return None;
        }
        // Named indices first, then `_`s: a thread per element has no `_`; a block per
        // tuple has at least one, and only at the end.
        let named = indices.iter().take_while(|i| i.is_some()).count();
        let holes_at_end = indices[named..].iter().all(|i| i.is_none());
        if !blocks && named < indices.len() {
            self.error(
                Diagnostic::error(
                    "`_` in a thread-per-element launch",
                    span,
                    "every dimension needs an index",
                )
                .with_help(
                    "name every index, or write `launch blocks over ...` for a block per row",
                ),
            );
            return None;
        }
        if blocks && (named == indices.len() || !holes_at_end) {
            self.error(
                Diagnostic::error("`launch blocks over` needs `_` for its inner dimensions", span, "no `_` at the end")
                    .with_help("name the outer indices and mark the dimensions the block's threads cover with `_`, e.g. `launch blocks over y[row, _]`"),
            );
            return None;
        }
        let mut seen: HashMap<&str, Span> = HashMap::new();
        for i in indices.iter().flatten() {
            check_reserved(i, self.diags);
            if let Some(&first) = seen.get(i.name.as_str()) {
                self.error(duplicate("index", i, first));
            } else if let Some(&arg) = names.get(i.name.as_str()) {
                self.error(
                    Diagnostic::error(
                        format!("index `{}` shadows the argument `{}`", i.name, i.name),
                        i.span,
                        "shadows an argument",
                    )
                    .with_related(arg, "argument declared here")
                    .with_help("give the index another name"),
                );
            } else if scope.symbols.contains_key(i.name.as_str())
                || self.consts.contains_key(&i.name)
            {
                self.error(
                    Diagnostic::error(
                        format!("index `{}` shadows the symbol `{}`", i.name, i.name),
                        i.span,
                        "shadows a symbol",
                    )
                    .with_help("indices are usually lower case, symbols upper case"),
                );
            }
            seen.insert(&i.name, i.span);
        }
        Some((
            arg,
            indices.iter().flatten().map(|i| i.name.clone()).collect(),
        ))
    }
}
