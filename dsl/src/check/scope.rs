//! Names and expressions: what a name refers to (constant, symbol, integer param), the
//! types of expressions (integers and conditions), the functions extents may call, and
//! constant folding.

use super::CheckError;
use crate::ast::{self, ExprKind, Span};
use crate::ir;
use crate::ir::DType;
use ima_contract::NotConst;
use std::cell::Cell;
use std::collections::HashMap;

/// The value of an expression with no symbols or params ([`ir::Expr::eval_const`]: the
/// contract's one evaluator, so `&&` and `||` short-circuit as at launch).
pub(super) fn eval_const(e: &ir::Expr) -> Option<i64> {
    e.eval_const()
}

/// Whether no launch can evaluate `e` as it stands: a division by a part that folds to 0,
/// or no symbol or param and an evaluation that overflows or divides by zero.
pub(super) fn cannot_evaluate(e: &ir::Expr) -> bool {
    let by_zero = matches!(
        e,
        ir::Expr::Bin(ir::BinOp::Div | ir::BinOp::Rem | ir::BinOp::CeilDiv, _, b)
            if eval_const(b) == Some(0)
    );
    by_zero || matches!(ima_contract::eval_const(e), Err(NotConst::Eval(_)))
}

/// `Some` unless `e` is a constant below `least` (a negative extent, a group of 0), which
/// is reported: every launch would be refused.
pub(super) fn at_least(
    e: &ir::Expr,
    least: i64,
    what: &'static str,
    span: Span,
    errors: &mut Vec<CheckError>,
) -> Option<()> {
    match eval_const(e) {
        Some(value) if value < least => {
            errors.push(CheckError::ConstantBelow {
                what,
                value,
                least,
                span,
            });
            None
        }
        _ => Some(()),
    }
}

/// Whether an expression is a number or a truth value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    Int,
    Bool,
}

impl Ty {
    pub(super) fn name(self) -> &'static str {
        match self {
            Ty::Int => "an integer",
            Ty::Bool => "a condition",
        }
    }
}

/// What a name in an expression can refer to.
pub(super) struct Scope<'a> {
    pub(super) consts: &'a HashMap<String, (i64, Span)>,
    pub(super) symbols: HashMap<&'a str, usize>,
    pub(super) params: HashMap<&'a str, (usize, DType)>,
    /// While a constant's value is resolved, where each constant is declared and where
    /// the one resolved stands: a name declared below it (a constant sees only those above
    /// it) is reported as used before its declaration, not as unknown.
    pub(super) declared: Option<(&'a HashMap<&'a str, Span>, usize)>,
    /// How many `&&` and `||` right operands the expression being resolved is inside: a
    /// launch evaluates those only where the left operand lets it, so a part there that no
    /// launch could evaluate (`G == 0 || K % G == 0` with `const G = 0`) is no error.
    pub(super) guarded: Cell<u32>,
}

impl<'a> Scope<'a> {
    /// The scope of the value of a constant declared at byte `at`: the constants above it
    /// (`consts`), and where every constant is declared (`declared`).
    pub(super) fn consts_only(
        consts: &'a HashMap<String, (i64, Span)>,
        declared: &'a HashMap<&'a str, Span>,
        at: usize,
    ) -> Self {
        Scope {
            consts,
            symbols: HashMap::new(),
            params: HashMap::new(),
            declared: Some((declared, at)),
            guarded: Cell::new(0),
        }
    }

    /// Resolves an expression that must be an integer.
    pub(super) fn int_expr(&self, e: &ast::Expr, errors: &mut Vec<CheckError>) -> Option<ir::Expr> {
        self.typed(e, Ty::Int, errors)
    }

    /// Resolves a tensor's or shared array's extents, as written: `None` for each that
    /// does not resolve (every error reported).
    pub(super) fn extents(
        &self,
        extents: &[ast::Expr],
        errors: &mut Vec<CheckError>,
    ) -> Vec<Option<ir::Extent>> {
        extents
            .iter()
            .map(|e| {
                let expr = self.int_expr(e, errors)?;
                at_least(&expr, 0, "an extent", e.span, errors)?;
                Some(ir::Extent {
                    text: e.to_string(),
                    expr,
                })
            })
            .collect()
    }

    /// Resolves an expression that must be a condition.
    pub(super) fn bool_expr(
        &self,
        e: &ast::Expr,
        errors: &mut Vec<CheckError>,
    ) -> Option<ir::Expr> {
        self.typed(e, Ty::Bool, errors)
    }

