//! The tensor arguments of a launch, borrowed as the kernel uses them.
//!
//! Only the runtime's device tensors ([`Tensor`] and [`DynTensor`]) implement
//! [`DeviceTensor`], and the trait is sealed: a host buffer (`Vec<T>`, `&[T]`) cannot be
//! passed where a kernel expects device memory, and trying is a compile error
//! (`tests/ui/host_buffer.rs`).

use std::sync::Arc;

use cudarc::driver::{CudaStream, DevicePtr, DevicePtrMut, SyncOnDrop, sys::CUdeviceptr};

use crate::check::TensorMeta;
use crate::contract::DType;
use crate::device::DeviceId;
use crate::dyn_tensor::DynTensor;
use crate::error::Error;
use crate::tensor::{Element, Tensor};

mod sealed {
    /// Implemented by the runtime's device tensors only.
    pub trait Sealed {}
}

/// A device tensor whatever its element type: what a launch needs of it.
pub trait DeviceTensor: sealed::Sealed {
    fn meta(&self) -> TensorMeta<'_>;
    /// The buffer's device address for reading on `stream`; keep the guard until the
    /// launch is enqueued. `stream` first waits for the buffer's pending writes.
    fn read_ptr<'a>(&'a self, stream: &'a CudaStream) -> (CUdeviceptr, SyncOnDrop<'a>);
    /// The buffer's device address for writing on `stream`; keep the guard until the
    /// launch is enqueued. `stream` first waits for the buffer's pending reads and writes.
    fn write_ptr<'a>(&'a mut self, stream: &'a CudaStream) -> (CUdeviceptr, SyncOnDrop<'a>);
    /// The view's elements as bytes, in row-major order of its shape (for host-side
    /// validation of value contracts).
    fn to_host_bytes(&self, stream: &Arc<CudaStream>) -> Result<Vec<u8>, Error>;
}

impl<T: Element> sealed::Sealed for Tensor<T> {}

impl<T: Element> DeviceTensor for Tensor<T> {
    fn meta(&self) -> TensorMeta<'_> {
        Tensor::meta(self)
    }

    fn read_ptr<'a>(&'a self, stream: &'a CudaStream) -> (CUdeviceptr, SyncOnDrop<'a>) {
        self.slice().device_ptr(stream)
    }

    fn write_ptr<'a>(&'a mut self, stream: &'a CudaStream) -> (CUdeviceptr, SyncOnDrop<'a>) {
        self.slice_mut().device_ptr_mut(stream)
    }

    fn to_host_bytes(&self, stream: &Arc<CudaStream>) -> Result<Vec<u8>, Error> {
        let values = self.to_host(stream)?;
        // SAFETY: every `Element` is a plain number (no padding, no invalid bit patterns
        // to read as bytes), and the slice covers exactly the vector's initialised values.
        let bytes = unsafe {
            std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), size_of_val(&values[..]))
        };
        Ok(bytes.to_vec())
    }
}

impl sealed::Sealed for DynTensor {}

impl DeviceTensor for DynTensor {
    fn meta(&self) -> TensorMeta<'_> {
        DynTensor::meta(self)
    }

    fn read_ptr<'a>(&'a self, stream: &'a CudaStream) -> (CUdeviceptr, SyncOnDrop<'a>) {
        self.slice().device_ptr(stream)
    }

    fn write_ptr<'a>(&'a mut self, stream: &'a CudaStream) -> (CUdeviceptr, SyncOnDrop<'a>) {
        self.slice_mut().device_ptr_mut(stream)
    }

    fn to_host_bytes(&self, stream: &Arc<CudaStream>) -> Result<Vec<u8>, Error> {
        self.to_bytes(stream)
    }
}

/// One tensor argument of a launch, borrowed as the kernel uses it: shared for an input,
/// exclusive for an output. The borrow lasts until [`crate::Kernel::launch`] returns, so
/// no argument can be dropped or handed to another launch while this one is being
/// enqueued; what keeps it alive afterwards is cudarc's stream ordering (see
/// [`crate::kernel`]).
pub enum KernelArg<'a> {
    Read(&'a dyn DeviceTensor),
    Write(&'a mut dyn DeviceTensor),
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

    fn meta(&self) -> TensorMeta<'_> {
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
    pub fn read<T: Element>(t: &'a Tensor<T>) -> Self {
        KernelArg::Read(t)
    }

    pub fn write<T: Element>(t: &'a mut Tensor<T>) -> Self {
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

    pub(crate) fn meta(&self) -> TensorMeta<'_> {
        match self {
            KernelArg::Read(t) => t.meta(),
            KernelArg::Write(t) => t.meta(),
            KernelArg::Logical(l) => l.meta(),
        }
    }

    pub(crate) fn is_read_only(&self) -> bool {
        matches!(self, KernelArg::Read(_))
    }
}
