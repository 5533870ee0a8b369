//! Index tensors: entries that keep an argument's value contract (positive cases), and one
//! planted entry that breaks it (`--negative`), which the host validation must name and
//! the kernel must report or never read, but never fault on.

use ima_runtime::{DType, TensorArg};

use crate::layout::Layout;
use crate::rng::{Rng, TILE};
use crate::shapes::{Case, eval};

/// An argument's value contract, evaluated for one case: entries in `lo .. hi` or the
/// sentinel; with `ascending`, rows along the last logical dimension run from `lo` to
/// `hi - 1` without decreasing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ValuePlan {
    pub lo: i64,
    pub hi: i64,
    pub sentinel: Option<i64>,
    pub ascending: bool,
}

impl ValuePlan {
    /// `None` for an argument without a contract, or one whose bounds do not evaluate.
    /// The range is cut to what the element type holds (`0 .. NP * 512 + 1` can pass
    /// i32::MAX), so that every drawn entry is stored as drawn.
    pub fn of(a: &TensorArg, case: &Case) -> Option<ValuePlan> {
        let v = a.values?;
        Some(ValuePlan {
            lo: eval(&v.lo.expr, &case.symbols, &case.params)?.max(min_of(a.dtype)),
            hi: eval(&v.hi.expr, &case.symbols, &case.params)?
                .min(max_of(a.dtype).saturating_add(1)),
            sentinel: v.sentinel,
            ascending: v.ascending,
        })
    }
}

/// How `--negative` breaks one entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BadValue {
    /// `hi`: one past the bound.
    PastBound,
    /// `lo - 1` (below the sentinel too, where there is one: -2 for `or -1`).
    BelowBound,
    /// The largest value of the element type.
    Max,
    /// An ascending row's entry below the one before it.
    Unsorted,
}

impl BadValue {
    pub fn name(self) -> &'static str {
        match self {
            BadValue::PastBound => "one past the bound",
            BadValue::BelowBound => "below the bound",
            BadValue::Max => "the type's largest value",
            BadValue::Unsorted => "out of order",
        }
    }
}

/// `lo - 1`, or `lo - 2` where `lo - 1` is the sentinel; `None` below i64's range.
fn below_bound(p: &ValuePlan) -> Option<i64> {
    let below = p.lo.checked_sub(1)?;
    if p.sentinel == Some(below) {
        below.checked_sub(1)
    } else {
        Some(below)
    }
}

/// The ways `p` can be broken for an argument of this shape (`shape` in physical order).
pub fn bad_values(p: &ValuePlan, dtype: DType, rank: usize, shape: &[usize]) -> Vec<BadValue> {
    if shape.iter().product::<usize>() == 0 {
        return Vec::new();
    }
    // Where the type holds nothing past the bound (a range cut to the type), neither
    // one past it nor the type's largest value is bad.
    let mut out = Vec::new();
    if dtype.holds(p.hi) {
        out.extend([BadValue::PastBound, BadValue::Max]);
    }
    if below_bound(p).is_some_and(|v| dtype.holds(v)) {
        out.push(BadValue::BelowBound);
    }
    // i128: the bounds may be those of i64 itself.
    if p.ascending && rank > 0 && i128::from(p.hi) - i128::from(p.lo) >= 2 {
        out.push(BadValue::Unsorted);
    }
    out
}

/// The least value of an integer type that an i64 holds.
fn min_of(d: DType) -> i64 {
    d.int_range()
        .map_or(0, |(lo, _)| lo.max(i64::MIN.into()) as i64)
}

/// The greatest value of an integer type that an i64 holds.
fn max_of(d: DType) -> i64 {
    d.int_range()
        .map_or(i64::MAX, |(_, hi)| hi.min(i64::MAX.into()) as i64)
}

