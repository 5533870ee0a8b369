//! Quantized weights on the host, with buffers of the right size by construction.

use crate::contract::DType;

use super::error::QuantError;
use super::g_idx::validate_g_idx;
use super::scale::QuantScale;
use super::shaped::Shaped;
use super::spec::{BufferShape, QuantSpec};

/// A packed weight on the host: `i32` words (GPTQ, AWQ) or `i8` values (int8).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostQWeight {
    Packed(Vec<i32>),
    Int8(Vec<i8>),
}

impl HostQWeight {
    pub fn dtype(&self) -> DType {
        match self {
            HostQWeight::Packed(_) => DType::I32,
            HostQWeight::Int8(_) => DType::I8,
        }
    }

    pub fn len(&self) -> usize {
        match self {
            HostQWeight::Packed(v) => v.len(),
            HostQWeight::Int8(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The words, for GPTQ and AWQ.
    pub fn as_packed(&self) -> Option<&[i32]> {
        match self {
            HostQWeight::Packed(v) => Some(v),
            HostQWeight::Int8(_) => None,
        }
    }

    /// The values, for int8.
    pub fn as_int8(&self) -> Option<&[i8]> {
        match self {
            HostQWeight::Int8(v) => Some(v),
            HostQWeight::Packed(_) => None,
        }
    }
}

/// A quantized `K x N` weight on the host: every buffer has exactly its padded size
/// ([`QuantSpec::shapes`]), qzeros is present exactly when the format has one, and g_idx
/// (GPTQ only) has one valid group per row. Made by [`QuantHost::new`] from a checkpoint's
/// buffers, or by the `quantize_*` functions from a dense weight.
#[derive(Debug, Clone, PartialEq)]
pub struct QuantHost<S> {
    spec: QuantSpec,
    qweight: HostQWeight,
    qzeros: Option<Vec<i32>>,
    scales: Vec<S>,
    g_idx: Option<Vec<i32>>,
}

impl<S: QuantScale> QuantHost<S> {
    /// Checks every buffer against `spec` (element type, padded 2-D shape, element count,
    /// qzeros presence, g_idx shape and range) and refuses any mismatch.
    pub fn new(
        spec: QuantSpec,
        qweight: Shaped<HostQWeight>,
        qzeros: Option<Shaped<Vec<i32>>>,
        scales: Shaped<Vec<S>>,
        g_idx: Option<Shaped<Vec<i32>>>,
    ) -> Result<Self, QuantError> {
        let format = spec.format();
        if qweight.data.dtype() != format.qweight_dtype() {
            return Err(QuantError::WeightType {
                format,
                expected: format.qweight_dtype(),
                actual: qweight.data.dtype(),
            });
        }
        spec.qweight_shape()
            .check(&qweight.shape, qweight.data.len())?;
        match (spec.qzeros_shape(), &qzeros) {
            (Some(shape), Some(z)) => shape.check(&z.shape, z.data.len())?,
            (None, None) => {}
            (expected, _) => {
                return Err(QuantError::Zeros {
                    format,
                    expected: expected.is_some(),
                });
            }
        }
        spec.scales_shape(S::DTYPE)
            .check(&scales.shape, scales.data.len())?;
        if let Some(g_idx) = &g_idx {
            if !format.takes_g_idx() {
                return Err(QuantError::GIdxUnsupported { format });
            }
            // One entry per row: its length against K is validate_g_idx's GIdxLen; here its
            // shape must be of one dimension, and its data as long as that says.
            let shape = spec.g_idx_shape();
            match g_idx.shape[..] {
                [len] if len == g_idx.data.len() => {}
                [len] => {
                    return Err(QuantError::BufferLen {
                        buffer: shape.name,
                        formula: "[len]",
                        shape: g_idx.shape.clone(),
                        expected: len,
                        actual: g_idx.data.len(),
                    });
                }
                _ => {
                    return Err(QuantError::BufferShape {
                        buffer: shape.name,
                        formula: shape.formula,
                        expected: shape.shape,
                        actual: g_idx.shape.clone(),
                    });
                }
            }
            validate_g_idx(&g_idx.data, spec.k(), spec.group())?;
        }
        Ok(QuantHost {
            spec,
            qweight: qweight.data,
            qzeros: qzeros.map(|z| z.data),
            scales: scales.data,
            g_idx: g_idx.map(|g| g.data),
        })
    }

    pub fn spec(&self) -> QuantSpec {
        self.spec
    }

    pub fn format(&self) -> super::QuantFormat {
        self.spec.format()
    }

    pub fn k(&self) -> usize {
        self.spec.k()
    }

    pub fn n(&self) -> usize {
        self.spec.n()
    }

    pub fn group(&self) -> usize {
        self.spec.group()
    }

    /// `ceil(K/G)`.
    pub fn groups(&self) -> usize {
        self.spec.groups()
    }

    pub fn qweight(&self) -> &HostQWeight {
        &self.qweight
    }

    pub fn qzeros(&self) -> Option<&[i32]> {
        self.qzeros.as_deref()
    }

    /// `[ceil(K/G), N]`, row-major.
    pub fn scales(&self) -> &[S] {
        &self.scales
    }

    pub fn g_idx(&self) -> Option<&[i32]> {
        self.g_idx.as_deref()
    }

    /// The group of row `row`: `g_idx[row]` with act-order, else `row / G`. `None` past K.
    pub fn group_of(&self, row: usize) -> Option<usize> {
        if row >= self.k() {
            return None;
        }
        Some(match &self.g_idx {
            // Validated: every entry is in 0..groups.
            Some(g_idx) => g_idx[row] as usize,
            None => self.spec.default_group_of(row),
        })
    }

    /// Each buffer this weight holds, with its padded shape and formula, in the order
    /// qweight, qzeros, scales, g_idx.
    pub fn shapes(&self) -> Vec<BufferShape> {
        self.spec.shapes(S::DTYPE, self.g_idx.is_some())
    }

    /// The buffers (without their shapes, which are [`QuantHost::shapes`]), in the order of
    /// [`QuantHost::new`]'s arguments.
    #[allow(clippy::type_complexity)]
    pub fn into_parts(
        self,
    ) -> (
        QuantSpec,
        HostQWeight,
        Option<Vec<i32>>,
        Vec<S>,
        Option<Vec<i32>>,
    ) {
        (
            self.spec,
            self.qweight,
            self.qzeros,
            self.scales,
            self.g_idx,
        )
    }
}
