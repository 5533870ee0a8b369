//! `values(...)`: a value contract on an integer argument, lowered to [`ir::Values`].

use super::scope::{cannot_evaluate, eval_const};
use super::{CheckError, KernelChecker, Scope};
use crate::ast::{self, Role, ValuesKind};
use crate::ir;
use crate::ir::DType;

impl KernelChecker<'_> {
    /// Lowers `t`'s value contract: `Some(None)` when it has none, `None` after reporting
    /// why it cannot hold.
    pub(super) fn values(
        &mut self,
        t: &ast::TensorArg,
        dtype: Option<DType>,
        scope: &Scope,
    ) -> Option<Option<ir::Values>> {
        let Some(v) = &t.values else {
            return Some(None);
        };
        let name = &t.name.name;
        let errors_before = self.errors.len();
        if t.quant.is_some() {
            self.error(CheckError::ValuesOnQuant {
                arg: name.clone(),
                span: v.span,
            });
        } else if let Some(d) = dtype.filter(|d| !d.is_integer()) {
            self.error(CheckError::ValuesNotInteger {
                arg: name.clone(),
                dtype: d,
                span: t.dtype.span,
            });
        }
        if t.role != Role::In {
            self.error(CheckError::ValuesOnOutput {
                arg: name.clone(),
                role: t.role,
                span: v.span,
            });
        }

        let (lo_ast, hi_ast, ascending) = match &v.kind {
            ValuesKind::Range { lo, hi } => (lo, hi, false),
            ValuesKind::Ascending { first, last } => (first, last, true),
        };
        let lo = scope.int_expr(lo_ast, self.errors);
        let last = scope.int_expr(hi_ast, self.errors);
        let (lo, last) = (lo?, last?);
        // `ascending from A to B` holds A ..= B: its exclusive bound is B + 1, which must
        // not overflow where B is a constant.
        let hi = if ascending {
            let hi = ir::Expr::Bin(ir::BinOp::Add, Box::new(last), Box::new(ir::Expr::Const(1)));
            if cannot_evaluate(&hi) {
                self.error(CheckError::ConstOverflow { span: hi_ast.span });
                return None;
            }
            ir::Extent {
                text: format!("{} + 1", ir::paren(&hi_ast.to_string())),
                expr: hi,
            }
        } else {
            ir::Extent {
                text: hi_ast.to_string(),
                expr: last,
            }
        };
        let (lo_const, hi_const) = (eval_const(&lo), eval_const(&hi.expr));
        if let (Some(a), Some(b)) = (lo_const, hi_const)
            && a >= b
        {
            self.error(CheckError::ValuesEmptyRange {
                arg: name.clone(),
                lo: a,
                hi: b,
                ascending,
                span: v.span,
            });
        }
        if let Some((s, span)) = v.sentinel {
            if ascending {
                self.error(CheckError::SentinelInAscending {
                    arg: name.clone(),
                    span,
                });
            }
            // Outside the range by construction: below a constant lower bound, or at or
            // past a constant upper one. Otherwise an in-range entry could be skipped.
            let outside = lo_const.is_some_and(|lo| s < lo) || hi_const.is_some_and(|hi| s >= hi);
            if !outside {
                self.error(CheckError::SentinelInsideRange {
                    arg: name.clone(),
                    sentinel: s,
                    lo: lo_ast.to_string(),
                    hi: hi.text.clone(),
                    span,
                });
            }
            if let Some(d) = dtype.filter(|d| d.is_integer() && !d.holds(s)) {
                self.error(CheckError::SentinelOutOfType {
                    arg: name.clone(),
                    sentinel: s,
                    dtype: d,
                    span,
                });
            }
        }
        if self.errors.len() > errors_before {
            return None;
        }
        Some(Some(ir::Values {
            text: v.to_string(),
            lo: ir::Extent {
                text: lo_ast.to_string(),
                expr: lo,
            },
            hi,
            sentinel: v.sentinel.map(|(s, _)| s),
            ascending,
        }))
    }
}
