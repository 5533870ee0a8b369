//! Tensors over device memory imac does not own: views of a cudarc buffer, and views of a
//! raw device pointer (memory of PyTorch, of another library, of an FFI caller).
//!
//! All of them pass through the same stubs and the same checks as owned tensors: the
//! checker reads the same [`TensorMeta`] (dtype, shape, strides, offset, buffer length and
//! address, device), so a borrowed view that reaches outside its buffer, is misaligned,
//! overlaps an output, or is on another device is refused exactly as an owned one is.
//!
//! - [`TensorView`] borrows a cudarc buffer (`&CudaSlice`, a `CudaView`) for reading.
//!   cudarc's events order the launch after the buffer's pending writes and record the
//!   kernel's read, as for an owned tensor; the borrow ties the view to its owner.
//! - [`TensorViewMut`] borrows one mutably (`&mut CudaSlice`, a `CudaViewMut`, or one of
//!   the halves of `split_at_mut`, for several views into one buffer), for writing.
//! - [`RawTensor`] is made (`unsafe`) from a raw device pointer with its length, dtype,
//!   shape, strides, offset and device. No events track it: the caller orders its work
//!   (see [`RawTensor::from_raw`]). Its dtype is checked at launch, as a
//!   [`crate::DynTensor`]'s is, so it passes to any typed stub.

use std::marker::PhantomData;
use std::ops::Range;
use std::sync::Arc;

use cudarc::driver::{
    CudaSlice, CudaStream, CudaView, CudaViewMut, DevicePtr, DevicePtrMut, DeviceSlice, SyncOnDrop,
    sys::CUdeviceptr,
};

use crate::address::device_address;
use crate::check::TensorMeta;
use crate::contract::DType;
use crate::device::DeviceId;
use crate::element::Element;
use crate::error::Error;
use crate::view::{View, checked_buffer_len};

fn copy_error(dtype: DType) -> impl FnOnce(cudarc::driver::DriverError) -> Error {
    Error::driver(format!("copying part of a {dtype} tensor to the host"))
}

/// A strided view, for reading, of a device buffer of `T` borrowed from its owner.
#[derive(Debug)]
pub struct TensorView<'a, T> {
    buf: CudaView<'a, T>,
    base_ptr: u64,
    view: View,
}

impl<'a, T: Element> TensorView<'a, T> {
    /// The contiguous row-major view of `shape` over the first elements of `buf`
    /// (`slice.as_view()`, `slice.slice(range)`, or a view's `split_at`).
    pub fn new(buf: CudaView<'a, T>, shape: &[usize]) -> Result<Self, Error> {
        let view = View::contiguous(shape, checked_buffer_len(buf.len(), size_of::<T>())?)?;
        let base_ptr = device_address(&buf, buf.stream());
        Ok(TensorView {
            buf,
            base_ptr,
            view,
        })
    }

    /// The contiguous view of `shape` over the first elements of `slice`.
    pub fn of_slice(slice: &'a CudaSlice<T>, shape: &[usize]) -> Result<Self, Error> {
        Self::new(slice.as_view(), shape)
    }

    /// The same buffer seen through another view; refuses one that reaches outside it.
    pub fn with_layout(
        self,
        shape: &[usize],
        strides: &[isize],
        offset: usize,
    ) -> Result<Self, Error> {
        let view = View::new(shape, strides, offset, self.buf.len())?;
        Ok(TensorView { view, ..self })
    }

    /// Reorders the dimensions: dimension `i` of the result is dimension `perm[i]` of `self`.
    pub fn permute(self, perm: &[usize]) -> Result<Self, Error> {
        let view = self.view.permute(perm, self.buf.len())?;
        Ok(TensorView { view, ..self })
    }

    pub(crate) fn from_parts(buf: CudaView<'a, T>, base_ptr: u64, view: View) -> Self {
        TensorView {
            buf,
            base_ptr,
            view,
        }
    }

    /// Copies the view to the host in logical row-major order, reading only the part of
    /// the buffer it reaches.
    pub fn to_host(&self, stream: &Arc<CudaStream>) -> Result<Vec<T>, Error> {
        self.view
            .gather_span(1, |r| read_range(stream, &self.buf, r))
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

    /// What the checker sees of this view.
    pub fn meta(&self) -> TensorMeta<'_> {
        self.view.meta(
            T::DTYPE,
            self.buf.len(),
            self.base_ptr,
            DeviceId::of(self.buf.stream().context()),
        )
    }

