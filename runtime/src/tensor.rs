//! Device tensors: a cudarc buffer plus the view (shape, strides, offset) a kernel sees.
//!
//! A [`Tensor`] always owns device memory, so a host pointer cannot reach a kernel. Its
//! view is checked when it is made ([`Tensor::with_layout`]) and checked again at every
//! launch ([`crate::check()`]), because the checker trusts no metadata it did not compute.

use std::sync::Arc;

use std::ops::Range;

use cudarc::driver::{CudaSlice, CudaStream, CudaViewMut};

use crate::address::device_address;
use crate::borrowed::{TensorView, TensorViewMut, read_range};
use crate::check::TensorMeta;
use crate::device::DeviceId;
use crate::error::Error;
use crate::view::{View, checked_buffer_len, checked_numel};

pub use crate::element::Element;

/// A strided view of a device buffer of `T`.
#[derive(Debug)]
pub struct Tensor<T> {
    buf: CudaSlice<T>,
    /// Device address of `buf`, read once: reading it again would need a stream and record a
    /// stream-ordering event. It stays true because nothing outside this crate can replace
    /// `buf` (the crate takes `buffer_mut` only for `device_ptr_mut`): [`Tensor::slice_mut`]
    /// lends a `CudaViewMut` of it, never the `&mut CudaSlice` that `std::mem::swap` could
    /// exchange under the address that the alignment, overlap and memo checks read.
    base_ptr: u64,
    view: View,
}

impl<T: Element> Tensor<T> {
    /// Copies `data` (row-major, `shape`'s element count) to the device.
    pub fn from_host(stream: &Arc<CudaStream>, data: &[T], shape: &[usize]) -> Result<Self, Error> {
        let n = checked_numel(shape, size_of::<T>())?;
        if n != data.len() {
            return Err(Error::HostLen {
                shape: shape.to_vec(),
                expected: n,
                actual: data.len(),
            });
        }
        let what = || format!("copying {n} {} elements to the device", T::DTYPE);
        // cudarc cannot allocate 0 bytes; an empty tensor keeps a 1-element buffer.
        let buf = if data.is_empty() {
            stream.alloc_zeros::<T>(1)
        } else {
            stream.clone_htod(data)
        }
        .map_err(Error::driver(what()))?;
        Self::from_slice(buf, shape)
    }

    /// A contiguous tensor with every element `value`.
    pub fn full(stream: &Arc<CudaStream>, value: T, shape: &[usize]) -> Result<Self, Error> {
        let n = checked_numel(shape, size_of::<T>())?;
        let mut host = Vec::new();
        host.try_reserve_exact(n).map_err(|_| Error::Layout {
            reason: format!("the {n} elements' host copy does not fit in memory"),
            shape: shape.to_vec(),
            strides: vec![],
            offset: 0,
            buffer_len: 0,
        })?;
        host.resize(n, value);
        Self::from_host(stream, &host, shape)
    }

    /// A contiguous tensor of zeros.
    pub fn zeros(stream: &Arc<CudaStream>, shape: &[usize]) -> Result<Self, Error> {
        let n = checked_numel(shape, size_of::<T>())?;
        let buf = stream
            .alloc_zeros::<T>(n.max(1))
            .map_err(Error::driver(format!(
                "allocating {n} {} elements",
                T::DTYPE
            )))?;
        Self::from_slice(buf, shape)
    }

    /// Wraps an existing buffer as a contiguous row-major tensor over its first elements.
    pub fn from_slice(buf: CudaSlice<T>, shape: &[usize]) -> Result<Self, Error> {
        let view = View::contiguous(shape, checked_buffer_len(buf.len(), size_of::<T>())?)?;
        let base_ptr = device_address(&buf, buf.stream());
        Ok(Tensor {
            buf,
            base_ptr,
            view,
        })
    }

    /// The same buffer seen through another view. Refuses a view that reaches outside the
    /// buffer (negative strides are fine while nothing falls before its start).
    pub fn with_layout(
        self,
        shape: &[usize],
        strides: &[isize],
        offset: usize,
    ) -> Result<Self, Error> {
        let view = View::new(shape, strides, offset, self.buf.len())?;
        Ok(Tensor { view, ..self })
    }

    /// Reorders the dimensions: dimension `i` of the result is dimension `perm[i]` of `self`.
    pub fn permute(self, perm: &[usize]) -> Result<Self, Error> {
        let view = self.view.permute(perm, self.buf.len())?;
        Ok(Tensor { view, ..self })
    }

    /// Copies the view to the host, in logical row-major order, reading only the part of
    /// the buffer it reaches.
    pub fn to_host(&self, stream: &Arc<CudaStream>) -> Result<Vec<T>, Error> {
        self.view
            .gather_span(1, |r| read_range(stream, &self.buf.as_view(), r))
    }

    /// Copies elements `range` of the buffer (not of the view) to the host.
    pub fn read_range(
        &self,
        stream: &Arc<CudaStream>,
        range: Range<usize>,
    ) -> Result<Vec<T>, Error> {
        read_range(stream, &self.buf.as_view(), range)
    }

    /// A borrowed view of this tensor's buffer, through the same view; refine it with
    /// [`TensorView::with_layout`] (several views into one buffer).
    pub fn view(&self) -> TensorView<'_, T> {
        TensorView::from_parts(self.buf.as_view(), self.base_ptr, self.view.clone())
    }

    /// A borrowed view of this tensor's buffer for writing, through the same view.
    pub fn view_mut(&mut self) -> TensorViewMut<'_, T> {
        TensorViewMut::from_parts(self.buf.as_view_mut(), self.base_ptr, self.view.clone())
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

    /// The underlying buffer.
    pub fn slice(&self) -> &CudaSlice<T> {
        &self.buf
    }

    /// The underlying buffer, for writing through cudarc: a view of all of it, which
    /// cannot replace the buffer under the tensor's cached address.
    pub fn slice_mut(&mut self) -> CudaViewMut<'_, T> {
        self.buf.as_view_mut()
    }

    pub(crate) fn buffer_mut(&mut self) -> &mut CudaSlice<T> {
        &mut self.buf
    }

    /// The underlying buffer, giving up the view.
    pub fn into_slice(self) -> CudaSlice<T> {
        self.buf
    }

    /// What the checker sees of this tensor.
    pub fn meta(&self) -> TensorMeta<'_> {
        self.view.meta(
            T::DTYPE,
            self.buf.len(),
            self.base_ptr,
            DeviceId::of(self.buf.context()),
        )
    }
}
