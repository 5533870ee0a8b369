//! `values(...)`: a value contract on an integer argument, lowered to [`ir::Values`].

use super::{KernelChecker, Scope, eval_const};
use crate::ast::{self, Role, ValuesKind};
use crate::diag::Diagnostic;
use crate::dtype::DType;
use crate::ir;

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
        let errors_before = self.diags.len();
        if t.quant.is_some() {
            self.error(
                Diagnostic::error(
                    format!("`values(...)` on quantized `{name}`"),
                    v.span,
                    "a quantized weight holds no indices",
                )
                .with_help("an act-order `g_idx` (`gptq(..., g_idx)`) carries its own contract, `0 .. ceil(K / G)`"),
            );
        } else if let Some(d) = dtype.filter(|d| !d.is_integer()) {
            self.error(
                Diagnostic::error(
                    format!("`values(...)` on `{name}`, a {} argument", d.name()),
                    t.dtype.span,
                    "not an integer type",
                )
                .with_help("value contracts describe integer tensors that hold indices: i32, i64, u32, ..."),
            );
        }
        if t.role != Role::In {
            self.error(
                Diagnostic::error(
                    format!("`values(...)` on `{}` argument `{name}`", t.role.keyword()),
                    v.span,
                    "the kernel writes this argument",
                )
                .with_help("a value contract is checked where the kernel reads an entry, and the accessor of an index tensor only reads: declare it on an `in` argument"),
            );
        }

        let (lo_ast, hi_ast, ascending) = match &v.kind {
            ValuesKind::Range { lo, hi } => (lo, hi, false),
            ValuesKind::Ascending { first, last } => (first, last, true),
        };
        let lo = scope.int_expr(lo_ast, self.diags);
        let last = scope.int_expr(hi_ast, self.diags);
        let (lo, last) = (lo?, last?);
        // `ascending from A to B` holds A ..= B: its exclusive bound is B + 1.
        let hi = if ascending {
            ir::Extent {
                text: format!("{} + 1", ir::paren(&hi_ast.to_string())),
                expr: ir::Expr::Bin(ir::BinOp::Add, Box::new(last), Box::new(ir::Expr::Const(1))),
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
            let shown = if ascending {
                format!("{a} ..= {}", b - 1)
            } else {
                format!("{a} .. {b}")
            };
            self.error(
                Diagnostic::error(
                    format!("the value range of `{name}` is empty: {shown}"),
                    v.span,
                    "no entry can satisfy it",
                )
                .with_help("the lower bound is inclusive and the upper one exclusive: `0 .. N` holds 0 to N - 1"),
            );
        }
        if let Some((s, span)) = v.sentinel {
            if ascending {
                self.error(
                    Diagnostic::error(
                        format!("a sentinel in the ascending contract of `{name}`"),
                        span,
                        "offsets have no padding value",
                    )
                    .with_help("drop `, or ...`: every entry of an ascending tensor is an offset"),
                );
            }
            // Outside the range by construction: below a constant lower bound, or at or
            // past a constant upper one. Otherwise an in-range entry could be skipped.
            let outside = lo_const.is_some_and(|lo| s < lo) || hi_const.is_some_and(|hi| s >= hi);
            if !outside {
                self.error(
                    Diagnostic::error(
                        format!("the sentinel {s} of `{name}` may lie inside its range {} .. {}", lo_ast, hi.text),
                        span,
                        "not provably outside the range",
                    )
                    .with_help("a sentinel must lie below a constant lower bound (`0 .. N, or -1`) or at or above a constant upper one"),
                );
            }
            if let Some(d) = dtype.filter(|d| d.is_integer() && !fits(s, *d)) {
                self.error(
                    Diagnostic::error(
                        format!("the sentinel {s} of `{name}` is no {} value", d.name()),
                        span,
                        format!("outside the range of {}", d.name()),
                    )
                    .with_help("use a signed element type for a negative sentinel"),
                );
            }
        }
        if self.diags.len() > errors_before {
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

/// Whether `v` is a value of the integer type `d`.
fn fits(v: i64, d: DType) -> bool {
    let (min, max): (i128, i128) = match d {
        DType::I8 => (i8::MIN.into(), i8::MAX.into()),
        DType::U8 => (0, u8::MAX.into()),
        DType::I16 => (i16::MIN.into(), i16::MAX.into()),
        DType::U16 => (0, u16::MAX.into()),
        DType::I32 => (i32::MIN.into(), i32::MAX.into()),
        DType::U32 => (0, u32::MAX.into()),
        DType::I64 => (i64::MIN.into(), i64::MAX.into()),
        DType::U64 => (0, u64::MAX.into()),
        _ => return false,
    };
    (min..=max).contains(&i128::from(v))
}
