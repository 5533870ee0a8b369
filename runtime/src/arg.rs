//! The tensor arguments of a launch, borrowed as the kernel uses them.
//!
//! Only the runtime's device tensors implement [`DeviceTensor`]: owned ones ([`Tensor`],
//! [`DynTensor`]) and views of memory imac does not own ([`TensorView`], [`TensorViewMut`],
//! [`RawTensor`]). The trait is sealed: a host buffer (`Vec<T>`, `&[T]`) cannot be passed
//! where a kernel expects device memory, and trying is a compile error
//! (`tests/ui/host_buffer.rs`).
//!
//! Launch stubs take any tensor of the right element type through one pair of traits,
//! [`ReadTensor`] for inputs and [`WriteTensor`] for outputs, so owned and borrowed tensors
//! pass through the same stub and the same checks.

use std::sync::Arc;

use cudarc::driver::{CudaStream, DevicePtr, DevicePtrMut, SyncOnDrop, sys::CUdeviceptr};

use crate::borrowed::{RawTensor, TensorView, TensorViewMut};
use crate::check::TensorMeta;
use crate::contract::DType;
use crate::device::DeviceId;
use crate::dyn_tensor::DynTensor;
use crate::element::Element;
use crate::error::Error;
use crate::tensor::Tensor;

mod sealed {
    /// Implemented by the runtime's device tensors only.
    pub trait Sealed {}
}

/// A device tensor whatever its element type: what a launch needs of it to read it.
pub trait DeviceTensor: sealed::Sealed {
    fn meta(&self) -> TensorMeta<'_>;
    /// The buffer's device address for reading on `stream`; keep the guard until the
    /// launch is enqueued. `stream` first waits for the buffer's pending writes.
    fn read_ptr<'a>(&'a self, stream: &'a CudaStream) -> (CUdeviceptr, SyncOnDrop<'a>);
    /// The view's elements as bytes, in row-major order of its shape (for host-side
    /// validation of value contracts). Copies only the part of the buffer the view reaches.
    fn to_host_bytes(&self, stream: &Arc<CudaStream>) -> Result<Vec<u8>, Error>;
}

/// A device tensor a kernel may write: owned ones, and views borrowed mutably (or made
/// from a raw pointer). A view borrowed shared ([`TensorView`]) is not one, so passing it
/// as an output is a compile error.
pub trait DeviceTensorMut: DeviceTensor {
    /// The buffer's device address for writing on `stream`; keep the guard until the
    /// launch is enqueued. `stream` first waits for the buffer's pending reads and writes.
    fn write_ptr<'a>(&'a mut self, stream: &'a CudaStream) -> (CUdeviceptr, SyncOnDrop<'a>);
}

/// A device tensor of `T` elements a kernel may read, owned or borrowed: what a launch
/// stub's input parameter takes (`x: &impl ReadTensor<f32>`).
pub trait ReadTensor<T: Element>: DeviceTensor {}

/// A device tensor of `T` elements a kernel may write, owned or borrowed mutably: what a
/// launch stub's output parameter takes (`y: &mut impl WriteTensor<f32>`).
pub trait WriteTensor<T: Element>: ReadTensor<T> + DeviceTensorMut {}

/// A typed view's elements as bytes.
pub(crate) fn element_bytes<T: Element>(values: &[T]) -> Vec<u8> {
    // SAFETY: every `Element` is a plain number (no padding, no invalid bit patterns to
    // read as bytes), and the slice covers exactly the initialised values.
    let bytes =
        unsafe { std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), size_of_val(values)) };
    bytes.to_vec()
}

/// Bytes of `T` elements (as [`element_bytes`] or [`DeviceTensor::to_host_bytes`] made
/// them) as the elements; `None` when the length is no whole number of them.
pub(crate) fn elements_from_bytes<T: Element>(bytes: &[u8]) -> Option<Vec<T>> {
    let size = size_of::<T>();
    if !bytes.len().is_multiple_of(size) {
        return None;
    }
    let mut values = vec![T::default(); bytes.len() / size];
    // SAFETY: every `Element` is a plain number for which any bit pattern is a value
    // (`ValidAsZeroBits`, no padding), and the copy fills exactly the vector's elements.
    unsafe {
        std::ptr::copy_nonoverlapping(
            bytes.as_ptr(),
            values.as_mut_ptr().cast::<u8>(),
            bytes.len(),
        );
    }
    Some(values)
}

impl<T: Element> sealed::Sealed for Tensor<T> {}

