//! Arguments read or written by TMA: rows a tensor map can stride over, and a quantized
//! argument's tiles of whole groups.

use crate::check::TensorMeta;
use crate::contract::{KernelContract, Role};
use crate::violation::Violation;

/// The group size G of the quantized argument whose buffer is contract argument `arg`:
/// its logical `[K, N, G]` argument is the nearest before it.
pub(crate) fn quant_group(
    c: &KernelContract,
    args: &[TensorMeta<'_>],
    arg: usize,
) -> Option<usize> {
    let logical = (0..arg).rev().find(|&i| c.args[i].role == Role::Logical)?;
    args[logical].shape.get(2).copied()
}

/// A tensor map's row stride is a multiple of 16 bytes: each `tma` argument's rows (its
/// innermost extent's bytes; the layout checks make it contiguous) must be.
pub(super) fn check_rows(
    c: &KernelContract,
    args: &[TensorMeta<'_>],
    ranked: &[bool],
    v: &mut Vec<Violation>,
) {
    for ((a, m), &ok) in c.args.iter().zip(args).zip(ranked) {
        let Some(&cols) = m.shape.last().filter(|_| ok && a.tma.is_some()) else {
            continue;
        };
        let bytes = cols * a.dtype.size();
        if !bytes.is_multiple_of(16) {
            v.push(Violation::TmaRow { arg: a.name, bytes });
        }
    }
}

/// A `tma(ROWS, COLS)` tile of a quantized argument takes `ROWS / G` rows of its scales and
/// zeros (the boxes the runtime encodes, tensor_map.rs), and its accessor has room for
/// `ROWS / 32`: G must divide ROWS and be at least 32. Reported once an argument.
pub(super) fn check_groups(
    c: &KernelContract,
    args: &[TensorMeta<'_>],
    ranked: &[bool],
    v: &mut Vec<Violation>,
) {
    for (i, a) in c.args.iter().enumerate() {
        let Some(b) = a.tma.filter(|b| b.groups) else {
            continue;
        };
        let Some(logical) = (0..i).rev().find(|&j| c.args[j].role == Role::Logical) else {
            continue;
        };
        // The scales and the zeros share the logical argument: the first of them reports.
        let first = (logical + 1..i).all(|j| c.args[j].tma.is_none_or(|b| !b.groups));
        if !first || !ranked[logical] {
            continue;
        }
        match quant_group(c, args, i) {
            Some(g) if g >= 32 && (b.rows as usize).is_multiple_of(g) => {}
            Some(g) => v.push(Violation::TmaGroup {
                arg: c.args[logical].name,
                rows: b.rows,
                group: g,
            }),
            None => {}
        }
    }
}