    pub(crate) fn read_ptr<'s>(&'s self, stream: &'s CudaStream) -> (CUdeviceptr, SyncOnDrop<'s>) {
        self.buf.device_ptr(stream)
    }
}

/// A strided view, for reading and writing, of a device buffer of `T` borrowed mutably
/// from its owner.
#[derive(Debug)]
pub struct TensorViewMut<'a, T> {
    buf: CudaViewMut<'a, T>,
    base_ptr: u64,
    view: View,
}

impl<'a, T: Element> TensorViewMut<'a, T> {
    /// The contiguous row-major view of `shape` over the first elements of `buf`
    /// (`slice.as_view_mut()`, `slice.slice_mut(range)`, or a half of `split_at_mut`).
    pub fn new(buf: CudaViewMut<'a, T>, shape: &[usize]) -> Result<Self, Error> {
        let view = View::contiguous(shape, checked_buffer_len(buf.len(), size_of::<T>())?)?;
        let base_ptr = device_address(&buf, buf.stream());
        Ok(TensorViewMut {
            buf,
            base_ptr,
            view,
        })
    }

    /// The contiguous view of `shape` over the first elements of `slice`.
    pub fn of_slice(slice: &'a mut CudaSlice<T>, shape: &[usize]) -> Result<Self, Error> {
        Self::new(slice.as_view_mut(), shape)
    }

    /// The same buffer seen through another view; refuses one that reaches outside it.
    pub fn with_layout(
        self,
        shape: &[usize],
        strides: &[isize],
        offset: usize,
    ) -> Result<Self, Error> {
        let view = View::new(shape, strides, offset, self.buf.len())?;
        Ok(TensorViewMut { view, ..self })
    }

    /// Reorders the dimensions: dimension `i` of the result is dimension `perm[i]` of `self`.
    pub fn permute(self, perm: &[usize]) -> Result<Self, Error> {
        let view = self.view.permute(perm, self.buf.len())?;
        Ok(TensorViewMut { view, ..self })
    }

    pub(crate) fn from_parts(buf: CudaViewMut<'a, T>, base_ptr: u64, view: View) -> Self {
        TensorViewMut {
            buf,
            base_ptr,
            view,
        }
    }

    /// Copies the view to the host in logical row-major order, reading only the part of
    /// the buffer it reaches.
    pub fn to_host(&self, stream: &Arc<CudaStream>) -> Result<Vec<T>, Error> {
        self.view
            .gather_span(1, |r| read_range(stream, &self.buf.slice(..), r))
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

    /// What the checker sees of this view.
    pub fn meta(&self) -> TensorMeta<'_> {
        self.view.meta(
            T::DTYPE,
            self.buf.len(),
            self.base_ptr,
            DeviceId::of(self.buf.stream().context()),
        )
    }

    pub(crate) fn read_ptr<'s>(&'s self, stream: &'s CudaStream) -> (CUdeviceptr, SyncOnDrop<'s>) {
        self.buf.device_ptr(stream)
    }

    pub(crate) fn write_ptr<'s>(
        &'s mut self,
        stream: &'s CudaStream,
    ) -> (CUdeviceptr, SyncOnDrop<'s>) {
        self.buf.device_ptr_mut(stream)
    }
}

/// Elements `range` of `buf`, copied to the host (waits for the copy).
pub(crate) fn read_range<T: Element>(
    stream: &Arc<CudaStream>,
    buf: &CudaView<'_, T>,
    range: Range<usize>,
) -> Result<Vec<T>, Error> {
    if range.end > buf.len() || range.start > range.end {
        return Err(Error::Layout {
            reason: format!("elements {range:?} lie outside the buffer"),
            shape: vec![],
            strides: vec![],
            offset: range.start,
            buffer_len: buf.len(),
        });
    }
    stream
        .clone_dtoh(&buf.slice(range))
        .map_err(copy_error(T::DTYPE))
}

/// A strided view of device memory given by a raw pointer, of a dtype known at run time.
///
/// The lifetime `'a` ties the view to whatever owns the memory: [`RawTensor::from_raw`]
/// lets the caller choose it, and [`RawTensor::borrowing`] binds it to a borrow of the
/// owner, so that the compiler refuses a view that outlives it.
#[derive(Debug, Clone)]
pub struct RawTensor<'a> {
    dtype: DType,
    /// Address of the buffer's first element.
    ptr: u64,
    /// Whole elements of `dtype` in the buffer.
    buffer_len: usize,
    view: View,
    device: DeviceId,
    owner: PhantomData<&'a ()>,
}

