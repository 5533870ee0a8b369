//! Dynamic shared memory: the bytes a launch needs, laid out as the kernel lays them out.

use super::values::Env;
use crate::capacity::VALUES;
use crate::contract::{KernelContract, SHARED_ALIGN, SharedArray};
use crate::violation::{SharedUse, Violation};
use smallvec::SmallVec;

/// Bytes of dynamic shared memory the launch needs: the arrays in declaration order, each
/// starting at a multiple of its alignment (at least [`SHARED_ALIGN`]), and the slack the
/// kernel takes to align their start ([`KernelContract::shared_slack`]). `None` when an extent cannot be evaluated
/// or the total exceeds `limit` (both reported in `v`).
pub(super) fn shared_bytes(
    c: &KernelContract,
    env: &Env<'_>,
    limit: u32,
    v: &mut Vec<Violation>,
) -> Option<u32> {
    if c.shared.is_empty() {
        return Some(0);
    }
    // Every array's extents, concatenated in declaration order.
    let mut extents: SmallVec<[i64; VALUES]> = SmallVec::new();
    let mut fine = true;
    for s in c.shared {
        for (i, d) in s.dims.iter().enumerate() {
            let values = || env.values_of(&d.expr, c);
            match env.eval(&d.expr) {
                // A symbol is unbound: already reported.
                None => fine = false,
                Some(Err(error)) => {
                    fine = false;
                    v.push(Violation::Eval {
                        site: format!("shared {}: dims[{i}]", s.name),
                        text: d.text,
                        error,
                        values: values(),
                    });
                }
                Some(Ok(n)) if n < 0 => {
                    fine = false;
                    v.push(Violation::Negative {
                        site: format!("shared {}: dims[{i}]", s.name),
                        text: d.text,
                        value: n,
                        values: values(),
                    });
                }
                Some(Ok(n)) => extents.push(n),
            }
        }
    }
    if !fine {
        return None;
    }
    let end = placements(c, &extents)
        .last()
        .map_or(0, |p| p.offset.saturating_add(p.bytes))
        .saturating_add(c.shared_slack() as u128);
    if end > u128::from(limit) {
        // Only a refused launch lists the arrays.
        let clip = |x: u128| x.min(u128::from(u64::MAX)) as u64;
        let arrays = placements(c, &extents)
            .map(|p| SharedUse {
                name: p.array.name,
                dtype: p.array.dtype,
                dims: p.dims.to_vec(),
                offset: clip(p.offset),
                bytes: clip(p.bytes),
            })
            .collect();
        v.push(Violation::SharedMemory {
            bytes: clip(end),
            limit,
            arrays,
        });
        return None;
    }
    Some(end as u32)
}

/// Where one array lies in the block's shared memory, in bytes.
struct Placement<'a> {
    array: &'a SharedArray,
    dims: &'a [i64],
    offset: u128,
    bytes: u128,
}

/// Each array's place, in declaration order, from `extents`: every array's (non-negative)
/// extents, concatenated.
fn placements<'a>(
    c: &'a KernelContract,
    extents: &'a [i64],
) -> impl Iterator<Item = Placement<'a>> {
    let mut rest = extents;
    let mut end: u128 = 0;
    c.shared.iter().map(move |array| {
        let (dims, tail) = rest.split_at(array.dims.len());
        rest = tail;
        // Each factor is below 2^63, and the products saturate long before u128 would.
        let bytes = dims.iter().fold(array.dtype.size() as u128, |acc, &n| {
            acc.saturating_mul(n as u128)
        });
        let offset = end
            .checked_next_multiple_of(array.align.max(SHARED_ALIGN) as u128)
            .unwrap_or(u128::MAX);
        end = offset.saturating_add(bytes);
        Placement {
            array,
            dims,
            offset,
            bytes,
        }
    })
}
