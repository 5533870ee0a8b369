//! Quantized weights on the device.

use std::sync::Arc;

use cudarc::driver::CudaStream;

use crate::check::TensorMeta;
use crate::error::Error;
use crate::tensor::Tensor;

use super::format::QuantFormat;
use super::g_idx::validate_g_idx;
use super::host::{HostQWeight, QuantHost};
use super::scale::QuantScale;
use super::spec::{BufferShape, QuantSpec};

/// A packed weight on the device: `i32` words (GPTQ, AWQ) or `i8` values (int8).
#[derive(Debug)]
pub enum QWeight {
    Packed(Tensor<i32>),
    Int8(Tensor<i8>),
}

impl QWeight {
    /// What the launch checker sees of it.
    pub fn meta(&self) -> TensorMeta<'_> {
        match self {
            QWeight::Packed(t) => t.meta(),
            QWeight::Int8(t) => t.meta(),
        }
    }

    pub fn shape(&self) -> &[usize] {
        match self {
            QWeight::Packed(t) => t.shape(),
            QWeight::Int8(t) => t.shape(),
        }
    }

    /// The words, for GPTQ and AWQ.
    pub fn as_packed(&self) -> Option<&Tensor<i32>> {
        match self {
            QWeight::Packed(t) => Some(t),
            QWeight::Int8(_) => None,
        }
    }

    /// The values, for int8.
    pub fn as_int8(&self) -> Option<&Tensor<i8>> {
        match self {
            QWeight::Int8(t) => Some(t),
            QWeight::Packed(_) => None,
        }
    }
}

/// A quantized `K x N` weight on the device: the packed weight, zeros (if the format has
/// them), scales and act-order g_idx (if any), each a contiguous [`Tensor`] of its padded
/// shape (see [`crate::quant`]).
#[derive(Debug)]
pub struct QuantTensor<S> {
    spec: QuantSpec,
    qweight: QWeight,
    qzeros: Option<Tensor<i32>>,
    scales: Tensor<S>,
    g_idx: Option<Tensor<i32>>,
}

impl<S: QuantScale> QuantTensor<S> {
    /// Copies every buffer of `host` to the device, each with its padded shape.
    pub fn upload(stream: &Arc<CudaStream>, host: &QuantHost<S>) -> Result<Self, Error> {
        let spec = host.spec();
        let qweight_shape = spec.qweight_shape().shape;
        let qweight = match host.qweight() {
            HostQWeight::Packed(words) => {
                QWeight::Packed(Tensor::from_host(stream, words, &qweight_shape)?)
            }
            HostQWeight::Int8(values) => {
                QWeight::Int8(Tensor::from_host(stream, values, &qweight_shape)?)
            }
        };
        let qzeros = match (host.qzeros(), spec.qzeros_shape()) {
            (Some(z), Some(shape)) => Some(Tensor::from_host(stream, z, &shape.shape)?),
            _ => None,
        };
        let scales = Tensor::from_host(stream, host.scales(), &spec.scales_shape(S::DTYPE).shape)?;
        let g_idx = match host.g_idx() {
            Some(g) => Some(Tensor::from_host(stream, g, &spec.g_idx_shape().shape)?),
            None => None,
        };
        Ok(QuantTensor {
            spec,
            qweight,
            qzeros,
            scales,
            g_idx,
        })
    }

    /// Assembles a quantized weight from tensors made separately, e.g. loaded from a
    /// checkpoint. Nothing is validated here: not the shapes, not the element type of
    /// `qweight`, not whether qzeros or g_idx belong to the format, not g_idx's values.
    /// The launch checker checks every buffer against the kernel's contract before a
    /// launch ([`QuantTensor::expected_shapes`] lists what it will expect), and every
    /// kernel checks each g_idx entry it reads against `0 .. ceil(K / G)`, in release
    /// mode too: a bad group is reported as [`Error::IndexValue`] and never read.
    /// [`QuantTensor::validate`] checks g_idx on the host up front.
    pub fn from_parts(
        spec: QuantSpec,
        qweight: QWeight,
        qzeros: Option<Tensor<i32>>,
        scales: Tensor<S>,
        g_idx: Option<Tensor<i32>>,
    ) -> Self {
        QuantTensor {
            spec,
            qweight,
            qzeros,
            scales,
            g_idx,
        }
    }

    /// Checks g_idx's values on the host (a copy of it): one group per row, each in
    /// `0 .. ceil(K / G)`. The error names the first bad row, its value and the range.
    pub fn validate(&self, stream: &Arc<CudaStream>) -> Result<(), Error> {
        match &self.g_idx {
            Some(g) => Ok(validate_g_idx(
                &g.to_host(stream)?,
                self.spec.k(),
                self.spec.group(),
            )?),
            None => Ok(()),
        }
    }

    pub fn spec(&self) -> QuantSpec {
        self.spec
    }

    pub fn format(&self) -> QuantFormat {
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

    pub fn qweight(&self) -> &QWeight {
        &self.qweight
    }

    pub fn qzeros(&self) -> Option<&Tensor<i32>> {
        self.qzeros.as_ref()
    }

    pub fn scales(&self) -> &Tensor<S> {
        &self.scales
    }

    pub fn g_idx(&self) -> Option<&Tensor<i32>> {
        self.g_idx.as_ref()
    }

    /// The padded shape each buffer must have for this spec (with g_idx if one is held).
    pub fn expected_shapes(&self) -> Vec<BufferShape> {
        self.spec.shapes(S::DTYPE, self.g_idx.is_some())
    }

    /// The tensors, in the order of [`QuantTensor::from_parts`]' arguments.
    #[allow(clippy::type_complexity)]
    pub fn into_parts(
        self,
    ) -> (
        QuantSpec,
        QWeight,
        Option<Tensor<i32>>,
        Tensor<S>,
        Option<Tensor<i32>>,
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