/// Entries of a view of `shape` (physical order; `last` the physical position of the last
/// logical dimension), in row-major order, that keep `p`: `None` when no entries can (an
/// empty range, or an ascending row of one entry that cannot be both first and last).
/// Past [`TILE`] entries a plain contract's repeat ([`write_entries`]); ascending rows are
/// made whole.
pub fn valid_entries(
    p: &ValuePlan,
    shape: &[usize],
    last: usize,
    rng: &mut Rng,
) -> Option<Vec<i64>> {
    let n: usize = shape.iter().product();
    if n == 0 {
        return Some(Vec::new());
    }
    if p.hi <= p.lo {
        return None;
    }
    if !p.ascending {
        return Some(
            (0..n.min(TILE))
                .map(|_| match p.sentinel {
                    Some(s) if rng.chance(0.125) => s,
                    _ => rng.range(p.lo, p.hi - 1),
                })
                .collect(),
        );
    }
    let len = shape[last];
    if len == 1 && p.hi - 1 != p.lo {
        return None;
    }
    let step: usize = shape[last + 1..].iter().product();
    let mut out = vec![0; n];
    for start in (0..n).filter(|&i| (i / step).is_multiple_of(len)) {
        let mut row: Vec<i64> = (0..len).map(|_| rng.range(p.lo, p.hi - 1)).collect();
        row.sort_unstable();
        row[0] = p.lo;
        row[len - 1] = p.hi - 1;
        for (j, v) in row.into_iter().enumerate() {
            out[start + j * step] = v;
        }
    }
    Some(out)
}

/// Breaks one entry of `entries` (as [`valid_entries`] lays them out) as `bad` says:
/// the row-major index of the entry and its new value.
pub fn plant(
    bad: BadValue,
    p: &ValuePlan,
    dtype: DType,
    entries: &mut [i64],
    shape: &[usize],
    last: usize,
    rng: &mut Rng,
) -> (usize, i64) {
    let i = rng.below(entries.len() as u64) as usize;
    let value = match bad {
        BadValue::PastBound => p.hi,
        BadValue::BelowBound => {
            below_bound(p).expect("bad_values offers BelowBound only when it exists")
        }
        BadValue::Max => max_of(dtype),
        BadValue::Unsorted => {
            // The entry after the row's first: below it, by putting the first at the top.
            let step: usize = shape[last + 1..].iter().product();
            let first = i - (i / step % shape[last]) * step;
            entries[first] = p.hi - 1;
            return (first, p.hi - 1);
        }
    };
    entries[i] = value;
    (i, value)
}

