//! A checkpoint tensor's little-endian bytes as a typed slice, borrowed when possible.

use std::borrow::Cow;

use half::{bf16, f16};

/// An element type safetensors stores little-endian: `i32`, `i64`, `f16`, `bf16`, `f32`
/// (the layers' parts, and the tensors beside them: norms, biases, index tables).
///
/// # Safety
///
/// Every bit pattern of `Self` must be a valid value, so that aligned bytes may be read as
/// `Self` in place.
pub unsafe trait LeElement: Copy + 'static {
    const SIZE: usize;
    /// `bytes` holds exactly `SIZE` bytes.
    fn from_le(bytes: &[u8]) -> Self;
}

fn array<const N: usize>(bytes: &[u8]) -> [u8; N] {
    let mut a = [0; N];
    a.copy_from_slice(&bytes[..N]);
    a
}

// SAFETY: a plain integer.
unsafe impl LeElement for i32 {
    const SIZE: usize = 4;
    fn from_le(bytes: &[u8]) -> Self {
        i32::from_le_bytes(array(bytes))
    }
}

// SAFETY: a plain integer.
unsafe impl LeElement for i64 {
    const SIZE: usize = 8;
    fn from_le(bytes: &[u8]) -> Self {
        i64::from_le_bytes(array(bytes))
    }
}

// SAFETY: every pattern is a float, NaNs included.
unsafe impl LeElement for f32 {
    const SIZE: usize = 4;
    fn from_le(bytes: &[u8]) -> Self {
        f32::from_le_bytes(array(bytes))
    }
}

// SAFETY: `repr(transparent)` over `u16`; every pattern is a float, NaNs included.
unsafe impl LeElement for f16 {
    const SIZE: usize = 2;
    fn from_le(bytes: &[u8]) -> Self {
        f16::from_bits(u16::from_le_bytes(array(bytes)))
    }
}

// SAFETY: as for f16.
unsafe impl LeElement for bf16 {
    const SIZE: usize = 2;
    fn from_le(bytes: &[u8]) -> Self {
        bf16::from_bits(u16::from_le_bytes(array(bytes)))
    }
}

/// `bytes` (a whole number of elements, as safetensors' header validation guarantees)
/// as `&[T]`. Borrowed, with no copy, when the host is little-endian and the bytes are
/// aligned for `T`; copied otherwise. safetensors does not promise aligned data offsets:
/// the header is padded to 8 bytes and writers sort tensors by alignment, so offsets in
/// files written by the `safetensors` libraries are aligned and the copy is the rare case.
pub(super) fn elements<T: LeElement>(bytes: &[u8]) -> Cow<'_, [T]> {
    if cfg!(target_endian = "little") {
        // SAFETY: `LeElement` types are valid for every bit pattern, and `align_to` only
        // puts aligned, whole elements in the middle part.
        let (head, middle, tail) = unsafe { bytes.align_to::<T>() };
        if head.is_empty() && tail.is_empty() {
            return Cow::Borrowed(middle);
        }
    }
    Cow::Owned(bytes.chunks_exact(T::SIZE).map(T::from_le).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same values at an aligned offset (borrowed) and one byte past it (copied).
    fn both_ways<T: LeElement + PartialEq + std::fmt::Debug>(values: &[T], le: &[u8]) {
        let mut buf = vec![0u8; le.len() + 16];
        let start = buf.as_ptr().align_offset(16);
        for skew in [0, 1] {
            let at = start + skew;
            buf[at..at + le.len()].copy_from_slice(le);
            let got = elements::<T>(&buf[at..at + le.len()]);
            assert_eq!(&got[..], values, "skew {skew}");
            assert_eq!(matches!(got, Cow::Borrowed(_)), skew == 0, "skew {skew}");
        }
    }

    #[test]
    fn elements_read_little_endian_in_place_or_copied() {
        both_ways(&[1.5f32, -2.0], &[0, 0, 0xc0, 0x3f, 0, 0, 0, 0xc0]);
        both_ways(
            &[-2i64, 1 << 40],
            &[
                0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 1, 0, 0,
            ],
        );
        both_ways(&[-3i32], &[0xfd, 0xff, 0xff, 0xff]);
        both_ways(&[f16::from_f32(1.0)], &[0x00, 0x3c]);
    }
}
