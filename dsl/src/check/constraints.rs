//! What the `where` clauses prove: constraints that can never hold, and the divisibility
//! that `align(16)`'s vector accesses need.

use super::scope::eval_const;
use super::{CheckError, Conflict, KernelChecker};
use crate::ast::{self, Member};
use crate::facts::{Knowledge, Var};
use crate::ir;

impl<'a> KernelChecker<'a> {
    /// Learns the constraints one by one, reporting each that can never hold: constant
    /// and false, false for every value the facts allow (`max(N, M) < 0`, `N != N`), or
    /// contradicting the ones before it.
    pub(super) fn constraint_facts(
        &mut self,
        constraints: &[ir::Constraint],
        symbols: usize,
        params: usize,
        symbol_names: &[ir::Symbol],
    ) -> Knowledge {
        let mut learned: Vec<&ir::Expr> = Vec::new();
        // What the constraints before this one say (a constant one says nothing).
        let mut before = Knowledge::from_constraints(symbols, params, &[]);
        for (c, ast) in constraints.iter().zip(&self.k.constraints) {
            learned.push(&c.expr);
            if let Some(v) = eval_const(&c.expr) {
                if v == 0 {
                    self.error(CheckError::ConstraintNeverHolds {
                        text: c.text.clone(),
                        span: ast.span,
                    });
                }
                continue;
            }
            let k = Knowledge::from_constraints(symbols, params, &learned);
            let mut contradicts = false;
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
                let conflict = match (bad_multiple, f.lo, f.hi) {
                    (Some(of), Some(value), _) => Some(Conflict::NotMultiple { value, of }),
                    (None, Some(lo), Some(hi)) if empty_range => {
                        Some(Conflict::EmptyRange { lo, hi })
                    }
                    _ => None,
                };
                if let Some(conflict) = conflict {
                    self.error(CheckError::ConstraintsContradict {
                        name: name.to_string(),
                        conflict,
                        span: ast.span,
                    });
                    contradicts = true;
                    break;
                }
            }
            // What no symbol's bounds say alone: false for every value the constraints
            // before it allow.
            if !contradicts && before.never_holds(&c.expr) {
                self.error(CheckError::ConstraintNeverHolds {
                    text: c.text.clone(),
                    span: ast.span,
                });
            }
            before = k;
        }
        before
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
    pub(super) fn vector_alignment(
        &mut self,
        tensors: &[&ast::TensorArg],
        args: &[ir::TensorArg],
        k: &Knowledge,
        symbols: &[ir::Symbol],
    ) {
        for (t, a) in tensors.iter().zip(args) {
            let Some((_, span)) = t.align else { continue };
            let width = (a.align / a.dtype.size() as u64) as i64;
            if width <= 1 {
                continue;
            }
            let Some(inner) = a.physical_dims().last() else {
                continue;
            };
            if !k.is_multiple_of(&inner.expr, width) {
                self.error(CheckError::AlignWithoutMultiple {
                    arg: a.name.clone(),
                    align: a.align,
                    dtype: a.dtype,
                    width,
                    inner: inner.text.clone(),
                    inner_symbol: match &inner.expr {
                        ir::Expr::Sym(s) => Some(symbols[*s].name.clone()),
                        _ => None,
                    },
                    span,
                });
            }
        }
    }
}