/// Writes `entries` (row-major over the view's shape, repeated past their length) into
/// `bytes`, the buffer behind `layout`, as little-endian elements of `dtype`.
pub fn write_entries(bytes: &mut [u8], dtype: DType, layout: &Layout, entries: &[i64]) {
    let size = dtype.size();
    let rank = layout.shape.len();
    let n: usize = layout.shape.iter().product();
    if entries.is_empty() {
        return;
    }
    for i in 0..n {
        let v = entries[i % entries.len()];
        let mut rest = i;
        let mut at = layout.offset as isize;
        for d in (0..rank).rev() {
            let n = layout.shape[d].max(1);
            at += (rest % n) as isize * layout.strides[d];
            rest /= n;
        }
        let at = at as usize * size;
        bytes[at..at + size].copy_from_slice(&v.to_le_bytes()[..size]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ascending(lo: i64, hi: i64) -> ValuePlan {
        ValuePlan {
            lo,
            hi,
            sentinel: None,
            ascending: true,
        }
    }

    /// Bounds at i64's own edges: no overflow in planning what to break, nor in drawing
    /// entries (a contract `values(-9223372036854775807 - 1 .. 9223372036854775807)`).
    #[test]
    fn bounds_at_the_edges_of_i64_plan_and_draw_without_overflow() {
        let whole = ascending(i64::MIN, i64::MAX);
        let bad = bad_values(&whole, DType::I64, 1, &[4]);
        assert!(!bad.contains(&BadValue::BelowBound), "{bad:?}");
        assert!(bad.contains(&BadValue::Unsorted), "{bad:?}");
        let mut rng = Rng::new(3);
        let e = valid_entries(&whole, &[4], 0, &mut rng).unwrap();
        assert_eq!((e[0], e[3]), (i64::MIN, i64::MAX - 1), "{e:?}");
        // The whole of i64 (a span one past u64's), and spans of two at either edge.
        let draws: Vec<i64> = (0..64).map(|_| rng.range(i64::MIN, i64::MAX)).collect();
        assert!(
            draws.iter().any(|&v| v < 0) && draws.iter().any(|&v| v > 0),
            "{draws:?}"
        );
        for _ in 0..16 {
            assert!([i64::MIN, i64::MIN + 1].contains(&rng.range(i64::MIN, i64::MIN + 1)));
            assert!([i64::MAX - 1, i64::MAX].contains(&rng.range(i64::MAX - 1, i64::MAX)));
        }
    }

    #[test]
    fn ascending_rows_run_from_lo_to_hi_minus_one() {
        let mut rng = Rng::new(7);
        // Two rows of 5 along the last dimension, held first in memory.
        let e = valid_entries(&ascending(0, 38), &[5, 2], 0, &mut rng).unwrap();
        for row in 0..2 {
            let r: Vec<i64> = (0..5).map(|j| e[row + 2 * j]).collect();
            assert_eq!((r[0], r[4]), (0, 37), "{r:?}");
            assert!(r.windows(2).all(|w| w[0] <= w[1]), "{r:?}");
        }
    }

    #[test]
    fn no_valid_entries_for_an_empty_range_or_a_lone_entry_that_must_be_both_ends() {
        let mut rng = Rng::new(1);
        let range = ValuePlan {
            ascending: false,
            ..ascending(4, 4)
        };
        assert_eq!(valid_entries(&range, &[3], 0, &mut rng), None);
        assert_eq!(valid_entries(&ascending(0, 5), &[1], 0, &mut rng), None);
        assert_eq!(
            valid_entries(&ascending(0, 1), &[1], 0, &mut rng),
            Some(vec![0])
        );
    }

    #[test]
    fn a_planted_entry_breaks_the_contract() {
        let mut rng = Rng::new(3);
        let p = ValuePlan {
            lo: 0,
            hi: 10,
            sentinel: Some(-1),
            ascending: false,
        };
        for bad in bad_values(&p, DType::I32, 1, &[6]) {
            let mut e = valid_entries(&p, &[6], 0, &mut rng).unwrap();
            let (i, v) = plant(bad, &p, DType::I32, &mut e, &[6], 0, &mut rng);
            assert_eq!(e[i], v);
            assert!(!(0..10).contains(&v) && v != -1, "{bad:?}: {v}");
        }
        let p = ascending(0, 10);
        let mut e = valid_entries(&p, &[6], 0, &mut rng).unwrap();
        let (i, v) = plant(
            BadValue::Unsorted,
            &p,
            DType::I32,
            &mut e,
            &[6],
            0,
            &mut rng,
        );
        // The row's first entry at the top: no longer lo, and above the one after it
        // unless that one is at the top too.
        assert_eq!((i, v, e[0]), (0, 9, 9));
    }

    #[test]
    fn entries_land_where_the_view_puts_them() {
        // A transposed 2 x 3 view of a 6-element buffer, starting at 1 (alloc 7).
        let layout = Layout {
            shape: vec![2, 3],
            strides: vec![1, 2],
            offset: 1,
            alloc: 7,
            kind: String::new(),
        };
        let mut bytes = vec![0u8; 7 * 4];
        write_entries(&mut bytes, DType::I32, &layout, &[10, 11, 12, 20, 21, 22]);
        let words: Vec<i32> = bytes
            .chunks(4)
            .map(|b| i32::from_le_bytes(b.try_into().unwrap()))
            .collect();
        assert_eq!(words, vec![0, 10, 20, 11, 21, 12, 22]);
    }
}
