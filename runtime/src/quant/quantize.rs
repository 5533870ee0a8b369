//! Quantizing a dense f32 weight (round to nearest, per group and column).
//!
//! Scales are rounded *up* to the scale type before any `q` is computed, so that
//! dequantization uses exactly the scale the values were quantized against and every
//! value lies within half a step of its dequantized value (before the final f16
//! rounding): `|w - value| <= scale / 2`.

use super::error::QuantError;
use super::format::{QuantFormat, SYMMETRIC_ZERO, ZeroStyle};
use super::host::{HostQWeight, QuantHost};
use super::pack::{pack_awq, pack_awq_zeros, pack_gptq, pack_gptq_zeros};
use super::scale::QuantScale;
use super::shaped::Shaped;
use super::spec::QuantSpec;

/// Checks the inputs and returns the group of each row.
fn prepare(
    format: QuantFormat,
    w: &[f32],
    k: usize,
    n: usize,
    group: usize,
    g_idx: Option<&[i32]>,
) -> Result<(QuantSpec, Vec<usize>), QuantError> {
    let spec = QuantSpec::new(format, k, n, group)?;
    if w.len() != k * n {
        return Err(QuantError::WeightLen {
            k,
            n,
            expected: k * n,
            actual: w.len(),
        });
    }
    if let Some(i) = w.iter().position(|x| !x.is_finite()) {
        return Err(QuantError::NonFinite {
            row: i / n,
            col: i % n,
            value: w[i],
        });
    }
    let rows = match g_idx {
        Some(g_idx) => {
            super::validate_g_idx(g_idx, k, group)?;
            g_idx.iter().map(|&g| g as usize).collect()
        }
        None => (0..k).map(|r| spec.default_group_of(r)).collect(),
    };
    Ok((spec, rows))
}

/// Per (group, column) reduction of `f` over the group's rows, starting from 0.
fn reduce(
    w: &[f32],
    n: usize,
    groups: usize,
    group_of: &[usize],
    f: impl Fn(f32, f32) -> f32,
) -> Vec<f32> {
    let mut acc = vec![0f32; groups * n];
    for (row, &g) in group_of.iter().enumerate() {
        let out = &mut acc[g * n..][..n];
        for (a, &x) in out.iter_mut().zip(&w[row * n..][..n]) {
            *a = f(*a, x);
        }
    }
    acc
}

/// The scale for an exact step `exact >= 0`: rounded up to `S`; 1 for an all-zero group.
fn scale<S: QuantScale>(exact: f32, i: usize, n: usize) -> Result<S, QuantError> {
    if exact == 0.0 {
        return Ok(S::ONE);
    }
    let s = S::round_up(exact);
    if s.to_f32().is_finite() {
        Ok(s)
    } else {
        Err(QuantError::ScaleOverflow {
            group: i / n.max(1),
            col: i % n.max(1),
            scale: exact,
            dtype: S::DTYPE,
        })
    }
}

/// Asymmetric 4-bit: per (group, column), the range `[min(lo, 0), max(hi, 0)]` over 15
/// steps; zero `round(-lo / scale)`; `q = clamp(round(w / scale) + zero, 0, 15)`.
/// Returns `q` `[K, N]`, real zeros `[groups, N]`, scales `[groups, N]`.
#[allow(clippy::type_complexity)]
fn asymmetric<S: QuantScale>(
    w: &[f32],
    spec: &QuantSpec,
    group_of: &[usize],
) -> Result<(Vec<u8>, Vec<u8>, Vec<S>), QuantError> {
    let (n, groups) = (spec.n(), spec.groups());
    let lo = reduce(w, n, groups, group_of, f32::min);
    let hi = reduce(w, n, groups, group_of, f32::max);
    let mut scales = Vec::with_capacity(groups * n);
    let mut zeros = Vec::with_capacity(groups * n);
    for (i, (&lo, &hi)) in lo.iter().zip(&hi).enumerate() {
        let s: S = scale((hi - lo) / 15.0, i, n)?;
        zeros.push((-lo / s.to_f32()).round().clamp(0.0, 15.0) as u8);
        scales.push(s);
    }
    let q = quantize_rows(w, n, group_of, |x, i| {
        let s = scales[i].to_f32();
        ((x / s).round() + f32::from(zeros[i])).clamp(0.0, 15.0) as u8
    });
    Ok((q, zeros, scales))
}

/// Symmetric (absmax) scales: `max |w| / steps` per (group, column).
fn absmax_scales<S: QuantScale>(
    w: &[f32],
    spec: &QuantSpec,
    group_of: &[usize],
    steps: f32,
) -> Result<Vec<S>, QuantError> {
    let m = reduce(w, spec.n(), spec.groups(), group_of, |a, x| a.max(x.abs()));
    m.iter()
        .enumerate()
        .map(|(i, &m)| scale(m / steps, i, spec.n()))
        .collect()
}

