//! The view of a buffer a tensor presents (shape, strides, offset), checked when it is made.
//!
//! Shared by every tensor type (owned, borrowed, raw) and a graph's bound arguments: each
//! refuses a view that reaches outside its buffer; the owned ones copy to the host in
//! logical row-major order.

use crate::check::TensorMeta;
use crate::contract::DType;
use crate::device::DeviceId;
use crate::error::Error;
use crate::layout;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct View {
    pub shape: Vec<usize>,
    /// In elements.
    pub strides: Vec<isize>,
    /// Elements from the buffer's start to the view's first element.
    pub offset: usize,
}

impl View {
    /// What the checker sees of a tensor presenting this view of a buffer of `buffer_len`
    /// elements at `base_ptr` on `device`.
    pub fn meta(
        &self,
        dtype: DType,
        buffer_len: usize,
        base_ptr: u64,
        device: DeviceId,
    ) -> TensorMeta<'_> {
        TensorMeta {
            dtype,
            shape: &self.shape,
            strides: &self.strides,
            offset: self.offset,
            buffer_len,
            base_ptr,
            device,
        }
    }

    /// A view of `buffer_len` elements; refuses one that reaches outside the buffer
    /// (negative strides are fine while nothing falls before its start).
    pub fn new(
        shape: &[usize],
        strides: &[isize],
        offset: usize,
        buffer_len: usize,
    ) -> Result<View, Error> {
        let bad = |reason: &str| Error::Layout {
            reason: reason.into(),
            shape: shape.to_vec(),
            strides: strides.to_vec(),
            offset,
            buffer_len,
        };
        if shape.len() != strides.len() {
            return Err(bad("shape and strides differ in length"));
        }
        if layout::numel(shape).is_none() {
            return Err(bad("the element count overflows"));
        }
        if offset > buffer_len || !layout::fits(shape, strides, offset, buffer_len) {
            return Err(bad("the view reaches outside its buffer"));
        }
        Ok(View {
            shape: shape.to_vec(),
            strides: strides.to_vec(),
            offset,
        })
    }

    /// The row-major contiguous view of `shape` at the buffer's start.
    pub fn contiguous(shape: &[usize], buffer_len: usize) -> Result<View, Error> {
        let strides = layout::contiguous_strides(shape).ok_or_else(|| Error::Layout {
            reason: "the strides overflow".into(),
            shape: shape.to_vec(),
            strides: vec![],
            offset: 0,
            buffer_len,
        })?;
        View::new(shape, &strides, 0, buffer_len)
    }

    /// Dimension `i` of the result is dimension `perm[i]` of `self`.
    pub fn permute(&self, perm: &[usize], buffer_len: usize) -> Result<View, Error> {
        let mut seen = vec![false; self.shape.len()];
        let valid = perm.len() == self.shape.len()
            && perm
                .iter()
                .all(|&d| d < seen.len() && !std::mem::replace(&mut seen[d], true));
        if !valid {
            return Err(Error::Layout {
                reason: format!(
                    "{perm:?} is not a permutation of {} dimensions",
                    self.shape.len()
                ),
                shape: self.shape.clone(),
                strides: self.strides.clone(),
                offset: self.offset,
                buffer_len,
            });
        }
        let shape: Vec<usize> = perm.iter().map(|&d| self.shape[d]).collect();
        let strides: Vec<isize> = perm.iter().map(|&d| self.strides[d]).collect();
        View::new(&shape, &strides, self.offset, buffer_len)
    }

    /// The buffer elements the view reaches, first to last (`None` for an empty view):
    /// all a partial copy to the host needs.
    pub fn span(&self) -> Option<std::ops::Range<usize>> {
        let r = layout::reach(&self.shape, &self.strides)?;
        // `new` checked that the reach lies inside the buffer.
        let lo = usize::try_from(self.offset as i128 + r.lo).ok()?;
        let hi = usize::try_from(self.offset as i128 + r.hi).ok()?;
        Some(lo..hi + 1)
    }

    /// The same view over a copy of its buffer from element `start` on.
    pub fn rebased(&self, start: usize) -> View {
        View {
            offset: self.offset - start,
            ..self.clone()
        }
    }

    /// The view's elements of the buffer in logical row-major order, reading only its
    /// span through `read(range)` (elements of the buffer, `size` items each).
    pub fn gather_span<T: Copy>(
        &self,
        size: usize,
        read: impl FnOnce(std::ops::Range<usize>) -> Result<Vec<T>, Error>,
    ) -> Result<Vec<T>, Error> {
        match self.span() {
            None => Ok(Vec::new()),
            Some(span) => {
                let start = span.start;
                let part = read(span)?;
                self.rebased(start).gather(&part, size)
            }
        }
    }

    /// Elements in the view (its buffer may hold more).
    pub fn numel(&self) -> usize {
        // `new` refuses shapes whose element count overflows.
        layout::numel(&self.shape).unwrap_or(usize::MAX)
    }

    /// The view's elements of `buffer` (the whole buffer, `size` items per element), in
    /// logical row-major order.
    pub fn gather<T: Copy>(&self, buffer: &[T], size: usize) -> Result<Vec<T>, Error> {
        let n = self.numel();
        // A broadcast view of a short buffer can have more elements than the host holds.
        let mut out = Vec::new();
        let reserved = n.checked_mul(size).map(|len| out.try_reserve_exact(len));
        if !matches!(reserved, Some(Ok(()))) {
            return Err(Error::Layout {
                reason: format!("a host copy of its {n} elements does not fit in memory"),
                shape: self.shape.clone(),
                strides: self.strides.clone(),
                offset: self.offset,
                buffer_len: buffer.len() / size.max(1),
            });
        }
        let mut index = vec![0usize; self.shape.len()];
        for _ in 0..n {
            let at = index
                .iter()
                .zip(&self.strides)
                .try_fold(self.offset as i128, |acc, (&i, &s)| {
                    acc.checked_add(i as i128 * s as i128)
                });
            let element = at.and_then(|at| usize::try_from(at).ok()).and_then(|at| {
                buffer.get(at.checked_mul(size)?..at.checked_add(1)?.checked_mul(size)?)
            });
            let Some(element) = element else {
                return Err(Error::Internal(
                    "a checked view reached outside its buffer".into(),
                ));
            };
            out.extend_from_slice(element);
            // Advance the row-major multi-index.
            for (i, &extent) in index.iter_mut().zip(&self.shape).rev() {
                *i += 1;
                if *i < extent {
                    break;
                }
                *i = 0;
            }
        }
        Ok(out)
    }
}

