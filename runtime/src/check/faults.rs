//! Index checks on the contract itself, so that evaluation and indexing in the checker
//! never panic on a contract that a buggy generator (or `imac fuzz`) built.

use crate::contract::{Expr, KernelContract, Launch};
use crate::violation::Violation;

/// Threads one block may have on any CUDA device.
const MAX_BLOCK_THREADS: u64 = 1024;

/// Every inconsistency of `c`, as [`Violation::Contract`]s.
pub(super) fn contract_faults(c: &KernelContract) -> Vec<Violation> {
    let mut faults = Vec::new();
    let mut fault = |what: String| faults.push(Violation::Contract { what });
    for a in c.args {
        if !is_permutation(a.stored, a.dims.len()) {
            fault(format!(
                "argument {}: stored order {:?} is not a permutation",
                a.name, a.stored
            ));
        }
        for d in a.dims {
            if let Some(e) = expr_fault(&d.expr, c) {
                fault(format!("argument {}: extent {}: {e}", a.name, d.text));
            }
        }
        if let Some(v) = a.values {
            for bound in [&v.lo, &v.hi] {
                if let Some(e) = expr_fault(&bound.expr, c) {
                    fault(format!(
                        "argument {}: values({}) bound {}: {e}",
                        a.name, v.text, bound.text
                    ));
                }
            }
        }
    }
    for s in c.symbols {
        let b = s.bound_by;
        if c.args.get(b.arg).is_none_or(|a| b.dim >= a.dims.len()) {
            fault(format!(
                "symbol {} is bound by a missing argument or dimension",
                s.name
            ));
        }
    }
    for k in c.constraints {
        if let Some(e) = expr_fault(&k.expr, c) {
            fault(format!("constraint {}: {e}", k.text));
        }
    }
    for s in c.shared {
        for d in s.dims {
            if let Some(e) = expr_fault(&d.expr, c) {
                fault(format!("shared {}: extent {}: {e}", s.name, d.text));
            }
        }
    }
    match c.launch {
        Launch::Threads { arg } | Launch::Blocks { arg, .. } if arg >= c.args.len() => fault(
            format!("launch domain is argument #{arg}, which does not exist"),
        ),
        Launch::Blocks { arg, outer } if outer > c.args[arg].dims.len() => fault(format!(
            "launch over blocks of the first {outer} dimensions of {}, which has {}",
            c.args[arg].name,
            c.args[arg].dims.len()
        )),
        Launch::Grid { dims, .. } if !(1..=3).contains(&dims.len()) => fault(format!(
            "a launch grid of {} dimensions (must be 1 to 3)",
            dims.len()
        )),
        Launch::Grid { dims, cluster, .. } => {
            for (axis, e) in ["x", "y", "z"].iter().zip(dims) {
                if let Some(e) = expr_fault(e, c) {
                    fault(format!("launch grid {axis}: {e}"));
                }
            }
            // The checker allows 1 to 8 blocks, each extent at least 1 (a grid's extent is
            // held to a multiple of each).
            if let Some(cl) = cluster
                && (cl.contains(&0) || cl.iter().map(|&e| u64::from(e)).product::<u64>() > 8)
            {
                fault(format!(
                    "clusters of {cl:?} (1 to 8 blocks, each extent at least 1)"
                ));
            }
        }
        Launch::Threads { .. } | Launch::Blocks { .. } => {}
    }
    let threads: u64 = c.block.iter().map(|&b| u64::from(b)).product();
    if !(1..=MAX_BLOCK_THREADS).contains(&threads) {
        fault(format!(
            "block of {:?} = {threads} threads (must be 1 to {MAX_BLOCK_THREADS})",
            c.block
        ));
    }
    faults
}

/// Whether `stored` holds each of `0..rank` exactly once. Quadratic, but ranks are small,
/// and it allocates nothing: this runs at each kernel load, at every call of `check()`, and
/// at every launch of a contract found unsound.
fn is_permutation(stored: &[usize], rank: usize) -> bool {
    stored.len() == rank
        && stored
            .iter()
            .enumerate()
            .all(|(p, &l)| l < rank && !stored[..p].contains(&l))
}

fn expr_fault(e: &Expr, c: &KernelContract) -> Option<String> {
    match *e {
        Expr::Const(_) => None,
        Expr::Sym(i) if i >= c.symbols.len() => Some(format!("symbol #{i} does not exist")),
        Expr::Param(i) if i >= c.params.len() => Some(format!("param #{i} does not exist")),
        Expr::Sym(_) | Expr::Param(_) => None,
        Expr::Neg(a) | Expr::Not(a) => expr_fault(a, c),
        Expr::Bin(_, a, b) => expr_fault(a, c).or_else(|| expr_fault(b, c)),
    }
}