impl<T: Element> DeviceTensor for Tensor<T> {
    fn meta(&self) -> TensorMeta<'_> {
        Tensor::meta(self)
    }

    fn read_ptr<'a>(&'a self, stream: &'a CudaStream) -> (CUdeviceptr, SyncOnDrop<'a>) {
        self.slice().device_ptr(stream)
    }

    fn to_host_bytes(&self, stream: &Arc<CudaStream>) -> Result<Vec<u8>, Error> {
        Ok(element_bytes(&self.to_host(stream)?))
    }
}

impl<T: Element> DeviceTensorMut for Tensor<T> {
    fn write_ptr<'a>(&'a mut self, stream: &'a CudaStream) -> (CUdeviceptr, SyncOnDrop<'a>) {
        self.buffer_mut().device_ptr_mut(stream)
    }
}

impl<T: Element> ReadTensor<T> for Tensor<T> {}
impl<T: Element> WriteTensor<T> for Tensor<T> {}

impl sealed::Sealed for DynTensor {}

impl DeviceTensor for DynTensor {
    fn meta(&self) -> TensorMeta<'_> {
        DynTensor::meta(self)
    }

    fn read_ptr<'a>(&'a self, stream: &'a CudaStream) -> (CUdeviceptr, SyncOnDrop<'a>) {
        self.slice().device_ptr(stream)
    }

    fn to_host_bytes(&self, stream: &Arc<CudaStream>) -> Result<Vec<u8>, Error> {
        self.to_bytes(stream)
    }
}

impl DeviceTensorMut for DynTensor {
    fn write_ptr<'a>(&'a mut self, stream: &'a CudaStream) -> (CUdeviceptr, SyncOnDrop<'a>) {
        self.buffer_mut().device_ptr_mut(stream)
    }
}

impl<T: Element> sealed::Sealed for TensorView<'_, T> {}

impl<T: Element> DeviceTensor for TensorView<'_, T> {
    fn meta(&self) -> TensorMeta<'_> {
        TensorView::meta(self)
    }

    fn read_ptr<'a>(&'a self, stream: &'a CudaStream) -> (CUdeviceptr, SyncOnDrop<'a>) {
        TensorView::read_ptr(self, stream)
    }

    fn to_host_bytes(&self, stream: &Arc<CudaStream>) -> Result<Vec<u8>, Error> {
        Ok(element_bytes(&self.to_host(stream)?))
    }
}

impl<T: Element> ReadTensor<T> for TensorView<'_, T> {}

impl<T: Element> sealed::Sealed for TensorViewMut<'_, T> {}

impl<T: Element> DeviceTensor for TensorViewMut<'_, T> {
    fn meta(&self) -> TensorMeta<'_> {
        TensorViewMut::meta(self)
    }

    fn read_ptr<'a>(&'a self, stream: &'a CudaStream) -> (CUdeviceptr, SyncOnDrop<'a>) {
        TensorViewMut::read_ptr(self, stream)
    }

    fn to_host_bytes(&self, stream: &Arc<CudaStream>) -> Result<Vec<u8>, Error> {
        Ok(element_bytes(&self.to_host(stream)?))
    }
}

impl<T: Element> DeviceTensorMut for TensorViewMut<'_, T> {
    fn write_ptr<'a>(&'a mut self, stream: &'a CudaStream) -> (CUdeviceptr, SyncOnDrop<'a>) {
        TensorViewMut::write_ptr(self, stream)
    }
}

impl<T: Element> ReadTensor<T> for TensorViewMut<'_, T> {}
impl<T: Element> WriteTensor<T> for TensorViewMut<'_, T> {}

impl sealed::Sealed for RawTensor<'_> {}

impl DeviceTensor for RawTensor<'_> {
    fn meta(&self) -> TensorMeta<'_> {
        RawTensor::meta(self)
    }

    fn read_ptr<'a>(&'a self, _stream: &'a CudaStream) -> (CUdeviceptr, SyncOnDrop<'a>) {
        // No events: ordering is the caller's duty (see `RawTensor::from_raw`).
        (self.base_ptr(), SyncOnDrop::Record(None))
    }

    fn to_host_bytes(&self, stream: &Arc<CudaStream>) -> Result<Vec<u8>, Error> {
        self.to_bytes(stream)
    }
}

