//! Packing quantized values into the formats' buffers, and back.
//!
//! Unpacked values are row-major `[rows, cols]` arrays: 4-bit values as `u8` in `0..=15`,
//! int8 values as `i8`. Packed words are `i32` holding 8 nibbles; nibble `i` is bits
//! `4*i .. 4*i+4` (nibble 0 is the least significant). Pad nibbles (past the last row or
//! column) are written as 0 (in GPTQ v1's qzeros, before the whole word is stored minus
//! `0x11111111`) and ignored when unpacking.

use super::error::QuantError;
use super::format::ZeroStyle;
use super::spec::{PACK, ceil_div};

/// AWQ's interleave: nibble `i` of a word holds column `base + AWQ_ORDER[i]`.
pub const AWQ_ORDER: [usize; 8] = [0, 2, 4, 6, 1, 3, 5, 7];

/// The inverse of [`AWQ_ORDER`]: column `n` sits at nibble `AWQ_REVERSE[n % 8]` of word
/// `n / 8`.
pub const AWQ_REVERSE: [usize; 8] = [0, 4, 1, 5, 2, 6, 3, 7];

/// Plain packing: column `n` at nibble `n % 8`.
pub(super) const IN_ORDER: [usize; 8] = [0, 1, 2, 3, 4, 5, 6, 7];

/// Nibble `i` (0..8) of `word`.
pub const fn nibble(word: i32, i: usize) -> u8 {
    ((word as u32 >> (4 * i)) & 0xF) as u8
}

fn numel(what: &'static str, rows: usize, cols: usize) -> Result<usize, QuantError> {
    rows.checked_mul(cols)
        .ok_or(QuantError::Overflow { what, rows, cols })
}

fn check_len(
    buffer: &'static str,
    formula: &'static str,
    shape: [usize; 2],
    actual: usize,
) -> Result<(), QuantError> {
    let expected = numel(buffer, shape[0], shape[1])?;
    if actual == expected {
        Ok(())
    } else {
        Err(QuantError::BufferLen {
            buffer,
            formula,
            shape: shape.to_vec(),
            expected,
            actual,
        })
    }
}

fn check_nibbles(what: &'static str, values: &[u8]) -> Result<(), QuantError> {
    match values.iter().position(|&v| v > 15) {
        None => Ok(()),
        Some(index) => Err(QuantError::Nibble {
            what,
            index,
            value: values[index],
        }),
    }
}

/// `[rows, cols]` nibbles into `[ceil(rows/8), cols]` words, packed along rows.
pub(super) fn pack_rows(values: &[u8], rows: usize, cols: usize) -> Vec<i32> {
    let mut words = vec![0u32; ceil_div(rows, PACK) * cols];
    for (r, row) in values.chunks_exact(cols.max(1)).take(rows).enumerate() {
        let shift = 4 * (r % PACK);
        let out = &mut words[(r / PACK) * cols..][..cols];
        for (w, &v) in out.iter_mut().zip(row) {
            *w |= u32::from(v) << shift;
        }
    }
    words.into_iter().map(|w| w as i32).collect()
}

pub(super) fn unpack_rows(words: &[i32], rows: usize, cols: usize) -> Vec<u8> {
    let mut values = Vec::with_capacity(rows * cols);
    for r in 0..rows {
        let row = &words[(r / PACK) * cols..][..cols];
        values.extend(row.iter().map(|&w| nibble(w, r % PACK)));
    }
    values
}

/// `[rows, cols]` nibbles into `[rows, ceil(cols/8)]` words, packed along columns: column
/// `c` at nibble `pos[c % 8]` of word `c / 8`.
pub(super) fn pack_cols(values: &[u8], rows: usize, cols: usize, pos: &[usize; 8]) -> Vec<i32> {
    let wpr = ceil_div(cols, PACK);
    let mut words = vec![0u32; rows * wpr];
    for (r, row) in values.chunks_exact(cols.max(1)).take(rows).enumerate() {
        for (c, &v) in row.iter().enumerate() {
            words[r * wpr + c / PACK] |= u32::from(v) << (4 * pos[c % PACK]);
        }
    }
    words.into_iter().map(|w| w as i32).collect()
}

pub(super) fn unpack_cols(words: &[i32], rows: usize, cols: usize, pos: &[usize; 8]) -> Vec<u8> {
    let wpr = ceil_div(cols, PACK);
    let mut values = Vec::with_capacity(rows * cols);
    for r in 0..rows {
        values.extend((0..cols).map(|c| nibble(words[r * wpr + c / PACK], pos[c % PACK])));
    }
    values
}

/// GPTQ qweight: `q` is `[K, N]` in `0..=15`; returns `[ceil(K/8), N]` words where
/// `q[k, n]` is nibble `k % 8` of word `(k / 8, n)`.
pub fn pack_gptq(q: &[u8], k: usize, n: usize) -> Result<Vec<i32>, QuantError> {
    check_len("q", "[K, N]", [k, n], q.len())?;
    check_nibbles("q", q)?;
    Ok(pack_rows(q, k, n))
}