    fn typed(&self, e: &ast::Expr, want: Ty, errors: &mut Vec<CheckError>) -> Option<ir::Expr> {
        let (ir, ty) = self.resolve(e, errors)?;
        if ty == want {
            Some(ir)
        } else {
            errors.push(CheckError::TypeMismatch {
                expected: want,
                found: ty,
                span: e.span,
            });
            None
        }
    }

    /// [`Scope::resolve_parts`], refusing an expression no launch can evaluate: a part with
    /// no symbol or param that overflows or divides by zero (reported at the innermost
    /// such part only, whose parents then do not resolve), or a division by a constant 0;
    /// unless it is [`Scope::guarded`].
    fn resolve(&self, e: &ast::Expr, errors: &mut Vec<CheckError>) -> Option<(ir::Expr, Ty)> {
        let (ir, ty) = self.resolve_parts(e, errors)?;
        if self.guarded.get() > 0 {
            return Some((ir, ty));
        }
        if cannot_evaluate(&ir) {
            errors.push(CheckError::ConstOverflow { span: e.span });
            return None;
        }
        Some((ir, ty))
    }

    fn resolve_parts(&self, e: &ast::Expr, errors: &mut Vec<CheckError>) -> Option<(ir::Expr, Ty)> {
        use ast::BinOp as A;
        use ir::BinOp as B;
        match &e.kind {
            ExprKind::Int(v) => Some((ir::Expr::Const(*v), Ty::Int)),
            ExprKind::Name(n) => self.name(n, e.span, errors).map(|x| (x, Ty::Int)),
            ExprKind::Neg(a) => Some((ir::Expr::Neg(Box::new(self.int_expr(a, errors)?)), Ty::Int)),
            ExprKind::Not(a) => Some((
                ir::Expr::Not(Box::new(self.bool_expr(a, errors)?)),
                Ty::Bool,
            )),
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
                let a = self.typed(a, operand, errors);
                let guards = matches!(op, B::And | B::Or);
                self.guarded.set(self.guarded.get() + u32::from(guards));
                let b = self.typed(b, operand, errors);
                self.guarded.set(self.guarded.get() - u32::from(guards));
                Some((ir::Expr::Bin(op, Box::new(a?), Box::new(b?)), result))
            }
            ExprKind::Call(f, args) => self.call(f, args, e.span, errors).map(|x| (x, Ty::Int)),
        }
    }

    fn call(
        &self,
        f: &ast::Ident,
        args: &[ast::Expr],
        span: Span,
        errors: &mut Vec<CheckError>,
    ) -> Option<ir::Expr> {
        match (f.name.as_str(), args) {
            ("ceil", [arg]) => match &arg.kind {
                ExprKind::Bin(ast::BinOp::Div, a, b) => Some(ir::Expr::Bin(
                    ir::BinOp::CeilDiv,
                    Box::new(self.int_expr(a, errors)?),
                    Box::new(self.int_expr(b, errors)?),
                )),
                _ => {
                    errors.push(CheckError::CeilNotDivision { span: arg.span });
                    None
                }
            },
            ("min" | "max", [a, b]) => {
                let op = if f.name == "min" {
                    ir::BinOp::Min
                } else {
                    ir::BinOp::Max
                };
                let a = self.int_expr(a, errors);
                let b = self.int_expr(b, errors);
                Some(ir::Expr::Bin(op, Box::new(a?), Box::new(b?)))
            }
            ("ceil" | "min" | "max", _) => {
                let want = if f.name == "ceil" { 1 } else { 2 };
                errors.push(CheckError::WrongArgCount {
                    function: f.name.clone(),
                    expected: want,
                    found: args.len(),
                    span,
                });
                None
            }
            _ => {
                errors.push(CheckError::UnknownFunction {
                    name: f.name.clone(),
                    span: f.span,
                });
                None
            }
        }
    }

    fn name(&self, n: &str, span: Span, errors: &mut Vec<CheckError>) -> Option<ir::Expr> {
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
            errors.push(CheckError::NonIntegerParam {
                name: n.to_string(),
                dtype,
                span,
            });
            return None;
        }
        let below = (self.declared)
            .and_then(|(all, here)| all.get(n).filter(|declared| declared.start > here));
        errors.push(match below {
            Some(&declared) => CheckError::ConstBeforeDeclared {
                name: n.to_string(),
                span,
                declared,
            },
            None => CheckError::UnknownSymbol {
                name: n.to_string(),
                span,
            },
        });
        None
    }
}
