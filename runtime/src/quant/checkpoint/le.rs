//! A checkpoint tensor's little-endian bytes as a typed slice, borrowed when possible.

use std::borrow::Cow;

use half::{bf16, f16};

/// An element type safetensors stores little-endian: `i32`, `f16`, `bf16`.
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
