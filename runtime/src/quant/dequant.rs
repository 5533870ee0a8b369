//! The one definition of dequantization, and a host reference implementation of it.

use half::f16;

use super::format::{QuantFormat, SYMMETRIC_ZERO, ZeroStyle};
use super::host::{HostQWeight, QuantHost};
use super::pack::{AWQ_REVERSE, IN_ORDER, gptq_real_zero_words, unpack_cols, unpack_rows};
use super::scale::QuantScale;

/// The dequantized value of one element, bit-exact with the generated GPU accessor:
///
/// ```text
/// value = f16::from_f32( (q - zero) as f32 * scale )
/// ```
///
/// `q - zero` is an exact integer (`q` in `0..=15`, or `-128..=127` for int8; `zero` in
/// `0..=15`), converted to f32 exactly; the product is one IEEE f32 multiplication rounded
/// to nearest even (no fused multiply-add: there is no addition to fuse); the result is
/// rounded to f16 to nearest even (`__float2half_rn`), overflowing to infinity past 65504.
/// `scale` is the f16/bf16 scale widened to f32, which is exact.
pub fn dequant_value(q: i32, zero: i32, scale: f32) -> f16 {
    f16::from_f32((q - zero) as f32 * scale)
}

/// The whole weight dequantized on the host, `[K, N]` row-major, by [`dequant_value`]
/// with `g` = the group of row `k` (`g_idx[k]`, or `k / G`), and zero `0` for int8, `8`
/// for symmetric GPTQ, the unpacked real zero point otherwise.
pub fn dequant_reference<S: QuantScale>(w: &QuantHost<S>) -> Vec<f16> {
    let (k, n, groups) = (w.k(), w.n(), w.groups());
    // `QuantHost` guarantees every buffer's padded length, so the unpackers stay in bounds.
    let q: Vec<i32> = match (w.format(), w.qweight()) {
        (QuantFormat::Gptq(_), HostQWeight::Packed(words)) => unpack_rows(words, k, n)
            .into_iter()
            .map(i32::from)
            .collect(),
        (QuantFormat::Awq, HostQWeight::Packed(words)) => unpack_cols(words, k, n, &AWQ_REVERSE)
            .into_iter()
            .map(i32::from)
            .collect(),
        (_, HostQWeight::Int8(values)) => values.iter().map(|&v| i32::from(v)).collect(),
        // `QuantHost::new` refuses i32 words for int8.
        (QuantFormat::Int8, HostQWeight::Packed(_)) => return Vec::new(),
    };
    let zeros: Vec<i32> = match (w.format(), w.qzeros()) {
        (QuantFormat::Gptq(style @ (ZeroStyle::MinusOne | ZeroStyle::Plain)), Some(words)) => {
            unpack_cols(&gptq_real_zero_words(words, style), groups, n, &IN_ORDER)
                .into_iter()
                .map(i32::from)
                .collect()
        }
        (QuantFormat::Awq, Some(words)) => unpack_cols(words, groups, n, &AWQ_REVERSE)
            .into_iter()
            .map(i32::from)
            .collect(),
        (QuantFormat::Gptq(ZeroStyle::Symmetric), _) => {
            vec![i32::from(SYMMETRIC_ZERO); groups * n]
        }
        _ => vec![0; groups * n],
    };
    let scales = w.scales();
    let mut out = Vec::with_capacity(k * n);
    for row in 0..k {
        let g = w.group_of(row).unwrap_or(0);
        let (zrow, srow) = (&zeros[g * n..][..n], &scales[g * n..][..n]);
        let qrow = &q[row * n..][..n];
        out.extend(
            qrow.iter()
                .zip(zrow)
                .zip(srow)
                .map(|((&q, &z), &s)| dequant_value(q, z, s.to_f32())),
        );
    }
    out
}
