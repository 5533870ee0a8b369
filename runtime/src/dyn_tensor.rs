//! Untyped device tensors: the dtype is a run-time value, for shapes and dtypes read from
//! files (safetensors, GGUF, a fuzzer's case).
//!
//! A [`DynTensor`] holds bytes on the device and the [`DType`] they are; the checker
//! compares that dtype with the kernel's at every launch ([`crate::Violation::DType`]),
//! where a [`crate::Tensor`]'s is fixed by its type.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, CudaViewMut};

use crate::address::device_address;
use crate::borrowed::read_range;
use crate::check::TensorMeta;
use crate::contract::DType;
use crate::device::DeviceId;
use crate::error::Error;
use crate::view::{View, checked_numel};

/// A strided view of a device buffer of `dtype` elements.
#[derive(Debug)]
pub struct DynTensor {
    dtype: DType,
    /// Whole elements of `dtype`, as bytes.
    buf: CudaSlice<u8>,
    /// Device address of `buf`, read once (see [`crate::Tensor`]; [`DynTensor::slice_mut`]
    /// lends a view, so the buffer cannot be replaced under it).
    base_ptr: u64,
    /// In elements of `dtype`.
    view: View,
}

impl DynTensor {
    /// Copies `bytes` (`shape`'s elements of `dtype`, row-major, in the device's
    /// little-endian layout) to the device.
    pub fn from_bytes(
        stream: &Arc<CudaStream>,
        dtype: DType,
        bytes: &[u8],
        shape: &[usize],
    ) -> Result<Self, Error> {
        let n = checked_numel(shape, dtype.size())?;
        let expected = n.checked_mul(dtype.size()).ok_or_else(|| Error::Layout {
            reason: format!("the size in bytes of {dtype} elements overflows"),
            shape: shape.to_vec(),
            strides: vec![],
            offset: 0,
            buffer_len: 0,
        })?;
        if bytes.len() != expected {
            return Err(Error::HostBytes {
                dtype,
                shape: shape.to_vec(),
                expected,
                actual: bytes.len(),
            });
        }
        let what = || format!("copying {n} {dtype} elements to the device");
        // cudarc cannot allocate 0 bytes; an empty tensor keeps a 1-element buffer.
        let buf = if bytes.is_empty() {
            stream.alloc_zeros::<u8>(dtype.size())
        } else {
            stream.clone_htod(bytes)
        }
        .map_err(Error::driver(what()))?;
        Self::from_slice(dtype, buf, shape)
    }

    /// A contiguous tensor of zero bytes.
    pub fn zeros(stream: &Arc<CudaStream>, dtype: DType, shape: &[usize]) -> Result<Self, Error> {
        let n = checked_numel(shape, dtype.size())?;
        let bytes = n.max(1) * dtype.size();
        let buf = stream
            .alloc_zeros::<u8>(bytes)
            .map_err(Error::driver(format!("allocating {n} {dtype} elements")))?;
        Self::from_slice(dtype, buf, shape)
    }

    /// Wraps a buffer of bytes as a contiguous row-major tensor of `dtype` over its first
    /// elements (trailing bytes short of a whole element are never reached).
    pub fn from_slice(dtype: DType, buf: CudaSlice<u8>, shape: &[usize]) -> Result<Self, Error> {
        let view = View::contiguous(shape, buf.len() / dtype.size())?;
        let base_ptr = device_address(&buf, buf.stream());
        Ok(DynTensor {
            dtype,
            buf,
            base_ptr,
            view,
        })
    }

    /// The same buffer seen through another view (in elements of the dtype); refuses one
    /// that reaches outside the buffer.
    pub fn with_layout(
        self,
        shape: &[usize],
        strides: &[isize],
        offset: usize,
    ) -> Result<Self, Error> {
        let view = View::new(shape, strides, offset, self.buffer_len())?;
        Ok(DynTensor { view, ..self })
    }

    /// Reorders the dimensions: dimension `i` of the result is dimension `perm[i]` of `self`.
    pub fn permute(self, perm: &[usize]) -> Result<Self, Error> {
        let view = self.view.permute(perm, self.buffer_len())?;
        Ok(DynTensor { view, ..self })
    }

    /// Copies the view to the host as bytes, in logical row-major order, reading only the
    /// part of the buffer it reaches.
    pub fn to_bytes(&self, stream: &Arc<CudaStream>) -> Result<Vec<u8>, Error> {
        let size = self.dtype.size();
        self.view.gather_span(size, |r| {
            read_range(stream, &self.buf.as_view(), r.start * size..r.end * size)
        })
    }

    pub fn dtype(&self) -> DType {
        self.dtype
    }

    pub fn shape(&self) -> &[usize] {
        &self.view.shape
    }

    /// In elements.
    pub fn strides(&self) -> &[isize] {
        &self.view.strides
    }

    /// Elements from the buffer's start to the view's first element.
    pub fn offset(&self) -> usize {
        self.view.offset
    }

    /// Elements in the view (the buffer may hold more).
    pub fn numel(&self) -> usize {
        self.view.numel()
    }

    /// Whole elements in the buffer.
    fn buffer_len(&self) -> usize {
        self.buf.len() / self.dtype.size()
    }

    /// The underlying bytes.
    pub fn slice(&self) -> &CudaSlice<u8> {
        &self.buf
    }

    /// The underlying bytes, for writing through cudarc: a view of all of them, which
    /// cannot replace the buffer under the tensor's cached address.
    pub fn slice_mut(&mut self) -> CudaViewMut<'_, u8> {
        self.buf.as_view_mut()
    }

    pub(crate) fn buffer_mut(&mut self) -> &mut CudaSlice<u8> {
        &mut self.buf
    }

    /// What the checker sees of this tensor.
    pub fn meta(&self) -> TensorMeta<'_> {
        self.view.meta(
            self.dtype,
            self.buffer_len(),
            self.base_ptr,
            DeviceId::of(self.buf.context()),
        )
    }
}
