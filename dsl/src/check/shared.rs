//! Shared arrays: their declarations, and that they fit a block at the largest sizes the
//! constraints allow.

use super::error::MAX_SHARED_BYTES;
use super::{CheckError, KernelChecker, Scope, check_reserved, duplicate};
use crate::ast::{self, Member, Span};
use crate::facts::{Knowledge, Var};
use crate::ir;
use ima_contract::SHARED_ALIGN;
use std::collections::HashMap;

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

impl<'a> KernelChecker<'a> {
    /// Lowers the kernel's shared arrays; their names share the arguments' namespace.
    pub(super) fn shared_arrays(
        &mut self,
        scope: &Scope,
        names: &mut HashMap<&'a str, Span>,
    ) -> Vec<Option<ir::SharedArray>> {
        let shared_decls: Vec<&ast::Shared> = self.all(|m| match m {
            Member::Shared(sh) => Some(sh),
            _ => None,
        });
        shared_decls
            .into_iter()
            .map(|sh| {
                check_reserved(&sh.name, self.errors);
                if let Some(&first) = names.get(sh.name.name.as_str()) {
                    self.error(duplicate("name", &sh.name, first));
                }
                names.insert(&sh.name.name, sh.name.span);
                let dtype = self.dtype(&sh.dtype);
                let dims: Vec<Option<ir::Extent>> = scope.extents(&sh.extents, self.errors);
                self.rank_fits("shared array", &sh.name, &sh.extents);
                let align = match sh.align {
                    None => Some(SHARED_ALIGN as u64),
                    Some((n, span)) if !n.is_power_of_two() || !(16..=1024).contains(&n) => {
                        self.error(CheckError::SharedAlign {
                            name: sh.name.name.clone(),
                            align: n,
                            span,
                        });
                        None
                    }
                    Some((n, _)) => Some(n),
                };
                Some(ir::SharedArray {
                    name: sh.name.name.clone(),
                    docs: sh.docs.clone(),
                    dtype: dtype?,
                    dims: dims.into_iter().collect::<Option<_>>()?,
                    align: align?,
                })
            })
            .collect()
    }

    /// Shared memory must fit the device at the largest sizes the constraints allow.
    pub(super) fn shared_fits(
        &mut self,
        shared: &[ir::SharedArray],
        k: &Knowledge,
        symbols: &[ir::Symbol],
    ) {
        let decls: Vec<&ast::Shared> = self.all(|m| {
            if let Member::Shared(sh) = m {
                Some(sh)
            } else {
                None
            }
        });
        let most = shared
            .iter()
            .map(|a| a.align)
            .max()
            .unwrap_or(SHARED_ALIGN as u64);
        let slack = most.saturating_sub(SHARED_ALIGN as u64);
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
                        self.error(CheckError::SharedUnbounded {
                            name: a.name.clone(),
                            extent: d.text.clone(),
                            symbol: unbounded.into_iter().next(),
                            span: decl.span,
                        });
                        return;
                    }
                }
            }
            // Laid out as the runtime lays them out: each array at a multiple of its
            // alignment, and the bytes that align their start reserved too.
            let bytes = elems.saturating_mul(a.dtype.size() as u64);
            total = total
                .checked_next_multiple_of(a.align)
                .unwrap_or(u64::MAX)
                .saturating_add(bytes);
            if total.saturating_add(slack) > MAX_SHARED_BYTES {
                self.error(CheckError::SharedTooLarge {
                    name: a.name.clone(),
                    total,
                    bytes,
                    span: decl.span,
                });
                return;
            }
        }
    }
}