/// The element count of `shape`, for a tensor of `elem_size`-byte elements about to be
/// made; refuses a shape whose count or size in bytes overflows (past `isize::MAX`, which
/// no allocation reaches). cudarc computes a typed allocation's bytes without a check, so
/// an unchecked count would wrap into a small buffer that records the large length.
pub(crate) fn checked_numel(shape: &[usize], elem_size: usize) -> Result<usize, Error> {
    layout::numel(shape)
        .filter(|n| {
            n.checked_mul(elem_size)
                .is_some_and(|b| b <= isize::MAX as usize)
        })
        .ok_or_else(|| Error::Layout {
            reason: "the element count or its size in bytes overflows".into(),
            shape: shape.to_vec(),
            strides: vec![],
            offset: 0,
            buffer_len: 0,
        })
}

/// Refuses a device buffer of `len` elements of `elem_size` bytes whose size in bytes
/// overflows: one that cudarc allocated with a wrapped byte count, far shorter than `len`.
pub(crate) fn checked_buffer_len(len: usize, elem_size: usize) -> Result<usize, Error> {
    checked_numel(&[len], elem_size)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gathers_whole_elements_in_logical_order() {
        // A 2 x 3 buffer of 2-byte elements, seen transposed.
        let bytes: Vec<u8> = (0..12).collect();
        let v = View::contiguous(&[2, 3], 6)
            .unwrap()
            .permute(&[1, 0], 6)
            .unwrap();
        assert_eq!(
            (v.shape.as_slice(), v.strides.as_slice()),
            (&[3, 2][..], &[1, 3][..])
        );
        assert_eq!(
            v.gather(&bytes, 2).unwrap(),
            [0, 1, 6, 7, 2, 3, 8, 9, 4, 5, 10, 11]
        );
        // A reversed view through a negative stride, one item per element.
        let r = View::new(&[3], &[-1], 2, 6).unwrap();
        assert_eq!(
            r.gather(&[10, 11, 12, 13, 14, 15], 1).unwrap(),
            [12, 11, 10]
        );
    }

    #[test]
    fn a_tensor_whose_size_in_bytes_overflows_is_refused_before_it_is_allocated() {
        // (2^62 + 1) f32s: cudarc's unchecked byte count would wrap to 4 bytes.
        assert!(checked_numel(&[(1 << 62) + 1], 4).is_err());
        assert!(checked_numel(&[1 << 61], 4).is_err());
        assert_eq!(checked_numel(&[(1 << 61) - 1], 4).unwrap(), (1 << 61) - 1);
        assert!(checked_numel(&[1 << 62, 4], 1).is_err());
        assert_eq!(checked_numel(&[0, usize::MAX], 8).unwrap(), 0);
        assert!(checked_buffer_len((1 << 62) + 1, 4).is_err());
        assert_eq!(checked_buffer_len(1 << 20, 4).unwrap(), 1 << 20);
    }

    #[test]
    fn a_host_copy_larger_than_memory_is_an_error_not_a_panic() {
        // One element broadcast to 2^62: a valid view whose copy cannot be made.
        let v = View::new(&[1 << 62], &[0], 0, 1).unwrap();
        let e = v.gather(&[0u8; 4], 4).unwrap_err().to_string();
        assert!(e.contains("does not fit in memory"), "{e}");
    }

    #[test]
    fn spans_only_what_the_view_reaches() {
        // Column 1 of a 3 x 4 row-major buffer of 12 at offset 1: elements 1, 5, 9.
        let v = View::new(&[3], &[4], 1, 12).unwrap();
        assert_eq!(v.span(), Some(1..10));
        let buffer: Vec<u32> = (0..12).collect();
        let got: Result<Vec<u32>, Error> = v.gather_span(1, |r| Ok(buffer[r].to_vec()));
        assert_eq!(got.unwrap(), [1, 5, 9]);
        // Reversed: elements 5, 4, 3.
        let r = View::new(&[3], &[-1], 5, 12).unwrap();
        assert_eq!(r.span(), Some(3..6));
        let got: Result<Vec<u32>, Error> = r.gather_span(1, |s| Ok(buffer[s].to_vec()));
        assert_eq!(got.unwrap(), [5, 4, 3]);
        assert_eq!(View::new(&[0, 3], &[3, 1], 0, 12).unwrap().span(), None);
    }

    #[test]
    fn refuses_views_outside_the_buffer() {
        assert!(View::new(&[3], &[-1], 1, 6).is_err());
        assert!(View::new(&[2, 3], &[3], 0, 6).is_err());
        assert!(View::new(&[7], &[1], 0, 6).is_err());
        assert!(
            View::contiguous(&[2, 3], 6)
                .unwrap()
                .permute(&[0, 0], 6)
                .is_err()
        );
        // An empty view fits anywhere.
        assert_eq!(View::new(&[0, 4], &[4, 1], 6, 6).unwrap().numel(), 0);
    }
}