fn quantize_rows<T>(
    w: &[f32],
    n: usize,
    group_of: &[usize],
    q: impl Fn(f32, usize) -> T,
) -> Vec<T> {
    let mut out = Vec::with_capacity(w.len());
    for (row, &g) in group_of.iter().enumerate() {
        out.extend(
            w[row * n..][..n]
                .iter()
                .enumerate()
                .map(|(c, &x)| q(x, g * n + c)),
        );
    }
    out
}

/// GPTQ 4-bit quantization of `w` (`[K, N]` row-major f32) with group size `group`.
///
/// `ZeroStyle::MinusOne` / `Plain`: asymmetric (min/max, range widened to include 0),
/// zeros stored as the style says. `ZeroStyle::Symmetric`: absmax, `scale = max|w| / 7.5`
/// (GPTQ's `2 * max / 15`), zero 8, no qzeros. With `g_idx` (act-order), row `k`
/// belongs to group `g_idx[k]`; a group no row uses gets scale 1 and zero 0 (8 for
/// `Symmetric`).
pub fn quantize_gptq<S: QuantScale>(
    w: &[f32],
    k: usize,
    n: usize,
    group: usize,
    zeros: ZeroStyle,
    g_idx: Option<&[i32]>,
) -> Result<QuantHost<S>, QuantError> {
    let (spec, group_of) = prepare(QuantFormat::Gptq(zeros), w, k, n, group, g_idx)?;
    let (q, qzeros, scales) = match zeros {
        ZeroStyle::Symmetric => {
            let scales: Vec<S> = absmax_scales(w, &spec, &group_of, 7.5)?;
            let zero = f32::from(SYMMETRIC_ZERO);
            let q = quantize_rows(w, n, &group_of, |x, i| {
                ((x / scales[i].to_f32()).round() + zero).clamp(0.0, 15.0) as u8
            });
            (q, None, scales)
        }
        ZeroStyle::MinusOne | ZeroStyle::Plain => {
            let (q, z, scales) = asymmetric(w, &spec, &group_of)?;
            (
                q,
                Some(pack_gptq_zeros(&z, spec.groups(), n, zeros)?),
                scales,
            )
        }
    };
    QuantHost::new(
        spec,
        Shaped::new(
            HostQWeight::Packed(pack_gptq(&q, k, n)?),
            &spec.qweight_shape().shape,
        ),
        qzeros
            .zip(spec.qzeros_shape())
            .map(|(z, shape)| Shaped::new(z, &shape.shape)),
        Shaped::new(scales, &spec.scales_shape(S::DTYPE).shape),
        g_idx.map(|g| Shaped::new(g.to_vec(), &[g.len()])),
    )
}

/// AWQ 4-bit quantization of `w` (`[K, N]` row-major f32): asymmetric (min/max, range
/// widened to include 0), zeros stored plain, both packed with the AWQ interleave.
pub fn quantize_awq<S: QuantScale>(
    w: &[f32],
    k: usize,
    n: usize,
    group: usize,
) -> Result<QuantHost<S>, QuantError> {
    let (spec, group_of) = prepare(QuantFormat::Awq, w, k, n, group, None)?;
    let (q, z, scales) = asymmetric(w, &spec, &group_of)?;
    let zeros_shape = spec.qzeros_shape().map(|s| s.shape).unwrap_or_default();
    QuantHost::new(
        spec,
        Shaped::new(
            HostQWeight::Packed(pack_awq(&q, k, n)?),
            &spec.qweight_shape().shape,
        ),
        Some(Shaped::new(
            pack_awq_zeros(&z, spec.groups(), n)?,
            &zeros_shape,
        )),
        Shaped::new(scales, &spec.scales_shape(S::DTYPE).shape),
        None,
    )
}

/// int8 quantization of `w` (`[K, N]` row-major f32) per group: absmax,
/// `scale = max|w| / 127`, `q = clamp(round(w / scale), -128, 127)`, zero 0.
pub fn quantize_int8<S: QuantScale>(
    w: &[f32],
    k: usize,
    n: usize,
    group: usize,
) -> Result<QuantHost<S>, QuantError> {
    let (spec, group_of) = prepare(QuantFormat::Int8, w, k, n, group, None)?;
    let scales: Vec<S> = absmax_scales(w, &spec, &group_of, 127.0)?;
    let q = quantize_rows(w, n, &group_of, |x, i| {
        (x / scales[i].to_f32()).round().clamp(-128.0, 127.0) as i8
    });
    QuantHost::new(
        spec,
        Shaped::new(HostQWeight::Int8(q), &spec.qweight_shape().shape),
        None,
        Shaped::new(scales, &spec.scales_shape(S::DTYPE).shape),
        None,
    )
}