/// Inverse of [`pack_gptq`]: `[ceil(K/8), N]` words to `[K, N]` values.
pub fn unpack_gptq(qweight: &[i32], k: usize, n: usize) -> Result<Vec<u8>, QuantError> {
    check_len(
        "qweight",
        "[ceil(K/8), N]",
        [ceil_div(k, PACK), n],
        qweight.len(),
    )?;
    Ok(unpack_rows(qweight, k, n))
}

/// GPTQ qzeros: `zeros` are the real zero points `[groups, N]` in `0..=15`; returns
/// `[groups, ceil(N/8)]` words: the real zero of `(g, n)` is nibble `n % 8` of word
/// `(g, n / 8)` once the word is read as the style says ([`ZeroStyle::load_word`]).
/// `MinusOne` stores each whole word minus `0x11111111`, as GPTQModel writes v1 (a real
/// zero of 0, pads included, is stored as 15, or 14 where the nibble below borrowed too;
/// reading back with the carries restores it). `Symmetric` has no packed zeros and is an
/// error.
pub fn pack_gptq_zeros(
    zeros: &[u8],
    groups: usize,
    n: usize,
    style: ZeroStyle,
) -> Result<Vec<i32>, QuantError> {
    if style == ZeroStyle::Symmetric {
        return Err(QuantError::SymmetricZeros);
    }
    check_len("zeros", "[ceil(K/G), N]", [groups, n], zeros.len())?;
    check_nibbles("zeros", zeros)?;
    let mut words = pack_cols(zeros, groups, n, &IN_ORDER);
    for w in &mut words {
        *w = style.store_word(*w as u32) as i32;
    }
    Ok(words)
}

/// GPTQ qzeros words as plainly packed real zeros ([`ZeroStyle::load_word`] of each).
pub(super) fn gptq_real_zero_words(qzeros: &[i32], style: ZeroStyle) -> Vec<i32> {
    qzeros
        .iter()
        .map(|&w| style.load_word(w as u32) as i32)
        .collect()
}

/// Inverse of [`pack_gptq_zeros`]: `[groups, ceil(N/8)]` words to the real zero points
/// `[groups, N]`.
pub fn unpack_gptq_zeros(
    qzeros: &[i32],
    groups: usize,
    n: usize,
    style: ZeroStyle,
) -> Result<Vec<u8>, QuantError> {
    if style == ZeroStyle::Symmetric {
        return Err(QuantError::SymmetricZeros);
    }
    check_len(
        "qzeros",
        "[ceil(K/G), ceil(N/8)]",
        [groups, ceil_div(n, PACK)],
        qzeros.len(),
    )?;
    Ok(unpack_cols(
        &gptq_real_zero_words(qzeros, style),
        groups,
        n,
        &IN_ORDER,
    ))
}

/// AWQ qweight: `q` is `[K, N]` in `0..=15`; returns `[K, ceil(N/8)]` words where
/// `q[k, n]` is nibble `AWQ_REVERSE[n % 8]` of word `(k, n / 8)`.
pub fn pack_awq(q: &[u8], k: usize, n: usize) -> Result<Vec<i32>, QuantError> {
    check_len("q", "[K, N]", [k, n], q.len())?;
    check_nibbles("q", q)?;
    Ok(pack_cols(q, k, n, &AWQ_REVERSE))
}

/// Inverse of [`pack_awq`].
pub fn unpack_awq(qweight: &[i32], k: usize, n: usize) -> Result<Vec<u8>, QuantError> {
    check_len(
        "qweight",
        "[K, ceil(N/8)]",
        [k, ceil_div(n, PACK)],
        qweight.len(),
    )?;
    Ok(unpack_cols(qweight, k, n, &AWQ_REVERSE))
}

/// AWQ qzeros: zero points `[groups, N]` in `0..=15`, stored as is, packed like
/// [`pack_awq`] into `[groups, ceil(N/8)]` words.
pub fn pack_awq_zeros(zeros: &[u8], groups: usize, n: usize) -> Result<Vec<i32>, QuantError> {
    check_len("zeros", "[ceil(K/G), N]", [groups, n], zeros.len())?;
    check_nibbles("zeros", zeros)?;
    Ok(pack_cols(zeros, groups, n, &AWQ_REVERSE))
}

/// Inverse of [`pack_awq_zeros`].
pub fn unpack_awq_zeros(qzeros: &[i32], groups: usize, n: usize) -> Result<Vec<u8>, QuantError> {
    check_len(
        "qzeros",
        "[ceil(K/G), ceil(N/8)]",
        [groups, ceil_div(n, PACK)],
        qzeros.len(),
    )?;
    Ok(unpack_cols(qzeros, groups, n, &AWQ_REVERSE))
}

/// int8 qweight: `[K, N]` values stored as they are (no packing); checks the length.
pub fn pack_int8(q: &[i8], k: usize, n: usize) -> Result<Vec<i8>, QuantError> {
    check_len("q", "[K, N]", [k, n], q.len())?;
    Ok(q.to_vec())
}

/// Inverse of [`pack_int8`].
pub fn unpack_int8(qweight: &[i8], k: usize, n: usize) -> Result<Vec<i8>, QuantError> {
    check_len("qweight", "[K, N]", [k, n], qweight.len())?;
    Ok(qweight.to_vec())
}
