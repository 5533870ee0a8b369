//! A quantized weight's dimensions as its parts' shapes and a config give them, where
//! nothing else states them: a checkpoint, a PyTorch model's buffers.

use super::error::QuantError;
use super::format::QuantFormat;
use super::spec::{PACK, QuantSpec};

impl QuantFormat {
    /// `K` and `N` of a weight whose `qweight` and `scales` have these shapes, and whose
    /// act-order `g_idx` (if one is given) has `g_idx_len` entries: K is g_idx's length
    /// where there is one (GPTQ writers store it even without act-order), else every row
    /// of the packed words (`8 * rows` for GPTQ, whose last word cannot tell its padding);
    /// N is qweight's columns (GPTQ, int8) or the scales' (AWQ packs qweight along N).
    /// A part of another rank is refused with its formula.
    pub fn logical_dims(
        self,
        qweight: &[usize],
        scales: &[usize],
        g_idx_len: Option<usize>,
    ) -> Result<(usize, usize), QuantError> {
        let spec_qweight = match self {
            QuantFormat::Gptq(_) => "[ceil(K/8), N]",
            QuantFormat::Awq => "[K, ceil(N/8)]",
            QuantFormat::Int8 => "[K, N]",
        };
        let rank2 = |buffer: &'static str, formula: &'static str, shape: &[usize]| match shape {
            &[rows, cols] => Ok((rows, cols)),
            _ => Err(QuantError::Rank {
                buffer,
                formula,
                actual: shape.to_vec(),
            }),
        };
        let (rows, cols) = rank2("qweight", spec_qweight, qweight)?;
        let (_, scale_cols) = rank2("scales", "[ceil(K/G), N]", scales)?;
        Ok(match self {
            QuantFormat::Gptq(_) => {
                let k = match g_idx_len {
                    Some(k) => k,
                    None => rows.checked_mul(PACK).ok_or(QuantError::Overflow {
                        what: "8 * qweight's rows",
                        rows,
                        cols: PACK,
                    })?,
                };
                (k, cols)
            }
            QuantFormat::Awq => (rows, scale_cols),
            QuantFormat::Int8 => (rows, cols),
        })
    }
}

impl QuantSpec {
    /// The spec of a weight of `k` rows and `n` columns whose config gives `group_size`:
    /// `None` (`-1` in the file) is one group over all of K, and so is a size past K, as
    /// the writers' `row // group_size` gives.
    pub fn with_config_group(
        format: QuantFormat,
        k: usize,
        n: usize,
        group_size: Option<usize>,
    ) -> Result<Self, QuantError> {
        QuantSpec::new(format, k, n, group_size.map_or(k, |g| g.min(k)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quant::ZeroStyle;

    #[test]
    fn dims_follow_each_format_s_packing() {
        let gptq = QuantFormat::Gptq(ZeroStyle::MinusOne);
        assert_eq!(gptq.logical_dims(&[16, 96], &[4, 96], None), Ok((128, 96)));
        assert_eq!(
            gptq.logical_dims(&[16, 96], &[4, 96], Some(125)),
            Ok((125, 96))
        );
        assert_eq!(
            QuantFormat::Awq.logical_dims(&[128, 12], &[4, 96], None),
            Ok((128, 96))
        );
        assert_eq!(
            QuantFormat::Int8.logical_dims(&[128, 96], &[4, 96], None),
            Ok((128, 96))
        );
        let e = gptq.logical_dims(&[16 * 96], &[4, 96], None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "qweight has shape [1536], but its shape [ceil(K/8), N] has 2 dimensions"
        );
    }

    #[test]
    fn a_config_s_group_past_k_or_minus_one_is_one_group() {
        let f = QuantFormat::Awq;
        assert_eq!(
            QuantSpec::with_config_group(f, 100, 8, None)
                .unwrap()
                .group(),
            100
        );
        assert_eq!(
            QuantSpec::with_config_group(f, 100, 8, Some(128))
                .unwrap()
                .group(),
            100
        );
        assert_eq!(
            QuantSpec::with_config_group(f, 100, 8, Some(32))
                .unwrap()
                .group(),
            32
        );
        assert!(QuantSpec::with_config_group(f, 100, 8, Some(0)).is_err());
    }
}
