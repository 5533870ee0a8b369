//! Value contracts checked on the host: every entry of an index tensor, before a launch,
//! with the same [`IndexValue`] error a kernel reports.
//!
//! Kernels check each entry they read, in every mode; this is for data that is cheap to
//! look at up front (a block table built on the host, a checkpoint's `g_idx`), and it
//! checks what a kernel may never read: an ascending tensor's order as a whole.

use crate::contract::{DType, KernelContract, Scalar, physical};
use crate::error::Error;
use crate::index_value::{IndexValue, ValueFault};

/// Checks the entries of contract argument `arg` of `c`: `entries` in row-major order of
/// `shape`, the shape the caller holds (physical order, as [`crate::TensorMeta`] has it);
/// `symbols` and `params` as a launch binds them ([`crate::Plan::symbols`]). The first bad
/// entry, in that order, is the error; an argument without a value contract passes.
pub fn validate_values(
    c: &KernelContract,
    arg: usize,
    shape: &[usize],
    entries: &[i64],
    symbols: &[i64],
    params: &[Scalar],
) -> Result<(), Error> {
    let Some(a) = c.args.get(arg) else {
        return Err(Error::Internal(format!(
            "{}: validating argument #{arg} of {}",
            c.name,
            c.args.len()
        )));
    };
    let Some(v) = a.values else { return Ok(()) };
    // What the walk below indexes by: the argument's rank, the entries' count and the
    // bindings the bounds are evaluated with, as the caller passed them.
    let mismatch = |what: String| {
        Err(Error::Internal(format!(
            "{}: validating {}'s values: {what}",
            c.name, a.name
        )))
    };
    if shape.len() != a.dims.len() {
        return mismatch(format!(
            "a shape of rank {}, the argument has {}",
            shape.len(),
            a.dims.len()
        ));
    }
    if crate::layout::numel(shape) != Some(entries.len()) {
        return mismatch(format!("{} entries for shape {shape:?}", entries.len()));
    }
    if symbols.len() != c.symbols.len() || params.len() != c.params.len() {
        return mismatch(format!(
            "{} symbols and {} params, the contract has {} and {}",
            symbols.len(),
            params.len(),
            c.symbols.len(),
            c.params.len()
        ));
    }
    let bound = |e: &crate::contract::Extent| {
        e.expr.eval(symbols, params).map_err(|error| {
            Error::Internal(format!(
                "{}: the bound {} of {}'s values({}) cannot be evaluated: {error:?}",
                c.name, e.text, a.name, v.text
            ))
        })
    };
    let (lo, hi) = (bound(&v.lo)?, bound(&v.hi)?);
    let rank = shape.len();
    // Logical dimension l is held at physical position at[l].
    let at: Vec<usize> = (0..rank).map(|l| physical(a, l)).collect();
    let mut stride = vec![1usize; rank];
    for p in (0..rank.saturating_sub(1)).rev() {
        // Saturating: with a zero extent there are no entries to index by it.
        stride[p] = stride[p + 1].saturating_mul(shape[p + 1]);
    }
    // The logical position of the entry at row-major index i.
    let position = |i: usize| -> Vec<i64> {
        at.iter()
            .map(|&p| ((i / stride[p]) % shape[p].max(1)) as i64)
            .collect()
    };
    let fail = |i: usize, value: i64, fault: ValueFault| {
        Err(Error::IndexValue(Box::new(IndexValue::new(
            c,
            arg,
            position(i),
            value,
            fault,
        ))))
    };
    for (i, &value) in entries.iter().enumerate() {
        if Some(value) != v.sentinel && !(lo..hi).contains(&value) {
            return fail(i, value, ValueFault::Range { lo, hi });
        }
    }
    if !v.ascending || rank == 0 || entries.is_empty() {
        return Ok(());
    }
    // Along the last logical dimension, for every position of the others.
    let last = at[rank - 1];
    let (len, step) = (shape[last], stride[last]);
    for start in (0..entries.len()).filter(|&i| (i / step) % len.max(1) == 0) {
        let index = |j: usize| start + j * step;
        if entries[start] != lo {
            return fail(start, entries[start], ValueFault::First { expected: lo });
        }
        for j in 1..len {
            let (previous, value) = (entries[index(j - 1)], entries[index(j)]);
            if value < previous {
                return fail(index(j), value, ValueFault::Order { previous });
            }
        }
        let end = index(len - 1);
        if entries[end] != hi - 1 {
            return fail(end, entries[end], ValueFault::Last { expected: hi - 1 });
        }
    }
    Ok(())
}

/// Little-endian integer elements of type `dtype` as i64 (a u64 past i64::MAX as
/// i64::MAX, outside every range a contract can state); `None` for a non-integer type.
pub(crate) fn integers(dtype: DType, bytes: &[u8]) -> Option<Vec<i64>> {
    if !dtype.is_integer() {
        return None;
    }
    let size = dtype.size();
    Some(
        bytes
            .chunks_exact(size)
            .map(|b| {
                let mut word = [0u8; 8];
                word[..size].copy_from_slice(b);
                let raw = u64::from_le_bytes(word);
                if dtype.int_range().is_some_and(|(lo, _)| lo < 0) {
                    // Sign-extend from the element's width.
                    let shift = 64 - 8 * size as u32;
                    ((raw << shift) as i64) >> shift
                } else {
                    i64::try_from(raw).unwrap_or(i64::MAX)
                }
            })
            .collect(),
    )
}
