//! The launch: its form (`launch over`, `launch blocks over`, `launch grid`, `launch
//! persistent`), the block's shape, the cluster, `min_blocks`, and the launch indices.

use super::scope::at_least;
use super::{CheckError, DEFAULT_BLOCK, KernelChecker, Scope, check_reserved, duplicate};
use crate::ast::{self, Role, Span};
use crate::ir;
use ima_contract::NotConst;
use std::collections::HashMap;

impl KernelChecker<'_> {
    /// The launch's shape, block and `min_blocks`.
    pub(super) fn launch(
        &mut self,
        l: &ast::Launch,
        tensors: &[&ast::TensorArg],
        scope: &Scope,
        names: &HashMap<&str, Span>,
    ) -> Option<(ir::Launch, [u32; 3], u32)> {
        let (launch, block) = self.launch_shape(l, tensors, scope, names)?;
        let Some(min_blocks) = &l.min_blocks else {
            return Some((launch, block, 1));
        };
        let (n, span) = self.launch_number(min_blocks, "min_blocks", scope)?;
        // sm_90 holds at most 2048 threads and 32 blocks per SM.
        let threads: u64 = block.iter().map(|&b| u64::from(b)).product();
        if !(1..=32).contains(&n) || n as u64 * threads > 2048 {
            self.error(CheckError::MinBlocks {
                min_blocks: n,
                threads,
                span,
            });
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
        let threads = match &l.threads {
            None => None,
            Some(e) => match self.launch_number(e, "threads", scope)? {
                (n, span) if (1..=1024).contains(&n) => Some((n as u32, span)),
                (n, span) => {
                    self.error(CheckError::ThreadsOutOfRange { threads: n, span });
                    return None;
                }
            },
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
            ast::LaunchKind::Grid {
                grid,
                block,
                cluster,
                resident,
            } => {
                if let Some((_, span)) = threads {
                    self.error(CheckError::ThreadsWithGrid { span });
                    return None;
                }
                // The grid's extents, the block's and the cluster's numbers each report
                // their errors before any of them gives up.
                let grid = each_reported(grid.iter().map(|e| {
                    let expr = scope.int_expr(e, self.errors)?;
                    at_least(&expr, 0, "a grid's extent", e.span, self.errors)?;
                    Some(expr)
                }));
                let dims = self.block_dims(block, scope);
                let cluster_extents = cluster.as_ref().map(|(extents, span)| {
                    let extents = each_reported(
                        extents
                            .iter()
                            .map(|e| self.launch_number(e, "cluster", scope)),
                    );
                    (extents, *span)
                });
                let (grid, dims) = (grid?, dims?);
                let resident = *resident;
                let cluster = match cluster_extents {
                    None => None,
                    Some((extents, span)) => {
                        Some(self.cluster(&extents?, span, grid.len(), resident)?)
                    }
                };
                Some((
                    ir::Launch::Grid {
                        grid,
                        resident,
                        cluster,
                    },
                    dims,
                ))
            }
        }
    }

    /// A raw grid's block: each number 1 to 1024 (each reported), and at most 1024 threads
    /// in all.
    fn block_dims(&mut self, block: &[ast::Expr], scope: &Scope) -> Option<[u32; 3]> {
        let numbers = each_reported(block.iter().map(|e| {
            let (n, span) = self.launch_number(e, "block", scope)?;
            if !(1..=1024).contains(&n) {
                self.error(CheckError::BlockDimOutOfRange { dim: n, span });
                return None;
            }
            Some(n as u32)
        }))?;
        let mut dims = [1u32; 3];
        dims[..numbers.len()].copy_from_slice(&numbers);
        let total: u64 = dims.iter().map(|&d| u64::from(d)).product();
        if total > 1024 {
            let span = Span::new(block[0].span.start, block[block.len() - 1].span.end);
            self.error(CheckError::BlockTooLarge {
                threads: total,
                span,
            });
            return None;
        }
        Some(dims)
    }

    /// A `cluster(...)`'s shape: 1 to 8 blocks (the portable cluster size), no more extents
    /// than the grid's, on a plain grid (a cooperative launch of clusters is not supported).
    fn cluster(
        &mut self,
        extents: &[(i64, Span)],
        span: Span,
        grid_dims: usize,
        resident: ast::Resident,
    ) -> Option<[u32; 3]> {
        if resident != ast::Resident::No {
            self.error(CheckError::ClusterResident {
                persistent: resident == ast::Resident::AtMost,
                span,
            });
            return None;
        }
        let dims: Vec<i64> = extents.iter().map(|e| e.0).collect();
        let blocks = dims.iter().try_fold(1i64, |a, &d| a.checked_mul(d));
        if dims.iter().any(|&d| d < 1) || blocks.is_none_or(|b| b > 8) {
            self.error(CheckError::ClusterSize { dims, span });
            return None;
        }
        if dims.len() > grid_dims {
            self.error(CheckError::ClusterRank {
                cluster: dims.len(),
                grid: grid_dims,
                span,
            });
            return None;
        }
        let mut shape = [1u32; 3];
        for (s, d) in shape.iter_mut().zip(dims) {
            *s = d as u32; // at most 8, checked above
        }
        Some(shape)
    }

    /// A number of the launch (`what`: `block`, `cluster`, `threads`, `min_blocks`), a
    /// constant expression: numbers and the spec's `const`s, folded. The block's shape and
    /// `min_blocks` are the entry points' `__launch_bounds__`, and the cluster's shape is
    /// the contract's, all fixed when the module is built, so a symbol or param, known only
    /// at a launch, has no place in them.
    fn launch_number(
        &mut self,
        e: &ast::Expr,
        what: &'static str,
        scope: &Scope,
    ) -> Option<(i64, Span)> {
        let folded = scope.int_expr(e, self.errors)?;
        match ima_contract::eval_const(&folded) {
            Ok(n) => Some((n, e.span)),
            Err(NotConst::Symbolic) => {
                self.error(CheckError::LaunchNotConstant {
                    what,
                    text: e.to_string(),
                    span: e.span,
                });
                None
            }
            // int_expr has reported it (scope.rs refuses a part no launch can evaluate).
            Err(NotConst::Eval(_)) => None,
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
            self.error(CheckError::LaunchOverUnknown {
                name: arg_name.name.clone(),
                span: arg_name.span,
            });
            return None;
        };
        let t = tensors[arg];
        if t.role == Role::In {
            self.error(CheckError::LaunchOverInput {
                name: arg_name.name.clone(),
                declared: t.name.span,
                span: arg_name.span,
            });
            return None;
        }
        if indices.len() != t.extents.len() {
            self.error(CheckError::LaunchIndexCount {
                arg: arg_name.name.clone(),
                indices: indices.len(),
                dims: t.extents.len(),
                span,
            });
            return None;
        }
        // Named indices first, then `_`s: a thread per element has no `_`; a block per
        // tuple has at least one, and only at the end.
        let named = indices.iter().take_while(|i| i.is_some()).count();
        let holes_at_end = indices[named..].iter().all(|i| i.is_none());
        if !blocks && named < indices.len() {
            self.error(CheckError::HoleInThreadLaunch { span });
            return None;
        }
        if blocks && (named == indices.len() || !holes_at_end) {
            self.error(CheckError::BlocksWithoutHole { span });
            return None;
        }
        let mut seen: HashMap<&str, Span> = HashMap::new();
        for i in indices.iter().flatten() {
            check_reserved(i, self.errors);
            if let Some(&first) = seen.get(i.name.as_str()) {
                self.error(duplicate("index", i, first));
            } else if let Some(&arg) = names.get(i.name.as_str()) {
                self.error(CheckError::IndexShadowsArgument {
                    name: i.name.clone(),
                    arg,
                    span: i.span,
                });
            } else if scope.symbols.contains_key(i.name.as_str())
                || self.consts.contains_key(&i.name)
            {
                self.error(CheckError::IndexShadowsSymbol {
                    name: i.name.clone(),
                    span: i.span,
                });
            }
            seen.insert(&i.name, i.span);
        }
        Some((
            arg,
            indices.iter().flatten().map(|i| i.name.clone()).collect(),
        ))
    }
}

/// Every item's value, or `None` if any has none: each item is checked (and reports its
/// errors) before the first `None` gives up.
fn each_reported<T>(items: impl Iterator<Item = Option<T>>) -> Option<Vec<T>> {
    items.collect::<Vec<_>>().into_iter().collect()
}
