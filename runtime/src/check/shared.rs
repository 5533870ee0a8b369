//! Dynamic shared memory: the bytes a launch needs, laid out as the kernel lays them out.

use super::values::Env;
use crate::contract::{KernelContract, SHARED_ALIGN};
use crate::violation::{SharedUse, Violation};

/// Bytes of dynamic shared memory the launch needs: the arrays in declaration order, each
/// starting at a multiple of [`SHARED_ALIGN`]. `None` when an extent cannot be evaluated
/// or the total exceeds `limit` (both reported in `v`).
pub(super) fn shared_bytes(
    c: &KernelContract,
    env: &Env<'_>,
    limit: u32,
    v: &mut Vec<Violation>,
) -> Option<u32> {
    let mut arrays = Vec::with_capacity(c.shared.len());
    let mut end: u128 = 0;
    let mut fine = true;
    for s in c.shared {
        let mut dims = Vec::with_capacity(s.dims.len());
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
                Some(Ok(n)) => dims.push(n),
            }
        }
        if !fine {
            continue;
        }
        // Each factor is below 2^63, and the products saturate long before u128 would.
        let bytes = dims.iter().fold(s.dtype.size() as u128, |acc, &n| {
            acc.saturating_mul(n as u128)
        });
        let offset = end
            .checked_next_multiple_of(SHARED_ALIGN as u128)
            .unwrap_or(u128::MAX);
        end = offset.saturating_add(bytes);
        let clip = |x: u128| x.min(u128::from(u64::MAX)) as u64;
        arrays.push(SharedUse {
            name: s.name,
            dtype: s.dtype,
            dims,
            offset: clip(offset),
            bytes: clip(bytes),
        });
    }
    if !fine {
        return None;
    }
    if end > u128::from(limit) {
        v.push(Violation::SharedMemory {
            bytes: end.min(u128::from(u64::MAX)) as u64,
            limit,
            arrays,
        });
        return None;
    }
    Some(end as u32)
}
