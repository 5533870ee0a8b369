//! The element range a strided view can reach.
//!
//! One computation, shared by [`crate::Tensor::with_layout`] (which refuses a bad view when
//! it is made) and [`crate::check()`] (which refuses it again at launch, since a
//! [`crate::TensorMeta`] can come from anywhere). It works in `i128` with checked
//! arithmetic, so no shape or stride a caller can write overflows silently.

/// The reachable element offsets of a view, relative to its first element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Reach {
    /// Most negative offset reachable: the sum of `stride * (extent - 1)` over negative strides.
    pub lo: i128,
    /// Most positive offset reachable: the sum over positive strides.
    pub hi: i128,
}

/// The reach of `shape`/`strides` (same length), or `None` when the view has no elements
/// (nothing is reachable). Each term fits `i128`; the sums saturate, which is exact for
/// every purpose here: a reach near 2^127 is outside any buffer either way.
pub(crate) fn reach(shape: &[usize], strides: &[isize]) -> Option<Reach> {
    if shape.contains(&0) {
        return None;
    }
    let (mut lo, mut hi) = (0i128, 0i128);
    for (&n, &s) in shape.iter().zip(strides) {
        // |s| < 2^63 and n - 1 < 2^64, so the product stays below 2^127.
        let term = s as i128 * (n as i128 - 1);
        if term < 0 {
            lo = lo.saturating_add(term);
        } else {
            hi = hi.saturating_add(term);
        }
    }
    Some(Reach { lo, hi })
}

/// Number of elements of a shape, `None` on overflow.
pub(crate) fn numel(shape: &[usize]) -> Option<usize> {
    shape.iter().try_fold(1usize, |acc, &n| acc.checked_mul(n))
}

/// Row-major contiguous strides for `shape`, `None` on overflow.
pub(crate) fn contiguous_strides(shape: &[usize]) -> Option<Vec<isize>> {
    let mut strides = vec![0isize; shape.len()];
    let mut acc: isize = 1;
    for (stride, &n) in strides.iter_mut().zip(shape).rev() {
        *stride = acc;
        acc = acc.checked_mul(isize::try_from(n.max(1)).ok()?)?;
    }
    Some(strides)
}

/// The outermost position (of extent > 1) whose stride differs from the row-major
/// contiguous one, with that expected stride; `None` when there is none. Computes what
/// comparing with [`contiguous_strides`] would, without building them: the checker asks
/// this of every contiguous argument at every launch. Where the contiguous strides
/// overflow, a position outside the overflow with extent > 1 has no stride a contiguous
/// view could give it: the outermost such is reported, expected `isize::MAX` (a broadcast
/// view of 2^63 elements is not contiguous, whatever its strides).
pub(crate) fn first_non_contiguous(shape: &[usize], strides: &[isize]) -> Option<(usize, isize)> {
    let mut found = None;
    let mut acc: isize = 1;
    // Innermost first, as the strides are built; the last mismatch found is the outermost.
    for (p, (&n, &stride)) in shape.iter().zip(strides).enumerate().rev() {
        if n > 1 && stride != acc {
            found = Some((p, acc));
        }
        match isize::try_from(n.max(1))
            .ok()
            .and_then(|n| acc.checked_mul(n))
        {
            Some(next) => acc = next,
            None => {
                return shape[..p]
                    .iter()
                    .position(|&n| n > 1)
                    .map(|q| (q, isize::MAX))
                    .or(found);
            }
        }
    }
    found
}

/// Whether a view at `offset` stays inside a buffer of `buffer_len` elements: no negative
/// reach below the buffer's start, nothing at or past its end.
pub(crate) fn fits(shape: &[usize], strides: &[isize], offset: usize, buffer_len: usize) -> bool {
    reach_fits(reach(shape, strides), offset, buffer_len)
}

/// [`fits`], given the view's [`reach`].
pub(crate) fn reach_fits(reach: Option<Reach>, offset: usize, buffer_len: usize) -> bool {
    match reach {
        None => true,
        Some(r) => {
            let first = (offset as i128).saturating_add(r.lo);
            let last = (offset as i128).saturating_add(r.hi);
            first >= 0 && last < buffer_len as i128
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reach_of_contiguous_and_negative_views() {
        assert_eq!(reach(&[2, 3], &[3, 1]), Some(Reach { lo: 0, hi: 5 }));
        assert_eq!(reach(&[2, 3], &[-3, 1]), Some(Reach { lo: -3, hi: 2 }));
        assert_eq!(reach(&[2, 0], &[3, 1]), None);
        assert_eq!(
            reach(&[usize::MAX, 2], &[isize::MAX, isize::MAX]).map(|r| r.hi > 0),
            Some(true)
        );
    }

    #[test]
    fn fits_refuses_views_outside_the_buffer() {
        assert!(fits(&[2, 3], &[3, 1], 0, 6));
        assert!(!fits(&[2, 3], &[3, 1], 1, 6));
        assert!(!fits(&[2, 3], &[-3, 1], 0, 6));
        assert!(fits(&[2, 3], &[-3, 1], 3, 6));
        assert!(fits(&[0, 3], &[3, 1], 100, 0));
    }

    #[test]
    fn first_non_contiguous_agrees_with_contiguous_strides() {
        let shapes: [&[usize]; 5] = [&[2, 3, 4], &[1, 5], &[3, 1, 0], &[], &[usize::MAX, 4]];
        let strides: [&[isize]; 4] = [&[12, 4, 1], &[1, 4, 12], &[5, 0, 1], &[-12, 4, 1]];
        for shape in shapes {
            for strides in strides
                .iter()
                .map(|s| &s[s.len().saturating_sub(shape.len())..])
            {
                // Overflowing shapes have no contiguous strides to compare with: below.
                let Some(c) = contiguous_strides(shape) else {
                    continue;
                };
                let expected = (0..shape.len())
                    .find(|&p| shape[p] > 1 && strides[p] != c[p])
                    .map(|p| (p, c[p]));
                assert_eq!(
                    first_non_contiguous(shape, strides),
                    expected,
                    "{shape:?} {strides:?}"
                );
            }
        }
        assert_eq!(first_non_contiguous(&[2, 3, 4], &[1, 4, 1]), Some((0, 12)));
    }

    #[test]
    fn a_view_whose_contiguous_strides_overflow_is_not_contiguous() {
        // The overflow at the outermost extent leaves no stride unchecked.
        assert_eq!(first_non_contiguous(&[usize::MAX, 4], &[4, 1]), None);
        assert_eq!(
            first_non_contiguous(&[usize::MAX, 4], &[1, 4]),
            Some((0, 4))
        );
        // 2^62 x 4 overflows before the outer extent's stride: a broadcast (stride 0)
        // claims to be contiguous, and is not.
        let big = 1usize << 62;
        assert_eq!(
            first_non_contiguous(&[3, big, 4], &[0, 4, 1]),
            Some((0, isize::MAX))
        );
        // Outer extents of 1 need no stride.
        assert_eq!(first_non_contiguous(&[1, big, 4], &[0, 4, 1]), None);
    }

    #[test]
    fn contiguous_strides_are_row_major() {
        assert_eq!(contiguous_strides(&[2, 3, 4]), Some(vec![12, 4, 1]));
        assert_eq!(contiguous_strides(&[]), Some(vec![]));
        assert_eq!(contiguous_strides(&[usize::MAX, 4]), None);
    }
}
