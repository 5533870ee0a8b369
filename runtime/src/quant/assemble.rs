//! A quantized weight assembled from device tensors, every buffer's shape checked.

use crate::tensor::Tensor;

use super::device::{QWeight, QuantTensor};
use super::error::QuantError;
use super::scale::QuantScale;
use super::spec::{BufferShape, QuantSpec};

fn check(shape: &BufferShape, actual: &[usize]) -> Result<(), QuantError> {
    // A tensor's element count is its shape's, so the shape is the whole check.
    shape.check(actual, actual.iter().product())
}

impl<S: QuantScale> QuantTensor<S> {
    /// [`QuantTensor::from_parts`] with the checks it leaves to the launch: the element
    /// type of `qweight`, each buffer's padded 2-D shape (a transposed buffer of the
    /// right size is refused), qzeros exactly when the format has one, g_idx only for
    /// GPTQ and of shape `[K]`. g_idx's values stay on the device and are not read here.
    pub fn try_from_parts(
        spec: QuantSpec,
        qweight: QWeight,
        qzeros: Option<Tensor<i32>>,
        scales: Tensor<S>,
        g_idx: Option<Tensor<i32>>,
    ) -> Result<Self, QuantError> {
        let format = spec.format();
        let actual = match &qweight {
            QWeight::Packed(_) => crate::contract::DType::I32,
            QWeight::Int8(_) => crate::contract::DType::I8,
        };
        if actual != format.qweight_dtype() {
            return Err(QuantError::WeightType {
                format,
                expected: format.qweight_dtype(),
                actual,
            });
        }
        check(&spec.qweight_shape(), qweight.shape())?;
        match (spec.qzeros_shape(), &qzeros) {
            (Some(shape), Some(z)) => check(&shape, z.shape())?,
            (None, None) => {}
            (expected, _) => {
                return Err(QuantError::Zeros {
                    format,
                    expected: expected.is_some(),
                });
            }
        }
        check(&spec.scales_shape(S::DTYPE), scales.shape())?;
        if let Some(g) = &g_idx {
            if !format.takes_g_idx() {
                return Err(QuantError::GIdxUnsupported { format });
            }
            check(&spec.g_idx_shape(), g.shape())?;
        }
        Ok(QuantTensor::from_parts(
            spec, qweight, qzeros, scales, g_idx,
        ))
    }
}
