//! A checkpoint's tensors to the device, straight from the mapped files.

use std::sync::Arc;

use cudarc::driver::CudaStream;

use super::error::CheckpointError;
use super::layer::CheckpointLayer;
use super::le::{LeElement, elements};
use super::{Checkpoint, RawTensor};
use crate::element::Element;
use crate::quant::{QWeight, QuantScale, QuantTensor};
use crate::tensor::Tensor;

/// One tensor from its mapped bytes: `cuMemcpyHtoDAsync` (cudarc's `clone_htod`) reads the
/// mapping directly, so the only host copy is the one an unaligned offset forces
/// ([`elements`]).
fn upload<T: Element + LeElement>(
    stream: &Arc<CudaStream>,
    t: &RawTensor<'_>,
) -> Result<Tensor<T>, CheckpointError> {
    Ok(Tensor::from_host(stream, &elements::<T>(t.bytes), t.shape)?)
}

impl CheckpointLayer<'_> {
    /// The layer on the device, each buffer with its checked shape. `S` must be the
    /// file's scale type.
    pub fn upload<S: QuantScale + LeElement>(
        &self,
        stream: &Arc<CudaStream>,
    ) -> Result<QuantTensor<S>, CheckpointError> {
        self.expect_scale::<S>()?;
        let qzeros = self
            .qzeros
            .as_ref()
            .map(|z| upload(stream, z))
            .transpose()?;
        let g_idx = self.g_idx.as_ref().map(|g| upload(stream, g)).transpose()?;
        QuantTensor::try_from_parts(
            self.spec(),
            QWeight::Packed(upload(stream, &self.qweight)?),
            qzeros,
            upload(stream, &self.scales)?,
            g_idx,
        )
        .map_err(|source| CheckpointError::Layer {
            layer: self.prefix().to_string(),
            source,
        })
    }
}

impl Checkpoint {
    /// Any tensor of the checkpoint on the device (a layer's bias, say), with its stored
    /// shape; `T` must be its element type.
    pub fn upload_tensor<T: Element + LeElement>(
        &self,
        stream: &Arc<CudaStream>,
        name: &str,
    ) -> Result<Tensor<T>, CheckpointError> {
        let t = self
            .raw(name)
            .ok_or_else(|| CheckpointError::MissingTensor {
                tensor: name.to_string(),
                why: "no weight file has it",
            })?;
        let stored = format!("{:?}", t.dtype);
        if stored != T::DTYPE.name().to_ascii_uppercase() {
            return Err(CheckpointError::Dtype {
                tensor: name.to_string(),
                expected: T::DTYPE.name(),
                actual: stored,
            });
        }
        upload(stream, &t)
    }
}
