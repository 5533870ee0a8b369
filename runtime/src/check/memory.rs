//! Where each view lies in memory: strides as the layout requires, buffer bounds,
//! alignment of the data pointer, and outputs that share bytes with other arguments.

use super::TensorMeta;
use crate::capacity::DIMS;
use crate::contract::{KernelContract, TensorArg};
use crate::layout::{self, Reach};
use crate::violation::{StrideFault, Violation};
use smallvec::SmallVec;

/// Strides, buffer bounds and alignment of one argument of the right rank, whose reach is
/// `reach` ([`layout::reach`]).
pub(super) fn check_layout(
    a: &TensorArg,
    m: &TensorMeta<'_>,
    reach: Option<Reach>,
    v: &mut Vec<Violation>,
) {
    let stride_fault = |fault| Violation::Stride {
        arg: a.name,
        shape: m.shape.to_vec(),
        strides: m.strides.to_vec(),
        fault,
    };
    if reach.is_some() {
        if !a.strided
            && let Some((p, expected)) = layout::first_non_contiguous(m.shape, m.strides)
        {
            v.push(stride_fault(StrideFault::NotContiguous {
                position: p,
                expected,
                actual: m.strides[p],
            }));
        }
        if a.role.writes() && a.strided && !non_overlapping(m.shape, m.strides) {
            v.push(stride_fault(StrideFault::SelfOverlap));
        }
    }
    let inside = m.offset <= m.buffer_len && layout::reach_fits(reach, m.offset, m.buffer_len);
    if !inside {
        let r = reach.unwrap_or(Reach { lo: 0, hi: 0 });
        v.push(Violation::OutOfBuffer {
            arg: a.name,
            offset: m.offset,
            shape: m.shape.to_vec(),
            strides: m.strides.to_vec(),
            first: (m.offset as i128).saturating_add(r.lo),
            last: (m.offset as i128).saturating_add(r.hi),
            buffer_len: m.buffer_len,
        });
    } else if a.align > 1 {
        let address = view_address(m);
        if !aligned(address, a.align) {
            v.push(Violation::Align {
                arg: a.name,
                align: a.align,
                address: address as u64,
                offset: m.offset,
            });
        }
    }
}

/// Whether `address` is a multiple of `align`; a mask for the usual power of two, since
/// a 128-bit division is a library call and this runs for every argument of every launch.
fn aligned(address: u128, align: usize) -> bool {
    if align.is_power_of_two() {
        address & (align as u128 - 1) == 0
    } else {
        address.is_multiple_of(align as u128)
    }
}

/// Device address of the view's first element, in `u128` so a fabricated meta cannot
/// overflow it.
pub(crate) fn view_address(m: &TensorMeta<'_>) -> u128 {
    m.base_ptr as u128 + m.offset as u128 * m.dtype.size() as u128
}

/// A sufficient test that distinct indices reach distinct elements: sorted by stride,
/// each stride exceeds everything the smaller dimensions reach.
fn non_overlapping(shape: &[usize], strides: &[isize]) -> bool {
    // (|stride|, extent) of each dimension that moves; ranks are small.
    let mut dims: SmallVec<[(i128, i128); DIMS]> = shape
        .iter()
        .zip(strides)
        .filter(|(n, _)| **n > 1)
        .map(|(&n, &s)| ((s as i128).abs(), n as i128))
        .collect();
    dims.sort_unstable();
    let mut reached: i128 = 0;
    for &(stride, n) in dims.iter() {
        if stride <= reached {
            return false;
        }
        reached = reached.saturating_add(stride.saturating_mul(n - 1));
    }
    true
}

/// Byte range `[lo, hi)` a view of reach `reach` can touch, `None` when it has no elements.
fn byte_range(m: &TensorMeta<'_>, reach: Option<Reach>) -> Option<(u128, u128)> {
    let r = reach?;
    let size = m.dtype.size() as i128;
    let start = view_address(m) as i128;
    let lo = start.saturating_add(r.lo.saturating_mul(size));
    let hi = start.saturating_add(r.hi.saturating_add(1).saturating_mul(size));
    Some((lo.max(0) as u128, hi.max(0) as u128))
}

/// Outputs may not share bytes with any other argument: the kernel's reads and writes
/// would race. Pairs of outputs are reported once.
pub(super) fn check_overlap(
    c: &KernelContract,
    args: &[TensorMeta<'_>],
    ranked: &[bool],
    reaches: &[Option<Reach>],
    v: &mut Vec<Violation>,
) {
    // Computed where needed rather than stored: a handful of arguments, cheap arithmetic.
    let range_of = |i: usize| {
        let memory = ranked[i] && c.args[i].role != crate::contract::Role::Logical;
        memory.then(|| byte_range(&args[i], reaches[i])).flatten()
    };
    for (w, a) in c.args.iter().enumerate() {
        let Some(range) = a.role.writes().then(|| range_of(w)).flatten() else {
            continue;
        };
        for (o, other) in c.args.iter().enumerate() {
            let counted = o == w || (other.role.writes() && o < w);
            let Some(other_range) = (!counted).then(|| range_of(o)).flatten() else {
                continue;
            };
            if range.0 < other_range.1 && other_range.0 < range.1 {
                let clip = |r: (u128, u128)| (r.0 as u64, r.1.min(u64::MAX as u128) as u64);
                v.push(Violation::Overlap {
                    arg: a.name,
                    other: other.name,
                    range: clip(range),
                    other_range: clip(other_range),
                });
            }
        }
    }
}