impl DeviceTensorMut for RawTensor<'_> {
    fn write_ptr<'a>(&'a mut self, _stream: &'a CudaStream) -> (CUdeviceptr, SyncOnDrop<'a>) {
        (self.base_ptr(), SyncOnDrop::Record(None))
    }
}

impl<T: Element> ReadTensor<T> for RawTensor<'_> {}
impl<T: Element> WriteTensor<T> for RawTensor<'_> {}

/// One tensor argument of a launch, borrowed as the kernel uses it: shared for an input,
/// exclusive for an output. The borrow lasts until [`crate::Kernel::launch`] returns, so
/// no argument can be dropped or handed to another launch while this one is being
/// enqueued; what keeps it alive afterwards is cudarc's stream ordering (see
/// [`crate::kernel`]).
pub enum KernelArg<'a> {
    Read(&'a dyn DeviceTensor),
    Write(&'a mut dyn DeviceTensorMut),
    /// The logical shape of a quantized argument ([`crate::Role::Logical`]).
    Logical(LogicalShape),
}

/// A quantized weight's logical `[K, N, G]`: checked and bound like a shape, never passed
/// to the kernel. Made by [`crate::QuantTensor::kernel_args`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogicalShape {
    shape: [usize; 3],
    /// The scales' type, which the contract's logical argument names.
    dtype: DType,
    device: DeviceId,
}

impl LogicalShape {
    pub fn new(k: usize, n: usize, group: usize, dtype: DType, device: DeviceId) -> Self {
        LogicalShape {
            shape: [k, n, group],
            dtype,
            device,
        }
    }

    pub(crate) fn meta(&self) -> TensorMeta<'_> {
        TensorMeta {
            dtype: self.dtype,
            shape: &self.shape,
            strides: &[0; 3],
            offset: 0,
            buffer_len: 0,
            base_ptr: 0,
            device: self.device,
        }
    }
}

impl<'a> KernelArg<'a> {
    /// A tensor of `T` read by the kernel, owned ([`Tensor`]) or borrowed ([`TensorView`],
    /// [`TensorViewMut`]).
    pub fn read<T: Element>(t: &'a impl ReadTensor<T>) -> Self {
        KernelArg::Read(t)
    }

    /// A tensor of `T` written by the kernel, owned ([`Tensor`]) or borrowed mutably
    /// ([`TensorViewMut`]).
    pub fn write<T: Element>(t: &'a mut impl WriteTensor<T>) -> Self {
        KernelArg::Write(t)
    }

    /// An untyped tensor read by the kernel; its dtype is checked at launch.
    pub fn read_dyn(t: &'a DynTensor) -> Self {
        KernelArg::Read(t)
    }

    /// An untyped tensor written by the kernel; its dtype is checked at launch.
    pub fn write_dyn(t: &'a mut DynTensor) -> Self {
        KernelArg::Write(t)
    }

    /// A raw view read by the kernel; its dtype is checked at launch.
    pub fn read_raw(t: &'a RawTensor<'_>) -> Self {
        KernelArg::Read(t)
    }

    /// A raw view written by the kernel; its dtype is checked at launch.
    pub fn write_raw(t: &'a mut RawTensor<'_>) -> Self {
        KernelArg::Write(t)
    }

    pub(crate) fn meta(&self) -> TensorMeta<'_> {
        match self {
            KernelArg::Read(t) => t.meta(),
            KernelArg::Write(t) => t.meta(),
            KernelArg::Logical(l) => l.meta(),
        }
    }

    /// The tensor passed, read or written; `None` for a logical shape.
    pub(crate) fn tensor(&self) -> Option<&dyn DeviceTensor> {
        match self {
            KernelArg::Read(t) => Some(*t),
            KernelArg::Write(t) => Some(&**t),
            KernelArg::Logical(_) => None,
        }
    }

    pub(crate) fn is_read_only(&self) -> bool {
        matches!(self, KernelArg::Read(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_round_trip_through_their_bytes() {
        let values = [1.5f32, -0.0, f32::MAX, 7.0];
        let bytes = element_bytes(&values);
        assert_eq!(bytes.len(), 16);
        let back: Vec<f32> = elements_from_bytes(&bytes).unwrap();
        assert_eq!(
            back.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            values.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
        let halves: Vec<half::f16> = elements_from_bytes(&[0x00, 0x3c, 0x00, 0xc0]).unwrap();
        assert_eq!(halves, [half::f16::ONE, half::f16::from_f32(-2.0)]);
        assert_eq!(elements_from_bytes::<u32>(&bytes[..3]), None);
    }
}