impl<'a> RawTensor<'a> {
    /// A view of `buffer_len` elements of `dtype` at device address `ptr`, seen through
    /// `shape`, `strides` (in elements) and `offset` (elements from `ptr` to the view's first
    /// element), in the context `device`. Refuses a view that reaches outside the buffer;
    /// the launch checks it again (alignment, overlap, device) like any tensor.
    ///
    /// # Safety
    ///
    /// - `ptr .. ptr + buffer_len * dtype.size()` is device memory of `device`'s context (or
    ///   memory that context can address, such as another context's primary allocation on
    ///   the same device) and stays allocated for `'a` and until every kernel launched on it
    ///   has finished.
    /// - No event tracks this memory: the caller orders the launches that use the view
    ///   after the work that wrote its contents, orders any later reader or writer after
    ///   them (launch on the same stream as that work, or synchronise, or record and wait
    ///   on an event), and frees the memory only after them (PyTorch: `record_stream`, or
    ///   keeping the tensor alive until the stream has passed the launch).
    /// - Nothing else writes the memory while a kernel reads or writes it through the view.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn from_raw(
        ptr: u64,
        buffer_len: usize,
        dtype: DType,
        shape: &[usize],
        strides: &[isize],
        offset: usize,
        device: DeviceId,
    ) -> Result<Self, Error> {
        let view = View::new(shape, strides, offset, buffer_len)?;
        Ok(RawTensor {
            dtype,
            ptr,
            buffer_len,
            view,
            device,
            owner: PhantomData,
        })
    }

    /// A view given by the address of its first element, as PyTorch's `data_ptr()`, a
    /// `__cuda_array_interface__` or DLPack describe one, whose buffer is taken to be
    /// exactly the span the view reaches, from its lowest element to its highest (an empty
    /// view: no elements at `data_ptr`). Such producers keep every view inside its
    /// allocation themselves; what the launch checks of the memory (alignment of
    /// `data_ptr`, overlap between arguments, device) needs no more.
    ///
    /// # Safety
    ///
    /// As for [`RawTensor::from_raw`], for the span the view reaches.
    pub unsafe fn spanning(
        data_ptr: u64,
        dtype: DType,
        shape: &[usize],
        strides: &[isize],
        device: DeviceId,
    ) -> Result<Self, Error> {
        let bad = |reason: &str| Error::Layout {
            reason: format!("a view at {data_ptr:#x} {reason}"),
            shape: shape.to_vec(),
            strides: strides.to_vec(),
            offset: 0,
            buffer_len: 0,
        };
        // A shape and strides of different lengths are refused by `from_raw`.
        let (offset, len) = match crate::layout::reach(shape, strides) {
            None => (0, 0),
            Some(r) => {
                // Elements below the first and above it, and the first itself.
                let below = r.lo.checked_neg().and_then(|b| usize::try_from(b).ok());
                let below_above = below.zip(usize::try_from(r.hi).ok());
                below_above
                    .and_then(|(below, above)| {
                        Some((below, below.checked_add(above)?.checked_add(1)?))
                    })
                    .ok_or_else(|| bad("reaches past the address space"))?
            }
        };
        let start = (offset as u64)
            .checked_mul(dtype.size() as u64)
            .and_then(|bytes| data_ptr.checked_sub(bytes))
            .ok_or_else(|| bad("reaches below address 0"))?;
        // SAFETY: forwarded to the caller; the span is `start .. start + len` elements.
        unsafe { Self::from_raw(start, len, dtype, shape, strides, offset, device) }
    }

    /// As [`RawTensor::from_raw`], with the view's lifetime bound to a borrow of `owner`
    /// (the object that keeps the memory allocated).
    ///
    /// # Safety
    ///
    /// As for [`RawTensor::from_raw`]; the memory must stay allocated while `owner` is
    /// borrowed.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn borrowing<O: ?Sized>(
        _owner: &'a O,
        ptr: u64,
        buffer_len: usize,
        dtype: DType,
        shape: &[usize],
        strides: &[isize],
        offset: usize,
        device: DeviceId,
    ) -> Result<Self, Error> {
        // SAFETY: forwarded to the caller.
        unsafe { Self::from_raw(ptr, buffer_len, dtype, shape, strides, offset, device) }
    }

    /// The same memory seen through another view; refuses one that reaches outside it.
    pub fn with_layout(
        self,
        shape: &[usize],
        strides: &[isize],
        offset: usize,
    ) -> Result<Self, Error> {
        let view = View::new(shape, strides, offset, self.buffer_len)?;
        Ok(RawTensor { view, ..self })
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

    pub(crate) fn base_ptr(&self) -> u64 {
        self.ptr
    }

    /// What the checker sees of this view.
    pub fn meta(&self) -> TensorMeta<'_> {
        self.view
            .meta(self.dtype, self.buffer_len, self.ptr, self.device)
    }

    /// Copies the view to the host as bytes in logical row-major order, reading only the
    /// part of the memory it reaches, on `stream` (which must be of the view's context);
    /// waits for the copy.
    pub fn to_bytes(&self, stream: &Arc<CudaStream>) -> Result<Vec<u8>, Error> {
        let size = self.dtype.size();
        self.view.gather_span(size, |r| {
            let mut host = vec![0u8; r.len() * size];
            let src = self.ptr + (r.start * size) as u64;
            stream
                .context()
                .bind_to_thread()
                .map_err(copy_error(self.dtype))?;
            // SAFETY: `from_raw`'s contract makes `ptr .. ptr + buffer_len * size` device
            // memory, and `View::new` kept the span inside it; the host buffer is as long
            // as the copy, and the stream is synchronised before it is read.
            unsafe {
                cudarc::driver::result::memcpy_dtoh_async(&mut host, src, stream.cu_stream())
            }
            .and_then(|()| stream.synchronize())
            .map_err(copy_error(self.dtype))?;
            Ok(host)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn device() -> DeviceId {
        DeviceId {
            ordinal: 0,
            context: 1,
        }
    }

    fn spanning(ptr: u64, shape: &[usize], strides: &[isize]) -> Result<RawTensor<'static>, Error> {
        // SAFETY: nothing is launched on these views; only their layout is read.
        unsafe { RawTensor::spanning(ptr, DType::F32, shape, strides, device()) }
    }

    #[test]
    fn a_spanning_view_holds_exactly_what_it_reaches() {
        // A 3 x 4 view seen transposed: its buffer is the 12 elements from its first.
        let t = spanning(0x1000, &[4, 3], &[1, 4]).unwrap();
        assert_eq!(
            (t.base_ptr(), t.meta().buffer_len, t.offset()),
            (0x1000, 12, 0)
        );
        // Rows reversed: the buffer starts two rows (32 bytes) before the first element.
        let t = spanning(0x1000, &[3, 4], &[-4, 1]).unwrap();
        assert_eq!(
            (t.base_ptr(), t.meta().buffer_len, t.offset()),
            (0x1000 - 32, 12, 8)
        );
        // Every other column of 8: 7 elements from the first to the last.
        let t = spanning(0x1000, &[4], &[2]).unwrap();
        assert_eq!(t.meta().buffer_len, 7);
        // Empty: no elements at the address.
        let t = spanning(0, &[0, 4], &[4, 1]).unwrap();
        assert_eq!((t.base_ptr(), t.meta().buffer_len), (0, 0));
    }

    #[test]
    fn a_spanning_view_past_the_address_space_is_refused_not_a_panic() {
        // Each term of the reach is -2^127 + 2^64: their sum saturates at i128::MIN, whose
        // negation overflows (a panic in debug builds before it was checked).
        let e = spanning(0x1000, &[usize::MAX, usize::MAX], &[isize::MIN, isize::MIN])
            .unwrap_err()
            .to_string();
        assert!(e.contains("reaches past the address space"), "{e}");
    }

    #[test]
    fn a_spanning_view_below_address_zero_is_refused() {
        let e = spanning(4, &[3], &[-1]).unwrap_err().to_string();
        assert!(e.contains("reaches below address 0"), "{e}");
        let e = spanning(0x1000, &[3, 4], &[4]).unwrap_err().to_string();
        assert!(e.contains("shape and strides differ in length"), "{e}");
    }

    #[test]
    fn a_spanning_view_past_the_address_space_is_refused() {
        // Reaching 2^63 elements below its first and 2^63 - 1 above: one more element than
        // a usize counts (as a __cuda_array_interface__ may claim).
        let e = spanning(u64::MAX, &[2, 2], &[isize::MIN, isize::MAX])
            .unwrap_err()
            .to_string();
        assert!(e.contains("reaches past the address space"), "{e}");
    }
}
