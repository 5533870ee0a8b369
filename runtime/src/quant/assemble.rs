//! A quantized weight assembled from parts made separately, every part's shape checked
//! against the spec.

use crate::contract::DType;
use crate::tensor::Tensor;

use super::device::{QWeight, QuantTensor};
use super::error::QuantError;
use super::scale::QuantScale;
use super::spec::QuantSpec;

impl QuantSpec {
    /// Checks parts of the given element type (qweight) and shapes against this spec: the
    /// element type of `qweight`, each buffer's padded shape (a transposed buffer of the
    /// right size is refused), qzeros exactly when the format has one, g_idx only for GPTQ
    /// and of shape `[K]`. What [`QuantTensor::try_from_parts`] checks, for parts that are
    /// not [`Tensor`]s (PyTorch's, in the Python package).
    pub fn check_parts(
        &self,
        qweight_dtype: DType,
        qweight: &[usize],
        qzeros: Option<&[usize]>,
        scales: &[usize],
        g_idx: Option<&[usize]>,
    ) -> Result<(), QuantError> {
        // A part's element count is its shape's, so the shape is the whole check. (A shape
        // whose count overflows is not the expected one, which `check` compares first.)
        let check = |shape: &super::spec::BufferShape, actual: &[usize]| {
            shape.check(actual, crate::layout::numel(actual).unwrap_or(usize::MAX))
        };
        let format = self.format();
        if qweight_dtype != format.qweight_dtype() {
            return Err(QuantError::WeightType {
                format,
                expected: format.qweight_dtype(),
                actual: qweight_dtype,
            });
        }
        check(&self.qweight_shape(), qweight)?;
        match (self.qzeros_shape(), qzeros) {
            (Some(shape), Some(z)) => check(&shape, z)?,
            (None, None) => {}
            (expected, _) => {
                return Err(QuantError::Zeros {
                    format,
                    expected: expected.is_some(),
                });
            }
        }
        // Only the shape is compared: the scales' element type is the kernel's to check.
        check(&self.scales_shape(DType::F16), scales)?;
        if let Some(g) = g_idx {
            if !format.takes_g_idx() {
                return Err(QuantError::GIdxUnsupported { format });
            }
            check(&self.g_idx_shape(), g)?;
        }
        Ok(())
    }
}

impl<S: QuantScale> QuantTensor<S> {
    /// [`QuantTensor::from_parts`] with the checks it leaves to the launch
    /// ([`QuantSpec::check_parts`]). g_idx's values stay on the device and are not read
    /// here.
    pub fn try_from_parts(
        spec: QuantSpec,
        qweight: QWeight,
        qzeros: Option<Tensor<i32>>,
        scales: Tensor<S>,
        g_idx: Option<Tensor<i32>>,
    ) -> Result<Self, QuantError> {
        let qweight_dtype = match &qweight {
            QWeight::Packed(_) => DType::I32,
            QWeight::Int8(_) => DType::I8,
        };
        spec.check_parts(
            qweight_dtype,
            qweight.shape(),
            qzeros.as_ref().map(Tensor::shape),
            scales.shape(),
            g_idx.as_ref().map(Tensor::shape),
        )?;
        Ok(QuantTensor::from_parts(
            spec, qweight, qzeros, scales, g_idx,
        ))
    }
}
